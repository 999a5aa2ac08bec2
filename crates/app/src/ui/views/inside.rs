//! The view inside the step: the newest token's attention and the logit lens, as the
//! worker's probed pass recorded them.

use decoding_page::protocol::{ProbeEvent, ProbeView};
use leptos::prelude::*;

/// Inside the newest step, as the worker probed it (while the view is open).
#[derive(Clone, Copy)]
pub struct InsideViews {
    pub probe: RwSignal<Option<ProbeView>>,
}

impl InsideViews {
    pub fn new() -> InsideViews {
        InsideViews {
            probe: RwSignal::new(None),
        }
    }

    pub fn store(&self, e: ProbeEvent) {
        let ProbeEvent::Probe { view } = e;
        self.probe.set(Some(view));
    }

    pub fn clear(&self) {
        self.probe.set(None);
    }
}
