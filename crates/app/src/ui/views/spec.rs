//! The speculative panel's views: the run's cycles, as the worker ran them.

use decoding_page::protocol::{SpecEvent, SpecView};
use leptos::prelude::*;

/// The speculative panel's view: the run as the worker sent it.
#[derive(Clone, Copy)]
pub struct SpecViews {
    pub spec: RwSignal<Option<SpecView>>,
}

impl SpecViews {
    pub fn new() -> SpecViews {
        SpecViews {
            spec: RwSignal::new(None),
        }
    }

    pub fn store(&self, e: SpecEvent) {
        let SpecEvent::Spec { view } = e;
        self.spec.set(Some(view));
    }

    pub fn clear(&self) {
        self.spec.set(None);
    }
}
