//! `bench --mask`: the constraint's mask (llguidance's token mask over the vocabulary's byte
//! trie) timed per token, on the loaded model's vocabulary or on others' (`--mask-vocab`, a
//! model file whose tokenizer is read), beside a decode step of the measured model: the
//! share of a step the constraint costs.
//!
//! Each constraint is walked 48 tokens along a path it allows (a seeded choice among the
//! allowed tokens, the end refused while anything else is allowed), its mask computed once
//! a position as generation does; the time is `Allowed::ms`: the matcher's mask, its copy
//! into the vocabulary-sized bitset and the position's words, as generation pays them.

use crate::error::CliError;
use crate::files::ModelFiles;
use decoding_engine::decode::constraint::{native_clock, ConstraintSpec, ConstraintVocab};
use decoding_engine::decode::sampling::step_coin;
use decoding_engine::Model;
use std::path::PathBuf;

/// Tokens walked per run.
const STEPS: usize = 48;

/// The constraints timed: the page's presets' kinds, and the list as a regex and as Lark with
/// a multi-character lexeme (`WORD`) beside the GBNF list, whose translation gives every
/// character its own lexeme (GBNF's character-level meaning, `constraint/gbnf.rs`): what that
/// costs a mask.
const CONSTRAINTS: [(&str, &str); 5] = [
    (
        "json_schema character",
        r#"json_schema:{"type": "object", "properties": {"name": {"type": "string", "pattern": "^[A-Z][a-z]{1,10}$"}, "age": {"type": "integer", "minimum": 1, "maximum": 12}, "pet": {"enum": ["dog", "cat", "bird", "fish"]}}, "required": ["name", "age", "pet"], "additionalProperties": false}"#,
    ),
    (
        "grammar list",
        "grammar:root ::= item{2,8}\nitem ::= \"\\n- \" [a-z]+ (\" \" [a-z]+)? \".\"\n",
    ),
    ("regex words", r"regex:( [A-Za-z]{1,12}){1,40}\."),
    ("regex list", "regex:(\n- [a-z]+( [a-z]+)?\\.){2,8}"),
    (
        "lark list",
        "lark:start: item{2,8}\nitem: \"\\n- \" WORD (\" \" WORD)? \".\"\nWORD: /[a-z]+/\n",
    ),
];

#[derive(serde::Serialize)]
pub struct MaskTiming {
    pub vocab: String,
    pub vocab_size: usize,
    pub constraint: &'static str,
    /// Milliseconds a mask, the median run's mean and the best run's.
    pub median_ms: f64,
    pub best_ms: f64,
    pub tokens: usize,
    /// The median mask over the measured model's median decode step.
    pub over_decode_step: f64,
}

/// The vocabularies to time: the model's own, then each `--mask-vocab` file's.
pub fn vocabularies(
    own: Option<&Model>,
    others: &[PathBuf],
) -> Result<Vec<(String, ConstraintVocab)>, CliError> {
    let vocab_of = |m: &Model| {
        ConstraintVocab::new(
            &m.tokenizer,
            m.config().vocab_size,
            &[m.tokenizer.eos, m.tokenizer.bos],
            native_clock,
        )
        .map_err(CliError::Usage)
    };
    let mut out = Vec::new();
    if let Some(m) = own {
        out.push(("the model's".to_string(), vocab_of(m)?));
    }
    for p in others {
        let files = ModelFiles {
            model: Some(p.clone()),
            tokenizer: None,
            budget: Default::default(),
            precision: None,
            activations: Default::default(),
            chat: false,
            chat_template: None,
        };
        let m = files.load()?;
        out.push((p.display().to_string(), vocab_of(&m)?));
    }
    Ok(out)
}

/// Each constraint on each vocabulary, `repeat` runs; `decode_ms` the measured step.
pub fn measure(
    vocabs: &[(String, ConstraintVocab)],
    repeat: usize,
    decode_ms: f64,
) -> Result<Vec<MaskTiming>, CliError> {
    let mut out = Vec::new();
    for (name, v) in vocabs {
        for (what, text) in CONSTRAINTS {
            let spec =
                ConstraintSpec::parse(text)?.ok_or_else(|| CliError::Usage("none".into()))?;
            let mut runs = Vec::new();
            let mut tokens = 0;
            for _ in 0..repeat {
                let (ms, n) = walk(&spec, v)?;
                runs.push(ms / n.max(1) as f64);
                tokens = n;
            }
            runs.sort_by(f64::total_cmp);
            let median = runs[runs.len() / 2];
            out.push(MaskTiming {
                vocab: name.clone(),
                vocab_size: v.model_vocab(),
                constraint: what,
                median_ms: median,
                best_ms: runs[0],
                tokens,
                over_decode_step: median / decode_ms,
            });
        }
    }
    Ok(out)
}

/// One walk: the masks' total milliseconds and how many were computed.
fn walk(spec: &ConstraintSpec, v: &ConstraintVocab) -> Result<(f64, usize), CliError> {
    let mut c = spec.compile(v)?;
    let (mut total, mut n) = (0.0, 0);
    for step in 0..STEPS as u64 {
        let a = c.allowed()?;
        total += a.ms;
        n += 1;
        let ends = v.end_tokens();
        let ids: Vec<u32> = (0..v.model_vocab() as u32)
            .filter(|&t| a.allows(t as usize) && !ends.contains(&t))
            .collect();
        if ids.is_empty() {
            break;
        }
        // The chain's own coin (seed 0, this step's): the same path in every run.
        let u = step_coin(0, step);
        c.advance(ids[((u * ids.len() as f64) as usize).min(ids.len() - 1)])?;
    }
    Ok((total, n))
}

pub fn print(timings: &[MaskTiming]) -> Result<(), CliError> {
    for t in timings {
        outln!(
            "mask     {:>6} tokens: {:>8.3} ms median, {:>8.3} best; {:.1}% of a decode step ({}, vocabulary {}, {})",
            t.tokens,
            t.median_ms,
            t.best_ms,
            100.0 * t.over_decode_step,
            t.constraint,
            t.vocab_size,
            t.vocab
        );
    }
    Ok(())
}
