//! Decoding Explorer's WebGPU backend: the forward pass as WGSL compute shaders through wgpu
//! (natively on Vulkan, in the browser on WebGPU), behind the engine's `Backend` interface, and
//! the choice between it and the CPU (`--backend auto|gpu|cpu`), with recovery when a device is
//! lost mid-generation.

pub mod backend;
pub mod context;
pub mod kernel;
pub mod ops;
pub mod pipelines;
pub mod select;

pub use backend::GpuBackend;
pub use context::{GpuContext, GpuError};
pub use select::open_backend;
