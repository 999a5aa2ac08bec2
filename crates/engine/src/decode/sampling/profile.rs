//! Compatibility profiles: the default chain order, the boundary rules and the hidden
//! defaults of three peers, and the plain `lesson` profile the page and the CLI start with.
//! Each stage's file holds its own answers (its place, its peers' defaults, its boundary
//! rule); this table sums them up. Where the peers disagree, the profiles give their
//! different answers (tested in `tests/profiles.rs`):
//!
//! | question | lesson | hf | llama.cpp | openai |
//! |---|---|---|---|---|
//! | knobs left unset | off | top-k 50 when sampling | T 0.8, top-k 40, top-p 0.95, min-p 0.05, last-n 64 | off |
//! | temperature before or after truncation | before | before | after (last) | before |
//! | ties at the top-k boundary | kept | kept | exactly k | kept |
//! | min-p before or after top-p | after | after | after | before |
//! | typical-p boundary | reaching p, plus ties | reaching p, plus ties | first exceeding p | — |
//! | tokens the repetition penalty sees | prompt + output | prompt + output | last-n of prompt + output | prompt + output |
//! | tokens the frequency/presence penalties see | prompt + output | not a `generate()` processor (applied as lesson) | last-n of prompt + output | output only |
//! | bounds beyond the page's | — | — | — | logit bias ±100, penalties ±2 |
//!
//! The repetition penalty sees the prompt and the output in every peer (HF's
//! `RepetitionPenaltyLogitsProcessor` gathers over `input_ids`; llama.cpp's penalties sampler
//! is fed the prompt's tokens too; vLLM masks `prompt_mask | output_mask`), so it is one rule,
//! not a per-profile one; only the window (`penalty_window`, llama.cpp's `last_n`) differs.

use super::knobs::{Knob, KNOBS};
use super::stage::Stage;
use serde::{Deserialize, Serialize};
use strum::{Display, EnumString, IntoStaticStr, VariantArray};

/// A peer whose sampling a profile follows. Its name is spelled once, in the `strum`
/// attribute (serde writes it through `name`); the other spellings a user may type are
/// aliases.
#[derive(EnumString, IntoStaticStr, Display, VariantArray)]
#[strum(ascii_case_insensitive)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The lesson's chain: temperature → top-k → top-p → min-p → typical after the penalties,
    /// and nothing applied that the user did not set. The page's and the CLI's default.
    #[strum(serialize = "lesson")]
    Lesson,
    /// Hugging Face transformers `generate()`.
    #[strum(
        to_string = "hf",
        serialize = "huggingface",
        serialize = "transformers"
    )]
    Hf,
    /// llama.cpp's default sampler chain (`common_sampler`).
    #[strum(
        to_string = "llama.cpp",
        serialize = "llamacpp",
        serialize = "llama-cpp",
        serialize = "llama_cpp"
    )]
    LlamaCpp,
    /// The OpenAI API parameters as vLLM implements them.
    #[strum(to_string = "openai", serialize = "vllm")]
    OpenAi,
}

impl Serialize for Profile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Profile, D::Error> {
        // Exactly a name (the aliases are for people typing).
        let name = String::deserialize(d)?;
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown profile {name:?}")))
    }
}

/// Which part of the history the frequency and presence penalties look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    PromptAndOutput,
    OutputOnly,
}

impl Profile {
    pub const ALL: [Profile; 4] = [
        Profile::Lesson,
        Profile::Hf,
        Profile::LlamaCpp,
        Profile::OpenAi,
    ];

    /// Its one name (a link's, the CLI's, serde's).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// By name or alias, in any case.
    pub fn parse(s: &str) -> Option<Profile> {
        s.trim().parse().ok()
    }

    /// The peer's order of the stages: the registry's stages by their rank in this profile
    /// (each stage's file cites the peer for its place), the registry's order on a tie.
    pub fn default_order(self) -> Vec<Stage> {
        let mut order: Vec<(u16, usize, Stage)> = super::stages::REGISTRY
            .iter()
            .enumerate()
            .map(|(i, d)| (d.places.of(self), i, d.stage))
            .collect();
        order.sort();
        order.into_iter().map(|(_, _, s)| s).collect()
    }

    /// What the peer applies to a knob the user left unset, as raw text (validated like a
    /// value the user typed), from each knob's `peers`. `sampling` is whether the strategy
    /// draws from the distribution (HF's `do_sample=True`).
    pub fn defaults(self, sampling: bool) -> Vec<(Knob, &'static str)> {
        KNOBS
            .iter()
            .flat_map(|k| k.peers.iter().map(move |d| (k.knob, d)))
            .filter(|(_, d)| d.profile == self && (sampling || !d.sampling_only))
            .map(|(k, d)| (k, d.value))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_has_one_name_and_its_aliases() {
        assert_eq!(
            &Profile::ALL[..],
            Profile::VARIANTS,
            "ALL lists every profile"
        );
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["lesson", "hf", "llama.cpp", "openai"]);
        for p in Profile::ALL {
            assert_eq!(Profile::parse(p.name()), Some(p));
            assert_eq!(p.to_string(), p.name());
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("{:?}", p.name()));
            assert_eq!(serde_json::from_str::<Profile>(&json).unwrap(), p);
        }
        for (alias, p) in [
            ("HuggingFace", Profile::Hf),
            ("transformers", Profile::Hf),
            (" llamacpp ", Profile::LlamaCpp),
            ("llama-cpp", Profile::LlamaCpp),
            ("LLAMA_CPP", Profile::LlamaCpp),
            ("vllm", Profile::OpenAi),
        ] {
            assert_eq!(Profile::parse(alias), Some(p), "{alias}");
        }
        assert_eq!(Profile::parse("llama"), None);
        // serde reads only the names.
        assert!(serde_json::from_str::<Profile>("\"vllm\"").is_err());
    }
}
