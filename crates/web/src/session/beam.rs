//! Beam search in the page: the tree grown one step at a time on forked caches, beside
//! greedy decoding and its log-probability.

use super::Beam;
use super::{err, Session};
use crate::protocol::*;
use decoding_engine::beam::{BeamConfig, BeamNode, BeamSearch};
use decoding_engine::generation::{Generation, GenerationError};
use decoding_engine::sampling::stages::log_softmax;
use decoding_engine::sampling::Settings;
use decoding_engine::Backend;

impl Session {
    fn beam_config(&self) -> BeamConfig {
        // Before beam search is chosen the panel previews a width-3 search.
        BeamConfig::from_settings(&self.settings, (3, 1.0, true, 3))
    }

    /// Starts a beam search from the prompt (on its own sequences, beside the transcript).
    pub async fn beam_start(&mut self) -> Vec<Event> {
        let config = self.beam_config();
        let (Some(m), Some(engine), Some(g)) = (&self.model, &mut self.engine, &self.gen) else {
            return vec![err("no prompt has been run yet")];
        };
        if let Some(old) = self.beam.take() {
            old.greedy.release(&mut *engine);
        }
        let prompt = g.prompt().to_vec();
        let be = &mut *engine;
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
            Ok::<_, decoding_engine::BackendError>(Beam {
                search,
                greedy,
                greedy_logprob: 0.0,
                sent: Vec::new(),
            })
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
        // A search started here sends its first view (the root) before the step's changes.
        let mut events = Vec::new();
        if self.beam.is_none() {
            events = self.beam_start().await;
            if events.iter().any(|e| matches!(e, Event::Error { .. })) {
                return events;
            }
        }
        let (Some(m), Some(engine), Some(b)) = (&self.model, &mut self.engine, &mut self.beam)
        else {
            return vec![err("no beam search is running")];
        };
        if let Err(e) = b.search.step(&mut *engine).await {
            return vec![err(e)];
        }
        // Greedy, one token further, for the comparison.
        let greedy_settings = Settings {
            temperature: 0.0,
            max_tokens: usize::MAX,
            ..Settings::default()
        };
        if b.greedy.steps().len() < b.search.depth() {
            let i = b.greedy.steps().len();
            if let Err(e) = b
                .greedy
                .step(&mut *engine, &greedy_settings, &m.tokenizer)
                .await
            {
                return vec![err(e)];
            }
            // The token's raw log-probability, added to the running total.
            if let (Some(z), Some(step)) = (b.greedy.logits_at(i), b.greedy.steps().get(i)) {
                b.greedy_logprob += log_softmax(z)[step.token as usize];
            }
        }
        events.extend(self.beam_view().await);
        events
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
        let (best_logprob, best_text) =
            b.search.best_at_depth().map_or((0.0, String::new()), |n| {
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
        vec![Event::Beam {
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
                greedy_logprob: b.greedy_logprob,
                best_logprob,
                best_text,
            },
        }]
    }
}
