//! "Same θ, different config" as a link holds it: the columns' settings and the steps they
//! took, the presets, a column's knobs as query text, and the knobs that differ.

use decoding_engine::decode::sampling::{RawSettings, SettingError, Settings};

/// Most columns side by side (each is a KV cache of the loaded model).
pub const MAX_COLUMNS: usize = 4;

/// The comparison as a link holds it: `cmp=<column>;<column>` (each column its settings as
/// a query string, the one the main link uses) and `cmp_steps=N`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareLink {
    pub columns: Vec<Settings>,
    pub steps: u32,
}

/// A prepared comparison: the lesson's and two more (lesson 10, sections 3 and 6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ComparePreset {
    pub name: &'static str,
    pub label: &'static str,
    /// Each column's settings as a query string.
    pub columns: &'static [&'static str],
}

pub const COMPARE_PRESETS: [ComparePreset; 5] = [
    ComparePreset {
        name: "terse-wild",
        label: "terse and deterministic (greedy) against wild and creative (T = 1.5, top-p 0.98)",
        columns: &["strategy=greedy", "temperature=1.5&top_p=0.98"],
    },
    // The same four knobs under two peers' rules: hf applies temperature before the
    // truncations (its warper order), llama.cpp after them (its default chain).
    ComparePreset {
        name: "profiles",
        label: "hf against llama.cpp with identical knobs (their orders disagree)",
        columns: &[
            "profile=hf&temperature=0.8&top_k=40&top_p=0.95&min_p=0.05",
            "profile=llama.cpp&temperature=0.8&top_k=40&top_p=0.95&min_p=0.05",
        ],
    },
    ComparePreset {
        name: "k-vs-p",
        label: "top-k 40 against top-p 0.9 (rigid against adaptive set size)",
        columns: &["top_k=40", "top_p=0.9"],
    },
    // The samplers practitioners set in 2026, each one change to llama.cpp's default chain:
    // the old repetition penalty against DRY on the same repeats, XTC taking the top
    // choices away half the time, mirostat holding the surprise at τ (its μ settles in the
    // chain panel's state chart).
    ComparePreset {
        name: "samplers-2026",
        label: "the samplers of 2026 in llama.cpp's chain: repetition penalty 1.3, DRY 0.8, \
                XTC 0.5, mirostat 2 (τ = 3)",
        columns: &[
            "profile=llama.cpp&repetition_penalty=1.3",
            "profile=llama.cpp&dry_multiplier=0.8",
            "profile=llama.cpp&xtc_probability=0.5&xtc_threshold=0.1",
            "profile=llama.cpp&mirostat=2&mirostat_tau=3",
        ],
    },
    // Constrained decoding: the same prompt and seed without and with the story
    // character's JSON Schema (the constraint panel's preset), so the text the mask
    // forces sits beside what the model wrote freely.
    ComparePreset {
        name: "constrained",
        label: "the same prompt without and with a JSON Schema (a story character)",
        columns: &[
            "temperature=1",
            "temperature=1&constraint=json_schema%3A%7B%22type%22%3A%20%22object%22%2C%20%22properties%22%3A%20%7B%22name%22%3A%20%7B%22type%22%3A%20%22string%22%2C%20%22pattern%22%3A%20%22%5E%5BA-Z%5D%5Ba-z%5D%7B1%2C10%7D%24%22%7D%2C%20%22age%22%3A%20%7B%22type%22%3A%20%22integer%22%2C%20%22minimum%22%3A%201%2C%20%22maximum%22%3A%2012%7D%2C%20%22pet%22%3A%20%7B%22enum%22%3A%20%5B%22dog%22%2C%20%22cat%22%2C%20%22bird%22%2C%20%22fish%22%5D%7D%7D%2C%20%22required%22%3A%20%5B%22name%22%2C%20%22age%22%2C%20%22pet%22%5D%2C%20%22additionalProperties%22%3A%20false%7D",
        ],
    },
];

/// One column's settings from its query text (`temperature=1.5&top_p=0.98`): every key a
/// knob, every value valid for a model of `vocab_size` tokens; else every broken rule.
pub fn parse_column(text: &str, vocab_size: usize) -> Result<Settings, Vec<SettingError>> {
    let mut raw = RawSettings::default();
    let mut errors = Vec::new();
    for (k, v) in form_urlencoded::parse(text.trim().as_bytes()) {
        if !raw.set(&k, &v) {
            errors.push(SettingError {
                field: k.into_owned(),
                message: "is not a knob".to_string(),
            });
        }
    }
    match raw.validate(vocab_size) {
        Ok(s) if errors.is_empty() => match s.strategy {
            decoding_engine::decode::sampling::Strategy::Beam { .. } => Err(vec![SettingError {
                field: decoding_engine::decode::sampling::knobs::Knob::Strategy
                    .name()
                    .into(),
                message: "a column runs greedy or sampling (beam search has its own panel)".into(),
            }]),
            _ => Ok(s),
        },
        Ok(_) => Err(errors),
        Err(e) => {
            errors.extend(e.0);
            Err(errors)
        }
    }
}

/// A column's settings as its query text (what `parse_column` reads back).
pub fn column_text(s: &Settings) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in s.to_pairs() {
        q.append_pair(k, &v);
    }
    q.finish()
}

/// The knobs (URL keys) whose effective values are not the same in every column.
pub fn differing(columns: &[Settings]) -> Vec<String> {
    decoding_engine::decode::sampling::knobs::KNOBS
        .iter()
        .filter(|spec| {
            let mut values = columns.iter().map(|s| s.knob_value(spec.knob).1);
            let first = values.next();
            values.any(|v| Some(v) != first)
        })
        .map(|spec| spec.name.to_string())
        .collect()
}

impl CompareLink {
    pub(super) fn parse(v: &str, vocab_size: usize) -> Result<Vec<Settings>, String> {
        let columns: Vec<&str> = v.split(';').collect();
        if !(2..=MAX_COLUMNS).contains(&columns.len()) {
            return Err(format!(
                "{} columns: compare 2 to {MAX_COLUMNS}",
                columns.len()
            ));
        }
        columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                parse_column(c, vocab_size).map_err(|e| {
                    let text: Vec<String> = e.iter().map(|e| e.to_string()).collect();
                    format!("column {}: {}", i + 1, text.join("; "))
                })
            })
            .collect()
    }

    pub(super) fn to_query(&self) -> String {
        let cols: Vec<String> = self.columns.iter().map(column_text).collect();
        cols.join(";")
    }
}
