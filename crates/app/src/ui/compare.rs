//! "Same θ, different config" (lesson 10, section 6): 2 to 4 columns on the one loaded
//! model, each its own knobs (typed as a link's query, `name=value&…`), stepping
//! together from the transcript's prompt; each column's text, its next distribution and
//! entropy, and the knobs that differ between columns highlighted.

use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use super::views::compare::CompareViews;
use super::views::numbers::{int, num};
use decoding_engine::decode::sampling::Knob;
use decoding_page::geometry::compare;
use decoding_page::page::{self, Panel, COMPARE_PRESETS, MAX_COLUMNS};
use decoding_page::protocol::*;
use leptos::prelude::*;

/// The columns' texts: the link's comparison, else the lesson's preset.
fn initial_texts(ui: &Ui) -> Vec<String> {
    ui.shell.page.with_untracked(|p| match &p.compare {
        Some(c) => c.columns.iter().map(page::column_text).collect(),
        None => COMPARE_PRESETS[0]
            .columns
            .iter()
            .map(|c| c.to_string())
            .collect(),
    })
}

#[component]
pub fn ComparePanel(views: CompareViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let texts = RwSignal::new(initial_texts(&ui));
    // The editors follow the comparison the page holds (a lesson step or a loaded
    // transcript replaces it): Start then restarts what is shown, not an older one.
    let linked = Memo::new(move |_| {
        ui.shell
            .page
            .with(|p| p.compare.as_ref().map(|c| c.columns.clone()))
    });
    Effect::new(move |_| {
        if let Some(cols) = linked.get() {
            let t: Vec<String> = cols.iter().map(page::column_text).collect();
            if texts.with_untracked(|old| *old != t) {
                texts.set(t);
            }
        }
    });
    let errors = RwSignal::new(Vec::<Option<String>>::new());
    let start = move || {
        let vocab = ui.vocab_size();
        let mut page = ui.shell.page.get_untracked();
        let (e, send) = ui
            .reactions
            .with_value(|m| m.compare_start(&mut page, &texts.get_untracked(), vocab));
        errors.set(e);
        if !send.is_empty() {
            views.columns.set(None);
            ui.shell.page.set(page);
            ui.sender.send_all(&send);
        }
    };
    let step = move |count: u32| {
        if views.columns.with_untracked(Option::is_none) {
            start();
        }
        ui.send(&ColumnsRequest::ColumnsStep { count }.into());
    };
    view! {
        // The export row sits under the editors, above the columns it saves.
        <PanelShell panel=Panel::Compare>
            <p class="note">{move || ui.t("compare-note")}</p>
            <div class="knob-row">
                <label class="cmp-preset-label" data-tagged>{move || ui.t("compare-preset")} " " <Tag of="cmp-columns" />
                    <select data-testid="cmp-preset" on:change=move |ev| {
                        let v = event_target_value(&ev);
                        if let Some(p) = COMPARE_PRESETS.iter().find(|p| p.name == v) {
                            texts.set(p.columns.iter().map(|c| c.to_string()).collect());
                            start();
                        }
                    }>
                        <option value="">{move || ui.t("compare-choose")}</option>
                        // Each preset's label: `compare-preset-<name>` (its English the table's).
                        {COMPARE_PRESETS.map(|p| view! { <option value=p.name>{move || ui.t(&format!("compare-preset-{}", p.name))}</option> }).collect_view()}
                    </select>
                </label>
                <button data-testid="cmp-start" on:click=move |_| start()>{move || ui.t("compare-start")}</button>
                <button data-testid="cmp-step" on:click=move |_| step(1)>{move || ui.t("compare-step")}</button>
                <button data-testid="cmp-step10" on:click=move |_| step(10)>{move || ui.t("compare-step-10")}</button>
                <button class="ghost" data-testid="cmp-add" disabled=move || texts.with(|t| t.len() >= MAX_COLUMNS)
                    on:click=move |_| texts.update(|t| t.push(format!("{}=0.7", Knob::Temperature.name())))>{move || ui.t("compare-add")}</button>
            </div>
            <div class="cmp-editors">
                {move || texts.get().into_iter().enumerate().map(|(i, text)| view! {
                    <div class="cmp-editor" data-tagged>
                        <label for=format!("cmp-col-{i}")>{ui.tf("compare-column-knobs", &[("n", int(ui, i as u64 + 1))])}" " <Tag of="cmp-columns" /></label>
                        <input type="text" id=format!("cmp-col-{i}") data-testid=format!("cmp-col-{i}") prop:value=text
                            on:change=move |ev| { let v = event_target_value(&ev); texts.update(|t| t[i] = v); } />
                        {(texts.with_untracked(Vec::len) > 2).then(|| view! {
                            <button class="ghost" aria-label=ui.tf("compare-remove", &[("n", int(ui, i as u64 + 1))])
                                on:click=move |_| texts.update(|t| { t.remove(i); })>"×"</button>
                        })}
                        {move || errors.with(|e| e.get(i).cloned().flatten()).map(|m| ui.engine(&m)).map(|m| view! {
                            <p class="field-error" role="alert" data-testid=format!("cmp-error-{i}")>{m}</p>
                        })}
                    </div>
                }).collect_view()}
            </div>
            <div class="export-row">
                {super::export::buttons("compare", "the compared columns", move || views.columns.with_untracked(|v| v.as_ref().map(|v| decoding_page::export::columns(v, &|id| super::state::chip_label(&ui, id), ui.lang()))))}
            </div>
            <ColumnsGrid views />
        </PanelShell>
    }
}

/// The running comparison.
#[component]
fn ColumnsGrid(views: CompareViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    move || {
        views.columns.get().map(|v| {
            let differ = v.differ.clone();
            let n = v.columns.len();
            let cols = v
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| column(&ui, i, c, &differ))
                .collect_view();
            view! {
                <div class="cmp-view" data-testid="cmp-view">
                    <p class="small"><Tag of="cmp-view" />" "{ui.t("compare-from")}" "
                        <span class="chip prompt">{page::piece_text(&v.prompt_text, true, Some(60))}</span>
                        {format!(" {}", ui.tf("compare-columns", &[
                            ("n", int(ui, n as u64)),
                            ("knobs", if differ.is_empty() { ui.t("compare-none") } else { differ.join(", ") }),
                        ]))}
                    </p>
                    <div class=format!("cmp-columns cols-{n}")>{cols}</div>
                </div>
            }
        })
    }
}

fn column(ui: &Ui, i: usize, c: &ColumnView, differ: &[String]) -> impl IntoView {
    use decoding_engine::decode::sampling::knobs::KNOBS;
    let knobs = KNOBS
        .iter()
        .filter_map(|spec| {
            let (set, text) = c.settings.knob_value(spec.knob);
            let d = differ.iter().any(|n| n == spec.name);
            // The knob's label as the knobs panel has it (`knob-label-<name>`, kebab case).
            let label = ui.t(&format!("knob-label-{}", spec.name.replace('_', "-")));
            (set || d).then(|| {
                view! {
                    <li class:differ=d data-knob=spec.name>
                        {format!("{} {}", label, if text.is_empty() { ui.t("compare-off") } else { text.join(", ") })}
                    </li>
                }
            })
        })
        .collect_view();
    let top = c
        .top
        .iter()
        .map(|&(id, p)| {
            // The bar's length is the shared geometry's (the export draws the same).
            let bar = compare::bar(p, compare::SCREEN);
            view! {
                <li>
                    <span class="cmp-piece">{page::piece_text(&ui.piece(id), true, Some(12))}</span>
                    <svg class="cmp-bar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true">
                        <rect width=format!("{:.1}", bar.w) height=format!("{}", bar.h)></rect>
                    </svg>
                    <span class="cmp-p">{num(*ui, p, 3)}</span>
                </li>
            }
        })
        .collect_view();
    let stop = c.stop.as_ref().map(super::transcript::stop_words);
    view! {
        <div class="cmp-column" data-testid=format!("cmp-column-{i}")>
            <h3>{ui.tf("compare-column", &[("n", int(*ui, i as u64 + 1))])}</h3>
            <ul class="cmp-knobs">{knobs}</ul>
            <p class="cmp-text" data-testid=format!("cmp-text-{i}")>{c.text.clone()}</p>
            <p class="small" data-testid=format!("cmp-stats-{i}")
                data-entropy=c.entropy.to_string() data-kept=c.kept.to_string() data-steps=c.steps.len().to_string()>
                {ui.tf("compare-stats", &[
                    ("tokens", int(*ui, c.steps.len() as u64)),
                    ("logp", num(*ui, c.logprob, 2)),
                    ("entropy", num(*ui, c.entropy, 3)),
                    ("kept", int(*ui, c.kept as u64)),
                ])}
                {stop.map(|s| format!(" {s}"))}
            </p>
            <ol class="cmp-top" aria-label=ui.tf("compare-top-label", &[("n", int(*ui, i as u64 + 1))])>{top}</ol>
        </div>
    }
}
