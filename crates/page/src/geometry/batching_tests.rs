//! The batching charts' geometry against values worked out by hand.

use super::*;
use decoding_engine::serving::batching::{Policy, Served};
use decoding_engine::serving::cost::PassCost;

pub(crate) fn row(batch: usize, prefill: f64, decode: f64) -> Throughput {
    Throughput {
        batch,
        prompt_tokens: 32,
        gen_tokens: 16,
        prefill_ms: 10.0,
        decode_ms: 20.0,
        prefill_tokens_per_s: prefill,
        decode_tokens_per_s: decode,
        // 1e7 FLOPs over 1e6 bytes in 10 ms: intensity 10, 1e9 FLOP/s; decode's 2e6 over
        // 4e6 in 20 ms: 0.5, 1e8 FLOP/s.
        prefill: PassCost {
            flops: 10_000_000,
            bytes: 1_000_000,
        },
        decode: PassCost {
            flops: 2_000_000,
            bytes: 4_000_000,
        },
    }
}

#[test]
fn throughput_places_b_on_log2_and_rates_from_zero() {
    let g = throughput(&[row(1, 100.0, 10.0), row(16, 200.0, 50.0)], SCREEN);
    // B = 1 at the left edge (60), B = 16 at the right (60 + 400); the page's bx.
    assert_eq!(g.prefill[0].0, 60.0);
    assert!((g.decode[1].0 - 460.0).abs() < 1e-9);
    // 200 tokens/s is the top (20), 50 a quarter up (200 − 45), 0 the bottom.
    assert_eq!(g.max, 200.0);
    assert!((g.prefill[1].1 - 20.0).abs() < 1e-9);
    assert!((g.decode[1].1 - 155.0).abs() < 1e-9);
    assert_eq!(
        (g.y_ticks[0].at, g.y_ticks[1].label.as_str()),
        (200.0, "200")
    );
    assert_eq!(g.x_ticks[1].label, "16");
    // B = 4 of 1 … 16 is half way.
    let mid = throughput(
        &[row(1, 1.0, 1.0), row(4, 1.0, 1.0), row(16, 1.0, 1.0)],
        SCREEN,
    );
    assert!((mid.decode[1].0 - 260.0).abs() < 1e-9);
    // No rows: nothing placed, an axis to 1.
    assert!(throughput(&[], SCREEN).prefill.is_empty());
}

#[test]
fn roofline_places_points_on_log_log_axes() {
    let roof = Roof {
        flops: 1e10,
        bytes_per_s: 1e9,
    };
    let points = machine_points(&[row(1, 0.0, 0.0)]);
    assert_eq!(points[0].label, "P1");
    assert!((points[0].intensity - 10.0).abs() < 1e-12 && (points[0].flops - 1e9).abs() < 1e-3);
    assert!((points[1].intensity - 0.5).abs() < 1e-12 && (points[1].flops - 1e8).abs() < 1e-3);
    let g = roofline(roof, &points, SCREEN);
    assert!(g.roof_holds);
    // x: log10(10 / 0.1) = 2 of 4 decades → 60 + 200; y: log10(1e9 / 3e5) = 3.5229 of 5
    // decades → 200 − 180 × 0.70458.
    assert!((g.points[0].x - 260.0).abs() < 1e-9);
    assert!((g.points[0].y - (200.0 - 180.0 * (1e9f64 / 3e5).log10() / 5.0)).abs() < 1e-9);
    assert!((g.points[0].y - 73.1763).abs() < 1e-3);
    // Ridge 10 FLOP/byte; the roof 3× under the top: log10(3) / 5 of the height down.
    assert_eq!(g.ridge, 10.0);
    assert!((g.ridge_x - 260.0).abs() < 1e-9);
    assert!((g.roof_y - (20.0 + 180.0 * 3f64.log10() / 5.0)).abs() < 1e-9);
    assert_eq!(g.roof_line.len(), 3);
    assert_eq!(g.x_ticks[0].at, 60.0);
    assert_eq!(g.x_ticks[4].label, "1000");
    // Prefill's label above its point, decode's below.
    assert_eq!(g.points[0].label_y, g.points[0].y - 10.0);
    assert_eq!(g.points[1].label_y, g.points[1].y + 18.0);
    // A point above the roof: the roof does not hold.
    let over = RoofPoint {
        label: "X".into(),
        intensity: 1.0,
        flops: 1e10,
        prefill: false,
    };
    assert!(!roofline(roof, &[over], SCREEN).roof_holds);
}

/// Two requests over 10 steps: #0 arrives at 0, admitted at 2, done at 5; #1 at 1, 6, 9.
pub(crate) fn sim() -> SimResult {
    let served = |id, arrival, admitted, finished| Served {
        id,
        tokens: vec![1, 2, 3],
        arrival,
        admitted,
        first_token: admitted,
        finished,
        first_token_ms: 1.0,
        total_ms: 2.0,
    };
    SimResult {
        policy: Policy::Continuous,
        slots: 1,
        passes: 6,
        steps: 10,
        tokens: 6,
        occupancy: 1.0,
        wall_ms: 1.0,
        served: vec![served(0, 0, 2, 5), served(1, 1, 6, 9)],
    }
}

#[test]
fn timeline_rows_are_the_steps_of_each_request() {
    let r = sim();
    let rows = timeline(&r, 10, timeline_frame(2));
    // 420 units over 10 steps: 42 a step; request 0 waits 2 steps from 60, its prefill
    // at step 2, decode from step 3 for 3 steps; request 1 a row (12) lower.
    let a = &rows[0];
    assert_eq!((a.wait.x, a.wait.w), (60.0, 84.0));
    assert_eq!((a.prefill.x, a.prefill.w), (144.0, 42.0));
    assert_eq!((a.decode.x, a.decode.w), (186.0, 126.0));
    assert_eq!((a.wait.y, a.wait.h, a.label_y), (4.0, 10.0, 13.0));
    assert_eq!(rows[1].prefill.y, 16.0);
    assert_eq!(rows[1].wait.w, 5.0 * 42.0);
}

#[test]
fn timeline_ticks_every_quarter() {
    let t = timeline_ticks(10, timeline_frame(1));
    let labels: Vec<&str> = t.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["0", "3", "6", "9"]);
    assert_eq!((t[0].at, t[1].at), (60.0, 60.0 + 3.0 * 42.0));
}
