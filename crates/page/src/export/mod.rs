//! Charts for export, built from the views' data in plain Rust (never scraped from the
//! page): each view becomes a [`Drawing`] — rectangles, lines, paths, circles and text in
//! pixels, with its title, axes, tick labels and legend — which [`Drawing::svg`] writes as
//! an SVG file and the page paints onto a canvas for a PNG (the same shapes, so the two
//! files agree). Tested natively: the SVG parses as XML and carries its labels.

pub(crate) mod charts;
pub(crate) mod figures;
mod grids;
pub(crate) mod panels;
mod plot;
mod transcript;

pub use charts::*;
pub use figures::*;
pub use grids::*;
pub use panels::*;
pub use plot::{bars, xy, XySeries};
pub use transcript::*;

use crate::i18n::Lang;
use crate::lesson::builder::tr;
use std::fmt::Write;

const ACCENT: &str = "#2f5bd3";
const CHOSEN: &str = "#e0662f";
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
        /// A ring round it, 2.5 px wide (a finished hypothesis).
        ring: Option<&'static str>,
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
    /// Shapes that are one mark to a reader: a point with its tooltip, a request's row.
    Group { mark: Mark, shapes: Vec<Shape> },
}

/// What a mark says beyond its pixels, in the SVG the page shows and the file holds: a
/// class (the page's style), a test id, a tooltip and `data-*` values. Empty parts are
/// not written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mark {
    pub class: String,
    pub testid: String,
    pub title: String,
    pub data: Vec<(&'static str, String)>,
}

impl Mark {
    /// A mark with a test id (and the same class).
    pub fn id(testid: impl Into<String>) -> Mark {
        let testid = testid.into();
        Mark {
            class: testid.clone(),
            testid,
            ..Mark::default()
        }
    }

    pub fn title(mut self, title: impl Into<String>) -> Mark {
        self.title = title.into();
        self
    }

    pub fn data(mut self, key: &'static str, value: impl Into<String>) -> Mark {
        self.data.push((key, value.into()));
        self
    }

    /// The mark around `shapes`.
    pub fn around(self, shapes: Vec<Shape>) -> Shape {
        Shape::Group { mark: self, shapes }
    }

    /// Its attributes as SVG writes them (each with a leading space).
    fn attrs(&self) -> String {
        let mut s = String::new();
        for (k, v) in [("class", &self.class), ("data-testid", &self.testid)] {
            if !v.is_empty() {
                let _ = write!(s, r#" {k}="{}""#, esc(v));
            }
        }
        for (k, v) in &self.data {
            let _ = write!(s, r#" data-{k}="{}""#, esc(v));
        }
        s
    }

    /// Its tooltip as an SVG `<title>` (nothing when it has none).
    fn title_svg(&self) -> String {
        if self.title.is_empty() {
            String::new()
        } else {
            format!("<title>{}</title>", esc(&self.title))
        }
    }
}

/// A dashed line's dash and gap, in pixels (the SVG's `stroke-dasharray`, the canvas's
/// line dash).
pub const DASH: [f64; 2] = [5.0, 3.0];

/// A circle's ring's width, in pixels.
pub const RING: f64 = 2.5;

/// A stroked shape as both renderers draw it: its points in order, colour, width and dash.
#[derive(Debug, Clone, PartialEq)]
pub struct Stroke {
    pub points: Vec<(f64, f64)>,
    pub colour: &'static str,
    pub width: f64,
    pub dash: Option<[f64; 2]>,
}

impl Shape {
    /// A line or a path as a stroke (a line is a path of two points); None for the others.
    pub fn stroke(&self) -> Option<Stroke> {
        match self {
            Shape::Line {
                x1,
                y1,
                x2,
                y2,
                stroke,
                width,
                dashed,
            } => Some(Stroke {
                points: vec![(*x1, *y1), (*x2, *y2)],
                colour: stroke,
                width: *width,
                dash: dashed.then_some(DASH),
            }),
            Shape::Path {
                points,
                stroke,
                width,
            } => Some(Stroke {
                points: points.clone(),
                colour: stroke,
                width: *width,
                dash: None,
            }),
            _ => None,
        }
    }
}

/// A text as both renderers draw it: at (x, y), its characters [`clean`]ed, turned 90°
/// anticlockwise when `vertical`.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub x: f64,
    pub y: f64,
    pub text: String,
    pub size: f64,
    pub anchor: Anchor,
    pub fill: &'static str,
    pub vertical: bool,
}

impl Shape {
    /// A text shape as a label; None for the others.
    pub fn label(&self) -> Option<Label> {
        match self {
            Shape::Text {
                x,
                y,
                text,
                size,
                anchor,
                fill,
                vertical,
            } => Some(Label {
                x: *x,
                y: *y,
                text: clean(text),
                size: *size,
                anchor: *anchor,
                fill,
                vertical: *vertical,
            }),
            _ => None,
        }
    }
}

/// A figure: its size, title and shapes.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawing {
    pub width: f64,
    pub height: f64,
    pub title: String,
    pub shapes: Vec<Shape>,
    /// The whole figure's class and test id on the page (its title is the tooltip).
    pub root: Mark,
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
            root: Mark::default(),
        }
    }

    /// The drawing as the page's figure `testid` (its class too).
    pub fn on_page(mut self, testid: &str) -> Drawing {
        self.root = Mark::id(testid);
        self
    }

    /// The drawing in `scheme`'s colours (`theme::Scheme::ink`): the page shows and exports
    /// its figures in the theme it runs in.
    pub fn themed(mut self, scheme: crate::theme::Scheme) -> Drawing {
        self.shapes = self
            .shapes
            .into_iter()
            .map(|s| recolour(s, scheme))
            .collect();
        self
    }

    /// Its shapes with groups opened, in drawing order (what a painter paints).
    pub fn leaves(&self) -> Vec<&Shape> {
        fn walk<'a>(shapes: &'a [Shape], out: &mut Vec<&'a Shape>) {
            for s in shapes {
                match s {
                    Shape::Group { shapes, .. } => walk(shapes, out),
                    leaf => out.push(leaf),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.shapes, &mut out);
        out
    }

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

    /// Several drawings one under the other, under one title.
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

    /// The drawing as an SVG document: the file the export saves and the figure the page
    /// shows.
    pub fn svg(&self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" role="img" aria-label="{t}"{a}><title>{t}</title>"#,
            w = self.width,
            h = self.height,
            t = esc(&self.title),
            a = self.root.attrs(),
        );
        shapes_svg(&mut s, &self.shapes);
        s.push_str("</svg>");
        s
    }

    /// Every text of the drawing (what a reader sees), for tests.
    pub fn texts(&self) -> Vec<String> {
        self.leaves()
            .into_iter()
            .filter_map(|s| match s {
                Shape::Text { text, .. } => Some(clean(text)),
                _ => None,
            })
            .collect()
    }
}

/// Shapes as SVG elements, a group as `<g>` with its mark.
fn shapes_svg(s: &mut String, shapes: &[Shape]) {
    for shape in shapes {
        if let Some(st) = shape.stroke() {
            stroke_svg(s, &st, matches!(shape, Shape::Line { .. }));
        } else if let Some(l) = shape.label() {
            label_svg(s, &l);
        } else {
            match shape {
                Shape::Rect { x, y, w, h, fill } => {
                    let _ = write!(
                        s,
                        r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{fill}"/>"#
                    );
                }
                Shape::Circle {
                    x,
                    y,
                    r,
                    fill,
                    ring,
                } => {
                    let ring = ring.map_or(String::new(), |c| {
                        format!(r#" stroke="{c}" stroke-width="{RING}""#)
                    });
                    let _ = write!(
                        s,
                        r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}"{ring}/>"#
                    );
                }
                Shape::Group { mark, shapes } => {
                    let _ = write!(s, "<g{}>{}", mark.attrs(), mark.title_svg());
                    shapes_svg(s, shapes);
                    s.push_str("</g>");
                }
                _ => {}
            }
        }
    }
}

/// A label as an SVG `<text>`.
fn label_svg(s: &mut String, l: &Label) {
    let a = match l.anchor {
        Anchor::Start => "start",
        Anchor::Middle => "middle",
        Anchor::End => "end",
    };
    let (x, y) = (l.x, l.y);
    let rot = if l.vertical {
        format!(r#" transform="rotate(-90 {x:.1} {y:.1})""#)
    } else {
        String::new()
    };
    let _ = write!(
        s,
        r#"<text x="{x:.1}" y="{y:.1}" font-size="{}" text-anchor="{a}" fill="{}" xml:space="preserve"{rot}>{}</text>"#,
        l.size,
        l.fill,
        esc(&l.text)
    );
}

/// A stroke as SVG: a `<line>` (a line's two points) or a `<polyline>`.
fn stroke_svg(s: &mut String, st: &Stroke, line: bool) {
    let dash = match st.dash {
        Some([on, off]) => format!(r#" stroke-dasharray="{on} {off}""#),
        None => String::new(),
    };
    let (colour, width) = (st.colour, st.width);
    if let (true, [(x1, y1), (x2, y2)]) = (line, st.points.as_slice()) {
        let _ = write!(
            s,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{colour}" stroke-width="{width}"{dash}/>"#
        );
    } else {
        let pts: Vec<String> = st
            .points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="{width}"{dash}/>"#,
            pts.join(" ")
        );
    }
}

fn recolour(mut s: Shape, scheme: crate::theme::Scheme) -> Shape {
    let ink = |c: &mut &'static str| *c = scheme.ink(c);
    match &mut s {
        Shape::Rect { fill, .. } | Shape::Text { fill, .. } => ink(fill),
        Shape::Line { stroke, .. } | Shape::Path { stroke, .. } => ink(stroke),
        Shape::Circle { fill, ring, .. } => {
            ink(fill);
            ring.iter_mut().for_each(ink);
        }
        Shape::Group { shapes, .. } => {
            *shapes = std::mem::take(shapes)
                .into_iter()
                .map(|c| recolour(c, scheme))
                .collect()
        }
    }
    s
}

fn shift(mut s: Shape, dy: f64) -> Shape {
    match &mut s {
        Shape::Rect { y, .. } | Shape::Circle { y, .. } | Shape::Text { y, .. } => *y += dy,
        Shape::Line { y1, y2, .. } => {
            *y1 += dy;
            *y2 += dy;
        }
        Shape::Path { points, .. } => points.iter_mut().for_each(|p| p.1 += dy),
        Shape::Group { shapes, .. } => {
            *shapes = std::mem::take(shapes)
                .into_iter()
                .map(|c| shift(c, dy))
                .collect()
        }
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
        Shape::Group { shapes, .. } => {
            *shapes = std::mem::take(shapes)
                .into_iter()
                .map(|c| shift_x(c, dx))
                .collect()
        }
    }
    s
}

/// A figure's number, `decimals` places, as `lang` writes it (`i18n::number`); English as
/// the figures have always written it, ungrouped.
fn num(lang: Lang, v: f64, decimals: usize) -> String {
    match lang {
        Lang::En => format!("{v:.decimals$}"),
        _ => crate::i18n::number(lang, v, decimals),
    }
}

/// A figure's count, as `lang` writes it (English ungrouped).
fn int(lang: Lang, n: usize) -> String {
    num(lang, n as f64, 0)
}

/// A number for a tick label: short, no trailing noise, its decimal point the language's.
fn tick(v: f64, lang: Lang) -> String {
    crate::i18n::point(lang, tick_text(v))
}

fn tick_text(v: f64) -> String {
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

#[cfg(test)]
pub(crate) mod tests;
