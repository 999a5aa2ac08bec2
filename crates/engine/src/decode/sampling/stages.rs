//! The stages of the sampling chain: small pure functions over a logits vector `z` (f64, one
//! entry per vocabulary token). A token a stage removes gets −∞, so later stages and the
//! final softmax ignore it; nothing is renormalised explicitly (softmax does that).
//!
//! Probability comparisons use a tolerance of [`TIE`] so that a cumulative mass equal to p
//! in exact arithmetic (the lesson's and the tests' fractions) counts as reaching p, despite
//! the last-bit rounding of exp and of the normalising sum.

use super::profile::{TopKTies, TypicalBoundary};
use std::collections::HashMap;

/// Masses within this of each other count as equal.
pub const TIE: f64 = 1e-12;

/// Logit descending, lower id first on ties.
fn by_logit_desc(a: &(usize, f64), b: &(usize, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Finite entries as (id, logit).
fn finite(z: &[f64]) -> Vec<(usize, f64)> {
    z.iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, &v)| (i, v))
        .collect()
}

/// Finite entries sorted by logit descending, lower id first on ties.
fn sorted_candidates(z: &[f64]) -> Vec<(usize, f64)> {
    let mut c = finite(z);
    c.sort_unstable_by(by_logit_desc);
    c
}

/// The largest entry (−∞ for none), in eight running maxima: a pass the compiler
/// vectorises where a fold through `f64::max` (NaN rules) stays one element at a time. The
/// chain's vectors hold no NaN (`chain::check_logits` and the check after each stage), and
/// for those the value is the fold's.
pub fn max_of(z: &[f64]) -> f64 {
    let mut m = [f64::NEG_INFINITY; 8];
    let chunks = z.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            m[l] = if c[l] > m[l] { c[l] } else { m[l] };
        }
    }
    for (l, &v) in tail.iter().enumerate() {
        m[l] = if v > m[l] { v } else { m[l] };
    }
    m.into_iter()
        .fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a })
}

/// The first index holding the largest entry (`None` when all are −∞ or `z` is empty).
pub fn first_argmax(z: &[f64]) -> Option<usize> {
    let m = max_of(z);
    if m == f64::NEG_INFINITY {
        return None;
    }
    z.iter().position(|&v| v == m)
}

/// softmax over the finite entries of `z` (removed tokens get 0). All −∞ gives all zeros.
/// The engine's one softmax of logits (the attention kernel has its own f32 one in `cpu`,
/// which must give the same bits natively and in wasm).
pub fn softmax(z: &[f64]) -> Vec<f64> {
    let max = max_of(z);
    if max == f64::NEG_INFINITY {
        return vec![0.0; z.len()];
    }
    // Removed tokens are skipped rather than exponentiated (most of them, after a top-k).
    // The sum is taken as the terms are made, in the same order as summing them after.
    let mut sum = -0.0f64;
    let mut p: Vec<f64> = z
        .iter()
        .map(|&v| {
            let e = if v.is_finite() { (v - max).exp() } else { 0.0 };
            sum += e;
            e
        })
        .collect();
    p.iter_mut().for_each(|v| *v /= sum);
    p
}

/// Probabilities of sorted candidates (the same softmax, over the candidates only).
fn candidate_probs(c: &[(usize, f64)]) -> Vec<f64> {
    let Some(&(_, max)) = c.first() else {
        return Vec::new();
    };
    let e: Vec<f64> = c.iter().map(|&(_, v)| (v - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

fn remove_all_but(z: &mut [f64], keep: impl Iterator<Item = usize>) {
    let mut keep_mask = vec![false; z.len()];
    for i in keep {
        keep_mask[i] = true;
    }
    for (v, k) in z.iter_mut().zip(keep_mask) {
        if !k {
            *v = f64::NEG_INFINITY;
        }
    }
}

/// Logit bias (OpenAI `logit_bias`, HF `sequence_bias` for single tokens): z[id] += value.
pub fn logit_bias(z: &mut [f64], bias: &[(u32, f64)]) {
    for &(id, b) in bias {
        if let Some(v) = z.get_mut(id as usize) {
            *v += b;
        }
    }
}

/// Counts of each token in `seen`.
fn counts(seen: &[u32]) -> HashMap<u32, u32> {
    let mut c = HashMap::new();
    for &t in seen {
        *c.entry(t).or_insert(0) += 1;
    }
    c
}

/// Repetition penalty (CTRL, Keskar et al. 2019): every distinct token in `seen`, once, has a
/// positive logit divided by `penalty` and a negative one multiplied by it (so a penalty > 1
/// always makes it less likely). HF, llama.cpp and vLLM agree (a zero logit stays zero).
pub fn repetition_penalty(z: &mut [f64], seen: &[u32], penalty: f64) {
    for &t in counts(seen).keys() {
        if let Some(v) = z.get_mut(t as usize) {
            *v = if *v > 0.0 { *v / penalty } else { *v * penalty };
        }
    }
}

/// Frequency penalty (OpenAI): z[t] −= count(t) × α.
pub fn frequency_penalty(z: &mut [f64], seen: &[u32], alpha: f64) {
    for (&t, &n) in &counts(seen) {
        if let Some(v) = z.get_mut(t as usize) {
            *v -= n as f64 * alpha;
        }
    }
}

/// Presence penalty (OpenAI): z[t] −= α if t appeared at all.
pub fn presence_penalty(z: &mut [f64], seen: &[u32], alpha: f64) {
    for &t in counts(seen).keys() {
        if let Some(v) = z.get_mut(t as usize) {
            *v -= alpha;
        }
    }
}

/// No-repeat-n-gram (HF `NoRepeatNGramLogitsProcessor`): bans every token that would complete
/// an n-gram already present in `history`.
pub fn no_repeat_ngram(z: &mut [f64], history: &[u32], n: usize) {
    if n == 0 || history.len() + 1 < n {
        return;
    }
    let prefix = &history[history.len() + 1 - n..];
    for w in history.windows(n) {
        if &w[..n - 1] == prefix {
            if let Some(v) = z.get_mut(w[n - 1] as usize) {
                *v = f64::NEG_INFINITY;
            }
        }
    }
}

/// Temperature: z / T. T = 0 is greedy: only the (first) largest logit survives.
pub fn temperature(z: &mut [f64], t: f64) {
    if t == 0.0 {
        // The first maximum (logits here are finite or −∞), and all else removed in place:
        // a greedy step runs this on every token (no mask of the vocabulary).
        let best = first_argmax(z);
        for (i, v) in z.iter_mut().enumerate() {
            if Some(i) != best {
                *v = f64::NEG_INFINITY;
            }
        }
    } else {
        z.iter_mut().filter(|v| v.is_finite()).for_each(|v| *v /= t);
    }
}

/// Top-k: the k largest logits survive (k = 0: all). With `TopKTies::Keep`, every token tied
/// with the k-th survives too. Linear time: a selection, not a sort of the vocabulary.
pub fn top_k(z: &mut [f64], k: usize, ties: TopKTies) {
    let mut c: Vec<(usize, f64)> = finite(z);
    if k == 0 || k >= c.len() {
        return;
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
/// max + ln p, the same rule).
pub fn min_p(z: &mut [f64], p: f64) {
    if p <= 0.0 {
        return;
    }
    let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return;
    }
    for v in z.iter_mut() {
        // p_i / p_max = exp(z_i − z_max)
        if v.is_finite() && *v < max && (*v - max).exp() < p - TIE {
            *v = f64::NEG_INFINITY;
        }
    }
}

/// Locally typical sampling (Meister et al. 2023): tokens sorted by |−ln p − H| (closest to
/// the entropy first) are kept until their mass reaches p; where exactly the cut falls is the
/// profile's `TypicalBoundary`.
pub fn typical_p(z: &mut [f64], p: f64, boundary: TypicalBoundary) {
    if p >= 1.0 {
        return;
    }
    let c = sorted_candidates(z);
    if c.len() <= 1 {
        return;
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
}

#[cfg(test)]
mod tests {

    /// The vectorised e^x against the C library's, over the range a shifted logit takes:
    /// within 2 ulp everywhere, 0 only where e^x is below 1e-307.
    #[test]
    fn exp_nonpositive_is_within_two_ulp_of_libm() {
        let mut x = 0.0f64;
        let check = |x: f64| {
            let want = x.exp();
            let got = crate::kernels::exp_nonpositive(x);
            if x < -708.39 {
                assert!(got == 0.0 && want < 1e-307, "{x}");
            } else {
                let ulp = (want.to_bits() as i64 - got.to_bits() as i64).abs();
                assert!(ulp <= 2, "exp({x}) = {got:e}, libm {want:e}: {ulp} ulp");
            }
        };
        while x > -745.0 {
            check(x);
            check(x * 0.999_991); // between the steps
            x -= 0.003_7;
        }
        for x in [
            0.0,
            -0.0,
            -1e-300,
            -f64::MIN_POSITIVE,
            -0.346_573_590_279_972_6,
            -708.39,
            -708.4,
        ] {
            check(x);
        }
        assert_eq!(crate::kernels::exp_nonpositive(f64::NEG_INFINITY), 0.0);
    }

    /// The eight-lane maximum and the first index of it equal the plain scans: every
    /// length 0–20 (tails of each size), ties (the first wins), −∞ entries, all −∞.
    #[test]
    fn max_of_and_first_argmax_equal_the_plain_scans() {
        for n in 0..=20usize {
            for seed in 0..5usize {
                let z: Vec<f64> = (0..n)
                    .map(|i| match (i * 7 + seed * 3) % 6 {
                        0 => f64::NEG_INFINITY,
                        k => ((i * 13 + seed) % 4) as f64 - k as f64 * 0.5,
                    })
                    .collect();
                let plain = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(max_of(&z), plain, "{z:?}");
                let first = z
                    .iter()
                    .position(|&v| v == plain)
                    .filter(|_| plain > f64::NEG_INFINITY);
                assert_eq!(first_argmax(&z), first, "{z:?}");
            }
            let none = vec![f64::NEG_INFINITY; n];
            assert_eq!(first_argmax(&none), None);
        }
    }

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
        top_k(&mut keep, 2, TopKTies::Keep);
        assert_eq!(keep.iter().filter(|v| v.is_finite()).count(), 4);
        let mut exact = base.clone();
        top_k(&mut exact, 2, TopKTies::Exact);
        // Exactly two: the 0.4 and the lowest-id 0.2.
        assert!(close(&softmax(&exact), &[2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0]));
    }

    #[test]
    fn temperature_zero_is_greedy() {
        let mut z = vec![1.0, 3.0, 3.0, 2.0];
        temperature(&mut z, 0.0);
        assert_eq!(softmax(&z), vec![0.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn no_repeat_ngram_bans_completions() {
        // history 1 1 2 1: bigrams (1,1), (1,2), (2,1); last token 1 → ban 1 and 2.
        let mut z = vec![0.0; 3];
        no_repeat_ngram(&mut z, &[1, 1, 2, 1], 2);
        assert_eq!(z[0], 0.0);
        assert!(z[1].is_infinite() && z[2].is_infinite());
    }

    #[test]
    fn softmax_of_all_removed_is_zero() {
        assert_eq!(softmax(&[f64::NEG_INFINITY; 3]), vec![0.0; 3]);
    }
}
