//! GGUF files written by llama.cpp's own `gguf` package (`scripts/make-gguf-fixtures.py`,
//! run by the README's test command into `assets/models/fixtures/gguf/`), read by
//! `decoding_engine::formats::gguf`: the same next-token distributions as the llama2.c files of the
//! same weights, stories260K's known answers, and a typed error for each malformed file.

mod common;

use decoding_engine::budget::Budget;
use decoding_engine::formats::gguf::{Gguf, GgufError};
use decoding_engine::formats::source::SourceError;
use decoding_engine::quant::Activations;
use decoding_engine::{Model, ModelError, Transformer};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/models/fixtures/gguf")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/test.sh (it writes the GGUF fixtures with llama.cpp's gguf package)",
            p.display()
        )
    })
}

fn llama2c(name: &str) -> Transformer {
    let ck = decoding_engine::Checkpoint::from_bytes(&fixture(name)).unwrap();
    Transformer::new(ck)
}

fn gguf_model(name: &str) -> Model {
    Model::from_memory([("model.gguf", &fixture(name))], Budget::default()).unwrap()
}

use common::prefill_logits as logits;
use common::Counted;

use common::softmax::softmax_rows;

const TOKENS: [u32; 12] = [1, 403, 407, 261, 378, 432, 383, 409, 261, 498, 20, 7];

#[test]
fn stories260k_from_gguf_gives_the_known_answers() {
    let m = gguf_model("stories260K.gguf");
    let reference = common::stories260k();
    assert_eq!(m.config(), reference.config());
    assert_eq!(
        m.transformer.weights.precision(),
        decoding_engine::Precision::F32
    );
    // The same weights: the same logits, bit for bit.
    let (a, b) = (
        logits(&m.transformer, &TOKENS),
        logits(&reference.transformer, &TOKENS),
    );
    assert_eq!(
        a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    // The tokenizer from the metadata: the prompt's ids, p(",") = 0.9688, the greedy text.
    common::assert_stories260k_answers(&m);
}

#[test]
fn every_tensor_type_gives_the_distribution_of_its_dequantized_weights() {
    let vocab = 512;
    // F32: the llama2.c file of the same weights, bit for bit.
    let f32 = gguf_model("tiny-f32.gguf");
    assert!(
        !f32.config().shared_classifier,
        "the tiny model has its own classifier"
    );
    let want = logits(&llama2c("tiny.bin"), &TOKENS);
    assert_eq!(logits(&f32.transformer, &TOKENS), want);
    // F16 widens exactly: the float32 file of the dequantized weights, bit for bit.
    let f16 = gguf_model("tiny-f16.gguf");
    assert_eq!(
        f16.transformer.weights.precision(),
        decoding_engine::Precision::F32
    );
    assert_eq!(
        logits(&f16.transformer, &TOKENS),
        logits(&llama2c("tiny-f16-deq.bin"), &TOKENS)
    );
    // Q8_0 and Q4_0 stay quantized: their weights are gguf's own dequantization exactly,
    // their distributions, with float32 activations, within 1e-4 of the float32 model of
    // those weights; with int8 activations (the CPU's default) within x's own rounding.
    for (name, precision) in [
        ("q8_0", decoding_engine::Precision::Q8),
        ("q4_0", decoding_engine::Precision::Q4),
    ] {
        let q = gguf_model(&format!("tiny-{name}.gguf"));
        assert_eq!(q.transformer.weights.precision(), precision, "{name}");
        let deq = llama2c(&format!("tiny-{name}-deq.bin"));
        assert_eq!(
            q.transformer.weights.wq.to_f32(),
            deq.weights.wq.to_f32(),
            "{name} wq"
        );
        assert_eq!(
            q.transformer.weights.w2.to_f32(),
            deq.weights.w2.to_f32(),
            "{name} w2"
        );
        assert_eq!(
            q.transformer.weights.token_embedding.to_f32(),
            deq.weights.token_embedding.to_f32(),
            "{name} embedding"
        );
        let f32_acts = q.transformer.with_activations(Activations::F32);
        let (p, r) = (
            softmax_rows(&logits(&f32_acts, &TOKENS), vocab),
            softmax_rows(&logits(&deq, &TOKENS), vocab),
        );
        let worst = |p: &[f64]| {
            p.iter()
                .zip(&r)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        assert!(worst(&p) < 1e-4, "{name}: {}", worst(&p));
        let int8 = softmax_rows(&logits(&q.transformer, &TOKENS), vocab);
        let w8 = worst(&int8);
        eprintln!("{name}: int8 activations move a probability by at most {w8:.2e}");
        assert!(w8 > 0.0 && w8 < 2e-2, "{name} with int8 activations: {w8}");
        // …and they differ from the float32 weights by the format's error.
        let f = softmax_rows(&want, vocab);
        assert!(
            p.iter().zip(&f).any(|(a, b)| (a - b).abs() > 1e-6),
            "{name} is not float32"
        );
    }
}

fn patched(name: &str, f: impl FnOnce(&mut Vec<u8>)) -> Result<Model, ModelError> {
    let mut b = fixture(name);
    f(&mut b);
    Model::from_memory([("model.gguf", &b)], Budget::default())
}

fn gguf_err(r: Result<Model, ModelError>) -> GgufError {
    match r {
        Err(ModelError::Gguf(e)) => e,
        Err(e) => panic!("not a GGUF error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

fn find(b: &[u8], needle: &[u8]) -> usize {
    b.windows(needle.len())
        .position(|w| w == needle)
        .expect("present")
}

#[test]
fn malformed_gguf_files_are_typed_errors() {
    let full = fixture("tiny-q8_0.gguf");
    truncated_files_are_typed_errors(&full);
    bad_headers_are_typed_errors();
    bad_tensor_entries_are_typed_errors(&full);
    bad_metadata_is_a_typed_error(&full);
    budget_and_array_limits_are_checked(&full);
}

fn truncated_files_are_typed_errors(full: &[u8]) {
    // Truncated anywhere: an error, never a panic.
    for cut in [
        0,
        3,
        4,
        10,
        23,
        40,
        200,
        1000,
        12_000,
        full.len() / 2,
        full.len() - 1,
    ] {
        let e = Model::from_memory([("model.gguf", &full[..cut])], Budget::default());
        assert!(e.is_err(), "cut at {cut}");
    }
    // Cut in the header (21 tensors cannot fit in 100 bytes), inside the tokenizer's strings.
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| b.truncate(100)));
    assert!(matches!(e, GgufError::Count { value: 21, .. }), "{e}");
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| b.truncate(5000)));
    assert!(matches!(e, GgufError::Truncated { .. }), "{e}");
    assert!(
        matches!(gguf_err(patched("tiny-q8_0.gguf", |b| b.truncate(full.len() - 10))), GgufError::Tensor { ref why, .. } if why.contains("run past the end"))
    );
}

fn bad_headers_are_typed_errors() {
    // A broken magic is no GGUF file at all (the one way in tells files by their content).
    let e = patched("tiny-q8_0.gguf", |b| b[0] = b'X').err().unwrap();
    assert!(
        matches!(e, ModelError::Source(SourceError::NotGguf { .. })),
        "{e}"
    );
    assert!(matches!(
        Gguf::parse(b"XGUF\x03\0\0\0").err(),
        Some(GgufError::Magic { .. })
    ));
    assert_eq!(
        gguf_err(patched("tiny-q8_0.gguf", |b| b[4] = 1)),
        GgufError::Version(1)
    );
    // Absurd counts: 2^60 tensors, a first key 2^40 bytes long.
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| {
        b[8..16].copy_from_slice(&(1u64 << 60).to_le_bytes())
    }));
    assert!(
        matches!(e, GgufError::Count { value, .. } if value == 1 << 60),
        "{e}"
    );
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| {
        b[24..32].copy_from_slice(&(1u64 << 40).to_le_bytes())
    }));
    assert!(
        matches!(e, GgufError::Count { value, .. } if value == 1 << 40),
        "{e}"
    );
}

fn bad_tensor_entries_are_typed_errors(full: &[u8]) {
    // A tensor offset past the data, and a type not read (Q2_K) named.
    let at = find(full, b"token_embd.weight") + 17;
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| {
        // n_dims (u32), 2 dims (u64), type (u32), offset (u64)
        b[at + 24..at + 32].copy_from_slice(&(1u64 << 30).to_le_bytes());
    }));
    assert!(
        matches!(e, GgufError::Tensor { ref why, .. } if why.contains("run past the end")),
        "{e}"
    );
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| {
        b[at + 20..at + 24].copy_from_slice(&10u32.to_le_bytes())
    }));
    assert_eq!(e.to_string(), "tensor \"token_embd.weight\" has type Q2_K, which this reader does not load (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K are)");
}

fn bad_metadata_is_a_typed_error(full: &[u8]) {
    // A missing key, another architecture, a RoPE base of −5.
    let k = find(full, b"llama.block_count");
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| b[k + 16] = b'_'));
    assert_eq!(e, GgufError::Missing("llama.block_count".into()));
    let a = find(full, b"llama");
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| {
        b[a..a + 5].copy_from_slice(b"gpt2x")
    }));
    assert_eq!(e, GgufError::Architecture("gpt2x".into()));
    // The RoPE base is the file's (tests/hf.rs runs a θ 100,000 file); a nonsensical one is
    // refused.
    let r = find(full, b"llama.rope.freq_base") + 20 + 4;
    let e = gguf_err(patched("tiny-q8_0.gguf", |b| {
        b[r..r + 4].copy_from_slice(&(-5f32).to_le_bytes())
    }));
    assert!(e.to_string().contains("rope_theta is -5"), "{e}");
}

fn budget_and_array_limits_are_checked(full: &[u8]) {
    // The budget is checked before any tensor is converted.
    let e = Model::from_memory([("model.gguf", full)], Budget(1000))
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("budget") || e.to_string().contains("limit"),
        "{e}"
    );
    // A u8 array of 5 million elements (5 MB in the file, 160 MB parsed) is refused.
    let mut big = full[..24].to_vec();
    big[8..16].copy_from_slice(&0u64.to_le_bytes()); // no tensors
    big[16..24].copy_from_slice(&1u64.to_le_bytes()); // one key
    big.extend_from_slice(&3u64.to_le_bytes());
    big.extend_from_slice(b"big");
    big.extend_from_slice(&9u32.to_le_bytes()); // an array
    big.extend_from_slice(&0u32.to_le_bytes()); // of u8
    big.extend_from_slice(&5_000_000u64.to_le_bytes());
    big.resize(big.len() + 5_000_000, 7);
    let e = Gguf::parse(&big).unwrap_err();
    assert!(
        e.to_string().contains("more than 4194304 array elements"),
        "{e}"
    );
    // The header parses on its own (the page checks a dropped file's head first).
    let g = Gguf::parse(full).unwrap();
    assert_eq!((g.version, g.tensors.len()), (3, 21));
}

/// The one way in (`Model::load`) tells a GGUF file by its magic whatever it is called,
/// reads it whole under the budget, and refuses a tokenizer beside it.
#[test]
fn the_one_way_in_takes_a_gguf_file_alone() {
    let bytes = fixture("tiny-q4_0.gguf");
    let len = bytes.len() as u64;
    let m = Model::from_memory([("weights.bin", &bytes)], Budget::default()).unwrap();
    let direct = gguf_model("tiny-q4_0.gguf");
    assert_eq!(
        logits(&m.transformer, &TOKENS),
        logits(&direct.transformer, &TOKENS)
    );
    let tok = std::fs::read(common::model_dir().join("tok512.bin")).unwrap();
    let e = Model::from_memory(
        [("tiny-q4_0.gguf", &bytes), ("tok512.bin", &tok)],
        Budget::default(),
    )
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        "tiny-q4_0.gguf is a GGUF file, which carries its own tokenizer: give it alone"
    );
    let e = Model::from_memory([("tiny-q4_0.gguf", &bytes)], Budget(len - 1))
        .err()
        .unwrap();
    assert_eq!(
        e,
        ModelError::Gguf(GgufError::TooLarge {
            bytes: len,
            limit: len - 1
        })
    );
    // A llama2.c file goes through the same door.
    let bin = fixture("tiny.bin");
    let m = Model::from_memory(
        [("tiny.bin", &bin), ("tok512.bin", &tok)],
        Budget::default(),
    )
    .unwrap();
    assert_eq!(
        logits(&m.transformer, &TOKENS),
        logits(&llama2c("tiny.bin"), &TOKENS)
    );
}

/// A GGUF file is read tensor by tensor as each is converted, never whole (issue 51: read
/// whole, then converted, a Q8_0 file peaked at twice its size): from a head too short
/// for its metadata (read again, larger), the same weights as the file in memory, bit for
/// bit, and no read larger than the head or the largest tensor.
#[test]
fn a_gguf_file_is_read_a_tensor_at_a_time() {
    let bytes = fixture("stories260K.gguf");
    let mut src = Counted::new(bytes.clone());
    let (largest, total) = (src.largest.clone(), src.total.clone());
    let streamed = Gguf::read_from(&mut src, 1024).unwrap();
    let head_reads = total.get();
    let whole = Gguf::parse(&bytes).unwrap();
    assert_eq!(streamed.tensors, whole.tensors);
    assert_eq!(streamed.metadata, whole.metadata);
    // The metadata (a 512-token vocabulary) runs past 1 KiB: the head was read again.
    assert!(head_reads > 1024 + 4096, "{head_reads}");
    let ck = streamed.checkpoint(Budget::default()).unwrap();
    let tensor_max = whole.tensors.iter().map(|t| t.bytes).max().unwrap() as usize;
    let head_max = 1024 * 4usize.pow(3);
    assert!(
        largest.get() <= tensor_max.max(head_max) && largest.get() < bytes.len() / 2,
        "a read of {} bytes (largest tensor {tensor_max}, file {})",
        largest.get(),
        bytes.len()
    );
    let a = Transformer::new(ck);
    let b = Transformer::new(whole.checkpoint(Budget::default()).unwrap());
    assert_eq!(
        logits(&a, &TOKENS)
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>(),
        logits(&b, &TOKENS)
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    );
    // A file that ends inside a tensor: refused by the table's check, nothing read beyond.
    let mut cut = Counted::new(bytes[..bytes.len() - 100].to_vec());
    let e = Gguf::read_from(&mut cut, 1 << 20).unwrap_err();
    assert!(matches!(e, GgufError::Tensor { .. }), "{e}");
}
