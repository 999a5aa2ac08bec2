//! Each step's caption, one function a step (`STEPS` names them). A caption's claim is
//! written only where its own numbers carry it with margin; otherwise the caption says what
//! was measured and why the lesson's sentence does not show on this model or machine. Its
//! words are the captions' messages (`locales/<lang>/captions.ftl`), a sentence or a branch
//! of one a message; what it waits for is a message too (`caption-wait-…`).

use super::builder::{Arg, Caption, Fmt};
use super::{Live, Part, Step, Wait};
use crate::page::{self, PRESETS};
use crate::protocol::*;
use crate::taxonomy::{self, Category};
use decoding_engine::decode::generation::detect_loop;
use decoding_engine::forward::kv_cache::cache_bytes_formula;

type Out = Result<Vec<Part>, Wait>;

/// A tail holding at least this much of the mass is "not negligible".
const FAT_TAIL: f64 = 0.05;
use crate::verdict::{self, Spread, CLEAR_RATIO};

// The captions of the steps that time a model that leaves the cache (issue 48).
#[path = "captions_speed.rs"]
mod speed;
pub(super) use speed::{prefill_decode, quantization};

fn quoted(piece: &str) -> String {
    page::piece_text(piece, true, Some(16))
}

fn piece(live: &Live, id: u32) -> String {
    live.info
        .and_then(|m| m.pieces.get(id as usize))
        .map_or(format!("#{id}"), |p| quoted(p))
}

/// The compared columns once they have all grown to the step's `cmp_steps` (or stopped).
/// The worker sends the columns as they start (no steps yet) and again when the steps are
/// done; a caption drawn from the first view would count tokens not yet generated.
fn grown<'a>(step: &Step, live: &Live<'a>) -> Result<&'a ColumnsView, Wait> {
    let v = live.columns.ok_or("caption-wait-columns")?;
    let vocab = live.info.map_or(usize::MAX, |m| m.config.vocab_size);
    let want = step.page(vocab).compare.map_or(0, |c| c.steps as usize);
    if v.columns.len() < 2
        || v.columns
            .iter()
            .any(|c| c.steps.len() < want && c.stop.is_none())
    {
        return Err("caption-wait-columns-steps");
    }
    Ok(v)
}

/// Mean surprisal −log p̂ a token of a column's tokens, under the model (T = 1).
fn surprisal(c: &ColumnView) -> f64 {
    -c.logprob / c.steps.len().max(1) as f64
}

pub(super) fn generation_loop(_: &Step, live: &Live) -> Out {
    let t = live.transcript.ok_or("caption-wait-transcript")?;
    let d = live.trace.ok_or("caption-wait-distribution")?;
    let last = t.steps.last().ok_or("caption-wait-token")?;
    let context = t.prompt.len() + t.steps.len();
    let top = *d.order.first().ok_or("caption-wait-distribution")?;
    let f = Fmt(live.lang);
    Ok(Caption::new(live.lang)
        .msg(
            "caption-loop",
            &[
                f.int("context", context as u64),
                f.int("cached", context.saturating_sub(1) as u64),
                f.text("piece", piece(live, last.token)),
                f.p("last_prob", last.prob),
                f.int("kept", d.kept as u64),
                f.text("top", piece(live, top)),
                f.p("next_top", d.probs[top as usize] as f64),
            ],
        )
        .done())
}

pub(super) fn greedy_vs_beam(_: &Step, live: &Live) -> Out {
    let b = live.beam.ok_or("caption-wait-beam")?;
    let f = Fmt(live.lang);
    let args = [
        f.f("greedy_logprob", b.greedy_logprob, 3),
        f.int("width", b.width as u64),
        f.f("beam_logprob", b.best_logprob, 3),
        f.int("depth", b.depth as u64),
    ];
    // A gap under a hundredth of a nat is rounding, not a better sequence.
    let id = if b.best_logprob > b.greedy_logprob + 0.01 {
        "caption-greedy-vs-beam-better"
    } else {
        "caption-greedy-vs-beam-same"
    };
    Ok(Caption::new(live.lang).msg(id, &args).done())
}

pub(super) fn beam_bland(step: &Step, live: &Live) -> Out {
    let t = live.transcript.ok_or("caption-wait-transcript")?;
    let b = live.beam.ok_or("caption-wait-beam")?;
    let v = grown(step, live)?;
    let ids: Vec<u32> = t.steps.iter().map(|s| s.token).collect();
    if ids.is_empty() {
        return Err("caption-wait-beam-tokens");
    }
    let beam_s = t
        .steps
        .iter()
        .map(|s| -s.model_prob.max(1e-300).ln())
        .sum::<f64>()
        / ids.len() as f64;
    let (s0, s1) = (&v.columns[0], &v.columns[1]);
    let (a, z) = (surprisal(s0), surprisal(s1));
    let f = Fmt(live.lang);
    let mut beam = vec![
        f.int("width", b.width as u64),
        f.int("tokens", ids.len() as u64),
        f.f("beam_surprisal", beam_s, 2),
    ];
    let c = Caption::new(live.lang);
    let c = match detect_loop(&ids, 3) {
        Some(l) => {
            beam.push(f.int("loop_period", l.period as u64));
            beam.push(f.int("loop_repeats", l.repeats as u64));
            c.msg("caption-beam-bland-beam-loop", &beam)
        }
        None => c.msg("caption-beam-bland-beam", &beam),
    };
    let c = c.gap().msg(
        "caption-beam-bland-samples",
        &[
            f.f("sample_surprisal_a", a, 2),
            f.f("sample_surprisal_b", z, 2),
        ],
    );
    // Bland: the beam's text is far more predictable than what the model itself writes.
    let id = if beam_s * 2.0 < a.min(z) {
        "caption-beam-bland-bland"
    } else {
        "caption-beam-bland-not"
    };
    Ok(c.gap().msg(id, &[]).done())
}

pub(super) fn tail(_: &Step, live: &Live) -> Out {
    let d = live.trace.ok_or("caption-wait-distribution")?;
    let top10: f64 = d
        .order
        .iter()
        .take(10)
        .map(|&id| d.probs[id as usize] as f64)
        .sum();
    let tail = (1.0 - top10).max(0.0);
    let f = Fmt(live.lang);
    let id = if tail >= FAT_TAIL {
        "caption-tail-fat"
    } else {
        "caption-tail-thin"
    };
    Ok(Caption::new(live.lang)
        .msg(
            id,
            &[
                f.int("tail_tokens", d.probs.len().saturating_sub(10) as u64),
                f.p("tail_mass", tail),
            ],
        )
        .done())
}

pub(super) fn temperature(_: &Step, live: &Live) -> Out {
    let z = live.toy_logits.ok_or("caption-wait-toy-logits")?;
    live.toy.ok_or("caption-wait-toy")?;
    let top = |t: f64| {
        let scaled: Vec<f64> = z.iter().map(|v| v / t).collect();
        decoding_engine::decode::sampling::stages::softmax(&scaled)
            .into_iter()
            .fold(0.0f64, f64::max)
    };
    let t05 = top(0.5);
    let f = Fmt(live.lang);
    let c = Caption::new(live.lang).msg(
        "caption-temperature",
        &[f.p("t1", top(1.0)), f.p("t05", t05), f.p("t2", top(2.0))],
    );
    // The lesson's text has ≈ 0.84 at T = 0.5; softmax gives 0.864 (e⁴ / (e⁴ + e² + e^0.2)).
    Ok(if (t05 - 0.84).abs() > 0.005 {
        c.gap().msg("caption-temperature-erratum", &[])
    } else {
        c
    }
    .done())
}

pub(super) fn topk_topp(step: &Step, live: &Live) -> Out {
    let v = grown(step, live)?;
    let sizes = |k: usize| -> Option<(usize, usize)> {
        let steps = &v.columns.get(k)?.steps;
        Some((
            steps.iter().map(|s| s.kept).min()?,
            steps.iter().map(|s| s.kept).max()?,
        ))
    };
    let ((k0, k1), (p0, p1)) = (
        sizes(0).ok_or("caption-wait-step")?,
        sizes(1).ok_or("caption-wait-step")?,
    );
    let f = Fmt(live.lang);
    let steps = f.int("steps", v.columns[0].steps.len() as u64);
    let c = Caption::new(live.lang);
    let c = if k0 == k1 {
        let args = [
            steps,
            f.int("k_min", k0 as u64),
            f.hidden("k_max", k1 as f64),
        ];
        c.msg("caption-topk-fixed", &args)
    } else {
        let args = [steps, f.int("k_min", k0 as u64), f.int("k_max", k1 as u64)];
        c.msg("caption-topk-range", &args)
    };
    let id = if p1 >= 2 * p0.max(1) {
        "caption-topp-adapts"
    } else {
        "caption-topp-steady"
    };
    Ok(
        c.msg(id, &[f.int("p_min", p0 as u64), f.int("p_max", p1 as u64)])
            .done(),
    )
}

pub(super) fn penalty(step: &Step, live: &Live) -> Out {
    let v = grown(step, live)?;
    let ids = |k: usize| -> Vec<u32> {
        v.columns
            .get(k)
            .map_or(Vec::new(), |c| c.steps.iter().map(|s| s.token).collect())
    };
    let (plain, penalized) = (detect_loop(&ids(0), 3), detect_loop(&ids(1), 3));
    let f = Fmt(live.lang);
    let c = Caption::new(live.lang);
    let c = match plain {
        Some(l) => c.msg(
            "caption-penalty-loop",
            &[
                f.int("loop_period", l.period as u64),
                f.int("loop_repeats", l.repeats as u64),
            ],
        ),
        None => c.msg("caption-penalty-no-loop", &[f.int("loop_repeats", 0)]),
    };
    let c = c.gap();
    let c = match penalized {
        Some(l) => c.msg(
            "caption-penalty-penalized-loop",
            &[f.int("penalized_repeats", l.repeats as u64)],
        ),
        None => c.msg(
            "caption-penalty-penalized-no-loop",
            &[f.int("penalized_repeats", 0)],
        ),
    };
    let (a, b) = (
        plain.map_or(0, |l| l.repeats),
        penalized.map_or(0, |l| l.repeats),
    );
    let id = if a >= 3 && b < a {
        "caption-penalty-curbed"
    } else {
        "caption-penalty-nothing"
    };
    Ok(c.gap().msg(id, &[]).done())
}

pub(super) fn kv_cache(_: &Step, live: &Live) -> Out {
    let rows = live.cache_rows.ok_or("caption-wait-measurement")?;
    let r = rows.last().ok_or("caption-wait-length")?;
    let ratio = r.naive_ms / r.cached_ms.max(1e-9);
    let f = Fmt(live.lang);
    let id = if ratio >= CLEAR_RATIO {
        "caption-kv-cache-clear"
    } else {
        "caption-kv-cache-unclear"
    };
    Ok(Caption::new(live.lang)
        .msg(
            id,
            &[
                f.int("n", r.n as u64),
                f.ms("cached_ms", r.cached_ms, 3),
                f.int("cached_macs", r.cached_macs),
                f.ms("naive_ms", r.naive_ms, 3),
                f.int("naive_macs", r.naive_macs),
                f.times("ratio", ratio),
            ],
        )
        .done())
}

impl Fmt {
    /// A median rate (`key`, its argument `{ $<name>_rate }`) and its range's ends
    /// (`{ $<name>_low }`, `{ $<name>_high }`): "12,000 tokens/s (11,500–12,300)".
    fn spread(self, key: &'static str, [low, high]: [&'static str; 2], m: Spread) -> [Arg; 3] {
        [
            self.rate(key, m.median),
            self.bare_rate(low, m.low),
            self.bare_rate(high, m.high),
        ]
    }
}

/// The calculator's element size in words.
fn elem_name(bytes: u64) -> &'static str {
    match bytes {
        4 => "float32",
        2 => "fp16",
        _ => "int8",
    }
}

pub(super) fn kv_memory(_: &Step, live: &Live) -> Out {
    let (t, m) = (
        live.transcript.ok_or("caption-wait-transcript")?,
        live.info.ok_or("caption-wait-model")?,
    );
    let cfg = &m.config;
    let kv_dim = cfg.kv_dim() as u64;
    let n = t.cache_len as u64;
    let bytes = cache_bytes_formula(n, cfg.n_layers as u64, kv_dim, 4);
    let f = Fmt(live.lang);
    let c = Caption::new(live.lang).msg(
        "caption-kv-memory",
        &[
            f.int("n", n),
            f.int("n2", n),
            f.int("layers", cfg.n_layers as u64),
            f.int("kv_dim", kv_dim),
            f.bytes("bytes", bytes),
        ],
    );
    let (Some(a), Some(g)) = (
        PRESETS.iter().find(|p| p.name == "Llama-2-7B"),
        PRESETS.iter().find(|p| p.name == "Llama-3-8B"),
    ) else {
        return Ok(c.done());
    };
    // The calculator's element size, as the page shows it.
    let elem = live.page.map_or(2, |p| p.kv_bytes) as u64;
    let (mha, _, mqa) = page::mha_gqa_mqa(a, 4096, elem);
    let (g_mha, g_gqa, _) = page::mha_gqa_mqa(g, 4096, elem);
    let group = g.n_heads / g.n_kv_heads.max(1);
    Ok(c.gap()
        .msg(
            "caption-kv-memory-presets",
            &[
                f.text("mha_model", a.name),
                f.n("elem_bytes", elem as f64, elem_name(elem).to_string()),
                f.human_bytes("l2_bytes", mha),
                f.text("gqa_model", g.name),
                f.text("group", crate::i18n::integer(live.lang, group)),
                f.human_bytes("gqa_bytes", g_gqa),
                f.human_bytes("gqa_mha_bytes", g_mha),
                f.human_bytes("mqa_bytes", mqa),
            ],
        )
        .done())
}

pub(super) fn speculative(_: &Step, live: &Live) -> Out {
    let s = live.spec.ok_or("caption-wait-spec")?;
    if s.cycles == 0 {
        return Err("caption-wait-cycle");
    }
    let f = Fmt(live.lang);
    Ok(Caption::new(live.lang)
        .msg(
            "caption-speculative",
            &[
                f.int("gamma", s.gamma as u64),
                f.p("alpha", s.alpha),
                f.f("tokens_per_call", s.tokens_per_call, 2),
                f.f("formula", s.formula, 2),
            ],
        )
        .done())
}

pub(super) fn batching(step: &Step, live: &Live) -> Out {
    let v = live.sweep.ok_or("caption-wait-measurement")?;
    let super::Action::Sweep { batches, .. } = step.action else {
        return Err("caption-wait-a-measurement");
    };
    let measured: Vec<usize> = v.rows.iter().map(|r| r.batch).collect();
    if measured != batches.iter().map(|&b| b as usize).collect::<Vec<_>>() {
        return Err("caption-wait-batches");
    }
    let one = verdict::rates(v, 1).ok_or("caption-wait-b1")?;
    let most = *batches.last().ok_or("caption-wait-batch")? as usize;
    let (gain, clear) = verdict::batching_gain(v).ok_or("caption-wait-measurement")?;
    let f = Fmt(live.lang);
    let mut c = Caption::new(live.lang);
    let mut rates = String::new();
    for &b in batches {
        let Some(m) = verdict::rates(v, b as usize) else {
            return Err("caption-wait-batches");
        };
        let key = match b {
            1 => "b1_rate",
            4 => "b4_rate",
            16 => "b16_rate",
            _ => "b_rate",
        };
        let [rate, low, high] = f.spread(key, ["low", "high"], m.decode);
        let b = f.text("b", crate::i18n::integer(live.lang, b as u64));
        let item = c.fragment("caption-batching-rate", &[b, rate.named("rate"), low, high]);
        if !rates.is_empty() {
            rates.push_str(c.comma());
        }
        rates.push_str(&item);
    }
    let c = c.msg(
        "caption-batching",
        &[
            f.int("reps", one.reps as u64),
            Arg::written("rates", rates),
            f.int("b_most", most as u64),
            f.times("gain", gain),
        ],
    );
    let id = if clear {
        "caption-batching-amortizes"
    } else {
        "caption-batching-little-gain"
    };
    Ok(c.gap().msg(id, &[]).done())
}

pub(super) fn same_theta(step: &Step, live: &Live) -> Out {
    let v = grown(step, live)?;
    let m = live.info.ok_or("caption-wait-model")?;
    let (a, b) = (
        v.columns.first().ok_or("caption-wait-column")?,
        v.columns.get(1).ok_or("caption-wait-column")?,
    );
    let ent = |c: &ColumnView| {
        c.steps
            .iter()
            .map(|s| -s.prob.max(1e-300).ln())
            .sum::<f64>()
            / c.steps.len().max(1) as f64
    };
    let (ea, eb) = (ent(a), ent(b));
    let f = Fmt(live.lang);
    let id = if eb > 2.0 * ea + 0.1 {
        "caption-same-theta-wild"
    } else {
        "caption-same-theta-similar"
    };
    Ok(Caption::new(live.lang)
        .msg(
            id,
            &[
                f.int("params", m.params),
                f.f("surprise_a", ea, 3),
                f.f("surprise_b", eb, 3),
            ],
        )
        .done())
}

pub(super) fn taxonomy(_: &Step, live: &Live) -> Out {
    let count = |cat: Category| {
        taxonomy::ROWS
            .iter()
            .filter(|r| r.category == cat)
            .map(|r| taxonomy::members(r.row).len())
            .sum::<usize>() as u64
    };
    let f = Fmt(live.lang);
    Ok(Caption::new(live.lang)
        .msg(
            "caption-taxonomy",
            &[
                f.int("learned", count(Category::Learned)),
                f.int("config", count(Category::Config)),
                f.int("state", count(Category::State)),
            ],
        )
        .done())
}
