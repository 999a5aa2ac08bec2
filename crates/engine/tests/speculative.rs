//! Speculative decoding: peers' verification cases, the speculative text equal to plain decoding
//! (greedy under every draft and rule; seeded sampling under `match`), the emitted distribution
//! unchanged under `rejection` by a chi-square test that catches the classic mistake, and the
//! tokens per cycle against (1 − α^(γ+1)) / (1 − α).

mod common;

use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::{process, sample_from, step_coins, History, Settings};
use decoding_engine::decode::speculative::*;
use decoding_engine::quant::Precision;
use decoding_engine::{KvCache, Model, Transformer};
use pollster::block_on;

use common::settings;

use common::softmax::softmax;

fn target(p: Vec<f64>, token: u32) -> Target {
    Target { p, token }
}

/// Hugging Face's `test_speculative_sampling` (tests/generation/test_utils.py): vocab 10,
/// candidates [1, 4, 5] drawn from near one-hot q; the target agrees on 1 and 4 and allows
/// only token 8 at the third position → 2 matches, tokens [1, 4, 8].
#[test]
fn hugging_faces_speculative_sampling_case() {
    let row = |hot: usize| -> Vec<f64> {
        let z: Vec<f64> = (0..10)
            .map(|i| if i == hot { 10.0 } else { -10.0 })
            .collect();
        softmax(&z)
    };
    let q = vec![Some(row(1)), Some(row(4)), Some(row(5))];
    let only8: Vec<f64> = (0..10).map(|i| (i == 8) as u8 as f64).collect();
    let targets = vec![
        target(row(1), 1),
        target(row(4), 4),
        target(only8, 8),
        target(vec![0.1; 10], 0),
    ];
    for coin in [0.0, 0.5, 0.999] {
        let c = verify(Rule::Rejection, false, &[1, 4, 5], &q, &targets, |_| {
            [coin; 4]
        });
        assert_eq!((c.accepted, c.emitted()), (2, vec![1, 4, 8]), "coin {coin}");
        assert_eq!(c.next_kind, NextKind::Resampled);
        assert_eq!(c.checked[2].accept_probability, 0.0);
    }
}

/// vLLM's greedy rejection-sampler truth tables: draft [1, 2, 3] against the target's argmax
/// [1, 5, 3, 4] → [1, 5]; against [1, 2, 3, 4] → all accepted and the bonus 4; a first
/// mismatch → only the target's token.
#[test]
fn vllms_greedy_truth_tables() {
    let one_hot = |t: u32| -> Target { target((0..8).map(|i| (i == t) as u8 as f64).collect(), t) };
    let cases: [(&[u32], &[u32], &[u32]); 3] = [
        (&[1, 2, 3], &[1, 5, 3, 4], &[1, 5]),
        (&[1, 2, 3], &[1, 2, 3, 4], &[1, 2, 3, 4]),
        (&[1, 2, 3], &[7, 2, 3, 4], &[7]),
    ];
    for (draft, tgt, want) in cases {
        let targets: Vec<Target> = tgt.iter().map(|&t| one_hot(t)).collect();
        for rule in [Rule::Rejection, Rule::Match] {
            let q = vec![None; draft.len()];
            let c = verify(rule, true, draft, &q, &targets, |_| [0.5; 4]);
            assert_eq!(c.emitted(), want, "{rule:?} {draft:?} vs {tgt:?}");
        }
    }
}

fn plain(m: &Model, prompt: &[u32], s: &Settings, n: usize) -> Vec<u32> {
    let mut be = CpuBackend::new(m.transformer.clone());
    let mut g = block_on(Generation::start(&mut be, prompt.to_vec(), vec![])).unwrap();
    for _ in 0..n {
        match block_on(g.step(&mut be, s, &m.tokenizer)).unwrap() {
            StepOutcome::Token { .. } => {}
            StepOutcome::Stopped(r) => panic!("{r:?}"),
        }
    }
    g.generated_ids()
}

fn speculative(
    m: &Model,
    prompt: &[u32],
    s: &Settings,
    n: usize,
    draft: Draft,
    gamma: usize,
    rule: Rule,
) -> (Vec<u32>, SpecStats) {
    let mut be = CpuBackend::new(m.transformer.clone());
    let mut sp = block_on(Speculator::start(
        &mut be,
        &m.transformer,
        prompt.to_vec(),
        draft,
        gamma,
        rule,
    ))
    .unwrap();
    block_on(sp.run(&mut be, s, n, &[])).unwrap();
    (sp.emitted().to_vec(), sp.stats.clone())
}

const DRAFTS: [Draft; 5] = [
    Draft::Quant(Precision::Q8),
    Draft::Quant(Precision::Q4),
    Draft::Exit(2),
    Draft::Exit(4),
    Draft::Ngram(2),
];

/// Greedy: for every draft and both rules the speculative text is plain greedy decoding's,
/// 100 tokens after three prompts (BOS and EOS biased away so both run the whole length).
#[test]
fn greedy_speculative_text_is_plain_greedy_text() {
    let m = common::stories260k();
    let s = settings(&[
        ("temperature", "0"),
        ("logit_bias", "1:-100,2:-100"),
        ("max_tokens", "100"),
    ]);
    for prompt in [
        "Once upon a time",
        "The little dog",
        "Lily and Ben went to the park. They saw",
    ] {
        let ids = m.encode_prompt(prompt).unwrap();
        let want = plain(&m, &ids, &s, 100);
        for draft in DRAFTS {
            for rule in [Rule::Rejection, Rule::Match] {
                let (got, stats) = speculative(&m, &ids, &s, 100, draft, 4, rule);
                assert_eq!(got, want, "{prompt:?} {} {rule:?}", draft.name());
                assert!(stats.cycles < 100, "{}: {stats:?}", draft.name());
            }
        }
    }
}

/// `match` with seeded sampling: the target draws its own token with plain decoding's coin,
/// so the speculative text is the plain seeded text, token for token.
#[test]
fn match_rule_gives_the_plain_seeded_text() {
    let m = common::stories260k();
    let s = settings(&[
        ("seed", "3"),
        ("top_p", "0.9"),
        ("repetition_penalty", "1.2"),
        ("max_tokens", "80"),
    ]);
    let ids = m.encode_prompt("Once upon a time").unwrap();
    let want = plain(&m, &ids, &s, 80);
    for draft in DRAFTS {
        let (got, _) = speculative(&m, &ids, &s, 80, draft, 3, Rule::Match);
        assert_eq!(got, want, "{}", draft.name());
    }
}

/// The processed distribution and the chain after `tokens` under `t` (history: the prompt
/// and `generated`).
fn processed(t: &Transformer, s: &Settings, prompt: &[u32], generated: &[u32]) -> Vec<f64> {
    let all: Vec<u32> = prompt.iter().chain(generated).copied().collect();
    let mut cache = KvCache::new(&t.config);
    let logits = t.prefill(&mut cache, &all, false).unwrap();
    let h = History {
        prompt,
        generated,
        ..History::default()
    };
    process(s, &logits, h, 0.5, false).unwrap().probs
}

/// An early-exit draft's processed distribution (the first `k` layers).
fn processed_exit(
    t: &Transformer,
    k: usize,
    s: &Settings,
    prompt: &[u32],
    generated: &[u32],
) -> Vec<f64> {
    let all: Vec<u32> = prompt.iter().chain(generated).copied().collect();
    let mut be = CpuBackend::new(std::sync::Arc::new(t.clone()));
    let seq = be.new_sequence().unwrap();
    if all.len() > 1 {
        block_on(be.forward(seq, &all[..all.len() - 1], false)).unwrap();
    }
    let logits = block_on(be.forward_exit(seq, &all[all.len() - 1..], k)).unwrap();
    let h = History {
        prompt,
        generated,
        ..History::default()
    };
    process(s, &logits, h, 0.5, false).unwrap().probs
}

/// Pearson's chi-square of `counts` against `expected` probabilities (`n` draws), cells with
/// fewer than 5 expected counts pooled into one; returns (statistic, degrees of freedom).
fn chi_square(
    counts: &std::collections::HashMap<Vec<u32>, u64>,
    expected: &[(Vec<u32>, f64)],
    n: u64,
) -> (f64, usize) {
    let (mut stat, mut cells) = (0.0, 0usize);
    let (mut pool_obs, mut pool_exp) = (0.0, 0.0);
    let mut seen = 0u64;
    for (k, p) in expected {
        let e = p * n as f64;
        let o = counts.get(k).copied().unwrap_or(0);
        seen += o;
        if e < 5.0 {
            pool_obs += o as f64;
            pool_exp += e;
        } else {
            stat += (o as f64 - e).powi(2) / e;
            cells += 1;
        }
    }
    // Outcomes outside the expected support go into the pool too.
    pool_obs += (n - seen) as f64;
    if pool_exp > 0.0 || pool_obs > 0.0 {
        let e = pool_exp.max(1e-9);
        stat += (pool_obs - e).powi(2) / e;
        cells += 1;
    }
    (stat, cells.saturating_sub(1).max(1))
}

/// The 0.999 quantile of chi-square with `df` degrees of freedom (Wilson–Hilferty; within
/// about 1 % for df ≥ 3): a test passing below it has p ≥ 0.001.
fn critical(df: usize) -> f64 {
    let d = df as f64;
    let z = 3.090_232;
    d * (1.0 - 2.0 / (9.0 * d) + z * (2.0 / (9.0 * d)).sqrt()).powi(3)
}

/// Draws of the first `tokens` emitted tokens under `rejection` for seeds 0..n, cycles of
/// γ = `gamma`, from exact p and q: `q_of(ctx)`/`p_of(ctx)` give the draft's and the
/// target's processed distributions after the prompt + `ctx`.
#[allow(clippy::too_many_arguments)]
fn simulate(
    rule: Rule,
    n: u64,
    tokens: usize,
    gamma: usize,
    q_of: &mut dyn FnMut(&[u32]) -> Option<Vec<f64>>,
    ngram_token: Option<u32>,
    p_of: &mut dyn FnMut(&[u32]) -> Vec<f64>,
    residual: Residual,
) -> std::collections::HashMap<Vec<u32>, u64> {
    let mut counts = std::collections::HashMap::new();
    for seed in 0..n {
        let mut emitted: Vec<u32> = Vec::new();
        while emitted.len() < tokens {
            let s0 = emitted.len() as u64;
            // Draft γ tokens from q (draw 1 of each step), or the n-gram's token.
            let (mut drafted, mut qs) = (Vec::new(), Vec::new());
            for i in 0..gamma as u64 {
                let ctx: Vec<u32> = emitted.iter().chain(&drafted).copied().collect();
                match ngram_token {
                    Some(t) => {
                        drafted.push(t);
                        qs.push(None);
                    }
                    None => {
                        let q = q_of(&ctx).unwrap();
                        drafted.push(sample_from(&q, step_coins(seed, s0 + i)[1]));
                        qs.push(Some(q));
                    }
                }
            }
            let targets: Vec<Target> = (0..=gamma)
                .map(|i| {
                    let ctx: Vec<u32> = emitted.iter().chain(&drafted[..i]).copied().collect();
                    let p = p_of(&ctx);
                    let token = sample_from(&p, step_coins(seed, s0 + i as u64)[0]);
                    Target { p, token }
                })
                .collect();
            let c = verify_with(rule, false, residual, &drafted, &qs, &targets, |i| {
                step_coins(seed, s0 + i as u64)
            });
            emitted.extend(c.emitted());
        }
        emitted.truncate(tokens);
        *counts.entry(emitted).or_insert(0) += 1;
    }
    counts
}

/// The emitted distribution is the target's, tested on 100,000 seeded outcomes of the first
/// token for every draft and both rules (and of the first two tokens, 100,000 too, for q8 and
/// exit:2 under `rejection`), under plain T = 1
/// and under top-k + top-p + a repetition penalty; the same test fails when the residual is
/// replaced by p (the classic mistake), for drafts far enough from the target to reject often.
#[test]
fn rejection_sampling_leaves_the_distribution_unchanged_and_the_test_catches_the_mistake() {
    let m = common::stories260k();
    let t = &m.transformer;
    let prompt = m
        .encode_prompt("Once upon a time, there was a little girl. The girl")
        .unwrap();
    let q8 = t.at(Precision::Q8);
    let q4 = t.at(Precision::Q4);
    for s in [
        settings(&[("temperature", "1")]),
        settings(&[
            ("top_k", "40"),
            ("top_p", "0.9"),
            ("repetition_penalty", "1.3"),
        ]),
    ] {
        let p0 = processed(t, &s, &prompt, &[]);
        let ngram = {
            let mut order: Vec<usize> = (0..p0.len()).collect();
            order.sort_by(|&a, &b| p0[b].total_cmp(&p0[a]));
            order[1] as u32 // a token the target takes sometimes, not always
        };
        let n = 100_000;
        type QFn<'a> = Box<dyn FnMut(&[u32]) -> Option<Vec<f64>> + 'a>;
        let drafts: Vec<(&str, QFn, Option<u32>, bool)> = vec![
            (
                "quant:q8",
                Box::new(|c: &[u32]| Some(processed(&q8, &s, &prompt, c))),
                None,
                false,
            ),
            (
                "quant:q4",
                Box::new(|c: &[u32]| Some(processed(&q4, &s, &prompt, c))),
                None,
                false,
            ),
            (
                "exit:2",
                Box::new(|c: &[u32]| Some(processed_exit(t, 2, &s, &prompt, c))),
                None,
                true,
            ),
            ("ngram", Box::new(|_: &[u32]| None), Some(ngram), true),
        ];
        for (name, mut q_of, ngram_token, far) in drafts {
            let mut q_cache = std::collections::HashMap::new();
            let mut q_memo = |c: &[u32]| -> Option<Vec<f64>> {
                q_cache.entry(c.to_vec()).or_insert_with(|| q_of(c)).clone()
            };
            let mut p_cache = std::collections::HashMap::new();
            let mut p_memo = |c: &[u32]| -> Vec<f64> {
                p_cache
                    .entry(c.to_vec())
                    .or_insert_with(|| processed(t, &s, &prompt, c))
                    .clone()
            };
            check_draft(name, &mut q_memo, ngram_token, far, &mut p_memo, &p0, n);
        }
    }
}

/// The chi-square checks of one draft (`q_of`, or the n-gram's one token), `p_of` the
/// target's distribution after the prompt + a context, `p0` its first: the first token under
/// both rules, the classic mistake caught when the draft is `far`, and the first two tokens
/// for q8 and exit:2 under `rejection`.
fn check_draft(
    name: &str,
    q_of: &mut dyn FnMut(&[u32]) -> Option<Vec<f64>>,
    ngram_token: Option<u32>,
    far: bool,
    p_of: &mut dyn FnMut(&[u32]) -> Vec<f64>,
    p0: &[f64],
    n: u64,
) {
    let expected: Vec<(Vec<u32>, f64)> = p0
        .iter()
        .enumerate()
        .map(|(i, &p)| (vec![i as u32], p))
        .collect();
    for rule in [Rule::Rejection, Rule::Match] {
        let counts = simulate(rule, n, 1, 1, q_of, ngram_token, p_of, Residual::Correct);
        let (stat, df) = chi_square(&counts, &expected, n);
        assert!(
            stat < critical(df),
            "{name} {rule:?}: chi-square {stat:.1} with {df} df ≥ {:.1}",
            critical(df)
        );
    }
    if far {
        let wrong = simulate(
            Rule::Rejection,
            n,
            1,
            1,
            q_of,
            ngram_token,
            p_of,
            Residual::FromP,
        );
        let (bad, df) = chi_square(&wrong, &expected, n);
        assert!(
            bad > critical(df),
            "{name}: the mistake went unseen ({bad:.1}, {df} df)"
        );
    }
    if name == "quant:q8" || name == "exit:2" {
        check_two_tokens(name, q_of, ngram_token, p_of, p0, n);
    }
}

/// Two tokens: p0(a) · p(b | a), over the pairs a, b (cells under 5 expected draws pooled).
fn check_two_tokens(
    name: &str,
    q_of: &mut dyn FnMut(&[u32]) -> Option<Vec<f64>>,
    ngram_token: Option<u32>,
    p_of: &mut dyn FnMut(&[u32]) -> Vec<f64>,
    p0: &[f64],
    n: u64,
) {
    let counts = simulate(
        Rule::Rejection,
        n,
        2,
        2,
        q_of,
        ngram_token,
        p_of,
        Residual::Correct,
    );
    let mut expected2 = Vec::new();
    for (a, &pa) in p0.iter().enumerate() {
        if pa * (n as f64) < 0.5 {
            continue;
        }
        let pb = p_of(&[a as u32]);
        for (b, &x) in pb.iter().enumerate() {
            expected2.push((vec![a as u32, b as u32], pa * x));
        }
    }
    let (stat, df) = chi_square(&counts, &expected2, n);
    assert!(
        stat < critical(df),
        "{name}, two tokens: {stat:.1} with {df} df"
    );
}

/// With the q8 draft at T = 1: tokens per cycle against (1 − α^(γ+1)) / (1 − α), α the mean
/// exact acceptance probability Σ min(p, q) of the verified positions (the i.i.d.
/// approximation: positions treated as independent with one α), within 3 standard errors.
#[test]
fn tokens_per_cycle_follow_the_acceptance_formula() {
    let m = common::stories260k();
    let gamma = 4;
    let (mut per_cycle, mut overlaps) = (Vec::new(), Vec::new());
    for seed in 0..12 {
        let s = settings(&[("seed", &seed.to_string()), ("logit_bias", "1:-100,2:-100")]);
        let ids = m.encode_prompt("Once upon a time").unwrap();
        let mut be = CpuBackend::new(m.transformer.clone());
        let mut sp = block_on(Speculator::start(
            &mut be,
            &m.transformer,
            ids,
            Draft::Quant(Precision::Q4),
            gamma,
            Rule::Rejection,
        ))
        .unwrap();
        for c in block_on(sp.run(&mut be, &s, 200, &[])).unwrap() {
            if c.drafted.len() == gamma {
                per_cycle.push(c.emitted().len() as f64);
                overlaps.extend(c.checked.iter().map(|k| k.overlap));
            }
        }
    }
    let n = per_cycle.len() as f64;
    let mean = per_cycle.iter().sum::<f64>() / n;
    let sd = (per_cycle.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let alpha = overlaps.iter().sum::<f64>() / overlaps.len() as f64;
    let want = expected_tokens_per_cycle(alpha, gamma);
    assert!(alpha > 0.3 && alpha < 0.999, "α = {alpha}");
    assert!(
        (mean - want).abs() <= 3.0 * sd / n.sqrt(),
        "{n} cycles: {mean:.3} tokens a cycle, formula {want:.3} at α = {alpha:.3} (SE {:.3})",
        sd / n.sqrt()
    );
}

#[test]
fn prompt_lookup_proposes_what_followed_the_last_match() {
    assert_eq!(ngram_lookup(&[5, 6, 7, 8, 5, 6], 2, 3), vec![7, 8, 5]);
    assert_eq!(
        ngram_lookup(&[5, 6, 7, 5, 6, 9, 5, 6], 2, 2),
        vec![9, 5],
        "the latest match"
    );
    assert_eq!(ngram_lookup(&[1, 2, 3], 2, 4), Vec::<u32>::new());
    assert_eq!(ngram_lookup(&[4, 4], 1, 3), vec![4]);
}

#[test]
fn bad_drafts_rules_and_gammas_are_refused() {
    assert!(matches!(
        Draft::parse("exit:5", 5),
        Err(SpecError::ExitLayer { .. })
    ));
    assert_eq!(Draft::parse("exit:2", 5), Ok(Draft::Exit(2)));
    assert_eq!(Draft::parse("quant:q4", 5), Ok(Draft::Quant(Precision::Q4)));
    assert!(Draft::parse("quant:f32", 5).is_err());
    assert!(Draft::parse("ngram:0", 5).is_err());
    assert!(Rule::parse("maybe").is_err());
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let e = block_on(Speculator::start(
        &mut be,
        &m.transformer,
        vec![1],
        Draft::Ngram(1),
        17,
        Rule::Match,
    ))
    .err();
    assert_eq!(e, Some(SpecError::BadGamma(17)));
}

/// A speculator on stories260K after BOS and one token, drafting by 2-grams, 3 a cycle.
fn small_speculator(m: &Model, be: &mut CpuBackend) -> Speculator {
    let start = Speculator::start(
        be,
        &m.transformer,
        vec![1, 403],
        Draft::Ngram(2),
        3,
        Rule::Rejection,
    );
    block_on(start).unwrap()
}

/// Mirostat's μ and adaptive-p's average move with every token: speculative decoding, which
/// checks drafted positions against one distribution each, refuses them by name and emits
/// nothing.
#[test]
fn stages_that_carry_state_are_refused_by_name() {
    let m = common::stories260k();
    for knob in ["mirostat", "adaptive_p_target"] {
        let value = if knob == "mirostat" { "2" } else { "0.3" };
        let mut be = CpuBackend::new(m.transformer.clone());
        let mut sp = small_speculator(&m, &mut be);
        let e = block_on(sp.run(&mut be, &settings(&[(knob, value)]), 5, &[])).unwrap_err();
        assert!(e.to_string().starts_with(knob), "{e}");
        assert!(sp.emitted().is_empty());
    }
}

/// DRY's breakers are the tokens' text, which the draft-and-verify loop does not carry: it
/// is refused by name (with no breakers, DRY runs).
#[test]
fn dry_with_breakers_is_refused_by_name() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let mut sp = small_speculator(&m, &mut be);
    let dry = settings(&[("dry_multiplier", "0.8")]);
    let e = block_on(sp.run(&mut be, &dry, 5, &[])).unwrap_err();
    let said = e.to_string();
    assert!(
        said.starts_with("dry_multiplier reads the tokens' text"),
        "{said}"
    );
    assert!(sp.emitted().is_empty());
    let none = settings(&[("dry_multiplier", "0.8"), ("dry_sequence_breaker", "none")]);
    block_on(sp.run(&mut be, &none, 5, &[])).unwrap();
    assert_eq!(sp.emitted().len(), 5);
}
