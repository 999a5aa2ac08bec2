//! Shaping an engine trace for drawing (plain data the UI renders as it is).

use super::CHART_TOKENS;
use crate::protocol::*;
use decoding_engine::sampling::{Stage, Trace};

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
pub fn trace_view(t: &Trace, step: Option<usize>, top_p: f64) -> TraceView {
    let (ghost, removed_by) = ghosts(t);
    let order = sorted_order(t, &ghost);
    let chart = chart_ids(t);
    let (stages, cut) = stage_views(t, &chart, top_p);
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
    for (si, st) in t.stages.iter().enumerate() {
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
    // such sorts of every token were a third of the page worker's time a step at a
    // 32,000-token vocabulary (perf). The keys order exactly as the comparisons did (most
    // likely first by `total_cmp`, then the larger ghost, then the smaller id), and with the
    // id in the key no two are equal, so an unstable sort gives the one order there is.
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

/// Each stage's before/after chart and counts, and the top-p cut (if top-p ran).
fn stage_views(t: &Trace, chart: &[u32], top_p: f64) -> (Vec<StageView>, Option<CutView>) {
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
                cut = Some(top_p_cut(&before, si, top_p));
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
    (stages, cut)
}

/// The running sum, most likely first, of the distribution top-p saw (stage `si`).
fn top_p_cut(before: &[f64], si: usize, top_p: f64) -> CutView {
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
        p: top_p,
        ids,
        cumulative,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    /// The keys order as `total_cmp` does, over signs, zeros, subnormals, infinities and NaNs.
    #[test]
    fn order_keys_order_as_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::from_bits(1),
            1e-300,
            0.5,
            1.0,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for &a in &xs {
            for &b in &xs {
                assert_eq!(
                    order_key64(a).cmp(&order_key64(b)),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
                let (a, b) = (a as f32, b as f32);
                assert_eq!(
                    order_key32(a).cmp(&order_key32(b)),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
            }
        }
    }

    /// The order and chart are those of the plain comparator sorts they replace, on a trace
    /// with ties in probability and in ghost (top-k and min-p removing tokens of equal mass).
    #[test]
    fn order_and_chart_match_the_comparator_sorts() {
        use decoding_engine::sampling::{
            chain::{process, History},
            RawSettings,
        };
        let logits: Vec<f32> = (0..3000).map(|i| ((i * 7919) % 23) as f32 * 0.25).collect();
        let settings = RawSettings::from_pairs([("top_k", "40"), ("min_p", "0.2")])
            .validate(logits.len())
            .unwrap();
        let history = History {
            prompt: &[1],
            generated: &[],
        };
        let t = process(&settings, &logits, history, 0.3, true).unwrap();
        let view = trace_view(&t, Some(0), 1.0);
        let mut want: Vec<u32> = (0..logits.len() as u32).collect();
        want.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            t.probs[b]
                .total_cmp(&t.probs[a])
                .then(view.ghost[b].total_cmp(&view.ghost[a]))
                .then(a.cmp(&b))
        });
        assert_eq!(view.order, want);
        // Ties were there to break: equal probabilities kept, and equal ghosts removed.
        let kept = |i: usize| t.probs[want[i] as usize];
        assert!((1..want.len()).any(|i| kept(i) > 0.0 && kept(i) == kept(i - 1)));
        let mut chart: Vec<u32> = (0..logits.len() as u32).collect();
        chart.sort_by(|&a, &b| {
            t.input_probs[b as usize]
                .total_cmp(&t.input_probs[a as usize])
                .then(a.cmp(&b))
        });
        chart.truncate(CHART_TOKENS);
        assert_eq!(view.chart_ids, chart);
        assert_eq!(
            t.input_probs[chart[0] as usize].total_cmp(&t.input_probs[chart[1] as usize]),
            Ordering::Equal,
            "the chart's top two tie, so the id decides"
        );
    }
}
