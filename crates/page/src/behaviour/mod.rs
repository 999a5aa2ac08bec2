//! The page's reactions to the worker's events, in plain Rust and tested natively: which
//! requests an event calls for (the page's model and link view when the worker is ready, the
//! views that live beside the transcript once the first backend opened, a speculative run or
//! comparison grown again on a new backend), what it changes in the link's state (the steps
//! taken, the columns' steps), the beam tree patched from its changes, a loaded transcript's
//! tokens checked against its replay, and whether a run goes on. The UI (`decoding-app`)
//! stores the views in its signals and does what the reaction says.
//!
//! `controls` holds the rest of the page's behaviour: what a knob, a panel's toggle, a
//! step, a prompt, the backend, the weights and the lesson's keys do to the link's state.
//! Both sit above the lesson track, whose steps they apply.

pub mod controls;

use crate::page::{probe_open, spec_and_compare_requests, PageState, Panel};
use crate::protocol::*;
use decoding_engine::decode::beam::BeamNode;
use decoding_engine::decode::sampling::Settings;

/// The page's own model files.
pub const MODEL_URL: &str = "models/stories260K/stories260K.bin";
pub const TOKENIZER_URL: &str = "models/stories260K/tok512.bin";

/// What the page keeps between events besides its signals.
#[derive(Debug, Default)]
pub struct PageModel {
    /// The page's own model was asked for and has not loaded yet: once it has, the link's
    /// view is opened on it.
    opening: bool,
    /// The first backend has opened (the link's views were asked for).
    restored: bool,
    /// The tokens a loaded transcript file holds, checked against its replay.
    pub expect_tokens: Option<Vec<u32>>,
    /// The hub that models by link resolve against (`remote::HUB`, or the page's
    /// `<meta name="decoding-hub">`); empty for `remote::HUB`.
    pub hub: String,
}

/// What an event calls for.
#[derive(Debug, Default, PartialEq)]
pub struct Reaction {
    /// Requests to send, in order.
    pub send: Vec<Request>,
    /// A message to show.
    pub error: Option<String>,
    /// The link's steps (a transcript's tokens) or the comparison's steps, as they are now.
    pub steps: Option<u32>,
    pub compare_steps: Option<u32>,
    /// A run (Run/Pause) has this step done: `Some(true)` when generation stopped there.
    pub ran: Option<bool>,
    /// The lesson step whose view the page should bring into view.
    pub lesson_in_view: Option<usize>,
    /// A model loaded: the link it carries now (`model=`; None for the page's own model or
    /// files dropped).
    pub model_link: Option<Option<String>>,
}

impl PageModel {
    /// A page whose models by link resolve against `hub` (empty: `remote::HUB`).
    pub fn with_hub(hub: String) -> PageModel {
        PageModel {
            hub,
            ..PageModel::default()
        }
    }

    /// The hub models by link resolve against.
    pub fn hub(&self) -> &str {
        if self.hub.is_empty() {
            crate::remote::HUB
        } else {
            &self.hub
        }
    }

    /// The reaction to `event`, the page showing `page` with `settings` (a beam view's tree
    /// is patched with `patch_beam`).
    pub fn apply(&mut self, page: &PageState, settings: &Settings, event: &mut Event) -> Reaction {
        let mut r = Reaction::default();
        let beam = settings.is_beam();
        if let Event::Model(ModelEvent::Loaded { info }) = event {
            r.model_link = Some(info.link.clone());
        }
        match event {
            // The page's own model, then (once it has loaded) the link's view on it: the
            // weights' precision, the prompt, settings and tokens.
            // A link's model by link instead, with the page's own as its fallback.
            Event::Model(ModelEvent::Ready) => {
                self.opening = true;
                let own = vec![MODEL_URL.into(), TOKENIZER_URL.into()];
                r.send.push(Request::Model(match &page.model {
                    Some(link) => ModelRequest::LoadRemote {
                        link: link.clone(),
                        hub: self.hub().to_string(),
                        backend: page.backend,
                        fallback: own,
                    },
                    None => ModelRequest::LoadUrl {
                        urls: own,
                        backend: page.backend,
                    },
                }));
            }
            Event::Model(ModelEvent::Loaded { .. }) if std::mem::take(&mut self.opening) => {
                if let Some(precision) = page.precision {
                    r.send
                        .push(Request::Model(ModelRequest::SetPrecision { precision }));
                }
                r.send.push(Request::Transcript(TranscriptRequest::Restore {
                    prompt: page.prompt.clone(),
                    settings: settings.clone(),
                    steps: page.steps,
                }));
            }
            Event::Model(ModelEvent::Backend { .. }) => self.backend(page, &mut r),
            Event::Transcript(TranscriptEvent::Transcript { view }) => {
                let got: Vec<u32> = view.steps.iter().map(|s| s.token).collect();
                r.error = self.check_replay(&got, view.stop.is_some());
                r.steps = Some(got.len() as u32);
                if !beam {
                    r.ran = Some(view.stop.is_some());
                }
            }
            Event::Beam(BeamEvent::Beam { view }) if beam => r.ran = Some(view.done),
            Event::Compare(ColumnsEvent::Columns { view }) => {
                r.compare_steps = Some(
                    view.columns
                        .iter()
                        .map(|c| c.steps.len())
                        .max()
                        .unwrap_or(0) as u32,
                )
            }
            _ => {}
        }
        r
    }

    /// The first backend: the views that live beside the transcript (a beam link's tree is
    /// grown by the worker as part of the restore). Any backend: a link's speculative run,
    /// or one whose backend or weights changed, grown (again) on it; the same for the
    /// compared columns.
    fn backend(&mut self, page: &PageState, r: &mut Reaction) {
        if !self.restored {
            self.restored = true;
            if page.panels.contains(&Panel::Quant) {
                r.send
                    .push(Request::Quant(QuantRequest::Quantization { open: true }));
            }
            if probe_open(page) {
                r.send
                    .push(Request::Inside(ProbeRequest::Probe { open: true }));
            }
            // A lesson step's link runs its panel action too.
            if let Some(step) = page.lesson.and_then(|i| crate::lesson::STEPS.get(i)) {
                r.send.extend(step.action_request());
                r.lesson_in_view = page.lesson;
            }
        }
        r.send.extend(spec_and_compare_requests(page));
    }

    /// A loaded transcript's replay, once it has the file's tokens (or stopped): an error if
    /// they differ.
    fn check_replay(&mut self, got: &[u32], stopped: bool) -> Option<String> {
        let want = self.expect_tokens.as_ref()?;
        if got.len() < want.len() && !stopped {
            return None;
        }
        let want = self.expect_tokens.take()?;
        (got != want.as_slice()).then(|| {
            format!(
                "the transcript file's {} tokens differ from this model's replay of its prompt and knobs (another model or file?): shown is the replay",
                want.len()
            )
        })
    }
}

/// The beam tree the page holds (`nodes`), patched with a view's changed nodes (taken out of
/// the view: the tree travels as its changes, never whole); an error if the result is not
/// the tree the worker has (a view lost or out of order).
pub fn patch_beam(
    nodes: &mut Vec<BeamNode>,
    view: &mut crate::protocol::BeamView,
) -> Result<(), String> {
    let changed = std::mem::take(&mut view.changed);
    if view.reset {
        nodes.clear();
    }
    for n in changed {
        let id = n.id;
        if id < nodes.len() {
            nodes[id] = n;
        } else if id == nodes.len() {
            nodes.push(n);
        }
    }
    if nodes.len() == view.node_count {
        Ok(())
    } else {
        Err("the beam tree arrived out of order: press Restart in the beam panel".into())
    }
}
