//! The compared columns' views: each column's text and next distribution, as the worker ran
//! them.

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
