//! Constrained decoding: a regex, a JSON Schema or a grammar (GBNF as llama.cpp writes it, or
//! llguidance's Lark-like syntax) compiled once per prompt into a matcher that, at each step,
//! gives the tokens that keep the text inside the language ([`Allowed`]) and follows the
//! tokens chosen. The chain's `constraint` stage (`sampling/stages/constraint.rs`) applies
//! the mask; this module owns the matcher.
//!
//! The matcher is llguidance 1.9.1 (the Rust library behind llama.cpp's `--llguidance`
//! build, vLLM's and SGLang's structured output; REFERENCES.md): its `toktrie` walks the
//! vocabulary as a byte trie, so a token is allowed when its bytes can continue the text. A
//! token's bytes are its piece as llama.cpp's grammar sampler reads it
//! (`llama_grammar_apply_impl` checks `token_to_piece`, SentencePiece's `▁` a space, a
//! `<0xNN>` byte token its byte; a control token's empty piece is never allowed), built in
//! `vocab.rs`. The end tokens (EOS and the model's others) are allowed exactly when the text
//! so far is complete (llama.cpp: `allow_eog` when a grammar stack is empty).

pub mod gbnf;
#[cfg(feature = "constraint")]
mod matcher;
#[cfg(not(feature = "constraint"))]
mod off;
#[cfg(feature = "constraint")]
mod position;
#[cfg(feature = "constraint")]
mod rules;
#[cfg(feature = "constraint")]
mod vocab;

#[cfg(feature = "constraint")]
pub use matcher::Constraint;
#[cfg(not(feature = "constraint"))]
pub use off::Constraint;
#[cfg(all(feature = "constraint", not(target_arch = "wasm32")))]
pub use vocab::native_clock;
#[cfg(feature = "constraint")]
pub use vocab::ConstraintVocab;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The longest source accepted (a schema or grammar pasted into the page is a few KB).
pub const MAX_SOURCE_BYTES: usize = 64 * 1024;

/// The grammar size llguidance may build (symbols in productions); its default is 500,000
/// ("a few megabytes of JSON"), far past what [`MAX_SOURCE_BYTES`] of honest source needs,
/// and what a hostile repetition (`x{1000}{1000}`) would blow up to.
pub const MAX_GRAMMAR_SYMBOLS: usize = 100_000;

/// What kind of constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::EnumIter)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintKind {
    /// A regular expression the whole output must match.
    Regex,
    /// A JSON Schema the output must be an instance of.
    JsonSchema,
    /// A GBNF grammar as llama.cpp writes it (`root ::= ...`).
    Grammar,
    /// llguidance's Lark-like grammar syntax (`start: ...`).
    Lark,
}

impl ConstraintKind {
    pub fn name(self) -> &'static str {
        match self {
            ConstraintKind::Regex => "regex",
            ConstraintKind::JsonSchema => "json_schema",
            ConstraintKind::Grammar => "grammar",
            ConstraintKind::Lark => "lark",
        }
    }

    pub fn parse(s: &str) -> Option<ConstraintKind> {
        use strum::IntoEnumIterator;
        let s = s.trim().replace('-', "_").to_ascii_lowercase();
        let s = if s == "gbnf" {
            "grammar".to_string()
        } else {
            s
        };
        ConstraintKind::iter().find(|k| k.name() == s)
    }
}

/// A constraint as the user wrote it: its kind and source. As a knob's text it is
/// `kind:source` (`regex:(yes|no)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintSpec {
    pub kind: ConstraintKind,
    pub source: String,
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConstraintError {
    #[error("constraint {0:?}: start it with regex:, json_schema:, grammar: (GBNF) or lark:")]
    UnknownKind(String),
    #[error("the {kind} is empty")]
    Empty { kind: &'static str },
    #[error("the {kind} is {bytes} bytes; at most {max} are accepted")]
    TooLarge {
        kind: &'static str,
        bytes: usize,
        max: usize,
    },
    #[error("{kind} syntax error at line {line}, column {column}{}: {message}", rule.as_ref().map(|r| format!(" (rule {r})")).unwrap_or_default())]
    Syntax {
        kind: &'static str,
        line: usize,
        column: usize,
        rule: Option<String>,
        message: String,
    },
    #[error("the {kind} could not be compiled: {message}")]
    Compile { kind: &'static str, message: String },
    #[error("token {token} ({piece:?}) is not allowed by the constraint here")]
    Rejected { token: u32, piece: String },
    #[error("the constraint failed: {0}")]
    Matcher(String),
    #[error("the constraint changed since it was compiled: compile the new one first")]
    Stale,
}

impl ConstraintSpec {
    /// `kind:source`, or `None` for `none` or nothing.
    pub fn parse(text: &str) -> Result<Option<ConstraintSpec>, ConstraintError> {
        if text.trim().is_empty() || text.trim() == "none" {
            return Ok(None);
        }
        let (kind, source) = text
            .split_once(':')
            .ok_or_else(|| ConstraintError::UnknownKind(short(text)))?;
        let kind =
            ConstraintKind::parse(kind).ok_or_else(|| ConstraintError::UnknownKind(short(text)))?;
        let spec = ConstraintSpec {
            kind,
            source: source.to_string(),
        };
        spec.check_size()?;
        Ok(Some(spec))
    }

    /// Whether `text` (a knob's) is this constraint.
    pub fn is_text(&self, text: &str) -> bool {
        text.split_once(':').is_some_and(|(k, src)| {
            ConstraintKind::parse(k) == Some(self.kind) && src == self.source
        })
    }

    /// As a knob's text.
    pub fn to_text(&self) -> String {
        format!("{}:{}", self.kind.name(), self.source)
    }

    fn what(&self) -> &'static str {
        match self.kind {
            ConstraintKind::Regex => "regex",
            ConstraintKind::JsonSchema => "JSON Schema",
            ConstraintKind::Grammar => "GBNF grammar",
            ConstraintKind::Lark => "Lark grammar",
        }
    }

    fn check_size(&self) -> Result<(), ConstraintError> {
        let kind = self.what();
        if self.source.trim().is_empty() {
            return Err(ConstraintError::Empty { kind });
        }
        if self.source.len() > MAX_SOURCE_BYTES {
            return Err(ConstraintError::TooLarge {
                kind,
                bytes: self.source.len(),
                max: MAX_SOURCE_BYTES,
            });
        }
        Ok(())
    }
}

fn short(text: &str) -> String {
    text.chars().take(40).collect()
}

/// The tokens a constraint allows at one step, and what it knows there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Allowed {
    /// Bit `i % 32` of word `i / 32`: token `i` keeps the text inside the language.
    pub words: Vec<u32>,
    /// How many tokens are allowed.
    pub count: usize,
    /// Whether the text may end here (the end tokens are allowed).
    pub end: bool,
    /// Milliseconds the mask took to compute.
    pub ms: f64,
    /// Where the text is in the constraint: a JSON field's path, or what may come next.
    pub position: String,
}

impl Allowed {
    pub fn allows(&self, id: usize) -> bool {
        self.words
            .get(id / 32)
            .is_some_and(|w| w >> (id % 32) & 1 == 1)
    }

    /// Every one of `n` tokens (a test's or a page's "no constraint").
    pub fn all(n: usize) -> Allowed {
        let mut words = vec![u32::MAX; n.div_ceil(32)];
        if !n.is_multiple_of(32) {
            if let Some(w) = words.last_mut() {
                *w = (1u32 << (n % 32)) - 1;
            }
        }
        Allowed {
            words,
            count: n,
            end: true,
            ms: 0.0,
            position: String::new(),
        }
    }

    /// Whether only end tokens are allowed: the constraint is complete.
    pub fn only_end(&self, end_tokens: &[u32]) -> bool {
        self.end
            && self.count
                == end_tokens
                    .iter()
                    .filter(|&&t| self.allows(t as usize))
                    .count()
    }
}

#[cfg(all(test, feature = "constraint"))]
#[path = "tests.rs"]
mod tests;
