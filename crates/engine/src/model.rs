//! A model ready to use: a validated checkpoint and a tokenizer that matches it, both from
//! bytes. The one place the two are checked against each other.

use crate::budget::Budget;
use crate::checkpoint::{Checkpoint, CheckpointError, Config};
use crate::forward::Transformer;
use crate::tokenizer::{Tokenizer, TokenizerError};
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    #[error("model: {0}")]
    Checkpoint(#[from] CheckpointError),
    #[error("tokenizer: {0}")]
    Tokenizer(#[from] TokenizerError),
    #[error("GGUF: {0}")]
    Gguf(#[from] crate::gguf::GgufError),
    #[error("the prompt is {tokens} tokens but the model's context holds {seq_len}")]
    PromptTooLong { tokens: usize, seq_len: usize },
}

#[derive(Debug, Clone)]
pub struct Model {
    pub transformer: Arc<Transformer>,
    pub tokenizer: Tokenizer,
}

impl Model {
    /// Validates the checkpoint, then the tokenizer, then that their vocabularies agree.
    pub fn from_bytes(checkpoint: &[u8], tokenizer: &[u8]) -> Result<Model, ModelError> {
        Model::from_bytes_within(checkpoint, tokenizer, Budget::default())
    }

    /// What can be checked of a checkpoint and a tokenizer before reading them (the page,
    /// given two dropped files): the checkpoint's header (28 bytes, or 256 for a version-2
    /// file) against `budget` and its file's length against the header, the tokenizer's
    /// length against its limit.
    pub fn check_files(
        checkpoint_head: &[u8],
        checkpoint_len: u64,
        tokenizer_len: u64,
        budget: Budget,
    ) -> Result<Config, ModelError> {
        let config = Checkpoint::check_header(checkpoint_head, checkpoint_len, budget)?;
        if tokenizer_len > crate::tokenizer::MAX_TOKENIZER_BYTES as u64 {
            return Err(TokenizerError::FileTooLarge {
                bytes: tokenizer_len,
                limit: crate::tokenizer::MAX_TOKENIZER_BYTES,
            }
            .into());
        }
        Ok(config)
    }

    /// What can be checked of a GGUF file before reading it: its length against the budget
    /// (it is read whole, then converted; the tensors are checked against the budget again).
    pub fn check_gguf_len(len: u64, budget: Budget) -> Result<(), ModelError> {
        if len > budget.0 {
            return Err(crate::gguf::GgufError::TooLarge {
                bytes: len,
                limit: budget.0,
            }
            .into());
        }
        Ok(())
    }

    /// `from_bytes` under a memory budget other than the target's default.
    pub fn from_bytes_within(
        checkpoint: &[u8],
        tokenizer: &[u8],
        budget: Budget,
    ) -> Result<Model, ModelError> {
        let checkpoint = Checkpoint::from_bytes_within(checkpoint, budget)?;
        let tokenizer = Tokenizer::from_bytes(tokenizer)?;
        Model::new(checkpoint, tokenizer)
    }

    /// `from_bytes_within` with the checkpoint read from `reader` (`len` bytes, a file):
    /// its tensors go straight into their buffers, never the whole file beside them.
    ///
    /// A GGUF file (its magic decides) is read whole and brings its own tokenizer
    /// (`tokenizer` must then be empty).
    pub fn read_within(
        checkpoint: &mut impl std::io::Read,
        len: u64,
        tokenizer: &[u8],
        budget: Budget,
    ) -> Result<Model, ModelError> {
        use std::io::Read;
        let mut magic = [0u8; 4];
        let got = crate::checkpoint::read_up_to(checkpoint, &mut magic).map_err(|e| {
            CheckpointError::Read {
                offset: 0,
                error: e.to_string(),
            }
        })?;
        if crate::gguf::Gguf::is_gguf(&magic[..got]) {
            if !tokenizer.is_empty() {
                return Err(crate::gguf::GgufError::TokenizerGiven.into());
            }
            Model::check_gguf_len(len, budget)?;
            let mut bytes = Vec::with_capacity(len as usize);
            bytes.extend_from_slice(&magic);
            checkpoint
                .read_to_end(&mut bytes)
                .map_err(|e| CheckpointError::Read {
                    offset: 4,
                    error: e.to_string(),
                })?;
            return Model::from_gguf(&bytes, budget);
        }
        let mut rest = (&magic[..got]).chain(checkpoint);
        let checkpoint = Checkpoint::read_within(&mut rest, len, budget)?;
        let tokenizer = Tokenizer::from_bytes(tokenizer)?;
        Model::new(checkpoint, tokenizer)
    }

    /// A GGUF file (llama.cpp's format): its Llama weights and the tokenizer in its
    /// metadata, the memory checked against `budget` before any tensor is converted.
    pub fn from_gguf(bytes: &[u8], budget: Budget) -> Result<Model, ModelError> {
        let file = crate::gguf::Gguf::parse(bytes)?;
        let (vocab, bos, eos) = file.vocab()?;
        let checkpoint = file.checkpoint(budget)?;
        let tokenizer = Tokenizer::from_llama2c_vocab(vocab, bos, eos)?;
        Model::new(checkpoint, tokenizer)
    }

    pub fn new(checkpoint: Checkpoint, tokenizer: Tokenizer) -> Result<Model, ModelError> {
        tokenizer.check_vocab(checkpoint.config.vocab_size)?;
        Ok(Model {
            transformer: Arc::new(Transformer::new(checkpoint)),
            tokenizer,
        })
    }

    pub fn config(&self) -> &Config {
        &self.transformer.config
    }

    /// BOS + the prompt's tokens, refused when they do not fit in the context with room for
    /// at least one generated token.
    pub fn encode_prompt(&self, text: &str) -> Result<Vec<u32>, ModelError> {
        let ids = self.tokenizer.encode(text, true)?;
        let seq_len = self.config().seq_len;
        if ids.len() >= seq_len {
            return Err(ModelError::PromptTooLong {
                tokens: ids.len(),
                seq_len,
            });
        }
        Ok(ids)
    }
}
