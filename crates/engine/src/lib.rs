//! Decoding Explorer's engine: loads a model from bytes, runs the transformer (the CPU
//! reference here; WebGPU in `decoding-gpu`), and turns logits into tokens. No web
//! dependencies: it compiles natively (CLI, tests, benchmarks) and for wasm32 (the page).
//!
//! The folders follow the lesson's data flow: `formats` (bytes → `Config` +
//! `TransformerWeights`), `kernels` (the readable reference kernels, then their SIMD twins),
//! `forward` (the transformer over a batch, the KV cache, the probe), `backend` (what runs a
//! forward pass: the CPU, a lost GPU's failover, "auto"), `decode` (generation, beam search,
//! speculative decoding, the sampling chain), `serving` (batching, cost, the roofline,
//! quantization's quality). Each module has one name, its folder path; the crate root
//! re-exports only the types a caller of the engine needs (below).

pub mod backend;
pub mod budget;
pub mod config;
pub mod decode;
pub mod formats;
pub mod forward;
pub mod kernels;
pub mod model;
pub mod par;
pub mod quant;
pub mod serving;
pub mod tokenizer;
pub mod units;
pub mod weights;

pub use backend::{Backend, BackendError, BackendKind, CpuBackend};
pub use config::{Config, ConfigError};
pub use formats::llama2c::CheckpointError;
pub use forward::batch::ForwardError;
pub use forward::batch::{Batch, Logits, Row, SeqId};
pub use forward::kv_cache::{CacheBytes, KvCache};
pub use forward::probe::{ProbeRecord, ProbeSpec, Probed};
pub use forward::Transformer;
pub use model::{Model, ModelError};
pub use quant::Precision;
pub use tokenizer::{Tokenizer, TokenizerError};
pub use weights::Checkpoint;
pub use weights::TransformerWeights;
