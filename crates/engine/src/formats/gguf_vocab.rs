//! The tokenizer a GGUF file carries in its metadata (`tokenizer.ggml.*`, GGUF's
//! specification and llama.cpp's `llama_vocab::impl::load`): a SentencePiece vocabulary
//! (`model = llama`: pieces with "▁" and scores), read into a llama2.c vocabulary, or a
//! GPT-2 style byte-level BPE (`model = gpt2`: tokens, merges, token types and the `pre`
//! tokenizer's name), read into a [`GgufBpe`]. Any other model is refused by name. The chat
//! template (`tokenizer.chat_template`) is read here too.

use super::gguf::{kind_of, Gguf, GgufError, Value};
use crate::tokenizer::chat::ChatTemplate;
use crate::tokenizer::{GgufBpe, Llama2cVocab, Tokenizer, TokenizerError};

/// A GGUF file's vocabulary, as its `tokenizer.ggml.model` says.
#[derive(Debug, Clone)]
pub enum GgufVocab {
    /// `llama`: SentencePiece pieces (a space for "▁") and scores, BOS and EOS ids, and
    /// `add_bos_token` where the file says.
    Spm(Llama2cVocab, u32, u32, Option<bool>),
    /// `gpt2`: byte-level BPE.
    Bpe(GgufBpe),
}

impl GgufVocab {
    pub fn tokenizer(self) -> Result<Tokenizer, TokenizerError> {
        match self {
            GgufVocab::Spm(vocab, bos, eos, add_bos) => {
                let mut t = Tokenizer::from_llama2c_vocab(vocab, bos, eos)?;
                t.add_bos = add_bos.unwrap_or(true);
                Ok(t)
            }
            GgufVocab::Bpe(bpe) => Tokenizer::from_gguf_bpe(bpe),
        }
    }
}

impl Gguf<'_> {
    /// The tokenizer in the metadata.
    pub fn vocab(&self) -> Result<GgufVocab, GgufError> {
        match self.string("tokenizer.ggml.model")? {
            "llama" => self.spm_vocab(),
            "gpt2" => self.bpe_vocab(),
            model => Err(GgufError::Unsupported(format!(
                "tokenizer.ggml.model is {model:?}; GGUF vocabularies are read when it is \"llama\" (SentencePiece) or \"gpt2\" (byte-level BPE)"
            ))),
        }
    }

    /// `tokenizer.chat_template`, where the file has one.
    pub fn chat_template(&self) -> Result<Option<ChatTemplate>, GgufError> {
        const KEY: &str = "tokenizer.chat_template";
        if self.get(KEY).is_none() {
            return Ok(None);
        }
        ChatTemplate::new(self.string(KEY)?.to_string())
            .map(Some)
            .map_err(|e| GgufError::Value {
                key: KEY.into(),
                why: e.to_string(),
            })
    }

    /// `tokenizer.ggml.add_bos_token`, where the file says (llama.cpp honours it for every
    /// vocabulary).
    fn add_bos(&self) -> Result<Option<bool>, GgufError> {
        const KEY: &str = "tokenizer.ggml.add_bos_token";
        match self.get(KEY) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(GgufError::Value {
                key: KEY.into(),
                why: format!("{} is not a bool", kind_of(v)),
            }),
        }
    }

    fn array(&self, key: &str) -> Result<&[Value], GgufError> {
        match self.need(key)? {
            Value::Array(a) => Ok(a),
            v => Err(GgufError::Value {
                key: key.into(),
                why: format!("{} is not an array", kind_of(v)),
            }),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, GgufError> {
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Str(s) => Ok(s.clone()),
                v => Err(GgufError::Value {
                    key: key.into(),
                    why: format!("entry {i} is {}, not a string", kind_of(v)),
                }),
            })
            .collect()
    }

    /// A token id from `key` (`default` when absent), inside a vocabulary of `n`.
    fn token_id(&self, key: &str, default: u32, n: usize) -> Result<u32, GgufError> {
        if self.get(key).is_none() {
            return Ok(default);
        }
        let v = self.uint(key)?;
        u32::try_from(v)
            .ok()
            .filter(|&v| (v as usize) < n)
            .ok_or_else(|| GgufError::Value {
                key: key.into(),
                why: format!("{v} is not a token id (vocabulary of {n})"),
            })
    }

    /// `model = llama`: SentencePiece's "▁" as a space, BOS 1 and EOS 2 unless the file
    /// says.
    fn spm_vocab(&self) -> Result<GgufVocab, GgufError> {
        let tokens = self.array("tokenizer.ggml.tokens")?;
        let scores = self.array("tokenizer.ggml.scores")?;
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
        let n = pieces.len();
        let bos = self.token_id("tokenizer.ggml.bos_token_id", 1, n)?;
        let eos = self.token_id("tokenizer.ggml.eos_token_id", 2, n)?;
        let max_token_length = pieces.iter().map(|p| p.len()).max().unwrap_or(1).max(1) as u32;
        let vocab = Llama2cVocab {
            max_token_length,
            pieces,
            scores: score,
        };
        Ok(GgufVocab::Spm(vocab, bos, eos, self.add_bos()?))
    }

    /// `model = gpt2`: tokens, merges, token types (optional), the `pre` name (refused
    /// when absent: llama.cpp falls back to a default split and warns that "generation
    /// quality will be degraded"), BOS and EOS (llama.cpp's default 11 for both) and
    /// `add_bos_token`.
    fn bpe_vocab(&self) -> Result<GgufVocab, GgufError> {
        let tokens = self.strings("tokenizer.ggml.tokens")?;
        let merges = self.strings("tokenizer.ggml.merges")?;
        let n = tokens.len();
        let types = match self.get("tokenizer.ggml.token_type") {
            None => Vec::new(),
            Some(_) => self
                .array("tokenizer.ggml.token_type")?
                .iter()
                .map(|v| match v {
                    Value::I32(t) => *t,
                    _ => 1,
                })
                .collect(),
        };
        if !types.is_empty() && types.len() != n {
            return Err(GgufError::Value {
                key: "tokenizer.ggml.token_type".into(),
                why: format!("{} types for {n} tokens", types.len()),
            });
        }
        let pre = match self.get("tokenizer.ggml.pre") {
            None => return Err(GgufError::Missing("tokenizer.ggml.pre".into())),
            Some(_) => self.string("tokenizer.ggml.pre")?.to_string(),
        };
        let add_bos = self.add_bos()?;
        Ok(GgufVocab::Bpe(GgufBpe {
            bos: self.token_id("tokenizer.ggml.bos_token_id", 11, n)?,
            eos: self.token_id("tokenizer.ggml.eos_token_id", 11, n)?,
            tokens,
            merges,
            types,
            pre,
            add_bos,
        }))
    }
}
