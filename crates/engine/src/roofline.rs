//! The two regimes on a roofline (lesson 10, sections 4–5: prefill is "one big forward
//! pass, compute-bound", decode "one token at a time using the cache,
//! memory-bandwidth-bound").
//!
//! A pass of `F` floating-point operations moving `B` bytes has arithmetic intensity
//! I = F / B; on a machine that can read `β` bytes/s and compute `π` FLOP/s it can run at
//! most min(π, β · I) FLOP/s. The ridge point π / β is the intensity where the two meet:
//! below it a pass waits on memory, above it on arithmetic.
//!
//! The machine's own β and π are measured here by the program that runs the model (natively
//! and in the page's worker): a read loop over a buffer larger than the caches, and a loop of
//! independent multiply-then-add chains — the engine's own arithmetic (`cpu::dot` multiplies
//! and adds separately, never fused, so its bits are the same in every build).
//! The lesson's point at real scale uses the H100's published figures (`REFERENCES.md`:
//! 989 TFLOP/s fp16 dense, 3.35 TB/s, ridge ≈ 295 FLOP/byte).

use crate::checkpoint::Config;
use crate::cost::PassCost;
use crate::par;

/// A machine's two ceilings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Roof {
    /// floating-point operations a second (a multiply and an add count two)
    pub flops: f64,
    /// bytes read a second
    pub bytes_per_s: f64,
}

impl Roof {
    /// The intensity (FLOP/byte) where bandwidth stops being the limit.
    pub fn ridge(&self) -> f64 {
        self.flops / self.bytes_per_s
    }

    /// The most a pass of this intensity can achieve, FLOP/s.
    pub fn attainable(&self, intensity: f64) -> f64 {
        (self.bytes_per_s * intensity).min(self.flops)
    }

    /// Which ceiling a pass of this intensity is under.
    pub fn bound(&self, intensity: f64) -> Bound {
        if intensity < self.ridge() {
            Bound::Memory
        } else {
            Bound::Compute
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Memory,
    Compute,
}

/// NVIDIA H100 SXM: 989 TFLOP/s dense fp16/bf16 tensor-core arithmetic and 3.35 TB/s of
/// HBM3 (the H100 datasheet; `REFERENCES.md`, "Roofline").
pub const H100_SXM: Roof = Roof {
    flops: 989e12,
    bytes_per_s: 3.35e12,
};

/// Llama-2-7B's shape (its config.json on the Hugging Face hub: hidden 4096, intermediate
/// 11008, 32 layers, 32 heads and 32 K/V heads, vocabulary 32,000 with its own output
/// matrix, context 4,096).
pub fn llama2_7b() -> Config {
    Config::from_header([4096, 11008, 32, 32, 32, -32000, 4096])
        .expect("Llama-2-7B's published shape is a valid header")
}

/// A point at real scale: Llama-2-7B in fp16 (2 bytes a weight and a cache element) on an
/// H100, a pass of `rows` sequences at `position` (decode: one row each) or one prompt of
/// `rows` tokens (prefill).
pub fn llama2_7b_pass(rows: u64, position: u64, prefill: bool) -> PassCost {
    let c = llama2_7b();
    let weight_bytes = 2 * c.n_params();
    if prefill {
        PassCost::of_elem(&c, &[(0, rows)], 1, weight_bytes, 2)
    } else {
        PassCost::of_elem(
            &c,
            &vec![(position, 1); rows as usize],
            rows,
            weight_bytes,
            2,
        )
    }
}

/// A machine's peaks as measured by [`measure`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Peaks {
    pub roof: Roof,
    /// the read loop's buffer (larger than the last-level cache, so it measures memory)
    pub buffer_bytes: u64,
    pub threads: usize,
}

/// Floats each multiply-add chain unit handles per step of the peak loop: 8 independent
/// 16-lane chains natively (enough to hide the multiply's and the add's latency on two
/// pipes), the same arithmetic in 4-lane pieces in wasm.
#[cfg(not(target_arch = "wasm32"))]
const CHAINS: usize = 8;
/// In wasm 8 four-lane chains: the browser's JIT has 16 vector registers (12 spilled).
#[cfg(target_arch = "wasm32")]
const CHAINS: usize = 2;
const WIDTH: usize = 16;

/// One thread's multiply-add loop: `iters` rounds of x ← x·m + a on CHAINS × WIDTH
/// independent lanes, each a separately rounded multiply then add (as `cpu::dot`). Returns
/// a sum of the lanes so the work cannot be dropped.
#[inline(never)]
fn mac_loop(iters: usize, m: f32, a: f32) -> f32 {
    let mut acc = [[0.5f32; WIDTH]; CHAINS];
    for _ in 0..iters {
        for chain in acc.iter_mut() {
            for x in chain.iter_mut() {
                *x = *x * m + a;
            }
        }
    }
    acc.iter().flatten().sum()
}

/// One thread's read loop over `data`: a sum in 64 independent lanes (a read of every byte,
/// vectorised), returned so the reads cannot be dropped.
#[inline(never)]
fn read_loop(data: &[f32]) -> f32 {
    let (chunks, rest) = data.as_chunks::<64>();
    let mut acc = [0.0f32; 64];
    for c in chunks {
        for i in 0..64 {
            acc[i] += c[i];
        }
    }
    acc.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

/// Measures the machine's read bandwidth over a buffer of `buffer_bytes` (the best of
/// `rounds` passes, every thread reading its own part) and its multiply-add rate (every
/// thread running `mac_loop`), with `now` a clock in ms. The buffer is allocated, written
/// once (so its pages exist), read and freed here.
pub fn measure(buffer_bytes: usize, rounds: usize, now: &dyn Fn() -> f64) -> Peaks {
    let threads = par::thread_count().max(1);
    let len = (buffer_bytes / 4).max(64 * threads);
    let data = vec![1.0f32; len];
    // One unit a thread; the work per unit is large enough for every unit to run apart.
    let per = len / threads;
    let mut sums = vec![0.0f32; threads];
    let mut best_read = f64::INFINITY;
    for _ in 0..rounds.max(1) {
        let t0 = now();
        par::rows(&mut sums, per, |i, out| {
            for (k, o) in out.iter_mut().enumerate() {
                let u = i + k;
                *o = read_loop(&data[u * per..(u + 1) * per]);
            }
        });
        best_read = best_read.min(now() - t0);
    }
    let iters = 1 << 20;
    let mut best_mac = f64::INFINITY;
    let mut lanes = vec![0.0f32; threads];
    for _ in 0..rounds.max(1) {
        let t0 = now();
        par::rows(&mut lanes, 1 << 26, |_, out| {
            for o in out.iter_mut() {
                *o = mac_loop(
                    iters,
                    std::hint::black_box(0.999_9),
                    std::hint::black_box(1e-4),
                );
            }
        });
        best_mac = best_mac.min(now() - t0);
    }
    std::hint::black_box((&sums, &lanes));
    let flops = (threads * iters * CHAINS * WIDTH * 2) as f64 / (best_mac.max(1e-3) / 1000.0);
    Peaks {
        roof: Roof {
            flops,
            bytes_per_s: (per * threads * 4) as f64 / (best_read.max(1e-3) / 1000.0),
        },
        buffer_bytes: (len * 4) as u64,
        threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_h100_ridge_is_the_references_295() {
        assert!(
            (H100_SXM.ridge() - 295.2).abs() < 0.1,
            "{}",
            H100_SXM.ridge()
        );
        // Below the ridge the roof is the bandwidth line, above it the flat compute roof.
        assert_eq!(H100_SXM.attainable(1.0), 3.35e12);
        assert_eq!(H100_SXM.attainable(1000.0), 989e12);
        assert_eq!(H100_SXM.bound(1.0), Bound::Memory);
        assert_eq!(H100_SXM.bound(300.0), Bound::Compute);
    }

    /// Llama-2-7B in fp16 at real scale, by hand: 6,738,415,616 parameters (its model
    /// card's 6.7B), so a decode step reads 13.48 GB of weights and does about 2 FLOP per
    /// matrix parameter for each row: ≈ 1 FLOP/byte at B = 1, far below the ridge; a
    /// 512-token prefill is far above it.
    #[test]
    fn llama2_7b_decode_is_memory_bound_and_prefill_compute_bound() {
        let c = llama2_7b();
        assert_eq!(c.n_params(), 6_738_415_616);
        let d1 = llama2_7b_pass(1, 0, false);
        // layers: 32 × (4·4096² + 3·4096·11008) = 6,476,005,376; classifier 131,072,000;
        // attention at one position 2 × 4096 × 32 = 262,144.
        assert_eq!(d1.flops, 2 * (6_476_005_376 + 131_072_000 + 262_144));
        // weights + K/V read (one position) and written, 2 bytes each: 2·32·4096·2 = 524,288.
        assert_eq!(d1.bytes, 2 * 6_738_415_616 + 2 * 524_288);
        assert!((d1.intensity() - 0.98).abs() < 0.01, "{}", d1.intensity());
        assert_eq!(H100_SXM.bound(d1.intensity()), Bound::Memory);
        // 64 rows a step read the weights once: intensity ≈ 64×.
        let d64 = llama2_7b_pass(64, 0, false);
        assert!(d64.intensity() > 60.0 && d64.intensity() < 64.0);
        let prefill = llama2_7b_pass(512, 0, true);
        assert_eq!(H100_SXM.bound(prefill.intensity()), Bound::Compute);
    }

    #[test]
    fn measured_peaks_are_positive_and_the_read_covers_the_buffer() {
        let t0 = std::time::Instant::now();
        let now = move || t0.elapsed().as_secs_f64() * 1000.0;
        let p = measure(8 << 20, 2, &now);
        assert!(p.roof.flops > 1e8 && p.roof.flops.is_finite(), "{p:?}");
        assert!(
            p.roof.bytes_per_s > 1e8 && p.roof.bytes_per_s.is_finite(),
            "{p:?}"
        );
        assert!(p.buffer_bytes >= 8 << 20);
    }

    #[test]
    fn the_loops_compute_what_they_say() {
        // x ← x·1 + 0 leaves 0.5 in every lane; the read loop sums every element.
        assert_eq!(mac_loop(10, 1.0, 0.0), 0.5 * (CHAINS * WIDTH) as f32);
        let v: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        assert_eq!(read_loop(&v), 499_500.0);
    }
}
