//! The two plots the charts are made of: bars (groups of bars by label) and xy (lines and
//! points over two axes, linear or log), with their axes, ticks and legend.

use super::*;
use crate::geometry::Frame;

pub(super) const PLOT_L: f64 = 70.0;
pub(super) const PLOT_T: f64 = 44.0;
pub(super) const PLOT_H: f64 = 200.0;

/// A bar chart: one group of bars per label, one bar per series.
pub fn bars(
    title: &str,
    x_label: &str,
    y_label: &str,
    labels: &[String],
    series: &[(&str, Vec<f64>)],
    lang: Lang,
) -> Drawing {
    let groups = labels.len().max(1);
    let per = series.len().max(1);
    let group_w = (560.0 / groups as f64).clamp(14.0, 60.0);
    let plot_w = group_w * groups as f64;
    let width = PLOT_L + plot_w + 30.0;
    let height = PLOT_T + PLOT_H + 110.0;
    let mut d = Drawing::new(width.max(420.0), height, title);
    let y_max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-12);
    let y = |v: f64| PLOT_T + PLOT_H - (v / y_max).clamp(0.0, 1.0) * PLOT_H;
    axes(&mut d, plot_w, x_label, y_label);
    for i in 0..=4 {
        let v = y_max * i as f64 / 4.0;
        d.shapes.push(Shape::Line {
            x1: PLOT_L - 4.0,
            y1: y(v),
            x2: PLOT_L,
            y2: y(v),
            stroke: MUTED,
            width: 1.0,
            dashed: false,
        });
        d.shapes.push(text(
            PLOT_L - 7.0,
            y(v) + 4.0,
            tick(v, lang),
            11.0,
            Anchor::End,
        ));
    }
    let bar_w = (group_w - 4.0) / per as f64;
    for (g, label) in labels.iter().enumerate() {
        let x0 = PLOT_L + g as f64 * group_w + 2.0;
        for (k, (_, values)) in series.iter().enumerate() {
            let v = values.get(g).copied().unwrap_or(0.0).max(0.0);
            d.shapes.push(Shape::Rect {
                x: x0 + k as f64 * bar_w,
                y: y(v),
                w: (bar_w - 1.0).max(1.0),
                h: PLOT_T + PLOT_H - y(v),
                fill: SERIES[k % SERIES.len()],
            });
        }
        let cx = x0 + group_w / 2.0 - 2.0;
        d.shapes.push(Shape::Text {
            x: cx,
            y: PLOT_T + PLOT_H + 10.0,
            text: label.clone(),
            size: 11.0,
            anchor: Anchor::End,
            fill: INK,
            vertical: true,
        });
    }
    legend(&mut d, series.iter().map(|(n, _)| *n), height - 12.0);
    d
}

/// Lines and points on x and y axes (either logarithmic).
pub struct XySeries<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
    pub line: bool,
    /// A label beside each point (or none).
    pub labels: Vec<String>,
}

pub fn xy(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[XySeries],
    log_x: bool,
    log_y: bool,
    lang: Lang,
) -> Drawing {
    let plot_w = 520.0;
    let height = PLOT_T + PLOT_H + 80.0;
    let mut d = Drawing::new(PLOT_L + plot_w + 30.0, height, title);
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|p| plottable(p, log_x, log_y))
        .collect();
    let (x0, x1) = axis_range(all.iter().map(|p| axis_value(p.0, log_x)).collect(), log_x);
    let (y0, y1) = axis_range(all.iter().map(|p| axis_value(p.1, log_y)).collect(), log_y);
    let px = |v: f64| PLOT_L + (axis_value(v, log_x) - x0) / (x1 - x0) * plot_w;
    let py = |v: f64| PLOT_T + PLOT_H - (axis_value(v, log_y) - y0) / (y1 - y0) * PLOT_H;
    axes(&mut d, plot_w, x_label, y_label);
    for i in 0..=4 {
        let (fx, fy) = (
            x0 + (x1 - x0) * i as f64 / 4.0,
            y0 + (y1 - y0) * i as f64 / 4.0,
        );
        let (vx, vy) = (
            if log_x { 10f64.powf(fx) } else { fx },
            if log_y { 10f64.powf(fy) } else { fy },
        );
        d.shapes.push(text(
            px(vx),
            PLOT_T + PLOT_H + 16.0,
            tick(vx, lang),
            11.0,
            Anchor::Middle,
        ));
        d.shapes.push(text(
            PLOT_L - 7.0,
            py(vy) + 4.0,
            tick(vy, lang),
            11.0,
            Anchor::End,
        ));
    }
    for (k, s) in series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| plottable(p, log_x, log_y))
            .map(|&(x, y)| (px(x), py(y)))
            .collect();
        draw_xy_series(&mut d, s, SERIES[k % SERIES.len()], &pts);
    }
    legend(&mut d, series.iter().map(|s| s.name), height - 12.0);
    d
}

/// A point that can be drawn: finite, and positive on a log axis.
fn plottable(&(x, y): &(f64, f64), log_x: bool, log_y: bool) -> bool {
    x.is_finite() && y.is_finite() && (!log_x || x > 0.0) && (!log_y || y > 0.0)
}

/// A value as its axis places it (its log10 on a log axis).
fn axis_value(v: f64, log: bool) -> f64 {
    if log {
        v.log10()
    } else {
        v
    }
}

/// The range an axis spans for its values (already as `axis_value` gives them).
fn axis_range(vals: Vec<f64>, log: bool) -> (f64, f64) {
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
        (true, true) if hi > lo => (lo, hi),
        (true, true) => (lo - 1.0, hi + 1.0),
        _ => (0.0, 1.0),
    };
    // Whole decades on a log axis; a linear one starts at 0 when its values are positive.
    if log {
        (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
    } else {
        (lo.min(0.0), hi)
    }
}

/// One series of an xy plot at its points (already placed): its line, points and labels.
fn draw_xy_series(d: &mut Drawing, s: &XySeries, colour: &'static str, pts: &[(f64, f64)]) {
    if s.line && pts.len() > 1 {
        d.shapes.push(Shape::Path {
            points: pts.to_vec(),
            stroke: colour,
            width: 2.0,
        });
    }
    for (i, &(x, y)) in pts.iter().enumerate() {
        d.shapes.push(Shape::Circle {
            x,
            y,
            r: 3.5,
            fill: colour,
            ring: None,
        });
        if let Some(l) = s.labels.get(i) {
            d.shapes
                .push(text(x + 5.0, y - 5.0, l.clone(), 10.0, Anchor::Start));
        }
    }
}

fn axes(d: &mut Drawing, plot_w: f64, x_label: &str, y_label: &str) {
    axes_in(
        d,
        Frame::new(PLOT_L, PLOT_T, plot_w, PLOT_H),
        x_label,
        y_label,
    );
}

/// The axes of a plot in `frame`: its left and bottom edges, and their labels.
pub(super) fn axes_in(d: &mut Drawing, frame: Frame, x_label: &str, y_label: &str) {
    let base = frame.bottom();
    for (x1, y1, x2, y2) in [
        (frame.left, frame.top, frame.left, base),
        (frame.left, base, frame.right(), base),
    ] {
        d.shapes.push(Shape::Line {
            x1,
            y1,
            x2,
            y2,
            stroke: INK,
            width: 1.0,
            dashed: false,
        });
    }
    d.shapes.push(Shape::Text {
        x: 16.0,
        y: frame.top + frame.height / 2.0,
        text: y_label.to_string(),
        size: 12.0,
        anchor: Anchor::Middle,
        fill: MUTED,
        vertical: true,
    });
    d.shapes.push(Shape::Text {
        x: frame.left + frame.width / 2.0,
        y: d.height - 30.0,
        text: x_label.to_string(),
        size: 12.0,
        anchor: Anchor::Middle,
        fill: MUTED,
        vertical: false,
    });
}

fn legend<'a>(d: &mut Drawing, names: impl Iterator<Item = &'a str>, y: f64) {
    let keys: Vec<(&str, &'static str)> = names
        .enumerate()
        .map(|(k, n)| (n, SERIES[k % SERIES.len()]))
        .collect();
    legend_with(d, &keys, y);
}

/// A legend of (name, colour) swatches along `y`.
pub(super) fn legend_with(d: &mut Drawing, keys: &[(impl AsRef<str>, &'static str)], y: f64) {
    legend_sized(d, keys, y, 11.0);
}

/// A legend of (name, colour) swatches along `y`, its names `size` units high (the swatch
/// and the spacing in proportion; a CJK character about twice a Latin one's width).
pub(super) fn legend_sized(
    d: &mut Drawing,
    keys: &[(impl AsRef<str>, &'static str)],
    y: f64,
    size: f64,
) {
    let k = size / 11.0;
    let mut x = PLOT_L;
    for (n, fill) in keys {
        let (n, fill) = (n.as_ref(), *fill);
        d.shapes.push(Shape::Rect {
            x,
            y: y - 9.0 * k,
            w: 10.0 * k,
            h: 10.0 * k,
            fill,
        });
        d.shapes.push(text(x + 14.0 * k, y, n, size, Anchor::Start));
        let w: f64 = n
            .chars()
            .map(|c| if c >= '\u{2E80}' { 12.0 } else { 7.0 })
            .sum();
        x += (24.0 + w) * k;
    }
}
