//! The constraint panel: a regex, a JSON Schema or a grammar (GBNF, or llguidance's Lark)
//! as a stage of the chain. The worker compiles it and sends its mask with each next
//! distribution; the chain here applies it, so the panel shows at every step p (the
//! model's distribution as the stage receives it) against q (after the mask), the feasible
//! mass Z_t = Σ_{allowed} p, the allowed count, the mask's time and where the text is in
//! the constraint. The tokens it removes are greyed in the distribution with "constraint"
//! as their stage.

use super::state::Ui;
use super::taxonomy::Tag;
use decoding_engine::decode::sampling::{Knob, Stage};
use decoding_page::page::{constraint_caption as caption, split_knob, CONSTRAINT_PRESETS};
use decoding_page::protocol::StageView;
use leptos::prelude::*;

/// The kinds the menu offers, with their names in words.
const KINDS: [(&str, &str); 5] = [
    ("none", "none (off)"),
    ("regex", "regex"),
    ("json_schema", "JSON Schema"),
    ("grammar", "GBNF grammar (llama.cpp)"),
    ("lark", "Lark grammar (llguidance)"),
];

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
                    <td class="bar-cell"><span class="bar p" style:width=pw></span> {format!("{p:.3}")}</td>
                    <td class="bar-cell"><span class="bar q" style:width=qw></span> {if forbidden { "✕ constraint".to_string() } else { format!("{q:.3}") }}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="pq" data-testid="constraint-pq">
            <caption class="small">"The model's most likely tokens: p entering the stage, q after the mask (bars on a square-root scale)"</caption>
            <thead><tr><th scope="col">"token"</th><th scope="col">"p"</th><th scope="col">"q"</th></tr></thead>
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
            view! {
                <div class="constraint-now" data-tagged>
                    <Tag of="constraint-mask" />
                    <dl class="constraint-measures" data-testid="constraint-measures">
                        <dt>"Z"<sub>"t"</sub>" = Σ p over allowed"</dt><dd data-testid="constraint-z">{format!("{z:.4}")}</dd>
                        <dt>"allowed tokens"</dt><dd data-testid="constraint-allowed">{format!("{allowed} of {vocab}")}</dd>
                        <dt>"mask time"</dt><dd data-testid="constraint-ms">{format!("{ms:.2} ms")}</dd>
                        <dt>"position"</dt><dd data-testid="constraint-position"><code>{position}</code></dd>
                    </dl>
                </div>
                <p class="caption" data-testid="constraint-caption">{caption(z, allowed, vocab)}</p>
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
        field.or_else(|| {
            ui.gen
                .next
                .with(|n| n.as_ref().and_then(|n| n.constraint_error.clone()))
        })
    };
    let presets = CONSTRAINT_PRESETS
        .iter()
        .map(|p| {
            let p = *p;
            view! {
                <button class="ghost" data-testid=format!("constraint-preset-{}", p.name)
                    title=format!("Prompt: {:?}", p.prompt)
                    on:click=move |_| {
                        ui.set_field(Knob::Constraint, p.knob_text());
                        let prompt = p.prompt.to_string();
                        let chat = ui.gen.chat.get_untracked();
                        ui.control(|m, page, s| m.set_prompt(page, prompt, chat, s));
                    }>{p.label}</button>
            }
        })
        .collect_view();
    view! {
        <section class="panel constraint-panel" aria-labelledby="constraint-h" data-testid="constraint-panel">
            <h2 id="constraint-h">"Constraint " <Tag of="knob-constraint" /></h2>
            <p class="hint">"Structured output is one more stage of the chain: a mask that keeps only the tokens that can continue the text inside a regex, a JSON Schema or a grammar (compiled once per prompt by llguidance, in the worker)."</p>
            <div class="knob-row presets">"Presets: " {presets}</div>
            <div class="knob-row">
                <label data-tagged>"Kind " <Tag of="knob-constraint" />
                    <select data-testid="constraint-kind" prop:value=move || kind.get()
                        on:change=move |ev| {
                            kind.set(event_target_value(&ev));
                            apply();
                        }>
                        {KINDS.map(|(v, l)| view! { <option value=v>{l}</option> }).collect_view()}
                    </select>
                </label>
                <button data-testid="constraint-apply" on:click=move |_| apply()>"Apply"</button>
            </div>
            <div class="constraint-source" data-tagged>
            <Tag of="knob-constraint" />
            <textarea data-testid="constraint-source" aria-label="Constraint source" rows="5" spellcheck="false"
                prop:value=move || source.get()
                on:input=move |ev| source.set(event_target_value(&ev))
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        apply();
                    }
                }></textarea>
            </div>
            <small class="help">"Ctrl+Enter applies. GBNF as llama.cpp writes it: root ::= \"yes\" | \"no\"."</small>
            {move || error().map(|m| view! { <p class="field-error" role="alert" data-testid="constraint-error">{m}</p> })}
            {measures(ui)}
        </section>
    }
}
