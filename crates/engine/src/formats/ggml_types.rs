//! ggml's tensor types (`ggml.h`, `enum ggml_type`): every one by its number and name.
//! GGUF's tensor table names a tensor's type by number (`gguf.rs`); the ones the engine
//! holds and multiplies, with their block sizes, are `quant::ggml::Kind`.

/// ggml's tensor types this reader knows by name (`ggml.h`, `enum ggml_type`).
const TYPE_NAMES: [(u32, &str); 31] = [
    (0, "F32"),
    (1, "F16"),
    (2, "Q4_0"),
    (3, "Q4_1"),
    (6, "Q5_0"),
    (7, "Q5_1"),
    (8, "Q8_0"),
    (9, "Q8_1"),
    (10, "Q2_K"),
    (11, "Q3_K"),
    (12, "Q4_K"),
    (13, "Q5_K"),
    (14, "Q6_K"),
    (15, "Q8_K"),
    (16, "IQ2_XXS"),
    (17, "IQ2_XS"),
    (18, "IQ3_XXS"),
    (19, "IQ1_S"),
    (20, "IQ4_NL"),
    (21, "IQ3_S"),
    (22, "IQ2_S"),
    (23, "IQ4_XS"),
    (24, "I8"),
    (25, "I16"),
    (26, "I32"),
    (27, "I64"),
    (28, "F64"),
    (29, "IQ1_M"),
    (30, "BF16"),
    (34, "TQ1_0"),
    (35, "TQ2_0"),
];

pub(crate) fn type_name(kind: u32) -> String {
    TYPE_NAMES
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or_else(|| format!("{kind} (unknown)"), |(_, n)| n.to_string())
}
