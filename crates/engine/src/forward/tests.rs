//! The forward pass three ways: decode, prefill and no cache give the same logits.

use super::*;

/// A random 2-layer model of 20 tokens, 4 query heads on 2 K/V heads.
fn random(dim: usize, hidden_dim: usize, seq_len: usize, seed: u64) -> Transformer {
    let config = Config {
        dim,
        hidden_dim,
        n_layers: 2,
        n_heads: 4,
        n_kv_heads: 2,
        vocab_size: 20,
        seq_len,
        shared_classifier: false,
        rope_theta: Config::LLAMA2C_ROPE_THETA,
        rms_eps: Config::LLAMA2C_RMS_EPS,
    };
    Transformer::new(Checkpoint::random(config, seed).unwrap())
}

fn tiny() -> Transformer {
    random(16, 24, 12, 9)
}

/// Each token's next-token logits decoded one at a time, and the cache they filled.
fn decoded(m: &Transformer, tokens: &[u32]) -> (Vec<f32>, KvCache) {
    let mut s = RunState::new(&m.config);
    let mut cache = KvCache::new(&m.config);
    let mut logits = vec![0.0; m.config.vocab_size];
    let mut per_token = Vec::new();
    for &t in tokens {
        m.decode(&mut s, &mut cache, t, &mut logits).unwrap();
        per_token.extend_from_slice(&logits);
    }
    (per_token, cache)
}

#[test]
fn decode_prefill_and_naive_agree() {
    let m = tiny();
    let tokens = [1u32, 5, 7, 3, 19, 0, 2];
    let (per_token, cache) = decoded(&m, &tokens);
    let mut cache2 = KvCache::new(&m.config);
    let batched = m.prefill(&mut cache2, &tokens, true).unwrap();
    assert_eq!(per_token, batched);
    assert_eq!(cache.len(), cache2.len());
    let naive = m.forward_naive(&tokens).unwrap();
    assert_eq!(&per_token[per_token.len() - 20..], &naive[..]);
}

/// A prefill long enough to take prefill's own paths (attention head by head, several rows
/// at a time; q8's register-tiled product with AVX-512 VNNI) gives decode's logits bit for
/// bit, float32 and q8 (whose rows are whole groups of 32: the tiled product's case).
#[test]
fn a_long_prefill_equals_decode() {
    let f32_model = random(64, 96, 48, 5);
    let tokens: Vec<u32> = (0..37).map(|i| (i * 7 + 3) % 20).collect();
    assert!(tokens.len() >= prefill::ROWS + 16);
    for m in [f32_model.clone(), f32_model.at(Precision::Q8)] {
        let (per_token, _) = decoded(&m, &tokens);
        // in two parts: the second's rows attend to a cache the first filled
        let mut cache2 = KvCache::new(&m.config);
        let mut batched = m.prefill(&mut cache2, &tokens[..17], true).unwrap();
        batched.extend(m.prefill(&mut cache2, &tokens[17..], true).unwrap());
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert!(
            bits(&per_token) == bits(&batched),
            "{:?}",
            m.weights.precision()
        );
    }
}

/// A prompt longer than `PREFILL_CHUNK` runs in chunks: the same logits, bit for bit, as
/// decoding it token by token, and the run state no taller than a chunk.
#[test]
fn a_prefill_longer_than_a_chunk_runs_in_chunks_with_decode_s_bits() {
    let m = random(32, 48, PREFILL_CHUNK + 200, 9);
    let tokens: Vec<u32> = (0..PREFILL_CHUNK as u32 + 150)
        .map(|i| (i * 11 + 1) % 20)
        .collect();
    let (per_token, _) = decoded(&m, &tokens);
    let per_token: Vec<u32> = per_token.iter().map(|x| x.to_bits()).collect();
    let mut s = RunState::new(&m.config);
    let mut cache = KvCache::new(&m.config);
    let batch = Batch::tokens(SeqId(0), 0, &tokens, Logits::All);
    let all = m.forward(&mut s, &mut cache, &batch).unwrap();
    assert_eq!(
        all.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        per_token
    );
    assert_eq!(cache.len(), tokens.len());
    assert!(
        s.x.capacity() <= PREFILL_CHUNK * m.config.dim,
        "the run state a chunk tall"
    );
}

#[test]
fn a_batch_of_several_sequences_equals_each_alone() {
    use crate::backend::SeqSlots;
    let m = tiny();
    let (a, b) = ([1u32, 5, 7, 3], [19u32, 0, 2]);
    // Alone: each sequence's prompt, then one more token.
    let alone = |prompt: &[u32], next: u32| {
        let mut cache = KvCache::new(&m.config);
        m.prefill(&mut cache, prompt, false).unwrap();
        m.prefill(&mut cache, &[next], false).unwrap()
    };
    let (want_a, want_b) = (alone(&a, 11), alone(&b, 4));
    // Together: both prompts in one batch (interleaved rows), then one decode row each.
    let mut slots = SeqSlots::default();
    let (sa, sb) = (
        slots.insert(KvCache::new(&m.config)),
        slots.insert(KvCache::new(&m.config)),
    );
    let mut prompts = Batch::new();
    for i in 0..4 {
        prompts.extend(sa, i, &a[i..i + 1], Logits::None);
        if i < 3 {
            prompts.extend(sb, i, &b[i..i + 1], Logits::None);
        }
    }
    let mut s = RunState::default();
    assert!(m.forward(&mut s, &mut slots, &prompts).unwrap().is_empty());
    let mut step = Batch::tokens(sb, 3, &[4], Logits::Last);
    step.extend(sa, 4, &[11], Logits::Last);
    let both = m.forward(&mut s, &mut slots, &step).unwrap();
    assert_eq!(both[..20], want_b[..]);
    assert_eq!(both[20..], want_a[..]);
    assert_eq!(slots.get(sa).unwrap().len(), 5);
    assert_eq!(slots.get(sb).unwrap().len(), 4);
}

#[test]
fn naive_keeps_nothing_and_matches_the_cached_pass_on_every_prefix() {
    let m = tiny();
    let tokens = [3u32, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8];
    let mut cache = KvCache::new(&m.config);
    let all = m.prefill(&mut cache, &tokens, true).unwrap();
    for n in 1..=tokens.len() {
        assert_eq!(
            m.forward_naive(&tokens[..n]).unwrap(),
            all[(n - 1) * 20..n * 20]
        );
    }
    assert!(matches!(
        m.forward_naive(&[1; 13]),
        Err(ForwardError::ContextFull { .. })
    ));
}

#[test]
fn prefill_in_two_parts_equals_one() {
    let m = tiny();
    let tokens = [1u32, 5, 7, 3, 19, 0, 2];
    let mut a = KvCache::new(&m.config);
    let one = m.prefill(&mut a, &tokens, false).unwrap();
    let mut b = KvCache::new(&m.config);
    m.prefill(&mut b, &tokens[..3], false).unwrap();
    let two = m.prefill(&mut b, &tokens[3..], false).unwrap();
    assert_eq!(one, two);
}

#[test]
fn rewind_then_redo_gives_same_logits() {
    let m = tiny();
    let mut s = RunState::new(&m.config);
    let mut cache = KvCache::new(&m.config);
    let mut l1 = vec![0.0; 20];
    let mut l2 = vec![0.0; 20];
    m.prefill(&mut cache, &[1, 4, 6], false).unwrap();
    m.decode(&mut s, &mut cache, 8, &mut l1).unwrap();
    m.decode(&mut s, &mut cache, 9, &mut l2).unwrap();
    cache.truncate(3);
    m.decode(&mut s, &mut cache, 8, &mut l2).unwrap();
    assert_eq!(l1, l2);
}

#[test]
fn bad_tokens_and_full_context_are_errors() {
    let m = tiny();
    let mut cache = KvCache::new(&m.config);
    assert_eq!(
        m.prefill(&mut cache, &[25], false).unwrap_err(),
        ForwardError::TokenOutOfRange { id: 25, vocab: 20 }
    );
    assert_eq!(
        m.prefill(&mut cache, &[], false).unwrap_err(),
        ForwardError::NoTokens
    );
    assert!(matches!(
        m.prefill(&mut cache, &[1; 13], false).unwrap_err(),
        ForwardError::ContextFull { .. }
    ));
    m.prefill(&mut cache, &[1; 12], false).unwrap();
    let mut s = RunState::new(&m.config);
    let mut logits = vec![0.0; 20];
    assert!(matches!(
        m.decode(&mut s, &mut cache, 1, &mut logits).unwrap_err(),
        ForwardError::ContextFull {
            len: 12,
            seq_len: 12,
            adding: 1
        }
    ));
}
