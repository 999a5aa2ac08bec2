//! Top-nσ (Tang et al. 2024, "Top-nσ: Not All Logits Are You Need"): keep the tokens whose
//! logit is within n standard deviations of the largest. llama.cpp's
//! `llama_sampler_top_n_sigma_apply`: over the tokens still in play (logit ≠ −∞), the mean
//! and the population standard deviation σ of their logits; every logit below
//! max − n·σ is removed. n ≤ 0, or one token, does nothing.

use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec};
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const TopNSigma: Knob = Knob::new("top_n_sigma");
}

const STAGE: Stage = Stage::new("top_n_sigma");

pub static TOP_N_SIGMA: StageDef = StageDef {
    stage: STAGE,
    knobs: &[KnobSpec::of_stage(
        STAGE,
        "top_n_sigma",
        "Top-nσ",
        "keep logits within n standard deviations of the largest; ≤ 0 = off (llama.cpp's -1)",
        "1.5",
        slider(-1.0, 5.0, 0.1),
        // llama.cpp: `n <= 0` does nothing.
        Kind::Float(|x| {
            (x <= 100.0)
                .then_some(())
                .ok_or("must be at most 100 (≤ 0 = off)")
        }),
        // llama.cpp `common_params_sampling`: `top_n_sigma = -1.00f` (off).
        &["-1"],
    )],
    // llama.cpp's order (`common_params_sampling::samplers`): after the repetition stages,
    // before the truncations. Not a setting of the others; there it runs after theirs.
    places: Places {
        lesson: 110,
        hf: 110,
        llama_cpp: 65,
        openai: 110,
    },
    replaces_chain: None,
    rule: &TopNSigma,
    aliases: &[],
};

struct TopNSigma;

impl Rule for TopNSigma {
    fn is_neutral(&self, _: &StageDef, s: &crate::decode::sampling::settings::Settings) -> bool {
        s.num(Knob::TopNSigma) <= 0.0
    }

    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let n = cx.settings.num(Knob::TopNSigma);
        match top_n_sigma(z, n) {
            Some((max, sigma)) => Cut::threshold("logit", max - n * sigma)
                .with("max logit", max)
                .with("sigma", sigma),
            None => Cut::default(),
        }
    }
}

/// The rule; returns (max, σ) when it ran.
pub fn top_n_sigma(z: &mut [f64], n: f64) -> Option<(f64, f64)> {
    let live: Vec<f64> = z.iter().copied().filter(|v| v.is_finite()).collect();
    if n <= 0.0 || live.len() <= 1 {
        return None;
    }
    let max = live.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = live.iter().sum::<f64>() / live.len() as f64;
    let sigma = (live.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / live.len() as f64).sqrt();
    let cut = max - n * sigma;
    for v in z.iter_mut() {
        if *v < cut {
            *v = f64::NEG_INFINITY;
        }
    }
    Some((max, sigma))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_logits_within_n_sigma_of_the_max() {
        // Logits 0, 1, 2, 3: mean 1.5, σ = √1.25 ≈ 1.118; n = 1 cuts below 3 − 1.118.
        let mut z = vec![0.0, 1.0, 2.0, 3.0, f64::NEG_INFINITY];
        let (max, sigma) = top_n_sigma(&mut z, 1.0).unwrap();
        assert_eq!(max, 3.0);
        assert!((sigma - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(z.iter().filter(|v| v.is_finite()).count(), 2);
        assert!(top_n_sigma(&mut [1.0, f64::NEG_INFINITY], 1.0).is_none());
    }
}
