//! Telling model files apart by content: each kind by its bytes whatever it is called, and
//! every set that is not one model refused with what each file was taken for.

use super::*;
use crate::config::Config;
use crate::weights::Checkpoint;

fn checkpoint_bytes() -> Vec<u8> {
    let c = Config::from_header([16, 32, 1, 2, 2, 40, 8]).unwrap();
    Checkpoint::random(c, 3).unwrap().to_bytes()
}

/// A llama2.c tokenizer.bin of 40 pieces: a maximum length, then (score, length, bytes).
fn tokenizer_bin() -> Vec<u8> {
    let mut out = 8u32.to_le_bytes().to_vec();
    for i in 0..40u32 {
        let piece = format!("t{i}");
        out.extend((-(i as f32)).to_le_bytes());
        out.extend((piece.len() as i32).to_le_bytes());
        out.extend(piece.as_bytes());
    }
    out
}

fn files(list: &[(&str, Vec<u8>)]) -> Vec<ModelFile> {
    list.iter()
        .map(|(n, b)| ModelFile::from_bytes(*n, b.clone()))
        .collect()
}

const CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "hidden_size": 16}"#;
const TOKENIZER: &str = r#"{"version": "1.0", "truncation": null, "added_tokens": []}"#;

fn safetensors() -> Vec<u8> {
    let header = br#"{"__metadata__":{}}"#;
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend(header);
    out
}

#[test]
fn each_kind_is_told_by_its_bytes() {
    let ck = checkpoint_bytes();
    assert_eq!(Looks::of(&ck, ck.len() as u64), Looks::Checkpoint);
    // The same header with another length is no checkpoint (a cut one is told apart from
    // its tokenizer by elimination, below).
    assert_ne!(Looks::of(&ck, ck.len() as u64 - 4), Looks::Checkpoint);
    let tok = tokenizer_bin();
    assert_eq!(Looks::of(&tok, tok.len() as u64), Looks::TokenizerBin);
    assert_eq!(Looks::of(b"GGUF\x03\0\0\0", 8), Looks::Gguf);
    let st = safetensors();
    assert_eq!(Looks::of(&st, st.len() as u64), Looks::Safetensors);
    assert_eq!(Looks::of(CONFIG.as_bytes(), 10), Looks::Config);
    assert_eq!(Looks::of(TOKENIZER.as_bytes(), 10), Looks::TokenizerJson);
    assert_eq!(Looks::of(b"  {\"a\": 1}", 10), Looks::OtherJson);
    assert_eq!(Looks::of(b"hello, world", 12), Looks::Unknown);
    // Zeros are no tokenizer (no piece is empty), nor is a header followed by zeros.
    assert_eq!(Looks::of(&[0; 64], 64), Looks::Unknown);
    let mut zeros = ck[..28].to_vec();
    zeros.resize(4096, 0);
    assert_eq!(Looks::of(&zeros, 1 << 30), Looks::Unknown);
    // A checkpoint's float weights read as piece lengths are far too long.
    assert_ne!(
        Looks::of(&ck[..1000], ck.len() as u64 + 1),
        Looks::TokenizerBin
    );
}

#[test]
fn roles_come_from_content_not_names() {
    let (ck, tok) = (checkpoint_bytes(), tokenizer_bin());
    // Named the wrong way round, in either order.
    let mut f = files(&[("tokenizer.bin", ck.clone()), ("model.bin", tok.clone())]);
    assert_eq!(
        ModelSource::identify(&mut f),
        Ok(ModelSource::Llama2c {
            checkpoint: 0,
            tokenizer: 1
        })
    );
    let mut f = files(&[("a", tok.clone()), ("b", ck.clone())]);
    assert_eq!(
        ModelSource::identify(&mut f),
        Ok(ModelSource::Llama2c {
            checkpoint: 1,
            tokenizer: 0
        })
    );
    // A cut checkpoint beside its tokenizer is still the checkpoint: its check says what is
    // wrong with it.
    let mut f = files(&[
        ("broken.bin", ck[..1000].to_vec()),
        ("tok.bin", tok.clone()),
    ]);
    assert_eq!(
        ModelSource::identify(&mut f),
        Ok(ModelSource::Llama2c {
            checkpoint: 0,
            tokenizer: 1
        })
    );
    let mut f = files(&[
        ("t.json", TOKENIZER.into()),
        ("c.json", CONFIG.into()),
        ("w", safetensors()),
    ]);
    assert_eq!(
        ModelSource::identify(&mut f),
        Ok(ModelSource::HuggingFace {
            config: 1,
            weights: 2,
            tokenizer: 0
        })
    );
    let mut f = files(&[("x.bin", b"GGUF\x03\0\0\0".to_vec())]);
    assert_eq!(
        ModelSource::identify(&mut f),
        Ok(ModelSource::Gguf { file: 0 })
    );
}

#[test]
fn a_set_that_is_not_one_model_is_refused_with_what_each_file_is() {
    let (ck, tok) = (checkpoint_bytes(), tokenizer_bin());
    let refuse = |list: &[(&str, Vec<u8>)]| {
        ModelSource::identify(&mut files(list))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(refuse(&[]), "no file was given");
    let four: Vec<(&str, Vec<u8>)> = (0..4).map(|_| ("t.bin", tok.clone())).collect();
    assert!(refuse(&four).starts_with("4 files were given: a model is one file"));
    assert_eq!(
        refuse(&[("m.bin", ck.clone())]),
        "m.bin is a llama2.c checkpoint: give its tokenizer too (tokenizer.bin, or tokenizer.json)"
    );
    assert_eq!(
        refuse(&[("tok.bin", tok.clone())]),
        "tok.bin is a tokenizer: give the model's checkpoint with it"
    );
    assert_eq!(
        refuse(&[("fake.gguf", b"PK\x03\x04zip".to_vec())]),
        "fake.gguf is not a GGUF file: it does not start with GGUF's magic bytes \"GGUF\" (it starts with \"PK\\u{3}\\u{4}\")"
    );
    assert_eq!(
        refuse(&[
            ("m.gguf", b"GGUF\x03\0\0\0".to_vec()),
            ("tok.bin", tok.clone())
        ]),
        "m.gguf is a GGUF file, which carries its own tokenizer: give it alone"
    );
    assert_eq!(
        refuse(&[("model.safetensors", safetensors()), ("t.json", TOKENIZER.into())]),
        "model.safetensors is a Hugging Face checkpoint: give it with its config.json and its tokenizer (tokenizer.json, or a llama2.c tokenizer.bin), the three together"
    );
    assert_eq!(
        refuse(&[("a.bin", tok.clone()), ("b.bin", tok.clone())]),
        "these files are not one model (a.bin is a llama2.c tokenizer, b.bin is a llama2.c tokenizer): give a GGUF file alone, a llama2.c checkpoint (.bin) with its tokenizer, or a Hugging Face model.safetensors with its config.json and tokenizer.json"
    );
    assert!(refuse(&[
        ("a.bin", ck.clone()),
        ("b.bin", tok.clone()),
        ("c.bin", tok.clone())
    ])
    .starts_with("these files are not one model (a.bin is a llama2.c checkpoint, "));
    assert!(
        refuse(&[("c.json", CONFIG.into()), ("t.json", TOKENIZER.into())]).starts_with(
            "these files are not one model (c.json is a config.json, t.json is a tokenizer.json)"
        )
    );
    // A checkpoint's partner must be a tokenizer (or something unreadable, whose own check
    // says what is wrong): a config.json or a second model is not taken for one.
    assert!(
        refuse(&[("m.bin", ck.clone()), ("config.json", CONFIG.into())]).starts_with(
            "these files are not one model (m.bin is a llama2.c checkpoint, config.json is a config.json)"
        )
    );
    assert_eq!(
        refuse(&[("m.bin", ck.clone()), ("st", safetensors())]),
        "st is a Hugging Face checkpoint: give it with its config.json and its tokenizer (tokenizer.json, or a llama2.c tokenizer.bin), the three together"
    );
}

#[test]
fn reading_starts_anywhere_and_stops_at_the_end() {
    let mut f = ModelFile::from_bytes("x", b"0123456789".to_vec());
    assert_eq!(f.head(4).unwrap(), b"0123");
    assert_eq!(f.head(100).unwrap(), b"0123456789");
    let mut buf = [0u8; 4];
    assert_eq!(f.bytes.read_at(8, &mut buf).unwrap(), 2);
    assert_eq!(&buf[..2], b"89");
    assert_eq!(f.bytes.read_at(10, &mut buf).unwrap(), 0);
    assert_eq!(f.bytes.read_at(u64::MAX, &mut buf).unwrap(), 0);
    let mut all = Vec::new();
    std::io::Read::read_to_end(&mut f.reader(), &mut all).unwrap();
    assert_eq!(all, b"0123456789");
    assert_eq!(
        ModelFile::from_bytes("dir/stories.gguf", vec![]).stem(),
        "stories"
    );
}
