//! A Hugging Face repository's files, from the hub's listing (`GET
//! /api/models/<repo>/tree/main`: a JSON array of `{"type", "path", "size", "lfs": {"oid",
//! "size"}}`, where `lfs.oid` is the file's sha256; huggingface_hub's `list_repo_tree` and
//! huggingface.js's `ListFileEntry`), and the files of one model chosen from them.

use super::{RemoteFile, RemoteModel};
use serde::Deserialize;

/// Longest listing read (a repository of a few hundred files).
pub const MAX_LISTING: usize = 4 << 20;

#[derive(Debug, Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: String,
    path: String,
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    lfs: Option<Lfs>,
}

#[derive(Debug, Deserialize)]
struct Lfs {
    oid: String,
    size: u64,
}

/// GGUF files are taken in this order of their quantization (the page holds k-quants as q8:
/// Q8_0 loses least), else the smallest.
const PREFERRED: [&str; 3] = ["q8_0", "q4_k_m", "f16"];

/// The model in a repository's listing: one GGUF file (Q8_0 preferred when it has several),
/// or a Hugging Face checkpoint's `config.json`, `tokenizer.json` and `model.safetensors`.
pub fn choose(repo: &str, key: &str, hub: &str, listing: &[u8]) -> Result<RemoteModel, String> {
    if listing.len() > MAX_LISTING {
        return Err(format!(
            "{repo}: the hub's listing is over {MAX_LISTING} bytes"
        ));
    }
    let entries: Vec<Entry> = serde_json::from_slice(listing)
        .map_err(|e| format!("{repo}: the hub's listing is not a list of files ({e})"))?;
    let files: Vec<&Entry> = entries.iter().filter(|e| e.kind == "file").collect();
    let file = |e: &Entry| RemoteFile {
        url: format!(
            "{}/{repo}/resolve/main/{}",
            hub.trim_end_matches('/'),
            e.path
        ),
        name: super::file_name(&e.path),
        size: e.lfs.as_ref().map(|l| l.size).or(e.size),
        sha256: e
            .lfs
            .as_ref()
            .map(|l| l.oid.to_ascii_lowercase())
            .filter(|o| o.len() == 64 && o.chars().all(|c| c.is_ascii_hexdigit())),
    };
    let model = |files: Vec<RemoteFile>| RemoteModel {
        link: repo.to_string(),
        key: key.to_string(),
        name: format!(
            "{repo} ({})",
            files
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        files,
    };
    let mut ggufs: Vec<&Entry> = files
        .iter()
        .copied()
        .filter(|e| e.path.to_ascii_lowercase().ends_with(".gguf"))
        .collect();
    if !ggufs.is_empty() {
        let size = |e: &&Entry| {
            e.lfs
                .as_ref()
                .map(|l| l.size)
                .or(e.size)
                .unwrap_or(u64::MAX)
        };
        ggufs.sort_by_key(size);
        let lower = |e: &&Entry| e.path.to_ascii_lowercase();
        let pick = PREFERRED
            .iter()
            .find_map(|q| ggufs.iter().find(|e| lower(e).contains(q)))
            .unwrap_or(&ggufs[0]);
        return Ok(model(vec![file(pick)]));
    }
    let at_root = |name: &str| files.iter().copied().find(|e| e.path == name);
    match (
        at_root("config.json"),
        at_root("tokenizer.json"),
        at_root("model.safetensors"),
    ) {
        (Some(c), Some(t), Some(w)) => Ok(model(vec![file(c), file(t), file(w)])),
        (Some(_), Some(_), None) if at_root("model.safetensors.index.json").is_some() => Err(format!(
            "{repo} holds its weights in several safetensors files (model-00001-of-…): the page reads one model.safetensors"
        )),
        _ => Err(format!(
            "{repo} has no GGUF file and no model.safetensors with its config.json and tokenizer.json at its top: name a file's URL instead"
        )),
    }
}
