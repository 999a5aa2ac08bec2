//! The KV panel's measurement: decoding with the cache against re-running the prefix.

use serde::{Deserialize, Serialize};

/// Measure decoding with the KV cache against re-running the prefix, at these lengths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum KvRequest {
    CacheCompare { positions: Vec<usize> },
}

/// Cached against cache-less decoding, by sequence length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum KvEvent {
    CacheCompare {
        rows: Vec<CompareRow>,
        /// The machine's read bandwidth, bytes a second, measured by reading the model's own
        /// weights (`roofline::weights_bandwidth`), against which each
        /// cached step is set (`CompareRow::model_ms`); None on the GPU backend.
        #[serde(default)]
        bandwidth: Option<f64>,
    },
}

/// One sequence length of the cache comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    /// Tokens in the sequence when the next one is computed.
    pub n: usize,
    /// One decode step with the cache (the new token only), ms.
    pub cached_ms: f64,
    /// The same token without a cache (the whole prefix run again), ms.
    pub naive_ms: f64,
    /// Multiply-adds of each: O(n·d) attention with the cache, O(n²·d) without.
    pub cached_macs: u64,
    pub naive_macs: u64,
    /// The cached step's bandwidth model (`roofline::step_model`): the bytes it reads (the
    /// weights, and K and V of n positions) and their time at the measured bandwidth, ms;
    /// None on the GPU backend.
    #[serde(default)]
    pub model: Option<(u64, f64)>,
}
