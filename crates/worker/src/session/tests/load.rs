//! Models and backends: a bad file, a GPU that cannot open it, a GPU link without a GPU, a
//! lost device, another precision.

use super::*;
use decoding_engine::decode::speculative::{Draft, Rule};
use decoding_engine::Precision;

#[test]
fn bad_model_is_an_error_event_and_keeps_the_old_one() {
    let (mut s, host) = loaded();
    match &drop_files(
        &mut s,
        &host,
        &[
            ("bad.bin", vec![1, 2, 3]),
            ("tok512.bin", asset("tok512.bin")),
        ],
    )[0]
    {
        Event::Model(ModelEvent::Error { message }) => {
            assert!(message.contains("shorter than"), "{message}")
        }
        e => panic!("{e:?}"),
    }
    let ev = set_prompt(&mut s, &host, "Once");
    assert!(matches!(
        ev[0],
        Event::Transcript(TranscriptEvent::Transcript { .. })
    ));
}

#[test]
fn a_valid_model_the_gpu_cannot_open_keeps_the_old_model_and_its_transcript() {
    let (mut s, host) = loaded();
    set_prompt(&mut s, &host, "Once upon a time");
    step(&mut s, &host, 3);
    let before = last!(&[s.core.transcript()], Transcript).clone();
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
    let ck = decoding_engine::weights::Checkpoint::random(c, 5).unwrap();
    let other = decoding_engine::Model::from_memory(
        [
            ("model.bin", &ck.to_bytes()),
            ("tokenizer.bin", &asset("tok512.bin")),
        ],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let lost = Err(decoding_gpu::GpuError::Gpu("the device was lost".into()));
    let opened = pollster::block_on(decoding_gpu::select::select(
        BackendChoice::Gpu,
        &other.transformer,
        lost,
        &|| host.now(),
    ));
    let ev = s.install(other, opened);
    assert!(
        matches!(&ev[..], [Event::Model(ModelEvent::Error { message })] if message.contains("the current model is kept")),
        "{ev:?}"
    );
    // The old model, its backend and its transcript are untouched, and it goes on.
    assert_eq!(s.core.model.as_ref().unwrap().config().dim, 64);
    assert_eq!(last!(&[s.core.transcript()], Transcript), &before);
    let ev = step(&mut s, &host, 1);
    assert_eq!(last!(&ev, Transcript).steps.len(), before.steps.len() + 1);
    // With Auto, the same failure falls back to the CPU and the new model replaces the old.
    let other = decoding_engine::Model::from_memory(
        [
            ("model.bin", &ck.to_bytes()),
            ("tokenizer.bin", &asset("tok512.bin")),
        ],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let lost = Err(decoding_gpu::GpuError::Gpu("the device was lost".into()));
    let opened = pollster::block_on(decoding_gpu::select::select(
        BackendChoice::Auto,
        &other.transformer,
        lost,
        &|| host.now(),
    ));
    let ev = s.install(other, opened);
    assert!(
        matches!(
            &ev[..],
            [
                Event::Model(ModelEvent::Loaded { .. }),
                Event::Model(ModelEvent::Precision { .. }),
                Event::Model(ModelEvent::Backend { .. })
            ]
        ),
        "{ev:?}"
    );
    assert_eq!(s.core.model.as_ref().unwrap().config().dim, 8);
}

#[test]
fn a_link_asking_for_a_gpu_that_is_missing_opens_on_the_cpu_with_the_reason() {
    let host = host();
    let mut s = Session::default();
    let m = decoding_engine::Model::from_memory(
        [
            ("model.bin", &asset("stories260K.bin")),
            ("tokenizer.bin", &asset("tok512.bin")),
        ],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let none = Err(decoding_gpu::GpuError::Gpu("no WebGPU adapter".into()));
    let opened = pollster::block_on(decoding_gpu::select::select(
        BackendChoice::Gpu,
        &m.transformer,
        none,
        &|| host.now(),
    ));
    assert!(opened.is_err(), "asked for by name, the GPU alone fails");
    let ev = s.install(m, opened);
    let [Event::Model(ModelEvent::Loaded { .. }), Event::Model(ModelEvent::Precision { .. }), Event::Model(ModelEvent::Backend { report })] =
        &ev[..]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(report.kind, decoding_engine::BackendKind::Cpu);
    assert!(
        report.reason.contains("no WebGPU adapter"),
        "{}",
        report.reason
    );
    // The rest of the link still applies: its three tokens are replayed.
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "Once upon a time".into(),
            settings: Settings::default(),
            steps: 3,
        }),
    );
    assert_eq!(last!(&ev, Transcript).steps.len(), 3);
}

#[test]
fn a_device_lost_mid_run_and_mid_beam_moves_everything_to_the_cpu() {
    use decoding_engine::backend::engine::BackendReport;
    use decoding_engine::backend::testing::LosesDevice;
    use decoding_engine::{BackendKind, CpuBackend};
    let (mut cpu, host) = loaded();
    let (want_steps, want_beams) = demo(&mut cpu, &host);
    for healthy in [5, 16] {
        // 5: lost during the 12 steps; 16: lost during the beam steps.
        let (mut s, host) = loaded();
        let m = s.core.model.as_ref().unwrap().transformer.clone();
        let flaky = LosesDevice::after(CpuBackend::new(m.clone()), healthy);
        let report = BackendReport {
            kind: BackendKind::Gpu,
            reason: "test".into(),
            dispatches_per_token: None,
            measured_ms: None,
        };
        s.core.engine = Some(Engine::new(m, Box::new(flaky), report));
        let (steps, beams) = demo(&mut s, &host);
        let moved = steps.iter().chain(&beams).find_map(|e| match e {
            Event::Model(ModelEvent::Backend { report }) => Some(report),
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
            .any(|e| matches!(e, Event::Model(ModelEvent::Error { .. }))));
        // Same transcript and same beam tree as a CPU-only session.
        assert_eq!(
            last!(&steps, Transcript).generated_text,
            last!(&want_steps, Transcript).generated_text
        );
        let (got, want) = (last!(&beams, Beam), last!(&want_beams, Beam));
        assert_eq!((got.depth, got.node_count), (want.depth, want.node_count));
        assert_eq!(got.best_text, want.best_text, "device lost after {healthy}");
    }
}

/// Switching to q8 keeps the transcript's tokens and gives the q8 model's distribution
/// (computed here apart, from the engine's own quantization); back to f32 gives f32's again.
#[test]
fn switching_precision_keeps_the_transcript_and_runs_the_new_weights() {
    use decoding_engine::Precision;
    let (mut s, host) = loaded();
    // Default settings: the final distribution is the softmax of the logits.
    set_settings(&mut s, &host, &[("seed", "7")]);
    set_prompt(&mut s, &host, "Once upon a time");
    let ev = step(&mut s, &host, 12);
    let before = last!(&ev, Transcript).clone();
    let f32_probs = page_trace(&s).probs.clone();
    let original = s.core.model.as_ref().unwrap().transformer.clone();
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
        let ev = ask(
            &mut s,
            &host,
            Request::Model(ModelRequest::SetPrecision { precision: p }),
        );
        assert!(
            ev.iter().any(
                |e| matches!(e, Event::Model(ModelEvent::Precision { precision, weight_bytes })
                if *precision == p && *weight_bytes == bytes)
            ),
            "{p}: {ev:?}"
        );
        let after = last!(&ev, Transcript);
        assert_eq!(after.steps, before.steps, "{p}: the transcript is kept");
        let want = model_probs(&original.at(p), &context);
        let got = &trace_after(&ev, &s.core.settings).probs;
        let worst = got
            .iter()
            .zip(&want)
            .map(|(&a, b)| (a as f64 - b).abs())
            .fold(0.0, f64::max);
        // The trace's probabilities are f32.
        assert!(worst < 1e-6, "{p}: {worst}");
    }
    assert_eq!(
        page_trace(&s).probs,
        f32_probs,
        "back at f32, f32's distribution exactly"
    );
}

/// A Qwen2 GGUF with a chat template: the card says so; "Chat" prefills the prompt as one
/// user message through the template (its special tokens one token each, no BOS), plain
/// prompts stay as typed; stories260K, which has no template, refuses chat by name.
#[test]
fn chat_renders_the_prompt_through_the_files_template() {
    let (mut s, host) = loaded();
    let err = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::SetPrompt {
            prompt: "Hi".into(),
            chat: true,
        }),
    );
    assert!(
        matches!(&err[0], Event::Model(ModelEvent::Error { message }) if message.contains("no chat template")),
        "{err:?}"
    );
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/models/fixtures/arch/qwen2.gguf");
    let bytes = std::fs::read(&p).expect("run scripts/make-fixtures.sh");
    let ev = drop_files(&mut s, &host, &[("qwen2.gguf", bytes)]);
    let info = match &ev[0] {
        Event::Model(ModelEvent::Loaded { info }) => info.clone(),
        e => panic!("{e:?}"),
    };
    assert!(info.chat_template && !info.add_bos);
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::SetPrompt {
            prompt: "Hi there!".into(),
            chat: true,
        }),
    );
    let t = last_transcript(&ev);
    let pieces: Vec<&str> = t.prompt.iter().map(|p| p.piece.as_str()).collect();
    assert_eq!(pieces.first(), Some(&"<|im_start|>"));
    assert_eq!(pieces.iter().filter(|p| **p == "<|im_end|>").count(), 1);
    assert_eq!(
        t.prompt_text,
        "<|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\n"
    );
    let ev = set_prompt(&mut s, &host, "Hi there!");
    assert_eq!(last_transcript(&ev).prompt_text, "Hi there!");
}

fn set_precision(s: &mut Session, host: &TestHost, precision: Precision) -> Vec<Event> {
    ask(
        s,
        host,
        Request::Model(ModelRequest::SetPrecision { precision }),
    )
}

fn open_probe(s: &mut Session, host: &TestHost) -> Vec<Event> {
    ask(s, host, Request::Inside(ProbeRequest::Probe { open: true }))
}

/// New weights replace what the panels kept of the old ones: the lens columns recorded
/// under f32 are gone (the view after the switch is the one a probe opened on the new
/// weights shows), and a speculative run on the old engine's sequences is over.
#[test]
fn new_weights_reset_the_panels_that_kept_the_old_ones() {
    let (mut s, host) = prompted(&[("temperature", "0")]);
    open_probe(&mut s, &host);
    step(&mut s, &host, 3);
    let after = last!(&set_precision(&mut s, &host, Precision::Q4), Probe).clone();

    let (mut fresh, _) = prompted(&[("temperature", "0")]);
    step(&mut fresh, &host, 3);
    set_precision(&mut fresh, &host, Precision::Q4);
    let opened = last!(&open_probe(&mut fresh, &host), Probe).clone();
    assert_eq!(after.lens_positions, opened.lens_positions);
    assert_eq!(
        after.lens, opened.lens,
        "the lens columns are the new weights'"
    );

    let start = Request::Spec(SpecRequest::SpecStart {
        draft: Draft::Quant(Precision::Q8),
        gamma: 2,
        rule: Rule::Rejection,
    });
    assert_eq!(last!(&ask(&mut s, &host, start), Spec).cycles, 0);
    set_precision(&mut s, &host, Precision::F32);
    let ev = ask(
        &mut s,
        &host,
        Request::Spec(SpecRequest::SpecCycle { count: 1 }),
    );
    assert!(
        matches!(&ev[..], [Event::Model(ModelEvent::Error { message })] if message == "start a speculative run first"),
        "{ev:?}"
    );
}

/// Where the page cannot have threads the engine runs one and says why, and a count the
/// browser does not offer is refused (the threads as they were: nothing started).
#[test]
fn threads_one_where_the_page_cannot_have_more_and_a_count_out_of_range_refused() {
    let (mut s, host) = loaded();
    let set = |s: &mut Session, threads| {
        ask(
            s,
            &host,
            Request::Model(ModelRequest::SetThreads { threads }),
        )
    };
    let one = |why| {
        vec![Event::Model(ModelEvent::Threads {
            report: ThreadReport {
                threads: 1,
                most: 1,
                why,
            },
        })]
    };
    assert_eq!(set(&mut s, None), one(ThreadWhy::NotIsolated));
    assert_eq!(set(&mut s, Some(1)), one(ThreadWhy::NotIsolated));
    let refused = |events: Vec<Event>, says: &str| match &events[..] {
        [Event::Model(ModelEvent::Error { message })] => {
            assert!(message.contains(says), "{message}")
        }
        e => panic!("{e:?}"),
    };
    refused(set(&mut s, Some(2)), "runs on one thread here");
    *host.cores.borrow_mut() = crate::session::Cores {
        logical: 1,
        one_thread: None,
    };
    assert_eq!(set(&mut s, None), one(ThreadWhy::OneCore));
    *host.cores.borrow_mut() = crate::session::Cores {
        logical: 4,
        one_thread: None,
    };
    refused(set(&mut s, Some(5)), "offers 1 to 4");
    refused(set(&mut s, Some(0)), "offers 1 to 4");
    // The transcript is still there and runs.
    let ev = set_prompt(&mut s, &host, "Once");
    assert!(matches!(
        ev[0],
        Event::Transcript(TranscriptEvent::Transcript { .. })
    ));
}
