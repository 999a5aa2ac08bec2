//! The constraint: a regex, a JSON Schema or a grammar as a mask on the logits (every token
//! that cannot continue the text inside the language gets −∞). The mask itself is computed
//! by the matcher that follows the sequence (`decode::constraint`) and reaches the chain as
//! `History::allowed`; this stage applies it and records the feasible mass
//! Z_t = Σ_{allowed} p, p the distribution the stage received, with the allowed count, the
//! mask's time and the position in the constraint.
//!
//! First in every profile: the peers mask before their warpers. vLLM applies the structured
//! output bitmask to the logits before sampling; Hugging Face runs a constraint as a
//! `LogitsProcessor`, before the warpers; llama.cpp's `common_sampler_sample` samples the
//! chain and, when the grammar refuses the token, applies the grammar to the fresh logits and
//! runs the chain again: for greedy decoding, the argmax over the allowed tokens, as here.

use crate::decode::constraint::ConstraintSpec;
use crate::decode::sampling::knobs::{Control, Kind, Knob, KnobSpec};
use crate::decode::sampling::settings::Settings;
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const Constraint: Knob = Knob::new("constraint");
}

pub(crate) const STAGE: Stage = Stage::new("constraint");

pub static CONSTRAINT: StageDef = StageDef {
    stage: STAGE,
    knobs: &[KnobSpec::of_stage(
        STAGE,
        "constraint",
        "Constraint",
        "KIND:SOURCE, KIND one of regex, json_schema, grammar (GBNF) or lark: only tokens that \
         keep the text inside the language stay (none = off)",
        "regex:(yes|no)",
        Control::Text,
        Kind::Texts(|t| {
            ConstraintSpec::parse(t)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }),
        &[],
    )],
    places: Places::all(5),
    replaces_chain: None,
    rule: &Constrain,
    aliases: &["grammar", "llguidance"],
};

struct Constrain;

/// The constraint knob's spec, if one is set.
pub fn spec(s: &Settings) -> Option<ConstraintSpec> {
    text(s).and_then(|t| ConstraintSpec::parse(t).ok().flatten())
}

/// The constraint knob's text, if one is set (without copying it: the chain asks at every
/// run, and a schema may be 64 KB).
pub fn text(s: &Settings) -> Option<&str> {
    s.texts(Knob::Constraint)
        .last()
        .map(String::as_str)
        .filter(|t| !t.trim().is_empty() && t.trim() != "none")
}

/// The settings without a constraint (a draft's chain; the page's while the constraint has
/// no mask, as when it failed to compile).
pub fn without(s: &Settings) -> Settings {
    let mut s = s.clone();
    s.set(Knob::Constraint, crate::decode::sampling::Value::Texts(Vec::new()));
    s
}

impl Rule for Constrain {
    fn is_neutral(&self, _: &StageDef, s: &Settings) -> bool {
        text(s).is_none()
    }

    fn describe(&self, _: &StageDef, s: &Settings) -> String {
        match spec(s) {
            Some(c) => {
                let src: String = c.source.chars().take(32).collect();
                let more = if c.source.chars().count() > 32 { "…" } else { "" };
                format!("{} {src}{more}", c.kind.name())
            }
            None => "none".into(),
        }
    }

    fn reads_mask(&self, s: &Settings) -> bool {
        text(s).is_some()
    }

    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let Some(allowed) = cx.history.allowed else {
            return Cut::default();
        };
        let max = super::max_of(z);
        let (mut total, mut feasible) = (0.0, 0.0);
        for (i, v) in z.iter_mut().enumerate() {
            if v.is_finite() {
                let e = (*v - max).exp();
                total += e;
                if allowed.allows(i) {
                    feasible += e;
                } else {
                    *v = f64::NEG_INFINITY;
                }
            }
        }
        let z_t = if total > 0.0 { feasible / total } else { 0.0 };
        // (Not `Cut::mass`: that is a cut by cumulative mass, drawn as top-p's line.)
        Cut {
            note: Some(allowed.position.clone()),
            ..Cut::default()
        }
        .with("feasible mass Z", z_t)
        .with("allowed", allowed.count as f64)
        .with("mask ms", allowed.ms)
    }
}
