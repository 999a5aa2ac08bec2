//! Every decoding knob: a slider and a text box per number (the box takes any text, so a
//! wrong value shows the engine's validation message next to it), the penalties' window,
//! logit bias, no-repeat-n-gram, max tokens, stop sequences, seed, the profile and the
//! strategy. All are [CONFIG].

use super::state::Ui;
use super::taxonomy::Tag;
use decoding_engine::decode::sampling::knobs::{Control, Knob, KnobSpec, KNOBS};
use decoding_engine::decode::sampling::Profile;
use leptos::prelude::*;

/// The knobs lesson 10 teaches first (section 2): they sit together at the top, and in
/// presenter mode in a column that stays on screen beside the chart.
pub const LESSON: [Knob; 4] = [Knob::Temperature, Knob::TopK, Knob::TopP, Knob::MinP];

/// The other knobs of the grid, in the table's order: all but the lesson's, the selects
/// (profile, strategy), the beam panel's and the chain's order (the chain panel reorders it).
fn grid() -> impl Iterator<Item = &'static KnobSpec> {
    KNOBS.iter().filter(|s| {
        !s.with_strategy
            && s.knob != Knob::Order
            && s.knob != Knob::Constraint
            && !LESSON.contains(&s.knob)
            && !matches!(s.control, Control::Choice(_) | Control::Check)
    })
}

/// The knob's text box content: the raw text typed or linked, else the validated value.
fn shown_text(ui: &Ui, knob: Knob) -> String {
    let spec = knob.spec();
    let join = |sep: char, e: &[String]| e.join(if sep == ',' { ", " } else { "\n" });
    ui.knobs.raw.with(|r| match spec.control {
        // A list left at its default shows the default's entries (a list with defaults).
        Control::List { sep } if r.entries(knob).is_empty() => {
            ui.knobs.settings.with(|s| join(sep, &s.knob_value(knob).1))
        }
        Control::List { sep } => join(sep, r.entries(knob)),
        _ => r
            .get(knob)
            .map(String::from)
            .unwrap_or_else(|| ui.knobs.settings.with(|s| s.knob_value(knob).1.join(","))),
    })
}

/// The error message of a field, if its text breaks a rule.
fn field_error(ui: Ui, field: &'static str) -> Signal<Option<String>> {
    Signal::derive(move || {
        ui.knobs.field_errors.with(|e| {
            e.iter()
                .find(|e| e.field == field)
                .map(|e| ui.engine(&e.message))
        })
    })
}

/// A knob's label and help in the language in force: `knob-label-<name>` and
/// `knob-help-<name>` (the name in kebab case), the table's own English in English (held by
/// the tests).
fn knob_words(ui: Ui, spec: &'static KnobSpec) -> (Signal<String>, Signal<String>) {
    let name = spec.name.replace('_', "-");
    let (label, help) = (format!("knob-label-{name}"), format!("knob-help-{name}"));
    (
        Signal::derive(move || ui.t(&label)),
        Signal::derive(move || ui.t(&help)),
    )
}

/// "default of llama.cpp" beside a knob the user left unset that holds the peer's default.
fn default_badge(ui: Ui, knob: Knob) -> impl IntoView {
    move || {
        ui.knobs.settings.with(|s| s.default_of(knob)).map(|p| {
            view! {
                <span class="badge default-of" data-testid=format!("default-of-{}", knob.name())
                    title=ui.t("knob-default-title")>
                    {ui.tf("knob-default-of", &[("profile", p.to_string())])}</span>
            }
        })
    }
}

/// A slider and a text box for a numeric knob of the table.
#[component]
fn NumberKnob(spec: &'static KnobSpec) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let field = spec.name;
    let Control::Slider { min, max, step } = spec.control else {
        return view! { <TextKnob spec=spec /> }.into_any();
    };
    let text = move || shown_text(&ui, spec.knob);
    // The thumb shows the value in effect: typed text that breaks a rule leaves the last
    // valid value running (the box keeps the text and shows the error).
    let err = field_error(ui, field);
    let slider_value = move || {
        text()
            .parse::<f64>()
            .ok()
            .filter(|_| err.get().is_none())
            .unwrap_or_else(|| {
                ui.knobs.settings.with(|s| {
                    s.knob_value(spec.knob)
                        .1
                        .first()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(min)
                })
            })
    };
    let id = format!("knob-{field}");
    let (label, help) = knob_words(ui, spec);
    view! {
        <div class="knob" data-tagged class:invalid=move || err.get().is_some()>
            <label for=id.clone()>{move || label.get()} " " <Tag of=format!("knob-{field}") /> {default_badge(ui, spec.knob)}</label>
            <input type="range" id=id data-testid=format!("knob-{field}")
                min=min max=max step=step
                prop:value=slider_value
                aria-describedby=format!("help-{field}")
                on:input=move |ev| ui.set_field(spec.knob, event_target_value(&ev)) />
            <input type="text" class="num" inputmode="decimal" data-testid=format!("knob-{field}-value")
                aria-label=move || ui.tf("knob-value", &[("knob", label.get())])
                prop:value=text
                on:change=move |ev| ui.set_field(spec.knob, event_target_value(&ev)) />
            <small id=format!("help-{field}") class="help">{move || help.get()}</small>
            {move || err.get().map(|m| view! { <p class="field-error" role="alert" data-testid=format!("error-{field}")>{m}</p> })}
        </div>
    }
    .into_any()
}

/// A text box (a text area for stop sequences) for a knob of the table.
#[component]
fn TextKnob(spec: &'static KnobSpec) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let field = spec.name;
    let (label, help) = knob_words(ui, spec);
    let multiline = spec.control == (Control::List { sep: '\n' });
    let text = move || shown_text(&ui, spec.knob);
    let err = field_error(ui, field);
    let id = format!("knob-{field}");
    let input = if multiline {
        view! {
            <textarea id=id.clone() data-testid=id.clone() rows="2" prop:value=text
                on:change=move |ev| ui.set_field(spec.knob, event_target_value(&ev))></textarea>
        }
        .into_any()
    } else {
        view! {
            <input type="text" id=id.clone() data-testid=id.clone() prop:value=text
                on:change=move |ev| ui.set_field(spec.knob, event_target_value(&ev)) />
        }
        .into_any()
    };
    view! {
        <div class="knob" data-tagged class:invalid=move || err.get().is_some()>
            <label for=id>{move || label.get()} " " <Tag of=format!("knob-{field}") /> {default_badge(ui, spec.knob)}</label>
            {input}
            <small class="help">{move || help.get()}</small>
            {move || err.get().map(|m| view! { <p class="field-error" role="alert" data-testid=format!("error-{field}")>{m}</p> })}
        </div>
    }
}

/// The strategy and the lesson's four knobs (temperature, top-k, top-p, min-p).
#[component]
pub fn LessonKnobs() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let strategy = move || {
        ui.knobs.settings.with(|s| match s.strategy {
            decoding_engine::decode::sampling::Strategy::Sample => "sample",
            decoding_engine::decode::sampling::Strategy::Greedy => "greedy",
            decoding_engine::decode::sampling::Strategy::Beam { .. } => "beam",
        })
    };
    view! {
        <section class="panel lesson-knobs" aria-labelledby="lesson-knobs-h" data-testid="lesson-knobs">
            <h2 id="lesson-knobs-h">{move || ui.t("panel-title-lesson-knobs")} " " <Tag of="panel-lesson-knobs" /></h2>
            <div class="knob-row">
                <label data-tagged>{move || ui.t("knob-label-strategy")} " " <Tag of=format!("knob-{}", Knob::Strategy.name()) />
                    <select data-testid=Knob::Strategy.name() prop:value=strategy
                        on:change=move |ev| ui.set_field(Knob::Strategy, event_target_value(&ev))>
                        <option value="sample">{move || ui.t("knob-strategy-sample")}</option>
                        <option value="greedy">{move || ui.t("knob-strategy-greedy")}</option>
                        <option value="beam">{move || ui.t("knob-strategy-beam")}</option>
                    </select>
                </label>
            </div>
            <div class="knob-grid">
                {LESSON.iter().map(|k| view! { <NumberKnob spec=k.spec() /> }).collect_view()}
            </div>
        </section>
    }
}

/// What a profile follows, beside its name in the menu.
fn profile_note(ui: Ui, p: Profile) -> String {
    match p {
        Profile::Lesson => ui.t("knob-profile-lesson"),
        Profile::Hf => "transformers generate()".into(),
        Profile::LlamaCpp => ui.t("knob-profile-llama-cpp"),
        Profile::OpenAi => "vLLM".into(),
    }
}

/// The profile and every other knob.
#[component]
pub fn Knobs() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let profile = move || ui.knobs.settings.with(|s| s.profile.name().to_string());
    view! {
        <section class="panel more-knobs" aria-labelledby="knobs-h">
            <h2 id="knobs-h">{move || ui.t("panel-title-knobs")} " " <Tag of="panel-knobs" /></h2>
            <div class="knob-row">
                <label data-tagged>{move || ui.t("knob-label-profile")} " " <Tag of=format!("knob-{}", Knob::Profile.name()) />
                    <select data-testid=Knob::Profile.name() prop:value=profile
                        on:change=move |ev| {
                            let v = event_target_value(&ev);
                            // A new profile brings its own default order.
                            ui.knobs.raw.update(|r| { r.put(Knob::Profile, v); r.clear(Knob::Order); });
                            ui.apply_raw();
                        }>
                        {Profile::ALL.map(|p| view! { <option value=p.name()>{move || format!("{} ({})", p.name(), profile_note(ui, p))}</option> }).collect_view()}
                    </select>
                </label>
            </div>
            <div class="knob-grid">
                {grid().map(|spec| view! { <NumberKnob spec=spec /> }).collect_view()}
            </div>
        </section>
    }
}
