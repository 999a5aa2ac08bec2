//! Beam search as a tree (lesson 10, section 2): every expanded prefix with its cumulative
//! log-probability, pruned branches greyed, finished hypotheses ringed; it grows one level per
//! step. Beside it, greedy's total log-probability over the same number of tokens against the
//! best beam's: locally greedy is not globally optimal.

use super::Ui;
use decoding_engine::beam::{BeamNode, NodeStatus};
use decoding_engine::sampling::Knob;
use decoding_web::protocol::{BeamView, Request};
use decoding_web::state::piece_text;
use leptos::prelude::*;

const COL: f32 = 120.0;
const ROW: f32 = 24.0;

/// Levels of the tree drawn: older levels are collapsed into one line (their best path is in
/// "Best beam"), so the drawing stays the same size however long the search runs.
const WINDOW: usize = 10;

fn tree(ui: Ui, v: &BeamView, all: &[BeamNode]) -> impl IntoView {
    // Nodes are in depth order: the window is a suffix of them.
    let first_depth = v.depth.saturating_sub(WINDOW - 1);
    let start = all.partition_point(|n| n.depth < first_depth);
    let shown = &all[start..];
    let hidden_levels = first_depth;
    // Rows per depth, in node order.
    let mut row_of = vec![0usize; shown.len()];
    let mut per_depth: Vec<usize> = Vec::new();
    for (i, n) in shown.iter().enumerate() {
        let d = n.depth - first_depth;
        if per_depth.len() <= d {
            per_depth.resize(d + 1, 0);
        }
        row_of[i] = per_depth[d];
        per_depth[d] += 1;
    }
    let rows = per_depth.iter().copied().max().unwrap_or(1);
    let left = if hidden_levels > 0 { 90.0 } else { 20.0 };
    let pos = |i: usize| {
        let n = &shown[i];
        (
            left + (n.depth - first_depth) as f32 * COL,
            16.0 + row_of[i] as f32 * ROW,
        )
    };
    let width = left + 40.0 + per_depth.len() as f32 * COL;
    let height = 24.0 + rows as f32 * ROW;
    let collapsed = (hidden_levels > 0).then(|| {
        view! {
            <text class="collapsed" data-testid="beam-collapsed" x="4" y="20">
                {format!("… {hidden_levels} earlier levels")}
            </text>
        }
    });
    let edges = shown
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let p = n.parent?.checked_sub(start)?;
            Some((p, i, n))
        })
        .map(|(p, i, n)| {
            let (x1, y1) = pos(p);
            let (x2, y2) = pos(i);
            view! {
                <line class="edge" class:pruned=n.status == NodeStatus::Pruned
                    x1=x1 y1=y1 x2=x2 y2=y2></line>
            }
        })
        .collect_view();
    let nodes = shown
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (x, y) = pos(i);
            let class = match n.status {
                NodeStatus::Root => "root",
                NodeStatus::Beam => "beam",
                NodeStatus::Pruned => "pruned",
                NodeStatus::Finished => "finished",
                NodeStatus::Unfinished => "unfinished",
            };
            let label = n.token.map_or_else(
                || "prompt".to_string(),
                |t| piece_text(&ui.piece(t), false, Some(10)),
            );
            let title = format!(
                "{} — log p {:.3}, cumulative {:.3} ({})",
                n.token.map_or_else(
                    || "the prompt".to_string(),
                    |t| piece_text(&ui.piece(t), true, None)
                ),
                n.logprob,
                n.cum_logprob,
                class
            );
            view! {
                <g class=format!("node {class}") data-testid="beam-node" data-status=class>
                    <title>{title}</title>
                    <circle cx=x cy=y r="5"></circle>
                    <text x=x + 8.0 y=y - 3.0>{label}</text>
                    <text class="lp" x=x + 8.0 y=y + 9.0>{format!("{:.2}", n.cum_logprob)}</text>
                </g>
            }
        })
        .collect_view();
    let summary = format!(
        "Beam tree: {} nodes over {} steps; {} finished hypotheses",
        all.len(),
        v.depth,
        v.finished.iter().filter(|h| h.ended).count()
    );
    let aria = summary.clone();
    view! {
        <div class="tree-wrap">
            <svg class="tree" data-testid="beam-tree" width=width height=height
                viewBox=format!("0 0 {width} {height}") role="img" aria-label=aria>
                <title>{summary}</title>
                {collapsed}
                {edges}
                {nodes}
            </svg>
        </div>
    }
}

#[component]
pub fn BeamPanel() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let open = ui.panel_open("beam");
    let knob = move |k: Knob| {
        let field = k.name();
        view! {
            <label>{k.spec().label}" "
                <input type="text" class="num" data-testid=format!("knob-{field}")
                    title=k.spec().help
                    prop:value=move || ui.knobs.raw.with(|r| r.get(k).map(String::from))
                        .unwrap_or_else(|| ui.knobs.settings.with(|s| s.knob_value(k).1.join("")))
                    on:change=move |ev| ui.set_field(field, event_target_value(&ev)) />
            </label>
        }
    };
    view! {
        <section class="panel" aria-labelledby="beam-h">
            <div class="panel-head">
                <h2 id="beam-h">"Beam search"</h2>
                <button data-testid="toggle-beam" aria-expanded=move || open.get().to_string()
                    on:click=move |_| ui.toggle_panel("beam")>{move || if open.get() { "Hide" } else { "Show" }}</button>
            </div>
            {move || open.get().then(|| view! {
                <div class="knob-row">
                    {knob(Knob::Beams)}
                    {knob(Knob::LengthPenalty)}
                    <label>
                        <input type="checkbox" data-testid="knob-early_stopping"
                            prop:checked=move || ui.knobs.raw.with(|r| r.get(Knob::EarlyStopping) != Some("false"))
                            on:change=move |ev| ui.set_field("early_stopping", event_target_checked(&ev).to_string()) />
                        " early stopping"
                    </label>
                    {move || (!ui.is_beam_tracked()).then(|| view! {
                        <button data-testid="use-beam" on:click=move |_| {
                            ui.set_field("strategy", "beam".into());
                        }>"Use beam search"</button>
                    })}
                    {move || ui.is_beam_tracked().then(|| view! {
                        <button data-testid="beam-step" on:click=move |_| ui.send(&Request::BeamStep)>"Step the beams"</button>
                        <button data-testid="beam-restart" on:click=move |_| ui.send(&Request::BeamStart)>"Restart"</button>
                    })}
                </div>
                {move || ui.views.beam.with(|b| b.as_ref().filter(|_| ui.is_beam_tracked()).map(|v| {
                    let finished = v.finished.iter().map(|h| view! {
                        <li>{format!("score {:.3} (log p {:.3}{}): {}", h.score, h.sum_logprob,
                            if h.ended { ", ended" } else { "" }, h.text)}</li>
                    }).collect_view();
                    view! {
                        <p class="compare" data-testid="beam-compare">
                            {format!(
                                "After {} tokens: best beam log p = {:.3}; greedy path log p = {:.3}{}",
                                v.depth, v.best_logprob, v.greedy_logprob,
                                if v.best_logprob > v.greedy_logprob + 1e-9 {
                                    " — the beam found a likelier sequence than greedy"
                                } else { "" }
                            )}
                        </p>
                        <p class="hint">{format!("Greedy: {}", v.greedy_text)}</p>
                        <p class="hint">{format!("Best beam: {}", v.best_text)}</p>
                        <p data-testid="beam-count">{format!("{} nodes{}", v.node_count, if v.done { ", search finished" } else { "" })}</p>
                        {ui.views.beam_nodes.with(|all| tree(ui, v, all))}
                        <ol class="hyps">{finished}</ol>
                    }
                }))}
            })}
        </section>
    }
}
