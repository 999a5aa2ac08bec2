//! Shaping an engine trace for drawing (plain data the UI renders as it is).

use super::CHART_TOKENS;
use crate::protocol::*;
use decoding_engine::sampling::{Stage, Trace};

/// How far down the order the top-p cut's running sum is sent (the page lists at most
/// this many rows with a cumulative value; "show every token" lists the rest without).
const CUT_ROWS: usize = 1000;

/// Shapes an engine trace for drawing: sorted order, ghosts of removed tokens and which stage
/// removed them, small before/after charts per stage.
pub fn trace_view(t: &Trace, step: Option<usize>, top_p: f64) -> TraceView {
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
    let mut cut = None;
    let stages = t
        .stages
        .iter()
        .enumerate()
        .map(|(si, st)| {
            // Top-p keeps the smallest most-likely set whose mass reaches p: the running sum
            // of what it saw, most likely first, shows where the line falls.
            if st.stage == Stage::TopP && st.active && !before.is_empty() {
                // The first CUT_ROWS in linear time, then sorted (a full sort of 32,000 at
                // every slider move would be most of the trace's cost).
                let order = |a: &u32, b: &u32| {
                    before[*b as usize]
                        .total_cmp(&before[*a as usize])
                        .then(a.cmp(b))
                };
                let mut ids: Vec<u32> = (0..before.len() as u32).collect();
                if ids.len() > CUT_ROWS {
                    ids.select_nth_unstable_by(CUT_ROWS - 1, order);
                    ids.truncate(CUT_ROWS);
                }
                ids.sort_by(order);
                let mut sum = 0.0f64;
                let cumulative = ids
                    .iter()
                    .map(|&i| {
                        sum += before[i as usize];
                        sum as f32
                    })
                    .collect();
                cut = Some(CutView {
                    stage: si,
                    p: top_p,
                    ids,
                    cumulative,
                });
            }
            let view = StageView {
                mass_removed: st.removed.iter().map(|&i| before[i as usize]).sum(),
                stage: st.stage,
                active: st.active,
                setting: st.setting.clone(),
                default_of: st.default_of,
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
        cut,
    }
}
