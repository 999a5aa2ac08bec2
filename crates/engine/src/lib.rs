//! Decoding Explorer's engine: loads a model from bytes, runs the transformer (the CPU
//! reference here; WebGPU in `decoding-gpu`), and turns logits into tokens. No web
//! dependencies: it compiles natively (CLI, tests, benchmarks) and for wasm32 (the page).
//!
//! The folders follow the lesson's data flow: `formats` (bytes → `Config` +
//! `TransformerWeights`), `kernels` (the readable reference kernels, then their SIMD twins),
//! `forward` (the transformer over a batch, the KV cache, the probe), `backend` (what runs a
//! forward pass: the CPU, a lost GPU's failover, "auto"), `decode` (generation, beam search,
//! speculative decoding, the sampling chain), `serving` (batching, cost, the roofline,
//! quantization's quality). Each module is also reachable from the crate root.

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

pub use backend::{choose, engine, testing, timing};
pub use decode::{beam, generation, sampling, speculative};
pub use formats::{gguf, gguf_llama, hf, llama2c, llama2c_v2};
pub use forward::{batch, kv_cache, probe};
pub use kernels as cpu;
pub use serving::{batching, cost, quality, roofline};

pub use backend::{Backend, BackendError, BackendKind, CpuBackend};
pub use batch::{Batch, Logits, Row, SeqId};
pub use config::{Config, ConfigError};
pub use formats::llama2c::{Checkpoint, CheckpointError};
pub use forward::{ForwardError, Transformer};
pub use kv_cache::{CacheBytes, KvCache};
pub use model::{Model, ModelError};
pub use probe::{ProbeRecord, ProbeSpec, Probed};
pub use quant::Precision;
pub use tokenizer::{Tokenizer, TokenizerError};
pub use weights::TransformerWeights;
