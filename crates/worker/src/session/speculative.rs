//! Speculative decoding in the page (lesson 10, section 5): a run from the transcript's
//! prompt on its own sequence of the running backend, cycle by cycle, with every drafted
//! position's p and q, the acceptance statistics against (1 − α^(γ+1)) / (1 − α), and its
//! wall-clock speed against plain decoding measured on the same backend.

use super::base::{err, Core, Host};
use decoding_engine::decode::sampling::{process, step_coin, History};
use decoding_engine::decode::speculative::{
    expected_tokens_per_cycle, Checked, Cycle, Draft, NextKind, Rule, Speculator,
};
use decoding_engine::Backend;
use decoding_page::protocol::*;

/// Bars drawn at each drafted position.
const BARS: usize = 8;
/// Plain decode steps timed for the comparison.
const PLAIN_STEPS: usize = 8;

pub(super) struct SpecRun {
    speculator: Speculator,
    cycles: Vec<Cycle>,
    /// what each emitted token was, its cycle, and the draft it replaced
    kinds: Vec<(SpecTokenKind, usize, Option<u32>)>,
    draft: Draft,
    rule: Rule,
    spent_ms: f64,
    plain_ms: f64,
    /// the knobs at Start: the run (and a link replaying it) keeps them
    settings: decoding_engine::decode::sampling::Settings,
}

fn kind(k: NextKind) -> SpecTokenKind {
    match k {
        NextKind::Resampled => SpecTokenKind::Resampled,
        NextKind::Target => SpecTokenKind::Target,
        NextKind::Bonus => SpecTokenKind::Bonus,
    }
}

impl Core {
    /// Plain decoding's wall time per token on this backend: `PLAIN_STEPS` decode steps with
    /// the chain after the prompt, on a scratch sequence.
    async fn plain_ms(&mut self, prompt: &[u32], host: &dyn Host) -> Result<f64, Event> {
        // Plain decoding's step without a constraint's mask (the matcher is the worker's
        // transcript's; its time is the constraint panel's).
        let settings =
            decoding_engine::decode::sampling::stages::constraint::without(&self.settings);
        let engine = self
            .engine
            .as_mut()
            .ok_or_else(|| err("no model is loaded yet"))?;
        let steps = PLAIN_STEPS.min(engine.config().seq_len.saturating_sub(prompt.len() + 1));
        let seq = engine.new_sequence().map_err(err)?;
        let mut logits = engine.forward(seq, prompt, false).await.map_err(err)?;
        let mut generated = Vec::new();
        let t0 = host.now();
        for i in 0..steps {
            let h = History {
                prompt,
                generated: &generated,
                ..History::default()
            };
            let t = process(
                &settings,
                &logits,
                h,
                step_coin(settings.seed, i as u64),
                false,
            )
            .map_err(err)?;
            generated.push(t.token);
            logits = engine.forward(seq, &[t.token], false).await.map_err(err)?;
        }
        let ms = (host.now() - t0) / steps.max(1) as f64;
        engine.release(seq);
        Ok(ms)
    }

    async fn spec_start(
        &mut self,
        spec: &mut Option<SpecRun>,
        draft: Draft,
        gamma: u32,
        rule: Rule,
        host: &dyn Host,
    ) -> Vec<Event> {
        let (Some(m), Some(g)) = (&self.model, &self.gen) else {
            return vec![err("no prompt has been run yet")];
        };
        let (d, r) = match draft.fits(m.config().n_layers) {
            Ok(d) => (d, rule),
            Err(e) => return vec![err(e)],
        };
        let prompt = g.prompt().to_vec();
        let model = m.transformer.clone();
        if let (Some(old), Some(engine)) = (spec.take(), self.engine.as_mut()) {
            old.speculator.release(engine);
        }
        let plain_ms = match self.plain_ms(&prompt, host).await {
            Ok(ms) => ms,
            Err(e) => return vec![e],
        };
        // Under a constraint the target's verification masks each position (the draft
        // proposes freely): the compiled constraint from the prompt's end.
        let constraint = match self.beam_constraint() {
            Ok(c) => c,
            Err(e) => return vec![err(format!("the constraint: {e}"))],
        };
        let Some(engine) = self.engine.as_mut() else {
            return vec![err("no model is loaded yet")];
        };
        let started = Speculator::start(engine, &model, prompt, d, gamma as usize, r).await;
        let mut speculator = match started {
            Ok(s) => s,
            Err(e) => return vec![err(e)],
        };
        speculator.constrain(constraint);
        *spec = Some(SpecRun {
            speculator,
            cycles: Vec::new(),
            kinds: Vec::new(),
            draft: d,
            rule: r,
            // The cycles' time only (the prompt's prefill and building the draft are once).
            spent_ms: 0.0,
            plain_ms,
            settings: self.settings.clone(),
        });
        self.spec_view(spec).into_iter().collect()
    }

    async fn spec_cycle(
        &mut self,
        spec: &mut Option<SpecRun>,
        count: u32,
        host: &dyn Host,
    ) -> Vec<Event> {
        host.clear_cancel();
        let (Some(run), Some(engine)) = (spec.as_mut(), self.engine.as_mut()) else {
            return vec![err("start a speculative run first")];
        };
        let settings = run.settings.clone();
        let seq_len = engine.config().seq_len;
        for _ in 0..count {
            let sp = &run.speculator;
            let room = seq_len.saturating_sub(sp.prompt().len() + sp.emitted().len());
            if room == 0 || run.speculator.emitted().len() >= settings.max_tokens {
                break;
            }
            let left = settings.max_tokens - run.speculator.emitted().len();
            let t0 = host.now();
            let c = match run.speculator.cycle(engine, &settings, left).await {
                Ok(c) => c,
                Err(e) => return vec![err(e)],
            };
            run.spent_ms += host.now() - t0;
            let i = run.cycles.len();
            run.kinds
                .extend((0..c.accepted).map(|_| (SpecTokenKind::Accepted, i, None)));
            let rejected = c.drafted.get(c.accepted).copied();
            run.kinds.push((kind(c.next_kind), i, rejected));
            run.cycles.push(c);
            if host.cancelled() {
                break;
            }
            host.yield_now().await;
        }
        self.spec_view(spec).into_iter().collect()
    }

    fn spec_view(&self, spec: &Option<SpecRun>) -> Option<Event> {
        let (run, m) = (spec.as_ref()?, self.model.as_ref()?);
        let piece = |id: u32| m.tokenizer.piece(id).unwrap_or("?").to_string();
        let tok = |id: u32| PromptToken {
            id,
            piece: piece(id),
        };
        let sp = &run.speculator;
        let last = run.cycles.last().map(|c| cycle_view(run, c, &piece));
        let overlaps: Vec<f64> = run
            .cycles
            .iter()
            .flat_map(|c| c.checked.iter().map(|k| k.overlap))
            .collect();
        let alpha = overlaps.iter().sum::<f64>() / overlaps.len().max(1) as f64;
        let st = &sp.stats;
        let emitted = sp.emitted();
        Some(Event::Spec(SpecEvent::Spec {
            view: SpecView {
                draft: run.draft,
                gamma: sp.gamma,
                rule: run.rule,
                greedy: run.settings.is_greedy(),
                prompt: sp.prompt().iter().map(|&t| tok(t)).collect(),
                tokens: emitted
                    .iter()
                    .zip(&run.kinds)
                    .map(|(&id, &(kind, cycle, rejected))| SpecToken {
                        id,
                        piece: piece(id),
                        kind,
                        cycle,
                        rejected: rejected.map(piece),
                    })
                    .collect(),
                last,
                cycles: st.cycles,
                target_calls: st.target_calls,
                drafted: st.drafted,
                accepted: st.accepted,
                alpha,
                tokens_per_call: st.tokens_per_cycle(),
                formula: expected_tokens_per_cycle(alpha, sp.gamma),
                spec_ms_per_token: run.spent_ms / emitted.len().max(1) as f64,
                plain_ms_per_token: run.plain_ms,
            },
        }))
    }
}

/// The run's last cycle, `c`: what was drafted and accepted, and each checked position.
fn cycle_view(run: &SpecRun, c: &Cycle, piece: &impl Fn(u32) -> String) -> SpecCycleView {
    let tok = |id: u32| PromptToken {
        id,
        piece: piece(id),
    };
    let positions = c
        .checked
        .iter()
        .enumerate()
        .map(|(i, k)| position_view(&run.speculator, i, k, piece))
        .collect();
    SpecCycleView {
        index: run.cycles.len() - 1,
        drafted: c.drafted.iter().map(|&t| tok(t)).collect(),
        accepted: c.accepted,
        next: tok(c.next),
        next_kind: kind(c.next_kind),
        positions,
    }
}

/// The `i`th checked position of the last cycle, with bars for its most likely tokens under
/// p or q (the drafted token always among them).
fn position_view(
    sp: &Speculator,
    i: usize,
    k: &Checked,
    piece: &impl Fn(u32) -> String,
) -> SpecPosition {
    let p = &sp.last_p[i];
    let q = sp.last_q.get(i).and_then(Option::as_ref);
    let score = |t: usize| p[t].max(q.map_or(0.0, |q| q[t]));
    let mut ids: Vec<usize> = (0..p.len()).collect();
    ids.sort_by(|&a, &b| score(b).total_cmp(&score(a)));
    ids.truncate(BARS);
    if !ids.contains(&(k.token as usize)) {
        ids.pop();
        ids.push(k.token as usize);
    }
    SpecPosition {
        token: k.token,
        piece: piece(k.token),
        p: k.p,
        q: k.q,
        accept_probability: k.accept_probability,
        overlap: k.overlap,
        accepted: k.accepted,
        forbidden: k.forbidden,
        bars: ids
            .into_iter()
            .map(|t| SpecBar {
                id: t as u32,
                piece: piece(t as u32),
                p: p[t],
                q: q.map(|q| q[t]),
            })
            .collect(),
    }
}

impl Core {
    /// The speculative panel's requests.
    pub(super) async fn spec_request(
        &mut self,
        spec: &mut Option<SpecRun>,
        r: SpecRequest,
        host: &dyn Host,
    ) -> Vec<Event> {
        match r {
            SpecRequest::SpecStart { draft, gamma, rule } => {
                self.spec_start(spec, draft, gamma, rule, host).await
            }
            SpecRequest::SpecCycle { count } => self.spec_cycle(spec, count, host).await,
        }
    }
}
