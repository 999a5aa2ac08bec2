//! The one way in for a model's files: identified from their content
//! ([`ModelSource::identify`]), checked from their headers against the memory budget before
//! the bulk is read ([`ModelSource::check`]), then read and built into a [`Model`]
//! ([`ModelSource::load`]). [`Model::load`] does the three.

use super::{Format, Model, ModelError};
use crate::budget::{Budget, Footprint};
use crate::config::Config;
use crate::formats::gguf::{Gguf, GgufError};
use crate::formats::hf::{HfConfig, HfError, Weights, MAX_CONFIG_BYTES};
use crate::formats::llama2c::CheckpointError;
use crate::formats::source::{ModelFile, ModelSource};
use crate::formats::HEAD_BYTES;
use crate::tokenizer::chat::ChatError;
use crate::tokenizer::{Tokenizer, TokenizerError, MAX_TOKENIZER_BYTES};
use crate::weights::Checkpoint;

/// How much of a GGUF file is read to check it before the rest: its metadata and tensor
/// table (Gemma 3's 262,144-token vocabulary takes about 8 MB of them).
pub const GGUF_HEAD_BYTES: u64 = 32 << 20;

/// What the check found before the bulk was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The model's name: its config's (`_name_or_path`), else its file's.
    pub name: String,
    /// Its shape, where a header gives it before the tensors are read (llama2.c, Hugging
    /// Face).
    pub config: Option<Config>,
    /// A Hugging Face set's `config.json`, parsed and checked against the budget.
    hf: Option<HfConfig>,
}

impl Model {
    /// Any model's files, whatever their names: identified, checked against `budget` from
    /// their headers, then read. Nothing large is read before the check passes.
    pub fn load(files: &mut [ModelFile], budget: Budget) -> Result<Model, ModelError> {
        let source = ModelSource::identify(files)?;
        let checked = source.check(files, budget)?;
        source.load(files, checked, budget)
    }

    /// [`Model::load`] with the files in memory: (name, bytes) pairs.
    pub fn from_memory<N: Into<String>, B: AsRef<[u8]>>(
        files: impl IntoIterator<Item = (N, B)>,
        budget: Budget,
    ) -> Result<Model, ModelError> {
        let mut files: Vec<ModelFile> = files
            .into_iter()
            .map(|(name, bytes)| ModelFile::from_bytes(name, bytes.as_ref()))
            .collect();
        Model::load(&mut files, budget)
    }
}

impl ModelSource {
    /// What can be known before the bulk is read: a llama2.c header (28 bytes, or 256 for a
    /// version-2 file) against `budget` and its file's length; a GGUF file's shape, tensor
    /// table and vocabulary from its first [`GGUF_HEAD_BYTES`]; a `config.json` (read whole)
    /// and the memory it implies; every file's length against its limit.
    pub fn check(self, files: &mut [ModelFile], budget: Budget) -> Result<Checked, ModelError> {
        match self {
            ModelSource::Llama2c {
                checkpoint,
                tokenizer,
            } => {
                let f = &mut files[checkpoint];
                let head = f.head(HEAD_BYTES)?;
                let config = Checkpoint::check_header(&head, f.len(), budget)?;
                check_tokenizer_len(files[tokenizer].len())?;
                Ok(Checked {
                    name: files[checkpoint].stem().to_string(),
                    config: Some(config),
                    hf: None,
                })
            }
            ModelSource::Gguf { file } => {
                let f = &mut files[file];
                let len = f.len();
                if len > budget.0 {
                    return Err(GgufError::TooLarge {
                        bytes: len,
                        limit: budget.0,
                    }
                    .into());
                }
                let head = f.head(len.min(GGUF_HEAD_BYTES) as usize)?;
                match Gguf::parse_head(&head, len) {
                    Ok(g) => g.check(budget)?,
                    // The head ends before the tensor table does: the whole file's reading
                    // checks it all.
                    Err(GgufError::Truncated { .. } | GgufError::Count { .. })
                        if (head.len() as u64) < len => {}
                    Err(e) => return Err(e.into()),
                }
                Ok(Checked {
                    name: f.stem().to_string(),
                    config: None,
                    hf: None,
                })
            }
            ModelSource::HuggingFace {
                config,
                weights,
                tokenizer,
            } => {
                let f = &mut files[config];
                if f.len() > MAX_CONFIG_BYTES as u64 {
                    return Err(HfError::ConfigTooLarge {
                        bytes: f.len(),
                        limit: MAX_CONFIG_BYTES,
                    }
                    .into());
                }
                let json = f.read_all()?;
                let hf = HfConfig::parse(&json)?;
                Footprint::of(&hf.config)
                    .map_err(CheckpointError::from)?
                    .check(&hf.config, budget)
                    .map_err(CheckpointError::from)?;
                let len = files[weights].len();
                if len > budget.0 {
                    return Err(HfError::TooLarge {
                        bytes: len,
                        limit: budget.0,
                    }
                    .into());
                }
                check_tokenizer_len(files[tokenizer].len())?;
                Ok(Checked {
                    name: hf
                        .name
                        .clone()
                        .unwrap_or_else(|| files[weights].stem().to_string()),
                    config: Some(hf.config),
                    hf: Some(hf),
                })
            }
        }
    }

    /// Reads the files the check passed and builds the model. A llama2.c checkpoint is read
    /// tensor by tensor into its buffers (or, mapped, its float32 tensors used in place);
    /// GGUF and safetensors files tensor by tensor as each is converted (never whole).
    pub fn load(
        self,
        files: &mut [ModelFile],
        checked: Checked,
        budget: Budget,
    ) -> Result<Model, ModelError> {
        let mut m = match self {
            ModelSource::Llama2c {
                checkpoint,
                tokenizer,
            } => {
                let f = &mut files[checkpoint];
                let ck = match f.bytes.shared() {
                    Some(bytes) => Checkpoint::from_shared(bytes, budget)?,
                    None => {
                        let len = f.len();
                        Checkpoint::read_within(&mut f.reader(), len, budget)?
                    }
                };
                let t = &mut files[tokenizer];
                let tok = t.read_all()?;
                Model::new(ck, Tokenizer::from_bytes(&tok)?)?
            }
            ModelSource::Gguf { file } => {
                let f = &mut files[file];
                // The table from a 1 MiB head, grown ×4 while it runs past it (a 32,000-token
                // vocabulary's metadata is under 1 MiB, a 151,936-token one's a few).
                gguf(Gguf::read_from(&mut *f.bytes, 1 << 20)?, budget)?
            }
            ModelSource::HuggingFace {
                weights, tokenizer, ..
            } => {
                let t = &mut files[tokenizer];
                let tok = t.read_all()?;
                let Some(config) = checked.hf else {
                    return Err(ModelError::Unchecked);
                };
                let st = Weights::read_from(&mut *files[weights].bytes)?;
                hf(config, st, &tok, budget)?
            }
        };
        m.name = checked.name;
        Ok(m)
    }
}

/// A tokenizer file's length against its limit (checked before it is read).
fn check_tokenizer_len(len: u64) -> Result<(), ModelError> {
    if len > MAX_TOKENIZER_BYTES as u64 {
        return Err(TokenizerError::FileTooLarge {
            bytes: len,
            limit: MAX_TOKENIZER_BYTES,
        }
        .into());
    }
    Ok(())
}

/// A GGUF file (llama.cpp's format): its Llama weights and the tokenizer in its metadata,
/// the memory checked against `budget` before any tensor is read (each read as it is
/// converted: `gguf_data.rs`).
fn gguf(file: Gguf, budget: Budget) -> Result<Model, ModelError> {
    let vocab = file.vocab()?;
    let checkpoint = file.checkpoint(budget)?;
    let tokenizer = vocab.tokenizer()?;
    let mut m = Model::new(checkpoint, tokenizer)?;
    m.format = Format::Gguf;
    m.architecture = file.architecture()?.into();
    m.tensor_types = Some(file.tensor_types());
    m.chat_template = file
        .chat_template()
        .map_err(|e| ChatError::Unreadable(e.to_string()))
        .transpose();
    m.trained_context = Some(file.context_length()?).filter(|&n| n > m.config().seq_len as u64);
    Ok(m)
}

/// A Hugging Face Llama or Qwen2: its `config.json` (parsed, its memory checked against the
/// budget by [`ModelSource::check`]), `model.safetensors` and its tokenizer (a
/// `tokenizer.json` or a llama2.c `tokenizer.bin`, told apart by content:
/// `Tokenizer::from_bytes`). The tokenizer (small) is checked first, then the tensors are
/// converted. BOS and EOS come from the config's `bos_token_id` / `eos_token_id` when it has
/// them.
fn hf(
    hf: HfConfig,
    safetensors: Weights,
    tokenizer: &[u8],
    budget: Budget,
) -> Result<Model, ModelError> {
    let mut tokenizer = Tokenizer::from_bytes(tokenizer)?;
    tokenizer.check_vocab(hf.config.vocab_size)?;
    if let Some(b) = hf.bos {
        tokenizer.bos = b;
    }
    if let Some(e) = hf.eos {
        tokenizer.eos = e;
    }
    // Qwen2's tokenizer starts no prompt with BOS (transformers adds none; its GGUF says
    // `add_bos_token = false`).
    if hf.architecture == "Qwen2ForCausalLM" {
        tokenizer.add_bos = false;
    }
    let checkpoint = safetensors.checkpoint(&hf, budget)?;
    let mut m = Model::new(checkpoint, tokenizer)?;
    m.format = Format::Safetensors;
    m.architecture = hf.architecture;
    m.trained_context = Some(hf.trained_context).filter(|&n| n > m.config().seq_len as u64);
    Ok(m)
}
