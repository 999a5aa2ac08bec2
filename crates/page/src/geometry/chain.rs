//! The sampling chain's stage charts: per token of the chart, its probability entering the
//! stage ("before") and leaving it ("after") as two bars side by side in the token's slot,
//! each 0.45 of the slot wide, on a square-root scale (the small probabilities stay visible
//! beside a dominant one).

use super::{Frame, Rect, Tick};
use crate::protocol::StageView;

/// The page's mini chart box (a viewBox stretched to the chart's size).
pub const SCREEN: Frame = Frame::new(0.0, 0.0, 100.0, 30.0);

/// A bar's width as a share of its token's slot.
pub const BAR: f64 = 0.45;

/// A bar's height as a fraction of the plot's (0 to 1) for probability `p`: √p.
pub fn height_fraction(p: f64) -> f64 {
    let f = p.max(0.0).sqrt();
    if f.is_finite() {
        f.min(1.0)
    } else {
        0.0
    }
}

/// One token's two bars: its probability before the stage and after it (a bar of height 0
/// where the probability is 0: nothing to draw).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBars {
    pub before: Rect,
    pub after: Rect,
}

/// The bars of stage `v`'s chart tokens (in `chart_ids`' order) in `frame`.
pub fn stage_bars(v: &StageView, frame: Frame) -> Vec<TokenBars> {
    let slot = frame.width / v.before.len().max(1) as f64;
    let w = slot * BAR;
    let bar = |x: f64, p: f32| {
        let h = height_fraction(p as f64) * frame.height;
        Rect {
            x,
            y: frame.bottom() - h,
            w,
            h,
        }
    };
    v.before
        .iter()
        .enumerate()
        .map(|(i, &before)| {
            let x = frame.left + i as f64 * slot;
            let after = v.after.get(i).copied().unwrap_or(0.0);
            TokenBars {
                before: bar(x, before),
                after: bar(x + w, after),
            }
        })
        .collect()
}

/// The slot's centre of token `i` of `n` (where its label goes).
pub fn slot_centre(i: usize, n: usize, frame: Frame) -> f64 {
    frame.x((i as f64 + BAR) / n.max(1) as f64)
}

/// The y axis's ticks on the square-root scale.
pub fn y_ticks(frame: Frame) -> Vec<Tick> {
    [
        (0.0, "0"),
        (0.01, "0.01"),
        (0.1, "0.1"),
        (0.25, "0.25"),
        (0.5, "0.5"),
        (1.0, "1"),
    ]
    .iter()
    .map(|&(p, label)| Tick {
        at: frame.y(height_fraction(p)),
        label: label.to_string(),
    })
    .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// top_k keeping two of four tokens: before 0.25, 0.64, 0.09, 0.02; after 0.28, 0.72,
    /// 0, 0.
    pub(crate) fn stage() -> StageView {
        StageView {
            stage: decoding_engine::decode::sampling::Stage::parse("top_k").unwrap(),
            active: true,
            setting: "k = 2".into(),
            default_of: None,
            kept: 2,
            removed: 2,
            mass_removed: 0.11,
            before: vec![0.25, 0.64, 0.09, 0.02],
            after: vec![0.28, 0.72, 0.0, 0.0],
            cut: Default::default(),
            replaced_by: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn bars_stand_side_by_side_on_the_square_root_scale() {
        assert_eq!(height_fraction(0.25), 0.5);
        assert_eq!(height_fraction(-0.1), 0.0);
        assert_eq!(height_fraction(f64::NAN), 0.0);
        assert_eq!(height_fraction(4.0), 1.0);
        let b = stage_bars(&stage(), SCREEN);
        assert_eq!(b.len(), 4);
        // Four slots of 25 over 100 units, bars 11.25 wide; p 0.25 → √0.25 × 30 = 15 high,
        // p 0.64 → 0.8 × 30 = 24, p 0.09 → 0.3 × 30 = 9.
        let first = b[0].before;
        assert!(close(first.x, 0.0) && close(first.w, 11.25));
        assert!(close(first.h, 15.0) && close(first.y, 15.0));
        assert!(close(b[1].before.x, 25.0) && close(b[1].before.h, 24.0));
        assert!(close(b[1].after.x, 36.25) && close(b[1].after.w, 11.25));
        assert!(close(b[2].before.h, 9.0) && b[2].after.h == 0.0);
        assert!(close(b[2].after.y, 30.0), "an empty bar sits on the base");
        // In another frame: shifted and scaled, the same fractions.
        let f = Frame::new(70.0, 44.0, 200.0, 200.0);
        let b = stage_bars(&stage(), f);
        assert!(close(b[0].before.x, 70.0) && close(b[0].before.h, 100.0));
        assert!(close(b[0].before.y + b[0].before.h, 244.0));
        assert!(close(b[3].after.x, 70.0 + 150.0 + 22.5));
        assert!(close(slot_centre(1, 4, f), 70.0 + 50.0 + 22.5));
    }

    #[test]
    fn ticks_follow_the_square_root() {
        let t = y_ticks(Frame::new(0.0, 0.0, 10.0, 200.0));
        // 0.25 → half way up; 0.01 → a tenth; 1 → the top.
        assert_eq!((t[3].at, t[3].label.as_str()), (100.0, "0.25"));
        assert!(close(t[1].at, 180.0));
        assert_eq!((t[0].at, t[5].at), (200.0, 0.0));
    }
}
