//! The blueprint of a model ([CONFIG] of the architecture, lesson 10's taxonomy): its shape,
//! RoPE base and RMSNorm ε, validated once wherever it was read (a llama2.c header, a GGUF
//! file's metadata, a Hugging Face `config.json`). Every format, backend and the page read it.

use thiserror::Error;

/// Upper bounds that keep a hostile header from asking for absurd work before the size check.
/// They are far above any llama2.c checkpoint (Llama-2-70B has dim 8192, hidden 28672).
/// The largest count the engine takes: a vocabulary, a context, a knob's count (top-k, a
/// penalty window).
pub const MAX_COUNT: usize = 1 << 20;
const MAX_DIM: usize = 1 << 15;
const MAX_HIDDEN: usize = 1 << 17;
const MAX_LAYERS: usize = 1 << 10;
const MAX_VOCAB: usize = MAX_COUNT;
const MAX_SEQ_LEN: usize = 1 << 20;

/// What can be wrong with a model's shape or its norms' constants, wherever they were read
/// (a llama2.c header, a GGUF file's metadata, a Hugging Face `config.json`). Every variant
/// names the problem in its message.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConfigError {
    #[error("header field {field} = {value} is out of range (must be {rule})")]
    OutOfRange {
        field: &'static str,
        value: i64,
        rule: String,
    },
    #[error("dim {dim} is not divisible by n_heads {n_heads}")]
    DimNotDivisibleByHeads { dim: usize, n_heads: usize },
    #[error("n_heads {n_heads} is not divisible by n_kv_heads {n_kv_heads}")]
    HeadsNotDivisibleByKvHeads { n_heads: usize, n_kv_heads: usize },
    #[error("head_size {head_size} (dim / n_heads) must be even for rotary embeddings")]
    OddHeadSize { head_size: usize },
    #[error("{field} is {value}; it must be {rule}")]
    Float {
        field: &'static str,
        value: f64,
        rule: &'static str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// Transformer width (residual stream size).
    pub dim: usize,
    /// Width of the SwiGLU hidden layer.
    pub hidden_dim: usize,
    pub n_layers: usize,
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads (fewer than `n_heads` under grouped-query attention).
    pub n_kv_heads: usize,
    pub vocab_size: usize,
    /// Maximum context length.
    pub seq_len: usize,
    /// True when the classifier reuses the token embedding (positive vocab_size in the header).
    pub shared_classifier: bool,
    /// RoPE base θ: pair j of a head turns by pos · θ^(−2j/head_size). llama2.c and Llama 2
    /// use 10,000 (a llama2.c header cannot say otherwise); SmolLM2 100,000 (its
    /// `config.json`'s `rope_theta`, GGUF's `llama.rope.freq_base`).
    #[serde(default = "Config::llama2c_rope_theta")]
    pub rope_theta: f32,
    /// RMSNorm's ε: x / sqrt(mean(x²) + ε). llama2.c 1e-5; Hugging Face's `rms_norm_eps`,
    /// GGUF's `llama.attention.layer_norm_rms_epsilon`.
    #[serde(default = "Config::llama2c_rms_eps")]
    pub rms_eps: f32,
}

/// The longest context a GGUF or Hugging Face model is run at: its file's trained context
/// when shorter. llama.cpp too runs a model at the context chosen when it is loaded
/// (`n_ctx`; llama-cli's default is 4,096), not at the trained one: Qwen2.5-0.5B's 32,768
/// positions would take 805 MB of float32 K/V cache for one sequence, over the page's
/// budget with the weights, for prompts a class never writes.
pub const MAX_RUN_CONTEXT: i32 = 4096;

impl Config {
    /// llama2.c's RoPE base (`run.c`: `powf(10000.0f, head_dim / (float)head_size)`).
    pub const LLAMA2C_ROPE_THETA: f32 = 10000.0;
    /// llama2.c's RMSNorm ε (`run.c` `rmsnorm`: `ss += 1e-5f`).
    pub const LLAMA2C_RMS_EPS: f32 = 1e-5;

    fn llama2c_rope_theta() -> f32 {
        Config::LLAMA2C_ROPE_THETA
    }

    fn llama2c_rms_eps() -> f32 {
        Config::LLAMA2C_RMS_EPS
    }

    /// Whether a llama2.c header can hold this model (its RoPE base and ε are llama2.c's).
    pub fn is_llama2c(&self) -> bool {
        self.rope_theta == Config::LLAMA2C_ROPE_THETA && self.rms_eps == Config::LLAMA2C_RMS_EPS
    }

    /// This shape with another RoPE base and RMSNorm ε, each checked: θ finite and > 1,
    /// 0 < ε < 1 (a Hugging Face `config.json`, a GGUF file's metadata).
    pub fn with_norms(self, rope_theta: f64, rms_eps: f64) -> Result<Config, ConfigError> {
        if !(rope_theta.is_finite() && rope_theta > 1.0 && rope_theta <= 1e12) {
            return Err(ConfigError::Float {
                field: "rope_theta",
                value: rope_theta,
                rule: "a number in (1, 1e12]",
            });
        }
        if !(rms_eps.is_finite() && rms_eps > 0.0 && rms_eps < 1.0) {
            return Err(ConfigError::Float {
                field: "rms_eps",
                value: rms_eps,
                rule: "a number in (0, 1)",
            });
        }
        Ok(Config {
            rope_theta: rope_theta as f32,
            rms_eps: rms_eps as f32,
            ..self
        })
    }

    /// Validates raw header values: ranges first, then divisibility, so that no later
    /// arithmetic can overflow.
    pub fn from_header(h: [i32; 7]) -> Result<Config, ConfigError> {
        let [dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab, seq_len] = h;
        let range = |field: &'static str, v: i32, max: usize| -> Result<usize, ConfigError> {
            if v < 1 || v as usize > max {
                Err(ConfigError::OutOfRange {
                    field,
                    value: v as i64,
                    rule: format!("1..={max}"),
                })
            } else {
                Ok(v as usize)
            }
        };
        let dim = range("dim", dim, MAX_DIM)?;
        let hidden_dim = range("hidden_dim", hidden_dim, MAX_HIDDEN)?;
        let n_layers = range("n_layers", n_layers, MAX_LAYERS)?;
        let n_heads = range("n_heads", n_heads, dim)?;
        let n_kv_heads = range("n_kv_heads", n_kv_heads, n_heads)?;
        // llama2.c: a negative vocab_size marks an unshared classifier.
        let shared_classifier = vocab > 0;
        let vocab_size = range(
            "vocab_size (absolute value)",
            vocab.saturating_abs(),
            MAX_VOCAB,
        )?;
        let seq_len = range("seq_len", seq_len, MAX_SEQ_LEN)?;
        let config = Config {
            dim,
            hidden_dim,
            n_layers,
            n_heads,
            n_kv_heads,
            vocab_size,
            seq_len,
            shared_classifier,
            rope_theta: Config::LLAMA2C_ROPE_THETA,
            rms_eps: Config::LLAMA2C_RMS_EPS,
        };
        config.check_shapes()?;
        Ok(config)
    }

    /// The divisibility rules every consumer of a `Config` relies on.
    pub fn check_shapes(&self) -> Result<(), ConfigError> {
        if !self.dim.is_multiple_of(self.n_heads) {
            return Err(ConfigError::DimNotDivisibleByHeads {
                dim: self.dim,
                n_heads: self.n_heads,
            });
        }
        if !self.n_heads.is_multiple_of(self.n_kv_heads) {
            return Err(ConfigError::HeadsNotDivisibleByKvHeads {
                n_heads: self.n_heads,
                n_kv_heads: self.n_kv_heads,
            });
        }
        if !self.head_size().is_multiple_of(2) {
            return Err(ConfigError::OddHeadSize {
                head_size: self.head_size(),
            });
        }
        Ok(())
    }

    pub fn header(&self) -> [i32; 7] {
        let vocab = self.vocab_size as i32;
        [
            self.dim as i32,
            self.hidden_dim as i32,
            self.n_layers as i32,
            self.n_heads as i32,
            self.n_kv_heads as i32,
            if self.shared_classifier {
                vocab
            } else {
                -vocab
            },
            self.seq_len as i32,
        ]
    }

    pub fn head_size(&self) -> usize {
        self.dim / self.n_heads
    }

    /// Width of one position's keys (or values) in one layer: n_kv_heads × head_size.
    pub fn kv_dim(&self) -> usize {
        self.n_kv_heads * self.head_size()
    }

    /// The floats one row of activations takes in each buffer of the forward pass's run
    /// state: x, xb, xb2 (dim each), q/k/v (dim + 2·kv_dim), the MLP's gate and up
    /// (2·hidden). The one place the layout is written: `forward::RunState` sizes its
    /// buffers by it and the memory budget sums it.
    pub fn activation_widths(&self) -> [usize; 5] {
        let d = self.dim;
        [d, d, d, d + 2 * self.kv_dim(), 2 * self.hidden_dim]
    }

    /// How many query heads share each key/value head (1 = MHA, n_heads = MQA).
    pub fn kv_mul(&self) -> usize {
        self.n_heads / self.n_kv_heads
    }

    /// Tensor names and float counts in file order, including the two unused RoPE tables.
    pub(crate) fn tensor_sizes(&self) -> Vec<(&'static str, Option<u64>)> {
        let (d, h, l) = (
            self.dim as u64,
            self.hidden_dim as u64,
            self.n_layers as u64,
        );
        let (v, s, kv) = (
            self.vocab_size as u64,
            self.seq_len as u64,
            self.kv_dim() as u64,
        );
        let half_head = (self.head_size() / 2) as u64;
        let mul = |a: u64, b: u64, c: u64| a.checked_mul(b)?.checked_mul(c);
        let mut sizes = vec![
            ("token_embedding", v.checked_mul(d)),
            ("rms_att", l.checked_mul(d)),
            ("wq", mul(l, d, d)),
            ("wk", mul(l, kv, d)),
            ("wv", mul(l, kv, d)),
            ("wo", mul(l, d, d)),
            ("rms_ffn", l.checked_mul(d)),
            ("w1", mul(l, h, d)),
            ("w2", mul(l, d, h)),
            ("w3", mul(l, h, d)),
            ("rms_final", Some(d)),
            ("freq_cis_real", s.checked_mul(half_head)),
            ("freq_cis_imag", s.checked_mul(half_head)),
        ];
        if !self.shared_classifier {
            sizes.push(("wcls", v.checked_mul(d)));
        }
        sizes
    }

    /// Number of learned parameters (the RoPE tables excluded).
    pub fn n_params(&self) -> u64 {
        self.tensor_sizes()
            .into_iter()
            .filter(|(name, _)| !name.starts_with("freq_cis"))
            .map(|(_, n)| n.unwrap_or(0))
            .sum()
    }
}

/// Llama 3's RoPE scaling (`rope_scaling.rope_type = "llama3"` in a `config.json`): the
/// parameters from which each pair's frequency factor is computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Llama3Rope {
    pub factor: f64,
    pub low_freq_factor: f64,
    pub high_freq_factor: f64,
    pub original_max_position_embeddings: f64,
}

impl Llama3Rope {
    /// Each pair's factor (head_size / 2 of them): 1 for wavelengths under
    /// original / high_freq_factor, `factor` over original / low_freq_factor, smoothed
    /// between. The rule of transformers' `_compute_llama3_parameters` and of
    /// convert_hf_to_gguf.py's `rope_freqs` (`conversion/llama.py`, which llama.cpp reads as
    /// `rope_freqs.weight` and divides each frequency by).
    pub fn factors(&self, head_size: usize, rope_theta: f32) -> Vec<f32> {
        let (old, low, high) = (
            self.original_max_position_embeddings,
            self.low_freq_factor,
            self.high_freq_factor,
        );
        (0..head_size / 2)
            .map(|j| {
                let freq = 1.0 / (rope_theta as f64).powf((2 * j) as f64 / head_size as f64);
                let wavelen = 2.0 * std::f64::consts::PI / freq;
                if wavelen < old / high {
                    1.0
                } else if wavelen > old / low {
                    self.factor as f32
                } else {
                    let smooth = (old / wavelen - low) / (high - low);
                    (1.0 / ((1.0 - smooth) / self.factor + smooth)) as f32
                }
            })
            .collect()
    }
}
