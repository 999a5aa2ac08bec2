//! The link: a query string that reproduces the whole view (prompt, knobs, seed, steps,
//! panels, the comparison, a speculative run, the lesson step), read with every bad value
//! reported and replaced by its default, written with only what differs from the defaults;
//! and the requests that open a view in a running page.

use super::*;
use crate::protocol::*;
use decoding_engine::decode::sampling::{Knob, RawSettings, SettingError, Settings};
use decoding_engine::decode::speculative::{Draft, Rule};

/// The most cycles a link's speculative run holds.
pub const MAX_SPEC_CYCLES: u32 = 10_000;

/// A speculative run as a link holds it: `spec=quant:q8,4,rejection,5`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecLink {
    pub draft: Draft,
    pub gamma: u32,
    pub rule: Rule,
    pub cycles: u32,
}

impl SpecLink {
    pub(super) fn parse(v: &str) -> Result<SpecLink, String> {
        let parts: Vec<&str> = v.split(',').collect();
        let [draft, gamma, rule, cycles] = parts[..] else {
            return Err(format!("{v:?} is not draft,gamma,rule,cycles"));
        };
        let draft = Draft::from_name(draft).ok();
        let gamma = gamma.parse::<u32>().ok().filter(|g| (1..=16).contains(g));
        let rule = Rule::parse(rule).ok();
        let cycles = cycles.parse::<u32>().ok().filter(|c| *c <= MAX_SPEC_CYCLES);
        match (draft, gamma, rule, cycles) {
            (Some(draft), Some(gamma), Some(rule), Some(cycles)) => Ok(SpecLink {
                draft,
                gamma,
                rule,
                cycles,
            }),
            _ => Err(format!(
                "{v:?}: draft quant:q8|quant:q4|exit:K|ngram:N, gamma 1–16, rule rejection|match, cycles ≤ 10,000"
            )),
        }
    }

    pub(super) fn to_query(&self) -> String {
        format!(
            "{},{},{},{}",
            self.draft, self.gamma, self.rule, self.cycles
        )
    }
}

/// What opening a link gave: the state, valid settings, and what was wrong in it (each bad
/// value was replaced by its default).
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    pub page: PageState,
    pub raw: RawSettings,
    pub settings: Settings,
    pub problems: Vec<SettingError>,
}

/// Reads a query string (with or without the leading '?'): every value the page knows,
/// each bad one reported and replaced by its default. `lesson=k` is read as a step number;
/// the lesson track checks it against its steps and opens a step named alone
/// (`lesson::from_link`).
pub fn from_query(query: &str, vocab_size: usize) -> Restored {
    read_query(query.strip_prefix('?').unwrap_or(query), vocab_size)
}

fn read_query(query: &str, vocab_size: usize) -> Restored {
    let mut page = PageState::default();
    let mut raw = RawSettings::default();
    let mut problems = Vec::new();
    let mut cmp_steps = 0;
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        let read = read_pair(&mut page, &mut raw, &mut cmp_steps, &k, v, vocab_size);
        if let Err(message) = read {
            problems.push(SettingError {
                field: k.to_string(),
                message,
            });
        }
    }
    if let Some(c) = page.compare.as_mut() {
        c.steps = cmp_steps;
    }
    let settings = validate_reporting(&mut raw, &mut problems, vocab_size);
    Restored {
        page,
        raw,
        settings,
        problems,
    }
}

/// Reads one `key=value` pair of the query into the page (or, for a key the page does not
/// own, into the raw settings). A bad value leaves its field as it was; the error is the
/// message reported under the key.
fn read_pair(
    page: &mut PageState,
    raw: &mut RawSettings,
    cmp_steps: &mut u32,
    key: &str,
    v: std::borrow::Cow<str>,
    vocab_size: usize,
) -> Result<(), String> {
    match key {
        "prompt" => page.prompt = v.into_owned(),
        "steps" => page.steps = read_steps(&v)?,
        "panels" => {
            page.panels = v
                .split(',')
                .map(str::trim)
                .filter_map(Panel::from_link)
                .collect()
        }
        "scale" => page.scale = read_scale(&v)?,
        "toy" => page.toy = Some(v.into_owned()),
        "backend" => match BackendChoice::parse(&v) {
            Some(b) => page.backend = b,
            None => return Err(format!("{v:?} is not auto, gpu or cpu")),
        },
        "spec" => page.spec = Some(SpecLink::parse(&v)?),
        "precision" => page.precision = Some(Precision::parse(&v)?),
        "presenter" => page.presenter = v == "1" || v == "true",
        "class" => page.class = v == "1" || v == "true",
        "room" => page.room = Some(super::room::check_code(&v)?),
        "kv_bytes" => page.kv_bytes = read_kv_bytes(&v)?,
        "theme" => page.theme = Some(crate::theme::Scheme::parse(&v)?),
        "lang" => page.lang = Some(crate::i18n::Lang::parse(&v)?),
        "model" => {
            crate::remote::ModelLink::parse(&v)?;
            page.model = Some(v.trim().to_string())
        }
        "cmp" => {
            let columns = CompareLink::parse(&v, vocab_size)?;
            let steps = page.compare.as_ref().map_or(0, |c| c.steps);
            page.compare = Some(CompareLink { columns, steps })
        }
        "cmp_steps" => *cmp_steps = read_steps(&v)?,
        "lesson" => match v.parse::<usize>() {
            Ok(n) if n >= 1 => page.lesson = Some(n - 1),
            _ => return Err(format!("{v:?} is not a step of the lesson track")),
        },
        key => {
            if !raw.set(key, &v) {
                return Err("is not a setting this page knows".to_string());
            }
        }
    }
    Ok(())
}

/// A number of steps (`steps`, `cmp_steps`).
fn read_steps(v: &str) -> Result<u32, String> {
    match v.parse::<u32>() {
        Ok(n) if n <= 4096 => Ok(n),
        _ => Err(format!("{v:?} is not a number of steps (0..=4096)")),
    }
}

fn read_scale(v: &str) -> Result<Scale, String> {
    v.parse()
        .map_err(|_| format!("{v:?} is not prob or logprob"))
}

fn read_kv_bytes(v: &str) -> Result<u8, String> {
    match v {
        "1" | "2" | "4" => Ok(v.parse().unwrap_or(2)),
        _ => Err(format!(
            "{v:?} is not an element size of the calculator (1, 2 or 4 bytes)"
        )),
    }
}

/// Validates the raw settings read from a link, reporting each problem into `problems`.
fn validate_reporting(
    raw: &mut RawSettings,
    problems: &mut Vec<SettingError>,
    vocab_size: usize,
) -> Settings {
    // Validate; every field that breaks a rule is reported and dropped (its default used).
    match raw.validate(vocab_size) {
        Ok(s) => s,
        Err(errors) => {
            let mut cleaned = raw.clone();
            for e in &errors.0 {
                clear_field(&mut cleaned, &e.field);
            }
            problems.extend(errors.0);
            *raw = cleaned;
            // A field cleared above can no longer fail, and defaults are valid; if something
            // still does (an order naming a stage that is now neutral), use every default.
            raw.validate(vocab_size).unwrap_or_else(|_| {
                *raw = RawSettings::default();
                Settings::default()
            })
        }
    }
}

/// Resets one raw field (by its URL/form name) to "not given", with the knobs that go with
/// it (the strategy and the beam knobs).
pub fn clear_field(raw: &mut RawSettings, field: &str) {
    for k in Knob::parse(field)
        .map(Knob::cleared_with)
        .unwrap_or_default()
    {
        raw.clear(k);
    }
}

/// The query string (without '?') for a view: only what differs from the defaults.
pub fn to_query(page: &PageState, settings: &Settings) -> String {
    let d = PageState::default();
    let mut q = form_urlencoded::Serializer::new(String::new());
    if page.prompt != d.prompt {
        q.append_pair("prompt", &page.prompt);
    }
    for (k, v) in settings.to_pairs() {
        q.append_pair(k, &v);
    }
    if page.steps > 0 {
        q.append_pair("steps", &page.steps.to_string());
    }
    if page.panels != d.panels {
        // By name, as links have always listed them.
        let mut p: Vec<&str> = page.panels.iter().map(|p| p.name()).collect();
        p.sort_unstable();
        q.append_pair("panels", &p.join(","));
    }
    if page.scale != d.scale {
        q.append_pair("scale", page.scale.into());
    }
    if let Some(t) = &page.toy {
        q.append_pair("toy", t);
    }
    if page.backend != d.backend {
        q.append_pair("backend", page.backend.name());
    }
    // A file's own blocks are what loading the file gives: no key (nor one a link could
    // not be read back with: `Precision::parse` refuses "ggml").
    if let Some(p) = page.precision.filter(|&p| p != Precision::Ggml) {
        q.append_pair("precision", p.name());
    }
    if let Some(s) = &page.spec {
        q.append_pair("spec", &s.to_query());
    }
    if let Some(c) = &page.compare {
        q.append_pair("cmp", &c.to_query());
        if c.steps > 0 {
            q.append_pair("cmp_steps", &c.steps.to_string());
        }
    }
    if let Some(l) = page.lesson {
        q.append_pair("lesson", &(l + 1).to_string());
    }
    if page.presenter {
        q.append_pair("presenter", "1");
    }
    if page.class {
        q.append_pair("class", "1");
    }
    if let Some(r) = &page.room {
        q.append_pair("room", r);
    }
    if let Some(m) = &page.model {
        q.append_pair("model", m);
    }
    if let Some(l) = page.lang {
        q.append_pair("lang", l.name());
    }
    if let Some(t) = page.theme {
        q.append_pair("theme", t.name());
    }
    if page.kv_bytes != d.kv_bytes {
        q.append_pair("kv_bytes", &page.kv_bytes.to_string());
    }
    q.finish()
}

/// The requests that open a view in a running page: the transcript (prompt, settings,
/// steps; a beam link's tree grows with it), then each open panel's own run (quantization,
/// the probe, a speculative run, the compared columns; the toy logits need no worker). The
/// page sends them when the lesson track opens a step; the tests drive the worker with them.
pub fn view_requests(page: &PageState, settings: &Settings) -> Vec<Request> {
    let mut r = vec![Request::Transcript(TranscriptRequest::Restore {
        prompt: page.prompt.clone(),
        settings: settings.clone(),
        steps: page.steps,
    })];
    r.push(Request::Quant(QuantRequest::Quantization {
        open: page.panels.contains(&Panel::Quant),
    }));
    r.push(Request::Inside(ProbeRequest::Probe {
        open: probe_open(page),
    }));
    r.extend(spec_and_compare_requests(page));
    r
}

/// A view's speculative run, started and cycled as far as the link holds, then its
/// compared columns (each none where the view has none).
pub fn spec_and_compare_requests(page: &PageState) -> Vec<Request> {
    let mut r = Vec::new();
    if let Some(l) = &page.spec {
        r.push(Request::Spec(SpecRequest::SpecStart {
            draft: l.draft,
            gamma: l.gamma,
            rule: l.rule,
        }));
        if l.cycles > 0 {
            r.push(Request::Spec(SpecRequest::SpecCycle { count: l.cycles }));
        }
    }
    r.extend(compare_requests(page));
    r
}

/// The compared columns of a view, started and stepped (none without a comparison).
pub fn compare_requests(page: &PageState) -> Vec<Request> {
    match &page.compare {
        Some(c) if page.panels.contains(&Panel::Compare) => {
            let mut r = vec![Request::Compare(ColumnsRequest::ColumnsStart {
                columns: c.columns.clone(),
            })];
            if c.steps > 0 {
                r.push(Request::Compare(ColumnsRequest::ColumnsStep {
                    count: c.steps,
                }));
            }
            r
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
