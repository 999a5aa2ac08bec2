//! The page's state: one group of signals per part of the page ([`Ui`]), fed by the
//! worker's events (`events.rs`) and by the controls. What a control does is decided by
//! the page's model (`decoding_page::behaviour::controls`, tested natively); here it is carried
//! out: the state it changed is set, the requests it asked for are sent.

use super::views::Views;
use decoding_engine::backend::engine::BackendReport;
use decoding_engine::decode::sampling::knobs::Knob;
use decoding_engine::decode::sampling::{RawSettings, SettingError, Settings, TokenText};
use decoding_engine::tokenizer::PieceText;
use decoding_engine::Precision;
use decoding_page::behaviour::controls::{self, Knobs};
use decoding_page::behaviour::PageModel;
use decoding_page::page::{self, PageState, Panel};
use decoding_page::protocol::*;
use leptos::prelude::*;
use std::time::Duration;
use wasm_bindgen::prelude::*;

/// The model's token text, compared by identity (a memo's value).
#[derive(Clone)]
pub struct VocabText(std::sync::Arc<PieceText>);

impl VocabText {
    fn new(info: &ModelInfo) -> VocabText {
        // SentencePiece vocabularies carry byte tokens `<0x0A>`; their pieces' leading space
        // is the dummy prefix.
        let spm = info.pieces.iter().any(|p| p == "<0x0A>");
        VocabText(std::sync::Arc::new(PieceText::new(&info.pieces, spm)))
    }
}

impl PartialEq for VocabText {
    fn eq(&self, other: &VocabText) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Pause between tokens while running.
const RUN_PACE: Duration = Duration::from_millis(120);

/// Loading progress.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadState {
    Starting,
    Loading { loaded: u64, total: Option<u64> },
    Ready,
}

/// The models the browser keeps, and its storage's usage and quota in bytes.
pub type StoredList = (Vec<StoredModel>, Option<u64>, Option<u64>);

/// The model and the backend running it.
#[derive(Clone, Copy)]
pub struct ModelState {
    pub load: RwSignal<LoadState>,
    pub info: RwSignal<Option<ModelInfo>>,
    pub backend: RwSignal<Option<BackendReport>>,
    /// The engine's threads, and why that many (`threads.rs`).
    pub threads: RwSignal<Option<decoding_page::protocol::ThreadReport>>,
    /// The page has asked the worker to time its threads (`events.rs`, once).
    pub threads_asked: StoredValue<bool>,
    /// The precision the weights run at and their bytes.
    pub precision: RwSignal<Option<(Precision, u64)>>,
    /// A model by link is being fetched (its file's name, as the last progress said).
    pub downloading: RwSignal<Option<String>>,
    /// The models the browser keeps, its storage's usage and quota (`models.rs`).
    pub stored: RwSignal<Option<StoredList>>,
}

/// The transcript, the logits of its next position, the distribution the page draws from
/// them, and whether it is running.
#[derive(Clone, Copy)]
pub struct GenState {
    pub transcript: RwSignal<Option<TranscriptView>>,
    /// The logits the next token is drawn from, as the worker sent them.
    pub next: RwSignal<Option<NextView>>,
    /// The sampling chain run here, in the page's own wasm, on `next` under the settings in
    /// force: a knob's move redraws the chart in the frame of its input, with no round
    /// trip to the worker. An error is what the chain refused.
    pub chain: Memo<Option<Result<TraceView, String>>>,
    /// The chain's trace when it ran (what the distribution, the chain panel and the
    /// captions draw).
    pub trace: Memo<Option<TraceView>>,
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
    /// The system's `prefers-color-scheme: dark`, followed (`theme.rs`).
    pub system_dark: RwSignal<bool>,
    /// The language in force: the link's, else the browser's (`lang.rs`). A memo, so that
    /// what reads it redraws when the language changes, not at every change of the page.
    pub lang: Memo<decoding_page::i18n::Lang>,
    /// The colour scheme in force (`theme.rs`), likewise.
    pub scheme: Memo<decoding_page::theme::Scheme>,
}

/// Sends requests to the worker, marking the measurements it asks for as pending.
#[derive(Clone, Copy)]
pub struct Sender {
    worker: StoredValue<web_sys::Worker, LocalStorage>,
    pending: RwSignal<Vec<&'static str>>,
}

impl Sender {
    pub fn send(&self, req: &Request) {
        if let Some(v) = controls::measures(req) {
            self.pending.update(|p| {
                if !p.contains(&v) {
                    p.push(v)
                }
            });
        }
        self.worker
            .with_value(|w| match decoding_page::protocol::encode(req) {
                Ok(text) => {
                    if let Err(e) = w.post_message(&JsValue::from_str(&text)) {
                        web_sys::console::error_2(&"postMessage failed".into(), &e);
                    }
                }
                Err(e) => web_sys::console::error_1(&e.into()),
            });
    }

    pub fn send_all(&self, reqs: &[Request]) {
        for r in reqs {
            self.send(r);
        }
    }

    /// Posts a message that is not a request (picked files).
    pub fn post(&self, msg: &JsValue) {
        self.worker.with_value(|w| {
            if let Err(e) = w.post_message(msg) {
                web_sys::console::error_2(&"postMessage failed".into(), &e);
            }
        });
    }

    /// Stops the worker (it failed and can answer nothing).
    pub fn terminate(&self) {
        self.worker.with_value(|w| w.terminate());
    }
}

/// The page's state, one group of signals per part of the page, fed by the worker's events
/// and by the controls.
#[derive(Clone, Copy)]
pub struct Ui {
    pub model: ModelState,
    pub gen: GenState,
    pub knobs: KnobState,
    pub views: Views,
    pub shell: ShellState,
    pub sender: Sender,
    /// What the page keeps between the worker's events besides its signals, how it reacts
    /// to them, and what its controls do.
    pub(super) reactions: StoredValue<PageModel, LocalStorage>,
}

impl Ui {
    /// Fresh signals for the view a link restored, talking to `worker`.
    pub(super) fn new(restored: &page::Restored, worker: web_sys::Worker) -> Ui {
        let settings = RwSignal::new(restored.settings.clone());
        let page = RwSignal::new(restored.page.clone());
        let next = RwSignal::new(None::<NextView>);
        let info = RwSignal::new(None::<ModelInfo>);
        // The model's token text for the stages that read it (a stage may read it), made once
        // per model.
        let vocab = Memo::new(move |_| info.with(|i| i.as_ref().map(VocabText::new)));
        let chain = Memo::new(move |_| {
            vocab.with(|v| {
                let v = v.as_ref().map(|v| &*v.0 as &dyn TokenText);
                next.with(|n| n.as_ref().map(|n| settings.with(|s| n.trace(s, v))))
            })
        });
        let trace =
            Memo::new(move |_| chain.with(|c| c.as_ref().and_then(|r| r.as_ref().ok().cloned())));
        let views = Views::new(page, settings);
        let system_dark = RwSignal::new(super::theme::system_dark());
        let browser_lang = super::lang::browser_lang();
        Ui {
            model: ModelState {
                load: RwSignal::new(LoadState::Starting),
                info,
                backend: RwSignal::new(None),
                threads: RwSignal::new(None),
                threads_asked: StoredValue::new(false),
                precision: RwSignal::new(None),
                downloading: RwSignal::new(None),
                stored: RwSignal::new(None),
            },
            gen: GenState {
                transcript: RwSignal::new(None),
                next,
                chain,
                trace,
                running: RwSignal::new(false),
                chat: RwSignal::new(false),
            },
            knobs: KnobState {
                raw: RwSignal::new(restored.raw.clone()),
                settings,
                field_errors: RwSignal::new(Vec::new()),
            },
            views,
            shell: ShellState {
                page,
                help: RwSignal::new(false),
                error: RwSignal::new(None),
                url_problems: RwSignal::new(restored.problems.clone()),
                crashed: RwSignal::new(None),
                system_dark,
                lang: Memo::new(move |_| page.with(|p| p.lang).unwrap_or(browser_lang)),
                scheme: Memo::new(move |_| {
                    page.with(|p| p.theme).unwrap_or(if system_dark.get() {
                        decoding_page::theme::Scheme::Dark
                    } else {
                        decoding_page::theme::Scheme::Light
                    })
                }),
            },
            sender: Sender {
                worker: StoredValue::new_local(worker),
                pending: views.pending,
            },
            reactions: StoredValue::new_local(PageModel::with_hub(super::models::hub_of_page())),
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

    pub fn send(&self, req: &Request) {
        self.sender.send(req)
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
        piece_of(self.model.info, id)
    }

    /// A knob's control took `value` (`controls::set_knob`): its text kept, and when every
    /// knob is valid the new settings in force (the page's chain runs again on them in this
    /// frame) and sent to the worker.
    pub fn set_field(&self, knob: Knob, value: String) {
        self.change_knobs(|m, page, knobs, vocab| m.set_knob(page, knobs, knob, &value, vocab));
    }

    /// The knobs' text as it is now, applied (`controls::apply_knobs`).
    pub fn apply_raw(&self) {
        self.change_knobs(|m, page, knobs, vocab| m.apply_knobs(page, knobs, vocab));
    }

    fn change_knobs(
        &self,
        f: impl FnOnce(&PageModel, &mut PageState, &mut Knobs, usize) -> controls::KnobChange,
    ) {
        let mut knobs = Knobs {
            raw: self.knobs.raw.get_untracked(),
            settings: self.knobs.settings.get_untracked(),
        };
        let mut page = self.shell.page.get_untracked();
        let vocab = self.vocab_size();
        let c = self
            .reactions
            .with_value(|m| f(m, &mut page, &mut knobs, vocab));
        self.knobs.raw.set(knobs.raw);
        match c.errors {
            Some(e) => self.knobs.field_errors.set(e.0),
            None => {
                self.knobs.field_errors.set(Vec::new());
                self.knobs.settings.set(knobs.settings);
                if self.shell.page.with_untracked(|p| *p != page) {
                    self.shell.page.set(page);
                }
                self.sender.send_all(&c.send);
            }
        }
    }

    /// Opens or closes a panel (`controls::toggle_panel`).
    pub fn toggle_panel(&self, panel: Panel) {
        let mut page = self.shell.page.get_untracked();
        let send = self
            .reactions
            .with_value(|m| m.toggle_panel(&mut page, panel));
        if !page.panels.contains(&panel) {
            self.views.closed(panel);
        }
        self.shell.page.set(page);
        self.sender.send_all(&send);
    }

    /// Step: one token (or one beam level in beam mode).
    pub fn step(&self) {
        let req = self
            .reactions
            .with_value(|m| self.knobs.settings.with_untracked(|s| m.step(s)));
        self.send(&req);
    }

    /// One token back; in beam search, the tree one level back.
    pub fn rewind(&self) {
        self.send(&TranscriptRequest::Rewind.into());
    }

    pub fn reset(&self) {
        self.gen.running.set(false);
        let req = self
            .reactions
            .with_value(|m| self.knobs.settings.with_untracked(|s| m.reset(s)));
        self.send(&req);
    }

    /// A control that changes the page's state and asks the worker (a prompt, a backend,
    /// weights): a running generation stops first.
    pub fn control(&self, f: impl FnOnce(&PageModel, &mut PageState, &Settings) -> Vec<Request>) {
        self.gen.running.set(false);
        let mut page = self.shell.page.get_untracked();
        let send = self
            .reactions
            .with_value(|m| self.knobs.settings.with_untracked(|s| f(m, &mut page, s)));
        self.shell.page.set(page);
        self.sender.send_all(&send);
    }

    /// Run / pause: tokens at a steady pace until paused or stopped.
    pub fn toggle_run(&self) {
        let run = !self.gen.running.get_untracked();
        self.gen.running.set(run);
        if run {
            self.step();
        } else {
            self.send(&TranscriptRequest::Cancel.into());
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

/// A token's piece by id, from the model's card (`#id` without one).
pub fn piece_of(info: RwSignal<Option<ModelInfo>>, id: u32) -> String {
    info.with_untracked(|i| {
        i.as_ref()
            .and_then(|i| i.pieces.get(id as usize).cloned())
            .unwrap_or_else(|| format!("#{id}"))
    })
}

/// A token as the charts label it: its piece, whitespace visible, quoted, at most 12
/// characters.
pub fn chip_label(ui: &Ui, id: u32) -> String {
    label_of(ui.model.info, id)
}

/// [`chip_label`] from the model's card alone.
pub fn label_of(info: RwSignal<Option<ModelInfo>>, id: u32) -> String {
    page::piece_text(&piece_of(info, id), true, Some(12))
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
