//! What every quantized row kernel shares, in plain loops: the partial sums and their one
//! fixed fold, a row's int8 product from its groups' integer sums (the one float order of
//! `int8.rs`), the activations' row type. The build's kernels (`simd.rs`, `int8_simd.rs`)
//! and the plain loops of `qref.rs` and `int8.rs` all reduce through here, so they agree bit
//! for bit.

/// Partial sums of the quantized dot products.
pub const QL: usize = 16;

/// N partial sums (a power of two) folded in a fixed order: lane j + lane j + N/2, then
/// j + j + N/4, …, down to one (`dot_lanes`, the row kernels and the int8 epilogue alike).
#[inline(always)]
pub fn fold_pairs<const N: usize>(mut a: [f32; N]) -> f32 {
    let mut w = N / 2;
    while w > 0 {
        for j in 0..w {
            a[j] += a[j + w];
        }
        w /= 2;
    }
    a[0]
}

/// The 16 partial sums of a quantized row folded: [`fold_pairs`].
#[inline(always)]
pub fn reduce16(a: [f32; QL]) -> f32 {
    fold_pairs(a)
}

/// One kernel step: 32 weights (a 256-bit register of bytes; a q4 group).
pub const STEP: usize = 32;
/// The largest group whose integer sums convert to float32 exactly.
pub const MAX_GROUP: usize = 1024;
/// Groups a kernel call sums (the epilogue's lanes).
pub const LANES: usize = 8;

/// One row of [`QActs`](super::int8::QActs).
#[derive(Debug, Clone, Copy)]
pub struct QActRow<'a> {
    pub q: &'a [i8],
    pub scales: &'a [f32],
    pub sums: &'a [i32],
    /// `q` widened (the page's build; empty elsewhere)
    pub wide: &'a [i16],
}

/// The 8 lanes folded in a fixed order: j + j+4, then j + j+2, then 0 + 1.
#[inline(always)]
pub fn reduce8(a: [f32; LANES]) -> f32 {
    fold_pairs(a)
}

/// `lanes[j] += (w[j]·x[j]) · sums[j]` for the first `m` groups of a call: the one float
/// order of the product (LLVM keeps it lane for lane when it vectorises; nothing fuses).
#[inline(always)]
fn fold(lanes: &mut [f32; LANES], sums: &[i32; LANES], ws: &[f32], xs: &[f32]) {
    for j in 0..ws.len() {
        lanes[j] += (ws[j] * xs[j]) * sums[j] as f32;
    }
}

/// The integer sums of up to 8 groups: which kernel, and its data.
#[derive(Clone, Copy)]
pub enum Sums {
    /// int8 weights (groups of `g`)
    Q8,
    /// 16 bytes of nibbles a group of 32 (low nibble j, high nibble j + 16), unsigned
    Q4,
}

/// A row's product from its groups' integer sums (`sums8`, up to 8 groups a call): the one
/// float order, lane i mod 8.
#[inline(always)]
pub fn row_with(
    kind: Sums,
    w: &[u8],
    ws: &[f32],
    x: QActRow,
    g: usize,
    sums8: impl Fn(Sums, &[u8], &[i8], usize, usize) -> [i32; LANES],
) -> f32 {
    let groups = ws.len();
    let bytes_a_group = w.len() / groups.max(1);
    let mut lanes = [0.0f32; LANES];
    let mut c = 0;
    while c < groups {
        let m = LANES.min(groups - c);
        let wc = &w[c * bytes_a_group..(c + m) * bytes_a_group];
        let mut s = sums8(kind, wc, &x.q[c * g..(c + m) * g], g, m);
        if let Sums::Q4 = kind {
            for (s, &xs) in s.iter_mut().zip(&x.sums[c..c + m]) {
                *s -= 8 * xs;
            }
        }
        fold(&mut lanes, &s, &ws[c..c + m], &x.scales[c..c + m]);
        c += m;
    }
    reduce8(lanes)
}

/// The integer sums of `m` ≤ 8 groups, in plain loops (q4: Σ u·x over the unsigned nibbles).
pub fn portable_sums(kind: Sums, w: &[u8], x: &[i8], g: usize, m: usize) -> [i32; 8] {
    let mut s = [0i32; LANES];
    for (j, sj) in s.iter_mut().enumerate().take(m) {
        let xg = &x[j * g..(j + 1) * g];
        *sj = match kind {
            Sums::Q8 => w[j * g..(j + 1) * g]
                .iter()
                .zip(xg)
                .map(|(&a, &b)| (a as i8) as i32 * b as i32)
                .sum(),
            Sums::Q4 => {
                let b = &w[j * 16..(j + 1) * 16];
                (0..16)
                    .map(|e| {
                        (b[e] & 15) as i32 * xg[e] as i32 + (b[e] >> 4) as i32 * xg[16 + e] as i32
                    })
                    .sum()
            }
        };
    }
    s
}
