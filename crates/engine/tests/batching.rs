//! Batching: batched logits equal single-sequence logits with sequences of different lengths
//! joining mid-way; every request of a seeded trace gets the tokens it gets alone under both
//! policies; continuous batching needs fewer passes than static.

mod common;

use decoding_engine::backend::testing::LosesDevice;
use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::RawSettings;
use decoding_engine::forward::batch::{Batch, Logits};
use decoding_engine::serving::batching::{simulate, throughput, trace, Lanes, Policy};
use pollster::block_on;

/// Up to 16 sequences of different lengths in one pass — some decoding, some prefilling
/// (joining mid-way) — against each run alone: equal within 1e-5 (the same bits here).
#[test]
fn batched_logits_equal_single_sequence_logits() {
    let m = common::stories260k();
    let prompts: Vec<Vec<u32>> = (0..16)
        .map(|s| {
            (0..(3 + s * 2))
                .map(|i| ((i * 31 + s * 7) % 500 + 3) as u32)
                .collect()
        })
        .collect();
    for b in [1usize, 2, 5, 16] {
        let mut batched = CpuBackend::new(m.transformer.clone());
        let seqs: Vec<_> = (0..b).map(|_| batched.new_sequence().unwrap()).collect();
        // The even sequences have their prompt but its last token cached; the odd ones
        // join now with their whole prompt.
        for (i, &s) in seqs.iter().enumerate() {
            if i % 2 == 0 {
                let p = &prompts[i];
                block_on(batched.forward(s, &p[..p.len() - 1], false)).unwrap();
            }
        }
        let mut batch = Batch::new();
        for (i, &s) in seqs.iter().enumerate() {
            let p = &prompts[i];
            if i % 2 == 0 {
                batch.extend(s, p.len() - 1, &p[p.len() - 1..], Logits::Last);
            } else {
                batch.extend(s, 0, p, Logits::Last);
            }
        }
        let out = block_on(batched.forward_batch(batch)).unwrap();
        let v = m.config().vocab_size;
        for (i, row) in out.chunks(v).enumerate() {
            let mut alone = CpuBackend::new(m.transformer.clone());
            let s = alone.new_sequence().unwrap();
            let want = block_on(alone.forward(s, &prompts[i], false)).unwrap();
            let worst = row
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(worst <= 1e-5, "B = {b}, sequence {i}: {worst}");
        }
    }
}

/// A seeded trace of 12 requests (prompts 2–12 tokens, outputs 1–24) through 4 slots: every
/// request's tokens are those it gets alone with its seed, under both policies; continuous
/// batching runs fewer passes than static on these mixed output lengths.
#[test]
fn every_request_gets_its_own_tokens_and_continuous_needs_fewer_passes() {
    let m = common::stories260k();
    let settings = RawSettings::from_pairs([("top_p", "0.9"), ("max_tokens", "1000")])
        .validate(512)
        .unwrap();
    let reqs = trace(5, 12, 512, 12, 24, 1.0);
    assert!(reqs.iter().map(|r| r.max_new).max() > reqs.iter().map(|r| r.max_new).min());
    let ends = [m.tokenizer.eos, m.tokenizer.bos];
    let clock = || 0.0;
    let mut results = Vec::new();
    for policy in [Policy::Continuous, Policy::Static] {
        let mut be = CpuBackend::new(m.transformer.clone());
        let r = block_on(simulate(
            &mut be, &settings, &reqs, 4, policy, &ends, &clock,
        ))
        .unwrap();
        assert_eq!(r.served.len(), 12);
        for s in &r.served {
            let req = &reqs[s.id];
            let mut alone_settings = settings.clone();
            alone_settings.seed = req.seed;
            let mut one = CpuBackend::new(m.transformer.clone());
            let mut g = block_on(Generation::start(
                &mut one,
                req.prompt.clone(),
                ends.to_vec(),
            ))
            .unwrap();
            while g.generated_ids().len() < req.max_new {
                match block_on(g.step(&mut one, &alone_settings, &m.tokenizer)).unwrap() {
                    StepOutcome::Token { stop: None, .. } => {}
                    _ => break,
                }
            }
            assert_eq!(s.tokens, g.generated_ids(), "{policy:?} request {}", s.id);
            assert!(s.first_token >= s.arrival && s.finished >= s.first_token);
        }
        assert!(r.occupancy > 0.0 && r.occupancy <= 1.0);
        results.push(r);
    }
    let (cont, stat) = (&results[0], &results[1]);
    assert_eq!(cont.tokens, stat.tokens);
    assert!(
        cont.passes < stat.passes,
        "continuous {} passes, static {}",
        cont.passes,
        stat.passes
    );
    assert!(cont.occupancy > stat.occupancy);
}

/// Four lanes from one prompt, stepping together (one pass of their rows a step): each
/// lane's text is the text a plain run with its seed gives alone, and after the prefill
/// (4 × the prompt's rows) every pass has one row per running lane.
#[test]
fn lanes_stepping_together_each_get_the_text_of_their_seed() {
    let m = common::stories260k();
    let settings = RawSettings::from_pairs([("top_p", "0.9"), ("max_tokens", "1000")])
        .validate(512)
        .unwrap();
    let prompt = m.tokenizer.encode("Once upon a time", true).unwrap();
    let seeds = [7u64, 8, 9, 10];
    let ends = [m.tokenizer.eos, m.tokenizer.bos];
    let clock = || 0.0;
    let mut be = CpuBackend::new(m.transformer.clone());
    let mut lanes = block_on(Lanes::start(&mut be, &prompt, &seeds, &clock)).unwrap();
    for _ in 0..30 {
        block_on(lanes.step(&mut be, &settings, &ends, &clock)).unwrap();
    }
    assert_eq!(lanes.pass_rows[0], 4 * prompt.len());
    assert!(lanes.pass_rows[1..].iter().all(|&r| (1..=4).contains(&r)));
    assert_eq!(lanes.pass_rows[1], 4);
    for (k, &seed) in seeds.iter().enumerate() {
        let mut alone_settings = settings.clone();
        alone_settings.seed = seed;
        let mut one = CpuBackend::new(m.transformer.clone());
        let mut g = block_on(Generation::start(&mut one, prompt.clone(), ends.to_vec())).unwrap();
        while g.generated_ids().len() < 30 {
            match block_on(g.step(&mut one, &alone_settings, &m.tokenizer)).unwrap() {
                StepOutcome::Token { stop: None, .. } => {}
                _ => break,
            }
        }
        assert_eq!(
            lanes.generated()[k],
            g.generated_ids(),
            "lane {k}, seed {seed}"
        );
    }
    // Different seeds give different texts (the lanes are not one text four times).
    assert_ne!(lanes.generated()[0], lanes.generated()[1]);
    lanes.release(&mut be);
}

/// `throughput` runs one prefill pass of B × PP rows and TG decode passes of B rows, and
/// counts them by hand for stories260K (per row: 226,560 multiply-adds in the layers,
/// 32,768 in the classifier, 640 × (position + 1) in attention; K/V 1,280 bytes a position,
/// each sequence's cache read once a pass).
#[test]
fn throughput_counts_its_passes_by_hand() {
    let m = common::stories260k();
    let w = m.transformer.weights.bytes(m.config());
    let clock = {
        let t = std::cell::Cell::new(0.0);
        move || {
            t.set(t.get() + 1.0);
            t.get()
        }
    };
    let mut be = LosesDevice::after(CpuBackend::new(m.transformer.clone()), usize::MAX);
    let t = block_on(throughput(&mut be, 2, 3, 2, w, &clock)).unwrap();
    assert_eq!(be.forwards, 3, "one prefill pass and two decode passes");
    let attn = |p: u64| 640 * (p + 1);
    assert_eq!(
        t.prefill.flops,
        2 * (6 * 226_560 + 2 * 32_768 + 2 * (attn(0) + attn(1) + attn(2)))
    );
    // each prompt's 3 positions read once and written once
    assert_eq!(t.prefill.bytes, w + 6 * 1_280 + 6 * 1_280);
    assert_eq!(
        t.decode.flops,
        2 * 2 * (2 * (226_560 + 32_768) + attn(3) + attn(4))
    );
    assert_eq!(t.decode.bytes, 2 * w + 2 * (4 + 5) * 1_280 + 4 * 1_280);
    // Each timed span is one tick of the clock: B × PP tokens in 1 ms, B × TG in 1 ms.
    assert_eq!(t.prefill_tokens_per_s, 6_000.0);
    assert_eq!(t.decode_tokens_per_s, 4_000.0);
    // Nonsense sizes are refused, not clamped.
    for (b, p, g) in [(0, 3, 2), (1, 500, 100), (1, 0, 2)] {
        let e = block_on(throughput(&mut be, b, p, g, w, &clock)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("a batch of {b} with {p} prompt")),
            "{e}"
        );
    }
    assert_eq!(be.forwards, 3, "a refused size runs nothing");
}
