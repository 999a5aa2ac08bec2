//! The page's UI (Leptos, client-side rendered). Components are thin: the state is a set of
//! signals ([`Ui`], `state.rs`) fed by the worker's events (`events.rs`); what an event calls
//! for and the link's state live in plain types (`decoding_page::page`) tested natively. The
//! engine runs in the web worker, reached only through
//! [`protocol`](decoding_page::protocol) messages, so the UI thread never blocks.

mod badge;
mod batching;
mod beam;
mod chain;
mod class;
mod classroom;
mod compare;
mod constraint;
mod distribution;
mod events;
mod export;
mod files;
mod header;
mod help;
mod inside;
mod knobs;
mod kv;
mod lang;
mod lesson;
mod models;
mod panel;
mod quant;
mod speculative;
mod state;
mod taxonomy;
mod theme;
mod threads;
mod transcript;
mod views;

use state::{link_pending, write_url, Ui, LINK_QUIET};

use decoding_page::page;
use leptos::prelude::*;

#[component]
fn App() -> impl IntoView {
    let query = window().location().search().unwrap_or_default();
    let restored = decoding_page::lesson::from_link(&query, 512);
    let worker = match web_sys::Worker::new(&engine_url()) {
        Ok(w) => w,
        Err(e) => {
            // No `Ui` yet: the link's language, else the browser's.
            let lang = restored.page.lang.unwrap_or_else(lang::browser_lang);
            let tr = decoding_page::i18n::Tr::new(lang);
            let msg = tr.fmt("layout-no-worker", &[("error", format!("{e:?}"))]);
            return view! { <p class="error" role="alert">{msg}</p> }.into_any();
        }
    };
    let ui = Ui::new(&restored, worker.clone());
    provide_context(ui);
    // The address bar always holds the whole view: one effect, re-run whenever the page
    // state or the valid settings change, writes it once the changes have paused for
    // `LINK_QUIET` (the page's <html> carries `data-link-pending` until then). Chromium's
    // replaceState recalculates the page's style: at every frame of a slider drag it sat
    // between the move and the worker's answer, and in the middle of a step it was a
    // visible cost on a 32,000-token vocabulary (BENCHMARKS.md, "Figures behind the code").
    let timer = StoredValue::new_local(None::<TimeoutHandle>);
    Effect::new(move |_| {
        ui.shell.page.track();
        ui.knobs.settings.track();
        if let Some(h) = timer.get_value() {
            h.clear();
        }
        link_pending(true);
        let h = set_timeout_with_handle(
            move || {
                timer.set_value(None);
                write_url(&page::to_query(
                    &ui.shell.page.get_untracked(),
                    &ui.knobs.settings.get_untracked(),
                ));
                link_pending(false);
            },
            LINK_QUIET,
        );
        timer.set_value(h.ok());
    });
    // Leaving or reloading the page takes the last change along.
    std::mem::forget(window_event_listener(leptos::ev::pagehide, move |_| {
        ui.flush_link()
    }));
    ui.listen(&worker);
    help::install_shortcuts(ui);
    theme::install(ui);
    lang::install(ui);
    lesson::release_on_user_scroll();

    // A class round hides the next token: no distribution, chain or panel shows it.
    let class = Memo::new(move |_| ui.shell.page.with(|p| p.class));
    // The page is drawn again, whole, when the language changes (its state is the `Ui`'s,
    // kept): the views read the language untracked (`Ui::lang`). Tracked by every short-lived
    // view, a memo that never changes kept each one's subscription after it was gone: ~48
    // bytes a token that never came back (tests/e2e/soak.test.mjs).
    (move || {
        ui.shell.lang.track();
        view! {
        <div class="app" class:presenter=move || ui.shell.page.with(|p| p.presenter)>
            <a class="skip" href="#controls">{move || ui.t("layout-skip")}</a>
            <header::Header />
            <header::Problems />
            <lesson::LessonTrack />
            <main class="layout" class:class-mode=move || class.get()>
                <section class="left" aria-label=move || ui.t("layout-generation")>
                    <transcript::Transcript />
                    {move || if class.get() {
                        view! { <class::ClassPanel /> }.into_any()
                    } else {
                        view! { <distribution::Distribution /> }.into_any()
                    }}
                </section>
                <section class="right" aria-label=move || ui.t("layout-knobs") id="knobs" hidden=move || class.get()>
                    <knobs::LessonKnobs />
                    <knobs::Knobs />
                    <constraint::ConstraintPanel />
                    <chain::Chain />
                </section>
                // The panels, one line a panel, each given its own views.
                <section class="wide" aria-label=move || ui.t("layout-more-views") hidden=move || class.get()>
                    <compare::ComparePanel views=ui.views.compare />
                    <beam::BeamPanel views=ui.views.beam />
                    <speculative::SpecPanel views=ui.views.spec />
                    <batching::BatchPanel views=ui.views.batch sender=ui.sender />
                    <quant::QuantPanel views=ui.views.quant precision=ui.model.precision />
                    <kv::KvPanel views=ui.views.kv inside=ui.views.inside />
                    <distribution::ToyPanel views=ui.views.toy />
                    <taxonomy::TaxonomyPanel />
                </section>
            </main>
            <help::HelpOverlay />
            <footer>{move || ui.t("footer")}</footer>
        </div>
        }
    })
    .into_any()
}
/// The engine's script (with wasm threads where the page may have them), named with the page's release (`<meta name="decoding-release">`,
/// stamped by scripts/release.py) so that the service worker answers the engine's requests
/// from that release's files, whichever release is in charge by then (www/sw.js).
fn engine_url() -> String {
    let release = document()
        .query_selector("meta[name=decoding-release]")
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"))
        .filter(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    // Cross-origin isolated (served with COOP/COEP), the browser shares memory between
    // workers: the engine built for threads (scripts/build-threads.sh). Else Trunk's, on one
    // thread (its badge says why: `threads.rs`).
    let global = js_sys::global();
    let has = |name: &str| js_sys::Reflect::get(&global, &name.into()).is_ok_and(|v| v.is_truthy());
    let loader = if has("crossOriginIsolated") && has("SharedArrayBuffer") {
        "worker_mt_loader.js"
    } else {
        "worker_loader.js"
    };
    match release {
        Some(r) => format!("./{loader}?release={r}"),
        None => format!("./{loader}"),
    }
}

pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
