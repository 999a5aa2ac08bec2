//! Charts for export, built from the views' data in plain Rust (never scraped from the
//! page): each view becomes a [`Drawing`] — rectangles, lines, paths, circles and text in
//! pixels, with its title, axes, tick labels and legend — which [`Drawing::svg`] writes as
//! an SVG file and the page paints onto a canvas for a PNG (the same shapes, so the two
//! files agree). Tested natively: the SVG parses as XML and carries its labels.

use crate::protocol::*;
use decoding_engine::beam::BeamNode;
use std::fmt::Write;

const ACCENT: &str = "#2f5bd3";
const CHOSEN: &str = "#e0662f";
const GREY: &str = "#9a9db0";
const INK: &str = "#1b1c22";
const MUTED: &str = "#585b6b";
const LINE: &str = "#d5d7e0";
/// Series colours, in order.
const SERIES: [&str; 4] = [ACCENT, CHOSEN, "#2e8b57", "#8a4fbf"];

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

/// One shape, in pixels from the drawing's top left.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Rect {
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        fill: &'static str,
    },
    Line {
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        stroke: &'static str,
        width: f64,
        dashed: bool,
    },
    Path {
        points: Vec<(f64, f64)>,
        stroke: &'static str,
        width: f64,
    },
    Circle {
        x: f64,
        y: f64,
        r: f64,
        fill: &'static str,
    },
    Text {
        x: f64,
        y: f64,
        text: String,
        size: f64,
        anchor: Anchor,
        fill: &'static str,
        /// Turned 90° anticlockwise about (x, y) (a y axis's label).
        vertical: bool,
    },
}

/// A figure: its size, title and shapes.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawing {
    pub width: f64,
    pub height: f64,
    pub title: String,
    pub shapes: Vec<Shape>,
}

fn text(x: f64, y: f64, s: impl Into<String>, size: f64, anchor: Anchor) -> Shape {
    Shape::Text {
        x,
        y,
        text: s.into(),
        size,
        anchor,
        fill: INK,
        vertical: false,
    }
}

/// A text as both renderers draw it: control characters (which XML 1.0 cannot hold) as
/// \u{…}.
pub fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn esc(s: &str) -> String {
    clean(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Drawing {
    fn new(width: f64, height: f64, title: impl Into<String>) -> Drawing {
        let title = title.into();
        Drawing {
            width,
            height,
            shapes: vec![
                Shape::Rect {
                    x: 0.0,
                    y: 0.0,
                    w: width,
                    h: height,
                    fill: "#ffffff",
                },
                text(12.0, 22.0, title.clone(), 15.0, Anchor::Start),
            ],
            title,
        }
    }

    /// Several drawings one under the other, under one title.
    /// Drawings side by side, `cols` a row, under one title.
    pub fn grid(title: &str, parts: Vec<Drawing>, cols: usize) -> Drawing {
        let cols = cols.max(1);
        let cell_w = parts.iter().map(|d| d.width).fold(0.0, f64::max);
        let mut out = Drawing::new(
            (cell_w * cols.min(parts.len().max(1)) as f64).max(320.0),
            34.0,
            title,
        );
        for row in parts.chunks(cols) {
            let dy = out.height;
            let row_h = row.iter().map(|d| d.height).fold(0.0, f64::max);
            for (c, d) in row.iter().enumerate() {
                for s in &d.shapes {
                    out.shapes
                        .push(shift_x(shift(s.clone(), dy), c as f64 * cell_w));
                }
            }
            out.height += row_h;
        }
        out
    }

    pub fn stack(title: &str, parts: Vec<Drawing>) -> Drawing {
        let width = parts.iter().map(|d| d.width).fold(320.0, f64::max);
        let mut out = Drawing::new(width, 34.0, title);
        for d in parts {
            let dy = out.height;
            for s in d.shapes {
                out.shapes.push(shift(s, dy));
            }
            out.height += d.height;
        }
        out
    }

    /// The drawing as an SVG document.
    pub fn svg(&self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif"><title>{t}</title>"#,
            w = self.width,
            h = self.height,
            t = esc(&self.title)
        );
        for shape in &self.shapes {
            match shape {
                Shape::Rect { x, y, w, h, fill } => {
                    let _ = write!(
                        s,
                        r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{fill}"/>"#
                    );
                }
                Shape::Line {
                    x1,
                    y1,
                    x2,
                    y2,
                    stroke,
                    width,
                    dashed,
                } => {
                    let dash = if *dashed {
                        r#" stroke-dasharray="5 3""#
                    } else {
                        ""
                    };
                    let _ = write!(
                        s,
                        r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"{dash}/>"#
                    );
                }
                Shape::Path {
                    points,
                    stroke,
                    width,
                } => {
                    let pts: Vec<String> = points
                        .iter()
                        .map(|(x, y)| format!("{x:.1},{y:.1}"))
                        .collect();
                    let _ = write!(
                        s,
                        r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="{width}"/>"#,
                        pts.join(" ")
                    );
                }
                Shape::Circle { x, y, r, fill } => {
                    let _ = write!(
                        s,
                        r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}"/>"#
                    );
                }
                Shape::Text {
                    x,
                    y,
                    text,
                    size,
                    anchor,
                    fill,
                    vertical,
                } => {
                    let a = match anchor {
                        Anchor::Start => "start",
                        Anchor::Middle => "middle",
                        Anchor::End => "end",
                    };
                    let rot = if *vertical {
                        format!(r#" transform="rotate(-90 {x:.1} {y:.1})""#)
                    } else {
                        String::new()
                    };
                    let _ = write!(
                        s,
                        r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{a}" fill="{fill}" xml:space="preserve"{rot}>{}</text>"#,
                        esc(text)
                    );
                }
            }
        }
        s.push_str("</svg>");
        s
    }

    /// Every text of the drawing (what a reader sees), for tests.
    pub fn texts(&self) -> Vec<String> {
        self.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Text { text, .. } => Some(clean(text)),
                _ => None,
            })
            .collect()
    }
}

fn shift(mut s: Shape, dy: f64) -> Shape {
    match &mut s {
        Shape::Rect { y, .. } | Shape::Circle { y, .. } | Shape::Text { y, .. } => *y += dy,
        Shape::Line { y1, y2, .. } => {
            *y1 += dy;
            *y2 += dy;
        }
        Shape::Path { points, .. } => points.iter_mut().for_each(|p| p.1 += dy),
    }
    s
}

fn shift_x(mut s: Shape, dx: f64) -> Shape {
    match &mut s {
        Shape::Rect { x, .. } | Shape::Circle { x, .. } | Shape::Text { x, .. } => *x += dx,
        Shape::Line { x1, x2, .. } => {
            *x1 += dx;
            *x2 += dx;
        }
        Shape::Path { points, .. } => points.iter_mut().for_each(|p| p.0 += dx),
    }
    s
}

/// A number for a tick label: short, no trailing noise.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{v:.3}").trim_end_matches('0').to_string()
    }
}

const PLOT_L: f64 = 70.0;
const PLOT_T: f64 = 44.0;
const PLOT_H: f64 = 200.0;

/// A bar chart: one group of bars per label, one bar per series.
pub fn bars(
    title: &str,
    x_label: &str,
    y_label: &str,
    labels: &[String],
    series: &[(&str, Vec<f64>)],
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
        d.shapes
            .push(text(PLOT_L - 7.0, y(v) + 4.0, tick(v), 11.0, Anchor::End));
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
) -> Drawing {
    let plot_w = 520.0;
    let height = PLOT_T + PLOT_H + 80.0;
    let mut d = Drawing::new(PLOT_L + plot_w + 30.0, height, title);
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| {
            x.is_finite() && y.is_finite() && (!log_x || *x > 0.0) && (!log_y || *y > 0.0)
        })
        .collect();
    let f = |v: f64, log: bool| if log { v.log10() } else { v };
    let range = |vals: Vec<f64>, log: bool| {
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
    };
    let (x0, x1) = range(all.iter().map(|p| f(p.0, log_x)).collect(), log_x);
    let (y0, y1) = range(all.iter().map(|p| f(p.1, log_y)).collect(), log_y);
    let px = |v: f64| PLOT_L + (f(v, log_x) - x0) / (x1 - x0) * plot_w;
    let py = |v: f64| PLOT_T + PLOT_H - (f(v, log_y) - y0) / (y1 - y0) * PLOT_H;
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
            tick(vx),
            11.0,
            Anchor::Middle,
        ));
        d.shapes.push(text(
            PLOT_L - 7.0,
            py(vy) + 4.0,
            tick(vy),
            11.0,
            Anchor::End,
        ));
    }
    for (k, s) in series.iter().enumerate() {
        let colour = SERIES[k % SERIES.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|(x, y)| {
                x.is_finite() && y.is_finite() && (!log_x || *x > 0.0) && (!log_y || *y > 0.0)
            })
            .map(|&(x, y)| (px(x), py(y)))
            .collect();
        if s.line && pts.len() > 1 {
            d.shapes.push(Shape::Path {
                points: pts.clone(),
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
            });
            if let Some(l) = s.labels.get(i) {
                d.shapes
                    .push(text(x + 5.0, y - 5.0, l.clone(), 10.0, Anchor::Start));
            }
        }
    }
    legend(&mut d, series.iter().map(|s| s.name), height - 12.0);
    d
}

fn axes(d: &mut Drawing, plot_w: f64, x_label: &str, y_label: &str) {
    let base = PLOT_T + PLOT_H;
    for (x1, y1, x2, y2) in [
        (PLOT_L, PLOT_T, PLOT_L, base),
        (PLOT_L, base, PLOT_L + plot_w, base),
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
        y: PLOT_T + PLOT_H / 2.0,
        text: y_label.to_string(),
        size: 12.0,
        anchor: Anchor::Middle,
        fill: MUTED,
        vertical: true,
    });
    d.shapes.push(Shape::Text {
        x: PLOT_L + plot_w / 2.0,
        y: d.height - 30.0,
        text: x_label.to_string(),
        size: 12.0,
        anchor: Anchor::Middle,
        fill: MUTED,
        vertical: false,
    });
}

fn legend<'a>(d: &mut Drawing, names: impl Iterator<Item = &'a str>, y: f64) {
    let mut x = PLOT_L;
    for (k, n) in names.enumerate() {
        d.shapes.push(Shape::Rect {
            x,
            y: y - 9.0,
            w: 10.0,
            h: 10.0,
            fill: SERIES[k % SERIES.len()],
        });
        d.shapes.push(text(x + 14.0, y, n, 11.0, Anchor::Start));
        x += 24.0 + 7.0 * n.chars().count() as f64;
    }
}

/// The next-token distribution: its `n` most likely tokens (final probability, and before
/// the stage that removed a token).
pub fn distribution(t: &TraceView, piece: &dyn Fn(u32) -> String, n: usize) -> Drawing {
    let ids: Vec<u32> = t.order.iter().take(n.max(1)).copied().collect();
    let labels: Vec<String> = ids.iter().map(|&id| piece(id)).collect();
    let kept: Vec<f64> = ids.iter().map(|&i| t.probs[i as usize] as f64).collect();
    let ghost: Vec<f64> = ids.iter().map(|&i| t.ghost[i as usize] as f64).collect();
    let title = match t.step {
        Some(s) => format!(
            "Next-token distribution at step {s}: entropy {:.3} nats, {} tokens kept",
            t.entropy, t.kept
        ),
        None => format!("Toy distribution: entropy {:.3} nats", t.entropy),
    };
    bars(
        &title,
        "token (most likely first)",
        "probability",
        &labels,
        &[("final p", kept), ("p before removal", ghost)],
    )
}

/// Each stage of the chain: the probability of the chart's tokens after it.
pub fn stages(t: &TraceView, piece: &dyn Fn(u32) -> String) -> Drawing {
    let labels: Vec<String> = t.chart_ids.iter().map(|&id| piece(id)).collect();
    // The stages that changed something, two charts a row; the neutral ones named in one
    // line (each of them would be a chart of identical bars: eight stacked made a PNG
    // 7,148 px tall, issue 32).
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
        .map(|s| {
            bars(
                &format!(
                    "{} ({}){}: {} kept",
                    s.stage.name(),
                    s.setting,
                    if s.active { "" } else { ", inactive" },
                    s.kept
                ),
                "token",
                "probability",
                &labels,
                &[
                    ("before", s.before.iter().map(|&v| v as f64).collect()),
                    ("after", s.after.iter().map(|&v| v as f64).collect()),
                ],
            )
        })
        .collect();
    let mut d = Drawing::grid("The sampling chain, stage by stage", parts, 2);
    if !neutral.is_empty() {
        let y = d.height + 16.0;
        d.shapes.push(text(
            12.0,
            y,
            format!("Neutral here (no change): {}", neutral.join(", ")),
            12.0,
            Anchor::Start,
        ));
        d.height = y + 12.0;
    }
    d
}

/// The beam tree: one column per depth, each node its piece and Σ log p; the best beam's
/// path in the accent colour.
pub fn beam_tree(
    nodes: &[BeamNode],
    best_node: Option<usize>,
    piece: &dyn Fn(u32) -> String,
) -> Drawing {
    let mut best = Vec::new();
    let mut at_node = best_node.filter(|&b| b < nodes.len());
    while let Some(b) = at_node {
        best.push(b);
        at_node = nodes[b]
            .parent
            .filter(|&p| p < nodes.len() && !best.contains(&p));
    }
    let depth = nodes.iter().map(|n| n.depth).max().unwrap_or(0);
    let mut rows = vec![0usize; depth + 1];
    let mut at = vec![(0.0, 0.0); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        let r = rows[n.depth];
        rows[n.depth] += 1;
        at[i] = (40.0 + n.depth as f64 * 110.0, 60.0 + r as f64 * 34.0);
    }
    let tall = rows.iter().copied().max().unwrap_or(1) as f64;
    let mut d = Drawing::new(
        (80.0 + (depth + 1) as f64 * 110.0).max(420.0),
        90.0 + tall * 34.0,
        format!(
            "Beam tree: {} nodes over {depth} levels (Σ log p beside each)",
            nodes.len()
        ),
    );
    d.shapes.push(text(
        12.0,
        40.0,
        "depth → (tokens generated)",
        11.0,
        Anchor::Start,
    ));
    for (i, n) in nodes.iter().enumerate() {
        if let Some(p) = n.parent.filter(|&p| p < nodes.len()) {
            let on = best.contains(&i) && best.contains(&p);
            d.shapes.push(Shape::Line {
                x1: at[p].0 + 4.0,
                y1: at[p].1,
                x2: at[i].0 - 4.0,
                y2: at[i].1,
                stroke: if on { ACCENT } else { LINE },
                width: if on { 2.5 } else { 1.0 },
                dashed: matches!(n.status, decoding_engine::beam::NodeStatus::Pruned),
            });
        }
    }
    for (i, n) in nodes.iter().enumerate() {
        let (x, y) = at[i];
        let on = best.contains(&i);
        d.shapes.push(Shape::Circle {
            x,
            y,
            r: 4.0,
            fill: if on { ACCENT } else { GREY },
        });
        let label = match n.token {
            Some(t) => format!("{} {:.2}", piece(t), n.cum_logprob),
            None => "prompt".to_string(),
        };
        d.shapes
            .push(text(x + 6.0, y - 6.0, label, 10.0, Anchor::Start));
    }
    d
}

/// The KV cache's bytes against the positions held: the formula's line over the context and
/// this sequence's point.
pub fn kv(cfg: &decoding_engine::Config, n: usize) -> Drawing {
    let kv_dim = cfg.dim / cfg.n_heads * cfg.n_kv_heads;
    let bytes = |n: usize| {
        decoding_engine::kv_cache::cache_bytes_formula(
            n as u64,
            cfg.n_layers as u64,
            kv_dim as u64,
            4,
        ) as f64
    };
    let line: Vec<(f64, f64)> = (0..=8)
        .map(|i| {
            let n = cfg.seq_len * i / 8;
            (n as f64, bytes(n))
        })
        .collect();
    xy(
        &format!(
            "KV cache: 2 × n × {} layers × {kv_dim} × 4 bytes; n = {n} holds {} bytes",
            cfg.n_layers,
            decoding_engine::units::thousands(bytes(n) as u64)
        ),
        "positions cached n",
        "bytes",
        &[
            XySeries {
                name: "2·n·N_layers·d·4",
                points: line,
                line: true,
                labels: vec![],
            },
            XySeries {
                name: "this sequence",
                points: vec![(n as f64, bytes(n))],
                line: false,
                labels: vec![format!("n = {n}")],
            },
        ],
        false,
        false,
    )
}

/// The compared columns: each column's next distribution.
pub fn columns(v: &ColumnsView, piece: &dyn Fn(u32) -> String) -> Drawing {
    let parts = v
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let labels: Vec<String> = c.top.iter().map(|&(id, _)| piece(id)).collect();
            let knobs = crate::page::column_text(&c.settings);
            bars(
                &format!(
                    "Column {} ({}): {} tokens, entropy {:.3} nats",
                    i + 1,
                    if knobs.is_empty() {
                        "defaults".to_string()
                    } else {
                        knobs
                    },
                    c.steps.len(),
                    c.entropy
                ),
                "token",
                "probability",
                &labels,
                &[("next p", c.top.iter().map(|&(_, p)| p).collect())],
            )
        })
        .collect();
    Drawing::stack(
        &format!(
            "Same θ, different config — differing knobs: {}",
            v.differ.join(", ")
        ),
        parts,
    )
}

/// f32, q8 and q4: each token's probability under the three precisions.
pub fn quant(q: &QuantView) -> Drawing {
    let labels: Vec<String> = q
        .tokens
        .iter()
        .map(|t| crate::page::piece_text(&t.piece, true, Some(10)))
        .collect();
    let series: Vec<(&str, Vec<f64>)> = q
        .precisions
        .iter()
        .enumerate()
        .map(|(k, p)| {
            (
                p.precision.name(),
                q.tokens
                    .iter()
                    .map(|t| t.p.get(k).copied().unwrap_or(0.0))
                    .collect(),
            )
        })
        .collect();
    bars(
        &format!("The same θ at three precisions, position {}", q.position),
        "token",
        "probability",
        &labels,
        &series,
    )
}

/// The last speculative cycle: p (target) and q (draft) of each drafted token.
pub fn spec(s: &SpecView) -> Option<Drawing> {
    let c = s.last.as_ref()?;
    let labels: Vec<String> = c
        .positions
        .iter()
        .map(|p| crate::page::piece_text(&p.piece, true, Some(10)))
        .collect();
    Some(bars(
        &format!(
            "Speculative cycle {}: {} of {} drafted tokens accepted (α = {:.3})",
            c.index,
            c.accepted,
            c.drafted.len(),
            s.alpha
        ),
        "drafted token",
        "probability",
        &labels,
        &[
            ("p (target)", c.positions.iter().map(|p| p.p).collect()),
            ("q (draft)", c.positions.iter().map(|p| p.q).collect()),
            (
                "min(p, q)",
                c.positions.iter().map(|p| p.p.min(p.q)).collect(),
            ),
        ],
    ))
}

/// Throughput against the batch size, and the roofline of the measured machine.
pub fn sweep(v: &SweepView) -> Drawing {
    let b = |f: &dyn Fn(&decoding_engine::batching::Throughput) -> f64| -> Vec<(f64, f64)> {
        v.rows.iter().map(|r| (r.batch as f64, f(r))).collect()
    };
    let tp = xy(
        &format!("Tokens per second against batch size B ({})", v.backend),
        "batch size B",
        "tokens / s",
        &[
            XySeries {
                name: "prefill",
                points: b(&|r| r.prefill_tokens_per_s),
                line: true,
                labels: vec![],
            },
            XySeries {
                name: "decode",
                points: b(&|r| r.decode_tokens_per_s),
                line: true,
                labels: vec![],
            },
        ],
        true,
        false,
    );
    let roof = v.peaks.roof;
    let ridge = roof.ridge();
    let line: Vec<(f64, f64)> = [ridge / 100.0, ridge, ridge * 100.0]
        .iter()
        .map(|&i| (i, roof.attainable(i)))
        .collect();
    let point = |r: &decoding_engine::batching::Throughput, decode: bool| {
        let (c, ms, passes) = if decode {
            (&r.decode, r.decode_ms, r.gen_tokens.max(1) as f64)
        } else {
            (&r.prefill, r.prefill_ms, 1.0)
        };
        (
            c.intensity(),
            c.flops as f64 * passes / (ms / 1e3).max(1e-12),
        )
    };
    let rl = xy(
        &format!("Roofline of this machine: ridge {ridge:.1} FLOP/byte"),
        "arithmetic intensity (FLOP / byte)",
        "FLOP / s",
        &[
            XySeries {
                name: "attainable",
                points: line,
                line: true,
                labels: vec![],
            },
            XySeries {
                name: "prefill",
                points: v.rows.iter().map(|r| point(r, false)).collect(),
                line: false,
                labels: v.rows.iter().map(|r| format!("P{}", r.batch)).collect(),
            },
            XySeries {
                name: "decode",
                points: v.rows.iter().map(|r| point(r, true)).collect(),
                line: false,
                labels: v.rows.iter().map(|r| format!("D{}", r.batch)).collect(),
            },
        ],
        true,
        true,
    );
    Drawing::stack("Batching and the two regimes", vec![tp, rl])
}

/// Both policies' requests: steps waiting, to the first token, and decoding.
pub fn serve(v: &ServeView) -> Drawing {
    let part = |name: &str, r: &decoding_engine::batching::SimResult| {
        let labels: Vec<String> = r.served.iter().map(|s| format!("#{}", s.id)).collect();
        bars(
            &format!(
                "{name}: {} passes, occupancy {:.0} %",
                r.passes,
                r.occupancy * 100.0
            ),
            "request",
            "steps",
            &labels,
            &[
                (
                    "waiting",
                    r.served
                        .iter()
                        .map(|s| s.admitted.saturating_sub(s.arrival) as f64)
                        .collect(),
                ),
                (
                    "to first token",
                    r.served
                        .iter()
                        .map(|s| s.first_token.saturating_sub(s.admitted) as f64)
                        .collect(),
                ),
                (
                    "decoding",
                    r.served
                        .iter()
                        .map(|s| s.finished.saturating_sub(s.first_token) as f64)
                        .collect(),
                ),
            ],
        )
    };
    Drawing::stack(
        &format!(
            "Serving {} requests through {} slots",
            v.requests.len(),
            v.slots
        ),
        vec![
            part("continuous", &v.continuous),
            part("static", &v.static_),
        ],
    )
}

/// The transcript with its settings, as the page exports it and loads it back.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TranscriptFile {
    /// "decoding-explorer transcript"
    pub format: String,
    pub version: u32,
    /// The model it was made with (name and parameters), checked when it is loaded.
    pub model: String,
    pub params: u64,
    pub prompt: String,
    /// The settings as the link's pairs.
    pub settings: Vec<(String, String)>,
    pub tokens: Vec<u32>,
    pub text: String,
    /// The whole view as a link's query.
    pub link: String,
}

pub const TRANSCRIPT_FORMAT: &str = "decoding-explorer transcript";
/// Largest transcript file the page reads.
pub const MAX_TRANSCRIPT_BYTES: usize = 1 << 20;

impl TranscriptFile {
    /// Reads a file: its format, version and size checked, the settings validated.
    pub fn parse(text: &str) -> Result<TranscriptFile, String> {
        if text.len() > MAX_TRANSCRIPT_BYTES {
            return Err(format!(
                "a transcript of {} bytes: the page reads at most {}",
                text.len(),
                MAX_TRANSCRIPT_BYTES
            ));
        }
        let f: TranscriptFile =
            serde_json::from_str(text).map_err(|e| format!("not a transcript file: {e}"))?;
        if f.format != TRANSCRIPT_FORMAT || f.version != 1 {
            return Err(format!(
                "{:?} version {} is not a transcript this page writes ({TRANSCRIPT_FORMAT:?} version 1)",
                f.format, f.version
            ));
        }
        if f.tokens.len() > 4096 {
            return Err(format!("{} tokens: at most 4,096", f.tokens.len()));
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every export is well-formed XML whose texts are its labels: parsed back with an XML
    /// reader we did not write (roxmltree), its <text> elements are the drawing's texts.
    fn check(d: &Drawing, must: &[&str]) {
        let svg = d.svg();
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let texts: Vec<String> = root
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or_default().to_string())
            .collect();
        assert_eq!(texts, d.texts(), "the SVG's texts are the drawing's");
        for m in must {
            assert!(texts.iter().any(|t| t.contains(m)), "no {m:?} in {texts:?}");
        }
        assert!(d.width > 0.0 && d.height > 0.0);
    }

    #[test]
    fn charts_carry_their_title_axes_ticks_and_legend() {
        let labels = vec![
            "\",\"".to_string(),
            "\"<a&b>\"".to_string(),
            "\u{1}".to_string(),
        ];
        let d = bars(
            "T",
            "token",
            "probability",
            &labels,
            &[("final p", vec![0.9, 0.05, 0.0])],
        );
        check(
            &d,
            &["T", "token", "probability", "final p", "0.9", "\"<a&b>\""],
        );
        // The tallest bar reaches the top of the plot; a zero bar has no height.
        let rects: Vec<(f64, f64)> = d
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Rect { y, h, fill, .. } if *fill == ACCENT => Some((*y, *h)),
                _ => None,
            })
            .collect();
        assert_eq!(rects.len(), 3 + 1, "three bars and the legend's swatch");
        assert!((rects[0].1 - PLOT_H).abs() < 1e-9);
        assert_eq!(rects[2].1, 0.0);
        let x = xy(
            "R",
            "intensity",
            "FLOP/s",
            &[XySeries {
                name: "roof",
                points: vec![(0.1, 1e9), (10.0, 1e11)],
                line: true,
                labels: vec!["P1".into(), "P2".into()],
            }],
            true,
            true,
        );
        check(&x, &["R", "intensity", "FLOP/s", "roof", "P1", "1.0e9"]);
        // Non-finite and non-positive points on log axes are left out, not drawn at NaN.
        let y = xy(
            "N",
            "x",
            "y",
            &[XySeries {
                name: "s",
                points: vec![(0.0, 1.0), (f64::NAN, 2.0), (1.0, 3.0)],
                line: true,
                labels: vec![],
            }],
            true,
            false,
        );
        assert!(!y.svg().contains("NaN"));
        let s = Drawing::stack("both", vec![d.clone(), x]);
        check(&s, &["both", "T", "R"]);
        assert!(s.height > d.height);
    }

    #[test]
    fn transcript_files_are_checked() {
        let f = TranscriptFile {
            format: TRANSCRIPT_FORMAT.into(),
            version: 1,
            model: "stories260K".into(),
            params: 260_032,
            prompt: "Once upon a time".into(),
            settings: vec![("temperature".into(), "0.7".into())],
            tokens: vec![1, 2, 3],
            text: "x".into(),
            link: "temperature=0.7&steps=3".into(),
        };
        let text = serde_json::to_string(&f).unwrap();
        assert_eq!(TranscriptFile::parse(&text).unwrap(), f);
        for bad in [
            text.replace("decoding-explorer transcript", "something else"),
            text.replace("\"version\":1", "\"version\":7"),
            text[..text.len() / 2].to_string(),
            "x".repeat(MAX_TRANSCRIPT_BYTES + 1),
        ] {
            assert!(
                TranscriptFile::parse(&bad).is_err(),
                "{}",
                &bad[..bad.len().min(80)]
            );
        }
    }
}
