//! The page's state: one group of signals per part of the page ([`Ui`]), fed by the
//! worker's events (`events.rs`) and by the controls, and what the controls do with it.

use decoding_engine::backend::engine::BackendReport;
use decoding_engine::decode::sampling::knobs::{Control, Knob};
use decoding_engine::decode::sampling::{RawSettings, SettingError, Settings, Strategy};
use decoding_engine::Precision;
use decoding_page::page::{self, PageModel, PageState, Panel};
use decoding_page::protocol::*;
use leptos::prelude::*;
use std::time::Duration;
use wasm_bindgen::prelude::*;

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
    /// The prompt goes through the model's chat template (a model whose file has one).
    pub chat: RwSignal<bool>,
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
    pub beam_nodes: RwSignal<Vec<decoding_engine::decode::beam::BeamNode>>,
    /// The last cached-against-naive measurement.
    pub compare: RwSignal<Option<Vec<CompareRow>>>,
    /// f32, f16, q8 and q4 at the current position (while the quantization panel is open).
    pub quant: RwSignal<Option<QuantView>>,
    /// Inside the newest step (while that view is open).
    pub probe: RwSignal<Option<ProbeView>>,
    /// The speculative run.
    pub spec: RwSignal<Option<SpecView>>,
    /// The batching panel: its lanes, the throughput sweep, the serving simulation.
    pub lanes: RwSignal<Option<LanesView>>,
    pub sweep: RwSignal<Option<SweepView>>,
    /// Where a decoded token's time goes on the GPU.
    pub gpu_split: RwSignal<Option<GpuSplitView>>,
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
    /// What the page keeps between the worker's events besides its signals (whether the
    /// link's views were asked for, a loaded transcript's tokens), and how it reacts to them.
    pub(super) reactions: StoredValue<PageModel, LocalStorage>,
    pub(super) link: StoredValue<web_sys::Worker, LocalStorage>,
}
impl Ui {
    /// Fresh signals for the view a link restored, talking to `worker`.
    pub(super) fn new(restored: &page::Restored, worker: web_sys::Worker) -> Ui {
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
                chat: RwSignal::new(false),
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
                gpu_split: RwSignal::new(None),
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
            reactions: StoredValue::new_local(PageModel::default()),
            link: StoredValue::new_local(worker.clone()),
        }
    }
    /// Whether a panel is open, as a memo: views built under it are rebuilt when it opens or
    /// closes, not whenever any part of the page state changes (every step changes the
    /// link's step count). Rebuilding a panel at each token left stale subscriptions in the
    /// long-lived signals its views read: the page's memory grew with every run
    /// (tests/e2e/soak.test.mjs).
    pub fn panel_open(&self, panel: Panel) -> Memo<bool> {
        let page = self.shell.page;
        Memo::new(move |_| page.with(|p| p.panels.contains(&panel)))
    }

    /// Whether a measurement (`"compare"`, `"sweep"`) was asked for and has not arrived.
    pub fn pending(&self, view: &'static str) -> bool {
        self.views.pending.with(|p| p.contains(&view))
    }

    pub(super) fn arrived(&self, view: &'static str) {
        if self.views.pending.with_untracked(|p| p.contains(&view)) {
            self.views.pending.update(|p| p.retain(|v| *v != view));
        }
    }

    pub fn send(&self, req: &Request) {
        let measures = match req {
            Request::CacheCompare { .. } => Some("compare"),
            Request::BatchSweep { .. } => Some("sweep"),
            Request::GpuSplit => Some("gpu-split"),
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
            .with_value(|w| match decoding_page::protocol::encode(req) {
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
    pub fn set_field(&self, knob: Knob, value: String) {
        self.knobs.raw.update(|r| match knob.spec().control {
            Control::List { sep } => r.put_all(knob, split_entries(&value, sep)),
            _ => r.put(knob, &value),
        });
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
                        p.panels.insert(Panel::Beam);
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
        if page.panels.contains(&Panel::Toy) {
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

    /// Opens or closes a panel; the worker computes what an open panel shows (quantization,
    /// the probe) only while it is open, and the toy panel opens on the lesson's logits.
    pub fn toggle_panel(&self, panel: Panel) {
        self.shell.page.update(|p| {
            if !p.panels.remove(&panel) {
                p.panels.insert(panel);
            }
        });
        match panel {
            Panel::Quant => {
                let open = self
                    .shell
                    .page
                    .with_untracked(|p| p.panels.contains(&panel));
                if !open {
                    self.views.quant.set(None);
                }
                self.send(&Request::Quantization { open });
            }
            Panel::Inside | Panel::Kv => {
                let open = self.shell.page.with_untracked(page::probe_open);
                if !open {
                    self.views.probe.set(None);
                }
                self.send(&Request::Probe { open });
            }
            Panel::Toy => {
                self.shell.page.update(|p| {
                    if p.toy.is_none() {
                        p.toy = Some(page::DEFAULT_TOY.to_string());
                    }
                });
                self.send_toy();
            }
            _ => {}
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
    pub(super) fn continue_run(&self, done: bool) {
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
}

/// A token as the charts label it: its piece, whitespace visible, quoted, at most 12
/// characters.
pub fn chip_label(ui: &Ui, id: u32) -> String {
    page::piece_text(&ui.piece(id), true, Some(12))
}

/// How long the view must stay still before the address bar is written.
pub(super) const LINK_QUIET: Duration = Duration::from_millis(120);

/// Marks the page's <html> while a change of the view is not in the address bar yet (the
/// tests read the link once it is written).
pub(super) fn link_pending(pending: bool) {
    if let Some(root) = window().document().and_then(|d| d.document_element()) {
        let _ = if pending {
            root.set_attribute("data-link-pending", "")
        } else {
            root.remove_attribute("data-link-pending")
        };
    }
}

/// Writes the view into the address bar (replaceState: no history spam).
pub(super) fn write_url(query: &str) {
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
