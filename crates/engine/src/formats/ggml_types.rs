//! ggml's tensor types (`ggml.h`, `enum ggml_type`): every one by its number and name, and
//! the ones this reader loads with their block sizes (`ggml-common.h`). GGUF's tensor table
//! names a tensor's type by number (`gguf.rs`); `ggml_blocks.rs` decodes the blocks.

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

/// The tensor types read: (type id, weights a block, bytes a block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum Kind {
    F32,
    F16,
    BF16,
    Q8_0,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q4_K,
    Q5_K,
    Q6_K,
}

impl Kind {
    pub(crate) fn of(kind: u32) -> Option<Kind> {
        Some(match kind {
            0 => Kind::F32,
            1 => Kind::F16,
            30 => Kind::BF16,
            8 => Kind::Q8_0,
            2 => Kind::Q4_0,
            3 => Kind::Q4_1,
            6 => Kind::Q5_0,
            7 => Kind::Q5_1,
            12 => Kind::Q4_K,
            13 => Kind::Q5_K,
            14 => Kind::Q6_K,
            _ => return None,
        })
    }

    /// (weights a block, bytes a block)
    pub fn block(self) -> (u64, u64) {
        match self {
            Kind::F32 => (1, 4),
            Kind::F16 | Kind::BF16 => (1, 2),
            Kind::Q8_0 => (32, 34),
            Kind::Q4_0 => (32, 18),
            Kind::Q4_1 => (32, 20),
            Kind::Q5_0 => (32, 22),
            Kind::Q5_1 => (32, 24),
            Kind::Q4_K => (256, 144),
            Kind::Q5_K => (256, 176),
            Kind::Q6_K => (256, 210),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::F32 => "F32",
            Kind::F16 => "F16",
            Kind::BF16 => "BF16",
            Kind::Q8_0 => "Q8_0",
            Kind::Q4_0 => "Q4_0",
            Kind::Q4_1 => "Q4_1",
            Kind::Q5_0 => "Q5_0",
            Kind::Q5_1 => "Q5_1",
            Kind::Q4_K => "Q4_K",
            Kind::Q5_K => "Q5_K",
            Kind::Q6_K => "Q6_K",
        }
    }
}
