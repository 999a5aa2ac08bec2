//! ggml blocks times quantized activations: against the f64 sum of ggml's own dequantized
//! weights times the dequantized activations (the blocks' decoding is checked against the
//! `gguf` package in `tests/gguf_types.rs`), the build's kernels against the plain loops bit
//! for bit, Q8_K's quantization by its definition, and a batch's rows equal to each alone.

use super::*;
use crate::kernels::matmul;
use crate::quant::MatRef;

use super::testing::{random_rows, random_x, KINDS};

/// The activations' values back: q·d (block by block).
fn dequantized_acts(a: &GActRow, per: usize) -> Vec<f64> {
    a.qs.iter()
        .enumerate()
        .map(|(i, &q)| q as f64 * a.d[i / per] as f64)
        .collect()
}

#[test]
fn a_row_is_the_dot_product_of_the_dequantized_weights_and_activations() {
    let n = 512;
    for (k, kind) in KINDS.into_iter().enumerate() {
        let family = kind.family();
        let rows = random_rows(kind, 4, n, 7 + k as u64);
        let x = random_x(n, 100 + k as u64);
        let acts = GActs::quantize(&x, n, family);
        let a = acts.row(0);
        let xd = dequantized_acts(&a, family.block());
        let mut w = vec![0.0f32; n];
        for r in rows.chunks_exact(row_bytes(kind, n)) {
            blocks::dequantize(kind, r, &mut w);
            let want: f64 = w.iter().zip(&xd).map(|(&w, x)| w as f64 * x).sum();
            let scale: f64 = w.iter().zip(&xd).map(|(&w, x)| (w as f64 * x).abs()).sum();
            // Q4_1/Q5_1 add m·s with s = d·Σq rounded to f16 (2⁻¹¹ relative)
            let s_err: f64 = match kind {
                Kind::Q4_1 | Kind::Q5_1 => (0..n / 32)
                    .map(|i| (a.s[i] as f64 * 0.021).abs() / 1024.0)
                    .sum(),
                _ => 0.0,
            };
            let got = row_dot_portable(kind, r, &a);
            let err = (got as f64 - want).abs();
            assert!(err <= 1e-5 * scale + s_err, "{kind:?}: {got} vs {want}");
            assert_eq!(row_dot(kind, r, &a).to_bits(), got.to_bits(), "{kind:?}");
            #[cfg(any(kernel = "avx512", kernel = "avx2"))]
            {
                let avx2 = super::dot::row_dot_with::<super::dot_x86::X86<false>>(kind, r, &a);
                assert_eq!(avx2.to_bits(), got.to_bits(), "{kind:?}: AVX2");
            }
        }
    }
}

#[test]
fn the_build_s_kernels_give_the_plain_loops_bits() {
    super::testing::assert_kernel_bits();
}

/// `quantize_row_q8_K_ref`: the value of largest magnitude maps to −127, d = 1/iscale, every
/// q within half a step of x/d, the sums of each 16.
#[test]
fn activations_quantize_as_ggml_s_q8_k_does() {
    let mut x = random_x(512, 3);
    x[300] = -40.0;
    x[256..300].iter_mut().for_each(|v| *v = 0.0);
    x[..256].iter_mut().for_each(|v| *v = 0.0);
    x[7] = 2.0;
    let a = GActs::quantize(&x, 512, Family::K);
    let r = a.row(0);
    assert_eq!(r.d[0], -2.0 / 127.0);
    assert_eq!(r.qs[7], -127);
    assert!(r.qs[..256]
        .iter()
        .enumerate()
        .all(|(i, &q)| i == 7 || q == 0));
    assert_eq!(r.qs[300], -127);
    for (i, (&q, &v)) in r.qs.iter().zip(&x).enumerate().skip(256) {
        assert!(
            (q as f32 * r.d[1] - v).abs() <= r.d[1].abs() * 0.5001,
            "{i}"
        );
    }
    for (k, &s) in r.bsums.iter().enumerate() {
        let want: i32 = r.qs[16 * k..16 * k + 16].iter().map(|&q| q as i32).sum();
        assert_eq!(s as i32, want);
    }
}

/// A batch's rows give the bits of each row alone (decode's and prefill's paths), and a
/// matrix in ggml blocks multiplies beside a float32 one in one call.
#[test]
fn a_batch_gives_each_row_s_bits_alone() {
    let n = 256;
    for (k, kind) in [Kind::Q4_K, Kind::Q5_K, Kind::Q6_K, Kind::Q5_0]
        .into_iter()
        .enumerate()
    {
        let rows = 24;
        let bytes = random_rows(kind, rows, n, 40 + k as u64);
        let g = GRef {
            kind,
            bytes: &bytes,
            len: rows * n,
            activations: crate::quant::Activations::Int8,
        };
        let other: Vec<f32> = random_x(8 * n, 9);
        let x = random_x(3 * n, 50 + k as u64);
        let ws = [MatRef::Ggml(g), MatRef::F32(&other)];
        let mut all = vec![0.0f32; 3 * (rows + 8)];
        matmul(&mut all, &x, n, &ws);
        for (r, xr) in x.chunks_exact(n).enumerate() {
            let mut one = vec![0.0f32; rows + 8];
            matmul(&mut one, xr, n, &ws);
            assert_eq!(
                &one[..rows],
                &all[r * rows..(r + 1) * rows],
                "{kind:?} row {r}"
            );
            let a = GActs::quantize(xr, n, kind.family());
            assert_eq!(one[5], g.dot(5, n, &a.row(0)), "{kind:?}");
        }
    }
}
