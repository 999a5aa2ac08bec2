//! The lesson track: a walk through Lesson 10's sections, each step a prepared view of the
//! real page (a link state, plus the one panel action a view needs) and a caption in the
//! lesson's terms whose numbers are computed from what the page is showing, never typed in
//! ([`caption`] reads the worker's views; nothing here runs the model). A caption says
//! what it waits for until its view has arrived.

use crate::protocol::*;
use crate::state::{self, PRESETS};
use crate::taxonomy::{self, Category};
use decoding_engine::generation::detect_loop;
use decoding_engine::kv_cache::cache_bytes_formula;
use decoding_engine::units::{human_bytes, thousands};

/// What a step asks the page to do beyond opening its link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    None,
    /// Measure the cache against re-running the prefix at these lengths.
    CacheCompare,
    /// B lanes of the prompt, grown to this many tokens.
    Lanes {
        batch: u32,
        tokens: u32,
    },
}

/// One step of the track.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The lesson's section, as it numbers it.
    pub section: &'static str,
    pub title: &'static str,
    /// The view: a link's query (the track adds `lesson=`).
    pub query: &'static str,
    pub action: Action,
}

impl Step {
    /// The request of the step's action, beside its link's (`state::view_requests`).
    pub fn action_request(&self) -> Option<Request> {
        match self.action {
            Action::None => None,
            Action::CacheCompare => Some(Request::CacheCompare {
                positions: CACHE_POSITIONS.to_vec(),
            }),
            Action::Lanes { batch, tokens } => Some(Request::BatchLanes { batch, tokens }),
        }
    }
}

const fn step(section: &'static str, title: &'static str, query: &'static str) -> Step {
    Step {
        section,
        title,
        query,
        action: Action::None,
    }
}

/// Lengths the cache step measures at.
pub const CACHE_POSITIONS: [usize; 3] = [16, 64, 128];

pub const STEPS: [Step; 15] = [
    step("1", "The generation loop", "steps=5"),
    step(
        "2",
        "Greedy is not the sequence optimum",
        "prompt=The+dog&strategy=beam&beams=3&steps=12&panels=beam",
    ),
    step(
        "2",
        "Beam search is bland on open text",
        "strategy=beam&beams=4&steps=40&panels=beam",
    ),
    step("2", "Sampling's heavy tail", "prompt=She+saw+a"),
    step(
        "3",
        "Temperature on the toy logits [2, 1, 0.1]",
        "panels=toy&toy=2%2C+1%2C+0.1",
    ),
    step(
        "3",
        "Top-k is rigid, top-p adapts",
        "panels=compare&cmp=top_k%3D40%3Btop_p%3D0.9&cmp_steps=30",
    ),
    step(
        "3",
        "Penalties curb a loop",
        "prompt=The+dog&panels=compare&cmp=strategy%3Dgreedy%3Bstrategy%3Dgreedy%26repetition_penalty%3D1.3&cmp_steps=80",
    ),
    Step {
        section: "4",
        title: "The KV cache: O(n·d) a step instead of O(n²·d)",
        query: "panels=kv",
        action: Action::CacheCompare,
    },
    step("4", "Prefill against decode", "steps=20&panels=kv"),
    step(
        "4",
        "KV memory: 2 × n × N_layers × d × bytes, and GQA/MQA",
        "steps=20&panels=kv",
    ),
    step(
        "5",
        "Speculative decoding",
        "panels=spec&spec=quant%3Aq8%2C4%2Crejection%2C8",
    ),
    step("5", "Quantization", "panels=quant"),
    Step {
        section: "5",
        title: "Batching",
        query: "panels=batch",
        action: Action::Lanes {
            batch: 4,
            tokens: 16,
        },
    },
    step(
        "6",
        "Same θ, different config",
        "panels=compare&cmp=strategy%3Dgreedy%3Btemperature%3D1.5%26top_p%3D0.98&cmp_steps=20",
    ),
    step("6", "The complete inference taxonomy", "panels=taxonomy"),
];

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
    pub transcript: Option<&'a TranscriptView>,
    pub trace: Option<&'a TraceView>,
    pub beam: Option<&'a BeamView>,
    pub toy: Option<&'a TraceView>,
    pub toy_logits: Option<&'a [f64]>,
    pub cache_rows: Option<&'a [CompareRow]>,
    pub columns: Option<&'a ColumnsView>,
    pub spec: Option<&'a SpecView>,
    pub quant: Option<&'a QuantView>,
    pub lanes: Option<&'a LanesView>,
}

struct Caption(Vec<Part>);

impl Caption {
    fn t(mut self, s: impl Into<String>) -> Caption {
        self.0.push(Part::Text(s.into()));
        self
    }
    fn n(mut self, key: &'static str, value: f64, shown: String) -> Caption {
        self.0.push(Part::Num { key, value, shown });
        self
    }
    /// A probability (or any 0–1 number) shown to 3 places.
    fn p(self, key: &'static str, v: f64) -> Caption {
        self.n(key, v, format!("{v:.3}"))
    }
    fn int(self, key: &'static str, v: u64) -> Caption {
        self.n(key, v as f64, thousands(v))
    }
}

/// A small positive number readably: 5 decimals, or two significant digits below 10⁻³.
fn small(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        format!("{v:.1e}")
    } else {
        format!("{v:.5}")
    }
}

/// The compared columns of step `i` once they have all grown to the step's `cmp_steps` (or
/// stopped). The worker sends the columns as they start (no steps yet) and again when the
/// steps are done; a caption drawn from the first view would count tokens not yet generated.
fn grown<'a>(i: usize, live: &Live<'a>) -> Result<&'a ColumnsView, &'static str> {
    let v = live.columns.ok_or("the two columns")?;
    // The steps the step's link asks for, read as the page reads the link.
    let vocab = live.info.map_or(usize::MAX, |m| m.config.vocab_size);
    let want = STEPS
        .get(i)
        .and_then(|s| state::from_query(s.query, vocab).page.compare)
        .map_or(0, |c| c.steps as usize);
    if v.columns.len() < 2
        || v.columns
            .iter()
            .any(|c| c.steps.len() < want && c.stop.is_none())
    {
        return Err("the columns' steps");
    }
    Ok(v)
}

fn quoted(piece: &str) -> String {
    state::piece_text(piece, true, Some(16))
}

/// The caption of step `i` from the live views; `Err` names what it waits for.
pub fn caption(i: usize, live: &Live) -> Result<Vec<Part>, &'static str> {
    let c = Caption(Vec::new());
    let piece = |id: u32| {
        live.info
            .and_then(|m| m.pieces.get(id as usize))
            .map_or(format!("#{id}"), |p| quoted(p))
    };
    let caption = match i {
        0 => {
            let (t, d) = (
                live.transcript.ok_or("the transcript")?,
                live.trace.ok_or("the distribution")?,
            );
            let last = t.steps.last().ok_or("a generated token")?;
            let context = t.prompt.len() + t.steps.len();
            c.t("Each step forwards the whole context — ")
                .int("context", context as u64)
                .t(" tokens now — to logits z, takes p̂ = softmax(z/T) at the last position, selects a token and appends it. The last step drew ")
                .t(piece(last.token))
                .t(" with p̂ = ")
                .p("last_prob", last.prob)
                .t("; the next draws from ")
                .int("kept", d.kept as u64)
                .t(" tokens, the most likely ")
                .t(piece(d.order[0]))
                .t(" at ")
                .p("next_top", d.probs[d.order[0] as usize] as f64)
                .t(". No loss, no gradient: θ is only read.")
        }
        1 => {
            let b = live.beam.ok_or("the beam tree")?;
            c.t("Greedy takes the argmax each step, yet its sequence has Σ log p = ")
                .n(
                    "greedy_logprob",
                    b.greedy_logprob,
                    format!("{:.3}", b.greedy_logprob),
                )
                .t(" while beam search (k = ")
                .int("width", b.width as u64)
                .t(") finds Σ log p = ")
                .n(
                    "beam_logprob",
                    b.best_logprob,
                    format!("{:.3}", b.best_logprob),
                )
                .t(" over the same ")
                .int("depth", b.depth as u64)
                .t(" tokens: locally greedy ≠ globally optimal.")
        }
        2 => {
            let t = live.transcript.ok_or("the transcript")?;
            let b = live.beam.ok_or("the beam tree")?;
            let ids: Vec<u32> = t.steps.iter().map(|s| s.token).collect();
            let distinct = ids.iter().collect::<std::collections::BTreeSet<_>>().len();
            let c = c
                .t("The highest-probability sequence is generic: beam search (k = ")
                .int("width", b.width as u64)
                .t(") wrote ")
                .int("tokens", ids.len() as u64)
                .t(" tokens using only ")
                .int("distinct", distinct as u64)
                .t(" different ones");
            match detect_loop(&ids, 3) {
                Some(l) => c
                    .t(", and a ")
                    .int("loop_period", l.period as u64)
                    .t("-token phrase repeats ")
                    .int("loop_repeats", l.repeats as u64)
                    .t(" times. Good for closed tasks, bland for open ones."),
                None => c.t(". Good for closed tasks, bland for open ones."),
            }
        }
        3 => {
            let d = live.trace.ok_or("the distribution")?;
            let top10: f64 = d
                .order
                .iter()
                .take(10)
                .map(|&id| d.probs[id as usize] as f64)
                .sum();
            let vocab = d.probs.len();
            c.t("Sampling draws y ~ p̂. The ")
                .int("tail_tokens", vocab.saturating_sub(10) as u64)
                .t(" tokens outside the top 10 hold ")
                .p("tail_mass", (1.0 - top10).max(0.0))
                .t(" of the mass here: each unlikely, together not negligible — the tail that occasionally yields an incoherent pick, and what top-k, top-p and min-p cut.")
        }
        4 => {
            let z = live.toy_logits.ok_or("the toy logits")?;
            live.toy.ok_or("the toy distribution")?;
            let top = |t: f64| {
                let scaled: Vec<f64> = z.iter().map(|v| v / t).collect();
                decoding_engine::sampling::stages::softmax(&scaled)
                    .into_iter()
                    .fold(0.0f64, f64::max)
            };
            c.t("p̂(T) = softmax(z/T) on z = [2, 1, 0.1]: the top token's mass is ")
                .p("t1", top(1.0))
                .t(" at T = 1, ")
                .p("t05", top(0.5))
                .t(" at T = 0.5 (sharper; the lesson rounds it to ≈ 0.84) and ")
                .p("t2", top(2.0))
                .t(" at T = 2 (flatter). Same weights, reweighted reading.")
        }
        5 => {
            let v = grown(i, live)?;
            let sizes = |k: usize| -> Option<(usize, usize)> {
                let steps = &v.columns.get(k)?.steps;
                Some((
                    steps.iter().map(|s| s.kept).min()?,
                    steps.iter().map(|s| s.kept).max()?,
                ))
            };
            let ((k0, k1), (p0, p1)) = (sizes(0).ok_or("a step")?, sizes(1).ok_or("a step")?);
            c.t("Over ")
                .int("steps", v.columns[0].steps.len() as u64)
                .t(" steps top-k 40 kept between ")
                .int("k_min", k0 as u64)
                .t(" and ")
                .int("k_max", k1 as u64)
                .t(" tokens (a fixed k), top-p 0.9 between ")
                .int("p_min", p0 as u64)
                .t(" and ")
                .int("p_max", p1 as u64)
                .t(": narrow when one token dominates, wide when the distribution is flat.")
        }
        6 => {
            let v = grown(i, live)?;
            let ids = |k: usize| -> Vec<u32> {
                v.columns
                    .get(k)
                    .map_or(Vec::new(), |c| c.steps.iter().map(|s| s.token).collect())
            };
            let c = c.t("Greedy alone: ");
            let c = match detect_loop(&ids(0), 3) {
                Some(l) => c
                    .t("a ")
                    .int("loop_period", l.period as u64)
                    .t("-token phrase repeats ")
                    .int("loop_repeats", l.repeats as u64)
                    .t(" times"),
                None => c.t("no loop (repeats: ").int("loop_repeats", 0).t(")"),
            };
            let c = c.t(". Greedy with a repetition penalty of 1.3 (recent tokens' logits divided or multiplied by 1.3): ");
            match detect_loop(&ids(1), 3) {
                Some(l) => c
                    .t("repeats ")
                    .int("penalized_repeats", l.repeats as u64)
                    .t(" times."),
                None => c
                    .t("no repeated phrase (repeats: ")
                    .int("penalized_repeats", 0)
                    .t(")."),
            }
        }
        7 => {
            let rows = live.cache_rows.ok_or("the measurement")?;
            let r = rows.last().ok_or("a measured length")?;
            c.t("Measured at n = ")
                .int("n", r.n as u64)
                .t(": with the cache a step costs ")
                .n("cached_ms", r.cached_ms, format!("{:.3} ms", r.cached_ms))
                .t(" (")
                .int("cached_macs", r.cached_macs)
                .t(" multiply-adds), re-running the prefix ")
                .n("naive_ms", r.naive_ms, format!("{:.3} ms", r.naive_ms))
                .t(" (")
                .int("naive_macs", r.naive_macs)
                .t("): ")
                .n(
                    "ratio",
                    r.naive_ms / r.cached_ms.max(1e-9),
                    format!("{:.1}×", r.naive_ms / r.cached_ms.max(1e-9)),
                )
                .t(" slower. Past keys and values never change, so they are kept.")
        }
        8 => {
            let t = live.transcript.ok_or("the transcript")?;
            let prefill = t.timings.prefill_ms.ok_or("the prefill's time")?;
            let f = &t.timings.forward_ms;
            if f.is_empty() {
                return Err("a decode step's time");
            }
            let decode = f.iter().sum::<f64>() / f.len() as f64;
            let pre_rate = t.timings.prefill_tokens as f64 / (prefill / 1e3).max(1e-9);
            let dec_rate = 1e3 / decode.max(1e-9);
            c.t("Prefill ran the ")
                .int("prefill_tokens", t.timings.prefill_tokens as u64)
                .t("-token prompt in one pass: ")
                .n("prefill_rate", pre_rate, format!("{} tokens/s", thousands(pre_rate.round() as u64)))
                .t("; decode runs one token a pass against the cache: ")
                .n("decode_rate", dec_rate, format!("{} tokens/s", thousands(dec_rate.round() as u64)))
                .t(". Prefill is compute-bound (every weight read serves many rows), decode bandwidth-bound (every weight read serves one).")
        }
        9 => {
            let (t, m) = (
                live.transcript.ok_or("the transcript")?,
                live.info.ok_or("the model")?,
            );
            let cfg = &m.config;
            let kv_dim = (cfg.dim / cfg.n_heads * cfg.n_kv_heads) as u64;
            let n = t.cache_len as u64;
            let bytes = cache_bytes_formula(n, cfg.n_layers as u64, kv_dim, 4);
            let l2 = PRESETS.iter().find(|p| p.name == "Llama-2-7B");
            let l3 = PRESETS.iter().find(|p| p.name == "Llama-3-8B");
            let c = c
                .t("bytes = 2 × n × N_layers × d × bytes/elem: this model at n = ")
                .int("n", n)
                .t(" holds 2 × ")
                .int("n2", n)
                .t(" × ")
                .int("layers", cfg.n_layers as u64)
                .t(" × ")
                .int("kv_dim", kv_dim)
                .t(" × 4 = ")
                .n("bytes", bytes as f64, format!("{} bytes", thousands(bytes)))
                .t(".");
            match (l2, l3) {
                (Some(a), Some(g)) => {
                    let (mha, _, mqa) = state::mha_gqa_mqa(a, 4096, 2);
                    let (g_mha, g_gqa, _) = state::mha_gqa_mqa(g, 4096, 2);
                    c.t(format!(" {} at n = 4,096 in fp16: ", a.name))
                        .n("l2_bytes", mha as f64, human_bytes(mha))
                        .t(format!(
                            "; {} shares each K/V head among {} query heads: ",
                            g.name,
                            g.n_heads / g.n_kv_heads.max(1)
                        ))
                        .n("gqa_bytes", g_gqa as f64, human_bytes(g_gqa))
                        .t(" instead of ")
                        .n("gqa_mha_bytes", g_mha as f64, human_bytes(g_mha))
                        .t(format!("; MQA (one K/V head) would take {} ", a.name))
                        .n("mqa_bytes", mqa as f64, human_bytes(mqa))
                        .t(".")
                }
                _ => c,
            }
        }
        10 => {
            let s = live.spec.ok_or("the speculative run")?;
            if s.cycles == 0 {
                return Err("a cycle");
            }
            c.t("A q8 draft proposed γ = ")
                .int("gamma", s.gamma as u64)
                .t(" tokens a cycle; the target verified them in one pass of γ + 1 rows, accepting with measured α = ")
                .p("alpha", s.alpha)
                .t(": ")
                .n("tokens_per_call", s.tokens_per_call, format!("{:.2}", s.tokens_per_call))
                .t(" tokens per target call, against (1 − α^(γ+1))/(1 − α) = ")
                .n("formula", s.formula, format!("{:.2}", s.formula))
                .t(". The output distribution is the target's, exactly.")
        }
        11 => {
            let q = live.quant.ok_or("the three precisions")?;
            let get =
                |p: decoding_engine::Precision| q.precisions.iter().find(|v| v.precision == p);
            let (f, q8, q4) = (
                get(decoding_engine::Precision::F32).ok_or("f32")?,
                get(decoding_engine::Precision::Q8).ok_or("q8")?,
                get(decoding_engine::Precision::Q4).ok_or("q4")?,
            );
            c.t("The same θ stored in ")
                .n(
                    "f32_bytes",
                    f.weight_bytes as f64,
                    human_bytes(f.weight_bytes),
                )
                .t(" (f32), ")
                .n(
                    "q8_bytes",
                    q8.weight_bytes as f64,
                    human_bytes(q8.weight_bytes),
                )
                .t(" (8-bit) and ")
                .n(
                    "q4_bytes",
                    q4.weight_bytes as f64,
                    human_bytes(q4.weight_bytes),
                )
                .t(" (4-bit); here KL(p_f32 ‖ p_q8) = ")
                .n("kl_q8", q8.kl, small(q8.kl))
                .t(" and KL(p_f32 ‖ p_q4) = ")
                .n("kl_q4", q4.kl, small(q4.kl))
                .t(" nats. The representation of θ changes, not its learned values.")
        }
        12 => {
            let l = live.lanes.ok_or("the lanes")?;
            c.int("batch", l.batch as u64)
                .t(" requests stepped together: each decode pass read the weights once for ")
                .int("rows", l.batch as u64)
                .t(" rows, ")
                .n(
                    "tokens_per_s",
                    l.tokens_per_s,
                    format!("{} tokens/s", thousands(l.tokens_per_s.round() as u64)),
                )
                .t(" over ")
                .int("passes", l.passes as u64)
                .t(" passes. Batching amortizes the weight reads that bound decode.")
        }
        13 => {
            let v = grown(i, live)?;
            let m = live.info.ok_or("the model")?;
            let (a, b) = (
                v.columns.first().ok_or("a column")?,
                v.columns.get(1).ok_or("a column")?,
            );
            let ent = |c: &ColumnView| {
                c.steps
                    .iter()
                    .map(|s| -s.prob.max(1e-300).ln())
                    .sum::<f64>()
                    / c.steps.len().max(1) as f64
            };
            c.t("The same ")
                .int("params", m.params)
                .t(" parameters [LEARNED], two configurations [CONFIG]: greedy's tokens were drawn with mean −log p̂ = ")
                .n("surprise_a", ent(a), format!("{:.3}", ent(a)))
                .t(" nats (always the most likely: terse and deterministic), T = 1.5 with top-p 0.98's with ")
                .n("surprise_b", ent(b), format!("{:.3}", ent(b)))
                .t(" (wild). Parameters are the model; configuration is how you run it.")
        }
        14 => {
            let count = |cat: Category| {
                taxonomy::ROWS
                    .iter()
                    .filter(|r| r.category == cat)
                    .map(|r| taxonomy::members(r.row).len())
                    .sum::<usize>() as u64
            };
            c.t("Every quantity on this page is one of three: ")
                .int("learned", count(Category::Learned))
                .t(" [LEARNED] (θ, frozen), ")
                .int("config", count(Category::Config))
                .t(" [CONFIG] (chosen) and ")
                .int("state", count(Category::State))
                .t(" [STATE] (transient). Training writes, inference reads.")
        }
        _ => return Err("a step of the track"),
    };
    Ok(caption.0)
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
