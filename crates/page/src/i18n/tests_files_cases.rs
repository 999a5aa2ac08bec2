//! The messages `tests_files.rs` reads back: every error of the engine's loading and of
//! the page's downloads, one of each kind (with figures the languages group differently),
//! and the page's and the worker's own, each found as its code writes it.

use crate::remote::http::DownloadError;
use decoding_engine::budget::BudgetError;
use decoding_engine::formats::{gguf::GgufError, hf::HfError, source::SourceError};
use decoding_engine::tokenizer::chat::ChatError;
use decoding_engine::{BackendError, CheckpointError, ConfigError, ModelError, TokenizerError};

/// A URL and a file's name, as the messages name them.
const U: &str = "https://hf.co/x/resolve/main/m.gguf";
const M: &str = "m.gguf";

fn q(s: &str) -> String {
    format!("{s:?}")
}

fn s(v: &str) -> String {
    v.to_string()
}

/// Each message as the code writes it (`Display`), with its template's id: a table, one
/// row a line.
macro_rules! cases {
    ($($e:expr => $id:literal;)*) => {
        vec![$(($e.to_string(), $id)),*]
    };
}

/// Every message, with the id of the template that must read it.
pub(super) fn errors() -> Vec<(String, &'static str)> {
    [
        download(),
        source(),
        gguf(),
        checkpoint(),
        hf(),
        tokenizer(),
        page(),
        worker(),
    ]
    .concat()
}

/// A download's refusals (`remote::http`).
fn download() -> Vec<(String, &'static str)> {
    cases! {
        DownloadError::NotFound { url: s(U) } => "file-dl-not-found";
        DownloadError::Refused { url: s(U), status: 401 } => "file-dl-refused";
        DownloadError::Status { url: s(U), status: 503 } => "file-dl-status";
        DownloadError::Html { url: s(U) } => "file-dl-html";
        DownloadError::OverBudget { name: s("big.gguf"), bytes: 2_000_000_000, limit: 1_610_612_736 } => "file-dl-over-budget";
        DownloadError::WrongSize { name: s(M), got: 1000, want: 1001 } => "file-dl-wrong-size";
        DownloadError::WrongHash { name: s(M), got: s("ab12"), want: s("cd34") } => "file-dl-wrong-hash";
        DownloadError::BadRange { url: s(U), range: s("bytes 5-9/10") } => "file-dl-bad-range";
        DownloadError::Quota { name: s(M), need: 10, free: 5, quota: 100 } => "file-dl-quota";
        DownloadError::Dropped { url: s(U), tries: 3, at: 4096, why: s("the body ended at byte 4096") } => "file-dl-dropped";
        DownloadError::Cancelled => "file-dl-cancelled";
        DownloadError::Check { name: s(M), why: GgufError::Version(9).to_string() } => "file-dl-check";
        DownloadError::Storage { name: s(M), why: s("QuotaExceededError; it holds 12 bytes of its quota of 99") } => "file-dl-storage";
    }
}

/// Which files make a model, and the model as a whole.
fn source() -> Vec<(String, &'static str)> {
    cases! {
        SourceError::NoFiles => "file-src-none";
        SourceError::TooManyFiles { count: 4 } => "file-src-too-many";
        SourceError::Read { name: s("m.bin"), error: s("NotReadableError") } => "file-src-read";
        SourceError::CheckpointAlone { name: s("m.bin") } => "file-src-checkpoint-alone";
        SourceError::NotGguf { name: s(M), start: s("PK") } => "file-src-not-gguf";
        SourceError::GgufNotAlone { name: s(M) } => "file-src-gguf-not-alone";
        SourceError::HfIncomplete { name: s("model.safetensors") } => "file-src-hf-incomplete";
        SourceError::TokenizerAlone { name: s("tokenizer.bin") } => "file-src-tokenizer-alone";
        SourceError::NotAModel { found: s("a.txt: text") } => "file-src-not-one-model";
        ModelError::from(CheckpointError::UnknownMagic { magic: 0x1234 }) => "file-model-checkpoint";
        ModelError::from(TokenizerError::Empty) => "file-model-tokenizer";
        ModelError::from(GgufError::Version(1)) => "file-model-gguf";
        ModelError::from(HfError::Missing("vocab_size")) => "file-model-hf";
        ModelError::from(ChatError::NoTemplate) => "file-model-chat";
        ModelError::EmptyPrompt => "file-model-empty-prompt";
        ModelError::PromptTooLong { tokens: 5000, seq_len: 4096 } => "file-model-prompt-long";
    }
}

/// GGUF's.
fn gguf() -> Vec<(String, &'static str)> {
    cases! {
        GgufError::Magic { found: q("PK\u{3}\u{4}") } => "file-gguf-magic";
        GgufError::Version(4) => "file-gguf-version";
        GgufError::Read(s("Input/output error (os error 5)")) => "file-gguf-read";
        GgufError::Truncated { what: s("the tensor table"), at: 100, len: 90 } => "file-gguf-truncated";
        GgufError::Count { what: s("n_tensors"), value: 1 << 40, len: 1000 } => "file-gguf-count";
        GgufError::ValueType { key: s("general.name"), kind: 99 } => "file-gguf-value-type";
        GgufError::Value { key: s("llama.block_count"), why: ConfigError::OddHeadSize { head_size: 7 }.to_string() } => "file-gguf-value";
        GgufError::Missing(s("llama.embedding_length")) => "file-gguf-missing";
        GgufError::Tensor { name: s("blk.0.attn_q.weight"), why: CheckpointError::NonFinite { tensor: "wq", index: 7, value: f32::NAN } .to_string() } => "file-gguf-tensor";
        GgufError::TensorType { name: s("blk.0.ffn_up.weight"), kind: s("IQ2_XS") } => "file-gguf-tensor-type";
        GgufError::Architecture(s("gemma3")) => "file-gguf-architecture";
        GgufError::TooLarge { bytes: 9_000_000_000, limit: 1_610_612_736 } => "file-gguf-too-large";
        GgufError::MissingTensor(s("output_norm.weight")) => "file-gguf-missing-tensor";
        HfError::Tensor { name: s("model.norm.weight"), why: s("shape [3] where [64] was expected") } => "file-gguf-tensor";
    }
}

/// llama2.c checkpoints', their headers' and the memory budget's.
fn checkpoint() -> Vec<(String, &'static str)> {
    cases! {
        CheckpointError::Empty => "file-ckpt-empty";
        CheckpointError::TooShortForHeader { len: 12 } => "file-ckpt-short";
        CheckpointError::WrongSize { actual: s("1,000"), expected: s("1,048,576") } => "file-ckpt-wrong-size";
        CheckpointError::Read { offset: 28, error: s("unexpected end of file") } => "file-ckpt-read";
        CheckpointError::UnknownMagic { magic: 0x1234 } => "file-ckpt-magic";
        CheckpointError::UnsupportedVersion { version: 3 } => "file-ckpt-version";
        CheckpointError::BadSharedFlag { value: 7 } => "file-ckpt-shared";
        CheckpointError::GroupSize { group: 0 } => "file-ckpt-group";
        CheckpointError::GroupDoesNotDivide { tensor: "w1", len: 100, group: 64 } => "file-ckpt-group-divide";
        CheckpointError::NonFinite { tensor: "w2", index: 3, value: f32::INFINITY } => "file-ckpt-non-finite";
        ConfigError::OutOfRange { field: "dim", value: -1, rule: s("1..=65536") } => "file-cfg-range";
        ConfigError::DimNotDivisibleByHeads { dim: 100, n_heads: 3 } => "file-cfg-dim-heads";
        ConfigError::HeadsNotDivisibleByKvHeads { n_heads: 6, n_kv_heads: 4 } => "file-cfg-heads-kv";
        ConfigError::OddHeadSize { head_size: 7 } => "file-cfg-odd-head";
        ConfigError::Float { field: "rope_theta", value: -1.5, rule: "finite and > 0" } => "file-cfg-float";
        BudgetError::OverBudget { what: "the weights", bytes: 3 << 30, seq_len: 32768, limit: 3 << 29 } => "file-budget-over";
        BudgetError::Overflow { what: "the KV cache" } => "file-budget-overflow";
    }
}

/// Hugging Face checkpoints'.
fn hf() -> Vec<(String, &'static str)> {
    cases! {
        HfError::ConfigTooLarge { bytes: 2_000_000, limit: 1 << 20 } => "file-hf-config-large";
        HfError::ConfigJson(s("expected value at line 1 column 1")) => "file-hf-config-json";
        HfError::Missing("hidden_size") => "file-hf-missing";
        HfError::Value { key: s("rope_theta"), value: s("-1"), why: s("must be > 0") } => "file-hf-value";
        HfError::Architecture(s("GPT2LMHeadModel")) => "file-hf-architecture";
        HfError::NotSafetensors(s("the header length runs past the file")) => "file-hf-not-safetensors";
        HfError::HeaderTooLarge { bytes: 1 << 30, limit: 1 << 24 } => "file-hf-header-large";
        HfError::Safetensors(s("invalid offsets")) => "file-hf-safetensors";
        HfError::MissingTensor(s("lm_head.weight")) => "file-hf-missing-tensor";
        HfError::Dtype { name: s("model.norm.weight"), dtype: s("F8_E4M3") } => "file-hf-dtype";
        HfError::TooLarge { bytes: 9_000_000_000, limit: 1_610_612_736 } => "file-hf-too-large";
    }
}

/// Tokenizers', chat templates' and the backends'.
fn tokenizer() -> Vec<(String, &'static str)> {
    cases! {
        TokenizerError::Empty => "file-tok-empty";
        TokenizerError::Truncated { id: 5, what: "the score", len: 40 } => "file-tok-truncated";
        TokenizerError::BadPieceLength { id: 5, len: -2 } => "file-tok-piece-length";
        TokenizerError::PieceTooLong { id: 5, len: 70, max: 64 } => "file-tok-piece-long";
        TokenizerError::BadMaxTokenLength(0) => "file-tok-max-length";
        TokenizerError::InvalidUtf8 { id: 5, bytes: vec![0xE4, 0xB8] } => "file-tok-utf8";
        TokenizerError::NonFiniteScore { id: 5, score: f32::NAN } => "file-tok-score";
        TokenizerError::DuplicatePiece { id: 9, first: 3, piece: s("the") } => "file-tok-duplicate";
        TokenizerError::VocabMismatch { tokenizer: 512, model: 32000 } => "file-tok-vocab";
        TokenizerError::Json(s("missing field `model`")) => "file-tok-json";
        TokenizerError::NotATokenizer(s("\u{0}\u{1}")) => "file-tok-not-tokenizer";
        TokenizerError::FileTooLarge { bytes: 300_000_000, limit: 64 << 20 } => "file-tok-file-large";
        TokenizerError::TooManyTokens(5_000_000) => "file-tok-too-many";
        TokenizerError::TokenTooLong { id: 7, len: 5000 } => "file-tok-token-long";
        TokenizerError::MissingSpecial("BOS") => "file-tok-special";
        TokenizerError::Encode(s("bad input")) => "file-tok-encode";
        TokenizerError::UnknownPreTokenizer(s("deepseek-llm")) => "file-tok-pre";
        TokenizerError::BadMerge { rank: 12, merge: s("a b c") } => "file-tok-merge";
        TokenizerError::Bpe(s("merge without tokens")) => "file-tok-bpe";
        TokenizerError::UnknownId { id: 70000, vocab: 32000 } => "file-tok-unknown-id";
        ChatError::NoTemplate => "file-chat-none";
        ChatError::Unreadable(s("unexpected end of template")) => "file-chat-unreadable";
        ChatError::TooLarge(100_000) => "file-chat-large";
        ChatError::Render(s("undefined value")) => "file-chat-render";
        ChatError::RenderedTooLarge(2_000_000) => "file-chat-rendered-large";
        BackendError::DeviceLost(s("Device was destroyed")) => "file-backend-lost";
        BackendError::Gpu(s("no adapter")) => "file-backend-gpu-error";
    }
}

/// The page's own messages: a transcript file's, the toy logits', a model link's and a hub
/// listing's.
fn page() -> Vec<(String, &'static str)> {
    use crate::export::{TranscriptFile, MAX_TRANSCRIPT_BYTES, TRANSCRIPT_FORMAT};
    let f = TranscriptFile {
        format: TRANSCRIPT_FORMAT.into(),
        version: 1,
        model: "stories260K".into(),
        params: 260_032,
        prompt: "Once".into(),
        settings: Vec::new(),
        tokens: vec![1; 5000],
        text: "x".into(),
        link: String::new(),
    };
    let text = serde_json::to_string(&f).unwrap();
    let mut v: Vec<(String, &str)> = [
        ("\u{1}".to_string(), "file-transcript-not"),
        (
            text.replace("\"version\":1", "\"version\":7"),
            "file-transcript-format",
        ),
        (text.clone(), "file-transcript-tokens"),
        (
            "x".repeat(MAX_TRANSCRIPT_BYTES + 1),
            "file-transcript-large",
        ),
    ]
    .into_iter()
    .map(|(t, id)| (TranscriptFile::parse(&t).unwrap_err(), id))
    .collect();
    use crate::remote::{hub, ModelLink};
    let long = "a".repeat(5000);
    for (text, id) in [
        ("", "file-link-empty"),
        (long.as_str(), "file-link-long"),
        ("/a /b /c /d", "file-link-urls"),
        ("/a<b", "file-link-not-url"),
        ("http://example.com/m.gguf", "file-link-http"),
        ("nonsense", "file-link-unknown"),
    ] {
        v.push((ModelLink::parse(text).unwrap_err(), id));
    }
    let big = vec![b' '; 20 << 20];
    for (listing, id) in [
        (&big[..], "file-hub-listing-large"),
        (&b"{"[..], "file-hub-listing-json"),
        (&br#"[{"type":"file","path":"config.json","size":1},{"type":"file","path":"tokenizer.json","size":1},{"type":"file","path":"model.safetensors.index.json","size":1}]"#[..], "file-hub-sharded"),
        (&b"[]"[..], "file-hub-none"),
    ] {
        v.push((hub::choose("o/n", "k", "https://hf.co", listing).unwrap_err(), id));
    }
    for (text, id) in [("1, x", "file-toy-not-finite"), ("", "file-toy-count")] {
        v.push((crate::page::parse_toy(text).unwrap_err(), id));
    }
    for (text, id) in [("9", "file-toy-row"), ("a", "file-toy-not-row")] {
        v.push((crate::page::parse_toy_history(text, 4).unwrap_err(), id));
    }
    v
}

/// The worker's and the backend choice's words, each found as its source writes it.
fn worker() -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    let sources = [
        include_str!("../../../worker/src/download.rs"),
        include_str!("../../../worker/src/store.rs"),
        include_str!("../../../worker/src/session/load.rs"),
        include_str!("../../../worker/src/session/remote.rs"),
        include_str!("../../../engine/src/backend/choose.rs"),
        include_str!("../../../gpu/src/select.rs"),
        include_str!("../../../worker/src/session/batching.rs"),
        include_str!("../../../worker/src/session/quant.rs"),
    ]
    .concat();
    let written = [
        ("\"{} was downloaded but cannot be read back from the browser's storage\"", "m.gguf was downloaded but cannot be read back from the browser's storage", "file-dl-unreadable"),
        ("format!(\"{why}; it holds {u} bytes of its quota of {q}\")", "QuotaExceededError; it holds 12 bytes of its quota of 99", "file-dl-storage-figures"),
        ("format!(\"the body ended at byte {}\", o.have)", "the body ended at byte 4096", "file-dl-body-ended"),
        ("format!(\"the browser's storage is not available ({})\"", "the browser's storage is not available (SecurityError)", "file-store-unavailable"),
        ("\"{name} cannot be opened in the browser's storage ({})\"", "m.gguf cannot be opened in the browser's storage (NoModificationAllowedError)", "file-store-unopenable"),
        ("format!(\"{e}; the current model is kept\")", "x.gguf: not found (HTTP 404); the current model is kept", "file-kept"),
        ("format!(\"{e}; the page's own model is loaded instead\")", "x.gguf: not found (HTTP 404); the page's own model is loaded instead", "file-own-instead"),
        ("\"; the current model is kept\"", "m.gguf could not be opened: GPU error: no adapter; the current model is kept", "file-kept"),
        ("format!(\"{} could not be opened: {e}{kept}\", m.name)", "m.gguf could not be opened: GPU error: no adapter", "file-open-failed"),
        ("\"the {p} weights could not be opened: {e}; still running {}\"", "the q8 weights could not be opened: GPU error: out of memory; still running f32", "file-weights-failed"),
        ("format!(\"the GPU asked for is not available ({e}); running on the CPU\")", "the GPU asked for is not available (GPU error: no adapter); running on the CPU", "file-gpu-unavailable"),
        ("\"auto, measured: {}; {faster} ({})\"", "auto, measured: CPU 0.20 ms a token, WebGPU 12.5 ms a token; the CPU is faster for this model (the CPU backend was chosen)", "file-backend-auto"),
        ("format!(\"{label} {ms:.2} ms a token\")", "CPU 0.20 ms a token", "file-backend-ms"),
        ("format!(\"{} failed ({e})\", c.label)", "WebGPU failed (the GPU device was lost: destroyed)", "file-backend-failed"),
        ("format!(\"{} runs it\", chosen.label)", "CPU runs it", "file-backend-runs"),
        ("\"the CPU is faster for this model\"", "the CPU is faster for this model", "file-backend-cpu-faster"),
        ("\"the GPU is faster for this model\"", "the GPU is faster for this model", "file-backend-gpu-faster"),
        ("\"the CPU backend was chosen\"", "the CPU backend was chosen", "file-backend-cpu-chosen"),
        ("format!(\"WebGPU on {desc}\")", "WebGPU on llvmpipe (Vulkan)", "file-backend-gpu-on"),
        ("\"the page runs on the CPU backend, which launches no GPU kernels (choose WebGPU in the header)\"", "the page runs on the CPU backend, which launches no GPU kernels (choose WebGPU in the header)", "file-split-cpu"),
        ("format!(\"w2 (the MLP's down projection), layer 0, row {r}\")", "w2 (the MLP's down projection), layer 0, row 1", "file-quant-row"),
    ];
    for (code, message, id) in written {
        assert!(sources.contains(code), "the code no longer writes {code}");
        v.push((message.to_string(), id));
    }
    v
}
