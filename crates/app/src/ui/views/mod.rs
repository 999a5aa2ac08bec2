//! What each panel draws, one file a panel (its signals, how its events are stored, what
//! clearing it means), gathered in [`Views`]: a new panel adds its file and one line to each
//! of `Views`' fields, `new`, `store` and `clear`. The views sit under the page's state and
//! every component, so a panel's component and the lesson's captions read them without
//! importing each other.

pub mod batch;
pub mod beam;
pub mod class;
pub mod compare;
pub mod inside;
pub mod kv;
pub mod numbers;
pub mod quant;
pub mod spec;
pub mod toy;

use decoding_engine::decode::sampling::Settings;
use decoding_page::behaviour::controls;
use decoding_page::page::{PageState, Panel};
use decoding_page::protocol::*;
use leptos::prelude::*;

/// What each panel draws, one group of signals a panel (each in its own file here), and
/// the measurements asked for and not answered yet.
#[derive(Clone, Copy)]
pub struct Views {
    pub beam: beam::BeamViews,
    pub class: class::ClassViews,
    pub kv: kv::KvViews,
    pub inside: inside::InsideViews,
    pub quant: quant::QuantViews,
    pub spec: spec::SpecViews,
    pub batch: batch::BatchViews,
    pub compare: compare::CompareViews,
    pub toy: toy::ToyViews,
    /// Measurements asked for and not answered yet ("compare", "sweep"): their panels and
    /// the caption say so while they run.
    pub pending: RwSignal<Vec<&'static str>>,
}

impl Views {
    pub(super) fn new(page: RwSignal<PageState>, settings: RwSignal<Settings>) -> Views {
        let pending = RwSignal::new(Vec::new());
        Views {
            beam: beam::BeamViews::new(),
            class: class::ClassViews::new(),
            kv: kv::KvViews::new(pending),
            inside: inside::InsideViews::new(),
            quant: quant::QuantViews::new(),
            spec: spec::SpecViews::new(),
            batch: batch::BatchViews::new(pending),
            compare: compare::CompareViews::new(),
            toy: toy::ToyViews::new(page, settings),
            pending,
        }
    }

    /// A panel's event into its panel's signals (one line a panel); an error if the view
    /// cannot be shown.
    pub(super) fn store(&self, e: Event) -> Result<(), String> {
        if let Some(v) = controls::answers(&e) {
            if self.pending.with_untracked(|p| p.contains(&v)) {
                self.pending.update(|p| p.retain(|x| *x != v));
            }
        }
        match e {
            Event::Beam(e) => return self.beam.store(e),
            Event::Kv(e) => self.kv.store(e),
            Event::Inside(e) => self.inside.store(e),
            Event::Quant(e) => self.quant.store(e),
            Event::Spec(e) => self.spec.store(e),
            Event::Batch(e) => self.batch.store(e),
            Event::Compare(e) => self.compare.store(e),
            // (The class round's tokens are read with the logits: `Ui::on_event`.)
            Event::Model(_) | Event::Transcript(_) | Event::Class(_) => {}
        }
        Ok(())
    }

    /// Every panel's view cleared (another view of the page opens: nothing shows the last
    /// one's numbers).
    pub fn clear(&self) {
        self.beam.clear();
        self.class.clear();
        self.kv.clear();
        self.inside.clear();
        self.quant.clear();
        self.spec.clear();
        self.batch.clear();
        self.compare.clear();
        self.toy.clear();
        self.pending.set(Vec::new());
    }

    /// A panel closed: what the worker stops computing for it goes.
    pub(super) fn closed(&self, panel: Panel) {
        match panel {
            Panel::Quant => self.quant.clear(),
            Panel::Inside | Panel::Kv => self.inside.clear(),
            _ => {}
        }
    }
}
