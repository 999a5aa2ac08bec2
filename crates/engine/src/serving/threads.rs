//! How many threads the page's engine runs on: measured, not assumed. A browser reports its
//! logical processors (`navigator.hardwareConcurrency`), which on a machine with two
//! hardware threads a core is twice its cores; two threads on one core share its SIMD units
//! and a decode gains little or loses (a peer's page once ran 130× slower on every logical
//! processor: REFERENCES.md). So the page times the engine's own product on 1, 2, 4, …
//! threads and takes the fewest within `WITHIN` of the fastest.

use crate::quant::{MatRef, Precision, QTensor, Q8_GROUP};
use crate::serving::roofline::best_per_call;
use crate::{kernels, par};

/// A count within this share of the fastest time counts as fast as it (a further thread
/// must earn its place: it costs a web worker, a stack and power).
pub const WITHIN: f64 = 1.10;

/// The probe's matrix: 2,048 rows of 2,048 weights at q8 (4 MiB of int8 and its scales, the
/// size of a 110M model's largest product, split into chunks over any thread count up to
/// 64). q8 with int8 activations is the page's own decode (compute-bound in wasm: 8 int8
/// products an instruction), about 0.5 ms a call on one thread, so the hand-off to a thread
/// does not decide the count. A float32 product of 4 MiB (the first probe) sat in the cache
/// and took 0.1 ms, where waking a web worker weighs: it read 2 threads no faster than one
/// (0.10 against 0.09–0.11 ms) on runs where the 110M decode was 1.2–1.6× faster on two.
const PROBE_ROWS: usize = 2048;
const PROBE_N: usize = 2048;
/// Every group's scale.
const PROBE_SCALE: f32 = 1e-3;

/// Weight `i`'s int8 value.
fn probe_value(i: usize) -> i8 {
    ((i * 37) % 101) as i8 - 50
}

/// The thread counts worth timing on a browser reporting `logical` processors: powers of
/// two below it, and itself (1, 2, 4, 6 for 6), at most `par::MOST_THREADS`.
pub fn candidates(logical: usize) -> Vec<usize> {
    let top = logical.clamp(1, par::MOST_THREADS);
    let mut out: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|&n| n < top)
        .collect();
    out.push(top);
    out
}

/// The fewest threads whose time (ms, any unit) is within `WITHIN` of the fastest; 1 when
/// nothing was timed. Times that are not finite and positive are left out.
pub fn choose(timed: &[(usize, f64)]) -> usize {
    let ok = || timed.iter().filter(|(_, t)| t.is_finite() && *t > 0.0);
    let Some(best) = ok().map(|&(_, t)| t).min_by(f64::total_cmp) else {
        return 1;
    };
    ok().filter(|&&(_, t)| t <= best * WITHIN)
        .map(|&(n, _)| n)
        .min()
        .unwrap_or(1)
}

/// The probe's weights (made once by the caller, so that every count times the same
/// memory).
pub struct Probe {
    w: QTensor,
    x: Vec<f32>,
    out: Vec<f32>,
}

impl Probe {
    /// The matrix is written straight into q8's storage (int8 values −50..50 in a fixed
    /// pattern, one scale a group): made from float32 weights, its 16 MiB stayed in the
    /// page's wasm memory, which never shrinks (a 78 MB model's page then held 1.42× its
    /// bytes).
    pub fn new() -> Probe {
        let len = PROBE_ROWS * PROBE_N;
        let mut w = QTensor::quantize(&[0.0; Q8_GROUP], 1, Precision::Q8, Q8_GROUP);
        w.block_len = len;
        w.values = (0..len).map(|i| probe_value(i) as u8).collect();
        w.scales = vec![PROBE_SCALE; len / Q8_GROUP];
        Probe {
            w,
            x: (0..PROBE_N).map(|i| (i % 7) as f32 * 0.1).collect(),
            out: vec![0.0; PROBE_ROWS],
        }
    }

    /// Decode's matrix-vector product on the current thread count: the best ms per call
    /// over `rounds` rounds, by the clock `now` (ms). The caller has set the count and
    /// waited for its threads (`par::threads_joined`).
    pub fn ms(&mut self, rounds: usize, now: &dyn Fn() -> f64) -> f64 {
        let Probe { w, x, out } = self;
        best_per_call(rounds, now, &mut || {
            kernels::matmul(out, x, PROBE_N, &[MatRef::Quant(w.block(0))]);
            std::hint::black_box(&*out);
        })
    }
}

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_double_up_to_the_logical_count() {
        assert_eq!(candidates(1), vec![1]);
        assert_eq!(candidates(2), vec![1, 2]);
        assert_eq!(candidates(6), vec![1, 2, 4, 6]);
        assert_eq!(candidates(8), vec![1, 2, 4, 8]);
        assert_eq!(candidates(0), vec![1]);
        assert_eq!(candidates(1000).last(), Some(&par::MOST_THREADS));
    }

    /// Eight logical processors on four cores: eight threads a little faster than four is
    /// not worth four more; a clear gain is; a broken timing is left out.
    #[test]
    fn the_fewest_threads_near_the_fastest_are_chosen() {
        let smt = [(1, 10.0), (2, 5.2), (4, 2.8), (8, 2.7)];
        assert_eq!(choose(&smt), 4);
        assert_eq!(choose(&[(1, 10.0), (2, 5.2), (4, 2.8), (8, 2.0)]), 8);
        assert_eq!(
            choose(&[(1, 1.0), (2, 1.05)]),
            1,
            "a second thread that buys 5 %"
        );
        assert_eq!(choose(&[(1, 10.0), (2, f64::NAN), (4, 0.0)]), 1);
        assert_eq!(choose(&[]), 1);
    }

    /// The probe times real work: a product of 4 MiB takes a measurable time by the clock,
    /// and its output is the product (each row's dot against the same weights in float32,
    /// within the activations' int8 rounding).
    #[test]
    fn the_probe_times_the_product() {
        let start = std::time::Instant::now();
        let now = || start.elapsed().as_secs_f64() * 1e3;
        let mut probe = Probe::new();
        let ms = probe.ms(2, &now);
        assert!(ms > 1e-4 && ms < 1e3, "{ms} ms per product");
        for r in [0, 1, 777, PROBE_ROWS - 1] {
            let exact: f32 = (0..PROBE_N)
                .map(|i| probe_value(r * PROBE_N + i) as f32 * PROBE_SCALE * probe.x[i])
                .sum();
            let tol = 0.02 * exact.abs().max(1.0);
            assert!(
                (probe.out[r] - exact).abs() < tol,
                "row {r}: {} vs {exact}",
                probe.out[r]
            );
        }
    }
}
