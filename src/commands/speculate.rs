//! `speculate`: speculative decoding, a draft proposing tokens the model verifies in one
//! pass, timed against plain decoding on the same backend.

use super::{decode, end_tokens};
use crate::error::CliError;
use crate::files::open;
use crate::knobs::KnobArgs;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::backend::engine::Engine;
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::Settings;
use decoding_engine::decode::speculative::{
    expected_tokens_per_cycle, Cycle, Draft, Rule, SpecError, SpecStats, Speculator,
};
use decoding_engine::Model;

#[derive(clap::Args, Debug)]
pub struct SpeculateArgs {
    #[command(flatten)]
    prompt: super::prompt::PromptArgs,
    /// quant:q8, quant:q4 (the model's weights quantized), exit:K (its first K layers) or
    /// ngram:N (prompt lookup on the last N tokens)
    #[arg(long, default_value = "quant:q8")]
    draft: String,
    /// Tokens drafted a cycle (1–16)
    #[arg(long, default_value_t = 4)]
    gamma: usize,
    /// rejection (accept with min(1, p/q), resample the residual) or match (keep drafts
    /// equal to the model's own seeded token: plain decoding's text)
    #[arg(long, default_value = "rejection")]
    rule: String,
    #[command(flatten)]
    knobs: KnobArgs,
    #[arg(long)]
    json: bool,
}

/// What a speculative run did, and how long it and plain decoding took.
struct Outcome {
    emitted: Vec<u32>,
    cycles: Vec<Cycle>,
    stats: SpecStats,
    /// The mean overlap Σ min(p, q) of the checked drafts: the formula's α.
    alpha: f64,
    secs: f64,
    plain_secs: f64,
}

/// `speculate`: the text on stdout (the statistics on stderr), or with `--json` the emitted
/// ids, every cycle and the totals.
pub fn speculate(model: &Model, choice: BackendChoice, a: SpeculateArgs) -> Result<(), CliError> {
    let draft = Draft::parse(&a.draft, model.config().n_layers).map_err(usage)?;
    let rule = Rule::parse(&a.rule).map_err(usage)?;
    let settings = a.knobs.raw.validate(model.config().vocab_size)?;
    let ids = model.encode_prompt(&a.prompt.text()?)?;
    let mut engine = open(&model.transformer, choice)?;
    let o = run(model, &mut engine, &ids, draft, a.gamma, rule, &settings)?;
    if a.json {
        return print_json(&o, draft, a.gamma, rule);
    }
    let all: Vec<u32> = ids.iter().chain(&o.emitted).copied().collect();
    outln!("{}", decode(model, &all)?);
    let st = &o.stats;
    eprintln!(
        "{}: {} cycles, {} of {} drafts accepted ({:.1} %), {:.2} tokens a target pass \
         (formula at α = {:.3}: {:.2}), {:.1} tokens/s against {:.1} plain",
        draft.name(),
        st.cycles,
        st.accepted,
        st.drafted,
        100.0 * st.acceptance_rate(),
        st.tokens_per_cycle(),
        o.alpha,
        expected_tokens_per_cycle(o.alpha, a.gamma),
        o.emitted.len() as f64 / o.secs,
        o.emitted.len() as f64 / o.plain_secs
    );
    Ok(())
}

fn usage(e: SpecError) -> CliError {
    CliError::Usage(e.to_string())
}

/// The speculative run, timed from the built draft, then plain decoding of as many tokens
/// on the same backend for the wall-clock comparison.
fn run(
    model: &Model,
    engine: &mut Engine,
    ids: &[u32],
    draft: Draft,
    gamma: usize,
    rule: Rule,
    settings: &Settings,
) -> Result<Outcome, CliError> {
    let mut sp = pollster::block_on(Speculator::start(
        engine,
        &model.transformer,
        ids.to_vec(),
        draft,
        gamma,
        rule,
    ))
    .map_err(usage)?;
    let t0 = std::time::Instant::now();
    let cycles =
        pollster::block_on(sp.run(engine, settings, settings.max_tokens, &end_tokens(model)))
            .map_err(usage)?;
    let secs = t0.elapsed().as_secs_f64();
    let emitted = sp.emitted().to_vec();
    let stats = sp.stats.clone();
    sp.release(engine);
    let t1 = std::time::Instant::now();
    let mut g = pollster::block_on(Generation::start(engine, ids.to_vec(), vec![]))?;
    for _ in 0..emitted.len() {
        if let StepOutcome::Stopped(_) =
            pollster::block_on(g.step(engine, settings, &model.tokenizer))?
        {
            break;
        }
    }
    let plain_secs = t1.elapsed().as_secs_f64();
    let overlaps: Vec<f64> = cycles
        .iter()
        .flat_map(|c| c.checked.iter().map(|k| k.overlap))
        .collect();
    let alpha = overlaps.iter().sum::<f64>() / overlaps.len().max(1) as f64;
    Ok(Outcome {
        emitted,
        cycles,
        stats,
        alpha,
        secs,
        plain_secs,
    })
}

fn print_json(o: &Outcome, draft: Draft, gamma: usize, rule: Rule) -> Result<(), CliError> {
    let st = &o.stats;
    let n = o.emitted.len() as f64;
    let v = serde_json::json!({
        "draft": draft.name(),
        "gamma": gamma,
        "rule": rule,
        "tokens": o.emitted,
        "cycles": o.cycles,
        "totals": {
            "cycles": st.cycles,
            "target_calls": st.target_calls,
            "drafted": st.drafted,
            "accepted": st.accepted,
            "emitted": st.emitted,
            "acceptance_rate": st.acceptance_rate(),
            "tokens_per_cycle": st.tokens_per_cycle(),
            "mean_overlap": o.alpha,
            "formula_tokens_per_cycle": expected_tokens_per_cycle(o.alpha, gamma),
            "seconds": o.secs,
            "plain_seconds": o.plain_secs,
            "tokens_per_second": n / o.secs,
            "plain_tokens_per_second": n / o.plain_secs,
            "speedup": o.plain_secs / o.secs,
        },
    });
    outln!(
        "{}",
        serde_json::to_string_pretty(&v).map_err(|e| CliError::Usage(e.to_string()))?
    );
    Ok(())
}
