//! What each response of a download is taken for, and when a file is refused: plain rules
//! on the status and the headers (RFC 9110's Range and Content-Range, §14), tested natively;
//! the worker's glue applies them to every response, the resumed ones included.
//!
//! A download that drops is resumed with `Range: bytes=N-` and `If-Range: <ETag>`: a 206
//! whose Content-Range starts at N goes on; a 200 (the server ignored the range, or the
//! file changed and If-Range asked for the whole of it) starts again from the first byte.

use thiserror::Error;

/// Why a file was refused. Each says what and where, with the figures.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum DownloadError {
    #[error("{url}: not found (HTTP 404)")]
    NotFound { url: String },
    #[error("{url}: refused (HTTP {status}): the file is gated (its licence must be accepted on the hub, which this page cannot do) or private; download it yourself and load it from your files")]
    Refused { url: String, status: u16 },
    #[error("{url}: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} is an HTML page, not a model file (a hub link to a file's page says /blob/; its file is at /resolve/)")]
    Html { url: String },
    #[error("{name} is {bytes} bytes: more than the page's memory budget of {limit} bytes")]
    OverBudget {
        name: String,
        bytes: u64,
        limit: u64,
    },
    #[error("{name} is {got} bytes where the list says {want}: not the file it names")]
    WrongSize { name: String, got: u64, want: u64 },
    #[error("{name}'s sha256 is {got}, not the list's {want}: the file is not the one it names (or was damaged)")]
    WrongHash {
        name: String,
        got: String,
        want: String,
    },
    #[error("{url}: the server answered a range that does not start where the download stopped ({range})")]
    BadRange { url: String, range: String },
    #[error(
        "the browser's storage has {free} bytes free of its quota of {quota}: {name} needs {need}"
    )]
    Quota {
        name: String,
        need: u64,
        free: u64,
        quota: u64,
    },
    #[error("{url}: the connection dropped {tries} times (the last at byte {at}): {why}")]
    Dropped {
        url: String,
        tries: u32,
        at: u64,
        why: String,
    },
    #[error("the download was cancelled")]
    Cancelled,
    #[error("{name}: {why} (read from its first bytes: the rest was not downloaded)")]
    Check { name: String, why: String },
    #[error("{name} could not be written to the browser's storage ({why}); free space by deleting kept models")]
    Storage { name: String, why: String },
}

/// The parts of a response the rules read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Got {
    pub status: u16,
    pub content_type: Option<String>,
    pub content_length: Option<u64>,
    pub content_range: Option<String>,
}

/// Where a response's body goes in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// The byte its body starts at: 0, or where the download stopped.
    pub from: u64,
    /// The whole file's length, where the response says it.
    pub total: Option<u64>,
}

/// A response to a request for `url` from byte `asked` (0: the whole file), checked: its
/// status, its type, its range and its length against what the list says (`want`) and the
/// page's budget.
pub fn check_response(
    url: &str,
    name: &str,
    asked: u64,
    got: &Got,
    want: Option<u64>,
    budget: u64,
) -> Result<Start, DownloadError> {
    let url_s = || url.to_string();
    let start = match got.status {
        200 => Start {
            from: 0,
            total: got.content_length,
        },
        206 => {
            let range = got.content_range.clone().unwrap_or_default();
            match parse_content_range(&range) {
                Some((first, _, total)) if first == asked && asked > 0 => {
                    Start { from: first, total }
                }
                _ => {
                    return Err(DownloadError::BadRange {
                        url: url_s(),
                        range,
                    })
                }
            }
        }
        404 | 410 => return Err(DownloadError::NotFound { url: url_s() }),
        401 | 403 => {
            return Err(DownloadError::Refused {
                url: url_s(),
                status: got.status,
            })
        }
        status => {
            return Err(DownloadError::Status {
                url: url_s(),
                status,
            })
        }
    };
    if got
        .content_type
        .as_deref()
        .is_some_and(|t| t.trim().to_ascii_lowercase().starts_with("text/html"))
    {
        return Err(DownloadError::Html { url: url_s() });
    }
    if let Some(total) = start.total {
        if total > budget {
            return Err(DownloadError::OverBudget {
                name: name.to_string(),
                bytes: total,
                limit: budget,
            });
        }
        // A whole file longer than the list's is not it. A shorter length may be a compressed
        // body's (its decoded bytes are counted as they arrive): judged when it has arrived.
        if let Some(want) = want.filter(|&w| total > w || (start.from > 0 && w != total)) {
            return Err(DownloadError::WrongSize {
                name: name.to_string(),
                got: total,
                want,
            });
        }
    }
    Ok(start)
}

/// `bytes first-last/total` (total `*` when unknown): (first, last, total).
pub fn parse_content_range(v: &str) -> Option<(u64, u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes ")?;
    let (span, total) = rest.split_once('/')?;
    let (a, b) = span.split_once('-')?;
    let (first, last) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    (first <= last && total.is_none_or(|t| last < t)).then_some((first, last, total))
}

/// A body's first bytes that read as an HTML page (an error page served as a file).
pub fn looks_like_html(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(512)]).to_ascii_lowercase();
    let t = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    t.starts_with("<!doctype html") || t.starts_with("<html") || t.starts_with("<head")
}

/// A finished file against the list: its length and its sha256 (lowercase hex).
pub fn check_finished(
    name: &str,
    len: u64,
    sha256: &str,
    want_size: Option<u64>,
    want_sha: Option<&str>,
) -> Result<(), DownloadError> {
    if let Some(want) = want_size.filter(|&w| w != len) {
        return Err(DownloadError::WrongSize {
            name: name.to_string(),
            got: len,
            want,
        });
    }
    if let Some(want) = want_sha.filter(|w| !w.eq_ignore_ascii_case(sha256)) {
        return Err(DownloadError::WrongHash {
            name: name.to_string(),
            got: sha256.to_string(),
            want: want.to_string(),
        });
    }
    Ok(())
}

/// Whether the browser's storage can take `need` more bytes (`usage` and `quota` from
/// `navigator.storage.estimate()`).
pub fn check_quota(name: &str, need: u64, usage: u64, quota: u64) -> Result<(), DownloadError> {
    let free = quota.saturating_sub(usage);
    if need > free {
        return Err(DownloadError::Quota {
            name: name.to_string(),
            need,
            free,
            quota,
        });
    }
    Ok(())
}

impl DownloadError {
    /// The file is not the one it names (its bytes, its type, its length): not worth
    /// keeping. The others (a drop, a cancel, a refusal or error of the server, the storage)
    /// leave what arrived, to be resumed.
    pub fn is_content(&self) -> bool {
        matches!(
            self,
            DownloadError::Html { .. }
                | DownloadError::OverBudget { .. }
                | DownloadError::WrongSize { .. }
                | DownloadError::WrongHash { .. }
                | DownloadError::Check { .. }
        )
    }
}

/// How many times a dropped connection is resumed before the download is given up.
pub const MAX_RESUMES: u32 = 5;
