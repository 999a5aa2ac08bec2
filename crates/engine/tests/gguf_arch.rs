//! The vocabularies and architectures of the GGUF files people download, on files the set-up
//! writes (`scripts/make-arch-fixtures.py`: llama.cpp's `gguf` package, Hugging Face's
//! `tokenizers`, numpy's float64 forward pass) and held to llama.cpp's own tokenizer and
//! forward pass on the same files
//! (`tests/fixtures/arch/llama-cpp.json`, written by hand with
//! `scripts/llama-cpp-arch-reference.py`; each entry names the sha256 of the file it read).

mod common;

use decoding_engine::budget::Budget;
use decoding_engine::Model;
use serde_json::Value;
use sha2::{Digest, Sha256};

use common::fixture as read;

fn json(dir: &str, name: &str) -> Value {
    serde_json::from_slice(&read(dir, name)).unwrap()
}

const ARCH: &str = "../../assets/models/fixtures/arch";

fn llama_cpp() -> Value {
    json("../../tests/fixtures/arch", "llama-cpp.json")
}

fn expected() -> Value {
    json(ARCH, "expected.json")
}

/// A fixture the set-up wrote, checked to be the very file llama.cpp read for the reference.
fn checked(name: &str, reference: &Value) -> Vec<u8> {
    checked_in(ARCH, name, reference)
}

/// [`checked`] for a file of `dir`.
fn checked_in(dir: &str, name: &str, reference: &Value) -> Vec<u8> {
    let bytes = read(dir, name);
    let got: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        reference["files"][name]["sha256"].as_str(),
        Some(got.as_str()),
        "{name} is not the file llama.cpp read for {dir}'s reference: rerun its script"
    );
    bytes
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

fn model(name: &str, reference: &Value) -> Model {
    Model::from_memory(
        [("model.gguf", &checked(name, reference))],
        Budget::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Each named pre-tokenizer over a text of spaces, digits, punctuation, newlines, accents and
/// emoji: the ids of llama.cpp's `llama_tokenize` on the same file, and the text back from
/// them. The ChatML text with its special tokens parsed gives llama.cpp's ids too.
#[test]
fn bpe_vocabularies_tokenize_as_llama_cpp_does() {
    let (reference, want) = (llama_cpp(), expected());
    let text = want["text"].as_str().unwrap();
    let chat = reference["chat_text"].as_str().unwrap();
    let mut seen = Vec::new();
    for pre in ["gpt-2", "smollm", "llama-bpe", "qwen2"] {
        let name = format!("bpe-{pre}.gguf");
        let m = model(&name, &reference);
        let entry = &reference["files"][&name];
        let got = m.tokenizer.encode(text, false).unwrap();
        assert_eq!(got, ids(&entry["ids"]), "{name}: ids of the test text");
        assert_eq!(
            m.tokenizer.decode(&got).unwrap(),
            text,
            "{name}: round trip"
        );
        let got = m.tokenizer.encode(chat, false).unwrap();
        assert_eq!(got, ids(&entry["chat_ids"]), "{name}: ids of the chat text");
        seen.push(ids(&entry["ids"]));
    }
    // The text tells the pre-tokenizers apart: GPT-2's digit runs, SmolLM's single digits,
    // Llama 3's runs of three, Qwen2's contractions and newlines.
    assert_ne!(seen[0], seen[1]);
    assert_ne!(seen[0], seen[2]);
    assert_ne!(seen[2], seen[3]);
}

/// Llama 3's pre-tokenizer adds BOS by default (llama.cpp's default for `llama-bpe`); the
/// others do not, and Qwen2's file says so too (`add_bos_token = false`).
#[test]
fn bos_is_added_as_the_vocabulary_says() {
    let reference = llama_cpp();
    let bos = |name: &str| {
        let m = model(name, &reference);
        let ids = m.encode_prompt("Hello").unwrap();
        ids[0] == m.tokenizer.bos
    };
    assert!(bos("bpe-llama-bpe.gguf"));
    // A text that starts with the BOS token (as a rendered chat template may) gets no second.
    let m = model("bpe-llama-bpe.gguf", &reference);
    let ids = m.encode_prompt("<|endoftext|>Hello").unwrap();
    assert_eq!(ids[0], m.tokenizer.bos);
    assert_ne!(ids[1], m.tokenizer.bos);
    // A byte-level vocabulary has no dummy prefix: a space after BOS is the text's own.
    let ids = m.encode_prompt(" Hello").unwrap();
    let first = m.tokenizer.decode_piece(Some(ids[0]), ids[1]).unwrap();
    assert_eq!(first.first(), Some(&b' '));
    assert_eq!(m.tokenizer.decode(&ids).unwrap(), " Hello");
    assert!(!bos("bpe-gpt-2.gguf"));
    assert!(!bos("qwen2.gguf"));
}

/// A pre-tokenizer nobody has is refused by its name, with the names read; so are an
/// architecture, a tensor type and a RoPE scaling this engine does not run.
#[test]
fn what_is_not_run_is_refused_by_name() {
    let err = |name: &str| {
        Model::from_memory([("model.gguf", &read(ARCH, name))], Budget::default())
            .unwrap_err()
            .to_string()
    };
    let e = err("bpe-unknown.gguf");
    assert!(e.contains("\"no-such-pre\""), "{e}");
    assert!(e.contains("llama-bpe") && e.contains("qwen2"), "{e}");
    let e = err("unsupported-arch.gguf");
    assert!(e.contains("\"phi3\""), "{e}");
    let e = err("unsupported-type.gguf");
    assert!(e.contains("type Q2_K"), "{e}");
    let e = err("unsupported-rope.gguf");
    assert!(e.contains("llama.rope.scaling.type is \"yarn\""), "{e}");
    let e = err("unsupported-scale.gguf");
    assert!(e.contains("llama.rope.scaling.factor is 2;"), "{e}");
    let e = err("unsupported-bias.gguf");
    assert!(
        e.contains("\"blk.0.attn_output.bias\": this engine's Llama/Qwen2 has no such tensor"),
        "{e}"
    );
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
        .collect()
}

/// The largest |ours − reference| over every position's logits.
fn worst(ours: &[f32], reference: &[f64]) -> f64 {
    assert_eq!(ours.len(), reference.len());
    ours.iter()
        .zip(reference)
        .map(|(&a, b)| (a as f64 - b).abs())
        .fold(0.0, f64::max)
}

fn hf_model(dir: &str) -> Model {
    let file = |name: &str| read(&format!("{ARCH}/{dir}"), name);
    Model::from_memory(
        [
            ("config.json", &file("config.json")),
            ("model.safetensors", &file("model.safetensors")),
            ("tokenizer.json", &file("tokenizer.json")),
        ],
        Budget::default(),
    )
    .unwrap_or_else(|e| panic!("{dir}: {e}"))
}

/// Qwen2 (biases on Q, K and V, Hugging Face's RoPE order in the GGUF file, untied) and
/// Llama 3's RoPE factors, as GGUF and as Hugging Face checkpoints: the logits at every
/// position within 1e-4 of the float64 forward pass (hf_reference.py), and the GGUF files
/// within llama.cpp's own float32 error of llama.cpp's logits on the same file.
#[test]
fn qwen2_and_llama3_rope_match_the_independent_passes() {
    let (reference, want) = (llama_cpp(), expected());
    let tokens = ids(&want["tokens"]);
    let logits = |m: &Model| common::prefill_logits(&m.transformer, &tokens);
    for (gguf, hf, key) in [
        ("qwen2.gguf", "hf-qwen2", "qwen2_logits"),
        ("llama3-rope.gguf", "hf-llama3-rope", "llama3_rope_logits"),
    ] {
        let f64_pass = floats(&want[key]);
        let m = model(gguf, &reference);
        let ours = logits(&m);
        let e = worst(&ours, &f64_pass);
        let l = worst(&ours, &floats(&reference["files"][gguf]["logits"]));
        let h = worst(&logits(&hf_model(hf)), &f64_pass);
        eprintln!("{gguf}: {e:.2e} from float64, {l:.2e} from llama.cpp; {hf}: {h:.2e}");
        assert!(e < 1e-4, "{gguf}: {e} from the float64 pass");
        assert!(l < 2e-2, "{gguf}: {l} from llama.cpp's logits");
        assert!(h < 1e-4, "{hf}: {h} from the float64 pass");
    }
    // The factors matter at these positions: without them the logits are far off.
    let m = model("llama3-rope.gguf", &reference);
    let plain = floats(&want["llama3_rope_logits_without_factors"]);
    assert!(worst(&logits(&m), &plain) > 0.1);
    assert_eq!(m.architecture, "llama");
    assert_eq!(model("qwen2.gguf", &reference).architecture, "qwen2");
}

/// Qwen2's file carries a ChatML template: one user message renders as llama.cpp's
/// `llama_chat_apply_template` renders it, and its tokens are llama.cpp's, the template's
/// <|im_start|> and <|im_end|> single special tokens (no BOS: Qwen2 adds none).
#[test]
fn the_chat_template_renders_and_tokenizes_as_llama_cpp_does() {
    let reference = llama_cpp();
    let entry = &reference["files"]["qwen2.gguf"];
    let m = model("qwen2.gguf", &reference);
    let text = m.render_chat(entry["chat_user"].as_str().unwrap()).unwrap();
    assert_eq!(text, entry["chat_rendered"].as_str().unwrap());
    let ids_want = ids(&reference["files"]["bpe-qwen2.gguf"]["chat_ids"]);
    assert_eq!(m.encode_prompt(&text).unwrap(), ids_want);
    let start = m.tokenizer.piece(ids_want[0]).unwrap();
    assert_eq!(start, "<|im_start|>");
    // A file without a template says so.
    let plain = model("llama3-rope.gguf", &reference);
    let err = plain.render_chat("Hi").unwrap_err().to_string();
    assert!(err.contains("no chat template"), "{err}");
}

/// A file's first bytes are checked before the rest is read (the page reads 32 MB of it):
/// the whole metadata and tensor table pass and fail as the whole file would; a head that
/// ends inside them cannot be checked (the full read checks it all); a file whose tensors
/// run past its length, a budget the model does not fit and an unknown split are refused.
/// Qwen2's trained context of 32,768 runs at 4,096, as llama.cpp runs at its n_ctx.
#[test]
fn a_gguf_head_is_checked_before_the_file_is_read() {
    let reference = llama_cpp();
    let bytes = checked("qwen2.gguf", &reference);
    let len = bytes.len() as u64;
    let head = &bytes[..bytes.len() / 4];
    let b = Budget::default();
    let check = |head: &[u8], len: u64, budget: Budget| {
        use decoding_engine::backend::testing::HeadOnly;
        use decoding_engine::formats::source::{ModelFile, ModelSource};
        let only = HeadOnly {
            head: head.to_vec(),
            len,
        };
        let mut f = [ModelFile::new("qwen2.gguf", Box::new(only))];
        let source = ModelSource::identify(&mut f).unwrap();
        source.check(&mut f, budget).map(|_| ())
    };
    check(head, len, b).unwrap();
    check(&bytes[..100], len, b).unwrap();
    let short = check(head, len / 2, b).unwrap_err().to_string();
    assert!(short.contains("run past the end of the data"), "{short}");
    let over = check(head, len, Budget(len + 1000))
        .unwrap_err()
        .to_string();
    assert!(over.contains("the limit is"), "{over}");
    let unknown = read(ARCH, "bpe-unknown.gguf");
    let e = check(&unknown, unknown.len() as u64, b).unwrap_err();
    assert!(e.to_string().contains("\"no-such-pre\""), "{e}");
    let m = model("qwen2.gguf", &reference);
    assert_eq!(m.config().seq_len, 4096);
    assert_eq!(m.trained_context, Some(32768));
    assert_eq!(hf_model("hf-qwen2").trained_context, Some(32768));
}

/// A SentencePiece vocabulary's chat (Llama 2's and Mistral's template shape, written into
/// the file by llama.cpp's `gguf` package): the template's `<s>` and `</s>` are BOS and EOS,
/// not their letters, and each text between them is encoded with its leading space, as
/// llama.cpp's `parse_special` does; no second BOS.
#[test]
fn a_sentencepiece_chat_encodes_its_specials_as_tokens() {
    let bytes = read("../../assets/models/fixtures/gguf", "small-chat.gguf");
    let m = Model::from_memory([("model.gguf", &bytes)], Budget::default()).unwrap();
    assert_eq!(m.render_chat("Hi").unwrap(), "<s>[INST] Hi [/INST]");
    assert!(
        !m.extras().iter().any(|e| e.starts_with("no chat")),
        "{:?}",
        m.extras()
    );
    let tk = &m.tokenizer;
    let (bos, eos) = (tk.bos, tk.eos);
    // The template's text with one BOS: what plain encoding of the text after "<s>" gives
    // (`Model::encode_prompt` takes this way with `chat` on).
    let chat = tk.encode_chat(&m.render_chat("Hi").unwrap()).unwrap();
    assert_eq!(chat, tk.encode("[INST] Hi [/INST]", true).unwrap());
    assert_eq!(chat.iter().filter(|&&t| t == bos).count(), 1);
    // "</s>" inside: EOS, the text after it with its own leading space.
    let mut want = tk.encode("A", true).unwrap();
    want.push(eos);
    want.extend(tk.encode("B", false).unwrap());
    assert_eq!(tk.encode_chat("A</s>B").unwrap(), want);
    assert_eq!(tk.encode_chat("<s>A</s>B").unwrap(), want);
    // Plain text keeps "<s>" as letters.
    assert!(!tk.encode("<s>x", true).unwrap()[1..].contains(&bos));
}

/// A SentencePiece vocabulary with `<s>` and `</s>` written in the text (as a chat template
/// renders them) gives llama.cpp's own ids (`tests/fixtures/arch/llama-cpp-spm.json`, by
/// hand with `scripts/llama-cpp-spm-reference.py`): on the 512-token chat file and a
/// 32,000-token Llama-2-shaped one. Ours is a prompt's: one BOS, so llama.cpp's ids without
/// its own BOS where the text starts with `<s>` (llama.cpp would give two) and with it
/// elsewhere.
#[test]
fn sentencepiece_specials_split_as_llama_cpp_does() {
    let reference = json("../../tests/fixtures/arch", "llama-cpp-spm.json");
    for (dir, name) in [
        ("../../assets/models/fixtures/gguf", "small-chat.gguf"),
        ("../../assets/models/fixtures/vocab", "spm-32000.gguf"),
    ] {
        let bytes = checked_in(dir, name, &reference);
        let m = Model::from_memory([("model.gguf", &bytes)], Budget::default()).unwrap();
        let texts = reference["files"][name]["texts"].as_array().unwrap();
        assert!(texts.len() >= 6);
        for t in texts {
            let text = t["text"].as_str().unwrap();
            let theirs = ids(&t[if text.starts_with("<s>") {
                "ids_no_bos"
            } else {
                "ids"
            }]);
            assert_eq!(
                m.tokenizer.encode_chat(text).unwrap(),
                theirs,
                "{name}: {text:?}"
            );
        }
    }
}
