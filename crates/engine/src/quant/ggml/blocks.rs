//! ggml's tensor blocks decoded to float32 the way ggml itself dequantizes them: the block
//! layouts of `ggml-common.h` (`block_q4_0` … `block_q6_K`, QK_K = 256) and the arithmetic of
//! `ggml-quants.c`'s `dequantize_row_*`, operation for operation, so a value is the bits
//! llama.cpp's reference (and the `gguf` Python package's `quants.dequantize`, which the
//! tests compare against block by block) computes.
//!
//! | type | weights a block | bytes | layout (little-endian) | value |
//! |---|---|---|---|---|
//! | F32, F16, BF16 | 1 | 4, 2, 2 | the number | BF16: its bits << 16 |
//! | Q8_0 | 32 | 34 | d: f16, qs: 32 × i8 | qs·d |
//! | Q4_0 | 32 | 18 | d, qs: 16 bytes of nibbles | (nibble − 8)·d |
//! | Q4_1 | 32 | 20 | d, m: f16, qs: 16 | nibble·d + m |
//! | Q5_0 | 32 | 22 | d, qh: u32 (the fifth bits), qs: 16 | (nibble \| bit << 4 − 16)·d |
//! | Q5_1 | 32 | 24 | d, m, qh, qs | (nibble \| bit << 4)·d + m |
//! | Q4_K | 256 | 144 | d, dmin: f16, scales: 12 (eight 6-bit scales and mins), qs: 128 | (d·sc)·nibble − dmin·m |
//! | Q5_K | 256 | 176 | d, dmin, scales: 12, qh: 32, qs: 128 | (d·sc)·(nibble \| bit << 4) − dmin·m |
//! | Q6_K | 256 | 210 | ql: 128, qh: 64, scales: 16 × i8, d: f16 | (d·sc)·(6-bit − 32) |
//!
//! In Q4_0/Q4_1/Q5_0/Q5_1 byte j's low nibble is weight j and its high nibble weight j + 16.
//! In Q4_K/Q5_K each 64 weights take 32 bytes of `qs`: low nibbles the first 32 (sub-block
//! 2i), high nibbles the next (2i + 1), each sub-block of 32 with its own scale and min.

use super::Kind;

/// `ggml_fp16_to_fp32` of the two bytes at `i`.
#[inline]
pub(super) fn f16_at(b: &[u8], i: usize) -> f32 {
    half::f16::from_le_bytes([b[i], b[i + 1]]).to_f32()
}

/// `bytes` (whole blocks of `kind`) decoded into `out` (as many weights as the blocks hold).
pub fn dequantize(kind: Kind, bytes: &[u8], out: &mut [f32]) {
    let (per, size) = kind.block();
    let blocks = bytes.chunks_exact(size as usize);
    for (b, y) in blocks.zip(out.chunks_exact_mut(per as usize)) {
        match kind {
            Kind::F32 => y[0] = f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            Kind::F16 => y[0] = f16_at(b, 0),
            Kind::BF16 => y[0] = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16),
            Kind::Q8_0 | Kind::Q4_0 | Kind::Q4_1 | Kind::Q5_0 | Kind::Q5_1 => {
                let (w, d, m) = legacy_values(kind, b);
                for (y, &w) in y.iter_mut().zip(&w) {
                    *y = match m {
                        Some(m) => w as f32 * d + m,
                        None => w as f32 * d,
                    };
                }
            }
            Kind::Q4_K | Kind::Q5_K => k_4_5(kind, b, y),
            Kind::Q6_K => k_6(b, y),
        }
    }
}

/// A 32-weight block's integers (centred: Q4_0's nibble − 8, Q5_0's 5 bits − 16; Q8_0's
/// int8; Q4_1's and Q5_1's as they are), its scale d and Q4_1's/Q5_1's offset m: weight j
/// is w_j·d (+ m) (`dequantize_row_q{8,4,5}_{0,1}`). In Q4/Q5 byte j's low nibble is weight
/// j and its high nibble weight j + 16; Q5's fifth bits: bit j of `qh` weight j's, bit
/// j + 16 weight j + 16's. The plain-loop dot product reads the same integers (`dot.rs`).
pub(super) fn legacy_values(kind: Kind, b: &[u8]) -> ([i32; 32], f32, Option<f32>) {
    let d = f16_at(b, 0);
    let mut w = [0i32; 32];
    let m = match kind {
        Kind::Q8_0 => {
            for (w, &v) in w.iter_mut().zip(&b[2..34]) {
                *w = v as i8 as i32;
            }
            None
        }
        Kind::Q4_0 | Kind::Q4_1 => {
            let (qs, m, centre) = match kind {
                Kind::Q4_1 => (&b[4..20], Some(f16_at(b, 2)), 0),
                _ => (&b[2..18], None, 8),
            };
            for (j, &v) in qs.iter().enumerate() {
                (w[j], w[j + 16]) = ((v & 0x0F) as i32 - centre, (v >> 4) as i32 - centre);
            }
            m
        }
        _ => {
            let (at, m, centre) = match kind {
                Kind::Q5_1 => (4, Some(f16_at(b, 2)), 0),
                _ => (2, None, 16),
            };
            let qh = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
            for (j, &v) in b[at + 4..at + 20].iter().enumerate() {
                let (h0, h1) = (((qh >> j) << 4) & 0x10, (qh >> (j + 12)) & 0x10);
                w[j] = ((v & 0x0F) as u32 | h0) as i32 - centre;
                w[j + 16] = ((v >> 4) as u32 | h1) as i32 - centre;
            }
            m
        }
    };
    (w, d, m)
}

/// `get_scale_min_k4`: sub-block j's 6-bit scale and min from the 12 packed bytes.
#[inline]
pub(super) fn scale_min(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

/// A k-quant block's 256 unsigned values in weight order: Q4_K's nibbles, Q5_K's with their
/// fifth bits, Q6_K's 6 bits (the weight's q + 32). Q4_K/Q5_K: each 64 weights take 32
/// bytes of `qs`, low nibbles the first 32 (sub-block 2c), high nibbles the next (2c + 1),
/// the fifth bits bit 2c and 2c + 1 of qh[l]; Q6_K: two halves of 128, each from 64 bytes
/// of `ql` (low 4 bits) and 32 of `qh` (2 bits each). The plain-loop dot product reads the
/// same values (`dot.rs`).
pub(super) fn k_values(kind: Kind, b: &[u8]) -> [u8; 256] {
    let mut u = [0u8; 256];
    if kind == Kind::Q6_K {
        for n in 0..2 {
            let (ql, qh) = (&b[64 * n..64 * n + 64], &b[128 + 32 * n..160 + 32 * n]);
            let u = &mut u[128 * n..128 * n + 128];
            for l in 0..32 {
                u[l] = (ql[l] & 0x0F) | ((qh[l] & 3) << 4);
                u[l + 32] = (ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4);
                u[l + 64] = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
                u[l + 96] = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
            }
        }
        return u;
    }
    let (qh, qs) = match kind {
        Kind::Q5_K => (Some(&b[16..48]), &b[48..176]),
        _ => (None, &b[16..144]),
    };
    for c in 0..4 {
        for l in 0..32 {
            let (h0, h1) = qh.map_or((0, 0), |h| {
                (
                    ((h[l] >> (2 * c)) & 1) << 4,
                    ((h[l] >> (2 * c + 1)) & 1) << 4,
                )
            });
            u[64 * c + l] = (qs[32 * c + l] & 0x0F) | h0;
            u[64 * c + 32 + l] = (qs[32 * c + l] >> 4) | h1;
        }
    }
    u
}

/// `dequantize_row_q4_K` and `dequantize_row_q5_K`: 8 sub-blocks of 32, each with
/// d1 = d·sc, m1 = dmin·m, y = d1·q − m1.
fn k_4_5(kind: Kind, b: &[u8], y: &mut [f32]) {
    let (d, dmin, u) = (f16_at(b, 0), f16_at(b, 2), k_values(kind, b));
    for j in 0..8 {
        let (sc, m) = scale_min(j, &b[4..16]);
        let (d1, m1) = (d * sc as f32, dmin * m as f32);
        for (y, &q) in y[32 * j..32 * j + 32].iter_mut().zip(&u[32 * j..]) {
            *y = d1 * q as f32 - m1;
        }
    }
}

/// `dequantize_row_q6_K`: 16 weights a signed scale, y = d·sc·(q − 32).
fn k_6(b: &[u8], y: &mut [f32]) {
    let (d, u) = (f16_at(b, 208), k_values(Kind::Q6_K, b));
    for (k, y) in y.chunks_exact_mut(16).enumerate() {
        let sc = b[192 + k] as i8 as f32;
        for (y, &q) in y.iter_mut().zip(&u[16 * k..]) {
            *y = d * sc * (q as i32 - 32) as f32;
        }
    }
}

/// Every scale (and float value) of `bytes` (whole blocks of `kind`) finite, or which is not:
/// a NaN scale would make every logit NaN.
pub fn check(kind: Kind, bytes: &[u8]) -> Result<(), String> {
    let (_, size) = kind.block();
    // the f16 fields of a block: d (and dmin or m)
    let fields: &[usize] = match kind {
        Kind::F32 | Kind::F16 | Kind::BF16 => &[],
        Kind::Q6_K => &[208],
        Kind::Q4_1 | Kind::Q5_1 | Kind::Q4_K | Kind::Q5_K => &[0, 2],
        _ => &[0],
    };
    for (i, b) in bytes.chunks_exact(size as usize).enumerate() {
        let bad = if fields.is_empty() {
            let mut v = [0.0f32];
            dequantize(kind, b, &mut v);
            (!v[0].is_finite()).then(|| format!("a non-finite value ({}) at element {i}", v[0]))
        } else {
            fields
                .iter()
                .map(|&at| f16_at(b, at))
                .find(|v| !v.is_finite())
                .map(|v| format!("block {i}'s scale is {v}"))
        };
        if let Some(why) = bad {
            return Err(why);
        }
    }
    Ok(())
}
