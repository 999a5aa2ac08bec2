//! The worker's events into the page's signals: what they call for is decided by the page's
//! model (`decoding_page::page::PageModel`, tested natively); here its reaction is carried
//! out and each view stored in its signal.

use super::{lesson, Ui};
use decoding_page::page::{self, Reaction};
use decoding_page::protocol::*;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::MessageEvent;

impl Ui {
    /// Feeds the worker's messages and errors into the signals.
    pub(super) fn listen(self, worker: &web_sys::Worker) {
        let ui = self;
        let on_event = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            match decoding_page::protocol::decode::<Event>(&text) {
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
        self.store(e);
        self.react(r);
    }

    /// An event's view into its signal.
    fn store(&self, e: Event) {
        match e {
            Event::Ready => {}
            Event::Progress { loaded, total, .. } => self
                .model
                .load
                .set(super::LoadState::Loading { loaded, total }),
            Event::Loaded { info } => {
                // A model that loaded answers the last failure: its message goes.
                self.shell.error.set(None);
                // Chat is off again: the new model may have no template.
                self.gen.chat.set(false);
                self.model.info.set(Some(info));
                self.model.load.set(super::LoadState::Ready);
            }
            Event::Backend { report } => self.model.backend.set(Some(report)),
            Event::Transcript { view } => self.gen.transcript.set(Some(view)),
            Event::Trace { view, toy: true } => self.views.toy_trace.set(Some(view)),
            Event::Trace { view, toy: false } => self.gen.trace.set(Some(view)),
            Event::Beam { mut view } => {
                let patched = self
                    .views
                    .beam_nodes
                    .try_update(|nodes| page::patch_beam(nodes, &mut view));
                if let Some(Err(m)) = patched {
                    self.shell.error.set(Some(m));
                }
                self.views.beam.set(Some(view));
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
            Event::GpuSplit { view } => {
                self.arrived("gpu-split");
                self.views.gpu_split.set(Some(view))
            }
            Event::Columns { view } => self.views.columns.set(Some(view)),
            Event::Error { message } => {
                self.gen.running.set(false);
                self.views.pending.set(Vec::new());
                self.shell.error.set(Some(message));
            }
        }
    }

    /// Carries out what the page's model said an event calls for.
    fn react(&self, r: Reaction) {
        if r.send_toy {
            self.send_toy();
        }
        for req in &r.send {
            self.send(req);
        }
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
        if let Some(done) = r.ran {
            self.continue_run(done);
        }
    }
}
