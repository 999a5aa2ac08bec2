//! Q8 and Q4 against export.py and GGML, the row products against the dequantized ones.

use super::*;
use crate::kernels::dot_portable;

fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

/// Q8 by hand: one group of 4 with max 1.27 → d = 0.01, q = round(w / d) half to even.
#[test]
fn q8_follows_export_py() {
    let w = [1.27f32, -0.635, 0.005, 0.0];
    let q = QTensor::quantize(&w, 1, Precision::Q8, 4);
    assert_eq!(q.scales, vec![1.27 / 127.0]);
    let ints: Vec<i32> = (0..4).map(|k| q.block(0).int_at(k)).collect();
    // -0.635/0.01 = -63.5 → -64 (even); 0.005/0.01 = 0.5 → 0 (even)
    assert_eq!(ints, vec![127, -64, 0, 0]);
    assert_eq!(q.values.len(), 4);
}

/// Q4 by hand, GGML's rule: m = −2 (largest magnitude, its sign), d = m / −8 = 0.25,
/// q = min(15, trunc(w/d + 8.5)); element j low nibble, j + 16 high nibble.
#[test]
fn q4_follows_ggml() {
    let mut w = vec![0.0f32; 32];
    w[0] = -2.0;
    w[1] = 1.0;
    w[16] = 0.3;
    w[31] = 1.9;
    let q = QTensor::quantize(&w, 1, Precision::Q4, 0);
    assert_eq!(q.scales, vec![0.25]);
    // -2/0.25 = -8 → trunc(0.5) = 0 → int -8; 1/0.25 = 4 → trunc(12.5)=12 → 4;
    // 0.3/0.25 = 1.2 → trunc(9.7)=9 → 1; 1.9/0.25 = 7.6 → trunc(16.1)=16 → min 15 → 7.
    assert_eq!(q.values[0], 9 << 4, "0 low, 9 high");
    assert_eq!(q.values[1], 12 | (8 << 4));
    assert_eq!(q.values[15], 8 | (15 << 4));
    let b = q.block(0);
    assert_eq!(
        [b.int_at(0), b.int_at(1), b.int_at(16), b.int_at(31)],
        [-8, 4, 1, 7]
    );
    assert_eq!(b.weight(31), 1.75);
}

/// The quantized row product is the float32 product of the dequantized weights, for
/// rows aligned with the groups and rows straddling them (stories260K's w2: 64 × 172 with
/// groups of 64 and of 32), in every block.
#[test]
fn row_products_equal_the_dequantized_products_for_straddling_rows() {
    for (rows, n, p, g) in [
        (64, 172, Precision::Q8, 64),
        (64, 172, Precision::Q4, 32),
        (32, 64, Precision::Q8, 64),
        (32, 64, Precision::Q4, 32),
        (5, 7, Precision::Q8, 4), // a padded last group
        (3, 9, Precision::Q4, 32),
    ] {
        let w = values(2 * rows * n, 7);
        let q = QTensor::quantize(&w, 2, p, g);
        let deq = q.dequantize();
        let x = values(n, 9);
        for b in 0..2 {
            for r in 0..rows {
                let got = q.block(b).dot(r * n, &x);
                let row = &deq[b * rows * n + r * n..][..n];
                let want = dot_portable(row, &x);
                let scale: f32 = row.iter().zip(&x).map(|(a, b)| (a * b).abs()).sum();
                assert!(
                    (got - want).abs() <= 1e-5 * scale.max(1.0),
                    "{p} {rows}x{n} block {b} row {r}: {got} vs {want}"
                );
            }
        }
    }
}

/// The SIMD row kernels give the bits of the plain loops, for rows of whole groups and
/// rows straddling them (the wasm test runs the same check on simd128).
#[test]
fn row_kernels_give_the_plain_loops_bits() {
    crate::backend::testing::assert_quant_kernel_bits();
}

/// Quantization error is within half a step of each group's scale, and the sizes are
/// those of the formats: Q8 1 byte + 4 per group, Q4 16 + 4 bytes per 32.
#[test]
fn errors_are_within_half_a_step_and_sizes_are_the_formats() {
    let w = values(64 * 172, 3);
    for (p, g) in [(Precision::Q8, 64), (Precision::Q4, 32)] {
        let q = QTensor::quantize(&w, 1, p, g);
        let deq = q.dequantize();
        for (k, (a, b)) in w.iter().zip(&deq).enumerate() {
            let d = q.scales[k / q.group].abs();
            // Q4's top step is clipped (q ≤ 15): up to one step there.
            let bound = if p == Precision::Q4 { d } else { 0.5 * d };
            assert!((a - b).abs() <= bound * 1.0001, "{p} {k}: {a} vs {b}");
        }
        let expect = match p {
            Precision::Q8 => 64 * 172 + 4 * 172,
            _ => 64 * 172 / 32 * 20,
        };
        assert_eq!(q.bytes(), expect);
    }
}

#[test]
fn a_precision_has_one_name() {
    let names: Vec<&str> = Precision::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["f32", "f16", "q8", "q4"]);
    for p in Precision::ALL {
        assert_eq!(Precision::parse(p.name()), Ok(p));
        assert_eq!(p.to_string(), p.name());
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            format!("{:?}", p.name())
        );
    }
    // Exactly a name: no case folding, no spaces.
    assert!(Precision::parse("Q8").is_err());
    assert!(Precision::parse("ggml").is_err());
    assert_eq!(Precision::Ggml.to_string(), "ggml");
    assert_eq!(
        Precision::parse("q5"),
        Err("precision must be f32, f16, q8 or q4, not \"q5\"".to_string())
    );
}

/// IEEE half by hand: 1/3 is 0x3555 (1.0101010101 × 2⁻², the next bit 0: rounded down);
/// 1 + 2⁻¹¹ is a tie between 1 and 1 + 2⁻¹⁰, to even: 1; 1 + 3·2⁻¹¹ ties up to 1 + 2⁻⁹;
/// 65520 overflows to infinity (65504 is the largest), 2⁻²⁴ is the smallest subnormal and
/// 2⁻²⁶ rounds to 0. Widening back is exact.
#[test]
fn f16_rounds_to_nearest_even_and_widens_exactly() {
    let w = [
        1.0f32 / 3.0,
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        65504.0,
        65520.0,
        2f32.powi(-24),
        2f32.powi(-26),
        -2.5,
    ];
    let t = Tensor::F32(w.to_vec().into()).at(Precision::F16, 1, 64);
    let Tensor::F16(h) = &t else { panic!("{t:?}") };
    let bits: Vec<u16> = h.iter().map(|x| x.to_bits()).collect();
    assert_eq!(
        bits,
        [0x3555, 0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0001, 0x0000, 0xc100]
    );
    let back = t.to_f32();
    assert_eq!(back[0], 0.333_251_95); // 0x3555 = 1365/4096
    assert_eq!(back[2], 1.0 + 2f32.powi(-9));
    assert_eq!(back[5], 2f32.powi(-24));
    assert_eq!(t.bytes(), 16, "two bytes a weight");
    let mut row = [0.0f32; 4];
    t.block(1, 2).row_into(0, &mut row);
    assert_eq!(row[..], back[4..]);
}

/// The f16 matrix product is the float32 one on the widened weights, bit for bit, for one
/// input row (decode) and a batch, alone and stacked with float32 matrices.
#[test]
fn f16_products_are_the_float32_products_of_the_rounded_weights() {
    let n = 40;
    let x = values(3 * n, 9);
    let w = values(23 * n, 4);
    let h = Tensor::F32(w.clone().into()).at(Precision::F16, 1, 64);
    let rounded = h.to_f32().into_owned();
    let other = values(5 * n, 6);
    for t in [1, 3] {
        let xs = &x[..t * n];
        let mut got = vec![0.0f32; t * 28];
        crate::kernels::matmul(&mut got, xs, n, &[h.block(0, 1), (&other).into()]);
        let mut want = vec![0.0f32; t * 28];
        crate::kernels::matmul(&mut want, xs, n, &[(&rounded).into(), (&other).into()]);
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "t = {t}"
        );
        // and the rounding moved the products off the float32 weights' (it is not a copy)
        let mut exact = vec![0.0f32; t * 28];
        crate::kernels::matmul(&mut exact, xs, n, &[(&w).into(), (&other).into()]);
        assert_ne!(got, exact);
    }
}

/// The page's widening (`widen_portable`) is `half`'s conversion (an independent
/// implementation, the native one), bit for bit, for every one of the 65,536 halves:
/// normals, subnormals, ±0, ±∞ and NaNs with their payload.
#[test]
fn widening_matches_half_for_every_half() {
    let all: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).collect();
    let mut got = vec![0.0f32; all.len()];
    widen_portable(&all, &mut got);
    for (h, g) in all.iter().zip(&got) {
        assert_eq!(g.to_bits(), h.to_f32().to_bits(), "{:#06x}", h.to_bits());
    }
}
