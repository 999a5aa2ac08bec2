//! int8 activations: their quantization by hand, the integer products by hand and against an
//! f64 evaluation, the error bound against float32 activations, and which matrices take them.

use super::*;
use crate::kernels::matmul;

fn q8_of(w: &[i8], scale: f32, g: usize) -> QTensor {
    let mut q = QTensor::quantize(&vec![0.0; w.len()], 1, Precision::Q8, g);
    for (v, &b) in q.values.iter_mut().zip(w) {
        *v = b as u8;
    }
    q.scales.iter_mut().for_each(|s| *s = scale);
    q
}

/// runq.c's `quantize`: d = max|x| / 127, q = round(x / d) with ties away from zero (C's
/// `roundf`), Σq kept per group; a group of zeros gets d = 0 and q = 0.
#[test]
fn activations_quantize_as_runq_c_does() {
    let mut x = vec![0.0f32; 96];
    x[..6].copy_from_slice(&[127.0, 2.5, -2.5, 0.5, -0.5, 1.49]);
    for i in 0..32 {
        x[32 + i] = 2.0 * x[i];
    }
    let a = QActs::quantize(&x, 96, 32);
    assert_eq!(a.scales, vec![1.0, 2.0, 0.0]);
    assert_eq!(&a.q[..6], &[127, 3, -3, 1, -1, 1]);
    assert_eq!(&a.q[32..38], &[127, 3, -3, 1, -1, 1]);
    assert!(a.q[64..].iter().all(|&q| q == 0));
    assert_eq!(a.sums, vec![128, 128, 0]);
    // Two rows of 32 with groups of 32: each row its own scale.
    let b = QActs::quantize(&x[..64], 32, 32);
    assert_eq!(b.row(1).scales, &[2.0]);
    assert_eq!(b.row(1).q[1], 3);
}

/// One Q8 group by hand: w = 2 everywhere (scale 0.5), x = 0, 1, …, 30, 127 (d = 1):
/// Σ q_w·q_x = 2 · (465 + 127) = 1184, times 0.5 · 1 = 592. Q4 by hand: bytes 0x9A (low
/// nibble 10 → 2, high 9 → 1), scale 0.25: (2 · Σx₀…₁₅ + 1 · Σx₁₆…₃₁) · 0.25.
#[test]
fn one_group_by_hand() {
    let mut x: Vec<f32> = (0..32).map(|i| i as f32).collect();
    x[31] = 127.0;
    let a = QActs::quantize(&x, 32, 32);
    let q = q8_of(&[2; 32], 0.5, 32);
    assert_eq!(q.block(0).dot_int8(0, a.row(0)), 592.0);
    assert_eq!(q.block(0).dot_int8_portable(0, a.row(0)), 592.0);
    let mut q4 = QTensor::quantize(&[0.0; 32], 1, Precision::Q4, 32);
    q4.values.iter_mut().for_each(|v| *v = 0x9A);
    q4.scales[0] = 0.25;
    let lo: f32 = x[..16].iter().sum();
    let hi: f32 = x[16..].iter().sum();
    assert_eq!(q4.block(0).dot_int8(0, a.row(0)), (2.0 * lo + hi) * 0.25);
}

/// Rows of many groups against the same integers summed in f64: the float epilogue
/// (d_w·d_x times each group's exact sum, 8 lanes) is within float32 rounding of it.
#[test]
fn products_match_an_f64_evaluation() {
    let (n, g) = (768, 64);
    let w: Vec<i8> = (0..n).map(|i| ((i * 37 + 11) % 255) as i8).collect();
    let mut q = q8_of(&w, 0.0, g);
    for (i, s) in q.scales.iter_mut().enumerate() {
        *s = 0.001 + i as f32 * 0.0007;
    }
    let x: Vec<f32> = (0..n).map(|i| ((i * 53) % 97) as f32 - 48.3).collect();
    let a = QActs::quantize(&x, n, g);
    let mut want = 0.0f64;
    let mut size = 0.0f64;
    for gi in 0..n / g {
        let s: i64 = (gi * g..(gi + 1) * g)
            .map(|k| w[k] as i64 * a.q[k] as i64)
            .sum();
        let term = q.scales[gi] as f64 * a.scales[gi] as f64 * s as f64;
        want += term;
        size += term.abs();
    }
    let got = q.block(0).dot_int8(0, a.row(0)) as f64;
    assert!((got - want).abs() <= 1e-6 * size, "{got} vs {want}");
}

/// int8 activations move a product by at most what rounding x moves it: each |x − q·d| ≤
/// d/2, so |int8 − float32| ≤ Σ_groups |d_w| · Σ|q_w| · d_x / 2 (plus float rounding).
#[test]
fn int8_activations_stay_within_the_rounding_of_x() {
    let w: Vec<f32> = (0..8 * 288)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let x: Vec<f32> = (0..288)
        .map(|i| ((i * 104_729) % 997) as f32 / 300.0 - 1.6)
        .collect();
    for p in [Precision::Q8, Precision::Q4] {
        let q = QTensor::quantize(&w, 1, p, 32);
        let a = QActs::quantize(&x, 288, 32);
        let b = q.block(0);
        for r in 0..8 {
            let (int8, f32s) = (b.dot_int8(r * 288, a.row(0)), b.dot(r * 288, &x));
            let bound: f32 = (0..9)
                .map(|gi| {
                    let k0 = r * 288 + gi * 32;
                    let qsum: i32 = (k0..k0 + 32).map(|k| b.int_at(k).abs()).sum();
                    b.scales[k0 / 32].abs() * qsum as f32 * a.scales[gi] / 2.0
                })
                .sum();
            assert!(
                (int8 - f32s).abs() <= bound * 1.001 + 1e-5,
                "{p} row {r}: {int8} vs {f32s}, bound {bound}"
            );
            assert_ne!(
                int8, f32s,
                "{p} row {r}: the activations were not quantized"
            );
        }
    }
}

/// Rows that start inside a group (stories260K's w2: rows of 172 in groups of 64): each
/// activation row quantized with one scale, d = max|x| / 127 (redone here), and each weight
/// row times it group by group, each group's integers with that group's scale: against the
/// same integers summed in f64, for q8 (groups of 64 and 32) and q4.
#[test]
fn rows_inside_groups_match_an_f64_evaluation() {
    for (p, g, n, rows) in [
        (Precision::Q8, 64, 172, 64),
        (Precision::Q8, 32, 100, 24),
        (Precision::Q4, 32, 172, 16),
    ] {
        let w: Vec<f32> = (0..rows * n)
            .map(|i| ((i * 7919) % 1013) as f32 / 500.0 - 1.0)
            .collect();
        let q = QTensor::quantize(&w, 1, p, g);
        let b = q.block(0);
        assert!(b.int8_shifted_ready(n) && !b.int8_ready(n));
        let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        let d = x.iter().fold(0.0f32, |m, v| m.max(v.abs())) / 127.0;
        let qx: Vec<i64> = x.iter().map(|v| (v / d).round() as i64).collect();
        let mut got = vec![0.0f32; rows];
        matmul(&mut got, &x, n, &[MatRef::Quant(b)]);
        for (i, &got) in got.iter().enumerate() {
            let (mut want, mut size) = (0.0f64, 0.0f64);
            for gi in i * n / g..(i * n + n).div_ceil(g) {
                let ks = (gi * g).max(i * n)..((gi + 1) * g).min(i * n + n);
                let s: i64 = ks.map(|k| b.int_at(k) as i64 * qx[k - i * n]).sum();
                let term = b.scales[gi] as f64 * d as f64 * s as f64;
                (want, size) = (want + term, size + term.abs());
            }
            let got = got as f64;
            assert!(
                (got - want).abs() <= 1e-6 * size,
                "{p} row {i}: {got} vs {want}"
            );
        }
    }
}

/// Which products run in int8: a quantized matrix with groups of 32·k dividing its rows, or
/// rows inside groups where the matrix is whole groups, and `Activations::Int8`. Groups of 8,
/// rows of 172 in a matrix that ends inside a group, and `Activations::F32` keep float32
/// activations (`QRef::dot`'s bits).
#[test]
fn only_ready_int8_matrices_quantize_the_activations() {
    let w: Vec<f32> = (0..4 * 192).map(|i| ((i * 31) % 17) as f32 - 8.0).collect();
    let x: Vec<f32> = (0..192).map(|i| (i as f32 * 0.37).sin()).collect();
    let run = |q: &QTensor, n: usize| {
        let mut out = vec![0.0f32; q.block_len / n];
        matmul(&mut out, &x[..n], n, &[MatRef::Quant(q.block(0))]);
        out
    };
    let f32_path = |q: &QTensor, n: usize| -> Vec<f32> {
        (0..q.block_len / n)
            .map(|r| q.block(0).dot(r * n, &x[..n]))
            .collect()
    };
    let ready = QTensor::quantize(&w, 1, Precision::Q8, 64);
    let a = QActs::quantize(&x, 192, 64);
    let int8: Vec<f32> = (0..4)
        .map(|r| ready.block(0).dot_int8(r * 192, a.row(0)))
        .collect();
    assert_eq!(run(&ready, 192), int8);
    let mut f32_acts = ready.clone();
    f32_acts.activations = Activations::F32;
    assert_eq!(run(&f32_acts, 192), f32_path(&f32_acts, 192));
    let groups_of_8 = QTensor::quantize(&w, 1, Precision::Q8, 8);
    assert!(!groups_of_8.block(0).int8_ready(192));
    assert_eq!(run(&groups_of_8, 192), f32_path(&groups_of_8, 192));
    let straddling = QTensor::quantize(&w[..4 * 172], 1, Precision::Q4, 32);
    assert!(!straddling.block(0).int8_ready(172));
    assert!(!straddling.block(0).int8_shifted_ready(172));
    assert_eq!(run(&straddling, 172), f32_path(&straddling, 172));
}

/// Every kernel gives the portable loops' bits (the wasm test runs the same on simd128).
#[test]
fn int8_kernels_give_the_plain_loops_bits() {
    crate::backend::testing::assert_int8_kernel_bits();
}
