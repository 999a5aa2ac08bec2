//! One file per WGSL kernel of the forward pass, each with its parameter block (its size
//! checked against the WGSL struct), the blocks a layer writes for it, and the single-kernel
//! run the `<op>_matches_cpu_reference` tests use (same pipelines and parameter blocks as the
//! backend, one dispatch, one read-back). Every kernel mirrors a CPU function of
//! `decoding_engine::cpu`.

pub mod attention;
pub mod embed;
pub mod matmul;
pub mod rmsnorm;
pub mod rope;
pub(crate) mod run;
pub mod swiglu;

pub use attention::attention;
pub use embed::embed;
pub use matmul::matmul;
pub use rmsnorm::rmsnorm;
pub use rope::rope;
pub use swiglu::swiglu;
