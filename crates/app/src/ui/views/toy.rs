//! The toy-logits panel's views: the history text, and the chain run here, in the page,
//! on the typed logits.

use decoding_engine::decode::sampling::Settings;
use decoding_page::page::{PageState, Panel};
use decoding_page::protocol::TraceView;
use leptos::prelude::*;

/// The toy panel's state: the history text, and the chain run here on the toy logits under
/// the settings in force (while the panel is open), or what is wrong with the text.
#[derive(Clone, Copy)]
pub struct ToyViews {
    /// The toy history: rows "already generated", which the penalties see.
    pub history: RwSignal<String>,
    pub result: Memo<Option<Result<TraceView, String>>>,
    /// The result's trace, when the text was right.
    pub trace: Memo<Option<TraceView>>,
}

impl ToyViews {
    pub fn new(page: RwSignal<PageState>, settings: RwSignal<Settings>) -> ToyViews {
        let history = RwSignal::new(String::new());
        let result = Memo::new(move |_| {
            page.with(|p| {
                p.panels.contains(&Panel::Toy).then(|| {
                    history.with(|h| {
                        settings.with(|s| decoding_page::behaviour::controls::toy_view(p, h, s))
                    })
                })
            })
        });
        let trace =
            Memo::new(move |_| result.with(|r| r.as_ref().and_then(|r| r.as_ref().ok().cloned())));
        ToyViews {
            history,
            result,
            trace,
        }
    }

    /// What is wrong with the toy text, if anything.
    pub fn error(&self) -> Option<String> {
        self.result
            .with(|r| r.as_ref().and_then(|r| r.as_ref().err().cloned()))
    }

    pub fn clear(&self) {
        self.history.set(String::new());
    }
}
