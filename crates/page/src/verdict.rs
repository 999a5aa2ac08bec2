//! What a measurement supports. A panel's sentence and the lesson track's caption about the
//! same measurement read these, so they cannot disagree (the caption once said "batching
//! amortizes the weight reads" while the panel's own measurement said "no gain here"). A
//! difference counts only with margin: a ratio of at least `CLEAR_RATIO` and the two
//! measurements' ranges apart.

use crate::protocol::SweepView;

/// A measured ratio counts as a difference only from here on.
pub const CLEAR_RATIO: f64 = 1.3;

/// A repeated measurement: its median and its range (lowest, highest).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Spread {
    /// `self` is clearly above `other`: by `CLEAR_RATIO`, and every run of `self` above every
    /// run of `other`.
    pub fn clearly_above(&self, other: &Spread) -> bool {
        self.median >= CLEAR_RATIO * other.median && self.low > other.high
    }
}

/// A sweep row's prefill and decode tokens/s, and its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub prefill: Spread,
    pub decode: Spread,
    pub reps: usize,
}

/// The rates of batch size `batch` in a sweep (none if it was not measured).
pub fn rates(v: &SweepView, batch: usize) -> Option<Rates> {
    let (r, s) = v
        .rows
        .iter()
        .zip(&v.spread)
        .find(|(r, _)| r.batch == batch)?;
    Some(Rates {
        prefill: Spread {
            median: r.prefill_tokens_per_s,
            low: s.prefill.0,
            high: s.prefill.1,
        },
        decode: Spread {
            median: r.decode_tokens_per_s,
            low: s.decode.0,
            high: s.decode.1,
        },
        reps: s.reps,
    })
}

/// Decode at the sweep's largest batch against B = 1: the gain, and whether it is clear.
pub fn batching_gain(v: &SweepView) -> Option<(f64, bool)> {
    let one = rates(v, 1)?;
    let most = rates(v, v.rows.iter().map(|r| r.batch).max()?)?;
    Some((
        most.decode.median / one.decode.median.max(1e-9),
        most.decode.clearly_above(&one.decode),
    ))
}

/// Where a decoded token's GPU time goes, judged with the same margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    /// The time outside the kernels (launches, barriers, the read-back) is at least
    /// `CLEAR_RATIO` × the kernels' own.
    LaunchBound,
    /// The kernels' own time is at least `CLEAR_RATIO` × the rest.
    KernelBound,
    /// Neither by the margin.
    Even,
}

pub fn regime(s: &decoding_engine::backend::timing::TimeSplit) -> Regime {
    if s.overhead_s >= CLEAR_RATIO * s.gpu_busy_s {
        Regime::LaunchBound
    } else if s.gpu_busy_s >= CLEAR_RATIO * s.overhead_s {
        Regime::KernelBound
    } else {
        Regime::Even
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regime_needs_the_ratio() {
        let split = |busy, over| decoding_engine::backend::timing::TimeSplit {
            wall_s: busy + over,
            gpu_busy_s: busy,
            overhead_s: over,
        };
        // The H200's first run: ≈ 9 µs a dispatch, 147 dispatches, 2.8 ms a token, kernels
        // a small part of it.
        assert_eq!(regime(&split(0.4e-3, 2.4e-3)), Regime::LaunchBound);
        assert_eq!(regime(&split(9.4e-3, 1.0e-3)), Regime::KernelBound);
        assert_eq!(regime(&split(1.0e-3, 1.2e-3)), Regime::Even);
        assert_eq!(regime(&split(1.2e-3, 1.0e-3)), Regime::Even);
        assert_eq!(regime(&split(1.4e-3, 1.0e-3)), Regime::KernelBound);
    }

    #[test]
    fn a_difference_needs_the_ratio_and_apart_ranges() {
        let s = |median, low, high| Spread { median, low, high };
        assert!(s(2.0, 1.9, 2.1).clearly_above(&s(1.0, 0.9, 1.1)));
        // The ratio without the ranges apart: one slow run of the first.
        assert!(!s(2.0, 1.0, 2.1).clearly_above(&s(1.0, 0.9, 1.1)));
        // Ranges apart but a 1.2× ratio.
        assert!(!s(1.2, 1.15, 1.25).clearly_above(&s(1.0, 0.95, 1.05)));
    }
}

/// What the roofline of a sweep's own measured peaks says of one row's two phases: each
/// phase's arithmetic intensity (FLOP a byte), the ridge between the roofs, and the
/// prefill/decode tokens/s ratio it predicts (each phase taking max(FLOPs / peak FLOP/s,
/// bytes / peak bytes/s)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RooflineSplit {
    pub prefill_intensity: f64,
    pub decode_intensity: f64,
    pub ridge: f64,
    pub predicted_ratio: f64,
}

impl RooflineSplit {
    /// Prefill under the compute roof and decode under the memory roof.
    pub fn parts(&self) -> bool {
        self.decode_intensity < self.ridge && self.prefill_intensity >= self.ridge
    }
}

pub fn roofline_split(v: &SweepView, batch: usize) -> Option<RooflineSplit> {
    let r = v.rows.iter().find(|r| r.batch == batch)?;
    let roof = v.peaks.roof;
    if roof.flops <= 0.0 || roof.bytes_per_s <= 0.0 || r.prefill.bytes == 0 || r.decode.bytes == 0 {
        return None;
    }
    let time = |c: decoding_engine::serving::cost::PassCost| {
        (c.flops as f64 / roof.flops).max(c.bytes as f64 / roof.bytes_per_s)
    };
    let prefill_rate = (r.batch * r.prompt_tokens) as f64 / time(r.prefill);
    let decode_rate = (r.batch * r.gen_tokens) as f64 / time(r.decode);
    Some(RooflineSplit {
        prefill_intensity: r.prefill.flops as f64 / r.prefill.bytes as f64,
        decode_intensity: r.decode.flops as f64 / r.decode.bytes as f64,
        ridge: roof.ridge(),
        predicted_ratio: prefill_rate / decode_rate,
    })
}

#[cfg(test)]
mod roofline_tests {
    use super::*;
    use decoding_engine::serving::batching::Throughput;
    use decoding_engine::serving::cost::PassCost;
    use decoding_engine::serving::roofline::{Peaks, Roof};

    /// By hand: a roof of 10 GFLOP/s and 1 GB/s (ridge 10 FLOP a byte). Prefill of 64 tokens:
    /// 6.4 GFLOP over 0.1 GB (64 FLOP a byte, under the compute roof): 0.64 s, 100 tok/s.
    /// Decode of 16 tokens: 0.16 GFLOP over 1.6 GB (0.1 FLOP a byte, under the memory roof):
    /// 1.6 s, 10 tok/s. The prediction: 10×.
    #[test]
    fn the_roofline_split_is_worked_out_by_hand() {
        let row = Throughput {
            batch: 1,
            prompt_tokens: 64,
            gen_tokens: 16,
            prefill_ms: 1.0,
            decode_ms: 1.0,
            prefill_tokens_per_s: 0.0,
            decode_tokens_per_s: 0.0,
            prefill: PassCost {
                flops: 6_400_000_000,
                bytes: 100_000_000,
            },
            decode: PassCost {
                flops: 160_000_000,
                bytes: 1_600_000_000,
            },
        };
        let v = SweepView {
            model: Default::default(),
            backend: "cpu".into(),
            weight_bytes: 1,
            peaks: Peaks {
                roof: Roof {
                    flops: 1e10,
                    bytes_per_s: 1e9,
                },
                buffer_bytes: 1,
                threads: 1,
            },
            rows: vec![row],
            spread: vec![],
        };
        let r = roofline_split(&v, 1).unwrap();
        assert!((r.ridge - 10.0).abs() < 1e-12);
        assert!((r.prefill_intensity - 64.0).abs() < 1e-12);
        assert!((r.decode_intensity - 0.1).abs() < 1e-12);
        assert!((r.predicted_ratio - 10.0).abs() < 1e-9, "{r:?}");
        assert!(r.parts());
        assert_eq!(roofline_split(&v, 2), None);
    }
}
