//! The transcript as a file: its prompt, settings and tokens, checked when it is loaded back.

/// The transcript with its settings, as the page exports it and loads it back.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TranscriptFile {
    /// "decoding-explorer transcript"
    pub format: String,
    pub version: u32,
    /// The model it was made with (name and parameters), checked when it is loaded.
    pub model: String,
    pub params: u64,
    pub prompt: String,
    /// The settings as the link's pairs.
    pub settings: Vec<(String, String)>,
    pub tokens: Vec<u32>,
    pub text: String,
    /// The whole view as a link's query.
    pub link: String,
}

pub const TRANSCRIPT_FORMAT: &str = "decoding-explorer transcript";
/// Largest transcript file the page reads.
pub const MAX_TRANSCRIPT_BYTES: usize = 1 << 20;

impl TranscriptFile {
    /// Reads a file: its format, version and size checked, the settings validated.
    pub fn parse(text: &str) -> Result<TranscriptFile, String> {
        if text.len() > MAX_TRANSCRIPT_BYTES {
            return Err(format!(
                "a transcript of {} bytes: the page reads at most {}",
                text.len(),
                MAX_TRANSCRIPT_BYTES
            ));
        }
        let f: TranscriptFile =
            serde_json::from_str(text).map_err(|e| format!("not a transcript file: {e}"))?;
        if f.format != TRANSCRIPT_FORMAT || f.version != 1 {
            return Err(format!(
                "{:?} version {} is not a transcript this page writes ({TRANSCRIPT_FORMAT:?} version 1)",
                f.format, f.version
            ));
        }
        if f.tokens.len() > 4096 {
            return Err(format!("{} tokens: at most 4,096", f.tokens.len()));
        }
        Ok(f)
    }
}
