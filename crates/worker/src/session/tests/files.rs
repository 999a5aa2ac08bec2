//! Every kind of model file the page takes, dropped through `Session::handle` as the page's
//! glue hands it over (the same code the page runs): each good one loads and runs the
//! prompt; each hostile one is refused with its reason while the model in use keeps
//! working.

use super::*;
use decoding_engine::backend::testing::HeadOnly;
use decoding_engine::model::Format;
use decoding_engine::Precision;

pub(super) fn fixture(path: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/models/fixtures")
        .join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e} (scripts/make-fixtures.sh)", p.display()))
}

fn hf(dir: &str) -> Vec<(&'static str, Vec<u8>)> {
    ["config.json", "model.safetensors", "tokenizer.json"]
        .into_iter()
        .map(|n| (n, fixture(&format!("hf/{dir}/{n}"))))
        .collect()
}

/// Drops `files` on a session with stories260K and a three-token transcript: the model the
/// files make (its card and the prompt run on it), or the refusal's message after checking
/// that the old model is untouched and still steps.
fn drop_on_a_running_page(files: &[(&str, Vec<u8>)]) -> Result<ModelInfo, String> {
    let (mut s, host) = prompted(&[("seed", "3")]);
    step(&mut s, &host, 3);
    let ev = drop_files(&mut s, &host, files);
    match &ev[..] {
        [Event::Model(ModelEvent::Loaded { info }), Event::Model(ModelEvent::Precision { .. }), Event::Model(ModelEvent::Backend { report }), rest @ ..] =>
        {
            assert_eq!(report.kind, decoding_engine::BackendKind::Cpu);
            // The page's prompt, run on the new model.
            let t = last!(rest, Transcript);
            assert!(t.steps.is_empty() && !t.prompt.is_empty(), "{t:?}");
            Ok(info.clone())
        }
        [Event::Model(ModelEvent::Error { message })] => {
            assert_eq!(s.core.model.as_ref().unwrap().name, "stories260K");
            let ev = step(&mut s, &host, 1);
            assert_eq!(last!(&ev, Transcript).steps.len(), 4, "{message}");
            Err(message.clone())
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_good_kind_of_file_loads_whatever_it_is_called() {
    let (ck, tok) = (asset("stories260K.bin"), asset("tok512.bin"));
    // llama2.c float32, the two files in either order and under any names.
    for files in [
        vec![("stories260K.bin", ck.clone()), ("tok512.bin", tok.clone())],
        vec![("a", tok.clone()), ("b", ck.clone())],
    ] {
        let info = drop_on_a_running_page(&files).unwrap();
        assert_eq!((info.format, info.config.dim), (Format::Llama2c, 64));
    }
    // llama2.c version 2 (Q8_0), written by the engine as export.py writes it.
    let mut v2 = Vec::new();
    decoding_engine::weights::Checkpoint::random(
        decoding_engine::Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap(),
        1,
    )
    .unwrap()
    .write_v2(&mut v2)
    .unwrap();
    let info = drop_on_a_running_page(&[("q80.bin", v2), ("tok512.bin", tok.clone())]).unwrap();
    assert_eq!(info.format, Format::Llama2c);
    // GGUF of each type llama.cpp's writers make, k-quants by its own quantizer.
    for (file, types) in [
        ("gguf/tiny-f32.gguf", "F32"),
        ("gguf/tiny-f16.gguf", "F16"),
        ("gguf/tiny-bf16.gguf", "BF16"),
        ("gguf/tiny-q8_0.gguf", "Q8_0"),
        ("gguf/tiny-q4_0.gguf", "Q4_0"),
        ("gguf/tiny-q4_1.gguf", "Q4_1"),
        ("gguf/tiny-q5_0.gguf", "Q5_0"),
        ("gguf/tiny-q5_1.gguf", "Q5_1"),
        ("gguf/stories260K.gguf", "F32"),
        ("kquant/kq-q4_k_m.gguf", "Q4_K"),
        ("kquant/kq-q5_k_m.gguf", "Q5_K"),
        ("kquant/kq-q6_k.gguf", "Q6_K"),
        ("arch/qwen2.gguf", "F32"),
        ("arch/llama3-rope.gguf", "F32"),
    ] {
        let name = file.rsplit('/').next().unwrap();
        let info = drop_on_a_running_page(&[(name, fixture(file))]).unwrap();
        assert_eq!(info.format, Format::Gguf, "{file}");
        assert_eq!(info.name, name.trim_end_matches(".gguf"));
        assert!(
            info.tensor_types.as_deref().unwrap_or("").contains(types),
            "{file}: {:?}",
            info.tensor_types
        );
        // k-quants and the legacy 4/5-bit types run in the file's own blocks
        let own = ["Q4_K", "Q5_K", "Q6_K", "Q4_1", "Q5_0", "Q5_1"].contains(&types);
        assert_eq!(info.precision == Precision::Ggml, own, "{file}");
    }
    // Hugging Face's three files, in any order.
    for dir in [
        "stories260K",
        "bytelevel",
        "tiny-f32",
        "tiny-f16",
        "tiny-bf16",
        "theta",
    ] {
        let mut files = hf(dir);
        files.reverse();
        let info = drop_on_a_running_page(&files).unwrap();
        assert_eq!(info.format, Format::Safetensors, "{dir}");
    }
    // stories260K's checkpoint with a llama2.c tokenizer.bin for its tokenizer.json.
    let mut files = hf("stories260K");
    files[2] = ("tok512.bin", tok);
    let info = drop_on_a_running_page(&files).unwrap();
    assert_eq!(
        (info.name.as_str(), info.format),
        ("stories260K", Format::Safetensors)
    );
}

#[test]
fn every_hostile_file_is_refused_with_its_reason_and_the_model_keeps_working() {
    let (ck, tok) = (asset("stories260K.bin"), asset("tok512.bin"));
    let refused = |files: &[(&str, Vec<u8>)]| drop_on_a_running_page(files).unwrap_err();
    // Cut, with its tokenizer.
    assert_eq!(
        refused(&[
            ("broken.bin", ck[..1000].to_vec()),
            ("tok512.bin", tok.clone())
        ]),
        "model: file is 1,000 bytes, header implies 1,056,540"
    );
    // A NaN weight.
    let mut nan = ck.clone();
    nan[28 + 4 * 1000..28 + 4 * 1001].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(refused(&[("m.bin", nan), ("tok512.bin", tok.clone())])
        .contains("token_embedding has a non-finite value (NaN) at element 1000"));
    // The wrong pair: a tokenizer of another vocabulary, a GGUF with a tokenizer, a
    // safetensors file without its config, a checkpoint or a tokenizer alone.
    let mut vocab = decoding_engine::tokenizer::Llama2cVocab::from_bytes(&tok).unwrap();
    vocab.pieces.truncate(500);
    vocab.scores.truncate(500);
    assert!(refused(&[("m.bin", ck.clone()), ("t.bin", vocab.to_bytes())]).contains("500"));
    let gguf = fixture("gguf/tiny-q8_0.gguf");
    assert_eq!(
        refused(&[
            ("tiny-q8_0.gguf", gguf.clone()),
            ("tok512.bin", tok.clone())
        ]),
        "tiny-q8_0.gguf is a GGUF file, which carries its own tokenizer: give it alone"
    );
    let mut no_config = hf("stories260K");
    no_config.remove(0);
    assert!(refused(&no_config).starts_with(
        "model.safetensors is a Hugging Face checkpoint: give it with its config.json"
    ));
    assert!(refused(&[("stories260K.bin", ck.clone())]).contains("give its tokenizer too"));
    assert!(refused(&[("tok512.bin", tok.clone())]).contains("is a tokenizer"));
    // Not what it is called.
    assert!(refused(&[("x.gguf", b"PK\x03\x04 a zip".to_vec())]).contains("is not a GGUF file"));
    // GGUF files cut inside their metadata, or naming what this reader does not run.
    assert!(refused(&[("cut.gguf", gguf[..5000].to_vec())])
        .contains("the GGUF file ends at byte 5000 inside the value of \"tokenizer.ggml.tokens\""));
    for (file, why) in [
        ("arch/bpe-unknown.gguf", "\"no-such-pre\""),
        (
            "arch/unsupported-arch.gguf",
            "general.architecture is \"phi3\"",
        ),
        ("arch/unsupported-type.gguf", "has type Q2_K"),
    ] {
        let e = refused(&[("f.gguf", fixture(file))]);
        assert!(e.contains(why), "{file}: {e}");
    }
}

/// Over the budget: refused from the header with the figure, before the bulk is read (the
/// files hold nothing past their headers here, so any read of the bulk would fail).
#[test]
fn a_model_over_the_budget_is_refused_from_its_header_alone() {
    let (mut s, host) = prompted(&[]);
    let header: Vec<u8> = [64i32, 1, 64, 32, 32, 3, 1 << 20]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let tok = asset("tok512.bin");
    let files = vec![
        ModelFile::new(
            "huge.bin",
            Box::new(HeadOnly {
                head: header,
                len: 12_648_648,
            }),
        ),
        ModelFile::from_bytes("tok512.bin", tok),
    ];
    let ev = ask(
        &mut s,
        &host,
        Request::Model(ModelRequest::LoadFiles {
            files: Files::new(files),
        }),
    );
    assert!(
        matches!(&ev[..], [Event::Model(ModelEvent::Error { message })] if message.contains("32 GiB") && message.contains("the limit is")),
        "{ev:?}"
    );
    // A GGUF file larger than the budget, by its length alone.
    let files = vec![ModelFile::new(
        "big.gguf",
        Box::new(HeadOnly {
            head: b"GGUF\x03\0\0\0".to_vec(),
            len: 1 << 40,
        }),
    )];
    let ev = ask(
        &mut s,
        &host,
        Request::Model(ModelRequest::LoadFiles {
            files: Files::new(files),
        }),
    );
    assert!(
        matches!(&ev[..], [Event::Model(ModelEvent::Error { message })] if message.contains("over the memory budget")),
        "{ev:?}"
    );
}

/// The page's own files by URL: a missing one is refused by name and loads nothing.
#[test]
fn the_pages_own_model_is_fetched_and_a_missing_file_is_named() {
    let host = host();
    let mut s = Session::default();
    let ev = ask(
        &mut s,
        &host,
        Request::Model(ModelRequest::LoadUrl {
            urls: vec!["models/stories260K/nothing.bin".into()],
            backend: BackendChoice::Cpu,
        }),
    );
    assert_eq!(
        ev,
        [Event::Model(ModelEvent::Error {
            message: "models/stories260K/nothing.bin: HTTP 404 Not Found".into()
        })]
    );
    assert!(s.core.model.as_ref().is_none());
}
