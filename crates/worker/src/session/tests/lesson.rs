//! The lesson track through the worker's `Session`: every step opens from its link with the
//! requests the page sends, and every caption's claim is checked against its own numbers,
//! each number against a figure worked out here by hand or by another path.

use super::*;
use decoding_page::lesson::{by_key, caption_text, number, Live, Part, STEPS};

/// A step's caption from the views the page's requests give, with every event.
struct Opened {
    parts: Vec<Part>,
    text: String,
    events: Vec<Event>,
    /// The distribution the page draws: its chain on the last logits sent.
    trace: Option<TraceView>,
}

impl Opened {
    fn n(&self, key: &str) -> f64 {
        number(&self.parts, key).unwrap_or_else(|| panic!("no {key} in {}", self.text))
    }
    fn says(&self, words: &str) -> bool {
        self.text.contains(words)
    }
}

fn open(s: &mut Session, host: &TestHost, info: &ModelInfo, key: &str) -> Opened {
    let (_, step) = by_key(key).unwrap_or_else(|| panic!("no step {key}"));
    let r = decoding_page::page::from_query(step.query, 512);
    assert!(r.problems.is_empty(), "{key}: {:?}", r.problems);
    let mut reqs = decoding_page::page::view_requests(&r.page, &r.settings);
    reqs.extend(step.action_request());
    let mut events = Vec::new();
    for req in reqs {
        events.extend(ask(s, host, req));
    }
    let errors: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Event::Model(ModelEvent::Error { .. })))
        .collect();
    assert!(errors.is_empty(), "{key}: {errors:?}");
    macro_rules! pick {
        ($pat:pat => $v:expr) => {
            events.iter().rev().find_map(|e| match e {
                $pat => Some($v),
                _ => None,
            })
        };
    }
    let toy_logits = r
        .page
        .toy
        .as_deref()
        .and_then(|t| decoding_page::page::parse_toy(t).ok());
    // What the page computes itself: the chain on the last logits sent, and on the toy's.
    let trace = pick!(Event::Transcript(TranscriptEvent::Next { view }) => view)
        .map(|n| n.trace(&r.settings, None).unwrap());
    let toy = toy_logits
        .as_deref()
        .map(|z| decoding_page::page::chain::toy_trace(z, &[], &r.settings).unwrap());
    let live = Live {
        info: Some(info),
        page: Some(&r.page),
        transcript: pick!(Event::Transcript(TranscriptEvent::Transcript { view }) => view),
        trace: trace.as_ref(),
        beam: pick!(Event::Beam(BeamEvent::Beam { view }) => view),
        toy: toy.as_ref(),
        toy_logits: toy_logits.as_deref(),
        cache_rows: pick!(Event::Kv(KvEvent::CacheCompare { rows, .. }) => rows.as_slice()),
        columns: pick!(Event::Compare(ColumnsEvent::Columns { view }) => view),
        spec: pick!(Event::Spec(SpecEvent::Spec { view }) => view),
        quant: pick!(Event::Quant(QuantEvent::Quant { view }) => view),
        sweep: pick!(Event::Batch(BatchEvent::Sweep { view }) => view),
        lang: Default::default(),
    };
    // The columns arrive twice: as they start (no steps) and grown. A caption drawn from
    // the first would count tokens not yet generated (CI saw "no loop" at step 7).
    let first_columns = events.iter().find_map(|e| match e {
        Event::Compare(ColumnsEvent::Columns { view }) => Some(view),
        _ => None,
    });
    if let Some(first) = first_columns.filter(|v| v.columns.iter().all(|c| c.steps.is_empty())) {
        let early = Live {
            columns: Some(first),
            ..live
        };
        assert!(
            step.caption(&early).is_err(),
            "{key} captions columns without steps"
        );
    }
    let parts = step
        .caption(&live)
        .unwrap_or_else(|w| panic!("{key} waits for {w}"));
    let text = caption_text(&parts);
    Opened {
        parts,
        text,
        events,
        trace,
    }
}

fn transcript(o: &Opened) -> &TranscriptView {
    last_transcript(&o.events)
}

fn sweep(o: &Opened) -> &SweepView {
    o.events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Batch(BatchEvent::Sweep { view }) => Some(view),
            _ => None,
        })
        .expect("a sweep")
}

/// Σ ln p(token) under the model (T = 1) of `steps` tokens generated from `prompt` with
/// these settings, by the transcript's own loop (another path than the columns').
fn model_logprob(s: &mut Session, host: &TestHost, pairs: &[(&str, &str)], steps: u32) -> f64 {
    let ev = ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: decoding_page::page::DEFAULT_PROMPT.into(),
            settings: settings(pairs),
            steps,
        }),
    );
    last_transcript(&ev)
        .steps
        .iter()
        .map(|s| s.model_prob.ln())
        .sum()
}

#[test]
fn every_lesson_step_has_a_key_a_view_and_a_caption() {
    let mut keys: Vec<&str> = STEPS.iter().map(|s| s.key).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), STEPS.len(), "keys are unique");
    for s in &STEPS {
        assert!(!s.shows.is_empty() && !s.title.is_empty(), "{}", s.key);
    }
}

/// Every step opens from its link (no problem in it), and each caption's claims hold on its
/// own numbers.
#[test]
fn every_lesson_caption_claims_only_what_its_numbers_show() {
    let (mut s, host) = loaded();
    let files = [
        ("stories260K.bin", asset("stories260K.bin")),
        ("tok512.bin", asset("tok512.bin")),
    ];
    let info = match &drop_files(&mut s, &host, &files)[0] {
        Event::Model(ModelEvent::Loaded { info }) => info.clone(),
        e => panic!("{e:?}"),
    };
    for step in STEPS {
        let o = open(&mut s, &host, &info, step.key);
        eprintln!("{}: {}", step.key, o.text);
        let (_, check) = CHECKS
            .iter()
            .find(|(k, _)| *k == step.key)
            .unwrap_or_else(|| panic!("step {} has no check here", step.key));
        check(&o, &mut s, &host, &info);
    }
    assert_eq!(CHECKS.len(), STEPS.len());
}

/// Each step's claims against its own numbers, by key.
const CHECKS: [(&str, Check); 15] = [
    ("loop", check_loop),
    ("greedy-vs-beam", check_greedy_vs_beam),
    ("beam-bland", check_beam_bland),
    ("tail", check_tail),
    ("temperature", check_temperature),
    ("topk-topp", check_topk_topp),
    ("penalty", check_penalty),
    ("kv-cache", check_kv_cache),
    ("prefill-decode", check_prefill_decode),
    ("kv-memory", check_kv_memory),
    ("speculative", check_speculative),
    ("quantization", check_quantization),
    ("batching", check_batching),
    ("same-theta", check_same_theta),
    ("taxonomy", check_taxonomy),
];

type Check = fn(&Opened, &mut Session, &TestHost, &ModelInfo);

fn check_loop(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    let t = transcript(o);
    // 5 prompt tokens (BOS first) + 5 generated; the newest went through the
    // layers against the 9 cached before it.
    assert_eq!(o.n("context") as usize, t.prompt.len() + 5);
    assert_eq!(o.n("cached"), o.n("context") - 1.0);
    assert_eq!(t.cache_len as f64, o.n("context"));
    assert_eq!(o.n("last_prob"), t.steps[4].prob);
    assert!(!o.says("whole context"), "{}", o.text);
}

fn check_greedy_vs_beam(o: &Opened, s: &mut Session, host: &TestHost, _info: &ModelInfo) {
    let (g, b) = (o.n("greedy_logprob"), o.n("beam_logprob"));
    // Greedy's Σ log p by the transcript's own loop.
    let ev = ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "The dog".into(),
            settings: settings(&[("strategy", "greedy")]),
            steps: 12,
        }),
    );
    let by_hand: f64 = last_transcript(&ev)
        .steps
        .iter()
        .map(|s| s.model_prob.ln())
        .sum();
    assert!((g - by_hand).abs() < 1e-9, "{}", o.text);
    // "The dog" is the prompt where beam wins by far, and the caption says so.
    assert!(b > g + 1.0, "{}", o.text);
    assert!(o.says("Locally greedy ≠ globally optimal"), "{}", o.text);
}

fn check_beam_bland(o: &Opened, s: &mut Session, host: &TestHost, _info: &ModelInfo) {
    let t = transcript(o);
    assert_eq!(o.n("tokens"), 40.0);
    let beam: f64 = t.steps.iter().map(|s| -s.model_prob.ln()).sum::<f64>() / 40.0;
    assert!((o.n("beam_surprisal") - beam).abs() < 1e-9);
    // The samples' surprisal by the transcript's loop with each column's knobs.
    let a = -model_logprob(s, host, &[("temperature", "1")], 40) / 40.0;
    let z = -model_logprob(s, host, &[("temperature", "1"), ("seed", "1")], 40) / 40.0;
    assert!((o.n("sample_surprisal_a") - a).abs() < 1e-9, "{}", o.text);
    assert!((o.n("sample_surprisal_b") - z).abs() < 1e-9, "{}", o.text);
    // The claim of blandness, and the numbers that carry it.
    assert!(o.says("bland for open ones"), "{}", o.text);
    assert!(beam * 2.0 < a.min(z), "{}", o.text);
}

fn check_tail(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    let d = o.trace.as_ref().unwrap();
    let mut p: Vec<f32> = d.probs.clone();
    p.sort_by(|a, b| b.total_cmp(a));
    let tail: f64 = p[10..].iter().map(|&v| v as f64).sum();
    assert!((o.n("tail_mass") - tail).abs() < 1e-6, "{}", o.text);
    assert_eq!(o.n("tail_tokens"), 502.0);
    // The step's prompt is one whose tail is not negligible, and it says so.
    assert!(tail >= 0.1, "{}", o.text);
    assert!(o.says("together not negligible"), "{}", o.text);
    assert_eq!(transcript(o).prompt_text, "She saw a");
}

fn check_temperature(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    // The lesson's 0.659 and ≈ 0.50, and softmax's 0.864 where the lesson
    // writes ≈ 0.84: e⁴ / (e⁴ + e² + e^0.2) by hand.
    let e = |x: f64| x.exp();
    let t05 = e(4.0) / (e(4.0) + e(2.0) + e(0.2));
    for (k, want) in [("t1", 0.659), ("t05", t05), ("t2", 0.502)] {
        assert!((o.n(k) - want).abs() < 5e-4, "{k}: {}", o.text);
    }
    assert!(o.says("error in the lesson"), "{}", o.text);
}

fn check_topk_topp(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    assert_eq!((o.n("k_min"), o.n("k_max")), (40.0, 40.0), "{}", o.text);
    assert!(o.says("exactly 40 tokens at every step"), "{}", o.text);
    assert!(!o.says("between 40 and 40"), "{}", o.text);
    assert!(o.n("p_max") >= 2.0 * o.n("p_min"), "{}", o.text);
    assert!(o.says("narrow when one token dominates"), "{}", o.text);
    assert_eq!(o.n("steps"), 30.0);
}

fn check_penalty(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    assert!(o.n("loop_repeats") >= 3.0, "{}", o.text);
    assert!(o.n("penalized_repeats") < o.n("loop_repeats"), "{}", o.text);
    assert!(o.says("curbed the loop"), "{}", o.text);
}

fn check_kv_cache(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    assert_eq!(o.n("n"), 128.0);
    let ratio = o.n("naive_ms") / o.n("cached_ms");
    assert!((o.n("ratio") - ratio).abs() < 1e-9);
    assert_eq!(o.says("so they are kept"), ratio >= 1.3, "{}", o.text);
}

/// The 15M shape's f32 weights, counted from its shape: the embedding (shared with the
/// classifier), per layer two norms, Wq Wk Wv Wo (as many K/V heads as query heads) and
/// the MLP's three matrices, then the final norm; 4 bytes each.
const SHAPE_15M_F32_BYTES: f64 = 4.0
    * (32000.0 * 288.0 + 6.0 * (2.0 * 288.0 + 4.0 * 288.0 * 288.0 + 3.0 * 288.0 * 768.0) + 288.0);

fn check_prefill_decode(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    let v = sweep(o);
    assert_eq!(v.model, SweepModel::Random15M);
    assert_eq!(v.weight_bytes as f64, SHAPE_15M_F32_BYTES);
    assert_eq!(o.n("weight_bytes"), SHAPE_15M_F32_BYTES);
    let (r, sp) = (&v.rows[0], &v.spread[0]);
    assert_eq!(
        (o.n("prompt_tokens"), o.n("gen_tokens")),
        (64.0, 16.0),
        "{}",
        o.text
    );
    assert_eq!((r.batch, r.prompt_tokens, r.gen_tokens), (1, 64, 16));
    assert!(sp.reps >= 9 && o.n("reps") as usize == sp.reps);
    // A rate is the tokens over the median run's time, inside the runs' range.
    let pre = 64.0 / (r.prefill_ms / 1e3);
    assert!((o.n("prefill_rate") - pre).abs() < 1e-6 * pre);
    assert!(sp.prefill.0 <= pre && pre <= sp.prefill.1);
    assert!(sp.decode.0 <= r.decode_tokens_per_s && r.decode_tokens_per_s <= sp.decode.1);
    // A decode step multiplies each f32 weight once (2 FLOP for 4 bytes) and the attention
    // adds a little of both: about 0.5 FLOP a byte; the prefill's 64 rows share each read.
    let (di, pi) = (o.n("decode_intensity"), o.n("prefill_intensity"));
    assert!((0.45..0.6).contains(&di), "{}", o.text);
    assert!(pi > 20.0 * di, "{}", o.text);
    // The claim is made only when every prefill run beat every decode run and the measured
    // roof puts the two phases on either side of its ridge.
    if o.says("compute-bound") {
        assert!(sp.prefill.0 > sp.decode.1, "{}", o.text);
        assert!(o.n("ratio") >= 1.3, "{}", o.text);
        assert!(di < o.n("ridge") && o.n("ridge") <= pi, "{}", o.text);
        assert!(3.0 * o.n("ratio") >= o.n("predicted"), "{}", o.text);
    } else {
        assert!(o.says("no regime is claimed"), "{}", o.text);
    }
}

fn check_kv_memory(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    let t = transcript(o);
    // stories260K: 5 layers, 4 K/V heads of 64 / 8 = 8 → d = 32, f32.
    let cache = (t.prompt.len() + 20) as f64;
    assert_eq!(o.n("n"), cache);
    assert_eq!(o.n("bytes"), 2.0 * cache * 5.0 * 32.0 * 4.0);
    // Llama-2-7B at 4,096 positions in fp16, the calculator's default element:
    // 2 × 4,096 × 32 × 4,096 × 2 = 2 GiB.
    assert_eq!(o.n("elem_bytes"), 2.0);
    assert_eq!(o.n("l2_bytes"), 2.0 * 4096.0 * 32.0 * 4096.0 * 2.0);
    assert!(
        o.says("in fp16 (the calculator below): 2 GiB"),
        "{}",
        o.text
    );
}

fn check_speculative(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    let (a, g) = (o.n("alpha"), o.n("gamma"));
    assert_eq!(g, 4.0);
    assert!((o.n("formula") - (1.0 - a.powf(g + 1.0)) / (1.0 - a)).abs() < 1e-9);
}

fn check_quantization(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    assert!(o.n("q8_bytes") * 3.0 < o.n("f32_bytes"));
    assert!(o.n("q4_bytes") < o.n("q8_bytes"));
    assert!(o.n("kl_q8") < o.n("kl_q4"), "{}", o.text);
    // The 15M shape: its f32 bytes from its shape; q8 stores a byte a weight and a scale a
    // group (the norms stay f32), so it is just under 4× smaller: between 3.5× and 4×.
    assert_eq!(o.n("shape_f32_bytes"), SHAPE_15M_F32_BYTES);
    let ratio = o.n("bytes_ratio");
    assert!((3.5..4.0).contains(&ratio), "{ratio}");
    let (f32, q8) = (o.n("shape_f32_ms"), o.n("shape_q8_ms"));
    assert!((o.n("speed_ratio") - f32 / q8).abs() < 1e-9 * f32 / q8);
    if o.says("shorter wait") {
        assert!(
            q8 * 1.3 <= f32 && o.n("shape_q4_ms") * 1.3 <= f32,
            "{}",
            o.text
        );
    } else {
        assert!(o.says("no saving is claimed"), "{}", o.text);
    }
    if o.says("widened") {
        assert!(f32 * 1.3 <= o.n("shape_f16_ms"), "{}", o.text);
    }
}

fn check_batching(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    let v = sweep(o);
    assert_eq!(
        v.rows.iter().map(|r| r.batch).collect::<Vec<_>>(),
        [1, 4, 16]
    );
    let (one, most) = (&v.spread[0], &v.spread[2]);
    let gain = v.rows[2].decode_tokens_per_s / v.rows[0].decode_tokens_per_s;
    assert!((o.n("gain") - gain).abs() < 1e-9);
    assert!((o.n("b1_rate") - v.rows[0].decode_tokens_per_s).abs() < 1e-6);
    if o.says("batching amortizes") {
        assert!(most.decode.0 > one.decode.1 && gain >= 1.3, "{}", o.text);
    } else {
        assert!(o.says("Little gain here"), "{}", o.text);
    }
}

fn check_same_theta(o: &Opened, _s: &mut Session, _host: &TestHost, info: &ModelInfo) {
    assert_eq!(o.n("params") as u64, info.params);
    assert!(
        o.n("surprise_a") * 2.0 + 0.1 < o.n("surprise_b"),
        "{}",
        o.text
    );
    assert!(o.says("(wild)"), "{}", o.text);
}

fn check_taxonomy(o: &Opened, _s: &mut Session, _host: &TestHost, _info: &ModelInfo) {
    use decoding_engine::decode::sampling::knobs::KNOBS;
    let items = decoding_page::taxonomy::ITEMS.len();
    assert_eq!(
        (o.n("learned") + o.n("config") + o.n("state")) as usize,
        KNOBS.len() + items
    );
}

/// A link that names a step and nothing of its view opens the step's view (`?lesson=2` on
/// a slide); one that holds a view keeps it.
#[test]
fn a_lesson_link_alone_opens_the_steps_view() {
    let (i, step) = by_key("greedy-vs-beam").unwrap();
    let alone =
        decoding_page::lesson::from_link(&format!("lesson={}&presenter=1&theme=dark", i + 1), 512);
    let full = decoding_page::page::from_query(&format!("{}&lesson={}", step.query, i + 1), 512);
    assert_eq!(alone, {
        let mut f = full.clone();
        f.page.presenter = true;
        f.page.theme = Some(decoding_page::theme::Scheme::Dark);
        f
    });
    assert_eq!(alone.page.prompt, "The dog");
    assert!(alone
        .page
        .panels
        .contains(&decoding_page::page::Panel::Beam));
    let kept = decoding_page::lesson::from_link(&format!("prompt=Hi&lesson={}", i + 1), 512);
    assert_eq!(kept.page.prompt, "Hi");
    assert_eq!(kept.page.lesson, Some(i));
    // A step the track does not have is reported and dropped, with the track's length.
    let past = decoding_page::lesson::from_link(&format!("lesson={}", STEPS.len() + 1), 512);
    assert_eq!(past.page.lesson, None);
    assert_eq!(
        past.problems[0].to_string(),
        format!(
            "lesson: \"{}\" is not a step of the lesson track (1..={})",
            STEPS.len() + 1,
            STEPS.len()
        )
    );
}
