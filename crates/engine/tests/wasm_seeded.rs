//! Seeded sampling gives the same text in wasm as natively: this test runs under
//! `wasm-bindgen-test-runner` (Node) and compares with the golden file that the native CLI
//! test (`tests/cli/generate.rs`) also checks.
#![cfg(target_arch = "wasm32")]

use decoding_engine::backend::CpuBackend;
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::RawSettings;
use decoding_engine::Model;
use wasm_bindgen_test::wasm_bindgen_test;

const MODEL: &[u8] = include_bytes!("../../../assets/models/stories260K/stories260K.bin");
const TOKENIZER: &[u8] = include_bytes!("../../../assets/models/stories260K/tok512.bin");
const GOLDEN: &str = include_str!("../../../tests/golden/seed7-top-p-0.9.txt");

#[wasm_bindgen_test]
async fn seed_7_top_p_0_9_matches_the_native_golden_text() {
    let m = Model::from_memory(
        [("model.bin", MODEL), ("tokenizer.bin", TOKENIZER)],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    // decoding-explorer generate --prompt "Once upon a time" --seed 7 --temperature 1
    //   --top-p 0.9 --max-tokens 60
    let s = RawSettings::from_pairs([
        ("seed", "7"),
        ("temperature", "1"),
        ("top_p", "0.9"),
        ("max_tokens", "60"),
    ])
    .validate(512)
    .unwrap();
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let mut be = CpuBackend::new(m.transformer.clone());
    let ends = vec![m.tokenizer.eos, m.tokenizer.bos];
    let mut g = Generation::start(&mut be, prompt.clone(), ends)
        .await
        .unwrap();
    while let StepOutcome::Token { stop: None, .. } =
        g.step(&mut be, &s, &m.tokenizer).await.unwrap()
    {}
    let text = format!(
        "{}{}\n",
        m.tokenizer.decode(&prompt).unwrap(),
        g.generated_text(&m.tokenizer, true)
    );
    assert_eq!(text, GOLDEN);
}

/// The page's SIMD dot product gives the portable code's bits, at every boundary length
/// (the 32-wide bulk, the 8-wide chunks, the tail).
#[wasm_bindgen_test]
fn the_simd_dot_gives_the_portable_bits() {
    decoding_engine::backend::testing::assert_dot_kernel_bits(decoding_engine::kernels::dot);
}

/// The page's quantized row kernels (simd128) give the plain loops' bits, which are the
/// same code natively, where the AVX-512 kernels are held to them too.
#[wasm_bindgen_test]
fn the_simd_quantized_rows_give_the_plain_loops_bits() {
    decoding_engine::backend::testing::assert_quant_kernel_bits();
}

/// Decode's matrix-vector product (four weight rows a pass in wasm SIMD) gives one
/// portable `dot` a row, bit for bit.
#[wasm_bindgen_test]
fn the_simd_matvec_gives_the_portable_bits() {
    decoding_engine::backend::testing::assert_matvec_bits();
}

/// Attention (its scores four positions a pass, the weighted values of up to four heads
/// side by side in wasm SIMD) gives the portable `dot`'s scores and the plain softmax and
/// weighted sum, bit for bit, 1 to 8 heads at once.
#[wasm_bindgen_test]
fn the_simd_attention_gives_the_portable_bits() {
    decoding_engine::backend::testing::assert_attention_bits();
}

/// The page's int8 × int8 row kernels (simd128 `i32x4.dot_i16x8_s`) give the plain loops'
/// bits, alone and through the matrix product, as AVX-512 VNNI and AVX2 do natively.
#[wasm_bindgen_test]
fn the_simd_int8_rows_give_the_plain_loops_bits() {
    decoding_engine::backend::testing::assert_int8_kernel_bits();
}

/// The page's k-quant sums (simd128 `i16x8.extmul` and `i32x4.dot_i16x8_s`) give the plain
/// loops' bits on every ggml block type, alone and in a batch, as AVX-512 and AVX2 do
/// natively.
#[wasm_bindgen_test]
fn the_simd_ggml_rows_give_the_plain_loops_bits() {
    decoding_engine::quant::ggml::testing::assert_kernel_bits();
}
