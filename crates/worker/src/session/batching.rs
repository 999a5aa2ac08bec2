//! The batching panel's work in the worker (lesson 10, section 5: "serve many requests
//! together to amortize the memory-bandwidth cost of loading weights"): B lanes of the
//! transcript's prompt stepping together, throughput against B with the machine's peaks
//! measured here for the roofline, and a seeded trace served continuous and static — all
//! on the running backend, with the engine's own code (`decoding_engine::serving::batching`).

use super::base::{err, Core, Host};
use decoding_engine::budget::{Budget, Footprint};
use decoding_engine::serving::batching::{simulate, throughput, trace, Lanes, Policy, Throughput};
use decoding_engine::serving::roofline;
use decoding_engine::{Backend, CpuBackend};
use decoding_page::protocol::*;

/// Largest batch the panel runs (each lane is a KV cache).
pub const MAX_BATCH: u32 = 16;
/// Most tokens a lane grows to in the panel.
pub const MAX_LANE_TOKENS: u32 = 256;
/// The bandwidth probe's largest matrix in the worker (it is the size of the model's
/// weights, so that it reads from where the decode reads, up to this).
const PEAK_BUFFER: usize = 64 << 20;
/// Least time, least and most runs of each batch size in the sweep.
const SWEEP_MS: f64 = 120.0;
const SWEEP_MIN_REPS: usize = 9;
/// Untimed runs before the sweep, at least this long.
const SWEEP_WARM_MS: f64 = 100.0;
const SWEEP_MAX_REPS: usize = 25;

/// The median run of each phase (prefill and decode taken apart) and the middle half of
/// the runs (25th to 75th percentile).
fn median_run(mut runs: Vec<Throughput>) -> (Throughput, SweepSpread) {
    let range = |f: fn(&Throughput) -> f64, runs: &[Throughput]| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        (at(0.25), at(0.75))
    };
    let spread = SweepSpread {
        batch: runs[0].batch,
        reps: runs.len(),
        prefill: range(|t| t.prefill_tokens_per_s, &runs),
        decode: range(|t| t.decode_tokens_per_s, &runs),
        runs: runs
            .iter()
            .map(|t| (t.prefill_tokens_per_s, t.decode_tokens_per_s))
            .collect(),
    };
    let mid = runs.len() / 2;
    runs.sort_by(|a, b| a.decode_ms.total_cmp(&b.decode_ms));
    let mut row = runs[mid].clone();
    runs.sort_by(|a, b| a.prefill_ms.total_cmp(&b.prefill_ms));
    row.prefill_ms = runs[mid].prefill_ms;
    row.prefill_tokens_per_s = runs[mid].prefill_tokens_per_s;
    (row, spread)
}

/// Whether the model, the transcript's sequence and `extra` more sequences' KV caches fit
/// `budget` (each cache is allocated whole, `seq_len` positions): B lanes of a 110M model
/// would take 1.2 GB of caches, so they are refused with the figure, not allocated.
pub(super) fn check_room(
    c: &decoding_engine::Config,
    extra: u64,
    budget: Budget,
) -> Result<(), String> {
    Footprint::of(c)
        .and_then(|f| f.check_sequences(c, extra, budget))
        .map_err(|e| format!("{extra} more sequences do not fit: {e}"))
}

/// Decode steps the GPU split times.
const SPLIT_TOKENS: usize = 16;

/// Where a decoded token's time goes on the GPU: a fresh sequence prefilled untimed, then
/// `SPLIT_TOKENS` decode steps with timestamps around each dispatch, against their wall
/// time. Without timestamps (or on an error) the view says why.
async fn time_kernels(engine: &mut dyn Backend, host: &dyn Host) -> GpuSplitView {
    let c = *engine.config();
    let n = SPLIT_TOKENS.min(c.seq_len - 1);
    // BOS, then ids spread over the vocabulary (as `bench` decodes).
    let ids: Vec<u32> = (0..=n)
        .map(|i| {
            if i == 0 {
                1
            } else {
                ((i * 7919 + 3) % c.vocab_size) as u32
            }
        })
        .collect();
    let unmeasured = |note: String| GpuSplitView {
        tokens: 0,
        split: None,
        kernels: Vec::new(),
        note: Some(note),
    };
    let seq = match engine.new_sequence() {
        Ok(s) => s,
        Err(e) => return unmeasured(e.to_string()),
    };
    let timed = async {
        engine.forward(seq, &ids[..1], false).await?;
        engine.set_kernel_timing(true)?;
        let t0 = host.now();
        for &id in &ids[1..] {
            engine.forward(seq, &[id], false).await?;
        }
        Ok::<_, decoding_engine::BackendError>(host.now() - t0)
    }
    .await;
    let times = engine.take_kernel_times().unwrap_or_default();
    let _ = engine.set_kernel_timing(false);
    engine.release(seq);
    match timed {
        Ok(ms) => GpuSplitView {
            tokens: times.passes,
            split: times.split(ms / 1e3 / times.passes.max(1) as f64, times.passes),
            kernels: times.kernels,
            note: None,
        },
        Err(e) => unmeasured(e.to_string()),
    }
}

/// A sweep's request checked: 1–8 batch sizes of 1…MAX_BATCH, at least one prompt and one
/// generated token within the context, and room for the largest batch's caches.
fn check_sweep(
    c: &decoding_engine::Config,
    batches: &[u32],
    p: usize,
    g: usize,
) -> Result<(), String> {
    if batches.is_empty() || batches.len() > 8 {
        return Err("give 1 to 8 batch sizes".into());
    }
    if let Some(b) = batches.iter().find(|b| !(1..=MAX_BATCH).contains(b)) {
        return Err(format!("a batch of {b}: choose 1 to {MAX_BATCH}"));
    }
    if p == 0 || g == 0 || p + g > c.seq_len {
        return Err(format!(
            "{p} prompt and {g} generated tokens: at least 1 each, {} together at most",
            c.seq_len
        ));
    }
    let most = batches.iter().copied().max().unwrap_or(1) as u64;
    check_room(c, most, Budget::default()).map_err(|e| e.to_string())
}

/// The machine's ceilings, measured after the sweep's runs with the same kernels, now
/// compiled and warm (measured first, the browser ran them as its baseline code and the roof
/// drew under the points). A probe that shared the machine with other work reads low: while
/// a measured point lies above the roof, it probes again (twice at most), each ceiling its
/// best reading.
fn machine_peaks(
    rows: &[Throughput],
    weight_bytes: u64,
    dim: usize,
    clock: &dyn Fn() -> f64,
) -> roofline::Peaks {
    let probe = (weight_bytes as usize).clamp(1 << 20, PEAK_BUFFER);
    let mut peaks = roofline::measure(probe, dim, 3, clock);
    let points = decoding_page::geometry::batching::machine_points(rows);
    for _ in 0..2 {
        let holds = points
            .iter()
            .all(|p| roofline::under(&peaks.roof, p.intensity, p.flops));
        if holds {
            break;
        }
        peaks = peaks.best(roofline::measure(probe, dim, 3, clock));
    }
    peaks
}

impl Core {
    /// The 15M shape's random weights, made the first time they are asked for.
    pub(super) fn shape_lab(&mut self) -> Result<&mut super::shape::ShapeLab, String> {
        if self.shape.is_none() {
            self.shape = Some(super::shape::ShapeLab::new()?);
        }
        self.shape
            .as_mut()
            .ok_or_else(|| "the 15M shape's weights could not be made".to_string())
    }

    /// Where a decoded token's time goes on the running GPU backend (`time_kernels`); on
    /// the CPU backend the view says there is nothing to time.
    pub(super) async fn gpu_split(&mut self, host: &dyn Host) -> Vec<Event> {
        let Some(engine) = self.engine.as_mut() else {
            return vec![err("no model is loaded yet")];
        };
        // The timed steps run on a sequence of their own: its cache must fit.
        if let Err(e) = check_room(engine.config(), 1, Budget::default()) {
            return vec![err(e)];
        }
        let view = match engine.report.kind {
            decoding_engine::BackendKind::Gpu => time_kernels(engine, host).await,
            decoding_engine::BackendKind::Cpu => GpuSplitView {
                tokens: 0,
                split: None,
                kernels: Vec::new(),
                note: Some(
                    "the page runs on the CPU backend, which launches no GPU kernels (choose WebGPU in the header)"
                        .into(),
                ),
            },
        };
        vec![Event::Batch(BatchEvent::GpuSplit { view })]
    }
}

pub(super) struct LanesRun {
    lanes: Lanes,
    settings: decoding_engine::decode::sampling::Settings,
}

impl Core {
    async fn batch_lanes(
        &mut self,
        panel: &mut Option<LanesRun>,
        batch: u32,
        tokens: u32,
        host: &dyn Host,
    ) -> Vec<Event> {
        // A cancel that arrived while nothing ran is not for this request.
        host.clear_cancel();
        if !(1..=MAX_BATCH).contains(&batch) {
            return vec![err(format!(
                "a batch of {batch} lanes: choose 1 to {MAX_BATCH} (each lane is its own KV cache)"
            ))];
        }
        if tokens > MAX_LANE_TOKENS {
            return vec![err(format!(
                "{tokens} tokens a lane: the panel grows lanes to at most {MAX_LANE_TOKENS}"
            ))];
        }
        let (Some(m), Some(g), Some(engine)) = (&self.model, &self.gen, self.engine.as_mut())
        else {
            return vec![err("no prompt has been run yet")];
        };
        let prompt = g.prompt().to_vec();
        if let Err(e) = check_room(m.config(), batch as u64, Budget::default()) {
            return vec![err(e)];
        }
        let ends = [m.tokenizer.eos, m.tokenizer.bos];
        let clock = || host.now();
        // The same B, prompt and knobs: extend; anything else: a new run.
        let same = panel.as_ref().is_some_and(|r| {
            r.lanes.seeds().len() == batch as usize
                && r.lanes.prompt() == prompt.as_slice()
                && r.settings == self.settings
        });
        if !same {
            if let Some(old) = panel.take() {
                old.lanes.release(engine);
            }
            let seeds: Vec<u64> = (0..batch as u64)
                .map(|k| self.settings.seed.wrapping_add(k))
                .collect();
            match Lanes::start(engine, &prompt, &seeds, &clock).await {
                Ok(lanes) => {
                    *panel = Some(LanesRun {
                        lanes,
                        settings: self.settings.clone(),
                    })
                }
                Err(e) => return vec![err(e)],
            }
        }
        let Some(run) = panel.as_mut() else {
            return vec![err("no lanes")];
        };
        while run
            .lanes
            .generated()
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            < tokens as usize
        {
            match run.lanes.step(engine, &run.settings, &ends, &clock).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return vec![err(e)],
            }
            if host.cancelled() {
                break;
            }
        }
        self.lanes_view(panel).into_iter().collect()
    }

    fn lanes_view(&self, panel: &Option<LanesRun>) -> Option<Event> {
        let (run, m) = (panel.as_ref()?, self.model.as_ref()?);
        let tok = |id: u32| PromptToken {
            id,
            piece: m.tokenizer.piece(id).unwrap_or("?").to_string(),
        };
        let seq_len = m.config().seq_len;
        let l = &run.lanes;
        let ends = [m.tokenizer.eos, m.tokenizer.bos];
        let decode_ms: f64 = l.pass_ms[1..].iter().sum();
        let decode_tokens: usize = l.pass_rows[1..].iter().sum();
        Some(Event::Batch(BatchEvent::Lanes {
            view: LanesView {
                batch: l.seeds().len(),
                prompt: l.prompt().iter().map(|&t| tok(t)).collect(),
                prompt_text: m.tokenizer.decode(l.prompt()).unwrap_or_default(),
                lanes: l
                    .seeds()
                    .iter()
                    .zip(l.generated())
                    .map(|(&seed, g)| LaneView {
                        seed,
                        tokens: g.iter().map(|&t| tok(t)).collect(),
                        text: m
                            .tokenizer
                            .text_after(l.prompt().last().copied(), g, &ends, true),
                        stopped: g.last().is_some_and(|t| ends.contains(t))
                            || l.prompt().len() + g.len() >= seq_len,
                    })
                    .collect(),
                passes: l.pass_ms.len() - 1,
                decode_ms_per_pass: decode_ms / (l.pass_ms.len() - 1).max(1) as f64,
                prefill_ms: l.pass_ms[0],
                tokens_per_s: decode_tokens as f64 / (decode_ms / 1000.0).max(1e-9),
            },
        }))
    }

    /// The batching panel's sweep: each batch size's throughput, and the machine's peaks;
    /// on the loaded model's engine, or on the CPU over the 15M shape's random weights.
    pub(super) async fn batch_sweep(
        &mut self,
        batches: &[u32],
        prompt_tokens: u32,
        gen_tokens: u32,
        model: SweepModel,
        host: &dyn Host,
    ) -> Vec<Event> {
        // A cancel that arrived while nothing ran is not for this request.
        host.clear_cancel();
        let mut shape_cpu;
        let (engine, weight_bytes, kind): (&mut dyn Backend, u64, String) = match model {
            SweepModel::Loaded => {
                let Some(engine) = self.engine.as_mut() else {
                    return vec![err("no model is loaded yet")];
                };
                let c = *engine.config();
                let bytes = self
                    .model
                    .as_ref()
                    .map_or(0, |m| m.transformer.weights.bytes(&c));
                let kind = engine.report.kind.to_string();
                (engine, bytes, kind)
            }
            SweepModel::Random15M => {
                let t = match self.shape_lab() {
                    Ok(lab) => lab.at(decoding_engine::Precision::F32),
                    Err(e) => return vec![err(e)],
                };
                let bytes = t.weights.bytes(&t.config);
                shape_cpu = CpuBackend::new(t);
                (&mut shape_cpu, bytes, "cpu".to_string())
            }
        };
        let c = *engine.config();
        let (p, g) = (prompt_tokens as usize, gen_tokens as usize);
        if let Err(e) = check_sweep(&c, batches, p, g) {
            return vec![err(e)];
        }
        let clock = || host.now();
        // Runs of the first size first, untimed, for SWEEP_WARM_MS (the browser compiles
        // hot wasm code again, faster, after it has run a while: a run timed before would
        // read slow).
        let (first, t0) = (batches[0] as usize, host.now());
        for _ in 0..SWEEP_MAX_REPS {
            if let Err(e) = throughput(engine, first, p, g, weight_bytes, &clock).await {
                return vec![err(e)];
            }
            if host.now() - t0 >= SWEEP_WARM_MS {
                break;
            }
        }
        let (mut rows, mut spread) = (Vec::new(), Vec::new());
        for &b in batches {
            // The worker's clock ticks in about 0.1 ms and a small model's pass takes less:
            // each batch size runs at least SWEEP_MIN_REPS times and until SWEEP_MS have
            // passed (at most SWEEP_MAX_REPS), and the view holds the median run of each
            // phase with the middle half of them (a caption compares ranges, not one run).
            let t0 = host.now();
            let mut runs = Vec::new();
            while runs.len() < SWEEP_MIN_REPS
                || (host.now() - t0 < SWEEP_MS && runs.len() < SWEEP_MAX_REPS)
            {
                match throughput(engine, b as usize, p, g, weight_bytes, &clock).await {
                    Ok(t) => runs.push(t),
                    Err(e) => return vec![err(e)],
                }
            }
            let (row, range) = median_run(runs);
            rows.push(row);
            spread.push(range);
            host.yield_now().await;
            if host.cancelled() {
                break;
            }
        }
        let peaks = machine_peaks(&rows, weight_bytes, c.dim, &clock);
        // The 15M shape's weights are made for one measurement (58 MiB the page need not keep).
        self.shape = None;
        vec![Event::Batch(BatchEvent::Sweep {
            view: SweepView {
                model,
                backend: kind,
                weight_bytes,
                peaks,
                rows,
                spread,
            },
        })]
    }

    pub(super) async fn serve_sim(
        &mut self,
        slots: u32,
        requests: u32,
        seed: u64,
        host: &dyn Host,
    ) -> Vec<Event> {
        // A cancel that arrived while nothing ran is not for this request.
        host.clear_cancel();
        if !(1..=MAX_BATCH).contains(&slots) || !(1..=64).contains(&requests) {
            return vec![err(format!(
                "{slots} slots and {requests} requests: 1 to {MAX_BATCH} slots, 1 to 64 requests"
            ))];
        }
        let (Some(m), Some(engine)) = (&self.model, self.engine.as_mut()) else {
            return vec![err("no model is loaded yet")];
        };
        let c = *m.config();
        if let Err(e) = check_room(&c, slots as u64, Budget::default()) {
            return vec![err(e)];
        }
        let (max_prompt, max_new) = (16.min(c.seq_len / 2), 32.min(c.seq_len / 2));
        if max_prompt < 2 {
            return vec![err(
                "the model's context is too short for the serving trace",
            )];
        }
        let reqs = trace(
            seed,
            requests as usize,
            c.vocab_size,
            max_prompt,
            max_new,
            2.0,
        );
        let ends = [m.tokenizer.eos, m.tokenizer.bos];
        let clock = || host.now();
        // A warm-up on the trace's first requests first: the browser compiles hot wasm code
        // again, faster, after a while, and the first policy timed would pay for it.
        let warm = &reqs[..reqs.len().min(slots as usize)];
        if let Err(e) = simulate(
            &mut *engine,
            &self.settings,
            warm,
            slots as usize,
            Policy::Continuous,
            &ends,
            &clock,
        )
        .await
        {
            return vec![err(e)];
        }
        let mut run = async |policy| {
            let r = simulate(
                &mut *engine,
                &self.settings,
                &reqs,
                slots as usize,
                policy,
                &ends,
                &clock,
            )
            .await;
            host.yield_now().await;
            r
        };
        let continuous = match run(Policy::Continuous).await {
            Ok(r) => r,
            Err(e) => return vec![err(e)],
        };
        let static_ = match run(Policy::Static).await {
            Ok(r) => r,
            Err(e) => return vec![err(e)],
        };
        vec![Event::Batch(BatchEvent::Serve {
            view: ServeView {
                slots: slots as usize,
                seed,
                requests: reqs.iter().map(|r| (r.prompt.len(), r.max_new)).collect(),
                continuous,
                static_,
            },
        })]
    }
}

impl Core {
    /// The batching panel's requests.
    pub(super) async fn batch_request(
        &mut self,
        panel: &mut Option<LanesRun>,
        r: BatchRequest,
        host: &dyn Host,
    ) -> Vec<Event> {
        match r {
            BatchRequest::BatchLanes { batch, tokens } => {
                self.batch_lanes(panel, batch, tokens, host).await
            }
            BatchRequest::BatchSweep {
                batches,
                prompt_tokens,
                gen_tokens,
                model,
            } => {
                self.batch_sweep(&batches, prompt_tokens, gen_tokens, model, host)
                    .await
            }
            BatchRequest::GpuSplit => self.gpu_split(host).await,
            BatchRequest::ServeSim {
                slots,
                requests,
                seed,
            } => self.serve_sim(slots, requests, seed, host).await,
        }
    }
}
