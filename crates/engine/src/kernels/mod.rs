//! The CPU kernels of the tuned forward pass, llama2.c style (`forward/reference.rs` reads
//! the same steps in plain loops): tiny output-first functions
//! (`rmsnorm(o, x, w, eps)`, `matmul(out, x, n, w)`, `softmax(x)`), each mirrored by a WGSL
//! kernel in the GPU backend and tested against it.
//!
//! Floating-point order is fixed by the code, never by the compiler (Rust does not reassociate
//! float sums), so the same input gives bit-identical results natively and in wasm, and the
//! token-by-token and batched paths agree exactly. Transcendentals come from `libm` for the
//! same reason (the platform `expf` differs between glibc and wasm).

mod attend;
pub mod logprob;
mod matmul;
pub mod rows;
pub mod simd;
#[cfg(test)]
mod tests;
#[cfg(all(kernel = "avx512", target_feature = "avx512vnni"))]
mod tiled;
pub mod trial;
pub mod tune;

pub use attend::{attend_head, attend_heads, attend_queries};
pub use matmul::matmul;

use simd::{Isa, Native};

/// Σ a[i]·b[i] by the build's kernel ([`simd::Native`]): [`dot_portable`]'s bits. Every dot
/// product of the tuned paths goes through here.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    Native::dot(a, b)
}

/// The instruction set of the build's CPU kernels ([`simd::Native`]), and which int8
/// product its quantized rows use (VNNI where the CPU has it).
pub const KERNEL: &str = match (
    Native::NAME.as_bytes(),
    cfg!(all(
        target_feature = "avx512vnni",
        target_feature = "avx512vl"
    )),
) {
    (b"avx512", true) => "avx512 (int8: AVX-512 VNNI)",
    (b"avx512", false) => "avx512 (int8: AVX2 maddubs)",
    (b"avx2", _) => "avx2 (int8: maddubs)",
    _ => Native::NAME,
};

/// Independent partial sums in `dot`'s main loop: enough to fill the vector units (4×8
/// lanes on AVX2, 8×4 on wasm SIMD) and hide the adder latency.
const LANES: usize = 32;

/// [`dot`] in portable code (what every target computes; the AVX-512 kernel gives its bits).
#[inline(always)]
pub fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a32, a_rest) = a[..n].as_chunks::<LANES>();
    let (b32, b_rest) = b[..n].as_chunks::<LANES>();
    let mut acc8 = [0.0f32; 8];
    if !a32.is_empty() {
        let mut acc = [0.0f32; LANES];
        for (x, y) in a32.iter().zip(b32) {
            for i in 0..LANES {
                acc[i] += x[i] * y[i];
            }
        }
        for i in 0..8 {
            acc8[i] = (acc[i] + acc[i + 8]) + (acc[i + 16] + acc[i + 24]);
        }
    }
    let (a8, a_tail) = a_rest.as_chunks::<8>();
    let (b8, b_tail) = b_rest.as_chunks::<8>();
    for (x, y) in a8.iter().zip(b8) {
        for i in 0..8 {
            acc8[i] += x[i] * y[i];
        }
    }
    let mut sum =
        ((acc8[0] + acc8[4]) + (acc8[2] + acc8[6])) + ((acc8[1] + acc8[5]) + (acc8[3] + acc8[7]));
    for (x, y) in a_tail.iter().zip(b_tail) {
        sum += x * y;
    }
    sum
}

/// e^x in f32 from arithmetic only (Cephes `expf`: Cody–Waite range reduction x = k·ln2 + r,
/// a degree-6 polynomial for e^r, then 2^k through the exponent bits); about 1 ulp from the
/// exact value. Written without branches or library calls so that loops over it vectorise
/// (the softmax of attention scores is the hot spot of small models) and give the same bits
/// natively and in wasm. Below −87.3 the result is 0.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let xc = x.clamp(-87.33, 88.72);
    let k = (xc * LOG2E + 0.5).floor();
    let r = xc - k * LN2_HI - k * LN2_LO;
    let r2 = r * r;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5;
    let y = p * r2 + r + 1.0;
    // 2^k: k is a whole number in [−126, 128], so k + 1.5·2²³ is exact and its low bits are
    // k in two's complement: the bits of `(k as i32 + 127) << 23` without a float-to-int
    // conversion, whose NaN and saturation checks kept the loops around `exp` scalar (a
    // NaN x gives a NaN y, and NaN · anything is NaN, as before).
    const MAGIC: f32 = 12_582_912.0;
    let k_int = (k + MAGIC).to_bits().wrapping_sub(MAGIC.to_bits());
    let scale = f32::from_bits(k_int.wrapping_add(127) << 23);
    if x < -87.33 {
        0.0
    } else {
        y * scale
    }
}

/// e^x in f64 for x ≤ 0 (logits less their maximum), within 2 ulp of `f64::exp`, eight at
/// a time in straight-line arithmetic with no multiply-add (so the same bits natively and
/// in wasm), each step a loop over the lanes so that it vectorises (AVX-512: one register;
/// glibc's scalar `exp` over a 32,000-token vocabulary was the largest part of the chain's
/// time in a step). Below −708.39 (2^k no longer a normal number) the result is
/// 0: the sums it joins hold e^0 = 1 from the maximum, so a term under 1e-307 changes
/// nothing.
#[inline(always)]
pub fn exp_nonpositive8(x: [f64; 8]) -> [f64; 8] {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    // ln 2 split so that k · LN2_HI is exact for |k| < 2^11 (LN2_HI has 32 significant
    // bits), as in fdlibm's `exp`: 6.93147180369123816490e-1 and 1.90821492927058770002e-10.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // Round to nearest (ties to even) by adding 1.5 · 2^52: exact, and its low bits are k.
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    // Taylor series to r^13 on |r| ≤ ln2/2: truncation error below 5e-18 relative.
    const C: [f64; 13] = [
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ];
    let mut t = [0.0f64; 8];
    let mut r = [0.0f64; 8];
    let mut p = [1.0 / 6_227_020_800.0; 8];
    let mut out = [0.0f64; 8];
    for l in 0..8 {
        t[l] = x[l] * LOG2E + MAGIC;
        let k = t[l] - MAGIC;
        r[l] = (x[l] - k * LN2_HI) - k * LN2_LO;
    }
    for c in C {
        for l in 0..8 {
            p[l] = p[l] * r[l] + c;
        }
    }
    for l in 0..8 {
        let k_int = t[l].to_bits().wrapping_sub(MAGIC.to_bits());
        let scale = f64::from_bits(k_int.wrapping_add(1023) << 52);
        let y = p[l] * scale;
        out[l] = if x[l] < -708.39 { 0.0 } else { y };
    }
    out
}

/// One e^x of [`exp_nonpositive8`] (its first lane: the same bits).
pub fn exp_nonpositive(x: f64) -> f64 {
    exp_nonpositive8([x; 8])[0]
}

/// RMSNorm: o = w ⊙ x / sqrt(mean(x²) + ε) (ε = 1e-5 in llama2.c, the model's
/// `rms_eps` otherwise).
pub fn rmsnorm(o: &mut [f32], x: &[f32], weight: &[f32], eps: f32) {
    let ss = dot(x, x) / x.len() as f32 + eps;
    let inv = 1.0 / ss.sqrt();
    for ((o, &x), &w) in o.iter_mut().zip(x).zip(weight) {
        *o = w * (inv * x);
    }
}

/// Σ x[i] in 8 interleaved partial sums and a fixed pairwise reduction (vectorises, unlike a
/// single running sum).
#[inline(always)]
pub fn sum(x: &[f32]) -> f32 {
    let (x8, tail) = x.as_chunks::<8>();
    let mut acc = [0.0f32; 8];
    for c in x8 {
        for i in 0..8 {
            acc[i] += c[i];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    for &v in tail {
        s += v;
    }
    s
}

/// The largest element (−∞ for none; NaNs ignored, as `f32::max` does): 16 running maxima
/// then one over them. The maximum of a set does not depend on the order it is taken in, so
/// this is the single running maximum's value, but without its chain of dependent
/// comparisons (softmax was a large share of a stories260K decode step, most of it in this
/// maximum: BENCHMARKS.md, "Figures behind the code").
#[inline(always)]
pub fn max(x: &[f32]) -> f32 {
    let (x16, tail) = x.as_chunks::<16>();
    let mut m = [f32::NEG_INFINITY; 16];
    for c in x16 {
        for i in 0..16 {
            m[i] = larger(m[i], c[i]);
        }
    }
    m.iter()
        .chain(tail)
        .copied()
        .fold(f32::NEG_INFINITY, larger)
}

/// `b` where it is larger than `a`, else `a`: `f32::max` for every pair without a NaN, and a
/// NaN `b` is passed over as `f32::max` passes it. Written as a comparison and a select, which
/// every target has in vector form (x86 `vmaxps`, wasm `f32x4.pmax`); `f32::max`'s own rule
/// (IEEE maxNum) has no wasm SIMD instruction, so LLVM made every lane a call to `fmaxf`.
#[inline(always)]
fn larger(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}

/// In-place softmax, shifted by the maximum for stability.
pub fn softmax(x: &mut [f32]) {
    let max = max(x);
    Native::exp_shifted(x, max);
    let total = sum(x);
    for v in x.iter_mut() {
        *v /= total;
    }
}

/// Rotary position embedding tables: cos and sin of pos·θ_j, θ_j = base^(−2j/head_size)
/// (base 10,000 in llama2.c, the model's `rope_theta` otherwise), divided by factor_j where
/// the model has Llama 3's factors (llama.cpp's `rope_freqs`: `theta / freq_factor` in
/// `ggml_rope_cache_init`), (seq_len, head_size/2), computed once per model exactly as
/// llama2.c computes them per call.
#[derive(Debug, Clone)]
pub struct RopeTable {
    half: usize,
    cos: Vec<f32>,
    sin: Vec<f32>,
}

impl RopeTable {
    pub fn new(head_size: usize, seq_len: usize, base: f32) -> RopeTable {
        RopeTable::with_factors(head_size, seq_len, base, None)
    }

    /// The table with each pair's frequency divided by its factor (`factors`: head_size/2
    /// of them, checked where they were read).
    pub fn with_factors(
        head_size: usize,
        seq_len: usize,
        base: f32,
        factors: Option<&[f32]>,
    ) -> RopeTable {
        let half = head_size / 2;
        let mut cos = Vec::with_capacity(seq_len * half);
        let mut sin = Vec::with_capacity(seq_len * half);
        for pos in 0..seq_len {
            for j in 0..half {
                let factor = factors.and_then(|f| f.get(j)).copied().unwrap_or(1.0);
                let freq = 1.0 / libm::powf(base, (2 * j) as f32 / head_size as f32) / factor;
                let val = pos as f32 * freq;
                cos.push(libm::cosf(val));
                sin.push(libm::sinf(val));
            }
        }
        RopeTable { half, cos, sin }
    }

    /// (cos, sin) rows for one position, head_size/2 each.
    pub fn at(&self, pos: usize) -> (&[f32], &[f32]) {
        let r = pos * self.half..(pos + 1) * self.half;
        (&self.cos[r.clone()], &self.sin[r])
    }
}

/// Rotates each consecutive pair (v[2j], v[2j+1]) of every head by pos·θ_j.
pub fn rope(v: &mut [f32], head_size: usize, cos: &[f32], sin: &[f32]) {
    for head in v.chunks_exact_mut(head_size) {
        for (j, pair) in head.chunks_exact_mut(2).enumerate() {
            let (v0, v1) = (pair[0], pair[1]);
            pair[0] = v0 * cos[j] - v1 * sin[j];
            pair[1] = v0 * sin[j] + v1 * cos[j];
        }
    }
}

/// SwiGLU: hb = silu(hb) ⊙ hb2, silu(x) = x·σ(x).
pub fn swiglu(hb: &mut [f32], hb2: &[f32]) {
    for (h, &g) in hb.iter_mut().zip(hb2) {
        let val = *h;
        *h = val * (1.0 / (1.0 + exp(-val))) * g;
    }
}

/// x += y (the residual connection).
pub fn add_in_place(x: &mut [f32], y: &[f32]) {
    for (a, &b) in x.iter_mut().zip(y) {
        *a += b;
    }
}
