//! Adaptive-p (llama.cpp PR #17927, `llama_sampler_init_adaptive_p(target, decay, seed)` in
//! the llama.cpp that llama-cpp-python 0.3.36 vendors): the last sampler, in place of the
//! plain draw, steering the chosen tokens' probability towards `target` on average. Its
//! state is an exponential moving average of the (pre-transform) probability of the tokens
//! it chose: weighted_sum ← p + decay·weighted_sum, total_weight ← 1 + decay·total_weight,
//! starting at target/(1 − decay) and 1/(1 − decay) (the average starts at the target).
//! At each step, with EMA = weighted_sum / total_weight,
//! adapted = clamp(2·target − EMA, 0, 1), and every token still in play gets the logit
//! 5 − 10·d²/(1 + d), d = |p − adapted| / 0.3 (p its probability entering the stage), so
//! tokens whose probability is near the adapted target become the likely ones; then the
//! draw. A negative target is off; the decay is in [0, 0.99] (llama.cpp clamps to it; here a
//! value outside is refused). `common_sampler_init` puts it at the end wherever it is listed.

use super::softmax;
use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec};
use crate::decode::sampling::settings::Settings;
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const AdaptivePTarget: Knob = Knob::new("adaptive_p_target");
    pub const AdaptivePDecay: Knob = Knob::new("adaptive_p_decay");
}

const STAGE: Stage = Stage::new("adaptive_p_target");

/// llama.cpp's `DISTRIBUTION_WIDTH`, `PEAK_LOGIT_VALUE` and `SHARPNESS`.
const WIDTH: f64 = 0.3;
const PEAK: f64 = 5.0;
const SHARPNESS: f64 = 10.0;

pub static ADAPTIVE_P: StageDef = StageDef {
    stage: STAGE,
    knobs: &[
        KnobSpec::of_stage(
            STAGE,
            "adaptive_p_target",
            "Adaptive-p target",
            "the probability the chosen tokens should have on average, in [0, 1]; negative = \
             off (llama.cpp's -1)",
            "0.3",
            slider(-1.0, 1.0, 0.01),
            // llama.cpp: a negative target is off.
            Kind::Float(|x| {
                (-1.0..=1.0)
                    .contains(&x)
                    .then_some(())
                    .ok_or("must be in [0, 1], or negative (≥ -1) for off")
            }),
            // llama.cpp `common_params_sampling`: `adaptive_target = -1.0f` (off).
            &["-1"],
        )
        .aliases(&["adaptive_target"]),
        KnobSpec::of_stage(
            STAGE,
            "adaptive_p_decay",
            "Adaptive-p decay",
            "how much of the average each step keeps, in [0, 0.99] (llama.cpp's 0.9)",
            "0.5",
            slider(0.0, 0.99, 0.01),
            Kind::Float(|x| {
                (0.0..=0.99)
                    .contains(&x)
                    .then_some(())
                    .ok_or("must be in [0, 0.99] (llama.cpp's range)")
            }),
            &["0.9"],
        )
        .aliases(&["adaptive_decay"]),
    ],
    // Last in every order: it replaces the draw.
    places: Places::all(400),
    replaces_chain: None,
    rule: &AdaptiveP,
    aliases: &["adaptive_p", "adaptive"],
};

struct AdaptiveP;

/// (weighted_sum, total_weight) before this step.
fn sums(cx: &Cx<'_>) -> (f64, f64) {
    match cx.state {
        [w, t] => (*w, *t),
        _ => {
            let s = cx.settings;
            let decay = s.num(Knob::AdaptivePDecay);
            (
                s.num(Knob::AdaptivePTarget) / (1.0 - decay),
                1.0 / (1.0 - decay),
            )
        }
    }
}

impl Rule for AdaptiveP {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let target = cx.settings.num(Knob::AdaptivePTarget);
        let (w, t) = sums(cx);
        let ema = w / t;
        let adapted = (2.0 * target - ema).clamp(0.0, 1.0);
        let p = adaptive_p(z, adapted);
        let mut cut = Cut::threshold("adapted target", adapted)
            .with("ema", ema)
            .with("target", target);
        cut.memo = p;
        cut
    }

    fn is_neutral(&self, _: &StageDef, s: &Settings) -> bool {
        s.num(Knob::AdaptivePTarget) < 0.0
    }

    /// llama.cpp's `common_sampler_init` puts it at the end wherever it is listed.
    fn runs_last(&self) -> bool {
        true
    }

    fn carries_state(&self) -> bool {
        true
    }

    fn update(&self, cx: &Cx<'_>, cut: &Cut, token: u32, _: &[f64]) -> Option<Vec<f64>> {
        let decay = cx.settings.num(Knob::AdaptivePDecay);
        let (w, t) = sums(cx);
        let p = cut.memo.get(token as usize).copied().unwrap_or(0.0);
        Some(vec![p + decay * w, 1.0 + decay * t])
    }
}

/// The transform towards `adapted`; returns the probabilities entering it.
pub fn adaptive_p(z: &mut [f64], adapted: f64) -> Vec<f64> {
    let p = softmax(z);
    for (v, &q) in z.iter_mut().zip(&p) {
        if v.is_finite() {
            let d = ((q - adapted) / WIDTH).abs();
            *v = PEAK - SHARPNESS * d * d / (1.0 + d);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token whose probability equals the adapted target gets the peak logit 5; one
    /// 0.3 away gets 5 − 10·1/2 = 0; removed tokens stay removed.
    #[test]
    fn tokens_near_the_target_become_likely() {
        let mut z: Vec<f64> = [0.6f64, 0.3, 0.1].iter().map(|p| p.ln()).collect();
        z.push(f64::NEG_INFINITY);
        adaptive_p(&mut z, 0.3);
        assert!((z[1] - 5.0).abs() < 1e-9);
        assert!((z[0] - 0.0).abs() < 1e-9);
        assert!(z[3].is_infinite());
    }
}
