//! Shaping an engine trace for drawing (plain data the UI renders as it is).

use crate::protocol::*;
use decoding_engine::decode::sampling::{StageTrace, Trace};

/// Bars in each stage's small chart.
pub const CHART_TOKENS: usize = 16;

/// How far down the order the top-p cut's running sum is sent (the page lists at most
/// this many rows with a cumulative value; "show every token" lists the rest without).
const CUT_ROWS: usize = 1000;

/// An integer that orders as `f64::total_cmp` orders the floats (the standard library's own
/// mapping: a negative float's bits flipped below the sign).
fn order_key64(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ ((((b >> 63) as u64) >> 1) as i64)
}

/// [`order_key64`] for `f32::total_cmp`.
fn order_key32(x: f32) -> i32 {
    let b = x.to_bits() as i32;
    b ^ ((((b >> 31) as u32) >> 1) as i32)
}

/// Shapes an engine trace for drawing: sorted order, ghosts of removed tokens and which stage
/// removed them, small before/after charts per stage.
pub fn trace_view(t: &Trace, step: Option<usize>) -> TraceView {
    let (ghost, removed_by) = ghosts(t);
    let order = sorted_order(t, &ghost);
    let chart = chart_ids(t);
    let (stages, cut) = stage_views(t, &chart);
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

/// Each removed token's probability as it entered the stage that removed it (its ghost),
/// and that stage's index (-1 for a token no stage removed).
fn ghosts(t: &Trace) -> (Vec<f32>, Vec<i8>) {
    let v = t.probs.len();
    let mut ghost = vec![0.0f32; v];
    let mut removed_by = vec![TraceView::KEPT; v];
    let mut entering = t.input_probs.clone();
    // An inactive stage's distribution is empty: it handed on what it received.
    for (si, st) in t.stages.iter().enumerate().filter(|(_, st)| st.active) {
        for &id in &st.removed {
            ghost[id as usize] = entering[id as usize] as f32;
            removed_by[id as usize] = si as i8;
        }
        entering.clone_from(&st.probs);
    }
    (ghost, removed_by)
}

/// Every token, most likely first, then the larger ghost, then the smaller id.
fn sorted_order(t: &Trace, ghost: &[f32]) -> Vec<u32> {
    // Sorted on keys, not by a comparator that looks the values up at every comparison: two
    // such sorts of every token were a large share of the page worker's time a step at a
    // 32,000-token vocabulary (perf; BENCHMARKS.md, "Figures behind the code"). The keys
    // order exactly as the comparisons did (most likely first by `total_cmp`, then the larger
    // ghost, then the smaller id), and with the id in the key no two are equal, so an
    // unstable sort gives the one order there is.
    let mut keys: Vec<(i64, i32, u32)> = (0..t.probs.len())
        .map(|i| (!order_key64(t.probs[i]), !order_key32(ghost[i]), i as u32))
        .collect();
    keys.sort_unstable();
    keys.iter().map(|k| k.2).collect()
}

/// The tokens the per-stage charts show.
fn chart_ids(t: &Trace) -> Vec<u32> {
    // The chart's few most likely entering the chain: picked in linear time, then sorted.
    let mut chart: Vec<(i64, u32)> = (0..t.probs.len())
        .map(|i| (!order_key64(t.input_probs[i]), i as u32))
        .collect();
    if chart.len() > CHART_TOKENS {
        chart.select_nth_unstable(CHART_TOKENS - 1);
        chart.truncate(CHART_TOKENS);
    }
    chart.sort_unstable();
    chart.iter().map(|k| k.1).collect()
}

/// Each stage's before/after chart and counts, and the cumulative-mass cut of the (last)
/// stage that cut by mass (top-p).
fn stage_views(t: &Trace, chart: &[u32]) -> (Vec<StageView>, Option<CutView>) {
    let mut before = t.input_probs.clone();
    let mut cut = None;
    let stages = t
        .stages
        .iter()
        .enumerate()
        .map(|(si, st)| {
            // Top-p keeps the smallest most-likely set whose mass reaches p: the running sum
            // of what it saw, most likely first, shows where the line falls.
            if let (Some(p), true) = (st.cut.mass, st.active && !before.is_empty()) {
                cut = Some(mass_cut(&before, si, p));
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
                after: chart
                    .iter()
                    .map(|&i| after(st, &before)[i as usize] as f32)
                    .collect(),
                cut: st.cut.clone(),
                replaced_by: st.replaced_by,
            };
            if st.active {
                before.clone_from(&st.probs);
            }
            view
        })
        .collect();
    (stages, cut)
}

/// The distribution leaving a stage: its own, or (inactive) what it received.
fn after<'a>(st: &'a StageTrace, before: &'a [f64]) -> &'a [f64] {
    if st.active {
        &st.probs
    } else {
        before
    }
}

/// The running sum, most likely first, of the distribution a mass cut saw (stage `si`).
fn mass_cut(before: &[f64], si: usize, p: f64) -> CutView {
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
    CutView {
        stage: si,
        p,
        ids,
        cumulative,
    }
}

#[cfg(test)]
#[path = "trace_view_tests.rs"]
mod tests;
