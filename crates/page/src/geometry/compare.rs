//! The compared columns' next-token bars: each of a column's top tokens a horizontal bar
//! from the left, its length the probability on a linear 0-to-1 scale (clamped).

use super::{Frame, Rect};

/// The page's bar box of one token (a viewBox stretched to the row's width).
pub const SCREEN: Frame = Frame::new(0.0, 0.0, 100.0, 6.0);

/// A bar's share of its row's height (the rest is the gap between rows).
pub const BAR: f64 = 0.6;

/// A bar's length as a fraction of the frame's width for probability `p`.
pub fn length_fraction(p: f64) -> f64 {
    if p.is_finite() {
        p.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Probability `p`'s bar filling `frame`'s height from its left edge.
pub fn bar(p: f64, frame: Frame) -> Rect {
    Rect {
        x: frame.left,
        y: frame.top,
        w: length_fraction(p) * frame.width,
        h: frame.height,
    }
}

/// One of a column's top tokens: its row's box and its bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopBar {
    pub id: u32,
    pub p: f64,
    /// The row's box: its label's baseline and the p's go by its middle.
    pub row: Frame,
    pub bar: Rect,
}

impl TopBar {
    /// The y of the row's middle.
    pub fn middle(&self) -> f64 {
        self.row.top + self.row.height / 2.0
    }
}

/// A column's `top` tokens (id, p), most likely first, one row each down `frame`: each
/// bar [`BAR`] of its row's height, centred in it.
pub fn top_bars(top: &[(u32, f64)], frame: Frame) -> Vec<TopBar> {
    let row_h = frame.height / top.len().max(1) as f64;
    top.iter()
        .enumerate()
        .map(|(i, &(id, p))| {
            let row = Frame::new(frame.left, frame.top + i as f64 * row_h, frame.width, row_h);
            let inner = Frame::new(
                row.left,
                row.top + row_h * (1.0 - BAR) / 2.0,
                row.width,
                row_h * BAR,
            );
            TopBar {
                id,
                p,
                row,
                bar: bar(p, inner),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn bars_are_as_long_as_the_probability() {
        // p 0.5 → 50 of the page's 100 units; out of range or NaN, clamped.
        assert_eq!(
            bar(0.5, SCREEN),
            Rect {
                x: 0.0,
                y: 0.0,
                w: 50.0,
                h: 6.0
            }
        );
        assert_eq!(bar(1.7, SCREEN).w, 100.0);
        assert_eq!(bar(-0.2, SCREEN).w, 0.0);
        assert_eq!(bar(f64::NAN, SCREEN).w, 0.0);
        assert!(close(bar(0.123, SCREEN).w, 12.3));
    }

    #[test]
    fn rows_go_down_the_frame() {
        let top = [(7, 0.5), (3, 0.25), (9, 0.125), (1, 0.0)];
        let b = top_bars(&top, Frame::new(110.0, 60.0, 300.0, 80.0));
        // Four rows of 20 px; bars 12 high, 4 below each row's top; 0.25 → 75 of 300.
        assert_eq!((b[1].id, b[1].p), (3, 0.25));
        assert_eq!(b[1].row, Frame::new(110.0, 80.0, 300.0, 20.0));
        assert_eq!(
            b[1].bar,
            Rect {
                x: 110.0,
                y: 84.0,
                w: 75.0,
                h: 12.0
            }
        );
        assert!(close(b[0].bar.w, 150.0) && close(b[2].bar.w, 37.5) && b[3].bar.w == 0.0);
        assert_eq!(b[3].middle(), 130.0);
        assert!(top_bars(&[], SCREEN).is_empty());
    }
}
