//! `generate`: the prompt followed by generated text, streamed as it becomes final.

use super::{decode, end_tokens};
use crate::error::CliError;
use crate::files::open;
use crate::knobs::KnobArgs;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::decode::generation::{Generation, StepOutcome, StopReason};
use decoding_engine::decode::sampling::{Knob, Strategy};
use decoding_engine::Model;
use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    #[command(flatten)]
    knobs: KnobArgs,
    #[command(flatten)]
    constraint: super::constrain::ConstraintArgs,
}

pub fn generate(model: &Model, choice: BackendChoice, a: GenerateArgs) -> Result<(), CliError> {
    let mut raw = a.knobs.raw.clone();
    a.constraint.apply(&mut raw)?;
    let clock_seed = raw.get(Knob::Seed).is_none().then(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    if let Some(s) = clock_seed {
        raw.put(Knob::Seed, s.to_string());
    }
    let settings = raw.validate(model.config().vocab_size)?;
    if let Strategy::Beam { .. } = settings.strategy {
        return Err(CliError::Usage(
            "generate samples or decodes greedily; use the beam command for beam search".into(),
        ));
    }
    let ids = model.encode_prompt(&a.prompt)?;
    let mut engine = open(&model.transformer, choice)?;
    let mut g = pollster::block_on(Generation::start(
        &mut engine,
        ids.clone(),
        end_tokens(model),
    ))?;
    // A one-shot run never rewinds: only the newest step's logits are needed.
    g.keep_logits(0);
    if decoding_engine::decode::sampling::stages::constraint::spec(&settings).is_some() {
        g.sync_constraint(&settings, &super::constrain::vocab(model)?)?;
    }
    // (Said once the run can start: a refused constraint is the only line of its error.)
    if let Some(s) = clock_seed {
        eprintln!("seed: {s}");
    }
    let mut out = std::io::stdout().lock();
    write!(out, "{}", decode(model, &ids)?)?;
    out.flush()?;
    // Text is printed as it becomes final: held back while it could still be the start of a
    // stop sequence, or an incomplete UTF-8 character.
    let hold = settings.stop.iter().map(|s| s.len()).max().unwrap_or(1) - 1;
    let mut printed = 0;
    let tk = &model.tokenizer;
    let reason = loop {
        // A lost GPU device switches to the CPU and rebuilds the cache (said on stderr).
        let kind = engine.report.kind;
        let outcome = pollster::block_on(g.step(&mut engine, &settings, tk))?;
        if engine.report.kind != kind {
            eprintln!("backend: {}", engine.report.reason);
        }
        match outcome {
            StepOutcome::Stopped(r) => break r,
            StepOutcome::Token { stop, .. } => {
                let text = g.generated_text(tk, stop.is_some());
                let mut end = match &stop {
                    Some(StopReason::StopSequence { stop }) => {
                        text.find(stop.as_str()).unwrap_or(text.len())
                    }
                    Some(_) => text.len(),
                    None => text.len().saturating_sub(hold),
                };
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                if end > printed {
                    write!(out, "{}", &text[printed..end])?;
                    out.flush()?;
                    printed = end;
                }
                if let Some(r) = stop {
                    break r;
                }
            }
        }
    };
    writeln!(out)?;
    eprintln!("stopped: {reason}; {} tokens generated", g.steps().len());
    Ok(())
}
