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
//! and in the page's worker) with the engine's own kernels ([`measure`]): decode's
//! matrix-vector product streaming a matrix the size of the model's weights, and a batched
//! matrix product inside the cache. A roof measured with slower code than the passes it
//! bounds would be drawn under them.
//! The lesson's point at real scale uses the H100's published figures (`docs/REFERENCES.md`:
//! 989 TFLOP/s fp16 dense, 3.35 TB/s, ridge ≈ 295 FLOP/byte).

use crate::config::Config;
use crate::quant::{MatRef, Tensor};
use crate::serving::cost::PassCost;
use crate::{kernels, par};

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
/// HBM3 (the H100 datasheet; `docs/REFERENCES.md`, "Roofline").
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
    /// the bandwidth probe's matrix (the model's weights' size: what its decode streams)
    pub buffer_bytes: u64,
    /// the engine's threads (each probe ran on all of them and on one; the faster counts)
    pub threads: usize,
}

impl Peaks {
    /// The higher of two probes of the same buffer, ceiling by ceiling: a ceiling is the best
    /// the machine did, and a probe that shared the machine with other work reads low.
    pub fn best(self, other: Peaks) -> Peaks {
        Peaks {
            roof: Roof {
                flops: self.roof.flops.max(other.roof.flops),
                bytes_per_s: self.roof.bytes_per_s.max(other.roof.bytes_per_s),
            },
            ..self
        }
    }
}

/// The compute probe's product: X (`PEAK_ROWS`, n) × W (`PEAK_D`, n), at most 384 KiB
/// together (inside a core's L2 on the machines we run on, 512 KiB on Zen 3), with n the
/// model's own row length and a long one (`PEAK_N`): the faster counts.
const PEAK_ROWS: usize = 64;
const PEAK_D: usize = 128;
const PEAK_N: usize = 512;
/// Least wall time of one round of a probe (the clock in a browser's worker ticks in
/// about 0.1 ms).
const ROUND_MS: f64 = 4.0;

/// Runs `f` until `ROUND_MS` have passed, `rounds` times after one untimed round (code
/// compiled again once it is hot, as browsers do, is then in place); the best time per
/// call, ms.
pub(crate) fn best_per_call(rounds: usize, now: &dyn Fn() -> f64, f: &mut dyn FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for round in 0..=rounds.max(1) {
        let (t0, mut calls) = (now(), 0u32);
        while calls == 0 || now() - t0 < ROUND_MS {
            f();
            calls += 1;
        }
        if round > 0 {
            best = best.min((now() - t0) / calls as f64);
        }
    }
    best.max(1e-6)
}

/// Measures the machine's two ceilings with the engine's own kernels, so that what they
/// bound cannot beat them (a probe of a plain multiply-then-add chain once read a compute
/// peak far under what prefill achieved, so prefill drew well above 100 % "of roof":
/// BENCHMARKS.md, "The roofline's peaks come from the engine's own kernels"):
///
/// - bandwidth: decode's own matrix-vector product (`kernels::matmul` with one input row, the
///   widest SIMD this build has) streaming a float32 matrix of `buffer_bytes` with rows of
///   `row` floats — pass the model's weight bytes and `dim`, and the probe reads from where
///   its decode reads (a small model's weights sit in the cache: so does the probe's
///   matrix); bytes a second over the matrix;
/// - compute: the same `kernels::matmul` on a batch of 64 rows against a matrix inside the
///   cache (prefill's path), rows of the model's length and long ones: the faster's FLOP a
///   second.
///
/// Each is timed on every thread and on one (`par::alone`), and the faster counts: a small
/// model's decode runs each product on one thread (under the task floor), and on a busy
/// machine a split product waits for its other thread, so a probe on every thread alone read
/// a small fraction of what one-thread decode streamed beside another process, and a CI run
/// drew B = 1 decode above 100 % "of roof" (the same entry of BENCHMARKS.md). Each is the
/// best of `rounds` rounds; `now` is a clock in ms. The matrices are allocated, filled,
/// timed and freed here.
pub fn measure(buffer_bytes: usize, row: usize, rounds: usize, now: &dyn Fn() -> f64) -> Peaks {
    let n = row.max(8);
    let d = (buffer_bytes / 4 / n).max(64);
    let fill = |len: usize, k: usize| -> Vec<f32> {
        (0..len)
            .map(|i| ((i * 37 + k) % 101) as f32 * 1e-3 - 0.05)
            .collect()
    };
    // The best time per call of `f`, on every thread and on this one alone.
    let best_either_way = |f: &mut dyn FnMut()| -> f64 {
        let all = best_per_call(rounds, now, &mut *f);
        if par::thread_count() < 2 {
            return all;
        }
        all.min(par::alone(|| best_per_call(rounds, now, f)))
    };
    let (w, x) = (fill(d * n, 1), fill(n, 2));
    let mut out = vec![0.0f32; d];
    let read_ms = best_either_way(&mut || {
        kernels::matmul(&mut out, &x, n, &[MatRef::F32(&w)]);
        std::hint::black_box(&out);
    });
    drop(w);
    let flops = [n.min(PEAK_N), PEAK_N]
        .into_iter()
        .map(|k| {
            let (wc, xc) = (fill(PEAK_D * k, 3), fill(PEAK_ROWS * k, 4));
            let mut outc = vec![0.0f32; PEAK_ROWS * PEAK_D];
            let ms = best_either_way(&mut || {
                kernels::matmul(&mut outc, &xc, k, &[MatRef::F32(&wc)]);
                std::hint::black_box(&outc);
            });
            (2 * PEAK_ROWS * PEAK_D * k) as f64 / (ms / 1000.0)
        })
        .fold(0.0f64, f64::max);
    Peaks {
        roof: Roof {
            flops,
            bytes_per_s: (d * n * 4) as f64 / (read_ms / 1000.0),
        },
        buffer_bytes: (d * n * 4) as u64,
        threads: par::thread_count().max(1),
    }
}

/// Bytes a piece of the weights' read in [`weights_bandwidth`] (one task's share).
const PIECE: usize = 1 << 20;

/// The machine's read bandwidth over the model's own weights, bytes a second: every
/// matrix's storage read once a call as 64-bit words, in pieces of [`PIECE`] bytes over the
/// engine's threads (the best of that and one thread alone, as [`measure`]), the best of
/// `rounds` rounds by `now` (ms). No buffer of its own: in the page wasm memory never
/// shrinks, and the KV panel's first probe, a matrix the size of the weights, stayed
/// allocated beside them (1.42× a 78 MB model's bytes).
pub fn weights_bandwidth(
    w: &crate::weights::TransformerWeights,
    c: &Config,
    rounds: usize,
    now: &dyn Fn() -> f64,
) -> f64 {
    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut f16s: Vec<&[half::f16]> = Vec::new();
    for (_, t, _) in w.matrices(c) {
        match t {
            Tensor::F32(v) => pieces.extend(bytemuck::cast_slice::<f32, u8>(v).chunks(PIECE)),
            Tensor::F16(v) => f16s.extend(v.chunks(PIECE / 2)),
            Tensor::Quant(q) => {
                pieces.extend(q.values.chunks(PIECE));
                pieces.extend(bytemuck::cast_slice::<f32, u8>(&q.scales).chunks(PIECE));
            }
            Tensor::Ggml(g) => {
                for p in &g.parts {
                    pieces.extend(p.bytes.chunks(PIECE));
                }
            }
        }
    }
    let bytes: usize = pieces.iter().map(|p| p.len()).sum::<usize>()
        + 2 * f16s.iter().map(|p| p.len()).sum::<usize>();
    let n = pieces.len() + f16s.len();
    let mut out = vec![0.0f32; n];
    let mut read = || {
        par::rows(&mut out, PIECE, |first, chunk| {
            for (i, o) in chunk.iter_mut().enumerate() {
                let k = first + i;
                let sum = match pieces.get(k) {
                    Some(p) => words(p),
                    None => f16s[k - pieces.len()]
                        .iter()
                        .fold(0u64, |a, h| a.wrapping_add(h.to_bits() as u64)),
                };
                *o = sum as f32;
            }
        });
        std::hint::black_box(&out);
    };
    let all = best_per_call(rounds, now, &mut read);
    let ms = if par::thread_count() < 2 {
        all
    } else {
        all.min(par::alone(|| best_per_call(rounds, now, &mut read)))
    };
    bytes as f64 / (ms / 1e3)
}

/// Σ of `b`'s 64-bit little-endian words in eight lanes (a vector add a 64-byte line), its
/// last bytes added one by one.
fn words(b: &[u8]) -> u64 {
    let mut lanes = [0u64; 8];
    let lines = b.chunks_exact(64);
    let tail = lines.remainder();
    for line in lines {
        for (k, lane) in lanes.iter_mut().enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&line[8 * k..8 * k + 8]);
            *lane = lane.wrapping_add(u64::from_le_bytes(w));
        }
    }
    let whole = lanes.iter().fold(0u64, |a, &l| a.wrapping_add(l));
    tail.iter().fold(whole, |a, &x| a.wrapping_add(x as u64))
}

/// A decode step's bandwidth model (lesson 10: decode is "memory-bandwidth-bound"): the
/// bytes it must read, the weights and the float32 K and V of the `positions` positions it
/// attends to (2·n·L·d_kv·4, `cache_bytes_formula`), and the least time they take at
/// `bytes_per_s`, ms. `bench --at` and the page's KV panel set measured steps against it.
pub fn step_model(weight_bytes: u64, c: &Config, positions: u64, bytes_per_s: f64) -> (u64, f64) {
    let kv = crate::forward::kv_cache::cache_bytes_formula(
        positions,
        c.n_layers as u64,
        c.kv_dim() as u64,
        4,
    );
    let read = weight_bytes + kv;
    (read, read as f64 / bytes_per_s.max(1.0) * 1e3)
}

/// Whether a measured point (achieved FLOP/s at its intensity) is under the roof: when it
/// is not, the roof was under-measured and must not be drawn as a ceiling.
pub fn under(roof: &Roof, intensity: f64, achieved_flops: f64) -> bool {
    achieved_flops <= roof.attainable(intensity)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The weights' read counts every byte of their storage (values and scales) and reads
    /// them at a finite, positive rate; `words` sums 64-bit words and the tail.
    #[test]
    fn the_weights_bandwidth_reads_their_bytes() {
        assert_eq!(words(&[1, 0, 0, 0, 0, 0, 0, 0, 5]), 6);
        let line: Vec<u8> = (0..130).map(|i| i as u8).collect();
        let by_hand = line[..128]
            .chunks(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            .fold(128u64 + 129, |a, x| a.wrapping_add(x));
        assert_eq!(words(&line), by_hand);
        let c = Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
        let ck = crate::weights::Checkpoint::random(c, 1).unwrap();
        let start = std::time::Instant::now();
        let now = || start.elapsed().as_secs_f64() * 1e3;
        for p in [
            crate::Precision::F32,
            crate::Precision::F16,
            crate::Precision::Q8,
        ] {
            let w = ck.weights.at(&c, p);
            let b = weights_bandwidth(&w, &c, 2, &now);
            assert!(b.is_finite() && b > 1e8, "{p}: {b} bytes/s");
        }
    }

    /// The step model by hand: stories260K's shape (5 layers, 4 K/V heads of 8) at 100
    /// positions reads 2·100·5·32·4 = 128,000 bytes of K/V beside its weights; at 1 GB/s,
    /// 1,000,000 + 128,000 bytes take 1.128 ms.
    #[test]
    fn a_step_model_is_its_bytes_over_the_bandwidth() {
        let c = Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
        let (read, ms) = step_model(1_000_000, &c, 100, 1e9);
        assert_eq!(read, 1_128_000);
        assert!((ms - 1.128).abs() < 1e-12, "{ms}");
    }

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
        let p = measure(8 << 20, 288, 2, &now);
        assert!(p.roof.flops > 1e8 && p.roof.flops.is_finite(), "{p:?}");
        assert!(
            p.roof.bytes_per_s > 1e8 && p.roof.bytes_per_s.is_finite(),
            "{p:?}"
        );
        // 8 MiB in rows of 288 floats: 7,281 whole rows.
        assert_eq!(p.buffer_bytes, 7_281 * 288 * 4);
        // A buffer smaller than 64 rows is read as 64 rows.
        assert_eq!(measure(100, 8, 1, &now).buffer_bytes, 64 * 8 * 4);
    }
}
