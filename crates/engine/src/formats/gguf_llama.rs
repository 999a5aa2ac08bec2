//! A GGUF file's Llama model (`general.architecture = llama`, or `qwen2`: a Llama with
//! Q/K/V biases) onto our `Checkpoint`: its tensors in F32, F16 or BF16 (converted to f32),
//! Q8_0 or Q4_0 throughout (kept: their 32-weight blocks are our Q8 and Q4 groups, the
//! scale f16 → f32 exactly), anything else — the k-quants Q4_K/Q5_K/Q6_K, Q4_1, Q5_0, Q5_1,
//! and the mixes of a Q4_K_M file — decoded by ggml's rules (`ggml_blocks`) and held as our
//! q8 in groups of 32 ([`Held`]).
//!
//! RoPE order: a `llama` file keeps Q and K in the interleaved-pair order of Meta's and
//! llama2.c's weights (convert_hf_to_gguf.py permutes Hugging Face's rotate-half order
//! back; llama.cpp's LLAMA_ROPE_TYPE_NORM), so they are read as they are. A `qwen2` file
//! keeps Hugging Face's order (llama.cpp runs it with LLAMA_ROPE_TYPE_NEOX), so its Q and K
//! rows, and their biases, are permuted to the interleaved order at load
//! ([`interleave_heads`]). Llama 3's RoPE factors come from `rope_freqs.weight`. The
//! tokenizer is read by `gguf_vocab`. Anything else is an error that names it.

use super::gguf::{kind_of, Gguf, GgufError, TensorInfo};
use crate::budget::{Budget, Footprint};
use crate::config::Config;
use crate::formats::llama2c::CheckpointError;
use crate::quant::ggml::Kind;
use crate::quant::ggml::{self, GPart, GTensor};
use crate::quant::{Activations, Precision, QTensor, Tensor};
use crate::weights::Checkpoint;
use crate::weights::TransformerWeights;

/// Weights in a Q8_0 or Q4_0 block (ggml's QK8_0, QK4_0): our groups of 32.
const GGML_BLOCK: usize = 32;

/// How one matrix (its layers' tensors) is held: in its file's types, each as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// float types only (F32, F16, BF16): float32
    F32,
    /// Q8_0 only, or Q4_0 only: the file's blocks, which are our q8 and q4 groups of 32
    /// (the scale f16 → f32 exactly; their kernels tile prefill)
    Blocks,
    /// anything else (k-quants, Q4_1, Q5_0, Q5_1, or a mix across layers, as a Q4_K_M
    /// file's `ffn_down`): the file's blocks as they are (`quant::ggml`)
    Ggml,
}

impl Held {
    fn of(parts: &[&TensorInfo]) -> Held {
        let float = |k: Kind| matches!(k, Kind::F32 | Kind::F16 | Kind::BF16);
        let first = parts.first().map(|t| t.kind);
        if parts.iter().all(|t| float(t.kind)) {
            Held::F32
        } else if matches!(first, Some(Kind::Q8_0 | Kind::Q4_0))
            && parts.iter().all(|t| Some(t.kind) == first)
        {
            Held::Blocks
        } else {
            Held::Ggml
        }
    }

    /// Bytes the matrix takes held so: float32 4 a weight, our q8 9/8 (a byte and a
    /// float32 scale a group of 32), q4 5/8, ggml blocks the file's bytes.
    fn bytes(self, parts: &[&TensorInfo]) -> u64 {
        let weights: u64 = parts.iter().map(|t| t.elements()).sum();
        match self {
            Held::F32 => 4 * weights,
            Held::Blocks if parts[0].kind == Kind::Q8_0 => weights / 8 * 9,
            Held::Blocks => weights / 8 * 5,
            Held::Ggml => parts.iter().map(|t| t.bytes).sum(),
        }
    }
}

/// The model's memory with each matrix held as [`Held`] says (checked against the budget
/// before any tensor is read): a Q4_K_M file of a 0.5 B model is 2 GB as float32, its own
/// ~0.4 GB as its blocks.
fn footprint(c: &Config, mats: &[Vec<&TensorInfo>]) -> Result<Footprint, CheckpointError> {
    let mut f = Footprint::of(c).map_err(CheckpointError::from)?;
    let floats: u64 = mats.iter().flatten().map(|t| t.elements()).sum();
    let held: u64 = mats.iter().map(|m| Held::of(m).bytes(m)).sum();
    // the norms, biases and RoPE factors stay float32
    f.weights = f.weights.saturating_sub(4 * floats) + held;
    Ok(f)
}

impl Gguf<'_> {
    /// `general.architecture`, when this reader runs it: `llama` or `qwen2` (whose keys
    /// are the same under its own prefix).
    pub fn architecture(&self) -> Result<&str, GgufError> {
        match self.string("general.architecture")? {
            a @ ("llama" | "qwen2") => Ok(a),
            a => Err(GgufError::Architecture(a.into())),
        }
    }

    /// `<arch>.context_length`: the context the model was trained at (it runs at
    /// [`crate::config::MAX_RUN_CONTEXT`] at most).
    pub fn context_length(&self) -> Result<u64, GgufError> {
        self.uint(&format!("{}.context_length", self.architecture()?))
    }

    /// The model's shape from the `<arch>.*` keys, validated like a llama2.c header; the
    /// context at most [`crate::config::MAX_RUN_CONTEXT`].
    pub fn config(&self) -> Result<Config, GgufError> {
        let arch = self.architecture()?;
        let key = |k: &str| format!("{arch}.{k}");
        let int = |key: &str| -> Result<i32, GgufError> {
            let v = self.uint(key)?;
            i32::try_from(v).map_err(|_| GgufError::Value {
                key: key.into(),
                why: format!("{v} is out of range"),
            })
        };
        let dim = int(&key("embedding_length"))?;
        let heads = int(&key("attention.head_count"))?;
        let kv_heads = match self.get(&key("attention.head_count_kv")) {
            None => heads,
            Some(_) => int(&key("attention.head_count_kv"))?,
        };
        let embd = self.tensor("token_embd.weight")?;
        let vocab = match self.get(&key("vocab_size")) {
            Some(_) => int(&key("vocab_size"))?,
            None => i32::try_from(embd.dims.get(1).copied().unwrap_or(0)).unwrap_or(i32::MAX),
        };
        let shared = self.tensor("output.weight").is_err();
        let header = [
            dim,
            int(&key("feed_forward_length"))?,
            int(&key("block_count"))?,
            heads,
            kv_heads,
            if shared { vocab } else { -vocab },
            int(&key("context_length"))?.min(crate::config::MAX_RUN_CONTEXT),
        ];
        let config = Config::from_header(header)?;
        // RoPE base and RMSNorm ε from the metadata (llama2.c's when absent:
        // 10,000, as llama.cpp defaults `rope.freq_base`, and 1e-5).
        let float = |key: &str, default: f64| -> Result<f64, GgufError> {
            match self.get(key) {
                None => Ok(default),
                Some(v) => v.as_f64().ok_or_else(|| GgufError::Value {
                    key: key.into(),
                    why: format!("{} is not a number", kind_of(v)),
                }),
            }
        };
        let config = config.with_norms(
            float(&key("rope.freq_base"), Config::LLAMA2C_ROPE_THETA as f64)?,
            float(
                &key("attention.layer_norm_rms_epsilon"),
                Config::LLAMA2C_RMS_EPS as f64,
            )?,
        )?;
        // Linear, YaRN and LongRoPE scaling (convert_hf_to_gguf.py writes their type; Llama
        // 3's is `rope_freqs.weight` with no type, or "none") change every frequency: refused.
        if self.get(&key("rope.scaling.type")).is_some() {
            let t = self.string(&key("rope.scaling.type"))?;
            if t != "none" {
                return Err(GgufError::Unsupported(format!(
                    "{arch}.rope.scaling.type is {t:?}; this engine runs plain RoPE and Llama 3's factors (rope_freqs.weight) only"
                )));
            }
        }
        // A scale with no type is linear to llama.cpp; so is the older `rope.scale_linear`.
        for k in [key("rope.scaling.factor"), key("rope.scale_linear")] {
            if let Some(v) = self.get(&k) {
                let f = v.as_f64().unwrap_or(f64::NAN);
                if f != 0.0 && f != 1.0 {
                    return Err(GgufError::Unsupported(format!(
                        "{k} is {f}; this engine runs unscaled RoPE and Llama 3's factors (rope_freqs.weight) only"
                    )));
                }
            }
        }
        if let Some(v) = self.get(&key("rope.dimension_count")) {
            if v.as_u64() != Some(config.head_size() as u64) {
                return Err(GgufError::Unsupported(format!(
                    "{arch}.rope.dimension_count is {v:?}; only RoPE over the whole head ({}) is run",
                    config.head_size()
                )));
            }
        }
        Ok(config)
    }

    /// The weights as a checkpoint, its memory checked against `budget` first.
    pub fn checkpoint(&self, budget: Budget) -> Result<Checkpoint, GgufError> {
        let (c, infos) = self.plan(budget)?;
        let (d, l) = (c.dim, c.n_layers);
        let mut tensors = infos.iter().map(|parts| self.matrix(parts));
        let mut next = || tensors.next().expect("one tensor per matrix");
        let norm = |short: &str| -> Result<Vec<f32>, GgufError> {
            let mut out = Vec::with_capacity(l * d);
            for i in 0..l {
                out.extend(self.vector(&format!("blk.{i}.{short}.weight"), d)?);
            }
            Ok(out)
        };
        let mut weights = TransformerWeights {
            token_embedding: next()?,
            rms_att: norm("attn_norm")?,
            wq: next()?,
            wk: next()?,
            wv: next()?,
            wo: next()?,
            rms_ffn: norm("ffn_norm")?,
            w1: next()?,
            w2: next()?,
            w3: next()?,
            rms_final: self.vector("output_norm.weight", d)?,
            wcls: if c.shared_classifier {
                None
            } else {
                Some(next()?)
            },
            qkv_bias: self.qkv_bias(&c)?,
            rope_factors: self.rope_factors(&c)?,
        };
        if self.architecture()? == "qwen2" {
            let (h, kv, hs) = (c.n_heads, c.n_kv_heads, c.head_size());
            let l = c.n_layers;
            weights.wq = super::rope_order::interleave_heads(weights.wq, l, h, hs)?;
            weights.wk = super::rope_order::interleave_heads(weights.wk, l, kv, hs)?;
            if let Some(b) = weights.qkv_bias.as_mut() {
                for layer in b.chunks_exact_mut(c.dim + 2 * c.kv_dim()) {
                    let (q, k) = layer.split_at_mut(c.dim);
                    let k = &mut k[..c.kv_dim()];
                    q.copy_from_slice(&crate::formats::hf::unpermute(q, h, hs, 1));
                    k.copy_from_slice(&crate::formats::hf::unpermute(k, kv, hs, 1));
                }
            }
        }
        Ok(Checkpoint { config: c, weights })
    }

    /// The model's shape, its matrices' tensors and how they will be held, the memory that
    /// takes checked against `budget`: all from the header, metadata and tensor table.
    fn plan(&self, budget: Budget) -> Result<(Config, Vec<Vec<&TensorInfo>>), GgufError> {
        let c = self.config()?;
        self.only_known_tensors(&c)?;
        let infos = self.matrices(&c)?;
        footprint(&c, &infos)?
            .check(&c, budget)
            .map_err(CheckpointError::from)?;
        Ok((c, infos))
    }

    /// Every tensor is one this engine runs: a tensor it would not read (Wo's bias, a K bias
    /// without Q's, another architecture's) is refused by name, not left out unsaid.
    fn only_known_tensors(&self, c: &Config) -> Result<(), GgufError> {
        const TOP: [&str; 4] = [
            "token_embd.weight",
            "output_norm.weight",
            "output.weight",
            "rope_freqs.weight",
        ];
        const LAYER: [&str; 9] = [
            "attn_norm",
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "ffn_norm",
            "ffn_gate",
            "ffn_down",
            "ffn_up",
        ];
        let biased = self.tensor("blk.0.attn_q.bias").is_ok();
        let known = |name: &str| {
            if TOP.contains(&name) {
                return true;
            }
            let Some((l, rest)) = name.strip_prefix("blk.").and_then(|r| r.split_once('.')) else {
                return false;
            };
            let layer = l.parse::<usize>().is_ok_and(|l| l < c.n_layers);
            let part = match rest.rsplit_once('.') {
                Some((p, "weight")) => LAYER.contains(&p),
                Some((p, "bias")) => biased && ["attn_q", "attn_k", "attn_v"].contains(&p),
                _ => false,
            };
            layer && part
        };
        match self.tensors.iter().find(|t| !known(&t.name)) {
            None => Ok(()),
            Some(t) => Err(GgufError::Tensor {
                name: t.name.clone(),
                why: "this engine's Llama/Qwen2 has no such tensor, and would run without it"
                    .into(),
            }),
        }
    }

    /// What can be checked before the tensors' data is read (the page reads a file's first
    /// megabytes, `Gguf::parse_head`): the architecture, the shape, every tensor's type and
    /// shape, the memory against `budget`, the vocabulary's kind and BPE split.
    pub fn check(&self, budget: Budget) -> Result<(), GgufError> {
        self.plan(budget)?;
        if let super::gguf_vocab::GgufVocab::Bpe(b) = self.vocab()? {
            if !crate::tokenizer::PRE_TOKENIZERS
                .iter()
                .any(|(n, _)| *n == b.pre)
            {
                let e = crate::tokenizer::TokenizerError::UnknownPreTokenizer(b.pre);
                return Err(GgufError::Unsupported(e.to_string()));
            }
        }
        Ok(())
    }

    /// The tensors of each matrix (one a layer for the layers' matrices), in
    /// `TransformerWeights`' order, each checked against the shape the model's keys imply.
    fn matrices(&self, c: &Config) -> Result<Vec<Vec<&TensorInfo>>, GgufError> {
        let (d, h, kv, v, l) = (c.dim, c.hidden_dim, c.kv_dim(), c.vocab_size, c.n_layers);
        // (tensor, shape innermost first) of each matrix, llama2.c's (rows, columns) reversed.
        let layer = |short: &str, rows: usize, cols: usize| {
            (0..l)
                .map(|i| {
                    (
                        format!("blk.{i}.{short}.weight"),
                        [cols as u64, rows as u64],
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut mats = vec![vec![(
            "token_embd.weight".to_string(),
            [d as u64, v as u64],
        )]];
        for (short, rows, cols) in [
            ("attn_q", d, d),
            ("attn_k", kv, d),
            ("attn_v", kv, d),
            ("attn_output", d, d),
            ("ffn_gate", h, d),
            ("ffn_down", d, h),
            ("ffn_up", h, d),
        ] {
            mats.push(layer(short, rows, cols));
        }
        if !c.shared_classifier {
            mats.push(vec![("output.weight".to_string(), [d as u64, v as u64])]);
        }
        mats.iter()
            .map(|parts| {
                parts
                    .iter()
                    .map(|(name, shape)| {
                        let t = self.tensor(name)?;
                        if t.dims != shape {
                            return Err(GgufError::Tensor {
                                name: name.clone(),
                                why: format!(
                                    "shape {:?}, the model's keys imply {shape:?}",
                                    t.dims
                                ),
                            });
                        }
                        Ok(t)
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()
    }

    /// Every layer's [bq; bk; bv] where the file has `blk.0.attn_q.bias` (Qwen2 always;
    /// llama.cpp reads them for `llama` too, where present), all three in every layer.
    fn qkv_bias(&self, c: &Config) -> Result<Option<Vec<f32>>, GgufError> {
        if self.tensor("blk.0.attn_q.bias").is_err() {
            return Ok(None);
        }
        let (d, kv) = (c.dim, c.kv_dim());
        let mut out = Vec::with_capacity(c.n_layers * (d + 2 * kv));
        for i in 0..c.n_layers {
            for (short, n) in [("attn_q", d), ("attn_k", kv), ("attn_v", kv)] {
                out.extend(self.vector(&format!("blk.{i}.{short}.bias"), n)?);
            }
        }
        Ok(Some(out))
    }

    /// `rope_freqs.weight` where the file has it (Llama 3's RoPE): head_size/2 factors,
    /// each finite and positive.
    fn rope_factors(&self, c: &Config) -> Result<Option<Vec<f32>>, GgufError> {
        const NAME: &str = "rope_freqs.weight";
        if self.tensor(NAME).is_err() {
            return Ok(None);
        }
        let f = self.vector(NAME, c.head_size() / 2)?;
        // Llama 3's are 1 to 8; a factor near 0 would make a frequency infinite.
        if let Some(i) = f.iter().position(|&x| !(1e-3..=1e6).contains(&x)) {
            return Err(GgufError::Tensor {
                name: NAME.into(),
                why: format!(
                    "factor {i} is {}; RoPE factors must be in [0.001, 1e6]",
                    f[i]
                ),
            });
        }
        Ok(Some(f))
    }

    /// A 1-D float tensor of `n` values.
    fn vector(&self, name: &str, n: usize) -> Result<Vec<f32>, GgufError> {
        let t = self.tensor(name)?;
        if t.dims != [n as u64] {
            return Err(GgufError::Tensor {
                name: name.into(),
                why: format!("shape {:?}, the model's keys imply [{n}]", t.dims),
            });
        }
        let mut out = vec![0.0f32; n];
        self.floats_into(t, &mut out)?;
        Ok(out)
    }

    /// A tensor's values as float32: ggml's own dequantization of its blocks.
    fn floats_into(&self, t: &TensorInfo, out: &mut [f32]) -> Result<(), GgufError> {
        crate::quant::ggml::blocks::dequantize(t.kind, &self.bytes_of(t)?, out);
        if let Some(i) = out.iter().position(|v| !v.is_finite()) {
            return Err(GgufError::Tensor {
                name: t.name.clone(),
                why: format!("a non-finite value ({}) at element {i}", out[i]),
            });
        }
        Ok(())
    }

    /// Layer matrices (or one) as one tensor of `parts.len()` blocks, held as [`Held`] says.
    fn matrix(&self, parts: &[&TensorInfo]) -> Result<Tensor, GgufError> {
        let len = parts[0].elements() as usize;
        match Held::of(parts) {
            Held::Blocks => Ok(Tensor::Quant(self.quantized(parts)?)),
            Held::F32 => {
                let mut out = vec![0.0f32; len * parts.len()];
                for (t, o) in parts.iter().zip(out.chunks_mut(len)) {
                    self.floats_into(t, o)?;
                }
                Ok(Tensor::F32(out.into()))
            }
            Held::Ggml => {
                let parts = parts
                    .iter()
                    .map(|t| {
                        let bytes = self.bytes_of(t)?.into_owned();
                        if let Err(why) = ggml::blocks::check(t.kind, &bytes) {
                            return Err(GgufError::Tensor {
                                name: t.name.clone(),
                                why,
                            });
                        }
                        Ok(GPart {
                            kind: t.kind,
                            bytes,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Tensor::Ggml(GTensor {
                    parts,
                    block_len: len,
                    activations: Activations::default(),
                }))
            }
        }
    }

    /// Q8_0 / Q4_0 blocks (an f16 scale, then 32 int8 or 16 bytes of nibbles) as our
    /// groups of 32: the same integers, the scale widened to f32.
    fn quantized(&self, parts: &[&TensorInfo]) -> Result<QTensor, GgufError> {
        let kind = parts[0].kind;
        let (precision, value_bytes) = match kind {
            Kind::Q8_0 => (Precision::Q8, 32),
            _ => (Precision::Q4, 16),
        };
        let block_len = parts[0].elements() as usize;
        let mut q = QTensor {
            precision,
            group: GGML_BLOCK,
            blocks: parts.len(),
            block_len,
            values: Vec::new(),
            scales: Vec::new(),
            activations: Activations::default(),
        };
        let (vb, ng) = (q.block_value_bytes(), q.groups_per_block());
        q.values = vec![0u8; parts.len() * vb];
        q.scales = Vec::with_capacity(parts.len() * ng);
        for (t, values) in parts.iter().zip(q.values.chunks_mut(vb)) {
            for (g, block) in self.bytes_of(t)?.chunks_exact(2 + value_bytes).enumerate() {
                let d = half::f16::from_le_bytes([block[0], block[1]]).to_f32();
                if !d.is_finite() {
                    return Err(GgufError::Tensor {
                        name: t.name.clone(),
                        why: format!("block {g}'s scale is {d}"),
                    });
                }
                q.scales.push(d);
                values[g * value_bytes..(g + 1) * value_bytes].copy_from_slice(&block[2..]);
            }
        }
        Ok(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(kind: Kind, dims: [u64; 2]) -> TensorInfo {
        let (per, size) = kind.block();
        TensorInfo {
            name: "t".into(),
            dims: dims.to_vec(),
            kind,
            offset: 0,
            bytes: dims[0] * dims[1] / per * size,
        }
    }

    /// A 0.5 B model's shape (Qwen2.5-0.5B's sizes on the Llama layout): as float32 it is
    /// over the page's 1.5 GiB; in a Q4_K_M file's own blocks it takes the file's bytes.
    #[test]
    fn the_budget_counts_each_matrix_as_it_will_be_held() {
        let c = Config {
            dim: 896,
            hidden_dim: 4864,
            n_layers: 24,
            n_heads: 14,
            n_kv_heads: 2,
            vocab_size: 151_936,
            seq_len: 512,
            shared_classifier: true,
            rope_theta: 1_000_000.0,
            rms_eps: 1e-6,
        };
        let page = Budget(3 << 29);
        let all = Footprint::of(&c).unwrap();
        assert!(all.weights > 1_900_000_000, "{}", all.weights);
        assert!(all.check(&c, page).is_err());
        // embedding Q6_K; every layer's matrices Q4_K but ffn_down, Q6_K in half the layers
        let (d, h, kv, l) = (896, 4864, 128, 24);
        let emb = info(Kind::Q6_K, [d, 151_936]);
        let (q, k) = (info(Kind::Q4_K, [d, d]), info(Kind::Q4_K, [d, kv]));
        let (up, down4, down6) = (
            info(Kind::Q4_K, [d, h]),
            info(Kind::Q4_K, [h, d]),
            info(Kind::Q6_K, [h, d]),
        );
        let layers = |t: &TensorInfo| vec![t.clone(); l];
        let down: Vec<TensorInfo> = (0..l).map(|i| [&down4, &down6][i % 2].clone()).collect();
        let owned = [vec![emb], layers(&q), layers(&k), layers(&k), layers(&q)];
        let owned = owned.into_iter().chain([layers(&up), down, layers(&up)]);
        let owned: Vec<Vec<TensorInfo>> = owned.collect();
        let mats: Vec<Vec<&TensorInfo>> = owned.iter().map(|m| m.iter().collect()).collect();
        let file: u64 = owned.iter().flatten().map(|t| t.bytes).sum();
        let f = footprint(&c, &mats).unwrap();
        // the norms, and the RoPE table (seq_len × head_size) llama2.c's files carry
        let floats = 4 * (2 * l as u64 * d + d) + 4 * 512 * 64;
        assert_eq!(f.weights, file + floats);
        assert!(f.check(&c, page).is_ok(), "{f:?}");
        assert_eq!(Held::of(&mats[7]), Held::Ggml);
        let t = |k| info(k, [32, 32]);
        let (f16, bf16, q4, q8) = (t(Kind::F16), t(Kind::BF16), t(Kind::Q4_0), t(Kind::Q8_0));
        assert_eq!(Held::of(&[&f16, &bf16]), Held::F32);
        assert_eq!(Held::of(&[&q4, &q4]), Held::Blocks);
        assert_eq!(Held::of(&[&q4, &q8]), Held::Ggml);
        assert_eq!(Held::Blocks.bytes(&[&q8]), 32 * 32 * 9 / 8);
    }
}
