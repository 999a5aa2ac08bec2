//! A GGUF file's Llama model (`general.architecture = llama`) onto our `Checkpoint`: its
//! tensors in F32, F16 or BF16 (converted to f32), Q8_0 or Q4_0 throughout (kept: their
//! 32-weight blocks are our Q8 and Q4 groups, the scale f16 → f32 exactly), anything else —
//! the k-quants Q4_K/Q5_K/Q6_K, Q4_1, Q5_0, Q5_1, and the mixes of a Q4_K_M file —
//! decoded by ggml's rules (`ggml_blocks`) and held as our q8 in groups of 32 ([`Held`]);
//! llama.cpp keeps Q and K in the
//! interleaved-pair RoPE order of Meta's and llama2.c's weights (its converter permutes
//! Hugging Face's rotate-half order back), so no permutation is needed. The tokenizer comes
//! from the metadata (`tokenizer.ggml.model = llama`: SentencePiece pieces with "▁", scores)
//! as a llama2.c vocabulary. Anything else is an error that names it.

use super::gguf::{kind_of, Gguf, GgufError, Kind, TensorInfo, Value};
use crate::budget::{Budget, Footprint};
use crate::config::Config;
use crate::formats::llama2c::{Checkpoint, CheckpointError};
use crate::quant::{Activations, Precision, QTensor, Tensor};
use crate::tokenizer::Llama2cVocab;
use crate::weights::TransformerWeights;

/// Weights in a Q8_0 or Q4_0 block (ggml's QK8_0, QK4_0): our groups of 32.
const GGML_BLOCK: usize = 32;

/// How a file's matrices are held (one precision for all: the kernels take one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// float types only (F32, F16, BF16): float32
    F32,
    /// Q8_0 only, or Q4_0 only: the file's blocks, which are our q8 and q4 groups of 32
    Blocks,
    /// anything else (k-quants, Q4_1, Q5_0, Q5_1, or a mix, as in a Q4_K_M file): our q8 in
    /// groups of 32, converted at load from ggml's own dequantization (8 bits a weight
    /// where the file has 4.5–6.6: the page's memory and speed are q8's; the rounding it
    /// adds is measured against the file's own values in the tests)
    Q8,
}

impl Held {
    /// The model's memory with its weights held so (checked against the budget before any
    /// tensor is read): a Q4_K_M file of a 0.5 B model is 2 GB as float32, but ~0.56 GB
    /// as our q8 (1 byte a weight and a 4-byte scale a group of 32: 9/8 byte a weight).
    fn footprint(self, c: &Config) -> Result<Footprint, CheckpointError> {
        let mut f = Footprint::of(c).map_err(CheckpointError::from)?;
        let floats = f.weights / 4;
        f.weights = match self {
            Held::F32 => f.weights,
            Held::Q8 => floats / 8 * 9,
            // q8 or q4: at most q8's
            Held::Blocks => floats / 8 * 9,
        };
        Ok(f)
    }

    fn of(mut kinds: impl Iterator<Item = Kind> + Clone) -> Held {
        let float = |k: Kind| matches!(k, Kind::F32 | Kind::F16 | Kind::BF16);
        let first = kinds.clone().next();
        if kinds.clone().all(float) {
            Held::F32
        } else if matches!(first, Some(Kind::Q8_0 | Kind::Q4_0)) && kinds.all(|k| Some(k) == first)
        {
            Held::Blocks
        } else {
            Held::Q8
        }
    }
}

impl Gguf<'_> {
    /// The model's shape from the `llama.*` keys, validated like a llama2.c header.
    pub fn config(&self) -> Result<Config, GgufError> {
        let arch = self.string("general.architecture")?;
        if arch != "llama" {
            return Err(GgufError::Architecture(arch.into()));
        }
        let int = |key: &str| -> Result<i32, GgufError> {
            let v = self.uint(key)?;
            i32::try_from(v).map_err(|_| GgufError::Value {
                key: key.into(),
                why: format!("{v} is out of range"),
            })
        };
        let dim = int("llama.embedding_length")?;
        let heads = int("llama.attention.head_count")?;
        let kv_heads = match self.get("llama.attention.head_count_kv") {
            None => heads,
            Some(_) => int("llama.attention.head_count_kv")?,
        };
        let embd = self.tensor("token_embd.weight")?;
        let vocab = match self.get("llama.vocab_size") {
            Some(_) => int("llama.vocab_size")?,
            None => i32::try_from(embd.dims.get(1).copied().unwrap_or(0)).unwrap_or(i32::MAX),
        };
        let shared = self.tensor("output.weight").is_err();
        let header = [
            dim,
            int("llama.feed_forward_length")?,
            int("llama.block_count")?,
            heads,
            kv_heads,
            if shared { vocab } else { -vocab },
            int("llama.context_length")?,
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
            float("llama.rope.freq_base", Config::LLAMA2C_ROPE_THETA as f64)?,
            float(
                "llama.attention.layer_norm_rms_epsilon",
                Config::LLAMA2C_RMS_EPS as f64,
            )?,
        )?;
        if let Some(v) = self.get("llama.rope.dimension_count") {
            if v.as_u64() != Some(config.head_size() as u64) {
                return Err(GgufError::Unsupported(format!(
                    "llama.rope.dimension_count is {v:?}; only RoPE over the whole head ({}) is run",
                    config.head_size()
                )));
            }
        }
        Ok(config)
    }

    /// The weights as a checkpoint, its memory checked against `budget` first.
    pub fn checkpoint(&self, budget: Budget) -> Result<Checkpoint, GgufError> {
        let c = self.config()?;
        let infos = self.matrices(&c)?;
        let held = Held::of(infos.iter().flatten().map(|t| t.kind));
        held.footprint(&c)?
            .check(&c, budget)
            .map_err(CheckpointError::from)?;
        let (d, l) = (c.dim, c.n_layers);
        let mut tensors = infos.iter().map(|parts| self.matrix(parts, held));
        let mut next = || tensors.next().expect("one tensor per matrix");
        let norm = |short: &str| -> Result<Vec<f32>, GgufError> {
            let mut out = Vec::with_capacity(l * d);
            for i in 0..l {
                out.extend(self.vector(&format!("blk.{i}.{short}.weight"), d)?);
            }
            Ok(out)
        };
        let weights = TransformerWeights {
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
        };
        Ok(Checkpoint { config: c, weights })
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
        super::ggml_blocks::dequantize(t.kind, self.bytes_of(t), out);
        if let Some(i) = out.iter().position(|v| !v.is_finite()) {
            return Err(GgufError::Tensor {
                name: t.name.clone(),
                why: format!("a non-finite value ({}) at element {i}", out[i]),
            });
        }
        Ok(())
    }

    /// Layer matrices (or one) as one tensor of `parts.len()` blocks, held as `held` says.
    fn matrix(&self, parts: &[&TensorInfo], held: Held) -> Result<Tensor, GgufError> {
        let len = parts[0].elements() as usize;
        match held {
            Held::Blocks => Ok(Tensor::Quant(self.quantized(parts)?)),
            Held::F32 => {
                let mut out = vec![0.0f32; len * parts.len()];
                for (t, o) in parts.iter().zip(out.chunks_mut(len)) {
                    self.floats_into(t, o)?;
                }
                Ok(Tensor::F32(out.into()))
            }
            Held::Q8 => {
                // Q8_0 parts as they are (their blocks are our groups); every other part
                // dequantized by ggml's rules and quantized to q8 in groups of 32.
                let mut q = QTensor::quantize(&[], 0, Precision::Q8, GGML_BLOCK);
                let mut values = vec![0.0f32; len];
                for t in parts {
                    let part = match t.kind {
                        Kind::Q8_0 => self.quantized(&[t])?,
                        _ => {
                            self.floats_into(t, &mut values)?;
                            QTensor::quantize(&values, 1, Precision::Q8, GGML_BLOCK)
                        }
                    };
                    q.values.extend_from_slice(&part.values);
                    q.scales.extend_from_slice(&part.scales);
                }
                (q.blocks, q.block_len) = (parts.len(), len);
                Ok(Tensor::Quant(q))
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
            for (g, block) in self.bytes_of(t).chunks_exact(2 + value_bytes).enumerate() {
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

    /// The tokenizer in the metadata as a llama2.c vocabulary (SentencePiece's "▁" as a
    /// space), with its BOS and EOS ids.
    pub fn vocab(&self) -> Result<(Llama2cVocab, u32, u32), GgufError> {
        let model = self.string("tokenizer.ggml.model")?;
        if model != "llama" {
            return Err(GgufError::Unsupported(format!(
                "tokenizer.ggml.model is {model:?}; only \"llama\" (SentencePiece) vocabularies are read from GGUF so far"
            )));
        }
        let array = |key: &str| match self.need(key)? {
            Value::Array(a) => Ok(a),
            v => Err(GgufError::Value {
                key: key.into(),
                why: format!("{} is not an array", kind_of(v)),
            }),
        };
        let tokens = array("tokenizer.ggml.tokens")?;
        let scores = array("tokenizer.ggml.scores")?;
        if scores.len() != tokens.len() {
            return Err(GgufError::Value {
                key: "tokenizer.ggml.scores".into(),
                why: format!("{} scores for {} tokens", scores.len(), tokens.len()),
            });
        }
        let mut pieces = Vec::with_capacity(tokens.len());
        let mut score = Vec::with_capacity(tokens.len());
        for (i, (t, s)) in tokens.iter().zip(scores).enumerate() {
            let (Value::Str(t), Some(s)) = (t, s.as_f64()) else {
                return Err(GgufError::Value {
                    key: "tokenizer.ggml.tokens".into(),
                    why: format!("entry {i} is not a string with a numeric score"),
                });
            };
            pieces.push(t.replace('\u{2581}', " "));
            score.push(s as f32);
        }
        let id = |key: &str, default: u32| -> Result<u32, GgufError> {
            match self.get(key) {
                None => Ok(default),
                Some(_) => {
                    let v = self.uint(key)?;
                    u32::try_from(v)
                        .ok()
                        .filter(|&v| (v as usize) < pieces.len())
                        .ok_or_else(|| GgufError::Value {
                            key: key.into(),
                            why: format!("{v} is not a token id (vocabulary of {})", pieces.len()),
                        })
                }
            }
        };
        let (bos, eos) = (
            id("tokenizer.ggml.bos_token_id", 1)?,
            id("tokenizer.ggml.eos_token_id", 2)?,
        );
        let max_token_length = pieces.iter().map(|p| p.len()).max().unwrap_or(1).max(1) as u32;
        Ok((
            Llama2cVocab {
                max_token_length,
                pieces,
                scores: score,
            },
            bos,
            eos,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 0.5 B model's shape (Qwen2.5-0.5B's sizes on the Llama layout): as float32 it is
    /// over the page's 1.5 GiB; held as our q8, as a Q4_K_M file of it is, it fits.
    #[test]
    fn the_budget_counts_the_weights_as_they_will_be_held() {
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
        let f32 = Held::F32.footprint(&c).unwrap();
        assert!(f32.weights > 1_900_000_000, "{}", f32.weights);
        assert!(f32.check(&c, page).is_err());
        let q8 = Held::Q8.footprint(&c).unwrap();
        assert_eq!(q8.weights, f32.weights / 4 / 8 * 9);
        assert!(q8.check(&c, page).is_ok(), "{q8:?}");
        assert_eq!(
            Held::of([Kind::Q4_K, Kind::Q6_K, Kind::F32].into_iter()),
            Held::Q8
        );
        assert_eq!(Held::of([Kind::F16, Kind::BF16].into_iter()), Held::F32);
        assert_eq!(Held::of([Kind::Q4_0, Kind::Q4_0].into_iter()), Held::Blocks);
        assert_eq!(Held::of([Kind::Q4_0, Kind::Q8_0].into_iter()), Held::Q8);
    }
}
