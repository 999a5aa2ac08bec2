//! The KV cache, [STATE]: the keys and values of every processed position, per layer, so each
//! decode step computes Q/K/V for the new token only and attends against the stored ones
//! (lesson 10, section 4). bytes = 2 × n × N_layers × kv_dim × bytes/elem.

use crate::config::Config;
use crate::forward::batch::SeqId;

/// The caches a forward pass reads and writes, by sequence: a backend's slots of several
/// sequences, or one cache alone (which answers to any id: the batch has one sequence).
pub trait Caches: Sync {
    fn cache(&self, seq: SeqId) -> Option<&KvCache>;
    fn cache_mut(&mut self, seq: SeqId) -> Option<&mut KvCache>;
}

impl Caches for KvCache {
    fn cache(&self, _seq: SeqId) -> Option<&KvCache> {
        Some(self)
    }
    fn cache_mut(&mut self, _seq: SeqId) -> Option<&mut KvCache> {
        Some(self)
    }
}

/// Preallocated for the whole context, as in llama2.c's `RunState`; `len` positions are filled.
#[derive(Debug, Clone)]
pub struct KvCache {
    config: Config,
    n_layers: usize,
    seq_len: usize,
    kv_dim: usize,
    /// (layer, seq_len, kv_dim)
    key: Vec<f32>,
    /// (layer, seq_len, kv_dim)
    value: Vec<f32>,
    len: usize,
}

/// Bytes of one element: the cache is float32.
pub const BYTES_PER_ELEM: usize = 4;

/// Memory of a cache: what the formula gives for the filled positions and for the whole context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CacheBytes {
    pub used: u64,
    pub allocated: u64,
}

impl CacheBytes {
    /// A float32 cache of `config`'s shape with `len` positions filled (any backend).
    pub fn of(config: &Config, len: usize) -> CacheBytes {
        let f = |n: usize| {
            cache_bytes_formula(
                n as u64,
                config.n_layers as u64,
                config.kv_dim() as u64,
                BYTES_PER_ELEM as u64,
            )
        };
        CacheBytes {
            used: f(len),
            allocated: f(config.seq_len),
        }
    }
}

/// 2 × positions × n_layers × kv_dim × bytes/elem (the 2 is K and V): lesson 10's formula,
/// written only here (the page, the calculator, the budget and the cost model call it). None
/// where the product overflows 64 bits (a file's header can claim any shape).
pub fn cache_bytes_checked(
    positions: u64,
    n_layers: u64,
    kv_dim: u64,
    bytes_per_elem: u64,
) -> Option<u64> {
    [2, positions, n_layers, kv_dim, bytes_per_elem]
        .into_iter()
        .try_fold(1u64, u64::checked_mul)
}

/// [`cache_bytes_checked`] for shapes known to fit (u64::MAX where they do not).
pub fn cache_bytes_formula(positions: u64, n_layers: u64, kv_dim: u64, bytes_per_elem: u64) -> u64 {
    cache_bytes_checked(positions, n_layers, kv_dim, bytes_per_elem).unwrap_or(u64::MAX)
}

impl KvCache {
    pub fn new(config: &Config) -> KvCache {
        let n = config.n_layers * config.seq_len * config.kv_dim();
        KvCache {
            config: *config,
            n_layers: config.n_layers,
            seq_len: config.seq_len,
            kv_dim: config.kv_dim(),
            key: vec![0.0; n],
            value: vec![0.0; n],
            len: 0,
        }
    }

    /// Positions filled.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Positions it can hold (the model's context length).
    pub fn capacity(&self) -> usize {
        self.seq_len
    }

    pub fn bytes(&self) -> CacheBytes {
        CacheBytes::of(&self.config, self.len)
    }

    /// Forgets positions `len..` (rewind): nothing is recomputed, the next token is written at
    /// `len`. A `len` beyond what is filled leaves the cache unchanged.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Marks `n` more positions as filled (after the forward pass wrote them).
    pub(crate) fn advance(&mut self, n: usize) {
        self.len = (self.len + n).min(self.seq_len);
    }

    fn layer_range(&self, layer: usize) -> std::ops::Range<usize> {
        let size = self.seq_len * self.kv_dim;
        layer * size..(layer + 1) * size
    }

    /// Keys and values of one layer, (seq_len, kv_dim) each.
    pub fn layer(&self, layer: usize) -> (&[f32], &[f32]) {
        let r = self.layer_range(layer);
        (&self.key[r.clone()], &self.value[r])
    }

    /// Mutable rows `pos..pos + n` of one layer's keys and values, to write new positions.
    pub(crate) fn rows_mut(
        &mut self,
        layer: usize,
        pos: usize,
        n: usize,
    ) -> (&mut [f32], &mut [f32]) {
        let base = self.layer_range(layer).start;
        let r = base + pos * self.kv_dim..base + (pos + n) * self.kv_dim;
        (&mut self.key[r.clone()], &mut self.value[r])
    }

    /// Copies the first `len` positions of `other` into this cache (fork for beam search:
    /// the shared prefix is copied, the prompt is not re-run).
    pub fn copy_prefix_from(&mut self, other: &KvCache, len: usize) {
        let len = len.min(other.len);
        for layer in 0..self.n_layers {
            let src = other.layer_range(layer).start;
            let dst = self.layer_range(layer).start;
            let n = len * self.kv_dim;
            self.key[dst..dst + n].copy_from_slice(&other.key[src..src + n]);
            self.value[dst..dst + n].copy_from_slice(&other.value[src..src + n]);
        }
        self.len = len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stories260k() -> Config {
        Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap()
    }

    #[test]
    fn stories260k_cache_is_655360_bytes_at_512_positions() {
        let mut c = KvCache::new(&stories260k());
        assert_eq!(c.bytes().allocated, 655_360);
        assert_eq!(c.bytes().used, 0);
        c.advance(1);
        assert_eq!(c.bytes().used, 1_280);
        c.advance(511);
        assert_eq!(c.bytes().used, 655_360);
        // Without GQA (every query head its own K/V): twice as much.
        assert_eq!(cache_bytes_formula(512, 5, 64, 4), 1_310_720);
    }

    #[test]
    fn truncate_rewinds_but_never_extends() {
        let mut c = KvCache::new(&stories260k());
        c.advance(10);
        c.truncate(4);
        assert_eq!(c.len(), 4);
        c.truncate(8);
        assert_eq!(c.len(), 4);
    }
}
