//! The tests' softmax, written here apart from the engine's (the largest logit subtracted,
//! in f64), so a check of the engine's probabilities does not use the engine to make its
//! expected values. Shared by the engine's tests (`common`) and the GPU's (by path).

/// softmax(z) in f64.
pub fn softmax(z: &[f64]) -> Vec<f64> {
    let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

/// softmax of a backend's float32 logits, in f64.
pub fn softmax_f32(z: &[f32]) -> Vec<f64> {
    softmax(&z.iter().map(|&v| v as f64).collect::<Vec<_>>())
}

/// softmax of each `vocab`-long row of `l`, the rows one after another.
pub fn softmax_rows(l: &[f32], vocab: usize) -> Vec<f64> {
    l.chunks(vocab).flat_map(softmax_f32).collect()
}
