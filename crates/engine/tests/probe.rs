//! The probe inside a forward pass (attention over the cache, residuals, the logit lens),
//! checked against a recomputation written here from the lesson's formulas in f64 (plain
//! loops: RMSNorm, Wq·x̂, RoPE as llama2.c's `run.c` rotates pairs, q·k/√d, softmax), not
//! against the pass's own code.

mod common;

use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::forward::batch::{Batch, Logits, SeqId};
use decoding_engine::forward::probe::{ProbeRecord, ProbeSpec};
use decoding_engine::forward::RunState;
use decoding_engine::weights::Checkpoint;
use decoding_engine::Config;
use decoding_engine::{KvCache, Transformer};
use pollster::block_on;
use std::sync::Arc;

/// Four query heads over two K/V heads (GQA), two layers.
fn gqa_model() -> Transformer {
    let c = Config::from_header([32, 48, 3, 4, 2, 40, 24]).unwrap();
    Transformer::new(Checkpoint::random(c, 11).unwrap())
}

fn tokens() -> Vec<u32> {
    vec![1, 7, 3, 19, 25, 4, 33, 8, 2, 17]
}

/// Runs `tokens` one decode pass at a time, the last one probed; returns its record, the
/// cache and the logits of the probed pass.
fn probed_decode(
    m: &Transformer,
    tokens: &[u32],
    spec: ProbeSpec,
) -> (ProbeRecord, KvCache, Vec<f32>) {
    let mut cache = KvCache::new(&m.config);
    let mut s = RunState::new(&m.config);
    let (last, head) = tokens.split_last().unwrap();
    for (pos, &t) in head.iter().enumerate() {
        let b = Batch::tokens(SeqId(0), pos, &[t], Logits::Last);
        m.forward(&mut s, &mut cache, &b).unwrap();
    }
    let b = Batch::tokens(SeqId(0), head.len(), &[*last], Logits::Last);
    let p = m.forward_probed(&mut s, &mut cache, &b, spec).unwrap();
    (p.record, cache, p.logits)
}

fn rmsnorm64(x: &[f64], w: &[f32]) -> Vec<f64> {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
    let r = 1.0 / (ms + 1e-5).sqrt();
    x.iter().zip(w).map(|(v, &w)| v * r * w as f64).collect()
}

/// The query of the record's row at layer `l`, from that layer's input residual (the
/// embedding for layer 0, else the recorded residual after layer l − 1).
fn query(m: &Transformer, r: &ProbeRecord, token: u32, l: usize) -> Vec<f64> {
    let c = &m.config;
    let (dim, hs) = (c.dim, c.head_size());
    let input: Vec<f64> = if l == 0 {
        let e = m.weights.token_embedding.to_f32();
        e[token as usize * dim..][..dim]
            .iter()
            .map(|&v| v as f64)
            .collect()
    } else {
        let last = r.lens_positions.len() - 1;
        r.residual(l - 1, last).iter().map(|&v| v as f64).collect()
    };
    let xn = rmsnorm64(&input, &m.weights.rms_att[l * dim..][..dim]);
    let wq = m.weights.wq.to_f32();
    let wq = &wq[l * dim * dim..][..dim * dim];
    let mut q: Vec<f64> = (0..dim)
        .map(|i| (0..dim).map(|j| wq[i * dim + j] as f64 * xn[j]).sum())
        .collect();
    // RoPE: pair (2i, 2i + 1) of each head turned by pos · 10000^(−2i/hs).
    for i in (0..dim).step_by(2) {
        let freq = 1.0 / 10000f64.powf((i % hs) as f64 / hs as f64);
        let (cos, sin) = ((r.pos as f64 * freq).cos(), (r.pos as f64 * freq).sin());
        let (a, b) = (q[i], q[i + 1]);
        q[i] = a * cos - b * sin;
        q[i + 1] = a * sin + b * cos;
    }
    q
}

#[test]
fn attention_weights_sum_to_one_and_are_the_softmax_of_the_query_against_the_cached_keys() {
    let m = gqa_model();
    let c = m.config;
    let toks = tokens();
    let (r, cache, _) = probed_decode(&m, &toks, ProbeSpec { lens_rows: 1 });
    let (hs, kv_dim) = (c.head_size(), c.kv_dim());
    assert_eq!((r.layers, r.n_heads, r.positions()), (3, 4, toks.len()));
    assert_eq!(r.attention.len(), 3 * 4 * toks.len());
    let mut worst = 0.0f64;
    for l in 0..c.n_layers {
        let q = query(&m, &r, *toks.last().unwrap(), l);
        let (keys, _) = cache.layer(l);
        for h in 0..c.n_heads {
            let w = r.weights(l, h);
            let sum: f64 = w.iter().map(|&v| v as f64).sum();
            assert!((sum - 1.0).abs() < 1e-5, "layer {l} head {h}: Σ = {sum}");
            // GQA: query heads 0, 1 read K/V head 0; 2, 3 read K/V head 1.
            let kvh = r.kv_head(h);
            assert_eq!(kvh, h / 2);
            let scores: Vec<f64> = (0..r.positions())
                .map(|t| {
                    let k = &keys[t * kv_dim + kvh * hs..][..hs];
                    let d: f64 = (0..hs).map(|i| q[h * hs + i] * k[i] as f64).sum();
                    d / (hs as f64).sqrt()
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let total: f64 = e.iter().sum();
            for (t, (&got, want)) in w.iter().zip(e.iter().map(|v| v / total)).enumerate() {
                let d = (got as f64 - want).abs();
                worst = worst.max(d);
                assert!(d < 1e-5, "layer {l} head {h} position {t}: {got} vs {want}");
            }
        }
    }
    assert!(
        worst > 0.0,
        "an f32 pass and an f64 recomputation differ somewhere"
    );
}

#[test]
fn the_probe_changes_nothing_of_the_pass_and_a_batch_records_what_decode_does() {
    let m = gqa_model();
    let toks = tokens();
    let spec = ProbeSpec { lens_rows: 4 };
    let (decoded, _, logits) = probed_decode(&m, &toks, ProbeSpec { lens_rows: 1 });
    // The same pass unprobed: the same logits, bit for bit.
    let mut cache = KvCache::new(&m.config);
    let mut s = RunState::new(&m.config);
    let b = Batch::tokens(SeqId(0), 0, &toks[..toks.len() - 1], Logits::None);
    m.forward(&mut s, &mut cache, &b).unwrap();
    let b = Batch::tokens(
        SeqId(0),
        toks.len() - 1,
        &toks[toks.len() - 1..],
        Logits::Last,
    );
    let plain = m.forward(&mut s, &mut cache.clone(), &b).unwrap();
    assert_eq!(bits(&plain), bits(&logits));

    // The whole sequence as one probed prefill: the last row's attention and residual are
    // the decode's bits; the earlier recorded rows are their own positions'.
    let mut cache = KvCache::new(&m.config);
    let b = Batch::tokens(SeqId(0), 0, &toks, Logits::Last);
    let p = m.forward_probed(&mut s, &mut cache, &b, spec).unwrap();
    assert_eq!(bits(&p.logits), bits(&logits));
    assert_eq!(bits(&p.record.attention), bits(&decoded.attention));
    assert_eq!(p.record.lens_positions, vec![6, 7, 8, 9]);
    for l in 0..m.config.n_layers {
        assert_eq!(bits(p.record.residual(l, 3)), bits(decoded.residual(l, 0)));
        let (short, _, _) = probed_decode(&m, &toks[..8], ProbeSpec { lens_rows: 1 });
        assert_eq!(bits(p.record.residual(l, 1)), bits(short.residual(l, 0)));
    }
    // More lens rows than the batch has: the batch's rows.
    let b = Batch::tokens(SeqId(0), 0, &toks[..2], Logits::Last);
    let p = m
        .forward_probed(&mut s, &mut KvCache::new(&m.config), &b, spec)
        .unwrap();
    assert_eq!(p.record.lens_positions, vec![0, 1]);
}

#[test]
fn the_lens_at_the_last_layer_is_the_model_and_at_layer_k_the_early_exit_draft() {
    let m = common::stories260k();
    let tr = m.transformer.clone();
    let toks = m
        .tokenizer
        .encode("Once upon a time, there was a", true)
        .unwrap();
    let n = toks.len();
    let mut be = CpuBackend::new(tr.clone());
    let seq = be.new_sequence().unwrap();
    let b = Batch::tokens(seq, 0, &toks, Logits::Last);
    let p = block_on(be.forward_probe(b, ProbeSpec { lens_rows: n })).unwrap();
    let r = &p.record;
    assert_eq!(r.lens_positions, (0..n).collect::<Vec<_>>());
    let last = tr.config.n_layers - 1;
    // Layer L's lens is the model's own head on the same residual: the pass's logits.
    assert_eq!(bits(&tr.head(r.residual(last, n - 1))), bits(&p.logits));
    let lens = tr.lens(r, 5);
    assert_eq!(lens.cells.len(), tr.config.n_layers * n);
    let argmax = |v: &[f32]| {
        (0..v.len())
            .max_by(|&a, &b| v[a].total_cmp(&v[b]).then(b.cmp(&a)))
            .unwrap() as u32
    };
    assert_eq!(lens.cell(last, n - 1).token, argmax(&p.logits));
    assert_eq!(lens.last[last].kl_to_final, 0.0);
    assert_eq!(lens.last[last].top[0].0, argmax(&p.logits));
    // Its probabilities are the softmax of the logits (T = 1).
    let lse = p.logits.iter().map(|&z| (z as f64).exp()).sum::<f64>().ln();
    let top = lens.last[last].top[0];
    assert!((top.1 - (p.logits[top.0 as usize] as f64 - lse).exp()).abs() < 1e-9);
    // Earlier layers disagree with the final distribution (KL > 0), most at the first.
    assert!(lens.last[0].kl_to_final > lens.last[last - 1].kl_to_final);
    assert!(lens.last[..last].iter().all(|l| l.kl_to_final > 0.0));
    // Layer K's lens is the exit:K draft's distribution: the first K layers, then the head.
    for k in 1..=tr.config.n_layers {
        let mut cache = KvCache::new(&tr.config);
        let b = Batch::tokens(SeqId(0), 0, &toks, Logits::Last);
        let draft = tr
            .forward_layers(&mut RunState::default(), &mut cache, &b, k)
            .unwrap();
        assert_eq!(
            bits(&tr.head(r.residual(k - 1, n - 1))),
            bits(&draft),
            "K = {k}"
        );
    }
}

#[test]
fn a_backend_without_a_probe_says_so_and_an_empty_batch_is_refused() {
    let m = Arc::new(gqa_model());
    let mut be = CpuBackend::new(m.clone());
    let err = block_on(be.forward_probe(Batch::new(), ProbeSpec { lens_rows: 1 }));
    let err = err.unwrap_err().to_string();
    assert!(err.contains("no tokens") || err.contains("empty"), "{err}");
    let mut lossy = decoding_engine::backend::testing::LosesDevice::after(CpuBackend::new(m), 5);
    let seq = lossy.new_sequence().unwrap();
    let b = Batch::tokens(seq, 0, &[1, 2], Logits::Last);
    let err = block_on(lossy.forward_probe(b, ProbeSpec { lens_rows: 1 }));
    let err = err.unwrap_err().to_string();
    assert!(err.contains("no probe"), "{err}");
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}
