//! The constraint panel: a regex, a JSON Schema or a grammar (GBNF, or llguidance's Lark)
//! as a stage of the chain. The worker compiles it and sends its mask with each next
//! distribution; the chain here applies it, so the panel shows at every step p (the
//! model's distribution as the stage receives it) against q (after the mask), the feasible
//! mass Z_t = Σ_{allowed} p, the allowed count, the mask's time and where the text is in
//! the constraint. The tokens it removes are greyed in the distribution with "constraint"
//! as their stage.

use super::state::Ui;
use super::taxonomy::Tag;
use super::views::numbers::{int, num};
use decoding_engine::decode::sampling::{Knob, Stage};
use decoding_page::page::{constraint_caption_message, split_knob, CONSTRAINT_PRESETS};
use decoding_page::protocol::StageView;
use leptos::prelude::*;

/// The kinds the menu offers.
const KINDS: [&str; 5] = ["none", "regex", "json_schema", "grammar", "lark"];

/// A kind's name in words.
fn kind_words(ui: Ui, kind: &str) -> String {
    match kind {
        "regex" => ui.t("constraint-kind-regex"),
        "json_schema" => ui.t("constraint-kind-json-schema"),
        "grammar" => ui.t("constraint-kind-grammar"),
        "lark" => ui.t("constraint-kind-lark"),
        _ => ui.t("constraint-kind-none"),
    }
}

/// The constraint knob's text as typed, else as in force.
fn knob_text(ui: &Ui) -> String {
    ui.knobs
        .raw
        .with(|r| r.get(Knob::Constraint).map(String::from))
        .unwrap_or_else(|| {
            ui.knobs.settings.with(|s| {
                s.texts(Knob::Constraint)
                    .last()
                    .cloned()
                    .unwrap_or_else(|| "none".into())
            })
        })
}

/// The constraint stage's view in the trace, when it ran.
fn stage_view(ui: &Ui) -> Option<StageView> {
    ui.gen.trace.with(|t| {
        t.as_ref().and_then(|t| {
            t.stages
                .iter()
                .find(|v| v.stage == Stage::new("constraint") && v.active)
                .cloned()
        })
    })
}

/// p against q for the tokens the stage chart shows.
fn p_and_q(ui: Ui, v: &StageView) -> impl IntoView {
    let ids = ui
        .gen
        .trace
        .with(|t| t.as_ref().map(|t| t.chart_ids.clone()).unwrap_or_default());
    let rows = ids
        .iter()
        .zip(v.before.iter().zip(&v.after))
        .take(8)
        .map(|(&id, (&p, &q))| {
            let forbidden = p > 0.0 && q == 0.0;
            let label = ui.piece(id);
            // Widths through the style object, not a `style` attribute (the page's
            // Content-Security-Policy refuses inline style attributes).
            let pw = format!("{:.1}%", 70.0 * (p as f64).sqrt());
            let qw = format!("{:.1}%", 70.0 * (q as f64).sqrt());
            view! {
                <tr class:forbidden=forbidden>
                    <th scope="row"><code>{format!("{label:?}")}</code></th>
                    <td class="bar-cell"><span class="bar p" style:width=pw></span> {num(ui, p as f64, 3)}</td>
                    <td class="bar-cell"><span class="bar q" style:width=qw></span> {if forbidden { ui.t("constraint-forbidden") } else { num(ui, q as f64, 3) }}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="pq" data-testid="constraint-pq">
            <caption class="small">{ui.t("constraint-pq-caption")}</caption>
            <thead><tr><th scope="col">{ui.t("constraint-col-token")}</th><th scope="col">"p"</th><th scope="col">"q"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// This step's numbers: from the constraint stage's cut when the chain ran, else (a mask
/// that allows nothing: the chain cannot run) from the mask the worker sent.
fn numbers(ui: &Ui) -> Option<(f64, usize, f64, String, Option<StageView>)> {
    stage_view(ui)
        .map(|v| {
            let z = v.cut.value("feasible mass Z").unwrap_or(0.0);
            let allowed = v.cut.value("allowed").unwrap_or(0.0) as usize;
            let ms = v.cut.value("mask ms").unwrap_or(0.0);
            let position = v.cut.note.clone().unwrap_or_default();
            (z, allowed, ms, position, Some(v))
        })
        .or_else(|| {
            ui.gen.next.with(|n| {
                n.as_ref()
                    .and_then(|n| n.allowed.as_ref())
                    .filter(|a| a.count == 0)
                    .map(|a| (0.0, 0, a.ms, a.position.clone(), None))
            })
        })
}

/// The measures of this step, when the constraint ran.
fn measures(ui: Ui) -> impl IntoView {
    move || {
        numbers(&ui).map(|(z, allowed, ms, position, v)| {
            let vocab = ui.vocab_size();
            let (id, args) = constraint_caption_message(ui.lang(), z, allowed, vocab);
            view! {
                <div class="constraint-now" data-tagged>
                    <Tag of="constraint-mask" />
                    <dl class="constraint-measures" data-testid="constraint-measures">
                        <dt>"Z"<sub>"t"</sub>" = "{ui.t("constraint-z")}</dt><dd data-testid="constraint-z">{num(ui, z, 4)}</dd>
                        <dt>{ui.t("constraint-allowed")}</dt><dd data-testid="constraint-allowed">{ui.tf("constraint-allowed-of", &[("allowed", int(ui, allowed as u64)), ("vocab", int(ui, vocab as u64))])}</dd>
                        <dt>{ui.t("constraint-mask-time")}</dt><dd data-testid="constraint-ms">{format!("{} ms", num(ui, ms, 2))}</dd>
                        <dt>{ui.t("constraint-position")}</dt><dd data-testid="constraint-position"><code>{position}</code></dd>
                    </dl>
                </div>
                // The caption's message is one of `constraint-caption-…` (the tests hold each).
                <p class="caption" data-testid="constraint-caption">{ui.tf(id, &args)}</p>
                {v.map(|v| p_and_q(ui, &v))}
            }
        })
    }
}

#[component]
pub fn ConstraintPanel() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let kind = RwSignal::new(String::from("none"));
    let source = RwSignal::new(String::new());
    // The fields follow the knob (a link, a preset), not every keystroke.
    let text = Memo::new(move |_| knob_text(&ui));
    Effect::new(move |_| {
        let (k, s) = split_knob(&text.get());
        kind.set(k);
        source.set(s);
    });
    let apply = move || {
        let k = kind.get_untracked();
        let t = if k == "none" {
            "none".to_string()
        } else {
            format!("{k}:{}", source.get_untracked())
        };
        ui.set_field(Knob::Constraint, t);
    };
    let error = move || {
        let field = ui.knobs.field_errors.with(|e| {
            e.iter()
                .find(|e| e.field == Knob::Constraint.name())
                .map(|e| e.message.clone())
        });
        field
            .or_else(|| {
                ui.gen
                    .next
                    .with(|n| n.as_ref().and_then(|n| n.constraint_error.clone()))
            })
            .map(|m| ui.engine(&m))
    };
    let presets = CONSTRAINT_PRESETS
        .iter()
        .map(|p| {
            let p = *p;
            view! {
                <button class="ghost" data-testid=format!("constraint-preset-{}", p.name)
                    title=move || ui.tf("constraint-preset-title", &[("prompt", format!("{:?}", p.prompt))])
                    on:click=move |_| {
                        ui.set_field(Knob::Constraint, p.knob_text());
                        let prompt = p.prompt.to_string();
                        let chat = ui.gen.chat.get_untracked();
                        ui.control(|m, page, s| m.set_prompt(page, prompt, chat, s));
                    }>{move || ui.t(&format!("constraint-preset-{}", p.name))}</button>
            }
        })
        .collect_view();
    view! {
        <section class="panel constraint-panel" aria-labelledby="constraint-h" data-testid="constraint-panel">
            <h2 id="constraint-h">{move || ui.t("constraint-heading")} " " <Tag of="knob-constraint" /></h2>
            <p class="hint">{move || ui.t("constraint-hint")}</p>
            <div class="knob-row presets">{move || ui.t("constraint-presets")} " " {presets}</div>
            <div class="knob-row">
                <label data-tagged>{move || ui.t("constraint-kind")} " " <Tag of="knob-constraint" />
                    <select data-testid="constraint-kind" prop:value=move || kind.get()
                        on:change=move |ev| {
                            kind.set(event_target_value(&ev));
                            apply();
                        }>
                        {KINDS.map(|v| view! { <option value=v>{move || kind_words(ui, v)}</option> }).collect_view()}
                    </select>
                </label>
                <button data-testid="constraint-apply" on:click=move |_| apply()>{move || ui.t("constraint-apply")}</button>
            </div>
            <div class="constraint-source" data-tagged>
            <Tag of="knob-constraint" />
            <textarea data-testid="constraint-source" aria-label=move || ui.t("constraint-source") rows="5" spellcheck="false"
                prop:value=move || source.get()
                on:input=move |ev| source.set(event_target_value(&ev))
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        apply();
                    }
                }></textarea>
            </div>
            <small class="help">{move || ui.t("constraint-help")}</small>
            {move || error().map(|m| view! { <p class="field-error" role="alert" data-testid="constraint-error">{m}</p> })}
            {measures(ui)}
        </section>
    }
}
