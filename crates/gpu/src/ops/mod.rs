//! One file per WGSL kernel of the forward pass, each with its parameter block (its size
//! checked against the WGSL struct), the blocks a layer writes for it, and the single-kernel
//! run the `<op>_matches_cpu_reference` tests use (same pipelines and parameter blocks as the
//! backend, one dispatch, one read-back). Every kernel mirrors a CPU function of
//! `decoding_engine::kernels`.

pub mod attention;
pub mod embed;
pub mod matmul;
pub mod mlp_in;
pub mod qkv;
pub mod rmsnorm;
pub(crate) mod run;

pub use attention::attention;
pub use embed::embed;
pub use matmul::matmul;
pub use mlp_in::mlp_in;
pub use qkv::{qkv, QkvShape};
pub use rmsnorm::rmsnorm;

#[cfg(test)]
mod tests {
    /// The Rust block `T` is the size of the WGSL struct `Params` in `source` (its fields four
    /// bytes each, as laid out).
    fn assert_block_is_the_shaders<T>(source: &str) {
        assert_eq!(
            std::mem::size_of::<T>(),
            super::run::wgsl_struct_bytes(source, "Params"),
            "{}",
            std::any::type_name::<T>()
        );
    }

    #[test]
    fn the_parameter_blocks_are_the_shaders() {
        use super::*;
        assert_block_is_the_shaders::<attention::AttentionParams>(attention::SOURCE);
        assert_block_is_the_shaders::<embed::EmbedParams>(embed::SOURCE);
        assert_block_is_the_shaders::<matmul::MatmulParams>(matmul::SOURCE);
        assert_block_is_the_shaders::<rmsnorm::RmsNormParams>(rmsnorm::SOURCE);
        assert_block_is_the_shaders::<qkv::QkvParams>(qkv::SOURCE);
        assert_block_is_the_shaders::<mlp_in::MlpInParams>(mlp_in::SOURCE);
        assert_eq!(
            std::mem::size_of::<crate::kernel::StepParams>(),
            super::run::wgsl_struct_bytes(crate::kernel::STEP_WGSL, "Step")
        );
    }
}
