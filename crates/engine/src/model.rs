//! A model ready to use: a validated checkpoint and a tokenizer that matches it, both from
//! bytes. The one place the two are checked against each other.

use crate::budget::{Budget, Footprint};
use crate::config::Config;
use crate::formats::llama2c::CheckpointError;
use crate::forward::Transformer;
use crate::tokenizer::chat::ChatError;
use crate::tokenizer::{Tokenizer, TokenizerError};
use crate::weights::Checkpoint;
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    #[error("model: {0}")]
    Checkpoint(#[from] CheckpointError),
    #[error("tokenizer: {0}")]
    Tokenizer(#[from] TokenizerError),
    #[error("GGUF: {0}")]
    Gguf(#[from] crate::formats::gguf::GgufError),
    #[error("Hugging Face checkpoint: {0}")]
    Hf(#[from] crate::formats::hf::HfError),
    #[error("chat: {0}")]
    Chat(#[from] ChatError),
    #[error("the prompt is empty and this model's vocabulary starts no prompt with BOS: give it some text to start from")]
    EmptyPrompt,
    #[error("the prompt is {tokens} tokens but the model's context holds {seq_len}")]
    PromptTooLong { tokens: usize, seq_len: usize },
}

#[derive(Debug, Clone)]
pub struct Model {
    pub transformer: Arc<Transformer>,
    pub tokenizer: Tokenizer,
    /// The file format it was read from.
    pub format: Format,
    /// The architecture as its files name it (`LlamaForCausalLM` or `Qwen2ForCausalLM` from
    /// a `config.json`, `llama` or `qwen2` from GGUF's `general.architecture`; llama2.c files
    /// are Llama).
    pub architecture: String,
    /// A GGUF file's tensor types and how many of each ("Q4_K ×12, Q6_K ×3, F32 ×5"): what
    /// the file holds, beside the precision the engine runs.
    pub tensor_types: Option<String>,
    /// Prompts are one user message through the chat template (the CLI's `--chat`; the page
    /// asks per prompt).
    pub chat: bool,
    /// The context its file was trained at, where longer than the context it runs at
    /// ([`crate::config::MAX_RUN_CONTEXT`]).
    pub trained_context: Option<u64>,
    /// The chat template its file carries (GGUF's `tokenizer.chat_template`), or why it
    /// cannot be used (the model runs all the same).
    pub chat_template: Option<Result<crate::tokenizer::chat::ChatTemplate, ChatError>>,
}

/// The file formats a model is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Format {
    /// llama2.c's `.bin` (legacy float32, or version 2 with Q8_0 groups) and a tokenizer.
    Llama2c,
    /// llama.cpp's GGUF, tokenizer inside.
    Gguf,
    /// Hugging Face's `config.json` + `model.safetensors` + `tokenizer.json`.
    Safetensors,
}

impl Format {
    pub fn label(self) -> &'static str {
        match self {
            Format::Llama2c => "llama2.c",
            Format::Gguf => "GGUF",
            Format::Safetensors => "safetensors",
        }
    }
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
        check_tokenizer_len(tokenizer_len)?;
        Ok(config)
    }

    /// What the first bytes of a GGUF file of `len` bytes say before the rest is read
    /// (`Gguf::check`: the shape, the tensors, the memory they will take against `budget`,
    /// the vocabulary). Ok when `head` ends before the tensor table does (the whole file's
    /// reading checks it all again).
    pub fn check_gguf_head(head: &[u8], len: u64, budget: Budget) -> Result<(), ModelError> {
        Model::check_gguf_len(len, budget)?;
        match crate::formats::gguf::Gguf::parse_head(head, len) {
            Ok(g) => Ok(g.check(budget)?),
            Err(
                crate::formats::gguf::GgufError::Truncated { .. }
                | crate::formats::gguf::GgufError::Count { .. },
            ) if (head.len() as u64) < len => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// What can be checked of a GGUF file before reading it: its length against the budget
    /// (it is read whole, then converted; the tensors are checked against the budget again).
    pub fn check_gguf_len(len: u64, budget: Budget) -> Result<(), ModelError> {
        if len > budget.0 {
            return Err(crate::formats::gguf::GgufError::TooLarge {
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
        Model::read_files(checkpoint, len, tokenizer, None, budget)
    }

    /// Any model's files: with a `config.json` (`config`), a Hugging Face checkpoint
    /// (`checkpoint` its `model.safetensors`, `tokenizer` its `tokenizer.json`); without,
    /// GGUF (by its magic, tokenizer inside) or llama2.c. GGUF and safetensors are read
    /// whole, then converted; a llama2.c file tensor by tensor.
    pub fn read_files(
        checkpoint: &mut impl std::io::Read,
        len: u64,
        tokenizer: &[u8],
        config: Option<&[u8]>,
        budget: Budget,
    ) -> Result<Model, ModelError> {
        use std::io::Read;
        let read_err = |offset: u64, e: std::io::Error| CheckpointError::Read {
            offset,
            error: e.to_string(),
        };
        let mut head = [0u8; 10];
        let got = crate::formats::llama2c::read_up_to(checkpoint, &mut head)
            .map_err(|e| read_err(0, e))?;
        let head = &head[..got];
        let whole = |checkpoint: &mut dyn Read| -> Result<Vec<u8>, ModelError> {
            let mut bytes = Vec::with_capacity(len as usize);
            bytes.extend_from_slice(head);
            checkpoint
                .read_to_end(&mut bytes)
                .map_err(|e| read_err(got as u64, e))?;
            Ok(bytes)
        };
        if let Some(config) = config {
            Model::check_hf_len(len, budget)?;
            return Model::from_hf(config, &whole(checkpoint)?, tokenizer, budget);
        }
        if crate::formats::gguf::Gguf::is_gguf(head) {
            if !tokenizer.is_empty() {
                return Err(crate::formats::gguf::GgufError::TokenizerGiven.into());
            }
            Model::check_gguf_len(len, budget)?;
            return Model::from_gguf(&whole(checkpoint)?, budget);
        }
        if crate::formats::hf::is_safetensors(head) {
            return Err(crate::formats::hf::HfError::NoConfig.into());
        }
        let mut rest = head.chain(checkpoint);
        let checkpoint = Checkpoint::read_within(&mut rest, len, budget)?;
        let tokenizer = Tokenizer::from_bytes(tokenizer)?;
        Model::new(checkpoint, tokenizer)
    }

    /// A llama2.c checkpoint whose float32 tensors stay in `checkpoint`, the whole file's
    /// bytes (natively its read-only mapping): the weights are the file's pages, not a copy
    /// (issue 11). Checked as `read_files` checks a file; GGUF and safetensors files are
    /// told by their magic as there.
    pub fn from_shared(
        checkpoint: crate::quant::SharedBytes,
        tokenizer: &[u8],
        budget: Budget,
    ) -> Result<Model, ModelError> {
        let bytes = (*checkpoint).as_ref();
        if crate::formats::gguf::Gguf::is_gguf(bytes) || crate::formats::hf::is_safetensors(bytes) {
            return Model::read_files(&mut &bytes[..], bytes.len() as u64, tokenizer, None, budget);
        }
        let checkpoint = Checkpoint::from_shared(checkpoint, budget)?;
        let tokenizer = Tokenizer::from_bytes(tokenizer)?;
        Model::new(checkpoint, tokenizer)
    }

    /// A GGUF file (llama.cpp's format): its Llama weights and the tokenizer in its
    /// metadata, the memory checked against `budget` before any tensor is converted.
    pub fn from_gguf(bytes: &[u8], budget: Budget) -> Result<Model, ModelError> {
        let file = crate::formats::gguf::Gguf::parse(bytes)?;
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
        if m.tokenizer.hf().is_none() && matches!(m.chat_template, Some(Ok(_))) {
            m.chat_template = Some(Err(ChatError::SpecialsAsText));
        }
        m.trained_context = Some(file.context_length()?).filter(|&n| n > m.config().seq_len as u64);
        Ok(m)
    }

    /// What can be checked of a safetensors file before reading it: its length against the
    /// budget (it is read whole, then converted; the tensors are checked again).
    pub fn check_hf_len(len: u64, budget: Budget) -> Result<(), ModelError> {
        if len > budget.0 {
            return Err(crate::formats::hf::HfError::TooLarge {
                bytes: len,
                limit: budget.0,
            }
            .into());
        }
        Ok(())
    }

    /// What can be checked of a Hugging Face checkpoint before its large files are read:
    /// the memory its `config.json` implies, the safetensors file's length, the tokenizer's.
    pub fn check_files_hf(
        config: &Config,
        safetensors_len: u64,
        tokenizer_len: u64,
        budget: Budget,
    ) -> Result<(), ModelError> {
        Footprint::of(config)
            .map_err(CheckpointError::from)?
            .check(config, budget)
            .map_err(CheckpointError::from)?;
        Model::check_hf_len(safetensors_len, budget)?;
        check_tokenizer_len(tokenizer_len)
    }

    /// A Hugging Face Llama: `config.json`, `model.safetensors` and its tokenizer, a
    /// `tokenizer.json` or a llama2.c `tokenizer.bin` (told apart by content:
    /// `Tokenizer::from_bytes`). The config is checked first (and the memory it implies
    /// against `budget`), then the tokenizer (small), then the tensors are converted. BOS
    /// and EOS come from the config's `bos_token_id` / `eos_token_id` when it has them.
    pub fn from_hf(
        config: &[u8],
        safetensors: &[u8],
        tokenizer: &[u8],
        budget: Budget,
    ) -> Result<Model, ModelError> {
        let hf = crate::formats::hf::HfConfig::parse(config)?;
        Footprint::of(&hf.config)
            .map_err(CheckpointError::from)?
            .check(&hf.config, budget)
            .map_err(CheckpointError::from)?;
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
        let checkpoint =
            crate::formats::hf::Weights::parse(safetensors)?.checkpoint(&hf, budget)?;
        let mut m = Model::new(checkpoint, tokenizer)?;
        m.format = Format::Safetensors;
        m.architecture = hf.architecture;
        m.trained_context = Some(hf.trained_context).filter(|&n| n > m.config().seq_len as u64);
        Ok(m)
    }

    pub fn new(checkpoint: Checkpoint, tokenizer: Tokenizer) -> Result<Model, ModelError> {
        tokenizer.check_vocab(checkpoint.config.vocab_size)?;
        Ok(Model {
            transformer: Arc::new(Transformer::new(checkpoint)),
            tokenizer,
            format: Format::Llama2c,
            architecture: "llama".into(),
            tensor_types: None,
            trained_context: None,
            chat: false,
            chat_template: None,
        })
    }

    /// The same model (tokenizer, format) with other weights of the same vocabulary: its
    /// matrices at another precision.
    pub fn with_transformer(&self, transformer: Arc<Transformer>) -> Model {
        Model {
            transformer,
            ..self.clone()
        }
    }

    /// The same model with its quantized matrices multiplied with `activations` on the CPU
    /// (in place when nothing else holds the weights).
    pub fn with_activations(mut self, activations: crate::quant::Activations) -> Model {
        Arc::make_mut(&mut self.transformer)
            .weights
            .set_activations(activations);
        self
    }

    /// What the model has beyond llama2.c's Llama, for its card: Qwen2's biases, Llama 3's
    /// RoPE factors, a GGUF BPE vocabulary.
    pub fn extras(&self) -> Vec<String> {
        let w = &self.transformer.weights;
        let mut out = Vec::new();
        if w.qkv_bias.is_some() {
            out.push("Q/K/V biases".to_string());
        }
        if w.rope_factors.is_some() {
            out.push("Llama 3 RoPE factors".to_string());
        }
        if let Some(Err(e)) = &self.chat_template {
            out.push(format!("no chat ({e})"));
        }
        out.extend(self.tokenizer.kind.clone());
        out
    }

    pub fn config(&self) -> &Config {
        &self.transformer.config
    }

    /// The prompt as one user message of the model's chat template, the assistant's turn
    /// opened: the text an instruct model was trained to see.
    pub fn render_chat(&self, user: &str) -> Result<String, ModelError> {
        let t = &self.tokenizer;
        let template = match &self.chat_template {
            None => return Err(ChatError::NoTemplate.into()),
            Some(Err(e)) => return Err(e.clone().into()),
            Some(Ok(t)) => t,
        };
        Ok(template.render(user, t.piece(t.bos)?, t.piece(t.eos)?)?)
    }

    /// BOS (where the vocabulary adds one, and the text does not already start with it, as
    /// a rendered chat template may) + the prompt's tokens (with [`Model::chat`], of the
    /// prompt through the chat template), refused when there are none or they do not fit in
    /// the context with room for at least one generated token.
    pub fn encode_prompt(&self, text: &str) -> Result<Vec<u32>, ModelError> {
        let rendered;
        let text = match self.chat {
            true => {
                rendered = self.render_chat(text)?;
                &rendered
            }
            false => text,
        };
        let ids = self.tokenizer.encode(text, true)?;
        if ids.is_empty() {
            return Err(ModelError::EmptyPrompt);
        }
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

/// A tokenizer file's length against its limit (checked before it is read).
fn check_tokenizer_len(len: u64) -> Result<(), ModelError> {
    if len > crate::tokenizer::MAX_TOKENIZER_BYTES as u64 {
        return Err(TokenizerError::FileTooLarge {
            bytes: len,
            limit: crate::tokenizer::MAX_TOKENIZER_BYTES,
        }
        .into());
    }
    Ok(())
}
