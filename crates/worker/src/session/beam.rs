//! Beam search in the page: the tree grown one step at a time on forked caches, beside
//! greedy decoding and its log-probability.

use super::base::Beam;
use super::base::{err, Core};
use decoding_engine::decode::beam::{BeamConfig, BeamNode, BeamSearch};
use decoding_engine::decode::generation::{Generation, GenerationError};
use decoding_engine::decode::sampling::Settings;
use decoding_engine::kernels::logprob::log_softmax_at;
use decoding_engine::Backend;
use decoding_page::protocol::*;

impl Core {
    fn beam_config(&self) -> BeamConfig {
        // Before beam search is chosen the panel previews a width-3 search.
        BeamConfig::from_settings(&self.settings, (3, 1.0, true, 3))
    }

    /// A new search from the prompt (on its own sequences, beside the transcript), with
    /// greedy beside it for the comparison.
    async fn start_search(&mut self) -> Result<(), Event> {
        let config = self.beam_config();
        let constraint = self
            .beam_constraint()
            .map_err(|e| err(format!("the constraint: {e}")))?;
        let spec = constraint.as_ref().map(|c| c.spec().clone());
        let (Some(m), Some(engine), Some(g)) = (&self.model, &mut self.engine, &self.gen) else {
            return Err(err("no prompt has been run yet"));
        };
        if let Some(old) = self.beam.take() {
            old.greedy.release(&mut *engine);
        }
        let prompt = g.prompt().to_vec();
        let be = &mut *engine;
        let started = async {
            let seq = be.new_sequence()?;
            let logits = be.forward(seq, &prompt, false).await?;
            let mut search = BeamSearch::new(
                config,
                seq,
                prompt.len(),
                be.config().seq_len,
                logits,
                vec![m.tokenizer.eos, m.tokenizer.bos],
            );
            if let Some(c) = constraint {
                search.constrain(c);
            }
            let greedy =
                Generation::start(be, prompt.clone(), vec![m.tokenizer.eos, m.tokenizer.bos])
                    .await
                    .map_err(|e| match e {
                        GenerationError::Backend(b) => b,
                        other => decoding_engine::BackendError::Gpu(other.to_string()),
                    })?;
            Ok::<_, decoding_engine::BackendError>(Beam {
                search,
                greedy,
                greedy_cum: Vec::new(),
                sent: Vec::new(),
                constraint: spec,
            })
        }
        .await;
        self.beam = Some(started.map_err(err)?);
        Ok(())
    }

    /// One level more, and greedy one token further.
    async fn grow(&mut self) -> Result<(), Event> {
        let (Some(m), Some(engine), Some(b)) = (&self.model, &mut self.engine, &mut self.beam)
        else {
            return Err(err("no beam search is running"));
        };
        b.search.step(&mut *engine).await.map_err(err)?;
        let greedy_settings = Settings {
            max_tokens: usize::MAX,
            strategy: decoding_engine::decode::sampling::Strategy::Greedy,
            ..Settings::default()
        };
        if b.greedy.steps().len() < b.search.depth() {
            let i = b.greedy.steps().len();
            b.greedy
                .step(&mut *engine, &greedy_settings, &m.tokenizer)
                .await
                .map_err(err)?;
            // The token's raw log-probability, added to the running total.
            if let (Some(z), Some(step)) = (b.greedy.logits_at(i), b.greedy.steps().get(i)) {
                let before = b.greedy_cum.last().copied().unwrap_or(0.0);
                b.greedy_cum
                    .push(before + log_softmax_at(z, step.token as usize));
            }
        }
        Ok(())
    }

    /// Starts a beam search from the prompt; the transcript goes back to the prompt.
    pub(super) async fn beam_start(&mut self) -> Vec<Event> {
        match self.start_search().await {
            Ok(()) => self.beam_events().await,
            Err(e) => vec![e],
        }
    }

    pub(super) async fn beam_step(&mut self) -> Vec<Event> {
        // A search started here sends its first view (the root) before the step's changes.
        let mut events = Vec::new();
        if self.beam.is_none() {
            events = self.beam_start().await;
            if events
                .iter()
                .any(|e| matches!(e, Event::Model(ModelEvent::Error { .. })))
            {
                return events;
            }
        }
        if let Err(e) = self.grow().await {
            events.push(e);
            return events;
        }
        events.extend(self.beam_events().await);
        events
    }

    /// A new search grown to `depth` levels (or until it is done), sent as one whole tree:
    /// a link's beam steps, a rewind (the search is deterministic, so growing it again to
    /// one level less is the tree as it was), new beam parameters at the same depth.
    pub(super) async fn beam_to(&mut self, depth: usize) -> Vec<Event> {
        if let Err(e) = self.start_search().await {
            return vec![e];
        }
        while self
            .beam
            .as_ref()
            .is_some_and(|b| b.search.depth() < depth && !b.search.is_done())
        {
            if let Err(e) = self.grow().await {
                return vec![e];
            }
        }
        self.beam_events().await
    }

    /// Rewind in beam search: the tree one level back (the transcript follows its best beam).
    pub(super) async fn beam_rewind(&mut self) -> Vec<Event> {
        match self.beam.as_ref().map(|b| b.search.depth()) {
            Some(d) if d > 0 => self.beam_to(d - 1).await,
            _ => vec![err("nothing to rewind: the beam search is at the prompt")],
        }
    }

    /// Whether the running search was started with other beam parameters than the settings'.
    pub(super) fn beam_outdated(&self) -> bool {
        self.beam.as_ref().is_some_and(|b| {
            b.search.config() != self.beam_config()
                || b.constraint
                    != decoding_engine::decode::sampling::stages::constraint::spec(&self.settings)
        })
    }

    /// The search's view, then the transcript mirroring its best beam.
    async fn beam_events(&mut self) -> Vec<Event> {
        let mut events = self.beam_view().await;
        events.extend(self.mirror_best().await);
        events
    }

    /// The best beam, mirrored in the transcript (the chips and the next-token chart follow
    /// it): the transcript rewinds to where it and the best prefix part (a cache truncation)
    /// and the rest of the prefix is forced token by token.
    async fn mirror_best(&mut self) -> Vec<Event> {
        let (Some(m), Some(engine), Some(b), Some(g)) =
            (&self.model, &mut self.engine, &self.beam, &mut self.gen)
        else {
            return vec![];
        };
        let best = b
            .search
            .best_at_depth()
            .map(|n| b.search.path(n.id))
            .unwrap_or_default();
        let have = g.generated_ids();
        let common = have.iter().zip(&best).take_while(|(a, b)| a == b).count();
        for _ in common..have.len() {
            if let Err(e) = g.rewind(&mut *engine) {
                return vec![err(e)];
            }
        }
        for &t in &best[common..] {
            if let Err(e) = g.force(&mut *engine, &self.settings, &m.tokenizer, t).await {
                return vec![err(e)];
            }
        }
        self.shown().await
    }

    /// What changed in the search since the last view: the nodes that are new or whose
    /// status changed (the page keeps the tree), the best prefix and greedy's running total.
    async fn beam_view(&mut self) -> Vec<Event> {
        let width = self.beam_config().width;
        let (Some(m), Some(b)) = (&self.model, &mut self.beam) else {
            return vec![];
        };
        let prompt = b.greedy.prompt().to_vec();
        let text = |toks: &[u32]| {
            let mut all = prompt.clone();
            all.extend_from_slice(toks);
            m.tokenizer.decode(&all).unwrap_or_default()
        };
        let greedy_tokens = b.greedy.generated_ids();
        let nodes = b.search.nodes();
        let reset = b.sent.is_empty();
        let base = b.sent.len();
        let changed: Vec<BeamNode> = nodes
            .iter()
            .filter(|n| b.sent.get(n.id) != Some(&n.status))
            .cloned()
            .collect();
        b.sent = nodes.iter().map(|n| n.status).collect();
        let depth = b.search.depth();
        let best = b.search.best_at_depth();
        let best_node = best.map(|n| n.id);
        let (best_logprob, best_text) = best.map_or((0.0, String::new()), |n| {
            (n.cum_logprob, text(&b.search.path(n.id)))
        });
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
        vec![Event::Beam(BeamEvent::Beam {
            view: BeamView {
                width,
                done: b.search.is_done(),
                depth,
                reset,
                base,
                node_count: nodes.len(),
                changed,
                finished,
                greedy_text: text(&greedy_tokens),
                greedy_tokens,
                greedy_logprob: b.greedy_cum.last().copied().unwrap_or(0.0),
                greedy_cum: b.greedy_cum.clone(),
                best_logprob,
                best_text,
                best_node,
            },
        })]
    }
}

impl Core {
    /// The beam panel's requests.
    pub(super) async fn beam_request(&mut self, r: BeamRequest) -> Vec<Event> {
        match r {
            BeamRequest::BeamStart => self.beam_start().await,
            BeamRequest::BeamStep => self.beam_step().await,
            BeamRequest::BeamTo { depth } => self.beam_to(depth as usize).await,
        }
    }
}
