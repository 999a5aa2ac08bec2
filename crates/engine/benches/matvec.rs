//! The matrix-vector product of decode where its weights come from memory: the kernel
//! against the machine's streaming read rate.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

/// The 110M shape's classifier (32,000 × 768) and an input row.
fn classifier() -> (usize, usize, Vec<f32>, Vec<f32>) {
    let (d, n) = (32_000usize, 768usize);
    let w: Vec<f32> = (0..d * n)
        .map(|i| ((i % 97) as f32 - 48.0) * 1e-3)
        .collect();
    let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 1e-2).collect();
    (d, n, w, x)
}

/// Decode's matrix-vector product on one core where it reads from memory: the 110M shape's
/// classifier (32,000 × 768 floats, 98 MB, three times this machine's L3). Bytes per second
/// against the machine's streaming read rate says whether the kernel keeps up with memory.
fn matvec_from_memory(c: &mut Criterion) {
    let (d, n, w, x) = classifier();
    let mut out = vec![0.0f32; d];
    let mut g = c.benchmark_group("matvec from memory");
    g.throughput(criterion::Throughput::Bytes((d * n * 4) as u64));
    g.sample_size(20);
    for threads in [1, 2] {
        let name = format!("32000 x 768, {threads} thread(s)");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        g.bench_function(name, |b| {
            b.iter(|| {
                pool.install(|| {
                    decoding_engine::kernels::matmul(&mut out, black_box(&x), n, &[(&w).into()])
                })
            })
        });
    }
    g.finish();
}

/// Decode's matrix-vector product where the weights stay in cache: the 15M shape's W1
/// (768 × 288, 0.9 MB, within one core's L2) and stories260K's (172 × 64). Here the kernel's
/// arithmetic, not memory, sets the pace: multiply-adds per second.
fn matvec_in_cache(c: &mut Criterion) {
    // Fails (and the team keeps its size) where another group started the team first.
    let _ = decoding_engine::par::set_threads(Some(1));
    let mut g = c.benchmark_group("matvec in cache");
    for (d, n) in [(768usize, 288usize), (172, 64)] {
        let w: Vec<f32> = (0..d * n)
            .map(|i| ((i % 97) as f32 - 48.0) * 1e-3)
            .collect();
        let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 1e-2).collect();
        let mut out = vec![0.0f32; d];
        g.throughput(criterion::Throughput::Elements((d * n) as u64));
        // On the engine's own team, as a forward pass runs it: one thread where this group runs
        // first (`cargo bench --bench matvec -- "in cache"`), else the machine's.
        let threads = decoding_engine::par::thread_count();
        g.bench_function(format!("{d} x {n}, {threads} thread(s)"), |b| {
            // The timed loop runs inside the team, as a command does (one hand-off for all
            // the iterations, not one each).
            b.iter_custom(|iters| {
                decoding_engine::par::install(|| {
                    let start = std::time::Instant::now();
                    for _ in 0..iters {
                        decoding_engine::kernels::matmul(
                            &mut out,
                            black_box(&x),
                            n,
                            &[(&w).into()],
                        );
                    }
                    start.elapsed()
                })
            })
        });
    }
    g.finish();
}

/// The same product with the matrix quantized: Q8 (groups of 64) and Q4 (groups of 32), 4×
/// and 6.4× fewer bytes. Throughput is counted in weights (elements), so the three compare
/// as multiply-adds per second; the engine's team runs the rows on 1 or 2 threads.
fn quantized_matvec_from_memory(c: &mut Criterion) {
    use decoding_engine::quant::{Precision, Tensor};
    let (d, n, w, x) = classifier();
    let mut out = vec![0.0f32; d];
    let f32s = Tensor::F32(w.into());
    let mut g = c.benchmark_group("matvec by precision");
    g.throughput(criterion::Throughput::Elements((d * n) as u64));
    g.sample_size(20);
    for p in Precision::ALL {
        let t = f32s.at(p, 1, 64);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let name = format!("{p} 32000 x 768, {threads} thread(s)");
            g.bench_function(name, |b| {
                b.iter(|| {
                    pool.install(|| {
                        decoding_engine::kernels::matmul(
                            &mut out,
                            black_box(&x),
                            n,
                            &[t.block(0, 1)],
                        )
                    })
                })
            });
        }
    }
    g.finish();
}

criterion_group!(
    benches,
    matvec_from_memory,
    matvec_in_cache,
    quantized_matvec_from_memory
);
criterion_main!(benches);
