//! A processed next-token distribution as `sample` and `next` print it: a table with a
//! column per active stage, or JSON.

use crate::error::CliError;
use decoding_engine::decode::sampling::Trace;

/// The JSON shape shared by `sample` and `next --json`.
pub fn trace_json(trace: &Trace) -> serde_json::Value {
    // An inactive stage's distribution is the one it received (the trace leaves it empty).
    let mut leaving = &trace.input_probs;
    let stages: Vec<serde_json::Value> = trace
        .stages
        .iter()
        .map(|s| {
            if s.active {
                leaving = &s.probs;
            }
            serde_json::json!({
                "stage": s.stage.name(),
                "active": s.active,
                "setting": s.setting,
                "default_of": s.default_of.map(|p| p.name()),
                "probs": leaving,
                "removed": s.removed,
                "kept": s.kept,
                // Where it cut and what it held (a threshold, a state, a coin), when any.
                "cut": s.cut,
                "replaced_by": s.replaced_by.map(|r| r.name()),
            })
        })
        .collect();
    serde_json::json!({
        "input_probs": trace.input_probs,
        "stages": stages,
        "probs": trace.probs,
        "kept": trace.kept,
        "entropy": trace.entropy,
        "effective_tokens": trace.effective_tokens,
        "coin": trace.coin,
        "token": trace.token,
        "rank": trace.rank,
        "prob": trace.prob,
        "state": trace.state,
    })
}

/// The `top` tokens by input probability, a column per active stage, the chosen one marked.
pub fn print_trace_table(
    trace: &Trace,
    label: impl Fn(usize) -> String,
    top: usize,
) -> Result<(), CliError> {
    let mut order: Vec<usize> = (0..trace.probs.len()).collect();
    order.sort_by(|&i, &j| {
        trace.input_probs[j]
            .total_cmp(&trace.input_probs[i])
            .then(i.cmp(&j))
    });
    order.truncate(top);
    let active: Vec<_> = trace.stages.iter().filter(|s| s.active).collect();
    let defaults: Vec<String> = active
        .iter()
        .filter_map(|s| {
            s.default_of
                .map(|p| format!("{} {} (default of {p})", s.stage, s.setting))
        })
        .collect();
    if !defaults.is_empty() {
        outln!(
            "unset knobs at the profile's defaults: {}",
            defaults.join(", ")
        );
    }
    out!("{:>5}  {:<14} {:>8}", "id", "token", "input");
    for s in &active {
        out!(" {:>12}", format!("{}", s.stage.name()));
    }
    outln!(" {:>8}", "final");
    for &i in &order {
        out!("{:>5}  {:<14} {:>8.4}", i, label(i), trace.input_probs[i]);
        for s in &active {
            out!(" {:>12.4}", s.probs[i]);
        }
        let mark = if i as u32 == trace.token {
            "  <- chosen"
        } else {
            ""
        };
        outln!(" {:>8.4}{mark}", trace.probs[i]);
    }
    outln!(
        "entropy {:.4} nats, exp(entropy) {:.3} tokens, {} kept; token {} (rank {}, p = {:.4}){}",
        trace.entropy,
        trace.effective_tokens,
        trace.kept,
        trace.token,
        trace.rank,
        trace.prob,
        trace
            .coin
            .map_or(String::new(), |c| format!(", coin {c:.6}"))
    );
    Ok(())
}
