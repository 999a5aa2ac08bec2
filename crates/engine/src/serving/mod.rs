//! Serving many requests and what it costs: batching and its throughput (`batching`), FLOPs
//! and bytes of a pass (`cost`), the machine's roofline (`roofline`), and what quantization
//! costs in quality (`quality`).

pub mod batching;
pub mod cost;
pub mod quality;
pub mod roofline;
pub mod threads;
