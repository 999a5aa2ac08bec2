//! The worker's events into the page's signals: what they call for is decided by the page's
//! model (`decoding_page::behaviour::PageModel`, tested natively); here its reaction is carried
//! out, the model's and the transcript's events stored in theirs, each panel's in its own
//! (`Views::store`).

use super::lesson;
use super::state::{LoadState, Ui};
use decoding_page::behaviour::Reaction;
use decoding_page::protocol::*;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::MessageEvent;

/// How long after the first distribution arrives the page asks for its threads to be timed
/// (`time_threads_once`): the page has drawn it by then.
const THREADS_AFTER_MS: u64 = 500;

impl Ui {
    /// Feeds the worker's messages and errors into the signals.
    pub(super) fn listen(self, worker: &web_sys::Worker) {
        let ui = self;
        let on_event = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            match decoding_page::protocol::decode::<Event>(&text) {
                Ok(ev) => ui.on_event(ev),
                Err(err) => ui.shell.error.set(Some(
                    ui.tf("events-unreadable", &[("error", err.to_string())]),
                )),
            }
        });
        worker.set_onmessage(Some(on_event.as_ref().unchecked_ref()));
        on_event.forget();
        // An error that escapes the worker (a panic traps its wasm) leaves it in no state to
        // answer: it is stopped, and the page says so instead of waiting forever.
        let on_error =
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
                e.prevent_default();
                ui.sender.terminate();
                ui.gen.running.set(false);
                // Reload restores the view from the link: it must hold the last change.
                ui.flush_link();
                ui.shell.crashed.set(Some(e.message()));
            });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        // What the page's own chain refuses (the worker refuses the same when it steps).
        let chain = self.gen.chain;
        let error = self.shell.error;
        Effect::new(move |_| {
            // Read in place: the trace itself is vocabulary-sized, only the error is kept.
            if let Some(e) = chain.with(|c| c.as_ref().and_then(|r| r.as_ref().err().cloned())) {
                error.set(Some(e));
            }
        });
    }

    fn on_event(&self, mut e: Event) {
        let r = self
            .reactions
            .try_update_value(|m| {
                self.shell.page.with_untracked(|p| {
                    self.knobs
                        .settings
                        .with_untracked(|s| m.apply(p, s, &mut e))
                })
            })
            .unwrap_or_default();
        match e {
            Event::Model(e) => self.store_model(e),
            Event::Transcript(TranscriptEvent::Transcript { view }) => {
                self.gen.transcript.set(Some(view))
            }
            Event::Transcript(TranscriptEvent::Next { view }) => {
                self.gen.next.set(Some(view));
                self.time_threads_once();
            }
            Event::Class(ClassEvent::ClassTokens { tokens }) => self.on_class_tokens(&tokens),
            e => {
                if let Err(m) = self.views.store(e) {
                    self.shell.error.set(Some(m));
                }
            }
        }
        self.react(r);
    }

    /// Asks the worker to time its threads once the page shows its first distribution and
    /// has drawn it. Timed while the page still starts (its code compiled, its first model
    /// loaded and drawn, on the same cores), two threads read no faster than one: 0.17
    /// against 0.18 ms at start-up, 0.17 against 0.09 ms a second later (BENCHMARKS.md).
    fn time_threads_once(&self) {
        if self.model.threads_asked.get_value() {
            return;
        }
        self.model.threads_asked.set_value(true);
        let sender = self.sender;
        set_timeout(
            move || sender.send(&Request::Model(ModelRequest::SetThreads { threads: None })),
            std::time::Duration::from_millis(THREADS_AFTER_MS),
        );
    }

    /// The guesses' tokens: the round's reveal, against the logits the page holds.
    fn on_class_tokens(&self, tokens: &[Option<u32>]) {
        let class = self.views.class;
        let r = self.gen.next.with_untracked(|n| {
            let n = n.as_ref().ok_or_else(|| self.t("events-no-distribution"))?;
            class
                .mode
                .try_update(|m| m.on_tokens(tokens, &n.logits, n.generated.len()))
                .unwrap_or(Ok(()))
        });
        class.error.set(r.err());
    }

    /// The model's events into their signals.
    fn store_model(&self, e: ModelEvent) {
        match e {
            ModelEvent::Ready => {}
            ModelEvent::Progress {
                loaded,
                total,
                file,
            } => {
                if self.model.downloading.with_untracked(Option::is_some) {
                    self.model.downloading.set(Some(file));
                }
                self.model.load.set(LoadState::Loading { loaded, total })
            }
            ModelEvent::Stored {
                models,
                usage,
                quota,
            } => self.model.stored.set(Some((models, usage, quota))),
            ModelEvent::Loaded { info } => {
                self.model.downloading.set(None);
                // A model that loaded answers the last failure: its message goes.
                self.shell.error.set(None);
                // Chat is off again: the new model may have no template.
                self.gen.chat.set(false);
                self.model.info.set(Some(info));
                self.model.load.set(LoadState::Ready);
            }
            ModelEvent::Backend { report } => self.model.backend.set(Some(report)),
            ModelEvent::Threads { report } => self.model.threads.set(Some(report)),
            ModelEvent::Precision {
                precision,
                weight_bytes,
            } => self.model.precision.set(Some((precision, weight_bytes))),
            ModelEvent::Error { message } => {
                self.model.downloading.set(None);
                self.gen.running.set(false);
                self.views.pending.set(Vec::new());
                // A failed load leaves the model it had: the bar goes.
                if self.model.info.with_untracked(Option::is_some) {
                    self.model.load.set(LoadState::Ready);
                }
                self.shell.error.set(Some(message));
            }
        }
    }

    /// Carries out what the page's model said an event calls for.
    fn react(&self, r: Reaction) {
        self.sender.send_all(&r.send);
        if let Some(step) = r
            .lesson_in_view
            .and_then(|i| decoding_page::lesson::STEPS.get(i))
        {
            lesson::bring_into_view(step.shows, true, 120);
        }
        if let Some(m) = r.error {
            self.shell.error.set(Some(m));
        }
        if let Some(n) = r.steps {
            self.shell.page.update(|p| p.steps = n);
        }
        if let Some(n) = r.compare_steps {
            self.shell.page.update(|p| {
                if let Some(c) = p.compare.as_mut() {
                    c.steps = n;
                }
            });
        }
        if let Some(link) = r.model_link {
            self.shell.page.update(|p| p.model = link);
        }
        if let Some(done) = r.ran {
            self.continue_run(done);
        }
    }
}
