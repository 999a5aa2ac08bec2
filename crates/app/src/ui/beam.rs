//! Beam search as a tree (lesson 10, section 2): every expanded prefix with its cumulative
//! log-probability, pruned branches greyed, finished hypotheses ringed; it grows one level per
//! step. Beside it, greedy's total log-probability over the same number of tokens against the
//! best beam's: locally greedy is not globally optimal.

use super::Ui;
use decoding_engine::beam::NodeStatus;
use decoding_engine::sampling::Knob;
use decoding_web::protocol::{BeamView, Request};
use decoding_web::state::piece_text;
use leptos::prelude::*;

const COL: f32 = 120.0;
const ROW: f32 = 24.0;

fn tree(ui: Ui, v: &BeamView) -> impl IntoView {
    // Rows per depth, in node order.
    let mut row_of = vec![0usize; v.nodes.len()];
    let mut per_depth: Vec<usize> = Vec::new();
    for n in &v.nodes {
        if per_depth.len() <= n.depth {
            per_depth.resize(n.depth + 1, 0);
        }
        row_of[n.id] = per_depth[n.depth];
        per_depth[n.depth] += 1;
    }
    let rows = per_depth.iter().copied().max().unwrap_or(1);
    let pos = |id: usize| {
        let n = &v.nodes[id];
        (20.0 + n.depth as f32 * COL, 16.0 + row_of[id] as f32 * ROW)
    };
    let width = 60.0 + per_depth.len() as f32 * COL;
    let height = 24.0 + rows as f32 * ROW;
    let edges = v
        .nodes
        .iter()
        .filter_map(|n| n.parent.map(|p| (p, n)))
        .map(|(p, n)| {
            let (x1, y1) = pos(p);
            let (x2, y2) = pos(n.id);
            view! {
                <line class="edge" class:pruned=n.status == NodeStatus::Pruned
                    x1=x1 y1=y1 x2=x2 y2=y2></line>
            }
        })
        .collect_view();
    let nodes = v
        .nodes
        .iter()
        .map(|n| {
            let (x, y) = pos(n.id);
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
        v.nodes.len(),
        v.depth,
        v.finished.iter().filter(|h| h.ended).count()
    );
    let aria = summary.clone();
    view! {
        <div class="tree-wrap">
            <svg class="tree" data-testid="beam-tree" width=width height=height
                viewBox=format!("0 0 {width} {height}") role="img" aria-label=aria>
                <title>{summary}</title>
                {edges}
                {nodes}
            </svg>
        </div>
    }
}

#[component]
pub fn BeamPanel() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let open = move || ui.shell.page.with(|p| p.panels.contains("beam"));
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
                <button data-testid="toggle-beam" aria-expanded=move || open().to_string()
                    on:click=move |_| ui.toggle_panel("beam")>{move || if open() { "Hide" } else { "Show" }}</button>
            </div>
            {move || open().then(|| view! {
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
                        <p data-testid="beam-count">{format!("{} nodes{}", v.nodes.len(), if v.done { ", search finished" } else { "" })}</p>
                        {tree(ui, v)}
                        <ol class="hyps">{finished}</ol>
                    }
                }))}
            })}
        </section>
    }
}
