//! `next --probe attention,lens`: inside the prompt's last step, printed as a table or JSON
//! (`decoding_engine::forward::probe`).

use crate::error::CliError;
use decoding_engine::forward::probe::ProbeRecord;
use decoding_engine::Model;
use serde_json::{json, Value};

/// Tokens listed per layer at the last position.
const LENS_TOP: usize = 5;
/// Positions attended most, per head, in the table.
const ATTENDED: usize = 3;

fn piece(m: &Model, id: u32) -> String {
    m.tokenizer.piece(id).unwrap_or("?").to_string()
}

/// `{"pos", "tokens", "attention": [{layer, head, kv_head, weights}], "lens": {...}}`.
pub fn json(m: &Model, r: &ProbeRecord, ids: &[u32], (attention, lens): (bool, bool)) -> Value {
    let mut v = json!({
        "pos": r.pos,
        "tokens": ids.iter().map(|&t| json!({"id": t, "piece": piece(m, t)})).collect::<Vec<_>>(),
        "n_layers": r.layers,
        "n_heads": r.n_heads,
        "kv_mul": r.kv_mul,
    });
    if attention {
        let heads: Vec<Value> = (0..r.layers)
            .flat_map(|l| (0..r.n_heads).map(move |h| (l, h)))
            .map(|(l, h)| {
                json!({"layer": l, "head": h, "kv_head": r.kv_head(h), "weights": r.weights(l, h)})
            })
            .collect();
        v["attention"] = json!(heads);
    }
    if lens {
        let lens = m.transformer.lens(r, LENS_TOP);
        let layers: Vec<Value> = (0..r.layers)
            .map(|l| {
                let cells: Vec<Value> = (lens.positions.iter().enumerate())
                    .map(|(i, &p)| {
                        let c = lens.cell(l, i);
                        json!({"pos": p, "id": c.token, "piece": piece(m, c.token), "prob": c.prob})
                    })
                    .collect();
                let last = &lens.last[l];
                let top: Vec<Value> = (last.top.iter())
                    .map(|&(id, p)| json!({"id": id, "piece": piece(m, id), "prob": p}))
                    .collect();
                json!({"layer": l, "cells": cells, "top": top, "kl_to_final": last.kl_to_final})
            })
            .collect();
        v["lens"] = json!({
            "note": "the raw logit lens: the final norm and classifier applied to intermediate layers, which the model was not trained for",
            "layers": layers,
        });
    }
    v
}

/// Per layer and head, the positions the last token attended to most.
pub fn print_attention(m: &Model, r: &ProbeRecord, ids: &[u32]) -> Result<(), CliError> {
    outln!(
        "\nattention of the last token (position {}) over {} cached positions: {} dot products of size {} per head",
        r.pos,
        r.positions(),
        r.positions(),
        m.config().head_size()
    );
    for l in 0..r.layers {
        for h in 0..r.n_heads {
            let w = r.weights(l, h);
            let mut order: Vec<usize> = (0..w.len()).collect();
            order.sort_by(|&a, &b| w[b].total_cmp(&w[a]).then(a.cmp(&b)));
            let most: Vec<String> = (order.iter().take(ATTENDED))
                .map(|&p| format!("{p} {:?} {:.3}", piece(m, ids[p]), w[p]))
                .collect();
            outln!(
                "  layer {l} head {h} (K/V head {}): {}",
                r.kv_head(h),
                most.join(", ")
            );
        }
    }
    Ok(())
}

/// Each layer's top next token at each position, then the last position's distributions.
pub fn print_lens(m: &Model, r: &ProbeRecord, ids: &[u32]) -> Result<(), CliError> {
    let lens = m.transformer.lens(r, LENS_TOP);
    outln!("\nthe raw logit lens: the final norm and classifier applied to intermediate layers, which the model was not trained for");
    let head: Vec<String> = (lens.positions.iter())
        .map(|&p| format!("{:>12}", format!("{:?}", piece(m, ids[p]))))
        .collect();
    outln!("{:>8} {}", "", head.join(" "));
    for l in 0..r.layers {
        let row: Vec<String> = (0..lens.positions.len())
            .map(|i| {
                let c = lens.cell(l, i);
                format!("{:>12}", format!("{:?} {:.2}", piece(m, c.token), c.prob))
            })
            .collect();
        outln!("{:>8} {}", format!("layer {l}"), row.join(" "));
    }
    outln!("\nat the last position, each layer against the final distribution:");
    for (l, layer) in lens.last.iter().enumerate() {
        let top: Vec<String> = (layer.top.iter())
            .map(|&(id, p)| format!("{:?} {p:.3}", piece(m, id)))
            .collect();
        outln!(
            "  layer {l}: KL(final ‖ layer) {:.4} nats; {}",
            layer.kl_to_final,
            top.join(", ")
        );
    }
    Ok(())
}
