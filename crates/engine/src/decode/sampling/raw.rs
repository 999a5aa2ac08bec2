//! The knobs as given (a map by knob of their text: CLI flags, the link, the page's
//! controls), turned into validated `Settings` once, at the edge, with one error per rule
//! broken (`RawSettings::validate`); settings travel as their raw values.

use super::knobs::{Kind, Knob, KnobSpec, KNOBS};
use super::profile::Profile;
use super::settings::*;
use super::stage::Stage;
use crate::config::MAX_COUNT;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
        for (knob, value) in profile.map_or(Vec::new(), |p| p.defaults(sampling)) {
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
        let mut settings = Settings {
            values: BTreeMap::new(),
            max_tokens: v.count(Knob::MaxTokens, d.max_tokens, |n| {
                (n >= 1).then_some(()).ok_or("must be at least 1")
            }),
            seed: v.int(Knob::Seed, d.seed, any),
            stop: v.stop(),
            profile: v.profile(d.profile),
            order: Vec::new(),
            strategy: Strategy::Sample,
            defaulted: Vec::new(),
        };
        for spec in KNOBS.iter().filter(|k| k.stage.is_some()) {
            let value = match self.values.get(&spec.knob) {
                None => None,
                Some(entries) => match parse_value(spec, entries, vocab_size) {
                    Ok(value) => Some(value),
                    Err(m) => {
                        v.fail(spec.knob, m);
                        None
                    }
                },
            };
            if let Some(value) = value {
                settings.values.insert(spec.knob, value);
            } else {
                settings
                    .values
                    .insert(spec.knob, d.value(spec.knob).clone());
            }
        }
        settings.order = match self.get(Knob::Order) {
            Some(order) => v.order(order, &settings),
            None => settings.profile.default_order(),
        };
        settings.strategy = v.strategy();
        v.profile_bounds(&settings);
        if let Some(st) = settings.order.iter().copied().find(|st| {
            st.def().rule.runs_last()
                && !settings.is_neutral(*st)
                && settings.order.last() != Some(st)
        }) {
            let msg = format!(
                "{st} takes the draw's place and runs last (as llama.cpp places it): move it to \
                 the end of the order"
            );
            v.fail(Knob::Order, msg);
        }
        for st in Stage::all() {
            for (knob, message) in st.def().rule.check(&settings) {
                v.fail(knob, message);
            }
        }
        if v.errors.is_empty() {
            Ok(settings)
        } else {
            Err(SettingsErrors(v.errors))
        }
    }
}

/// A stage knob's default, parsed as a value given would be.
pub(super) fn default_value(spec: &KnobSpec) -> Result<Value, String> {
    let entries: Vec<String> = spec.default.iter().map(|s| s.to_string()).collect();
    parse_value(spec, &entries, usize::MAX)
}

/// A stage knob's entries as its value, or the rule broken.
fn parse_value(spec: &KnobSpec, entries: &[String], vocab: usize) -> Result<Value, String> {
    let last = entries.last().map(String::as_str).unwrap_or("");
    match spec.kind {
        Kind::Float(rule) => match last.trim().parse::<f64>() {
            Err(_) => Err(format!("{last:?} is not a number")),
            Ok(x) if !x.is_finite() => Err(format!("{last} is not a finite number")),
            Ok(x) => rule(x)
                .map(|()| Value::Num(x))
                .map_err(|m| format!("{m} (got {x})")),
        },
        Kind::Int(rule) => match last.trim().parse::<i64>() {
            Err(_) => Err(format!("{last:?} is not a whole number")),
            Ok(n) => match rule(n) {
                Err(m) => Err(format!("{m} (got {n})")),
                Ok(()) if n.unsigned_abs() > MAX_COUNT as u64 => {
                    let cap = crate::units::thousands(MAX_COUNT as u64);
                    Err(format!("must be at most {cap} (got {n})"))
                }
                Ok(()) => Ok(Value::Num(n as f64)),
            },
        },
        Kind::Bias => bias(entries, vocab).map(Value::Bias),
        Kind::Texts(rule) => {
            for e in entries {
                rule(e)?;
            }
            // Given, but with no entries (a box emptied): spelled `none`, so that it stays
            // "none" in a link or a message rather than falling back to the defaults.
            match entries {
                [] if !spec.default.is_empty() => Ok(Value::Texts(vec!["none".into()])),
                _ => Ok(Value::Texts(entries.to_vec())),
            }
        }
        Kind::General => unreachable!("general knobs are read by the validator"),
    }
}

/// `id:value` entries (comma-separated or repeated): ids in the vocabulary, finite values
/// within ±`MAX_MAGNITUDE`; a later entry for the same id replaces the earlier one.
fn bias(entries: &[String], vocab: usize) -> Result<Vec<(u32, f64)>, String> {
    let mut out: Vec<(u32, f64)> = Vec::new();
    let mut errors = Vec::new();
    for entry in entries.iter().flat_map(|e| e.split(',')) {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let Some((id, val)) = entry.split_once(':') else {
            errors.push(format!("{entry:?} is not id:value"));
            continue;
        };
        let id = match id.trim().parse::<u32>() {
            Ok(id) if (id as usize) < vocab => id,
            Ok(id) => {
                errors.push(format!(
                    "token id {id} is outside the vocabulary (0..{vocab})"
                ));
                continue;
            }
            Err(_) => {
                errors.push(format!("{id:?} in {entry:?} is not a token id"));
                continue;
            }
        };
        match val.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x.abs() > MAX_MAGNITUDE => {
                errors.push(format!("{val:?} in {entry:?} must be in [-10000, 10000]"))
            }
            Ok(x) if x.is_finite() => {
                out.retain(|(i, _)| *i != id);
                out.push((id, x));
            }
            _ => errors.push(format!("{val:?} in {entry:?} is not a finite number")),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors.join("; "))
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

    /// A profile's narrower ranges (the OpenAI API's: logit bias ±100, penalties ±2), from
    /// each knob's `bounds`.
    fn profile_bounds(&mut self, s: &Settings) {
        for spec in KNOBS.iter() {
            let Some(&(p, bound)) = spec.bounds.iter().find(|(p, _)| *p == s.profile) else {
                continue;
            };
            let wide = match s.value(spec.knob) {
                Value::Num(x) => (x.abs() > bound).then(|| x.to_string()),
                Value::Bias(b) => b
                    .iter()
                    .find(|(_, x)| x.abs() > bound)
                    .map(|(id, x)| format!("{id}:{x}")),
                Value::Texts(_) => None,
            };
            if let Some(got) = wide {
                let msg = format!("the {p} profile takes [-{bound}, {bound}] (got {got})");
                self.fail(spec.knob, msg);
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
                    let names: Vec<&str> = Stage::all().map(|s| s.name()).collect();
                    self.fail(
                        Knob::Order,
                        format!("{name:?} is not a stage ({})", names.join(", ")),
                    );
                    return s.profile.default_order();
                }
                Some(st) if order.contains(&st) => {
                    self.fail(Knob::Order, format!("{st} appears twice"));
                    return s.profile.default_order();
                }
                Some(st) => order.push(st),
            }
        }
        for st in s.profile.default_order() {
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

impl Settings {
    /// The same settings checked against a model's vocabulary (logit-bias ids).
    pub fn for_vocab(self, vocab_size: usize) -> Result<Settings, SettingsErrors> {
        RawSettings::from(self).validate(vocab_size)
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

/// Settings travel as their raw values (a message cannot carry settings that break a rule:
/// they are validated again on arrival).
impl Serialize for Settings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawSettings::from(self.clone()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Settings, D::Error> {
        Settings::try_from(RawSettings::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}
