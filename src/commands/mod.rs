//! One module per subcommand: its arguments and what it does.

pub mod batched;
pub mod beam;
pub mod bench;
mod bench_context;
mod bench_mask;
pub mod constrain;
pub mod generate;
mod generate_json;
mod kernel_times;
pub mod next;
mod probe;
pub mod prompt;
pub mod quality;
pub mod quantize;
pub mod sample;
pub mod speculate;
pub mod tokenize;
mod trace;

use crate::error::CliError;
use decoding_engine::Model;

/// The tokens that end generation.
pub fn end_tokens(model: &Model) -> Vec<u32> {
    vec![model.tokenizer.eos, model.tokenizer.bos]
}

/// The text of token ids.
pub fn decode(model: &Model, ids: &[u32]) -> Result<String, CliError> {
    Ok(model.tokenizer.decode(ids)?)
}
