//! Beam search in the page: the tree grown one step at a time on forked caches, beside
//! greedy decoding and its log-probability.

use super::Beam;
use super::{err, Session};
use crate::protocol::*;
use decoding_engine::beam::{score_continuation, BeamConfig, BeamSearch};
use decoding_engine::generation::{Generation, GenerationError};
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
            if let Err(e) = b
                .greedy
                .step(&mut *engine, &greedy_settings, &m.tokenizer)
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
        let greedy_logprob = match score_continuation(&mut *engine, &prompt, &greedy_tokens).await {
            Ok((_, lp)) => lp,
            Err(e) => return vec![err(e)],
        };
        let nodes = b.search.nodes().to_vec();
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
}
