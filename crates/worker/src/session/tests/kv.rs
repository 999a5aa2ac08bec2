//! The KV panel: the cache against re-running the prefix, and inside the step.

use super::*;

#[test]
fn cache_comparison_measures_and_counts_quadratic_work_without_the_cache() {
    let (mut s, host) = loaded();
    let ev = ask(
        &mut s,
        &host,
        Request::Kv(KvRequest::CacheCompare {
            positions: [16, 64, 512].to_vec(),
        }),
    );
    let Event::Kv(KvEvent::CacheCompare { rows, bandwidth }) = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!(rows.len(), 3);
    // On the CPU each cached step beside its bandwidth model: the weights and n positions'
    // K and V (stories260K: 5 layers, d_kv 32, float32) at the bandwidth measured here. A
    // step does more than read (attention, norms, the hand-offs): never far under it.
    let b = bandwidth.expect("the CPU's bandwidth");
    assert!(b > 1e8, "{b} bytes/s");
    let m = s.core.model.as_ref().unwrap();
    let weights = m.transformer.weights.bytes(m.config());
    for r in rows {
        let (read, ms) = r.model.expect("a model for each row");
        assert_eq!(read, weights + 2 * r.n as u64 * 5 * 32 * 4, "n = {}", r.n);
        assert!((ms - read as f64 / b * 1e3).abs() < 1e-9);
        assert!(
            r.cached_ms > 0.25 * ms,
            "n = {}: {} ms, model {ms} ms",
            r.n,
            r.cached_ms
        );
    }
    // Naive work grows like n² (plus n × the matrices): ever further above cached work.
    let ratio = |r: &CompareRow| r.naive_macs as f64 / r.cached_macs as f64;
    assert!(ratio(&rows[2]) > 3.0 * ratio(&rows[0]));
    // Measured, not only counted: at n = 512 the prefix run again (512 rows through every
    // matrix) takes longer than the one cached row.
    let last = &rows[2];
    assert_eq!(last.n, 512);
    assert!(
        last.cached_ms > 0.0 && last.naive_ms > last.cached_ms,
        "cached {} ms, no cache {} ms",
        last.cached_ms,
        last.naive_ms
    );
}

/// Inside the step: opened after a prompt, the view comes from one probed pass over the
/// sequence; each step's view from the step's own pass (the same bits as a probed pass over
/// the whole sequence made here); the lens keeps its columns by position, its last layer at
/// the newest position is the transcript's own top token; a rewind and a close.
#[test]
fn the_view_inside_the_step_follows_the_transcript_from_the_steps_own_pass() {
    use decoding_engine::forward::probe::ProbeSpec;
    use decoding_engine::{Batch, KvCache, Logits, SeqId};
    let (mut s, host) = prompted(&[("temperature", "0")]);
    let ev = ask(
        &mut s,
        &host,
        Request::Inside(ProbeRequest::Probe { open: true }),
    );
    let v = last!(&ev, Probe).clone();
    let (layers, heads) = (5, 8);
    assert_eq!((v.pos, v.pieces.len(), v.from_step), (4, 5, false));
    assert_eq!(
        (v.n_layers, v.n_heads, v.n_kv_heads, v.head_size),
        (layers, heads, 4, 8)
    );
    assert_eq!(v.attention.len(), layers * heads * 5);
    for _ in 0..3 {
        let ev = step(&mut s, &host, 1);
        let v = last!(&ev, Probe);
        assert!(v.from_step, "a step's view is its own pass's record");
    }
    let ev = step(&mut s, &host, 1);
    let v = last!(&ev, Probe).clone();
    let gen = s.core.gen.as_ref().unwrap();
    let tokens = gen.context();
    let n = tokens.len();
    assert_eq!((v.pos, v.pieces.len(), n), (8, 9, 9));
    // The same sequence as one probed pass here, every position's lens recorded.
    let m = s.core.model.as_ref().unwrap().transformer.clone();
    let mut cache = KvCache::new(&m.config);
    let b = Batch::tokens(SeqId(0), 0, &tokens, Logits::Last);
    let mut rs = decoding_engine::forward::RunState::default();
    let p = m
        .forward_probed(&mut rs, &mut cache, &b, ProbeSpec { lens_rows: n })
        .unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&v.attention), bits(&p.record.attention));
    let lens = m.lens(&p.record, 5);
    assert_eq!(v.lens_positions, (0..n).collect::<Vec<_>>());
    assert_eq!(v.lens.len(), layers * n);
    for l in 0..layers {
        for i in 0..n {
            let (got, want) = (&v.lens[l * n + i], lens.cell(l, i));
            assert_eq!(
                (got.id, got.p),
                (want.token, want.prob),
                "layer {l} position {i}"
            );
        }
    }
    // The last layer at the newest position: the transcript's next token under greedy.
    let logits = gen.current_logits().unwrap();
    let top = (0..logits.len())
        .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
        .unwrap();
    assert_eq!(v.lens[(layers - 1) * n + n - 1].id, top as u32);
    assert_eq!(v.last[layers - 1].top[0].id, top as u32);
    assert_eq!(v.last[layers - 1].kl, 0.0);
    assert!(v.last[0].kl > 0.0);
    // A rewind reuses stored logits: the view comes from a probed pass again.
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Rewind),
    );
    let v = last!(&ev, Probe);
    assert_eq!((v.pos, v.from_step), (7, false));
    assert_eq!(v.attention.len(), layers * heads * 8);
    // Closed: no more views, and the transcript's passes run without the probe.
    ask(
        &mut s,
        &host,
        Request::Inside(ProbeRequest::Probe { open: false }),
    );
    let ev = step(&mut s, &host, 1);
    assert!(!ev
        .iter()
        .any(|e| matches!(e, Event::Inside(ProbeEvent::Probe { .. }))));
    assert!(s.core.gen.as_ref().unwrap().probed().is_none());
}
