//! Random weights of llama2.c's 15M shape ([`SHAPE_15M`], 61 MB at f32), made by the worker
//! for one measurement at a time and freed after it, for what the loaded model cannot show
//! (issue 48): stories260K's 1 MB of weights stays in the cache beside the core, so a
//! decode step never waits on memory and neither the prefill/decode regimes nor
//! quantization's saving in bytes read show on it. The weights are uniform ±1/√fan-in from a fixed seed (`Checkpoint::random`): their
//! numbers mean nothing, their size and layout are a real model's.

use decoding_engine::config::Config;
use decoding_engine::Checkpoint;
use decoding_engine::{Precision, Transformer};
use decoding_page::protocol::SHAPE_15M;
use std::sync::Arc;

/// The seed of the random weights (any fixed one: the measurement times their size).
const SEED: u64 = 1234;

/// The 15M shape's random weights, at each precision asked for so far.
pub(super) struct ShapeLab {
    at: Vec<(Precision, Arc<Transformer>)>,
}

impl ShapeLab {
    pub(super) fn new() -> Result<ShapeLab, String> {
        let c = Config::from_header(SHAPE_15M).map_err(|e| e.to_string())?;
        let ck = Checkpoint::random(c, SEED).map_err(|e| e.to_string())?;
        Ok(ShapeLab {
            at: vec![(Precision::F32, Arc::new(Transformer::new(ck)))],
        })
    }

    /// The weights at `p` (quantized from the f32 ones the first time).
    pub(super) fn at(&mut self, p: Precision) -> Arc<Transformer> {
        if let Some((_, t)) = self.at.iter().find(|(q, _)| *q == p) {
            return t.clone();
        }
        let t = Arc::new(self.at[0].1.at(p));
        self.at.push((p, t.clone()));
        t
    }
}
