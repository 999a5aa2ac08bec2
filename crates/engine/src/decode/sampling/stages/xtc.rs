//! XTC, "exclude top choices" (p-e-w, text-generation-webui #6335; llama.cpp's
//! `llama_sampler_xtc_apply`): with probability `xtc_probability`, every token whose
//! probability is at least `xtc_threshold` is removed except the least likely of them, so
//! the model says something other than its most obvious continuation while a viable one
//! remains. llama.cpp's rule exactly: nothing happens when the probability is 0, the
//! threshold is above 0.5 (then at most one token can reach it) or fewer than two tokens
//! remain; otherwise the coin is drawn, and above the probability nothing happens; else the
//! tokens are sorted by probability and those before the last one reaching the threshold are
//! removed (when at least one would be; min_keep 0 or 1 never binds, one token always stays).

use super::{candidate_probs, sorted_candidates};
use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec};
use crate::decode::sampling::settings::Settings;
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const XtcProbability: Knob = Knob::new("xtc_probability");
    pub const XtcThreshold: Knob = Knob::new("xtc_threshold");
}

const STAGE: Stage = Stage::new("xtc_probability");

fn unit(x: f64) -> Result<(), &'static str> {
    (0.0..=1.0)
        .contains(&x)
        .then_some(())
        .ok_or("must be in [0, 1]")
}

pub static XTC: StageDef = StageDef {
    stage: STAGE,
    knobs: &[
        KnobSpec::of_stage(
            STAGE,
            "xtc_probability",
            "XTC probability",
            "chance per step that XTC removes the top choices; 0 = off (llama.cpp's)",
            "0.5",
            slider(0.0, 1.0, 0.01),
            Kind::Float(unit),
            // llama.cpp `common_params_sampling`: `xtc_probability = 0.00f`.
            &["0"],
        ),
        KnobSpec::of_stage(
            STAGE,
            "xtc_threshold",
            "XTC threshold",
            "tokens at or above this probability are the top choices, in [0, 1]; above 0.5 \
             XTC does nothing",
            "0.2",
            slider(0.0, 0.5, 0.01),
            Kind::Float(unit),
            // llama.cpp: `xtc_threshold = 0.10f`.
            &["0.1"],
        ),
    ],
    // llama.cpp's order: … top_p, min_p, xtc, temperature. Not a setting of the others.
    places: Places {
        lesson: 120,
        hf: 120,
        llama_cpp: 95,
        openai: 120,
    },
    replaces_chain: None,
    rule: &Xtc,
    aliases: &["xtc"],
};

struct Xtc;

impl Rule for Xtc {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let s = cx.settings;
        let (p, t) = (s.num(Knob::XtcProbability), s.num(Knob::XtcThreshold));
        let cut = Cut::threshold("probability", t);
        if p <= 0.0 || t > 0.5 || z.iter().filter(|v| v.is_finite()).count() < 2 {
            return cut;
        }
        let coin = (cx.draw)(0);
        let removed = if coin > p { 0 } else { xtc(z, t) };
        // The coin against the probability: at or below it, XTC removed the top choices.
        cut.with("coin", coin)
            .with("probability", p)
            .with("removed", removed as f64)
    }

    fn is_neutral(&self, _: &StageDef, s: &Settings) -> bool {
        s.num(Knob::XtcProbability) == 0.0 || s.num(Knob::XtcThreshold) > 0.5
    }
}

/// The removal once the coin said so: the tokens before the last one at or above `t`, most
/// likely first. Returns how many were removed.
pub fn xtc(z: &mut [f64], t: f64) -> usize {
    let c = sorted_candidates(z);
    let p = candidate_probs(&c);
    let last = p.iter().take_while(|&&q| q >= t).count().saturating_sub(1);
    for &(id, _) in &c[..last] {
        z[id] = f64::NEG_INFINITY;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three tokens reach 0.2 (0.4, 0.3, 0.2): the two most likely go, 0.2 and 0.1 stay.
    /// None reaching it, or one: nothing is removed.
    #[test]
    fn removes_all_top_choices_but_the_least_likely() {
        let mut z: Vec<f64> = [0.4f64, 0.3, 0.2, 0.1].iter().map(|p| p.ln()).collect();
        assert_eq!(xtc(&mut z, 0.2), 2);
        let kept: Vec<bool> = z.iter().map(|v| v.is_finite()).collect();
        assert_eq!(kept, [false, false, true, true]);
        let mut z: Vec<f64> = [0.4f64, 0.3, 0.2, 0.1].iter().map(|p| p.ln()).collect();
        assert_eq!(xtc(&mut z, 0.35), 0);
        assert_eq!(xtc(&mut z, 0.5), 0);
    }
}
