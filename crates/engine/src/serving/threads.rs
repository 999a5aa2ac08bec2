//! How many threads the page's engine runs on: measured, not assumed. A browser reports its
//! logical processors (`navigator.hardwareConcurrency`), which on a machine with two
//! hardware threads a core is twice its cores; two threads on one core share its SIMD units
//! and a decode gains little or loses (a peer's page once ran 130× slower on every logical
//! processor: REFERENCES.md). So the page times the engine's own product on 1, 2, 4, …
//! threads and takes the fewest within `WITHIN` of the fastest.

use crate::quant::MatRef;
use crate::serving::roofline::best_per_call;
use crate::{kernels, par};

/// A count within this share of the fastest time counts as fast as it (a further thread
/// must earn its place: it costs a web worker, a stack and power).
pub const WITHIN: f64 = 1.10;

/// The probe's matrix: 1,024 rows of 1,024 floats (4 MiB, a decode's product of a 100M
/// model's size, split into chunks over any thread count up to 64).
const PROBE_ROWS: usize = 1024;
const PROBE_N: usize = 1024;

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

/// The engine's matrix-vector product (decode's shape) on the current thread count: the
/// best ms per call over `rounds` rounds, by the clock `now` (ms). The caller has set the
/// count and waited for its threads (`par::threads_joined`).
pub fn probe_ms(rounds: usize, now: &dyn Fn() -> f64) -> f64 {
    let w: Vec<f32> = (0..PROBE_ROWS * PROBE_N)
        .map(|i| ((i * 37) % 101) as f32 * 1e-3 - 0.05)
        .collect();
    let x: Vec<f32> = (0..PROBE_N).map(|i| (i % 7) as f32 * 0.1).collect();
    let mut out = vec![0.0f32; PROBE_ROWS];
    best_per_call(rounds, now, &mut || {
        kernels::matmul(&mut out, &x, PROBE_N, &[MatRef::F32(&w)]);
        std::hint::black_box(&out);
    })
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

    /// The probe times real work: a product of 4 MiB takes a measurable time by the clock.
    #[test]
    fn the_probe_times_the_product() {
        let start = std::time::Instant::now();
        let now = || start.elapsed().as_secs_f64() * 1e3;
        let ms = probe_ms(2, &now);
        assert!(ms > 1e-4 && ms < 1e3, "{ms} ms per product");
    }
}
