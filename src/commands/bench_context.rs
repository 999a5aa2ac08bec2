//! `bench --at P,…`: decode's time per token at long positions against a bandwidth model.
//! A decode step reads every weight once and the KV cache up to its position (lesson 10:
//! the cache grows by 2 × n_layers × kv_dim × 4 bytes a token, and each step reads all of
//! it), so a bandwidth-bound step takes (weight bytes + cache bytes read) ÷ the machine's
//! bandwidth. The bandwidth is measured here with decode's own product
//! (`roofline::measure` on a buffer of the weights' size); each position is prefilled, then
//! `steps` tokens are decoded from it, `repeat` times (the cache truncated back between
//! runs), and the median per token set against the model. transformers.js v4 slows 3–6.5×
//! past 2,048 positions (a buffer reallocated every step: REFERENCES.md); the engine's
//! decode step allocates nothing (`Transformer::decode`: `tests/decode_allocations.rs`
//! counts; the backend's `forward` timed here returns each step's logits as a new vector).
//! The model assumes the CPU backend's float32 cache and counts every weight byte (a model
//! whose classifier is not its embedding reads one embedding row a step: its model is high).

use crate::error::CliError;
use decoding_engine::serving::roofline;
use decoding_engine::{Backend, Config};
use std::time::Instant;

/// One position's figures.
#[derive(serde::Serialize)]
pub struct AtPosition {
    /// The first decoded position (the prompt before it prefilled)
    pub position: usize,
    pub steps: usize,
    /// Milliseconds a token, the median of the runs
    pub median_ms: f64,
    /// Bytes of K and V a step reads at the run's middle position (f32 cache)
    pub kv_read_bytes: u64,
    /// (weight bytes + kv_read_bytes) ÷ the measured bandwidth, ms
    pub model_ms: f64,
    /// median_ms ÷ model_ms
    pub over_model: f64,
}

/// Decode at long positions, and the bandwidth the model is made of.
#[derive(serde::Serialize)]
pub struct Context {
    /// Decode's product streaming a matrix of the weights' size, GB/s (10⁹ bytes)
    pub bandwidth_gb_s: f64,
    pub weight_bytes: u64,
    pub positions: Vec<AtPosition>,
}

/// "128,1024,4096": positions from which `steps` tokens still fit in the context.
pub fn parse_positions(s: &str, steps: usize, c: &Config) -> Result<Vec<usize>, CliError> {
    let bad = |why: String| CliError::Usage(format!("--at {s:?}: {why}"));
    let positions: Vec<usize> = s
        .split(',')
        .map(|p| p.trim().parse::<usize>().map_err(|e| bad(e.to_string())))
        .collect::<Result<_, _>>()?;
    if steps == 0 {
        return Err(bad("--at-steps must be at least 1".into()));
    }
    for &p in &positions {
        if p == 0 || p > c.seq_len.saturating_sub(steps) {
            return Err(bad(format!(
                "each position must be in 1..={} (the context {} less --at-steps {steps})",
                c.seq_len.saturating_sub(steps),
                c.seq_len
            )));
        }
    }
    Ok(positions)
}

/// `bench --at POSITIONS` (with `--at-steps` and `--repeat`), if asked.
pub fn at(
    backend: &mut dyn Backend,
    c: &Config,
    weight_bytes: u64,
    (at, steps, repeat): (Option<&str>, usize, usize),
) -> Result<Option<Context>, CliError> {
    let Some(at) = at else { return Ok(None) };
    let positions = parse_positions(at, steps, c)?;
    measure(backend, c, weight_bytes, &positions, (steps, repeat)).map(Some)
}

/// Times `steps` decode steps from each position (`repeat` runs) and sets each against
/// the bandwidth model.
pub fn measure(
    backend: &mut dyn Backend,
    c: &Config,
    weight_bytes: u64,
    positions: &[usize],
    (steps, repeat): (usize, usize),
) -> Result<Context, CliError> {
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64() * 1e3;
    let bytes_per_s = roofline::measure(weight_bytes as usize, c.dim, 3, &now)
        .roof
        .bytes_per_s;
    let mut out = Vec::new();
    for &p in positions {
        let ids = super::bench::bench_ids(p + steps, c.vocab_size);
        let seq = backend.new_sequence()?;
        pollster::block_on(backend.forward(seq, &ids[..p], false))?;
        let mut runs = Vec::with_capacity(repeat);
        for _ in 0..repeat.max(1) {
            backend.truncate(seq, p)?;
            let t0 = Instant::now();
            for &id in &ids[p..] {
                pollster::block_on(backend.forward(seq, &[id], false))?;
            }
            runs.push(t0.elapsed().as_secs_f64() * 1e3 / steps as f64);
        }
        backend.release(seq);
        runs.sort_by(f64::total_cmp);
        let median_ms = runs[runs.len() / 2];
        // Step at position q reads q + 1 positions' K and V; the run's middle step stands
        // for the run.
        let (all, model_ms) =
            roofline::step_model(weight_bytes, c, (p + steps / 2 + 1) as u64, bytes_per_s);
        let read = all - weight_bytes;
        out.push(AtPosition {
            position: p,
            steps,
            median_ms,
            kv_read_bytes: read,
            model_ms,
            over_model: median_ms / model_ms,
        });
    }
    Ok(Context {
        bandwidth_gb_s: bytes_per_s / 1e9,
        weight_bytes,
        positions: out,
    })
}

/// The human report's lines.
pub fn lines(c: &Context) -> Vec<String> {
    let mut v = vec![format!(
        "decode at long positions (bandwidth {:.1} GB/s measured with decode's product; model = (weights {:.1} MB + the K/V read) / bandwidth):",
        c.bandwidth_gb_s,
        c.weight_bytes as f64 / 1e6
    )];
    for a in &c.positions {
        v.push(format!(
            "  position {:>6}: {:.3} ms/token over {} steps; K/V read {:.1} MB; model {:.3} ms → {:.2}× the model",
            a.position,
            a.median_ms,
            a.steps,
            a.kv_read_bytes as f64 / 1e6,
            a.model_ms,
            a.over_model
        ));
    }
    v
}
