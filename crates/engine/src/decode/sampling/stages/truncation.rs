//! The truncations every peer has: top-k, top-p (nucleus), min-p and locally typical
//! sampling. Each removes tokens (−∞) and records where it cut.

use super::{by_logit_desc, candidate_probs, finite, remove_all_but, sorted_candidates, TIE};
use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec, PeerDefault};
use crate::decode::sampling::profile::Profile;
use serde::{Deserialize, Serialize};
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const TopK: Knob = Knob::new("top_k");
    pub const TopP: Knob = Knob::new("top_p");
    pub const MinP: Knob = Knob::new("min_p");
    pub const TypicalP: Knob = Knob::new("typical_p");
}

const K: Stage = Stage::new("top_k");
const P: Stage = Stage::new("top_p");
const MIN: Stage = Stage::new("min_p");
const TYP: Stage = Stage::new("typical_p");

fn unit(x: f64) -> Result<(), &'static str> {
    (x > 0.0 && x <= 1.0)
        .then_some(())
        .ok_or("must be in (0, 1] (1 = off)")
}

const fn llama(value: &'static str) -> PeerDefault {
    PeerDefault {
        profile: Profile::LlamaCpp,
        value,
        sampling_only: false,
    }
}

// The places, per peer (`tests/profiles.rs` holds each peer's whole order). Lesson 10,
// section 2: "temperature → top-p/top-k → sample", min-p and typical-p last; transformers
// `_get_logits_processor` appends the warpers as Temperature, TopK, TopP, MinP, Typical;
// llama.cpp `common_params_sampling::samplers`: top_k, typ_p, top_p, min_p in that order,
// before temperature; vLLM v1 `Sampler`: temperature, min-p (an argmax-invariant
// processor), then top-k/top-p.

pub static TOP_K: StageDef = StageDef {
    stage: K,
    knobs: &[KnobSpec::of_stage(
        K,
        "top_k",
        "Top-k",
        "keep the k most likely tokens; 0 = off",
        "40",
        slider(0.0, 100.0, 1.0),
        Kind::Int(|n| (n >= 0).then_some(()).ok_or("must be ≥ 0")),
        &["0"],
    )
    // transformers `GenerationConfig`: `top_k = 50`, and `generate()` with
    // `do_sample=True` adds `TopKLogitsWarper(50)`; greedy and beam search add no warper.
    // llama.cpp `common_params_sampling`: `top_k = 40`.
    .peers(&[
        PeerDefault {
            profile: Profile::Hf,
            value: "50",
            sampling_only: true,
        },
        llama("40"),
    ])],
    places: Places {
        lesson: 70,
        hf: 70,
        llama_cpp: 70,
        openai: 70,
    },
    replaces_chain: None,
    rule: &TopK,
    aliases: &[],
};

pub static TOP_P: StageDef = StageDef {
    stage: P,
    knobs: &[KnobSpec::of_stage(
        P,
        "top_p",
        "Top-p (nucleus)",
        "keep the smallest set with mass ≥ p, in (0, 1]; 1 = off",
        "0.9",
        slider(0.01, 1.0, 0.01),
        Kind::Float(unit),
        &["1"],
    )
    // llama.cpp: `top_p = 0.95f`.
    .peers(&[llama("0.95")])],
    places: Places::all(80),
    replaces_chain: None,
    rule: &TopP,
    aliases: &[],
};

pub static MIN_P: StageDef = StageDef {
    stage: MIN,
    knobs: &[KnobSpec::of_stage(
        MIN,
        "min_p",
        "Min-p",
        "drop tokens below p × the top probability, in [0, 1]",
        "0.05",
        slider(0.0, 1.0, 0.01),
        Kind::Float(|x| {
            (0.0..=1.0)
                .contains(&x)
                .then_some(())
                .ok_or("must be in [0, 1] (0 = off)")
        }),
        &["0"],
    )
    // llama.cpp: `min_p = 0.05f`.
    .peers(&[llama("0.05")])],
    places: Places {
        lesson: 90,
        hf: 90,
        llama_cpp: 90,
        openai: 65,
    },
    replaces_chain: None,
    rule: &MinP,
    aliases: &[],
};

pub static TYPICAL_P: StageDef = StageDef {
    stage: TYP,
    knobs: &[KnobSpec::of_stage(
        TYP,
        "typical_p",
        "Typical-p",
        "locally typical mass, in (0, 1]; 1 = off",
        "0.95",
        slider(0.01, 1.0, 0.01),
        Kind::Float(unit),
        &["1"],
    )
        .aliases(&["typical"])],
    places: Places {
        lesson: 100,
        hf: 100,
        llama_cpp: 75,
        openai: 100,
    },
    replaces_chain: None,
    rule: &Typical,
    aliases: &["typ_p", "typical"],
};

/// Which tokens are kept at the top-k boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TopKTies {
    /// Every token whose logit equals the k-th largest is kept (may keep more than k).
    Keep,
    /// Exactly k tokens; among equal logits the lower id wins.
    Exact,
}

impl TopKTies {
    /// The peer's rule. The lesson's definition keeps every token as likely as the k-th.
    /// HF `TopKLogitsWarper`: `scores < torch.topk(scores, k)[0][..., -1, None]` are removed,
    /// so ties with the k-th are kept; vLLM `apply_top_k_top_p` masks `logits_sort <
    /// logits_sort.gather(…, vocab − k)`, the same. llama.cpp's `llama_sampler_top_k`: a
    /// partial sort, exactly k.
    pub fn of(p: Profile) -> TopKTies {
        match p {
            Profile::LlamaCpp => TopKTies::Exact,
            Profile::Lesson | Profile::Hf | Profile::OpenAi => TopKTies::Keep,
        }
    }
}

/// Where typical-p's cut falls in the tokens sorted by |surprisal − entropy|.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TypicalBoundary {
    /// Keep through the first token whose cumulative mass reaches p (≥), and any token tied
    /// with it in score.
    Reaching,
    /// Keep through the first token whose cumulative mass exceeds p (>), no tie extension.
    Exceeding,
}

impl TypicalBoundary {
    /// The peer's rule. HF `TypicalLogitsWarper`: `last_ind = (cumulative_probs <
    /// mass).sum()`, then everything scoring ≤ the score at last_ind is kept (the lesson and
    /// the OpenAI profile follow it). llama.cpp's `llama_sampler_typical`: `if (cum_sum > p
    /// …) { last_idx = i + 1; break; }`.
    pub fn of(p: Profile) -> TypicalBoundary {
        match p {
            Profile::LlamaCpp => TypicalBoundary::Exceeding,
            Profile::Lesson | Profile::Hf | Profile::OpenAi => TypicalBoundary::Reaching,
        }
    }
}

struct TopK;
struct TopP;
struct MinP;
struct Typical;

impl Rule for TopK {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let k = cx.settings.count(Knob::TopK);
        match top_k(z, k, TopKTies::of(cx.settings.profile)) {
            Some(kth) => Cut::threshold("the k-th logit", kth),
            None => Cut::default(),
        }
    }
}

impl Rule for TopP {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let p = cx.settings.num(Knob::TopP);
        top_p(z, p);
        Cut {
            mass: Some(p),
            ..Cut::default()
        }
    }
}

impl Rule for MinP {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let p = cx.settings.num(Knob::MinP);
        let top = min_p(z, p);
        Cut::threshold("probability", p * top)
    }
}

impl Rule for Typical {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let p = cx.settings.num(Knob::TypicalP);
        match typical_p(z, p, TypicalBoundary::of(cx.settings.profile)) {
            Some(h) => Cut::threshold("mass", p).with("entropy", h),
            None => Cut::threshold("mass", p),
        }
    }
}

/// Top-k: the k largest logits survive (k = 0: all); returns the k-th logit when it cut.
/// With `TopKTies::Keep`, every token tied with the k-th survives too. Linear time: a
/// selection, not a sort of the vocabulary.
pub fn top_k(z: &mut [f64], k: usize, ties: TopKTies) -> Option<f64> {
    let mut c: Vec<(usize, f64)> = finite(z);
    if k == 0 || k >= c.len() {
        return None;
    }
    c.select_nth_unstable_by(k - 1, by_logit_desc);
    let kth = c[k - 1].1;
    match ties {
        TopKTies::Exact => remove_all_but(z, c[..k].iter().map(|&(i, _)| i)),
        TopKTies::Keep => {
            for v in z.iter_mut() {
                if *v < kth {
                    *v = f64::NEG_INFINITY;
                }
            }
        }
    }
    Some(kth)
}

/// Top-p (nucleus): the smallest set of most likely tokens whose mass reaches p; the token
/// that crosses p is kept, nothing more on an exact tie (HF `TopPLogitsWarper` removes
/// ascending-cumulative ≤ 1 − p; llama.cpp stops at cum ≥ p; vLLM as HF).
pub fn top_p(z: &mut [f64], p: f64) {
    if p >= 1.0 {
        return;
    }
    let mut c = finite(z);
    let Some(max) = c.iter().map(|&(_, v)| v).reduce(f64::max) else {
        return;
    };
    let total: f64 = c.iter().map(|&(_, v)| (v - max).exp()).sum();
    // The nucleus is usually a small part of the vocabulary: sort the top m candidates and
    // widen m only while their mass falls short of p.
    let mut m = 64.min(c.len());
    loop {
        if m < c.len() {
            c.select_nth_unstable_by(m - 1, by_logit_desc);
        }
        c[..m].sort_unstable_by(by_logit_desc);
        let mut cum = 0.0;
        for i in 0..m {
            cum += (c[i].1 - max).exp() / total;
            if cum >= p - TIE {
                remove_all_but(z, c[..=i].iter().map(|&(id, _)| id));
                return;
            }
        }
        if m == c.len() {
            // Rounding kept the sum below p: everything stays.
            return;
        }
        m = (2 * m).min(c.len());
    }
}

/// Min-p (Nguyen et al. 2024): tokens whose probability is below p × the top probability are
/// removed (HF `MinPLogitsWarper`, vLLM `_apply_min_p`; llama.cpp compares logits with
/// max + ln p, the same rule). Returns the top probability.
pub fn min_p(z: &mut [f64], p: f64) -> f64 {
    let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if p <= 0.0 || max == f64::NEG_INFINITY {
        return 0.0;
    }
    let mut total = 0.0;
    for v in z.iter_mut() {
        if v.is_finite() {
            total += (*v - max).exp();
        }
        // p_i / p_max = exp(z_i − z_max)
        if v.is_finite() && *v < max && (*v - max).exp() < p - TIE {
            *v = f64::NEG_INFINITY;
        }
    }
    1.0 / total
}

/// Locally typical sampling (Meister et al. 2023): tokens sorted by |−ln p − H| (closest to
/// the entropy first) are kept until their mass reaches p; where exactly the cut falls is the
/// profile's `TypicalBoundary`. Returns the entropy H when it ran.
pub fn typical_p(z: &mut [f64], p: f64, boundary: TypicalBoundary) -> Option<f64> {
    if p >= 1.0 {
        return None;
    }
    let c = sorted_candidates(z);
    if c.len() <= 1 {
        return None;
    }
    let probs = candidate_probs(&c);
    let entropy: f64 = probs
        .iter()
        .filter(|&&q| q > 0.0)
        .map(|&q| -q * q.ln())
        .sum();
    let mut order: Vec<(usize, f64, f64)> = c
        .iter()
        .zip(&probs)
        .map(|(&(id, _), &q)| (id, q, (-q.ln() - entropy).abs()))
        .collect();
    // Most typical first; equal scores keep the logit order (stable sort).
    order.sort_by(|a, b| a.2.total_cmp(&b.2));
    let mut cum = 0.0;
    let mut last = order.len() - 1;
    for (i, &(_, q, _)) in order.iter().enumerate() {
        cum += q;
        let done = match boundary {
            TypicalBoundary::Reaching => cum >= p - TIE,
            TypicalBoundary::Exceeding => cum > p + TIE,
        };
        if done {
            last = i;
            break;
        }
    }
    let mut keep = last + 1;
    if boundary == TypicalBoundary::Reaching {
        // HF keeps everything scoring no worse than the token at the cut.
        let cut = order[last].2;
        keep += order[keep..]
            .iter()
            .take_while(|(_, _, s)| (*s - cut).abs() <= TIE)
            .count();
    }
    remove_all_but(z, order[..keep].iter().map(|&(id, _, _)| id));
    Some(entropy)
}

#[cfg(test)]
mod tests {
    use super::super::softmax;
    use super::*;

    /// Logits whose softmax is exactly `probs` (ln of each).
    fn logits(probs: &[f64]) -> Vec<f64> {
        probs.iter().map(|p| p.ln()).collect()
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn top_p_exact_tie_keeps_nothing_extra() {
        // ½ + ¼ = ¾ exactly: top-p 0.75 keeps two tokens, 0.7500001 keeps three.
        let mut z = logits(&[0.5, 0.25, 0.125, 0.125]);
        top_p(&mut z, 0.75);
        assert!(close(&softmax(&z), &[2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0]));
        let mut z = logits(&[0.5, 0.25, 0.125, 0.125]);
        top_p(&mut z, 0.750_001);
        assert_eq!(softmax(&z).iter().filter(|&&p| p > 0.0).count(), 3);
    }

    #[test]
    fn top_k_ties_depend_on_the_rule() {
        let base = logits(&[0.4, 0.2, 0.2, 0.2]);
        let mut keep = base.clone();
        assert_eq!(top_k(&mut keep, 2, TopKTies::Keep), Some(0.2f64.ln()));
        assert_eq!(keep.iter().filter(|v| v.is_finite()).count(), 4);
        let mut exact = base.clone();
        top_k(&mut exact, 2, TopKTies::Exact);
        // Exactly two: the 0.4 and the lowest-id 0.2.
        assert!(close(&softmax(&exact), &[2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0]));
    }

    #[test]
    fn min_p_returns_the_top_probability() {
        let mut z = logits(&[0.5, 0.3, 0.2]);
        let top = min_p(&mut z, 0.5);
        assert!((top - 0.5).abs() < 1e-12);
        // 0.2 < 0.5 × 0.5 is removed; 0.3 stays.
        assert!(z[2].is_infinite() && z[1].is_finite());
    }
}
