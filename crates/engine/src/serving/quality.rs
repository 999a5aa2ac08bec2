//! What quantization costs in quality, measured as llama.cpp's `perplexity --kl-divergence`
//! reports it: over a fixed text, at every position, the KL divergence of the quantized
//! model's next-token distribution from the float32 one's (KL(p_f32 ‖ p_q)), whether both
//! put the same token on top, and each model's perplexity on the text's next tokens.
//! The text, [`EVAL_TEXT`], is a few hundred tokens of simple stories written for this.

use crate::forward::batch::ForwardError;
use crate::forward::kv_cache::KvCache;
use crate::forward::Transformer;
use crate::kernels::logprob::argmax;
use crate::kernels::logprob::log_softmax;

/// The evaluation text kept in the repository (three short stories written for it).
pub const EVAL_TEXT: &str = include_str!("../eval/stories.txt");

/// One model against a reference over a text.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Quality {
    /// Positions compared (each with a next token in the text).
    pub positions: usize,
    /// Mean over positions of KL(p_ref ‖ p_other), in nats.
    pub mean_kl: f64,
    /// Largest KL at one position.
    pub max_kl: f64,
    /// Share of positions where both models' most likely token is the same.
    pub same_top: f64,
    /// exp(mean −log p(next token)) of the reference and of the other model.
    pub perplexity_ref: f64,
    pub perplexity: f64,
}

/// `other` against `reference` over `tokens` (BOS first). Texts longer than the context are
/// cut into windows of `seq_len` tokens, each run from an empty cache (its first token
/// only conditions the rest).
pub fn compare(
    reference: &Transformer,
    other: &Transformer,
    tokens: &[u32],
) -> Result<Quality, ForwardError> {
    let c = &reference.config;
    let vocab = c.vocab_size;
    let (mut n, mut kl_sum, mut kl_max, mut same) = (0usize, 0.0f64, 0.0f64, 0usize);
    let (mut nll_ref, mut nll) = (0.0f64, 0.0f64);
    for window in tokens.chunks(c.seq_len) {
        if window.len() < 2 {
            continue;
        }
        let run = |t: &Transformer| -> Result<Vec<Vec<f64>>, ForwardError> {
            let mut cache = KvCache::new(&t.config);
            let logits = t.prefill(&mut cache, window, true)?;
            Ok(logits.chunks(vocab).map(log_softmax).collect())
        };
        let (p, q) = (run(reference)?, run(other)?);
        for i in 0..window.len() - 1 {
            let (lp, lq) = (&p[i], &q[i]);
            let kl = lp
                .iter()
                .zip(lq)
                .map(|(&a, &b)| {
                    if a.is_finite() {
                        a.exp() * (a - b)
                    } else {
                        0.0
                    }
                })
                .sum();
            kl_sum += kl;
            kl_max = kl_max.max(kl);
            same += (argmax(lp) == argmax(lq)) as usize;
            let next = window[i + 1] as usize;
            nll_ref -= lp[next];
            nll -= lq[next];
            n += 1;
        }
    }
    let per = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
    Ok(Quality {
        positions: n,
        mean_kl: per(kl_sum),
        max_kl: kl_max,
        same_top: per(same as f64),
        perplexity_ref: per(nll_ref).exp(),
        perplexity: per(nll).exp(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::kernels::logprob::kl;
    use crate::quant::Precision;
    use crate::weights::Checkpoint;

    fn tiny() -> Transformer {
        let c = Config {
            dim: 32,
            hidden_dim: 48,
            n_layers: 2,
            n_heads: 4,
            n_kv_heads: 2,
            vocab_size: 40,
            seq_len: 16,
            shared_classifier: true,
            rope_theta: Config::LLAMA2C_ROPE_THETA,
            rms_eps: Config::LLAMA2C_RMS_EPS,
        };
        Transformer::new(Checkpoint::random(c, 5).unwrap())
    }

    /// A model against itself: KL 0, the same top token everywhere, equal perplexities;
    /// against its q4 self: KL > 0. The KL of two known distributions by hand.
    #[test]
    fn identical_models_agree_and_quantized_ones_diverge() {
        let t = tiny();
        let tokens: Vec<u32> = (0..40).map(|i| (i * 7 % 40) as u32).collect();
        let q = compare(&t, &t, &tokens).unwrap();
        // 40 tokens in windows of 16, 16, 8: 15 + 15 + 7 positions.
        assert_eq!(q.positions, 37);
        assert_eq!((q.mean_kl, q.same_top), (0.0, 1.0));
        assert_eq!(q.perplexity, q.perplexity_ref);
        let q4 = compare(&t, &t.at(Precision::Q4), &tokens).unwrap();
        assert!(q4.mean_kl > 0.0 && q4.max_kl >= q4.mean_kl, "{q4:?}");
        assert_eq!(q4.perplexity_ref, q.perplexity_ref);
        // KL([0.5, 0.5] ‖ [0.25, 0.75]) = 0.5 ln 2 + 0.5 ln(2/3) = 0.1438…
        let (p, r) = (log_softmax(&[0.0, 0.0]), log_softmax(&[0.0, 3f32.ln()]));
        let k = kl(&p, &r);
        assert!((k - 0.143_841_036).abs() < 1e-6, "{k}");
    }
}
