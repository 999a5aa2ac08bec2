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
            Kind::Q8_0 => {
                let d = f16_at(b, 0);
                for (y, &q) in y.iter_mut().zip(&b[2..34]) {
                    *y = (q as i8) as f32 * d;
                }
            }
            Kind::Q4_0 | Kind::Q4_1 => legacy4(kind, b, y),
            Kind::Q5_0 | Kind::Q5_1 => legacy5(kind, b, y),
            Kind::Q4_K | Kind::Q5_K => k_4_5(kind, b, y),
            Kind::Q6_K => k_6(b, y),
        }
    }
}

/// `dequantize_row_q4_0` (x0·d, nibbles − 8) and `dequantize_row_q4_1` (x0·d + m).
fn legacy4(kind: Kind, b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let (m, qs) = match kind {
        Kind::Q4_1 => (Some(f16_at(b, 2)), &b[4..20]),
        _ => (None, &b[2..18]),
    };
    for (j, &q) in qs.iter().enumerate() {
        let (x0, x1) = ((q & 0x0F) as i32, (q >> 4) as i32);
        (y[j], y[j + 16]) = match m {
            Some(m) => (x0 as f32 * d + m, x1 as f32 * d + m),
            None => ((x0 - 8) as f32 * d, (x1 - 8) as f32 * d),
        };
    }
}

/// `dequantize_row_q5_0` ((x − 16)·d) and `dequantize_row_q5_1` (x·d + m): bit j of `qh` is
/// weight j's fifth bit, bit j + 16 weight j + 16's.
fn legacy5(kind: Kind, b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let (m, at) = match kind {
        Kind::Q5_1 => (Some(f16_at(b, 2)), 4),
        _ => (None, 2),
    };
    let qh = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    for (j, &q) in b[at + 4..at + 20].iter().enumerate() {
        let xh0 = ((qh >> j) << 4) & 0x10;
        let xh1 = (qh >> (j + 12)) & 0x10;
        let (x0, x1) = (
            ((q & 0x0F) as u32 | xh0) as i32,
            ((q >> 4) as u32 | xh1) as i32,
        );
        (y[j], y[j + 16]) = match m {
            Some(m) => (x0 as f32 * d + m, x1 as f32 * d + m),
            None => ((x0 - 16) as f32 * d, (x1 - 16) as f32 * d),
        };
    }
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

/// `dequantize_row_q4_K` and `dequantize_row_q5_K`: 4 chunks of 64 weights, each two
/// sub-blocks of 32 (low nibbles, then high) with d1 = d·sc, m1 = dmin·m, y = d1·q − m1;
/// Q5_K's fifth bits are bit 2i (low) and 2i + 1 (high) of `qh[l]` in chunk i.
fn k_4_5(kind: Kind, b: &[u8], y: &mut [f32]) {
    let (d, dmin, scales) = (f16_at(b, 0), f16_at(b, 2), &b[4..16]);
    let (qh, qs) = match kind {
        Kind::Q5_K => (Some(&b[16..48]), &b[48..176]),
        _ => (None, &b[16..144]),
    };
    for c in 0..4 {
        let q = &qs[32 * c..32 * c + 32];
        let sub = |i: usize| {
            let (sc, m) = scale_min(2 * c + i, scales);
            (d * sc as f32, dmin * m as f32)
        };
        let ((d1, m1), (d2, m2)) = (sub(0), sub(1));
        for l in 0..32 {
            let (hi1, hi2) = match qh {
                Some(h) => (
                    ((h[l] >> (2 * c)) & 1) << 4,
                    ((h[l] >> (2 * c + 1)) & 1) << 4,
                ),
                None => (0, 0),
            };
            y[64 * c + l] = d1 * ((q[l] & 0x0F) | hi1) as f32 - m1;
            y[64 * c + 32 + l] = d2 * ((q[l] >> 4) | hi2) as f32 - m2;
        }
    }
}

/// `dequantize_row_q6_K`: two halves of 128 weights, each from 64 bytes of `ql` (low 4 bits)
/// and 32 of `qh` (2 bits each), 16 weights a signed scale: y = d·sc·(q − 32).
fn k_6(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 208);
    for n in 0..2 {
        let (ql, qh) = (&b[64 * n..64 * n + 64], &b[128 + 32 * n..128 + 32 * n + 32]);
        let sc = |k: usize| b[192 + 8 * n + k] as i8 as f32;
        let y = &mut y[128 * n..128 * n + 128];
        for l in 0..32 {
            let is = l / 16;
            let q1 = ((ql[l] & 0x0F) | ((qh[l] & 3) << 4)) as i32 - 32;
            let q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
            y[l] = d * sc(is) * q1 as f32;
            y[l + 32] = d * sc(is + 2) * q2 as f32;
            y[l + 64] = d * sc(is + 4) * q3 as f32;
            y[l + 96] = d * sc(is + 6) * q4 as f32;
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
