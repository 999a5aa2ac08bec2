//! The page's state that is plain data, kept out of the components and tested natively: the
//! link (URL query) that reproduces a view, and the KV-cache arithmetic the panel shows.

use decoding_engine::kv_cache::cache_bytes_formula;
use decoding_engine::sampling::{Knob, RawSettings, SettingError, Settings};
use decoding_engine::Precision;
use decoding_gpu::BackendChoice;
use std::collections::BTreeSet;

pub const DEFAULT_PROMPT: &str = "Once upon a time";
pub const DEFAULT_TOY: &str = "2, 1, 0.1";

/// How the distribution is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Probability,
    LogProbability,
}

impl Scale {
    /// The other scale (the `l` key).
    pub fn toggled(self) -> Scale {
        match self {
            Scale::Probability => Scale::LogProbability,
            Scale::LogProbability => Scale::Probability,
        }
    }
}

/// What a key does on the page (outside text fields; see the help overlay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    Step,
    RunPause,
    Rewind,
    Reset,
    FocusTemperature,
    FocusTopK,
    ToggleScale,
    Help,
    /// The lesson track's next / previous step (a presenter's clicker sends PageDown/Up).
    LessonNext,
    LessonPrev,
}

impl Shortcut {
    /// The shortcut of `key`; arrow keys belong to a focused slider.
    pub fn for_key(key: &str, on_slider: bool) -> Option<Shortcut> {
        Some(match key {
            "n" => Shortcut::Step,
            "ArrowRight" if !on_slider => Shortcut::Step,
            "p" => Shortcut::RunPause,
            "b" => Shortcut::Rewind,
            "ArrowLeft" if !on_slider => Shortcut::Rewind,
            "x" => Shortcut::Reset,
            "t" => Shortcut::FocusTemperature,
            "k" => Shortcut::FocusTopK,
            "l" => Shortcut::ToggleScale,
            "?" => Shortcut::Help,
            "PageDown" | "." => Shortcut::LessonNext,
            "PageUp" | "," => Shortcut::LessonPrev,
            _ => return None,
        })
    }
}

/// Everything a link holds besides the sampling settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PageState {
    pub prompt: String,
    /// Tokens generated (replayed when the link is opened).
    pub steps: u32,
    /// Open panels by name ("chain", "beam", "kv", "toy").
    pub panels: BTreeSet<String>,
    pub scale: Scale,
    /// The toy-logits text when toy mode is on.
    pub toy: Option<String>,
    pub backend: BackendChoice,
    /// The weights' precision asked for (None: the file's own).
    pub precision: Option<Precision>,
    /// A speculative run: draft, γ, rule and the cycles run (replayed when the link opens).
    pub spec: Option<SpecLink>,
    /// "Same θ, different config": the columns' settings and the tokens they stepped.
    pub compare: Option<CompareLink>,
    /// The lesson track's step (0-based), when the track is open.
    pub lesson: Option<usize>,
    pub presenter: bool,
    /// The KV calculator's element size in bytes (4 float32, 2 fp16, 1 int8): real models
    /// are served in fp16, the default.
    pub kv_bytes: u8,
}

impl Default for PageState {
    fn default() -> PageState {
        PageState {
            prompt: DEFAULT_PROMPT.to_string(),
            steps: 0,
            panels: ["chain".to_string(), "kv".to_string()]
                .into_iter()
                .collect(),
            scale: Scale::Probability,
            toy: None,
            backend: BackendChoice::Auto,
            precision: None,
            spec: None,
            compare: None,
            lesson: None,
            presenter: false,
            kv_bytes: 2,
        }
    }
}

/// The panels a link can open, by name.
pub const PANELS: [&str; 10] = [
    "chain", "beam", "kv", "toy", "quant", "spec", "batch", "compare", "taxonomy", "inside",
];

/// Whether the worker probes the steps: the view inside the step is open in an open KV
/// panel.
pub fn probe_open(page: &PageState) -> bool {
    page.panels.contains("kv") && page.panels.contains("inside")
}

/// Most columns side by side (each is a KV cache of the loaded model).
pub const MAX_COLUMNS: usize = 4;

/// The comparison as a link holds it: `cmp=<column>;<column>` (each column its settings as
/// a query string, the one the main link uses) and `cmp_steps=N`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareLink {
    pub columns: Vec<Settings>,
    pub steps: u32,
}

/// A prepared comparison: the lesson's and two more (lesson 10, sections 3 and 6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ComparePreset {
    pub name: &'static str,
    pub label: &'static str,
    /// Each column's settings as a query string.
    pub columns: &'static [&'static str],
}

pub const COMPARE_PRESETS: [ComparePreset; 3] = [
    ComparePreset {
        name: "terse-wild",
        label: "terse and deterministic (greedy) against wild and creative (T = 1.5, top-p 0.98)",
        columns: &["strategy=greedy", "temperature=1.5&top_p=0.98"],
    },
    // The same four knobs under two peers' rules: hf applies temperature before the
    // truncations (its warper order), llama.cpp after them (its default chain).
    ComparePreset {
        name: "profiles",
        label: "hf against llama.cpp with identical knobs (their orders disagree)",
        columns: &[
            "profile=hf&temperature=0.8&top_k=40&top_p=0.95&min_p=0.05",
            "profile=llama.cpp&temperature=0.8&top_k=40&top_p=0.95&min_p=0.05",
        ],
    },
    ComparePreset {
        name: "k-vs-p",
        label: "top-k 40 against top-p 0.9 (rigid against adaptive set size)",
        columns: &["top_k=40", "top_p=0.9"],
    },
];

/// One column's settings from its query text (`temperature=1.5&top_p=0.98`): every key a
/// knob, every value valid for a model of `vocab_size` tokens; else every broken rule.
pub fn parse_column(text: &str, vocab_size: usize) -> Result<Settings, Vec<SettingError>> {
    let mut raw = RawSettings::default();
    let mut errors = Vec::new();
    for (k, v) in form_urlencoded::parse(text.trim().as_bytes()) {
        if !raw.set(&k, &v) {
            errors.push(SettingError {
                field: k.into_owned(),
                message: "is not a knob".to_string(),
            });
        }
    }
    match raw.validate(vocab_size) {
        Ok(s) if errors.is_empty() => match s.strategy {
            decoding_engine::sampling::Strategy::Beam { .. } => Err(vec![SettingError {
                field: "strategy".into(),
                message: "a column runs greedy or sampling (beam search has its own panel)".into(),
            }]),
            _ => Ok(s),
        },
        Ok(_) => Err(errors),
        Err(e) => {
            errors.extend(e.0);
            Err(errors)
        }
    }
}

/// A column's settings as its query text (what `parse_column` reads back).
pub fn column_text(s: &Settings) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in s.to_pairs() {
        q.append_pair(k, &v);
    }
    q.finish()
}

/// The knobs (URL keys) whose effective values are not the same in every column.
pub fn differing(columns: &[Settings]) -> Vec<String> {
    decoding_engine::sampling::knobs::KNOBS
        .iter()
        .filter(|spec| {
            let mut values = columns.iter().map(|s| s.knob_value(spec.knob).1);
            let first = values.next();
            values.any(|v| Some(v) != first)
        })
        .map(|spec| spec.name.to_string())
        .collect()
}

impl CompareLink {
    fn parse(v: &str, vocab_size: usize) -> Result<Vec<Settings>, String> {
        let columns: Vec<&str> = v.split(';').collect();
        if !(2..=MAX_COLUMNS).contains(&columns.len()) {
            return Err(format!(
                "{} columns: compare 2 to {MAX_COLUMNS}",
                columns.len()
            ));
        }
        columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                parse_column(c, vocab_size).map_err(|e| {
                    let text: Vec<String> = e.iter().map(|e| e.to_string()).collect();
                    format!("column {}: {}", i + 1, text.join("; "))
                })
            })
            .collect()
    }

    fn to_query(&self) -> String {
        let cols: Vec<String> = self.columns.iter().map(column_text).collect();
        cols.join(";")
    }
}

/// A speculative run as a link holds it: `spec=quant:q8,4,rejection,5`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecLink {
    pub draft: String,
    pub gamma: u32,
    pub rule: String,
    pub cycles: u32,
}

impl SpecLink {
    fn parse(v: &str) -> Result<SpecLink, String> {
        let parts: Vec<&str> = v.split(',').collect();
        let [draft, gamma, rule, cycles] = parts[..] else {
            return Err(format!("{v:?} is not draft,gamma,rule,cycles"));
        };
        let ok_draft = ["quant:", "exit:", "ngram:"]
            .iter()
            .any(|k| draft.starts_with(k))
            && draft.len() <= 16;
        let gamma = gamma.parse::<u32>().ok().filter(|g| (1..=16).contains(g));
        let cycles = cycles.parse::<u32>().ok().filter(|c| *c <= 10_000);
        match (ok_draft, gamma, ["rejection", "match"].contains(&rule), cycles) {
            (true, Some(gamma), true, Some(cycles)) => Ok(SpecLink {
                draft: draft.to_string(),
                gamma,
                rule: rule.to_string(),
                cycles,
            }),
            _ => Err(format!(
                "{v:?}: draft quant:q8|quant:q4|exit:K|ngram:N, gamma 1–16, rule rejection|match, cycles ≤ 10,000"
            )),
        }
    }

    fn to_query(&self) -> String {
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

/// Keys a link may hold beside `lesson=` and still be "the step alone": they say how to
/// show a view, not what it is.
const NOT_THE_VIEW: [&str; 4] = ["lesson", "presenter", "backend", "precision"];

/// Reads a query string (with or without the leading '?'). A link that names a lesson step
/// and nothing of the view (`?lesson=5`, as a teacher puts it on a slide) opens that step's
/// view.
pub fn from_query(query: &str, vocab_size: usize) -> Restored {
    let query = query.strip_prefix('?').unwrap_or(query);
    let r = read_query(query, vocab_size);
    let alone =
        form_urlencoded::parse(query.as_bytes()).all(|(k, _)| NOT_THE_VIEW.contains(&k.as_ref()));
    match r.page.lesson.and_then(|i| crate::lesson::STEPS.get(i)) {
        Some(step) if alone => read_query(&format!("{}&{query}", step.query), vocab_size),
        _ => r,
    }
}

fn read_query(query: &str, vocab_size: usize) -> Restored {
    let mut page = PageState::default();
    let mut raw = RawSettings::default();
    let mut problems = Vec::new();
    let mut cmp_steps = 0;
    let mut bad = |field: &str, message: String| {
        problems.push(SettingError {
            field: field.to_string(),
            message,
        })
    };
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "prompt" => page.prompt = v.into_owned(),
            "steps" => match v.parse::<u32>() {
                Ok(n) if n <= 4096 => page.steps = n,
                _ => bad(
                    "steps",
                    format!("{v:?} is not a number of steps (0..=4096)"),
                ),
            },
            "panels" => {
                page.panels = v
                    .split(',')
                    .map(str::trim)
                    .filter(|p| PANELS.contains(p))
                    .map(String::from)
                    .collect()
            }
            "scale" => match v.as_ref() {
                "prob" => page.scale = Scale::Probability,
                "logprob" => page.scale = Scale::LogProbability,
                _ => bad("scale", format!("{v:?} is not prob or logprob")),
            },
            "toy" => page.toy = Some(v.into_owned()),
            "backend" => match BackendChoice::parse(&v) {
                Some(b) => page.backend = b,
                None => bad("backend", format!("{v:?} is not auto, gpu or cpu")),
            },
            "spec" => match SpecLink::parse(&v) {
                Ok(l) => page.spec = Some(l),
                Err(e) => bad("spec", e),
            },
            "precision" => match Precision::parse(&v) {
                Ok(p) => page.precision = Some(p),
                Err(e) => bad("precision", e),
            },
            "presenter" => page.presenter = v == "1" || v == "true",
            "kv_bytes" => match v.as_ref() {
                "1" | "2" | "4" => page.kv_bytes = v.parse().unwrap_or(2),
                _ => bad(
                    "kv_bytes",
                    format!("{v:?} is not an element size of the calculator (1, 2 or 4 bytes)"),
                ),
            },
            "cmp" => match CompareLink::parse(&v, vocab_size) {
                Ok(columns) => {
                    let steps = page.compare.as_ref().map_or(0, |c| c.steps);
                    page.compare = Some(CompareLink { columns, steps })
                }
                Err(e) => bad("cmp", e),
            },
            "cmp_steps" => match v.parse::<u32>() {
                Ok(n) if n <= 4096 => cmp_steps = n,
                _ => bad(
                    "cmp_steps",
                    format!("{v:?} is not a number of steps (0..=4096)"),
                ),
            },
            "lesson" => match v.parse::<usize>() {
                Ok(n) if (1..=crate::lesson::STEPS.len()).contains(&n) => page.lesson = Some(n - 1),
                _ => bad(
                    "lesson",
                    format!(
                        "{v:?} is not a step of the lesson track (1..={})",
                        crate::lesson::STEPS.len()
                    ),
                ),
            },
            key => {
                if !raw.set(key, &v) {
                    bad(key, "is not a setting this page knows".to_string());
                }
            }
        }
    }
    if let Some(c) = page.compare.as_mut() {
        c.steps = cmp_steps;
    }
    // Validate; every field that breaks a rule is reported and dropped (its default used).
    let settings = match raw.validate(vocab_size) {
        Ok(s) => s,
        Err(errors) => {
            let mut cleaned = raw.clone();
            for e in &errors.0 {
                clear_field(&mut cleaned, &e.field);
            }
            problems.extend(errors.0);
            raw = cleaned;
            // A field cleared above can no longer fail, and defaults are valid; if something
            // still does (an order naming a stage that is now neutral), use every default.
            raw.validate(vocab_size).unwrap_or_else(|_| {
                raw = RawSettings::default();
                Settings::default()
            })
        }
    };
    Restored {
        page,
        raw,
        settings,
        problems,
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
        let p: Vec<&str> = page.panels.iter().map(String::as_str).collect();
        q.append_pair("panels", &p.join(","));
    }
    if page.scale == Scale::LogProbability {
        q.append_pair("scale", "logprob");
    }
    if let Some(t) = &page.toy {
        q.append_pair("toy", t);
    }
    if page.backend != d.backend {
        q.append_pair(
            "backend",
            match page.backend {
                BackendChoice::Auto => "auto",
                BackendChoice::Gpu => "gpu",
                BackendChoice::Cpu => "cpu",
            },
        );
    }
    if let Some(p) = page.precision {
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
    if page.kv_bytes != d.kv_bytes {
        q.append_pair("kv_bytes", &page.kv_bytes.to_string());
    }
    q.finish()
}

/// The requests that open a view in a running page: the transcript (prompt, settings,
/// steps; a beam link's tree grows with it), then each open panel's own run (toy logits,
/// quantization, a speculative run, the compared columns). The page sends them when the
/// lesson track opens a step; the tests drive the worker with them.
pub fn view_requests(page: &PageState, settings: &Settings) -> Vec<crate::protocol::Request> {
    use crate::protocol::Request;
    let mut r = vec![Request::Restore {
        prompt: page.prompt.clone(),
        settings: settings.clone(),
        steps: page.steps,
    }];
    if page.panels.contains("toy") {
        let text = page.toy.clone().unwrap_or_else(|| DEFAULT_TOY.to_string());
        if let Ok(logits) = parse_toy(&text) {
            r.push(Request::Toy {
                logits,
                history: Vec::new(),
            });
        }
    }
    r.push(Request::Quantization {
        open: page.panels.contains("quant"),
    });
    r.push(Request::Probe {
        open: probe_open(page),
    });
    if let Some(l) = &page.spec {
        r.push(Request::SpecStart {
            draft: l.draft.clone(),
            gamma: l.gamma,
            rule: l.rule.clone(),
        });
        if l.cycles > 0 {
            r.push(Request::SpecCycle { count: l.cycles });
        }
    }
    r.extend(compare_requests(page));
    r
}

/// The compared columns of a view, started and stepped (none without a comparison).
pub fn compare_requests(page: &PageState) -> Vec<crate::protocol::Request> {
    use crate::protocol::Request;
    match &page.compare {
        Some(c) if page.panels.contains("compare") => {
            let mut r = vec![Request::ColumnsStart {
                columns: c.columns.clone(),
            }];
            if c.steps > 0 {
                r.push(Request::ColumnsStep { count: c.steps });
            }
            r
        }
        _ => Vec::new(),
    }
}

/// This wasm module's linear memory in bytes (None natively). It only ever grows, so it is
/// also the peak: the page shows the worker's and its own.
pub fn wasm_memory_bytes() -> Option<u64> {
    #[cfg(target_arch = "wasm32")]
    {
        Some(core::arch::wasm32::memory_size(0) as u64 * 65536)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// The toy logits' row labels, as the lesson writes them: "z₁ = 2", "z₂ = 1", …
pub fn toy_labels(logits: &[f64]) -> Vec<String> {
    const SUB: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
    logits
        .iter()
        .enumerate()
        .map(|(i, z)| {
            let n: String = (i + 1)
                .to_string()
                .chars()
                .filter_map(|d| d.to_digit(10).map(|d| SUB[d as usize]))
                .collect();
            format!("z{n} = {z}")
        })
        .collect()
}

/// The lesson's temperature table: softmax(z / T) for T = 0.5, 1 and 2 (section 2: the top
/// token's mass is 0.659 at T = 1, "≈ 0.84" at T = 0.5 — 0.864 exactly — and ≈ 0.50 at T = 2
/// for z = [2, 1, 0.1]).
pub fn toy_temperature_table(logits: &[f64]) -> Vec<(f64, Vec<f64>)> {
    [0.5, 1.0, 2.0]
        .into_iter()
        .map(|t| {
            let z: Vec<f64> = logits.iter().map(|v| v / t).collect();
            (t, decoding_engine::sampling::stages::softmax(&z))
        })
        .collect()
}

/// Parses the toy history: the ids (0-based rows) of tokens "already generated", which the
/// penalties and no-repeat-n-gram see. Empty text is no history.
pub fn parse_toy_history(text: &str, n_logits: usize) -> Result<Vec<u32>, String> {
    text.split([',', ' ', ';', '\n'])
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.trim().parse::<u32>() {
            Ok(id) if (id as usize) < n_logits => Ok(id),
            Ok(id) => Err(format!(
                "row {id} is not one of the {n_logits} logits (0..{n_logits})"
            )),
            Err(_) => Err(format!("{p:?} is not a row number")),
        })
        .collect()
}

/// Parses the toy logits text ("2, 1, 0.1").
pub fn parse_toy(text: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for part in text
        .split([',', ' ', ';', '\n'])
        .filter(|p| !p.trim().is_empty())
    {
        match part.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => out.push(v),
            _ => return Err(format!("{part:?} is not a finite number")),
        }
    }
    if out.is_empty() || out.len() > 64 {
        return Err(format!("type between 1 and 64 logits (got {})", out.len()));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Token pieces.

/// How a token piece is shown everywhere on the page: whitespace made visible (space ␣,
/// newline ⏎, tab ⇥), other control characters as \u{…}, at most `max_chars` characters
/// (then …), and in quotes when `quoted` (in lists, where a bare piece reads as prose).
pub fn piece_text(piece: &str, quoted: bool, max_chars: Option<usize>) -> String {
    let mut out = String::new();
    for c in piece.chars() {
        match c {
            ' ' => out.push('␣'),
            '\n' => out.push('⏎'),
            '\t' => out.push('⇥'),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    if let Some(max) = max_chars {
        if out.chars().count() > max {
            out = out.chars().take(max.saturating_sub(1)).collect::<String>() + "…";
        }
    }
    if quoted {
        format!("\"{out}\"")
    } else {
        out
    }
}

// ---------------------------------------------------------------------------------------
// The KV cache: bytes = 2 × n × N_layers × d_kv × bytes/elem (lesson 10, section 4).

/// A real model's attention shape, for the calculator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    pub layers: u64,
    pub n_heads: u64,
    pub n_kv_heads: u64,
    pub head_dim: u64,
    /// What the model's K/V sharing is called.
    pub kind: &'static str,
    /// Learned parameters (embedding, layers, norms, the output matrix when it has its
    /// own): the weights the cache is compared with.
    pub params: u64,
}

impl Preset {
    /// A loaded model's shape as a calculator row (its name is shown beside it).
    pub fn of_config(c: &decoding_engine::Config, params: u64) -> Preset {
        Preset {
            name: "the loaded model",
            layers: c.n_layers as u64,
            n_heads: c.n_heads as u64,
            n_kv_heads: c.n_kv_heads as u64,
            head_dim: c.head_size() as u64,
            kind: match c.n_kv_heads {
                1 => "MQA",
                k if k == c.n_heads => "MHA",
                _ => "GQA",
            },
            params,
        }
    }
}

/// Published configurations (each model's config.json on the Hugging Face hub).
pub const PRESETS: [Preset; 6] = [
    Preset {
        name: "stories260K",
        layers: 5,
        n_heads: 8,
        n_kv_heads: 4,
        head_dim: 8,
        kind: "GQA",
        params: 260_032,
    },
    Preset {
        name: "GPT-2 small",
        layers: 12,
        n_heads: 12,
        n_kv_heads: 12,
        head_dim: 64,
        kind: "MHA",
        params: 124_439_808,
    },
    Preset {
        name: "Llama-2-7B",
        layers: 32,
        n_heads: 32,
        n_kv_heads: 32,
        head_dim: 128,
        kind: "MHA",
        params: 6_738_415_616,
    },
    Preset {
        name: "Llama-3-8B",
        layers: 32,
        n_heads: 32,
        n_kv_heads: 8,
        head_dim: 128,
        kind: "GQA",
        params: 8_030_261_248,
    },
    Preset {
        name: "Mistral-7B",
        layers: 32,
        n_heads: 32,
        n_kv_heads: 8,
        head_dim: 128,
        kind: "GQA",
        params: 7_241_732_096,
    },
    Preset {
        name: "Falcon-7B",
        layers: 32,
        n_heads: 71,
        n_kv_heads: 1,
        head_dim: 64,
        kind: "MQA",
        params: 6_921_720_704,
    },
];

/// Weights against the KV cache of a batch (lesson 10, section 4: "at long n it dominates
/// total inference memory"): the weights' bytes, the cache of `batch` sequences at
/// `positions` (each its own cache, `cache_bytes_formula` × batch), and the context length
/// from which the caches together outweigh the weights — the smallest n with
/// batch × 2 × n × N_layers × d_kv > params (the element size cancels).
pub fn weights_and_kv(
    p: &Preset,
    positions: u64,
    bytes_per_elem: u64,
    batch: u64,
) -> (u64, u64, u64) {
    let weights = p.params * bytes_per_elem;
    let kv = batch
        * cache_bytes_formula(
            positions,
            p.layers,
            p.n_kv_heads * p.head_dim,
            bytes_per_elem,
        );
    let per_position = batch * 2 * p.layers * p.n_kv_heads * p.head_dim;
    (weights, kv, p.params / per_position.max(1) + 1)
}

/// The cache of `p` at `positions` if every query head had its own K/V (MHA), with the model's
/// sharing, and with one K/V head for all (MQA).
pub fn mha_gqa_mqa(p: &Preset, positions: u64, bytes_per_elem: u64) -> (u64, u64, u64) {
    let f = |kv_heads: u64| {
        cache_bytes_formula(positions, p.layers, kv_heads * p.head_dim, bytes_per_elem)
    };
    (f(p.n_heads), f(p.n_kv_heads), f(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loaded model as a calculator preset: stories260K's config gives the published
    /// preset's shape (written by hand from its config) and its parameter count; an MQA
    /// and an MHA shape are named so.
    #[test]
    fn a_loaded_models_config_is_a_calculator_preset() {
        let m = decoding_engine::Model::from_bytes(
            &std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../assets/models/stories260K/stories260K.bin"
            ))
            .unwrap(),
            &std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../assets/models/stories260K/tok512.bin"
            ))
            .unwrap(),
        )
        .unwrap();
        let p = Preset::of_config(m.config(), m.config().n_params());
        assert_eq!(
            Preset {
                name: "stories260K",
                ..p
            },
            PRESETS[0]
        );
        let mut c = *m.config();
        c.n_kv_heads = 1;
        assert_eq!(Preset::of_config(&c, 0).kind, "MQA");
        c.n_kv_heads = c.n_heads;
        assert_eq!(Preset::of_config(&c, 0).kind, "MHA");
    }

    /// The presets' parameter counts against the shapes: Llama-2-7B's equals the count
    /// from its config (`roofline::llama2_7b`, the engine's own tensor list), and the
    /// crossover by hand: 2 × 32 layers × 4,096 = 262,144 elements a position, so one
    /// sequence's cache outweighs the weights from 6,738,415,616 / 262,144 = 25,705.4 → n =
    /// 25,706, eight sequences' from 3,214.
    #[test]
    fn weights_against_the_cache_of_a_batch() {
        let l2 = PRESETS[2];
        assert_eq!(l2.name, "Llama-2-7B");
        assert_eq!(l2.params, decoding_engine::roofline::llama2_7b().n_params());
        let (w, kv, n1) = weights_and_kv(&l2, 4096, 2, 1);
        assert_eq!(w, 2 * 6_738_415_616);
        assert_eq!(kv, 2 * 4096 * 32 * 4096 * 2);
        assert_eq!(n1, 25_706);
        let (_, kv8, n8) = weights_and_kv(&l2, 4096, 2, 8);
        assert_eq!(kv8, 8 * kv);
        assert_eq!(n8, 3_214);
        // At the crossover the caches outweigh the weights; one position before, not.
        for (b, n) in [(1, n1), (8, n8)] {
            assert!(weights_and_kv(&l2, n, 2, b).1 > w);
            assert!(weights_and_kv(&l2, n - 1, 2, b).1 <= w);
        }
    }

    #[test]
    fn toy_labels_table_and_history_follow_the_lesson() {
        let z = parse_toy(DEFAULT_TOY).unwrap();
        assert_eq!(toy_labels(&z), ["z₁ = 2", "z₂ = 1", "z₃ = 0.1"]);
        assert_eq!(toy_labels(&[0.0; 12])[11], "z₁₂ = 0");
        // The lesson's figures, computed here from e^(z/T) / Σ e^(z/T).
        let top = |t: f64| {
            let e: Vec<f64> = z.iter().map(|v| (v / t).exp()).collect();
            e[0] / e.iter().sum::<f64>()
        };
        let table = toy_temperature_table(&z);
        for (t, p) in &table {
            assert!((p[0] - top(*t)).abs() < 1e-12, "T = {t}");
        }
        let rounded: Vec<String> = table.iter().map(|(_, p)| format!("{:.3}", p[0])).collect();
        assert_eq!(rounded, ["0.864", "0.659", "0.502"]);
        assert_eq!(parse_toy_history("0, 0 2", 3), Ok(vec![0, 0, 2]));
        assert_eq!(parse_toy_history("", 3), Ok(vec![]));
        assert!(parse_toy_history("3", 3)
            .unwrap_err()
            .contains("not one of the 3 logits"));
        assert!(parse_toy_history("a", 3).is_err());
        assert!(parse_toy("2, 1, abc")
            .unwrap_err()
            .contains("\"abc\" is not a finite number"));
    }

    #[test]
    fn keys_map_to_shortcuts_and_arrows_stay_with_sliders() {
        assert_eq!(Shortcut::for_key("n", false), Some(Shortcut::Step));
        assert_eq!(Shortcut::for_key("ArrowRight", false), Some(Shortcut::Step));
        assert_eq!(Shortcut::for_key("ArrowRight", true), None);
        assert_eq!(Shortcut::for_key("ArrowLeft", true), None);
        assert_eq!(Shortcut::for_key("b", true), Some(Shortcut::Rewind));
        assert_eq!(Shortcut::for_key("q", false), None);
        assert_eq!(
            Shortcut::for_key("PageDown", false),
            Some(Shortcut::LessonNext)
        );
        assert_eq!(Shortcut::for_key(",", true), Some(Shortcut::LessonPrev));
        assert_eq!(Scale::Probability.toggled().toggled(), Scale::Probability);
        assert_eq!(Scale::Probability.toggled(), Scale::LogProbability);
    }

    #[test]
    fn pieces_show_their_whitespace_one_way() {
        assert_eq!(piece_text(" the", false, None), "␣the");
        assert_eq!(piece_text(",", true, None), "\",\"");
        assert_eq!(piece_text("a\nb\t", false, None), "a⏎b⇥");
        assert_eq!(piece_text("\u{7}", false, None), "\\u{7}");
        assert_eq!(piece_text(" Once upon", false, Some(5)), "␣Onc…");
        assert_eq!(piece_text("abcde", false, Some(5)), "abcde");
    }
    use decoding_engine::units::{human_bytes, thousands};

    #[test]
    fn stories260k_cache_figures() {
        let p = &PRESETS[0];
        assert_eq!(
            cache_bytes_formula(1, p.layers, p.n_kv_heads * p.head_dim, 4),
            1_280
        );
        assert_eq!(
            cache_bytes_formula(512, p.layers, p.n_kv_heads * p.head_dim, 4),
            655_360
        );
        assert_eq!(mha_gqa_mqa(p, 512, 4), (1_310_720, 655_360, 163_840));
    }

    #[test]
    fn llama2_7b_at_4096_tokens_fp16_is_2_gib() {
        let p = PRESETS.iter().find(|p| p.name == "Llama-2-7B").unwrap();
        let (mha, gqa, _) = mha_gqa_mqa(p, 4096, 2);
        assert_eq!(gqa, 2 * 1024 * 1024 * 1024);
        assert_eq!(mha, gqa);
        assert_eq!(human_bytes(gqa), "2 GiB");
        let l3 = PRESETS.iter().find(|p| p.name == "Llama-3-8B").unwrap();
        assert_eq!(human_bytes(mha_gqa_mqa(l3, 8192, 2).1), "1 GiB");
    }

    #[test]
    fn query_round_trips() {
        let r = from_query(
            "?prompt=The+cat&temperature=0.7&top_k=5&steps=10&panels=beam,kv,quant,spec&scale=logprob&seed=3&profile=llama.cpp&precision=q4&spec=exit:2,3,match,7",
            512,
        );
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(r.page.prompt, "The cat");
        assert_eq!(r.page.steps, 10);
        assert_eq!(r.settings.top_k, 5);
        assert_eq!(r.page.precision, Some(Precision::Q4));
        assert_eq!(
            r.page.spec,
            Some(SpecLink {
                draft: "exit:2".into(),
                gamma: 3,
                rule: "match".into(),
                cycles: 7
            })
        );
        let q = to_query(&r.page, &r.settings);
        let again = from_query(&q, 512);
        assert_eq!(again.page, r.page);
        assert_eq!(again.settings, r.settings);
    }

    #[test]
    fn nonsense_is_reported_and_replaced_by_defaults() {
        let r = from_query(
            "temperature=banana&top_k=3&steps=-2&scale=huge&zzz=1&top_p=7&precision=q5&spec=quant:q8,17,rejection,1",
            512,
        );
        let fields: Vec<&str> = r.problems.iter().map(|p| p.field.as_str()).collect();
        for f in [
            "temperature",
            "steps",
            "scale",
            "zzz",
            "top_p",
            "precision",
            "spec",
        ] {
            assert!(fields.contains(&f), "{f} not reported in {fields:?}");
        }
        assert_eq!(r.settings.temperature, 1.0);
        assert_eq!(r.settings.top_p, 1.0);
        // The good values survive.
        assert_eq!(r.settings.top_k, 3);
        assert_eq!(r.page.steps, 0);
    }

    #[test]
    fn toy_text_parses() {
        assert_eq!(parse_toy("2, 1, 0.1").unwrap(), vec![2.0, 1.0, 0.1]);
        assert!(parse_toy("2, x").is_err());
        assert!(parse_toy("").is_err());
        assert!(parse_toy("inf").is_err());
    }

    #[test]
    fn number_formats() {
        assert_eq!(thousands(655_360), "655,360");
        assert_eq!(human_bytes(1_280), "1.25 KiB");
        assert_eq!(human_bytes(655_360), "640 KiB");
    }
}

#[cfg(test)]
mod compare_link_tests {
    use super::*;

    /// A comparison and a lesson step survive the link; nonsense in either is reported and
    /// dropped, never half-read.
    #[test]
    fn the_comparison_and_the_lesson_step_travel_in_the_link() {
        let mut page = PageState::default();
        let columns: Vec<Settings> = COMPARE_PRESETS[1]
            .columns
            .iter()
            .map(|c| parse_column(c, 512).unwrap())
            .collect();
        page.compare = Some(CompareLink {
            columns: columns.clone(),
            steps: 20,
        });
        page.panels.insert("compare".into());
        page.lesson = Some(4);
        let q = to_query(&page, &Settings::default());
        let r = from_query(&q, 512);
        assert!(r.problems.is_empty(), "{q}: {:?}", r.problems);
        assert_eq!(r.page, page, "{q}");
        // The two profiles differ in their rules, their order and llama.cpp's hidden
        // penalty window (its last 64 tokens), not in the knobs set.
        assert_eq!(differing(&columns), ["penalty_window", "profile", "order"]);
        // A column reads back as it was written.
        for c in &columns {
            assert_eq!(&parse_column(&column_text(c), 512).unwrap(), c);
        }
        for (bad, field) in [
            ("cmp=strategy%3Dgreedy", "cmp"),
            ("cmp=a;b;c;d;e", "cmp"),
            ("cmp=temperature%3D-1%3Btop_k%3D3", "cmp"),
            ("cmp=strategy%3Dbeam%3Btop_k%3D3", "cmp"),
            ("cmp=nonsense%3D1%3Btop_k%3D3", "cmp"),
            ("cmp_steps=99999", "cmp_steps"),
            ("lesson=0", "lesson"),
            ("lesson=99", "lesson"),
        ] {
            let r = from_query(bad, 512);
            assert_eq!(r.problems.len(), 1, "{bad}: {:?}", r.problems);
            assert_eq!(r.problems[0].field, field, "{bad}");
            assert_eq!(r.page.compare, None, "{bad}");
            assert_eq!(r.page.lesson, None, "{bad}");
        }
        // A column's own errors say which column and which rule.
        let e = parse_column("temperature=abc&top_k=-2", 512).unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
    }
}
