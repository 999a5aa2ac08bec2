//! Beam search as a tree (lesson 10, section 2): every expanded prefix with its cumulative
//! log-probability, pruned branches greyed, finished hypotheses ringed; it grows one level per
//! step. Beside it, greedy's total log-probability over the same number of tokens against the
//! best beam's: locally greedy is not globally optimal.

use super::export;
use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use super::views::beam::BeamViews;
use decoding_engine::decode::beam::BeamNode;
use decoding_engine::decode::sampling::Knob;
use decoding_page::export::{beam_tree, beam_tree_along, Greedy};
use decoding_page::geometry::beam::{paths, Paths};
use decoding_page::page::Panel;
use decoding_page::protocol::*;
use leptos::prelude::*;

/// The tree: the very SVG the export saves, in a box that scrolls sideways (the figure
/// keeps its size: a level a column).
fn tree(
    ui: Ui,
    v: &BeamView,
    (all, found): (&[BeamNode], &Paths),
    wrap: NodeRef<leptos::html::Div>,
) -> impl IntoView {
    let greedy = Greedy {
        tokens: &v.greedy_tokens,
        cum: &v.greedy_cum,
    };
    let d = beam_tree_along(all, found, greedy, &|t| ui.piece(t));
    view! {
        <p class="small"><Tag of="beam-tree" />" the tree: every prefix kept or pruned, Σ log p at each node"</p>
        <div class="tree-wrap" node_ref=wrap data-testid="beam-tree-wrap" tabindex="0" role="region" aria-label="the beam tree, scrollable"
            inner_html=d.themed(ui.scheme()).svg()></div>
    }
}

#[component]
pub fn BeamPanel(views: BeamViews) -> impl IntoView {
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
                views.view.with_untracked(|v| {
                    let v = v.as_ref()?;
                    let greedy = Greedy { tokens: &v.greedy_tokens, cum: &v.greedy_cum };
                    views.nodes.with_untracked(|n| (!n.is_empty()).then(|| beam_tree(n, v.best_node, greedy, &|id| ui.piece(id))))
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
                    <button data-testid="beam-step" on:click=move |_| ui.send(&Request::Beam(BeamRequest::BeamStep))>"Step the beams"</button>
                    <button data-testid="beam-restart" on:click=move |_| ui.send(&Request::Beam(BeamRequest::BeamStart))>"Restart"</button>
                })}
                // A prompt where the beam beats greedy by far (log p −4.35 against −10.10
                // after 10 tokens), as a link: one click, and the address says what it is.
                <a class="button" data-testid="beam-example"
                    href=move || format!("?prompt=The+dog&{}=beam&steps=10&panels={}{}",
                        Knob::Strategy.name(), Panel::Beam.name(),
                        if ui.shell.page.with(|p| p.presenter) { "&presenter=1" } else { "" })>"Example: \"The dog\", 10 steps"</a>
            </div>
            {move || views.view.with(|b| b.as_ref().filter(|_| ui.is_beam_tracked()).map(|v| {
                // The best beam's and greedy's paths, found once for the legend and the tree.
                let found = views.nodes.with(|all| paths(v.best_node, &v.greedy_tokens, all));
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
                    {views.nodes.with(|all| tree(ui, v, (all, &found), wrap))}
                    <ol class="hyps">{finished}</ol>
                }
            }))}
        </PanelShell>
    }
}
