//! Every stage, hand-checkable: logits are built from logarithms so the expected
//! probabilities are exact fractions (written as such). Then the published test cases of
//! llama.cpp's `tests/test-sampling.cpp` and Hugging Face's
//! `tests/generation/test_logits_process.py`, ported as data, each citing its source.

use decoding_engine::decode::sampling::stages::truncation::{TopKTies, TypicalBoundary};
use decoding_engine::decode::sampling::stages::{self, softmax};
use decoding_engine::decode::sampling::{process, History, RawSettings, Settings};

const LN2: f64 = std::f64::consts::LN_2;

/// Logits whose softmax is `probs` (ln of each; ln 0 = −∞).
fn ln(probs: &[f64]) -> Vec<f64> {
    probs.iter().map(|p| p.ln()).collect()
}

#[track_caller]
fn assert_probs(z: &[f64], want: &[f64], tol: f64) {
    let got = softmax(z);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol,
            "token {i}: got {g}, want {w} (all: {got:?})"
        );
    }
}

fn kept(z: &[f64]) -> Vec<usize> {
    (0..z.len()).filter(|&i| z[i].is_finite()).collect()
}

fn settings(pairs: &[(&str, &str)]) -> Settings {
    RawSettings::from_pairs(pairs.iter().copied())
        .validate(1000)
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// The lesson's example (lesson 10, section 3): z = [2, 1, 0.1].

#[test]
fn lesson_temperature_example_exact_values() {
    let z = [2.0f32, 1.0, 0.1];
    let top = |t: &str| {
        let s = settings(&[("temperature", t)]);
        process(&s, &z, History::default(), 0.0, false)
            .unwrap()
            .probs[0]
    };
    // e^2 / (e^2 + e^1 + e^0.1) and the same for z/T, computed exactly here.
    let exact = |t: f64| {
        let e: Vec<f64> = [2.0f64, 1.0, 0.1].iter().map(|v| (v / t).exp()).collect();
        e[0] / e.iter().sum::<f64>()
    };
    for t in ["1", "0.5", "2"] {
        assert!((top(t) - exact(t.parse().unwrap())).abs() < 1e-6);
    }
    // To the lesson's precision: 0.659 at T = 1 and ≈0.50 at T = 2 ...
    assert!((top("1") - 0.659).abs() < 5e-4, "{}", top("1"));
    assert!((top("2") - 0.50).abs() < 5e-3, "{}", top("2"));
    // ... at T = 0.5 the exact value is 0.8638: the lesson's "≈ 0.84" is 0.024 off (it is
    // the page's job to show the true number; the discrepancy is noted in the docs).
    assert!((top("0.5") - 0.8638).abs() < 1e-4, "{}", top("0.5"));
}

// ---------------------------------------------------------------------------------------
// Hand-checkable, one per stage.

#[test]
fn logit_bias_adds_to_one_logit() {
    // Uniform over 4; +ln 2 on token 1 doubles its weight: [1, 2, 1, 1] / 5.
    let mut z = vec![0.0; 4];
    stages::bias::logit_bias(&mut z, &[(1, LN2)]);
    assert_probs(&z, &[0.2, 0.4, 0.2, 0.2], 1e-12);
}

#[test]
fn repetition_penalty_divides_positive_multiplies_negative_once_per_token() {
    // z = [ln 4, ln ½, ln 1]; tokens 0 (twice) and 1 were seen; penalty 2:
    // ln 4 / 2 = ln 2, ln ½ × 2 = ln ¼, token 2 unchanged → [2, ¼, 1] / 3.25.
    let mut z = vec![4f64.ln(), 0.5f64.ln(), 0.0];
    stages::penalties::repetition_penalty(&mut z, &[0, 1, 0], 2.0);
    assert_probs(&z, &[8.0 / 13.0, 1.0 / 13.0, 4.0 / 13.0], 1e-12);
}

#[test]
fn frequency_penalty_subtracts_count_times_alpha() {
    // Uniform over 4; token 0 seen twice, token 1 once; α = ln 2:
    // weights [¼, ½, 1, 1] / 2.75.
    let mut z = vec![0.0; 4];
    stages::penalties::frequency_penalty(&mut z, &[0, 0, 1], LN2);
    assert_probs(&z, &[1.0 / 11.0, 2.0 / 11.0, 4.0 / 11.0, 4.0 / 11.0], 1e-12);
}

#[test]
fn presence_penalty_subtracts_alpha_once() {
    // Same history, presence α = ln 2: weights [½, ½, 1, 1] / 3.
    let mut z = vec![0.0; 4];
    stages::penalties::presence_penalty(&mut z, &[0, 0, 1], LN2);
    assert_probs(&z, &[1.0 / 6.0, 1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0], 1e-12);
}

#[test]
fn no_repeat_ngram_bans_the_completing_token() {
    // History 1 2 1: the bigram (1, 2) exists and the last token is 1, so 2 is banned.
    let mut z = vec![0.0; 4];
    stages::penalties::no_repeat_ngram(&mut z, &[1, 2, 1], 2);
    assert_probs(&z, &[1.0 / 3.0, 1.0 / 3.0, 0.0, 1.0 / 3.0], 1e-12);
}

#[test]
fn temperature_scales_logits() {
    // Weights 4 : 2 : 1 at T = 0.5 become 16 : 4 : 1; 16 : 4 : 1 at T = 2 become 4 : 2 : 1.
    let mut z = ln(&[4.0, 2.0, 1.0]);
    stages::temperature::temperature(&mut z, 0.5);
    assert_probs(&z, &[16.0 / 21.0, 4.0 / 21.0, 1.0 / 21.0], 1e-12);
    let mut z = ln(&[16.0, 4.0, 1.0]);
    stages::temperature::temperature(&mut z, 2.0);
    assert_probs(&z, &[4.0 / 7.0, 2.0 / 7.0, 1.0 / 7.0], 1e-12);
}

#[test]
fn top_k_keeps_the_k_most_likely() {
    let mut z = ln(&[0.5, 0.25, 0.125, 0.125]);
    stages::truncation::top_k(&mut z, 2, TopKTies::Exact);
    assert_probs(&z, &[2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0], 1e-12);
}

#[test]
fn top_p_keeps_the_smallest_set_reaching_p() {
    // ½ + ¼ = ¾ reaches 0.75 exactly: nothing extra.
    let mut z = ln(&[0.5, 0.25, 0.125, 0.125]);
    stages::truncation::top_p(&mut z, 0.75);
    assert_probs(&z, &[2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0], 1e-12);
    // 0.8 needs the third token (the lower id of the two ⅛).
    let mut z = ln(&[0.5, 0.25, 0.125, 0.125]);
    stages::truncation::top_p(&mut z, 0.8);
    assert_probs(&z, &[4.0 / 7.0, 2.0 / 7.0, 1.0 / 7.0, 0.0], 1e-12);
}

#[test]
fn min_p_is_relative_to_the_top_probability() {
    // min-p ½: threshold ½ × ½ = ¼ keeps ½ and ¼ (≥), drops the ⅛s.
    let mut z = ln(&[0.5, 0.25, 0.125, 0.125]);
    stages::truncation::min_p(&mut z, 0.5);
    assert_probs(&z, &[2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0], 1e-12);
    // min-p ¼: threshold ⅛ keeps everything.
    let mut z = ln(&[0.5, 0.25, 0.125, 0.125]);
    stages::truncation::min_p(&mut z, 0.25);
    assert_eq!(kept(&z), vec![0, 1, 2, 3]);
}

#[test]
fn typical_p_keeps_tokens_closest_to_the_entropy() {
    // p = [½, ¼, ⅛, ⅛]: H = 1.75 ln 2; surprisals 1, 2, 3, 3 (× ln 2); distances to H
    // 0.75, 0.25, 1.25, 1.25. Most typical first: ¼ (cum ¼), ½ (cum ¾), then the ⅛s.
    let mut z = ln(&[0.5, 0.25, 0.125, 0.125]);
    stages::truncation::typical_p(&mut z, 0.75, TypicalBoundary::Reaching);
    assert_probs(&z, &[2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0], 1e-12);
}

// ---------------------------------------------------------------------------------------
// llama.cpp tests/test-sampling.cpp (ggml-org/llama.cpp): probabilities in id order; the
// llama.cpp file lists them in its (sorted) output order.

const BASE: [f64; 4] = [0.1, 0.2, 0.3, 0.4];

#[test]
fn llama_cpp_test_temp() {
    // test_temp({0.1, 0.2, 0.3, 0.4}, {0.1, 0.2, 0.3, 0.4}, 1.0f);
    let mut z = ln(&BASE);
    stages::temperature::temperature(&mut z, 1.0);
    assert_probs(&z, &BASE, 1e-5);
    // test_temp({0.1, 0.2, 0.3, 0.4}, {0.0f, 0.0f, 0.0f, 1.0f}, 0.0f);
    let mut z = ln(&BASE);
    stages::temperature::temperature(&mut z, 0.0);
    assert_probs(&z, &[0.0, 0.0, 0.0, 1.0], 1e-5);
}

#[test]
fn llama_cpp_test_top_k() {
    let cases: &[(usize, [f64; 4])] = &[
        (1, [0.0, 0.0, 0.0, 1.0]),             // test_top_k(…, {1.0f}, 1)
        (3, [0.0, 0.22222, 0.33333, 0.44444]), // {0.44444f, 0.33333f, 0.22222f}, 3
        (4, BASE),                             // {0.4f, 0.3f, 0.2f, 0.1f}, 4
        (0, BASE),                             // {0.1f, 0.2f, 0.3f, 0.4f}, 0
    ];
    for &(k, want) in cases {
        let mut z = ln(&BASE);
        stages::truncation::top_k(&mut z, k, TopKTies::Exact);
        assert_probs(&z, &want, 1e-5);
    }
}

#[test]
fn llama_cpp_test_top_p() {
    let cases: &[(f64, [f64; 4])] = &[
        (0.0, [0.0, 0.0, 0.0, 1.0]),             // test_top_p(…, {1.0f}, 0)
        (0.7, [0.0, 0.0, 0.428571, 0.571429]),   // {0.571429f, 0.428571f}, 0.7f
        (0.8, [0.0, 0.22222, 0.33333, 0.44444]), // {0.44444f, 0.33333f, 0.22222f}, 0.8f
        (1.0, BASE),                             // {0.1f, 0.2f, 0.3f, 0.4f}, 1.0f
    ];
    for &(p, want) in cases {
        let mut z = ln(&BASE);
        stages::truncation::top_p(&mut z, p);
        assert_probs(&z, &want, 1e-5);
    }
}

#[test]
fn llama_cpp_test_min_p() {
    let cases: &[(f64, [f64; 4])] = &[
        (0.00, BASE),
        (0.24, BASE),
        (0.26, [0.0, 0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9]),
        (0.49, [0.0, 0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9]),
        (0.51, [0.0, 0.0, 0.3 / 0.7, 0.4 / 0.7]),
        (0.74, [0.0, 0.0, 0.3 / 0.7, 0.4 / 0.7]),
        (0.76, [0.0, 0.0, 0.0, 1.0]),
        (1.00, [0.0, 0.0, 0.0, 1.0]),
        // 1.05 is outside [0, 1] for the settings, but the stage keeps the top token as
        // llama.cpp does.
        (1.05, [0.0, 0.0, 0.0, 1.0]),
    ];
    for &(p, want) in cases {
        let mut z = ln(&BASE);
        stages::truncation::min_p(&mut z, p);
        assert_probs(&z, &want, 1e-5);
    }
}

#[test]
fn llama_cpp_test_typical() {
    // test_typical({0.97f, 0.01f, 0.01f, 0.01f}, {0.97f}, 0.5f);
    let mut z = ln(&[0.97, 0.01, 0.01, 0.01]);
    stages::truncation::typical_p(&mut z, 0.5, TypicalBoundary::Exceeding);
    assert_eq!(kept(&z), vec![0]);
    // test_typical({0.4f, 0.2f, 0.2f, 0.2f}, {0.2f, 0.2f, 0.2f}, 0.5f);
    let mut z = ln(&[0.4, 0.2, 0.2, 0.2]);
    stages::truncation::typical_p(&mut z, 0.5, TypicalBoundary::Exceeding);
    assert_eq!(kept(&z), vec![1, 2, 3]);
}

#[test]
fn llama_cpp_test_penalties() {
    // test_penalties(probs, last_tokens, expected, repeat, freq, presence): llama.cpp's
    // penalties sampler applies repeat, then frequency and presence, over the last tokens.
    let uniform = [0.2; 5];
    /// (last tokens, expected probabilities, repeat, frequency, presence)
    type Case = (&'static [u32], [f64; 5], f64, f64, f64);
    let cases: &[Case] = &[
        (&[0], [0.0, 0.25, 0.25, 0.25, 0.25], 50.0, 0.0, 0.0),
        (&[0, 1, 2], [0.0, 0.0, 0.0, 0.5, 0.5], 50.0, 0.0, 0.0),
        (&[0, 1, 2, 0, 0], [0.0, 0.0, 0.0, 0.5, 0.5], 50.0, 0.0, 0.0),
        (
            &[0],
            [0.000011, 0.249997, 0.249997, 0.249997, 0.249997],
            1.0,
            5.0,
            5.0,
        ),
        (
            &[0, 1, 2],
            [0.000023, 0.000023, 0.000023, 0.499966, 0.499966],
            1.0,
            5.0,
            5.0,
        ),
        (
            &[0, 1, 2, 0, 0],
            [0.000000, 0.000023, 0.000023, 0.499977, 0.499977],
            1.0,
            5.0,
            5.0,
        ),
    ];
    for &(last, want, rep, freq, pres) in cases {
        let mut z = ln(&uniform);
        stages::penalties::repetition_penalty(&mut z, last, rep);
        stages::penalties::frequency_penalty(&mut z, last, freq);
        stages::penalties::presence_penalty(&mut z, last, pres);
        assert_probs(&z, &want, 1e-5);
    }
}

/// llama.cpp `test_sampler_queue`: logits = log(id) over a large vocabulary (id 0 has
/// p = 0), samplers applied in the given order; the expected sizes follow its formulas.
#[test]
fn llama_cpp_test_sampler_queue() {
    fn run(n_vocab: usize, seq: &str, top_k: usize, top_p: f64, min_p: f64) -> Vec<usize> {
        let mut z: Vec<f64> = (0..n_vocab).map(|i| (i as f64).ln()).collect();
        for s in seq.chars() {
            match s {
                'k' => {
                    stages::truncation::top_k(&mut z, top_k, TopKTies::Exact);
                }
                'p' => stages::truncation::top_p(&mut z, top_p),
                'm' => {
                    stages::truncation::min_p(&mut z, min_p);
                }
                _ => unreachable!(),
            }
        }
        kept(&z)
    }
    // test_sampler_queue(10000, "k", 10000, 1.0f, 1.0f) and (…, "k", 1, …): sizes k.
    assert_eq!(run(10000, "k", 10000, 1.0, 1.0).len(), 9999); // id 0 is −∞ already
    assert_eq!(run(10000, "k", 1, 1.0, 1.0), vec![9999]);
    assert_eq!(
        run(10000, "k", 100, 1.0, 1.0),
        (9900..10000).collect::<Vec<_>>()
    );
    // "p": the smallest top set whose Σ id reaches ceil(p × Σ all ids).
    for &p in &[0.8, 0.6, 0.3] {
        let n = 10000usize;
        let total = n * (n - 1) / 2;
        let target = (p * total as f64).ceil() as usize;
        let (mut size, mut cum, mut id) = (0, 0, n);
        while cum < target {
            id -= 1;
            size += 1;
            cum += id;
        }
        let got = run(n, "p", 0, p, 0.0);
        assert!(
            (got.len() as i64 - size as i64).abs() <= 1,
            "p = {p}: {} vs {size}",
            got.len()
        );
        assert_eq!(*got.last().unwrap(), 9999);
    }
    // "m": ceil((1 − min_p) × n) tokens keep p ≥ min_p × p_max (id ≥ min_p × 9999).
    for &m in &[0.2, 0.5, 0.9] {
        let got = run(10000, "m", 0, 1.0, m);
        let expect = (0..10000).filter(|&i| i as f64 >= m * 9999.0).count();
        assert_eq!(got.len(), expect, "min_p {m}");
    }
    // Order matters: top-p after top-k renormalises over the k survivors, so "kp" keeps a
    // smaller set than "pk" (which is then cut by k only if k is smaller).
    let (kp, pk) = (
        run(10000, "kp", 5000, 0.8, 0.0),
        run(10000, "pk", 5000, 0.8, 0.0),
    );
    assert!(kp.len() < pk.len(), "kp {} pk {}", kp.len(), pk.len());
}

// ---------------------------------------------------------------------------------------
// Hugging Face tests/generation/test_logits_process.py (huggingface/transformers).

#[test]
fn hf_test_repetition_penalty_dist_process() {
    // scores uniform 1/10, scores[0,0] = −1/10, input_ids [0, 1], penalty 2.0.
    let mut z = vec![0.1; 10];
    z[0] = -0.1;
    stages::penalties::repetition_penalty(&mut z, &[0, 1], 2.0);
    assert!((z[0] - (-0.2)).abs() < 1e-12);
    assert!((z[1] - 0.05).abs() < 1e-12);
    // Second row: scores[1,5] = 4/10, input_ids [5, 0].
    let mut z = vec![0.1; 10];
    z[5] = 0.4;
    stages::penalties::repetition_penalty(&mut z, &[5, 0], 2.0);
    assert!((z[0] - 0.05).abs() < 1e-12);
    assert!((z[5] - 0.2).abs() < 1e-12);
}

#[test]
fn hf_test_top_k_dist_warper() {
    // Ramp 0..9 and the ramp with its first half raised by 10; top-k 3.
    let mut a: Vec<f64> = (0..10).map(|i| i as f64).collect();
    stages::truncation::top_k(&mut a, 3, TopKTies::Keep);
    assert_eq!(kept(&a), vec![7, 8, 9]);
    let mut b: Vec<f64> = (0..10)
        .map(|i| i as f64 + if i < 5 { 10.0 } else { 0.0 })
        .collect();
    stages::truncation::top_k(&mut b, 3, TopKTies::Keep);
    assert_eq!(kept(&b), vec![2, 3, 4]);
}

#[test]
fn hf_test_top_p_dist_warper() {
    // dist = log([[0.3, 0.1, 0.1, 0.5], [0.15, 0.3, 0.3, 0.25]]), TopPLogitsWarper(0.8):
    // expected [[0.3, 0, 0, 0.5], [0, 0.3, 0.3, 0.25]].
    let mut a = ln(&[0.3, 0.1, 0.1, 0.5]);
    stages::truncation::top_p(&mut a, 0.8);
    assert_eq!(kept(&a), vec![0, 3]);
    let mut b = ln(&[0.15, 0.3, 0.3, 0.25]);
    stages::truncation::top_p(&mut b, 0.8);
    assert_eq!(kept(&b), vec![1, 2, 3]);
    // Ramp −5..4, top-p 0.9: the first row keeps three tokens.
    let mut r: Vec<f64> = (0..10).map(|i| i as f64 - 5.0).collect();
    stages::truncation::top_p(&mut r, 0.9);
    assert_eq!(kept(&r).len(), 3);
}

#[test]
fn hf_test_min_p_dist_warper() {
    // MinPLogitsWarper(0.05): [0.9, 0.0274, 0.047, 0.0274] keeps 0.9 and 0.047 (> 0.045);
    // [0.15, 0.3, 0.3, 0.25] keeps all; [0.97, 0.01, 0.01, 0.01] keeps only the first.
    let cases: &[([f64; 4], &[usize])] = &[
        ([0.9, 0.0274, 0.047, 0.0274], &[0, 2]),
        ([0.15, 0.3, 0.3, 0.25], &[0, 1, 2, 3]),
        ([0.97, 0.01, 0.01, 0.01], &[0]),
    ];
    for (p, want) in cases {
        let mut z = ln(p);
        stages::truncation::min_p(&mut z, 0.05);
        assert_eq!(kept(&z), *want, "{p:?}");
    }
}

#[test]
fn hf_test_typical_dist_warper() {
    // TypicalLogitsWarper(0.5): [[0.97, 0.01, 0.01, 0.01], [0.4, 0.2, 0.2, 0.2]] →
    // [[0.97, 0, 0, 0], [0, 0.2, 0.2, 0.2]].
    let mut a = ln(&[0.97, 0.01, 0.01, 0.01]);
    stages::truncation::typical_p(&mut a, 0.5, TypicalBoundary::Reaching);
    assert_eq!(kept(&a), vec![0]);
    let mut b = ln(&[0.4, 0.2, 0.2, 0.2]);
    stages::truncation::typical_p(&mut b, 0.5, TypicalBoundary::Reaching);
    assert_eq!(kept(&b), vec![1, 2, 3]);
    // Ramp −5..4 with mass 0.7 keeps two tokens in the first row.
    let mut r: Vec<f64> = (0..10).map(|i| i as f64 - 5.0).collect();
    stages::truncation::typical_p(&mut r, 0.7, TypicalBoundary::Reaching);
    assert_eq!(kept(&r).len(), 2);
}

#[test]
fn hf_test_no_repeat_ngram_dist_processor() {
    // input_ids [[1, 1, 2, 1], [0, 1, 0, 1]], vocab 3.
    let banned = |hist: &[u32], n: usize| {
        let mut z = vec![1.0 / 3.0; 3];
        stages::penalties::no_repeat_ngram(&mut z, hist, n);
        z.iter().map(|v| v.is_infinite()).collect::<Vec<_>>()
    };
    assert_eq!(banned(&[1, 1, 2, 1], 2), [false, true, true]);
    assert_eq!(banned(&[0, 1, 0, 1], 2), [true, false, false]);
    assert_eq!(banned(&[1, 1, 2, 1], 3), [false, false, false]);
    assert_eq!(banned(&[0, 1, 0, 1], 3), [true, false, false]);
}

#[test]
fn hf_test_temperature_dist_warper() {
    // A uniform distribution stays uniform; peaks get sharper at T = 0.5 and flatter at 1.3.
    let mut u = vec![0.05; 20];
    stages::temperature::temperature(&mut u, 0.5);
    assert_probs(&u, &[0.05; 20], 1e-12);
    let mut z = vec![0.05; 20];
    z[5] = 0.15;
    z[10] = -0.35;
    let p = softmax(&z);
    let (mut sharp, mut smooth) = (z.clone(), z.clone());
    stages::temperature::temperature(&mut sharp, 0.5);
    stages::temperature::temperature(&mut smooth, 1.3);
    let (ps, pm) = (softmax(&sharp), softmax(&smooth));
    assert!(ps[5] > p[5] && ps[10] < p[10]);
    assert!(pm[5] < p[5] && pm[10] > p[10]);
}

#[test]
fn nan_and_infinite_logits_are_errors_not_samples() {
    use decoding_engine::decode::sampling::chain::process_f64;
    use decoding_engine::decode::sampling::SamplingError;
    let s = Settings::default();
    assert_eq!(
        process_f64(&s, &[0.0, f64::NAN, 1.0], History::default(), 0.5, true).unwrap_err(),
        SamplingError::NanLogit { id: 1 }
    );
    assert_eq!(
        process_f64(&s, &[f64::INFINITY, 1.0], History::default(), 0.5, true).unwrap_err(),
        SamplingError::InfiniteLogit { id: 0 }
    );
    assert_eq!(
        process_f64(&s, &[f64::NEG_INFINITY; 3], History::default(), 0.5, true).unwrap_err(),
        SamplingError::NothingToSample
    );
    assert_eq!(
        process(&s, &[], History::default(), 0.5, true).unwrap_err(),
        SamplingError::Empty
    );
    // no-repeat-n-gram can ban a whole (tiny) vocabulary: a clear error, not a division by 0.
    let s = RawSettings::from_pairs([("no_repeat_ngram", "1")])
        .validate(2)
        .unwrap();
    let h = History {
        prompt: &[0, 1],
        generated: &[],
        ..History::default()
    };
    assert!(process_f64(&s, &[0.0, 0.0], h, 0.5, false)
        .unwrap_err()
        .to_string()
        .contains("no_repeat_ngram removed every remaining token"));
}

/// Mirostat's μ starts at 2τ and moves by η × (the chosen token's surprise − τ) after each
/// token (Basu et al. 2021, algorithm 1; llama.cpp updates it in `apply`), and the next
/// step starts from it; adaptive-p's average starts at the target and takes in the chosen
/// token's probability as it entered the stage, weighted by the decay.
#[test]
fn stage_state_moves_with_each_chosen_token() {
    use decoding_engine::decode::sampling::chain::process_f64;
    use decoding_engine::decode::sampling::Stage;
    let z: Vec<f64> = (0..40).map(|i| -0.15 * i as f64).collect();
    let s = RawSettings::from_pairs([
        ("mirostat", "2"),
        ("mirostat_tau", "3"),
        ("mirostat_eta", "0.5"),
    ])
    .validate(40)
    .unwrap();
    let miro = Stage::parse("mirostat").unwrap();
    let mut state = None;
    let mut mu = 6.0;
    for (step, coin) in [0.1, 0.7, 0.4].into_iter().enumerate() {
        let h = History {
            state: state.as_ref(),
            ..History::default()
        };
        let t = process_f64(&s, &z, h, coin, false).unwrap();
        let cut = &t.cuts.iter().find(|(st, _)| *st == miro).unwrap().1;
        assert_eq!(cut.value("mu"), Some(mu), "step {step}");
        // −log₂ p ≤ μ for every token kept (version 2's truncation).
        assert!(t.probs.iter().filter(|&&p| p > 0.0).count() >= 1);
        mu -= 0.5 * (-t.prob.log2() - 3.0);
        assert!((t.state.of(miro)[0] - mu).abs() < 1e-12);
        state = Some(t.state);
    }
    let s = RawSettings::from_pairs([("adaptive_p_target", "0.2"), ("adaptive_p_decay", "0.5")])
        .validate(40)
        .unwrap();
    let ap = Stage::parse("adaptive_p_target").unwrap();
    let entering = softmax(&z);
    let t = process_f64(&s, &z, History::default(), 0.3, false).unwrap();
    // Before: sum 0.2 / (1 − 0.5) = 0.4 over weight 1 / (1 − 0.5) = 2 (the target).
    // After: p + 0.5 × 0.4 over 1 + 0.5 × 2.
    let p = entering[t.token as usize];
    assert_eq!(t.state.of(ap), [p + 0.2, 2.0]);
}
