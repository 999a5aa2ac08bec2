//! `beam`: beam search's finished sequences with their scores, the whole tree, and greedy
//! decoding of the same length for the lesson's comparison.

use super::{decode, end_tokens};
use crate::error::CliError;
use crate::files::open;
use crate::knobs::BeamKnobArgs;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::decode::beam::{score_continuation, BeamConfig, BeamSearch};
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::settings::BEAM_DEFAULTS;
use decoding_engine::decode::sampling::{Knob, Settings};
use decoding_engine::{Backend, Model};

#[derive(clap::Args, Debug)]
pub struct BeamArgs {
    #[command(flatten)]
    prompt: super::prompt::PromptArgs,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    knobs: BeamKnobArgs,
    #[command(flatten)]
    constraint: super::constrain::ConstraintArgs,
}

/// Greedy decoding of `n` tokens after `ids`, and their log-probability.
fn greedy_baseline(
    model: &Model,
    backend: &mut dyn Backend,
    ids: &[u32],
    n: usize,
) -> Result<(Vec<u32>, f64), CliError> {
    let greedy_settings = Settings {
        max_tokens: n,
        strategy: decoding_engine::decode::sampling::Strategy::Greedy,
        ..Settings::default()
    };
    let mut g = pollster::block_on(Generation::start(backend, ids.to_vec(), end_tokens(model)))?;
    while let StepOutcome::Token { .. } =
        pollster::block_on(g.step(backend, &greedy_settings, &model.tokenizer))?
    {}
    let greedy = g.generated_ids();
    let (_, lp) = pollster::block_on(score_continuation(backend, ids, &greedy))?;
    Ok((greedy, lp))
}

pub fn beam(
    model: &Model,
    choice: BackendChoice,
    a: BeamArgs,
    budget: decoding_engine::budget::Budget,
) -> Result<(), CliError> {
    let mut raw = a.knobs.raw.clone();
    raw.put(Knob::Strategy, "beam");
    a.constraint.apply(&mut raw)?;
    if raw.get(Knob::MaxTokens).is_none() {
        // Beam search keeps every hypothesis' cache: a shorter default than generate's.
        raw.put(Knob::MaxTokens, "32");
    }
    let settings: Settings = raw.validate(model.config().vocab_size)?;
    // The strategy is beam search (set above), so the fallback is never used.
    let config = BeamConfig::from_settings(&settings, BEAM_DEFAULTS);
    // A cache a beam, and greedy's for the comparison.
    crate::files::check_sequences(model.config(), config.width + 1, budget, "--beams")?;
    let ids = model.encode_prompt(&a.prompt.text()?)?;
    let mut engine = open(&model.transformer, choice)?;
    let backend: &mut dyn Backend = &mut engine;
    let seq = backend.new_sequence()?;
    let logits = pollster::block_on(backend.forward(seq, &ids, false))?;
    let seq_len = backend.config().seq_len;
    let mut search = BeamSearch::new(config, seq, ids.len(), seq_len, logits, end_tokens(model));
    if let Some(c) = super::constrain::compile(model, &settings)? {
        search.constrain(c);
    }
    while !pollster::block_on(search.step(backend))? {}
    let results = search.results();
    // Greedy over as many tokens as the best beam, for the lesson's comparison.
    let best_len = results.first().map_or(0, |h| h.tokens.len());
    let (greedy, greedy_lp) = greedy_baseline(model, backend, &ids, best_len.max(1))?;
    let text = |toks: &[u32]| -> Result<String, CliError> {
        let mut all = ids.clone();
        all.extend_from_slice(toks);
        decode(model, &all)
    };
    if a.json {
        let seqs: Vec<serde_json::Value> = results
            .iter()
            .map(|h| -> Result<serde_json::Value, CliError> {
                Ok(serde_json::json!({
                    "tokens": h.tokens,
                    "text": text(&h.tokens)?,
                    "sum_logprob": h.sum_logprob,
                    "score": h.score,
                    "ended": h.ended,
                    "node": h.node,
                }))
            })
            .collect::<Result<_, _>>()?;
        let out = serde_json::json!({
            "prompt_tokens": ids,
            "sequences": seqs,
            "nodes": search.nodes(),
            "greedy": { "tokens": greedy, "text": text(&greedy)?, "sum_logprob": greedy_lp },
        });
        outln!("{out}");
    } else {
        for (i, h) in results.iter().enumerate() {
            outln!(
                "#{} score {:.4}, log p {:.4}, {} tokens{}:\n{}\n",
                i + 1,
                h.score,
                h.sum_logprob,
                h.tokens.len(),
                if h.ended { ", ended" } else { "" },
                text(&h.tokens)?
            );
        }
        outln!(
            "greedy, {} tokens: log p {:.4}\n{}\n",
            greedy.len(),
            greedy_lp,
            text(&greedy)?
        );
        outln!("tree: {} nodes", search.nodes().len());
    }
    Ok(())
}
