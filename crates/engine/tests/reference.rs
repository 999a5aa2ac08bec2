//! The tuned forward pass against the readable reference (`forward/reference.rs`, llama2.c's
//! `forward()` in plain loops): the same logits, bit for bit, whether the tuned pass runs a
//! prompt as one batch or token by token, at every precision (float32, float16, q8 and q4
//! with int8 or float32 activations), with GQA, Qwen2's Q/K/V biases and Llama 3's RoPE
//! factors, through this machine's kernels; and decode's long float32 rows through every
//! row order the CPU backend's trial takes in turn.

mod common;

use decoding_engine::budget::Budget;
use decoding_engine::forward::reference::Reference;
use decoding_engine::forward::RunState;
use decoding_engine::quant::Activations;
use decoding_engine::{KvCache, Model, Precision, Transformer};

/// A prompt of `n` tokens of the model's vocabulary (BOS first).
fn tokens(vocab: usize, n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| {
            if i == 0 {
                1
            } else {
                (i * 37 + 11) % vocab as u32
            }
        })
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The reference's logits at every position equal the tuned pass's, as one prefill of the
/// whole prompt and as decode steps one token at a time (which run decode's own kernels:
/// matrix-vector rows, measured variants).
fn assert_reference_bits(name: &str, t: &Transformer, n: usize) {
    let vocab = t.config.vocab_size;
    let toks = tokens(vocab, n.min(t.config.seq_len));
    let batched = common::prefill_logits(t, &toks);
    let mut r = Reference::new(t);
    let mut cache = KvCache::new(&t.config);
    let mut s = RunState::new(&t.config);
    let mut step = vec![0.0f32; vocab];
    for (pos, &tok) in toks.iter().enumerate() {
        let want = r.forward(tok, pos);
        assert_eq!(
            bits(&batched[pos * vocab..(pos + 1) * vocab]),
            bits(&want),
            "{name}: the batched pass at position {pos}"
        );
        t.decode(&mut s, &mut cache, tok, &mut step).unwrap();
        assert_eq!(bits(&step), bits(&want), "{name}: decode at position {pos}");
    }
}

#[test]
fn stories260k_at_every_precision_is_the_reference() {
    let m = common::stories260k();
    let t = &m.transformer;
    assert_reference_bits("stories260K f32", t, 40);
    for p in [Precision::F16, Precision::Q8, Precision::Q4] {
        let q = t.at(p);
        assert_reference_bits(&format!("stories260K {p}, int8 activations"), &q, 24);
        let f = q.with_activations(Activations::F32);
        assert_reference_bits(&format!("stories260K {p}, f32 activations"), &f, 24);
    }
}

fn gguf(name: &str) -> Transformer {
    let bytes = common::fixture("../../assets/models/fixtures/arch", name);
    let m = Model::from_memory([(name, &bytes)], Budget::default()).unwrap();
    m.transformer.as_ref().clone()
}

#[test]
fn qwen2_biases_and_llama3_rope_factors_are_the_reference() {
    assert_reference_bits("qwen2 (Q/K/V biases)", &gguf("qwen2.gguf"), 20);
    assert_reference_bits("llama3 (RoPE factors)", &gguf("llama3-rope.gguf"), 20);
}

#[test]
fn gguf_types_are_the_reference() {
    for name in [
        "tiny-f16.gguf",
        "tiny-bf16.gguf",
        "tiny-q8_0.gguf",
        "tiny-q4_0.gguf",
    ] {
        let bytes = common::fixture("../../assets/models/fixtures/gguf", name);
        let m = Model::from_memory([(name, &bytes)], Budget::default()).unwrap();
        assert_reference_bits(name, &m.transformer, 16);
    }
}

/// Rows longer than decode's grouped rows go through the float32 loops the trial times in
/// turn (kernels/tune.rs): decoded through the CPU backend for the whole trial and past it,
/// every step is the reference's, whichever loop ran it.
#[test]
fn long_float32_rows_through_the_trials_loops_are_the_reference() {
    use decoding_engine::{Backend, Batch, Checkpoint, Config, CpuBackend, Logits};
    use std::sync::Arc;
    let steps = decoding_engine::kernels::tune::TRIAL_STEPS + 2;
    // dim 320 and hidden 512: every decode product has rows over 256 floats.
    let c = Config::from_header([320, 512, 2, 4, 4, 256, steps as i32]).unwrap();
    let t = Arc::new(Transformer::new(Checkpoint::random(c, 7).unwrap()));
    let mut be = CpuBackend::new(t.clone());
    let seq = be.new_sequence().unwrap();
    let mut r = Reference::new(&t);
    for (pos, &tok) in tokens(256, steps).iter().enumerate() {
        let got = be
            .forward_sync(&Batch::tokens(seq, pos, &[tok], Logits::Last))
            .unwrap();
        assert_eq!(bits(&got), bits(&r.forward(tok, pos)), "step {pos}");
    }
}

/// The equality above is no accident of a pass that ignores its weights: a query row
/// changed changes the reference's logits.
#[test]
fn the_reference_sees_each_weight() {
    let m = common::stories260k();
    let t = &m.transformer;
    let mut changed = t.as_ref().clone();
    if let decoding_engine::quant::Tensor::F32(w) = &mut changed.weights.wq {
        let mut v = w.to_vec();
        v[3 * 64..4 * 64].iter_mut().for_each(|x| *x += 0.5);
        *w = v.into();
    }
    let toks = tokens(512, 4);
    let (mut a, mut b) = (Reference::new(t), Reference::new(&changed));
    let last = toks
        .iter()
        .enumerate()
        .map(|(pos, &tok)| (a.forward(tok, pos), b.forward(tok, pos)))
        .last()
        .unwrap();
    assert!(bits(&last.0) != bits(&last.1));
}
