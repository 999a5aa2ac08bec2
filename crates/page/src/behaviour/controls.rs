//! What the page's controls do, in plain Rust and tested natively: each control changes the
//! page's state (the link's view, the knobs) and says which requests go to the worker. The
//! Leptos components call these and carry out the result; they decide nothing themselves.

use super::PageModel;
use crate::page::chain::toy_trace;
use crate::page::{from_query, probe_open, view_requests, PageState, Panel, Restored};
use crate::page::{toy::parse_toy_history, DEFAULT_TOY};
use crate::page::{SpecLink, MAX_SPEC_CYCLES};
use crate::protocol::*;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::decode::sampling::knobs::{Control, Knob};
use decoding_engine::decode::sampling::{RawSettings, Settings, SettingsErrors};
use decoding_engine::decode::speculative::{Draft, Rule};
use decoding_engine::Precision;

/// The knobs as the page holds them: the text typed, and the settings last valid.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    pub raw: RawSettings,
    pub settings: Settings,
}

/// What a knob's new text did.
#[derive(Debug, Default, PartialEq)]
pub struct KnobChange {
    /// The rules the text breaks (the settings in force are then unchanged).
    pub errors: Option<SettingsErrors>,
    pub send: Vec<Request>,
}

impl PageModel {
    /// A knob's control took `text`: the raw text is kept whatever it is; when every knob
    /// is valid the settings change and go to the worker, and choosing beam search opens
    /// its panel and starts a search.
    pub fn set_knob(
        &self,
        page: &mut PageState,
        knobs: &mut Knobs,
        knob: Knob,
        text: &str,
        vocab_size: usize,
    ) -> KnobChange {
        match knob.spec().control {
            Control::List { sep } => knobs.raw.put_all(knob, split_entries(text, sep)),
            _ => knobs.raw.put(knob, text),
        }
        self.apply_knobs(page, knobs, vocab_size)
    }

    /// The knobs' text validated: valid settings replace the ones in force and go to the
    /// worker; otherwise the errors say which rules the text breaks.
    pub fn apply_knobs(
        &self,
        page: &mut PageState,
        knobs: &mut Knobs,
        vocab_size: usize,
    ) -> KnobChange {
        let s = match knobs.raw.validate(vocab_size) {
            Ok(s) => s,
            Err(e) => {
                return KnobChange {
                    errors: Some(e),
                    ..KnobChange::default()
                }
            }
        };
        let to_beam = s.is_beam() && !knobs.settings.is_beam();
        let mut send = vec![TranscriptRequest::SetSettings {
            settings: s.clone(),
        }
        .into()];
        if to_beam {
            // Choosing beam search shows it.
            page.panels.insert(Panel::Beam);
            send.push(BeamRequest::BeamStart.into());
        }
        knobs.settings = s;
        KnobChange { errors: None, send }
    }

    /// Opens or closes a panel: the worker computes what an open quantization panel or
    /// view inside the step shows only while it is open; the toy panel opens on the
    /// lesson's logits.
    pub fn toggle_panel(&self, page: &mut PageState, panel: Panel) -> Vec<Request> {
        if !page.panels.remove(&panel) {
            page.panels.insert(panel);
        }
        match panel {
            Panel::Quant => vec![QuantRequest::Quantization {
                open: page.panels.contains(&panel),
            }
            .into()],
            Panel::Inside | Panel::Kv => vec![ProbeRequest::Probe {
                open: probe_open(page),
            }
            .into()],
            Panel::Toy => {
                if page.toy.is_none() {
                    page.toy = Some(DEFAULT_TOY.to_string());
                }
                vec![]
            }
            _ => vec![],
        }
    }

    /// Step: one token, or one level of the beam tree in beam mode.
    pub fn step(&self, settings: &Settings) -> Request {
        match settings.is_beam() {
            true => BeamRequest::BeamStep.into(),
            false => TranscriptRequest::Step { count: 1 }.into(),
        }
    }

    /// Reset: the transcript back to its prompt, or a new beam search.
    pub fn reset(&self, settings: &Settings) -> Request {
        match settings.is_beam() {
            true => BeamRequest::BeamStart.into(),
            false => TranscriptRequest::Reset.into(),
        }
    }

    /// A new prompt (through the model's chat template with `chat`): the link's steps go
    /// back to 0, and in beam mode a new search starts from it.
    pub fn set_prompt(
        &self,
        page: &mut PageState,
        prompt: String,
        chat: bool,
        settings: &Settings,
    ) -> Vec<Request> {
        page.prompt = prompt.clone();
        page.steps = 0;
        let mut send = vec![TranscriptRequest::SetPrompt { prompt, chat }.into()];
        if settings.is_beam() {
            send.push(BeamRequest::BeamStart.into());
        }
        send
    }

    /// Another backend: the transcript moves there (the worker rebuilds it); a beam tree's
    /// caches lived on the old one, so it grows again to the depth it had.
    pub fn set_backend(
        &self,
        page: &mut PageState,
        choice: BackendChoice,
        settings: &Settings,
    ) -> Vec<Request> {
        page.backend = choice;
        let mut send = vec![ModelRequest::SetBackend { backend: choice }.into()];
        send.extend(regrow_beam(page, settings));
        send
    }

    /// Other weights: the transcript keeps its tokens under them; a beam tree grows again.
    pub fn set_precision(
        &self,
        page: &mut PageState,
        precision: Precision,
        settings: &Settings,
    ) -> Vec<Request> {
        page.precision = Some(precision);
        let mut send = vec![ModelRequest::SetPrecision { precision }.into()];
        send.extend(regrow_beam(page, settings));
        send
    }

    /// The view of a link (`query`, the lesson track's step or a transcript file's)
    /// replacing the page's, in place: the backend, the precision, presenter mode and the
    /// colour scheme stay;
    /// a running step is cancelled, then the worker is asked for the view.
    pub fn open_view(
        &self,
        current: &PageState,
        query: &str,
        lesson: Option<usize>,
        vocab_size: usize,
    ) -> (Restored, Vec<Request>) {
        let mut r = from_query(query, vocab_size);
        r.page.backend = current.backend;
        r.page.precision = current.precision;
        r.page.presenter = current.presenter;
        r.page.theme = current.theme;
        r.page.lang = current.lang;
        // The model loaded stays (a step's view runs on it).
        r.page.model = current.model.clone();
        // The classroom's room is the presenter's, whatever view opens.
        r.page.room = current.room.clone();
        r.page.lesson = lesson;
        let mut send = vec![TranscriptRequest::Cancel.into()];
        send.extend(view_requests(&r.page, &r.settings));
        if let Some(step) = lesson.and_then(|i| crate::lesson::STEPS.get(i)) {
            send.extend(step.action_request());
        }
        (r, send)
    }
}

impl PageModel {
    /// A new speculative run with this draft, γ and rule, kept in the link.
    pub fn spec_start(
        &self,
        page: &mut PageState,
        draft: Draft,
        gamma: u32,
        rule: Rule,
    ) -> Vec<Request> {
        page.spec = Some(SpecLink {
            draft,
            gamma,
            rule,
            cycles: 0,
        });
        vec![SpecRequest::SpecStart { draft, gamma, rule }.into()]
    }

    /// `n` more cycles of the run (started first with `draft`, γ and rule if there is
    /// none). The link counts them up to the most it can hold ([`MAX_SPEC_CYCLES`]): past
    /// that, no more cycles run (a link that could not reopen would be no link).
    pub fn spec_cycle(
        &self,
        page: &mut PageState,
        n: u32,
        (draft, gamma, rule): (Draft, u32, Rule),
    ) -> Vec<Request> {
        let mut send = match page.spec {
            None => self.spec_start(page, draft, gamma, rule),
            Some(_) => vec![],
        };
        if let Some(s) = page.spec.as_mut() {
            let n = n.min(MAX_SPEC_CYCLES - s.cycles);
            if n > 0 {
                s.cycles += n;
                send.push(SpecRequest::SpecCycle { count: n }.into());
            }
        }
        send
    }
}

impl PageModel {
    /// "Same θ, different config" started from the columns' texts (each a query string of
    /// knobs): each column's errors, and when there are none the comparison in the link and
    /// its start sent.
    pub fn compare_start(
        &self,
        page: &mut PageState,
        texts: &[String],
        vocab_size: usize,
    ) -> (Vec<Option<String>>, Vec<Request>) {
        let parsed: Vec<_> = texts
            .iter()
            .map(|t| crate::page::parse_column(t, vocab_size))
            .collect();
        let errors: Vec<Option<String>> = parsed
            .iter()
            .map(|r| {
                r.as_ref().err().map(|e| {
                    e.iter()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                })
            })
            .collect();
        if errors.iter().any(Option::is_some) {
            return (errors, vec![]);
        }
        let columns: Vec<Settings> = parsed.into_iter().filter_map(Result::ok).collect();
        page.compare = Some(crate::page::CompareLink {
            columns: columns.clone(),
            steps: 0,
        });
        (
            errors,
            vec![ColumnsRequest::ColumnsStart { columns }.into()],
        )
    }
}

fn regrow_beam(page: &PageState, settings: &Settings) -> Option<Request> {
    settings
        .is_beam()
        .then(|| BeamRequest::BeamTo { depth: page.steps }.into())
}

/// The lesson step `by` steps from `at` (the first when the track is closed), within the
/// track; None when that is where it is.
pub fn lesson_move(at: Option<usize>, by: isize) -> Option<usize> {
    let last = crate::lesson::STEPS.len() as isize - 1;
    let next = match at {
        None => 0,
        Some(i) => (i as isize + by).clamp(0, last) as usize,
    };
    (at != Some(next)).then_some(next)
}

/// The toy panel's distribution: its logits and history text (the rows "already
/// generated") under the settings in force, or what is wrong with the text.
pub fn toy_view(page: &PageState, history: &str, settings: &Settings) -> Result<TraceView, String> {
    let text = page.toy.as_deref().unwrap_or(DEFAULT_TOY);
    let logits = crate::page::parse_toy(text)?;
    let history = parse_toy_history(history, logits.len()).map_err(|e| format!("history: {e}"))?;
    toy_trace(&logits, &history, settings)
}

/// Which measurement a request asks for (its panel says it runs until it arrives).
pub fn measures(req: &Request) -> Option<&'static str> {
    match req {
        Request::Kv(KvRequest::CacheCompare { .. }) => Some("compare"),
        Request::Batch(BatchRequest::BatchSweep { .. }) => Some("sweep"),
        Request::Batch(BatchRequest::GpuSplit) => Some("gpu-split"),
        _ => None,
    }
}

/// The measurement an event answers.
pub fn answers(e: &Event) -> Option<&'static str> {
    match e {
        Event::Kv(KvEvent::CacheCompare { .. }) => Some("compare"),
        Event::Batch(BatchEvent::Sweep { .. }) => Some("sweep"),
        Event::Batch(BatchEvent::GpuSplit { .. }) => Some("gpu-split"),
        _ => None,
    }
}

/// A control's text as entries (logit-bias pairs, stop sequences), blanks dropped; a stop
/// sequence keeps its spaces.
fn split_entries(text: &str, sep: char) -> Vec<String> {
    text.split(sep)
        .map(|s| match sep {
            '\n' => s.to_string(),
            _ => s.trim().to_string(),
        })
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
#[path = "controls_tests.rs"]
mod tests;
