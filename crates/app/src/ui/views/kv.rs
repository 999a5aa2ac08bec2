//! The KV cache panel's views: decoding with the cache against re-running the prefix, as
//! the worker measured it.

use decoding_page::protocol::*;
use leptos::prelude::*;

/// The KV panel's measurement: decoding with the cache against re-running the prefix.
#[derive(Clone, Copy)]
pub struct KvViews {
    /// The rows, and the bandwidth they are set against (bytes a second).
    pub compare: RwSignal<Option<(Vec<CompareRow>, Option<f64>)>>,
    pending: RwSignal<Vec<&'static str>>,
}

impl KvViews {
    pub fn new(pending: RwSignal<Vec<&'static str>>) -> KvViews {
        KvViews {
            compare: RwSignal::new(None),
            pending,
        }
    }

    pub fn store(&self, e: KvEvent) {
        let KvEvent::CacheCompare { rows, bandwidth } = e;
        self.compare.set(Some((rows, bandwidth)));
    }

    pub fn clear(&self) {
        self.compare.set(None);
    }

    /// Whether the comparison was asked for and has not arrived.
    pub fn pending(&self) -> bool {
        self.pending.with(|p| p.contains(&"compare"))
    }
}
