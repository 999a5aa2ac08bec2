//! Prefill's int8 matrix product, register-tiled (AVX-512 VNNI): 16 weight rows × up to 8
//! prompt rows a pass, each load of the weights feeding a `vpdpbusd` for every prompt row,
//! where the row-by-row product (`rows::int8_rows`) loads and sign-flips the activations
//! again for each weight row and reduces every group's lanes across a register.
//!
//! **The layout.** A panel of 16 weight rows is repacked (per call, into a thread's buffer)
//! so that 4 bytes of each of the 16 rows sit side by side: `vpdpbusd` then adds 4 products
//! into each row's own 32-bit lane, the group's sum builds up lane by lane and needs no
//! reduction across the register, and 4 bytes of a prompt row are broadcast to all 16
//! lanes (the instruction's memory operand). This is the VNNI layout of oneDNN's int8 GEMM
//! and of llama.cpp's AMX/`repack` Q8_0 paths (`ggml-cpu/repack.cpp`); llama.cpp's own
//! AVX-512 prefill (llamafile's `tinyBLAS_Q0_AVX`) instead tiles whole blocks and keeps
//! per-lane float sums, a different float order.
//!
//! **Signs.** `vpdpbusd` multiplies unsigned by signed bytes. The weights are stored offset,
//! w + 128 (0…255), and the activations stay signed: Σ (w + 128)·x = Σ w·x + 128·Σ x, and
//! Σ x of each group is the activations' `sums` (kept for q4), so each group's sum starts
//! at −128·Σ x. Every sum is exact in 32 bits (|Σ| ≤ 255·127·1024 < 2³¹).
//!
//! **The bits** are `QRef::dot_int8`'s for every (weight row, prompt row): the same exact
//! integer sum per group, then the one float order of `int8.rs` — group c into lane c mod
//! 8 as `lane += (d_w·d_x)·Σ`, the lanes folded by `reduce8`. The lanes are taken one at a
//! time (lane j's groups j, j + 8, … in order), so a prompt row needs one float register,
//! not eight. Tested against the plain loops (`dot_int8_portable`).

use crate::par;
use crate::quant::{Activations, MatRef, Precision, QActs, QRef};
use std::arch::x86_64::*;

/// Weight rows a panel (one 32-bit lane each in a 512-bit register).
const PANEL: usize = 16;
/// Prompt rows a pass: each load of the weights feeds this many `vpdpbusd`s.
const TOKENS: usize = 8;
/// Prompt rows from which the tiled product pays for repacking the weights (below, each
/// weight row is multiplied row by row as decode does).
pub const MIN_ROWS: usize = 16;

/// Whether every matrix of `ws` takes the tiled product for `t` rows of `n`: q8 with int8
/// activations, rows of whole groups, all of one group size.
pub fn takes(ws: &[MatRef], n: usize, t: usize) -> bool {
    let group = |w: &MatRef| match w {
        MatRef::Quant(q)
            if q.precision == Precision::Q8
                && q.activations == Activations::Int8
                && q.int8_ready(n) =>
        {
            Some(q.group)
        }
        _ => None,
    };
    t >= MIN_ROWS
        && !ws.is_empty()
        && ws
            .iter()
            .all(|w| group(w).is_some() && group(w) == group(&ws[0]))
}

/// `matmul`'s out (each matrix's (t, dᵢ) block in turn) for the q8 matrices `ws` (`takes`).
pub fn matmul(out: &mut [f32], x: &[f32], n: usize, t: usize, ws: &[MatRef]) {
    let qs: Vec<QRef> = ws
        .iter()
        .filter_map(|w| match w {
            MatRef::Quant(q) => Some(*q),
            _ => None,
        })
        .collect();
    let acts = QActs::quantize(x, n, qs[0].group);
    // Each matrix's panels in turn; panel p's (t, 16) outputs at p·t·16.
    let panels: Vec<(usize, usize)> = qs
        .iter()
        .enumerate()
        .flat_map(|(m, q)| (0..(q.len / n).div_ceil(PANEL)).map(move |p| (m, p * PANEL)))
        .collect();
    let mut by_panel = vec![0.0f32; panels.len() * t * PANEL];
    par::chunks(&mut by_panel, t * PANEL, t * PANEL * n, |first, chunk| {
        PACKED.with_borrow_mut(|packed| {
            for (k, o) in chunk.chunks_exact_mut(t * PANEL).enumerate() {
                let (m, row) = panels[first + k];
                pack(packed, &qs[m], row, n);
                // SAFETY: the CPU has AVX-512 VNNI (the build's target); `packed` holds a
                // panel of rows of n and `o` its (t, 16) outputs.
                unsafe { panel(o, packed, &acts, n) };
            }
        })
    });
    // Each panel's rows into its matrix's (t, dᵢ) block: 16 floats a copy.
    let mut base = 0;
    let mut p = 0;
    for q in &qs {
        let d = q.len / n;
        for row in (0..d).step_by(PANEL) {
            let width = PANEL.min(d - row);
            let src = &by_panel[p * t * PANEL..(p + 1) * t * PANEL];
            for (r, s) in src.chunks_exact(PANEL).enumerate() {
                out[base + r * d + row..][..width].copy_from_slice(&s[..width]);
            }
            p += 1;
        }
        base += t * d;
    }
}

/// A panel of weights as `panel` reads them: the bytes, and the scales (group c's 16 at
/// 16·c).
#[derive(Default)]
struct Packed {
    bytes: Vec<u32>,
    scales: Vec<f32>,
}

thread_local! {
    static PACKED: std::cell::RefCell<Packed> = std::cell::RefCell::default();
}

/// Rows `row..row + 16` of `q` (rows of `n`) packed: 32-bit word k of row r (its bytes
/// k·4…k·4 + 3, each + 128) at 16·k + r; rows past the matrix's end all 128 with scale 0
/// (their products are 0, and dropped).
fn pack(p: &mut Packed, q: &QRef, row: usize, n: usize) {
    let (words, groups) = (n / 4, n / q.group);
    let rows = PANEL.min(q.len / n - row);
    p.bytes.clear();
    p.bytes.resize(words * PANEL, 0x8080_8080);
    p.scales.clear();
    p.scales.resize(groups * PANEL, 0.0);
    for r in 0..rows {
        let w = &q.values[(row + r) * n..(row + r + 1) * n];
        for (k, b) in w.chunks_exact(4).enumerate() {
            p.bytes[k * PANEL + r] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) ^ 0x8080_8080;
        }
        let s = &q.scales[(row + r) * groups..(row + r + 1) * groups];
        for (c, &s) in s.iter().enumerate() {
            p.scales[c * PANEL + r] = s;
        }
    }
}

/// A panel's (t, 16) outputs: every prompt row of `acts` times the packed rows, `TOKENS`
/// prompt rows a pass (the last pass fewer).
#[inline(never)]
unsafe fn panel(out: &mut [f32], p: &Packed, acts: &QActs, n: usize) {
    let t = acts.q.len() / n;
    let mut r = 0;
    while r < t {
        let m = TOKENS.min(t - r);
        let o = &mut out[r * PANEL..(r + m) * PANEL];
        match m {
            8 => tile::<8>(o, p, acts, n, r),
            7 => tile::<7>(o, p, acts, n, r),
            6 => tile::<6>(o, p, acts, n, r),
            5 => tile::<5>(o, p, acts, n, r),
            4 => tile::<4>(o, p, acts, n, r),
            3 => tile::<3>(o, p, acts, n, r),
            2 => tile::<2>(o, p, acts, n, r),
            _ => tile::<1>(o, p, acts, n, r),
        }
        r += m;
    }
}

/// Prompt rows `r0..r0 + T` times the panel: `out` their (T, 16) outputs.
#[inline(always)]
unsafe fn tile<const T: usize>(out: &mut [f32], p: &Packed, acts: &QActs, n: usize, r0: usize) {
    let g = acts.group;
    let (groups, steps) = (n / g, g / 4);
    let xq: [*const i8; T] = std::array::from_fn(|i| acts.q.as_ptr().add((r0 + i) * n));
    let xd: [*const f32; T] = std::array::from_fn(|i| acts.scales.as_ptr().add((r0 + i) * groups));
    let xs: [*const i32; T] = std::array::from_fn(|i| acts.sums.as_ptr().add((r0 + i) * groups));
    let (wp, dw) = (p.bytes.as_ptr() as *const __m512i, p.scales.as_ptr());
    let mut lanes = [[_mm512_setzero_ps(); T]; 8];
    for (j, lane) in lanes.iter_mut().enumerate() {
        let mut c = j;
        while c < groups {
            // Two chains of sums a prompt row (the adds of one chain wait on each other).
            let mut acc: [[__m512i; 2]; T] = std::array::from_fn(|i| {
                [
                    _mm512_set1_epi32(-128 * *xs[i].add(c)),
                    _mm512_setzero_si512(),
                ]
            });
            let mut s = 0;
            while s < steps {
                let w0 = _mm512_loadu_si512(wp.add(c * steps + s));
                let w1 = _mm512_loadu_si512(wp.add(c * steps + s + 1));
                for i in 0..T {
                    let x = xq[i].add(c * g + 4 * s);
                    let x0 = _mm512_set1_epi32((x as *const i32).read_unaligned());
                    let x1 = _mm512_set1_epi32((x.add(4) as *const i32).read_unaligned());
                    acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], w0, x0);
                    acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], w1, x1);
                }
                s += 2;
            }
            let d = _mm512_loadu_ps(dw.add(c * PANEL));
            for i in 0..T {
                let sum = _mm512_cvtepi32_ps(_mm512_add_epi32(acc[i][0], acc[i][1]));
                let scale = _mm512_mul_ps(d, _mm512_set1_ps(*xd[i].add(c)));
                lane[i] = _mm512_add_ps(lane[i], _mm512_mul_ps(scale, sum));
            }
            c += 8;
        }
    }
    for (i, o) in out.chunks_exact_mut(PANEL).enumerate().take(T) {
        // reduce8: j + j+4, j + j+2, 0 + 1
        let l = |j: usize| lanes[j][i];
        let a: [__m512; 4] = std::array::from_fn(|j| _mm512_add_ps(l(j), l(j + 4)));
        let b = [_mm512_add_ps(a[0], a[2]), _mm512_add_ps(a[1], a[3])];
        _mm512_storeu_ps(o.as_mut_ptr(), _mm512_add_ps(b[0], b[1]));
    }
}
