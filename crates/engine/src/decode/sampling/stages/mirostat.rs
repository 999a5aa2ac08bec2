//! Mirostat (Basu et al. 2021), versions 1 and 2 as llama.cpp implements them
//! (`llama_sampler_mirostat_apply`, `llama_sampler_mirostat_v2_apply`): a feedback loop that
//! holds the surprise of the chosen tokens near a target τ. Its state μ starts at 2τ; each
//! step truncates by μ, the token is drawn, and μ ← μ − η·(−log₂ p(token) − τ), p being the
//! chosen token's probability after the truncation.
//!
//! - Version 2: sorted by probability, the tokens up to the first whose surprise −log₂ p
//!   exceeds μ are kept (at least one).
//! - Version 1: Zipf's exponent ŝ is estimated from the m most likely tokens
//!   (ŝ = Σ tᵢbᵢ / Σ tᵢ², tᵢ = ln((i+2)/(i+1)), bᵢ = ln(pᵢ/pᵢ₊₁)), then
//!   k = (ε̂·2^μ / (1 − n^−ε̂))^(1/ŝ) with ε̂ = ŝ − 1 and n the vocabulary, and top-k(max(k, 1))
//!   (exactly k, llama.cpp's tie rule). `common_sampler_init` passes m = 100.
//!
//! In llama.cpp mirostat replaces the chain: `common_sampler_init` builds logit bias →
//! temperature → mirostat when `mirostat` is 1 or 2, and the other samplers do not run.

use super::{candidate_probs, sorted_candidates};
use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec};
use super::truncation::TopKTies;
use crate::decode::sampling::settings::Settings;
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const Mirostat: Knob = Knob::new("mirostat");
    pub const MirostatTau: Knob = Knob::new("mirostat_tau");
    pub const MirostatEta: Knob = Knob::new("mirostat_eta");
    pub const MirostatM: Knob = Knob::new("mirostat_m");
}

const STAGE: Stage = Stage::new("mirostat");

pub static MIROSTAT: StageDef = StageDef {
    stage: STAGE,
    knobs: &[
        KnobSpec::of_stage(
            STAGE,
            "mirostat",
            "Mirostat",
            "0 = off, 1 or 2: mirostat's version, replacing the chain (llama.cpp's)",
            "2",
            slider(0.0, 2.0, 1.0),
            Kind::Int(|n| {
                (0..=2)
                    .contains(&n)
                    .then_some(())
                    .ok_or("must be 0 (off), 1 or 2")
            }),
            &["0"],
        ),
        KnobSpec::of_stage(
            STAGE,
            "mirostat_tau",
            "Mirostat τ",
            "the target surprise in bits, > 0 (llama.cpp's default 5)",
            "3",
            slider(0.5, 10.0, 0.1),
            Kind::Float(|x| {
                (x > 0.0 && x <= 100.0)
                    .then_some(())
                    .ok_or("must be in (0, 100] (the target surprise, bits)")
            }),
            &["5"],
        )
        .aliases(&["mirostat_ent"]),
        KnobSpec::of_stage(
            STAGE,
            "mirostat_eta",
            "Mirostat η",
            "the learning rate of μ, in (0, 1] (llama.cpp's default 0.1)",
            "0.2",
            slider(0.01, 1.0, 0.01),
            Kind::Float(|x| {
                (x > 0.0 && x <= 1.0)
                    .then_some(())
                    .ok_or("must be in (0, 1] (the learning rate)")
            }),
            &["0.1"],
        )
        .aliases(&["mirostat_lr"]),
        KnobSpec::of_stage(
            STAGE,
            "mirostat_m",
            "Mirostat m",
            "version 1: how many top tokens estimate Zipf's exponent, ≥ 2 (llama.cpp's 100)",
            "50",
            slider(2.0, 200.0, 1.0),
            Kind::Int(|n| {
                (2..=100_000)
                    .contains(&n)
                    .then_some(())
                    .ok_or("must be in 2..=100000")
            }),
            &["100"],
        ),
    ],
    places: Places::all(300),
    replaces_chain: Some(&[
        Stage::new("constraint"),
        Stage::new("logit_bias"),
        Stage::new("temperature"),
    ]),
    rule: &Mirostat,
    aliases: &[],
};

struct Mirostat;

/// μ before this step: the state, or 2τ at the first step.
fn mu(cx: &Cx<'_>) -> f64 {
    match cx.state.first() {
        Some(&mu) => mu,
        None => 2.0 * cx.settings.num(Knob::MirostatTau),
    }
}

impl Rule for Mirostat {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let s = cx.settings;
        let mu = mu(cx);
        let tau = s.num(Knob::MirostatTau);
        let cut = match s.count(Knob::Mirostat) {
            1 => {
                let k = mirostat_v1(z, mu, s.count(Knob::MirostatM));
                Cut::threshold("k", k as f64)
            }
            _ => {
                mirostat_v2(z, mu);
                Cut::threshold("surprise (bits)", mu)
            }
        };
        cut.with("mu", mu).with("tau", tau)
    }

    fn describe(&self, _: &StageDef, s: &Settings) -> String {
        let v = s.count(Knob::Mirostat);
        let (tau, eta) = (s.num(Knob::MirostatTau), s.num(Knob::MirostatEta));
        match v {
            1 => format!("1 τ={tau} η={eta} m={}", s.count(Knob::MirostatM)),
            _ => format!("{v} τ={tau} η={eta}"),
        }
    }

    fn carries_state(&self) -> bool {
        true
    }

    fn update(&self, cx: &Cx<'_>, cut: &Cut, token: u32, probs: &[f64]) -> Option<Vec<f64>> {
        let s = cx.settings;
        let mu = cut.value("mu")?;
        let p = probs.get(token as usize).copied().unwrap_or(0.0);
        let surprise = -p.log2();
        Some(vec![
            mu - s.num(Knob::MirostatEta) * (surprise - s.num(Knob::MirostatTau)),
        ])
    }
}

/// Version 2's truncation at μ; returns how many stay. The sorted prefix of tokens whose
/// surprise is at most μ is the set of tokens with p ≥ 2^−μ: found in one pass, no sort.
pub fn mirostat_v2(z: &mut [f64], mu: f64) -> usize {
    let p = super::softmax(z);
    let keep = p.iter().filter(|&&q| q > 0.0 && -q.log2() <= mu).count();
    if keep == 0 {
        // None within μ: the most likely token alone (llama.cpp keeps `size = 1`).
        let top = super::first_argmax(z);
        super::remove_all_but(z, top.into_iter());
        return 1;
    }
    for (v, q) in z.iter_mut().zip(&p) {
        if *q <= 0.0 || -q.log2() > mu {
            *v = f64::NEG_INFINITY;
        }
    }
    keep
}

/// Version 1's truncation at μ over a vocabulary of `z.len()`; returns k.
pub fn mirostat_v1(z: &mut [f64], mu: f64, m: usize) -> usize {
    let c = sorted_candidates(z);
    let p = candidate_probs(&c);
    let (mut sum_tb, mut sum_tt) = (0.0, 0.0);
    for i in 0..m.saturating_sub(1).min(p.len().saturating_sub(1)) {
        let t = ((i + 2) as f64 / (i + 1) as f64).ln();
        let b = (p[i] / p[i + 1]).ln();
        sum_tb += t * b;
        sum_tt += t * t;
    }
    let s_hat = sum_tb / sum_tt;
    let eps = s_hat - 1.0;
    let n = z.len() as f64;
    let k = ((eps * 2f64.powf(mu)) / (1.0 - n.powf(-eps))).powf(1.0 / s_hat);
    // llama.cpp's `std::max(int(k), 1)`: C's int() truncates; a k past i32 (or not a
    // number: ŝ = 1 gives 0/0, a flat distribution ŝ = 0) converts to INT_MIN on x86, so one
    // token stays; a k past the vocabulary keeps it all.
    let k = if !k.is_finite() || k >= 2_147_483_648.0 {
        1
    } else {
        (k as usize).clamp(1, z.len())
    };
    super::truncation::top_k(z, k, TopKTies::Exact);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At μ = 2τ = 2 bits, version 2 keeps the tokens of probability ≥ 1/4: 0.5 and 0.25
    /// (surprise exactly 2) stay, 0.2 and 0.05 go.
    #[test]
    fn version_2_keeps_surprise_within_mu() {
        let mut z: Vec<f64> = [0.5f64, 0.25, 0.2, 0.05].iter().map(|p| p.ln()).collect();
        assert_eq!(mirostat_v2(&mut z, 2.0), 2);
        assert!(z[1].is_finite() && z[2].is_infinite());
        // μ below every surprise still keeps the top token.
        let mut z = vec![0.0; 4];
        assert_eq!(mirostat_v2(&mut z, 0.5), 1);
    }

    /// p_i ∝ 1/(i+1)²: ŝ = 2, ε̂ = 1, k = (2^μ / (1 − 1/n))^(1/2). A flat distribution has
    /// ŝ = 0 and k = ∞: llama.cpp's int(k) is INT_MIN, and one token stays.
    #[test]
    fn version_1_estimates_zipf() {
        let n = 50;
        let mut z: Vec<f64> = (0..n).map(|i| -2.0 * ((i + 1) as f64).ln()).collect();
        let k = mirostat_v1(&mut z, 6.0, 100);
        let want = (64.0 / (1.0 - 1.0 / n as f64)).sqrt() as usize;
        assert_eq!(k, want);
        assert_eq!(z.iter().filter(|v| v.is_finite()).count(), want);
        let mut flat = vec![0.0; 10];
        assert_eq!(mirostat_v1(&mut flat, 6.0, 100), 1);
        assert_eq!(flat.iter().filter(|v| v.is_finite()).count(), 1);
    }
}
