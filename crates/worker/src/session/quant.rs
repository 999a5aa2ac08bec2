//! Precision (lesson 10, section 5: quantization "changes the representation of θ, not its
//! learned values"): requantizing the loaded weights in the worker with the transcript kept,
//! and the quantization panel's view, f32, f16, q8 and q4 side by side at the current
//! position.
//!
//! The panel's four models run on the CPU beside the transcript's backend, each with its
//! own KV cache kept in step with the transcript (only new tokens are run), and are freed
//! when the panel closes. The 15M shape's random weights, for the column that times a model
//! leaving the cache, are made for that one measurement and freed after it.

use super::base::{err, Core, Host};
use decoding_engine::forward::RunState;
use decoding_engine::kernels::logprob::argmax;
use decoding_engine::kernels::logprob::{kl, log_softmax};
use decoding_engine::quant::{Activations, Precision, Tensor};
use decoding_engine::{KvCache, Transformer};
use decoding_page::protocol::*;
use std::sync::Arc;

/// Least wall time of each decode measurement (browsers round worker clocks to ~0.1 ms).
const DECODE_MEASURE_MS: f64 = 3.0;
/// Rounds of a precision's measurement, one after another; each shows the median and the
/// range.
const DECODE_ROUNDS: usize = 5;
/// Untimed steps before a precision's rounds, for at least this long and this many: the
/// first steps after the other precisions ran are slow (the wasm's code for this precision
/// compiles again once it has run, and the caches hold the other models' weights). In
/// headless Chromium on an Intel Xeon the 15M shape's q8 and f32 steps took far longer after
/// one warm step than after a few (BENCHMARKS.md, "The page's int8 rows (ed229cb) and the
/// quantization panel's timing (1e4321e)").
const WARM_MS: f64 = 20.0;
const WARM_STEPS: u32 = 3;
/// The decode times are measured again when the context has moved this far since (a step
/// costs about the same one position later; measuring at every token would slow a run).
const REMEASURE_AFTER: usize = 32;
/// Tokens listed in the panel's chart.
const TOKENS_SHOWN: usize = 12;
/// Weights of the example row shown.
const ROW_SHOWN: usize = 8;

/// A decode step's measured time, ms: (median, lowest, highest) of the rounds.
type Timing = (f64, f64, f64);

/// The models the panel runs: the four precisions (the CPU's q8 and q4 multiply int8
/// activations), then q8 and q4 again with float32 activations, whose KL the table shows
/// beside (what rounding the activations adds to rounding the weights), then the file's own
/// blocks where the model runs them (`FILE`).
const RUNS: usize = PRECISIONS + 2;
/// Where the file's own blocks are in `Lab::models`, when they are.
const FILE: usize = RUNS;

/// The four precisions of the loaded weights with their caches.
struct Lab {
    models: Vec<Arc<Transformer>>,
    caches: Vec<KvCache>,
    /// what each cache holds
    held: Vec<Vec<u32>>,
    /// the last measured decode times (median, lowest, highest ms: the four precisions',
    /// then the file's) and where
    timed: Option<(usize, Vec<Timing>)>,
}

impl Lab {
    fn new(original: &Arc<Transformer>) -> Lab {
        let at = |p: Precision| {
            if original.weights.precision() == p {
                original.clone()
            } else {
                Arc::new(original.at(p))
            }
        };
        let [f32, f16, q8, q4] = Precision::ALL.map(at);
        let f32_acts = |t: &Transformer| Arc::new(t.with_activations(Activations::F32));
        let mut models = vec![
            f32,
            f16,
            q8.clone(),
            q4.clone(),
            f32_acts(&q8),
            f32_acts(&q4),
        ];
        if original.weights.precision() == Precision::Ggml {
            models.push(original.clone());
        }
        Lab {
            caches: models.iter().map(|m| KvCache::new(&m.config)).collect(),
            held: vec![Vec::new(); models.len()],
            models,
            timed: None,
        }
    }

    /// The models timed: the four precisions, and the file's blocks where they run.
    fn timed_runs(&self) -> Vec<usize> {
        (0..PRECISIONS)
            .chain((self.models.len() > FILE).then_some(FILE))
            .collect()
    }
}

/// The panel's state in the worker: open, and its models when it is.
#[derive(Default)]
pub(super) struct QuantPanel {
    pub(super) open: bool,
    lab: Option<Lab>,
    /// The 15M shape's decode steps, once measured.
    shape: Option<ShapeDecode>,
}

/// Tokens in the 15M shape's caches before its timed step (a pattern over its vocabulary).
const SHAPE_POSITION: usize = 16;

impl QuantPanel {
    /// Another model was loaded: the panel's models were the old one's.
    pub(super) fn model_replaced(&mut self) {
        self.lab = None;
    }
}

impl Core {
    /// The panel opened or closed.
    fn set_quantization(
        &mut self,
        panel: &mut QuantPanel,
        open: bool,
        host: &dyn Host,
    ) -> Vec<Event> {
        panel.open = open;
        if !open {
            panel.lab = None;
            panel.shape = None;
            return vec![];
        }
        self.quant_view(panel, host).into_iter().collect()
    }

    /// f32, f16, q8 and q4 after the transcript's tokens: each model's distribution, KL from f32,
    /// top token, weight bytes and a measured decode step; one weight row before and after.
    pub(super) fn quant_view(&mut self, panel: &mut QuantPanel, host: &dyn Host) -> Option<Event> {
        if panel.shape.is_none() && self.gen.is_some() {
            match self.shape_decode(host) {
                Ok(s) => panel.shape = Some(s),
                Err(e) => return Some(err(e)),
            }
        }
        let gen = self.gen.as_ref()?;
        let original = self.original.clone()?;
        let model = self.model.as_ref()?;
        let context = gen.context();
        let (&last, before) = context.split_last()?;
        let lab = panel.lab.get_or_insert_with(|| Lab::new(&original));
        let mut lps = Vec::with_capacity(lab.models.len());
        let mut logits = vec![0.0f32; original.config.vocab_size];
        for i in 0..lab.models.len() {
            let (t, cache, held) = (&lab.models[i], &mut lab.caches[i], &mut lab.held[i]);
            let common = held.iter().zip(before).take_while(|(a, b)| a == b).count();
            cache.truncate(common);
            held.truncate(common);
            if before.len() > common {
                if let Err(e) = t.prefill(cache, &before[common..], false) {
                    return Some(err(e));
                }
                held.extend_from_slice(&before[common..]);
            }
            let mut s = RunState::new(&t.config);
            if let Err(e) = t.decode(&mut s, cache, last, &mut logits) {
                return Some(err(e));
            }
            cache.truncate(before.len());
            lps.push(log_softmax(&logits));
        }
        let due = lab
            .timed
            .as_ref()
            .is_none_or(|(at, _)| at.abs_diff(context.len()) >= REMEASURE_AFTER);
        if due {
            match time_decodes(lab, before.len(), last, host) {
                Ok(t) => lab.timed = Some((context.len(), t)),
                Err(e) => return Some(err(e)),
            }
        }
        let runs = lab.timed_runs();
        let times = lab
            .timed
            .as_ref()
            .map_or(vec![(0.0, 0.0, 0.0); runs.len()], |(_, t)| t.clone());

        let tops: Vec<u32> = lps.iter().map(|l| argmax(l) as u32).collect();
        let view = |(&i, time): (&usize, &Timing)| PrecisionView {
            precision: lab.models[i].weights.precision(),
            weight_bytes: lab.models[i].weights.bytes(&lab.models[i].config),
            decode_ms: time.0,
            decode_range: (time.1, time.2),
            kl: kl(&lps[0], &lps[i]),
            kl_f32_activations: match i {
                2 | 3 => Some(kl(&lps[0], &lps[i + 2])),
                _ => None,
            },
            top: tops[i],
            same_top: tops[i] == tops[0],
        };
        let mut views: Vec<PrecisionView> = runs.iter().zip(&times).map(view).collect();
        let file = (views.len() > PRECISIONS).then(|| FileBlocks {
            types: model.tensor_types.clone().unwrap_or_default(),
            run: views.remove(PRECISIONS),
        });
        let precisions = views;
        let tokens = shown_tokens(&lps[..PRECISIONS], &model.tokenizer);
        Some(Event::Quant(QuantEvent::Quant {
            view: QuantView {
                position: context.len(),
                precisions,
                tokens,
                row: weight_row(lab),
                f32_is_dequantized: original.weights.precision() != Precision::F32,
                shape: panel.shape.clone(),
                file,
            },
        }))
    }
}

impl Core {
    /// A decode step of the 15M shape's random weights at each precision, at
    /// [`SHAPE_POSITION`], timed as the loaded model's are.
    fn shape_decode(&mut self, host: &dyn Host) -> Result<ShapeDecode, String> {
        let lab = self.shape_lab()?;
        let models: Vec<Arc<Transformer>> = Precision::ALL.iter().map(|&p| lab.at(p)).collect();
        let c = models[0].config;
        let tokens: Vec<u32> = (0..=SHAPE_POSITION)
            .map(|i| ((i * 7919 + 3) % c.vocab_size) as u32)
            .collect();
        let (&last, before) = tokens.split_last().ok_or("no tokens")?;
        let mut caches: Vec<KvCache> = Vec::new();
        for t in &models {
            let mut cache = KvCache::new(&t.config);
            t.prefill(&mut cache, before, false)
                .map_err(|e| e.to_string())?;
            caches.push(cache);
        }
        let runs: Vec<usize> = (0..PRECISIONS).collect();
        let times: [Timing; PRECISIONS] =
            time_models(&models, &mut caches, &runs, before.len(), last, host)
                .map_err(|e| e.to_string())?
                .try_into()
                .map_err(|_| "one time a precision")?;
        // 118 MB the page need not keep: made again at the next measurement.
        self.shape = None;
        Ok(ShapeDecode {
            position: before.len(),
            weight_bytes: std::array::from_fn(|i| models[i].weights.bytes(&c)),
            decode_ms: times,
        })
    }
}

/// The tokens any precision puts in its top few, ordered by f32's probability (`lps[0]`),
/// with each precision's probability.
fn shown_tokens(lps: &[Vec<f64>], tokenizer: &decoding_engine::Tokenizer) -> Vec<QuantToken> {
    let mut ids: Vec<u32> = Vec::new();
    for l in lps {
        let mut order: Vec<u32> = (0..l.len() as u32).collect();
        order.sort_by(|&a, &b| l[b as usize].total_cmp(&l[a as usize]));
        for &id in order.iter().take(TOKENS_SHOWN / 2) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids.sort_by(|&a, &b| lps[0][b as usize].total_cmp(&lps[0][a as usize]));
    ids.truncate(TOKENS_SHOWN);
    ids.iter()
        .map(|&id| QuantToken {
            id,
            piece: tokenizer.piece(id).unwrap_or("?").to_string(),
            p: std::array::from_fn(|i| lps[i][id as usize].exp()),
        })
        .collect()
}

/// The current token's decode step of each precision on its own cache, as it runs while that
/// precision generates: untimed steps for `WARM_MS` (at least `WARM_STEPS`), then
/// `DECODE_ROUNDS` rounds, each repeated until `DECODE_MEASURE_MS` have passed (the clock
/// can then measure it); (median, and the middle three rounds' lowest and highest) ms a step
/// per precision, then the file's blocks where they run.
fn time_decodes(
    lab: &mut Lab,
    len: usize,
    last: u32,
    host: &dyn Host,
) -> Result<Vec<Timing>, decoding_engine::ForwardError> {
    let runs = lab.timed_runs();
    time_models(&lab.models, &mut lab.caches, &runs, len, last, host)
}

/// [`time_decodes`] of `models[i]` for each `i` of `runs`, each on its cache.
fn time_models(
    models: &[Arc<Transformer>],
    caches: &mut [KvCache],
    runs: &[usize],
    len: usize,
    last: u32,
    host: &dyn Host,
) -> Result<Vec<Timing>, decoding_engine::ForwardError> {
    let mut logits = vec![0.0f32; models[0].config.vocab_size];
    let mut out = vec![(0.0, 0.0, 0.0); runs.len()];
    for (&i, timing) in runs.iter().zip(out.iter_mut()) {
        let (t, cache) = (&models[i], &mut caches[i]);
        let mut s = RunState::new(&t.config);
        // Steps for at least `ms` and `min` steps: (mean ms a step).
        let mut steps = |ms: f64, min: u32| -> Result<f64, decoding_engine::ForwardError> {
            let (t0, mut n) = (host.now(), 0u32);
            loop {
                t.decode(&mut s, cache, last, &mut logits)?;
                cache.truncate(len);
                n += 1;
                if (host.now() - t0 >= ms && n >= min) || n >= 1000 {
                    return Ok((host.now() - t0) / n as f64);
                }
            }
        };
        steps(WARM_MS, WARM_STEPS)?;
        let mut r = (0..DECODE_ROUNDS)
            .map(|_| steps(DECODE_MEASURE_MS, 1))
            .collect::<Result<Vec<f64>, _>>()?;
        // The median and the middle three of the five rounds (one slow moment of the machine
        // does not widen the range).
        r.sort_by(f64::total_cmp);
        let k = r.len() / 2;
        *timing = (r[k], r[k.saturating_sub(1)], r[(k + 1).min(r.len() - 1)]);
    }
    Ok(out)
}

/// w2 (the MLP's down projection), layer 0, row 1: the row that starts inside a group when
/// hidden_dim is not a multiple of the group (stories260K's 172).
fn weight_row(lab: &Lab) -> WeightRowView {
    let c = lab.models[0].config;
    let (n, r) = (c.hidden_dim, 1.min(c.dim - 1));
    let row = |i: usize| -> Vec<f32> {
        let mut out = vec![0.0f32; n];
        lab.models[i]
            .weights
            .w2
            .block(0, c.n_layers)
            .row_into(r, &mut out);
        out
    };
    let rows: [Vec<f32>; PRECISIONS] = std::array::from_fn(row);
    let max_error = std::array::from_fn(|i| {
        rows[0]
            .iter()
            .zip(&rows[i + 1])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max)
    });
    let group = |i: usize| match &lab.models[i].weights.w2 {
        Tensor::Quant(q) => q.group,
        _ => 1,
    };
    let start = r * n;
    let (q8, q4) = (index(Precision::Q8), index(Precision::Q4));
    let groups = [q8, q4].map(|i| {
        let g = group(i);
        (start % g + n).div_ceil(g)
    });
    WeightRowView {
        label: format!("w2 (the MLP's down projection), layer 0, row {r}"),
        from: 0,
        values: rows.map(|v| v[..ROW_SHOWN.min(n)].to_vec()),
        max_error,
        groups,
        straddles: start % group(q8) != 0,
    }
}

/// Where `p` is in `Precision::ALL` (the panel's order).
fn index(p: Precision) -> usize {
    Precision::ALL.iter().position(|&x| x == p).unwrap_or(0)
}

impl Core {
    /// The quantization panel's request.
    pub(super) fn quant_request(
        &mut self,
        panel: &mut QuantPanel,
        r: QuantRequest,
        host: &dyn Host,
    ) -> Vec<Event> {
        match r {
            QuantRequest::Quantization { open } => self.set_quantization(panel, open, host),
        }
    }
}
