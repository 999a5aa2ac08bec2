//! The lesson track: a walk through Lesson 10's sections, each step one value ([`Step`]): a
//! key, the lesson's section and a title, the view it opens (a link state plus the one
//! panel action a view needs), what it brings into view, and its own caption function. A
//! caption is in the lesson's terms and its numbers are computed from what the page is
//! showing, never typed in (`captions.rs` reads the worker's views; nothing here runs the
//! model). A caption states a claim only where its own numbers support it with margin, and
//! otherwise says what was measured and why the claim does not show here; until its view
//! has arrived it says what it waits for.

pub(crate) mod builder;
mod captions;

use crate::i18n::Lang;
use crate::page::{self, PageState};
use crate::protocol::*;
use decoding_engine::decode::sampling::SettingError;

/// What a step asks the page to do beyond opening its link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    None,
    /// Measure the cache against re-running the prefix at these lengths.
    CacheCompare,
    /// Prefill and decode throughput at these batch sizes (each repeated, medians and
    /// ranges), with the machine's peaks.
    Sweep {
        batches: &'static [u32],
        prompt_tokens: u32,
        gen_tokens: u32,
        model: SweepModel,
    },
}

/// Why a caption is not drawn yet: the view it waits for, as the id of its message
/// (`caption-wait-…`: "the transcript").
pub type Wait = &'static str;

/// A step's caption from the live views.
pub type CaptionFn = fn(&Step, &Live) -> Result<Vec<Part>, Wait>;

/// One step of the track.
#[derive(Clone, Copy)]
pub struct Step {
    /// What the tests and the code call it (never its position).
    pub key: &'static str,
    /// The lesson's section, as it numbers it.
    pub section: &'static str,
    pub title: &'static str,
    /// The view: a link's query (the track adds `lesson=`).
    pub query: &'static str,
    pub action: Action,
    /// The `data-testid` of what the step shows: brought to the top when the step opens.
    pub shows: &'static str,
    pub caption: CaptionFn,
    /// A class check: a round of the class guessing the next token where a guess teaches
    /// something (issue 48), opened by the track's "Class check" button.
    pub check: Option<Check>,
}

/// A class check: the question the class round's panel asks, and its view (a link's query
/// with `class=1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// In English; the track shows its step's `lesson-question-<key>` message (the same
    /// words in English).
    pub question: &'static str,
    pub query: &'static str,
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Step").field("key", &self.key).finish()
    }
}

impl Step {
    /// The request of the step's action, beside its link's (`page::view_requests`).
    pub fn action_request(&self) -> Option<Request> {
        match self.action {
            Action::None => None,
            Action::CacheCompare => Some(Request::Kv(KvRequest::CacheCompare {
                positions: CACHE_POSITIONS.to_vec(),
            })),
            Action::Sweep {
                batches,
                prompt_tokens,
                gen_tokens,
                model,
            } => Some(Request::Batch(BatchRequest::BatchSweep {
                batches: batches.to_vec(),
                prompt_tokens,
                gen_tokens,
                model,
            })),
        }
    }

    /// The step's caption from the live views; `Err` names what it waits for.
    pub fn caption(&self, live: &Live) -> Result<Vec<Part>, Wait> {
        (self.caption)(self, live)
    }

    /// The page state the step's link opens (what its caption compares against).
    pub fn page(&self, vocab_size: usize) -> PageState {
        page::from_query(self.query, vocab_size).page
    }
}

/// Lengths the cache step measures at.
pub const CACHE_POSITIONS: [usize; 3] = [16, 64, 128];

/// The prompt and generated lengths of the prefill-against-decode measurement: a prompt
/// long enough that the prefill's one pass carries many rows; decode steps enough to time
/// (on the 15M shape in the page's one thread, about 5 ms each).
pub const REGIME_PROMPT: u32 = 64;
pub const REGIME_GEN: u32 = 16;

use captions as c;

pub const STEPS: [Step; 15] = [
    Step {
        key: "loop",
        section: "1",
        title: "The generation loop",
        query: "steps=5",
        action: Action::None,
        shows: "prompt-panel",
        caption: c::generation_loop,
        check: Some(Check {
            question: "Greedy (T = 0) writes the model's favourite every time; sampling draws from the whole distribution. Guess the next word: would greedy write yours, and how likely would a sample be to?",
            query: "prompt=Once+upon+a+time%2C+there+was+a+little&temperature=0&class=1",
        }),
    },
    Step {
        key: "greedy-vs-beam",
        section: "2",
        title: "Greedy is not the sequence optimum",
        query: "prompt=The+dog&strategy=beam&beams=3&steps=12&panels=beam",
        action: Action::None,
        shows: "beam-panel",
        caption: c::greedy_vs_beam,
        check: None,
    },
    Step {
        key: "beam-bland",
        section: "2",
        title: "Beam search is bland on open text",
        query: "strategy=beam&beams=4&steps=40&panels=beam,compare&cmp=temperature%3D1%3Btemperature%3D1%26seed%3D1&cmp_steps=40",
        action: Action::None,
        shows: "beam-panel",
        caption: c::beam_bland,
        check: None,
    },
    Step {
        key: "tail",
        section: "2",
        title: "Sampling's heavy tail",
        query: "prompt=She+saw+a",
        action: Action::None,
        shows: "dist-panel",
        caption: c::tail,
        check: None,
    },
    Step {
        key: "temperature",
        section: "3",
        title: "Temperature on the toy logits [2, 1, 0.1]",
        query: "panels=toy&toy=2%2C+1%2C+0.1",
        action: Action::None,
        shows: "toy-panel",
        caption: c::temperature,
        check: Some(Check {
            question: "At T = 0.5 the favourites take more of the mass, at T = 1.5 the tail takes more. Guess the next word, then compare your guess's p (T = 1) with its q at T = 0.5.",
            query: "prompt=She+saw+a&temperature=0.5&class=1",
        }),
    },
    Step {
        key: "topk-topp",
        section: "3",
        title: "Top-k is rigid, top-p adapts",
        query: "panels=compare&cmp=top_k%3D40%3Btop_p%3D0.9&cmp_steps=30",
        action: Action::None,
        shows: "compare-panel",
        caption: c::topk_topp,
        check: Some(Check {
            question: "Top-p 0.9 keeps the fewest tokens whose probabilities add up to 0.9. Guess the next word: is it in the kept set, or cut (✕ top_p)?",
            query: "prompt=Lily+went+to+the&top_p=0.9&class=1",
        }),
    },
    Step {
        key: "penalty",
        section: "3",
        title: "Penalties curb a loop",
        query: "prompt=The+dog&panels=compare&cmp=strategy%3Dgreedy%3Bstrategy%3Dgreedy%26repetition_penalty%3D1.3&cmp_steps=80",
        action: Action::None,
        shows: "compare-panel",
        caption: c::penalty,
        check: Some(Check {
            question: "Greedy has fallen into a loop. Guess the next token: the model is surer of the loop each time round. Then set a repetition penalty (1.3) and watch q.",
            query: "prompt=The+dog&temperature=0&steps=40&class=1",
        }),
    },
    Step {
        key: "kv-cache",
        section: "4",
        title: "The KV cache: O(n·d) a step instead of O(n²·d)",
        query: "panels=kv",
        action: Action::CacheCompare,
        shows: "cache-compare-section",
        caption: c::kv_cache,
        check: None,
    },
    Step {
        key: "prefill-decode",
        section: "4",
        title: "Prefill against decode",
        query: "panels=batch",
        action: Action::Sweep {
            batches: &[1],
            prompt_tokens: REGIME_PROMPT,
            gen_tokens: REGIME_GEN,
            model: SweepModel::Random15M,
        },
        shows: "tp-section",
        caption: c::prefill_decode,
        check: None,
    },
    Step {
        key: "kv-memory",
        section: "4",
        title: "KV memory: 2 × n × N_layers × d × bytes, and GQA/MQA",
        query: "steps=20&panels=kv",
        action: Action::None,
        shows: "calculator",
        caption: c::kv_memory,
        check: None,
    },
    Step {
        key: "speculative",
        section: "5",
        title: "Speculative decoding",
        query: "panels=spec&spec=quant%3Aq8%2C4%2Crejection%2C8",
        action: Action::None,
        shows: "spec-panel",
        caption: c::speculative,
        check: None,
    },
    Step {
        key: "quantization",
        section: "5",
        title: "Quantization",
        query: "panels=quant",
        action: Action::None,
        shows: "quant-panel",
        caption: c::quantization,
        check: None,
    },
    Step {
        key: "batching",
        section: "5",
        title: "Batching",
        query: "panels=batch",
        action: Action::Sweep {
            batches: &[1, 4, 16],
            prompt_tokens: 16,
            gen_tokens: 32,
            model: SweepModel::Loaded,
        },
        shows: "tp-section",
        caption: c::batching,
        check: None,
    },
    Step {
        key: "same-theta",
        section: "6",
        title: "Same θ, different config",
        query: "panels=compare&cmp=strategy%3Dgreedy%3Btemperature%3D1.5%26top_p%3D0.98&cmp_steps=20",
        action: Action::None,
        shows: "compare-panel",
        caption: c::same_theta,
        check: None,
    },
    Step {
        key: "taxonomy",
        section: "6",
        title: "The complete inference taxonomy",
        query: "panels=taxonomy",
        action: Action::None,
        shows: "taxonomy-panel",
        caption: c::taxonomy,
        check: None,
    },
];

/// Keys a link may hold beside `lesson=` and still be "the step alone": they say how to
/// show a view, not what it is.
const NOT_THE_VIEW: [&str; 7] = [
    "lesson",
    "presenter",
    "backend",
    "precision",
    "theme",
    "model",
    "lang",
];

/// Reads a link as the page opens it (`page::from_query`), with its lesson step checked
/// against the track's steps, and a link that names a step and nothing of the view
/// (`?lesson=5`, as a teacher puts it on a slide) opening that step's view.
pub fn from_link(query: &str, vocab_size: usize) -> page::Restored {
    let query = query.strip_prefix('?').unwrap_or(query);
    let mut r = page::from_query(query, vocab_size);
    match r.page.lesson {
        Some(i) if i >= STEPS.len() => {
            r.problems.push(SettingError {
                field: "lesson".into(),
                message: format!(
                    "{:?} is not a step of the lesson track (1..={})",
                    (i + 1).to_string(),
                    STEPS.len()
                ),
            });
            r.page.lesson = None;
            r
        }
        Some(i)
            if form_urlencoded::parse(query.as_bytes())
                .all(|(k, _)| NOT_THE_VIEW.contains(&k.as_ref())) =>
        {
            page::from_query(&format!("{}&{query}", STEPS[i].query), vocab_size)
        }
        _ => r,
    }
}

/// A step by its key, with its position.
pub fn by_key(key: &str) -> Option<(usize, &'static Step)> {
    STEPS.iter().enumerate().find(|(_, s)| s.key == key)
}

/// A caption: text and numbers. A number carries its key and value so a test can check it
/// against its own computation.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    Num {
        key: &'static str,
        value: f64,
        shown: String,
    },
}

/// What the page holds when a caption is drawn (each view as the worker last sent it).
#[derive(Default, Clone, Copy)]
pub struct Live<'a> {
    pub info: Option<&'a ModelInfo>,
    /// The view's page state (the calculator's element size, the prompt).
    pub page: Option<&'a PageState>,
    pub transcript: Option<&'a TranscriptView>,
    pub trace: Option<&'a TraceView>,
    pub beam: Option<&'a BeamView>,
    pub toy: Option<&'a TraceView>,
    pub toy_logits: Option<&'a [f64]>,
    pub cache_rows: Option<&'a [CompareRow]>,
    pub columns: Option<&'a ColumnsView>,
    pub spec: Option<&'a SpecView>,
    pub quant: Option<&'a QuantView>,
    pub sweep: Option<&'a SweepView>,
    /// The language the caption is written in.
    pub lang: Lang,
}

/// The caption as plain text (the page's screen-reader text, and the tests').
pub fn caption_text(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.as_str(),
            Part::Num { shown, .. } => shown.as_str(),
        })
        .collect()
}

/// A number of a caption by key.
pub fn number(parts: &[Part], key: &str) -> Option<f64> {
    parts.iter().find_map(|p| match p {
        Part::Num { key: k, value, .. } if *k == key => Some(*value),
        _ => None,
    })
}
