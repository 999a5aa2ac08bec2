//! Each step's caption, one function a step (`STEPS` names them). A caption's claim is
//! written only where its own numbers carry it with margin; otherwise the caption says what
//! was measured and why the lesson's sentence does not show on this model or machine.

use super::{Caption, Live, Part, Step, Wait};
use crate::page::{self, PRESETS};
use crate::protocol::*;
use crate::taxonomy::{self, Category};
use decoding_engine::decode::generation::detect_loop;
use decoding_engine::forward::kv_cache::cache_bytes_formula;
use decoding_engine::units::{human_bytes, thousands};

type Out = Result<Vec<Part>, Wait>;

/// A tail holding at least this much of the mass is "not negligible".
const FAT_TAIL: f64 = 0.05;
use crate::verdict::{self, Spread, CLEAR_RATIO};

// The captions of the steps that time a model that leaves the cache (issue 48).
#[path = "captions_speed.rs"]
mod speed;
pub(super) use speed::{prefill_decode, quantization};

/// A small positive number readably: 5 decimals, or two significant digits below 10⁻³.
fn small(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        format!("{v:.1e}")
    } else {
        format!("{v:.5}")
    }
}

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
    let v = live.columns.ok_or("the columns")?;
    let vocab = live.info.map_or(usize::MAX, |m| m.config.vocab_size);
    let want = step.page(vocab).compare.map_or(0, |c| c.steps as usize);
    if v.columns.len() < 2
        || v.columns
            .iter()
            .any(|c| c.steps.len() < want && c.stop.is_none())
    {
        return Err("the columns' steps");
    }
    Ok(v)
}

/// Mean surprisal −log p̂ a token of a column's tokens, under the model (T = 1).
fn surprisal(c: &ColumnView) -> f64 {
    -c.logprob / c.steps.len().max(1) as f64
}

pub(super) fn generation_loop(_: &Step, live: &Live) -> Out {
    let t = live.transcript.ok_or("the transcript")?;
    let d = live.trace.ok_or("the distribution")?;
    let last = t.steps.last().ok_or("a generated token")?;
    let context = t.prompt.len() + t.steps.len();
    let top = *d.order.first().ok_or("the distribution")?;
    Ok(Caption::new()
        .t("Each step forwards the context — ")
        .int("context", context as u64)
        .t(" tokens now — to logits z at its last position. With the KV cache (§4) only the newest token goes through the layers; the other ")
        .int("cached", context.saturating_sub(1) as u64)
        .t(" are read from the cache. Then p̂ = softmax(z/T), a token is selected and appended. The last step drew ")
        .t(piece(live, last.token))
        .t(" with p̂ = ")
        .p("last_prob", last.prob)
        .t("; the next draws from ")
        .int("kept", d.kept as u64)
        .t(" tokens, the most likely ")
        .t(piece(live, top))
        .t(" at ")
        .p("next_top", d.probs[top as usize] as f64)
        .t(". No loss, no gradient: θ is only read.")
        .done())
}

pub(super) fn greedy_vs_beam(_: &Step, live: &Live) -> Out {
    let b = live.beam.ok_or("the beam tree")?;
    let c = Caption::new()
        .t("Greedy takes the argmax each step, and its sequence has Σ log p = ")
        .f("greedy_logprob", b.greedy_logprob, 3)
        .t("; beam search (k = ")
        .int("width", b.width as u64)
        .t(") keeps the best prefixes and finds Σ log p = ")
        .f("beam_logprob", b.best_logprob, 3)
        .t(" over the same ")
        .int("depth", b.depth as u64)
        .t(" tokens");
    // A gap under a hundredth of a nat is rounding, not a better sequence.
    Ok(if b.best_logprob > b.greedy_logprob + 0.01 {
        c.t(": a more probable sequence that greedy's first choices ruled out. Locally greedy ≠ globally optimal.")
    } else {
        c.t(": here beam search found nothing more probable than greedy's own path. Locally greedy is globally optimal on this prompt; it need not be.")
    }
    .done())
}

pub(super) fn beam_bland(step: &Step, live: &Live) -> Out {
    let t = live.transcript.ok_or("the transcript")?;
    let b = live.beam.ok_or("the beam tree")?;
    let v = grown(step, live)?;
    let ids: Vec<u32> = t.steps.iter().map(|s| s.token).collect();
    if ids.is_empty() {
        return Err("the beam's tokens");
    }
    let beam_s = t
        .steps
        .iter()
        .map(|s| -s.model_prob.max(1e-300).ln())
        .sum::<f64>()
        / ids.len() as f64;
    let (s0, s1) = (&v.columns[0], &v.columns[1]);
    let (a, z) = (surprisal(s0), surprisal(s1));
    let c = Caption::new()
        .t("Beam search (k = ")
        .int("width", b.width as u64)
        .t(") wrote ")
        .int("tokens", ids.len() as u64)
        .t(" tokens at a mean −log p̂ of ")
        .f("beam_surprisal", beam_s, 2)
        .t(" nats a token");
    let c = match detect_loop(&ids, 3) {
        Some(l) => c
            .t(", and a ")
            .int("loop_period", l.period as u64)
            .t("-token phrase repeats ")
            .int("loop_repeats", l.repeats as u64)
            .t(" times"),
        None => c,
    };
    let c = c
        .t(". Two samples from the same prompt at T = 1 (seeds 0 and 1): ")
        .f("sample_surprisal_a", a, 2)
        .t(" and ")
        .f("sample_surprisal_b", z, 2)
        .t(" nats a token. ");
    // Bland: the beam's text is far more predictable than what the model itself writes.
    Ok(if beam_s * 2.0 < a.min(z) {
        c.t("The highest-probability sequence is the most predictable one, generic: good for closed tasks, bland for open ones.")
    } else {
        c.t("Here the beam's text is about as surprising as the samples', so this prompt does not show the blandness.")
    }
    .done())
}

pub(super) fn tail(_: &Step, live: &Live) -> Out {
    let d = live.trace.ok_or("the distribution")?;
    let top10: f64 = d
        .order
        .iter()
        .take(10)
        .map(|&id| d.probs[id as usize] as f64)
        .sum();
    let tail = (1.0 - top10).max(0.0);
    let c = Caption::new()
        .t("Sampling draws y ~ p̂. Here the ")
        .int("tail_tokens", d.probs.len().saturating_sub(10) as u64)
        .t(" tokens outside the top 10 hold ")
        .p("tail_mass", tail)
        .t(" of the mass");
    Ok(if tail >= FAT_TAIL {
        c.t(": each unlikely, together not negligible — the tail that occasionally yields an incoherent pick, and what top-k, top-p and min-p cut.")
    } else {
        c.t(": the model is confident at this position, so the tail hardly matters here; it does where the distribution is flat.")
    }
    .done())
}

pub(super) fn temperature(_: &Step, live: &Live) -> Out {
    let z = live.toy_logits.ok_or("the toy logits")?;
    live.toy.ok_or("the toy distribution")?;
    let top = |t: f64| {
        let scaled: Vec<f64> = z.iter().map(|v| v / t).collect();
        decoding_engine::decode::sampling::stages::softmax(&scaled)
            .into_iter()
            .fold(0.0f64, f64::max)
    };
    let t05 = top(0.5);
    let c = Caption::new()
        .t("p̂(T) = softmax(z/T) on z = [2, 1, 0.1]: the top token's mass is ")
        .p("t1", top(1.0))
        .t(" at T = 1, ")
        .p("t05", t05)
        .t(" at T = 0.5 (sharper) and ")
        .p("t2", top(2.0))
        .t(" at T = 2 (flatter). Same weights, reweighted reading.");
    // The lesson's text has ≈ 0.84 at T = 0.5; softmax gives 0.864 (e⁴ / (e⁴ + e² + e^0.2)).
    Ok(if (t05 - 0.84).abs() > 0.005 {
        c.t(" (The lesson says ≈ 0.84 at T = 0.5: that is an error in the lesson.)")
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
    let ((k0, k1), (p0, p1)) = (sizes(0).ok_or("a step")?, sizes(1).ok_or("a step")?);
    let c = Caption::new()
        .t("Over ")
        .int("steps", v.columns[0].steps.len() as u64)
        .t(" steps top-k 40 kept ");
    let c = if k0 == k1 {
        c.t("exactly ")
            .int("k_min", k0 as u64)
            .int_hidden("k_max", k1 as u64)
            .t(" tokens at every step (a fixed k)")
    } else {
        c.t("between ")
            .int("k_min", k0 as u64)
            .t(" and ")
            .int("k_max", k1 as u64)
            .t(" tokens (fewer only where the chain had fewer left)")
    };
    let c = c
        .t("; top-p 0.9 kept between ")
        .int("p_min", p0 as u64)
        .t(" and ")
        .int("p_max", p1 as u64);
    Ok(if p1 >= 2 * p0.max(1) {
        c.t(": narrow when one token dominates, wide when the distribution is flat.")
    } else {
        c.t(": on this text the model's confidence hardly varied, so neither did top-p's set.")
    }
    .done())
}

impl Caption {
    /// A number the tests can read that the text does not repeat.
    fn int_hidden(mut self, key: &'static str, v: u64) -> Caption {
        self.0.push(Part::Num {
            key,
            value: v as f64,
            shown: String::new(),
        });
        self
    }
}

pub(super) fn penalty(step: &Step, live: &Live) -> Out {
    let v = grown(step, live)?;
    let ids = |k: usize| -> Vec<u32> {
        v.columns
            .get(k)
            .map_or(Vec::new(), |c| c.steps.iter().map(|s| s.token).collect())
    };
    let (plain, penalized) = (detect_loop(&ids(0), 3), detect_loop(&ids(1), 3));
    let c = Caption::new().t("Greedy alone: ");
    let c = match plain {
        Some(l) => c
            .t("a ")
            .int("loop_period", l.period as u64)
            .t("-token phrase repeats ")
            .int("loop_repeats", l.repeats as u64)
            .t(" times"),
        None => c.t("no loop (repeats: ").int("loop_repeats", 0).t(")"),
    };
    let c = c.t(". Greedy with a repetition penalty of 1.3 (recent tokens' logits divided or multiplied by 1.3): ");
    let c = match penalized {
        Some(l) => c
            .t("repeats ")
            .int("penalized_repeats", l.repeats as u64)
            .t(" times"),
        None => c
            .t("no repeated phrase (repeats: ")
            .int("penalized_repeats", 0)
            .t(")"),
    };
    let (a, b) = (
        plain.map_or(0, |l| l.repeats),
        penalized.map_or(0, |l| l.repeats),
    );
    Ok(if a >= 3 && b < a {
        c.t(". The penalty curbed the loop.")
    } else {
        c.t(". No loop for the penalty to curb on this prompt.")
    }
    .done())
}

pub(super) fn kv_cache(_: &Step, live: &Live) -> Out {
    let rows = live.cache_rows.ok_or("the measurement")?;
    let r = rows.last().ok_or("a measured length")?;
    let ratio = r.naive_ms / r.cached_ms.max(1e-9);
    let c = Caption::new()
        .t("Measured at n = ")
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
        .n("ratio", ratio, format!("{ratio:.1}×"));
    Ok(if ratio >= CLEAR_RATIO {
        c.t(" the time. Past keys and values never change, so they are kept.")
    } else {
        c.t(" the time: at this length the prefix is too short for the difference to show on this machine, though the arithmetic grows as n² against n.")
    }
    .done())
}

impl Caption {
    /// A median rate and its range: "12,000 tokens/s (11,500–12,300)".
    fn spread(self, key: &'static str, m: Spread) -> Caption {
        self.rate(key, m.median)
            .t(" (")
            .rate_bare(m.low)
            .t("–")
            .rate_bare(m.high)
            .t(")")
    }
    fn rate_bare(self, v: f64) -> Caption {
        self.t(thousands(v.max(0.0).round() as u64))
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
        live.transcript.ok_or("the transcript")?,
        live.info.ok_or("the model")?,
    );
    let cfg = &m.config;
    let kv_dim = cfg.kv_dim() as u64;
    let n = t.cache_len as u64;
    let bytes = cache_bytes_formula(n, cfg.n_layers as u64, kv_dim, 4);
    let c = Caption::new()
        .t("bytes = 2 × n × N_layers × d × bytes/elem: this model at n = ")
        .int("n", n)
        .t(" holds 2 × ")
        .int("n2", n)
        .t(" × ")
        .int("layers", cfg.n_layers as u64)
        .t(" × ")
        .int("kv_dim", kv_dim)
        .t(" × 4 (float32) = ")
        .n("bytes", bytes as f64, format!("{} bytes", thousands(bytes)))
        .t(".");
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
    Ok(c.t(format!(" {} at n = 4,096 in ", a.name))
        .n("elem_bytes", elem as f64, elem_name(elem).to_string())
        .t(" (the calculator below): ")
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
        .done())
}

pub(super) fn speculative(_: &Step, live: &Live) -> Out {
    let s = live.spec.ok_or("the speculative run")?;
    if s.cycles == 0 {
        return Err("a cycle");
    }
    Ok(Caption::new()
        .t("A q8 draft proposed γ = ")
        .int("gamma", s.gamma as u64)
        .t(" tokens a cycle; the target verified them in one pass of γ + 1 rows, accepting with measured α = ")
        .p("alpha", s.alpha)
        .t(": ")
        .f("tokens_per_call", s.tokens_per_call, 2)
        .t(" tokens per target call, against (1 − α^(γ+1))/(1 − α) = ")
        .f("formula", s.formula, 2)
        .t(". The output distribution is the target's, exactly.")
        .done())
}

pub(super) fn batching(step: &Step, live: &Live) -> Out {
    let v = live.sweep.ok_or("the measurement")?;
    let super::Action::Sweep { batches, .. } = step.action else {
        return Err("a measurement");
    };
    let measured: Vec<usize> = v.rows.iter().map(|r| r.batch).collect();
    if measured != batches.iter().map(|&b| b as usize).collect::<Vec<_>>() {
        return Err("every batch size");
    }
    let one = verdict::rates(v, 1).ok_or("the measurement at B = 1")?;
    let most = *batches.last().ok_or("a batch size")? as usize;
    let (gain, clear) = verdict::batching_gain(v).ok_or("the measurement")?;
    let mut c = Caption::new()
        .t("Decode with B sequences a pass (each timed ")
        .int("reps", one.reps as u64)
        .t(" times; median, and the middle half of the runs): B = 1 ")
        .spread("b1_rate", one.decode);
    for &b in &batches[1..] {
        let Some(m) = verdict::rates(v, b as usize) else {
            return Err("every batch size");
        };
        c = c.t(format!(", B = {b} ")).spread(
            match b {
                4 => "b4_rate",
                16 => "b16_rate",
                _ => "b_rate",
            },
            m.decode,
        );
    }
    let c = c
        .t(". B = ")
        .int("b_most", most as u64)
        .t(" gave ")
        .n("gain", gain, format!("{gain:.1}×"))
        .t(" the tokens of B = 1. ");
    Ok(if clear {
        c.t("Each pass read the weights once for every row: batching amortizes the weight reads that bound decode.")
    } else {
        c.t("Little gain here: this model's weights stay in the CPU's cache, so a pass does not wait on memory and there is no read to amortize. On Llama-2-7B on an H100 (the roofline below) decode at B = 1 sits far under the ridge: there batching pays.")
    }
    .done())
}

pub(super) fn same_theta(step: &Step, live: &Live) -> Out {
    let v = grown(step, live)?;
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
    let (ea, eb) = (ent(a), ent(b));
    let c = Caption::new()
        .t("The same ")
        .int("params", m.params)
        .t(" parameters [LEARNED], two configurations [CONFIG]: greedy's tokens were drawn with mean −log p̂ = ")
        .f("surprise_a", ea, 3)
        .t(" nats (always the most likely: terse and deterministic), T = 1.5 with top-p 0.98's with ")
        .f("surprise_b", eb, 3);
    Ok(if eb > 2.0 * ea + 0.1 {
        c.t(" (wild). Parameters are the model; configuration is how you run it.")
    } else {
        c.t(". Here the two configurations wrote similarly predictable text; the difference shows over longer runs.")
    }
    .done())
}

pub(super) fn taxonomy(_: &Step, _: &Live) -> Out {
    let count = |cat: Category| {
        taxonomy::ROWS
            .iter()
            .filter(|r| r.category == cat)
            .map(|r| taxonomy::members(r.row).len())
            .sum::<usize>() as u64
    };
    Ok(Caption::new()
        .t("Every quantity on this page is one of three: ")
        .int("learned", count(Category::Learned))
        .t(" [LEARNED] (θ, frozen), ")
        .int("config", count(Category::Config))
        .t(" [CONFIG] (chosen) and ")
        .int("state", count(Category::State))
        .t(" [STATE] (transient). Training writes, inference reads.")
        .done())
}
