//! Cached decode, batched prefill and the cache-less naive mode give the same logits over a
//! 200-token sequence of stories260K (max abs difference ≤ 1e-5).

mod common;

use decoding_engine::forward::RunState;
use decoding_engine::kernels::logprob::argmax;
use decoding_engine::KvCache;

fn max_abs_diff(a: &[f32], b: &[f32]) -> (f32, usize) {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .enumerate()
        .fold(
            (0.0, 0),
            |(m, mi), (i, d)| if d > m { (d, i) } else { (m, mi) },
        )
}

#[test]
fn cached_prefill_and_naive_agree_over_200_tokens() {
    let m = common::stories260k();
    let t = &m.transformer;
    let v = m.config().vocab_size;
    // 200 tokens: the prompt, then the model's own greedy continuation, then forced tokens
    // that are not its choice (so later positions see unlikely context too).
    let mut ids = m.encode_prompt("Once upon a time").unwrap();
    let mut state = RunState::new(m.config());
    let mut cache = KvCache::new(m.config());
    let mut logits = vec![0.0; v];
    let mut cached = Vec::new();
    let mut i = 0;
    while ids.len() < 200 || i < ids.len() {
        t.decode(&mut state, &mut cache, ids[i], &mut logits)
            .unwrap();
        cached.extend_from_slice(&logits);
        i += 1;
        if i == ids.len() && ids.len() < 200 {
            let next = if ids.len().is_multiple_of(7) {
                (ids.len() * 31 % v) as u32
            } else {
                argmax(&logits) as u32
            };
            ids.push(next);
        }
    }
    assert_eq!(ids.len(), 200);

    let mut cache2 = KvCache::new(m.config());
    let batched = t.prefill(&mut cache2, &ids, true).unwrap();
    let (d, at) = max_abs_diff(&cached, &batched);
    assert!(
        d <= 1e-5,
        "prefill vs cached: max |Δ| = {d} at position {}, token {}",
        at / v,
        at % v
    );

    for n in [1, 2, 50, 199, 200] {
        let naive = t.forward_naive(&ids[..n]).unwrap();
        let (d, at) = max_abs_diff(&cached[(n - 1) * v..n * v], &naive);
        assert!(
            d <= 1e-5,
            "naive vs cached after {n} tokens: max |Δ| = {d} at token {at}"
        );
    }
    assert_eq!(cache.bytes().used, 200 * 1_280);
}
