//! The quantization panel's views: the four precisions side by side, as the worker ran them.

use decoding_page::protocol::{QuantEvent, QuantView};
use leptos::prelude::*;

/// The quantization panel's view: f32, f16, q8 and q4 at the current position (while the
/// panel is open).
#[derive(Clone, Copy)]
pub struct QuantViews {
    pub quant: RwSignal<Option<QuantView>>,
}

impl QuantViews {
    pub fn new() -> QuantViews {
        QuantViews {
            quant: RwSignal::new(None),
        }
    }

    pub fn store(&self, e: QuantEvent) {
        let QuantEvent::Quant { view } = e;
        self.quant.set(Some(view));
    }

    pub fn clear(&self) {
        self.quant.set(None);
    }
}
