//! The beam search panel's views: the tree as the worker grows it (patched from its changes)
//! and the search's summary.

use decoding_engine::decode::beam::BeamNode;
use decoding_page::protocol::*;
use leptos::prelude::*;

/// The beam panel's view: the last search as the worker sent it, and its tree, kept here and
/// patched with each view's changed nodes.
#[derive(Clone, Copy)]
pub struct BeamViews {
    pub view: RwSignal<Option<BeamView>>,
    pub nodes: RwSignal<Vec<BeamNode>>,
}

impl BeamViews {
    pub fn new() -> BeamViews {
        BeamViews {
            view: RwSignal::new(None),
            nodes: RwSignal::new(Vec::new()),
        }
    }

    /// A view of the search: its changed nodes patched into the tree (an error if the tree
    /// is not the worker's after it).
    pub fn store(&self, e: BeamEvent) -> Result<(), String> {
        let BeamEvent::Beam { mut view } = e;
        let patched = self
            .nodes
            .try_update(|nodes| decoding_page::behaviour::patch_beam(nodes, &mut view));
        self.view.set(Some(view));
        patched.unwrap_or(Ok(()))
    }

    pub fn clear(&self) {
        self.view.set(None);
    }
}
