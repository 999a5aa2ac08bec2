//! Beam search as a tree (lesson 10, section 2): every expanded prefix with its cumulative
//! log-probability, pruned branches greyed, finished hypotheses ringed; it grows one level per
//! step. Beside it, greedy's total log-probability over the same number of tokens against the
//! best beam's: locally greedy is not globally optimal.

use super::export;
use super::panel::PanelShell;
use super::taxonomy::Tag;
use super::Ui;
use decoding_engine::beam::{BeamNode, NodeStatus};
use decoding_engine::sampling::Knob;
use decoding_web::geometry::beam::{paths, Layout, OffTree, Paths};
use decoding_web::page::{piece_text, Panel};
use decoding_web::protocol::{BeamView, Request};
use leptos::prelude::*;

/// Greedy's path once beam search pruned it: its own row under the tree, dashed. Empty
/// while greedy stays in the tree.
fn greedy_track(ui: Ui, v: &BeamView, paths: &Paths, at: &Layout) -> Option<AnyView> {
    let off_tree = at.greedy_off_tree(paths, v.greedy_tokens.len(), v.depth);
    if off_tree.is_empty() {
        return None;
    }
    let track = off_tree
        .into_iter()
        .map(|OffTree { depth: d, at: (x, y), from }| {
            let edge = from.map(|(x1, y1)| {
                view! { <line class="edge greedy off-tree" x1=x1 y1=y1 x2=x y2=y></line> }
            });
            let t = v.greedy_tokens[d - 1];
            let cum = v.greedy_cum.get(d - 1).copied().unwrap_or(f64::NAN);
            view! {
                {edge}
                <g class="node greedy off-tree" data-testid="greedy-node">
                    <title>{format!("greedy's token {d}: {} — cumulative log p {cum:.3} (pruned from the beam)", piece_text(&ui.piece(t), true, None))}</title>
                    <circle cx=x cy=y r="6"></circle>
                    <text x=x + 9.0 y=y - 4.0>{piece_text(&ui.piece(t), false, Some(10))}</text>
                    <text class="lp" x=x + 9.0 y=y + 12.0>{format!("{cum:.2}")}</text>
                </g>
            }
        })
        .collect_view();
    Some(track.into_any())
}

/// Parent to child, the best beam's and greedy's paths marked.
fn edges(at: &Layout, shown: &[BeamNode], paths: &Paths) -> impl IntoView {
    let (on_best, on_greedy) = (&paths.best, &paths.greedy);
    shown
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let p = n.parent?.checked_sub(at.start)?;
            Some((p, i, n))
        })
        .map(|(p, i, n)| {
            let (x1, y1) = at.pos(p);
            let (x2, y2) = at.pos(i);
            let id = n.id;
            view! {
                <line class="edge" class:pruned=n.status == NodeStatus::Pruned
                    class:best=on_best[id] class:greedy=on_greedy[id] && !on_best[id]
                    class:both=on_greedy[id] && on_best[id]
                    x1=x1 y1=y1 x2=x2 y2=y2></line>
            }
        })
        .collect_view()
}

/// Each node: its token and cumulative log-probability, its status as its class.
fn nodes(ui: Ui, at: &Layout, shown: &[BeamNode], paths: &Paths) -> impl IntoView {
    shown
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (x, y) = at.pos(i);
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
            let path = match (paths.best[n.id], paths.greedy[n.id]) {
                (true, true) => " best greedy",
                (true, false) => " best",
                (false, true) => " greedy",
                _ => "",
            };
            view! {
                <g class=format!("node {class}{path}") data-testid="beam-node" data-status=class>
                    <title>{title}</title>
                    <circle cx=x cy=y r="6"></circle>
                    <text x=x + 9.0 y=y - 4.0>{label}</text>
                    <text class="lp" x=x + 9.0 y=y + 12.0>{format!("{:.2}", n.cum_logprob)}</text>
                </g>
            }
        })
        .collect_view()
}

fn tree(
    ui: Ui,
    v: &BeamView,
    all: &[BeamNode],
    paths: Paths,
    wrap: NodeRef<leptos::html::Div>,
) -> impl IntoView {
    // The layout the export draws too.
    let at = Layout::new(v.depth, all, (0.0, 0.0));
    let shown = &all[at.start..];
    let hidden_levels = at.first_depth;
    let greedy_track = greedy_track(ui, v, &paths, &at);
    let (width, height) = at.size(greedy_track.is_some());
    let collapsed = (hidden_levels > 0).then(|| {
        view! {
            <text class="collapsed" data-testid="beam-collapsed" x="4" y="18">
                {format!("… {hidden_levels} earlier levels (their best path is the transcript's start)")}
            </text>
        }
    });
    let summary = format!(
        "Beam tree: {} nodes over {} steps; {} finished hypotheses",
        all.len(),
        v.depth,
        v.finished.iter().filter(|h| h.ended).count()
    );
    let aria = summary.clone();
    view! {
        <p class="small"><Tag of="beam-tree" />" the tree: every prefix kept or pruned, Σ log p at each node"</p>
        <div class="tree-wrap" node_ref=wrap data-testid="beam-tree-wrap" tabindex="0" role="region" aria-label="the beam tree, scrollable">
            <svg class="tree" data-testid="beam-tree" width=width height=height
                viewBox=format!("0 0 {width} {height}") role="img" aria-label=aria>
                <title>{summary}</title>
                {collapsed}
                {edges(&at, shown, &paths)}
                {nodes(ui, &at, shown, &paths)}
                {greedy_track}
            </svg>
        </div>
    }
}

#[component]
pub fn BeamPanel() -> impl IntoView {
    let ui = expect_context::<Ui>();
    // The tree follows its newest level: scrolled to its right end whenever it is redrawn
    // (after layout, when the new width is known).
    let wrap = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if let Some(el) = wrap.get() {
            request_animation_frame(move || el.set_scroll_left(el.scroll_width()));
        }
    });
    let knob = move |k: Knob| {
        let field = k.name();
        view! {
            <label data-tagged>{k.spec().label}" " <Tag of=format!("knob-{field}") />" "
                <input type="text" class="num" data-testid=format!("knob-{field}")
                    title=k.spec().help
                    prop:value=move || ui.knobs.raw.with(|r| r.get(k).map(String::from))
                        .unwrap_or_else(|| ui.knobs.settings.with(|s| s.knob_value(k).1.join("")))
                    on:change=move |ev| ui.set_field(k, event_target_value(&ev)) />
            </label>
        }
    };
    view! {
        <PanelShell panel=Panel::Beam
            export=move || export::buttons("beam-tree", "the beam tree", move || {
                ui.views.beam.with_untracked(|v| {
                    let v = v.as_ref()?;
                    let greedy = decoding_web::export::Greedy { tokens: &v.greedy_tokens, cum: &v.greedy_cum };
                    ui.views.beam_nodes.with_untracked(|n| (!n.is_empty()).then(|| decoding_web::export::beam_tree(n, v.best_node, greedy, &|id| super::chip_label(&ui, id))))
                })
            })>
            <div class="knob-row">
                {knob(Knob::Beams)}
                {knob(Knob::LengthPenalty)}
                <label data-tagged>
                    <input type="checkbox" data-testid="knob-early_stopping"
                        prop:checked=move || ui.knobs.raw.with(|r| r.get(Knob::EarlyStopping) != Some("false"))
                        on:change=move |ev| ui.set_field(Knob::EarlyStopping, event_target_checked(&ev).to_string()) />
                    " early stopping " <Tag of="knob-early_stopping" />
                </label>
                {move || (!ui.is_beam_tracked()).then(|| view! {
                    <button data-testid="use-beam" on:click=move |_| {
                        ui.set_field(Knob::Strategy, "beam".into());
                    }>"Use beam search"</button>
                })}
                {move || ui.is_beam_tracked().then(|| view! {
                    <button data-testid="beam-step" on:click=move |_| ui.send(&Request::BeamStep)>"Step the beams"</button>
                    <button data-testid="beam-restart" on:click=move |_| ui.send(&Request::BeamStart)>"Restart"</button>
                })}
                // A prompt where the beam beats greedy by far (log p −4.35 against −10.10
                // after 10 tokens), as a link: one click, and the address says what it is.
                <a class="button" data-testid="beam-example"
                    href=move || format!("?prompt=The+dog&{}=beam&steps=10&panels={}{}",
                        Knob::Strategy.name(), Panel::Beam.name(),
                        if ui.shell.page.with(|p| p.presenter) { "&presenter=1" } else { "" })>"Example: \"The dog\", 10 steps"</a>
            </div>
            {move || ui.views.beam.with(|b| b.as_ref().filter(|_| ui.is_beam_tracked()).map(|v| {
                // The best beam's and greedy's paths, found once for the legend and the tree.
                let found = ui.views.beam_nodes.with(|all| paths(v.best_node, &v.greedy_tokens, all));
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
                    <p class="path-line" data-testid="beam-greedy"><span class="key greedy"></span>{
                        let in_tree = found.greedy_ids.len().saturating_sub(1);
                        let left = if in_tree < v.greedy_tokens.len() {
                            format!(" (its first {in_tree} tokens are in the tree; then beam search pruned it: the dashed row under the tree)")
                        } else { String::new() };
                        format!("Greedy{left}: {}", v.greedy_text)
                    }</p>
                    <p class="path-line"><span class="key best"></span>{format!("Best beam (in the transcript): {}", v.best_text)}</p>
                    <p data-testid="beam-count">{format!("{} nodes{}; grey dashed: pruned; ringed: finished", v.node_count, if v.done { ", search finished" } else { "" })}</p>
                    {ui.views.beam_nodes.with(|all| tree(ui, v, all, found, wrap))}
                    <ol class="hyps">{finished}</ol>
                }
            }))}
        </PanelShell>
    }
}
