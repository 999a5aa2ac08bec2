//! ggml's tensor types the engine holds (`ggml.h`, `enum ggml_type`), with their block sizes
//! (`ggml-common.h`, QK_K = 256).

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
    pub fn of(kind: u32) -> Option<Kind> {
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

impl Kind {
    /// The activations its dot product takes (ggml's `vec_dot_type`).
    pub fn family(self) -> super::Family {
        use super::Family;
        match self {
            Kind::F32 | Kind::F16 | Kind::BF16 => Family::Float,
            Kind::Q4_K | Kind::Q5_K | Kind::Q6_K => Family::K,
            Kind::Q8_0 | Kind::Q4_0 | Kind::Q4_1 | Kind::Q5_0 | Kind::Q5_1 => Family::Legacy,
        }
    }
}
