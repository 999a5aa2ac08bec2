//! The names of the sampling chain's stages, on their own so that the settings (which knobs
//! feed which stage) and the profiles (each peer's stage order) both use them without
//! importing each other.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A stage of the sampling chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    LogitBias,
    RepetitionPenalty,
    FrequencyPenalty,
    PresencePenalty,
    NoRepeatNgram,
    Temperature,
    TopK,
    TopP,
    MinP,
    TypicalP,
}

impl Stage {
    pub const ALL: [Stage; 10] = [
        Stage::LogitBias,
        Stage::RepetitionPenalty,
        Stage::FrequencyPenalty,
        Stage::PresencePenalty,
        Stage::NoRepeatNgram,
        Stage::Temperature,
        Stage::TopK,
        Stage::TopP,
        Stage::MinP,
        Stage::TypicalP,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::LogitBias => "logit_bias",
            Stage::RepetitionPenalty => "repetition_penalty",
            Stage::FrequencyPenalty => "frequency_penalty",
            Stage::PresencePenalty => "presence_penalty",
            Stage::NoRepeatNgram => "no_repeat_ngram",
            Stage::Temperature => "temperature",
            Stage::TopK => "top_k",
            Stage::TopP => "top_p",
            Stage::MinP => "min_p",
            Stage::TypicalP => "typical_p",
        }
    }

    /// Accepts the snake_case name, with '-' for '_' too.
    pub fn parse(s: &str) -> Option<Stage> {
        let s = s.trim().replace('-', "_").to_ascii_lowercase();
        Stage::ALL.into_iter().find(|st| st.name() == s)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
