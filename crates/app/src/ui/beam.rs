//! Beam search as a tree (lesson 10, section 2): every expanded prefix with its cumulative
//! log-probability, pruned branches greyed, finished hypotheses ringed; it grows one level per
//! step. Beside it, greedy's total log-probability over the same number of tokens against the
//! best beam's: locally greedy is not globally optimal.

use super::export;
use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use super::views::beam::BeamViews;
use super::views::numbers::{int, num};
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
    let d = beam_tree_along(all, found, greedy, &|t| ui.piece(t), ui.lang());
    view! {
        <p class="small"><Tag of="beam-tree" />" "{ui.t("beam-tree-caption")}</p>
        <div class="tree-wrap" node_ref=wrap data-testid="beam-tree-wrap" tabindex="0" role="region" aria-label=ui.t("beam-tree-region")
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
        // The knob's words as the knobs panel has them (`knob-label-<name>`, kebab case).
        let name = field.replace('_', "-");
        let (label, help) = (format!("knob-label-{name}"), format!("knob-help-{name}"));
        view! {
            <label data-tagged>{move || ui.t(&label)}" " <Tag of=format!("knob-{field}") />" "
                <input type="text" class="num" data-testid=format!("knob-{field}")
                    title=move || ui.t(&help)
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
                    views.nodes.with_untracked(|n| (!n.is_empty()).then(|| beam_tree(n, v.best_node, greedy, &|id| ui.piece(id), ui.lang())))
                })
            })>
            <div class="knob-row">
                {knob(Knob::Beams)}
                {knob(Knob::LengthPenalty)}
                <label data-tagged>
                    <input type="checkbox" data-testid="knob-early_stopping"
                        prop:checked=move || ui.knobs.raw.with(|r| r.get(Knob::EarlyStopping) != Some("false"))
                        on:change=move |ev| ui.set_field(Knob::EarlyStopping, event_target_checked(&ev).to_string()) />
                    " "{move || ui.t("beam-early-stopping")}" " <Tag of="knob-early_stopping" />
                </label>
                {move || (!ui.is_beam_tracked()).then(|| view! {
                    <button data-testid="use-beam" on:click=move |_| {
                        ui.set_field(Knob::Strategy, "beam".into());
                    }>{ui.t("beam-use")}</button>
                })}
                {move || ui.is_beam_tracked().then(|| view! {
                    <button data-testid="beam-step" on:click=move |_| ui.send(&Request::Beam(BeamRequest::BeamStep))>{ui.t("beam-step")}</button>
                    <button data-testid="beam-restart" on:click=move |_| ui.send(&Request::Beam(BeamRequest::BeamStart))>{ui.t("beam-restart")}</button>
                })}
                // A prompt where the beam beats greedy by far (log p −4.35 against −10.10
                // after 10 tokens), as a link: one click, and the address says what it is.
                <a class="button" data-testid="beam-example"
                    href=move || format!("?prompt=The+dog&{}=beam&steps=10&panels={}{}",
                        Knob::Strategy.name(), Panel::Beam.name(),
                        if ui.shell.page.with(|p| p.presenter) { "&presenter=1" } else { "" })>
                    {move || ui.tf("beam-example", &[("prompt", "\"The dog\"".into()), ("steps", int(ui, 10))])}</a>
            </div>
            {move || views.view.with(|b| b.as_ref().filter(|_| ui.is_beam_tracked()).map(|v| {
                // The best beam's and greedy's paths, found once for the legend and the tree.
                let found = views.nodes.with(|all| paths(v.best_node, &v.greedy_tokens, all));
                let finished = v.finished.iter().map(|h| {
                    let args = [("score", num(ui, h.score, 3)), ("logp", num(ui, h.sum_logprob, 3)), ("text", h.text.clone())];
                    let line = if h.ended { ui.tf("beam-hyp-ended", &args) } else { ui.tf("beam-hyp", &args) };
                    view! { <li>{line}</li> }
                }).collect_view();
                let args = [
                    ("depth", int(ui, v.depth as u64)),
                    ("best", num(ui, v.best_logprob, 3)),
                    ("greedy", num(ui, v.greedy_logprob, 3)),
                ];
                let compare = if v.best_logprob > v.greedy_logprob + 1e-9 {
                    ui.tf("beam-compare-better", &args)
                } else {
                    ui.tf("beam-compare", &args)
                };
                let in_tree = found.greedy_ids.len().saturating_sub(1);
                let greedy = if in_tree < v.greedy_tokens.len() {
                    ui.tf("beam-greedy-pruned", &[("n", int(ui, in_tree as u64)), ("text", v.greedy_text.clone())])
                } else {
                    ui.tf("beam-greedy", &[("text", v.greedy_text.clone())])
                };
                let count = [("nodes", int(ui, v.node_count as u64))];
                let count = if v.done { ui.tf("beam-count-done", &count) } else { ui.tf("beam-count", &count) };
                view! {
                    <p class="compare" data-testid="beam-compare">{compare}</p>
                    <p class="path-line" data-testid="beam-greedy"><span class="key greedy"></span>{greedy}</p>
                    <p class="path-line"><span class="key best"></span>{ui.tf("beam-best", &[("text", v.best_text.clone())])}</p>
                    <p data-testid="beam-count">{count}</p>
                    {views.nodes.with(|all| tree(ui, v, (all, &found), wrap))}
                    <ol class="hyps">{finished}</ol>
                }
            }))}
        </PanelShell>
    }
}
