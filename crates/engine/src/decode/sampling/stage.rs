//! What a stage of the sampling chain is: one value ([`StageDef`]) holding its name, its knobs
//! (with their ranges, defaults, peers' defaults and help), its place in each profile's
//! order, and its [`Rule`]: the rule itself, how it describes itself, when it is the
//! identity, the cut it made and the state it carries from one step to the next. Each stage
//! (or family) lives in its own file under `stages/`, registered with one line in
//! `stages::REGISTRY`; nothing else in the engine names a stage.

use super::chain::History;
use super::knobs::{Knob, KnobSpec};
use super::profile::Profile;
use super::settings::Settings;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A stage of the sampling chain, by its name (snake_case; the name of its first knob).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stage(&'static str);

impl Stage {
    /// A stage's identity. Only a stage's own file makes one (its `StageDef::stage`).
    pub const fn new(name: &'static str) -> Stage {
        Stage(name)
    }

    /// The snake_case name (serde's and the order knob's one spelling).
    pub fn name(self) -> &'static str {
        self.0
    }

    /// Every registered stage, in the registry's order.
    pub fn all() -> impl Iterator<Item = Stage> {
        super::stages::REGISTRY.iter().map(|d| d.stage)
    }

    /// Accepts the snake_case name or a peer's name for it, with '-' for '_' too, in any
    /// case.
    pub fn parse(s: &str) -> Option<Stage> {
        let name = s.trim().replace('-', "_").to_ascii_lowercase();
        Stage::all().find(|st| st.0 == name || st.def().aliases.contains(&name.as_str()))
    }

    /// The stage's definition.
    pub fn def(self) -> &'static StageDef {
        super::stages::REGISTRY
            .iter()
            .find(|d| d.stage == self)
            .expect("a Stage is made only by its registered definition")
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Stage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Stage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Stage, D::Error> {
        let name = String::deserialize(d)?;
        Stage::all()
            .find(|st| st.0 == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown stage {name:?}")))
    }
}

/// Where a stage sits in each profile's default order: a rank (lower runs first). A stage
/// the peer does not have gets a rank after the peer's own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Places {
    pub lesson: u16,
    pub hf: u16,
    pub llama_cpp: u16,
    pub openai: u16,
}

impl Places {
    /// The same rank in every profile.
    pub const fn all(rank: u16) -> Places {
        Places {
            lesson: rank,
            hf: rank,
            llama_cpp: rank,
            openai: rank,
        }
    }

    pub fn of(&self, p: Profile) -> u16 {
        match p {
            Profile::Lesson => self.lesson,
            Profile::Hf => self.hf,
            Profile::LlamaCpp => self.llama_cpp,
            Profile::OpenAi => self.openai,
        }
    }
}

/// A stage, whole: everything the CLI, the link, the page and the chain need to know of it.
pub struct StageDef {
    pub stage: Stage,
    /// Its knobs; the first is the one the stage is named after.
    pub knobs: &'static [KnobSpec],
    pub places: Places,
    /// When set, this stage (while active) replaces the chain: only the listed stages run
    /// besides it, every other stage (before or after it) is replaced (a stage that, as
    /// llama.cpp builds it, takes the chain's place).
    pub replaces_chain: Option<&'static [Stage]>,
    pub rule: &'static dyn Rule,
    /// The names a peer's order gives it (llama.cpp's `--samplers` names).
    pub aliases: &'static [&'static str],
}

impl StageDef {
    /// The knob the stage is named after.
    pub fn main_knob(&self) -> Knob {
        self.knobs[0].knob
    }
}

/// What a stage does, given its knobs in `cx.settings`.
pub trait Rule: Sync {
    /// The rule on `z` (logits; a removed token gets −∞). Returns what to record of it.
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut;

    /// Whether the stage is the identity at these settings: by default, when its first knob
    /// holds its default (off) value.
    fn is_neutral(&self, def: &StageDef, s: &Settings) -> bool {
        s.is_default(def.main_knob())
    }

    /// The knob values as text for the trace: by default the first knob's, and any other
    /// knob set away from its default as `name=value`.
    fn describe(&self, def: &StageDef, s: &Settings) -> String {
        let mut parts = vec![s.text(def.main_knob())];
        for k in &def.knobs[1..] {
            if !s.is_default(k.knob) {
                parts.push(format!("{}={}", k.name, s.text(k.knob)));
            }
        }
        parts.join(" ")
    }

    /// Rules between the stage's own knobs (a range that depends on another knob), each
    /// broken one as (knob, message).
    fn check(&self, _s: &Settings) -> Vec<(Knob, String)> {
        Vec::new()
    }

    /// Whether this stage at these settings leaves only the most likely token (temperature
    /// 0): speculative decoding then verifies by argmax.
    fn is_greedy(&self, _s: &Settings) -> bool {
        false
    }

    /// Whether the stage, at these settings, reads the tokens' text (`History::vocab`).
    fn reads_text(&self, _s: &Settings) -> bool {
        false
    }

    /// Whether the stage, at these settings, reads the constraint's mask
    /// (`History::allowed`).
    fn reads_mask(&self, _s: &Settings) -> bool {
        false
    }

    /// Whether the stage must run last (it takes the draw's place).
    fn runs_last(&self) -> bool {
        false
    }

    /// Whether the stage carries state from one step to the next (`update` gives some).
    fn carries_state(&self) -> bool {
        false
    }

    /// The stage's state after the token was chosen, from its state before (`cx.state`),
    /// the cut it recorded and the chosen token's final probability. `None`: no state.
    fn update(
        &self,
        _cx: &Cx<'_>,
        _cut: &Cut,
        _token: u32,
        _final_probs: &[f64],
    ) -> Option<Vec<f64>> {
        None
    }
}

/// What a stage sees besides the logits.
pub struct Cx<'a> {
    pub settings: &'a Settings,
    pub history: &'a History<'a>,
    /// This stage's state from the step before (empty at the first step).
    pub state: &'a [f64],
    /// Extra uniform draws in [0, 1) of this step, independent of the chain's own coin
    /// (`coin::stage_draw`).
    pub draw: &'a dyn Fn(u64) -> f64,
}

/// What a stage recorded of its cut, for the views and for its state update.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    /// Top-p style: the cumulative mass, most likely first, at which the stage cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    /// The value a token was compared with, in words and number (a probability, a logit,
    /// a surprise), for the caption.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Threshold>,
    /// Named quantities of the stage at this step: its state (μ, the EMA), its coin, the
    /// longest repeat it matched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Named>,
    /// The token the stage acted on most (DRY's most penalised), an id rather than a
    /// quantity: shown beside the values, never drawn as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<u32>,
    /// What the stage says of this step in words (the constraint's position).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What the stage keeps for its own state update (the probabilities it
    /// saw); not sent anywhere.
    #[serde(skip)]
    pub memo: Vec<f64>,
}

/// A threshold with what it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    pub what: String,
    pub value: f64,
}

/// A named number a stage reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Named {
    pub name: String,
    pub value: f64,
}

impl Cut {
    pub fn threshold(what: impl Into<String>, value: f64) -> Cut {
        Cut {
            threshold: Some(Threshold {
                what: what.into(),
                value,
            }),
            ..Cut::default()
        }
    }

    /// Adds a named value.
    pub fn with(mut self, name: &str, value: f64) -> Cut {
        self.values.push(Named {
            name: name.to_string(),
            value,
        });
        self
    }

    /// A named value, if recorded.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.values.iter().find(|n| n.name == name).map(|n| n.value)
    }
}

/// The state the stages carry from one step to the next (a running value or
/// running sums), by stage. [STATE]. Empty at the first step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChainState(pub Vec<(Stage, Vec<f64>)>);

impl ChainState {
    pub fn of(&self, stage: Stage) -> &[f64] {
        self.0
            .iter()
            .find(|(s, _)| *s == stage)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    pub fn set(&mut self, stage: Stage, v: Vec<f64>) {
        self.0.retain(|(s, _)| *s != stage);
        self.0.push((stage, v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_has_one_name_that_round_trips() {
        let names: Vec<&str> = Stage::all().map(|s| s.name()).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for st in Stage::all() {
            assert_eq!(Stage::parse(st.name()), Some(st));
            assert_eq!(st.to_string(), st.name());
            let json = serde_json::to_string(&st).unwrap();
            assert_eq!(json, format!("{:?}", st.name()));
            assert_eq!(serde_json::from_str::<Stage>(&json).unwrap(), st);
            // A stage is named after its first knob.
            assert_eq!(st.def().main_knob().name(), st.name());
        }
        assert_eq!(Stage::parse(" Top-P ").map(Stage::name), Some("top_p"));
        assert_eq!(Stage::parse("top"), None);
        assert!(serde_json::from_str::<Stage>("\"top\"").is_err());
    }
}
