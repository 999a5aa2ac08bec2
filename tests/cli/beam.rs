//! Beam search's sequences and its tree.

use super::*;

#[test]
fn beam_json_has_sequences_and_a_consistent_tree() {
    let v = json(&[
        "beam",
        "--prompt",
        "Once upon a time",
        "--beams",
        "3",
        "--max-tokens",
        "5",
        "--json",
    ]);
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1 + 2 * 3 * 5);
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["id"], i);
        if i > 0 {
            assert!(n["parent"].as_u64().unwrap() < i as u64);
        }
    }
    let best = &v["sequences"][0];
    assert!(best["text"]
        .as_str()
        .unwrap()
        .starts_with("Once upon a time"));
    let greedy = v["greedy"]["sum_logprob"].as_f64().unwrap();
    assert!(best["sum_logprob"].as_f64().unwrap() >= greedy - 1e-6);
    assert_user_error(&cli(&["beam", "--beams", "0"]), "beams: must be in 1..=16");
    // The cap says why (width 64 × 500 steps once hung the page).
    assert_user_error(&cli(&["beam", "--beams", "64"]), "each beam is a KV cache");
    assert_user_error(
        &cli(&["beam", "--beams", "2", "--num-return", "3"]),
        "cannot return 3 sequences from 2 beams",
    );
}
