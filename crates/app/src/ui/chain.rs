//! The sampling chain in its order, re-orderable by drag and drop or with the ↑/↓ buttons
//! (keyboard), each stage with a small before/after chart from the engine's trace (what the
//! stage removed shows as grey bars that lost their blue).

use super::export;
use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use decoding_engine::decode::sampling::Knob;
use decoding_engine::decode::sampling::Stage;
use decoding_page::page::Panel;
use decoding_page::protocol::StageView;
use leptos::prelude::*;

/// Moves a stage with its ↑/↓ button and keeps the focus on that stage's button in its new
/// row (the row's old button now belongs to another stage: a second Enter undid the move).
fn move_with_button(ui: Ui, stage: Stage, from: usize, to: usize, button: &'static str) {
    reorder(ui, from, to);
    let testid = format!("{button}-{}", stage.name());
    request_animation_frame(move || super::help::focus(&testid));
}

/// Moves stage `from` to position `to` and sends the new order.
fn reorder(ui: Ui, from: usize, to: usize) {
    let mut order = ui.knobs.settings.get_untracked().order;
    if from >= order.len() || to >= order.len() || from == to {
        return;
    }
    let st = order.remove(from);
    order.insert(to, st);
    let names: Vec<&str> = order.iter().map(|s| s.name()).collect();
    ui.set_field(Knob::Order, names.join(","));
}

fn mini_chart(ui: Ui, v: &StageView) -> impl IntoView {
    use decoding_page::geometry::{chain, Rect};
    // Each series is one path of bars (one attribute to update a move, not two per bar: a
    // slider move rewrote 275 bar attributes in the chain). The bars are the
    // shared geometry's (the export draws the same): a square-root scale keeps the small
    // probabilities visible beside a dominant one.
    let bars = chain::stage_bars(v, chain::SCREEN);
    let series = |pick: fn(&chain::TokenBars) -> Rect| -> String {
        use std::fmt::Write;
        let mut d = String::with_capacity(bars.len() * 24);
        for r in bars.iter().map(pick).filter(|r| r.h > 0.0) {
            let _ = write!(
                d,
                "M{:.2} {:.2}v{:.2}h{:.2}v{:.2}z",
                r.x,
                r.y + r.h,
                -r.h,
                r.w,
                r.h
            );
        }
        d
    };
    let (before, after) = (series(|b| b.before), series(|b| b.after));
    let bars = view! {
        <path class="before" d=before></path>
        <path class="after" d=after></path>
    };
    let label = ui.tf(
        "chain-mini",
        &[
            ("stage", v.stage.name().to_string()),
            ("kept", v.kept.to_string()),
            ("removed", v.removed.to_string()),
        ],
    );
    let aria = label.clone();
    view! {
        <svg class="mini" viewBox="0 0 100 30" preserveAspectRatio="none" role="img" aria-label=aria>
            <title>{label}</title>
            {bars}
        </svg>
    }
}

#[component]
pub fn Chain() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let dragging = RwSignal::new(None::<usize>);
    let stage_view = move |st: Stage| {
        ui.gen.trace.with(|t| {
            t.as_ref()
                .and_then(|t| t.stages.iter().find(|v| v.stage == st).cloned())
        })
    };
    view! {
        <PanelShell panel=Panel::Chain
            export=move || export::buttons("chain", "the stage charts", move || ui.gen.trace.with_untracked(|t| t.as_ref().map(|t| decoding_page::export::stages(t, &|id| super::state::chip_label(&ui, id), ui.lang()))))>
            <p class="hint">{move || ui.t("chain-hint")} " " <Tag of="chain-charts" /></p>
            <ol class="chain" data-testid="chain">
                {move || {
                    let order = ui.knobs.settings.get().order;
                    // Read here, not in each row: a row's own closure would subscribe to
                    // this long-lived signal at every redraw (every trace) and, as
                    // `dragging` rarely changes, the stale subscriptions would pile up
                    // (found by tests/e2e/soak.test.mjs).
                    let dragged = dragging.get();
                    let len = order.len();
                    order.into_iter().enumerate().map(|(i, st)| {
                        let v = stage_view(st);
                        let active = v.as_ref().is_some_and(|v| v.active);
                        view! {
                            <li class="stage" class:active=active class:dragging=dragged == Some(i)
                                data-testid=format!("stage-{}", st.name()) draggable="true"
                                on:dragstart=move |ev: leptos::ev::DragEvent| {
                                    dragging.set(Some(i));
                                    if let Some(dt) = ev.data_transfer() {
                                        let _ = dt.set_data("text/plain", st.name());
                                    }
                                }
                                on:dragover=move |ev: leptos::ev::DragEvent| ev.prevent_default()
                                on:drop=move |ev: leptos::ev::DragEvent| {
                                    ev.prevent_default();
                                    if let Some(from) = dragging.get_untracked() {
                                        reorder(ui, from, i);
                                    }
                                    dragging.set(None);
                                }
                                on:dragend=move |_| dragging.set(None)>
                                <span class="pos">{i + 1}</span>
                                <span class="name">{st.name()}</span>
                                <span class="setting">{v.as_ref().map(|v| match (v.active, v.default_of) {
                                    (false, _) if v.replaced_by.is_some() => ui.tf("chain-replaced-by", &[("stage", v.replaced_by.unwrap().to_string())]),
                                    (false, _) => ui.t("chain-off"),
                                    (true, Some(p)) => ui.tf("chain-default-of", &[("setting", v.setting.clone()), ("profile", p.to_string())]),
                                    (true, None) => v.setting.clone(),
                                })}</span>
                                <span class="kept">{v.as_ref().map(|v| if v.removed > 0 {
                                    ui.tf("chain-kept-removed", &[("kept", v.kept.to_string()), ("removed", v.removed.to_string())])
                                } else {
                                    ui.tf("chain-kept", &[("kept", v.kept.to_string())])
                                })}</span>
                                {v.as_ref().map(|v| mini_chart(ui, v))}
                                <span class="moves">
                                    <button class="ghost" aria-label=ui.tf("chain-move-earlier", &[("stage", st.name().to_string())])
                                        data-testid=format!("up-{}", st.name())
                                        disabled=i == 0 on:click=move |_| move_with_button(ui, st, i, i.saturating_sub(1), "up")>"↑"</button>
                                    <button class="ghost" aria-label=ui.tf("chain-move-later", &[("stage", st.name().to_string())])
                                        data-testid=format!("down-{}", st.name())
                                        disabled=i + 1 == len on:click=move |_| move_with_button(ui, st, i, i + 1, "down")>"↓"</button>
                                </span>
                            </li>
                        }
                    }).collect_view()
                }}
            </ol>
            {move || ui.knobs.field_errors.with(|e| e.iter().find(|e| e.field == Knob::Order.name()).map(|e| {
                view! { <p class="field-error" role="alert" data-testid="error-order">{ui.engine(&e.message)}</p> }
            }))}
            <StageStates />
        </PanelShell>
    }
}

/// The stages' state over the steps taken (each stage's named values: a state against its
/// target, a coin, the longest repeat), from the transcript's steps:
/// shown once a stage has recorded any.
#[component]
fn StageStates() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let charts = Memo::new(move |_| {
        ui.gen.transcript.with(|t| {
            t.as_ref()
                .map(|t| decoding_page::export::stage_states(&t.steps, ui.lang()))
                .unwrap_or_default()
        })
    });
    let stacked = move || {
        let parts = charts.get_untracked();
        (!parts.is_empty())
            .then(|| decoding_page::export::Drawing::stack(&ui.t("chain-states-title"), parts))
    };
    move || {
        let parts = charts.get();
        (!parts.is_empty()).then(|| {
            view! {
                <section class="stage-states" data-testid="stage-states" aria-label=ui.t("chain-states-title")>
                    <h3>{ui.t("chain-states-heading")} " " <Tag of="stage-states" />
                        {export::buttons("stage-states", "the stages' state over the steps", stacked)}</h3>
                    {parts.iter().map(export::figure).collect_view()}
                </section>
            }
        })
    }
}
