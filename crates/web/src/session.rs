//! The worker's state and logic in plain Rust (no browser types), tested natively: it owns
//! the model, the backend (through `decoding_gpu::Engine`, which survives a lost GPU), the
//! generation, a beam search, and answers requests with events.

use crate::protocol::*;
use decoding_engine::beam::{score_continuation, BeamConfig, BeamSearch};
use decoding_engine::cost::StepMacs;
use decoding_engine::generation::{Generation, GenerationError, StepOutcome};
use decoding_engine::sampling::chain::process_f64;
use decoding_engine::sampling::{History, Settings, Strategy, Trace};
use decoding_engine::Model;
use decoding_gpu::{open_backend, BackendChoice, Engine};
use std::future::Future;
use std::pin::Pin;

/// Least wall time of each measurement in the cache comparison.
const MEASURE_MS: f64 = 20.0;
/// How often a multi-token step lets other messages (a cancel) in.
const YIELD_EVERY_MS: f64 = 8.0;
/// How many recent decode timings are kept.
const TIMINGS_KEPT: usize = 32;
/// Bars in each stage's small chart.
const CHART_TOKENS: usize = 16;

/// Hooks the browser glue supplies: a clock, a yield to the event loop (so a cancel can
/// arrive between tokens) and whether a cancel arrived.
pub trait Host {
    fn now(&self) -> f64;
    fn yield_now(&self) -> Pin<Box<dyn Future<Output = ()> + '_>>;
    fn cancelled(&self) -> bool;
    fn clear_cancel(&self);
}

struct Beam {
    search: BeamSearch,
    greedy: Generation,
}

#[derive(Default)]
pub struct Session {
    model: Option<Model>,
    engine: Option<Engine>,
    gen: Option<Generation>,
    prompt: String,
    settings: Settings,
    beam: Option<Beam>,
    timings: Timings,
}

fn err(message: impl ToString) -> Event {
    Event::Error {
        message: message.to_string(),
    }
}

impl Session {
    /// Loads a model from bytes; on failure the previous model (if any) is kept.
    pub fn load(&mut self, name: &str, model: &[u8], tokenizer: &[u8]) -> Vec<Event> {
        match Model::from_bytes(model, tokenizer) {
            Ok(m) => {
                let info = ModelInfo {
                    name: name.to_string(),
                    config: *m.config(),
                    params: m.config().n_params(),
                    pieces: (0..m.tokenizer.vocab_size() as u32)
                        .map(|i| m.tokenizer.piece(i).unwrap_or("?").to_string())
                        .collect(),
                };
                self.model = Some(m);
                self.engine = None;
                self.gen = None;
                self.beam = None;
                vec![Event::Loaded { info }]
            }
            Err(e) => vec![err(e)],
        }
    }

    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref()
    }

    /// The prompt of the current transcript.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// The backend to reopen after loading another model: the current kind, or auto.
    pub fn backend_choice(&self) -> BackendChoice {
        match self.engine.as_ref().map(|e| e.report.kind) {
            Some(decoding_engine::BackendKind::Gpu) => BackendChoice::Gpu,
            Some(decoding_engine::BackendKind::Cpu) => BackendChoice::Cpu,
            None => BackendChoice::Auto,
        }
    }

    /// Opens the chosen backend (or switches to it, rebuilding the transcript there).
    pub async fn set_backend(&mut self, choice: BackendChoice) -> Vec<Event> {
        let Some(m) = &self.model else {
            return vec![err("no model is loaded yet")];
        };
        let (backend, report) = match open_backend(choice, &m.transformer).await {
            Ok(x) => x,
            Err(e) => return vec![err(e)],
        };
        let mut engine = Engine::new(m.transformer.clone(), backend, report.clone());
        let mut events = vec![Event::Backend { report }];
        // Carry the transcript over: rebuild its cache on the new backend.
        if let Some(old) = &self.gen {
            match old.rebuild(&mut *engine.backend).await {
                Ok(g) => {
                    if let (Some(old_engine), Some(old)) = (self.engine.as_mut(), self.gen.take()) {
                        old.release(&mut *old_engine.backend);
                    }
                    self.gen = Some(g);
                }
                Err(e) => return vec![err(format!("could not move the transcript: {e}"))],
            }
        }
        self.beam = None;
        self.engine = Some(engine);
        // A transcript that was moved is shown again; with none, the caller runs a prompt.
        if self.gen.is_some() {
            events.push(self.transcript());
            events.extend(self.preview().await);
        }
        events
    }

    /// Prefills a new prompt; the transcript starts over.
    pub async fn set_prompt(&mut self, prompt: String, host: &dyn Host) -> Vec<Event> {
        let (Some(m), Some(engine)) = (&self.model, &mut self.engine) else {
            return vec![err("no model is loaded yet")];
        };
        let ids = match m.encode_prompt(&prompt) {
            Ok(ids) => ids,
            Err(e) => return vec![err(e)],
        };
        let t0 = host.now();
        let ends = vec![m.tokenizer.eos, m.tokenizer.bos];
        let started = Generation::start(&mut *engine.backend, ids.clone(), ends).await;
        let g = match started {
            Ok(g) => g,
            Err(e) => return vec![err(e)],
        };
        if let Some(old) = self.gen.take() {
            old.release(&mut *engine.backend);
        }
        self.timings = Timings {
            prefill_ms: Some(host.now() - t0),
            prefill_tokens: ids.len(),
            decode_ms: Vec::new(),
            last_run: None,
        };
        self.gen = Some(g);
        self.prompt = prompt;
        self.beam = None;
        let mut events = vec![self.transcript()];
        events.extend(self.preview().await);
        events
    }

    fn stop_reason(&self) -> Option<decoding_engine::generation::StopReason> {
        let (Some(m), Some(g)) = (&self.model, &self.gen) else {
            return None;
        };
        g.stop_reason(&self.settings, &m.tokenizer)
    }

    /// The transcript event for the current state.
    pub fn transcript(&self) -> Event {
        let (Some(m), Some(g), Some(engine)) = (&self.model, &self.gen, &self.engine) else {
            return err("nothing has been generated yet");
        };
        let cache_len = engine.backend.seq_len(g.sequence()).unwrap_or(0);
        Event::Transcript {
            view: TranscriptView {
                prompt: g
                    .prompt()
                    .iter()
                    .map(|&id| PromptToken {
                        id,
                        piece: m.tokenizer.piece(id).unwrap_or("?").to_string(),
                    })
                    .collect(),
                prompt_text: m.tokenizer.decode(g.prompt()).unwrap_or_default(),
                generated_text: g.generated_text(&m.tokenizer, true),
                steps: g.steps().to_vec(),
                stop: g.stop_reason(&self.settings, &m.tokenizer),
                cache_len,
                cache: engine.backend.cache_bytes(g.sequence()).unwrap_or(
                    decoding_engine::CacheBytes {
                        used: 0,
                        allocated: 0,
                    },
                ),
                timings: self.timings.clone(),
                loop_warning: {
                    let ids = g.generated_ids();
                    crate::state::detect_loop(&ids, 3).map(|(p, r)| {
                        let phrase = m.tokenizer.decode(&ids[ids.len() - p..]).unwrap_or_default();
                        format!(
                            "Repetition loop: the last {p}-token phrase {phrase:?} repeats {r} times. \
                             Greedy decoding tends to loop; try sampling, a repetition penalty or \
                             no-repeat-n-gram."
                        )
                    })
                },
            },
        }
    }

    /// The chain on the current logits (no forward pass unless the last token was never run).
    pub async fn preview(&mut self) -> Vec<Event> {
        let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) else {
            return vec![];
        };
        let step = g.steps().len();
        match g.preview(&mut *engine.backend, &self.settings).await {
            Ok(t) => vec![Event::Trace {
                view: trace_view(&t, Some(step)),
                toy: false,
            }],
            // At the context limit there is no next distribution: not an error to show.
            Err(GenerationError::Backend(decoding_engine::BackendError::Forward(
                decoding_engine::ForwardError::ContextFull { .. },
            ))) => vec![],
            Err(e) => vec![err(e)],
        }
    }

    pub async fn set_settings(&mut self, settings: Settings) -> Vec<Event> {
        let stop_before = self.stop_reason();
        self.settings = settings;
        let mut events = Vec::new();
        // The transcript changes only if the stop condition does (max tokens, stop
        // sequences); a slider move then costs just the chain and its trace.
        if self.gen.is_some() && self.stop_reason() != stop_before {
            events.push(self.transcript());
        }
        events.extend(self.preview().await);
        events
    }

    /// Up to `count` tokens; stops on a stop condition or a cancel.
    pub async fn step(&mut self, count: u32, host: &dyn Host) -> Vec<Event> {
        host.clear_cancel();
        let Some(m) = &self.model else {
            return vec![err("no model is loaded yet")];
        };
        let mut error = None;
        let run_start = host.now();
        let mut last_yield = run_start;
        let before_steps = self.gen.as_ref().map_or(0, |g| g.steps().len());
        for _ in 0..count {
            // Back to the event loop every few milliseconds (not every token: a yield costs
            // more than a small model's step), so a cancel gets through.
            if host.now() - last_yield >= YIELD_EVERY_MS {
                host.yield_now().await;
                last_yield = host.now();
                if host.cancelled() {
                    break;
                }
            }
            let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) else {
                return vec![err("no prompt has been run yet")];
            };
            let t0 = host.now();
            let before = engine.report.kind;
            match engine.step(g, &self.settings, &m.tokenizer).await {
                Ok(StepOutcome::Token { stop, .. }) => {
                    self.timings.decode_ms.push(host.now() - t0);
                    let n = self.timings.decode_ms.len();
                    if n > TIMINGS_KEPT {
                        self.timings.decode_ms.drain(..n - TIMINGS_KEPT);
                    }
                    if stop.is_some() {
                        break;
                    }
                }
                Ok(StepOutcome::Stopped(_)) => break,
                Err(e) => {
                    error = Some(err(e));
                    break;
                }
            }
            if engine.report.kind != before {
                // The GPU was lost: the transcript moved to the CPU.
                let report = engine.report.clone();
                let mut events = vec![Event::Backend { report }];
                events.push(self.transcript());
                events.extend(self.preview().await);
                return events;
            }
        }
        let generated = self.gen.as_ref().map_or(0, |g| g.steps().len()) - before_steps;
        if count > 1 && generated > 0 {
            self.timings.last_run = Some((generated, host.now() - run_start));
        }
        let mut events = vec![self.transcript()];
        events.extend(self.preview().await);
        events.extend(error);
        events
    }

    pub async fn rewind(&mut self) -> Vec<Event> {
        let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) else {
            return vec![err("no prompt has been run yet")];
        };
        if let Err(e) = g.rewind(&mut *engine.backend) {
            return vec![err(e)];
        }
        let mut events = vec![self.transcript()];
        events.extend(self.preview().await);
        events
    }

    pub async fn reset(&mut self) -> Vec<Event> {
        let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) else {
            return vec![err("no prompt has been run yet")];
        };
        if let Err(e) = g.reset(&mut *engine.backend) {
            return vec![err(e)];
        }
        self.timings.decode_ms.clear();
        let mut events = vec![self.transcript()];
        events.extend(self.preview().await);
        events
    }

    /// A link's state: prompt, settings, and `steps` tokens replayed (same seed, same coins,
    /// same tokens).
    pub async fn restore(
        &mut self,
        prompt: String,
        settings: Settings,
        steps: u32,
        host: &dyn Host,
    ) -> Vec<Event> {
        self.settings = settings;
        let mut events = self.set_prompt(prompt, host).await;
        if events.iter().any(|e| matches!(e, Event::Error { .. })) {
            return events;
        }
        if steps > 0 {
            events = self.step(steps, host).await;
        }
        events
    }

    fn beam_config(&self) -> BeamConfig {
        let (width, length_penalty, early_stopping, num_return) = match self.settings.strategy {
            Strategy::Beam {
                width,
                length_penalty,
                early_stopping,
                num_return,
            } => (width, length_penalty, early_stopping, num_return),
            _ => (3, 1.0, true, 3),
        };
        BeamConfig {
            width,
            length_penalty,
            early_stopping,
            num_return,
            max_tokens: self.settings.max_tokens,
        }
    }

    /// Starts a beam search from the prompt (on its own sequences, beside the transcript).
    pub async fn beam_start(&mut self) -> Vec<Event> {
        let config = self.beam_config();
        let (Some(m), Some(engine), Some(g)) = (&self.model, &mut self.engine, &self.gen) else {
            return vec![err("no prompt has been run yet")];
        };
        if let Some(old) = self.beam.take() {
            old.greedy.release(&mut *engine.backend);
        }
        let prompt = g.prompt().to_vec();
        let be = &mut *engine.backend;
        let started = async {
            let seq = be.new_sequence()?;
            let logits = be.forward(seq, &prompt, false).await?;
            let search = BeamSearch::new(
                config,
                seq,
                prompt.len(),
                be.config().seq_len,
                logits,
                vec![m.tokenizer.eos, m.tokenizer.bos],
            );
            let greedy =
                Generation::start(be, prompt.clone(), vec![m.tokenizer.eos, m.tokenizer.bos])
                    .await
                    .map_err(|e| match e {
                        GenerationError::Backend(b) => b,
                        other => decoding_engine::BackendError::Gpu(other.to_string()),
                    })?;
            Ok::<_, decoding_engine::BackendError>(Beam { search, greedy })
        }
        .await;
        match started {
            Ok(b) => {
                self.beam = Some(b);
                self.beam_view().await
            }
            Err(e) => vec![err(e)],
        }
    }

    pub async fn beam_step(&mut self) -> Vec<Event> {
        if self.beam.is_none() {
            let started = self.beam_start().await;
            if started.iter().any(|e| matches!(e, Event::Error { .. })) {
                return started;
            }
        }
        let (Some(m), Some(engine), Some(b)) = (&self.model, &mut self.engine, &mut self.beam)
        else {
            return vec![err("no beam search is running")];
        };
        if let Err(e) = b.search.step(&mut *engine.backend).await {
            return vec![err(e)];
        }
        // Greedy, one token further, for the comparison.
        let greedy_settings = Settings {
            temperature: 0.0,
            max_tokens: usize::MAX,
            ..Settings::default()
        };
        if b.greedy.steps().len() < b.search.depth() {
            if let Err(e) = b
                .greedy
                .step(&mut *engine.backend, &greedy_settings, &m.tokenizer)
                .await
            {
                return vec![err(e)];
            }
        }
        self.beam_view().await
    }

    async fn beam_view(&mut self) -> Vec<Event> {
        let (Some(m), Some(engine), Some(b)) = (&self.model, &mut self.engine, &self.beam) else {
            return vec![];
        };
        let prompt = b.greedy.prompt().to_vec();
        let text = |toks: &[u32]| {
            let mut all = prompt.clone();
            all.extend_from_slice(toks);
            m.tokenizer.decode(&all).unwrap_or_default()
        };
        let greedy_tokens = b.greedy.generated_ids();
        let greedy_logprob =
            match score_continuation(&mut *engine.backend, &prompt, &greedy_tokens).await {
                Ok((_, lp)) => lp,
                Err(e) => return vec![err(e)],
            };
        let nodes = b.search.nodes().to_vec();
        // The best prefix at the current depth: the best live beam or finished hypothesis.
        let depth = b.search.depth();
        let best = nodes
            .iter()
            .filter(|n| n.depth == depth && n.depth > 0)
            .filter(|n| !matches!(n.status, decoding_engine::beam::NodeStatus::Pruned))
            .max_by(|a, c| a.cum_logprob.total_cmp(&c.cum_logprob));
        let path = |mut id: usize| {
            let mut toks = Vec::new();
            while let Some(t) = nodes[id].token {
                toks.push(t);
                id = nodes[id].parent.unwrap_or(0);
            }
            toks.reverse();
            toks
        };
        let (best_logprob, best_text) =
            best.map_or((0.0, String::new()), |n| (n.cum_logprob, text(&path(n.id))));
        let finished = b
            .search
            .finished()
            .iter()
            .map(|h| HypothesisView {
                text: text(&h.tokens),
                tokens: h.tokens.clone(),
                sum_logprob: h.sum_logprob,
                score: h.score,
                node: h.node,
                ended: h.ended,
            })
            .collect();
        vec![Event::Beam {
            view: BeamView {
                width: self.beam_config().width,
                done: b.search.is_done(),
                depth,
                nodes,
                finished,
                greedy_text: text(&greedy_tokens),
                greedy_tokens,
                greedy_logprob,
                best_logprob,
                best_text,
            },
        }]
    }

    /// Times one decode step with the cache against the same token computed without it (the
    /// prefix run again on a fresh sequence), at each length; counts their multiply-adds.
    pub async fn cache_compare(&mut self, positions: &[usize], host: &dyn Host) -> Vec<Event> {
        let (Some(m), Some(engine)) = (&self.model, &mut self.engine) else {
            return vec![err("no model is loaded yet")];
        };
        let c = *m.config();
        let be = &mut *engine.backend;
        let ids: Vec<u32> = (0..c.seq_len as u32)
            .map(|i| 1 + (i * 7919 + 3) % (c.vocab_size as u32 - 1))
            .collect();
        // Warm up first (the browser compiles hot wasm code again, faster, after a while).
        if let Ok(seq) = be.new_sequence() {
            let warm = ids.len().min(64);
            let _ = be.forward(seq, &ids[..warm], false).await;
            for &t in &ids[warm..warm + 16.min(ids.len() - warm)] {
                let _ = be.forward(seq, &[t], false).await;
            }
            be.release(seq);
        }
        let mut rows = Vec::new();
        for &n in positions.iter().filter(|&&n| n >= 1 && n <= c.seq_len) {
            // Browsers round a worker's clock to about 0.1 ms, longer than one small step:
            // each figure is the mean over repetitions lasting at least MEASURE_MS.
            let run = async {
                // With the cache: the prefix is in place; time the new token only.
                let seq = be.new_sequence()?;
                if n > 1 {
                    be.forward(seq, &ids[..n - 1], false).await?;
                }
                let (t0, mut reps) = (host.now(), 0u32);
                while reps < 2 || (host.now() - t0 < MEASURE_MS && reps < 10_000) {
                    be.truncate(seq, n - 1)?;
                    be.forward(seq, &ids[n - 1..n], false).await?;
                    reps += 1;
                }
                let cached = (host.now() - t0) / reps as f64;
                be.release(seq);
                // Without: the whole prefix again, on a fresh sequence each time.
                let (t0, mut reps) = (host.now(), 0u32);
                while reps < 2 || (host.now() - t0 < MEASURE_MS && reps < 10_000) {
                    let s = be.new_sequence()?;
                    let r = be.forward(s, &ids[..n], false).await;
                    be.release(s);
                    r?;
                    reps += 1;
                }
                let naive = (host.now() - t0) / reps as f64;
                Ok::<_, decoding_engine::BackendError>((cached, naive))
            }
            .await;
            match run {
                Ok((cached_ms, naive_ms)) => {
                    let macs = StepMacs::at(&c, n as u64);
                    rows.push(CompareRow {
                        n,
                        cached_ms,
                        naive_ms,
                        cached_macs: macs.cached,
                        naive_macs: macs.naive,
                    });
                }
                Err(e) => return vec![err(e)],
            }
            host.yield_now().await;
        }
        vec![Event::CacheCompare { rows }]
    }

    /// The chain on hand-typed logits (the lesson's toy example).
    pub fn toy(&self, logits: &[f64], history: &[u32]) -> Vec<Event> {
        let mut settings = self.settings.clone();
        if let Err(e) = check_toy(logits, history) {
            return vec![err(e)];
        }
        settings
            .logit_bias
            .retain(|(id, _)| (*id as usize) < logits.len());
        let h = History {
            prompt: &[],
            generated: history,
        };
        let coin = decoding_engine::sampling::step_coin(settings.seed, 0);
        match process_f64(&settings, logits, h, coin, true) {
            Ok(t) => vec![Event::Trace {
                view: trace_view(&t, None),
                toy: true,
            }],
            Err(e) => vec![err(e)],
        }
    }

    /// Handles one request (the cancel flag and clock come from the host).
    pub async fn handle(&mut self, req: Request, host: &dyn Host) -> Vec<Event> {
        match req {
            Request::Load { .. } => vec![err("the worker glue loads files")],
            Request::SetBackend { backend } => self.set_backend(backend).await,
            Request::SetPrompt { prompt } => self.set_prompt(prompt, host).await,
            Request::SetSettings { settings } => self.set_settings(settings).await,
            Request::Step { count } => self.step(count, host).await,
            Request::Rewind => self.rewind().await,
            Request::Reset => self.reset().await,
            Request::Restore {
                prompt,
                settings,
                steps,
            } => self.restore(prompt, settings, steps, host).await,
            Request::BeamStart => self.beam_start().await,
            Request::BeamStep => self.beam_step().await,
            Request::Toy { logits, history } => self.toy(&logits, &history),
            Request::CacheCompare { positions } => self.cache_compare(&positions, host).await,
            Request::Cancel => vec![],
        }
    }
}

fn check_toy(logits: &[f64], history: &[u32]) -> Result<(), String> {
    if logits.is_empty() || logits.len() > 64 {
        return Err(format!(
            "type between 1 and 64 logits (got {})",
            logits.len()
        ));
    }
    if let Some(v) = logits.iter().find(|v| !v.is_finite()) {
        return Err(format!("logit {v} is not a finite number"));
    }
    if let Some(t) = history.iter().find(|&&t| t as usize >= logits.len()) {
        return Err(format!(
            "history token {t} is not one of the {} logits",
            logits.len()
        ));
    }
    Ok(())
}

/// Shapes an engine trace for drawing: sorted order, ghosts of removed tokens and which stage
/// removed them, small before/after charts per stage.
pub fn trace_view(t: &Trace, step: Option<usize>) -> TraceView {
    let v = t.probs.len();
    let mut ghost = vec![0.0f32; v];
    let mut removed_by = vec![-1i8; v];
    let mut entering = t.input_probs.clone();
    for (si, st) in t.stages.iter().enumerate() {
        for &id in &st.removed {
            ghost[id as usize] = entering[id as usize] as f32;
            removed_by[id as usize] = si as i8;
        }
        entering.clone_from(&st.probs);
    }
    let mut order: Vec<u32> = (0..v as u32).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        t.probs[b]
            .total_cmp(&t.probs[a])
            .then(ghost[b].total_cmp(&ghost[a]))
            .then(a.cmp(&b))
    });
    let mut chart: Vec<u32> = (0..v as u32).collect();
    chart.sort_by(|&a, &b| {
        t.input_probs[b as usize]
            .total_cmp(&t.input_probs[a as usize])
            .then(a.cmp(&b))
    });
    chart.truncate(CHART_TOKENS);
    let mut before = t.input_probs.clone();
    let stages = t
        .stages
        .iter()
        .map(|st| {
            let view = StageView {
                stage: st.stage,
                active: st.active,
                setting: st.setting.clone(),
                kept: st.kept,
                removed: st.removed.len(),
                before: chart.iter().map(|&i| before[i as usize] as f32).collect(),
                after: chart.iter().map(|&i| st.probs[i as usize] as f32).collect(),
            };
            before.clone_from(&st.probs);
            view
        })
        .collect();
    TraceView {
        order,
        probs: t.probs.iter().map(|&p| p as f32).collect(),
        ghost,
        removed_by,
        stages,
        chart_ids: chart,
        kept: t.kept,
        entropy: t.entropy,
        effective_tokens: t.effective_tokens,
        coin: t.coin,
        token: t.token,
        rank: t.rank,
        prob: t.prob,
        step,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decoding_engine::sampling::RawSettings;
    use std::cell::Cell;

    struct TestHost {
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

    fn asset(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../assets/models/stories260K")
            .join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn loaded() -> (Session, TestHost) {
        let host = TestHost {
            cancel: Cell::new(false),
            start: std::time::Instant::now(),
        };
        let mut s = Session::default();
        s.load(
            "stories260K",
            &asset("stories260K.bin"),
            &asset("tok512.bin"),
        );
        let ev = pollster::block_on(s.set_backend(BackendChoice::Cpu));
        assert!(matches!(ev[0], Event::Backend { .. }), "{ev:?}");
        (s, host)
    }

    fn settings(pairs: &[(&str, &str)]) -> Settings {
        RawSettings::from_pairs(pairs.iter().copied())
            .validate(512)
            .unwrap()
    }

    fn last_transcript(ev: &[Event]) -> &TranscriptView {
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
    fn beam_tree_grows_by_2k_nodes_a_step() {
        let (mut s, host) = loaded();
        let beam = settings(&[("strategy", "beam"), ("beams", "3")]);
        pollster::block_on(s.set_settings(beam));
        pollster::block_on(s.set_prompt("Once upon a time".into(), &host));
        let mut view = None;
        for _ in 0..5 {
            let ev = pollster::block_on(s.beam_step());
            view = ev.into_iter().find_map(|e| match e {
                Event::Beam { view } => Some(view),
                _ => None,
            });
        }
        let v = view.unwrap();
        assert_eq!(v.depth, 5);
        assert_eq!(v.nodes.len(), 1 + 2 * 3 * 5);
        assert_eq!(v.greedy_tokens.len(), 5);
        assert!(v.best_logprob >= v.greedy_logprob - 1e-6);
    }

    #[test]
    fn cache_comparison_counts_quadratic_work_without_the_cache() {
        let (mut s, host) = loaded();
        let ev = pollster::block_on(s.cache_compare(&[16, 64, 256], &host));
        let Event::CacheCompare { rows } = &ev[0] else {
            panic!("{ev:?}")
        };
        assert_eq!(rows.len(), 3);
        // Naive work grows like n² (plus n × the matrices): ever further above cached work.
        let ratio = |r: &CompareRow| r.naive_macs as f64 / r.cached_macs as f64;
        assert!(ratio(&rows[2]) > 3.0 * ratio(&rows[0]));
        assert!(rows
            .iter()
            .all(|r| r.cached_ms.is_finite() && r.naive_ms.is_finite()));
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
        match &s.load("bad", &[1, 2, 3], &asset("tok512.bin"))[0] {
            Event::Error { message } => assert!(message.contains("shorter than"), "{message}"),
            e => panic!("{e:?}"),
        }
        let ev = pollster::block_on(s.set_prompt("Once".into(), &host));
        assert!(matches!(ev[0], Event::Transcript { .. }));
    }
}
