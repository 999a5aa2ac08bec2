//! The CLI's errors: what went wrong, in words, for stderr.

use decoding_engine::decode::generation::GenerationError;
use decoding_engine::decode::sampling::{SamplingError, SettingsErrors};
use decoding_engine::{BackendError, ModelError, TokenizerError};
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error("cannot read {path}: {error}")]
    Io { path: PathBuf, error: String },
    #[error("{path}: {error}")]
    Model { path: PathBuf, error: ModelError },
    #[error("{0}")]
    Engine(#[from] ModelError),
    #[error("{0}")]
    Backend(#[from] BackendError),
    #[error("{0}")]
    Settings(#[from] SettingsErrors),
    #[error("{0}")]
    Sampling(#[from] SamplingError),
    #[error("{0}")]
    Generation(#[from] GenerationError),
    #[error("{0}")]
    Constraint(#[from] decoding_engine::decode::constraint::ConstraintError),
    #[error("writing output: {0}")]
    Output(#[from] std::io::Error),
}

impl From<TokenizerError> for CliError {
    fn from(e: TokenizerError) -> Self {
        CliError::Engine(ModelError::Tokenizer(e))
    }
}
