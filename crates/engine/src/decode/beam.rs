//! Beam search (lesson 10, section 2: keep the k highest-log-probability prefixes, expand,
//! prune to k), with Hugging Face's rules: each step ranks the top 2k continuations of all
//! beams by cumulative log-probability; an end token among the first k closes a hypothesis
//! scored sum_logprobs / length^length_penalty; the first k others become the next beams;
//! the rest are pruned. It records the whole tree (every expanded prefix with its parent and
//! cumulative log-probability, pruned branches, finished hypotheses) so the page can draw it.
//!
//! Beams share the prompt's KV cache: a beam with several children is forked (the backend
//! copies the cache) as they diverge, never re-run from the prompt.

use crate::backend::{Backend, BackendError};
use crate::decode::constraint::{Allowed, Constraint};
use crate::decode::sampling::{Settings, Strategy};
use crate::forward::batch::SeqId;
use crate::forward::batch::{Batch, Logits};
use crate::kernels::logprob::log_softmax;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BeamConfig {
    pub width: usize,
    pub length_penalty: f64,
    pub early_stopping: bool,
    pub num_return: usize,
    pub max_tokens: usize,
}

impl BeamConfig {
    /// The search the settings describe: their beam strategy's parameters (or, when the
    /// strategy is not beam search, `fallback` as (width, length penalty, early stopping,
    /// sequences returned)) and their max tokens.
    pub fn from_settings(s: &Settings, fallback: (usize, f64, bool, usize)) -> BeamConfig {
        let (width, length_penalty, early_stopping, num_return) = match s.strategy {
            Strategy::Beam {
                width,
                length_penalty,
                early_stopping,
                num_return,
            } => (width, length_penalty, early_stopping, num_return),
            _ => fallback,
        };
        BeamConfig {
            width,
            length_penalty,
            early_stopping,
            num_return,
            max_tokens: s.max_tokens,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// The prompt.
    Root,
    /// A live beam (it may have children later).
    Beam,
    /// Ranked outside the beam: not expanded further.
    Pruned,
    /// An end token closed this hypothesis.
    Finished,
    /// A beam still open when the search stopped (max tokens or context full), kept as a
    /// hypothesis as Hugging Face's `finalize` does.
    Unfinished,
}

/// One prefix in the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeamNode {
    pub id: usize,
    pub parent: Option<usize>,
    /// The token this node appends to its parent (None for the root).
    pub token: Option<u32>,
    /// log p(token | parent prefix).
    pub logprob: f64,
    /// Σ log p over the generated tokens of this prefix.
    pub cum_logprob: f64,
    /// Generated tokens in this prefix.
    pub depth: usize,
    pub status: NodeStatus,
}

/// The ids from node `id` up to the root, the node first: the one walk up the tree (the
/// search's prefixes, the page's best path, the exported tree's). Nodes are listed as the
/// search grows them, each after its parent; an id outside the list gives none, and a parent
/// that does not come before its child ends the walk, so a malformed list cannot loop.
pub fn ancestry(nodes: &[BeamNode], id: usize) -> Vec<usize> {
    let mut ids = Vec::new();
    let mut at = Some(id).filter(|&i| i < nodes.len());
    while let Some(i) = at {
        ids.push(i);
        at = nodes[i].parent.filter(|&p| p < i);
    }
    ids
}

/// A finished sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hypothesis {
    pub tokens: Vec<u32>,
    pub sum_logprob: f64,
    /// sum_logprob / len^length_penalty.
    pub score: f64,
    /// Its last node in the tree.
    pub node: usize,
    /// Ended by an end token (false: cut by max tokens or the context).
    pub ended: bool,
}

struct Live {
    node: usize,
    seq: SeqId,
    tokens: Vec<u32>,
    cum: f64,
    /// Logits after this prefix (None until the beam's last token has been run).
    logits: Vec<f32>,
    /// The constraint following this beam's tokens (each beam its own copy).
    constraint: Option<Constraint>,
}

/// A beam search in progress; `step` grows it by one token.
pub struct BeamSearch {
    config: BeamConfig,
    end_tokens: Vec<u32>,
    nodes: Vec<BeamNode>,
    live: Vec<Live>,
    finished: Vec<Hypothesis>,
    done: bool,
    prompt_len: usize,
    seq_len: usize,
}

fn score(sum: f64, len: usize, length_penalty: f64) -> f64 {
    sum / (len.max(1) as f64).powf(length_penalty)
}

impl BeamSearch {
    /// Starts from a sequence holding the prompt and the logits after it. The search owns
    /// `seq` from here on (it forks and releases it).
    pub fn new(
        config: BeamConfig,
        seq: SeqId,
        prompt_len: usize,
        seq_len: usize,
        logits: Vec<f32>,
        end_tokens: Vec<u32>,
    ) -> BeamSearch {
        BeamSearch {
            config,
            end_tokens,
            nodes: vec![BeamNode {
                id: 0,
                parent: None,
                token: None,
                logprob: 0.0,
                cum_logprob: 0.0,
                depth: 0,
                status: NodeStatus::Root,
            }],
            live: vec![Live {
                node: 0,
                seq,
                tokens: Vec::new(),
                cum: 0.0,
                logits,
                constraint: None,
            }],
            finished: Vec::new(),
            done: false,
            prompt_len,
            seq_len,
        }
    }

    /// Searches under `constraint` (from the prompt's end): each beam's candidates are the
    /// tokens it allows, ranked by the model's own log-probabilities (Hugging Face's beam
    /// search masks `next_token_scores` with its logits processors likewise, unrenormalised).
    pub fn constrain(&mut self, constraint: Constraint) {
        if let Some(root) = self.live.first_mut() {
            root.constraint = Some(constraint);
        }
    }

    /// The parameters it runs with.
    pub fn config(&self) -> BeamConfig {
        self.config
    }

    pub fn nodes(&self) -> &[BeamNode] {
        &self.nodes
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Finished hypotheses, best score first.
    pub fn finished(&self) -> &[Hypothesis] {
        &self.finished
    }

    /// Steps taken: the deepest level of the tree (nodes are added level by level), which is
    /// the live beams' length while the search runs and stays the last level once it is done.
    pub fn depth(&self) -> usize {
        self.nodes.last().map_or(0, |n| n.depth)
    }

    /// The best prefix at the current depth: the live beam or hypothesis finished there
    /// with the highest cumulative log-probability (None before the first step).
    pub fn best_at_depth(&self) -> Option<&BeamNode> {
        let depth = self.depth();
        self.nodes
            .iter()
            .filter(|n| n.depth == depth && n.depth > 0)
            .filter(|n| !matches!(n.status, NodeStatus::Pruned))
            .max_by(|a, c| a.cum_logprob.total_cmp(&c.cum_logprob))
    }

    /// The tokens from the root to node `id` (its prefix); an unknown id gives none.
    pub fn path(&self, id: usize) -> Vec<u32> {
        let mut toks: Vec<u32> = ancestry(&self.nodes, id)
            .into_iter()
            .filter_map(|i| self.nodes[i].token)
            .collect();
        toks.reverse();
        toks
    }

    fn add_finished(&mut self, h: Hypothesis) {
        self.finished.push(h);
        self.finished
            .sort_by(|a, b| b.score.total_cmp(&a.score).then(a.node.cmp(&b.node)));
        // Hugging Face keeps the best `num_beams` hypotheses.
        self.finished.truncate(self.config.width);
    }

    /// Hugging Face `BeamHypotheses.is_done`: enough hypotheses, and (unless early stopping)
    /// the best live beam can no longer beat the worst kept hypothesis.
    fn check_done(&self) -> bool {
        if self.finished.len() < self.config.width {
            return false;
        }
        if self.config.early_stopping {
            return true;
        }
        let worst = self.finished.last().map_or(f64::NEG_INFINITY, |h| h.score);
        let best_live = self
            .live
            .iter()
            .map(|l| score(l.cum, l.tokens.len().max(1), self.config.length_penalty))
            .fold(f64::NEG_INFINITY, f64::max);
        worst >= best_live
    }

    /// Expands every live beam by one token. Returns true when the search is over.
    pub async fn step(&mut self, backend: &mut dyn Backend) -> Result<bool, BackendError> {
        if self.done {
            return Ok(true);
        }
        let depth = self.depth();
        if depth >= self.config.max_tokens || self.prompt_len + depth >= self.seq_len {
            self.finalize(backend);
            return Ok(true);
        }
        let masks = self
            .live
            .iter_mut()
            .map(|l| l.constraint.as_mut().map(Constraint::allowed).transpose())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BackendError::Constraint(e.to_string()))?;
        let cands = self.candidates(&masks);
        let next = self.record(&cands, depth);
        self.live = self.fork_live(backend, &next)?;
        if self.live.is_empty() || self.check_done() {
            self.finalize(backend);
            return Ok(true);
        }
        // Every live beam's new token in one forward pass: a batch of one row per beam.
        let mut batch = Batch::new();
        for l in &self.live {
            let token = *l.tokens.last().unwrap_or(&0);
            batch.extend(l.seq, self.prompt_len + depth, &[token], Logits::Last);
        }
        let logits = backend.forward_batch(batch).await?;
        let v = logits.len() / self.live.len();
        for (l, row) in self.live.iter_mut().zip(logits.chunks(v)) {
            l.logits = row.to_vec();
        }
        Ok(false)
    }

    /// The top 2k continuations of each beam, then of all beams together:
    /// (beam, token, log p, cumulative log p), best first.
    fn candidates(&self, masks: &[Option<Allowed>]) -> Vec<(usize, u32, f64, f64)> {
        let k = self.config.width;
        let mut cands = Vec::new();
        for (b, l) in self.live.iter().enumerate() {
            let lp = log_softmax(&l.logits);
            let mut ids: Vec<usize> = match &masks[b] {
                Some(a) => (0..lp.len()).filter(|&i| a.allows(i)).collect(),
                None => (0..lp.len()).collect(),
            };
            if ids.is_empty() {
                continue;
            }
            let take = (2 * k).min(ids.len());
            ids.select_nth_unstable_by(take - 1, |&i, &j| lp[j].total_cmp(&lp[i]).then(i.cmp(&j)));
            for &i in &ids[..take] {
                cands.push((b, i as u32, lp[i], l.cum + lp[i]));
            }
        }
        cands.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        cands.truncate(2 * k);
        cands
    }

    /// Adds the candidates to the tree (Hugging Face's rules: an end token ranked in the
    /// first k finishes a hypothesis, the first k others become beams, the rest are pruned).
    /// Returns the next beams: (parent beam, token, cumulative log p, node).
    fn record(
        &mut self,
        cands: &[(usize, u32, f64, f64)],
        depth: usize,
    ) -> Vec<(usize, u32, f64, usize)> {
        let k = self.config.width;
        let mut next = Vec::new();
        for (rank, &(b, token, lp, cum)) in cands.iter().enumerate() {
            let parent = &self.live[b];
            let id = self.nodes.len();
            let status = if self.end_tokens.contains(&token) {
                if rank < k {
                    NodeStatus::Finished
                } else {
                    NodeStatus::Pruned
                }
            } else if next.len() < k {
                NodeStatus::Beam
            } else {
                NodeStatus::Pruned
            };
            self.nodes.push(BeamNode {
                id,
                parent: Some(parent.node),
                token: Some(token),
                logprob: lp,
                cum_logprob: cum,
                depth: depth + 1,
                status,
            });
            match status {
                NodeStatus::Finished => {
                    let mut tokens = parent.tokens.clone();
                    tokens.push(token);
                    let h = Hypothesis {
                        score: score(cum, tokens.len(), self.config.length_penalty),
                        tokens,
                        sum_logprob: cum,
                        node: id,
                        ended: true,
                    };
                    self.add_finished(h);
                }
                NodeStatus::Beam => next.push((b, token, cum, id)),
                _ => {}
            }
        }
        next
    }

    /// The next live beams with their caches: a parent's first child takes its sequence,
    /// later children fork it (the backend copies the cache); parents without children
    /// are released.
    fn fork_live(
        &mut self,
        backend: &mut dyn Backend,
        next: &[(usize, u32, f64, usize)],
    ) -> Result<Vec<Live>, BackendError> {
        let mut used = vec![false; self.live.len()];
        let mut new_live = Vec::with_capacity(next.len());
        for &(b, token, cum, node) in next {
            let seq = if used[b] {
                backend.fork(self.live[b].seq)?
            } else {
                used[b] = true;
                self.live[b].seq
            };
            let mut tokens = self.live[b].tokens.clone();
            tokens.push(token);
            let mut constraint = self.live[b].constraint.clone();
            if let Some(c) = &mut constraint {
                c.advance(token)
                    .map_err(|e| BackendError::Constraint(e.to_string()))?;
            }
            new_live.push(Live {
                node,
                seq,
                tokens,
                cum,
                logits: Vec::new(),
                constraint,
            });
        }
        for (b, l) in self.live.iter().enumerate() {
            if !used[b] {
                backend.release(l.seq);
            }
        }
        Ok(new_live)
    }

    /// Ends the search: open beams become hypotheses (Hugging Face `finalize`), caches freed.
    pub fn finalize(&mut self, backend: &mut dyn Backend) {
        if self.done {
            return;
        }
        let live = std::mem::take(&mut self.live);
        for l in &live {
            if l.node != 0 {
                self.nodes[l.node].status = NodeStatus::Unfinished;
                let h = Hypothesis {
                    tokens: l.tokens.clone(),
                    sum_logprob: l.cum,
                    score: score(l.cum, l.tokens.len(), self.config.length_penalty),
                    node: l.node,
                    ended: false,
                };
                self.add_finished(h);
            }
            backend.release(l.seq);
        }
        self.done = true;
    }

    /// The best `num_return` hypotheses.
    pub fn results(&self) -> Vec<Hypothesis> {
        self.finished
            .iter()
            .take(self.config.num_return)
            .cloned()
            .collect()
    }
}

/// Runs a whole beam search from a sequence holding the prompt.
#[allow(clippy::too_many_arguments)]
pub async fn beam_search(
    backend: &mut dyn Backend,
    config: BeamConfig,
    seq: SeqId,
    prompt_len: usize,
    logits: Vec<f32>,
    end_tokens: Vec<u32>,
) -> Result<BeamSearch, BackendError> {
    let seq_len = backend.config().seq_len;
    let mut search = BeamSearch::new(config, seq, prompt_len, seq_len, logits, end_tokens);
    while !search.step(backend).await? {}
    Ok(search)
}

/// Log-probabilities of `continuation` after `prompt` under the model (one batched pass):
/// per token and their sum. Compares greedy, sampled and beam outputs on one scale.
pub async fn score_continuation(
    backend: &mut dyn Backend,
    prompt: &[u32],
    continuation: &[u32],
) -> Result<(Vec<f64>, f64), BackendError> {
    if continuation.is_empty() {
        return Ok((Vec::new(), 0.0));
    }
    let seq = backend.new_sequence()?;
    let mut input = prompt.to_vec();
    input.extend_from_slice(&continuation[..continuation.len() - 1]);
    let result = backend.forward(seq, &input, true).await;
    backend.release(seq);
    let all = result?;
    let v = backend.config().vocab_size;
    let mut lps = Vec::with_capacity(continuation.len());
    for (i, &tok) in continuation.iter().enumerate() {
        let row = prompt.len() - 1 + i;
        let lp = log_softmax(&all[row * v..(row + 1) * v]);
        lps.push(lp[tok as usize]);
    }
    let total = lps.iter().sum();
    Ok((lps, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: usize, parent: Option<usize>) -> BeamNode {
        BeamNode {
            id,
            parent,
            token: parent.map(|_| id as u32 + 100),
            logprob: 0.0,
            cum_logprob: 0.0,
            depth: 0,
            status: NodeStatus::Beam,
        }
    }

    #[test]
    fn ancestry_walks_up_to_the_root_and_never_loops() {
        // 0 ← 1 ← 3, 0 ← 2.
        let nodes = [
            node(0, None),
            node(1, Some(0)),
            node(2, Some(0)),
            node(3, Some(1)),
        ];
        assert_eq!(ancestry(&nodes, 3), [3, 1, 0]);
        assert_eq!(ancestry(&nodes, 2), [2, 0]);
        assert_eq!(ancestry(&nodes, 0), [0]);
        assert!(ancestry(&nodes, 4).is_empty());
        // A parent after its child, or itself: the walk stops there.
        let bad = [node(0, Some(1)), node(1, Some(1))];
        assert_eq!(ancestry(&bad, 1), [1]);
        assert_eq!(ancestry(&bad, 0), [0]);
    }
}
