//! The model README's known answers, computed through the engine's CPU backend.

mod common;

use decoding_engine::{Backend, CpuBackend};

/// The model's probabilities: the tests' own softmax of its logits (not the engine's).
use common::softmax::softmax_f32 as softmax;

#[test]
fn once_upon_a_time_tokenizes_to_known_ids() {
    let m = common::stories260k();
    assert_eq!(
        m.encode_prompt("Once upon a time").unwrap(),
        vec![1, 403, 407, 261, 378]
    );
}

#[test]
fn next_token_distribution_matches_known_answers() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let seq = be.new_sequence().unwrap();
    let ids = m.encode_prompt("Once upon a time").unwrap();
    let logits = pollster::block_on(be.forward(seq, &ids, false)).unwrap();
    let p = softmax(&logits);
    assert!((p[432] - 0.9688).abs() < 1e-4, "p(',') = {}", p[432]);
    assert!((p[383] - 0.0287).abs() < 1e-4, "p(' there') = {}", p[383]);
    assert!((p[322] - 0.0003).abs() < 1e-4, "p(' in') = {}", p[322]);
    assert!((p[353] - 0.0003).abs() < 1e-4, "p(' on') = {}", p[353]);
    assert_eq!(m.tokenizer.piece(432).unwrap(), ",");
    assert_eq!(m.tokenizer.piece(383).unwrap(), " there");
}

#[test]
fn greedy_continuation_matches_published_text() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let seq = be.new_sequence().unwrap();
    let mut ids = m.encode_prompt("Once upon a time").unwrap();
    let mut logits = pollster::block_on(be.forward(seq, &ids, false)).unwrap();
    for _ in 0..120 {
        let next = logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0 as u32;
        ids.push(next);
        logits = pollster::block_on(be.forward(seq, &[next], false)).unwrap();
    }
    let text = m.tokenizer.decode(&ids).unwrap();
    assert!(
        text.starts_with(common::GREEDY),
        "greedy text differs:\n{text}\n---\n{}",
        common::GREEDY
    );
}
