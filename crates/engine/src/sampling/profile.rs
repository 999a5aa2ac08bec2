//! Compatibility profiles: the default chain order and the boundary rules of three peers.
//! A profile sets order and rules only; knobs left unset are off (no hidden default top-k).
//! Where the peers disagree, the profiles give their different answers (tested in
//! `tests/profiles.rs`):
//!
//! | question | hf | llama.cpp | openai |
//! |---|---|---|---|
//! | temperature before or after truncation | before | after (last) | before |
//! | ties at the top-k boundary | kept | exactly k | kept |
//! | min-p before or after top-p | after | after | before |
//! | typical-p boundary | first token reaching the mass, plus ties | first token exceeding it | — |
//! | tokens the frequency/presence penalties see | prompt + output | last-n of prompt + output | output only |

use super::stage::Stage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Profile {
    /// Hugging Face transformers `generate()`.
    #[serde(rename = "hf")]
    Hf,
    /// llama.cpp's default sampler chain (`common_sampler`).
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    /// The OpenAI API parameters as vLLM implements them.
    #[serde(rename = "openai")]
    OpenAi,
}

/// Which tokens are kept at the top-k boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TopKTies {
    /// Every token whose logit equals the k-th largest is kept (may keep more than k).
    Keep,
    /// Exactly k tokens; among equal logits the lower id wins.
    Exact,
}

/// Where typical-p's cut falls in the tokens sorted by |surprisal − entropy|.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TypicalBoundary {
    /// Keep through the first token whose cumulative mass reaches p (≥), and any token tied
    /// with it in score.
    Reaching,
    /// Keep through the first token whose cumulative mass exceeds p (>), no tie extension.
    Exceeding,
}

/// Which part of the history a penalty looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    PromptAndOutput,
    OutputOnly,
}

/// The boundary rules of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    pub top_k_ties: TopKTies,
    pub typical: TypicalBoundary,
    pub repetition_scope: Scope,
    pub frequency_presence_scope: Scope,
}

impl Profile {
    pub const ALL: [Profile; 3] = [Profile::Hf, Profile::LlamaCpp, Profile::OpenAi];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Hf => "hf",
            Profile::LlamaCpp => "llama.cpp",
            Profile::OpenAi => "openai",
        }
    }

    pub fn parse(s: &str) -> Option<Profile> {
        match s.trim().to_ascii_lowercase().as_str() {
            "hf" | "huggingface" | "transformers" => Some(Profile::Hf),
            "llama.cpp" | "llamacpp" | "llama-cpp" | "llama_cpp" => Some(Profile::LlamaCpp),
            "openai" | "vllm" => Some(Profile::OpenAi),
            _ => None,
        }
    }

    /// The peer's order of the stages.
    pub fn default_order(self) -> [Stage; 10] {
        use Stage::*;
        match self {
            // transformers `GenerationMixin._get_logits_processor`: SequenceBias first, then
            // RepetitionPenalty, NoRepeatNGram, …; the warpers come last in the order
            // Temperature, TopK, TopP, MinP, Typical. (Frequency/presence penalties are not
            // HF processors; they sit with the other penalties.)
            Profile::Hf => [
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
            ],
            // llama.cpp `common_sampler_init`: logit-bias sampler, then the default chain
            // penalties → (dry) → top_k → typ_p → top_p → min_p → (xtc) → temperature, then
            // dist. Its penalties sampler applies repeat, then frequency and presence.
            // (No-repeat-n-gram is not a llama.cpp sampler; it sits with the penalties.)
            Profile::LlamaCpp => [
                LogitBias,
                RepetitionPenalty,
                FrequencyPenalty,
                PresencePenalty,
                NoRepeatNgram,
                TopK,
                TypicalP,
                TopP,
                MinP,
                Temperature,
            ],
            // vLLM v1 `Sampler`: logit bias (a non-argmax-invariant processor), penalties
            // (repetition, frequency, presence), temperature, min-p (argmax-invariant
            // processor), then top-k/top-p. (Typical-p and no-repeat-n-gram are not OpenAI
            // parameters; typical-p sits last, no-repeat-n-gram with the penalties.)
            Profile::OpenAi => [
                LogitBias,
                RepetitionPenalty,
                FrequencyPenalty,
                PresencePenalty,
                NoRepeatNgram,
                Temperature,
                MinP,
                TopK,
                TopP,
                TypicalP,
            ],
        }
    }

    pub fn rules(self) -> Rules {
        match self {
            // TopKLogitsWarper: `scores < torch.topk(scores, k)[0][..., -1, None]` are removed,
            // so ties with the k-th are kept. TypicalLogitsWarper: `last_ind =
            // (cumulative_probs < mass).sum()`, then everything scoring ≤ the score at
            // last_ind is kept. RepetitionPenaltyLogitsProcessor gathers over `input_ids`
            // (prompt + output).
            Profile::Hf => Rules {
                top_k_ties: TopKTies::Keep,
                typical: TypicalBoundary::Reaching,
                repetition_scope: Scope::PromptAndOutput,
                frequency_presence_scope: Scope::PromptAndOutput,
            },
            // llama_sampler_top_k: partial sort, keep exactly k. llama_sampler_typical:
            // `if (cum_sum > p …) { last_idx = i + 1; break; }`. The penalties sampler counts
            // the last `penalty_last_n` accepted tokens, and the prompt is accepted too.
            Profile::LlamaCpp => Rules {
                top_k_ties: TopKTies::Exact,
                typical: TypicalBoundary::Exceeding,
                repetition_scope: Scope::PromptAndOutput,
                frequency_presence_scope: Scope::PromptAndOutput,
            },
            // vLLM apply_top_k_top_p: `logits_sort < logits_sort.gather(…, vocab − k)` masked,
            // so ties with the k-th are kept. apply_penalties: repetition over prompt_mask |
            // output_mask; frequency × output_bin_counts and presence × output_mask (output
            // only), as the OpenAI API documents.
            Profile::OpenAi => Rules {
                top_k_ties: TopKTies::Keep,
                typical: TypicalBoundary::Reaching,
                repetition_scope: Scope::PromptAndOutput,
                frequency_presence_scope: Scope::OutputOnly,
            },
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
