//! Kernel variants chosen by measuring on the machine that runs them, not on the machine the
//! code was written on. The int8 matrix-vector loop (`matmul`'s `int8_rows`) can prefetch
//! the weight rows a few rows ahead in software, or leave it to the hardware prefetcher:
//! which is faster depends on the CPU (a single core of one machine streamed q8 110M at
//! 73–78 tok/s without it and 85–87 with two rows ahead; with four it went back to 73), so
//! the first int8 product times each distance on a matrix of [`TUNE_BYTES`] flushed from the
//! caches before every pass, and keeps the fastest for the process (within ≈ 30 ms).
//! Every variant gives the same bits: a prefetch is a hint, the arithmetic is the row's.
//!
//! `DECODING_EXPLORER_PREFETCH_ROWS=n` fixes the choice (benchmarks of one variant, tests).

use crate::quant::{Precision, QActs, QTensor};
use std::sync::OnceLock;

/// The prefetch distances tried, in rows ahead (0: none).
pub const PREFETCH_ROWS: [usize; 3] = [0, 2, 4];
/// Bytes of the matrix each variant streams (q8, rows of 768: the 110M shape's).
pub const TUNE_BYTES: usize = 3 << 20;
const TUNE_ROW: usize = 768;

/// What the tuning chose and what each variant took.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Tuning {
    /// rows ahead the int8 loop prefetches
    pub prefetch_rows: usize,
    /// (rows ahead, best µs of its passes), in `PREFETCH_ROWS` order; empty when fixed
    pub timings: Vec<(usize, f64)>,
    /// how the choice was made: "measured", "fixed by DECODING_EXPLORER_PREFETCH_ROWS", "no
    /// software prefetch on this target"
    pub how: &'static str,
    /// the whole tuning's wall time, ms
    pub took_ms: f64,
}

impl Tuning {
    /// One line for `bench`: "int8 rows: prefetch 2 rows ahead (measured: 0: 812 µs, …)".
    pub fn describe(&self) -> String {
        let ahead = match self.prefetch_rows {
            0 => "no software prefetch".to_string(),
            r => format!("prefetch {r} row{} ahead", if r == 1 { "" } else { "s" }),
        };
        if self.timings.is_empty() {
            return format!("int8 rows: {ahead} ({})", self.how);
        }
        let t: Vec<String> = self
            .timings
            .iter()
            .map(|(r, us)| format!("{r}: {us:.0} µs"))
            .collect();
        format!(
            "int8 rows: {ahead} ({} on {} MB in {:.0} ms; rows ahead {})",
            self.how,
            TUNE_BYTES >> 20,
            self.took_ms,
            t.join(", ")
        )
    }
}

static TUNING: OnceLock<Tuning> = OnceLock::new();

/// The process's choice, measured on first use.
pub fn tuning() -> &'static Tuning {
    TUNING.get_or_init(measure)
}

/// Rows ahead the int8 loop prefetches.
#[inline]
pub fn prefetch_rows() -> usize {
    tuning().prefetch_rows
}

fn measure() -> Tuning {
    let fixed = std::env::var("DECODING_EXPLORER_PREFETCH_ROWS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    if let Some(r) = fixed.filter(|r| *r <= 64) {
        return Tuning {
            prefetch_rows: r,
            timings: vec![],
            how: "fixed by DECODING_EXPLORER_PREFETCH_ROWS",
            took_ms: 0.0,
        };
    }
    if !cfg!(any(kernel = "avx512", kernel = "avx2")) {
        return Tuning {
            prefetch_rows: 0,
            timings: vec![],
            how: "no software prefetch on this target",
            took_ms: 0.0,
        };
    }
    let start = std::time::Instant::now();
    let rows = TUNE_BYTES / TUNE_ROW;
    // Bytes of every value (the values do not change the time, only the bytes read),
    // written straight into a q8 matrix's storage.
    let mut q = QTensor::quantize(&[0.0; TUNE_ROW], 1, Precision::Q8, 64);
    q.block_len = rows * TUNE_ROW;
    q.values = (0..rows * TUNE_ROW)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
        .collect();
    q.scales = vec![0.01; rows * TUNE_ROW / 64];
    let x: Vec<f32> = (0..TUNE_ROW).map(|i| (i as f32 * 0.37).sin()).collect();
    let acts = QActs::quantize(&x, TUNE_ROW, 64);
    let mut out = vec![0.0f32; rows];
    let mut best = [f64::INFINITY; PREFETCH_ROWS.len()];
    // Rounds alternate the variants, so a burst of noise hits them all alike.
    for _ in 0..3 {
        for (b, &ahead) in best.iter_mut().zip(&PREFETCH_ROWS) {
            flush(&q.values);
            let t = std::time::Instant::now();
            super::matmul::int8_rows(&mut out, &q.block(0), 0, TUNE_ROW, &acts, ahead);
            *b = b.min(t.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(&out);
        }
    }
    let i = (0..best.len())
        .min_by(|&a, &b| best[a].total_cmp(&best[b]))
        .unwrap_or(0);
    Tuning {
        prefetch_rows: PREFETCH_ROWS[i],
        timings: PREFETCH_ROWS.iter().copied().zip(best).collect(),
        how: "measured",
        took_ms: start.elapsed().as_secs_f64() * 1e3,
    }
}

/// Evicts `bytes` from every cache level, so a timed pass streams them from memory as a
/// model's weights are (`clflush` a line at a time).
fn flush(bytes: &[u8]) {
    #[cfg(any(kernel = "avx512", kernel = "avx2"))]
    {
        use std::arch::x86_64::{_mm_clflush, _mm_mfence};
        for line in bytes.chunks(64) {
            // SAFETY: the line is within `bytes`; clflush only evicts it.
            unsafe { _mm_clflush(line.as_ptr()) };
        }
        // SAFETY: a fence has no operands.
        unsafe { _mm_mfence() };
    }
    #[cfg(not(any(kernel = "avx512", kernel = "avx2")))]
    let _ = bytes;
}
