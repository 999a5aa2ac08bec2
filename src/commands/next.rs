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
    #[command(flatten)]
    prompt: super::prompt::PromptArgs,
    /// How many of the most likely tokens to print (default 10); with --json, the
    /// vocabulary-long arrays hold only these tokens' entries (without it, every token's)
    #[arg(long)]
    top: Option<usize>,
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
    let ids = model.encode_prompt(&a.prompt.text()?)?;
    let allowed = match super::constrain::compile(model, &settings)? {
        Some(mut c) => Some(c.allowed()?),
        None => None,
    };
    let mut backend = open(&model.transformer, choice)?;
    let seq = backend.new_sequence()?;
    let prefill = crate::progress::Progress::new(format!("prefill of {} tokens", ids.len()));
    let (logits, record) = if a.probe.is_empty() {
        (pollster::block_on(backend.forward(seq, &ids, false))?, None)
    } else {
        let batch = decoding_engine::Batch::tokens(seq, 0, &ids, decoding_engine::Logits::Last);
        let spec = decoding_engine::ProbeSpec {
            lens_rows: ids.len(),
        };
        drop(prefill);
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
        let mut v = next_json(model, &trace, &ids, a.top.unwrap_or(10));
        if a.top.is_some() {
            bound(&mut v);
        }
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
        outln!("{v}");
    } else {
        let label = |i: usize| format!("{:?}", tk.piece(i as u32).unwrap_or("?"));
        print_trace_table(&trace, label, a.top.unwrap_or(10))?;
        if let Some(al) = &allowed {
            let c = constraint_json(&trace, al);
            let z = c["feasible_mass"].as_f64().unwrap_or(0.0);
            let z = if z >= 1e-3 {
                format!("{z:.4}")
            } else {
                format!("{z:.2e}")
            };
            outln!(
                "constraint: Z_t = {z} (the mass of the {} allowed tokens), mask {:.3} ms, {}",
                al.count,
                al.ms,
                al.position
            );
        }
        if let Some(r) = &record {
            if a.probe.contains(&ProbeKind::Attention) {
                probe::print_attention(model, r, &ids)?;
            }
            if a.probe.contains(&ProbeKind::Lens) {
                probe::print_lens(model, r, &ids)?;
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

/// `next --json --top N`: every vocabulary-long array cut to the top tokens' entries, in
/// their order (`ids`), a stage's removed tokens to those among them (`removed_count`: all
/// it removed), so that the output's size is N's, not the vocabulary's.
fn bound(v: &mut serde_json::Value) {
    use serde_json::{json, Value};
    let ids: Vec<usize> = v["top"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|x| x["id"].as_u64())
                .map(|i| i as usize)
                .collect()
        })
        .unwrap_or_default();
    let pick = |a: &Value| -> Value {
        let a = a.as_array().map(Vec::as_slice).unwrap_or_default();
        Value::Array(
            ids.iter()
                .map(|&i| a.get(i).cloned().unwrap_or(Value::Null))
                .collect(),
        )
    };
    v["vocab_size"] = json!(v["probs"].as_array().map_or(0, Vec::len));
    for key in ["input_probs", "probs"] {
        v[key] = pick(&v[key]);
    }
    for s in v["stages"].as_array_mut().into_iter().flatten() {
        s["probs"] = pick(&s["probs"]);
        let removed: Vec<u64> = s["removed"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        s["removed_count"] = json!(removed.len());
        s["removed"] = json!(removed
            .iter()
            .filter(|r| ids.contains(&(**r as usize)))
            .collect::<Vec<_>>());
    }
    v["ids"] = json!(ids);
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
