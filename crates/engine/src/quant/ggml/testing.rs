//! Random blocks of every type and the kernels' bits against the plain loops, for this
//! module's tests and for `tests/wasm_seeded.rs` (simd128 in the page).

use super::*;
use rand_chacha::rand_core::{RngCore, SeedableRng};

pub const KINDS: [Kind; 8] = [
    Kind::Q4_K,
    Kind::Q5_K,
    Kind::Q6_K,
    Kind::Q8_0,
    Kind::Q4_0,
    Kind::Q4_1,
    Kind::Q5_0,
    Kind::Q5_1,
];

/// `rows` rows of `n` weights of random blocks of `kind`, their f16 scales finite (0.001 to
/// 0.03; a minimum or offset up to 0.02), every other byte random.
pub fn random_rows(kind: Kind, rows: usize, n: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut bytes = vec![0u8; row_bytes(kind, n) * rows];
    rng.fill_bytes(&mut bytes);
    let (_, size) = kind.block();
    let fields: &[usize] = match kind {
        Kind::Q6_K => &[208],
        Kind::Q4_1 | Kind::Q5_1 | Kind::Q4_K | Kind::Q5_K => &[0, 2],
        _ => &[0],
    };
    for b in bytes.chunks_exact_mut(size as usize) {
        for (i, &at) in fields.iter().enumerate() {
            let v = (rng.next_u32() % 1000) as f32 / 1000.0 * [0.03, 0.02][i] + 0.001;
            b[at..at + 2].copy_from_slice(&half::f16::from_f32(v).to_le_bytes());
        }
    }
    bytes
}

pub fn random_x(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..len)
        .map(|i| {
            let u = (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            // a few outliers, as real activations have
            if i % 97 == 5 {
                20.0 * u
            } else {
                u
            }
        })
        .collect()
}

/// The build's kernels (`row_dot`, and a batch's `rows_dot`) give the plain loops' bits on
/// random rows of every type.
pub fn assert_kernel_bits() {
    let n = 768;
    for (k, kind) in KINDS.into_iter().enumerate() {
        let rows = random_rows(kind, 6, n, 300 + k as u64);
        let x = random_x(3 * n, 400 + k as u64);
        let acts = GActs::quantize(&x, n, kind.family());
        let all: Vec<GActRow> = (0..3).map(|r| acts.row(r)).collect();
        for w in rows.chunks_exact(row_bytes(kind, n)) {
            let want: Vec<u32> = all
                .iter()
                .map(|a| row_dot_portable(kind, w, a).to_bits())
                .collect();
            let one: Vec<u32> = all.iter().map(|a| row_dot(kind, w, a).to_bits()).collect();
            assert_eq!(one, want, "{kind:?}");
            let mut batch = [0.0f32; 3];
            rows_dot(kind, w, &all, &mut batch);
            assert_eq!(batch.map(f32::to_bits).to_vec(), want, "{kind:?}: a batch");
        }
    }
}
