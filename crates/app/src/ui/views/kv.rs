//! The KV cache panel's views: decoding with the cache against re-running the prefix, as
//! the worker measured it.

use decoding_page::protocol::*;
use leptos::prelude::*;

/// The KV panel's measurement: decoding with the cache against re-running the prefix.
#[derive(Clone, Copy)]
pub struct KvViews {
    pub compare: RwSignal<Option<Vec<CompareRow>>>,
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
        let KvEvent::CacheCompare { rows } = e;
        self.compare.set(Some(rows));
    }

    pub fn clear(&self) {
        self.compare.set(None);
    }

    /// Whether the comparison was asked for and has not arrived.
    pub fn pending(&self) -> bool {
        self.pending.with(|p| p.contains(&"compare"))
    }
}
