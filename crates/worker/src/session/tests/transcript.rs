//! The transcript: a prompt, steps, rewind, reset, a link restored, settings on the stored
//! logits, loops, timings, the warm-up.

use super::*;

#[test]
fn prompt_gives_the_known_first_distribution() {
    let (mut s, host) = loaded();
    let ev = set_prompt(&mut s, &host, "Once upon a time");
    let t = trace_after(&ev, &Settings::default());
    assert_eq!(t.order[0], 432);
    assert!((t.probs[432] - 0.9688).abs() < 1e-4);
    assert_eq!(
        t.stages.len(),
        decoding_engine::decode::sampling::Stage::all().count()
    );
    let tr = last!(&ev, Transcript);
    assert_eq!(tr.prompt.len(), 5);
    assert_eq!(tr.cache.used, 5 * 1280);
    assert_eq!(tr.cache.allocated, 655_360);
}

#[test]
fn steps_rewind_reset_and_restore() {
    let (mut s, host) = prompted(&[("temperature", "0")]);
    let ev = step(&mut s, &host, 30);
    let text: String = last!(&ev, Transcript)
        .steps
        .iter()
        .map(|st| st.piece.clone())
        .collect();
    assert!(
        text.starts_with(", there was a little girl named Lily."),
        "{text}"
    );
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Rewind),
    );
    assert_eq!(last!(&ev, Transcript).steps.len(), 29);
    let ev = ask(&mut s, &host, Request::Transcript(TranscriptRequest::Reset));
    assert!(last!(&ev, Transcript).steps.is_empty());
    // A link: same prompt, settings and 10 steps give the same tokens.
    let sampled = settings(&[("seed", "4"), ("top_p", "0.9")]);
    let a = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "Once".into(),
            settings: sampled.clone(),
            steps: 10,
        }),
    );
    let b = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "Once".into(),
            settings: sampled,
            steps: 10,
        }),
    );
    assert_eq!(last!(&a, Transcript).steps, last!(&b, Transcript).steps);
    assert_eq!(last!(&a, Transcript).steps.len(), 10);
}

#[test]
fn settings_rerun_the_chain_and_grey_removed_tokens() {
    let (mut s, host) = loaded();
    set_prompt(&mut s, &host, "Once upon a time");
    // The worker has nothing to say: the page runs the chain on the logits it holds.
    assert_eq!(set_settings(&mut s, &host, &[("top_k", "3")]), []);
    let t = page_trace(&s);
    assert_eq!(t.kept, 3);
    assert_eq!(t.probs.iter().filter(|&&p| p > 0.0).count(), 3);
    let top_k = t
        .stages
        .iter()
        .position(|st| {
            st.stage == decoding_engine::decode::sampling::Stage::parse("top_k").unwrap()
        })
        .unwrap();
    assert_eq!(t.removed_by(t.order[3] as usize), Some(top_k));
    // The kept ones: no stage; and no token past the vocabulary.
    assert_eq!(t.removed_by(t.order[0] as usize), None);
    assert_eq!(t.removed_by(t.probs.len()), None);
    assert!(t.ghost[t.order[3] as usize] > 0.0);
}

#[test]
fn greedy_loops_are_flagged() {
    let (mut s, host) = loaded();
    // Forbidding the end tokens lets greedy run long enough to loop.
    let greedy = settings(&[
        ("temperature", "0"),
        ("logit_bias", "1:-100,2:-100"),
        ("max_tokens", "600"),
    ]);
    ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::SetSettings { settings: greedy }),
    );
    set_prompt(&mut s, &host, "Once upon a time");
    let ev = step(&mut s, &host, 600);
    let t = last!(&ev, Transcript);
    let w = t.loop_warning.as_ref();
    assert!(
        w.is_some_and(|w| w.repeats >= 3
            && w.period * w.repeats <= w.window
            && !w.phrase.is_empty()
            && t.generated_text.contains(&w.phrase.repeat(2))),
        "{w:?} {:?} {:?} {}",
        t.stop,
        t.generated_text,
        t.steps.len()
    );
}

#[test]
fn the_loop_flag_stays_while_the_loop_is_on_screen() {
    // `?prompt=The+dog&temperature=0` once flagged a loop at step 49 and dropped the flag at
    // step 50 with the same four repeats on screen.
    let (mut s, host) = loaded();
    set_settings(&mut s, &host, &[("temperature", "0")]);
    set_prompt(&mut s, &host, "The dog");
    let mut flagged = Vec::new();
    for _ in 0..60 {
        let ev = step(&mut s, &host, 1);
        flagged.push(last!(&ev, Transcript).loop_warning.is_some());
    }
    let first = flagged
        .iter()
        .position(|&f| f)
        .expect("greedy loops on \"The dog\"");
    assert!(first < 49, "first flagged at step {}", first + 1);
    assert!(flagged[first..].iter().all(|&f| f), "{flagged:?}");
}

#[test]
fn settings_naming_tokens_outside_the_model_are_refused() {
    let (mut s, host) = loaded();
    set_prompt(&mut s, &host, "Once");
    // Valid in general (a message cannot know the model), but stories260K has 512 tokens.
    let far = RawSettings::from_pairs([("logit_bias", "600:1")])
        .validate(100_000)
        .unwrap();
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::SetSettings { settings: far }),
    );
    assert!(
        matches!(&ev[..], [Event::Model(ModelEvent::Error { message })] if message.contains("outside the vocabulary")),
        "{ev:?}"
    );
    // The settings in force are unchanged; others are taken.
    assert_eq!(s.core.settings, Settings::default());
    assert_eq!(set_settings(&mut s, &host, &[("temperature", "0.5")]), []);
    assert_eq!(
        s.core
            .settings
            .num(decoding_engine::decode::sampling::Knob::Temperature),
        0.5
    );
}

/// Top-p's cut as the page draws it. The running sum of what top-p saw crosses p
/// exactly where the stage stopped keeping tokens, and the tail it removed is the rest of
/// the mass; each step records how many tokens it was drawn from.
#[test]
fn the_top_p_cut_and_the_kept_set_per_step_agree_with_the_stage() {
    let (mut s, host) = loaded();
    set_prompt(&mut s, &host, "Once upon a time");
    // The first distribution has "," at 0.97: a p above it keeps more than one token.
    set_settings(&mut s, &host, &[("top_p", "0.99")]);
    let t = page_trace(&s);
    let cut = t.cut.as_ref().expect("an active top-p stage is cut");
    assert_eq!(cut.p, 0.99);
    let stage = &t.stages[cut.stage];
    assert_eq!(
        stage.stage,
        decoding_engine::decode::sampling::Stage::parse("top_p").unwrap()
    );
    // The smallest most-likely set whose mass reaches p.
    let n = 1 + cut
        .cumulative
        .iter()
        .position(|&c| c as f64 >= 0.99)
        .unwrap();
    assert_eq!(stage.kept, n);
    assert!(n > 1 && n < 512, "{n}");
    assert!((stage.mass_removed - (1.0 - cut.cumulative[n - 1] as f64)).abs() < 1e-5);
    // The kept rows are exactly the first n of that order.
    let mut kept: Vec<u32> = (0..512u32).filter(|&i| t.probs[i as usize] > 0.0).collect();
    let mut first: Vec<u32> = cut.ids[..n].to_vec();
    kept.sort();
    first.sort();
    assert_eq!(kept, first);
    // No top-p, no cut.
    set_settings(&mut s, &host, &[("top_k", "5")]);
    assert!(page_trace(&s).cut.is_none());
    // Each step says how many tokens it was drawn from: top-k holds it at k.
    let ev = step(&mut s, &host, 6);
    assert!(last!(&ev, Transcript).steps.iter().all(|s| s.kept == 5));
    ask(&mut s, &host, Request::Transcript(TranscriptRequest::Reset));
    set_settings(&mut s, &host, &[("top_p", "0.9")]);
    let ev = step(&mut s, &host, 20);
    let sizes: Vec<usize> = last!(&ev, Transcript)
        .steps
        .iter()
        .map(|s| s.kept)
        .collect();
    assert!(
        sizes.iter().min() < sizes.iter().max(),
        "top-p adapts: {sizes:?}"
    );
}

/// A step's time is its forward pass and its chain, timed apart, and the forward
/// pass of the newest token (what the next distribution needs) is part of the request that
/// chose it (it was run untimed by the preview before).
#[test]
fn each_step_times_its_forward_pass_and_its_chain() {
    let (mut s, host) = loaded();
    set_prompt(&mut s, &host, "Once upon a time");
    let ev = step(&mut s, &host, 3);
    let tm = &last!(&ev, Transcript).timings;
    // The first token is drawn from the prefill's logits; each chosen token is run once.
    assert_eq!((tm.forward_ms.len(), tm.chain_ms.len()), (3, 3));
    let ev = step(&mut s, &host, 1);
    let tm = &last!(&ev, Transcript).timings;
    assert_eq!((tm.forward_ms.len(), tm.chain_ms.len()), (4, 4));
    // The next distribution needs no forward pass now: a slider move runs none.
    assert!(s.core.gen.as_ref().unwrap().current_logits().is_some());
}

/// The warm-up after a load runs on a scratch sequence it frees: the transcript that follows
/// is the one a session without it gives (same tokens, same distribution, the first
/// sequence slot), and the warm-up itself fills a context's worth when its time allows.
#[test]
fn the_warm_up_leaves_nothing_behind() {
    let run = |warm: f64| {
        let (mut s, host) = loaded();
        s.set_warm_up(warm);
        let ev = ask(
            &mut s,
            &host,
            Request::Transcript(TranscriptRequest::Restore {
                prompt: "Once upon a time".into(),
                settings: settings(&[("seed", "7"), ("top_p", "0.9")]),
                steps: 12,
            }),
        );
        let seq = s.core.gen.as_ref().unwrap().sequence();
        (
            last!(&ev, Transcript).clone(),
            last!(&ev, Next).clone(),
            seq,
            s.core.warm_up_due,
        )
    };
    let (plain, plain_trace, plain_seq, _) = run(0.0);
    let (mut warmed, warmed_trace, warmed_seq, due) = run(60_000.0);
    // Everything but the clock's readings.
    warmed.timings = plain.timings.clone();
    assert_eq!(warmed, plain);
    assert_eq!(warmed_trace, plain_trace);
    assert_eq!(
        (warmed_seq, plain_seq),
        (decoding_engine::SeqId(0), decoding_engine::SeqId(0))
    );
    assert!(!due, "the warm-up runs once a load");
    // On its own: greedy steps until the context is full (512 positions), then freed.
    let (mut s, host) = loaded();
    let engine = s.core.engine.as_mut().unwrap();
    let ran = pollster::block_on(super::generate::warm_up(engine, &host, 60_000.0, 1));
    assert_eq!(ran, 512);
    assert_eq!(
        decoding_engine::Backend::new_sequence(engine).unwrap(),
        decoding_engine::SeqId(0)
    );
    // No time, no steps.
    assert_eq!(
        pollster::block_on(super::generate::warm_up(engine, &host, 0.0, 1)),
        0
    );
}

/// The page runs the chain itself on the logits the worker sent (`Next`); the token its
/// chart marks as the next one is the token the worker's step then takes, under every kind
/// of setting, step after step.
#[test]
fn the_pages_chain_marks_the_token_the_worker_takes() {
    for pairs in [
        &[("seed", "3")][..],
        &[("seed", "5"), ("temperature", "1.4"), ("top_p", "0.9")],
        &[("seed", "9"), ("top_k", "5"), ("repetition_penalty", "1.3")],
        &[
            ("seed", "2"),
            ("presence_penalty", "1"),
            ("frequency_penalty", "0.5"),
        ],
        &[("profile", "llama.cpp"), ("seed", "4")],
        &[("profile", "hf"), ("seed", "6"), ("no_repeat_ngram", "2")],
    ] {
        let (mut s, host) = loaded();
        set_settings(&mut s, &host, pairs);
        // The page's own settings, from the same pairs, not the worker's copy of them.
        let page_settings = settings(pairs);
        let mut ev = set_prompt(&mut s, &host, "Once upon a time");
        for i in 0..12 {
            let marked = trace_after(&ev, &page_settings).token;
            ev = step(&mut s, &host, 1);
            let took = last!(&ev, Transcript).steps[i].token;
            assert_eq!(marked, took, "{pairs:?}, step {i}");
        }
    }
}
