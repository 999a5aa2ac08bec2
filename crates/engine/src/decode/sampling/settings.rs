//! Parse, don't validate: raw knob values (strings from the CLI, a URL or a slider) become
//! [`Settings`] once, at the edge, with one clear error per rule. Inner code never sees an
//! out-of-range value, and nothing is clamped silently: NaN, infinities and out-of-range
//! numbers are errors.

use super::knobs::{Knob, KNOBS};
use super::profile::Profile;
use super::stage::Stage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Strategy {
    /// Draw from the processed distribution (temperature 0 makes it greedy).
    Sample,
    /// Always the most likely token of the processed distribution.
    Greedy,
    /// Beam search over raw log-probabilities.
    Beam {
        width: usize,
        /// Hugging Face's: a hypothesis scores sum_logprobs / length^length_penalty.
        length_penalty: f64,
        /// Stop as soon as `width` hypotheses have finished.
        early_stopping: bool,
        /// How many finished sequences to return (≤ width).
        num_return: usize,
    },
}

/// Largest |value| of a logit bias or a frequency/presence penalty, and the range of the
/// repetition penalty and temperature: wide enough for any use (a bias of −10,000 bans a
/// token), narrow enough that no stage can overflow to ±∞ from finite logits.
pub const MAX_MAGNITUDE: f64 = 1e4;

/// The widest beam search: each beam holds its own KV cache and is a row of every step's
/// batch, and the tree grows by 2 × width nodes a step.
pub const MAX_BEAMS: usize = 16;

/// Beam search's width, length penalty, early stopping and sequences returned when a knob
/// is not given (Hugging Face's `generate()` defaults, with a width of 4).
pub const BEAM_DEFAULTS: (usize, f64, bool, usize) = (4, 1.0, true, 1);

/// Max tokens when not given.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// A stage knob's validated value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number (whole numbers too: exact in an f64 up to `MAX_COUNT`).
    Num(f64),
    /// `(token id, value)` entries.
    Bias(Vec<(u32, f64)>),
    /// Text entries.
    Texts(Vec<String>),
}

impl Value {
    /// The value as the entries `RawSettings` takes (a bias as one comma-separated entry).
    pub fn entries(&self) -> Vec<String> {
        match self {
            Value::Num(x) => vec![x.to_string()],
            Value::Bias(b) => vec![b
                .iter()
                .map(|(id, v)| format!("{id}:{v}"))
                .collect::<Vec<_>>()
                .join(",")],
            Value::Texts(t) => t.clone(),
        }
    }
}

/// Every stage knob's default value, parsed once from its spec's text.
static DEFAULTS: std::sync::LazyLock<BTreeMap<Knob, Value>> = std::sync::LazyLock::new(|| {
    KNOBS
        .iter()
        .filter(|k| k.stage.is_some())
        .map(|k| {
            let v = super::raw::default_value(k)
                .unwrap_or_else(|e| panic!("{}'s default breaks its rule: {e}", k.name));
            (k.knob, v)
        })
        .collect()
});

/// Validated settings: every value is in range. [CONFIG].
///
/// They travel (UI → worker) as their raw values and are validated again on arrival: a
/// message cannot carry settings that break a rule. Token ids of the logit bias are checked
/// against the vocabulary by whoever knows the model (`Settings::for_vocab`).
/// (Their serde form is their raw values, `raw.rs`.)
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Every stage knob's value (each stage's file reads its own).
    pub values: BTreeMap<Knob, Value>,
    /// ≥ 1.
    pub max_tokens: usize,
    /// Non-empty strings; generation stops when the text contains one.
    pub stop: Vec<String>,
    pub seed: u64,
    pub profile: Profile,
    /// The chain's order: every stage exactly once.
    pub order: Vec<Stage>,
    pub strategy: Strategy,
    /// The knobs the user left unset that hold the profile's own default (llama.cpp's
    /// top-k 40, HF's top-k 50 when sampling): shown as "default of <peer>", and left out
    /// of links so that another profile brings its own.
    pub defaulted: Vec<Knob>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            values: DEFAULTS.clone(),
            max_tokens: DEFAULT_MAX_TOKENS,
            stop: Vec::new(),
            seed: 0,
            profile: Profile::Lesson,
            order: Profile::Lesson.default_order(),
            strategy: Strategy::Sample,
            defaulted: Vec::new(),
        }
    }
}

impl Settings {
    /// Whether the strategy is beam search (the tree, not the chain, picks the tokens).
    pub fn is_beam(&self) -> bool {
        matches!(self.strategy, Strategy::Beam { .. })
    }

    /// Whether the chain leaves only the most likely token: the greedy strategy, or a stage
    /// that makes it so (temperature 0).
    pub fn is_greedy(&self) -> bool {
        self.strategy == Strategy::Greedy
            || self.order.iter().any(|st| {
                let d = st.def();
                !self.is_neutral(*st) && d.rule.is_greedy(self)
            })
    }

    /// The first active stage that carries state from step to step, if any.
    pub fn stateful_stage(&self) -> Option<Stage> {
        self.order
            .iter()
            .copied()
            .find(|st| !self.is_neutral(*st) && st.def().rule.carries_state())
    }

    /// The active stage that replaces the chain, if any, with the stages it keeps.
    pub fn replacing_stage(&self) -> Option<(Stage, &'static [Stage])> {
        self.order.iter().find_map(|&st| {
            let keep = st.def().replaces_chain?;
            (!self.is_neutral(st)).then_some((st, keep))
        })
    }

    /// A stage knob's value.
    pub fn value(&self, knob: Knob) -> &Value {
        self.values
            .get(&knob)
            .or_else(|| DEFAULTS.get(&knob))
            .expect("every stage knob has a value (its default)")
    }

    /// A number knob's value.
    pub fn num(&self, knob: Knob) -> f64 {
        match self.value(knob) {
            Value::Num(x) => *x,
            _ => panic!("{knob:?} is not a number knob"),
        }
    }

    /// A whole-number knob's value as a count (a negative one, a knob's "auto", is 0).
    pub fn count(&self, knob: Knob) -> usize {
        self.num(knob).max(0.0) as usize
    }

    /// A bias knob's entries.
    pub fn bias(&self, knob: Knob) -> &[(u32, f64)] {
        match self.value(knob) {
            Value::Bias(b) => b,
            _ => panic!("{knob:?} is not a bias knob"),
        }
    }

    /// A text-list knob's entries.
    pub fn texts(&self, knob: Knob) -> &[String] {
        match self.value(knob) {
            Value::Texts(t) => t,
            _ => panic!("{knob:?} is not a text-list knob"),
        }
    }

    /// Sets a stage knob's value (for code that builds settings directly; the value is
    /// not checked against the knob's rule: `RawSettings::validate` does that).
    pub fn set(&mut self, knob: Knob, value: Value) {
        self.values.insert(knob, value);
    }

    /// These settings with a number knob set (as [`Settings::set`]).
    pub fn with(mut self, knob: Knob, x: f64) -> Settings {
        self.set(knob, Value::Num(x));
        self
    }

    /// A stage knob's value as one text (list entries joined by ',').
    pub fn text(&self, knob: Knob) -> String {
        self.value(knob).entries().join(",")
    }

    /// Whether a stage knob holds its default value.
    pub fn is_default(&self, knob: Knob) -> bool {
        DEFAULTS.get(&knob) == Some(self.value(knob))
    }

    /// The peer whose default a knob holds, when the user left it unset.
    pub fn default_of(&self, knob: Knob) -> Option<Profile> {
        self.defaulted.contains(&knob).then_some(self.profile)
    }

    /// Whether a stage is the identity at these settings.
    pub fn is_neutral(&self, stage: Stage) -> bool {
        let d = stage.def();
        d.rule.is_neutral(d, self)
    }

    /// The stage's knob values as text (for traces and labels).
    pub fn describe(&self, stage: Stage) -> String {
        let d = stage.def();
        d.rule.describe(d, self)
    }

    /// A knob's value as text, the way `RawSettings` takes it (one entry per value for list
    /// knobs), and whether the user set it away from the default. The beam knobs differ
    /// exactly when the strategy is beam search (they mean nothing otherwise). A knob the
    /// profile gives a default is set exactly when the user gave it (even to off: top-k 0
    /// under llama.cpp), and unset when it holds the profile's default.
    pub fn knob_value(&self, knob: Knob) -> (bool, Vec<String>) {
        let one = |changed: bool, text: String| (changed, vec![text]);
        let sampling = matches!(self.strategy, Strategy::Sample);
        if knob.spec().stage.is_some() {
            let entries = self.value(knob).entries();
            let peer = self
                .profile
                .defaults(sampling)
                .iter()
                .any(|(k, _)| *k == knob);
            let changed = if peer {
                !self.defaulted.contains(&knob)
            } else {
                !self.is_default(knob)
            };
            return (changed, entries);
        }
        let (beam, b) = match self.strategy {
            Strategy::Beam {
                width,
                length_penalty,
                early_stopping,
                num_return,
            } => (true, (width, length_penalty, early_stopping, num_return)),
            _ => (false, BEAM_DEFAULTS),
        };
        match knob {
            Knob::MaxTokens => one(
                self.max_tokens != DEFAULT_MAX_TOKENS,
                self.max_tokens.to_string(),
            ),
            Knob::Stop => (!self.stop.is_empty(), self.stop.clone()),
            Knob::Seed => one(self.seed != 0, self.seed.to_string()),
            Knob::Profile => one(self.profile != Profile::Lesson, self.profile.name().into()),
            Knob::Order => {
                let names: Vec<&str> = self.order.iter().map(|s| s.name()).collect();
                one(self.order != self.profile.default_order(), names.join(","))
            }
            Knob::Strategy => match self.strategy {
                Strategy::Sample => one(false, "sample".into()),
                Strategy::Greedy => one(true, "greedy".into()),
                Strategy::Beam { .. } => one(true, "beam".into()),
            },
            Knob::Beams => one(beam, b.0.to_string()),
            Knob::LengthPenalty => one(beam, b.1.to_string()),
            Knob::EarlyStopping => one(beam, b.2.to_string()),
            Knob::NumReturn => one(beam, b.3.to_string()),
            _ => (false, vec![]),
        }
    }

    /// The knob's text when it differs from the default, else nothing (for links).
    pub fn knob_text(&self, knob: Knob) -> Vec<String> {
        match self.knob_value(knob) {
            (true, text) => text,
            (false, _) => Vec::new(),
        }
    }

    /// The settings as raw key/value pairs (the inverse of `RawSettings::validate`), for
    /// URLs and command lines, in the table's order. Values at their defaults are left out.
    pub fn to_pairs(&self) -> Vec<(&'static str, String)> {
        KNOBS
            .iter()
            .flat_map(|spec| {
                self.knob_text(spec.knob)
                    .into_iter()
                    .map(move |v| (spec.name, v))
            })
            .collect()
    }
}

/// One broken rule: which field, and what is wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingError {
    pub field: String,
    pub message: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every broken rule of a set of raw values (so a form can mark each control).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsErrors(pub Vec<SettingError>);

impl fmt::Display for SettingsErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(|e| e.to_string()).collect();
        f.write_str(&lines.join("; "))
    }
}

impl std::error::Error for SettingsErrors {}

impl SettingsErrors {
    /// The message for one field, if it is wrong.
    pub fn for_field(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
    }
}

#[cfg(test)]
mod tests;
