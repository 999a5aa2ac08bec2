//! Parse, don't validate: raw knob values (strings from the CLI, a URL or a slider) become
//! [`Settings`] once, at the edge, with one clear error per rule. Inner code never sees an
//! out-of-range value, and nothing is clamped silently: NaN, infinities and out-of-range
//! numbers are errors.

use super::profile::Profile;
pub use super::stage::Stage;
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

/// Validated settings: every value is in range. [CONFIG].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
            profile: Profile::Hf,
            order: Profile::Hf.default_order().to_vec(),
            strategy: Strategy::Sample,
        }
    }
}

impl Settings {
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

    /// The settings as raw key/value pairs (the inverse of [`RawSettings::validate`]), for
    /// URLs and command lines. Values at their defaults are left out.
    pub fn to_pairs(&self) -> Vec<(&'static str, String)> {
        let d = Settings::default();
        let mut out = Vec::new();
        let mut put = |k: &'static str, differs: bool, v: String| {
            if differs {
                out.push((k, v));
            }
        };
        put(
            "profile",
            self.profile != d.profile,
            self.profile.name().into(),
        );
        for st in Stage::ALL {
            if st != Stage::LogitBias {
                put(st.name(), !self.is_neutral(st), self.describe(st));
            }
        }
        put(
            "logit_bias",
            !self.logit_bias.is_empty(),
            self.describe(Stage::LogitBias),
        );
        put(
            "penalty_window",
            self.penalty_window != 0,
            self.penalty_window.to_string(),
        );
        put(
            "max_tokens",
            self.max_tokens != d.max_tokens,
            self.max_tokens.to_string(),
        );
        for s in &self.stop {
            out.push(("stop", s.clone()));
        }
        out.push(("seed", self.seed.to_string()));
        let default_order = self.profile.default_order();
        if self.order != default_order {
            let names: Vec<&str> = self.order.iter().map(|s| s.name()).collect();
            out.push(("order", names.join(",")));
        }
        match self.strategy {
            Strategy::Sample => {}
            Strategy::Greedy => out.push(("strategy", "greedy".into())),
            Strategy::Beam {
                width,
                length_penalty,
                early_stopping,
                num_return,
            } => {
                out.push(("strategy", "beam".into()));
                out.push(("beams", width.to_string()));
                out.push(("length_penalty", length_penalty.to_string()));
                out.push(("early_stopping", early_stopping.to_string()));
                out.push(("num_return", num_return.to_string()));
            }
        }
        out
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

/// Raw values as they arrive from the outside: text, unparsed. `None` = left at the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RawSettings {
    pub temperature: Option<String>,
    pub top_k: Option<String>,
    pub top_p: Option<String>,
    pub min_p: Option<String>,
    pub typical_p: Option<String>,
    pub repetition_penalty: Option<String>,
    pub frequency_penalty: Option<String>,
    pub presence_penalty: Option<String>,
    pub penalty_window: Option<String>,
    /// Entries "id:value"; each may also hold several, comma-separated.
    pub logit_bias: Vec<String>,
    pub no_repeat_ngram: Option<String>,
    pub max_tokens: Option<String>,
    pub stop: Vec<String>,
    pub seed: Option<String>,
    pub profile: Option<String>,
    /// Stage names, comma-separated.
    pub order: Option<String>,
    /// "sample", "greedy" or "beam".
    pub strategy: Option<String>,
    pub beams: Option<String>,
    pub length_penalty: Option<String>,
    pub early_stopping: Option<String>,
    pub num_return: Option<String>,
}

/// The knob names `RawSettings::set` understands (URL keys, form fields).
pub const FIELDS: [&str; 21] = [
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "typical_p",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
    "penalty_window",
    "logit_bias",
    "no_repeat_ngram",
    "max_tokens",
    "stop",
    "seed",
    "profile",
    "order",
    "strategy",
    "beams",
    "length_penalty",
    "early_stopping",
    "num_return",
];

impl RawSettings {
    /// Sets one field by name (a URL or form key). Returns false for an unknown key.
    pub fn set(&mut self, key: &str, value: &str) -> bool {
        let v = Some(value.to_string());
        match key.replace('-', "_").as_str() {
            "temperature" => self.temperature = v,
            "top_k" => self.top_k = v,
            "top_p" => self.top_p = v,
            "min_p" => self.min_p = v,
            "typical_p" => self.typical_p = v,
            "repetition_penalty" => self.repetition_penalty = v,
            "frequency_penalty" => self.frequency_penalty = v,
            "presence_penalty" => self.presence_penalty = v,
            "penalty_window" => self.penalty_window = v,
            "logit_bias" => self.logit_bias.push(value.to_string()),
            "no_repeat_ngram" => self.no_repeat_ngram = v,
            "max_tokens" => self.max_tokens = v,
            "stop" => self.stop.push(value.to_string()),
            "seed" => self.seed = v,
            "profile" => self.profile = v,
            "order" => self.order = v,
            "strategy" => self.strategy = v,
            "beams" => self.beams = v,
            "length_penalty" => self.length_penalty = v,
            "early_stopping" => self.early_stopping = v,
            "num_return" => self.num_return = v,
            _ => return false,
        }
        true
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> RawSettings {
        let mut raw = RawSettings::default();
        for (k, v) in pairs {
            raw.set(k, v);
        }
        raw
    }

    /// Validates every value against its rule. `vocab_size` bounds logit-bias ids.
    pub fn validate(&self, vocab_size: usize) -> Result<Settings, SettingsErrors> {
        let mut v = Validator::default();
        let d = Settings::default();
        let temperature = v.float("temperature", &self.temperature, d.temperature, |x| {
            (x >= 0.0).then_some(()).ok_or("must be ≥ 0 (0 = greedy)")
        });
        let top_k = v.int("top_k", &self.top_k, d.top_k as u64, |_| Ok(())) as usize;
        let top_p = v.float("top_p", &self.top_p, d.top_p, |x| {
            (x > 0.0 && x <= 1.0)
                .then_some(())
                .ok_or("must be in (0, 1] (1 = off)")
        });
        let min_p = v.float("min_p", &self.min_p, d.min_p, |x| {
            (0.0..=1.0)
                .contains(&x)
                .then_some(())
                .ok_or("must be in [0, 1] (0 = off)")
        });
        let typical_p = v.float("typical_p", &self.typical_p, d.typical_p, |x| {
            (x > 0.0 && x <= 1.0)
                .then_some(())
                .ok_or("must be in (0, 1] (1 = off)")
        });
        let repetition_penalty =
            v.float("repetition_penalty", &self.repetition_penalty, 1.0, |x| {
                (x > 0.0).then_some(()).ok_or("must be > 0 (1 = off)")
            });
        let frequency_penalty =
            v.float(
                "frequency_penalty",
                &self.frequency_penalty,
                0.0,
                |_| Ok(()),
            );
        let presence_penalty = v.float("presence_penalty", &self.presence_penalty, 0.0, |_| Ok(()));
        let penalty_window = v.int("penalty_window", &self.penalty_window, 0, |_| Ok(())) as usize;
        let no_repeat_ngram =
            v.int("no_repeat_ngram", &self.no_repeat_ngram, 0, |_| Ok(())) as usize;
        let max_tokens = v.int("max_tokens", &self.max_tokens, d.max_tokens as u64, |n| {
            (n >= 1).then_some(()).ok_or("must be at least 1")
        }) as usize;
        let seed = v.int("seed", &self.seed, d.seed, |_| Ok(()));
        let logit_bias = v.logit_bias(&self.logit_bias, vocab_size);
        let stop = v.stop(&self.stop);
        let profile = match &self.profile {
            None => d.profile,
            Some(s) => Profile::parse(s).unwrap_or_else(|| {
                v.fail(
                    "profile",
                    format!("{s:?} is not a profile (hf, llama.cpp or openai)"),
                );
                d.profile
            }),
        };
        let mut settings = Settings {
            temperature,
            top_k,
            top_p,
            min_p,
            typical_p,
            repetition_penalty,
            frequency_penalty,
            presence_penalty,
            penalty_window,
            logit_bias,
            no_repeat_ngram,
            max_tokens,
            stop,
            seed,
            profile,
            order: profile.default_order().to_vec(),
            strategy: Strategy::Sample,
        };
        if let Some(order) = &self.order {
            settings.order = v.order(order, &settings);
        }
        settings.strategy = v.strategy(self);
        if v.errors.is_empty() {
            Ok(settings)
        } else {
            Err(SettingsErrors(v.errors))
        }
    }
}

/// Collects one error per broken rule while parsing.
#[derive(Default)]
struct Validator {
    errors: Vec<SettingError>,
}

impl Validator {
    fn fail(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(SettingError {
            field: field.to_string(),
            message: message.into(),
        });
    }

    /// A finite float obeying `rule`, or `default` when absent.
    fn float(
        &mut self,
        field: &str,
        raw: &Option<String>,
        default: f64,
        rule: impl Fn(f64) -> Result<(), &'static str>,
    ) -> f64 {
        let Some(s) = raw else { return default };
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
        field: &str,
        raw: &Option<String>,
        default: u64,
        rule: impl Fn(u64) -> Result<(), &'static str>,
    ) -> u64 {
        let Some(s) = raw else { return default };
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

    fn logit_bias(&mut self, entries: &[String], vocab: usize) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = Vec::new();
        for entry in entries.iter().flat_map(|e| e.split(',')) {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let Some((id, val)) = entry.split_once(':') else {
                self.fail("logit_bias", format!("{entry:?} is not id:value"));
                continue;
            };
            let id = match id.trim().parse::<u32>() {
                Ok(id) if (id as usize) < vocab => id,
                Ok(id) => {
                    self.fail(
                        "logit_bias",
                        format!("token id {id} is outside the vocabulary (0..{vocab})"),
                    );
                    continue;
                }
                Err(_) => {
                    self.fail(
                        "logit_bias",
                        format!("{id:?} in {entry:?} is not a token id"),
                    );
                    continue;
                }
            };
            match val.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => {
                    // A later entry for the same id replaces the earlier one.
                    out.retain(|(i, _)| *i != id);
                    out.push((id, x));
                }
                _ => self.fail(
                    "logit_bias",
                    format!("{val:?} in {entry:?} is not a finite number"),
                ),
            }
        }
        out
    }

    fn stop(&mut self, stops: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for s in stops {
            if s.is_empty() {
                self.fail("stop", "a stop sequence cannot be empty");
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
                        "order",
                        format!("{name:?} is not a stage ({})", names.join(", ")),
                    );
                    return s.profile.default_order().to_vec();
                }
                Some(st) if order.contains(&st) => {
                    self.fail("order", format!("{st} appears twice"));
                    return s.profile.default_order().to_vec();
                }
                Some(st) => order.push(st),
            }
        }
        for st in Stage::ALL {
            if !order.contains(&st) {
                if !s.is_neutral(st) {
                    self.fail(
                        "order",
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

    fn strategy(&mut self, raw: &RawSettings) -> Strategy {
        let kind = raw.strategy.as_deref().map(str::trim).unwrap_or("sample");
        match kind {
            "sample" | "sampling" => Strategy::Sample,
            "greedy" => Strategy::Greedy,
            "beam" => {
                let width = self.int("beams", &raw.beams, 4, |n| {
                    (1..=64)
                        .contains(&n)
                        .then_some(())
                        .ok_or("must be in 1..=64")
                }) as usize;
                let length_penalty =
                    self.float("length_penalty", &raw.length_penalty, 1.0, |_| Ok(()));
                let early_stopping = match raw.early_stopping.as_deref().map(str::trim) {
                    None | Some("true") | Some("1") => true,
                    Some("false") | Some("0") => false,
                    Some(other) => {
                        self.fail("early_stopping", format!("{other:?} is not true or false"));
                        true
                    }
                };
                let num_return = self.int("num_return", &raw.num_return, 1, |n| {
                    (n >= 1).then_some(()).ok_or("must be at least 1")
                }) as usize;
                if num_return > width {
                    self.fail(
                        "num_return",
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
                    "strategy",
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
}
