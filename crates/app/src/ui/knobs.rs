//! Every decoding knob: a slider and a text box per number (the box takes any text, so a
//! wrong value shows the engine's validation message next to it), the penalties' window,
//! logit bias, no-repeat-n-gram, max tokens, stop sequences, seed, the profile and the
//! strategy. All are [CONFIG].

use super::Ui;
use decoding_engine::sampling::RawSettings;
use leptos::prelude::*;

/// A knob's slider range and description.
struct Spec {
    field: &'static str,
    label: &'static str,
    min: f64,
    max: f64,
    step: f64,
    help: &'static str,
}

const NUMBERS: [Spec; 10] = [
    Spec {
        field: "temperature",
        label: "Temperature T",
        min: 0.0,
        max: 2.0,
        step: 0.01,
        help: "softmax(z / T); 0 = greedy",
    },
    Spec {
        field: "top_k",
        label: "Top-k",
        min: 0.0,
        max: 100.0,
        step: 1.0,
        help: "keep the k most likely; 0 = off",
    },
    Spec {
        field: "top_p",
        label: "Top-p (nucleus)",
        min: 0.01,
        max: 1.0,
        step: 0.01,
        help: "smallest set with mass ≥ p; 1 = off",
    },
    Spec {
        field: "min_p",
        label: "Min-p",
        min: 0.0,
        max: 1.0,
        step: 0.01,
        help: "drop tokens below p × the top probability",
    },
    Spec {
        field: "typical_p",
        label: "Typical-p",
        min: 0.01,
        max: 1.0,
        step: 0.01,
        help: "locally typical mass; 1 = off",
    },
    Spec {
        field: "repetition_penalty",
        label: "Repetition penalty",
        min: 0.5,
        max: 2.0,
        step: 0.01,
        help: "CTRL: positive logits ÷, negative ×; 1 = off",
    },
    Spec {
        field: "frequency_penalty",
        label: "Frequency penalty",
        min: -2.0,
        max: 2.0,
        step: 0.05,
        help: "subtract count × α",
    },
    Spec {
        field: "presence_penalty",
        label: "Presence penalty",
        min: -2.0,
        max: 2.0,
        step: 0.05,
        help: "subtract α if present",
    },
    Spec {
        field: "penalty_window",
        label: "Penalty window",
        min: 0.0,
        max: 512.0,
        step: 1.0,
        help: "recent tokens the penalties see; 0 = all",
    },
    Spec {
        field: "no_repeat_ngram",
        label: "No-repeat n-gram",
        min: 0.0,
        max: 6.0,
        step: 1.0,
        help: "ban repeating n-grams; 0 = off",
    },
];

/// The raw text of a field.
fn raw_value(r: &RawSettings, field: &str) -> Option<String> {
    match field {
        "temperature" => r.temperature.clone(),
        "top_k" => r.top_k.clone(),
        "top_p" => r.top_p.clone(),
        "min_p" => r.min_p.clone(),
        "typical_p" => r.typical_p.clone(),
        "repetition_penalty" => r.repetition_penalty.clone(),
        "frequency_penalty" => r.frequency_penalty.clone(),
        "presence_penalty" => r.presence_penalty.clone(),
        "penalty_window" => r.penalty_window.clone(),
        "no_repeat_ngram" => r.no_repeat_ngram.clone(),
        "max_tokens" => r.max_tokens.clone(),
        "seed" => r.seed.clone(),
        "beams" => r.beams.clone(),
        "length_penalty" => r.length_penalty.clone(),
        _ => None,
    }
}

/// The validated value as text (what a control shows when its raw text is absent).
fn current(ui: &Ui, field: &str) -> String {
    let s = ui.settings.get();
    match field {
        "temperature" => s.temperature.to_string(),
        "top_k" => s.top_k.to_string(),
        "top_p" => s.top_p.to_string(),
        "min_p" => s.min_p.to_string(),
        "typical_p" => s.typical_p.to_string(),
        "repetition_penalty" => s.repetition_penalty.to_string(),
        "frequency_penalty" => s.frequency_penalty.to_string(),
        "presence_penalty" => s.presence_penalty.to_string(),
        "penalty_window" => s.penalty_window.to_string(),
        "no_repeat_ngram" => s.no_repeat_ngram.to_string(),
        "max_tokens" => s.max_tokens.to_string(),
        "seed" => s.seed.to_string(),
        _ => String::new(),
    }
}

/// The error message of a field, if its text breaks a rule.
fn field_error(ui: Ui, field: &'static str) -> Signal<Option<String>> {
    Signal::derive(move || {
        ui.field_errors.with(|e| {
            e.iter()
                .find(|e| e.field == field)
                .map(|e| e.message.clone())
        })
    })
}

#[component]
fn NumberKnob(spec: &'static Spec) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let field = spec.field;
    let text = move || {
        ui.raw
            .with(|r| raw_value(r, field))
            .unwrap_or_else(|| current(&ui, field))
    };
    let slider_value = move || text().parse::<f64>().unwrap_or(spec.min);
    let err = field_error(ui, field);
    let id = format!("knob-{field}");
    view! {
        <div class="knob" class:invalid=move || err.get().is_some()>
            <label for=id.clone()>{spec.label}</label>
            <input type="range" id=id data-testid=format!("knob-{field}")
                min=spec.min max=spec.max step=spec.step
                prop:value=slider_value
                aria-describedby=format!("help-{field}")
                on:input=move |ev| ui.set_field(field, event_target_value(&ev)) />
            <input type="text" class="num" inputmode="decimal" data-testid=format!("knob-{field}-value")
                aria-label=format!("{} value", spec.label)
                prop:value=text
                on:change=move |ev| ui.set_field(field, event_target_value(&ev)) />
            <small id=format!("help-{field}") class="help">{spec.help}</small>
            {move || err.get().map(|m| view! { <p class="field-error" role="alert" data-testid=format!("error-{field}")>{m}</p> })}
        </div>
    }
}

#[component]
fn TextKnob(
    field: &'static str,
    label: &'static str,
    help: &'static str,
    #[prop(optional)] multiline: bool,
) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let text = move || {
        ui.raw.with(|r| match field {
            "logit_bias" => r.logit_bias.join(", "),
            "stop" => r.stop.join("\n"),
            _ => raw_value(r, field).unwrap_or_else(|| current(&ui, field)),
        })
    };
    let err = field_error(ui, field);
    let id = format!("knob-{field}");
    let input = if multiline {
        view! {
            <textarea id=id.clone() data-testid=id.clone() rows="2" prop:value=text
                on:change=move |ev| ui.set_field(field, event_target_value(&ev))></textarea>
        }
        .into_any()
    } else {
        view! {
            <input type="text" id=id.clone() data-testid=id.clone() prop:value=text
                on:change=move |ev| ui.set_field(field, event_target_value(&ev)) />
        }
        .into_any()
    };
    view! {
        <div class="knob" class:invalid=move || err.get().is_some()>
            <label for=id>{label}</label>
            {input}
            <small class="help">{help}</small>
            {move || err.get().map(|m| view! { <p class="field-error" role="alert" data-testid=format!("error-{field}")>{m}</p> })}
        </div>
    }
}

#[component]
pub fn Knobs() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let profile = move || ui.settings.with(|s| s.profile.name().to_string());
    let strategy = move || {
        ui.settings.with(|s| match s.strategy {
            decoding_engine::sampling::Strategy::Sample => "sample",
            decoding_engine::sampling::Strategy::Greedy => "greedy",
            decoding_engine::sampling::Strategy::Beam { .. } => "beam",
        })
    };
    view! {
        <section class="panel" aria-labelledby="knobs-h">
            <h2 id="knobs-h">"Decoding knobs " <span class="tag">"[CONFIG]"</span></h2>
            <div class="knob-row">
                <label>"Profile "
                    <select data-testid="profile" prop:value=profile
                        on:change=move |ev| {
                            let v = event_target_value(&ev);
                            // A new profile brings its own default order.
                            ui.raw.update(|r| { r.profile = Some(v); r.order = None; });
                            ui.apply_raw();
                        }>
                        <option value="hf">"hf (transformers generate())"</option>
                        <option value="llama.cpp">"llama.cpp (default chain)"</option>
                        <option value="openai">"openai (vLLM)"</option>
                    </select>
                </label>
                <label>"Strategy "
                    <select data-testid="strategy" prop:value=strategy
                        on:change=move |ev| ui.set_field("strategy", event_target_value(&ev))>
                        <option value="sample">"sampling"</option>
                        <option value="greedy">"greedy"</option>
                        <option value="beam">"beam search"</option>
                    </select>
                </label>
            </div>
            <div class="knob-grid">
                {NUMBERS.iter().map(|spec| view! { <NumberKnob spec=spec /> }).collect_view()}
                <TextKnob field="max_tokens" label="Max tokens" help="stop after this many new tokens" />
                <TextKnob field="seed" label="Seed" help="the coin's seed: same seed, same tokens" />
                <TextKnob field="logit_bias" label="Logit bias" help="id:value, comma-separated (e.g. 2:-100 bans EOS)" />
                <TextKnob field="stop" label="Stop sequences" help="one per line; matched on the text" multiline=true />
            </div>
        </section>
    }
}
