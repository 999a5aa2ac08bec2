//! `sample`: hand-typed logits through the sampling chain (no model).

use super::trace::{print_trace_table, trace_json};
use crate::error::CliError;
use crate::knobs::KnobArgs;
use decoding_engine::decode::sampling::chain::process_f64;
use decoding_engine::decode::sampling::{step_coin, History};

#[derive(clap::Args, Debug)]
pub struct SampleArgs {
    /// Comma-separated logits, e.g. "2,1,0.1" (the lesson's example)
    #[arg(long, allow_hyphen_values = true)]
    logits: String,
    /// Token ids generated so far (all penalties see them), comma-separated
    #[arg(long, default_value = "")]
    history: String,
    /// Prompt token ids (seen by penalties whose profile includes the prompt)
    #[arg(long, default_value = "")]
    prompt_history: String,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    knobs: KnobArgs,
}

fn parse_ids(s: &str, what: &str) -> Result<Vec<u32>, CliError> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<u32>()
                .map_err(|_| CliError::Usage(format!("{what}: {p:?} is not a token id")))
        })
        .collect()
}

pub fn sample(a: SampleArgs) -> Result<(), CliError> {
    let mut logits = Vec::new();
    for p in a.logits.split(',').map(str::trim) {
        match p.parse::<f64>() {
            Ok(v) if v.is_finite() => logits.push(v),
            _ => {
                return Err(CliError::Usage(format!(
                    "--logits: {p:?} is not a finite number"
                )))
            }
        }
    }
    let history = parse_ids(&a.history, "--history")?;
    let prompt = parse_ids(&a.prompt_history, "--prompt-history")?;
    for &id in history.iter().chain(&prompt) {
        if id as usize >= logits.len() {
            return Err(CliError::Usage(format!(
                "token {id} in the history is outside the {} logits",
                logits.len()
            )));
        }
    }
    let settings = a.knobs.raw.validate(logits.len())?;
    // Typed logits have no text: a stage that looks for text finds none.
    let no_text =
        decoding_engine::tokenizer::PieceText::new(&vec![String::new(); logits.len()], false);
    let h = History {
        prompt: &prompt,
        generated: &history,
        state: None,
        vocab: Some(&no_text),
        allowed: None,
    };
    let trace = process_f64(&settings, &logits, h, step_coin(settings.seed, 0), true)?;
    if a.json {
        outln!("{}", trace_json(&trace));
    } else {
        print_trace_table(&trace, |i| format!("#{i}"), logits.len())?;
    }
    Ok(())
}
