//! Where a command's prompt comes from: `--prompt TEXT`, `--prompt -` (standard input) or
//! `--prompt-file PATH` (`-` is standard input too). The text is taken as it is: a file's
//! last newline is part of it, as it is of the file.

use crate::error::CliError;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most text a prompt is read from (a model's context is far less).
const MAX_PROMPT_BYTES: u64 = 16 << 20;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct PromptArgs {
    /// The prompt's text ("-": read it from standard input)
    #[arg(long, default_value = "", conflicts_with = "prompt_file")]
    prompt: String,
    /// Read the prompt from a file ("-": standard input)
    #[arg(long, value_name = "PATH")]
    prompt_file: Option<PathBuf>,
}

impl PromptArgs {
    /// The prompt's text.
    pub fn text(&self) -> Result<String, CliError> {
        match (&self.prompt_file, self.prompt.as_str()) {
            (Some(p), _) if p.as_os_str() == "-" => stdin(),
            (Some(p), _) => read(p),
            (None, "-") => stdin(),
            (None, text) => Ok(text.to_string()),
        }
    }
}

/// All of standard input, as text.
pub fn stdin() -> Result<String, CliError> {
    limited(std::io::stdin().lock(), &PathBuf::from("standard input"))
}

fn read(path: &Path) -> Result<String, CliError> {
    let f = std::fs::File::open(path).map_err(|e| CliError::Io {
        path: path.to_path_buf(),
        error: e.to_string(),
    })?;
    limited(f, path)
}

/// All of `r` as UTF-8 text, refused past `MAX_PROMPT_BYTES` (nothing huge is held).
fn limited(r: impl Read, path: &Path) -> Result<String, CliError> {
    let io = |e: std::io::Error| CliError::Io {
        path: path.to_path_buf(),
        error: e.to_string(),
    };
    let mut bytes = Vec::new();
    r.take(MAX_PROMPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_PROMPT_BYTES {
        return Err(CliError::Usage(format!(
            "{}: a prompt is at most {} MiB",
            path.display(),
            MAX_PROMPT_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        CliError::Usage(format!(
            "{}: the prompt is not UTF-8 text (at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}
