//! The page's header (the model, the backend and weights chosen, the track, presenter
//! and help buttons) and the problems shown under it.

use super::files::ModelPicker;
use super::lesson;
use super::state::{LoadState, Ui};
use super::taxonomy::Tag;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::Precision;
use leptos::prelude::*;

#[component]
pub(super) fn Header() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let on_backend = move |ev| {
        if let Some(choice) = BackendChoice::parse(&event_target_value(&ev)) {
            ui.control(|m, page, s| m.set_backend(page, choice, s));
        }
    };
    let on_precision = move |ev| {
        if let Ok(p) = Precision::parse(&event_target_value(&ev)) {
            ui.control(|m, page, s| m.set_precision(page, p, s));
        }
    };
    view! {
        <header class="top">
            <h1>"Decoding Explorer"</h1>
            {move || match ui.model.load.get() {
                LoadState::Ready => ().into_any(),
                LoadState::Starting => view! { <span class="loading">"Starting the engine…"</span> }.into_any(),
                LoadState::Loading { loaded, total } => {
                    let max = total.unwrap_or(1_062_767) as f64;
                    let figures = total.map(|t| format!(" {} of {}", decoding_engine::units::human_bytes(loaded), decoding_engine::units::human_bytes(t)));
                    view! {
                        <label class="loading">
                            "Loading the model… "
                            <progress data-testid="load-progress" max=max value=loaded as f64></progress>
                            {figures}
                        </label>
                        <super::models::DownloadCancel />
                    }
                    .into_any()
                }
            }}
            {move || ui.model.backend.get().map(|r| {
                let label = match r.kind {
                    decoding_engine::BackendKind::Gpu => "WebGPU",
                    decoding_engine::BackendKind::Cpu => "CPU",
                };
                view! {
                    <span class="badge" data-testid="backend-badge" title=r.reason.clone()>{label}</span>
                    <span class="reason" data-testid="backend-reason">{r.reason}</span>
                }
            })}
            <label class="inline" data-tagged>
                "Backend " <Tag of="backend-select" />
                <select data-testid="backend-select" on:change=on_backend
                    prop:value=move || ui.shell.page.with(|p| p.backend.name())>
                    <option value="auto">"auto"</option>
                    // The link's preference stays chosen; when the GPU could not be had, the
                    // option says so (the badge and its reason say what runs).
                    <option value="gpu">{move || {
                        let fell_back = ui.model.backend.with(|r| r.as_ref().is_some_and(|r| r.kind == decoding_engine::BackendKind::Cpu))
                            && ui.shell.page.with(|p| p.backend == BackendChoice::Gpu);
                        if fell_back { "WebGPU (unavailable: running on the CPU)" } else { "WebGPU" }
                    }}</option>
                    <option value="cpu">"CPU"</option>
                </select>
            </label>
            <label class="inline" title="How the weight matrices are stored: quantization changes the representation of θ, not its learned values (the norms stay f32)" data-tagged>
                "Weights " <Tag of="precision-select" />
                <select data-testid="precision-select" on:change=on_precision
                    prop:value=move || ui.model.precision.get().map_or("f32", |(p, _)| p.name())>
                    {Precision::ALL.map(|p| view! { <option value=p.name()>{p.label()}</option> }).collect_view()}
                </select>
            </label>
            {move || ui.model.info.get().map(|i| view! {
                <span class="summary" data-testid="model-summary">
                    <Tag of="model-summary" />" "
                    {format!(
                        "{}: {} parameters, {} layers, dim {}, {} query / {} K/V heads, vocab {}, context {}{}; {} from {}, RoPE base {}, RMSNorm ε {:e}",
                        i.name, decoding_engine::units::thousands(i.params), i.config.n_layers, i.config.dim,
                        i.config.n_heads, i.config.n_kv_heads, decoding_engine::units::thousands(i.config.vocab_size as u64),
                        decoding_engine::units::thousands(i.config.seq_len as u64),
                        i.trained_context.map_or(String::new(), |n| format!(" (of the file's {}, as llama.cpp runs at its n_ctx)", decoding_engine::units::thousands(n))),
                        i.architecture, i.format.label(),
                        decoding_engine::units::thousands(i.config.rope_theta as u64), i.config.rms_eps
                    )}
                    {(!i.extras.is_empty()).then(|| format!("; {}", i.extras.join(", ")))}
                    {i.tensor_types.map(|t| format!("; tensors in the file: {t}"))}
                    {move || ui.model.precision.get().map(|(p, b)| format!(
                        "; weights {p}: {} bytes ({})", decoding_engine::units::thousands(b),
                        decoding_engine::units::human_bytes(b)
                    ))}
                </span>
            })}
            <ModelPicker />
            <button class="ghost" data-testid="lesson-open" aria-pressed=move || ui.shell.page.with(|p| p.lesson.is_some()).to_string()
                on:click=move |_| {
                    if ui.shell.page.with_untracked(|p| p.lesson.is_some()) {
                        ui.shell.page.update(|p| p.lesson = None);
                        lesson::set_track_height(None);
                    } else {
                        ui.lesson_move(0);
                    }
                }>"Lesson track"</button>
            <button class="ghost" data-testid="class-toggle" aria-pressed=move || ui.shell.page.with(|p| p.class).to_string()
                title="Predict, then reveal: the next token is hidden until the class's guesses are drawn against the model's distribution"
                on:click=move |_| { ui.shell.page.update(|p| p.class = !p.class); }>
                "Class round"
            </button>
            <button class="ghost" data-testid="presenter" aria-pressed=move || ui.shell.page.with(|p| p.presenter).to_string()
                on:click=move |_| { ui.shell.page.update(|p| p.presenter = !p.presenter); }>
                "Presenter mode"
            </button>
            <super::theme::ThemeToggle />
            <button class="ghost" data-testid="help-button" aria-label="Keyboard shortcuts" on:click=move |_| ui.shell.help.set(true)>"?"</button>
        </header>
    }
}
/// Errors from the worker and from the link, as messages; nothing is lost.
#[component]
pub(super) fn Problems() -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        {move || ui.shell.crashed.get().map(|why| view! {
            <div class="error crashed" role="alert" data-testid="crashed">
                <span>{format!("The engine stopped ({why}). Nothing you set is lost: the address bar holds the prompt, the knobs and the tokens. ")}</span>
                <button data-testid="reload" on:click=move |_| { ui.flush_link(); let _ = window().location().reload(); }>"Reload"</button>
            </div>
        })}
        {move || ui.shell.error.get().map(|e| view! {
            <div class="error" role="alert" data-testid="error">
                <span>{e}</span>
                <button class="ghost" aria-label="Dismiss" on:click=move |_| ui.shell.error.set(None)>"×"</button>
            </div>
        })}
        {move || {
            let p = ui.shell.url_problems.get();
            (!p.is_empty()).then(|| {
                let text = p.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ");
                view! {
                    <div class="error" role="alert" data-testid="url-problems">
                        <span>{format!("The link had values this page cannot use, so their defaults are shown: {text}")}</span>
                        <button class="ghost" aria-label="Dismiss" on:click=move |_| ui.shell.url_problems.set(Vec::new())>"×"</button>
                    </div>
                }
            })
        }}
    }
}
