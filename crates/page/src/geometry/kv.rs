//! The KV cache's grid: a K row and a V row per layer, each the context's slots with the
//! cached positions filled from the left.

use super::{Frame, Rect};

/// The page's box for the grid of `layers` layers (a viewBox 470 wide, 20 units a row).
pub fn screen_frame(layers: usize) -> Frame {
    Frame::new(60.0, 0.0, 400.0, layers as f64 * 2.0 * 20.0)
}

/// One row of the grid: layer `layer`'s K (`value` false) or V, its label's baseline, the
/// context's slots and the filled part.
#[derive(Debug, Clone, PartialEq)]
pub struct KvRow {
    pub layer: usize,
    pub value: bool,
    pub label: String,
    pub label_y: f64,
    pub slots: Rect,
    pub filled: Rect,
}

/// The grid of `layers` layers with `n` of `seq` positions cached, in `frame`: rows of
/// `frame.height / (2 × layers)`, the bar 80 % of it, filled `n / seq` of the width.
pub fn grid(layers: usize, n: usize, seq: usize, frame: Frame) -> Vec<KvRow> {
    let pitch = frame.height / (2 * layers).max(1) as f64;
    let filled = (n as f64 / seq.max(1) as f64).clamp(0.0, 1.0) * frame.width;
    (0..layers)
        .flat_map(|l| [(l, false), (l, true)])
        .enumerate()
        .map(|(i, (layer, value))| {
            let y = frame.top + i as f64 * pitch;
            let h = pitch * 0.8;
            KvRow {
                layer,
                value,
                label: format!("L{layer} {}", if value { "V" } else { "K" }),
                label_y: y + pitch * 0.7,
                slots: Rect {
                    x: frame.left,
                    y,
                    w: frame.width,
                    h,
                },
                filled: Rect {
                    x: frame.left,
                    y,
                    w: filled,
                    h,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fill_the_cached_share_of_the_context() {
        // 2 layers, 64 of 256 positions: a quarter of the 400 units filled; rows 20 apart,
        // 16 high, labels 14 down, K before V.
        let rows = grid(2, 64, 256, screen_frame(2));
        assert_eq!(rows.len(), 4);
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["L0 K", "L0 V", "L1 K", "L1 V"]);
        assert_eq!(
            rows[3].slots,
            Rect {
                x: 60.0,
                y: 60.0,
                w: 400.0,
                h: 16.0
            }
        );
        assert_eq!(rows[3].filled.w, 100.0);
        assert_eq!(rows[1].label_y, 34.0);
        // More positions than the context: full, not past it.
        assert_eq!(grid(1, 300, 256, screen_frame(1))[0].filled.w, 400.0);
    }
}
