//! Kernel variants chosen by measuring on the machine that runs them, not on the machine the
//! code was written on. Decode's two streaming loops, the int8 rows (`matmul`'s `int8_rows`)
//! and the long float32 rows (`f32_rows`), can prefetch the weight rows a few rows ahead in
//! software or leave it to the hardware prefetcher. Which is faster depends on the CPU: on
//! an AMD Zen 4 a software prefetch made float32 decode slower, on an Intel Xeon (Sapphire
//! Rapids) int8 rows prefetched a few rows ahead streamed faster than with none
//! (BENCHMARKS.md, "Figures behind the code"). So each int8 loop's first use times each of
//! its variants on [`TUNE_BYTES`] of rows, flushed from the caches before every pass (so
//! they stream from memory as a model's weights do), and keeps the fastest for the process
//! (a short measurement at start-up; `bench` prints its time). Every variant gives the same
//! bits: a prefetch is a hint, the arithmetic is the row's.
//!
//! The float32 loop is timed on the decode itself instead ([`Trial`]): its first decode
//! steps take the variants in turn, one a step, and the one whose best step's matrix
//! products took least is kept. A flushed buffer did not predict it: on an Intel Xeon the
//! 4-stream variant read 1 or 4 MiB of the model's own rows, flushed, fastest, while over
//! the whole file, read again every step, one stream with the in-row lead read faster
//! (BENCHMARKS.md, "Figures behind the code").
//!
//! `DECODING_EXPLORER_PREFETCH_ROWS=n` fixes both (benchmarks of one variant).

use super::rows::{int8_rows, led, v, Variant};
use super::simd::{Isa, Native, LEAD};
use super::trial::Trial;
use crate::par;
use crate::quant::{Precision, QActs, QTensor};
use std::sync::OnceLock;

/// The variants tried for int8 rows …
pub const INT8_VARIANTS: [Variant; 4] = [v(1, 0), v(1, 2), v(4, 0), v(4, 2)];
/// … and for float32 rows (four times the bytes a row); where the row loop can prefetch
/// inside the row (`Isa::LEADS`: AVX-512), a lead there too (where the rows ahead had not
/// helped: BENCHMARKS.md); AVX2's row loop always prefetches 16 KiB ahead inside the row.
pub const F32_VARIANTS: &[Variant] = if Native::LEADS {
    &[v(1, 0), v(4, 0), v(4, 1), led(1, LEAD), led(4, LEAD)]
} else {
    &[v(1, 0), v(1, 1), v(4, 0), v(4, 1)]
};
/// Bytes of the matrix each variant streams (rows of 768: the 110M shape's).
pub const TUNE_BYTES: usize = 1 << 20;
const TUNE_ROW: usize = 768;

/// One loop's choice and what each variant took.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Choice {
    pub chosen: Variant,
    /// (variant, µs) in the order tried: the int8 loop's best pass, the float32 loop's
    /// matrix products in its best decode step; empty when not measured
    pub timings: Vec<(Variant, f64)>,
}

/// What the tuning chose for the int8 and the float32 decode loops.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Tuning {
    pub int8: Choice,
    pub f32: Choice,
    /// the smallest task handed to another thread
    pub split: Split,
    /// how the choice was made: "measured", "fixed by DECODING_EXPLORER_PREFETCH_ROWS", "no
    /// software prefetch on this target"
    pub how: &'static str,
    /// the whole tuning's wall time, ms
    pub took_ms: f64,
}

/// The smallest task worth handing to another thread (multiply-adds, `par`), and what each
/// floor F tried took for 2F multiply-adds (rows of 64) alone and split in two, µs; no
/// timings with one thread.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Split {
    pub chosen: usize,
    pub timings: Vec<(usize, f64, f64)>,
}

/// The floors tried, from the default down.
pub const SPLIT_FLOORS: [usize; 5] = [1 << 15, 1 << 14, 1 << 13, 1 << 12, 1 << 11];

/// Each loop's variant.
#[derive(Debug, Clone, Copy)]
pub struct Ahead {
    pub int8: Variant,
    pub f32: Variant,
}

impl Choice {
    fn describe(&self, what: &str) -> String {
        let t: Vec<String> = self
            .timings
            .iter()
            .map(|(v, us)| match v.lead {
                0 => format!("{}×{}: {us:.0} µs", v.streams, v.ahead),
                l => format!("{}×{}+{l} B: {us:.0} µs", v.streams, v.ahead),
            })
            .collect();
        match t.is_empty() {
            true => format!("{what}: {}", self.chosen),
            false => format!("{what}: {} (streams×ahead {})", self.chosen, t.join(", ")),
        }
    }
}

impl Tuning {
    /// Three lines for `bench`: each loop's choice and what each variant took, and the
    /// thread split's.
    pub fn describe(&self) -> String {
        let split: Vec<String> = self
            .split
            .timings
            .iter()
            .map(|(f, alone, split)| format!("{f}: {alone:.2} / {split:.2} µs"))
            .collect();
        format!(
            "decode loops {} (int8: {:.1} MB flushed from the caches a pass; f32: the best of its decode steps; {:.0} ms in all):\n  {}\n  {}\n  thread split: tasks of at least {} multiply-adds{}",
            self.how,
            TUNE_BYTES as f64 / (1 << 20) as f64,
            self.took_ms,
            self.int8.describe("int8 rows"),
            self.f32.describe("f32 rows"),
            self.split.chosen,
            match split.is_empty() {
                true => String::new(),
                false => format!(" (floor F: 2F alone / in two {})", split.join(", ")),
            }
        )
    }
}

/// The int8 loop's choice and the thread split's (and each measurement's wall time, ms),
/// measured on first use.
static INT8: OnceLock<(Choice, f64)> = OnceLock::new();
static SPLIT: OnceLock<(Split, f64)> = OnceLock::new();
/// The float32 loop's trial over the process's first decode steps (`trial.rs`).
static F32: Trial<NF> = Trial::new(TRIAL_LEN);
const NF: usize = F32_VARIANTS.len();
/// Three steps of each float32 variant.
const TRIAL_LEN: usize = 3 * NF;
/// Decode steps after which the float32 loop has chosen.
pub const TRIAL_STEPS: usize = super::trial::WARM_STEPS + TRIAL_LEN + 1;

/// What the process has chosen so far (the float32 loop: its first variant until its trial
/// has run).
pub fn tuning() -> Tuning {
    let int8 = INT8.get_or_init(measure_int8);
    let (how, f32) = match (how(), F32.chosen()) {
        (Err((how, r)), _) => (how, unmeasured(r)),
        (Ok(()), Some((i, us))) => ("measured", choice(F32_VARIANTS, *i, us)),
        (Ok(()), None) => (
            "measured (float32 rows: no decode steps yet)",
            unmeasured(0),
        ),
    };
    let split = SPLIT.get_or_init(measure_split);
    Tuning {
        int8: int8.0.clone(),
        f32,
        split: split.0.clone(),
        how,
        took_ms: int8.1 + split.1,
    }
}

fn choice(variants: &[Variant], i: usize, us: &[f64]) -> Choice {
    Choice {
        chosen: variants[i],
        timings: variants.iter().copied().zip(us.iter().copied()).collect(),
    }
}

/// Each decode loop's variant now (the first call also measures the int8 loop and the
/// threads' task floor: every matrix product passes here first).
#[inline]
pub fn prefetch_rows() -> Ahead {
    SPLIT.get_or_init(measure_split);
    Ahead {
        int8: INT8.get_or_init(measure_int8).0.chosen,
        f32: match how() {
            Ok(()) => F32_VARIANTS[F32.index()],
            Err((_, r)) => v(1, r),
        },
    }
}

/// A decode step (one input row) begins: the float32 loop's trial moves on.
#[inline]
pub fn decode_step() {
    if how().is_ok() {
        F32.step();
    }
}

/// Whether the float32 loop is still on trial: its matrix products are to be timed
/// ([`record_f32`]).
#[inline]
pub fn f32_on_trial() -> bool {
    F32.open() && how().is_ok()
}

/// Whether this decode step is one the float32 trial times: on trial, and its products
/// seen since the start or the last round without them (`Trial::timing`), so a q8 model's
/// steps are not held back from the thread governor. `f32_on_trial` is whether products
/// are still to be timed at all.
#[inline]
pub fn f32_steps_timed() -> bool {
    F32.timing() && how().is_ok()
}

/// `ns` spent in one decode matrix product of float32 rows with `variant`.
#[inline]
pub fn record_f32(variant: Variant, ns: u64) {
    if F32_VARIANTS[F32.index()] == variant {
        F32.record(ns);
    }
}

fn unmeasured(r: usize) -> Choice {
    Choice {
        chosen: v(1, r),
        timings: vec![],
    }
}

/// Ok where the variants are measured, else why not and the rows ahead every loop takes.
fn how() -> Result<(), (&'static str, usize)> {
    static HOW: OnceLock<Result<(), (&'static str, usize)>> = OnceLock::new();
    *HOW.get_or_init(|| {
        let fixed = std::env::var("DECODING_EXPLORER_PREFETCH_ROWS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok());
        if let Some(r) = fixed.filter(|r| *r <= 64) {
            return Err(("fixed by DECODING_EXPLORER_PREFETCH_ROWS", r));
        }
        if !Native::PREFETCHES {
            return Err(("no software prefetch on this target", 0));
        }
        Ok(())
    })
}

/// The thread split's floor: from the default down, the smallest floor F for which 2F
/// multiply-adds (rows of 64 in cache, as stories260K's) split in two take at most 0.9 of
/// the time alone, each floor tried until one does not pay; then `par` uses it. A hand-off
/// to a spinning thread costs what the machine makes it: on an Intel Xeon stories260K's
/// decode at 2 threads ran faster with tasks of 2^13 than of 2^15 (BENCHMARKS.md, "The
/// threads' task floor, measured at start-up", which gives its time too). One thread:
/// nothing to measure. In wasm the default: std has no clock there (`Instant::now` panics,
/// which killed a WebGPU page whose first CPU product was the thread probe's on two).
fn measure_split() -> (Split, f64) {
    const ROW: usize = 64;
    let mut chosen = par::MIN_WORK_PER_TASK;
    if par::thread_count() < 2 || cfg!(target_arch = "wasm32") {
        return (
            Split {
                chosen,
                timings: vec![],
            },
            0.0,
        );
    }
    let start = std::time::Instant::now();
    let x: Vec<f32> = (0..ROW).map(|i| (i as f32 * 0.37).sin()).collect();
    let w: Vec<f32> = (0..2 * SPLIT_FLOORS[0])
        .map(|i| (i % 251) as f32 * 1e-3)
        .collect();
    let mut out = vec![0.0f32; 2 * SPLIT_FLOORS[0] / ROW];
    let mut timings = Vec::new();
    for floor in SPLIT_FLOORS {
        let rows = 2 * floor / ROW;
        let mut pass = |task_floor: usize| {
            par::chunks_with_floor(&mut out[..rows], 1, ROW, task_floor, |first, chunk| {
                for (i, o) in chunk.iter_mut().enumerate() {
                    *o = super::dot(&w[(first + i) * ROW..][..ROW], &x);
                }
            });
        };
        let alone = best_us(|| pass(usize::MAX));
        let split = best_us(|| pass(floor));
        timings.push((floor, alone, split));
        if split > 0.9 * alone {
            break;
        }
        chosen = floor;
    }
    par::set_min_work_per_task(chosen);
    (
        Split { chosen, timings },
        start.elapsed().as_secs_f64() * 1e3,
    )
}

/// The best of 12 batches of 8 calls of `run`, µs a call (after 16 untimed calls, which
/// also wake the thread team).
fn best_us(mut run: impl FnMut()) -> f64 {
    for _ in 0..16 {
        run();
    }
    (0..12)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..8 {
                run();
            }
            t.elapsed().as_secs_f64() * 1e6 / 8.0
        })
        .fold(f64::INFINITY, f64::min)
}

/// The int8 loop timed on a q8 matrix of [`TUNE_BYTES`], rows of 768 (the 110M shape's).
fn measure_int8() -> (Choice, f64) {
    if let Err((_, r)) = how() {
        return (unmeasured(r), 0.0);
    }
    let start = std::time::Instant::now();
    let x: Vec<f32> = (0..TUNE_ROW).map(|i| (i as f32 * 0.37).sin()).collect();
    // bytes of every value (the values do not change the time, only the bytes read),
    // written straight into a q8 matrix's storage
    let rows = TUNE_BYTES / TUNE_ROW;
    let mut q = QTensor::quantize(&[0.0; TUNE_ROW], 1, Precision::Q8, 64);
    q.block_len = rows * TUNE_ROW;
    q.values = (0..rows * TUNE_ROW)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
        .collect();
    q.scales = vec![0.01; rows * TUNE_ROW / 64];
    let acts = QActs::quantize(&x, TUNE_ROW, 64);
    let mut out = vec![0.0f32; rows];
    let int8 = fastest(&INT8_VARIANTS, &q.values, |ahead| {
        int8_rows(&mut out, &q.block(0), 0, TUNE_ROW, &acts, ahead);
        std::hint::black_box(&mut out);
    });
    (int8, start.elapsed().as_secs_f64() * 1e3)
}

/// The fastest of `variants` for `run`, each timed with `bytes` flushed first, best of 2
/// rounds that alternate the variants (a burst of noise hits them all alike).
/// Flushing costs more than the pass, so 2 rounds keep the whole short (BENCHMARKS.md,
/// "Figures behind the code").
fn fastest(variants: &[Variant], bytes: &[u8], mut run: impl FnMut(Variant)) -> Choice {
    let mut best = vec![f64::INFINITY; variants.len()];
    for _ in 0..2 {
        for (b, &var) in best.iter_mut().zip(variants) {
            Native::flush(bytes);
            let t = std::time::Instant::now();
            run(std::hint::black_box(var));
            *b = b.min(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    let i = (0..best.len())
        .min_by(|&a, &b| best[a].total_cmp(&best[b]))
        .unwrap_or(0);
    Choice {
        chosen: variants[i],
        timings: variants.iter().copied().zip(best).collect(),
    }
}
