//! Parse, don't validate: raw knob values (strings from the CLI, a URL or a slider) become
//! [`Settings`] once, at the edge, with one clear error per rule. Inner code never sees an
//! out-of-range value, and nothing is clamped silently: NaN, infinities and out-of-range
//! numbers are errors.

use super::knobs::{Knob, KNOBS};
use super::profile::{Profile, OPENAI_BOUNDS};
pub use super::stage::Stage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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

/// The largest count a knob takes (the largest vocabulary and context the loader accepts).
pub const MAX_COUNT: usize = 1 << 20;
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "RawSettings", try_from = "RawSettings")]
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

    /// The same settings checked against a model's vocabulary (logit-bias ids).
    pub fn for_vocab(self, vocab_size: usize) -> Result<Settings, SettingsErrors> {
        RawSettings::from(self).validate(vocab_size)
    }

    /// The settings as raw key/value pairs (the inverse of [`RawSettings::validate`]), for
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

impl From<Settings> for RawSettings {
    fn from(s: Settings) -> RawSettings {
        let pairs = s.to_pairs();
        RawSettings::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
    }
}

impl TryFrom<RawSettings> for Settings {
    type Error = SettingsErrors;
    /// Every rule but the vocabulary bound of logit-bias ids (see `for_vocab`).
    fn try_from(raw: RawSettings) -> Result<Settings, SettingsErrors> {
        raw.validate(usize::MAX)
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

/// Raw values as they arrive from the outside: text, unparsed, by knob (`KNOBS`). A knob
/// left out is at its default; list knobs (logit bias, stop) keep every entry, the others
/// the last value given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawSettings {
    values: BTreeMap<Knob, Vec<String>>,
}

impl RawSettings {
    /// Sets one knob by name (a URL or form key, or a CLI flag). Returns false for an
    /// unknown key.
    pub fn set(&mut self, key: &str, value: &str) -> bool {
        match Knob::parse(key) {
            Some(k) => {
                self.put(k, value);
                true
            }
            None => false,
        }
    }

    /// Gives a knob a value: appended for a list knob, replacing it for the others.
    pub fn put(&mut self, knob: Knob, value: impl Into<String>) {
        let values = self.values.entry(knob).or_default();
        if !knob.is_list() {
            values.clear();
        }
        values.push(value.into());
    }

    /// Replaces a list knob's entries (a form's text split into entries).
    pub fn put_all(&mut self, knob: Knob, entries: Vec<String>) {
        self.values.insert(knob, entries);
    }

    /// The knob's value as given (the last one), or None at the default.
    pub fn get(&self, knob: Knob) -> Option<&str> {
        self.values
            .get(&knob)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Every entry given for a knob.
    pub fn entries(&self, knob: Knob) -> &[String] {
        self.values.get(&knob).map_or(&[], Vec::as_slice)
    }

    /// Back to the default.
    pub fn clear(&mut self, knob: Knob) {
        self.values.remove(&knob);
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> RawSettings {
        let mut raw = RawSettings::default();
        for (k, v) in pairs {
            raw.set(k, v);
        }
        raw
    }

    /// Validates every value against its rule. `vocab_size` bounds logit-bias ids. A knob
    /// left unset takes the profile's default (`Profile::defaults`), if it has one.
    pub fn validate(&self, vocab_size: usize) -> Result<Settings, SettingsErrors> {
        let profile = self.get(Knob::Profile).and_then(Profile::parse);
        let sampling = matches!(
            self.get(Knob::Strategy).map(str::trim),
            None | Some("sample") | Some("sampling")
        );
        let mut filled = self.clone();
        let mut defaulted = Vec::new();
        for &(knob, value) in profile.map_or(&[][..], |p| p.defaults(sampling)) {
            if self.get(knob).is_none() {
                filled.put(knob, value);
                defaulted.push(knob);
            }
        }
        let mut settings = filled.validate_given(vocab_size)?;
        settings.defaulted = defaulted;
        Ok(settings)
    }

    /// Validates the values given, with no profile defaults.
    fn validate_given(&self, vocab_size: usize) -> Result<Settings, SettingsErrors> {
        let mut v = Validator {
            raw: self,
            errors: Vec::new(),
        };
        let d = Settings::default();
        let any = |_| Ok(());
        let magnitude = |x: f64| {
            (x.abs() <= MAX_MAGNITUDE)
                .then_some(())
                .ok_or("must be in [-10000, 10000]")
        };
        let unit = |x: f64| {
            (x > 0.0 && x <= 1.0)
                .then_some(())
                .ok_or("must be in (0, 1] (1 = off)")
        };
        let mut settings = Settings {
            temperature: v.float(Knob::Temperature, d.temperature, |x| {
                if x < 0.0 {
                    Err("must be ≥ 0 (0 = greedy)")
                } else if x != 0.0 && !(1.0 / MAX_MAGNITUDE..=MAX_MAGNITUDE).contains(&x) {
                    Err("must be 0 (greedy) or in [0.0001, 10000]")
                } else {
                    Ok(())
                }
            }),
            top_k: v.count(Knob::TopK, d.top_k, any),
            top_p: v.float(Knob::TopP, d.top_p, unit),
            min_p: v.float(Knob::MinP, d.min_p, |x| {
                (0.0..=1.0)
                    .contains(&x)
                    .then_some(())
                    .ok_or("must be in [0, 1] (0 = off)")
            }),
            typical_p: v.float(Knob::TypicalP, d.typical_p, unit),
            repetition_penalty: v.float(Knob::RepetitionPenalty, 1.0, |x| {
                if x <= 0.0 {
                    Err("must be > 0 (1 = off)")
                } else if !(1.0 / MAX_MAGNITUDE..=MAX_MAGNITUDE).contains(&x) {
                    Err("must be in [0.0001, 10000] (1 = off)")
                } else {
                    Ok(())
                }
            }),
            frequency_penalty: v.float(Knob::FrequencyPenalty, 0.0, magnitude),
            presence_penalty: v.float(Knob::PresencePenalty, 0.0, magnitude),
            penalty_window: v.count(Knob::PenaltyWindow, 0, any),
            no_repeat_ngram: v.count(Knob::NoRepeatNgram, 0, any),
            max_tokens: v.count(Knob::MaxTokens, d.max_tokens, |n| {
                (n >= 1).then_some(()).ok_or("must be at least 1")
            }),
            seed: v.int(Knob::Seed, d.seed, any),
            logit_bias: v.logit_bias(vocab_size),
            stop: v.stop(),
            profile: v.profile(d.profile),
            order: Vec::new(),
            strategy: Strategy::Sample,
            defaulted: Vec::new(),
        };
        settings.order = match self.get(Knob::Order) {
            Some(order) => v.order(order, &settings),
            None => settings.profile.default_order().to_vec(),
        };
        settings.strategy = v.strategy();
        if settings.profile == Profile::OpenAi {
            v.openai_bounds(&settings);
        }
        if v.errors.is_empty() {
            Ok(settings)
        } else {
            Err(SettingsErrors(v.errors))
        }
    }
}

/// Reads raw values, collecting one error per broken rule.
struct Validator<'a> {
    raw: &'a RawSettings,
    errors: Vec<SettingError>,
}

impl Validator<'_> {
    fn fail(&mut self, knob: Knob, message: impl Into<String>) {
        self.errors.push(SettingError {
            field: knob.name().to_string(),
            message: message.into(),
        });
    }

    /// A finite float obeying `rule`, or `default` when absent.
    fn float(
        &mut self,
        field: Knob,
        default: f64,
        rule: impl Fn(f64) -> Result<(), &'static str>,
    ) -> f64 {
        let Some(s) = self.raw.get(field) else {
            return default;
        };
        match s.trim().parse::<f64>() {
            Err(_) => self.fail(field, format!("{s:?} is not a number")),
            Ok(x) if !x.is_finite() => self.fail(field, format!("{s} is not a finite number")),
            Ok(x) => match rule(x) {
                Ok(()) => return x,
                Err(m) => self.fail(field, format!("{m} (got {x})")),
            },
        }
        default
    }

    /// A non-negative integer obeying `rule`, or `default` when absent.
    fn int(
        &mut self,
        field: Knob,
        default: u64,
        rule: impl Fn(u64) -> Result<(), &'static str>,
    ) -> u64 {
        let Some(s) = self.raw.get(field) else {
            return default;
        };
        match s.trim().parse::<u64>() {
            Err(_) => {
                let msg = if s.trim().parse::<i128>().is_ok() {
                    format!("must be ≥ 0 (got {s})")
                } else {
                    format!("{s:?} is not a whole number")
                };
                self.fail(field, msg)
            }
            Ok(n) => match rule(n) {
                Ok(()) => return n,
                Err(m) => self.fail(field, format!("{m} (got {n})")),
            },
        }
        default
    }

    /// A count (top-k, windows, max tokens, sequences): a whole number obeying `rule` and at
    /// most `MAX_COUNT`, the same width on every target (never truncated to wasm32's usize).
    fn count(
        &mut self,
        field: Knob,
        default: usize,
        rule: impl Fn(u64) -> Result<(), &'static str>,
    ) -> usize {
        let n = self.int(field, default as u64, rule);
        if n > MAX_COUNT as u64 {
            let cap = crate::units::thousands(MAX_COUNT as u64);
            self.fail(field, format!("must be at most {cap} (got {n})"));
            return default;
        }
        n as usize
    }

    /// The OpenAI API's narrower ranges, under the openai profile (`OPENAI_BOUNDS`).
    fn openai_bounds(&mut self, s: &Settings) {
        let (bias, penalty) = OPENAI_BOUNDS;
        if let Some((id, x)) = s.logit_bias.iter().find(|(_, x)| x.abs() > bias) {
            let msg = format!("the openai profile takes a bias in [-100, 100] (got {id}:{x})");
            self.fail(Knob::LogitBias, msg);
        }
        for (knob, x) in [
            (Knob::FrequencyPenalty, s.frequency_penalty),
            (Knob::PresencePenalty, s.presence_penalty),
        ] {
            if x.abs() > penalty {
                self.fail(knob, format!("the openai profile takes [-2, 2] (got {x})"));
            }
        }
    }

    fn profile(&mut self, default: Profile) -> Profile {
        let Some(s) = self.raw.get(Knob::Profile) else {
            return default;
        };
        Profile::parse(s).unwrap_or_else(|| {
            let msg = format!("{s:?} is not a profile (lesson, hf, llama.cpp or openai)");
            self.fail(Knob::Profile, msg);
            default
        })
    }

    fn logit_bias(&mut self, vocab: usize) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = Vec::new();
        let raw = self.raw;
        for entry in raw
            .entries(Knob::LogitBias)
            .iter()
            .flat_map(|e| e.split(','))
        {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let Some((id, val)) = entry.split_once(':') else {
                self.fail(Knob::LogitBias, format!("{entry:?} is not id:value"));
                continue;
            };
            let id = match id.trim().parse::<u32>() {
                Ok(id) if (id as usize) < vocab => id,
                Ok(id) => {
                    self.fail(
                        Knob::LogitBias,
                        format!("token id {id} is outside the vocabulary (0..{vocab})"),
                    );
                    continue;
                }
                Err(_) => {
                    self.fail(
                        Knob::LogitBias,
                        format!("{id:?} in {entry:?} is not a token id"),
                    );
                    continue;
                }
            };
            match val.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x.abs() > MAX_MAGNITUDE => self.fail(
                    Knob::LogitBias,
                    format!("{val:?} in {entry:?} must be in [-10000, 10000]"),
                ),
                Ok(x) if x.is_finite() => {
                    // A later entry for the same id replaces the earlier one.
                    out.retain(|(i, _)| *i != id);
                    out.push((id, x));
                }
                _ => self.fail(
                    Knob::LogitBias,
                    format!("{val:?} in {entry:?} is not a finite number"),
                ),
            }
        }
        out
    }

    fn stop(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let raw = self.raw;
        for s in raw.entries(Knob::Stop) {
            if s.is_empty() {
                self.fail(Knob::Stop, "a stop sequence cannot be empty");
            } else if !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    }

    /// A permutation of the stages; a stage left out must be at its neutral value.
    fn order(&mut self, raw: &str, s: &Settings) -> Vec<Stage> {
        let mut order = Vec::new();
        for name in raw.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match Stage::parse(name) {
                None => {
                    let names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
                    self.fail(
                        Knob::Order,
                        format!("{name:?} is not a stage ({})", names.join(", ")),
                    );
                    return s.profile.default_order().to_vec();
                }
                Some(st) if order.contains(&st) => {
                    self.fail(Knob::Order, format!("{st} appears twice"));
                    return s.profile.default_order().to_vec();
                }
                Some(st) => order.push(st),
            }
        }
        for st in Stage::ALL {
            if !order.contains(&st) {
                if !s.is_neutral(st) {
                    self.fail(
                        Knob::Order,
                        format!(
                            "{st} is set ({}) but missing from the order",
                            s.describe(st)
                        ),
                    );
                }
                // Neutral stages left out are identities: appended so the chain stays whole.
                order.push(st);
            }
        }
        order
    }

    fn strategy(&mut self) -> Strategy {
        let raw = self.raw;
        let kind = raw.get(Knob::Strategy).map(str::trim).unwrap_or("sample");
        match kind {
            "sample" | "sampling" => Strategy::Sample,
            "greedy" => Strategy::Greedy,
            "beam" => {
                let width = self.int(Knob::Beams, BEAM_DEFAULTS.0 as u64, |n| {
                    (1..=MAX_BEAMS as u64).contains(&n).then_some(()).ok_or(
                        "must be in 1..=16 (each beam is a KV cache and a row of every step; \
                         wider trees are unreadable)",
                    )
                }) as usize;
                // Beyond ±10 the score's length^penalty under- or overflows.
                let length_penalty = self.float(Knob::LengthPenalty, BEAM_DEFAULTS.1, |x| {
                    (x.abs() <= 10.0)
                        .then_some(())
                        .ok_or("must be in [-10, 10]")
                });
                let early_stopping = match raw.get(Knob::EarlyStopping).map(str::trim) {
                    None => BEAM_DEFAULTS.2,
                    Some("true") | Some("1") => true,
                    Some("false") | Some("0") => false,
                    Some(other) => {
                        self.fail(
                            Knob::EarlyStopping,
                            format!("{other:?} is not true or false"),
                        );
                        true
                    }
                };
                let num_return = self.count(Knob::NumReturn, BEAM_DEFAULTS.3, |n| {
                    (n >= 1).then_some(()).ok_or("must be at least 1")
                });
                if num_return > width {
                    self.fail(
                        Knob::NumReturn,
                        format!("cannot return {num_return} sequences from {width} beams"),
                    );
                }
                Strategy::Beam {
                    width,
                    length_penalty,
                    early_stopping,
                    num_return: num_return.min(width),
                }
            }
            other => {
                self.fail(
                    Knob::Strategy,
                    format!("{other:?} is not sample, greedy or beam"),
                );
                Strategy::Sample
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawSettings {
        RawSettings::from_pairs(pairs.iter().copied())
    }

    fn err(pairs: &[(&str, &str)]) -> SettingsErrors {
        raw(pairs).validate(512).unwrap_err()
    }

    #[test]
    fn defaults_are_neutral() {
        let s = RawSettings::default().validate(512).unwrap();
        assert_eq!(s, Settings::default());
        for st in Stage::ALL {
            assert!(s.is_neutral(st), "{st}");
        }
    }

    #[test]
    fn each_rule_has_its_own_message() {
        let cases: &[(&str, &str, &str)] = &[
            ("temperature", "-0.5", "must be ≥ 0"),
            ("temperature", "NaN", "not a finite number"),
            ("temperature", "inf", "not a finite number"),
            ("temperature", "banana", "not a number"),
            ("top_k", "-1", "must be ≥ 0"),
            ("top_k", "2.5", "not a whole number"),
            ("top_p", "0", "must be in (0, 1]"),
            ("top_p", "1.01", "must be in (0, 1]"),
            ("min_p", "-0.1", "must be in [0, 1]"),
            ("typical_p", "0", "must be in (0, 1]"),
            ("repetition_penalty", "0", "must be > 0"),
            ("frequency_penalty", "-inf", "not a finite number"),
            ("presence_penalty", "x", "not a number"),
            ("penalty_window", "-3", "must be ≥ 0"),
            ("no_repeat_ngram", "-1", "must be ≥ 0"),
            ("max_tokens", "0", "must be at least 1"),
            ("seed", "-1", "must be ≥ 0"),
            ("logit_bias", "600:1", "outside the vocabulary"),
            ("logit_bias", "5", "not id:value"),
            ("logit_bias", "5:nan", "not a finite number"),
            ("stop", "", "cannot be empty"),
            ("profile", "gpt", "not a profile"),
            ("order", "top_k,bogus", "not a stage"),
            ("order", "top_k,top_k", "appears twice"),
            ("strategy", "random", "not sample, greedy or beam"),
        ];
        for (field, value, needle) in cases {
            let e = err(&[(field, value)]);
            assert_eq!(e.0.len(), 1, "{field}={value}: {e}");
            assert_eq!(e.0[0].field, *field);
            assert!(
                e.0[0].message.contains(needle),
                "{field}={value}: {}",
                e.0[0].message
            );
        }
    }

    #[test]
    fn several_errors_are_all_reported() {
        let e = err(&[("temperature", "-1"), ("top_p", "2"), ("top_k", "x")]);
        assert_eq!(e.0.len(), 3);
        assert!(e.for_field("top_p").is_some());
    }

    #[test]
    fn order_must_include_every_set_stage() {
        let e = err(&[("min_p", "0.1"), ("order", "temperature,top_k")]);
        assert!(
            e.0[0].message.contains("min_p is set (0.1) but missing"),
            "{e}"
        );
        let s = raw(&[("top_k", "3"), ("order", "top_k,temperature")])
            .validate(512)
            .unwrap();
        assert_eq!(&s.order[..2], &[Stage::TopK, Stage::Temperature]);
        assert_eq!(s.order.len(), 10);
    }

    #[test]
    fn beam_settings() {
        let s = raw(&[("strategy", "beam"), ("beams", "3"), ("num_return", "2")])
            .validate(512)
            .unwrap();
        assert_eq!(
            s.strategy,
            Strategy::Beam {
                width: 3,
                length_penalty: 1.0,
                early_stopping: true,
                num_return: 2
            }
        );
        assert!(
            err(&[("strategy", "beam"), ("beams", "2"), ("num_return", "3")])
                .to_string()
                .contains("cannot return 3 sequences from 2 beams")
        );
    }

    #[test]
    fn pairs_round_trip() {
        let s = raw(&[
            ("temperature", "0.7"),
            ("top_k", "40"),
            ("logit_bias", "3:-2.5,7:1"),
            ("stop", "."),
            ("profile", "llama.cpp"),
            ("seed", "9"),
            ("order", "top_k,temperature,top_p,min_p,typical_p,logit_bias,repetition_penalty,frequency_penalty,presence_penalty,no_repeat_ngram"),
            ("strategy", "beam"),
            ("beams", "3"),
        ])
        .validate(512)
        .unwrap();
        let pairs = s.to_pairs();
        let back = RawSettings::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
            .validate(512)
            .unwrap();
        assert_eq!(back, s);
    }

    /// The hardening issue's links: numbers that overflowed the chain or were truncated to
    /// 32 bits on wasm32 are now one error each, the same on every target.
    #[test]
    fn overflowing_and_oversized_values_are_errors_not_infinities() {
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case] = &[
            (
                &[("top_k", "4294967299")],
                "top_k",
                "must be at most 1,048,576",
            ),
            (
                &[("no_repeat_ngram", "4294967297")],
                "no_repeat_ngram",
                "at most 1,048,576",
            ),
            (
                &[("max_tokens", "4294967296")],
                "max_tokens",
                "at most 1,048,576",
            ),
            (
                &[("logit_bias", "432:1e308"), ("temperature", "0.5")],
                "logit_bias",
                "[-10000, 10000]",
            ),
            (
                &[("frequency_penalty", "-1e308")],
                "frequency_penalty",
                "[-10000, 10000]",
            ),
            (
                &[("strategy", "beam"), ("length_penalty", "-1e308")],
                "length_penalty",
                "[-10, 10]",
            ),
            (
                &[("temperature", "1e-320")],
                "temperature",
                "0 (greedy) or in [0.0001, 10000]",
            ),
            (
                &[("repetition_penalty", "1e-300")],
                "repetition_penalty",
                "[0.0001, 10000]",
            ),
            (
                &[("strategy", "beam"), ("num_return", "4294967297")],
                "num_return",
                "at most",
            ),
        ];
        for (pairs, field, needle) in cases {
            let e = err(pairs);
            let msg = e
                .for_field(field)
                .unwrap_or_else(|| panic!("{pairs:?}: {e}"));
            assert!(msg.contains(needle), "{pairs:?}: {msg}");
        }
        // The bounds themselves are valid.
        raw(&[
            ("top_k", "1048576"),
            ("logit_bias", "3:-10000"),
            ("temperature", "0.0001"),
        ])
        .validate(512)
        .unwrap();
    }

    /// Settings built without validation (as a bug could) still cannot put +∞ or NaN on
    /// the page: the chain names the stage.
    #[test]
    fn a_stage_that_overflows_is_named() {
        use crate::sampling::chain::{process_f64, SamplingError};
        let s = Settings {
            temperature: 1e-320,
            ..Settings::default()
        };
        let e = process_f64(&s, &[2.0, 1.0, 0.1], Default::default(), 0.5, true).unwrap_err();
        assert_eq!(
            e,
            SamplingError::NonFinite {
                stage: Stage::Temperature
            }
        );
    }
}
