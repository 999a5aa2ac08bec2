//! A model ready to use: a validated checkpoint and a tokenizer that matches it. The one
//! place the two are checked against each other; `load.rs` is the one way in from files.

pub mod load;

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
    #[error("{0}")]
    Source(#[from] crate::formats::source::SourceError),
    #[error("these files were loaded without the check of their own kind (ModelSource::check)")]
    Unchecked,
    #[error("the prompt is empty and this model's vocabulary starts no prompt with BOS: give it some text to start from")]
    EmptyPrompt,
    #[error("the prompt is {tokens} tokens but the model's context holds {seq_len}")]
    PromptTooLong { tokens: usize, seq_len: usize },
}

#[derive(Debug, Clone)]
pub struct Model {
    /// Its name: its config's (`_name_or_path`), else its file's.
    pub name: String,
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
    pub fn new(checkpoint: Checkpoint, tokenizer: Tokenizer) -> Result<Model, ModelError> {
        tokenizer.check_vocab(checkpoint.config.vocab_size)?;
        Ok(Model {
            name: "model".into(),
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
        let ids = match self.chat {
            true => self.tokenizer.encode_chat(text)?,
            false => self.tokenizer.encode(text, true)?,
        };
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
