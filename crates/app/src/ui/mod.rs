//! The page's UI (Leptos, client-side rendered). Components are thin: the state is a set of
//! signals ([`Ui`]) fed by the worker's events; logic lives in plain types (`state.rs`,
//! `session.rs`) tested natively. The engine runs in the web worker, reached only through
//! [`protocol`](decoding_web::protocol) messages, so the UI thread never blocks.

mod batching;
mod beam;
mod chain;
mod compare;
mod distribution;
mod export;
mod help;
mod inside;
mod knobs;
mod kv;
mod lesson;
mod quant;
mod speculative;
mod taxonomy;
mod transcript;

use decoding_engine::sampling::knobs::{Control, Knob};
use decoding_engine::sampling::{RawSettings, SettingError, Settings, Strategy};
use decoding_engine::Precision;
use decoding_gpu::{BackendChoice, BackendReport};
use decoding_web::page::{self, PageState};
use decoding_web::protocol::*;
use leptos::prelude::*;
use std::time::Duration;
use taxonomy::Tag;
use wasm_bindgen::prelude::*;
use web_sys::MessageEvent;

const MODEL_URL: &str = "models/stories260K/stories260K.bin";
const TOKENIZER_URL: &str = "models/stories260K/tok512.bin";
/// Pause between tokens while running.
const RUN_PACE: Duration = Duration::from_millis(120);

/// Loading progress.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadState {
    Starting,
    Loading { loaded: u64, total: Option<u64> },
    Ready,
}

/// The model and the backend running it.
#[derive(Clone, Copy)]
pub struct ModelState {
    pub load: RwSignal<LoadState>,
    pub info: RwSignal<Option<ModelInfo>>,
    pub backend: RwSignal<Option<BackendReport>>,
    /// The precision the weights run at and their bytes.
    pub precision: RwSignal<Option<(Precision, u64)>>,
}

/// The transcript, its next-token distribution, and whether it is running.
#[derive(Clone, Copy)]
pub struct GenState {
    pub transcript: RwSignal<Option<TranscriptView>>,
    pub trace: RwSignal<Option<TraceView>>,
    pub running: RwSignal<bool>,
    /// The tokens a loaded transcript file holds, checked against its replay.
    pub expect_tokens: RwSignal<Option<Vec<u32>>>,
}

/// The knobs: their text as typed, the last valid settings, the rules broken.
#[derive(Clone, Copy)]
pub struct KnobState {
    /// The controls' text, as typed.
    pub raw: RwSignal<RawSettings>,
    /// The last valid settings (what the worker has).
    pub settings: RwSignal<Settings>,
    /// Rule violations of the current `raw`, shown next to their controls.
    pub field_errors: RwSignal<Vec<SettingError>>,
}

/// What the side panels draw: toy logits, the beam tree, the cache comparison.
#[derive(Clone, Copy)]
pub struct ViewState {
    pub toy_trace: RwSignal<Option<TraceView>>,
    /// What is wrong with the toy logits or history text (then no toy result is shown).
    pub toy_error: RwSignal<Option<String>>,
    /// The toy history: rows "already generated", which the penalties see.
    pub toy_history: RwSignal<String>,
    pub beam: RwSignal<Option<BeamView>>,
    /// The beam tree, kept here and updated from each view's changed nodes.
    pub beam_nodes: RwSignal<Vec<decoding_engine::beam::BeamNode>>,
    /// The last cached-against-naive measurement.
    pub compare: RwSignal<Option<Vec<CompareRow>>>,
    /// f32, q8 and q4 at the current position (while the quantization panel is open).
    pub quant: RwSignal<Option<QuantView>>,
    /// Inside the newest step (while that view is open).
    pub probe: RwSignal<Option<ProbeView>>,
    /// The speculative run.
    pub spec: RwSignal<Option<SpecView>>,
    /// The batching panel: its lanes, the throughput sweep, the serving simulation.
    pub lanes: RwSignal<Option<LanesView>>,
    pub sweep: RwSignal<Option<SweepView>>,
    pub serve: RwSignal<Option<ServeView>>,
    /// "Same θ, different config": the compared columns.
    pub columns: RwSignal<Option<ColumnsView>>,
    /// Measurements asked for and not answered yet ("compare", "sweep"): their panels and
    /// the caption say so while they run.
    pub pending: RwSignal<Vec<&'static str>>,
}

/// The page around them: the link's view, the help overlay, errors.
#[derive(Clone, Copy)]
pub struct ShellState {
    pub page: RwSignal<PageState>,
    pub help: RwSignal<bool>,
    /// The last error from the worker.
    pub error: RwSignal<Option<String>>,
    /// What the link had wrong when the page opened.
    pub url_problems: RwSignal<Vec<SettingError>>,
    /// Set when the engine worker failed (it is stopped): the page offers a reload, which
    /// restores everything from the link.
    pub crashed: RwSignal<Option<String>>,
}

/// The page's state, one group of signals per part of the page, fed by the worker's events
/// and by the controls.
#[derive(Clone, Copy)]
pub struct Ui {
    pub model: ModelState,
    pub gen: GenState,
    pub knobs: KnobState,
    pub views: ViewState,
    pub shell: ShellState,
    /// Whether the first link restore was sent.
    restored: RwSignal<bool>,
    link: StoredValue<web_sys::Worker, LocalStorage>,
}

impl Ui {
    /// Fresh signals for the view a link restored, talking to `worker`.
    fn new(restored: &page::Restored, worker: web_sys::Worker) -> Ui {
        Ui {
            model: ModelState {
                load: RwSignal::new(LoadState::Starting),
                info: RwSignal::new(None),
                backend: RwSignal::new(None),
                precision: RwSignal::new(None),
            },
            gen: GenState {
                transcript: RwSignal::new(None),
                trace: RwSignal::new(None),
                running: RwSignal::new(false),
                expect_tokens: RwSignal::new(None),
            },
            knobs: KnobState {
                raw: RwSignal::new(restored.raw.clone()),
                settings: RwSignal::new(restored.settings.clone()),
                field_errors: RwSignal::new(Vec::new()),
            },
            views: ViewState {
                toy_trace: RwSignal::new(None),
                toy_error: RwSignal::new(None),
                toy_history: RwSignal::new(String::new()),
                beam: RwSignal::new(None),
                quant: RwSignal::new(None),
                probe: RwSignal::new(None),
                spec: RwSignal::new(None),
                lanes: RwSignal::new(None),
                sweep: RwSignal::new(None),
                serve: RwSignal::new(None),
                columns: RwSignal::new(None),
                beam_nodes: RwSignal::new(Vec::new()),
                compare: RwSignal::new(None),
                pending: RwSignal::new(Vec::new()),
            },
            shell: ShellState {
                page: RwSignal::new(restored.page.clone()),
                help: RwSignal::new(false),
                error: RwSignal::new(None),
                url_problems: RwSignal::new(restored.problems.clone()),
                crashed: RwSignal::new(None),
            },
            restored: RwSignal::new(false),
            link: StoredValue::new_local(worker.clone()),
        }
    }

    /// Feeds the worker's messages and errors into the signals.
    fn listen(self, worker: &web_sys::Worker) {
        let ui = self;
        let on_event = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            match decoding_web::protocol::decode::<Event>(&text) {
                Ok(ev) => ui.on_event(ev),
                Err(err) => ui
                    .shell
                    .error
                    .set(Some(format!("unreadable message from the engine: {err}"))),
            }
        });
        worker.set_onmessage(Some(on_event.as_ref().unchecked_ref()));
        on_event.forget();
        // An error that escapes the worker (a panic traps its wasm) leaves it in no state to
        // answer: it is stopped, and the page says so instead of waiting forever.
        let on_error =
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
                e.prevent_default();
                ui.link.with_value(|w| w.terminate());
                ui.gen.running.set(false);
                // Reload restores the view from the link: it must hold the last change.
                ui.flush_link();
                ui.shell.crashed.set(Some(e.message()));
            });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
    }

    /// Whether a panel is open, as a memo: views built under it are rebuilt when it opens or
    /// closes, not whenever any part of the page state changes (every step changes the
    /// link's step count). Rebuilding a panel at each token left stale subscriptions in the
    /// long-lived signals its views read: the page's memory grew with every run
    /// (tests/e2e/soak.test.mjs).
    pub fn panel_open(&self, name: &'static str) -> Memo<bool> {
        let page = self.shell.page;
        Memo::new(move |_| page.with(|p| p.panels.contains(name)))
    }

    /// Whether a measurement (`"compare"`, `"sweep"`) was asked for and has not arrived.
    pub fn pending(&self, view: &'static str) -> bool {
        self.views.pending.with(|p| p.contains(&view))
    }

    fn arrived(&self, view: &'static str) {
        if self.views.pending.with_untracked(|p| p.contains(&view)) {
            self.views.pending.update(|p| p.retain(|v| *v != view));
        }
    }

    pub fn send(&self, req: &Request) {
        let measures = match req {
            Request::CacheCompare { .. } => Some("compare"),
            Request::BatchSweep { .. } => Some("sweep"),
            _ => None,
        };
        if let Some(v) = measures {
            self.views.pending.update(|p| {
                if !p.contains(&v) {
                    p.push(v)
                }
            });
        }
        self.link
            .with_value(|w| match decoding_web::protocol::encode(req) {
                Ok(text) => {
                    if let Err(e) = w.post_message(&JsValue::from_str(&text)) {
                        web_sys::console::error_2(&"postMessage failed".into(), &e);
                    }
                }
                Err(e) => web_sys::console::error_1(&e.into()),
            });
    }

    /// Writes the view into the address bar now (a change waits for the view to be still,
    /// `LINK_QUIET`): before the page is reloaded or left.
    pub fn flush_link(&self) {
        write_url(&page::to_query(
            &self.shell.page.get_untracked(),
            &self.knobs.settings.get_untracked(),
        ));
        link_pending(false);
    }

    pub fn vocab_size(&self) -> usize {
        self.model
            .info
            .with_untracked(|i| i.as_ref().map_or(512, |i| i.config.vocab_size))
    }

    pub fn piece(&self, id: u32) -> String {
        self.model.info.with_untracked(|i| {
            i.as_ref()
                .and_then(|i| i.pieces.get(id as usize).cloned())
                .unwrap_or_else(|| format!("#{id}"))
        })
    }

    pub fn is_beam(&self) -> bool {
        matches!(
            self.knobs.settings.get_untracked().strategy,
            Strategy::Beam { .. }
        )
    }

    /// Sets one raw field and, if everything is valid, sends the new settings to the worker.
    pub fn set_field(&self, field: &str, value: String) {
        self.knobs.raw.update(
            |r| match Knob::parse(field).map(|k| (k, k.spec().control)) {
                Some((k, Control::List { sep })) => r.put_all(k, split_entries(&value, sep)),
                _ => {
                    r.set(field, &value);
                }
            },
        );
        self.apply_raw();
    }

    /// Validates the controls' text; valid settings go to the worker, errors to the controls.
    pub fn apply_raw(&self) {
        let raw = self.knobs.raw.get_untracked();
        match raw.validate(self.vocab_size()) {
            Ok(s) => {
                self.knobs.field_errors.set(Vec::new());
                let strategy_changed = s.strategy != self.knobs.settings.get_untracked().strategy;
                self.knobs.settings.set(s.clone());
                self.send(&Request::SetSettings { settings: s });
                if strategy_changed && self.is_beam() {
                    // Choosing beam search shows it (issue 10: the panel stayed closed).
                    self.shell.page.update(|p| {
                        p.panels.insert("beam".to_string());
                    });
                    self.send(&Request::BeamStart);
                }
                self.send_toy();
            }
            Err(e) => self.knobs.field_errors.set(e.0),
        }
    }

    /// Re-runs the toy logits when toy mode is on.
    pub fn send_toy(&self) {
        let page = self.shell.page.get_untracked();
        if page.panels.contains("toy") {
            let text = page.toy.unwrap_or_else(|| page::DEFAULT_TOY.to_string());
            let parsed = page::parse_toy(&text).and_then(|logits| {
                let history = self.views.toy_history.with_untracked(|h| {
                    page::parse_toy_history(h, logits.len()).map_err(|e| format!("history: {e}"))
                })?;
                Ok((logits, history))
            });
            match parsed {
                Ok((logits, history)) => {
                    self.views.toy_error.set(None);
                    self.send(&Request::Toy { logits, history });
                }
                // The old result would read as the answer to the new text: it goes.
                Err(e) => {
                    self.views.toy_trace.set(None);
                    self.views.toy_error.set(Some(e));
                }
            }
        }
    }

    /// The page's speculative run replayed from its link state: the same seed gives the
    /// same run.
    fn replay_spec(&self) {
        if let Some(l) = self.shell.page.with_untracked(|p| p.spec.clone()) {
            self.send(&Request::SpecStart {
                draft: l.draft,
                gamma: l.gamma,
                rule: l.rule,
            });
            if l.cycles > 0 {
                self.send(&Request::SpecCycle { count: l.cycles });
            }
        }
    }

    pub fn toggle_panel(&self, name: &str) {
        self.shell.page.update(|p| {
            if !p.panels.remove(name) {
                p.panels.insert(name.to_string());
            }
        });
        if name == "quant" {
            let open = self
                .shell
                .page
                .with_untracked(|p| p.panels.contains("quant"));
            if !open {
                self.views.quant.set(None);
            }
            self.send(&Request::Quantization { open });
        }
        if name == "inside" || name == "kv" {
            let open = self.shell.page.with_untracked(page::probe_open);
            if !open {
                self.views.probe.set(None);
            }
            self.send(&Request::Probe { open });
        }
        if name == "toy" {
            self.shell.page.update(|p| {
                if p.toy.is_none() {
                    p.toy = Some(page::DEFAULT_TOY.to_string());
                }
            });
            self.send_toy();
        }
    }

    /// Step: one token (or one beam level in beam mode).
    pub fn step(&self) {
        if self.is_beam() {
            self.send(&Request::BeamStep);
        } else {
            self.send(&Request::Step { count: 1 });
        }
    }

    /// One token back; in beam search, the tree one level back.
    pub fn rewind(&self) {
        self.send(&Request::Rewind);
    }

    pub fn reset(&self) {
        self.gen.running.set(false);
        if self.is_beam() {
            self.send(&Request::BeamStart);
        } else {
            self.send(&Request::Reset);
        }
    }

    /// Run / pause: tokens at a steady pace until paused or stopped.
    pub fn toggle_run(&self) {
        let run = !self.gen.running.get_untracked();
        self.gen.running.set(run);
        if run {
            self.step();
        } else {
            self.send(&Request::Cancel);
        }
    }

    /// While running: the next step after the pace, or the end when generation is done.
    fn continue_run(&self, done: bool) {
        if !self.gen.running.get_untracked() {
            return;
        }
        if done {
            self.gen.running.set(false);
            return;
        }
        let ui = *self;
        set_timeout(
            move || {
                if ui.gen.running.get_untracked() {
                    ui.step();
                }
            },
            RUN_PACE,
        );
    }

    fn on_event(&self, e: Event) {
        match e {
            Event::Ready => {
                // The link's view is opened as part of loading: prompt, settings, tokens.
                let page = self.shell.page.get_untracked();
                self.send(&Request::Load {
                    model_url: MODEL_URL.into(),
                    tokenizer_url: TOKENIZER_URL.into(),
                    backend: page.backend,
                    prompt: page.prompt.clone(),
                    settings: self.knobs.settings.get_untracked(),
                    steps: page.steps,
                    precision: page.precision,
                });
            }
            Event::Progress { loaded, total, .. } => {
                self.model.load.set(LoadState::Loading { loaded, total })
            }
            Event::Loaded { info } => {
                // A model that loaded answers the last failure: its message goes.
                self.shell.error.set(None);
                self.model.info.set(Some(info));
                self.model.load.set(LoadState::Ready);
            }
            Event::Backend { report } => {
                self.model.backend.set(Some(report));
                if !self.restored.get_untracked() {
                    // First backend: the views that live beside the transcript.
                    // (A beam link's tree is grown by the worker as part of the restore.)
                    self.restored.set(true);
                    self.send_toy();
                    if self
                        .shell
                        .page
                        .with_untracked(|p| p.panels.contains("quant"))
                    {
                        self.send(&Request::Quantization { open: true });
                    }
                    if self.shell.page.with_untracked(page::probe_open) {
                        self.send(&Request::Probe { open: true });
                    }
                    // A lesson step's link runs its panel action too.
                    let at = self.shell.page.with_untracked(|p| p.lesson);
                    if let Some(step) = at.and_then(|i| decoding_web::lesson::STEPS.get(i)) {
                        if let Some(req) = step.action_request() {
                            self.send(&req);
                        }
                        lesson::bring_into_view(step.shows, true, 120);
                    }
                }
                // A link's speculative run, or one whose backend or weights changed, grown
                // (again) on this backend; the same for the compared columns.
                self.replay_spec();
                let page = self.shell.page.get_untracked();
                for req in page::compare_requests(&page) {
                    self.send(&req);
                }
            }
            Event::Transcript { view } => {
                let n = view.steps.len() as u32;
                // A loaded transcript's replay: its tokens must be the file's.
                if let Some(want) = self.gen.expect_tokens.get_untracked() {
                    if view.steps.len() >= want.len() || view.stop.is_some() {
                        self.gen.expect_tokens.set(None);
                        let got: Vec<u32> = view.steps.iter().map(|s| s.token).collect();
                        if got != want {
                            self.shell.error.set(Some(format!(
                                "the transcript file's {} tokens differ from this model's replay of its prompt and knobs (another model or file?): shown is the replay",
                                want.len()
                            )));
                        }
                    }
                }
                let stopped = view.stop.is_some();
                self.gen.transcript.set(Some(view));
                self.shell.page.update(|p| p.steps = n);
                if !self.is_beam() {
                    self.continue_run(stopped);
                }
            }
            Event::Trace { view, toy } => {
                if toy {
                    self.views.toy_trace.set(Some(view));
                } else {
                    self.gen.trace.set(Some(view));
                }
            }
            Event::Beam { mut view } => {
                let done = view.done;
                let changed = std::mem::take(&mut view.changed);
                self.views.beam_nodes.update(|nodes| {
                    if view.reset {
                        nodes.clear();
                    }
                    for n in changed {
                        let id = n.id;
                        if id < nodes.len() {
                            nodes[id] = n;
                        } else if id == nodes.len() {
                            nodes.push(n);
                        }
                    }
                });
                if self.views.beam_nodes.with_untracked(Vec::len) != view.node_count {
                    self.shell.error.set(Some(
                        "the beam tree arrived out of order: press Restart in the beam panel"
                            .into(),
                    ));
                }
                self.views.beam.set(Some(view));
                if self.is_beam() {
                    self.continue_run(done);
                }
            }
            Event::CacheCompare { rows } => {
                self.arrived("compare");
                self.views.compare.set(Some(rows))
            }
            Event::Precision {
                precision,
                weight_bytes,
            } => self.model.precision.set(Some((precision, weight_bytes))),
            Event::Quant { view } => self.views.quant.set(Some(view)),
            Event::Probe { view } => self.views.probe.set(Some(view)),
            Event::Spec { view } => self.views.spec.set(Some(view)),
            Event::Lanes { view } => self.views.lanes.set(Some(view)),
            Event::Sweep { view } => {
                self.arrived("sweep");
                self.views.sweep.set(Some(view))
            }
            Event::Serve { view } => self.views.serve.set(Some(view)),
            Event::Columns { view } => {
                let steps = view
                    .columns
                    .iter()
                    .map(|c| c.steps.len())
                    .max()
                    .unwrap_or(0) as u32;
                self.shell.page.update(|p| {
                    if let Some(c) = p.compare.as_mut() {
                        c.steps = steps;
                    }
                });
                self.views.columns.set(Some(view));
            }
            Event::Error { message } => {
                self.gen.running.set(false);
                self.views.pending.set(Vec::new());
                self.shell.error.set(Some(message));
            }
        }
    }
}

/// A token as the charts label it: its piece, whitespace visible, quoted, at most 12
/// characters.
pub fn chip_label(ui: &Ui, id: u32) -> String {
    page::piece_text(&ui.piece(id), true, Some(12))
}

/// How long the view must stay still before the address bar is written.
const LINK_QUIET: Duration = Duration::from_millis(120);

/// Marks the page's <html> while a change of the view is not in the address bar yet (the
/// tests read the link once it is written).
fn link_pending(pending: bool) {
    if let Some(root) = window().document().and_then(|d| d.document_element()) {
        let _ = if pending {
            root.set_attribute("data-link-pending", "")
        } else {
            root.remove_attribute("data-link-pending")
        };
    }
}

/// Writes the view into the address bar (replaceState: no history spam).
fn write_url(query: &str) {
    let url = if query.is_empty() {
        window().location().pathname().unwrap_or_default()
    } else {
        format!("?{query}")
    };
    if let Ok(h) = window().history() {
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

/// Splits a control's text into entries (logit-bias pairs, stop sequences), dropping blanks.
fn split_entries(text: &str, sep: char) -> Vec<String> {
    text.split(sep)
        .map(|s| {
            if sep == '\n' {
                s.to_string()
            } else {
                s.trim().to_string()
            }
        })
        .filter(|s| !s.is_empty())
        .collect()
}

#[component]
fn App() -> impl IntoView {
    let query = window().location().search().unwrap_or_default();
    let restored = decoding_web::lesson::from_link(&query, 512);
    let worker = match web_sys::Worker::new("./worker_loader.js") {
        Ok(w) => w,
        Err(e) => {
            let msg = format!("cannot start the engine worker: {e:?}");
            return view! { <p class="error" role="alert">{msg}</p> }.into_any();
        }
    };
    let ui = Ui::new(&restored, worker.clone());
    provide_context(ui);
    // The address bar always holds the whole view: one effect, re-run whenever the page
    // state or the valid settings change, writes it once the changes have paused for
    // `LINK_QUIET` (the page's <html> carries `data-link-pending` until then). Chromium's
    // replaceState recalculates the page's style: at every frame of a slider drag it sat
    // between the move and the worker's answer (issue 32), and in the middle of a step it
    // took 0.4-5.5 ms on a 32,000-token vocabulary.
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

    view! {
        <div class="app" class:presenter=move || ui.shell.page.with(|p| p.presenter)>
            <a class="skip" href="#controls">"Skip to the controls"</a>
            <Header />
            <Problems />
            <lesson::LessonTrack />
            <main class="layout">
                <section class="left" aria-label="Generation">
                    <transcript::Transcript />
                    <distribution::Distribution />
                </section>
                <section class="right" aria-label="Decoding knobs" id="knobs">
                    <knobs::LessonKnobs />
                    <knobs::Knobs />
                    <chain::Chain />
                </section>
                <section class="wide" aria-label="More views">
                    <compare::ComparePanel />
                    <beam::BeamPanel />
                    <speculative::SpecPanel />
                    <batching::BatchPanel />
                    <quant::QuantPanel />
                    <kv::KvPanel />
                    <distribution::ToyPanel />
                    <taxonomy::TaxonomyPanel />
                </section>
            </main>
            <help::HelpOverlay />
            <footer>
                "stories260K: Andrej Karpathy's tinyllamas (MIT), trained on TinyStories (Eldan & Li, 2023; CDLA-Sharing-1.0). "
                "Lesson 10 — Inference in Depth. Press ? for keyboard shortcuts."
            </footer>
        </div>
    }
    .into_any()
}

#[component]
fn Header() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let on_backend = move |ev| {
        let v = event_target_value(&ev);
        if let Some(choice) = BackendChoice::parse(&v) {
            ui.shell.page.update(|p| p.backend = choice);
            ui.gen.running.set(false);
            ui.send(&Request::SetBackend { backend: choice });
            // The beam tree's caches lived on the old backend: grow it again on the new one,
            // to the depth it had.
            if ui.is_beam() {
                let depth = ui.shell.page.with_untracked(|p| p.steps);
                ui.send(&Request::BeamTo { depth });
            }
        }
    };
    let on_precision = move |ev| {
        if let Ok(p) = Precision::parse(&event_target_value(&ev)) {
            ui.shell.page.update(|page| page.precision = Some(p));
            ui.gen.running.set(false);
            ui.send(&Request::SetPrecision { precision: p });
            if ui.is_beam() {
                let depth = ui.shell.page.with_untracked(|p| p.steps);
                ui.send(&Request::BeamTo { depth });
            }
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
                    view! {
                        <label class="loading">
                            "Loading the model… "
                            <progress data-testid="load-progress" max=max value=loaded as f64></progress>
                        </label>
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
                    prop:value=move || match ui.shell.page.with(|p| p.backend) {
                        BackendChoice::Auto => "auto",
                        BackendChoice::Gpu => "gpu",
                        BackendChoice::Cpu => "cpu",
                    }>
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
                        "{}: {} parameters, {} layers, dim {}, {} query / {} K/V heads, vocab {}, context {}; {} from {}, RoPE base {}, RMSNorm ε {:e}",
                        i.name, decoding_engine::units::thousands(i.params), i.config.n_layers, i.config.dim,
                        i.config.n_heads, i.config.n_kv_heads, decoding_engine::units::thousands(i.config.vocab_size as u64),
                        decoding_engine::units::thousands(i.config.seq_len as u64),
                        i.architecture, i.format.label(),
                        decoding_engine::units::thousands(i.config.rope_theta as u64), i.config.rms_eps
                    )}
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
            <button class="ghost" data-testid="presenter" aria-pressed=move || ui.shell.page.with(|p| p.presenter).to_string()
                on:click=move |_| { ui.shell.page.update(|p| p.presenter = !p.presenter); }>
                "Presenter mode"
            </button>
            <button class="ghost" data-testid="help-button" aria-label="Keyboard shortcuts" on:click=move |_| ui.shell.help.set(true)>"?"</button>
        </header>
    }
}

/// The files a model is loaded from: a llama2.c checkpoint and its tokenizer, a GGUF file
/// alone, or a Hugging Face set (`model.safetensors`, `config.json`, `tokenizer.json`).
struct Chosen {
    model: web_sys::File,
    tokenizer: Option<web_sys::File>,
    config: Option<web_sys::File>,
}

impl Chosen {
    /// Sorts picked or dropped files by name: `.safetensors` is a Hugging Face checkpoint
    /// (the `.json` named like "config" its config, the other its tokenizer), a lone
    /// `.gguf` a GGUF file, otherwise the one named like a tokenizer is the tokenizer.
    fn sort(all: Vec<web_sys::File>) -> Result<Chosen, String> {
        let name = |f: &web_sys::File| f.name().to_ascii_lowercase();
        let ends = |f: &web_sys::File, ext: &str| name(f).ends_with(ext);
        if let Some(st) = all.iter().find(|f| ends(f, ".safetensors")) {
            let config = all
                .iter()
                .find(|f| ends(f, ".json") && name(f).contains("config"));
            let tokenizer = all
                .iter()
                .find(|f| ends(f, ".json") && !name(f).contains("config"));
            return match (config, tokenizer, all.len()) {
                (Some(c), Some(t), 3) => Ok(Chosen {
                    model: st.clone(),
                    tokenizer: Some(t.clone()),
                    config: Some(c.clone()),
                }),
                _ => Err(format!(
                    "{} is a Hugging Face checkpoint: give it with its config.json and tokenizer.json (the three together)",
                    st.name()
                )),
            };
        }
        if all.len() == 1 && ends(&all[0], ".gguf") {
            return Ok(Chosen {
                model: all[0].clone(),
                tokenizer: None,
                config: None,
            });
        }
        let is_tok = |f: &web_sys::File| name(f).contains("tok") || ends(f, ".json");
        match (
            all.iter().find(|f| !is_tok(f)),
            all.iter().find(|f| is_tok(f)),
            all.len(),
        ) {
            (Some(m), Some(t), 2) => Ok(Chosen {
                model: m.clone(),
                tokenizer: Some(t.clone()),
                config: None,
            }),
            (Some(m), None, 1) if !ends(m, ".gguf") => Err(format!(
                "{} is a llama2.c checkpoint: give its tokenizer too",
                m.name()
            )),
            _ => Err("give a GGUF file alone, a llama2.c checkpoint (.bin) with its tokenizer, or a Hugging Face model.safetensors with its config.json and tokenizer.json".into()),
        }
    }
}

/// A picked file's bytes, read in slices of 8 MiB into one buffer, the progress bar
/// following (a multi-hundred-MB file takes seconds).
async fn read_file(
    ui: Ui,
    file: &web_sys::File,
    progress: bool,
) -> Result<js_sys::ArrayBuffer, String> {
    const SLICE: f64 = (8 << 20) as f64;
    let len = file.size();
    let out = js_sys::Uint8Array::new_with_length(len as u32);
    let mut at = 0.0;
    while at < len {
        let end = (at + SLICE).min(len);
        let part = file
            .slice_with_f64_and_f64(at, end)
            .map_err(|_| format!("{} could not be read", file.name()))?;
        let buf = wasm_bindgen_futures::JsFuture::from(part.array_buffer())
            .await
            .map_err(|_| format!("{} could not be read", file.name()))?;
        out.set(&js_sys::Uint8Array::new(&buf), at as u32);
        at = end;
        if progress {
            ui.model.load.set(LoadState::Loading {
                loaded: at as u64,
                total: Some(len as u64),
            });
        }
    }
    Ok(out.buffer())
}

/// Checks the chosen files from their sizes and what is small in them (a checkpoint's
/// header, a `config.json`) against the memory budget — nothing large is read before —
/// then reads them and hands their bytes to the worker, which validates them before they
/// replace the current model.
fn load_files(ui: Ui, chosen: Chosen) {
    use decoding_engine::{budget::Budget, Model};
    let fail = move |m: String| {
        ui.model.load.set(LoadState::Ready);
        ui.shell.error.set(Some(m));
    };
    wasm_bindgen_futures::spawn_local(async move {
        let Chosen {
            model,
            tokenizer,
            config,
        } = chosen;
        let read_small = |f: web_sys::File| async move { read_file(ui, &f, false).await };
        // The legacy header is 28 bytes; a version-2 (Q8_0) file's is 256.
        let head_len = decoding_engine::formats::HEAD_BYTES as f64;
        let head = match model.slice_with_f64_and_f64(0.0, head_len) {
            Ok(blob) => wasm_bindgen_futures::JsFuture::from(blob.array_buffer()).await,
            Err(e) => Err(e),
        };
        let Ok(head) = head else {
            return fail(format!("{} could not be read", model.name()));
        };
        let head = js_sys::Uint8Array::new(&head).to_vec();
        let m_len = model.size() as u64;
        let t_len = tokenizer.as_ref().map_or(0, |t| t.size() as u64);
        let budget = Budget::default();
        let mut name = model
            .name()
            .trim_end_matches(".bin")
            .trim_end_matches(".gguf")
            .trim_end_matches(".safetensors")
            .to_string();
        let mut config_bytes = None;
        let gguf = decoding_engine::gguf::Gguf::is_gguf(&head);
        let checked = match (&config, &tokenizer, gguf) {
            (Some(c), Some(_), _) => {
                // config.json is small: read and checked (its shape against the budget)
                // before the weights are.
                if c.size() as u64 > decoding_engine::hf::MAX_CONFIG_BYTES as u64 {
                    return fail(
                        decoding_engine::hf::HfError::ConfigTooLarge {
                            bytes: c.size() as u64,
                            limit: decoding_engine::hf::MAX_CONFIG_BYTES,
                        }
                        .to_string(),
                    );
                }
                let bytes = match read_small(c.clone()).await {
                    Ok(b) => js_sys::Uint8Array::new(&b).to_vec(),
                    Err(e) => return fail(e),
                };
                let parsed = decoding_engine::hf::HfConfig::parse(&bytes)
                    .map_err(decoding_engine::ModelError::from)
                    .and_then(|hf| {
                        Model::check_files_hf(&hf.config, m_len, t_len, budget).map(|_| hf)
                    });
                match parsed {
                    Ok(hf) => {
                        if let Some(n) = hf.name {
                            name = n;
                        }
                        config_bytes = Some(bytes);
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            (None, None, true) => Model::check_gguf_len(m_len, budget),
            (None, Some(_), true) => Err(decoding_engine::gguf::GgufError::TokenizerGiven.into()),
            (None, Some(_), false) => Model::check_files(&head, m_len, t_len, budget).map(|_| ()),
            // Named like a GGUF file but without its magic: say what it is not.
            (None, None, false) if model.name().to_ascii_lowercase().ends_with(".gguf") => {
                return fail(format!(
                    "{} is not a GGUF file: it does not start with GGUF's magic bytes \"GGUF\" (it starts with {:?})",
                    model.name(),
                    String::from_utf8_lossy(&head[..head.len().min(4)])
                ))
            }
            _ => {
                return fail(format!(
                    "{} is a llama2.c checkpoint: choose its tokenizer too",
                    model.name()
                ))
            }
        };
        if let Err(e) = checked {
            return fail(e.to_string());
        }
        let tokenizer_bytes = match tokenizer {
            Some(t) => read_small(t).await,
            None => Ok(js_sys::ArrayBuffer::new(0)),
        };
        match (read_file(ui, &model, true).await, tokenizer_bytes) {
            (Ok(m), Ok(t)) => {
                let msg = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&msg, &"name".into(), &name.into());
                let _ = js_sys::Reflect::set(&msg, &"model".into(), &m);
                let _ = js_sys::Reflect::set(&msg, &"tokenizer".into(), &t);
                let moved = js_sys::Array::of2(&m, &t);
                if let Some(c) = config_bytes {
                    let c = js_sys::Uint8Array::from(&c[..]).buffer();
                    let _ = js_sys::Reflect::set(&msg, &"config".into(), &c);
                    moved.push(&c);
                }
                ui.gen.running.set(false);
                // Moved to the worker, not copied: the page keeps no second copy of the file.
                ui.link.with_value(|w| {
                    if let Err(e) = w.post_message_with_transfer(&msg, &moved) {
                        web_sys::console::error_2(&"postMessage failed".into(), &e);
                    }
                });
            }
            (Err(e), _) | (_, Err(e)) => fail(e),
        }
    });
}

/// The files of an `<input type=file>`.
fn picked(ev: &leptos::ev::Event) -> Option<web_sys::File> {
    let input: web_sys::HtmlInputElement = event_target(ev);
    input.files().and_then(|f| f.get(0))
}

/// Another model from files: a llama2.c checkpoint and its tokenizer (stories15M/42M/110M
/// work the same way), a GGUF file, or a Hugging Face checkpoint's three files; picked, or
/// dropped on the page.
#[component]
fn ModelPicker() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let open = RwSignal::new(false);
    let model = StoredValue::new_local(None::<web_sys::File>);
    let tok = StoredValue::new_local(None::<web_sys::File>);
    let config = StoredValue::new_local(None::<web_sys::File>);
    let go = move || {
        let all: Vec<web_sys::File> = [model.get_value(), tok.get_value(), config.get_value()]
            .into_iter()
            .flatten()
            .collect();
        if all.is_empty() {
            return ui.shell.error.set(Some("choose a model file first".into()));
        }
        match Chosen::sort(all) {
            Ok(c) => {
                load_files(ui, c);
                open.set(false);
            }
            Err(e) => ui.shell.error.set(Some(e)),
        }
    };
    let drop = window_event_listener(leptos::ev::drop, move |ev: leptos::ev::DragEvent| {
        let Some(files) = ev.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        if files.length() == 0 {
            return;
        }
        ev.prevent_default();
        let all: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
        match Chosen::sort(all) {
            Ok(c) => load_files(ui, c),
            Err(e) => ui.shell.error.set(Some(e)),
        }
    });
    let over = window_event_listener(leptos::ev::dragover, |ev: leptos::ev::DragEvent| {
        if ev
            .data_transfer()
            .is_some_and(|d| d.types().includes(&"Files".into(), 0))
        {
            ev.prevent_default();
        }
    });
    std::mem::forget((drop, over));
    view! {
        <button class="ghost" data-testid="load-model" aria-expanded=move || open.get().to_string()
            on:click=move |_| open.update(|o| *o = !*o)>"Load a model…"</button>
        {move || open.get().then(|| view! {
            <div class="picker" data-testid="model-picker">
                <label data-tagged>"Model (GGUF, llama2.c .bin, or model.safetensors) " <Tag of="model-file" />
                    <input type="file" data-testid="model-file" accept=".gguf,.bin,.safetensors"
                        on:change=move |ev| model.set_value(picked(&ev)) /></label>
                <label data-tagged>"Tokenizer (for a .bin: tokenizer.bin or .json; for safetensors: tokenizer.json) " <Tag of="tokenizer-file" />
                    <input type="file" data-testid="tokenizer-file" accept=".bin,.json"
                        on:change=move |ev| tok.set_value(picked(&ev)) /></label>
                <label data-tagged>"Config (for safetensors: config.json) " <Tag of="config-file" />
                    <input type="file" data-testid="config-file" accept=".json"
                        on:change=move |ev| config.set_value(picked(&ev)) /></label>
                <button data-testid="load-files" on:click=move |_| go()>"Load"</button>
                <span class="small">" or drop the file(s) on the page"</span>
            </div>
        })}
    }
}

/// Errors from the worker and from the link, as messages; nothing is lost.
#[component]
fn Problems() -> impl IntoView {
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

pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
