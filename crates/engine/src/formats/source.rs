//! What a set of model files is, told from their content: a llama2.c checkpoint and its
//! tokenizer, a GGUF file alone, or a Hugging Face `config.json` + `model.safetensors` +
//! tokenizer. A file's name is used only to name it in a message; whatever it is called, a
//! file is what its bytes say. Checking against the memory budget and loading follow in
//! `model/load.rs` ([`ModelSource::check`], [`ModelSource::load`]): the one way in for the
//! CLI, the page's worker and the tests.

use crate::formats::hf::is_safetensors;
use crate::formats::llama2c::HEADER_BYTES;
use crate::formats::{gguf, llama2c_v2};
use crate::quant::SharedBytes;
use crate::tokenizer::MAX_PIECE_BYTES;
use std::io;
use thiserror::Error;

/// Bytes of each file read to tell what it is (a `config.json` names its architecture and a
/// `tokenizer.json` its added tokens well within them).
pub const PROBE_BYTES: usize = 4096;

/// A file's bytes, read from any offset: a file on disk, memory, a file the page was given.
pub trait ByteSource {
    /// The file's length in bytes.
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reads up to `buf.len()` bytes at `offset`; 0 at the end.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// The whole file as shared bytes when it is in memory already (a mapping): a llama2.c
    /// file's float32 tensors are then used where they lie, not copied.
    fn shared(&self) -> Option<SharedBytes> {
        None
    }
}

impl ByteSource for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        read_slice(self, offset, buf)
    }
}

impl ByteSource for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        read_slice(self, offset, buf)
    }
}

/// A source lent (a reader that keeps it for a while, `hf::Weights::read_from`).
impl<T: ByteSource + ?Sized> ByteSource for &mut T {
    fn len(&self) -> u64 {
        (**self).len()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read_at(offset, buf)
    }
    fn shared(&self) -> Option<SharedBytes> {
        (**self).shared()
    }
}

/// Bytes shared with the rest of the program (natively a file's read-only mapping).
pub struct Shared(pub SharedBytes);

impl ByteSource for Shared {
    fn len(&self) -> u64 {
        (*self.0).as_ref().len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        read_slice((*self.0).as_ref(), offset, buf)
    }
    fn shared(&self) -> Option<SharedBytes> {
        Some(self.0.clone())
    }
}

/// A file on disk, its length read once when it is opened (an error then is the open's).
#[cfg(not(target_arch = "wasm32"))]
pub struct DiskFile {
    file: std::fs::File,
    len: u64,
}

#[cfg(not(target_arch = "wasm32"))]
impl DiskFile {
    pub fn open(path: &std::path::Path) -> io::Result<DiskFile> {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        Ok(DiskFile { file, len })
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl ByteSource for DiskFile {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use io::{Read, Seek};
        self.file.seek(io::SeekFrom::Start(offset))?;
        self.file.read(buf)
    }
}

/// `buf` filled from `bytes` at `offset` (0 bytes past the end): `read_at` of bytes in
/// memory.
pub(crate) fn read_slice(bytes: &[u8], offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    let from = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
    let n = buf.len().min(bytes.len() - from);
    buf[..n].copy_from_slice(&bytes[from..from + n]);
    Ok(n)
}

/// One of a model's files: its name (for messages) and its bytes.
pub struct ModelFile {
    pub name: String,
    pub bytes: Box<dyn ByteSource>,
}

impl ModelFile {
    pub fn new(name: impl Into<String>, bytes: Box<dyn ByteSource>) -> ModelFile {
        ModelFile {
            name: name.into(),
            bytes,
        }
    }

    /// A file held in memory.
    pub fn from_bytes(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> ModelFile {
        ModelFile::new(name, Box::new(bytes.into()))
    }

    pub fn len(&self) -> u64 {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its first `n` bytes (fewer if it is shorter).
    pub fn head(&mut self, n: usize) -> Result<Vec<u8>, SourceError> {
        let n = n.min(usize::try_from(self.len()).unwrap_or(usize::MAX));
        let mut buf = vec![0; n];
        let got = read_full(&mut *self.bytes, 0, &mut buf).map_err(|e| self.error(e))?;
        buf.truncate(got);
        Ok(buf)
    }

    /// The whole file in memory.
    pub fn read_all(&mut self) -> Result<Vec<u8>, SourceError> {
        let len = usize::try_from(self.len()).map_err(|_| self.error("it is too large"))?;
        let mut buf = vec![0; len];
        let got = read_full(&mut *self.bytes, 0, &mut buf).map_err(|e| self.error(e))?;
        if got < len {
            return Err(self.error(format!("it ended at byte {got} of {len}")));
        }
        Ok(buf)
    }

    fn error(&self, e: impl ToString) -> SourceError {
        SourceError::Read {
            name: self.name.clone(),
            error: e.to_string(),
        }
    }

    /// A reader from its start.
    pub fn reader(&mut self) -> SourceReader<'_> {
        SourceReader {
            source: &mut *self.bytes,
            at: 0,
        }
    }

    /// Its name without the extension a model file usually has.
    pub fn stem(&self) -> &str {
        let n = self.name.rsplit(['/', '\\']).next().unwrap_or(&self.name);
        [".bin", ".gguf", ".safetensors"]
            .iter()
            .find_map(|e| n.strip_suffix(e))
            .unwrap_or(n)
    }
}

impl std::fmt::Debug for ModelFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelFile({:?}, {} bytes)", self.name, self.len())
    }
}

pub(crate) fn read_full(
    src: &mut dyn ByteSource,
    offset: u64,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match src.read_at(offset + got as u64, &mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A file read as a stream from its start.
pub struct SourceReader<'a> {
    source: &'a mut dyn ByteSource,
    at: u64,
}

impl io::Read for SourceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.source.read_at(self.at, buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// What a set of files is: which file plays which part (indices into the files given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// llama2.c's `.bin` (legacy float32, or version 2 with Q8_0 groups) and its tokenizer
    /// (`tokenizer.bin`, or a `tokenizer.json`).
    Llama2c { checkpoint: usize, tokenizer: usize },
    /// llama.cpp's GGUF, tokenizer inside.
    Gguf { file: usize },
    /// Hugging Face's `config.json` + `model.safetensors` + tokenizer (`tokenizer.json`, or
    /// a llama2.c `tokenizer.bin`).
    HuggingFace {
        config: usize,
        weights: usize,
        tokenizer: usize,
    },
}

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looks {
    Gguf,
    Safetensors,
    /// A llama2.c checkpoint: version 2's magic, or a legacy header that implies the file's
    /// own length.
    Checkpoint,
    /// A Hugging Face `config.json`.
    Config,
    /// A `tokenizer.json` (Hugging Face tokenizers).
    TokenizerJson,
    /// A llama2.c `tokenizer.bin`: its first entries read as (score, length, piece).
    TokenizerBin,
    /// JSON that is neither.
    OtherJson,
    Unknown,
}

impl Looks {
    /// From a file's first bytes (up to [`PROBE_BYTES`]) and its length.
    pub fn of(head: &[u8], len: u64) -> Looks {
        if gguf::Gguf::is_gguf(head) {
            return Looks::Gguf;
        }
        if is_safetensors(head) {
            return Looks::Safetensors;
        }
        if llama2c_v2::is_v2(head) || legacy_length_matches(head, len) {
            return Looks::Checkpoint;
        }
        if head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
            let text = String::from_utf8_lossy(head);
            let has = |keys: &[&str]| keys.iter().any(|k| text.contains(&format!("\"{k}\"")));
            return if has(&["added_tokens", "pre_tokenizer", "normalizer", "truncation"]) {
                Looks::TokenizerJson
            } else if has(&["architectures", "model_type", "hidden_size"]) {
                Looks::Config
            } else {
                Looks::OtherJson
            };
        }
        if llama2c_tokenizer_entries(head, len) {
            return Looks::TokenizerBin;
        }
        Looks::Unknown
    }

    fn is_tokenizer(self) -> bool {
        matches!(self, Looks::TokenizerJson | Looks::TokenizerBin)
    }

    /// What it is, in a message.
    fn label(self) -> &'static str {
        match self {
            Looks::Gguf => "a GGUF file",
            Looks::Safetensors => "a safetensors file",
            Looks::Checkpoint => "a llama2.c checkpoint",
            Looks::Config => "a config.json",
            Looks::TokenizerJson => "a tokenizer.json",
            Looks::TokenizerBin => "a llama2.c tokenizer",
            Looks::OtherJson => "JSON that is neither a config.json nor a tokenizer.json",
            Looks::Unknown => "not a file this reader knows",
        }
    }
}

/// A legacy llama2.c header whose shape implies exactly `len` bytes (shared classifier or
/// not): the one test that tells a checkpoint from any other file.
fn legacy_length_matches(head: &[u8], len: u64) -> bool {
    let Some(h) = head.get(..HEADER_BYTES) else {
        return false;
    };
    let mut header = [0i32; 7];
    for (v, b) in header.iter_mut().zip(h.chunks_exact(4)) {
        *v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    crate::config::Config::from_header(header)
        .ok()
        .and_then(|c| c.expected_file_bytes())
        == Some(len)
}

/// Whether the head reads as a llama2.c `tokenizer.bin`: a maximum piece length (1 to
/// [`MAX_PIECE_BYTES`]) and then entries of a finite score, a length from 1 to that maximum
/// and the piece: at least [`TOKENIZER_ENTRIES`] of them, or every entry of a shorter file to its
/// last byte. A checkpoint's header holds fewer than that, and its float weights read as
/// lengths are far larger.
fn llama2c_tokenizer_entries(head: &[u8], len: u64) -> bool {
    let word = |at: usize| head.get(at..at + 4).map(|b| [b[0], b[1], b[2], b[3]]);
    let Some(max) = word(0).map(u32::from_le_bytes) else {
        return false;
    };
    if max == 0 || max as usize > MAX_PIECE_BYTES {
        return false;
    }
    let (mut at, mut entries) = (4usize, 0);
    while let (Some(score), Some(n)) = (word(at), word(at + 4)) {
        let (score, n) = (f32::from_le_bytes(score), i32::from_le_bytes(n));
        // No piece is empty: zeros (a file of them, a checkpoint's zero weights) are none.
        if !score.is_finite() || n <= 0 || n as u32 > max {
            return false;
        }
        at += 8 + n as usize;
        if at > head.len() {
            break;
        }
        entries += 1;
    }
    entries >= TOKENIZER_ENTRIES || (entries >= 1 && at as u64 == len)
}

/// The most files a model has (a Hugging Face set): more are refused before any is read.
const MAX_FILES: usize = 3;

/// Entries of a `tokenizer.bin` read to tell it (a vocabulary has hundreds).
const TOKENIZER_ENTRIES: usize = 8;

/// Why a set of files is not one model.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SourceError {
    #[error("no file was given")]
    NoFiles,
    #[error("{count} files were given: a model is one file (GGUF), two (a llama2.c checkpoint and its tokenizer) or three (a Hugging Face model.safetensors, config.json and tokenizer)")]
    TooManyFiles { count: usize },
    #[error("{name} could not be read: {error}")]
    Read { name: String, error: String },
    #[error("{name} is a llama2.c checkpoint: give its tokenizer too (tokenizer.bin, or tokenizer.json)")]
    CheckpointAlone { name: String },
    #[error("{name} is not a GGUF file: it does not start with GGUF's magic bytes \"GGUF\" (it starts with {start:?})")]
    NotGguf { name: String, start: String },
    #[error("{name} is a GGUF file, which carries its own tokenizer: give it alone")]
    GgufNotAlone { name: String },
    #[error("{name} is a Hugging Face checkpoint: give it with its config.json and its tokenizer (tokenizer.json, or a llama2.c tokenizer.bin), the three together")]
    HfIncomplete { name: String },
    #[error("{name} is a tokenizer: give the model's checkpoint with it")]
    TokenizerAlone { name: String },
    #[error("these files are not one model ({found}): give a GGUF file alone, a llama2.c checkpoint (.bin) with its tokenizer, or a Hugging Face model.safetensors with its config.json and tokenizer.json")]
    NotAModel { found: String },
}

impl ModelSource {
    /// Which file is which, from each one's first [`PROBE_BYTES`]. A set that is not one
    /// model is refused with what each file was taken for.
    pub fn identify(files: &mut [ModelFile]) -> Result<ModelSource, SourceError> {
        if files.len() > MAX_FILES {
            return Err(SourceError::TooManyFiles { count: files.len() });
        }
        let mut looks = Vec::with_capacity(files.len());
        let mut heads = Vec::with_capacity(files.len());
        for f in files.iter_mut() {
            let head = f.head(PROBE_BYTES)?;
            looks.push(Looks::of(&head, f.len()));
            heads.push(head);
        }
        let name = |i: usize| files[i].name.clone();
        let find = |want: Looks| looks.iter().position(|&l| l == want);
        if files.is_empty() {
            return Err(SourceError::NoFiles);
        }
        if let Some(g) = find(Looks::Gguf) {
            return match files.len() {
                1 => Ok(ModelSource::Gguf { file: g }),
                _ => Err(SourceError::GgufNotAlone { name: name(g) }),
            };
        }
        // Three files with a config.json or a safetensors file among them: a Hugging Face
        // set, the one file nothing else claims taking the part left (a damaged file: its
        // parser then says what is wrong with it).
        if files.len() == 3 && (find(Looks::Config).is_some() || find(Looks::Safetensors).is_some())
        {
            if let Some(source) = hf_parts(&looks) {
                return Ok(source);
            }
        }
        if let Some(w) = find(Looks::Safetensors) {
            let config = find(Looks::Config);
            let tokenizer = looks.iter().position(|l| l.is_tokenizer());
            return match (config, tokenizer, files.len()) {
                (Some(config), Some(tokenizer), 3) => Ok(ModelSource::HuggingFace {
                    config,
                    weights: w,
                    tokenizer,
                }),
                _ => Err(SourceError::HfIncomplete { name: name(w) }),
            };
        }
        match files.len() {
            1 => Err(match looks[0] {
                _ if files[0].name.to_ascii_lowercase().ends_with(".gguf") => {
                    SourceError::NotGguf {
                        name: name(0),
                        start: String::from_utf8_lossy(&heads[0][..heads[0].len().min(4)]).into(),
                    }
                }
                l if l.is_tokenizer() => SourceError::TokenizerAlone { name: name(0) },
                Looks::Checkpoint | Looks::Unknown => {
                    SourceError::CheckpointAlone { name: name(0) }
                }
                _ => not_a_model(files, &looks),
            }),
            2 => {
                // The checkpoint is the one whose header implies its length, else the one
                // that is not a tokenizer (a damaged checkpoint: its check says what is
                // wrong).
                let pair = match (looks[0], looks[1]) {
                    (Looks::Checkpoint, t) if t != Looks::Checkpoint => Some((0, 1)),
                    (t, Looks::Checkpoint) if t != Looks::Checkpoint => Some((1, 0)),
                    (a, b) if b.is_tokenizer() && !a.is_tokenizer() => Some((0, 1)),
                    (a, b) if a.is_tokenizer() && !b.is_tokenizer() => Some((1, 0)),
                    _ => None,
                };
                match pair {
                    Some((checkpoint, tokenizer))
                        if !looks[checkpoint].is_json()
                            && (looks[tokenizer].is_tokenizer()
                                || looks[tokenizer] == Looks::Unknown) =>
                    {
                        Ok(ModelSource::Llama2c {
                            checkpoint,
                            tokenizer,
                        })
                    }
                    _ => Err(not_a_model(files, &looks)),
                }
            }
            _ => Err(not_a_model(files, &looks)),
        }
    }
}

impl Looks {
    fn is_json(self) -> bool {
        matches!(
            self,
            Looks::Config | Looks::TokenizerJson | Looks::OtherJson
        )
    }
}

/// The parts of three files as a Hugging Face set: those told by content, and the one left
/// over (if one is) in the one part left, when it is nothing else.
fn hf_parts(looks: &[Looks]) -> Option<ModelSource> {
    let only = |want: &dyn Fn(Looks) -> bool| {
        let mut it = (0..looks.len()).filter(|&i| want(looks[i]));
        match (it.next(), it.next()) {
            (Some(i), None) => Some(i),
            _ => None,
        }
    };
    let mut config = only(&|l| l == Looks::Config);
    let mut weights = only(&|l| l == Looks::Safetensors);
    let mut tokenizer = only(&|l: Looks| l.is_tokenizer());
    let left: Vec<usize> = (0..looks.len())
        .filter(|i| ![config, weights, tokenizer].contains(&Some(*i)))
        .collect();
    let unclaimed = |i: usize| {
        !looks[i].is_tokenizer()
            && !matches!(
                looks[i],
                Looks::Gguf | Looks::Config | Looks::Safetensors | Looks::Checkpoint
            )
    };
    match (config, weights, tokenizer, &left[..]) {
        (Some(_), Some(_), Some(_), []) => {}
        (None, Some(_), Some(_), &[l]) if unclaimed(l) => config = Some(l),
        (Some(_), None, Some(_), &[l]) if unclaimed(l) => weights = Some(l),
        (Some(_), Some(_), None, &[l]) if unclaimed(l) => tokenizer = Some(l),
        _ => return None,
    }
    Some(ModelSource::HuggingFace {
        config: config?,
        weights: weights?,
        tokenizer: tokenizer?,
    })
}

fn not_a_model(files: &[ModelFile], looks: &[Looks]) -> SourceError {
    let found = files
        .iter()
        .zip(looks)
        .map(|(f, l)| format!("{} is {}", f.name, l.label()))
        .collect::<Vec<_>>()
        .join(", ");
    SourceError::NotAModel { found }
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
