//! The charts whose geometry the page shares ([`crate::geometry`]): the next-token
//! distribution, throughput against B and the roofline, the serving timelines. Every mark
//! is placed where the geometry puts it inside the export's frame, so the file shows what
//! the page shows (the same scale, bars, points and rows); only sizes and colours are the
//! export's own.

use super::plot::{axes_in, legend_with, PLOT_H, PLOT_L, PLOT_T};
use super::*;
use crate::geometry::batching::{self as bg, RoofGeometry, RoofPoint};
use crate::geometry::distribution::{self as dg, BarKind};
use crate::geometry::{Frame, Tick};
use crate::page::Scale;
use crate::protocol::*;
use decoding_engine::serving::batching::Policy;
use decoding_engine::serving::roofline::Roof;

/// The page's colour of a removed token's bar and of waiting (`--removed`).
pub(super) const REMOVED: &str = "#c8cad6";
/// top-p's threshold (`--error`).
const ERROR: &str = "#b3261e";
/// The width of the batching charts' plots.
const PLOT_W: f64 = 480.0;

/// Ticks on the y axis: a mark and its label left of the frame.
pub(super) fn y_ticks(d: &mut Drawing, frame: Frame, ticks: &[Tick]) {
    for t in ticks {
        d.shapes.push(Shape::Line {
            x1: frame.left - 4.0,
            y1: t.at,
            x2: frame.left,
            y2: t.at,
            stroke: MUTED,
            width: 1.0,
            dashed: false,
        });
        d.shapes.push(text(
            frame.left - 7.0,
            t.at + 4.0,
            t.label.clone(),
            11.0,
            Anchor::End,
        ));
    }
}

/// Ticks on the x axis: labels under the frame.
fn x_ticks(d: &mut Drawing, frame: Frame, ticks: &[Tick]) {
    for t in ticks {
        d.shapes.push(text(
            t.at,
            frame.bottom() + 16.0,
            t.label.clone(),
            11.0,
            Anchor::Middle,
        ));
    }
}

/// A line from `a` to `b`, dashed or solid.
pub(super) fn line(
    a: (f64, f64),
    b: (f64, f64),
    stroke: &'static str,
    width: f64,
    dashed: bool,
) -> Shape {
    let ((x1, y1), (x2, y2)) = (a, b);
    Shape::Line {
        x1,
        y1,
        x2,
        y2,
        stroke,
        width,
        dashed,
    }
}

/// A dashed line from `a` to `b`.
pub(super) fn dashed(a: (f64, f64), b: (f64, f64), stroke: &'static str, width: f64) -> Shape {
    line(a, b, stroke, width, true)
}

pub(super) fn rect(r: crate::geometry::Rect, fill: &'static str) -> Shape {
    Shape::Rect {
        x: r.x,
        y: r.y,
        w: r.w,
        h: r.h,
        fill,
    }
}

/// The next-token distribution as the page draws it: its `n` most likely tokens on the
/// page's `scale` (bars for kept, chosen and removed tokens; top-p's running sum and p),
/// its words in `lang`.
pub fn distribution(
    t: &TraceView,
    piece: &dyn Fn(u32) -> String,
    n: usize,
    scale: Scale,
    lang: Lang,
) -> Drawing {
    let tr = tr(lang);
    let n = n.clamp(1, t.order.len().max(1));
    let slot = (560.0 / n as f64).clamp(14.0, 60.0);
    let frame = Frame::new(PLOT_L, PLOT_T, slot * n as f64, PLOT_H);
    let g = dg::distribution(t, scale, n, frame);
    let entropy = ("entropy", num(lang, t.entropy, 3));
    let title = match t.step {
        Some(s) => tr.fmt(
            "fig-dist-step-title",
            &[("step", int(lang, s)), entropy, ("kept", int(lang, t.kept))],
        ),
        None => tr.fmt("fig-dist-toy-title", &[entropy]),
    };
    let height = PLOT_T + PLOT_H + 110.0;
    let mut d = Drawing::new((frame.right() + 30.0).max(420.0), height, title);
    let y_label = match scale {
        Scale::Probability => tr.fmt("fig-probability", &[]),
        Scale::LogProbability => tr.fmt("fig-probability-log", &[]),
    };
    let x_label = tr.fmt("fig-token-ranked", &[]);
    axes_in(&mut d, frame, &x_label, &y_label);
    y_ticks(&mut d, frame, &g.y_ticks);
    for b in &g.bars {
        if b.height() > 0.0 {
            d.shapes.push(Shape::Rect {
                x: b.x,
                y: b.y,
                w: b.w,
                h: b.height(),
                fill: bar_fill(b.kind),
            });
        }
        d.shapes.push(Shape::Text {
            x: b.x + b.w / 2.0 + 4.0,
            y: frame.bottom() + 10.0,
            text: piece(b.id),
            size: 11.0,
            anchor: Anchor::End,
            fill: INK,
            vertical: true,
        });
    }
    let mut keys = vec![
        (tr.fmt("fig-final-p", &[]), ACCENT),
        (tr.fmt("fig-chosen", &[]), CHOSEN),
        (tr.fmt("fig-p-before-removal", &[]), REMOVED),
    ];
    if let Some(c) = &g.cut {
        d.shapes.push(Shape::Path {
            points: c.points.clone(),
            stroke: INK,
            width: 2.0,
        });
        let (y, x) = (c.threshold, (frame.left, frame.right()));
        d.shapes.push(dashed((x.0, y), (x.1, y), ERROR, 2.0));
        keys.extend([
            (tr.fmt("fig-top-p-sum", &[]), INK),
            (tr.fmt("fig-top-p-p", &[]), ERROR),
        ]);
    }
    legend_with(&mut d, &keys, height - 12.0);
    d
}

/// A bar's colour: the page's for its kind.
pub fn bar_fill(kind: BarKind) -> &'static str {
    match kind {
        BarKind::Kept => ACCENT,
        BarKind::Chosen => CHOSEN,
        BarKind::Removed => REMOVED,
    }
}

/// Throughput against the batch size, and the roofline of the measured machine: the
/// figures the page shows, one under the other.
pub fn sweep(v: &SweepView, lang: Lang) -> Drawing {
    Drawing::stack(
        &tr(lang).fmt("fig-sweep-title", &[]),
        vec![throughput(v, lang), machine_roofline(v, lang)],
    )
}

/// Tokens per second against B, prefill's and decode's, each point with its figure as a
/// tooltip.
pub fn throughput(v: &SweepView, lang: Lang) -> Drawing {
    let tr = tr(lang);
    let frame = Frame::new(PLOT_L, PLOT_T, PLOT_W, PLOT_H);
    let g = bg::throughput(&v.rows, frame);
    let mut tp = Drawing::new(
        PLOT_L + PLOT_W + 30.0,
        PLOT_T + PLOT_H + 80.0,
        tr.fmt("fig-tp-title", &[("backend", v.backend.clone())]),
    );
    let (x_label, y_label) = (tr.fmt("fig-tp-x", &[]), tr.fmt("fig-tp-y", &[]));
    axes_in(&mut tp, frame, &x_label, &y_label);
    y_ticks(&mut tp, frame, &g.y_ticks);
    x_ticks(&mut tp, frame, &g.x_ticks);
    let prefill: Vec<f64> = v.rows.iter().map(|r| r.prefill_tokens_per_s).collect();
    let decode: Vec<f64> = v.rows.iter().map(|r| r.decode_tokens_per_s).collect();
    let (prefill_name, decode_name) = (tr.fmt("fig-prefill", &[]), tr.fmt("fig-decode", &[]));
    let series = [
        (&g.prefill, CHOSEN, "prefill", &prefill_name, prefill),
        (&g.decode, ACCENT, "decode", &decode_name, decode),
    ];
    for (points, colour, name, phase, rates) in series {
        tp.shapes.push(Shape::Path {
            points: points.clone(),
            stroke: colour,
            width: 2.0,
        });
        for ((&(x, y), r), rate) in points.iter().zip(&v.rows).zip(rates) {
            let dot = Shape::Circle {
                x,
                y,
                r: 4.0,
                fill: colour,
                ring: None,
            };
            let tip = tr.fmt(
                "fig-tp-tip",
                &[
                    ("b", int(lang, r.batch)),
                    ("phase", phase.clone()),
                    ("rate", num(lang, rate, 0)),
                ],
            );
            tp.shapes.push(
                Mark::id(format!("tp-{name}-point"))
                    .title(tip)
                    .around(vec![dot]),
            );
        }
    }
    let keys = [(prefill_name, CHOSEN), (decode_name, ACCENT)];
    let y = tp.height - 12.0;
    legend_with(&mut tp, &keys, y);
    tp
}

/// The roofline of the machine the sweep ran on, with its prefill and decode points.
pub fn machine_roofline(v: &SweepView, lang: Lang) -> Drawing {
    let roof = v.peaks.roof;
    let ridge = ("ridge", num(lang, roof.ridge(), 1));
    let title = tr(lang).fmt("fig-roof-machine-title", &[ridge]);
    roofline(&title, roof, &bg::machine_points(&v.rows), "roofline", lang)
}

/// A log-log roofline: FLOP/s against FLOP/byte, the bandwidth slope up to the ridge and
/// the flat compute roof after it, and the points, each with its share of the roof as a
/// tooltip (marked `roof-prefill` / `roof-decode`, the roof `{name}-roof`).
pub fn roofline(title: &str, roof: Roof, points: &[RoofPoint], name: &str, lang: Lang) -> Drawing {
    let tr = tr(lang);
    let frame = Frame::new(PLOT_L, PLOT_T, PLOT_W, PLOT_H);
    let rg = bg::roofline(roof, points, frame);
    let mut rl = Drawing::new(PLOT_L + PLOT_W + 30.0, PLOT_T + PLOT_H + 80.0, title);
    let (x_label, y_label) = (tr.fmt("fig-roof-x", &[]), tr.fmt("fig-roof-y", &[]));
    axes_in(&mut rl, frame, &x_label, &y_label);
    x_ticks(&mut rl, frame, &rg.x_ticks);
    roof_marks(&mut rl, frame, roof.flops, &rg, (name, lang));
    for (p, at) in points.iter().zip(&rg.points) {
        let dot = if p.prefill {
            Shape::Rect {
                x: at.x - 4.0,
                y: at.y - 4.0,
                w: 8.0,
                h: 8.0,
                fill: CHOSEN,
            }
        } else {
            Shape::Circle {
                x: at.x,
                y: at.y,
                r: 4.0,
                fill: ACCENT,
                ring: None,
            }
        };
        let label = text(at.label_x, at.label_y, p.label.clone(), 10.0, Anchor::Start);
        let share = 100.0 * p.flops / roof.attainable(p.intensity);
        let tip = tr.fmt(
            "fig-roof-tip",
            &[
                ("point", p.label.clone()),
                ("intensity", num(lang, p.intensity, 2)),
                ("flops", crate::i18n::point(lang, bg::flops_text(p.flops))),
                ("share", num(lang, share, 0)),
            ],
        );
        let id = if p.prefill {
            "roof-prefill"
        } else {
            "roof-decode"
        };
        let mark = Mark::id(id)
            .title(tip)
            .data("x", format!("{:.1}", at.x))
            .data("intensity", format!("{:.3}", p.intensity));
        rl.shapes.push(mark.around(vec![dot, label]));
    }
    let keys = [
        (tr.fmt("fig-roof-prefill", &[]), CHOSEN),
        (tr.fmt("fig-roof-decode", &[]), ACCENT),
    ];
    let y = rl.height - 12.0;
    legend_with(&mut rl, &keys, y);
    rl
}

/// The roof, the ridge and the roof's FLOP/s, or (a point above it) why it is not drawn.
/// `name`: the roof's mark's; `lang`: its words'.
fn roof_marks(
    d: &mut Drawing,
    frame: Frame,
    flops: f64,
    g: &RoofGeometry,
    (name, lang): (&str, Lang),
) {
    if !g.roof_holds {
        d.shapes.push(text(
            frame.left + 8.0,
            frame.top + 12.0,
            tr(lang).fmt("fig-roof-above", &[]),
            10.0,
            Anchor::Start,
        ));
        return;
    }
    let roof = Shape::Path {
        points: g.roof_line.clone(),
        stroke: INK,
        width: 2.5,
    };
    d.shapes
        .push(Mark::id(format!("{name}-roof")).around(vec![roof]));
    let x = g.ridge_x;
    d.shapes
        .push(dashed((x, frame.top), (x, frame.bottom()), MUTED, 1.0));
    d.shapes.push(text(
        g.ridge_x + 4.0,
        frame.bottom() - 4.0,
        tr(lang).fmt("fig-ridge", &[("ridge", num(lang, g.ridge, 1))]),
        10.0,
        Anchor::Start,
    ));
    // The roof's FLOP/s over its flat part's start (left of the y axis it would not fit).
    d.shapes.push(text(
        frame.left + 4.0,
        g.roof_y - 6.0,
        crate::i18n::point(lang, bg::flops_text(flops)),
        11.0,
        Anchor::Start,
    ));
}

/// Both policies' requests as timelines, one under the other.
pub fn serve(v: &ServeView, lang: Lang) -> Drawing {
    let title = tr(lang).fmt(
        "fig-serve-title",
        &[
            ("requests", int(lang, v.requests.len())),
            ("slots", int(lang, v.slots)),
        ],
    );
    let parts = [Policy::Continuous, Policy::Static].map(|p| timeline(v, p, lang));
    Drawing::stack(&title, parts.into())
}

/// One policy's requests as a timeline: a row per request (waiting, its prefill step and
/// decoding) over the steps of the longer run, each row with its request as a tooltip
/// (marked `tl-request`).
pub fn timeline(v: &ServeView, policy: Policy, lang: Lang) -> Drawing {
    let tr = tr(lang);
    let steps = v.continuous.steps.max(v.static_.steps).max(1);
    let (r, policy) = match policy {
        Policy::Continuous => (&v.continuous, tr.fmt("fig-policy-continuous", &[])),
        Policy::Static => (&v.static_, tr.fmt("fig-policy-static", &[])),
    };
    let frame = Frame::new(PLOT_L, PLOT_T, PLOT_W, r.served.len().max(1) as f64 * 16.0);
    let title = tr.fmt(
        "fig-timeline-title",
        &[
            ("policy", policy),
            ("slots", int(lang, v.slots)),
            ("passes", int(lang, r.passes)),
            ("occupancy", num(lang, r.occupancy * 100.0, 0)),
        ],
    );
    let mut d = Drawing::new(PLOT_L + PLOT_W + 30.0, frame.bottom() + 70.0, title);
    let (x_label, y_label) = (tr.fmt("fig-step", &[]), tr.fmt("fig-request", &[]));
    axes_in(&mut d, frame, &x_label, &y_label);
    x_ticks(&mut d, frame, &bg::timeline_ticks(steps, frame));
    for (row, s) in bg::timeline(r, steps, frame).into_iter().zip(&r.served) {
        let (plen, asked) = v.requests.get(s.id).copied().unwrap_or((0, 0));
        let tip = tr.fmt(
            "fig-request-tip",
            &[
                ("id", int(lang, s.id)),
                ("prompt", int(lang, plen)),
                ("made", int(lang, s.tokens.len())),
                ("asked", int(lang, asked)),
                ("arrival", int(lang, s.arrival)),
                ("admitted", int(lang, s.admitted)),
                ("finished", int(lang, s.finished)),
            ],
        );
        let label = text(
            frame.left - 6.0,
            row.label_y,
            format!("#{}", row.id),
            10.0,
            Anchor::End,
        );
        let marks = vec![
            label,
            rect(row.wait, REMOVED),
            rect(row.prefill, CHOSEN),
            rect(row.decode, ACCENT),
        ];
        d.shapes
            .push(Mark::id("tl-request").title(tip).around(marks));
    }
    let keys = [
        (tr.fmt("fig-waiting", &[]), REMOVED),
        (tr.fmt("fig-prefill-joins", &[]), CHOSEN),
        (tr.fmt("fig-decode", &[]), ACCENT),
    ];
    let y = d.height - 12.0;
    legend_with(&mut d, &keys, y);
    d
}

#[cfg(test)]
#[path = "figures_tests.rs"]
pub(crate) mod tests;
