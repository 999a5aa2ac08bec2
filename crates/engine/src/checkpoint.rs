//! The llama2.c checkpoint: `Config` (the blueprint, [CONFIG] of the architecture) and
//! `TransformerWeights` (the learned parameters, [LEARNED]), loaded from bytes and validated
//! before use. Mirrors `read_checkpoint` / `memory_map_weights` in karpathy/llama2.c `run.c`
//! ("legacy v0" format: seven little-endian i32, then float32 tensors).
//!
//! Nothing here touches a file system: the caller hands over the bytes (a file read natively,
//! a `fetch` or a dropped file in the browser).

use crate::budget::{Budget, BudgetError, Footprint};
use crate::quant::{self, F32s, MatRef, Precision, SharedBytes, Tensor};
use crate::units::thousands;
use thiserror::Error;

/// Bytes of the header: seven little-endian i32.
pub const HEADER_BYTES: usize = 7 * 4;
/// Bytes of a file's start that tell its format and its header (a version-2 file's header is
/// 256 bytes): what the page reads of a dropped file before the rest.
pub const HEAD_BYTES: usize = crate::checkpoint_v2::V2_HEADER_BYTES;

/// Upper bounds that keep a hostile header from asking for absurd work before the size check.
/// They are far above any llama2.c checkpoint (Llama-2-70B has dim 8192, hidden 28672).
const MAX_DIM: usize = 1 << 15;
const MAX_HIDDEN: usize = 1 << 17;
const MAX_LAYERS: usize = 1 << 10;
const MAX_VOCAB: usize = 1 << 20;
const MAX_SEQ_LEN: usize = 1 << 20;

/// What can be wrong with a checkpoint. Every variant names the problem in its message.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CheckpointError {
    #[error("checkpoint is empty (0 bytes)")]
    Empty,
    #[error("checkpoint is {len} bytes, shorter than the {HEADER_BYTES}-byte header")]
    TooShortForHeader { len: usize },
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
    #[error("file is {actual} bytes, header implies {expected}")]
    WrongSize { actual: String, expected: String },
    #[error(transparent)]
    Budget(#[from] BudgetError),
    #[error("reading the checkpoint failed at byte {offset}: {error}")]
    Read { offset: u64, error: String },
    #[error("magic {magic:#010x} is not llama2.c's 0x616b3432 (\"ak42\"), and the file is not a legacy header either")]
    UnknownMagic { magic: u32 },
    #[error("llama2.c checkpoint version {version} is not supported (legacy float32 files have no version; version 2 is Q8_0)")]
    UnsupportedVersion { version: i32 },
    #[error("shared_classifier byte is {value} (must be 0 or 1)")]
    BadSharedFlag { value: u8 },
    #[error("group size {group} must be at least 1")]
    GroupSize { group: i64 },
    #[error("group size {group} does not divide tensor {tensor} ({len} weights a layer)")]
    GroupDoesNotDivide {
        tensor: &'static str,
        len: usize,
        group: usize,
    },
    #[error("{field} is {value}; it must be {rule}")]
    Float {
        field: &'static str,
        value: f64,
        rule: &'static str,
    },
    #[error("tensor {tensor} has a non-finite value ({value}) at element {index}")]
    NonFinite {
        tensor: &'static str,
        index: usize,
        value: f32,
    },
}

/// The architecture, read from the header. [CONFIG]: fixed for a given checkpoint.
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
    pub fn with_norms(self, rope_theta: f64, rms_eps: f64) -> Result<Config, CheckpointError> {
        if !(rope_theta.is_finite() && rope_theta > 1.0 && rope_theta <= 1e12) {
            return Err(CheckpointError::Float {
                field: "rope_theta",
                value: rope_theta,
                rule: "a number in (1, 1e12]",
            });
        }
        if !(rms_eps.is_finite() && rms_eps > 0.0 && rms_eps < 1.0) {
            return Err(CheckpointError::Float {
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
    pub fn from_header(h: [i32; 7]) -> Result<Config, CheckpointError> {
        let [dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab, seq_len] = h;
        let range = |field: &'static str, v: i32, max: usize| -> Result<usize, CheckpointError> {
            if v < 1 || v as usize > max {
                Err(CheckpointError::OutOfRange {
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
    pub fn check_shapes(&self) -> Result<(), CheckpointError> {
        if !self.dim.is_multiple_of(self.n_heads) {
            return Err(CheckpointError::DimNotDivisibleByHeads {
                dim: self.dim,
                n_heads: self.n_heads,
            });
        }
        if !self.n_heads.is_multiple_of(self.n_kv_heads) {
            return Err(CheckpointError::HeadsNotDivisibleByKvHeads {
                n_heads: self.n_heads,
                n_kv_heads: self.n_kv_heads,
            });
        }
        if !self.head_size().is_multiple_of(2) {
            return Err(CheckpointError::OddHeadSize {
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

    /// How many query heads share each key/value head (1 = MHA, n_heads = MQA).
    pub fn kv_mul(&self) -> usize {
        self.n_heads / self.n_kv_heads
    }

    /// Number of float32 values in the file after the header, in file order; `None` on overflow.
    pub(crate) fn file_floats(&self) -> Option<u64> {
        let mut total: u64 = 0;
        for (_, n) in self.tensor_sizes() {
            total = total.checked_add(n?)?;
        }
        Some(total)
    }

    /// Exact file size this header implies, `None` if it does not fit in a u64.
    pub fn expected_file_bytes(&self) -> Option<u64> {
        self.file_floats()?
            .checked_mul(4)?
            .checked_add(HEADER_BYTES as u64)
    }

    /// Tensor names and float counts in file order, including the two unused RoPE tables.
    fn tensor_sizes(&self) -> Vec<(&'static str, Option<u64>)> {
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

/// The learned parameters, laid out exactly as in the file. Shapes follow llama2.c. The
/// matrices are float32 or quantized (`quant`); the norms are always float32.
#[derive(Debug, Clone)]
pub struct TransformerWeights {
    /// (vocab_size, dim)
    pub token_embedding: Tensor,
    /// (layer, dim) RMSNorm weights before attention
    pub rms_att: Vec<f32>,
    /// (layer, dim, dim) rows are output features: q = wq · x
    pub wq: Tensor,
    /// (layer, kv_dim, dim)
    pub wk: Tensor,
    /// (layer, kv_dim, dim)
    pub wv: Tensor,
    /// (layer, dim, dim)
    pub wo: Tensor,
    /// (layer, dim) RMSNorm weights before the MLP
    pub rms_ffn: Vec<f32>,
    /// (layer, hidden_dim, dim) gate projection
    pub w1: Tensor,
    /// (layer, dim, hidden_dim) down projection
    pub w2: Tensor,
    /// (layer, hidden_dim, dim) up projection
    pub w3: Tensor,
    /// (dim,)
    pub rms_final: Vec<f32>,
    /// (vocab_size, dim); `None` when the classifier shares `token_embedding`.
    pub wcls: Option<Tensor>,
}

impl TransformerWeights {
    /// The classifier matrix (vocab_size, dim).
    pub fn classifier(&self) -> MatRef<'_> {
        self.wcls
            .as_ref()
            .unwrap_or(&self.token_embedding)
            .block(0, 1)
    }

    /// The precision of the matrices.
    pub fn precision(&self) -> Precision {
        self.wq.precision()
    }

    /// Every matrix with its name and its number of blocks (layers), in file order.
    pub fn matrices(&self, c: &Config) -> Vec<(&'static str, &Tensor, usize)> {
        let l = c.n_layers;
        let mut t = vec![
            ("token_embedding", &self.token_embedding, 1),
            ("wq", &self.wq, l),
            ("wk", &self.wk, l),
            ("wv", &self.wv, l),
            ("wo", &self.wo, l),
            ("w1", &self.w1, l),
            ("w2", &self.w2, l),
            ("w3", &self.w3, l),
        ];
        if let Some(w) = &self.wcls {
            t.push(("wcls", w, 1));
        }
        t
    }

    /// The norms with their names, in file order.
    pub fn norms(&self) -> [(&'static str, &[f32]); 3] {
        [
            ("rms_att", &self.rms_att),
            ("rms_ffn", &self.rms_ffn),
            ("rms_final", &self.rms_final),
        ]
    }

    /// Bytes the weights take in memory (the matrices at their precision, the norms).
    pub fn bytes(&self, c: &Config) -> u64 {
        let m: u64 = self.matrices(c).iter().map(|(_, t, _)| t.bytes()).sum();
        let n: u64 = self.norms().iter().map(|(_, v)| 4 * v.len() as u64).sum();
        m + n
    }

    /// The same parameters with every matrix at `precision` (quantized from the float32
    /// values, or from the dequantized ones when already quantized; the norms unchanged).
    /// Q8's group follows llama2.c's `export.py` (64, halved until it divides `dim`).
    pub fn at(&self, c: &Config, precision: Precision) -> TransformerWeights {
        let g = quant::q8_group_for(c.dim);
        let l = c.n_layers;
        TransformerWeights {
            token_embedding: self.token_embedding.at(precision, 1, g),
            rms_att: self.rms_att.clone(),
            wq: self.wq.at(precision, l, g),
            wk: self.wk.at(precision, l, g),
            wv: self.wv.at(precision, l, g),
            wo: self.wo.at(precision, l, g),
            rms_ffn: self.rms_ffn.clone(),
            w1: self.w1.at(precision, l, g),
            w2: self.w2.at(precision, l, g),
            w3: self.w3.at(precision, l, g),
            rms_final: self.rms_final.clone(),
            wcls: self.wcls.as_ref().map(|w| w.at(precision, 1, g)),
        }
    }
}

/// A validated checkpoint: the blueprint and its parameters.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub config: Config,
    pub weights: TransformerWeights,
}

/// Reads consecutive float32 tensors, rejecting NaN and infinities, each straight into its
/// own buffer (one `read_exact` per tensor): the file is never held whole beside the
/// weights.
pub(crate) struct TensorReader<'r, R: std::io::Read> {
    pub(crate) reader: &'r mut R,
    pub(crate) offset: u64,
}

impl<R: std::io::Read> TensorReader<'_, R> {
    pub(crate) fn fill(&mut self, bytes: &mut [u8]) -> Result<(), CheckpointError> {
        self.reader
            .read_exact(bytes)
            .map_err(|e| CheckpointError::Read {
                offset: self.offset,
                error: e.to_string(),
            })?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    pub(crate) fn take(
        &mut self,
        name: &'static str,
        n: usize,
    ) -> Result<Vec<f32>, CheckpointError> {
        let mut out = vec![0.0f32; n];
        // The file's little-endian floats are read straight into the tensor (x86, wasm);
        // a big-endian target turns each around after reading.
        self.fill(bytemuck::cast_slice_mut::<f32, u8>(&mut out))?;
        if cfg!(target_endian = "big") {
            for v in out.iter_mut() {
                *v = f32::from_bits(u32::from_le(v.to_bits()));
            }
        }
        check_finite(name, &out)?;
        Ok(out)
    }

    fn skip(&mut self, mut n: u64) -> Result<(), CheckpointError> {
        let mut chunk = [0u8; 1 << 16];
        while n > 0 {
            let k = n.min(chunk.len() as u64) as usize;
            self.fill(&mut chunk[..k])?;
            n -= k as u64;
        }
        Ok(())
    }
}

/// A tensor with a NaN or an infinity is refused, naming the first.
fn check_finite(name: &'static str, v: &[f32]) -> Result<(), CheckpointError> {
    // Blocks of 4,096 tested without an early exit (it vectorises: exponent bits all ones is
    // NaN or ±∞); the index is sought only in a block that has one. A 58 MB file's scan took
    // 13 % of the CLI's start-up one float at a time.
    for (b, block) in v.chunks(4096).enumerate() {
        if !block
            .iter()
            .fold(false, |f, x| f | (x.to_bits() & 0x7f80_0000 == 0x7f80_0000))
        {
            continue;
        }
        if let Some(i) = block.iter().position(|x| !x.is_finite()) {
            return Err(CheckpointError::NonFinite {
                tensor: name,
                index: b * 4096 + i,
                value: block[i],
            });
        }
    }
    Ok(())
}

/// Where a llama2.c file's tensors come from, in file order: read into buffers of their own
/// (`TensorReader`), or viewed in the file's bytes in place (`SharedReader`).
trait TensorSource {
    fn tensor(&mut self, name: &'static str, n: usize) -> Result<F32s, CheckpointError>;
    fn skip_bytes(&mut self, n: u64) -> Result<(), CheckpointError>;
}

impl<R: std::io::Read> TensorSource for TensorReader<'_, R> {
    fn tensor(&mut self, name: &'static str, n: usize) -> Result<F32s, CheckpointError> {
        self.take(name, n).map(F32s::Owned)
    }
    fn skip_bytes(&mut self, n: u64) -> Result<(), CheckpointError> {
        self.skip(n)
    }
}

/// Tensors as views into the whole file's bytes (mapped natively): no copy of the weights.
/// The caller has checked the file's size against the header, so every tensor is there.
struct SharedReader {
    bytes: SharedBytes,
    offset: usize,
}

impl TensorSource for SharedReader {
    fn tensor(&mut self, name: &'static str, n: usize) -> Result<F32s, CheckpointError> {
        let truncated = || CheckpointError::Read {
            offset: self.offset as u64,
            error: "the file ends inside this tensor".into(),
        };
        let t = match F32s::view(&self.bytes, self.offset, n) {
            Some(t) => t,
            // Not 4-byte aligned in memory (or a big-endian machine): a copy, as read.
            None => {
                let all = (*self.bytes).as_ref();
                let b = all
                    .get(self.offset..self.offset + 4 * n)
                    .ok_or_else(truncated)?;
                F32s::Owned(
                    b.chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                )
            }
        };
        check_finite(name, &t)?;
        self.offset += 4 * n;
        Ok(t)
    }
    fn skip_bytes(&mut self, n: u64) -> Result<(), CheckpointError> {
        self.offset += n as usize;
        Ok(())
    }
}

/// Reads until `buf` is full or the reader ends; how many bytes it got.
pub(crate) fn read_up_to(
    reader: &mut impl std::io::Read,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

impl Checkpoint {
    /// What can be known of a checkpoint from its first 28 bytes and its length, before the
    /// rest is read (the page checks a dropped file this way): the header's values, the
    /// memory the model would take against `budget`, and the file's size against the one
    /// the header implies. `head` may be the whole file or just its start.
    pub fn check_header(
        head: &[u8],
        file_len: u64,
        budget: Budget,
    ) -> Result<Config, CheckpointError> {
        if file_len == 0 {
            return Err(CheckpointError::Empty);
        }
        if crate::checkpoint_v2::is_v2(head) {
            return crate::checkpoint_v2::check_v2_header(head, file_len, budget).map(|h| h.config);
        }
        let Some(head) = head.get(..HEADER_BYTES) else {
            return Err(CheckpointError::TooShortForHeader { len: head.len() });
        };
        // A legacy header starts with dim (< 2^15: its top bytes are zeros); a u32 whose
        // top bytes are "ak" is a versioned llama2.c magic gone wrong.
        if head[2..4] == *b"ka" {
            return Err(CheckpointError::UnknownMagic {
                magic: u32::from_le_bytes([head[0], head[1], head[2], head[3]]),
            });
        }
        let mut header = [0i32; 7];
        for (h, b) in header.iter_mut().zip(head.chunks_exact(4)) {
            *h = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        let config = Config::from_header(header)?;
        // A model whose weights, cache or run state would not fit is refused with the
        // figure, whatever the file's size.
        Footprint::of(&config)?.check(&config, budget)?;
        let expected = config.expected_file_bytes();
        if expected != Some(file_len) {
            return Err(CheckpointError::WrongSize {
                actual: thousands(file_len),
                expected: expected.map_or_else(|| "more than 2^64".into(), thousands),
            });
        }
        Ok(config)
    }

    /// Parses and validates a llama2.c checkpoint. The header is checked and the file size
    /// compared with what it implies *before* any tensor is allocated, so a hostile header
    /// cannot cause a huge allocation; then every weight is checked to be finite.
    pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
        Checkpoint::from_bytes_within(bytes, Budget::default())
    }

    /// `from_bytes` with the memory the model may take (weights, one sequence's KV cache,
    /// run state), checked from the header before anything is allocated.
    pub fn from_bytes_within(bytes: &[u8], budget: Budget) -> Result<Checkpoint, CheckpointError> {
        Checkpoint::read_within(&mut &bytes[..], bytes.len() as u64, budget)
    }

    /// Reads a checkpoint of `file_len` bytes from `reader` (a file, natively): the header
    /// is checked against `budget` and `file_len` first, then each tensor is read straight
    /// into its buffer, so the peak is the weights themselves, not the file and the weights
    /// (issue 11).
    pub fn read_within(
        reader: &mut impl std::io::Read,
        file_len: u64,
        budget: Budget,
    ) -> Result<Checkpoint, CheckpointError> {
        if file_len == 0 {
            return Err(CheckpointError::Empty);
        }
        let mut head = [0u8; HEADER_BYTES];
        let got = read_up_to(reader, &mut head).map_err(|e| CheckpointError::Read {
            offset: 0,
            error: e.to_string(),
        })?;
        if crate::checkpoint_v2::is_v2(&head[..got]) {
            return Checkpoint::read_v2(reader, &head[..got], file_len, budget);
        }
        let config = Checkpoint::check_header(&head[..got], file_len, budget)?;
        // The size matched the header, and the budget allowed it: every tensor below fits.
        let mut r = TensorReader {
            reader,
            offset: HEADER_BYTES as u64,
        };
        let weights = Checkpoint::tensors(&config, &mut r)?;
        Ok(Checkpoint { config, weights })
    }

    /// A checkpoint whose float32 tensors are views into `bytes`, the whole file (natively
    /// its mapping): the weights in memory are the file's own pages, not a copy (issue 11).
    /// Checked as `read_within` checks a file; a version-2 (quantized) file is converted.
    pub fn from_shared(bytes: SharedBytes, budget: Budget) -> Result<Checkpoint, CheckpointError> {
        let all = (*bytes).as_ref();
        let len = all.len() as u64;
        if crate::checkpoint_v2::is_v2(all) || len == 0 {
            return Checkpoint::read_within(&mut &all[..], len, budget);
        }
        let head = &all[..all.len().min(HEADER_BYTES)];
        let config = Checkpoint::check_header(head, len, budget)?;
        let mut r = SharedReader {
            bytes: bytes.clone(),
            offset: HEADER_BYTES,
        };
        let weights = Checkpoint::tensors(&config, &mut r)?;
        Ok(Checkpoint { config, weights })
    }

    /// The tensors after a legacy header, in llama2.c's order.
    fn tensors(
        config: &Config,
        r: &mut impl TensorSource,
    ) -> Result<TransformerWeights, CheckpointError> {
        let c = config;
        let (d, h, l, v, kv) = (c.dim, c.hidden_dim, c.n_layers, c.vocab_size, c.kv_dim());
        // The norms are small and kept as buffers of their own.
        fn norm(
            r: &mut impl TensorSource,
            name: &'static str,
            n: usize,
        ) -> Result<Vec<f32>, CheckpointError> {
            r.tensor(name, n).map(|t| t.to_vec())
        }
        let token_embedding = Tensor::F32(r.tensor("token_embedding", v * d)?);
        let rms_att = norm(r, "rms_att", l * d)?;
        let wq = Tensor::F32(r.tensor("wq", l * d * d)?);
        let wk = Tensor::F32(r.tensor("wk", l * kv * d)?);
        let wv = Tensor::F32(r.tensor("wv", l * kv * d)?);
        let wo = Tensor::F32(r.tensor("wo", l * d * d)?);
        let rms_ffn = norm(r, "rms_ffn", l * d)?;
        let w1 = Tensor::F32(r.tensor("w1", l * h * d)?);
        let w2 = Tensor::F32(r.tensor("w2", l * d * h)?);
        let w3 = Tensor::F32(r.tensor("w3", l * h * d)?);
        let rms_final = norm(r, "rms_final", d)?;
        // freq_cis_real and freq_cis_imag: unused (RoPE is computed), skipped unchecked as
        // llama2.c does.
        r.skip_bytes((2 * c.seq_len * (c.head_size() / 2) * 4) as u64)?;
        let wcls = if c.shared_classifier {
            None
        } else {
            Some(Tensor::F32(r.tensor("wcls", v * d)?))
        };
        Ok(TransformerWeights {
            token_embedding,
            rms_att,
            wq,
            wk,
            wv,
            wo,
            rms_ffn,
            w1,
            w2,
            w3,
            rms_final,
            wcls,
        })
    }

    /// Serialises back to the llama2.c format (the RoPE tables are written as llama2.c's
    /// export does; quantized matrices as their dequantized values). Used by tests and to
    /// hand a random-weight model to other tools.
    pub fn to_bytes(&self) -> Vec<u8> {
        let c = &self.config;
        let mut out = Vec::with_capacity(c.expected_file_bytes().unwrap_or(0) as usize);
        for h in c.header() {
            out.extend_from_slice(&h.to_le_bytes());
        }
        let mut put = |t: &[f32]| {
            for x in t {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
        let w = &self.weights;
        for t in [
            &*w.token_embedding.to_f32(),
            &w.rms_att,
            &w.wq.to_f32(),
            &w.wk.to_f32(),
            &w.wv.to_f32(),
            &w.wo.to_f32(),
            &w.rms_ffn,
            &w.w1.to_f32(),
            &w.w2.to_f32(),
            &w.w3.to_f32(),
            &w.rms_final,
        ] {
            put(t);
        }
        let half = c.head_size() / 2;
        let mut real = Vec::with_capacity(c.seq_len * half);
        let mut imag = Vec::with_capacity(c.seq_len * half);
        for pos in 0..c.seq_len {
            for i in 0..half {
                let freq = 1.0 / libm::powf(c.rope_theta, (2 * i) as f32 / c.head_size() as f32);
                let val = pos as f32 * freq;
                real.push(libm::cosf(val));
                imag.push(libm::sinf(val));
            }
        }
        put(&real);
        put(&imag);
        if let Some(wcls) = &w.wcls {
            put(&wcls.to_f32());
        }
        out
    }

    /// A checkpoint of the given shape with seeded random weights, for benchmarks of
    /// realistic sizes without downloading anything. Values are uniform in ±1/sqrt(fan_in)
    /// so activations stay in a sane range; norms are 1.
    pub fn random(config: Config, seed: u64) -> Result<Checkpoint, CheckpointError> {
        use rand_core::{RngCore, SeedableRng};
        config.check_shapes()?;
        Footprint::of(&config)?.check(&config, Budget::default())?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut uniform = |n: usize, fan_in: usize| -> Vec<f32> {
            let scale = 1.0 / (fan_in as f32).sqrt();
            (0..n)
                .map(|_| {
                    let u = (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32;
                    (2.0 * u - 1.0) * scale
                })
                .collect()
        };
        let c = &config;
        let (d, h, l, v, kv) = (c.dim, c.hidden_dim, c.n_layers, c.vocab_size, c.kv_dim());
        let weights = TransformerWeights {
            token_embedding: Tensor::F32(uniform(v * d, 1).into()),
            rms_att: vec![1.0; l * d],
            wq: Tensor::F32(uniform(l * d * d, d).into()),
            wk: Tensor::F32(uniform(l * kv * d, d).into()),
            wv: Tensor::F32(uniform(l * kv * d, d).into()),
            wo: Tensor::F32(uniform(l * d * d, d).into()),
            rms_ffn: vec![1.0; l * d],
            w1: Tensor::F32(uniform(l * h * d, d).into()),
            w2: Tensor::F32(uniform(l * d * h, h).into()),
            w3: Tensor::F32(uniform(l * h * d, d).into()),
            rms_final: vec![1.0; d],
            wcls: if c.shared_classifier {
                None
            } else {
                Some(Tensor::F32(uniform(v * d, d).into()))
            },
        };
        Ok(Checkpoint { config, weights })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_config(shared: bool) -> Config {
        Config {
            dim: 8,
            hidden_dim: 12,
            n_layers: 2,
            n_heads: 2,
            n_kv_heads: 1,
            vocab_size: 10,
            seq_len: 16,
            shared_classifier: shared,
            rope_theta: Config::LLAMA2C_ROPE_THETA,
            rms_eps: Config::LLAMA2C_RMS_EPS,
        }
    }

    #[test]
    fn stories260k_shape_implies_its_file_size() {
        let c = Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
        assert_eq!(c.expected_file_bytes(), Some(1_056_540));
        assert_eq!(c.n_params() + (512 * 4 * 2) as u64, (1_056_540 - 28) / 4);
        assert_eq!((c.head_size(), c.kv_dim(), c.kv_mul()), (8, 32, 2));
    }

    #[test]
    fn round_trip_shared_and_unshared() {
        for shared in [true, false] {
            let ck = Checkpoint::random(tiny_config(shared), 3).unwrap();
            let bytes = ck.to_bytes();
            assert_eq!(bytes.len() as u64, ck.config.expected_file_bytes().unwrap());
            let back = Checkpoint::from_bytes(&bytes).unwrap();
            assert_eq!(back.config, ck.config);
            assert_eq!(back.weights.wcls, ck.weights.wcls);
            assert_eq!(back.weights.token_embedding, ck.weights.token_embedding);
            assert_eq!(back.weights.w2, ck.weights.w2);
            assert_eq!(back.weights.wcls.is_some(), !shared);
        }
    }

    #[test]
    fn empty_and_short_files_are_named() {
        assert_eq!(
            Checkpoint::from_bytes(&[]).unwrap_err(),
            CheckpointError::Empty
        );
        assert_eq!(
            Checkpoint::from_bytes(&[0; 10]).unwrap_err(),
            CheckpointError::TooShortForHeader { len: 10 }
        );
    }

    #[test]
    fn wrong_size_message_names_both_sizes() {
        let mut bytes = Checkpoint::random(tiny_config(true), 1).unwrap().to_bytes();
        let full = bytes.len();
        bytes.truncate(1000);
        let err = Checkpoint::from_bytes(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "file is 1,000 bytes, header implies {}",
                thousands(full as u64)
            )
        );
    }

    #[test]
    fn absurd_header_is_rejected_before_allocation() {
        let mut bytes = Vec::new();
        for h in [1i32 << 30, 172, 5, 8, 4, 512, 512] {
            bytes.extend_from_slice(&h.to_le_bytes());
        }
        match Checkpoint::from_bytes(&bytes).unwrap_err() {
            CheckpointError::OutOfRange { field, .. } => assert_eq!(field, "dim"),
            e => panic!("unexpected {e}"),
        }
        // In range individually but the product is huge: caught by the budget, with the
        // figure, before the file's size is even looked at.
        let mut bytes = Vec::new();
        for h in [32768i32, 131072, 1024, 8, 8, 1 << 20, 1 << 20] {
            bytes.extend_from_slice(&h.to_le_bytes());
        }
        let e = Checkpoint::from_bytes(&bytes).unwrap_err();
        assert!(matches!(e, CheckpointError::Budget(_)), "{e}");
        // Within the budget but not the size the header implies: the size check.
        let mut bytes = Vec::new();
        for h in [64i32, 172, 5, 8, 4, 512, 512] {
            bytes.extend_from_slice(&h.to_le_bytes());
        }
        let e = Checkpoint::check_header(&bytes, 28, Budget::default()).unwrap_err();
        assert!(matches!(e, CheckpointError::WrongSize { .. }), "{e}");
    }

    #[test]
    fn inconsistent_heads_are_rejected() {
        assert_eq!(
            Config::from_header([64, 172, 5, 7, 7, 512, 512]).unwrap_err(),
            CheckpointError::DimNotDivisibleByHeads {
                dim: 64,
                n_heads: 7
            }
        );
        assert_eq!(
            Config::from_header([64, 172, 5, 8, 3, 512, 512]).unwrap_err(),
            CheckpointError::HeadsNotDivisibleByKvHeads {
                n_heads: 8,
                n_kv_heads: 3
            }
        );
        assert_eq!(
            Config::from_header([24, 172, 5, 8, 8, 512, 512]).unwrap_err(),
            CheckpointError::OddHeadSize { head_size: 3 }
        );
        assert!(matches!(
            Config::from_header([64, 172, 5, 8, 16, 512, 512]).unwrap_err(),
            CheckpointError::OutOfRange {
                field: "n_kv_heads",
                ..
            }
        ));
        assert!(matches!(
            Config::from_header([64, 172, 5, 8, 4, i32::MIN, 512]).unwrap_err(),
            CheckpointError::OutOfRange { .. }
        ));
    }

    /// The blockwise scan names the first non-finite value wherever it falls: in the first
    /// or a later block of 4,096, at a block's edges, in a short last block.
    #[test]
    fn the_first_non_finite_value_is_found_in_any_block() {
        let v: Vec<f32> = (0..10_001).map(|i| i as f32 * 0.5 - 700.0).collect();
        assert!(check_finite("w", &v).is_ok());
        for (at, bad) in [
            (0, f32::NAN),
            (4095, f32::NEG_INFINITY),
            (4096, f32::INFINITY),
            (5000, f32::NAN),
            (10_000, f32::INFINITY),
        ] {
            let mut w = v.clone();
            w[at] = bad;
            w[(at + 7).min(10_000)] = f32::NAN; // a later one is not reported
            match check_finite("w", &w) {
                Err(CheckpointError::NonFinite { tensor, index, .. }) => {
                    assert_eq!((tensor, index), ("w", at))
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(check_finite("w", &[]).is_ok());
    }

    #[test]
    fn nan_weight_is_reported_with_its_tensor() {
        let ck = Checkpoint::random(tiny_config(true), 1).unwrap();
        let mut bytes = ck.to_bytes();
        // First element of wq: after the header, the embedding (10*8) and rms_att (2*8).
        let off = HEADER_BYTES + (10 * 8 + 2 * 8) * 4;
        bytes[off..off + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        match Checkpoint::from_bytes(&bytes).unwrap_err() {
            CheckpointError::NonFinite { tensor, index, .. } => {
                assert_eq!((tensor, index), ("wq", 0))
            }
            e => panic!("unexpected {e}"),
        }
    }

    fn shared(bytes: Vec<u8>) -> SharedBytes {
        std::sync::Arc::new(bytes)
    }

    fn matrices_shared(w: &TransformerWeights, c: &Config) -> Vec<bool> {
        w.matrices(c)
            .iter()
            .map(|(_, t, _)| matches!(t, Tensor::F32(f) if f.is_shared()))
            .collect()
    }

    /// The file's bytes used in place give the checkpoint its bytes give when read: every
    /// matrix a view into those bytes (no copy), the same values and the same file written
    /// back; at an address that is not 4-byte aligned the floats are copied, still equal.
    #[test]
    fn a_checkpoint_in_shared_bytes_is_the_same_and_its_matrices_are_views() {
        for untied in [false, true] {
            let ck = Checkpoint::random(tiny_config(!untied), 5).unwrap();
            let bytes = ck.to_bytes();
            let read = Checkpoint::from_bytes(&bytes).unwrap();
            let s = Checkpoint::from_shared(shared(bytes.clone()), Budget::default()).unwrap();
            assert_eq!(s.config, read.config);
            assert_eq!(
                s.weights.matrices(&s.config),
                read.weights.matrices(&read.config)
            );
            assert_eq!(s.weights.norms(), read.weights.norms());
            assert_eq!(s.to_bytes(), bytes);
            assert!(matrices_shared(&s.weights, &s.config).iter().all(|&v| v));
            assert!(matrices_shared(&read.weights, &read.config)
                .iter()
                .all(|&v| !v));
            assert_eq!(s.weights.matrices(&s.config).len(), 8 + usize::from(untied));

            // The same file one byte into a buffer: wherever the allocation falls, one of
            // the two starts is misaligned for f32, and that one copies.
            let mut off = vec![0u8];
            off.extend_from_slice(&bytes);
            let both: Vec<SharedBytes> = vec![shared(bytes.clone()), {
                struct Tail(Vec<u8>);
                impl AsRef<[u8]> for Tail {
                    fn as_ref(&self) -> &[u8] {
                        &self.0[1..]
                    }
                }
                std::sync::Arc::new(Tail(off))
            }];
            let mut kinds = Vec::new();
            for b in both {
                let c = Checkpoint::from_shared(b, Budget::default()).unwrap();
                assert_eq!(c.to_bytes(), bytes);
                kinds.push(matrices_shared(&c.weights, &c.config)[0]);
            }
            assert_ne!(kinds[0], kinds[1], "one start is aligned, the other not");
        }
    }

    /// In shared bytes, a file's faults are found as when it is read: a NaN weight named
    /// with its tensor, a short file by both sizes, an empty one, a version-2 file read.
    #[test]
    fn shared_bytes_are_checked_as_a_read_file_is() {
        let ck = Checkpoint::random(tiny_config(true), 1).unwrap();
        let mut bytes = ck.to_bytes();
        let off = HEADER_BYTES + (10 * 8 + 2 * 8) * 4 + 4 * 3;
        bytes[off..off + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
        let b = Budget::default();
        for e in [
            Checkpoint::from_shared(shared(bytes.clone()), b).unwrap_err(),
            Checkpoint::from_bytes(&bytes).unwrap_err(),
        ] {
            match e {
                CheckpointError::NonFinite { tensor, index, .. } => {
                    assert_eq!((tensor, index), ("wq", 3))
                }
                e => panic!("unexpected {e}"),
            }
        }
        let good = ck.to_bytes();
        let cut = good[..good.len() - 8].to_vec();
        assert_eq!(
            Checkpoint::from_shared(shared(cut.clone()), b).unwrap_err(),
            Checkpoint::from_bytes(&cut).unwrap_err()
        );
        assert_eq!(
            Checkpoint::from_shared(shared(Vec::new()), b).unwrap_err(),
            CheckpointError::Empty
        );
        assert_eq!(
            Checkpoint::from_shared(shared(vec![0; 10]), b).unwrap_err(),
            CheckpointError::TooShortForHeader { len: 10 }
        );
        // A version-2 (Q8_0) file is read as `from_bytes` reads it (quantized, not viewed).
        let mut v2 = Vec::new();
        ck.write_v2(&mut v2).unwrap();
        let (s, r) = (
            Checkpoint::from_shared(shared(v2.clone()), b).unwrap(),
            Checkpoint::from_bytes(&v2).unwrap(),
        );
        assert_eq!(s.weights.precision(), Precision::Q8);
        assert_eq!(s.weights.matrices(&s.config), r.weights.matrices(&r.config));
    }

    /// A file read as a stream gives the same checkpoint as its bytes; a stream that ends
    /// before the length it was said to have (a file cut while being read) is an error
    /// naming the byte, not a short model.
    #[test]
    fn a_checkpoint_read_from_a_stream_is_the_same_and_a_cut_stream_is_an_error() {
        let ck = Checkpoint::random(tiny_config(false), 3).unwrap();
        let bytes = ck.to_bytes();
        let len = bytes.len() as u64;
        let read = Checkpoint::read_within(&mut &bytes[..], len, Budget::default()).unwrap();
        assert_eq!(read.weights.wcls, ck.weights.wcls);
        assert_eq!(read.weights.w2, ck.weights.w2);
        assert_eq!(read.to_bytes(), bytes);
        let cut = &bytes[..bytes.len() - 10];
        match Checkpoint::read_within(&mut &cut[..], len, Budget::default()) {
            Err(CheckpointError::Read { offset, .. }) => assert!(offset > HEADER_BYTES as u64),
            other => panic!("{other:?}"),
        }
    }
}
