//! The whole forward pass on the GPU against the CPU reference, on stories260K: greedy golden
//! text, next-token probabilities, forced-decoding agreement, cache operations, batches, beam
//! search, speculative decoding, batching, the probe, and GGUF and Hugging Face models.
//! Limits, fallback and device loss are in `fallback.rs`.
// Native only: these run on the Vulkan adapter (lavapipe without a GPU).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{generate, gpu, gpu_backend, model, settings};
use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::beam::{beam_search, BeamConfig};
use decoding_engine::quant::Activations;
use decoding_engine::{Model, Precision};
use decoding_gpu::{GpuBackend, GpuContext};
use pollster::block_on;
use std::rc::Rc;
use std::sync::Arc;

/// The tests' own softmax of a backend's logits.
use common::softmax::softmax_f32 as softmax;

use decoding_engine::kernels::logprob::argmax;

#[test]
fn greedy_200_tokens_are_identical_to_the_cpu() {
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    let s = settings(&[
        ("temperature", "0"),
        ("max_tokens", "200"),
        ("logit_bias", "1:-100,2:-100"),
    ]);
    let on_gpu = generate(&mut g, &m, "Once upon a time", &s);
    let on_cpu = generate(&mut c, &m, "Once upon a time", &s);
    assert_eq!(on_gpu.len(), 200);
    assert_eq!(on_gpu, on_cpu);
    let text = m.tokenizer.decode(&on_gpu).unwrap();
    assert!(
        text.starts_with(", there was a little girl named Lily."),
        "{text}"
    );
}

/// Quantized and f16 weights stay so on the GPU (its weights buffers are their bytes) and
/// give the CPU's greedy text for 100 tokens.
#[test]
fn quantized_greedy_100_tokens_are_identical_to_the_cpu() {
    let m = model();
    if gpu().is_none() {
        return;
    }
    let s = settings(&[
        ("temperature", "0"),
        ("max_tokens", "100"),
        ("logit_bias", "1:-100,2:-100"),
    ]);
    for p in [Precision::F16, Precision::Q8, Precision::Q4] {
        let q = m.with_transformer(std::sync::Arc::new(m.transformer.at(p)));
        let ctx = block_on(GpuContext::new()).unwrap();
        let mut g = GpuBackend::new(Rc::new(ctx), &q.transformer).unwrap();
        assert_eq!(
            g.weight_bytes(),
            q.transformer.weights.bytes(q.config()) - 4 * 11 * 64,
            "{p}: the matrices' quantized bytes (norms apart)"
        );
        // float32 activations, as the GPU's kernels multiply them
        let mut c = CpuBackend::new(Arc::new(q.transformer.with_activations(Activations::F32)));
        let on_gpu = generate(&mut g, &q, "Once upon a time", &s);
        let on_cpu = generate(&mut c, &q, "Once upon a time", &s);
        assert_eq!(on_cpu.len(), 100, "{p}");
        assert_eq!(on_gpu, on_cpu, "{p}");
    }
}

/// On a device that binds less at once, the packed [W1; W3] is split over buffers of a few
/// layers each (stories260K's 440,320 bytes over a limit of 327,680, the size of one of its
/// caches: three layers, then two) and the logits are the unsplit backend's, bit for bit.
#[test]
fn packed_matrices_split_over_buffers_give_the_same_logits() {
    let m = model();
    let Some(mut whole) = gpu_backend(&m) else {
        return;
    };
    let ctx = block_on(GpuContext::new()).unwrap();
    let mut split = GpuBackend::with_bind_limit(Rc::new(ctx), &m.transformer, 327_680).unwrap();
    let ids = m
        .encode_prompt("Lily and Ben went to the park. They saw")
        .unwrap();
    let (a, b) = (whole.new_sequence().unwrap(), split.new_sequence().unwrap());
    let (la, lb) = (
        block_on(whole.forward(a, &ids, false)).unwrap(),
        block_on(split.forward(b, &ids, false)).unwrap(),
    );
    assert_eq!(la, lb);
    // One byte less than the cache's half: refused by name before anything is allocated.
    let ctx = block_on(GpuContext::new()).unwrap();
    let err = GpuBackend::with_bind_limit(Rc::new(ctx), &m.transformer, 327_679)
        .err()
        .expect("a limit under the cache's size is refused");
    assert!(err.to_string().contains("KV cache"), "{err}");
}

#[test]
fn next_token_probabilities_agree_within_1e_4() {
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    for prompt in [
        "Once upon a time",
        "The little dog",
        "Lily and Ben went to the park. They saw",
        "",
        "One day, a big red ball rolled",
    ] {
        let ids = m.encode_prompt(prompt).unwrap();
        let (sg, sc) = (g.new_sequence().unwrap(), c.new_sequence().unwrap());
        let pg = softmax(&block_on(g.forward(sg, &ids, false)).unwrap());
        let pc = softmax(&block_on(c.forward(sc, &ids, false)).unwrap());
        let worst = pg
            .iter()
            .zip(&pc)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst <= 1e-4, "{prompt:?}: max |Δp| = {worst}");
        g.release(sg);
        c.release(sc);
    }
}

#[test]
fn forced_decoding_top1_agrees_over_500_positions() {
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    // 500 positions of real text: the model's own sampled story (seeded), forced on both.
    let mut text_ids = m.encode_prompt("Once upon a time").unwrap();
    text_ids.extend(generate(
        &mut c,
        &m,
        "Once upon a time",
        &settings(&[
            ("seed", "5"),
            ("max_tokens", "495"),
            ("logit_bias", "1:-100,2:-100"),
        ]),
    ));
    assert!(text_ids.len() >= 500);
    let (sg, sc) = (g.new_sequence().unwrap(), c.new_sequence().unwrap());
    let mut agree = 0;
    for &t in &text_ids[..500] {
        let lg = block_on(g.forward(sg, &[t], false)).unwrap();
        let lc = block_on(c.forward(sc, &[t], false)).unwrap();
        if argmax(&lg) == argmax(&lc) {
            agree += 1;
        }
    }
    assert_eq!(agree, 500, "top-1 agreement {agree}/500");
}

#[test]
fn prefill_in_chunks_truncate_and_fork_match_the_cpu() {
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    // 150 tokens: more than two prefill chunks; all logits.
    let ids: Vec<u32> = (0..150).map(|i| 1 + (i * 37 % 500) as u32).collect();
    let (sg, sc) = (g.new_sequence().unwrap(), c.new_sequence().unwrap());
    let lg = block_on(g.forward(sg, &ids, true)).unwrap();
    let lc = block_on(c.forward(sc, &ids, true)).unwrap();
    common::assert_all_close("prefill logits", &lg, &lc, 2e-4, 1e-4);
    // Rewind 50 positions and go on with another token on both.
    g.truncate(sg, 100).unwrap();
    c.truncate(sc, 100).unwrap();
    let fg = g.fork(sg).unwrap();
    let lg = block_on(g.forward(fg, &[42], false)).unwrap();
    let lc = block_on(c.forward(sc, &[42], false)).unwrap();
    common::assert_all_close("after truncate + fork", &lg, &lc, 2e-4, 1e-4);
    assert_eq!(g.seq_len(fg).unwrap(), 101);
    assert_eq!(g.seq_len(sg).unwrap(), 100);
    assert_eq!(g.cache_bytes(fg).unwrap(), c.cache_bytes(sc).unwrap());
}

#[test]
fn a_batch_of_several_sequences_matches_the_cpu_in_one_pass() {
    use decoding_engine::{Batch, Logits, Row};
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    let prompts: [&[u32]; 3] = [&[1, 403, 261], &[1, 49, 21, 88, 300], &[1, 7]];
    let mut seqs = Vec::new();
    for p in prompts {
        let (sg, sc) = (g.new_sequence().unwrap(), c.new_sequence().unwrap());
        block_on(g.forward(sg, p, false)).unwrap();
        block_on(c.forward(sc, p, false)).unwrap();
        seqs.push((sg, sc, p.len()));
    }
    // One batch: a decode row of sequence 0, three rows of sequence 1 (a verification,
    // logits for all), a row of sequence 2 without logits, then sequence 0's next row;
    // interleaved, so the GPU regroups them and must answer in this order.
    let rows = |pick: fn(
        &(decoding_engine::SeqId, decoding_engine::SeqId, usize),
    ) -> decoding_engine::SeqId| {
        let mut b = Batch::new();
        let row = |i: usize, k: usize, token: u32, logits: bool| Row {
            seq: pick(&seqs[i]),
            pos: seqs[i].2 + k,
            token,
            logits,
        };
        b.push(row(0, 0, 42, true));
        b.extend(pick(&seqs[1]), seqs[1].2, &[5, 6, 7], Logits::All);
        b.push(row(2, 0, 9, false));
        b.push(row(0, 1, 43, true));
        b
    };
    let lg = block_on(g.forward_batch(rows(|s| s.0))).unwrap();
    let lc = block_on(c.forward_batch(rows(|s| s.1))).unwrap();
    assert_eq!(lg.len(), 5 * 512);
    common::assert_all_close("batched logits", &lg, &lc, 2e-4, 1e-4);
    for (i, want) in [(0, 5), (1, 8), (2, 3)] {
        assert_eq!(g.seq_len(seqs[i].0).unwrap(), want);
        assert_eq!(c.seq_len(seqs[i].1).unwrap(), want);
    }
    // A row of sequence 2 alone afterwards sees the cached row the batch wrote.
    let lg = block_on(g.forward(seqs[2].0, &[11], false)).unwrap();
    let lc = block_on(c.forward(seqs[2].1, &[11], false)).unwrap();
    common::assert_all_close("after the batch", &lg, &lc, 2e-4, 1e-4);
}

#[test]
fn beam_search_on_the_gpu_matches_the_cpu() {
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    let ids = m.encode_prompt("Once upon a time").unwrap();
    let config = BeamConfig {
        width: 3,
        length_penalty: 1.0,
        early_stopping: true,
        num_return: 3,
        max_tokens: 12,
    };
    let run = |be: &mut dyn Backend| {
        let seq = be.new_sequence().unwrap();
        let logits = block_on(be.forward(seq, &ids, false)).unwrap();
        let s = block_on(beam_search(be, config, seq, ids.len(), logits, vec![1, 2])).unwrap();
        s.results()
            .into_iter()
            .map(|h| h.tokens)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(&mut g), run(&mut c));
}

#[test]
fn same_seeded_samples_on_both_backends() {
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    let s = settings(&[
        ("seed", "7"),
        ("temperature", "1"),
        ("top_p", "0.9"),
        ("max_tokens", "60"),
    ]);
    assert_eq!(
        generate(&mut g, &m, "Once upon a time", &s),
        generate(&mut c, &m, "Once upon a time", &s)
    );
}

/// Speculative decoding with the model on the GPU: the drafts (the quantized one on the
/// CPU; the early-exit one through the GPU's own first layers and cache; prompt lookup) and
/// the verify pass of γ + 1 rows there. Greedy: for every draft, both rules and three
/// prompts, 100 tokens equal to plain greedy on the CPU.
#[test]
fn speculative_greedy_on_the_gpu_is_plain_greedy_for_every_draft_and_rule() {
    use decoding_engine::decode::speculative::{Draft, Rule, Speculator};
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let s = settings(&[
        ("temperature", "0"),
        ("max_tokens", "100"),
        ("logit_bias", "1:-100,2:-100"),
    ]);
    for prompt in [
        "Once upon a time",
        "The little dog",
        "Lily and Ben went to the park. They saw",
    ] {
        let want = generate(&mut CpuBackend::new(m.transformer.clone()), &m, prompt, &s);
        assert_eq!(want.len(), 100);
        let ids = m.encode_prompt(prompt).unwrap();
        for draft in [
            Draft::Quant(Precision::Q8),
            Draft::Quant(Precision::Q4),
            Draft::Exit(2),
            Draft::Ngram(2),
        ] {
            for rule in [Rule::Rejection, Rule::Match] {
                let mut sp = block_on(Speculator::start(
                    &mut g,
                    &m.transformer,
                    ids.clone(),
                    draft,
                    4,
                    rule,
                ))
                .unwrap();
                block_on(sp.run(&mut g, &s, 100, &[])).unwrap();
                assert_eq!(
                    sp.emitted(),
                    &want[..],
                    "{prompt:?} {} {rule:?}",
                    draft.name()
                );
                sp.release(&mut g);
            }
        }
    }
}

/// Batching on the GPU (one submission a pass for every active request): a seeded trace
/// through 4 slots gives every request the CPU's tokens under both policies.
#[test]
fn continuous_and_static_batching_on_the_gpu_give_the_cpu_tokens() {
    use decoding_engine::serving::batching::{simulate, trace, Policy};
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let s = settings(&[("temperature", "0"), ("max_tokens", "1000")]);
    let reqs = trace(3, 8, 512, 10, 16, 1.0);
    let ends = [m.tokenizer.eos, m.tokenizer.bos];
    let clock = || 0.0;
    for policy in [Policy::Continuous, Policy::Static] {
        let mut cpu = CpuBackend::new(m.transformer.clone());
        let want = block_on(simulate(&mut cpu, &s, &reqs, 4, policy, &ends, &clock)).unwrap();
        let got = block_on(simulate(&mut g, &s, &reqs, 4, policy, &ends, &clock)).unwrap();
        let tokens = |r: &decoding_engine::serving::batching::SimResult| -> Vec<Vec<u32>> {
            r.served.iter().map(|x| x.tokens.clone()).collect()
        };
        assert_eq!(tokens(&got), tokens(&want), "{policy:?}");
        assert_eq!(got.passes, want.passes);
    }
}

#[test]
fn the_probe_on_the_gpu_records_the_cpu_attention_and_residuals() {
    use decoding_engine::{Batch, Logits, ProbeSpec};
    let m = model();
    let Some(mut g) = gpu_backend(&m) else { return };
    let mut c = CpuBackend::new(m.transformer.clone());
    let layers = m.transformer.config.n_layers;
    // 90 tokens: the batch spans two submissions, its 40 recorded rows both of them.
    let ids: Vec<u32> = (0..90).map(|i| 1 + (i * 53 % 500) as u32).collect();
    let spec = ProbeSpec { lens_rows: 40 };
    let (sg, sc) = (g.new_sequence().unwrap(), c.new_sequence().unwrap());
    let pg = block_on(g.forward_probe(Batch::tokens(sg, 0, &ids, Logits::Last), spec)).unwrap();
    let pc = block_on(c.forward_probe(Batch::tokens(sc, 0, &ids, Logits::Last), spec)).unwrap();
    common::assert_all_close("probed logits", &pg.logits, &pc.logits, 2e-4, 1e-4);
    let (rg, rc) = (&pg.record, &pc.record);
    assert_eq!(
        (rg.pos, rg.positions(), &rg.lens_positions),
        (89, 90, &rc.lens_positions)
    );
    for l in 0..layers {
        for h in 0..rg.n_heads {
            let w = rg.weights(l, h);
            let sum: f32 = w.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "layer {l} head {h}: Σ = {sum}");
            common::assert_all_close(
                &format!("attention {l}/{h}"),
                w,
                rc.weights(l, h),
                1e-4,
                1e-4,
            );
        }
        for i in [0, 13, 39] {
            let what = format!("residual after layer {l}, row {i}");
            common::assert_all_close(&what, rg.residual(l, i), rc.residual(l, i), 1e-3, 1e-3);
        }
    }
    // A probed decode step on the GPU: its logits are the unprobed pass's, bit for bit.
    let f = g.fork(sg).unwrap();
    let probed =
        block_on(g.forward_probe(Batch::tokens(sg, 90, &[42], Logits::Last), spec)).unwrap();
    let plain = block_on(g.forward(f, &[42], false)).unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&probed.logits), bits(&plain));
    assert_eq!(
        (
            probed.record.positions(),
            probed.record.lens_positions.clone()
        ),
        (91, vec![90])
    );
}

/// Every position's probabilities of a prompt's prefill on the GPU within 1e-4 of the
/// CPU's; false when there is no GPU (and the test may skip).
fn gpu_agrees_with_cpu(m: &Model, name: &str) -> bool {
    let Some(mut g) = gpu_backend(m) else {
        return false;
    };
    // The GPU multiplies quantized weights with float32 activations: so does its CPU twin.
    let mut c = CpuBackend::new(Arc::new(m.transformer.with_activations(Activations::F32)));
    let ids = m.encode_prompt("Once upon a time, there was a").unwrap();
    let (sg, sc) = (g.new_sequence().unwrap(), c.new_sequence().unwrap());
    let lg = block_on(g.forward(sg, &ids, true)).unwrap();
    let lc = block_on(c.forward(sc, &ids, true)).unwrap();
    let v = m.config().vocab_size;
    for (a, b) in lg.chunks(v).zip(lc.chunks(v)) {
        let (pa, pb) = (softmax(a), softmax(b));
        let worst = pa
            .iter()
            .zip(&pb)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-4, "{name}: {worst}");
    }
    true
}

/// GGUF models (written by llama.cpp's gguf package, `scripts/make-fixtures.sh`) in Q8_0 and
/// Q4_0 (groups of 32) and F16 run on the GPU with the CPU's probabilities.
#[test]
fn gguf_models_of_every_type_run_on_the_gpu_as_on_the_cpu() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/models/fixtures/gguf");
    for name in ["tiny-q8_0.gguf", "tiny-q4_0.gguf", "tiny-f16.gguf"] {
        let bytes = std::fs::read(dir.join(name)).expect("run scripts/make-fixtures.sh");
        let m = Model::from_memory(
            [("model.gguf", &bytes)],
            decoding_engine::budget::Budget::default(),
        )
        .unwrap();
        if !gpu_agrees_with_cpu(&m, name) {
            return;
        }
    }
}

/// Hugging Face checkpoints (written by Hugging Face's safetensors and tokenizers packages,
/// `scripts/make-fixtures.sh`) with their own RoPE base (100,000) and RMSNorm ε (1e-6) run
/// on the GPU with the CPU's probabilities: the RoPE table and the norm kernel take the
/// model's values, not llama2.c's.
#[test]
fn hf_models_with_their_own_rope_base_and_epsilon_run_on_the_gpu_as_on_the_cpu() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/models/fixtures/hf");
    for name in ["theta", "bytelevel"] {
        let read =
            |f: &str| std::fs::read(dir.join(name).join(f)).expect("run scripts/make-fixtures.sh");
        let m = Model::from_memory(
            [
                ("config.json", &read("config.json")),
                ("model.safetensors", &read("model.safetensors")),
                ("tokenizer.json", &read("tokenizer.json")),
            ],
            decoding_engine::budget::Budget::default(),
        )
        .unwrap();
        assert_eq!(m.config().rope_theta, 100_000.0);
        assert_eq!(m.config().rms_eps, 1e-6);
        if !gpu_agrees_with_cpu(&m, name) {
            return;
        }
    }
}

/// Qwen2 (Q/K/V biases, its Q and K reordered at load) and Llama 3's RoPE factors
/// (`scripts/make-arch-fixtures.py`, GGUF and Hugging Face) run on the GPU with the CPU's
/// probabilities: the biases and the factored RoPE table reach the fused Q/K/V kernel.
#[test]
fn qwen2_biases_and_llama3_rope_run_on_the_gpu_as_on_the_cpu() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/models/fixtures/arch");
    let read = |f: &str| std::fs::read(dir.join(f)).expect("run scripts/make-fixtures.sh");
    let budget = decoding_engine::budget::Budget::default();
    let qwen2 = Model::from_memory([("model.gguf", &read("qwen2.gguf"))], budget).unwrap();
    assert!(qwen2.transformer.weights.qkv_bias.is_some());
    let llama3 = Model::from_memory([("model.gguf", &read("llama3-rope.gguf"))], budget).unwrap();
    assert!(llama3.transformer.weights.rope_factors.is_some());
    let hf = |dir: &str| {
        let file = |f: &str| read(&format!("{dir}/{f}"));
        Model::from_memory(
            [
                ("config.json", &file("config.json")),
                ("model.safetensors", &file("model.safetensors")),
                ("tokenizer.json", &file("tokenizer.json")),
            ],
            budget,
        )
        .unwrap()
    };
    for (m, name) in [
        (qwen2, "qwen2.gguf"),
        (llama3, "llama3-rope.gguf"),
        (hf("hf-qwen2"), "hf-qwen2"),
        (hf("hf-llama3-rope"), "hf-llama3-rope"),
    ] {
        if !gpu_agrees_with_cpu(&m, name) {
            return;
        }
    }
}
