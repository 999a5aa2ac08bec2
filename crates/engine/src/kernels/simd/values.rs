//! Attention's weighted sum of the values (`Isa::weighted_values`), one 8-wide slice of G
//! heads in the build's vectors: each head's running sum of att_t · v_t in 8 lanes, a
//! separately rounded multiply then add, positions in order, so every element is the
//! portable loop's sum bit for bit. The heads' sums sit side by side in registers: a head's
//! sum is one chain of dependent adds, and the adder interleaves G of them. (Left to LLVM,
//! the portable loop gathered across the heads instead: BENCHMARKS.md.)

#[cfg(any(kernel = "avx512", kernel = "avx2"))]
use std::arch::x86_64::*;

#[cfg(kernel = "wasm")]
use core::arch::wasm32::*;

/// `Isa::weighted_values` in 8-lane x86 registers (AVX2, AVX-512): for each head g of G,
/// Σ_t att[g·n + t] · v[t·stride + offsets[g] ..][..8], t from 0 to n − 1. `values` points
/// at the slice's first float in position 0; the caller checks that every read lies in the
/// cache and `att` holds G·n weights.
#[cfg(any(kernel = "avx512", kernel = "avx2"))]
#[inline(always)]
pub unsafe fn weighted_x86<const G: usize>(
    att: &[f32],
    n: usize,
    values: *const f32,
    stride: usize,
    offsets: [usize; G],
) -> [[f32; 8]; G] {
    // The heads' weights and first values.
    let a: [*const f32; G] = std::array::from_fn(|g| att.as_ptr().add(g * n));
    let v: [*const f32; G] = std::array::from_fn(|g| values.add(offsets[g]));
    // Eight heads' sums in eight of AVX2's 16 registers (AVX-512's 32).
    let mut acc = [_mm256_setzero_ps(); G];
    for t in 0..n {
        for g in 0..G {
            let p = _mm256_mul_ps(
                _mm256_set1_ps(*a[g].add(t)),
                _mm256_loadu_ps(v[g].add(t * stride)),
            );
            acc[g] = _mm256_add_ps(acc[g], p);
        }
    }
    acc.map(|s| std::mem::transmute::<__m256, [f32; 8]>(s))
}

/// `Isa::weighted_values` in wasm's 4-lane registers, as `weighted_x86` sums: for each head
/// g of G, Σ_t att[g·n + t] · v[t·stride + offsets[g] ..][..8], t from 0 to n − 1.
#[cfg(kernel = "wasm")]
#[inline(always)]
pub unsafe fn weighted_wasm<const G: usize>(
    att: &[f32],
    n: usize,
    values: *const f32,
    stride: usize,
    offsets: [usize; G],
) -> [[f32; 8]; G] {
    // The heads' weights and first values.
    let a: [*const f32; G] = std::array::from_fn(|g| att.as_ptr().add(g * n));
    let v: [*const f32; G] = std::array::from_fn(|g| values.add(offsets[g]));
    // Two 4-lane vectors a head; V8 has 16 vector registers, so at most four heads a
    // pass (eight would spill).
    let mut out = [[0.0f32; 8]; G];
    let mut h = 0;
    while h < G {
        let heads = (G - h).min(4);
        let mut acc = [[f32x4_splat(0.0); 2]; 4];
        for t in 0..n {
            for (g, acc) in acc.iter_mut().enumerate().take(heads) {
                let at = f32x4_splat(*a[h + g].add(t));
                let p = v[h + g].add(t * stride);
                acc[0] = f32x4_add(acc[0], f32x4_mul(at, v128_load(p as *const v128)));
                acc[1] = f32x4_add(acc[1], f32x4_mul(at, v128_load(p.add(4) as *const v128)));
            }
        }
        for g in 0..heads {
            out[h + g] = std::mem::transmute::<[v128; 2], [f32; 8]>(acc[g]);
        }
        h += heads;
    }
    out
}

/// For each query row i of Q: acc[i][j] += att[i][t] · v[t·stride + j] for t from `from`
/// to `to` − 1 in order (j < 8), a separately rounded multiply then add: one 8-wide slice
/// of a head's weighted values for Q rows at once, each load of the values shared by the
/// rows (prefill's attention, `attend_queries`); each row's sums `weighted_values`' bits.
/// In the build's vectors (x86, wasm), plain loops elsewhere.
///
/// # Safety
/// `values` points at the slice's first float in position 0; every read
/// (t·stride + 0..8 for t < to) lies in the cache, and every att[i] holds `to` weights.
#[inline(always)]
pub unsafe fn weighted_queries<const Q: usize>(
    acc: &mut [[f32; 8]; Q],
    att: [&[f32]; Q],
    from: usize,
    to: usize,
    values: *const f32,
    stride: usize,
) {
    // x86: each query row's running sums in one 8-lane register, the rows side by side
    #[cfg(any(kernel = "avx512", kernel = "avx2"))]
    {
        let a: [*const f32; Q] = att.map(|a| a.as_ptr());
        let mut sums: [__m256; Q] = std::array::from_fn(|i| _mm256_loadu_ps(acc[i].as_ptr()));
        for t in from..to {
            let v = _mm256_loadu_ps(values.add(t * stride));
            for (i, s) in sums.iter_mut().enumerate() {
                *s = _mm256_add_ps(*s, _mm256_mul_ps(_mm256_set1_ps(*a[i].add(t)), v));
            }
        }
        for (acc, s) in acc.iter_mut().zip(sums) {
            _mm256_storeu_ps(acc.as_mut_ptr(), s);
        }
    }
    // wasm: four query rows a pass (eight would spill V8's 16 registers)
    #[cfg(kernel = "wasm")]
    {
        let mut h = 0;
        while h < Q {
            let rows = (Q - h).min(4);
            let mut s = [[f32x4_splat(0.0); 2]; 4];
            for (i, s) in s.iter_mut().enumerate().take(rows) {
                let p = acc[h + i].as_ptr();
                *s = [
                    v128_load(p as *const v128),
                    v128_load(p.add(4) as *const v128),
                ];
            }
            for t in from..to {
                let p = values.add(t * stride);
                let v = [
                    v128_load(p as *const v128),
                    v128_load(p.add(4) as *const v128),
                ];
                for (i, s) in s.iter_mut().enumerate().take(rows) {
                    let at = f32x4_splat(*att[h + i].as_ptr().add(t));
                    s[0] = f32x4_add(s[0], f32x4_mul(at, v[0]));
                    s[1] = f32x4_add(s[1], f32x4_mul(at, v[1]));
                }
            }
            for (i, s) in s.iter().enumerate().take(rows) {
                let p = acc[h + i].as_mut_ptr();
                v128_store(p as *mut v128, s[0]);
                v128_store(p.add(4) as *mut v128, s[1]);
            }
            h += rows;
        }
    }
    #[cfg(not(any(kernel = "avx512", kernel = "avx2", kernel = "wasm")))]
    for t in from..to {
        let p = values.add(t * stride);
        for (acc, att) in acc.iter_mut().zip(att) {
            for (j, a) in acc.iter_mut().enumerate() {
                *a += att[t] * *p.add(j);
            }
        }
    }
}
