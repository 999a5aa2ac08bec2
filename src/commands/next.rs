//! `next`: the next-token distribution after a prompt, through the sampling chain, and
//! optionally inside the prompt's last step (attention, logit lens).

use super::probe;
use super::trace::{print_trace_table, trace_json};
use crate::error::CliError;
use crate::files::open;
use crate::knobs::KnobArgs;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::decode::sampling::{process, step_coin, History};
use decoding_engine::{Backend, Model};

#[derive(clap::Args, Debug)]
pub struct NextArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    /// How many of the most likely tokens to print
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Also show inside the prompt's last step: `attention` (its query's weights over the
    /// cache, per layer and head) and/or `lens` (the raw logit lens, layer by position)
    #[arg(long, value_enum, value_delimiter = ',')]
    probe: Vec<ProbeKind>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    knobs: KnobArgs,
    #[command(flatten)]
    constraint: super::constrain::ConstraintArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    Attention,
    Lens,
}

pub fn next(model: &Model, choice: BackendChoice, a: NextArgs) -> Result<(), CliError> {
    let mut raw = a.knobs.raw.clone();
    a.constraint.apply(&mut raw)?;
    let settings = raw.validate(model.config().vocab_size)?;
    let ids = model.encode_prompt(&a.prompt)?;
    let allowed = match super::constrain::compile(model, &settings)? {
        Some(mut c) => Some(c.allowed()?),
        None => None,
    };
    let mut backend = open(&model.transformer, choice)?;
    let seq = backend.new_sequence()?;
    let (logits, record) = if a.probe.is_empty() {
        (pollster::block_on(backend.forward(seq, &ids, false))?, None)
    } else {
        let batch = decoding_engine::Batch::tokens(seq, 0, &ids, decoding_engine::Logits::Last);
        let spec = decoding_engine::ProbeSpec {
            lens_rows: ids.len(),
        };
        let p = pollster::block_on(backend.forward_probe(batch, spec))?;
        (p.logits, Some(p.record))
    };
    let history = History {
        prompt: &ids,
        generated: &[],
        state: None,
        vocab: Some(&model.tokenizer),
        allowed: allowed.as_ref(),
    };
    let trace = process(
        &settings,
        &logits,
        history,
        step_coin(settings.seed, 0),
        true,
    )?;
    let tk = &model.tokenizer;
    if a.json {
        let mut v = next_json(model, &trace, &ids, a.top);
        if let Some(al) = &allowed {
            v["constraint"] = constraint_json(&trace, al);
        }
        if let Some(r) = &record {
            let kinds = (
                a.probe.contains(&ProbeKind::Attention),
                a.probe.contains(&ProbeKind::Lens),
            );
            v["probe"] = probe::json(model, r, &ids, kinds);
        }
        println!("{v}");
    } else {
        let label = |i: usize| format!("{:?}", tk.piece(i as u32).unwrap_or("?"));
        print_trace_table(&trace, label, a.top);
        if let Some(al) = &allowed {
            let c = constraint_json(&trace, al);
            let z = c["feasible_mass"].as_f64().unwrap_or(0.0);
            let z = if z >= 1e-3 {
                format!("{z:.4}")
            } else {
                format!("{z:.2e}")
            };
            println!(
                "constraint: Z_t = {z} (the mass of the {} allowed tokens), mask {:.3} ms, {}",
                al.count, al.ms, al.position
            );
        }
        if let Some(r) = &record {
            if a.probe.contains(&ProbeKind::Attention) {
                probe::print_attention(model, r, &ids);
            }
            if a.probe.contains(&ProbeKind::Lens) {
                probe::print_lens(model, r, &ids);
            }
        }
    }
    Ok(())
}

/// The constraint at this step: the feasible mass Z_t (the allowed tokens' probability as
/// the constraint received them), how many are allowed, the mask's time and the position.
fn constraint_json(
    trace: &decoding_engine::decode::sampling::Trace,
    allowed: &decoding_engine::decode::constraint::Allowed,
) -> serde_json::Value {
    let cut = trace
        .cuts
        .iter()
        .find(|(s, _)| s.name() == "constraint")
        .map(|(_, c)| c);
    serde_json::json!({
        "feasible_mass": cut.and_then(|c| c.value("feasible mass Z")),
        "allowed": allowed.count,
        "end_allowed": allowed.end,
        "mask_ms": allowed.ms,
        "position": allowed.position,
    })
}

/// The distribution as JSON: the trace and the `top` most likely tokens.
fn next_json(
    model: &Model,
    trace: &decoding_engine::decode::sampling::Trace,
    ids: &[u32],
    top_n: usize,
) -> serde_json::Value {
    let tk = &model.tokenizer;
    let mut order: Vec<usize> = (0..trace.probs.len()).collect();
    order.sort_by(|&i, &j| trace.probs[j].total_cmp(&trace.probs[i]).then(i.cmp(&j)));
    let top: Vec<serde_json::Value> = order
        .iter()
        .take(top_n)
        .enumerate()
        .map(|(rank, &i)| {
            serde_json::json!({
                "rank": rank + 1,
                "id": i,
                "piece": tk.piece(i as u32).unwrap_or("?"),
                "prob": trace.probs[i],
                "logprob": trace.probs[i].ln(),
            })
        })
        .collect();
    let mut v = trace_json(trace);
    v["prompt_tokens"] = serde_json::json!(ids);
    v["top"] = serde_json::json!(top);
    v
}
