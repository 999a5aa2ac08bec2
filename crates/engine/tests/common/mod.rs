//! Loads the default model from `assets/models/stories260K/` (filled by `scripts/fetch-models.sh`).
#![allow(dead_code)]

use decoding_engine::Model;
use std::path::PathBuf;

pub fn model_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/models/stories260K")
}

pub fn read(name: &str) -> Vec<u8> {
    let path = model_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models.sh (the README's test command does)",
            path.display()
        )
    })
}

pub fn stories260k() -> Model {
    Model::from_bytes(&read("stories260K.bin"), &read("tok512.bin")).expect("stories260K loads")
}

/// The model README's greedy continuation of "Once upon a time".
pub const GREEDY: &str = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\nLily's mom said, \"Lily, let's go to the park.\" Lily was sad and didn't know what to do.";
