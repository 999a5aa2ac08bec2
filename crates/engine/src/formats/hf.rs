//! Hugging Face Llama checkpoints (`LlamaForCausalLM`, and `Qwen2ForCausalLM`: a Llama
//! with Q/K/V biases, `modeling_qwen2.py`): `config.json` (transformers' `LlamaConfig` /
//! `Qwen2Config`), `model.safetensors` (read with the `safetensors` crate, the format's own
//! reader) and `tokenizer.json` (read by `tokenizers`, in `Tokenizer::from_hf_json`).
//!
//! The weights map onto our [`Checkpoint`] one tensor each (torch's `(out, in)` is
//! llama2.c's `(rows, columns)`), F32, F16 and BF16 converted to f32 on load (`--precision`
//! quantizes them afterwards). Hugging Face stores Q and K for the rotate-half RoPE
//! (`rotate_half` in `modeling_llama.py` pairs element i with i + head_size/2), llama2.c
//! for interleaved pairs (2j, 2j+1); transformers' `convert_llama_weights_to_hf.py` turns
//! Meta's order into Hugging Face's with
//! `w.view(n_heads, head_size/2, 2, dim).transpose(1, 2)`, so HF row `k·head_size/2 + j`
//! of a head is Meta row `2j + k`; [`unpermute`] undoes it (docs/REFERENCES.md, "Models people
//! have").
//!
//! `config.json` is read by `hf_config.rs` (transformers 4's keys and 5's): every key the
//! shape needs must be in it; the ones `LlamaConfig` defaults take its defaults
//! (`num_key_value_heads` = heads, `rms_norm_eps` 1e-6, `rope_theta` 10,000,
//! `tie_word_embeddings` false). Llama 3's RoPE scaling becomes RoPE factors
//! ([`crate::config::Llama3Rope`]). What this engine does not run (another RoPE scaling, a
//! Llama's biases, another activation, a sliding window, a head size other than
//! hidden/heads) is refused by name.

use crate::budget::{Budget, Footprint};
use crate::config::Config;
use crate::formats::llama2c::CheckpointError;
use crate::formats::source::{read_full, ByteSource};
use crate::quant::Tensor;
use crate::weights::Checkpoint;
use crate::weights::TransformerWeights;
use safetensors::tensor::{Dtype, Metadata};
use std::cell::RefCell;
use thiserror::Error;

/// The most a `config.json` may be (real ones are a few KB).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;
/// The most a safetensors header (its JSON tensor table) may be: a Llama of 80 layers
/// lists 723 tensors in about 100 KB. The `safetensors` crate's own limit is 100 MB.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;

/// What can go wrong reading a Hugging Face checkpoint.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum HfError {
    #[error("config.json is {bytes} bytes; a model's config is at most {limit}")]
    ConfigTooLarge { bytes: u64, limit: usize },
    #[error("config.json is not JSON: {0}")]
    ConfigJson(String),
    #[error("config.json lacks {0:?}")]
    Missing(&'static str),
    #[error("config.json's {key:?} is {value}; {why}")]
    Value {
        key: String,
        value: String,
        why: String,
    },
    #[error("config.json describes {0}; LlamaForCausalLM and Qwen2ForCausalLM (model_type \"llama\", \"qwen2\") are read")]
    Architecture(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("not a safetensors file: {0}")]
    NotSafetensors(String),
    #[error(
        "the safetensors header is {bytes} bytes, over the {limit} a model's tensor table needs"
    )]
    HeaderTooLarge { bytes: u64, limit: u64 },
    #[error("safetensors: {0}")]
    Safetensors(String),
    #[error("the safetensors file lacks tensor {0:?}")]
    MissingTensor(String),
    #[error("tensor {name:?}: {why}")]
    Tensor { name: String, why: String },
    #[error("tensor {name:?} has dtype {dtype}, which this reader does not load (F32, F16 and BF16 are)")]
    Dtype { name: String, dtype: String },
    #[error("the safetensors file is {bytes} bytes, over the memory budget of {limit} bytes (its weights are held at no less than that)")]
    TooLarge { bytes: u64, limit: u64 },
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// Whether `head` (a file's first 10 bytes) looks like safetensors: a little-endian u64
/// header length under 2^48, then the header's JSON object, `{"` (or `{` and white space).
/// A llama2.c header cannot: its third field (n_layers) would have to be 123 + 256 · c
/// with c a quote or white space, over its limit of 1,024 layers.
pub fn is_safetensors(head: &[u8]) -> bool {
    head.len() >= 10
        && head[6] == 0
        && head[7] == 0
        && head[8] == b'{'
        && matches!(head[9], b'"' | b' ' | b'\n' | b'\r' | b'\t')
}

/// What `config.json` says, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct HfConfig {
    pub config: Config,
    /// `bos_token_id`, `eos_token_id` (the first when a list), when given.
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    /// `architectures[0]`, or the one `model_type` names.
    pub architecture: String,
    /// The hub name it was saved from (`_name_or_path`, e.g. "HuggingFaceTB/SmolLM2-135M").
    pub name: Option<String>,
    /// Q, K and V have biases (Qwen2).
    pub qkv_bias: bool,
    /// Llama 3's RoPE factors, from `rope_scaling`.
    pub rope_factors: Option<Vec<f32>>,
    /// `max_position_embeddings` as the file says (the model runs at
    /// [`crate::config::MAX_RUN_CONTEXT`] at most).
    pub trained_context: u64,
}

/// Hugging Face's rotate-half rows of Q or K (`heads` heads of `head_size` rows of `cols`)
/// back to Meta's interleaved pairs: Meta row `2j + k` of a head is HF row
/// `k·head_size/2 + j` (the inverse of `convert_llama_weights_to_hf.py`'s `permute`).
pub fn unpermute(w: &[f32], heads: usize, head_size: usize, cols: usize) -> Vec<f32> {
    let half = head_size / 2;
    let mut out = vec![0.0f32; w.len()];
    for h in 0..heads {
        for j in 0..half {
            for k in 0..2 {
                let src = (h * head_size + k * half + j) * cols;
                let dst = (h * head_size + 2 * j + k) * cols;
                out[dst..dst + cols].copy_from_slice(&w[src..src + cols]);
            }
        }
    }
    out
}

/// A safetensors file: its header parsed, its tensors left in the file and read one at a
/// time as each is converted (read whole first, a file peaked at twice its size: issue 51).
pub struct Weights<'a> {
    meta: Metadata,
    file: RefCell<Box<dyn ByteSource + 'a>>,
    /// The data's first byte (after the 8-byte length and the header).
    start: u64,
}

impl<'a> Weights<'a> {
    /// A file in memory ([`Weights::read_from`]).
    pub fn parse(bytes: &'a [u8]) -> Result<Weights<'a>, HfError> {
        Weights::read(Box::new(bytes))
    }

    /// Reads the header (its length bounded first) and parses it with the `safetensors`
    /// crate's `Metadata`, which checks every dtype, shape and offset (each tensor's bytes
    /// its shape's, the tensors back to back); the data must end where the file does.
    pub fn read_from(file: &'a mut dyn ByteSource) -> Result<Weights<'a>, HfError> {
        Weights::read(Box::new(file))
    }

    fn read(mut file: Box<dyn ByteSource + 'a>) -> Result<Weights<'a>, HfError> {
        let len = file.len();
        let io = |e: std::io::Error| HfError::Safetensors(e.to_string());
        let mut n = [0; 8];
        if read_full(&mut *file, 0, &mut n).map_err(io)? < 8 {
            return Err(HfError::NotSafetensors(format!(
                "{len} bytes, shorter than the 8-byte header length"
            )));
        }
        let n = u64::from_le_bytes(n);
        if n > MAX_HEADER_BYTES {
            return Err(HfError::HeaderTooLarge {
                bytes: n,
                limit: MAX_HEADER_BYTES,
            });
        }
        if 8 + n > len {
            return Err(HfError::NotSafetensors(
                "the header length runs past the file".into(),
            ));
        }
        let mut header = vec![0; n as usize];
        read_full(&mut *file, 8, &mut header).map_err(io)?;
        if header.first() != Some(&b'{') {
            return Err(HfError::NotSafetensors(
                "the header after its length is not a JSON object".into(),
            ));
        }
        let meta: Metadata =
            serde_json::from_slice(&header).map_err(|e| HfError::Safetensors(e.to_string()))?;
        let data = len - 8 - n;
        if meta.data_len() as u64 != data {
            return Err(HfError::Safetensors(format!(
                "the header's tensors take {} bytes, the file holds {data} after it",
                meta.data_len()
            )));
        }
        Ok(Weights {
            meta,
            file: RefCell::new(file),
            start: 8 + n,
        })
    }

    /// One tensor of `shape` (torch's order, outermost first) as f32.
    fn floats(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, HfError> {
        let t = self
            .meta
            .info(name)
            .ok_or_else(|| HfError::MissingTensor(name.into()))?;
        if t.shape != shape {
            return Err(HfError::Tensor {
                name: name.into(),
                why: format!("shape {:?}, config.json implies {shape:?}", t.shape),
            });
        }
        // Its offsets and size were checked against the file by `read`.
        let (a, z) = t.data_offsets;
        let mut b = vec![0; z - a];
        let got = read_full(&mut **self.file.borrow_mut(), self.start + a as u64, &mut b)
            .map_err(|e| HfError::Safetensors(format!("{name}: {e}")))?;
        if got < b.len() {
            return Err(HfError::Safetensors(format!(
                "{name}: the file ends {got} bytes into it"
            )));
        }
        let out: Vec<f32> = match t.dtype {
            Dtype::F32 => b
                .chunks_exact(4)
                .map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
                .collect(),
            Dtype::F16 => b
                .chunks_exact(2)
                .map(|x| half::f16::from_le_bytes([x[0], x[1]]).to_f32())
                .collect(),
            Dtype::BF16 => b
                .chunks_exact(2)
                .map(|x| half::bf16::from_le_bytes([x[0], x[1]]).to_f32())
                .collect(),
            d => {
                return Err(HfError::Dtype {
                    name: name.into(),
                    dtype: d.to_string(),
                })
            }
        };
        if let Some(i) = out.iter().position(|v| !v.is_finite()) {
            return Err(HfError::Tensor {
                name: name.into(),
                why: format!("a non-finite value ({}) at element {i}", out[i]),
            });
        }
        Ok(out)
    }

    /// The weights of a model of `c` as a checkpoint, the memory checked against `budget`
    /// before any tensor is converted.
    pub fn checkpoint(&self, hf: &HfConfig, budget: Budget) -> Result<Checkpoint, HfError> {
        let c = hf.config;
        Footprint::of(&c)
            .map_err(CheckpointError::from)?
            .check(&c, budget)
            .map_err(CheckpointError::from)?;
        let (d, h, kv, v, l, hs) = (
            c.dim,
            c.hidden_dim,
            c.kv_dim(),
            c.vocab_size,
            c.n_layers,
            c.head_size(),
        );
        // Every layer's `model.layers.{i}.{part}` of (rows, cols), stacked.
        let stack = |part: &str, rows: usize, cols: usize, heads: Option<usize>| {
            let mut out = Vec::with_capacity(l * rows * cols);
            for i in 0..l {
                let w = self.floats(&format!("model.layers.{i}.{part}.weight"), &[rows, cols])?;
                match heads {
                    Some(n) => out.extend(unpermute(&w, n, hs, cols)),
                    None => out.extend(w),
                }
            }
            Ok::<_, HfError>(out)
        };
        let norm = |part: &str| -> Result<Vec<f32>, HfError> {
            let mut out = Vec::with_capacity(l * d);
            for i in 0..l {
                out.extend(self.floats(&format!("model.layers.{i}.{part}.weight"), &[d])?);
            }
            Ok(out)
        };
        let tied = self.meta.info("lm_head.weight").is_none();
        if tied != c.shared_classifier {
            return Err(HfError::Unsupported(if tied {
                "tie_word_embeddings is false but the file has no lm_head.weight".into()
            } else {
                "tie_word_embeddings is true but the file has its own lm_head.weight".into()
            }));
        }
        let weights = TransformerWeights {
            token_embedding: Tensor::F32(self.floats("model.embed_tokens.weight", &[v, d])?.into()),
            rms_att: norm("input_layernorm")?,
            wq: Tensor::F32(stack("self_attn.q_proj", d, d, Some(c.n_heads))?.into()),
            wk: Tensor::F32(stack("self_attn.k_proj", kv, d, Some(c.n_kv_heads))?.into()),
            wv: Tensor::F32(stack("self_attn.v_proj", kv, d, None)?.into()),
            wo: Tensor::F32(stack("self_attn.o_proj", d, d, None)?.into()),
            rms_ffn: norm("post_attention_layernorm")?,
            w1: Tensor::F32(stack("mlp.gate_proj", h, d, None)?.into()),
            w2: Tensor::F32(stack("mlp.down_proj", d, h, None)?.into()),
            w3: Tensor::F32(stack("mlp.up_proj", h, d, None)?.into()),
            rms_final: self.floats("model.norm.weight", &[d])?,
            wcls: if c.shared_classifier {
                None
            } else {
                Some(Tensor::F32(self.floats("lm_head.weight", &[v, d])?.into()))
            },
            qkv_bias: match hf.qkv_bias {
                true => Some(self.qkv_bias(&c)?),
                false => None,
            },
            rope_factors: hf.rope_factors.clone(),
        };
        Ok(Checkpoint { config: c, weights })
    }
}

impl Weights<'_> {
    /// Every layer's [bq; bk; bv], Q's and K's permuted as their rows are.
    fn qkv_bias(&self, c: &Config) -> Result<Vec<f32>, HfError> {
        let (d, kv, hs) = (c.dim, c.kv_dim(), c.head_size());
        let mut out = Vec::with_capacity(c.n_layers * (d + 2 * kv));
        for i in 0..c.n_layers {
            let b = |part: &str, n: usize| {
                self.floats(&format!("model.layers.{i}.self_attn.{part}.bias"), &[n])
            };
            out.extend(unpermute(&b("q_proj", d)?, c.n_heads, hs, 1));
            out.extend(unpermute(&b("k_proj", kv)?, c.n_kv_heads, hs, 1));
            out.extend(b("v_proj", kv)?);
        }
        Ok(out)
    }
}

/// A shape or norm the model's metadata gives that no model can have: reported as a
/// checkpoint's would be.
impl From<crate::config::ConfigError> for HfError {
    fn from(e: crate::config::ConfigError) -> HfError {
        HfError::Checkpoint(e.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' `permute`, written out: HF row (h, k, j) = Meta row (h, 2j + k).
    fn permute(w: &[f32], heads: usize, hs: usize, cols: usize) -> Vec<f32> {
        let mut out = vec![0.0; w.len()];
        for h in 0..heads {
            for j in 0..hs / 2 {
                for k in 0..2 {
                    let meta = (h * hs + 2 * j + k) * cols;
                    let hf = (h * hs + k * (hs / 2) + j) * cols;
                    out[hf..hf + cols].copy_from_slice(&w[meta..meta + cols]);
                }
            }
        }
        out
    }

    #[test]
    fn unpermute_inverts_the_hf_permutation() {
        let (heads, hs, cols) = (3, 8, 5);
        let w: Vec<f32> = (0..heads * hs * cols).map(|i| i as f32).collect();
        let hf = permute(&w, heads, hs, cols);
        assert_ne!(hf, w);
        // Head 0: HF rows 0..4 are Meta's even rows 0, 2, 4, 6, rows 4..8 the odd ones.
        assert_eq!(hf[cols], w[2 * cols]);
        assert_eq!(hf[4 * cols], w[cols]);
        assert_eq!(unpermute(&hf, heads, hs, cols), w);
    }
}
