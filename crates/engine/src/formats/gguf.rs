//! GGUF, llama.cpp's model format (version 3; `ggml/include/gguf.h`, `docs/gguf.md` in
//! ggml-org/ggml): the magic "GGUF", the version (u32), the tensor count and the metadata
//! count (u64), the metadata as typed key/values (a string is a u64 length and its bytes,
//! an array its element type, a u64 count and the elements), the tensor table (name, u32
//! n_dims, u64 dims innermost first, u32 type, u64 offset into the data), then the data at
//! the next multiple of `general.alignment` (default 32).
//!
//! The reader is small and strict: every count and length is checked against the bytes
//! left before anything is allocated, every offset against the data, every tensor's size
//! against its type's block size. `gguf_llama.rs` maps a Llama model onto a `Checkpoint`.

use super::ggml_types::type_name;
pub(super) use super::gguf_data::Data;
use crate::formats::llama2c::CheckpointError;
use crate::quant::ggml::Kind;
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
    /// The file could not be read (the storage's or the browser's words).
    #[error("the GGUF file could not be read: {0}")]
    Read(String),
    #[error("tensor {name:?} has type {kind}, which this reader does not load (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K are)")]
    TensorType { name: String, kind: String },
    #[error("general.architecture is {0:?}; \"llama\" and \"qwen2\" models are read")]
    Architecture(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("the GGUF file is {bytes} bytes, over the memory budget of {limit} bytes (its weights are held at no less than that)")]
    TooLarge { bytes: u64, limit: u64 },
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

/// A parsed GGUF file: its metadata and tensor table, and where its tensors' bytes are
/// (`gguf_data.rs`).
pub struct Gguf<'a> {
    pub version: u32,
    pub metadata: Vec<(String, Value)>,
    pub tensors: Vec<TensorInfo>,
    pub(super) data: Data<'a>,
}

impl std::fmt::Debug for Gguf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gguf")
            .field("version", &self.version)
            .field("metadata", &self.metadata.len())
            .field("tensors", &self.tensors)
            .finish_non_exhaustive()
    }
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

    pub(crate) fn string(&mut self, what: &dyn Fn() -> String) -> Result<String, GgufError> {
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

/// The file's sections, in order.
impl Cursor<'_> {
    /// The magic and the version.
    fn header(&mut self) -> Result<u32, GgufError> {
        let bytes = self.bytes;
        let magic = self
            .take(4, &|| "the magic".into())
            .map_err(|_| GgufError::Magic {
                found: String::from_utf8_lossy(bytes).into_owned(),
            })?;
        if magic != b"GGUF" {
            return Err(GgufError::Magic {
                found: String::from_utf8_lossy(magic).into_owned(),
            });
        }
        let version = self.u32(&|| "the version".into())?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::Version(version));
        }
        Ok(version)
    }

    /// Metadata entry `i`: its key, its type and its value.
    fn key_value(&mut self, i: u64) -> Result<(String, Value), GgufError> {
        let key = self.string(&|| format!("metadata key {i}"))?;
        if key.len() as u64 > MAX_NAME {
            return Err(GgufError::Value {
                key,
                why: "a key longer than 65,536 bytes".into(),
            });
        }
        let kind = self.u32(&|| format!("the type of {key:?}"))?;
        let v = self.value(&key, kind, 0)?;
        Ok((key, v))
    }

    /// Tensor table entry `i`, its shape, type and offset checked (not yet against the data).
    fn tensor_info(&mut self, i: u64, alignment: u64) -> Result<TensorInfo, GgufError> {
        let name = self.string(&|| format!("tensor {i}'s name"))?;
        let bad = |why: String| GgufError::Tensor {
            name: name.clone(),
            why,
        };
        let n_dims = self.u32(&|| format!("tensor {name:?}'s dimension count"))?;
        if !(1..=MAX_DIMS).contains(&n_dims) {
            return Err(bad(format!("{n_dims} dimensions (1 to {MAX_DIMS})")));
        }
        let mut dims = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            dims.push(self.u64(&|| format!("tensor {name:?}'s dimensions"))?);
        }
        let kind = self.u32(&|| format!("tensor {name:?}'s type"))?;
        let offset = self.u64(&|| format!("tensor {name:?}'s offset"))?;
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
        Ok(TensorInfo {
            name,
            dims,
            kind: k,
            offset,
            bytes,
        })
    }
}

/// `general.alignment`, 32 when absent.
fn alignment(metadata: &[(String, Value)]) -> Result<u64, GgufError> {
    match metadata.iter().find(|(k, _)| k == "general.alignment") {
        None => Ok(32),
        Some((_, v)) => match v.as_u64() {
            Some(a) if a.is_power_of_two() && a <= 1 << 16 => Ok(a),
            _ => Err(GgufError::Value {
                key: "general.alignment".into(),
                why: format!("{v:?} is not a power of two up to 65,536"),
            }),
        },
    }
}

/// Every tensor's bytes within a data section of `len` bytes.
pub(super) fn check_in_data(tensors: &[TensorInfo], len: u64) -> Result<(), GgufError> {
    for t in tensors {
        let end = t.offset.checked_add(t.bytes);
        if end.is_none_or(|e| e > len) {
            return Err(GgufError::Tensor {
                name: t.name.clone(),
                why: format!(
                    "its {} bytes at offset {} run past the end of the data ({len} bytes)",
                    t.bytes, t.offset
                ),
            });
        }
    }
    Ok(())
}

impl<'a> Gguf<'a> {
    /// Whether `bytes` start like a GGUF file.
    pub fn is_gguf(bytes: &[u8]) -> bool {
        bytes.starts_with(b"GGUF")
    }

    /// Parses the header, the metadata and the tensor table, and checks every tensor's
    /// place in the data.
    pub fn parse(bytes: &'a [u8]) -> Result<Gguf<'a>, GgufError> {
        let (g, _) = Gguf::parse_table(bytes)?;
        if let Data::Memory(d) = g.data {
            check_in_data(&g.tensors, d.len() as u64)?;
        }
        Ok(g)
    }

    /// The first bytes of a file of `len` bytes (at least its header, metadata and tensor
    /// table), parsed without its data: what the page checks before reading the rest.
    /// Every tensor must fit in the `len` bytes.
    pub fn parse_head(head: &'a [u8], len: u64) -> Result<Gguf<'a>, GgufError> {
        let (mut g, start) = Gguf::parse_table(head)?;
        check_in_data(&g.tensors, len.saturating_sub(start))?;
        g.data = Data::None;
        Ok(g)
    }

    /// The file parsed up to its data, and where the data starts.
    pub(super) fn parse_table(bytes: &'a [u8]) -> Result<(Gguf<'a>, u64), GgufError> {
        let mut c = Cursor {
            bytes,
            at: 0,
            values: 0,
        };
        let version = c.header()?;
        // A tensor entry is at least 8 + 4 + 8 + 4 + 8 bytes, a key/value 8 + 4 + 1.
        let n_tensors = c.count(32, &|| "the tensor count".into())?;
        let n_kv = c.count(13, &|| "the metadata count".into())?;
        let mut metadata = Vec::with_capacity(n_kv as usize);
        for i in 0..n_kv {
            metadata.push(c.key_value(i)?);
        }
        let alignment = alignment(&metadata)?;
        let mut tensors = Vec::with_capacity(n_tensors as usize);
        for i in 0..n_tensors {
            tensors.push(c.tensor_info(i, alignment)?);
        }
        let start = (c.at as u64).div_ceil(alignment) * alignment;
        let data = Data::Memory(bytes.get(start as usize..).unwrap_or(&[]));
        let g = Gguf {
            version,
            metadata,
            tensors,
            data,
        };
        Ok((g, start))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn need(&self, key: &str) -> Result<&Value, GgufError> {
        self.get(key).ok_or_else(|| GgufError::Missing(key.into()))
    }

    pub(crate) fn uint(&self, key: &str) -> Result<u64, GgufError> {
        let v = self.need(key)?;
        v.as_u64().ok_or_else(|| GgufError::Value {
            key: key.into(),
            why: format!("{v:?} is not a non-negative integer"),
        })
    }

    pub(crate) fn string(&self, key: &str) -> Result<&str, GgufError> {
        match self.need(key)? {
            Value::Str(s) => Ok(s),
            v => Err(GgufError::Value {
                key: key.into(),
                why: format!("{v:?} is not a string"),
            }),
        }
    }

    /// The tensor types and how many of each, the most common first: "Q4_K ×12, Q6_K ×3".
    pub fn tensor_types(&self) -> String {
        let mut counts: Vec<(Kind, usize)> = Vec::new();
        for t in &self.tensors {
            match counts.iter_mut().find(|(k, _)| *k == t.kind) {
                Some((_, n)) => *n += 1,
                None => counts.push((t.kind, 1)),
            }
        }
        counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        let parts: Vec<String> = counts
            .iter()
            .map(|(k, n)| format!("{} ×{n}", k.name()))
            .collect();
        parts.join(", ")
    }

    pub fn tensor(&self, name: &str) -> Result<&TensorInfo, GgufError> {
        self.tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| GgufError::MissingTensor(name.into()))
    }
}

pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Str(_) => "a string",
        Value::Array(_) => "an array",
        Value::Bool(_) => "a bool",
        Value::F32(_) | Value::F64(_) => "a float",
        _ => "an integer",
    }
}

/// A shape or norm the model's metadata gives that no model can have: reported as a
/// checkpoint's would be.
impl From<crate::config::ConfigError> for GgufError {
    fn from(e: crate::config::ConfigError) -> GgufError {
        GgufError::Checkpoint(e.into())
    }
}
