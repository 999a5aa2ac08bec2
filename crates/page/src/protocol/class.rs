//! A round of the class guessing the next token (`page/class_round.rs`): which token each
//! guess stands for, which only the worker's tokenizer can tell.

use serde::{Deserialize, Serialize};

/// The first token of each guess after the transcript's text (prompt and generated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ClassRequest {
    ClassTokens { guesses: Vec<String> },
}

/// Each guess's token, in the request's order; `None` for a guess that adds no token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ClassEvent {
    ClassTokens { tokens: Vec<Option<u32>> },
}
