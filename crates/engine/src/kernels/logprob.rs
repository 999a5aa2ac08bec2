//! A model's logits as log-probabilities: log-softmax, its normaliser, KL between two rows and
//! the argmax. Shared by the sampling chain, beam search, the logit lens and the quality
//! measures; computed in f64 over 8 lanes folded in a fixed order, so the bits are the same on
//! every target.

/// Index of the largest value (the lowest index on a tie), as llama2.c's `sample_argmax`:
/// the engine's one argmax (logits, log-probabilities).
pub fn argmax<T: PartialOrd>(x: &[T]) -> usize {
    let mut best = 0;
    for (i, v) in x.iter().enumerate() {
        if *v > x[best] {
            best = i;
        }
    }
    best
}

/// log softmax of a model's logits, in f64: z − log Σ exp(z) (beam search scores, the
/// log-probabilities of a continuation).
pub fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let lse = log_sum_exp(logits);
    logits.iter().map(|&z| z as f64 - lse).collect()
}

/// KL(p ‖ q) in nats from the two log-probability rows: Σ p (ln p − ln q), ≥ 0 (two
/// near-identical rows can sum to −1e-18 in floats: clamped).
pub fn kl(log_p: &[f64], log_q: &[f64]) -> f64 {
    log_p
        .iter()
        .zip(log_q)
        .map(|(&a, &b)| a.exp() * (a - b))
        .sum::<f64>()
        .max(0.0)
}

/// `log_softmax(logits)[token]`, the same bits, without building the whole vector (a step
/// needs only the chosen token's; 32,000 of them cost a visible share of a step in the page).
pub fn log_softmax_at(logits: &[f32], token: usize) -> f64 {
    logits[token] as f64 - log_sum_exp(logits)
}

/// ln Σ e^z, shifted by the maximum (the normaliser of [`log_softmax_at`]).
/// The sum runs in 8 lanes (position i into lane i mod 8) folded in a fixed order, with
/// `kernels::exp_nonpositive8`: the same bits on every target, and a vectorised pass where the
/// scalar libm `exp` of each of 32,000 logits was a visible share of a 15M model's step at
/// two threads (BENCHMARKS.md, "Figures behind the code").
pub fn log_sum_exp(logits: &[f32]) -> f64 {
    #[inline(always)]
    fn add(lanes: &mut [f64; 8], x: [f64; 8]) {
        let e = crate::kernels::exp_nonpositive8(x);
        for l in 0..8 {
            lanes[l] += e[l];
        }
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let mut lanes = [0.0f64; 8];
    let chunks = logits.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        add(&mut lanes, std::array::from_fn(|l| c[l] as f64 - max));
    }
    if !tail.is_empty() {
        // The tail padded with −∞, whose e^x is 0.
        let x = std::array::from_fn(|l| tail.get(l).map_or(f64::NEG_INFINITY, |&z| z as f64 - max));
        add(&mut lanes, x);
    }
    let [a, b, c, d, f, g, h, i] = lanes;
    let sum = ((a + b) + (c + d)) + ((f + g) + (h + i));
    max + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_takes_first_of_ties() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
    }

    /// log Σ e^z in 8 lanes agrees with the plain libm sum to 1e-15 relative, at every
    /// length around the lane count and on a vocabulary-sized vector with removed tokens.
    #[test]
    fn log_sum_exp_agrees_with_the_plain_sum() {
        let plain = |z: &[f32]| {
            let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            max + z.iter().map(|&v| (v as f64 - max).exp()).sum::<f64>().ln()
        };
        for n in (1..40).chain([32_000]) {
            let mut z: Vec<f32> = (0..n)
                .map(|i| ((i * 7919 % 1013) as f32 - 500.0) * 0.031)
                .collect();
            if n > 10 {
                z[3] = f32::NEG_INFINITY;
            }
            let (got, want) = (log_sum_exp(&z), plain(&z));
            assert!(
                (got - want).abs() <= 1e-15 * want.abs().max(1.0),
                "{n}: {got} {want}"
            );
        }
    }

    #[test]
    fn log_softmax_at_is_the_full_vectors_element() {
        let z: Vec<f32> = (0..1000)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.13)
            .collect();
        let all = log_softmax(&z);
        for t in [0, 1, 499, 999] {
            assert_eq!(log_softmax_at(&z, t).to_bits(), all[t].to_bits());
        }
    }
}
