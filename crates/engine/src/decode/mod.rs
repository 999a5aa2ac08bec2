//! Turning the model's logits into text: the generation loop (`generation`), beam search
//! (`beam`), speculative decoding (`speculative`), and the sampling chain (`sampling`).

pub mod beam;
pub mod constraint;
pub mod generation;
mod generation_constraint;
pub mod loops;
pub mod sampling;
pub mod speculative;
