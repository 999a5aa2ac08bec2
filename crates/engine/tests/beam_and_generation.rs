//! Beam search and the generation loop on stories260K.

mod common;

use decoding_engine::backend::testing::LosesDevice;
use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::beam::{
    beam_search, score_continuation, BeamConfig, BeamSearch, NodeStatus,
};
use decoding_engine::decode::generation::{Generation, StepOutcome, StopReason};
use decoding_engine::decode::sampling::Settings;
use decoding_engine::Model;
use decoding_engine::SeqId;
use pollster::block_on;

use common::settings;

use common::ends;

/// Greedy tokens and their total log-probability.
fn greedy(m: &Model, be: &mut CpuBackend, prompt: &[u32], n: usize) -> (Vec<u32>, f64) {
    let s = settings(&[("temperature", "0"), ("max_tokens", &n.to_string())]);
    let mut g = block_on(Generation::start(be, prompt.to_vec(), ends(m))).unwrap();
    while let StepOutcome::Token { .. } = block_on(g.step(be, &s, &m.tokenizer)).unwrap() {}
    let toks = g.generated_ids();
    g.release(be);
    let (_, lp) = block_on(score_continuation(be, prompt, &toks)).unwrap();
    (toks, lp)
}

fn run_beam(m: &Model, be: &mut CpuBackend, prompt: &[u32], config: BeamConfig) -> BeamSearch {
    let seq = be.new_sequence().unwrap();
    let logits = block_on(be.forward(seq, prompt, false)).unwrap();
    block_on(beam_search(be, config, seq, prompt.len(), logits, ends(m))).unwrap()
}

fn config(width: usize, max_tokens: usize) -> BeamConfig {
    BeamConfig {
        width,
        length_penalty: 0.0,
        early_stopping: true,
        num_return: width,
        max_tokens,
    }
}

#[test]
fn beam_width_one_is_greedy() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let (g, g_lp) = greedy(&m, &mut be, &prompt, 30);
    let search = run_beam(&m, &mut be, &prompt, config(1, 30));
    let best = &search.results()[0];
    assert_eq!(best.tokens, g);
    // A finished search still says how deep it went, and its best prefix there (the page
    // showed "after 0 tokens" once it was done).
    assert!(search.is_done());
    assert_eq!(search.depth(), g.len());
    let at_end = search
        .best_at_depth()
        .expect("a best prefix at the last level");
    assert_eq!(search.path(at_end.id), g);
    assert!(
        (best.sum_logprob - g_lp).abs() < 1e-4,
        "{} vs {g_lp}",
        best.sum_logprob
    );
}

#[test]
fn wider_beam_finds_a_sequence_at_least_as_likely_as_greedy() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    for text in ["Once upon a time", "The cat", "Lily and Ben went to the"] {
        let prompt = m.encode_prompt(text).unwrap();
        let search = run_beam(&m, &mut be, &prompt, config(4, 20));
        let best = search
            .finished()
            .iter()
            .filter(|h| h.tokens.len() == 20)
            .max_by(|a, b| a.sum_logprob.total_cmp(&b.sum_logprob))
            .expect("a 20-token hypothesis");
        let (g, g_lp) = greedy(&m, &mut be, &prompt, 20);
        assert_eq!(g.len(), 20);
        assert!(
            best.sum_logprob >= g_lp - 1e-6,
            "{text}: beam {} < greedy {g_lp}",
            best.sum_logprob
        );
        // The forked caches gave the right logits: rescoring from scratch agrees.
        let (_, rescored) = block_on(score_continuation(&mut be, &prompt, &best.tokens)).unwrap();
        assert!((rescored - best.sum_logprob).abs() < 1e-4);
    }
}

#[test]
fn beam_tree_is_consistent() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let k = 3;
    let steps = 5;
    let search = run_beam(&m, &mut be, &prompt, config(k, steps));
    let nodes = search.nodes();
    // One root, then 2k candidates per step.
    assert_eq!(nodes.len(), 1 + 2 * k * steps);
    assert_eq!(nodes[0].status, NodeStatus::Root);
    for n in &nodes[1..] {
        let p = &nodes[n.parent.unwrap()];
        assert!(p.id < n.id);
        assert_eq!(n.depth, p.depth + 1);
        assert!((n.cum_logprob - (p.cum_logprob + n.logprob)).abs() < 1e-9);
        assert!(matches!(
            p.status,
            NodeStatus::Root | NodeStatus::Beam | NodeStatus::Unfinished
        ));
    }
    for d in 1..steps {
        let beams = nodes
            .iter()
            .filter(|n| n.depth == d && n.status == NodeStatus::Beam)
            .count();
        assert_eq!(beams, k, "depth {d}");
    }
    // The returned hypotheses end at leaves of the tree.
    for h in search.results() {
        assert_eq!(nodes[h.node].depth, h.tokens.len());
    }
    // Every cache forked for a beam was released at the end.
    assert!(be.seq_len(SeqId(0)).is_err());
}

#[test]
fn stepping_beam_search_grows_the_tree() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let seq = be.new_sequence().unwrap();
    let logits = block_on(be.forward(seq, &prompt, false)).unwrap();
    let mut search = BeamSearch::new(config(2, 10), seq, prompt.len(), 512, logits, ends(&m));
    let mut sizes = vec![search.nodes().len()];
    for _ in 0..3 {
        assert!(!block_on(search.step(&mut be)).unwrap());
        sizes.push(search.nodes().len());
    }
    assert_eq!(sizes, vec![1, 5, 9, 13]);
    assert_eq!(search.depth(), 3);
    // The best prefix at depth 3: its path has 3 tokens, and re-scoring them from the prompt
    // gives its cumulative log-probability; no live node at that depth beats it.
    let best = search.best_at_depth().unwrap().clone();
    let path = search.path(best.id);
    assert_eq!(path.len(), 3);
    let (_, lp) = block_on(score_continuation(&mut be, &prompt, &path)).unwrap();
    assert!(
        (lp - best.cum_logprob).abs() < 1e-9,
        "{lp} vs {}",
        best.cum_logprob
    );
    assert!(search
        .nodes()
        .iter()
        .filter(|n| n.depth == 3 && !matches!(n.status, NodeStatus::Pruned))
        .all(|n| n.cum_logprob <= best.cum_logprob));
    assert_eq!(search.path(0), Vec::<u32>::new());
    assert_eq!(search.path(10_000), Vec::<u32>::new());
}

#[test]
fn rewind_and_step_again_gives_the_same_tokens() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let s = settings(&[("temperature", "1"), ("top_p", "0.9"), ("seed", "11")]);
    let mut g = block_on(Generation::start(&mut be, prompt.clone(), ends(&m))).unwrap();
    for _ in 0..8 {
        block_on(g.step(&mut be, &s, &m.tokenizer)).unwrap();
    }
    let first = g.generated_ids();
    g.rewind(&mut be).unwrap();
    g.rewind(&mut be).unwrap();
    g.rewind(&mut be).unwrap();
    assert_eq!(g.generated_ids(), first[..5]);
    assert!(be.seq_len(g.sequence()).unwrap() <= prompt.len() + 5);
    for _ in 0..3 {
        block_on(g.step(&mut be, &s, &m.tokenizer)).unwrap();
    }
    assert_eq!(g.generated_ids(), first);
    g.reset(&mut be).unwrap();
    assert!(g.steps().is_empty());
    assert_eq!(be.seq_len(g.sequence()).unwrap(), prompt.len());
    assert!(g.rewind(&mut be).is_err());
}

#[test]
fn rewind_recomputes_nothing_and_penalties_follow_it() {
    let m = common::stories260k();
    // Counts forward passes, to show rewinding recomputes nothing.
    let mut be = LosesDevice::after(CpuBackend::new(m.transformer.clone()), usize::MAX);
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let s = settings(&[("temperature", "0"), ("frequency_penalty", "1.5")]);
    let mut g = block_on(Generation::start(&mut be, prompt, ends(&m))).unwrap();
    let before = block_on(g.preview(&mut be, &s, &m.tokenizer)).unwrap();
    block_on(g.step(&mut be, &s, &m.tokenizer)).unwrap();
    block_on(g.step(&mut be, &s, &m.tokenizer)).unwrap();
    let n = be.forwards;
    g.rewind(&mut be).unwrap();
    g.rewind(&mut be).unwrap();
    let after = block_on(g.preview(&mut be, &s, &m.tokenizer)).unwrap();
    assert_eq!(be.forwards, n, "rewind or preview ran the model");
    // The penalties no longer see the rewound tokens: same distribution as at the start.
    assert_eq!(before.probs, after.probs);
}

#[test]
fn stop_conditions_are_reported() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let tk = &m.tokenizer;
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let run = |be: &mut CpuBackend, s: &Settings, prompt: &[u32]| {
        let mut g = block_on(Generation::start(be, prompt.to_vec(), ends(&m))).unwrap();
        let reason = loop {
            match block_on(g.step(be, s, tk)).unwrap() {
                StepOutcome::Stopped(r) => break r,
                StepOutcome::Token { stop: Some(r), .. } => break r,
                StepOutcome::Token { .. } => {}
            }
        };
        let text = g.generated_text(tk, true);
        g.release(be);
        (reason, text)
    };
    // Max tokens.
    let (r, _) = run(
        &mut be,
        &settings(&[("temperature", "0"), ("max_tokens", "7")]),
        &prompt,
    );
    assert_eq!(r, StopReason::MaxTokens { max: 7 });
    // End of sequence, forced with a logit bias on EOS.
    let (r, _) = run(&mut be, &settings(&[("logit_bias", "2:100")]), &prompt);
    assert_eq!(r, StopReason::EndOfSequence { token: 2 });
    // A stop sequence that spans a token boundary (" girl" + " named").
    let (r, text) = run(
        &mut be,
        &settings(&[("temperature", "0"), ("stop", "l na")]),
        &prompt,
    );
    assert_eq!(
        r,
        StopReason::StopSequence {
            stop: "l na".into()
        }
    );
    assert!(text.ends_with("little girl named"), "{text}");
    // Context full: a long prompt and room for few tokens.
    let long = m
        .encode_prompt(&"Once upon a time there was a cat. ".repeat(50))
        .unwrap();
    assert!(long.len() > 480 && long.len() < 512, "{}", long.len());
    let s = settings(&[
        ("temperature", "0"),
        ("max_tokens", "1000"),
        ("logit_bias", "2:-100,1:-100"),
    ]);
    let (r, _) = run(&mut be, &s, &long);
    assert_eq!(r, StopReason::ContextFull { seq_len: 512 });
}

#[test]
fn switching_backends_rebuilds_the_cache_from_the_tokens() {
    let m = common::stories260k();
    let mut a = CpuBackend::new(m.transformer.clone());
    let mut b = CpuBackend::new(m.transformer.clone());
    let s = settings(&[("seed", "3")]);
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let mut g = block_on(Generation::start(&mut a, prompt.clone(), ends(&m))).unwrap();
    for _ in 0..6 {
        block_on(g.step(&mut a, &s, &m.tokenizer)).unwrap();
    }
    let mut g2 = block_on(g.rebuild(&mut b)).unwrap();
    // b ran the prompt and the tokens itself: its cache holds them (the sixth token is
    // forwarded at the next step), and every distribution it computed (the tokens in one
    // batch) equals the one `a` computed a token at a time.
    assert_eq!(b.seq_len(g2.sequence()).unwrap(), prompt.len() + 5);
    for i in 0..6 {
        assert_eq!(g2.logits_at(i), g.logits_at(i), "distribution {i}");
    }
    // And b goes on as if nothing had happened: the same 12 tokens as an uninterrupted run
    // on a third backend.
    let mut c = CpuBackend::new(m.transformer.clone());
    let mut reference = block_on(Generation::start(&mut c, prompt, ends(&m))).unwrap();
    for _ in 0..12 {
        block_on(reference.step(&mut c, &s, &m.tokenizer)).unwrap();
    }
    for _ in 0..6 {
        block_on(g2.step(&mut b, &s, &m.tokenizer)).unwrap();
    }
    assert_eq!(g2.generated_ids(), reference.generated_ids());
    for i in 0..12 {
        assert_eq!(g2.logits_at(i), reference.logits_at(i), "distribution {i}");
    }
}

/// Teacher forcing (the page mirrors the best beam this way): a forced token is recorded
/// as if chosen, with the chain's probability and rank and the model's probability.
#[test]
fn forced_tokens_are_recorded_like_chosen_ones() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let prompt = m.encode_prompt("The dog").unwrap();
    let s = settings(&[("temperature", "0")]);
    let mut chosen = block_on(Generation::start(&mut be, prompt.clone(), ends(&m))).unwrap();
    for _ in 0..5 {
        block_on(chosen.step(&mut be, &s, &m.tokenizer)).unwrap();
    }
    let mut forced = block_on(Generation::start(&mut be, prompt.clone(), ends(&m))).unwrap();
    for t in chosen.generated_ids() {
        block_on(forced.force(&mut be, &s, &m.tokenizer, t)).unwrap();
    }
    assert_eq!(forced.steps(), chosen.steps());

    // A token greedy would not choose: the second most likely one, then the argmax after it.
    let sample = settings(&[]);
    let mut g = block_on(Generation::start(&mut be, prompt.clone(), ends(&m))).unwrap();
    let second = block_on(g.preview(&mut be, &sample, &m.tokenizer)).unwrap();
    let mut order: Vec<usize> = (0..second.probs.len()).collect();
    order.sort_by(|&a, &b| second.probs[b].total_cmp(&second.probs[a]));
    let t1 = order[1] as u32;
    block_on(g.force(&mut be, &sample, &m.tokenizer, t1)).unwrap();
    let step = &g.steps()[0];
    assert_eq!((step.token, step.rank), (t1, 2));
    assert_eq!(step.prob, second.probs[t1 as usize]);
    // The model's probabilities multiply to the continuation's own score.
    let t2 = block_on(g.preview(&mut be, &sample, &m.tokenizer))
        .unwrap()
        .token;
    block_on(g.force(&mut be, &sample, &m.tokenizer, t2)).unwrap();
    let (_, lp) = block_on(score_continuation(&mut be, &prompt, &[t1, t2])).unwrap();
    let sum: f64 = g.steps().iter().map(|s| s.model_prob.ln()).sum();
    assert!((sum - lp).abs() < 1e-6, "{sum} vs {lp}");

    // A token outside the vocabulary is refused and nothing is recorded.
    assert!(block_on(g.force(&mut be, &sample, &m.tokenizer, 512)).is_err());
    assert_eq!(g.steps().len(), 2);
}

/// Only the last `LOGITS_KEPT` steps' logits are held; rewinding further back runs one
/// forward pass per step beyond them and gives the same distributions and tokens again.
#[test]
fn old_logits_are_freed_and_a_deep_rewind_recomputes_them_exactly() {
    use decoding_engine::decode::generation::LOGITS_KEPT;
    let m = common::stories260k();
    let mut be = LosesDevice::after(CpuBackend::new(m.transformer.clone()), usize::MAX);
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let s = settings(&[("seed", "5"), ("top_p", "0.9"), ("max_tokens", "1000")]);
    let run = |be: &mut LosesDevice, n: usize| {
        let mut g = block_on(Generation::start(be, prompt.clone(), ends(&m))).unwrap();
        for _ in 0..n {
            block_on(g.step(be, &s, &m.tokenizer)).unwrap();
        }
        g
    };
    let mut g = run(&mut be, 150);
    // each step keeps its 20 most likely tokens in as much memory, not the vocabulary's
    let most = g.steps().iter().map(|s| s.top.capacity()).max();
    assert!(most.is_some_and(|c| c <= 20), "{most:?}");
    block_on(g.run_pending(&mut be)).unwrap();
    assert_eq!(
        g.logits_held(),
        LOGITS_KEPT + 2,
        "the prefill's and the last 65"
    );
    let original = g.generated_ids();
    // Rebuilt on another backend (a backend switch): the same next distribution, and only
    // the kept steps' logits computed again.
    let mut other = CpuBackend::new(m.transformer.clone());
    let mut moved = block_on(g.rebuild(&mut other)).unwrap();
    assert_eq!(moved.logits_held(), LOGITS_KEPT + 2);
    assert_eq!(
        block_on(moved.preview(&mut other, &s, &m.tokenizer))
            .unwrap()
            .probs,
        block_on(g.preview(&mut be, &s, &m.tokenizer))
            .unwrap()
            .probs
    );
    // Back to 20 tokens: the distribution there is the one a fresh run reaches.
    for _ in 0..130 {
        g.rewind(&mut be).unwrap();
    }
    let n = be.forwards;
    let deep = block_on(g.preview(&mut be, &s, &m.tokenizer)).unwrap();
    assert_eq!(
        be.forwards,
        n + 1,
        "one forward pass to recompute the freed logits"
    );
    let mut fresh = run(&mut be, 20);
    let want = block_on(fresh.preview(&mut be, &s, &m.tokenizer)).unwrap();
    assert_eq!(deep.probs, want.probs);
    // Stepping on from there gives the same tokens as the first time.
    for _ in 0..30 {
        block_on(g.step(&mut be, &s, &m.tokenizer)).unwrap();
        block_on(fresh.step(&mut be, &s, &m.tokenizer)).unwrap();
    }
    assert_eq!(g.generated_ids(), fresh.generated_ids());
    assert_eq!(g.generated_ids()[..], original[..50]);
    // A short rewind still recomputes nothing.
    let n = be.forwards;
    g.rewind(&mut be).unwrap();
    block_on(g.preview(&mut be, &s, &m.tokenizer)).unwrap();
    assert_eq!(be.forwards, n);
    // Keeping none (the CLI's one-shot generate): the prefill's and the newest only, and
    // the same tokens.
    let mut lean = block_on(Generation::start(&mut be, prompt.clone(), ends(&m))).unwrap();
    lean.keep_logits(0);
    for _ in 0..150 {
        block_on(lean.step(&mut be, &s, &m.tokenizer)).unwrap();
    }
    block_on(lean.run_pending(&mut be)).unwrap();
    assert_eq!(lean.logits_held(), 2);
    assert_eq!(lean.generated_ids(), original);
}
