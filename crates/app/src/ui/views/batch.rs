//! The batching panel's views: the lanes, the throughput sweep with the roofline, the serving
//! timelines and the GPU split, as the worker measured them.

use decoding_page::protocol::*;
use leptos::prelude::*;

/// The batching panel's views: its lanes, the throughput sweep, the serving simulation,
/// where a GPU token's time goes; and which measurements are still running.
#[derive(Clone, Copy)]
pub struct BatchViews {
    pub lanes: RwSignal<Option<LanesView>>,
    pub sweep: RwSignal<Option<SweepView>>,
    pub serve: RwSignal<Option<ServeView>>,
    pub gpu_split: RwSignal<Option<GpuSplitView>>,
    pending: RwSignal<Vec<&'static str>>,
}

impl BatchViews {
    pub fn new(pending: RwSignal<Vec<&'static str>>) -> BatchViews {
        BatchViews {
            lanes: RwSignal::new(None),
            sweep: RwSignal::new(None),
            serve: RwSignal::new(None),
            gpu_split: RwSignal::new(None),
            pending,
        }
    }

    pub fn store(&self, e: BatchEvent) {
        match e {
            BatchEvent::Lanes { view } => self.lanes.set(Some(view)),
            BatchEvent::Sweep { view } => self.sweep.set(Some(view)),
            BatchEvent::Serve { view } => self.serve.set(Some(view)),
            BatchEvent::GpuSplit { view } => self.gpu_split.set(Some(view)),
        }
    }

    pub fn clear(&self) {
        self.lanes.set(None);
        self.sweep.set(None);
        self.serve.set(None);
        self.gpu_split.set(None);
    }

    /// Whether a measurement ("sweep", "gpu-split") was asked for and has not arrived.
    pub fn pending(&self, view: &'static str) -> bool {
        self.pending.with(|p| p.contains(&view))
    }
}
