//! The transcript: a prompt prefilled, steps (with cancel and timings), rewind, reset, a
//! link restored, and the settings re-run on the stored logits.

use super::base::{err, Core, Host};
use super::base::{TIMINGS_KEPT, YIELD_EVERY_MS};
use decoding_engine::decode::generation::{Generation, GenerationError, StepOutcome};
use decoding_engine::decode::sampling::stages::constraint::spec;
use decoding_engine::decode::sampling::{SamplingError, Settings, SettingsErrors};
use decoding_engine::Backend;
use decoding_page::protocol::*;

impl Core {
    /// Prefills a new prompt (with `chat`, rendered through the model's chat template as
    /// one user message); the transcript starts over.
    pub(super) async fn set_prompt(
        &mut self,
        prompt: String,
        chat: bool,
        host: &dyn Host,
    ) -> Vec<Event> {
        let (Some(m), Some(engine)) = (&self.model, &mut self.engine) else {
            return vec![err("no model is loaded yet")];
        };
        let text = match chat {
            true => m.render_chat(&prompt),
            false => Ok(prompt.clone()),
        };
        let ids = match text.and_then(|t| m.encode_prompt(&t)) {
            Ok(ids) => ids,
            Err(e) => return vec![err(e)],
        };
        if std::mem::take(&mut self.warm_up_due) && self.warm_up_ms > 0.0 {
            warm_up(&mut *engine, host, self.warm_up_ms, m.tokenizer.bos).await;
        }
        let t0 = host.now();
        let ends = vec![m.tokenizer.eos, m.tokenizer.bos];
        let started = Generation::start(&mut *engine, ids.clone(), ends).await;
        let g = match started {
            Ok(g) => g,
            Err(e) => return vec![err(e)],
        };
        if let Some(old) = self.gen.take() {
            old.release(&mut *engine);
        }
        self.timings = Timings {
            prefill_ms: Some(host.now() - t0),
            prefill_tokens: ids.len(),
            forward_ms: Vec::new(),
            chain_ms: Vec::new(),
            last_run: None,
        };
        self.gen = Some(g);
        self.prompt = prompt;
        self.beam = None;
        let mut events = vec![self.transcript()];
        events.extend(self.next().await);
        events
    }

    /// Settings checked against the loaded model's vocabulary (a message's logit-bias ids
    /// may name tokens this model does not have).
    pub(super) fn for_model(&self, settings: Settings) -> Result<Settings, SettingsErrors> {
        match &self.model {
            Some(m) => settings.for_vocab(m.config().vocab_size),
            None => Ok(settings),
        }
    }

    fn stop_reason(&self) -> Option<decoding_engine::decode::generation::StopReason> {
        let (Some(m), Some(g)) = (&self.model, &self.gen) else {
            return None;
        };
        g.stop_reason(&self.settings, &m.tokenizer)
    }

    /// The transcript event for the current state.
    pub(super) fn transcript(&self) -> Event {
        let (Some(m), Some(g), Some(engine)) = (&self.model, &self.gen, &self.engine) else {
            return err("nothing has been generated yet");
        };
        let cache_len = engine.seq_len(g.sequence()).unwrap_or(0);
        Event::Transcript(TranscriptEvent::Transcript {
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
                cache: engine
                    .cache_bytes(g.sequence())
                    .unwrap_or(decoding_engine::CacheBytes {
                        used: 0,
                        allocated: 0,
                    }),
                timings: self.timings.clone(),
                memory_bytes: decoding_page::heap::wasm_memory_bytes(),
                heap_bytes: decoding_page::heap::live_bytes(),
                loop_warning: {
                    let ids = g.generated_ids();
                    decoding_engine::decode::generation::detect_loop(&ids, 3).map(|l| {
                        let phrase = &ids[l.start..l.start + l.period];
                        LoopWarning {
                            period: l.period,
                            repeats: l.repeats,
                            window: decoding_engine::decode::generation::LOOP_WINDOW,
                            phrase: m.tokenizer.decode(phrase).unwrap_or_default(),
                        }
                    })
                },
            },
        })
    }

    /// The logits of the transcript's next position (run if the newest token never was)
    /// and the history beside them: the page runs the chain on them at every knob move.
    /// None at the context limit, where there is no next distribution (not an error).
    pub(super) async fn next(&mut self) -> Vec<Event> {
        let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) else {
            return vec![];
        };
        match g.run_pending(&mut *engine).await {
            Ok(_) => self.sync_constraint(),
            Err(GenerationError::Backend(decoding_engine::BackendError::Forward(
                decoding_engine::ForwardError::ContextFull { .. },
            ))) => return vec![],
            Err(e) => return vec![err(e)],
        }
        match self.next_view() {
            Some(Ok(view)) => vec![TranscriptEvent::Next { view }.into()],
            Some(Err(e)) => vec![err(e)],
            None => vec![],
        }
    }

    /// The next position's logits with their history, if they have been computed; an
    /// error if the chain could not run on them (what it refuses, the page would too, and
    /// a non-finite number cannot travel in a message).
    pub(crate) fn next_view(&self) -> Option<Result<NextView, SamplingError>> {
        let g = self.gen.as_ref()?;
        let logits = g.current_logits()?;
        if let Some(id) = logits.iter().position(|v| !v.is_finite()) {
            return Some(Err(match logits[id] {
                v if v.is_nan() => SamplingError::NanLogit { id },
                _ => SamplingError::InfiniteLogit { id },
            }));
        }
        Some(Ok(NextView {
            allowed: g.constraint().and_then(|c| c.peek().cloned()),
            allowed_for: g.constraint().map(|c| c.spec().to_text()),
            constraint_error: self.constraint_error.clone(),
            step: g.steps().len(),
            logits: logits.to_vec(),
            prompt: g.prompt().to_vec(),
            generated: g.generated_ids(),
            state: g
                .steps()
                .last()
                .map(|s| s.state.clone())
                .unwrap_or_default(),
        }))
    }

    pub(super) async fn set_settings(&mut self, settings: Settings) -> Vec<Event> {
        let settings = match self.for_model(settings) {
            Ok(s) => s,
            Err(e) => return vec![err(e)],
        };
        let stop_before = self.stop_reason();
        let constraint_changed = spec(&settings) != spec(&self.settings);
        self.settings = settings;
        // A new constraint: compiled here, its mask sent with the distribution again.
        if constraint_changed && !self.is_beam() {
            self.sync_constraint();
            let mut events = Vec::new();
            if self.gen.is_some() && self.stop_reason() != stop_before {
                events.push(self.transcript());
            }
            events.extend(self.next().await);
            return events;
        }
        // New beam parameters: the search again, to the depth it had.
        if self.is_beam() && self.beam_outdated() {
            let depth = self.beam.as_ref().map_or(0, |b| b.search.depth());
            return self.beam_to(depth).await;
        }
        // The page runs the chain on the logits it holds; the transcript changes only if
        // the stop condition does (max tokens, stop sequences).
        if self.gen.is_some() && self.stop_reason() != stop_before {
            return vec![self.transcript()];
        }
        vec![]
    }

    /// Up to `count` tokens; stops on a stop condition or a cancel.
    pub(super) async fn step(&mut self, count: u32, host: &dyn Host) -> Vec<Event> {
        host.clear_cancel();
        self.sync_constraint();
        if let Some(e) = &self.constraint_error {
            return vec![err(format!("the constraint: {e}"))];
        }
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
            // The forward pass of the token chosen last (unless it already ran), then the
            // chain on its logits: timed apart.
            let t0 = host.now();
            match g.run_pending(&mut *engine).await {
                Ok(ran) if ran > 0 => push_kept(&mut self.timings.forward_ms, host.now() - t0),
                Ok(_) => {}
                Err(e) => {
                    error = Some(err(e));
                    break;
                }
            }
            let t1 = host.now();
            match g.step(&mut *engine, &self.settings, &m.tokenizer).await {
                Ok(StepOutcome::Token { stop, .. }) => {
                    push_kept(&mut self.timings.chain_ms, host.now() - t1);
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
        }
        // The newest token's forward pass belongs to this request: the page waits for it
        // (its distribution is what the next step draws from).
        if error.is_none() {
            if let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) {
                let t0 = host.now();
                match g.run_pending(&mut *engine).await {
                    Ok(ran) if ran > 0 => push_kept(&mut self.timings.forward_ms, host.now() - t0),
                    Ok(_) => {}
                    // At the context limit the last token has no next position to run.
                    Err(GenerationError::Backend(decoding_engine::BackendError::Forward(
                        decoding_engine::ForwardError::ContextFull { .. },
                    ))) => {}
                    Err(e) => error = Some(err(e)),
                }
            }
        }
        let generated = self.gen.as_ref().map_or(0, |g| g.steps().len()) - before_steps;
        if count > 1 && generated > 0 {
            self.timings.last_run = Some((generated, host.now() - run_start));
        }
        let mut events = vec![self.transcript()];
        events.extend(self.next().await);
        events.extend(error);
        events
    }

    pub(super) async fn rewind(&mut self) -> Vec<Event> {
        if self.beam.is_some() && self.is_beam() {
            return self.beam_rewind().await;
        }
        let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) else {
            return vec![err("no prompt has been run yet")];
        };
        if let Err(e) = g.rewind(&mut *engine) {
            return vec![err(e)];
        }
        self.shown().await
    }

    /// The transcript and the next distribution, as they are now.
    pub(super) async fn shown(&mut self) -> Vec<Event> {
        let mut events = vec![self.transcript()];
        events.extend(self.next().await);
        events
    }

    pub(super) async fn reset(&mut self) -> Vec<Event> {
        let (Some(g), Some(engine)) = (&mut self.gen, &mut self.engine) else {
            return vec![err("no prompt has been run yet")];
        };
        if let Err(e) = g.reset(&mut *engine) {
            return vec![err(e)];
        }
        self.timings.forward_ms.clear();
        self.timings.chain_ms.clear();
        self.shown().await
    }

    /// A link's state: prompt, settings, and `steps` tokens replayed (same seed, same coins,
    /// same tokens).
    pub(super) async fn restore(
        &mut self,
        prompt: String,
        settings: Settings,
        steps: u32,
        host: &dyn Host,
    ) -> Vec<Event> {
        self.settings = match self.for_model(settings) {
            Ok(s) => s,
            Err(e) => return vec![err(e)],
        };
        // A link holds no chat: its prompt is the text as typed.
        let mut events = self.set_prompt(prompt, false, host).await;
        if events
            .iter()
            .any(|e| matches!(e, Event::Model(ModelEvent::Error { .. })))
        {
            return events;
        }
        // A beam link's steps are the tree's levels (the transcript mirrors the best beam).
        if self.is_beam() {
            events.extend(self.beam_to(steps as usize).await);
        } else if steps > 0 {
            events = self.step(steps, host).await;
        }
        events
    }

    /// Whether the settings choose beam search.
    pub(super) fn is_beam(&self) -> bool {
        self.settings.is_beam()
    }
}

/// Greedy decode steps from `token` on a scratch sequence for `ms` of wall time (at most a
/// context's worth), then the sequence is freed: nothing of it is kept or shown. Returns the
/// steps run.
///
/// Why: a fresh page runs its wasm as V8's baseline code until V8 has compiled the hot
/// functions again with its optimising compiler, in the background and only after they have
/// done enough work. In Chromium the first stories260K tokens of a fresh page took far longer
/// than the same number after them, and the page's first run fell inside that
/// (BENCHMARKS.md, "Figures behind the code"). The scratch cache is freed before the
/// transcript's own is made, which takes its place, so the page's peak memory does not grow
/// (the 15M file's engine memory read the same with and without). llama.cpp's
/// `common_init_from_params` (common/common.cpp) likewise decodes a warm-up batch after
/// loading ("warming up the model with an empty run", `--no-warmup`).
pub(super) async fn warm_up(
    engine: &mut dyn Backend,
    host: &dyn Host,
    ms: f64,
    token: u32,
) -> usize {
    let Ok(seq) = engine.new_sequence() else {
        return 0;
    };
    let t0 = host.now();
    let mut token = token;
    let mut ran = 0;
    for _ in 0..engine.config().seq_len {
        if host.now() - t0 >= ms {
            break;
        }
        match engine.forward(seq, &[token], false).await {
            Ok(logits) => {
                token = decoding_engine::kernels::logprob::argmax(&logits) as u32;
                ran += 1;
            }
            Err(_) => break,
        }
    }
    engine.release(seq);
    ran
}

/// Appends a time, keeping the last `TIMINGS_KEPT`.
fn push_kept(times: &mut Vec<f64>, ms: f64) {
    times.push(ms);
    if times.len() > TIMINGS_KEPT {
        times.drain(..times.len() - TIMINGS_KEPT);
    }
}

impl Core {
    /// The transcript's requests.
    pub(super) async fn transcript_request(
        &mut self,
        r: TranscriptRequest,
        host: &dyn Host,
    ) -> Vec<Event> {
        match r {
            TranscriptRequest::SetPrompt { prompt, chat } => {
                self.set_prompt(prompt, chat, host).await
            }
            TranscriptRequest::SetSettings { settings } => self.set_settings(settings).await,
            TranscriptRequest::Step { count } => self.step(count, host).await,
            TranscriptRequest::Rewind => self.rewind().await,
            TranscriptRequest::Reset => self.reset().await,
            TranscriptRequest::Restore {
                prompt,
                settings,
                steps,
            } => self.restore(prompt, settings, steps, host).await,
            // A cancel stops a running step from outside the queue (the glue); queued, it
            // has nothing to stop.
            TranscriptRequest::Cancel => vec![],
        }
    }
}
