//! The constraint panel's presets: a regex, a JSON Schema and a GBNF grammar that teach,
//! each with a prompt that sets the model up for it, as the `constraint` knob's text
//! (`kind:source`).

use crate::i18n::{number, Lang};
use decoding_engine::decode::constraint::ConstraintKind;

/// A prepared constraint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstraintPreset {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: ConstraintKind,
    pub source: &'static str,
    /// A prompt the constraint continues.
    pub prompt: &'static str,
}

impl ConstraintPreset {
    /// The `constraint` knob's text.
    pub fn knob_text(&self) -> String {
        format!("{}:{}", self.kind.name(), self.source)
    }
}

/// The story character's schema: a name, an age, a pet.
pub const CHARACTER_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "name": {"type": "string", "pattern": "^[A-Z][a-z]{1,10}$"},
    "age": {"type": "integer", "minimum": 1, "maximum": 12},
    "pet": {"enum": ["dog", "cat", "bird", "fish"]}
  },
  "required": ["name", "age", "pet"],
  "additionalProperties": false
}"#;

pub const CONSTRAINT_PRESETS: [ConstraintPreset; 4] = [
    ConstraintPreset {
        name: "yes-no",
        label: "yes or no",
        kind: ConstraintKind::Regex,
        source: r" (yes|no)\.",
        prompt: "Lily asked her mom if she could play outside. Her mom said",
    },
    ConstraintPreset {
        name: "date",
        label: "a date (regex)",
        kind: ConstraintKind::Regex,
        source: r" [0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
        prompt: "Lily was born on",
    },
    ConstraintPreset {
        name: "character",
        label: "a story character (JSON Schema)",
        kind: ConstraintKind::JsonSchema,
        source: CHARACTER_SCHEMA,
        prompt: "Tom had a dog named",
    },
    ConstraintPreset {
        name: "list",
        label: "a list (GBNF grammar)",
        kind: ConstraintKind::Grammar,
        source: "root ::= item{2,4}\nitem ::= \"\\n- \" [a-z]+ (\" \" [a-z]+)? \".\"\n",
        prompt: "Lily liked three things:",
    },
];

/// A constraint knob's text split for the panel's two fields: its kind's name ("none"
/// when off or unreadable) and its source.
pub fn split_knob(text: &str) -> (String, String) {
    match decoding_engine::decode::constraint::ConstraintSpec::parse(text) {
        Ok(Some(s)) => (s.kind.name().to_string(), s.source),
        _ => match text.split_once(':') {
            Some((k, src)) => (k.trim().to_string(), src.to_string()),
            None => ("none".to_string(), String::new()),
        },
    }
}

/// A figure of the caption in `lang`: English as `format!` writes it (no grouping), else
/// the language's separators.
fn figure(lang: Lang, v: f64, decimals: usize) -> String {
    if lang == Lang::En {
        format!("{v:.decimals$}")
    } else {
        number(lang, v, decimals)
    }
}

/// What Z_t says: its message (`constraint-caption-…` in `panels.ftl`) and the figures it
/// quotes, written for `lang`.
pub fn constraint_caption_message(
    lang: Lang,
    z: f64,
    allowed: usize,
    vocab: usize,
) -> (&'static str, Vec<(&'static str, String)>) {
    let removed = 100.0 * (1.0 - z);
    let allowed_text = figure(lang, allowed as f64, 0);
    if allowed == 0 {
        ("constraint-caption-none", Vec::new())
    } else if z >= 0.999_5 {
        (
            "constraint-caption-all",
            vec![("z", figure(lang, z, 4)), ("allowed", allowed_text)],
        )
    } else if z >= 0.5 {
        (
            "constraint-caption-agrees",
            vec![
                ("z", figure(lang, z, 3)),
                ("removed", figure(lang, removed, 1)),
                ("factor", figure(lang, 1.0 / z, 2)),
            ],
        )
    } else if z >= 0.05 {
        (
            "constraint-caption-removes",
            vec![
                ("z", figure(lang, z, 3)),
                ("removed", figure(lang, removed, 1)),
                ("allowed", allowed_text),
                ("factor", figure(lang, 1.0 / z, 1)),
            ],
        )
    } else {
        let shown = if z >= 1e-3 {
            figure(lang, z, 4)
        } else if lang == Lang::Es {
            format!("{z:.2e}").replace('.', ",")
        } else {
            format!("{z:.2e}")
        };
        (
            "constraint-caption-fights",
            vec![
                ("z", shown),
                ("removed", figure(lang, removed, 2)),
                ("factor", figure(lang, 1.0 / z.max(f64::MIN_POSITIVE), 0)),
                ("vocab", figure(lang, vocab as f64, 0)),
                ("allowed", allowed_text),
            ],
        )
    }
}

/// What Z_t says, with its numbers, in English.
pub fn constraint_caption(z: f64, allowed: usize, vocab: usize) -> String {
    let (id, args) = constraint_caption_message(Lang::En, z, allowed, vocab);
    crate::i18n::tr(Lang::En).fmt(id, &args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use decoding_engine::decode::constraint::{native_clock, ConstraintSpec, ConstraintVocab};

    /// Every preset compiles, and a text it allows is refused after a change (its mask
    /// binds): on a vocabulary of the 256 bytes.
    #[test]
    fn every_preset_compiles_and_its_text_reads_back() {
        let mut bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        bytes.push(Vec::new());
        let pieces = (0..bytes.len()).map(|i| format!("t{i}")).collect();
        let v = ConstraintVocab::from_parts(bytes, pieces, 256, 257, &[256], native_clock).unwrap();
        for p in CONSTRAINT_PRESETS {
            let spec = ConstraintSpec::parse(&p.knob_text()).unwrap().unwrap();
            assert_eq!(spec.kind, p.kind, "{}", p.name);
            let mut c = spec
                .compile(&v)
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let a = c.allowed().unwrap();
            assert!(a.count > 0 && a.count < 256 && !a.end, "{}: {a:?}", p.name);
            assert_eq!(
                split_knob(&p.knob_text()),
                (p.kind.name().to_string(), p.source.to_string())
            );
        }
        assert_eq!(split_knob("none"), ("none".into(), String::new()));
        // The compare preset's constrained column holds the character preset's schema.
        let cmp = crate::page::COMPARE_PRESETS
            .iter()
            .find(|p| p.name == "constrained")
            .unwrap();
        let s = crate::page::parse_column(cmp.columns[1], 512).unwrap();
        let text = s.texts(decoding_engine::decode::sampling::Knob::Constraint)[0].clone();
        let (kind, src) = split_knob(&text);
        assert_eq!(kind, "json_schema");
        let a: serde_json::Value = serde_json::from_str(&src).unwrap();
        let b: serde_json::Value = serde_json::from_str(CHARACTER_SCHEMA).unwrap();
        assert_eq!(a, b);
        assert_eq!(split_knob("yaml:x"), ("yaml".into(), "x".into()));
    }

    #[test]
    fn the_caption_reads_its_numbers() {
        assert!(constraint_caption(0.9999, 3, 512).contains("changes nothing"));
        assert!(constraint_caption(0.8, 3, 512).contains("1.25×"));
        assert!(
            constraint_caption(0.2, 3, 512).contains("80.0%")
                && constraint_caption(0.2, 3, 512).contains("5.0×")
        );
        let low = constraint_caption(0.001, 2, 512);
        assert!(
            low.contains("fighting") && low.contains("1000×") && low.contains("99.90%"),
            "{low}"
        );
        assert!(constraint_caption(0.0, 0, 512).contains("no token"));
    }
}
