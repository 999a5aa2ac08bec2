//! The batching panel: lanes, the sweep, both policies, the budget.

use super::*;

/// Four lanes stepping together, lane 0 (the page's seed) the transcript's own sampled text
/// and the others their seeds' texts; "Step all lanes" extends the same run by one pass.
/// (Nonsense sizes: `malformed.rs`.)
#[test]
fn the_batching_panel_runs_lanes() {
    let (mut s, host) = prompted(&[("seed", "5"), ("max_tokens", "1000")]);
    let plain = last!(&step(&mut s, &host, 12), Transcript).clone();
    let want: Vec<u32> = plain.steps.iter().map(|st| st.token).collect();
    let lanes = |ev: &[Event]| match ev {
        [Event::Batch(BatchEvent::Lanes { view })] => view.clone(),
        _ => panic!("{ev:?}"),
    };
    let ev = ask(
        &mut s,
        &host,
        Request::Batch(BatchRequest::BatchLanes {
            batch: 4,
            tokens: 12,
        }),
    );
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
    let v2 = lanes(&ask(
        &mut s,
        &host,
        Request::Batch(BatchRequest::BatchLanes {
            batch: 4,
            tokens: 13,
        }),
    ));
    assert_eq!(v2.passes, 13);
    assert_eq!(ids(&v2.lanes[2])[..12], ids(&v.lanes[2])[..]);
    // The transcript is untouched by the lanes.
    assert_eq!(s.core.gen.as_ref().unwrap().generated_ids(), want);
}

/// The sweep has a row per batch size with positive rates and the machine's peaks; the
/// serving simulation runs both policies on one trace with the same tokens, continuous in
/// fewer passes.
#[test]
fn the_batching_panel_sweeps_and_serves_both_policies() {
    let (mut s, host) = prompted(&[("seed", "5")]);
    let ev = ask(
        &mut s,
        &host,
        Request::Batch(BatchRequest::BatchSweep {
            batches: vec![1, 2, 4],
            prompt_tokens: 8,
            gen_tokens: 4,
            model: SweepModel::Loaded,
        }),
    );
    let [Event::Batch(BatchEvent::Sweep { view })] = &ev[..] else {
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
    let ev = ask(
        &mut s,
        &host,
        Request::Batch(BatchRequest::ServeSim {
            slots: 4,
            requests: 12,
            seed: 3,
        }),
    );
    let [Event::Batch(BatchEvent::Serve { view })] = &ev[..] else {
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
    // The KV calculator's stories260K preset has the model's own parameter count.
    let m = s.core.model.as_ref().unwrap();
    assert_eq!(
        decoding_page::page::PRESETS[0].params,
        m.config().n_params()
    );
}

/// The batching panel's sequences are checked against the memory budget before any is
/// allocated: with a budget of exactly the model and five caches, the transcript's and four
/// more fit, five more do not, and the refusal names the figure.
#[test]
fn batching_sequences_are_checked_against_the_budget_first() {
    use decoding_engine::budget::{Budget, Footprint};
    let (s, _) = loaded();
    let c = *s.core.model.as_ref().unwrap().config();
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

/// Where a decoded token's time goes: on the CPU backend the view says there are no GPU
/// kernels; on the GPU (lavapipe under the test command, which writes timestamps) 16
/// decode steps are timed, every kernel of the plan named, and wall = busy + overhead.
#[test]
fn the_gpu_split_times_each_kernel_on_the_gpu_and_says_why_not_on_the_cpu() {
    let (mut s, host) = loaded();
    let split = |ev: Vec<Event>| match &ev[..] {
        [Event::Batch(BatchEvent::GpuSplit { view })] => view.clone(),
        _ => panic!("{ev:?}"),
    };
    let v = split(ask(&mut s, &host, Request::Batch(BatchRequest::GpuSplit)));
    assert_eq!((v.split, v.tokens), (None, 0));
    assert!(v.note.unwrap().contains("CPU backend"));
    let ctx = pollster::block_on(decoding_gpu::GpuContext::new());
    if let Err(e) = &ctx {
        let required = std::env::var("DECODING_EXPLORER_REQUIRE_GPU").is_ok_and(|v| v == "1");
        assert!(!required, "GPU required: {e}");
        return;
    }
    let m = decoding_engine::Model::from_memory(
        [
            ("model.bin", &asset("stories260K.bin")),
            ("tokenizer.bin", &asset("tok512.bin")),
        ],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let opened = pollster::block_on(decoding_gpu::select::select(
        BackendChoice::Gpu,
        &m.transformer,
        ctx,
        &|| host.now(),
    ));
    s.install(m, opened);
    let v = split(ask(&mut s, &host, Request::Batch(BatchRequest::GpuSplit)));
    assert_eq!(v.note, None);
    assert_eq!(v.tokens, 16);
    let names: Vec<&str> = v.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, decoding_gpu::backend::KERNEL_NAMES);
    // 5 layers: five of each layer kernel a step, one of the others.
    let per_step: Vec<u64> = v.kernels.iter().map(|k| k.dispatches / 16).collect();
    assert_eq!(per_step, [1, 5, 5, 5, 5, 5, 1, 1]);
    let t = v.split.unwrap();
    let busy: f64 = v.kernels.iter().map(|k| k.gpu_ns).sum::<f64>() / 1e9 / 16.0;
    assert!((t.gpu_busy_s - busy).abs() < 1e-12 && busy > 0.0);
    assert!((t.overhead_s - (t.wall_s - busy).max(0.0)).abs() < 1e-12);
}
