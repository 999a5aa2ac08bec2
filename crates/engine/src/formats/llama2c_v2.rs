//! llama2.c's version-2 checkpoints: Q8_0 weights as `export.py --version 2` writes them
//! (`version2_export`, karpathy/llama2.c export.py @ d9862069) and `runq.c` reads them
//! (`read_checkpoint`, `init_quantized_tensors`, @ b233b770).
//!
//! A 256-byte header: magic `ak42` (the u32 0x616b3432, bytes `32 34 6b 61`), version 2, the
//! seven config ints (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size positive,
//! seq_len), a `shared_classifier` byte, the i32 `group_size`, zeros to byte 256. Then the
//! float32 norms (rms_att of every layer, rms_ffn of every layer, rms_final), then each
//! matrix of each layer as its int8 values followed by its float32 group scales, in the
//! order token embedding, wq, wk, wv, wo, w1, w2, w3 (every layer of one before the next),
//! and the classifier when it is not shared. Groups run over each layer's flattened matrix
//! (`quantize_q80` reshapes it to (-1, group_size)), so they may straddle rows; `quant`
//! computes with them as they are.
//!
//! The reader is as strict as the version-0 one: magic, version, flag byte, a group size
//! that divides every matrix, the exact file size, finite norms and scales, each a typed
//! error; nothing is allocated before the header and the size have been checked.

use crate::budget::{Budget, Footprint};
use crate::config::{Config, ConfigError};
use crate::formats::llama2c::{read_up_to, CheckpointError, TensorReader};
use crate::quant::{Activations, Precision, QTensor, Tensor};
use crate::units::thousands;
use crate::weights::Checkpoint;
use crate::weights::TransformerWeights;

/// `ak42` read as a little-endian u32.
pub const V2_MAGIC: u32 = 0x616b_3432;
/// The version-2 header's size.
pub const V2_HEADER_BYTES: usize = 256;
/// Bytes of the header that carry values (magic, version, 7 ints, flag, group size).
const V2_FIELDS: usize = 4 + 4 + 28 + 1 + 4;

/// Whether a file starts with the version-2 magic.
pub fn is_v2(head: &[u8]) -> bool {
    head.get(..4) == Some(&V2_MAGIC.to_le_bytes()[..])
}

/// The header of a version-2 file: the config and the group size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct V2Header {
    pub config: Config,
    pub group: usize,
}

impl V2Header {
    /// Parses and checks the header fields (not the file's size).
    pub fn parse(head: &[u8]) -> Result<V2Header, CheckpointError> {
        let Some(h) = head.get(..V2_FIELDS) else {
            return Err(CheckpointError::TooShortForHeader { len: head.len() });
        };
        let int = |at: usize| i32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        let version = int(4);
        if version != 2 {
            return Err(CheckpointError::UnsupportedVersion { version });
        }
        let mut ints = [0i32; 7];
        for (i, v) in ints.iter_mut().enumerate() {
            *v = int(8 + 4 * i);
        }
        if ints[5] < 0 {
            // Version 2 marks sharing with its own byte; the vocabulary size is positive.
            return Err(ConfigError::OutOfRange {
                field: "vocab_size",
                value: ints[5] as i64,
                rule: "positive in a version-2 header".into(),
            }
            .into());
        }
        let mut config = Config::from_header(ints)?;
        config.shared_classifier = match h[36] {
            0 => false,
            1 => true,
            value => return Err(CheckpointError::BadSharedFlag { value }),
        };
        let group = int(37);
        if group < 1 {
            return Err(CheckpointError::GroupSize {
                group: group as i64,
            });
        }
        let header = V2Header {
            config,
            group: group as usize,
        };
        for (tensor, _, len) in header.matrices() {
            if !len.is_multiple_of(header.group) {
                return Err(CheckpointError::GroupDoesNotDivide {
                    tensor,
                    len,
                    group: header.group,
                });
            }
        }
        Ok(header)
    }

    /// Each matrix in file order: name, blocks (layers), weights per block.
    fn matrices(&self) -> Vec<(&'static str, usize, usize)> {
        let c = &self.config;
        let (d, h, l, v, kv) = (c.dim, c.hidden_dim, c.n_layers, c.vocab_size, c.kv_dim());
        let mut m = vec![
            ("token_embedding", 1, v * d),
            ("wq", l, d * d),
            ("wk", l, kv * d),
            ("wv", l, kv * d),
            ("wo", l, d * d),
            ("w1", l, h * d),
            ("w2", l, d * h),
            ("w3", l, h * d),
        ];
        if !c.shared_classifier {
            m.push(("wcls", 1, v * d));
        }
        m
    }

    /// The file size this header implies (checked arithmetic: None when over 2^64).
    pub fn expected_file_bytes(&self) -> Option<u64> {
        let c = &self.config;
        let norms = (2 * c.n_layers as u64 + 1)
            .checked_mul(c.dim as u64)?
            .checked_mul(4)?;
        let mut total = (V2_HEADER_BYTES as u64).checked_add(norms)?;
        for (_, blocks, len) in self.matrices() {
            let per = (len as u64).checked_add((len / self.group) as u64 * 4)?;
            total = total.checked_add(per.checked_mul(blocks as u64)?)?;
        }
        Some(total)
    }

    /// The 256 header bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(V2_HEADER_BYTES);
        out.extend_from_slice(&V2_MAGIC.to_le_bytes());
        out.extend_from_slice(&2i32.to_le_bytes());
        let mut ints = self.config.header();
        ints[5] = ints[5].abs();
        for v in ints {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.push(self.config.shared_classifier as u8);
        out.extend_from_slice(&(self.group as i32).to_le_bytes());
        out.resize(V2_HEADER_BYTES, 0);
        out
    }
}

/// Checks a version-2 header against the file's length and the budget (the float32
/// footprint: a bound the quantized model stays under).
pub(crate) fn check_v2_header(
    head: &[u8],
    file_len: u64,
    budget: Budget,
) -> Result<V2Header, CheckpointError> {
    let header = V2Header::parse(head)?;
    Footprint::of(&header.config)?.check(&header.config, budget)?;
    let expected = header.expected_file_bytes();
    if expected != Some(file_len) {
        return Err(CheckpointError::WrongSize {
            actual: thousands(file_len),
            expected: expected.map_or_else(|| "more than 2^64".into(), thousands),
        });
    }
    Ok(header)
}

impl<R: std::io::Read> TensorReader<'_, R> {
    /// `blocks` Q8 matrices of `len` weights, each its int8 values then its scales.
    fn take_q8(
        &mut self,
        name: &'static str,
        blocks: usize,
        len: usize,
        group: usize,
    ) -> Result<Tensor, CheckpointError> {
        let mut q = QTensor {
            precision: Precision::Q8,
            group,
            blocks,
            block_len: len,
            values: Vec::new(),
            scales: Vec::new(),
            activations: Activations::default(),
        };
        let (vb, ng) = (q.block_value_bytes(), q.groups_per_block());
        q.values = vec![0u8; blocks * vb];
        q.scales = Vec::with_capacity(blocks * ng);
        for b in 0..blocks {
            self.fill(&mut q.values[b * vb..b * vb + len])?;
            let scales = self.take(name, ng)?;
            q.scales.extend(scales);
        }
        Ok(Tensor::Quant(q))
    }
}

impl Checkpoint {
    /// Reads the rest of a version-2 file whose first `HEADER_BYTES` are `head`.
    pub(crate) fn read_v2(
        reader: &mut impl std::io::Read,
        head: &[u8],
        file_len: u64,
        budget: Budget,
    ) -> Result<Checkpoint, CheckpointError> {
        let mut full = [0u8; V2_HEADER_BYTES];
        full[..head.len()].copy_from_slice(head);
        let got =
            read_up_to(reader, &mut full[head.len()..]).map_err(|e| CheckpointError::Read {
                offset: head.len() as u64,
                error: e.to_string(),
            })?;
        let header = check_v2_header(&full[..head.len() + got], file_len, budget)?;
        if head.len() + got < V2_HEADER_BYTES {
            return Err(CheckpointError::TooShortForHeader {
                len: head.len() + got,
            });
        }
        let mut r = TensorReader {
            reader,
            offset: V2_HEADER_BYTES as u64,
        };
        let (c, g) = (header.config, header.group);
        let (l, d) = (c.n_layers, c.dim);
        let rms_att = r.take("rms_att", l * d)?;
        let rms_ffn = r.take("rms_ffn", l * d)?;
        let rms_final = r.take("rms_final", d)?;
        let mut m = header
            .matrices()
            .into_iter()
            .map(|(name, blocks, len)| r.take_q8(name, blocks, len, g))
            .collect::<Result<Vec<Tensor>, _>>()?
            .into_iter();
        let mut next = || m.next().expect("one tensor per matrix");
        Ok(Checkpoint {
            config: c,
            weights: TransformerWeights {
                token_embedding: next(),
                rms_att,
                wq: next(),
                wk: next(),
                wv: next(),
                wo: next(),
                rms_ffn,
                w1: next(),
                w2: next(),
                w3: next(),
                rms_final,
                wcls: (!c.shared_classifier).then(next),
                qkv_bias: None,
                rope_factors: None,
            },
        })
    }

    /// Writes this checkpoint as a llama2.c version-2 (Q8_0) file, quantizing first unless
    /// its matrices are already Q8 (`export.py`'s group size: 64, halved until it divides
    /// dim). The bytes are those `export.py --version 2` writes for the same weights.
    pub fn write_v2(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let c = &self.config;
        let q8;
        let w = if self.weights.precision() == Precision::Q8 {
            &self.weights
        } else {
            q8 = self.weights.at(c, Precision::Q8);
            &q8
        };
        let group = match &w.wq {
            Tensor::Quant(q) => q.group,
            _ => unreachable!("quantized above"),
        };
        out.write_all(&V2Header { config: *c, group }.to_bytes())?;
        let floats = |out: &mut dyn std::io::Write, v: &[f32]| -> std::io::Result<()> {
            for x in v {
                out.write_all(&x.to_le_bytes())?;
            }
            Ok(())
        };
        for (_, v) in w.norms() {
            floats(out, v)?;
        }
        for (_, t, _) in w.matrices(c) {
            let Tensor::Quant(q) = t else {
                unreachable!("every matrix is Q8")
            };
            let (vb, ng) = (q.block_value_bytes(), q.groups_per_block());
            for b in 0..q.blocks {
                out.write_all(&q.values[b * vb..b * vb + q.block_len])?;
                floats(out, &q.scales[b * ng..(b + 1) * ng])?;
            }
        }
        Ok(())
    }
}
