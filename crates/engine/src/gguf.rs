//! GGUF, llama.cpp's model format (version 3; `ggml/include/gguf.h`, `docs/gguf.md` in
//! ggml-org/ggml): the magic "GGUF", the version (u32), the tensor count and the metadata
//! count (u64), the metadata as typed key/values (a string is a u64 length and its bytes,
//! an array its element type, a u64 count and the elements), the tensor table (name, u32
//! n_dims, u64 dims innermost first, u32 type, u64 offset into the data), then the data at
//! the next multiple of `general.alignment` (default 32).
//!
//! The reader is small and strict: every count and length is checked against the bytes
//! left before anything is allocated, every offset against the data, every tensor's size
//! against its type's block size. Llama-architecture models (`general.architecture =
//! llama`) are mapped onto our [`Checkpoint`]: their tensors in F32 or F16 (converted to
//! f32), Q8_0 or Q4_0 (kept: their 32-weight blocks are our Q8 and Q4 groups, the scale
//! f16 → f32 exactly); llama.cpp keeps Q and K in the interleaved-pair RoPE order of Meta's
//! and llama2.c's weights (its converter permutes Hugging Face's rotate-half order back),
//! so no permutation is needed. The tokenizer comes from the metadata
//! (`tokenizer.ggml.model = llama`: SentencePiece pieces with "▁", scores) as a llama2.c
//! vocabulary. Anything else is an error that names it.

use crate::budget::{Budget, Footprint};
use crate::checkpoint::{Checkpoint, CheckpointError, Config, TransformerWeights};
use crate::quant::{Precision, QTensor, Tensor};

/// Weights in a Q8_0 or Q4_0 block (ggml's QK8_0, QK4_0): our groups of 32.
const GGML_BLOCK: usize = 32;
use crate::tokenizer::Llama2cVocab;
use thiserror::Error;

/// What can go wrong reading a GGUF file.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GgufError {
    #[error("not a GGUF file: it starts with {found:?}, not \"GGUF\"")]
    Magic { found: String },
    #[error("GGUF version {0} is not supported (version 3 is; 2 is read as 3)")]
    Version(u32),
    #[error("the GGUF file ends at byte {len} inside {what} (at byte {at})")]
    Truncated { what: String, at: u64, len: u64 },
    #[error("{what} = {value} cannot fit in a file of {len} bytes")]
    Count { what: String, value: u64, len: u64 },
    #[error("metadata {key:?} has type {kind}, which GGUF does not define")]
    ValueType { key: String, kind: u32 },
    #[error("metadata {key:?}: {why}")]
    Value { key: String, why: String },
    #[error("the metadata lacks {0:?}")]
    Missing(String),
    #[error("tensor {name:?}: {why}")]
    Tensor { name: String, why: String },
    #[error("tensor {name:?} has type {kind}, which this reader does not load (F32, F16, Q8_0 and Q4_0 are)")]
    TensorType { name: String, kind: String },
    #[error("general.architecture is {0:?}; only \"llama\" models are read")]
    Architecture(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("the GGUF file is {bytes} bytes, over the memory budget of {limit} bytes (it is read whole, then converted)")]
    TooLarge { bytes: u64, limit: u64 },
    #[error("a GGUF file carries its own tokenizer: give it alone")]
    TokenizerGiven,
    #[error("the model's tensors are missing {0:?}")]
    MissingTensor(String),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(String),
    Array(Vec<Value>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Value {
    /// As an unsigned integer (any integer type, non-negative).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v as u64),
            Value::U16(v) => Some(v as u64),
            Value::U32(v) => Some(v as u64),
            Value::U64(v) => Some(v),
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v as f64),
            Value::F64(v) => Some(v),
            _ => self.as_u64().map(|v| v as f64),
        }
    }
}

/// ggml's tensor types this reader knows by name (`ggml.h`, `enum ggml_type`).
const TYPE_NAMES: [(u32, &str); 31] = [
    (0, "F32"),
    (1, "F16"),
    (2, "Q4_0"),
    (3, "Q4_1"),
    (6, "Q5_0"),
    (7, "Q5_1"),
    (8, "Q8_0"),
    (9, "Q8_1"),
    (10, "Q2_K"),
    (11, "Q3_K"),
    (12, "Q4_K"),
    (13, "Q5_K"),
    (14, "Q6_K"),
    (15, "Q8_K"),
    (16, "IQ2_XXS"),
    (17, "IQ2_XS"),
    (18, "IQ3_XXS"),
    (19, "IQ1_S"),
    (20, "IQ4_NL"),
    (21, "IQ3_S"),
    (22, "IQ2_S"),
    (23, "IQ4_XS"),
    (24, "I8"),
    (25, "I16"),
    (26, "I32"),
    (27, "I64"),
    (28, "F64"),
    (29, "IQ1_M"),
    (30, "BF16"),
    (34, "TQ1_0"),
    (35, "TQ2_0"),
];

fn type_name(kind: u32) -> String {
    TYPE_NAMES
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or_else(|| format!("{kind} (unknown)"), |(_, n)| n.to_string())
}

/// The tensor types read: (type id, weights a block, bytes a block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    F32,
    F16,
    Q8_0,
    Q4_0,
}

impl Kind {
    fn of(kind: u32) -> Option<Kind> {
        Some(match kind {
            0 => Kind::F32,
            1 => Kind::F16,
            8 => Kind::Q8_0,
            2 => Kind::Q4_0,
            _ => return None,
        })
    }

    /// (weights a block, bytes a block)
    fn block(self) -> (u64, u64) {
        match self {
            Kind::F32 => (1, 4),
            Kind::F16 => (1, 2),
            Kind::Q8_0 => (32, 34),
            Kind::Q4_0 => (32, 18),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::F32 => "F32",
            Kind::F16 => "F16",
            Kind::Q8_0 => "Q8_0",
            Kind::Q4_0 => "Q4_0",
        }
    }
}

/// One entry of the tensor table.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    /// innermost first (a matrix's row length, then its rows)
    pub dims: Vec<u64>,
    pub kind: Kind,
    /// from the start of the data section
    pub offset: u64,
    pub bytes: u64,
}

impl TensorInfo {
    pub fn elements(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// A parsed GGUF file: its metadata and tensor table over its bytes.
#[derive(Debug)]
pub struct Gguf<'a> {
    pub version: u32,
    pub metadata: Vec<(String, Value)>,
    pub tensors: Vec<TensorInfo>,
    data: &'a [u8],
}

/// Longest key or tensor name (gguf.h: GGUF_MAX_NAME... keys are short; names 64 in ggml).
const MAX_NAME: u64 = 1 << 16;
/// Deepest array nesting read.
const MAX_DEPTH: usize = 2;
/// Most dimensions of a tensor (ggml's GGML_MAX_DIMS).
const MAX_DIMS: u32 = 4;
/// Most metadata values in all arrays together: a 256k-token vocabulary's tokens, scores,
/// types and merges fit; a parsed value takes up to 32 bytes where the file spends 1, so this
/// bounds what a small hostile file can make us allocate (128 MiB).
pub const MAX_VALUES: u64 = 1 << 22;

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    /// array elements parsed so far
    values: u64,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> u64 {
        (self.bytes.len() - self.at) as u64
    }

    fn truncated(&self, what: &dyn Fn() -> String) -> GgufError {
        GgufError::Truncated {
            what: what(),
            at: self.at as u64,
            len: self.bytes.len() as u64,
        }
    }

    fn take(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<&'a [u8], GgufError> {
        if n > self.left() {
            return Err(self.truncated(what));
        }
        let s = &self.bytes[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[u8; N], GgufError> {
        let s = self.take(N as u64, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32, GgufError> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &dyn Fn() -> String) -> Result<u64, GgufError> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// A count of items of at least `min_bytes` each, checked against the bytes left.
    fn count(&mut self, min_bytes: u64, what: &dyn Fn() -> String) -> Result<u64, GgufError> {
        let n = self.u64(what)?;
        let need = n.saturating_mul(min_bytes.max(1));
        if need > self.left() && need <= self.bytes.len() as u64 {
            return Err(self.truncated(what));
        }
        if need > self.left() {
            return Err(GgufError::Count {
                what: what(),
                value: n,
                len: self.bytes.len() as u64,
            });
        }
        Ok(n)
    }

    fn string(&mut self, what: &dyn Fn() -> String) -> Result<String, GgufError> {
        let n = self.u64(what)?;
        if n > self.bytes.len() as u64 {
            return Err(GgufError::Count {
                what: format!("the length of {}", what()),
                value: n,
                len: self.bytes.len() as u64,
            });
        }
        let s = self.take(n, what)?;
        String::from_utf8(s.to_vec()).map_err(|_| GgufError::Value {
            key: what(),
            why: "not UTF-8".into(),
        })
    }

    fn value(&mut self, key: &str, kind: u32, depth: usize) -> Result<Value, GgufError> {
        let what = || format!("the value of {key:?}");
        Ok(match kind {
            0 => Value::U8(self.array::<1>(&what)?[0]),
            1 => Value::I8(self.array::<1>(&what)?[0] as i8),
            2 => Value::U16(u16::from_le_bytes(self.array(&what)?)),
            3 => Value::I16(i16::from_le_bytes(self.array(&what)?)),
            4 => Value::U32(self.u32(&what)?),
            5 => Value::I32(i32::from_le_bytes(self.array(&what)?)),
            6 => Value::F32(f32::from_le_bytes(self.array(&what)?)),
            7 => match self.array::<1>(&what)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => {
                    return Err(GgufError::Value {
                        key: key.into(),
                        why: format!("a bool of {b}"),
                    })
                }
            },
            8 => Value::Str(self.string(&what)?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(GgufError::Value {
                        key: key.into(),
                        why: format!("arrays nested deeper than {MAX_DEPTH}"),
                    });
                }
                let inner = self.u32(&what)?;
                let min = match inner {
                    0 | 1 | 7 => 1,
                    2 | 3 => 2,
                    4..=6 => 4,
                    8..=12 => 8,
                    k => {
                        return Err(GgufError::ValueType {
                            key: key.into(),
                            kind: k,
                        })
                    }
                };
                let n = self.count(min, &|| format!("the length of {key:?}"))?;
                self.values = self.values.saturating_add(n);
                if self.values > MAX_VALUES {
                    return Err(GgufError::Value {
                        key: key.into(),
                        why: format!(
                            "more than {MAX_VALUES} array elements in the metadata (a 256k-token vocabulary needs about 1 million)"
                        ),
                    });
                }
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(self.value(key, inner, depth + 1)?);
                }
                Value::Array(v)
            }
            10 => Value::U64(self.u64(&what)?),
            11 => Value::I64(i64::from_le_bytes(self.array(&what)?)),
            12 => Value::F64(f64::from_le_bytes(self.array(&what)?)),
            k => {
                return Err(GgufError::ValueType {
                    key: key.into(),
                    kind: k,
                })
            }
        })
    }
}

impl<'a> Gguf<'a> {
    /// Whether `bytes` start like a GGUF file.
    pub fn is_gguf(bytes: &[u8]) -> bool {
        bytes.starts_with(b"GGUF")
    }

    /// Parses the header, the metadata and the tensor table, and checks every tensor's
    /// place in the data.
    pub fn parse(bytes: &'a [u8]) -> Result<Gguf<'a>, GgufError> {
        let mut c = Cursor {
            bytes,
            at: 0,
            values: 0,
        };
        let magic = c
            .take(4, &|| "the magic".into())
            .map_err(|_| GgufError::Magic {
                found: String::from_utf8_lossy(bytes).into_owned(),
            })?;
        if magic != b"GGUF" {
            return Err(GgufError::Magic {
                found: String::from_utf8_lossy(magic).into_owned(),
            });
        }
        let version = c.u32(&|| "the version".into())?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::Version(version));
        }
        // A tensor entry is at least 8 + 4 + 8 + 4 + 8 bytes, a key/value 8 + 4 + 1.
        let n_tensors = c.count(32, &|| "the tensor count".into())?;
        let n_kv = c.count(13, &|| "the metadata count".into())?;
        let mut metadata = Vec::with_capacity(n_kv as usize);
        for i in 0..n_kv {
            let key = c.string(&|| format!("metadata key {i}"))?;
            if key.len() as u64 > MAX_NAME {
                return Err(GgufError::Value {
                    key,
                    why: "a key longer than 65,536 bytes".into(),
                });
            }
            let kind = c.u32(&|| format!("the type of {key:?}"))?;
            let v = c.value(&key, kind, 0)?;
            metadata.push((key, v));
        }
        let alignment = match metadata.iter().find(|(k, _)| k == "general.alignment") {
            None => 32,
            Some((_, v)) => match v.as_u64() {
                Some(a) if a.is_power_of_two() && a <= 1 << 16 => a,
                _ => {
                    return Err(GgufError::Value {
                        key: "general.alignment".into(),
                        why: format!("{v:?} is not a power of two up to 65,536"),
                    })
                }
            },
        };
        let mut tensors = Vec::with_capacity(n_tensors as usize);
        for i in 0..n_tensors {
            let name = c.string(&|| format!("tensor {i}'s name"))?;
            let bad = |why: String| GgufError::Tensor {
                name: name.clone(),
                why,
            };
            let n_dims = c.u32(&|| format!("tensor {name:?}'s dimension count"))?;
            if !(1..=MAX_DIMS).contains(&n_dims) {
                return Err(bad(format!("{n_dims} dimensions (1 to {MAX_DIMS})")));
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for _ in 0..n_dims {
                dims.push(c.u64(&|| format!("tensor {name:?}'s dimensions"))?);
            }
            let kind = c.u32(&|| format!("tensor {name:?}'s type"))?;
            let offset = c.u64(&|| format!("tensor {name:?}'s offset"))?;
            let Some(k) = Kind::of(kind) else {
                return Err(GgufError::TensorType {
                    name,
                    kind: type_name(kind),
                });
            };
            let elements = dims
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .filter(|&e| e > 0)
                .ok_or_else(|| {
                    bad(format!(
                        "dimensions {dims:?} (none may be 0; the product must fit)"
                    ))
                })?;
            let (per, size) = k.block();
            if dims[0] % per != 0 {
                return Err(bad(format!(
                    "rows of {} weights are not whole {}-weight {} blocks",
                    dims[0],
                    per,
                    k.name()
                )));
            }
            let bytes = (elements / per)
                .checked_mul(size)
                .ok_or_else(|| bad("a size past 2^64".into()))?;
            if offset % alignment != 0 {
                return Err(bad(format!(
                    "offset {offset} is not a multiple of the alignment {alignment}"
                )));
            }
            tensors.push(TensorInfo {
                name,
                dims,
                kind: k,
                offset,
                bytes,
            });
        }
        let start = (c.at as u64).div_ceil(alignment) * alignment;
        let data = bytes.get(start as usize..).unwrap_or(&[]);
        for t in &tensors {
            let end = t.offset.checked_add(t.bytes);
            if end.is_none_or(|e| e > data.len() as u64) {
                return Err(GgufError::Tensor {
                    name: t.name.clone(),
                    why: format!(
                        "its {} bytes at offset {} run past the end of the data ({} bytes)",
                        t.bytes,
                        t.offset,
                        data.len()
                    ),
                });
            }
        }
        Ok(Gguf {
            version,
            metadata,
            tensors,
            data,
        })
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn need(&self, key: &str) -> Result<&Value, GgufError> {
        self.get(key).ok_or_else(|| GgufError::Missing(key.into()))
    }

    fn uint(&self, key: &str) -> Result<u64, GgufError> {
        let v = self.need(key)?;
        v.as_u64().ok_or_else(|| GgufError::Value {
            key: key.into(),
            why: format!("{v:?} is not a non-negative integer"),
        })
    }

    fn string(&self, key: &str) -> Result<&str, GgufError> {
        match self.need(key)? {
            Value::Str(s) => Ok(s),
            v => Err(GgufError::Value {
                key: key.into(),
                why: format!("{v:?} is not a string"),
            }),
        }
    }

    pub fn tensor(&self, name: &str) -> Result<&TensorInfo, GgufError> {
        self.tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| GgufError::MissingTensor(name.into()))
    }

    fn bytes_of(&self, t: &TensorInfo) -> &[u8] {
        &self.data[t.offset as usize..(t.offset + t.bytes) as usize]
    }

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
        Footprint::of(&c)
            .map_err(CheckpointError::from)?
            .check(&c, budget)
            .map_err(CheckpointError::from)?;
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
        let infos = mats
            .iter()
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
            .collect::<Result<Vec<_>, _>>()?;
        // One precision for every matrix (the kernels take one): a file that mixes types is
        // read as float32.
        let first = infos[0][0].kind;
        let kind = if infos.iter().flatten().all(|t| t.kind == first) {
            first
        } else {
            Kind::F32
        };
        let mut tensors = infos.iter().map(|parts| self.matrix(parts, kind));
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

    /// Float values of an F32 or F16 tensor, or a quantized one dequantized.
    fn floats_into(&self, t: &TensorInfo, out: &mut [f32]) -> Result<(), GgufError> {
        let b = self.bytes_of(t);
        match t.kind {
            Kind::F32 => {
                for (o, x) in out.iter_mut().zip(b.chunks_exact(4)) {
                    *o = f32::from_le_bytes([x[0], x[1], x[2], x[3]]);
                }
            }
            Kind::F16 => {
                for (o, x) in out.iter_mut().zip(b.chunks_exact(2)) {
                    *o = half::f16::from_le_bytes([x[0], x[1]]).to_f32();
                }
            }
            Kind::Q8_0 | Kind::Q4_0 => {
                let q = self.quantized(&[t])?;
                out.copy_from_slice(&q.dequantize());
            }
        }
        if let Some(i) = out.iter().position(|v| !v.is_finite()) {
            return Err(GgufError::Tensor {
                name: t.name.clone(),
                why: format!("a non-finite value ({}) at element {i}", out[i]),
            });
        }
        Ok(())
    }

    /// Layer matrices (or one) as one tensor of `parts.len()` blocks at precision `kind`.
    fn matrix(&self, parts: &[&TensorInfo], kind: Kind) -> Result<Tensor, GgufError> {
        match kind {
            Kind::Q8_0 | Kind::Q4_0 => Ok(Tensor::Quant(self.quantized(parts)?)),
            Kind::F32 | Kind::F16 => {
                let len = parts[0].elements() as usize;
                let mut out = vec![0.0f32; len * parts.len()];
                for (t, o) in parts.iter().zip(out.chunks_mut(len)) {
                    self.floats_into(t, o)?;
                }
                Ok(Tensor::F32(out.into()))
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

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Str(_) => "a string",
        Value::Array(_) => "an array",
        Value::Bool(_) => "a bool",
        Value::F32(_) | Value::F64(_) => "a float",
        _ => "an integer",
    }
}
