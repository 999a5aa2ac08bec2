//! The KV cache of real models (lesson 10, section 4: bytes = 2 × n × N_layers × d_kv ×
//! bytes/elem): presets with their shapes and parameter counts, the weights against a
//! batch's caches, MHA against GQA against MQA.

use decoding_engine::forward::kv_cache::cache_bytes_formula;

/// A real model's attention shape, for the calculator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    pub layers: u64,
    pub n_heads: u64,
    pub n_kv_heads: u64,
    pub head_dim: u64,
    /// What the model's K/V sharing is called.
    pub kind: &'static str,
    /// Learned parameters (embedding, layers, norms, the output matrix when it has its
    /// own): the weights the cache is compared with.
    pub params: u64,
}

impl Preset {
    /// d_kv: the K (or V) elements a position holds in a layer, n_kv_heads × head_dim.
    pub fn kv_dim(&self) -> u64 {
        self.n_kv_heads * self.head_dim
    }

    /// A loaded model's shape as a calculator row (its name is shown beside it).
    pub fn of_config(c: &decoding_engine::Config, params: u64) -> Preset {
        Preset {
            name: "the loaded model",
            layers: c.n_layers as u64,
            n_heads: c.n_heads as u64,
            n_kv_heads: c.n_kv_heads as u64,
            head_dim: c.head_size() as u64,
            kind: match c.n_kv_heads {
                1 => "MQA",
                k if k == c.n_heads => "MHA",
                _ => "GQA",
            },
            params,
        }
    }
}

/// Published configurations (each model's config.json on the Hugging Face hub).
pub const PRESETS: [Preset; 6] = [
    Preset {
        name: "stories260K",
        layers: 5,
        n_heads: 8,
        n_kv_heads: 4,
        head_dim: 8,
        kind: "GQA",
        params: 260_032,
    },
    Preset {
        name: "GPT-2 small",
        layers: 12,
        n_heads: 12,
        n_kv_heads: 12,
        head_dim: 64,
        kind: "MHA",
        params: 124_439_808,
    },
    Preset {
        name: "Llama-2-7B",
        layers: 32,
        n_heads: 32,
        n_kv_heads: 32,
        head_dim: 128,
        kind: "MHA",
        params: 6_738_415_616,
    },
    Preset {
        name: "Llama-3-8B",
        layers: 32,
        n_heads: 32,
        n_kv_heads: 8,
        head_dim: 128,
        kind: "GQA",
        params: 8_030_261_248,
    },
    Preset {
        name: "Mistral-7B",
        layers: 32,
        n_heads: 32,
        n_kv_heads: 8,
        head_dim: 128,
        kind: "GQA",
        params: 7_241_732_096,
    },
    Preset {
        name: "Falcon-7B",
        layers: 32,
        n_heads: 71,
        n_kv_heads: 1,
        head_dim: 64,
        kind: "MQA",
        params: 6_921_720_704,
    },
];

/// Weights against the KV cache of a batch (lesson 10, section 4: "at long n it dominates
/// total inference memory"): the weights' bytes, the cache of `batch` sequences at
/// `positions` (each its own cache, `cache_bytes_formula` × batch), and the context length
/// from which the caches together outweigh the weights — the smallest n with
/// batch × 2 × n × N_layers × d_kv > params (the element size cancels).
pub fn weights_and_kv(
    p: &Preset,
    positions: u64,
    bytes_per_elem: u64,
    batch: u64,
) -> (u64, u64, u64) {
    let weights = p.params * bytes_per_elem;
    let kv = batch * cache_bytes_formula(positions, p.layers, p.kv_dim(), bytes_per_elem);
    let per_position = batch * cache_bytes_formula(1, p.layers, p.kv_dim(), 1);
    (weights, kv, p.params / per_position.max(1) + 1)
}

/// The cache of `p` at `positions` if every query head had its own K/V (MHA), with the model's
/// sharing, and with one K/V head for all (MQA).
pub fn mha_gqa_mqa(p: &Preset, positions: u64, bytes_per_elem: u64) -> (u64, u64, u64) {
    let f = |kv_heads: u64| {
        cache_bytes_formula(positions, p.layers, kv_heads * p.head_dim, bytes_per_elem)
    };
    (f(p.n_heads), f(p.n_kv_heads), f(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use decoding_engine::units::{human_bytes, thousands};

    /// A loaded model as a calculator preset: stories260K's config gives the published
    /// preset's shape (written by hand from its config) and its parameter count; an MQA
    /// and an MHA shape are named so.
    #[test]
    fn a_loaded_models_config_is_a_calculator_preset() {
        let m = decoding_engine::Model::from_memory(
            [
                (
                    "model.bin",
                    &std::fs::read(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../../assets/models/stories260K/stories260K.bin"
                    ))
                    .unwrap(),
                ),
                (
                    "tokenizer.bin",
                    &std::fs::read(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../../assets/models/stories260K/tok512.bin"
                    ))
                    .unwrap(),
                ),
            ],
            decoding_engine::budget::Budget::default(),
        )
        .unwrap();
        let p = Preset::of_config(m.config(), m.config().n_params());
        assert_eq!(
            Preset {
                name: "stories260K",
                ..p
            },
            PRESETS[0]
        );
        let mut c = *m.config();
        c.n_kv_heads = 1;
        assert_eq!(Preset::of_config(&c, 0).kind, "MQA");
        c.n_kv_heads = c.n_heads;
        assert_eq!(Preset::of_config(&c, 0).kind, "MHA");
    }

    /// The presets' parameter counts against the shapes: Llama-2-7B's equals the count
    /// from its config (`roofline::llama2_7b`, the engine's own tensor list), and the
    /// crossover by hand: 2 × 32 layers × 4,096 = 262,144 elements a position, so one
    /// sequence's cache outweighs the weights from 6,738,415,616 / 262,144 = 25,705.4 → n =
    /// 25,706, eight sequences' from 3,214.
    #[test]
    fn weights_against_the_cache_of_a_batch() {
        let l2 = PRESETS[2];
        assert_eq!(l2.name, "Llama-2-7B");
        assert_eq!(
            l2.params,
            decoding_engine::serving::roofline::llama2_7b().n_params()
        );
        let (w, kv, n1) = weights_and_kv(&l2, 4096, 2, 1);
        assert_eq!(w, 2 * 6_738_415_616);
        assert_eq!(kv, 2 * 4096 * 32 * 4096 * 2);
        assert_eq!(n1, 25_706);
        let (_, kv8, n8) = weights_and_kv(&l2, 4096, 2, 8);
        assert_eq!(kv8, 8 * kv);
        assert_eq!(n8, 3_214);
        // At the crossover the caches outweigh the weights; one position before, not.
        for (b, n) in [(1, n1), (8, n8)] {
            assert!(weights_and_kv(&l2, n, 2, b).1 > w);
            assert!(weights_and_kv(&l2, n - 1, 2, b).1 <= w);
        }
    }

    #[test]
    fn stories260k_cache_figures() {
        let p = &PRESETS[0];
        assert_eq!(cache_bytes_formula(1, p.layers, p.kv_dim(), 4), 1_280);
        assert_eq!(cache_bytes_formula(512, p.layers, p.kv_dim(), 4), 655_360);
        assert_eq!(mha_gqa_mqa(p, 512, 4), (1_310_720, 655_360, 163_840));
    }

    #[test]
    fn llama2_7b_at_4096_tokens_fp16_is_2_gib() {
        let p = PRESETS.iter().find(|p| p.name == "Llama-2-7B").unwrap();
        let (mha, gqa, _) = mha_gqa_mqa(p, 4096, 2);
        assert_eq!(gqa, 2 * 1024 * 1024 * 1024);
        assert_eq!(mha, gqa);
        assert_eq!(human_bytes(gqa), "2 GiB");
        let l3 = PRESETS.iter().find(|p| p.name == "Llama-3-8B").unwrap();
        assert_eq!(human_bytes(mha_gqa_mqa(l3, 8192, 2).1), "1 GiB");
    }

    #[test]
    fn number_formats() {
        assert_eq!(thousands(655_360), "655,360");
        assert_eq!(human_bytes(1_280), "1.25 KiB");
        assert_eq!(human_bytes(655_360), "640 KiB");
    }
}
