//! The files a model comes in, each read from bytes into a `Checkpoint` (a `Config` and its
//! `TransformerWeights`): llama2.c's legacy float32 files and its version-2 (Q8_0) files,
//! llama.cpp's GGUF (the container, then the Llama mapping), and Hugging Face checkpoints.
//! This file tells llama2.c's two formats apart by their first bytes.

pub mod ggml_types;
pub mod gguf;
pub mod gguf_data;
pub mod gguf_llama;
pub mod gguf_vocab;
pub mod hf;
mod hf_config;
pub mod llama2c;
pub mod llama2c_v2;
mod rope_order;
pub mod source;

use crate::budget::Budget;
use crate::config::Config;
use crate::quant::SharedBytes;
use crate::weights::Checkpoint;
use llama2c::{read_up_to, CheckpointError, HEADER_BYTES};

/// Bytes of a file's start that tell its format and its header (a version-2 file's header is
/// 256 bytes): what the page reads of a dropped file before the rest.
pub const HEAD_BYTES: usize = llama2c_v2::V2_HEADER_BYTES;

impl Checkpoint {
    /// What can be known of a llama2.c checkpoint (either version) from its first bytes and
    /// its length, before the rest is read (the page checks a dropped file this way): the
    /// header's values, the memory the model would take against `budget`, and the file's
    /// size against the one the header implies. `head` may be the whole file or its start.
    pub fn check_header(
        head: &[u8],
        file_len: u64,
        budget: Budget,
    ) -> Result<Config, CheckpointError> {
        if file_len == 0 {
            return Err(CheckpointError::Empty);
        }
        if llama2c_v2::is_v2(head) {
            return llama2c_v2::check_v2_header(head, file_len, budget).map(|h| h.config);
        }
        Checkpoint::check_legacy_header(head, file_len, budget)
    }

    /// Parses and validates a llama2.c checkpoint. The header is checked and the file size
    /// compared with what it implies *before* any tensor is allocated, so a hostile header
    /// cannot cause a huge allocation; then every weight is checked to be finite.
    pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
        Checkpoint::from_bytes_within(bytes, Budget::default())
    }

    /// `from_bytes` with the memory the model may take (weights, one sequence's KV cache,
    /// run state), checked from the header before anything is allocated.
    pub fn from_bytes_within(bytes: &[u8], budget: Budget) -> Result<Checkpoint, CheckpointError> {
        Checkpoint::read_within(&mut &bytes[..], bytes.len() as u64, budget)
    }

    /// Reads a checkpoint of `file_len` bytes from `reader` (a file, natively), either
    /// version: the header is checked against `budget` and `file_len` first, then each
    /// tensor is read straight into its buffer, so the peak is the weights themselves, not
    /// the file and the weights.
    pub fn read_within(
        reader: &mut impl std::io::Read,
        file_len: u64,
        budget: Budget,
    ) -> Result<Checkpoint, CheckpointError> {
        if file_len == 0 {
            return Err(CheckpointError::Empty);
        }
        let mut head = [0u8; HEADER_BYTES];
        let got = read_up_to(reader, &mut head).map_err(|e| CheckpointError::Read {
            offset: 0,
            error: e.to_string(),
        })?;
        if llama2c_v2::is_v2(&head[..got]) {
            return Checkpoint::read_v2(reader, &head[..got], file_len, budget);
        }
        Checkpoint::read_legacy(reader, &head[..got], file_len, budget)
    }

    /// A checkpoint whose float32 tensors are views into `bytes`, the whole file (natively
    /// its mapping): the weights in memory are the file's own pages, not a copy.
    /// Checked as `read_within` checks a file; a version-2 (quantized) file is converted.
    pub fn from_shared(bytes: SharedBytes, budget: Budget) -> Result<Checkpoint, CheckpointError> {
        let all = (*bytes).as_ref();
        if llama2c_v2::is_v2(all) || all.is_empty() {
            return Checkpoint::read_within(&mut &all[..], all.len() as u64, budget);
        }
        Checkpoint::shared_legacy(bytes, budget)
    }
}
