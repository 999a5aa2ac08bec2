//! The names of the sampling chain's stages, on their own so that the settings (which knobs
//! feed which stage) and the profiles (each peer's stage order) both use them without
//! importing each other.

use serde::{Deserialize, Serialize};
use strum::{Display, EnumString, IntoStaticStr, VariantArray};

/// A stage of the sampling chain.
#[derive(EnumString, IntoStaticStr, Display, VariantArray)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
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

    /// The snake_case name (serde's and strum's one spelling).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Accepts the snake_case name, with '-' for '_' too, in any case.
    pub fn parse(s: &str) -> Option<Stage> {
        s.trim().replace('-', "_").parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_every_stage_once_and_names_round_trip() {
        assert_eq!(Stage::ALL.as_slice(), Stage::VARIANTS);
        for st in Stage::ALL {
            assert_eq!(Stage::parse(st.name()), Some(st));
            assert_eq!(st.to_string(), st.name());
            // serde's name is the same one.
            assert_eq!(
                serde_json::to_string(&st).unwrap(),
                format!("{:?}", st.name())
            );
        }
        assert_eq!(Stage::parse(" Top-P "), Some(Stage::TopP));
        assert_eq!(Stage::parse("top"), None);
    }
}
