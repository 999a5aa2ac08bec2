//! The batching panel's charts: tokens per second against the batch size (B on a log₂
//! axis), the roofline (log-log: FLOP/s against FLOP per byte, the measured points under
//! the roof), and the serving timelines (a row per request: waiting, prefill, decode).

use super::{log_fraction, Frame, Rect, Tick};
use decoding_engine::serving::batching::{SimResult, Throughput};
use decoding_engine::serving::roofline::{self, Roof};

/// The page's box for the throughput chart and the rooflines (in a 500 × 240 viewBox).
pub const SCREEN: Frame = Frame::new(60.0, 20.0, 400.0, 180.0);

/// Throughput against B: each row's prefill and decode point, B's ticks, and the y axis
/// (0 to the highest rate).
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputGeometry {
    pub prefill: Vec<(f64, f64)>,
    pub decode: Vec<(f64, f64)>,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
    /// The top of the y axis, tokens/s.
    pub max: f64,
}

/// The chart of the sweep's `rows` in `frame`: x is log₂ B over whole powers of two (1 to
/// 16 for the page's sweep), y tokens/s from 0 to the highest rate (at least 1).
pub fn throughput(rows: &[Throughput], frame: Frame) -> ThroughputGeometry {
    let max = rows
        .iter()
        .map(|r| r.prefill_tokens_per_s.max(r.decode_tokens_per_s))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max);
    let b = |r: &Throughput| r.batch.max(1) as f64;
    let lo = rows.iter().map(b).fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(b).fold(1.0, f64::max);
    let lo = if lo.is_finite() {
        lo.log2().floor().exp2()
    } else {
        1.0
    };
    let hi = hi.log2().ceil().exp2().max(lo * 2.0);
    let x = |r: &Throughput| frame.x(log_fraction(b(r), lo, hi));
    let y = |t: f64| frame.y((t / max).clamp(0.0, 1.0));
    ThroughputGeometry {
        prefill: rows
            .iter()
            .map(|r| (x(r), y(r.prefill_tokens_per_s)))
            .collect(),
        decode: rows
            .iter()
            .map(|r| (x(r), y(r.decode_tokens_per_s)))
            .collect(),
        x_ticks: rows
            .iter()
            .map(|r| Tick {
                at: x(r),
                label: r.batch.to_string(),
            })
            .collect(),
        y_ticks: vec![
            Tick {
                at: y(0.0),
                label: "0".into(),
            },
            Tick {
                at: y(max),
                label: format!("{max:.0}"),
            },
        ],
        max,
    }
}

/// A point drawn on a roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct RoofPoint {
    pub label: String,
    pub intensity: f64,
    pub flops: f64,
    pub prefill: bool,
}

/// The sweep's points: each B's prefill (P1 …) and decode (D1 …) at their intensity and
/// achieved FLOP/s (each phase's FLOPs over its time).
pub fn machine_points(rows: &[Throughput]) -> Vec<RoofPoint> {
    rows.iter()
        .flat_map(|r| {
            [
                RoofPoint {
                    label: format!("P{}", r.batch),
                    intensity: r.prefill.intensity(),
                    flops: r.prefill_rates().0,
                    prefill: true,
                },
                RoofPoint {
                    label: format!("D{}", r.batch),
                    intensity: r.decode.intensity(),
                    flops: r.decode_rates().0,
                    prefill: false,
                },
            ]
        })
        .collect()
}

/// A roofline point placed, with its label's place (prefill's above, decode's below, every
/// other pair further out so neighbours do not overlap).
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedPoint {
    pub x: f64,
    pub y: f64,
    pub label_x: f64,
    pub label_y: f64,
}

/// The roofline: the roof (bandwidth slope to the ridge, flat after), drawn only when every
/// measured point is under it (else it was under-measured); the points; the ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct RoofGeometry {
    pub roof_holds: bool,
    pub roof_line: Vec<(f64, f64)>,
    pub ridge: f64,
    pub ridge_x: f64,
    /// The flat roof's y.
    pub roof_y: f64,
    pub points: Vec<PlacedPoint>,
    pub x_ticks: Vec<Tick>,
}

/// The intensities the roofline spans, FLOP per byte (log axis).
pub const INTENSITY: (f64, f64) = (0.1, 1000.0);

/// The roofline of `roof` with `points` in `frame`: x log intensity over [`INTENSITY`], y
/// log FLOP/s over five decades up to three times the roof.
pub fn roofline(roof: Roof, points: &[RoofPoint], frame: Frame) -> RoofGeometry {
    let roof_holds = points
        .iter()
        .all(|p| roofline::under(&roof, p.intensity, p.flops));
    let (x0, x1) = INTENSITY;
    let y1 = roof.flops * 3.0;
    let y0 = y1 / 1e5;
    let px = |i: f64| frame.x(log_fraction(i, x0, x1));
    let py = |f: f64| frame.y(log_fraction(f, y0, y1));
    let ridge = roof.ridge();
    let placed = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (x, y) = (px(p.intensity), py(p.flops));
            let step = if (i / 2) % 2 == 0 { 10.0 } else { 24.0 };
            PlacedPoint {
                x,
                y,
                label_x: x - 6.0,
                label_y: if p.prefill { y - step } else { y + step + 8.0 },
            }
        })
        .collect();
    RoofGeometry {
        roof_holds,
        roof_line: vec![
            (px(x0), py(roof.attainable(x0))),
            (px(ridge), py(roof.flops)),
            (px(x1), py(roof.flops)),
        ],
        ridge,
        ridge_x: px(ridge),
        roof_y: py(roof.flops),
        points: placed,
        x_ticks: [0.1, 1.0, 10.0, 100.0, 1000.0]
            .into_iter()
            .map(|t| Tick {
                at: px(t),
                label: format!("{t}"),
            })
            .collect(),
    }
}

/// FLOP/s as the charts write it.
pub fn flops_text(f: f64) -> String {
    if f >= 1e12 {
        format!("{:.1} TFLOP/s", f / 1e12)
    } else {
        format!("{:.1} GFLOP/s", f / 1e9)
    }
}

/// One request's row on a serving timeline: waiting from its arrival, the prefill step,
/// decoding to its end.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRow {
    pub id: usize,
    /// The baseline of its "#id" label.
    pub label_y: f64,
    pub wait: Rect,
    pub prefill: Rect,
    pub decode: Rect,
}

/// Each request's row height, in the frame's units for the page.
pub const ROW_H: f64 = 12.0;

/// The page's box for a timeline of `requests` rows (a viewBox 490 wide).
pub fn timeline_frame(requests: usize) -> Frame {
    Frame::new(60.0, 4.0, 420.0, requests as f64 * ROW_H)
}

/// The rows of `r` over `steps` steps (both policies' timelines share it) in `frame`: a
/// step is `frame.width / steps` wide, request `id`'s row the `id`th of `frame.height /
/// requests` (a 2-unit gap under each).
pub fn timeline(r: &SimResult, steps: usize, frame: Frame) -> Vec<TimelineRow> {
    let w = frame.width / steps.max(1) as f64;
    let row_h = frame.height / r.served.len().max(1) as f64;
    let h = (row_h - 2.0).max(1.0);
    let x = |step: usize| frame.left + step as f64 * w;
    r.served
        .iter()
        .map(|s| {
            let y = frame.top + s.id as f64 * row_h;
            TimelineRow {
                id: s.id,
                label_y: y + row_h * 0.75,
                wait: Rect {
                    x: x(s.arrival),
                    y,
                    w: s.admitted.saturating_sub(s.arrival) as f64 * w,
                    h,
                },
                prefill: Rect {
                    x: x(s.admitted),
                    y,
                    w,
                    h,
                },
                decode: Rect {
                    x: x(s.admitted + 1),
                    y,
                    w: s.finished.saturating_sub(s.admitted) as f64 * w,
                    h,
                },
            }
        })
        .collect()
}

/// The step axis's ticks: every `ceil(steps / 4)` steps from 0 (the page draws none; the
/// export labels its axis with them).
pub fn timeline_ticks(steps: usize, frame: Frame) -> Vec<Tick> {
    let steps = steps.max(1);
    let every = steps.div_ceil(4);
    (0..=steps)
        .step_by(every)
        .map(|k| Tick {
            at: frame.x(k as f64 / steps as f64),
            label: k.to_string(),
        })
        .collect()
}

#[cfg(test)]
#[path = "batching_tests.rs"]
pub(crate) mod tests;
