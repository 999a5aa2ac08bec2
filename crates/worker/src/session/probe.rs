//! Inside the step (lesson 10, section 4): while the view is open the transcript's newest
//! pass runs with the probe (`decoding_engine::forward::probe`) on the running backend, and after
//! every change of the transcript the worker sends the new token's attention over the cache
//! and the raw logit lens over the last `LENS_POSITIONS` positions.
//!
//! A record the step's own pass made is used as it is. When there is none for the newest
//! position (the view opened after the step, a rewind reused stored logits, a new prompt),
//! one probed pass over the sequence on a scratch sequence of the same backend makes it:
//! a token gives the same bits alone or in a batch, so it is the step's record. Lens
//! columns are kept by position (with their token) so a decode step adds one column.

use super::base::{err, Core, Host};
use decoding_engine::backend::Backend;
use decoding_engine::forward::lens::LensCell;
use decoding_engine::forward::probe::{ProbeRecord, ProbeSpec};
use decoding_engine::{Batch, Logits, Model};
use decoding_page::protocol::*;

/// Positions the lens heatmap shows (the newest last).
pub const LENS_POSITIONS: usize = 16;
/// Tokens listed per layer at the newest position.
const LENS_TOP: usize = 5;

/// The view's state between requests.
#[derive(Default)]
pub(super) struct ProbeState {
    /// Lens columns by position: the token there and each layer's top token.
    columns: Vec<Option<(u32, Vec<LensCell>)>>,
}

/// The probe the transcript's newest pass runs with: one lens row (the new token's).
pub(super) const STEP_PROBE: ProbeSpec = ProbeSpec { lens_rows: 1 };

impl Core {
    /// The view opened or closed.
    async fn set_probe(
        &mut self,
        probe: &mut Option<ProbeState>,
        open: bool,
        host: &dyn Host,
    ) -> Vec<Event> {
        *probe = open.then(ProbeState::default);
        self.arm_probe(probe);
        if !open {
            return vec![];
        }
        self.probe_view(probe, host).await.into_iter().collect()
    }

    /// Keeps the transcript's generation probing while the view is open (a new prompt or a
    /// rebuilt transcript starts a generation without it).
    pub(super) fn arm_probe(&mut self, probe: &Option<ProbeState>) {
        let spec = probe.as_ref().map(|_| STEP_PROBE);
        if let Some(g) = self.gen.as_mut() {
            g.set_probe(spec);
        }
    }

    /// The view of the newest position in the transcript's cache.
    pub(super) async fn probe_view(
        &mut self,
        probe: &mut Option<ProbeState>,
        host: &dyn Host,
    ) -> Option<Event> {
        let t0 = host.now();
        let (Some(gen), Some(engine), Some(model)) = (&self.gen, &mut self.engine, &self.model)
        else {
            return None;
        };
        let state = probe.as_mut()?;
        let ran = gen.steps().len().min(
            engine
                .seq_len(gen.sequence())
                .ok()?
                .saturating_sub(gen.prompt().len()),
        );
        let tokens: Vec<u32> = gen
            .prompt()
            .iter()
            .copied()
            .chain(gen.steps()[..ran].iter().map(|s| s.token))
            .collect();
        let n = tokens.len();
        let window = n.saturating_sub(LENS_POSITIONS)..n;
        state.columns.truncate(n);
        state.columns.resize(n, None);
        let held = |p: usize, cols: &[Option<(u32, Vec<LensCell>)>]| matches!(&cols[p], Some((t, _)) if *t == tokens[p]);
        let from_step = gen.probed().cloned();
        let gaps = window
            .clone()
            .filter(|&p| p + 1 < n && !held(p, &state.columns));
        let first_gap = gaps.min();
        let (record, from_step) = match (from_step, first_gap) {
            (Some(r), None) => (r, true),
            _ => {
                let from = first_gap.unwrap_or(n - 1).min(n - 1);
                let spec = ProbeSpec {
                    lens_rows: n - from,
                };
                match scratch_pass(engine, &tokens, spec).await {
                    Ok(r) => (r, false),
                    Err(e) => return Some(err(format!("the probed pass failed: {e}"))),
                }
            }
        };
        let lens = model.transformer.lens(&record, LENS_TOP);
        for (i, &p) in record.lens_positions.iter().enumerate() {
            let cells = (0..record.layers).map(|l| lens.cell(l, i)).collect();
            state.columns[p] = Some((tokens[p], cells));
        }
        let view = build(
            model, &record, &tokens, state, window, &lens.last, from_step,
        );
        Some(Event::Inside(ProbeEvent::Probe {
            view: ProbeView {
                probe_ms: host.now() - t0,
                ..view
            },
        }))
    }
}

/// One probed pass over `tokens` on a scratch sequence of the engine (released after).
async fn scratch_pass(
    engine: &mut decoding_engine::backend::engine::Engine,
    tokens: &[u32],
    spec: ProbeSpec,
) -> Result<ProbeRecord, decoding_engine::BackendError> {
    let seq = engine.new_sequence()?;
    let out = engine
        .forward_probe(Batch::tokens(seq, 0, tokens, Logits::Last), spec)
        .await;
    engine.release(seq);
    Ok(out?.record)
}

fn build(
    model: &Model,
    r: &ProbeRecord,
    tokens: &[u32],
    state: &ProbeState,
    window: std::ops::Range<usize>,
    last: &[decoding_engine::forward::lens::LensLayer],
    from_step: bool,
) -> ProbeView {
    let piece = |id: u32| model.tokenizer.piece(id).unwrap_or("?").to_string();
    let token = |id: u32, p: f64| LensToken {
        id,
        piece: piece(id),
        p,
    };
    let c = model.config();
    let positions: Vec<usize> = window.collect();
    let mut lens = Vec::with_capacity(c.n_layers * positions.len());
    for l in 0..c.n_layers {
        for &p in &positions {
            let cell = state.columns[p].as_ref().map_or(
                LensCell {
                    token: 0,
                    prob: 0.0,
                },
                |(_, cells)| cells[l],
            );
            lens.push(token(cell.token, cell.prob));
        }
    }
    ProbeView {
        pos: r.pos,
        pieces: tokens.iter().map(|&t| piece(t)).collect(),
        n_layers: c.n_layers,
        n_heads: c.n_heads,
        n_kv_heads: c.n_kv_heads,
        head_size: c.head_size(),
        attention: r.attention.clone(),
        lens_positions: positions,
        lens,
        last: last
            .iter()
            .map(|l| LensLayerView {
                top: l.top.iter().map(|&(id, p)| token(id, p)).collect(),
                kl: l.kl_to_final,
            })
            .collect(),
        from_step,
        probe_ms: 0.0,
    }
}

impl Core {
    /// The view inside the step's request.
    pub(super) async fn probe_request(
        &mut self,
        probe: &mut Option<ProbeState>,
        r: ProbeRequest,
        host: &dyn Host,
    ) -> Vec<Event> {
        match r {
            ProbeRequest::Probe { open } => self.set_probe(probe, open, host).await,
        }
    }
}
