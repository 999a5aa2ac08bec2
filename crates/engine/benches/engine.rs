//! `cargo bench -p decoding-engine`: the sampling chain on a 32,000-entry logits vector (the
//! page re-runs it on every slider move, so it must stay well under a millisecond), and one
//! decode step of stories260K-sized and 15M-sized random models.

use criterion::{criterion_group, criterion_main, Criterion};
use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::sampling::chain::process_f64;
use decoding_engine::decode::sampling::{History, RawSettings};
use decoding_engine::{Batch, Checkpoint, Config, Logits, Transformer};
use rand_core::{RngCore, SeedableRng};
use std::hint::black_box;
use std::sync::Arc;

fn logits(n: usize) -> Vec<f64> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    // Roughly the spread of a real model's logits.
    (0..n)
        .map(|_| {
            let u = (rng.next_u32() >> 8) as f64 / (1u32 << 24) as f64;
            let v = (rng.next_u32() >> 8) as f64 / (1u32 << 24) as f64;
            3.0 * (-2.0 * (u + 1e-12).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        })
        .collect()
}

fn chain(c: &mut Criterion) {
    let z = logits(32_000);
    let history: Vec<u32> = (0..256u32).map(|i| (i * 7919) % 32_000).collect();
    let h = History {
        prompt: &history[..16],
        generated: &history[16..],
        ..History::default()
    };
    let full = RawSettings::from_pairs([
        ("repetition_penalty", "1.1"),
        ("frequency_penalty", "0.3"),
        ("presence_penalty", "0.2"),
        ("temperature", "0.8"),
        ("top_k", "40"),
        ("top_p", "0.9"),
        ("min_p", "0.05"),
    ])
    .validate(32_000)
    .unwrap();
    let mut g = c.benchmark_group("sampling chain, 32000 logits");
    g.bench_function("penalties+temperature+top_k+top_p+min_p", |b| {
        b.iter(|| process_f64(&full, black_box(&z), h, 0.5, false).unwrap())
    });
    g.bench_function("same, with the full trace", |b| {
        b.iter(|| process_f64(&full, black_box(&z), h, 0.5, true).unwrap())
    });
    let top_p_only = RawSettings::from_pairs([("temperature", "0.8"), ("top_p", "0.9")])
        .validate(32_000)
        .unwrap();
    g.bench_function(
        "temperature+top_p (no top-k: the nucleus is sought among all 32000)",
        |b| b.iter(|| process_f64(&top_p_only, black_box(&z), h, 0.5, false).unwrap()),
    );
    // llama.cpp's default chain with the samplers of 2026 on (DRY scans the 256-token
    // history; XTC fires at probability 1), and mirostat 2 in its place.
    let modern = RawSettings::from_pairs([
        ("profile", "llama.cpp"),
        ("dry_multiplier", "0.8"),
        ("dry_penalty_last_n", "256"),
        ("xtc_probability", "1"),
        ("top_n_sigma", "1.5"),
        ("dynatemp_range", "0.5"),
    ])
    .validate(32_000)
    .unwrap();
    g.bench_function("llama.cpp's chain + DRY + XTC + top-nσ + dynamic T", |b| {
        b.iter(|| process_f64(&modern, black_box(&z), h, 0.5, false).unwrap())
    });
    let miro = RawSettings::from_pairs([("profile", "llama.cpp"), ("mirostat", "2")])
        .validate(32_000)
        .unwrap();
    g.bench_function("mirostat 2 (replacing llama.cpp's chain)", |b| {
        b.iter(|| process_f64(&miro, black_box(&z), h, 0.5, false).unwrap())
    });
    let greedy = RawSettings::from_pairs([("temperature", "0")])
        .validate(32_000)
        .unwrap();
    g.bench_function(
        "temperature 0 (greedy, as `generate --temperature 0`)",
        |b| b.iter(|| process_f64(&greedy, black_box(&z), h, 0.5, false).unwrap()),
    );
    // The model probability every step records (`Step::model_prob`): log Σ e^z over the
    // vocabulary, in 8 lanes of `kernels::exp_nonpositive8`, beside the plain libm sum it
    // replaced.
    let z32: Vec<f32> = z.iter().map(|&v| v as f32).collect();
    g.bench_function("log-sum-exp (model probability of a step)", |b| {
        b.iter(|| decoding_engine::kernels::logprob::log_sum_exp(black_box(&z32)))
    });
    g.bench_function("log-sum-exp, libm exp one at a time", |b| {
        b.iter(|| {
            let z = black_box(&z32);
            let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            max + z.iter().map(|&v| (v as f64 - max).exp()).sum::<f64>().ln()
        })
    });
    g.finish();
}

fn decode_step(c: &mut Criterion) {
    let shapes = [
        ("stories260K shape", [64, 172, 5, 8, 4, 512, 512]),
        ("15M shape", [288, 768, 6, 6, 6, 32000, 256]),
    ];
    let mut g = c.benchmark_group("decode step at position 64");
    for (name, header) in shapes {
        let config = Config::from_header(header).unwrap();
        let model = Arc::new(Transformer::new(Checkpoint::random(config, 1).unwrap()));
        let mut be = CpuBackend::new(model);
        let seq = be.new_sequence().unwrap();
        let prompt: Vec<u32> = (0..64).map(|i| i % 100).collect();
        be.forward_sync(&Batch::tokens(seq, 0, &prompt, Logits::Last))
            .unwrap();
        g.bench_function(name, |b| {
            b.iter(|| {
                be.truncate(seq, 64).unwrap();
                be.forward_sync(black_box(&Batch::tokens(seq, 64, &[7], Logits::Last)))
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, chain, decode_step);
criterion_main!(benches);
