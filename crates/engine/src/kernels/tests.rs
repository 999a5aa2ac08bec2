//! The kernels against their reference: every SIMD path's bits, the exp, the softmax.

use super::matmul::dot_rows_into;
use super::simd::{Isa, Native, Portable};
use super::*;

#[test]
fn rows_kernel_gives_one_dot_a_rows_bits() {
    for (a, b) in crate::backend::testing::dot_cases() {
        let n = a.len();
        if n == 0 {
            continue;
        }
        // Seven input rows (a group of four and three more), each a shifted copy of b.
        let x: Vec<f32> = (0..7)
            .flat_map(|r| b[..n].iter().map(move |v| v * (1.0 + r as f32 * 0.1)))
            .collect();
        let mut out = vec![0.0f32; 7];
        dot_rows_into(&mut out, &a, &x, n);
        for (r, o) in out.iter().enumerate() {
            assert_eq!(
                o.to_bits(),
                dot_portable(&a, &x[r * n..(r + 1) * n]).to_bits(),
                "n = {n}, row {r}"
            );
        }
    }
}

/// Decode's matrix-vector product (`testing::assert_matvec_bits`; wasm runs it too).
#[test]
fn decode_rows_give_one_dot_a_rows_bits() {
    crate::backend::testing::assert_matvec_bits();
}

/// Attention weights and outputs, 1 to 8 heads at once (`testing::assert_attention_bits`;
/// wasm runs it too).
#[test]
fn attention_gives_one_dot_a_positions_bits() {
    crate::backend::testing::assert_attention_bits();
}

/// The build's attention scores (eight positions at a time with AVX-512, four in wasm) give
/// the reference loops' bits: head sizes below, at and above the kernels' 8- and 32-wide
/// steps (with tails), 0 to 40 positions, the head's keys at an offset in rows of several
/// heads.
#[test]
fn scores_kernel_gives_one_dot_a_positions_bits() {
    let mut seed = 7u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
    };
    for hs in [1, 3, 8, 12, 16, 24, 32, 40, 48, 64] {
        let stride = 3 * hs + 5;
        let keys: Vec<f32> = (0..41 * stride).map(|_| next()).collect();
        let q: Vec<f32> = (0..hs).map(|_| next()).collect();
        for positions in 0..=40 {
            let offset = hs + 2;
            let scale = 1.0 / (hs as f32).sqrt();
            let (mut want, mut got) = (vec![0.0f32; positions], vec![0.0f32; positions]);
            Portable::scores(&mut want, &q, &keys[offset..], stride, scale);
            Native::scores(&mut got, &q, &keys[offset..], stride, scale);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "hs = {hs}, {positions} positions");
        }
    }
}

/// Softmax's exp pass (sixteen lanes with AVX-512) gives the scalar `exp`'s bits: every
/// length 0 to 40 (the tail), values across the clamp and the cut to 0 at −87.33, NaN,
/// infinities, zeros of both signs and subnormals, shifts of 0, a maximum and NaN.
#[test]
fn exp_pass_gives_the_scalar_exp_bits() {
    let special = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        -1e-40,
        -87.33,
        -87.329_99,
        -87.330_01,
        88.72,
        88.73,
        -103.0,
    ];
    let mut seed = 11u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 * 240.0 - 140.0
    };
    for len in 0..=40 {
        let x: Vec<f32> = (0..len)
            .map(|i| {
                if i % 3 == 0 {
                    special[i / 3 % special.len()]
                } else {
                    next()
                }
            })
            .collect();
        for shift in [0.0, 3.5, -20.0, f32::NAN] {
            let mut got = x.clone();
            Native::exp_shifted(&mut got, shift);
            for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
                let want = exp(v - shift);
                assert_eq!(
                    g.to_bits(),
                    want.to_bits(),
                    "len {len}, x[{i}] = {v}, shift {shift}"
                );
            }
        }
    }
}

#[test]
fn dot_kernel_gives_the_portable_bits() {
    crate::backend::testing::assert_dot_kernel_bits(dot);
    crate::backend::testing::assert_dot_kernel_bits(Native::dot_streamed);
    crate::backend::testing::assert_dot_kernel_bits(Native::dot_led);
}

#[test]
fn dot_matches_naive_sum_closely() {
    for n in [0, 1, 7, 31, 32, 33, 100, 1000] {
        let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
        let exact: f64 = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64).sum();
        assert!((dot(&a, &b) as f64 - exact).abs() < 1e-4, "n = {n}");
    }
}

#[test]
fn exp_is_within_two_ulp_of_libm() {
    let mut worst = 0.0f64;
    let mut x = -87.0f32;
    while x < 88.0 {
        let (got, want) = (exp(x) as f64, (x as f64).exp());
        worst = worst.max(((got - want) / want).abs());
        x += 0.0137;
    }
    assert!(worst < 2.5e-7, "worst relative error {worst}");
    assert_eq!(exp(0.0), 1.0);
    // 2^k by the exponent bits is the float-to-int conversion's, at every k (each
    // power of two in range is hit exactly at x = k·ln 2, rounding aside) and at the ends.
    for k in -126..=128i32 {
        for x in [
            k as f32 * std::f32::consts::LN_2,
            -87.33,
            88.72,
            -87.0,
            88.0,
        ] {
            let xc = x.clamp(-87.33, 88.72);
            let kf = (xc * std::f32::consts::LOG2_E + 0.5).floor();
            let by_cast = f32::from_bits(((kf as i32 + 127) as u32) << 23);
            let magic = (kf + 12_582_912.0f32).to_bits().wrapping_sub(0x4b40_0000);
            assert_eq!(
                f32::from_bits(magic.wrapping_add(127) << 23).to_bits(),
                by_cast.to_bits(),
                "x = {x}"
            );
        }
    }
    assert!(exp(f32::NAN).is_nan());
    assert_eq!(exp(-100.0), 0.0);
    assert_eq!(exp(f32::NEG_INFINITY), 0.0);
}

/// The chunked maximum is the running one, ties of ±0 aside (x − (+0) and x − (−0) are
/// equal but for x = −0, and exp gives 1 for both): over lengths around its chunk, with
/// NaNs and infinities among the values.
#[test]
fn max_is_the_running_maximum() {
    for (a, _) in crate::backend::testing::dot_cases() {
        for n in 0..=a.len().min(40) {
            let v = &a[..n];
            let want = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(max(v), want, "n = {n}");
        }
    }
    let mut v: Vec<f32> = (0..37).map(|i| (i as f32 * 0.7).sin()).collect();
    v[20] = f32::NAN;
    v[33] = 5.0;
    assert_eq!(max(&v), 5.0);
    v[3] = f32::INFINITY;
    assert_eq!(max(&v), f32::INFINITY);
    // All NaN: the running maximum stays at its start, −∞.
    assert_eq!(max(&[f32::NAN; 17]), f32::NEG_INFINITY);
    assert_eq!(max(&[]), f32::NEG_INFINITY);
}

#[test]
fn softmax_of_lesson_example() {
    // z = [2, 1, 0.1] -> top mass 0.659 (lesson 10, section 3).
    let mut z = [2.0f32, 1.0, 0.1];
    softmax(&mut z);
    assert!((z[0] - 0.6590).abs() < 1e-4);
    assert!((z.iter().sum::<f32>() - 1.0).abs() < 1e-6);
}

#[test]
fn rmsnorm_of_constant_vector_is_weight() {
    let x = [3.0f32; 4];
    let w = [1.0, 2.0, 3.0, 4.0];
    let mut o = [0.0; 4];
    rmsnorm(&mut o, &x, &w, 1e-5);
    for (o, w) in o.iter().zip(w) {
        assert!((o - w).abs() < 1e-5);
    }
}

#[test]
fn batched_matmul_equals_matmul_per_row() {
    let (n, d, t) = (37, 53, 5);
    let w: Vec<f32> = (0..n * d)
        .map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0)
        .collect();
    let x: Vec<f32> = (0..n * t)
        .map(|i| ((i * 104729) % 97) as f32 / 48.0 - 1.0)
        .collect();
    let mut batch = vec![0.0; t * d];
    matmul(&mut batch, &x, n, &[(&w).into()]);
    for tok in 0..t {
        let mut row = vec![0.0; d];
        matmul(&mut row, &x[tok * n..(tok + 1) * n], n, &[(&w).into()]);
        assert_eq!(row, batch[tok * d..(tok + 1) * d]);
        // Against a plain f64 sum, so the batched layout is checked independently.
        for (i, &got) in row.iter().enumerate() {
            let want: f64 = (0..n)
                .map(|j| w[i * n + j] as f64 * x[tok * n + j] as f64)
                .sum();
            assert!((got as f64 - want).abs() < 1e-4, "row {tok}, output {i}");
        }
    }
    // Two matrices: their (t, d) products one after the other.
    let w2: Vec<f32> = w.iter().map(|v| v * 0.5 - 0.25).collect();
    let mut both = vec![0.0; 2 * t * d];
    matmul(&mut both, &x, n, &[(&w).into(), (&w2).into()]);
    let mut second = vec![0.0; t * d];
    matmul(&mut second, &x, n, &[(&w2).into()]);
    assert_eq!(both[..t * d], batch[..]);
    assert_eq!(both[t * d..], second[..]);
}

#[test]
fn rope_at_position_zero_is_identity_and_preserves_norm() {
    let table = RopeTable::new(8, 16, 10000.0);
    let v0: Vec<f32> = (0..16).map(|i| i as f32 - 4.0).collect();
    let mut v = v0.clone();
    let (c, s) = table.at(0);
    rope(&mut v, 8, c, s);
    assert_eq!(v, v0);
    let (c, s) = table.at(5);
    rope(&mut v, 8, c, s);
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>();
    assert!((norm(&v) - norm(&v0)).abs() < 1e-3);
    assert_ne!(v, v0);
}

/// Every variant the tuner may choose (streams side by side, prefetch distances) gives the
/// reference bits (a prefetch is only a hint, the order of rows changes no row's sum), in
/// decode and in a batch of 3, for q8 and q4 and float32 rows, 37 rows (runs of unequal
/// length); and a measured choice is the fastest of what it timed.
#[test]
fn every_decode_variant_gives_the_reference_bits() {
    use super::tune::{F32_VARIANTS, INT8_VARIANTS};
    use crate::quant::{Precision, QActs, QTensor};
    let (rows, n) = (37, 768);
    let w: Vec<f32> = (0..rows * n)
        .map(|i| ((i * 7919) % 1013) as f32 / 500.0 - 1.0)
        .collect();
    let x: Vec<f32> = (0..3 * n)
        .map(|i| ((i * 31) % 97) as f32 / 40.0 - 1.2)
        .collect();
    for p in [Precision::Q8, Precision::Q4] {
        let q = QTensor::quantize(&w, 1, p, 64);
        let b = q.block(0);
        for t in [1, 3] {
            let acts = QActs::quantize(&x[..t * n], n, q.group);
            let want: Vec<u32> = (0..rows)
                .flat_map(|i| (0..t).map(move |r| (i, r)))
                .map(|(i, r)| b.dot_int8_portable(i * n, acts.row(r)).to_bits())
                .collect();
            for v in INT8_VARIANTS {
                let mut out = vec![0.0f32; rows * t];
                super::rows::int8_rows(&mut out, &b, 0, n, &acts, v);
                let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, want, "{p}, {t} input rows, {v}");
            }
        }
    }
    let xs = &x[..n];
    let want: Vec<u32> = w
        .chunks(n)
        .map(|r| crate::kernels::dot(r, xs).to_bits())
        .collect();
    for &v in F32_VARIANTS {
        let mut out = vec![0.0f32; rows];
        super::rows::f32_rows(&mut out, &w, xs, v);
        let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "f32, {v}");
    }
    let t = super::tune::tuning();
    if t.how.starts_with("measured") {
        let c = &t.int8;
        let timed: Vec<_> = c.timings.iter().map(|(v, _)| *v).collect();
        assert_eq!(&timed[..], &INT8_VARIANTS[..]);
        assert!(c.timings.iter().all(|(_, us)| us.is_finite() && *us > 0.0));
        let best = c.timings.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert_eq!(c.chosen, best.0, "{}", t.describe());
    }
    // The thread split: the smallest floor whose split paid, each tried from the default
    // down until one did not; `par` uses it.
    let s = &t.split;
    assert!(super::tune::SPLIT_FLOORS.contains(&s.chosen));
    assert_eq!(crate::par::min_work_per_task(), s.chosen);
    if crate::par::thread_count() >= 2 {
        let paid: Vec<usize> = s
            .timings
            .iter()
            .take_while(|(_, alone, split)| *split <= 0.9 * alone)
            .map(|(f, _, _)| *f)
            .collect();
        let tried: Vec<usize> = s.timings.iter().map(|(f, _, _)| *f).collect();
        assert_eq!(tried[..], super::tune::SPLIT_FLOORS[..tried.len()]);
        assert_eq!(
            s.chosen,
            paid.last().copied().unwrap_or(1 << 15),
            "{}",
            t.describe()
        );
        assert!(paid.len() == tried.len() - 1 || paid.len() == tried.len());
    } else {
        assert!(s.timings.is_empty());
    }
}

/// A trial on the decode: untimed warm steps, then each variant a step in turn, and the one
/// whose best step took least kept (an outlier step does not decide); a trial in which
/// some variant recorded nothing starts over, dormant if none recorded anything.
#[test]
fn a_trial_keeps_the_variant_of_least_time() {
    use super::trial::{Trial, WARM_STEPS};
    const N: usize = 5;
    let trial: Trial<N> = Trial::new(3 * N);
    // the slowest is the first variant, the fastest the last
    let cost = |i: usize| 1000 + 100 * ((i + 1) % N) as u64;
    let mut seen = Vec::new();
    assert!(!trial.timing(), "no product seen yet");
    for step in 0..trial.steps_to_choose() - 1 {
        trial.step();
        let i = trial.index();
        // timed from the first warm step's product on
        assert_eq!(trial.timing(), step > 0, "step {step}");
        if step >= WARM_STEPS {
            seen.push(i);
        }
        // the warm steps' time is not counted; the fastest variant's first step is slow
        let outlier = step < WARM_STEPS || (step == WARM_STEPS + N - 1);
        trial.record(cost(i) + if outlier { 1_000_000 } else { 0 });
    }
    let want: Vec<usize> = (0..3 * N).map(|k| k % N).collect();
    assert_eq!(seen, want);
    assert!(trial.open());
    trial.step();
    assert!(!trial.timing());
    let (kept, us) = *trial.chosen().expect("chosen after the trial");
    assert_eq!(kept, N - 1);
    assert_eq!(us[0], 1.1, "the slowest's best step, µs");
    trial.step();
    assert_eq!(trial.index(), kept, "the choice holds");

    // a process whose steps never do the work chooses nothing and tries again, dormant:
    // its steps no longer count as timed (the thread governor decides them) …
    let idle: Trial<N> = Trial::new(N);
    assert!(!idle.timing(), "no product seen yet");
    for _ in 0..idle.steps_to_choose() {
        idle.step();
    }
    assert!(idle.open());
    assert!(!idle.timing(), "a whole round without the work");
    assert_eq!(idle.index(), 0);
    // … until the work comes (another model): then a whole round is timed and chosen
    idle.record(5000);
    assert!(idle.timing());
    for _ in 0..idle.steps_to_choose() {
        idle.step();
        idle.record(2000 - 10 * idle.index() as u64);
    }
    assert_eq!(idle.chosen().map(|c| c.0), Some(N - 1));
    assert!(!idle.timing());
}
