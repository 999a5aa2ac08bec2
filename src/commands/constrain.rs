//! The constraint flags of `generate`, `next` and `beam`: `--grammar FILE` (GBNF),
//! `--lark FILE`, `--json-schema FILE`, `--regex PATTERN`; each sets the `constraint` knob
//! (`kind:source`, which `--constraint` takes as text), compiled here for the model's
//! vocabulary.

use super::end_tokens;
use crate::error::CliError;
use decoding_engine::decode::constraint::{
    native_clock, Constraint, ConstraintSpec, ConstraintVocab,
};
use decoding_engine::decode::sampling::stages::constraint::spec;
use decoding_engine::decode::sampling::{Knob, RawSettings, Settings};
use decoding_engine::Model;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Default, Clone)]
pub struct ConstraintArgs {
    /// Constrain the output to a GBNF grammar (llama.cpp's syntax: `root ::= ...`) read
    /// from FILE
    #[arg(long, value_name = "FILE", group = "constraint_source")]
    grammar: Option<PathBuf>,
    /// Constrain the output to a grammar in llguidance's Lark-like syntax read from FILE
    #[arg(long, value_name = "FILE", group = "constraint_source")]
    lark: Option<PathBuf>,
    /// Constrain the output to an instance of the JSON Schema read from FILE
    #[arg(long, value_name = "FILE", group = "constraint_source")]
    json_schema: Option<PathBuf>,
    /// Constrain the output to match PATTERN (a regex, the whole output)
    #[arg(long, value_name = "PATTERN", group = "constraint_source")]
    regex: Option<String>,
}

impl ConstraintArgs {
    /// Puts the constraint given into `raw` (refusing a second one given by `--constraint`).
    pub fn apply(&self, raw: &mut RawSettings) -> Result<(), CliError> {
        let read = |p: &PathBuf| {
            std::fs::read_to_string(p).map_err(|e| CliError::Io {
                path: p.clone(),
                error: e.to_string(),
            })
        };
        let text = match (&self.grammar, &self.lark, &self.json_schema, &self.regex) {
            (Some(p), ..) => format!("grammar:{}", read(p)?),
            (_, Some(p), ..) => format!("lark:{}", read(p)?),
            (_, _, Some(p), _) => format!("json_schema:{}", read(p)?),
            (.., Some(r)) => format!("regex:{r}"),
            _ => return Ok(()),
        };
        if raw.get(Knob::Constraint).is_some() {
            return Err(CliError::Usage(
                "give one constraint: --constraint or one of --grammar, --lark, --json-schema, \
                 --regex"
                    .into(),
            ));
        }
        raw.put(Knob::Constraint, text);
        Ok(())
    }
}

/// The vocabulary as constraints read it.
pub fn vocab(model: &Model) -> Result<ConstraintVocab, CliError> {
    ConstraintVocab::new(
        &model.tokenizer,
        model.config().vocab_size,
        &end_tokens(model),
        native_clock,
    )
    .map_err(CliError::Usage)
}

/// The settings' constraint compiled for the model, if one is set.
pub fn compile(model: &Model, settings: &Settings) -> Result<Option<Constraint>, CliError> {
    let Some(s): Option<ConstraintSpec> = spec(settings) else {
        return Ok(None);
    };
    Ok(Some(s.compile(&vocab(model)?)?))
}
