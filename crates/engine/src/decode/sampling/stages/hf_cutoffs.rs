//! Hugging Face's entropy- and probability-cutoff warpers (transformers 5.25,
//! `generation/logits_process.py`): ε-sampling (`EpsilonLogitsWarper`), η-sampling
//! (`EtaLogitsWarper`, Hewitt et al. 2022) and top-H (`TopHLogitsWarper`, "Top-H Decoding",
//! arXiv 2509.02510). `_get_logits_processor` appends the warpers as temperature → top_h →
//! top_k → top_p → min_p → typical → epsilon → eta; epsilon and eta only when in (0, 1).
//! `min_tokens_to_keep` is 1 when sampling: the most likely token (and its ties) survives.

use super::{max_of, softmax};
use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec};
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const EpsilonCutoff: Knob = Knob::new("epsilon_cutoff");
    pub const EtaCutoff: Knob = Knob::new("eta_cutoff");
    pub const TopH: Knob = Knob::new("top_h");
}

const EPS: Stage = Stage::new("epsilon_cutoff");
const ETA_: Stage = Stage::new("eta_cutoff");
const TOPH: Stage = Stage::new("top_h");

/// 0 (off) or HF's open interval (0, 1).
fn cutoff(x: f64) -> Result<(), &'static str> {
    (0.0..1.0)
        .contains(&x)
        .then_some(())
        .ok_or("must be in [0, 1) (0 = off)")
}

/// Not a setting of llama.cpp or the OpenAI API: there they run after the peer's own.
const fn hf_place(rank: u16) -> Places {
    Places {
        lesson: rank,
        hf: rank,
        llama_cpp: rank + 100,
        openai: rank + 100,
    }
}

pub static EPSILON: StageDef = StageDef {
    stage: EPS,
    knobs: &[KnobSpec::of_stage(
        EPS,
        "epsilon_cutoff",
        "ε-sampling",
        "HF's: drop tokens with probability below ε, in [0, 1); 0 = off",
        "0.0003",
        slider(0.0, 0.05, 0.0001),
        Kind::Float(cutoff),
        &["0"],
    )],
    places: hf_place(102),
    replaces_chain: None,
    rule: &Epsilon,
    aliases: &["epsilon"],
};

pub static ETA: StageDef = StageDef {
    stage: ETA_,
    knobs: &[KnobSpec::of_stage(
        ETA_,
        "eta_cutoff",
        "η-sampling",
        "HF's: drop tokens below min(ε, √ε·e^−H), in [0, 1); 0 = off",
        "0.0009",
        slider(0.0, 0.05, 0.0001),
        Kind::Float(cutoff),
        &["0"],
    )],
    places: hf_place(104),
    replaces_chain: None,
    rule: &Eta,
    aliases: &["eta"],
};

pub static TOP_H: StageDef = StageDef {
    stage: TOPH,
    knobs: &[KnobSpec::of_stage(
        TOPH,
        "top_h",
        "Top-H",
        "HF's: the top tokens whose entropy terms sum to ≤ h × H (of the top 100), in (0, 1]; \
         0 = off",
        "0.4",
        slider(0.0, 1.0, 0.01),
        Kind::Float(|x| {
            (0.0..=1.0)
                .contains(&x)
                .then_some(())
                .ok_or("must be in [0, 1] (0 = off)")
        }),
        &["0"],
    )],
    places: hf_place(65),
    replaces_chain: None,
    rule: &TopH,
    aliases: &[],
};

struct Epsilon;
struct Eta;
struct TopH;

impl Rule for Epsilon {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let eps = cx.settings.num(Knob::EpsilonCutoff);
        below(z, eps);
        Cut::threshold("probability", eps)
    }
}

impl Rule for Eta {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let (eta, h) = eta_cutoff(z, cx.settings.num(Knob::EtaCutoff));
        Cut::threshold("probability", eta).with("entropy", h)
    }
}

impl Rule for TopH {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let h = cx.settings.num(Knob::TopH);
        let tau = top_h(z, h);
        Cut::threshold("entropy budget τ", tau)
    }
}

/// Removes tokens whose probability is below `cut`, except those tied with the largest
/// logit (`min_tokens_to_keep` = 1: `scores < topk(scores, 1)` is required to remove).
fn below(z: &mut [f64], cut: f64) {
    let p = softmax(z);
    let max = max_of(z);
    for (v, q) in z.iter_mut().zip(p) {
        if q < cut && *v < max {
            *v = f64::NEG_INFINITY;
        }
    }
}

/// `EpsilonLogitsWarper`: probabilities < ε removed.
pub fn epsilon_cutoff(z: &mut [f64], eps: f64) {
    below(z, eps);
}

/// `EtaLogitsWarper`: η = min(ε, √ε · e^−H), H the entropy (nats) of the distribution
/// entering; probabilities < η removed. Returns (η, H).
pub fn eta_cutoff(z: &mut [f64], eps: f64) -> (f64, f64) {
    let p = softmax(z);
    let h: f64 = p.iter().filter(|&&q| q > 0.0).map(|&q| -q * q.ln()).sum();
    let eta = eps.min(eps.sqrt() * (-h).exp());
    below(z, eta);
    (eta, h)
}

/// `TopHLogitsWarper`: q = softmax of the 100 largest logits (all others removed), τ = h ×
/// H(q); keep the prefix, most likely first, whose running sum of −q ln q stays ≤ τ (the
/// first always). Returns τ.
pub fn top_h(z: &mut [f64], h: f64) -> f64 {
    const TOP_N: usize = 100;
    let mut c = super::sorted_candidates(z);
    c.truncate(TOP_N);
    let q = super::candidate_probs(&c);
    let entropy: f64 = q.iter().filter(|&&x| x > 0.0).map(|&x| -x * x.ln()).sum();
    let tau = h * entropy;
    let mut cum = 0.0;
    let mut keep = 0;
    for (i, &x) in q.iter().enumerate() {
        // A zero probability's term is NaN in torch (0 · −∞): it and all after are dropped.
        if x <= 0.0 {
            break;
        }
        cum += -x * x.ln();
        if i > 0 && cum > tau {
            break;
        }
        keep = i + 1;
    }
    super::remove_all_but(z, c[..keep].iter().map(|&(id, _)| id));
    tau
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(probs: &[f64], f: impl Fn(&mut Vec<f64>)) -> Vec<bool> {
        let mut z: Vec<f64> = probs.iter().map(|p| p.ln()).collect();
        f(&mut z);
        z.iter().map(|v| v.is_finite()).collect()
    }

    /// transformers' `test_epsilon_dist_warper` (tests/generation/test_logits_process.py).
    #[test]
    fn epsilon_keeps_what_transformers_keeps() {
        let f = |z: &mut Vec<f64>| epsilon_cutoff(z, 0.1);
        assert_eq!(
            kept(&[0.87, 0.099, 0.001, 0.03], f),
            [true, false, false, false]
        );
        assert_eq!(kept(&[0.4, 0.299, 0.101, 0.2], f), [true; 4]);
    }

    /// `test_eta_dist_warper`.
    #[test]
    fn eta_keeps_what_transformers_keeps() {
        let f = |z: &mut Vec<f64>| {
            eta_cutoff(z, 0.0625);
        };
        assert_eq!(kept(&[0.0, 0.1, 0.8, 0.1], f), [false, true, true, true]);
        assert_eq!(
            kept(&[0.01, 0.04, 0.9, 0.05], f),
            [false, false, true, false]
        );
    }

    /// `test_top_h_dist_warper`'s cases, the −∞ one included.
    #[test]
    fn top_h_keeps_what_transformers_keeps() {
        let f = |h: f64| {
            move |z: &mut Vec<f64>| {
                top_h(z, h);
            }
        };
        assert_eq!(
            kept(&[0.97, 0.01, 0.01, 0.01], f(0.3)),
            [true, false, false, false]
        );
        assert_eq!(
            kept(&[0.4, 0.3, 0.2, 0.1], f(0.7)),
            [true, true, false, false]
        );
        assert_eq!(
            kept(&[0.75, 0.25, 0.0, 0.0], f(0.4)),
            [true, false, false, false]
        );
        // Only the 100 largest are considered.
        let mut z: Vec<f64> = (0..150).map(|i| -(i as f64) * 0.001).collect();
        top_h(&mut z, 1.0);
        assert!(z.iter().filter(|v| v.is_finite()).count() <= 100);
    }
}
