//! `files.ftl` against the code that writes its messages: every error of the engine's
//! loading, the page's downloads and the worker's glue is built (or its format string found
//! in the worker's source), read back to its own template in English word for word, and
//! written in Chinese and Spanish with every figure in it; every template is some error's.

use super::{id_of, read_back};
use crate::i18n::{engine::engine_message, Lang};
use crate::remote::http::DownloadError;
use decoding_engine::budget::BudgetError;
use decoding_engine::formats::{gguf::GgufError, hf::HfError, source::SourceError};
use decoding_engine::tokenizer::chat::ChatError;
use decoding_engine::{BackendError, CheckpointError, ConfigError, ModelError, TokenizerError};
use std::collections::BTreeSet;

fn q(s: &str) -> String {
    format!("{s:?}")
}

/// Every message the engine and the page's download rules write, one of each kind (with
/// figures the languages group differently).
fn errors() -> Vec<(String, &'static str)> {
    let s = String::from;
    let cp = CheckpointError::UnknownMagic { magic: 0x1234 };
    let mut v: Vec<(String, &str)> = vec![
        (
            DownloadError::NotFound {
                url: s("https://hf.co/a/b.gguf"),
            }
            .to_string(),
            "file-dl-not-found",
        ),
        (
            DownloadError::Refused {
                url: s("https://hf.co/x"),
                status: 401,
            }
            .to_string(),
            "file-dl-refused",
        ),
        (
            DownloadError::Status {
                url: s("https://hf.co/x"),
                status: 503,
            }
            .to_string(),
            "file-dl-status",
        ),
        (
            DownloadError::Html {
                url: s("https://hf.co/x/blob/main/m.gguf"),
            }
            .to_string(),
            "file-dl-html",
        ),
        (
            DownloadError::OverBudget {
                name: s("big.gguf"),
                bytes: 2_000_000_000,
                limit: 1_610_612_736,
            }
            .to_string(),
            "file-dl-over-budget",
        ),
        (
            DownloadError::WrongSize {
                name: s("m.gguf"),
                got: 1000,
                want: 1001,
            }
            .to_string(),
            "file-dl-wrong-size",
        ),
        (
            DownloadError::WrongHash {
                name: s("m.gguf"),
                got: s("ab12"),
                want: s("cd34"),
            }
            .to_string(),
            "file-dl-wrong-hash",
        ),
        (
            DownloadError::BadRange {
                url: s("https://hf.co/x"),
                range: s("bytes 5-9/10"),
            }
            .to_string(),
            "file-dl-bad-range",
        ),
        (
            DownloadError::Quota {
                name: s("m.gguf"),
                need: 10,
                free: 5,
                quota: 100,
            }
            .to_string(),
            "file-dl-quota",
        ),
        (
            DownloadError::Dropped {
                url: s("https://hf.co/x"),
                tries: 3,
                at: 4096,
                why: s("the body ended at byte 4096"),
            }
            .to_string(),
            "file-dl-dropped",
        ),
        (DownloadError::Cancelled.to_string(), "file-dl-cancelled"),
        (
            DownloadError::Check {
                name: s("m.gguf"),
                why: GgufError::Version(9).to_string(),
            }
            .to_string(),
            "file-dl-check",
        ),
        (
            DownloadError::Storage {
                name: s("m.gguf"),
                why: s("QuotaExceededError; it holds 12 bytes of its quota of 99"),
            }
            .to_string(),
            "file-dl-storage",
        ),
        (SourceError::NoFiles.to_string(), "file-src-none"),
        (
            SourceError::TooManyFiles { count: 4 }.to_string(),
            "file-src-too-many",
        ),
        (
            SourceError::Read {
                name: s("m.bin"),
                error: s("NotReadableError"),
            }
            .to_string(),
            "file-src-read",
        ),
        (
            SourceError::CheckpointAlone { name: s("m.bin") }.to_string(),
            "file-src-checkpoint-alone",
        ),
        (
            SourceError::NotGguf {
                name: s("m.gguf"),
                start: s("PK"),
            }
            .to_string(),
            "file-src-not-gguf",
        ),
        (
            SourceError::GgufNotAlone { name: s("m.gguf") }.to_string(),
            "file-src-gguf-not-alone",
        ),
        (
            SourceError::HfIncomplete {
                name: s("model.safetensors"),
            }
            .to_string(),
            "file-src-hf-incomplete",
        ),
        (
            SourceError::TokenizerAlone {
                name: s("tokenizer.bin"),
            }
            .to_string(),
            "file-src-tokenizer-alone",
        ),
        (
            SourceError::NotAModel {
                found: s("a.txt: text"),
            }
            .to_string(),
            "file-src-not-one-model",
        ),
        (
            ModelError::from(cp.clone()).to_string(),
            "file-model-checkpoint",
        ),
        (
            ModelError::from(TokenizerError::Empty).to_string(),
            "file-model-tokenizer",
        ),
        (
            ModelError::from(GgufError::Version(1)).to_string(),
            "file-model-gguf",
        ),
        (
            ModelError::from(HfError::Missing("vocab_size")).to_string(),
            "file-model-hf",
        ),
        (
            ModelError::from(ChatError::NoTemplate).to_string(),
            "file-model-chat",
        ),
        (
            ModelError::EmptyPrompt.to_string(),
            "file-model-empty-prompt",
        ),
        (
            ModelError::PromptTooLong {
                tokens: 5000,
                seq_len: 4096,
            }
            .to_string(),
            "file-model-prompt-long",
        ),
        (
            GgufError::Magic {
                found: q("PK\u{3}\u{4}"),
            }
            .to_string(),
            "file-gguf-magic",
        ),
        (GgufError::Version(4).to_string(), "file-gguf-version"),
        (
            GgufError::Truncated {
                what: s("the tensor table"),
                at: 100,
                len: 90,
            }
            .to_string(),
            "file-gguf-truncated",
        ),
        (
            GgufError::Count {
                what: s("n_tensors"),
                value: 1 << 40,
                len: 1000,
            }
            .to_string(),
            "file-gguf-count",
        ),
        (
            GgufError::ValueType {
                key: s("general.name"),
                kind: 99,
            }
            .to_string(),
            "file-gguf-value-type",
        ),
        (
            GgufError::Value {
                key: s("llama.block_count"),
                why: ConfigError::OddHeadSize { head_size: 7 }.to_string(),
            }
            .to_string(),
            "file-gguf-value",
        ),
        (
            GgufError::Missing(s("llama.embedding_length")).to_string(),
            "file-gguf-missing",
        ),
        (
            GgufError::Tensor {
                name: s("blk.0.attn_q.weight"),
                why: CheckpointError::NonFinite {
                    tensor: "wq",
                    index: 7,
                    value: f32::NAN,
                }
                .to_string(),
            }
            .to_string(),
            "file-gguf-tensor",
        ),
        (
            GgufError::TensorType {
                name: s("blk.0.ffn_up.weight"),
                kind: s("IQ2_XS"),
            }
            .to_string(),
            "file-gguf-tensor-type",
        ),
        (
            GgufError::Architecture(s("gemma3")).to_string(),
            "file-gguf-architecture",
        ),
        (
            GgufError::TooLarge {
                bytes: 9_000_000_000,
                limit: 1_610_612_736,
            }
            .to_string(),
            "file-gguf-too-large",
        ),
        (
            GgufError::MissingTensor(s("output_norm.weight")).to_string(),
            "file-gguf-missing-tensor",
        ),
        (CheckpointError::Empty.to_string(), "file-ckpt-empty"),
        (
            CheckpointError::TooShortForHeader { len: 12 }.to_string(),
            "file-ckpt-short",
        ),
        (
            CheckpointError::WrongSize {
                actual: s("1,000"),
                expected: s("1,048,576"),
            }
            .to_string(),
            "file-ckpt-wrong-size",
        ),
        (
            CheckpointError::Read {
                offset: 28,
                error: s("unexpected end of file"),
            }
            .to_string(),
            "file-ckpt-read",
        ),
        (cp.to_string(), "file-ckpt-magic"),
        (
            CheckpointError::UnsupportedVersion { version: 3 }.to_string(),
            "file-ckpt-version",
        ),
        (
            CheckpointError::BadSharedFlag { value: 7 }.to_string(),
            "file-ckpt-shared",
        ),
        (
            CheckpointError::GroupSize { group: 0 }.to_string(),
            "file-ckpt-group",
        ),
        (
            CheckpointError::GroupDoesNotDivide {
                tensor: "w1",
                len: 100,
                group: 64,
            }
            .to_string(),
            "file-ckpt-group-divide",
        ),
        (
            CheckpointError::NonFinite {
                tensor: "w2",
                index: 3,
                value: f32::INFINITY,
            }
            .to_string(),
            "file-ckpt-non-finite",
        ),
        (
            ConfigError::OutOfRange {
                field: "dim",
                value: -1,
                rule: s("1..=65536"),
            }
            .to_string(),
            "file-cfg-range",
        ),
        (
            ConfigError::DimNotDivisibleByHeads {
                dim: 100,
                n_heads: 3,
            }
            .to_string(),
            "file-cfg-dim-heads",
        ),
        (
            ConfigError::HeadsNotDivisibleByKvHeads {
                n_heads: 6,
                n_kv_heads: 4,
            }
            .to_string(),
            "file-cfg-heads-kv",
        ),
        (
            ConfigError::OddHeadSize { head_size: 7 }.to_string(),
            "file-cfg-odd-head",
        ),
        (
            ConfigError::Float {
                field: "rope_theta",
                value: -1.5,
                rule: "finite and > 0",
            }
            .to_string(),
            "file-cfg-float",
        ),
        (
            BudgetError::OverBudget {
                what: "the weights",
                bytes: 3 << 30,
                seq_len: 32768,
                limit: 3 << 29,
            }
            .to_string(),
            "file-budget-over",
        ),
        (
            BudgetError::Overflow {
                what: "the KV cache",
            }
            .to_string(),
            "file-budget-overflow",
        ),
        (
            HfError::ConfigTooLarge {
                bytes: 2_000_000,
                limit: 1 << 20,
            }
            .to_string(),
            "file-hf-config-large",
        ),
        (
            HfError::ConfigJson(s("expected value at line 1 column 1")).to_string(),
            "file-hf-config-json",
        ),
        (
            HfError::Missing("hidden_size").to_string(),
            "file-hf-missing",
        ),
        (
            HfError::Value {
                key: "rope_theta",
                value: s("-1"),
                why: s("must be > 0"),
            }
            .to_string(),
            "file-hf-value",
        ),
        (
            HfError::Architecture(s("GPT2LMHeadModel")).to_string(),
            "file-hf-architecture",
        ),
        (
            HfError::NotSafetensors(s("the header length runs past the file")).to_string(),
            "file-hf-not-safetensors",
        ),
        (
            HfError::HeaderTooLarge {
                bytes: 1 << 30,
                limit: 1 << 24,
            }
            .to_string(),
            "file-hf-header-large",
        ),
        (
            HfError::Safetensors(s("invalid offsets")).to_string(),
            "file-hf-safetensors",
        ),
        (
            HfError::MissingTensor(s("lm_head.weight")).to_string(),
            "file-hf-missing-tensor",
        ),
        (
            HfError::Tensor {
                name: s("model.norm.weight"),
                why: s("shape [3] where [64] was expected"),
            }
            .to_string(),
            "file-gguf-tensor",
        ),
        (
            HfError::Dtype {
                name: s("model.norm.weight"),
                dtype: s("F8_E4M3"),
            }
            .to_string(),
            "file-hf-dtype",
        ),
        (
            HfError::TooLarge {
                bytes: 9_000_000_000,
                limit: 1_610_612_736,
            }
            .to_string(),
            "file-hf-too-large",
        ),
        (TokenizerError::Empty.to_string(), "file-tok-empty"),
        (
            TokenizerError::Truncated {
                id: 5,
                what: "the score",
                len: 40,
            }
            .to_string(),
            "file-tok-truncated",
        ),
        (
            TokenizerError::BadPieceLength { id: 5, len: -2 }.to_string(),
            "file-tok-piece-length",
        ),
        (
            TokenizerError::PieceTooLong {
                id: 5,
                len: 70,
                max: 64,
            }
            .to_string(),
            "file-tok-piece-long",
        ),
        (
            TokenizerError::BadMaxTokenLength(0).to_string(),
            "file-tok-max-length",
        ),
        (
            TokenizerError::InvalidUtf8 {
                id: 5,
                bytes: vec![0xE4, 0xB8],
            }
            .to_string(),
            "file-tok-utf8",
        ),
        (
            TokenizerError::NonFiniteScore {
                id: 5,
                score: f32::NAN,
            }
            .to_string(),
            "file-tok-score",
        ),
        (
            TokenizerError::DuplicatePiece {
                id: 9,
                first: 3,
                piece: s("the"),
            }
            .to_string(),
            "file-tok-duplicate",
        ),
        (
            TokenizerError::VocabMismatch {
                tokenizer: 512,
                model: 32000,
            }
            .to_string(),
            "file-tok-vocab",
        ),
        (
            TokenizerError::Json(s("missing field `model`")).to_string(),
            "file-tok-json",
        ),
        (
            TokenizerError::NotATokenizer(s("\u{0}\u{1}")).to_string(),
            "file-tok-not-tokenizer",
        ),
        (
            TokenizerError::FileTooLarge {
                bytes: 300_000_000,
                limit: 64 << 20,
            }
            .to_string(),
            "file-tok-file-large",
        ),
        (
            TokenizerError::TooManyTokens(5_000_000).to_string(),
            "file-tok-too-many",
        ),
        (
            TokenizerError::TokenTooLong { id: 7, len: 5000 }.to_string(),
            "file-tok-token-long",
        ),
        (
            TokenizerError::MissingSpecial("BOS").to_string(),
            "file-tok-special",
        ),
        (
            TokenizerError::Encode(s("bad input")).to_string(),
            "file-tok-encode",
        ),
        (
            TokenizerError::UnknownPreTokenizer(s("deepseek-llm")).to_string(),
            "file-tok-pre",
        ),
        (
            TokenizerError::BadMerge {
                rank: 12,
                merge: s("a b c"),
            }
            .to_string(),
            "file-tok-merge",
        ),
        (
            TokenizerError::Bpe(s("merge without tokens")).to_string(),
            "file-tok-bpe",
        ),
        (
            TokenizerError::UnknownId {
                id: 70000,
                vocab: 32000,
            }
            .to_string(),
            "file-tok-unknown-id",
        ),
        (ChatError::NoTemplate.to_string(), "file-chat-none"),
        (
            ChatError::Unreadable(s("unexpected end of template")).to_string(),
            "file-chat-unreadable",
        ),
        (
            ChatError::SpecialsAsText.to_string(),
            "file-chat-sentencepiece",
        ),
        (ChatError::TooLarge(100_000).to_string(), "file-chat-large"),
        (
            ChatError::Render(s("undefined value")).to_string(),
            "file-chat-render",
        ),
        (
            ChatError::RenderedTooLarge(2_000_000).to_string(),
            "file-chat-rendered-large",
        ),
        (
            BackendError::DeviceLost(s("Device was destroyed")).to_string(),
            "file-backend-lost",
        ),
        (
            BackendError::Gpu(s("no adapter")).to_string(),
            "file-backend-gpu-error",
        ),
    ];
    v.extend(page_and_worker());
    v
}

/// The page's own messages (a transcript file, the toy logits) and the worker's and the
/// backend choice's, each found as its code writes it.
fn page_and_worker() -> Vec<(String, &'static str)> {
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
    // The worker's and the backend choice's words, each as its source writes it.
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

#[test]
fn every_message_is_its_template_word_for_word_in_english() {
    for (m, id) in errors() {
        assert_eq!(id_of(&m).as_deref(), Some(id), "{m}");
        assert_eq!(read_back(Lang::En, &m).as_deref(), Some(m.as_str()), "{id}");
    }
}

#[test]
fn every_template_is_some_message() {
    let used: BTreeSet<&str> = errors().into_iter().map(|(_, id)| id).collect();
    let en = include_str!("../../locales/en/files.ftl");
    let ids: BTreeSet<&str> = en
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|(id, _)| id))
        .filter(|id| id.starts_with("file-"))
        .collect();
    let unused: Vec<_> = ids.difference(&used).collect();
    assert!(unused.is_empty(), "templates no message is: {unused:?}");
}

#[test]
fn every_message_is_translated_with_its_figures() {
    for lang in [Lang::ZhCn, Lang::Es] {
        for (m, id) in errors() {
            let t = read_back(lang, &m).unwrap_or_else(|| panic!("{id}: {m}"));
            assert_ne!(t, m, "{} {id} is English", lang.name());
            let mut have = numbers(&t);
            for n in numbers(&m) {
                let i = have.iter().position(|h| *h == n);
                assert!(i.is_some(), "{} {id} lost {n}: {t}", lang.name());
                have.swap_remove(i.unwrap_or_default());
            }
            // The page's way in (the engine's words tried first) translates it too.
            assert_ne!(engine_message(lang, &m), m, "{id}");
        }
    }
}

/// The numbers in a text, their separators taken out (`1,610` and `1.610` are `1610`).
fn numbers(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    for c in t.chars().chain([' ']) {
        if c.is_ascii_digit() || (!run.is_empty() && (c == ',' || c == '.')) {
            run.push(c);
        } else if !run.is_empty() {
            out.push(run.trim_end_matches([',', '.']).replace([',', '.'], ""));
            run.clear();
        }
    }
    out
}

#[test]
fn figures_are_written_as_the_language_writes_them() {
    let budget = BudgetError::OverBudget {
        what: "the weights",
        bytes: 3 << 30,
        seq_len: 32768,
        limit: 3 << 29,
    }
    .to_string();
    assert!(
        budget.contains("32,768") && budget.contains("1.50 GiB"),
        "{budget}"
    );
    let es = read_back(Lang::Es, &budget).unwrap();
    assert!(es.contains("32.768") && es.contains("1,50 GiB"), "{es}");
    let zh = read_back(Lang::ZhCn, &budget).unwrap();
    assert!(zh.contains("32,768") && zh.contains("1.50 GiB"), "{zh}");
    // A reason's list and its nested message, each read back.
    let auto = "auto, measured: CPU 0.20 ms a token, WebGPU 12.5 ms a token; the CPU is faster for this model (the CPU backend was chosen)";
    let es = read_back(Lang::Es, auto).unwrap();
    assert!(es.contains("0,20") && es.contains("12,5"), "{es}");
    for lang in [Lang::ZhCn, Lang::Es] {
        let t = read_back(lang, auto).unwrap();
        for english in ["ms a token", "is faster", "was chosen"] {
            assert!(!t.contains(english), "{t}");
        }
    }
    // A message no template reads stays as it came.
    assert_eq!(read_back(Lang::ZhCn, "something else entirely"), None);
    assert_eq!(
        engine_message(Lang::ZhCn, "something else entirely"),
        "something else entirely"
    );
}
