//! Parse, don't validate: raw knob values (strings from the CLI, a URL or a slider) become
//! [`Settings`] once, at the edge, with one clear error per rule. Inner code never sees an
//! out-of-range value, and nothing is clamped silently: NaN, infinities and out-of-range
//! numbers are errors.

use super::knobs::{Knob, KNOBS};
use super::profile::Profile;
use super::stage::Stage;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Strategy {
    /// Draw from the processed distribution (temperature 0 makes it greedy).
    Sample,
    /// Always the most likely token of the processed distribution.
    Greedy,
    /// Beam search over raw log-probabilities.
    Beam {
        width: usize,
        /// Hugging Face's: a hypothesis scores sum_logprobs / length^length_penalty.
        length_penalty: f64,
        /// Stop as soon as `width` hypotheses have finished.
        early_stopping: bool,
        /// How many finished sequences to return (≤ width).
        num_return: usize,
    },
}

/// Largest |value| of a logit bias or a frequency/presence penalty, and the range of the
/// repetition penalty and temperature: wide enough for any use (a bias of −10,000 bans a
/// token), narrow enough that no stage can overflow to ±∞ from finite logits.
pub const MAX_MAGNITUDE: f64 = 1e4;

/// The widest beam search: each beam holds its own KV cache and is a row of every step's
/// batch, and the tree grows by 2 × width nodes a step.
pub const MAX_BEAMS: usize = 16;

/// Beam search's width, length penalty, early stopping and sequences returned when a knob
/// is not given (Hugging Face's `generate()` defaults, with a width of 4).
pub const BEAM_DEFAULTS: (usize, f64, bool, usize) = (4, 1.0, true, 1);

/// Validated settings: every value is in range. [CONFIG].
///
/// They travel (UI → worker) as their raw values and are validated again on arrival: a
/// message cannot carry settings that break a rule. Token ids of the logit bias are checked
/// against the vocabulary by whoever knows the model (`Settings::for_vocab`).
/// (Their serde form is their raw values, `raw.rs`.)
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// ≥ 0; 0 = greedy, 1 = the trained distribution.
    pub temperature: f64,
    /// 0 = off.
    pub top_k: usize,
    /// In (0, 1]; 1 = off.
    pub top_p: f64,
    /// In [0, 1]; 0 = off.
    pub min_p: f64,
    /// In (0, 1]; 1 = off.
    pub typical_p: f64,
    /// > 0; 1 = off.
    pub repetition_penalty: f64,
    /// Finite; 0 = off.
    pub frequency_penalty: f64,
    /// Finite; 0 = off.
    pub presence_penalty: f64,
    /// How many of the most recent tokens the penalties see; 0 = all.
    pub penalty_window: usize,
    /// (token id, value added to its logit), ids in the vocabulary.
    pub logit_bias: Vec<(u32, f64)>,
    /// 0 = off.
    pub no_repeat_ngram: usize,
    /// ≥ 1.
    pub max_tokens: usize,
    /// Non-empty strings; generation stops when the text contains one.
    pub stop: Vec<String>,
    pub seed: u64,
    pub profile: Profile,
    /// The chain's order: every stage exactly once.
    pub order: Vec<Stage>,
    pub strategy: Strategy,
    /// The knobs the user left unset that hold the profile's own default (llama.cpp's
    /// top-k 40, HF's top-k 50 when sampling): shown as "default of <peer>", and left out
    /// of links so that another profile brings its own.
    pub defaulted: Vec<Knob>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            temperature: 1.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            typical_p: 1.0,
            repetition_penalty: 1.0,
            frequency_penalty: 0.0,
            presence_penalty: 0.0,
            penalty_window: 0,
            logit_bias: Vec::new(),
            no_repeat_ngram: 0,
            max_tokens: 256,
            stop: Vec::new(),
            seed: 0,
            profile: Profile::Lesson,
            order: Profile::Lesson.default_order().to_vec(),
            strategy: Strategy::Sample,
            defaulted: Vec::new(),
        }
    }
}

impl Settings {
    /// Whether the strategy is beam search (the tree, not the chain, picks the tokens).
    pub fn is_beam(&self) -> bool {
        matches!(self.strategy, Strategy::Beam { .. })
    }

    /// The peer whose default a knob holds, when the user left it unset.
    pub fn default_of(&self, knob: Knob) -> Option<Profile> {
        self.defaulted.contains(&knob).then_some(self.profile)
    }

    /// Whether a stage's knob is at its neutral value (the stage is the identity).
    pub fn is_neutral(&self, stage: Stage) -> bool {
        match stage {
            Stage::LogitBias => self.logit_bias.is_empty(),
            Stage::RepetitionPenalty => self.repetition_penalty == 1.0,
            Stage::FrequencyPenalty => self.frequency_penalty == 0.0,
            Stage::PresencePenalty => self.presence_penalty == 0.0,
            Stage::NoRepeatNgram => self.no_repeat_ngram == 0,
            Stage::Temperature => self.temperature == 1.0,
            Stage::TopK => self.top_k == 0,
            Stage::TopP => self.top_p == 1.0,
            Stage::MinP => self.min_p == 0.0,
            Stage::TypicalP => self.typical_p == 1.0,
        }
    }

    /// The knob's value as text (for traces and labels).
    pub fn describe(&self, stage: Stage) -> String {
        match stage {
            Stage::LogitBias => self
                .logit_bias
                .iter()
                .map(|(id, v)| format!("{id}:{v}"))
                .collect::<Vec<_>>()
                .join(","),
            Stage::RepetitionPenalty => self.repetition_penalty.to_string(),
            Stage::FrequencyPenalty => self.frequency_penalty.to_string(),
            Stage::PresencePenalty => self.presence_penalty.to_string(),
            Stage::NoRepeatNgram => self.no_repeat_ngram.to_string(),
            Stage::Temperature => self.temperature.to_string(),
            Stage::TopK => self.top_k.to_string(),
            Stage::TopP => self.top_p.to_string(),
            Stage::MinP => self.min_p.to_string(),
            Stage::TypicalP => self.typical_p.to_string(),
        }
    }

    /// A knob's value as text, the way `RawSettings` takes it (one entry per value for list
    /// knobs), and whether the user set it away from the default. The beam knobs differ
    /// exactly when the strategy is beam search (they mean nothing otherwise). A knob the
    /// profile gives a default is set exactly when the user gave it (even to off: top-k 0
    /// under llama.cpp), and unset when it holds the profile's default.
    pub fn knob_value(&self, knob: Knob) -> (bool, Vec<String>) {
        let d = Settings::default();
        let one = |changed: bool, text: String| (changed, vec![text]);
        let sampling = matches!(self.strategy, Strategy::Sample);
        if self
            .profile
            .defaults(sampling)
            .iter()
            .any(|(k, _)| *k == knob)
        {
            let text = match knob.spec().stage {
                Some(stage) => self.describe(stage),
                None if knob == Knob::PenaltyWindow => self.penalty_window.to_string(),
                None => String::new(),
            };
            return one(!self.defaulted.contains(&knob), text);
        }
        let (beam, b) = match self.strategy {
            Strategy::Beam {
                width,
                length_penalty,
                early_stopping,
                num_return,
            } => (true, (width, length_penalty, early_stopping, num_return)),
            _ => (false, BEAM_DEFAULTS),
        };
        if let Some(stage) = knob.spec().stage {
            return one(!self.is_neutral(stage), self.describe(stage));
        }
        match knob {
            Knob::PenaltyWindow => one(self.penalty_window != 0, self.penalty_window.to_string()),
            Knob::MaxTokens => one(self.max_tokens != d.max_tokens, self.max_tokens.to_string()),
            Knob::Stop => (!self.stop.is_empty(), self.stop.clone()),
            Knob::Seed => one(self.seed != d.seed, self.seed.to_string()),
            Knob::Profile => one(self.profile != d.profile, self.profile.name().into()),
            Knob::Order => {
                let names: Vec<&str> = self.order.iter().map(|s| s.name()).collect();
                one(self.order != self.profile.default_order(), names.join(","))
            }
            Knob::Strategy => match self.strategy {
                Strategy::Sample => one(false, "sample".into()),
                Strategy::Greedy => one(true, "greedy".into()),
                Strategy::Beam { .. } => one(true, "beam".into()),
            },
            Knob::Beams => one(beam, b.0.to_string()),
            Knob::LengthPenalty => one(beam, b.1.to_string()),
            Knob::EarlyStopping => one(beam, b.2.to_string()),
            Knob::NumReturn => one(beam, b.3.to_string()),
            // Every other knob sets a stage (returned above).
            _ => (false, vec![]),
        }
    }

    /// The knob's text when it differs from the default, else nothing (for links).
    pub fn knob_text(&self, knob: Knob) -> Vec<String> {
        match self.knob_value(knob) {
            (true, text) => text,
            (false, _) => Vec::new(),
        }
    }

    /// The settings as raw key/value pairs (the inverse of `RawSettings::validate`), for
    /// URLs and command lines, in the table's order. Values at their defaults are left out.
    pub fn to_pairs(&self) -> Vec<(&'static str, String)> {
        KNOBS
            .iter()
            .flat_map(|spec| {
                self.knob_text(spec.knob)
                    .into_iter()
                    .map(move |v| (spec.name, v))
            })
            .collect()
    }
}

/// One broken rule: which field, and what is wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingError {
    pub field: String,
    pub message: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every broken rule of a set of raw values (so a form can mark each control).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsErrors(pub Vec<SettingError>);

impl fmt::Display for SettingsErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(|e| e.to_string()).collect();
        f.write_str(&lines.join("; "))
    }
}

impl std::error::Error for SettingsErrors {}

impl SettingsErrors {
    /// The message for one field, if it is wrong.
    pub fn for_field(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
    }
}

#[cfg(test)]
mod tests;
