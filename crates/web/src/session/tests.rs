use super::*;
use decoding_engine::sampling::RawSettings;
use decoding_gpu::BackendChoice;
use std::cell::Cell;

pub(super) struct TestHost {
    cancel: Cell<bool>,
    start: std::time::Instant,
}

impl Host for TestHost {
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }
    fn yield_now(&self) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        Box::pin(std::future::ready(()))
    }
    fn cancelled(&self) -> bool {
        self.cancel.get()
    }
    fn clear_cancel(&self) {
        self.cancel.set(false)
    }
}

pub(super) fn asset(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/models/stories260K")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

pub(super) fn loaded() -> (Session, TestHost) {
    let host = TestHost {
        cancel: Cell::new(false),
        start: std::time::Instant::now(),
    };
    let mut s = Session::default();
    let ev = pollster::block_on(s.load(
        "stories260K",
        &asset("stories260K.bin"),
        &asset("tok512.bin"),
        BackendChoice::Cpu,
        &host,
    ));
    assert!(
        matches!(
            ev[..],
            [
                Event::Loaded { .. },
                Event::Precision { .. },
                Event::Backend { .. }
            ]
        ),
        "{ev:?}"
    );
    (s, host)
}

pub(super) fn settings(pairs: &[(&str, &str)]) -> Settings {
    RawSettings::from_pairs(pairs.iter().copied())
        .validate(512)
        .unwrap()
}

pub(super) fn last_transcript(ev: &[Event]) -> &TranscriptView {
    ev.iter()
        .rev()
        .find_map(|e| match e {
            Event::Transcript { view } => Some(view),
            _ => None,
        })
        .expect("a transcript event")
}

fn last_trace(ev: &[Event]) -> &TraceView {
    ev.iter()
        .rev()
        .find_map(|e| match e {
            Event::Trace { view, .. } => Some(view),
            _ => None,
        })
        .expect("a trace event")
}

#[test]
fn prompt_gives_the_known_first_distribution() {
    let (mut s, host) = loaded();
    let ev = pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let t = last_trace(&ev);
    assert_eq!(t.order[0], 432);
    assert!((t.probs[432] - 0.9688).abs() < 1e-4);
    assert_eq!(t.stages.len(), 10);
    let tr = last_transcript(&ev);
    assert_eq!(tr.prompt.len(), 5);
    assert_eq!(tr.cache.used, 5 * 1280);
    assert_eq!(tr.cache.allocated, 655_360);
}

#[test]
fn steps_rewind_reset_and_restore() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_settings(settings(&[("temperature", "0")])));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let ev = pollster::block_on(s.step(30, &host));
    let text: String = last_transcript(&ev)
        .steps
        .iter()
        .map(|st| st.piece.clone())
        .collect();
    assert!(
        text.starts_with(", there was a little girl named Lily."),
        "{text}"
    );
    let ev = pollster::block_on(s.rewind());
    assert_eq!(last_transcript(&ev).steps.len(), 29);
    let ev = pollster::block_on(s.reset());
    assert!(last_transcript(&ev).steps.is_empty());
    // A link: same prompt, settings and 10 steps give the same tokens.
    let sampled = settings(&[("seed", "4"), ("top_p", "0.9")]);
    let a = pollster::block_on(s.restore("Once".into(), sampled.clone(), 10, &host));
    let b = pollster::block_on(s.restore("Once".into(), sampled, 10, &host));
    assert_eq!(last_transcript(&a).steps, last_transcript(&b).steps);
    assert_eq!(last_transcript(&a).steps.len(), 10);
}

#[test]
fn settings_rerun_the_chain_and_grey_removed_tokens() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let ev = pollster::block_on(s.set_settings(settings(&[("top_k", "3")])));
    let t = last_trace(&ev);
    assert_eq!(t.kept, 3);
    assert_eq!(t.probs.iter().filter(|&&p| p > 0.0).count(), 3);
    let top_k = t
        .stages
        .iter()
        .position(|st| st.stage == decoding_engine::sampling::Stage::TopK)
        .unwrap();
    assert_eq!(t.removed_by[t.order[3] as usize], top_k as i8);
    assert!(t.ghost[t.order[3] as usize] > 0.0);
}

#[test]
fn beam_tree_grows_by_2k_nodes_a_step_and_travels_as_its_changes() {
    let (mut s, host) = loaded();
    let beam = settings(&[("strategy", "beam"), ("beams", "3")]);
    pollster::block_on(s.set_settings(beam));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    // The page's copy of the tree, built from the changes alone.
    let mut tree: Vec<decoding_engine::beam::BeamNode> = Vec::new();
    let mut view = None;
    let mut sent = 0;
    for _ in 0..5 {
        let ev = pollster::block_on(s.beam_step());
        let views: Vec<BeamView> = ev
            .into_iter()
            .filter_map(|e| match e {
                Event::Beam { view } => Some(view),
                _ => None,
            })
            .collect();
        // The first step starts the search: its root comes first.
        assert_eq!(views.len(), if tree.is_empty() { 2 } else { 1 });
        for v in views {
            assert_eq!(v.reset, tree.is_empty());
            assert_eq!(v.base, tree.len());
            // After the root, a step sends its 2k new nodes and the k beams it closed, never
            // the whole tree.
            assert!(v.changed.len() <= 2 * 3 + 3, "{}", v.changed.len());
            sent += v.changed.len();
            for n in &v.changed {
                match tree.get_mut(n.id) {
                    Some(old) => *old = n.clone(),
                    None => {
                        assert_eq!(n.id, tree.len());
                        tree.push(n.clone());
                    }
                }
            }
            assert_eq!(tree.len(), v.node_count);
            view = Some(v);
        }
    }
    let v = view.unwrap();
    assert_eq!(v.depth, 5);
    assert_eq!(tree.len(), 1 + 2 * 3 * 5);
    assert_eq!(tree, s.beam.as_ref().unwrap().search.nodes());
    assert!(
        sent < 2 * tree.len(),
        "{sent} nodes sent for a tree of {}",
        tree.len()
    );
    assert_eq!(v.greedy_tokens.len(), 5);
    assert!(v.best_logprob >= v.greedy_logprob - 1e-6);
    // The running greedy total equals greedy's path scored again from scratch.
    let prompt = s.gen.as_ref().unwrap().prompt().to_vec();
    let engine = s.engine.as_mut().unwrap();
    let (_, again) = pollster::block_on(decoding_engine::beam::score_continuation(
        engine,
        &prompt,
        &v.greedy_tokens,
    ))
    .unwrap();
    assert!(
        (again - v.greedy_logprob).abs() < 1e-9,
        "{again} vs {}",
        v.greedy_logprob
    );
}

#[test]
fn cache_comparison_measures_and_counts_quadratic_work_without_the_cache() {
    let (mut s, host) = loaded();
    let ev = pollster::block_on(s.cache_compare(&[16, 64, 512], &host));
    let Event::CacheCompare { rows } = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!(rows.len(), 3);
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

#[test]
fn greedy_loops_are_flagged() {
    let (mut s, host) = loaded();
    // Forbidding the end tokens lets greedy run long enough to loop.
    let greedy = settings(&[
        ("temperature", "0"),
        ("logit_bias", "1:-100,2:-100"),
        ("max_tokens", "600"),
    ]);
    pollster::block_on(s.set_settings(greedy));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let ev = pollster::block_on(s.step(600, &host));
    let t = last_transcript(&ev);
    let w = t.loop_warning.as_deref().unwrap_or_default();
    assert!(
        w.contains("Repetition loop"),
        "{:?} {:?} {}",
        t.stop,
        t.generated_text,
        t.steps.len()
    );
}

#[test]
fn toy_logits_reproduce_the_lesson() {
    let (mut s, _) = loaded();
    s.settings = settings(&[("temperature", "0.5")]);
    let ev = s.toy(&[2.0, 1.0, 0.1], &[]);
    let t = last_trace(&ev);
    assert!((t.probs[0] - 0.8638).abs() < 1e-4);
    assert!(matches!(
        s.toy(&[1.0, f64::NAN], &[])[0],
        Event::Error { .. }
    ));
    assert!(matches!(s.toy(&[1.0], &[3])[0], Event::Error { .. }));
}

#[test]
fn bad_model_is_an_error_event_and_keeps_the_old_one() {
    let (mut s, host) = loaded();
    match &pollster::block_on(s.load(
        "bad",
        &[1, 2, 3],
        &asset("tok512.bin"),
        BackendChoice::Cpu,
        &host,
    ))[0]
    {
        Event::Error { message } => assert!(message.contains("shorter than"), "{message}"),
        e => panic!("{e:?}"),
    }
    let ev = pollster::block_on(s.set_prompt("Once".into(), &host));
    assert!(matches!(ev[0], Event::Transcript { .. }));
}

#[test]
fn a_valid_model_the_gpu_cannot_open_keeps_the_old_model_and_its_transcript() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    pollster::block_on(s.step(3, &host));
    let before = last_transcript(&[s.transcript()]).clone();
    // A valid model (a random 6-token one) that the GPU, asked for by name, cannot open.
    let c = decoding_engine::Config {
        dim: 8,
        hidden_dim: 16,
        n_layers: 1,
        n_heads: 2,
        n_kv_heads: 1,
        vocab_size: 512,
        seq_len: 8,
        shared_classifier: true,
        rope_theta: decoding_engine::Config::LLAMA2C_ROPE_THETA,
        rms_eps: decoding_engine::Config::LLAMA2C_RMS_EPS,
    };
    let ck = decoding_engine::llama2c::Checkpoint::random(c, 5).unwrap();
    let other = decoding_engine::Model::from_bytes(&ck.to_bytes(), &asset("tok512.bin")).unwrap();
    let lost = Err(decoding_gpu::GpuError::Gpu("the device was lost".into()));
    let opened = pollster::block_on(decoding_gpu::select::select(
        BackendChoice::Gpu,
        &other.transformer,
        lost,
        &|| host.now(),
    ));
    let ev = s.install("other", other, opened);
    assert!(
        matches!(&ev[..], [Event::Error { message }] if message.contains("the current model is kept")),
        "{ev:?}"
    );
    // The old model, its backend and its transcript are untouched, and it goes on.
    assert_eq!(s.model().unwrap().config().dim, 64);
    assert_eq!(last_transcript(&[s.transcript()]), &before);
    let ev = pollster::block_on(s.step(1, &host));
    assert_eq!(last_transcript(&ev).steps.len(), before.steps.len() + 1);
    // With Auto, the same failure falls back to the CPU and the new model replaces the old.
    let other = decoding_engine::Model::from_bytes(&ck.to_bytes(), &asset("tok512.bin")).unwrap();
    let lost = Err(decoding_gpu::GpuError::Gpu("the device was lost".into()));
    let opened = pollster::block_on(decoding_gpu::select::select(
        BackendChoice::Auto,
        &other.transformer,
        lost,
        &|| host.now(),
    ));
    let ev = s.install("other", other, opened);
    assert!(
        matches!(
            &ev[..],
            [
                Event::Loaded { .. },
                Event::Precision { .. },
                Event::Backend { .. }
            ]
        ),
        "{ev:?}"
    );
    assert_eq!(s.model().unwrap().config().dim, 8);
}

#[test]
fn a_link_asking_for_a_gpu_that_is_missing_opens_on_the_cpu_with_the_reason() {
    let host = TestHost {
        cancel: Cell::new(false),
        start: std::time::Instant::now(),
    };
    let mut s = Session::default();
    let m = decoding_engine::Model::from_bytes(&asset("stories260K.bin"), &asset("tok512.bin"))
        .unwrap();
    let none = Err(decoding_gpu::GpuError::Gpu("no WebGPU adapter".into()));
    let opened = pollster::block_on(decoding_gpu::select::select(
        BackendChoice::Gpu,
        &m.transformer,
        none,
        &|| host.now(),
    ));
    assert!(opened.is_err(), "asked for by name, the GPU alone fails");
    let ev = s.install("stories260K", m, opened);
    let [Event::Loaded { .. }, Event::Precision { .. }, Event::Backend { report }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(report.kind, decoding_engine::BackendKind::Cpu);
    assert!(
        report.reason.contains("no WebGPU adapter"),
        "{}",
        report.reason
    );
    // The rest of the link still applies: its three tokens are replayed.
    let ev =
        pollster::block_on(s.restore("Once upon a time".into(), Settings::default(), 3, &host));
    assert_eq!(last_transcript(&ev).steps.len(), 3);
}

#[test]
fn the_loop_flag_stays_while_the_loop_is_on_screen() {
    // Issue 10: `?prompt=The+dog&temperature=0` flagged a loop at step 49 and dropped the
    // flag at step 50 with the same four repeats on screen.
    let (mut s, host) = loaded();
    pollster::block_on(s.set_settings(settings(&[("temperature", "0")])));
    pollster::block_on(s.set_prompt("The dog".into(), &host));
    let mut flagged = Vec::new();
    for _ in 0..60 {
        let ev = pollster::block_on(s.step(1, &host));
        flagged.push(last_transcript(&ev).loop_warning.is_some());
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
    pollster::block_on(s.set_prompt("Once".into(), &host));
    // Valid in general (a message cannot know the model), but stories260K has 512 tokens.
    let far = RawSettings::from_pairs([("logit_bias", "600:1")])
        .validate(100_000)
        .unwrap();
    let ev = pollster::block_on(s.set_settings(far));
    assert!(
        matches!(&ev[..], [Event::Error { message }] if message.contains("outside the vocabulary")),
        "{ev:?}"
    );
    // The settings in force are unchanged: the next trace still runs.
    let ev = pollster::block_on(s.set_settings(settings(&[("temperature", "0.5")])));
    last_trace(&ev);
}

/// The requests of a short class demo: a prompt, 12 tokens, then a beam search of 4 steps.
fn demo(s: &mut Session, host: &TestHost) -> (Vec<Event>, Vec<Event>) {
    let greedy = settings(&[("temperature", "0"), ("max_tokens", "40")]);
    pollster::block_on(s.handle(Request::SetSettings { settings: greedy }, host));
    pollster::block_on(s.handle(
        Request::SetPrompt {
            prompt: "Once upon a time".into(),
        },
        host,
    ));
    let steps = pollster::block_on(s.handle(Request::Step { count: 12 }, host));
    let beam = settings(&[("strategy", "beam"), ("beams", "3")]);
    pollster::block_on(s.handle(Request::SetSettings { settings: beam }, host));
    let mut beams = pollster::block_on(s.handle(Request::BeamStart, host));
    for _ in 0..4 {
        beams.extend(pollster::block_on(s.handle(Request::BeamStep, host)));
    }
    (steps, beams)
}

fn last_beam(ev: &[Event]) -> &BeamView {
    ev.iter()
        .rev()
        .find_map(|e| match e {
            Event::Beam { view } => Some(view),
            _ => None,
        })
        .expect("a beam event")
}

#[test]
fn a_device_lost_mid_run_and_mid_beam_moves_everything_to_the_cpu() {
    use decoding_engine::engine::BackendReport;
    use decoding_engine::testing::LosesDevice;
    use decoding_engine::{BackendKind, CpuBackend};
    let (mut cpu, host) = loaded();
    let (want_steps, want_beams) = demo(&mut cpu, &host);
    for healthy in [5, 16] {
        // 5: lost during the 12 steps; 16: lost during the beam steps.
        let (mut s, host) = loaded();
        let m = s.model().unwrap().transformer.clone();
        let flaky = LosesDevice::after(CpuBackend::new(m.clone()), healthy);
        let report = BackendReport {
            kind: BackendKind::Gpu,
            reason: "test".into(),
            dispatches_per_token: None,
            measured_ms: None,
        };
        s.engine = Some(Engine::new(m, Box::new(flaky), report));
        let (steps, beams) = demo(&mut s, &host);
        let moved = steps.iter().chain(&beams).find_map(|e| match e {
            Event::Backend { report } => Some(report),
            _ => None,
        });
        let moved = moved.expect("the switch is announced");
        assert_eq!(moved.kind, BackendKind::Cpu);
        assert!(
            moved.reason.contains("GPU device was lost"),
            "{}",
            moved.reason
        );
        assert!(!steps
            .iter()
            .chain(&beams)
            .any(|e| matches!(e, Event::Error { .. })));
        // Same transcript and same beam tree as a CPU-only session.
        assert_eq!(
            last_transcript(&steps).generated_text,
            last_transcript(&want_steps).generated_text
        );
        let (got, want) = (last_beam(&beams), last_beam(&want_beams));
        assert_eq!((got.depth, got.node_count), (want.depth, want.node_count));
        assert_eq!(got.best_text, want.best_text, "device lost after {healthy}");
    }
}

/// Issue 10: beam search is first-class. A link's steps are the tree's levels, the
/// transcript mirrors the best beam, rewind takes the tree one level back, and new beam
/// parameters keep the depth.
#[test]
fn a_beam_link_restores_its_tree_and_the_transcript_mirrors_the_best_beam() {
    let (mut s, host) = loaded();
    let beam = settings(&[("strategy", "beam")]);
    let ev = pollster::block_on(s.restore("The dog".into(), beam.clone(), 10, &host));
    let v = last_beam(&ev).clone();
    assert!(v.reset, "a restored tree is sent whole");
    assert_eq!(v.depth, 10);
    assert_eq!(v.changed.len(), v.node_count);
    // The figures the issue measured on this prompt.
    assert!((v.best_logprob - -4.35).abs() < 0.005, "{}", v.best_logprob);
    assert!(
        (v.greedy_logprob - -10.10).abs() < 0.005,
        "{}",
        v.greedy_logprob
    );
    // The transcript is the best beam: its tokens, and their model log-probabilities add
    // up to the beam's.
    let best = v.best_node.expect("a best node");
    let path = s.beam.as_ref().unwrap().search.path(best);
    let t = last_transcript(&ev);
    let ids: Vec<u32> = t.steps.iter().map(|s| s.token).collect();
    assert_eq!(ids, path);
    let sum: f64 = t.steps.iter().map(|s| s.model_prob.ln()).sum();
    assert!((sum - v.best_logprob).abs() < 1e-6, "{sum}");

    // The same tree as stepping ten times from the start.
    let (mut fresh, host2) = loaded();
    pollster::block_on(fresh.set_settings(beam));
    pollster::block_on(fresh.set_prompt("The dog".into(), &host2));
    for _ in 0..10 {
        pollster::block_on(fresh.beam_step());
    }
    let nodes = |s: &Session| s.beam.as_ref().unwrap().search.nodes().to_vec();
    assert_eq!(nodes(&s), nodes(&fresh));

    // Rewind: the tree of nine steps, and the transcript its best beam.
    let ev = pollster::block_on(s.handle(Request::Rewind, &host));
    let v9 = last_beam(&ev);
    assert_eq!((v9.depth, v9.reset), (9, true));
    let (mut nine, host3) = loaded();
    pollster::block_on(nine.restore(
        "The dog".into(),
        settings(&[("strategy", "beam")]),
        9,
        &host3,
    ));
    assert_eq!(nodes(&s), nodes(&nine));
    let path9 = s.beam.as_ref().unwrap().search.path(v9.best_node.unwrap());
    let ids: Vec<u32> = last_transcript(&ev).steps.iter().map(|s| s.token).collect();
    assert_eq!(ids, path9);

    // A wider beam: the search again, at the same depth.
    let wider = settings(&[("strategy", "beam"), ("beams", "5")]);
    let ev = pollster::block_on(s.handle(Request::SetSettings { settings: wider }, &host));
    let v = last_beam(&ev);
    assert_eq!((v.depth, v.width, v.reset), (9, 5, true));
    // Each step expands 2k candidates (Hugging Face's rule).
    assert_eq!(v.node_count, 1 + 2 * 5 * 9);
}

/// Issue 10: top-p's cut as the page draws it. The running sum of what top-p saw crosses p
/// exactly where the stage stopped keeping tokens, and the tail it removed is the rest of
/// the mass; each step records how many tokens it was drawn from.
#[test]
fn the_top_p_cut_and_the_kept_set_per_step_agree_with_the_stage() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    // The first distribution has "," at 0.97: a p above it keeps more than one token.
    let ev = pollster::block_on(s.set_settings(settings(&[("top_p", "0.99")])));
    let t = last_trace(&ev);
    let cut = t.cut.as_ref().expect("an active top-p stage is cut");
    assert_eq!(cut.p, 0.99);
    let stage = &t.stages[cut.stage];
    assert_eq!(stage.stage, decoding_engine::sampling::Stage::TopP);
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
    let ev = pollster::block_on(s.set_settings(settings(&[("top_k", "5")])));
    assert!(last_trace(&ev).cut.is_none());
    // Each step says how many tokens it was drawn from: top-k holds it at k.
    let ev = pollster::block_on(s.step(6, &host));
    assert!(last_transcript(&ev).steps.iter().all(|s| s.kept == 5));
    pollster::block_on(s.reset());
    pollster::block_on(s.set_settings(settings(&[("top_p", "0.9")])));
    let ev = pollster::block_on(s.step(20, &host));
    let sizes: Vec<usize> = last_transcript(&ev).steps.iter().map(|s| s.kept).collect();
    assert!(
        sizes.iter().min() < sizes.iter().max(),
        "top-p adapts: {sizes:?}"
    );
}

/// Issue 11: a step's time is its forward pass and its chain, timed apart, and the forward
/// pass of the newest token (what the next distribution needs) is part of the request that
/// chose it (it was run untimed by the preview before).
#[test]
fn each_step_times_its_forward_pass_and_its_chain() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let ev = pollster::block_on(s.step(3, &host));
    let tm = &last_transcript(&ev).timings;
    // The first token is drawn from the prefill's logits; each chosen token is run once.
    assert_eq!((tm.forward_ms.len(), tm.chain_ms.len()), (3, 3));
    let ev = pollster::block_on(s.step(1, &host));
    let tm = &last_transcript(&ev).timings;
    assert_eq!((tm.forward_ms.len(), tm.chain_ms.len()), (4, 4));
    // The next distribution needs no forward pass now: a slider move runs none.
    assert!(s.gen.as_ref().unwrap().current_logits().is_some());
}

/// The next-token probabilities after `tokens` under `t` (softmax of the logits, f64).
fn model_probs(t: &decoding_engine::Transformer, tokens: &[u32]) -> Vec<f64> {
    let mut cache = decoding_engine::KvCache::new(&t.config);
    let logits = t.prefill(&mut cache, tokens, false).unwrap();
    let z: Vec<f64> = logits.iter().map(|&v| v as f64).collect();
    decoding_engine::sampling::stages::softmax(&z)
}

/// Switching to q8 keeps the transcript's tokens and gives the q8 model's distribution
/// (computed here apart, from the engine's own quantization); back to f32 gives f32's again.
#[test]
fn switching_precision_keeps_the_transcript_and_runs_the_new_weights() {
    use decoding_engine::Precision;
    let (mut s, host) = loaded();
    // Default settings: the final distribution is the softmax of the logits.
    pollster::block_on(s.set_settings(settings(&[("seed", "7")])));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let ev = pollster::block_on(s.step(12, &host));
    let before = last_transcript(&ev).clone();
    let f32_probs = last_trace(&ev).probs.clone();
    let original = s.model().unwrap().transformer.clone();
    let context: Vec<u32> = before
        .prompt
        .iter()
        .map(|t| t.id)
        .chain(before.steps.iter().map(|st| st.token))
        .collect();
    for (p, bytes) in [
        (Precision::Q8, 278_352u64),
        (Precision::Q4, 164_896),
        (Precision::F32, 1_040_128),
    ] {
        let ev = pollster::block_on(s.handle(Request::SetPrecision { precision: p }, &host));
        assert!(
            ev.iter()
                .any(|e| matches!(e, Event::Precision { precision, weight_bytes }
                if *precision == p && *weight_bytes == bytes)),
            "{p}: {ev:?}"
        );
        let after = last_transcript(&ev);
        assert_eq!(after.steps, before.steps, "{p}: the transcript is kept");
        let want = model_probs(&original.at(p), &context);
        let got = &last_trace(&ev).probs;
        let worst = got
            .iter()
            .zip(&want)
            .map(|(&a, b)| (a as f64 - b).abs())
            .fold(0.0, f64::max);
        // The trace's probabilities are f32.
        assert!(worst < 1e-6, "{p}: {worst}");
    }
    assert_eq!(
        last_trace(&pollster::block_on(s.step(0, &host))).probs,
        f32_probs,
        "back at f32, f32's distribution exactly"
    );
}

/// The quantization panel: three precisions with their bytes, KL from f32 (0 for f32, the
/// KL of the two distributions computed here for q8), the same top token, the tokens' three
/// probabilities, stories260K's straddling w2 row; and a new view after each step.
#[test]
fn the_quantization_panel_compares_three_precisions_and_follows_the_transcript() {
    use decoding_engine::Precision;
    let (mut s, host) = loaded();
    pollster::block_on(s.set_settings(settings(&[("temperature", "0")])));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let ev = pollster::block_on(s.handle(Request::Quantization { open: true }, &host));
    let [Event::Quant { view }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(view.position, 5);
    let bytes: Vec<u64> = view.precisions.iter().map(|p| p.weight_bytes).collect();
    assert_eq!(bytes, [1_040_128, 278_352, 164_896]);
    assert_eq!(view.precisions[0].kl, 0.0);
    let original = s.model().unwrap().transformer.clone();
    let context = [1, 403, 407, 261, 378];
    let (pf, pq) = (
        model_probs(&original, &context),
        model_probs(&original.at(Precision::Q8), &context),
    );
    let kl: f64 = pf.iter().zip(&pq).map(|(a, b)| a * (a / b).ln()).sum();
    assert!(
        (view.precisions[1].kl - kl).abs() < 1e-9,
        "{} vs {kl}",
        view.precisions[1].kl
    );
    assert!(view.precisions[2].kl > view.precisions[1].kl);
    assert!(view.precisions.iter().all(|p| p.decode_ms > 0.0));
    assert_eq!(view.precisions[1].top, 432);
    assert!(view.precisions[1].same_top);
    let t = &view.tokens[0];
    assert_eq!(t.id, 432);
    assert!((t.p[0] - pf[432]).abs() < 1e-12 && (t.p[1] - pq[432]).abs() < 1e-12);
    // w2 row 1 spans weights 172..344: q8 groups 2–5, q4 groups 5–10.
    assert!(view.row.straddles);
    assert_eq!(view.row.groups, [4, 6]);
    assert!(view.row.max_error[0] > 0.0 && view.row.max_error[1] > view.row.max_error[0]);
    // A step: the transcript and then the panel's view at the new position.
    let ev = pollster::block_on(s.handle(Request::Step { count: 1 }, &host));
    match ev.last() {
        Some(Event::Quant { view }) => assert_eq!(view.position, 6),
        e => panic!("{e:?}"),
    }
    // Closed: no more views.
    pollster::block_on(s.handle(Request::Quantization { open: false }, &host));
    let ev = pollster::block_on(s.handle(Request::Step { count: 1 }, &host));
    assert!(!ev.iter().any(|e| matches!(e, Event::Quant { .. })));
}

/// The speculative panel: a greedy run gives the transcript's greedy tokens, each marked as
/// accepted, target or bonus; the last cycle carries p and q at its positions with Σ min(p, q);
/// the totals add up; a sampled run under `rejection` is reproducible from its seed.
#[test]
fn speculative_runs_give_the_greedy_text_and_their_cycles() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_settings(settings(&[("temperature", "0"), ("max_tokens", "30")])));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let plain = last_transcript(&pollster::block_on(s.step(30, &host))).clone();
    let start = Request::SpecStart {
        draft: "quant:q4".into(),
        gamma: 4,
        rule: "rejection".into(),
    };
    pollster::block_on(s.handle(start, &host));
    // Two cycles: the last one's drafted positions with p, q and Σ min(p, q).
    let ev = pollster::block_on(s.handle(Request::SpecCycle { count: 2 }, &host));
    let [Event::Spec { view }] = &ev[..] else {
        panic!("{ev:?}")
    };
    let last = view.last.as_ref().unwrap();
    assert_eq!(last.index, 1);
    assert!(!last.positions.is_empty());
    for p in &last.positions {
        let overlap: f64 = p.bars.iter().map(|b| b.p.min(b.q.unwrap())).sum();
        assert!(overlap <= p.overlap + 1e-12 && p.overlap <= 1.0 + 1e-12);
        assert!(p.bars.iter().any(|b| b.id == p.token));
    }
    let ev = pollster::block_on(s.handle(Request::SpecCycle { count: 50 }, &host));
    let [Event::Spec { view }] = &ev[..] else {
        panic!("{ev:?}")
    };
    let ids: Vec<u32> = view.tokens.iter().map(|t| t.id).collect();
    let want: Vec<u32> = plain.steps.iter().map(|st| st.token).collect();
    assert_eq!(ids, want);
    assert!(
        view.cycles < 30 && view.target_calls == view.cycles + 1,
        "{view:?}"
    );
    assert_eq!(view.accepted + view.cycles, 30);
    assert!(
        view.tokens
            .iter()
            .all(|t| t.kind != SpecTokenKind::Resampled),
        "greedy"
    );
    assert!(view.plain_ms_per_token > 0.0 && view.spec_ms_per_token > 0.0);
    // Sampling, rejection: the same seed gives the same run, another seed another.
    pollster::block_on(s.set_settings(settings(&[("seed", "9"), ("max_tokens", "30")])));
    let run = |s: &mut Session, draft: &str| {
        let start = Request::SpecStart {
            draft: draft.into(),
            gamma: 3,
            rule: "rejection".into(),
        };
        pollster::block_on(s.handle(start, &host));
        match &pollster::block_on(s.handle(Request::SpecCycle { count: 50 }, &host))[..] {
            [Event::Spec { view }] => view.tokens.clone(),
            e => panic!("{e:?}"),
        }
    };
    let a = run(&mut s, "exit:2");
    assert_eq!(a, run(&mut s, "exit:2"));
    assert!(
        a.iter().any(|t| t.kind == SpecTokenKind::Resampled),
        "{a:?}"
    );
    let e = pollster::block_on(s.handle(
        Request::SpecStart {
            draft: "exit:9".into(),
            gamma: 3,
            rule: "rejection".into(),
        },
        &host,
    ));
    assert!(
        matches!(&e[..], [Event::Error { message }] if message.contains("from 1 to 4")),
        "{e:?}"
    );
}

/// The batching panel: four lanes stepping together, lane 0 (the page's seed) the
/// transcript's own sampled text and the others their seeds' texts; "Step all lanes"
/// extends the same run by one pass; nonsense sizes are refused; the sweep has a row per
/// batch size with positive rates and the machine's peaks; the serving simulation runs both
/// policies on one trace with the same tokens, continuous in fewer passes.
#[test]
fn the_batching_panel_runs_lanes_a_sweep_and_both_policies() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_settings(settings(&[("seed", "5"), ("max_tokens", "1000")])));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let plain = last_transcript(&pollster::block_on(s.step(12, &host))).clone();
    let want: Vec<u32> = plain.steps.iter().map(|st| st.token).collect();
    let lanes = |ev: &[Event]| match ev {
        [Event::Lanes { view }] => view.clone(),
        _ => panic!("{ev:?}"),
    };
    let ev = pollster::block_on(s.handle(
        Request::BatchLanes {
            batch: 4,
            tokens: 12,
        },
        &host,
    ));
    let v = lanes(&ev);
    assert_eq!(v.batch, 4);
    assert_eq!(v.lanes.len(), 4);
    let ids = |l: &LaneView| l.tokens.iter().map(|t| t.id).collect::<Vec<u32>>();
    assert_eq!(ids(&v.lanes[0]), want, "lane 0 is the transcript's text");
    assert_eq!(
        v.lanes.iter().map(|l| l.seed).collect::<Vec<_>>(),
        [5, 6, 7, 8]
    );
    assert_ne!(ids(&v.lanes[1]), want);
    assert_eq!(
        v.passes, 12,
        "after the prefill, each token's pass (its K/V and the next logits)"
    );
    // One more token each: the same run, one more pass.
    let v2 = lanes(&pollster::block_on(s.handle(
        Request::BatchLanes {
            batch: 4,
            tokens: 13,
        },
        &host,
    )));
    assert_eq!(v2.passes, 13);
    assert_eq!(ids(&v2.lanes[2])[..12], ids(&v.lanes[2])[..]);
    for bad in [
        Request::BatchLanes {
            batch: 0,
            tokens: 4,
        },
        Request::BatchLanes {
            batch: 17,
            tokens: 4,
        },
        Request::BatchLanes {
            batch: 2,
            tokens: 100_000,
        },
        Request::BatchSweep {
            batches: vec![64],
            prompt_tokens: 8,
            gen_tokens: 4,
        },
        Request::BatchSweep {
            batches: vec![1],
            prompt_tokens: 500,
            gen_tokens: 100,
        },
        Request::ServeSim {
            slots: 0,
            requests: 4,
            seed: 1,
        },
        Request::ServeSim {
            slots: 4,
            requests: 1000,
            seed: 1,
        },
    ] {
        let ev = pollster::block_on(s.handle(bad.clone(), &host));
        assert!(
            matches!(ev[..], [Event::Error { .. }]),
            "{bad:?} gave {ev:?}"
        );
    }
    let ev = pollster::block_on(s.handle(
        Request::BatchSweep {
            batches: vec![1, 2, 4],
            prompt_tokens: 8,
            gen_tokens: 4,
        },
        &host,
    ));
    let [Event::Sweep { view }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(
        view.rows.iter().map(|r| r.batch).collect::<Vec<_>>(),
        [1, 2, 4]
    );
    assert!(view.peaks.roof.flops > 0.0 && view.peaks.roof.bytes_per_s > 0.0);
    // The bandwidth probe reads a matrix the size of the weights (1 MiB at least): where
    // stories260K's decode reads from.
    assert_eq!(view.peaks.buffer_bytes, 1 << 20);
    for (r, sp) in view.rows.iter().zip(&view.spread) {
        assert!(r.decode_tokens_per_s > 0.0 && r.prefill_tokens_per_s > 0.0);
        // The median run inside the middle half of the runs, every run kept.
        assert_eq!((sp.batch, sp.runs.len()), (r.batch, sp.reps));
        assert!(sp.decode.0 <= r.decode_tokens_per_s && r.decode_tokens_per_s <= sp.decode.1);
        assert!(sp.prefill.0 <= r.prefill_tokens_per_s && r.prefill_tokens_per_s <= sp.prefill.1);
        // Prefill's one pass of B × 8 rows does more arithmetic per byte than decode's.
        assert!(r.prefill.intensity() > r.decode.intensity());
    }
    assert_eq!(view.weight_bytes, 1_040_128, "stories260K at f32");
    let ev = pollster::block_on(s.handle(
        Request::ServeSim {
            slots: 4,
            requests: 12,
            seed: 3,
        },
        &host,
    ));
    let [Event::Serve { view }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(view.requests.len(), 12);
    assert_eq!(view.continuous.served.len(), 12);
    assert_eq!(view.static_.served.len(), 12);
    assert_eq!(view.continuous.tokens, view.static_.tokens);
    for (a, b) in view.continuous.served.iter().zip(&view.static_.served) {
        assert_eq!(a.tokens, b.tokens, "request {}", a.id);
    }
    assert!(view.continuous.passes <= view.static_.passes);
    // The transcript is untouched by all of it.
    assert_eq!(s.gen.as_ref().unwrap().generated_ids(), want);
    // The KV calculator's stories260K preset has the model's own parameter count.
    let m = s.model.as_ref().unwrap();
    assert_eq!(crate::page::PRESETS[0].params, m.config().n_params());
}

/// The batching panel's sequences are checked against the memory budget before any is
/// allocated: with a budget of exactly the model and five caches, the transcript's and four
/// more fit, five more do not, and the refusal names the figure.
#[test]
fn batching_sequences_are_checked_against_the_budget_first() {
    use decoding_engine::budget::{Budget, Footprint};
    let (s, _) = loaded();
    let c = *s.model.as_ref().unwrap().config();
    let five = Footprint::of(&c).unwrap().with_sequences(5).unwrap();
    assert!(super::batching::check_room(&c, 4, Budget(five)).is_ok());
    match super::batching::check_room(&c, 5, Budget(five)) {
        Err(message) => {
            assert!(
                message.starts_with("5 more sequences do not fit"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
}

fn columns_view(ev: &[Event]) -> &ColumnsView {
    ev.iter()
        .rev()
        .find_map(|e| match e {
            Event::Columns { view } => Some(view),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no columns view in {ev:?}"))
}

/// "Same θ, different config": the lesson's preset stepped 20 times. The greedy column is
/// the model card's published greedy text; the sampled column is what the transcript's own
/// loop (one token a request, alone on its sequence) gives with the same knobs and seed; the
/// columns' newest tokens went through the model as one pass of two rows; the knobs that
/// differ are named; the transcript is untouched.
#[test]
fn compare_columns_step_together_and_each_is_its_plain_run() {
    let (mut s, host) = loaded();
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let preset = crate::page::COMPARE_PRESETS[0];
    let cols: Vec<Settings> = preset
        .columns
        .iter()
        .map(|c| crate::page::parse_column(c, 512).unwrap())
        .collect();
    let ev = pollster::block_on(s.columns_start(cols.clone()));
    let v = columns_view(&ev);
    assert_eq!(v.columns.len(), 2);
    assert!(v.columns.iter().all(|c| c.steps.is_empty() && c.kept > 0));
    assert_eq!(v.differ, ["temperature", "top_p", "strategy"]);
    let ev = pollster::block_on(s.columns_step(20, &host));
    let v = columns_view(&ev).clone();
    assert!(v.columns.iter().all(|c| c.steps.len() == 20));
    // The model card's greedy continuation (assets/models/stories260K/README.md).
    let card = ", there was a little girl named Lily. She loved to play outside in the park.";
    assert!(
        v.columns[0].text.len() > 40 && card.starts_with(&v.columns[0].text),
        "{}",
        v.columns[0].text
    );
    // The greedy column's next token is its distribution's most likely.
    assert_eq!(v.columns[0].next.unwrap().0, v.columns[0].top[0].0);
    // The other column against the transcript's loop with its settings.
    let ev = pollster::block_on(s.restore("Once upon a time".into(), cols[1].clone(), 20, &host));
    let t = last_transcript(&ev);
    assert_eq!(t.steps, v.columns[1].steps);
    assert_ne!(v.columns[0].text, v.columns[1].text);
    assert!(v.columns[1].kept > 1 && v.columns[1].entropy > 0.0);
    // Σ log p of the greedy column from its steps' own probabilities.
    let lp: f64 = v.columns[0].steps.iter().map(|s| s.model_prob.ln()).sum();
    assert!((lp - v.columns[0].logprob).abs() < 1e-9);
    // Nonsense is refused and the columns stay as they were.
    for bad in [
        Request::ColumnsStart {
            columns: vec![cols[0].clone()],
        },
        Request::ColumnsStart {
            columns: vec![cols[0].clone(); 5],
        },
        Request::ColumnsStart {
            columns: vec![cols[0].clone(), settings(&[("strategy", "beam")])],
        },
        Request::ColumnsStep { count: 100_000 },
    ] {
        let ev = pollster::block_on(s.handle(bad.clone(), &host));
        assert!(matches!(ev[..], [Event::Error { .. }]), "{bad:?}: {ev:?}");
    }
    let ev = pollster::block_on(s.columns_step(1, &host));
    assert!(columns_view(&ev)
        .columns
        .iter()
        .all(|c| c.steps.len() == 21));
}

/// Two generations stepping together through `run_pending_together` give the bits each
/// gives alone: the same tokens and the same stored logits as the plain loop.
#[test]
fn pending_tokens_of_several_generations_run_as_one_pass() {
    use decoding_engine::testing::LosesDevice;
    let (s, _) = loaded();
    let m = s.model.as_ref().unwrap();
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let ends = vec![m.tokenizer.eos, m.tokenizer.bos];
    let run = |together: bool| {
        let mut counting = LosesDevice::after(
            decoding_engine::CpuBackend::new(m.transformer.clone()),
            usize::MAX,
        );
        let gs = [
            settings(&[("strategy", "greedy")]),
            settings(&[("seed", "9")]),
        ];
        let mut a = pollster::block_on(Generation::start(
            &mut counting,
            prompt.clone(),
            ends.clone(),
        ))
        .unwrap();
        let mut b = pollster::block_on(Generation::start(
            &mut counting,
            prompt.clone(),
            ends.clone(),
        ))
        .unwrap();
        let before = counting.forwards;
        for _ in 0..12 {
            if together {
                let mut both = [&mut a, &mut b];
                pollster::block_on(Generation::run_pending_together(&mut both, &mut counting))
                    .unwrap();
            }
            for (g, st) in [(&mut a, &gs[0]), (&mut b, &gs[1])] {
                pollster::block_on(g.step(&mut counting, st, &m.tokenizer)).unwrap();
            }
        }
        let passes = counting.forwards - before;
        (
            a.steps().to_vec(),
            b.steps().to_vec(),
            a.current_logits().map(<[f32]>::to_vec),
            passes,
        )
    };
    let (a1, b1, l1, alone) = run(false);
    let (a2, b2, l2, together) = run(true);
    assert_eq!(a1, a2);
    assert_eq!(b1, b2);
    assert_eq!(l1, l2);
    // 11 pending pairs ran as 11 passes, not 22 (the first step's logits came from the prefill).
    assert_eq!(alone, 22);
    assert_eq!(together, 11);
}

/// The exports of real views: the distribution after "Once upon a time" labels its first bar
/// with "," (p = 0.9688, the model card's answer), the beam tree draws one node per node of
/// the search with the best path in the accent colour, and every drawing parses back.
#[test]
fn exports_of_real_views_are_their_data() {
    use crate::export::{self, Shape};
    let (mut s, host) = loaded();
    let ev = pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let t = last_trace(&ev).clone();
    let tok = s.model.as_ref().unwrap().tokenizer.clone();
    let c = *s.model.as_ref().unwrap().config();
    let piece = |id: u32| crate::page::piece_text(tok.piece(id).unwrap_or("?"), true, Some(12));
    let d = export::distribution(&t, &piece, 10);
    let texts = d.texts();
    let first_label = texts
        .iter()
        .position(|x| x == "\",\"")
        .expect("the , bar is labelled");
    assert!(
        texts[first_label + 1].starts_with('"'),
        "the next bar's label follows"
    );
    assert!(roxmltree::Document::parse(&d.svg()).is_ok());
    assert!(d.shapes.len() > 20);
    let kv = export::kv(&c, 5);
    assert!(
        kv.texts()
            .iter()
            .any(|x| x.contains("n = 5 holds 6,400 bytes")),
        "{:?}",
        kv.texts()
    );
    // The beam tree of "The dog", 4 levels of width 3.
    pollster::block_on(s.set_settings(settings(&[("strategy", "beam"), ("beams", "3")])));
    pollster::block_on(s.set_prompt("The dog".into(), &host));
    let ev = pollster::block_on(s.beam_to(4));
    let v = ev
        .iter()
        .find_map(|e| match e {
            Event::Beam { view } => Some(view.clone()),
            _ => None,
        })
        .unwrap();
    assert!(v.reset);
    let tree = export::beam_tree(&v.changed, v.best_node, &piece);
    let circles = tree
        .shapes
        .iter()
        .filter(|s| matches!(s, Shape::Circle { .. }))
        .count();
    assert_eq!(circles, v.changed.len());
    // The best path: the best node and its ancestors up to the root (depth + 1 nodes).
    let best = tree
        .shapes
        .iter()
        .filter(|s| matches!(s, Shape::Circle { fill, .. } if *fill == "#2f5bd3"))
        .count();
    assert_eq!(best, v.changed[v.best_node.unwrap()].depth + 1);
    assert!(roxmltree::Document::parse(&tree.svg()).is_ok());
}

/// Every other chart's export from its real view: the stages, the compared columns, the three
/// precisions, the speculative cycle, throughput and the roofline, the serving timelines —
/// each parses back as SVG and carries its title and the labels of its data.
#[test]
fn every_panel_exports_its_chart_from_its_view() {
    use crate::export;
    let (mut s, host) = loaded();
    let mut events = Vec::new();
    let cols = vec![
        settings(&[("strategy", "greedy")]),
        settings(&[("top_p", "0.9")]),
    ];
    for req in [
        Request::SetPrompt {
            prompt: "Once upon a time".into(),
        },
        Request::Quantization { open: true },
        Request::SpecStart {
            draft: "quant:q8".into(),
            gamma: 3,
            rule: "rejection".into(),
        },
        Request::SpecCycle { count: 2 },
        Request::ColumnsStart { columns: cols },
        Request::ColumnsStep { count: 3 },
        Request::BatchSweep {
            batches: vec![1, 2],
            prompt_tokens: 4,
            gen_tokens: 2,
        },
        Request::ServeSim {
            slots: 2,
            requests: 4,
            seed: 1,
        },
    ] {
        let ev = pollster::block_on(s.handle(req.clone(), &host));
        assert!(
            !ev.iter().any(|e| matches!(e, Event::Error { .. })),
            "{req:?}: {ev:?}"
        );
        events.extend(ev);
    }
    let tok = s.model.as_ref().unwrap().tokenizer.clone();
    let piece = |id: u32| crate::page::piece_text(tok.piece(id).unwrap_or("?"), true, Some(12));
    let trace = last_trace(&events);
    let mut drawings = vec![("stages", export::stages(trace, &piece), "top_k".to_string())];
    for e in &events {
        match e {
            Event::Quant { view } => drawings.push(("quant", export::quant(view), "q4".into())),
            Event::Spec { view } if view.last.is_some() => {
                drawings.push(("spec", export::spec(view).unwrap(), "q (draft)".into()))
            }
            Event::Columns { view } => drawings.push((
                "columns",
                export::columns(view, &piece),
                piece(view.columns[1].top[0].0),
            )),
            Event::Sweep { view } => drawings.push(("sweep", export::sweep(view), "D2".into())),
            Event::Serve { view } => {
                drawings.push(("serve", export::serve(view), "continuous".into()))
            }
            _ => {}
        }
    }
    let kinds: std::collections::BTreeSet<&str> = drawings.iter().map(|d| d.0).collect();
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    // The chain with three stages at work: two charts a row, the neutral ones in a line (all
    // eight stacked made a PNG 7,148 px tall).
    let ev = pollster::block_on(s.set_settings(settings(&[
        ("temperature", "0.7"),
        ("top_k", "20"),
        ("top_p", "0.9"),
    ])));
    let chain = export::stages(last_trace(&ev), &piece);
    assert!(
        chain.height < 1000.0 && chain.width < 1400.0,
        "{} × {}",
        chain.width,
        chain.height
    );
    assert!(chain.texts().iter().any(|t| t.starts_with("Neutral here")));
    for (name, d, must) in &drawings {
        let svg = d.svg();
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        assert!(
            texts.iter().any(|t| t.contains(must.as_str())),
            "{name}: no {must:?} in {texts:?}"
        );
        assert!(texts.contains(&d.title.as_str()), "{name}: its title");
    }
}

fn last_probe(ev: &[Event]) -> &ProbeView {
    ev.iter()
        .rev()
        .find_map(|e| match e {
            Event::Probe { view } => Some(view),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a probe view in {ev:?}"))
}

/// Inside the step: opened after a prompt, the view comes from one probed pass over the
/// sequence; each step's view from the step's own pass (the same bits as a probed pass over
/// the whole sequence made here); the lens keeps its columns by position, its last layer at
/// the newest position is the transcript's own top token; a rewind and a close.
#[test]
fn the_view_inside_the_step_follows_the_transcript_from_the_steps_own_pass() {
    use decoding_engine::probe::ProbeSpec;
    use decoding_engine::{Batch, KvCache, Logits, SeqId};
    let (mut s, host) = loaded();
    pollster::block_on(s.set_settings(settings(&[("temperature", "0")])));
    pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
    let ev = pollster::block_on(s.handle(Request::Probe { open: true }, &host));
    let v = last_probe(&ev).clone();
    let (layers, heads) = (5, 8);
    assert_eq!((v.pos, v.pieces.len(), v.from_step), (4, 5, false));
    assert_eq!(
        (v.n_layers, v.n_heads, v.n_kv_heads, v.head_size),
        (layers, heads, 4, 8)
    );
    assert_eq!(v.attention.len(), layers * heads * 5);
    for _ in 0..3 {
        let ev = pollster::block_on(s.handle(Request::Step { count: 1 }, &host));
        let v = last_probe(&ev);
        assert!(v.from_step, "a step's view is its own pass's record");
    }
    let ev = pollster::block_on(s.handle(Request::Step { count: 1 }, &host));
    let v = last_probe(&ev).clone();
    let gen = s.gen.as_ref().unwrap();
    let tokens: Vec<u32> = gen
        .prompt()
        .iter()
        .copied()
        .chain(gen.generated_ids())
        .collect();
    let n = tokens.len();
    assert_eq!((v.pos, v.pieces.len(), n), (8, 9, 9));
    // The same sequence as one probed pass here, every position's lens recorded.
    let m = s.model().unwrap().transformer.clone();
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
    let ev = pollster::block_on(s.handle(Request::Rewind, &host));
    let v = last_probe(&ev);
    assert_eq!((v.pos, v.from_step), (7, false));
    assert_eq!(v.attention.len(), layers * heads * 8);
    // Closed: no more views, and the transcript's passes run without the probe.
    pollster::block_on(s.handle(Request::Probe { open: false }, &host));
    let ev = pollster::block_on(s.handle(Request::Step { count: 1 }, &host));
    assert!(!ev.iter().any(|e| matches!(e, Event::Probe { .. })));
    assert!(s.gen.as_ref().unwrap().probed().is_none());
}

/// The warm-up after a load runs on a scratch sequence it frees: the transcript that follows
/// is the one a session without it gives (same tokens, same distribution, the first
/// sequence slot), and the warm-up itself fills a context's worth when its time allows.
#[test]
fn the_warm_up_leaves_nothing_behind() {
    let run = |warm: f64| {
        let (mut s, host) = loaded();
        s.set_warm_up(warm);
        let ev = pollster::block_on(s.restore(
            "Once upon a time".into(),
            settings(&[("seed", "7"), ("top_p", "0.9")]),
            12,
            &host,
        ));
        let seq = s.gen.as_ref().unwrap().sequence();
        (
            last_transcript(&ev).clone(),
            last_trace(&ev).clone(),
            seq,
            s.warm_up_due,
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
    let engine = s.engine.as_mut().unwrap();
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
