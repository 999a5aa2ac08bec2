//! The llama2.c checkpoint: a `Config` (`config.rs`) and its `TransformerWeights`
//! (`weights.rs`), loaded from bytes and validated before use. Mirrors `read_checkpoint` /
//! `memory_map_weights` in karpathy/llama2.c `run.c`
//! ("legacy v0" format: seven little-endian i32, then float32 tensors).
//!
//! Nothing here touches a file system: the caller hands over the bytes (a file read natively,
//! a `fetch` or a dropped file in the browser).

use crate::budget::{Budget, BudgetError, Footprint};
use crate::config::{Config, ConfigError};
use crate::quant::{F32s, SharedBytes, Tensor};
use crate::units::thousands;
use crate::weights::{Checkpoint, TransformerWeights};
use thiserror::Error;

/// Bytes of the header: seven little-endian i32.
pub const HEADER_BYTES: usize = 7 * 4;

/// What can be wrong with a checkpoint. Every variant names the problem in its message.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CheckpointError {
    #[error("checkpoint is empty (0 bytes)")]
    Empty,
    #[error("checkpoint is {len} bytes, shorter than the {HEADER_BYTES}-byte header")]
    TooShortForHeader { len: usize },
    #[error("file is {actual} bytes, header implies {expected}")]
    WrongSize { actual: String, expected: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
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
    #[error("tensor {tensor} has a non-finite value ({value}) at element {index}")]
    NonFinite {
        tensor: &'static str,
        index: usize,
        value: f32,
    },
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
    // NaN or ±∞); the index is sought only in a block that has one. One float at a time, a
    // 58 MB file's scan was a visible share of the CLI's start-up (BENCHMARKS.md, "Figures
    // behind the code").
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

impl Config {
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
}

impl Checkpoint {
    /// What can be known of a checkpoint from its first 28 bytes and its length, before the
    /// rest is read (the page checks a dropped file this way): the header's values, the
    /// memory the model would take against `budget`, and the file's size against the one
    /// the header implies. `head` may be the whole file or just its start. Every caller has
    /// refused an empty file already (`CheckpointError::Empty`).
    pub(crate) fn check_legacy_header(
        head: &[u8],
        file_len: u64,
        budget: Budget,
    ) -> Result<Config, CheckpointError> {
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

    /// Reads a legacy (float32) checkpoint of `file_len` bytes whose first bytes, `head`,
    /// were read already: the header checked against `budget` and `file_len` first, then
    /// each tensor read straight into its buffer, so the peak is the weights themselves, not
    /// the file and the weights.
    pub(crate) fn read_legacy(
        reader: &mut impl std::io::Read,
        head: &[u8],
        file_len: u64,
        budget: Budget,
    ) -> Result<Checkpoint, CheckpointError> {
        let config = Checkpoint::check_legacy_header(head, file_len, budget)?;
        // The size matched the header, and the budget allowed it: every tensor below fits.
        let mut r = TensorReader {
            reader,
            offset: HEADER_BYTES as u64,
        };
        let weights = Checkpoint::tensors(&config, &mut r)?;
        Ok(Checkpoint { config, weights })
    }

    /// A legacy checkpoint whose float32 tensors are views into `bytes`, the whole file
    /// (natively its mapping): the weights in memory are the file's own pages, not a copy.
    /// Checked as `read_legacy` checks a file.
    pub(crate) fn shared_legacy(
        bytes: SharedBytes,
        budget: Budget,
    ) -> Result<Checkpoint, CheckpointError> {
        let all = (*bytes).as_ref();
        let len = all.len() as u64;
        let head = &all[..all.len().min(HEADER_BYTES)];
        let config = Checkpoint::check_legacy_header(head, len, budget)?;
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
            qkv_bias: None,
            rope_factors: None,
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
            qkv_bias: None,
            rope_factors: None,
        };
        Ok(Checkpoint { config, weights })
    }
}

#[cfg(test)]
mod tests;
