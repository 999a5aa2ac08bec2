//! Models by link (issue 49): what a `model=` value names — a model of the page's list
//! ([`catalogue`]), one or more file URLs, or a Hugging Face repository — resolved into the
//! files to download ([`RemoteModel`]), and the checks every response and every finished file
//! go through ([`http`]). Plain data, tested natively; the worker's glue does the fetching
//! and keeps the files in the browser's storage (`decoding-worker`'s `download.rs`).
//!
//! The hub's URLs, as its clients use them: a file is
//! `https://huggingface.co/<repo>/resolve/<revision>/<path>` (transformers.js's
//! `remotePathTemplate` `{model}/resolve/{revision}/`), a repository's files are listed by
//! `/api/models/<repo>/tree/<revision>` (huggingface_hub's `list_repo_tree`), and a
//! `/blob/` URL is the file's HTML page, not the file.

pub mod catalogue;
pub mod http;
pub mod hub;

use serde::{Deserialize, Serialize};

/// The hub the page's list and repository names resolve against (the page's
/// `<meta name="decoding-hub">` can name another: the tests' imitation of it).
pub const HUB: &str = "https://huggingface.co";

/// Longest `model=` value read (a few URLs).
pub const MAX_LINK: usize = 2_000;

/// One file of a model: where it is fetched from, the name it is kept under, and what the
/// list knows of it (its size and sha256 are then checked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteFile {
    pub url: String,
    pub name: String,
    pub size: Option<u64>,
    /// Lowercase hex.
    pub sha256: Option<String>,
}

/// A model to download: the link's value that names it, the folder it is kept under in the
/// browser, a name for people and its files (small ones first, the weights last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteModel {
    pub link: String,
    pub key: String,
    pub name: String,
    pub files: Vec<RemoteFile>,
}

/// A model in a bundle's folder (`bundle.json`, written by `decoding-explorer bundle`):
/// its files on the folder's server, with their sizes and sha256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleEntry {
    pub name: String,
    pub files: Vec<BundleFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleFile {
    pub url: String,
    pub size: u64,
    pub sha256: String,
}

impl BundleEntry {
    /// The link that loads it (its files' paths).
    pub fn link(&self) -> String {
        self.files
            .iter()
            .map(|f| f.url.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What a `model=` value names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelLink {
    /// A model of the page's list, by its key.
    Listed(&'static catalogue::Entry),
    /// File URLs (absolute, or paths on the page's own server), one model's files.
    Urls(Vec<String>),
    /// A Hugging Face repository (`owner/name`), its files chosen from the hub's listing.
    Repo(String),
}

/// What resolving a link gives: the files, or a repository whose listing chooses them.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Files(RemoteModel),
    Repo {
        repo: String,
        /// The listing's URL (`/api/models/<repo>/tree/main`).
        listing: String,
        key: String,
    },
}

impl ModelLink {
    /// Reads a `model=` value (or what was typed in the page's field): a list key, URLs
    /// separated by spaces or commas, a hub repository (`owner/name`, or its page's URL).
    /// A hub `/blob/` URL (the file's HTML page) is read as the file's `/resolve/` URL.
    pub fn parse(v: &str) -> Result<ModelLink, String> {
        let v = v.trim();
        if v.is_empty() {
            return Err("name a model: one of the list, a URL or a Hugging Face repository".into());
        }
        if v.len() > MAX_LINK {
            return Err(format!(
                "{} characters: a model's link is at most {MAX_LINK}",
                v.len()
            ));
        }
        if let Some(e) = catalogue::by_key(v) {
            return Ok(ModelLink::Listed(e));
        }
        let parts: Vec<&str> = v
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|p| !p.is_empty())
            .collect();
        if parts.len() == 1 {
            if let Some(repo) = repo_name(parts[0]) {
                return Ok(ModelLink::Repo(repo));
            }
        }
        if parts.len() > 3 {
            return Err(format!(
                "{} URLs: a model is one to three files",
                parts.len()
            ));
        }
        let urls = parts
            .iter()
            .map(|p| file_url(p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ModelLink::Urls(urls))
    }

    /// The files to fetch, URLs of the list and of repositories made against `hub`.
    pub fn resolve(&self, link: &str, hub: &str) -> Resolved {
        let hub = hub.trim_end_matches('/');
        match self {
            ModelLink::Listed(e) => Resolved::Files(e.model(hub)),
            ModelLink::Urls(urls) => Resolved::Files(RemoteModel {
                link: link.to_string(),
                key: format!("url-{:016x}", fnv(&urls.join(" "))),
                name: urls
                    .iter()
                    .map(|u| file_name(u))
                    .collect::<Vec<_>>()
                    .join(" + "),
                files: urls
                    .iter()
                    .enumerate()
                    .map(|(i, u)| {
                        // Names unique in the model's folder, and never its record's.
                        let name = file_name(u);
                        let taken = urls[..i].iter().any(|v| file_name(v) == name);
                        RemoteFile {
                            url: u.clone(),
                            name: if taken || name == "meta.json" {
                                format!("{}-{name}", i + 1)
                            } else {
                                name
                            },
                            size: None,
                            sha256: None,
                        }
                    })
                    .collect(),
            }),
            ModelLink::Repo(repo) => Resolved::Repo {
                repo: repo.clone(),
                listing: format!("{hub}/api/models/{repo}/tree/main"),
                key: format!("hf-{}", repo.replace('/', "--")),
            },
        }
    }
}

/// `owner/name` of a hub repository: the bare name, or its page's URL
/// (`https://huggingface.co/owner/name`, nothing after the name).
fn repo_name(p: &str) -> Option<String> {
    let rest = p
        .strip_prefix("https://huggingface.co/")
        .unwrap_or(p)
        .trim_end_matches('/');
    let (owner, name) = rest.split_once('/')?;
    let ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 96
            && !s.starts_with('.')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    (ok(owner) && ok(name)).then(|| format!("{owner}/{name}"))
}

/// A file's URL: https (any host; the hub's `/blob/` made `/resolve/`), or a path on the
/// page's own server (`/…`). Plain http elsewhere is refused (the page's security policy
/// would block it anyway, with a less clear message).
fn file_url(p: &str) -> Result<String, String> {
    let blob = "https://huggingface.co/";
    if let Some(rest) = p.strip_prefix(blob) {
        let mut seg: Vec<&str> = rest.split('/').collect();
        if seg.len() >= 5 && seg[2] == "blob" {
            seg[2] = "resolve";
            return Ok(format!("{blob}{}", seg.join("/")));
        }
    }
    let https = p.strip_prefix("https://").is_some_and(|r| {
        let host = r.split('/').next().unwrap_or("");
        !host.is_empty() && r.len() > host.len() + 1
    });
    if https || (p.starts_with('/') && !p.starts_with("//")) {
        if p.chars()
            .any(|c| c.is_control() || c == '"' || c == '<' || c == '>')
        {
            return Err(format!("{p:?} is not a URL"));
        }
        return Ok(p.to_string());
    }
    if p.starts_with("http://") {
        return Err(format!(
            "{p}: the page downloads over https only (or from its own server)"
        ));
    }
    Err(format!(
        "{p:?} is not a model of the list ({}), a file's https URL or a Hugging Face repository (owner/name)",
        catalogue::keys().join(", ")
    ))
}

/// The last segment of a URL's path, without its query: the name a file is kept under.
pub fn file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let last = path.rsplit('/').next().unwrap_or(path);
    safe_name(if last.is_empty() { "file" } else { last })
}

/// A name the browser's storage takes: letters, digits and `._-`, the rest as `_`.
pub fn safe_name(s: &str) -> String {
    let out: String = s
        .chars()
        .take(120)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with('.') {
        format!("_{out}")
    } else {
        out
    }
}

/// FNV-1a, 64 bits: a stable folder name for a set of URLs.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
