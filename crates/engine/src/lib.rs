//! Decoding Explorer's engine: loads a llama2.c checkpoint and tokenizer from bytes, runs the
//! transformer (CPU reference here; WebGPU in `decoding-gpu`), and turns logits into tokens.
//! No web dependencies: it compiles natively (CLI, tests, benchmarks) and for wasm32 (the page).

pub mod backend;
pub mod batch;
pub mod batching;
pub mod beam;
pub mod budget;
pub mod checkpoint;
pub mod checkpoint_v2;
pub mod choose;
pub mod cost;
pub mod cpu;
pub mod engine;
pub mod forward;
pub mod generation;
pub mod gguf;
pub mod hf;
pub mod kv_cache;
pub mod model;
pub mod par;
pub mod probe;
pub mod quality;
pub mod quant;
pub mod roofline;
pub mod sampling;
pub mod speculative;
pub mod testing;
pub mod tokenizer;
pub mod units;

pub use backend::{Backend, BackendError, BackendKind, CpuBackend};
pub use batch::{Batch, Logits, Row, SeqId};
pub use checkpoint::{Checkpoint, CheckpointError, Config};
pub use forward::{ForwardError, Transformer};
pub use kv_cache::{CacheBytes, KvCache};
pub use model::{Model, ModelError};
pub use probe::{ProbeRecord, ProbeSpec, Probed};
pub use quant::Precision;
pub use tokenizer::{Tokenizer, TokenizerError};
