//! The compared columns's views: what it draws, as the worker (or the page's chain) gave it.

use decoding_page::protocol::*;
use leptos::prelude::*;

/// The compared columns as the worker sent them.
#[derive(Clone, Copy)]
pub struct CompareViews {
    pub columns: RwSignal<Option<ColumnsView>>,
}

impl CompareViews {
    pub fn new() -> CompareViews {
        CompareViews {
            columns: RwSignal::new(None),
        }
    }

    pub fn store(&self, e: ColumnsEvent) {
        let ColumnsEvent::Columns { view } = e;
        self.columns.set(Some(view));
    }

    pub fn clear(&self) {
        self.columns.set(None);
    }
}
