//! The next-token distribution's chart: one bar per token, most likely first, its height
//! the probability on the page's scale (linear, or log down to 1e-8), the chosen token and
//! the removed ones (at the probability they had before removal) told apart; top-p's
//! running sum as a line over the bars and its threshold p.

use super::{Frame, Tick};
use crate::page::Scale;
use crate::protocol::TraceView;

/// Bars in the chart unless every token is asked for, and at most with "show all" (more
/// than 1,000 bars are narrower than a pixel; the page's list has every token).
pub const CHART_BARS: usize = 64;
pub const CHART_ALL: usize = 1000;

/// The page's chart box (a viewBox stretched to the page's width).
pub const SCREEN: Frame = Frame::new(0.0, 0.0, 1000.0, 100.0);

/// The log scale's floor, ln(1e-8): a probability of 1e-8 or less has no bar.
pub const LOG_FLOOR: f64 = -8.0 * std::f64::consts::LN_10;

/// A bar's height as a fraction of the plot's (0 to 1) for probability `p` on `scale`:
/// `p` itself, or on the log scale (ln p − ln 1e-8) / −ln 1e-8.
pub fn bar_fraction(p: f64, scale: Scale) -> f64 {
    let f = match scale {
        Scale::Probability => p,
        Scale::LogProbability if p > 0.0 => (p.ln() - LOG_FLOOR) / -LOG_FLOOR,
        Scale::LogProbability => 0.0,
    };
    if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// What a bar stands for (its colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    Kept,
    /// Removed by a stage: drawn at its probability before removal.
    Removed,
    Chosen,
}

/// One token's bar: from `y` (its top) down to `base`, `w` wide from `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub id: u32,
    pub kind: BarKind,
    /// The probability drawn (the final one, or before removal).
    pub p: f64,
    pub x: f64,
    pub w: f64,
    pub y: f64,
    pub base: f64,
}

impl Bar {
    pub fn height(&self) -> f64 {
        self.base - self.y
    }
}

/// Top-p's running sum (on a linear 0-to-1 axis whatever the scale) and its threshold's y.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub points: Vec<(f64, f64)>,
    pub threshold: f64,
}

/// The chart: its bars (most likely first), top-p's cut, and the y axis's ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    pub frame: Frame,
    pub bars: Vec<Bar>,
    pub cut: Option<Cut>,
    pub y_ticks: Vec<Tick>,
}

/// The chart of trace `t`'s `limit` most likely tokens on `scale`, in `frame`.
pub fn distribution(t: &TraceView, scale: Scale, limit: usize, frame: Frame) -> Geometry {
    let slot = frame.width / limit.max(1) as f64;
    // At least 0.03 % of the width (0.3 of the page's 1,000 units): a bar stays visible.
    let w = (slot * 0.9).max(frame.width * 3e-4);
    let bars = t
        .order
        .iter()
        .take(limit)
        .enumerate()
        .map(|(x, &id)| {
            let i = id as usize;
            let final_p = t.probs.get(i).copied().unwrap_or(0.0);
            let (p, kind) = if final_p > 0.0 {
                let kind = if id == t.token {
                    BarKind::Chosen
                } else {
                    BarKind::Kept
                };
                (final_p, kind)
            } else {
                (t.ghost.get(i).copied().unwrap_or(0.0), BarKind::Removed)
            };
            let p = p as f64;
            Bar {
                id,
                kind,
                p,
                x: frame.x(x as f64 * slot / frame.width),
                w,
                y: frame.y(bar_fraction(p, scale)),
                base: frame.bottom(),
            }
        })
        .collect();
    let cut = t.cut.as_ref().map(|c| {
        let mut points = vec![(frame.left, frame.bottom())];
        points.extend(
            c.cumulative
                .iter()
                .take(limit)
                .enumerate()
                .map(|(x, &s)| (frame.left + (x as f64 + 0.9) * slot, frame.y(s as f64))),
        );
        Cut {
            points,
            threshold: frame.y(c.p),
        }
    });
    Geometry {
        frame,
        bars,
        cut,
        y_ticks: y_ticks(scale, frame),
    }
}

/// The y axis's ticks: quarters of 1, or every other decade from 1e-8 to 1.
pub fn y_ticks(scale: Scale, frame: Frame) -> Vec<Tick> {
    let values: [(f64, &str); 5] = match scale {
        Scale::Probability => [
            (0.0, "0"),
            (0.25, "0.25"),
            (0.5, "0.5"),
            (0.75, "0.75"),
            (1.0, "1"),
        ],
        Scale::LogProbability => [
            (1e-8, "1e-8"),
            (1e-6, "1e-6"),
            (1e-4, "1e-4"),
            (1e-2, "0.01"),
            (1.0, "1"),
        ],
    };
    values
        .iter()
        .map(|&(p, label)| Tick {
            at: frame.y(bar_fraction(p, scale)),
            label: label.to_string(),
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::CutView;

    /// Four tokens: id 2 (p 0.5, chosen), id 0 (0.3), id 3 (0.2), id 1 removed (0.1
    /// before removal); top-p at 0.8 saw 0.5, 0.8, 1.0.
    pub(crate) fn trace() -> TraceView {
        TraceView {
            order: vec![2, 0, 3, 1],
            probs: vec![0.3, 0.0, 0.5, 0.2],
            ghost: vec![0.0, 0.1, 0.0, 0.0],
            removed_by: vec![-1, 0, -1, -1],
            stages: vec![],
            chart_ids: vec![2, 0, 3, 1],
            kept: 3,
            entropy: 1.0,
            effective_tokens: 2.7,
            coin: None,
            token: 2,
            rank: 0,
            prob: 0.5,
            step: Some(3),
            cut: Some(CutView {
                stage: 0,
                p: 0.8,
                ids: vec![2, 0, 3],
                cumulative: vec![0.5, 0.8, 1.0],
            }),
        }
    }

    #[test]
    fn heights_follow_the_scale() {
        // By hand: ln 0.5 = −0.693147, ln 1e-8 = −18.420681; (−0.693147 + 18.420681) /
        // 18.420681 = 0.962371.
        assert!((bar_fraction(0.5, Scale::LogProbability) - 0.962371).abs() < 1e-6);
        assert_eq!(bar_fraction(0.5, Scale::Probability), 0.5);
        assert_eq!(bar_fraction(1e-9, Scale::LogProbability), 0.0);
        assert_eq!(bar_fraction(0.0, Scale::LogProbability), 0.0);
        assert_eq!(bar_fraction(1.0, Scale::LogProbability), 1.0);
        assert_eq!(bar_fraction(f64::NAN, Scale::Probability), 0.0);
        // 1e-4 is half way down the log axis.
        assert!((bar_fraction(1e-4, Scale::LogProbability) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bars_sit_in_the_frame_most_likely_first() {
        let t = trace();
        let g = distribution(&t, Scale::Probability, 4, SCREEN);
        let kinds: Vec<BarKind> = g.bars.iter().map(|b| b.kind).collect();
        use BarKind::*;
        assert_eq!(kinds, [Chosen, Kept, Kept, Removed]);
        // 4 bars over 1,000 units: 250 apart, 225 wide; p 0.5 → 50 of the 100 units high.
        assert_eq!(g.bars[1].x, 250.0);
        assert_eq!(g.bars[1].w, 225.0);
        assert!((g.bars[0].height() - 50.0).abs() < 1e-9 && g.bars[0].y == 50.0);
        assert!((g.bars[3].height() - 10.0).abs() < 1e-6, "the ghost's 0.1");
        let log = distribution(
            &t,
            Scale::LogProbability,
            4,
            Frame::new(70.0, 44.0, 200.0, 200.0),
        );
        assert!((log.bars[0].height() - 200.0 * 0.962371).abs() < 1e-3);
        assert_eq!(log.bars[2].x, 170.0);
        // The cut: from the bottom left, each sum at 0.9 of its slot; p 0.8 at 80 % up.
        let cut = g.cut.unwrap();
        assert_eq!(cut.points[0], (0.0, 100.0));
        assert!((cut.points[2].0 - 475.0).abs() < 1e-9 && (cut.points[2].1 - 20.0).abs() < 1e-4);
        assert!((cut.threshold - 20.0).abs() < 1e-9);
        // Fewer bars than tokens: the first `limit`.
        assert_eq!(
            distribution(&t, Scale::Probability, 2, SCREEN).bars.len(),
            2
        );
    }

    #[test]
    fn ticks_label_the_scale() {
        let f = Frame::new(0.0, 0.0, 10.0, 200.0);
        let lin = y_ticks(Scale::Probability, f);
        assert_eq!((lin[2].at, lin[2].label.as_str()), (100.0, "0.5"));
        let log = y_ticks(Scale::LogProbability, f);
        assert_eq!(log[2].label, "1e-4");
        assert!((log[2].at - 100.0).abs() < 1e-9 && log[4].at == 0.0);
    }
}
