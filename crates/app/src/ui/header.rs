//! The page's header (the model, the backend and weights chosen, the track, presenter,
//! theme, language and help buttons) and the problems shown under it.

use super::files::ModelPicker;
use super::lesson;
use super::state::{LoadState, Ui};
use super::taxonomy::Tag;
use super::views::numbers::bytes;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::decode::sampling::SettingError;
use decoding_engine::Precision;
use decoding_page::page::room;
use decoding_page::protocol::ModelInfo;
use leptos::prelude::*;

/// The model's card: its shape, where it comes from, its weights.
fn summary(ui: Ui, i: &ModelInfo) -> String {
    let c = &i.config;
    let mut s = ui.tf(
        "model-summary",
        &[
            (
                "name",
                super::models::shown_name(ui, &i.name, i.link.as_deref()),
            ),
            ("params", ui.int(i.params)),
            ("layers", ui.int(c.n_layers as u64)),
            ("dim", ui.int(c.dim as u64)),
            ("heads", ui.int(c.n_heads as u64)),
            ("kv", ui.int(c.n_kv_heads as u64)),
            ("vocab", ui.int(c.vocab_size as u64)),
            ("context", ui.int(c.seq_len as u64)),
        ],
    );
    if let Some(n) = i.trained_context {
        s += &format!(
            " {}",
            ui.tf("model-trained-context", &[("trained", ui.int(n))])
        );
    }
    s += &next(
        ui,
        ui.tf(
            "model-source",
            &[
                ("architecture", i.architecture.clone()),
                ("format", i.format.label().to_string()),
                ("rope", ui.int(c.rope_theta as u64)),
                ("eps", format!("{:e}", c.rms_eps)),
            ],
        ),
    );
    if !i.extras.is_empty() {
        s += &next(ui, i.extras.join(", "));
    }
    if let Some(t) = &i.tensor_types {
        s += &next(ui, ui.tf("model-tensors", &[("types", t.clone())]));
    }
    s
}

/// The card's next part after a semicolon, the language's (`；` in Chinese).
fn next(ui: Ui, part: String) -> String {
    ui.tf("card-next", &[("next", part)])
}

#[component]
pub(super) fn Header() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let on_backend = move |ev| {
        if let Some(choice) = BackendChoice::parse(&event_target_value(&ev)) {
            ui.control(|m, page, s| m.set_backend(page, choice, s));
        }
    };
    let on_precision = move |ev| {
        let v = event_target_value(&ev);
        let file = (v == Precision::Ggml.name()).then_some(Precision::Ggml);
        if let Some(p) = file.or_else(|| Precision::parse(&v).ok()) {
            ui.control(|m, page, s| m.set_precision(page, p, s));
        }
    };
    view! {
        <header class="top">
            <h1>{move || ui.t("app-title")}</h1>
            {move || match ui.model.load.get() {
                LoadState::Ready => ().into_any(),
                LoadState::Starting => view! { <span class="loading">{ui.t("starting-engine")}</span> }.into_any(),
                LoadState::Loading { loaded, total } => {
                    let max = total.unwrap_or(1_062_767) as f64;
                    let figures = total.map(|t| format!(" {}", ui.tf("load-figures", &[("loaded", bytes(ui, loaded)), ("total", bytes(ui, t))])));
                    view! {
                        <label class="loading">
                            {ui.t("loading-model")} " "
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
                    <span class="badge" data-testid="backend-badge" title=reason(ui, &r.reason)>{label}</span>
                    <span class="reason" data-testid="backend-reason">{reason(ui, &r.reason)}</span>
                }
            })}
            <label class="inline" data-tagged>
                {move || ui.t("backend-label")} " " <Tag of="backend-select" />
                <select data-testid="backend-select" on:change=on_backend
                    prop:value=move || ui.shell.page.with(|p| p.backend.name())>
                    <option value="auto">{move || ui.t("backend-auto")}</option>
                    // The link's preference stays chosen; when the GPU could not be had, the
                    // option says so (the badge and its reason say what runs).
                    <option value="gpu">{move || {
                        let fell_back = ui.model.backend.with(|r| r.as_ref().is_some_and(|r| r.kind == decoding_engine::BackendKind::Cpu))
                            && ui.shell.page.with(|p| p.backend == BackendChoice::Gpu);
                        ui.t(if fell_back { "backend-gpu-unavailable" } else { "backend-gpu" })
                    }}</option>
                    <option value="cpu">{move || ui.t("backend-cpu")}</option>
                </select>
            </label>
            <super::threads::Threads />
            <label class="inline" title=move || ui.t("weights-title") data-tagged>
                {move || ui.t("weights-label")} " " <Tag of="precision-select" />
                <select data-testid="precision-select" on:change=on_precision
                    prop:value=move || ui.model.precision.get().map_or("f32", |(p, _)| p.name())>
                    {Precision::ALL.map(|p| view! { <option value=p.name()>{move || ui.t(&format!("weights-{}", p.name()))}</option> }).collect_view()}
                    // a GGUF file's own blocks: what it holds, not a choice to convert to
                    {move || ui.model.info.with(|i| i.as_ref().map(|i| i.precision)).filter(|&p| p == Precision::Ggml).map(|_| view! {
                        <option value="ggml">{ui.t("weights-ggml")}</option>
                    })}
                </select>
            </label>
            {move || ui.model.info.get().map(|i| view! {
                <span class="summary" data-testid="model-summary">
                    <Tag of="model-summary" />" "
                    {move || summary(ui, &i)}
                    {move || ui.model.precision.get().map(|(p, b)| next(
                        ui, ui.tf("model-weights", &[("precision", p.to_string()), ("bytes", ui.int(b)), ("human", bytes(ui, b))])
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
                }>{move || ui.t("lesson-track")}</button>
            <button class="ghost" data-testid="class-toggle" aria-pressed=move || ui.shell.page.with(|p| p.class).to_string()
                title=move || ui.t("class-round-title")
                on:click=move |_| { ui.shell.page.update(|p| p.class = !p.class); }>
                {move || ui.t("class-round")}
            </button>
            <button class="ghost" data-testid="presenter" aria-pressed=move || ui.shell.page.with(|p| p.presenter).to_string()
                on:click=move |_| { ui.shell.page.update(|p| p.presenter = !p.presenter); }>
                {move || ui.t("presenter-mode")}
            </button>
            <super::theme::ThemeToggle />
            <super::lang::LangMenu />
            <button class="ghost" data-testid="help-button" aria-label=move || ui.t("shortcuts") on:click=move |_| ui.shell.help.set(true)>"?"</button>
        </header>
    }
}

/// A problem of the link, `field: message`, the message in the page's language (an engine's
/// through `Ui::engine`; a room's code the page does not read, its own message).
fn problem(ui: Ui, e: &SettingError) -> String {
    match room::refused_code(&e.message).filter(|_| e.field == "room") {
        Some(code) => format!(
            "{}: {}",
            e.field,
            ui.tf(
                "room-err-code",
                &[
                    ("code", code.to_string()),
                    ("length", ui.int(room::CODE_LEN as u64)),
                    ("alphabet", room::CODE_ALPHABET.to_string()),
                ]
            )
        ),
        None => format!("{}: {}", e.field, ui.engine(&e.message)),
    }
}

/// Errors from the worker and from the link, as messages; nothing is lost.
#[component]
pub(super) fn Problems() -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        {move || ui.shell.crashed.get().map(|why| view! {
            <div class="error crashed" role="alert" data-testid="crashed">
                <span>{ui.tf("engine-stopped", &[("why", why)])}" "</span>
                <button data-testid="reload" on:click=move |_| { ui.flush_link(); let _ = window().location().reload(); }>{ui.t("reload")}</button>
            </div>
        })}
        {move || ui.shell.error.get().map(|e| view! {
            <div class="error" role="alert" data-testid="error">
                <span>{ui.engine(&e)}</span>
                <button class="ghost" aria-label=ui.t("dismiss") on:click=move |_| ui.shell.error.set(None)>"×"</button>
            </div>
        })}
        {move || {
            let p = ui.shell.url_problems.get();
            (!p.is_empty()).then(|| {
                let text = p.iter().map(|e| problem(ui, e)).collect::<Vec<_>>().join("; ");
                view! {
                    <div class="error" role="alert" data-testid="url-problems">
                        <span>{ui.tf("link-problems", &[("problems", text)])}</span>
                        <button class="ghost" aria-label=ui.t("dismiss") on:click=move |_| ui.shell.url_problems.set(Vec::new())>"×"</button>
                    </div>
                }
            })
        }}
    }
}

/// Why the backend runs, in the page's language (the worker's and "auto"'s words are read
/// back by `i18n::readback`; an adapter's own error stays as it came).
fn reason(ui: Ui, english: &str) -> String {
    ui.engine(english)
}
