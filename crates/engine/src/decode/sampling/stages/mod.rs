//! The stages of the sampling chain, one file per stage or family, each a [`StageDef`]
//! registered with one line in [`REGISTRY`]; and the helpers they share. A stage's rule is a
//! small function over a logits vector `z` (f64, one entry per vocabulary token). A token a
//! stage removes gets −∞, so later stages and the final softmax ignore it; nothing is
//! renormalised explicitly (softmax does that).
//!
//! Probability comparisons use a tolerance of [`TIE`] so that a cumulative mass equal to p
//! in exact arithmetic (the lesson's and the tests' fractions) counts as reaching p, despite
//! the last-bit rounding of exp and of the normalising sum.

use super::stage::StageDef;

/// Declares each stage file and lists its stages in [`REGISTRY`]: adding a stage is its file
/// and one line here.
macro_rules! registry {
    ($($module:ident: [$($def:ident),+]),+ $(,)?) => {
        $(pub mod $module;)+

        /// Every stage, in the order the page and `--help` list their knobs.
        pub static REGISTRY: &[&StageDef] = &[$($(&$module::$def),+),+];
    };
}

registry! {
    truncation: [TOP_K, TOP_P, MIN_P, TYPICAL_P],
    penalties: [REPETITION, FREQUENCY, PRESENCE, NO_REPEAT_NGRAM],
    bias: [LOGIT_BIAS],
    // Temperature's own knob sits with the lesson's four at the top of the page; its
    // dynamic range and exponent come first among the samplers of 2026 in the grid.
    temperature: [TEMPERATURE],
    dry: [DRY],
    top_n_sigma: [TOP_N_SIGMA],
    xtc: [XTC],
    hf_cutoffs: [EPSILON, ETA, TOP_H],
    mirostat: [MIROSTAT],
    adaptive_p: [ADAPTIVE_P],
    constraint: [CONSTRAINT],
}

/// Masses within this of each other count as equal.
pub const TIE: f64 = 1e-12;

/// Logit descending, lower id first on ties.
pub(crate) fn by_logit_desc(a: &(usize, f64), b: &(usize, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Finite entries as (id, logit).
pub(crate) fn finite(z: &[f64]) -> Vec<(usize, f64)> {
    z.iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, &v)| (i, v))
        .collect()
}

/// Finite entries sorted by logit descending, lower id first on ties.
pub(crate) fn sorted_candidates(z: &[f64]) -> Vec<(usize, f64)> {
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
pub(crate) fn candidate_probs(c: &[(usize, f64)]) -> Vec<f64> {
    let Some(&(_, max)) = c.first() else {
        return Vec::new();
    };
    let e: Vec<f64> = c.iter().map(|&(_, v)| (v - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

pub(crate) fn remove_all_but(z: &mut [f64], keep: impl Iterator<Item = usize>) {
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
}
