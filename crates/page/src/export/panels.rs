//! The chain's stage charts and the compared columns' next-token bars, drawn where the
//! page's geometry ([`crate::geometry::chain`], [`crate::geometry::compare`]) puts them
//! inside the export's frames: the same square-root scale and side-by-side bars, the same
//! horizontal bars; only sizes and colours are the export's own.

use super::figures::{rect, y_ticks, REMOVED};
use super::plot::{axes_in, legend_with, PLOT_H, PLOT_L, PLOT_T};
use super::*;
use crate::geometry::chain as cg;
use crate::geometry::compare as pg;
use crate::geometry::Frame;
use crate::protocol::*;

/// The stage chart's frame for `n` tokens: slots of 560 / n px (14 to 60).
pub(super) fn stage_frame(n: usize) -> Frame {
    let n = n.max(1);
    let slot = (560.0 / n as f64).clamp(14.0, 60.0);
    Frame::new(PLOT_L, PLOT_T, slot * n as f64, PLOT_H)
}

/// One stage's chart as the page draws it: each token's probability before the stage
/// (grey) and after it (blue) side by side, on the square-root scale.
fn stage(s: &StageView, labels: &[String], lang: Lang) -> Drawing {
    let tr = tr(lang);
    let frame = stage_frame(s.before.len());
    let height = PLOT_T + PLOT_H + 110.0;
    let title = tr.fmt(
        "fig-stage-title",
        &[
            ("stage", s.stage.name().to_string()),
            ("setting", s.setting.clone()),
            ("kept", int(lang, s.kept)),
        ],
    );
    let mut d = Drawing::new((frame.right() + 30.0).max(420.0), height, title);
    let (x_label, y_label) = (
        tr.fmt("fig-token", &[]),
        tr.fmt("fig-probability-sqrt", &[]),
    );
    axes_in(&mut d, frame, &x_label, &y_label);
    y_ticks(&mut d, frame, &cg::y_ticks(frame));
    let n = s.before.len();
    for (i, b) in cg::stage_bars(s, frame).iter().enumerate() {
        for (r, fill) in [(b.before, REMOVED), (b.after, ACCENT)] {
            if r.h > 0.0 {
                d.shapes.push(rect(r, fill));
            }
        }
        d.shapes.push(Shape::Text {
            x: cg::slot_centre(i, n, frame) + 4.0,
            y: frame.bottom() + 10.0,
            text: labels.get(i).cloned().unwrap_or_default(),
            size: 11.0,
            anchor: Anchor::End,
            fill: INK,
            vertical: true,
        });
    }
    let keys = [
        (tr.fmt("fig-before", &[]), REMOVED),
        (tr.fmt("fig-after", &[]), ACCENT),
    ];
    legend_with(&mut d, &keys, height - 12.0);
    d
}

/// Each stage of the chain: the probability of the chart's tokens before and after it, its
/// words in `lang` (the stages' names their own).
pub fn stages(t: &TraceView, piece: &dyn Fn(u32) -> String, lang: Lang) -> Drawing {
    let labels: Vec<String> = t.chart_ids.iter().map(|&id| piece(id)).collect();
    // The stages that changed something, two charts a row; the neutral ones named in one
    // line (each of them would be a chart of identical bars: eight stacked made a PNG
    // 7,148 px tall).
    let neutral: Vec<&str> = t
        .stages
        .iter()
        .filter(|s| !s.active)
        .map(|s| s.stage.name())
        .collect();
    let parts = t
        .stages
        .iter()
        .filter(|s| s.active)
        .map(|s| stage(s, &labels, lang))
        .collect();
    let mut d = Drawing::grid(&tr(lang).fmt("fig-chain-title", &[]), parts, 2);
    if !neutral.is_empty() {
        let y = d.height + 16.0;
        d.shapes.push(text(
            12.0,
            y,
            tr(lang).fmt("fig-neutral", &[("stages", neutral.join(", "))]),
            12.0,
            Anchor::Start,
        ));
        d.height = y + 12.0;
    }
    d
}

/// The width of a column's bars and the height of a token's row.
const TOP_W: f64 = 260.0;
const TOP_ROW: f64 = 20.0;
/// The bars' left edge (the pieces' labels end left of it).
const TOP_L: f64 = 110.0;

/// The frame of a column's `n` top tokens.
pub(super) fn top_frame(n: usize) -> Frame {
    Frame::new(TOP_L, PLOT_T + 8.0, TOP_W, TOP_ROW * n as f64)
}

/// One column as the page draws its next distribution: a row per top token, its piece,
/// its bar (as long as p on a 0-to-1 scale) and p.
fn column(i: usize, c: &ColumnView, piece: &dyn Fn(u32) -> String, lang: Lang) -> Drawing {
    let tr = tr(lang);
    let knobs = crate::page::column_text(&c.settings);
    let knobs = if knobs.is_empty() {
        tr.fmt("fig-defaults", &[])
    } else {
        knobs
    };
    let frame = top_frame(c.top.len());
    let mut d = Drawing::new(
        frame.right() + 70.0,
        frame.bottom() + 40.0,
        tr.fmt(
            "fig-column-title",
            &[("column", int(lang, i + 1)), ("knobs", knobs)],
        ),
    );
    d.shapes.push(Shape::Text {
        x: 12.0,
        y: PLOT_T - 4.0,
        text: tr.fmt(
            "fig-column-summary",
            &[
                ("tokens", int(lang, c.steps.len())),
                ("entropy", num(lang, c.entropy, 3)),
                ("kept", int(lang, c.kept)),
            ],
        ),
        size: 11.0,
        anchor: Anchor::Start,
        fill: MUTED,
        vertical: false,
    });
    // The bars' scale: its left edge at p 0.
    d.shapes.push(Shape::Line {
        x1: frame.left,
        y1: frame.top,
        x2: frame.left,
        y2: frame.bottom(),
        stroke: LINE,
        width: 1.0,
        dashed: false,
    });
    for b in pg::top_bars(&c.top, frame) {
        let y = b.middle() + 4.0;
        d.shapes
            .push(text(frame.left - 8.0, y, piece(b.id), 11.0, Anchor::End));
        d.shapes.push(rect(b.bar, ACCENT));
        let p = num(lang, b.p, 3);
        d.shapes
            .push(text(frame.right() + 8.0, y, p, 11.0, Anchor::Start));
    }
    d
}

/// The compared columns: each column's next distribution, two a row, their words in `lang`
/// (the knobs' names their own).
pub fn columns(v: &ColumnsView, piece: &dyn Fn(u32) -> String, lang: Lang) -> Drawing {
    let parts = v
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| column(i, c, piece, lang))
        .collect();
    let tr = tr(lang);
    let differ = if v.differ.is_empty() {
        tr.fmt("fig-none", &[])
    } else {
        v.differ.join(", ")
    };
    let title = tr.fmt("fig-columns-title", &[("knobs", differ)]);
    Drawing::grid(&title, parts, 2)
}

#[cfg(test)]
#[path = "panels_tests.rs"]
pub(crate) mod tests;
