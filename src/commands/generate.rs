//! `generate`: the prompt followed by generated text, streamed as it becomes final; or, for
//! scripts, JSON (`--json`: one object at the end; `--stream`: one line a token as it is
//! chosen). The schema is the README's ("Output for scripts") and `generate_json.rs`'s.

use super::generate_json::{Report, TokenJson};
use super::{decode, end_tokens};
use crate::error::CliError;
use crate::files::open;
use crate::knobs::KnobArgs;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::decode::generation::{Generation, StepOutcome, StopReason};
use decoding_engine::Model;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    #[command(flatten)]
    prompt: super::prompt::PromptArgs,
    /// Print JSON instead of text: the prompt's tokens, each generated token (id, piece,
    /// log-probability, rank), the seed, why it stopped and the timings, as one object
    #[arg(long)]
    json: bool,
    /// With --json: one JSON line as each token is chosen, then one with the totals
    #[arg(long, requires = "json")]
    stream: bool,
    /// With --json: each token's N most likely alternatives, with the model's own
    /// log-probabilities (at most 20)
    #[arg(long, value_name = "N", default_value_t = 0, requires = "json",
          value_parser = clap::value_parser!(u8).range(0..=20))]
    top_logprobs: u8,
    #[command(flatten)]
    knobs: KnobArgs,
    #[command(flatten)]
    constraint: super::constrain::ConstraintArgs,
}

pub fn generate(model: &Model, choice: BackendChoice, a: GenerateArgs) -> Result<(), CliError> {
    let mut raw = a.knobs.raw.clone();
    a.constraint.apply(&mut raw)?;
    let settings = raw.validate(model.config().vocab_size)?;
    let prompt = a.prompt.text()?;
    let ids = model.encode_prompt(&prompt)?;
    let mut engine = open(&model.transformer, choice)?;
    let started = Instant::now();
    let prefill = crate::progress::Progress::new(format!("prefill of {} tokens", ids.len()));
    let mut g = pollster::block_on(Generation::start(
        &mut engine,
        ids.clone(),
        end_tokens(model),
    ))?;
    drop(prefill);
    let prefill_s = started.elapsed().as_secs_f64();
    // A one-shot run never rewinds: only the newest step's logits are needed (the
    // alternatives of --top-logprobs are read from them).
    g.keep_logits(0);
    if decoding_engine::decode::sampling::stages::constraint::spec(&settings).is_some() {
        g.sync_constraint(&settings, &super::constrain::vocab(model)?)?;
    }
    let mut report = Report::new(model, &prompt, &ids, settings.seed, a.top_logprobs as usize);
    let mut printer = Printer::new(&settings, a.json);
    if a.stream {
        outln!("{}", report.start_line());
    } else if !a.json {
        out!("{}", decode(model, &ids)?);
        flush()?;
    }
    let tk = &model.tokenizer;
    let decoding = Instant::now();
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
                let i = g.steps().len() - 1;
                let token = TokenJson::of(&g.steps()[i], g.logits_at(i), &report);
                if a.stream {
                    outln!("{}", token.line());
                }
                report.tokens.push(token);
                printer.print(&g, tk, stop.as_ref())?;
                if let Some(r) = stop {
                    break r;
                }
            }
        }
    };
    let decode_s = decoding.elapsed().as_secs_f64();
    let text = printer.text(&g, tk, &reason);
    if a.json {
        let end = report.end(&text, &reason, prefill_s, decode_s, a.stream);
        outln!("{end}");
    } else {
        outln!();
        eprintln!("stopped: {reason}; {} tokens generated", g.steps().len());
    }
    Ok(())
}

/// Sends what was printed now (standard output holds a line until its newline).
fn flush() -> Result<(), CliError> {
    Ok(std::io::Write::flush(&mut std::io::stdout())?)
}

/// The text as it becomes final: held back while it could still be the start of a stop
/// sequence, or an incomplete UTF-8 character; printed only without --json.
struct Printer {
    hold: usize,
    printed: usize,
    quiet: bool,
}

impl Printer {
    fn new(settings: &decoding_engine::decode::sampling::Settings, quiet: bool) -> Printer {
        Printer {
            hold: settings.stop.iter().map(|s| s.len()).max().unwrap_or(1) - 1,
            printed: 0,
            quiet,
        }
    }

    /// Where the text ends once this step is taken (`stop`: the run ends here).
    fn end(&self, text: &str, stop: Option<&StopReason>) -> usize {
        let mut end = match stop {
            Some(StopReason::StopSequence { stop }) => {
                text.find(stop.as_str()).unwrap_or(text.len())
            }
            Some(_) => text.len(),
            None => text.len().saturating_sub(self.hold),
        };
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        end
    }

    fn print(
        &mut self,
        g: &Generation,
        tk: &decoding_engine::Tokenizer,
        stop: Option<&StopReason>,
    ) -> Result<(), CliError> {
        if self.quiet {
            return Ok(());
        }
        let text = g.generated_text(tk, stop.is_some());
        let end = self.end(&text, stop);
        if end > self.printed {
            out!("{}", &text[self.printed..end]);
            flush()?;
            self.printed = end;
        }
        Ok(())
    }

    /// The whole generated text, cut at a stop sequence as printed.
    fn text(&self, g: &Generation, tk: &decoding_engine::Tokenizer, reason: &StopReason) -> String {
        let text = g.generated_text(tk, true);
        let end = self.end(&text, Some(reason));
        text[..end].to_string()
    }
}
