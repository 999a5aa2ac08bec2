//! One geometry per chart: the numbers that place a chart's marks (bars, points, lines,
//! axis ranges and scales, ticks), computed once from the view's data inside a [`Frame`]
//! (the plot's box in the caller's units). The page's SVG (crate `decoding-app`) and the
//! export's [`crate::export::Drawing`] are both built from these, so an exported chart is
//! the chart on screen by construction: only the frame (and the styling) differs.
//!
//! Plain Rust, no UI: tested natively against values worked out by hand.

pub mod batching;
pub mod beam;
pub mod chain;
pub mod compare;
pub mod distribution;
pub mod kv;

/// A plot's box: `left`, `top`, `width`, `height` in the caller's units (a viewBox's, or
/// the export's pixels). Fractions place marks in it: x from the left, y from the bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

impl Frame {
    pub const fn new(left: f64, top: f64, width: f64, height: f64) -> Frame {
        Frame {
            left,
            top,
            width,
            height,
        }
    }

    pub fn right(&self) -> f64 {
        self.left + self.width
    }

    pub fn bottom(&self) -> f64 {
        self.top + self.height
    }

    /// The x of a fraction of the width (0: the left edge).
    pub fn x(&self, fraction: f64) -> f64 {
        self.left + fraction * self.width
    }

    /// The y of a fraction of the height (0: the bottom edge, 1: the top).
    pub fn y(&self, fraction: f64) -> f64 {
        self.bottom() - fraction * self.height
    }
}

/// A tick on an axis: where it sits (x or y, in the frame's units) and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub at: f64,
    pub label: String,
}

/// A rectangle in the frame's units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// Where `v` sits between `lo` and `hi` (both positive) on a log axis, 0 to 1 (clamped).
pub fn log_fraction(v: f64, lo: f64, hi: f64) -> f64 {
    let placed = v > 0.0 && lo > 0.0 && hi > lo;
    if !placed {
        return 0.0;
    }
    ((v.clamp(lo, hi) / lo).ln() / (hi / lo).ln()).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_place_fractions_from_the_bottom_left() {
        let f = Frame::new(10.0, 20.0, 100.0, 50.0);
        assert_eq!((f.x(0.0), f.x(1.0), f.x(0.25)), (10.0, 110.0, 35.0));
        assert_eq!((f.y(0.0), f.y(1.0), f.y(0.5)), (70.0, 20.0, 45.0));
        assert_eq!((f.right(), f.bottom()), (110.0, 70.0));
        // 10 between 1 and 1000 is a third of the way in decades; outside, clamped.
        assert!((log_fraction(10.0, 1.0, 1000.0) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(log_fraction(1e6, 1.0, 1000.0), 1.0);
        assert_eq!(log_fraction(0.0, 1.0, 1000.0), 0.0);
        assert_eq!(log_fraction(f64::NAN, 1.0, 1000.0), 0.0);
    }
}
