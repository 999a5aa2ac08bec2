//! Every parser of outside data, as a function of arbitrary bytes: the fuzz targets
//! (`fuzz/fuzz_targets/*.rs`, run with cargo-fuzz) and the corpus replay
//! (`tests/fuzz_corpus.rs`, run on every CI run) call these same functions. Each must return,
//! whatever the bytes: no panic, no hang, no allocation beyond [`BUDGET`]. Whatever parses
//! is also used the way the page uses it (a model runs a token, a tokenizer encodes and
//! decodes, settings run the chain), so that a value that passes a parser but breaks a
//! later rule is found too.

use decoding_engine::backend::CpuBackend;
use decoding_engine::budget::Budget;
use decoding_engine::decode::sampling::{process, History};
use decoding_engine::tokenizer::Tokenizer;
use decoding_engine::weights::Checkpoint;
use decoding_engine::Backend;
use decoding_page::page::{from_query, parse_toy, to_query};
use decoding_page::protocol::{decode, encode, Request};

/// The memory budget the targets load under (the fuzzer's allocation limit is set above it).
pub const BUDGET: Budget = Budget(64 << 20);

/// A target: arbitrary bytes in, nothing out (it must simply return).
pub type Target = fn(&[u8]);

/// The targets by name, as `fuzz/fuzz_targets/` and `fuzz/corpus/` name them.
pub const TARGETS: [(&str, Target); 9] = [
    ("checkpoint", checkpoint),
    ("gguf", gguf),
    ("ggml_blocks", ggml_blocks),
    ("safetensors", safetensors),
    ("tokenizer_bin", tokenizer_bin),
    ("tokenizer_json", tokenizer_json),
    ("url_query", url_query),
    ("request_json", request_json),
    ("toy_logits", toy_logits),
];

/// A llama2.c checkpoint: parsed under the budget; one that parses runs a token through
/// the CPU backend.
pub fn checkpoint(data: &[u8]) {
    let Ok(ck) = Checkpoint::from_bytes_within(data, BUDGET) else {
        return;
    };
    let vocab = ck.config.vocab_size;
    let model = decoding_engine::Transformer::new(ck);
    let mut be = CpuBackend::new(std::sync::Arc::new(model));
    if let Ok(seq) = be.new_sequence() {
        let token = (data.len() % vocab) as u32;
        let out = pollster::block_on(be.forward(seq, &[token], false));
        if let Ok(logits) = out {
            assert_eq!(logits.len(), vocab);
        }
    }
}

/// A GGUF file: its head checked as the page checks it before reading (whole, and its
/// first half as a head of the whole length), parsed, and one that loads under the budget
/// runs a token, its tokenizer encodes and decodes, and its chat template (if any) renders.
pub fn gguf(data: &[u8]) {
    use decoding_engine::backend::testing::HeadOnly;
    use decoding_engine::formats::source::{ModelFile, ModelSource};
    use decoding_engine::Model;
    for head in [data, &data[..data.len() / 2]] {
        let only = HeadOnly {
            head: head.to_vec(),
            len: data.len() as u64,
        };
        let mut f = [ModelFile::new("model.gguf", Box::new(only))];
        if let Ok(source) = ModelSource::identify(&mut f) {
            let _ = source.check(&mut f, BUDGET);
        }
    }
    let Ok(m) = Model::from_memory([("model.gguf", data)], BUDGET) else {
        return;
    };
    run_one(&m, data.len());
    if let Ok(text) = m.render_chat("Hi there!") {
        let _ = m.encode_prompt(&text);
    }
}

/// ggml's block decoders (`ggml_blocks::dequantize`) on any bytes: the first byte picks the
/// type (F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K), the rest is its blocks
/// (a last partial block is left). Every value comes out; none needs to be finite.
pub fn ggml_blocks(data: &[u8]) {
    use decoding_engine::quant::ggml::Kind;
    const KINDS: [Kind; 10] = [
        Kind::F16,
        Kind::BF16,
        Kind::Q8_0,
        Kind::Q4_0,
        Kind::Q4_1,
        Kind::Q5_0,
        Kind::Q5_1,
        Kind::Q4_K,
        Kind::Q5_K,
        Kind::Q6_K,
    ];
    let Some((&pick, blocks)) = data.split_first() else {
        return;
    };
    let kind = KINDS[pick as usize % KINDS.len()];
    let (per, size) = kind.block();
    let mut out = vec![0.0f32; blocks.len() / size as usize * per as usize];
    decoding_engine::quant::ggml::blocks::dequantize(kind, blocks, &mut out);
}

/// A Hugging Face checkpoint, its three files in one input: a u32 config.json length and a
/// u32 tokenizer.json length (little-endian, cut to the bytes there are), config.json,
/// tokenizer.json, then model.safetensors. Each part is also parsed alone (the config, the
/// safetensors header), so that a broken config does not hide the weights' parser; a set
/// that loads under the budget runs a token and its tokenizer encodes and decodes. The
/// seeds (`fuzz/corpus/safetensors/seed-*`) are `scripts/make-hf-fixtures.py`'s
/// `bytelevel/` files packed so, whole and cut.
pub fn safetensors(data: &[u8]) {
    let len = |at: usize| {
        data.get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let rest = data.get(8..).unwrap_or(&[]);
    let (config, rest) = rest.split_at(len(0).min(rest.len()));
    let (tokenizer, weights) = rest.split_at(len(4).min(rest.len()));
    let _ = decoding_engine::formats::hf::HfConfig::parse(config);
    let _ = decoding_engine::formats::hf::Weights::parse(weights);
    let Ok(m) = decoding_engine::Model::from_memory(
        [
            ("config.json", config),
            ("model.safetensors", weights),
            ("tokenizer.json", tokenizer),
        ],
        BUDGET,
    ) else {
        return;
    };
    run_one(&m, data.len());
}

/// Uses a model that loaded as the page does: its tokenizer encodes and decodes, one token
/// (chosen by `n`) runs through the CPU backend and gives a row of the vocabulary's width.
fn run_one(m: &decoding_engine::Model, n: usize) {
    exercise(&m.tokenizer);
    let vocab = m.config().vocab_size;
    let mut be = CpuBackend::new(m.transformer.clone());
    if let Ok(seq) = be.new_sequence() {
        let token = (n % vocab) as u32;
        if let Ok(logits) = pollster::block_on(be.forward(seq, &[token], false)) {
            assert_eq!(logits.len(), vocab);
        }
    }
}

/// Encodes and decodes a little text with a tokenizer that parsed.
fn exercise(t: &Tokenizer) {
    if let Ok(ids) = t.encode("Once upon a time, ünïcode\n", true) {
        let _ = t.decode(&ids);
    }
    for id in 0..t.vocab_size().min(64) as u32 {
        let _ = t.decode_piece(id.checked_sub(1), id);
    }
}

/// A llama2.c `tokenizer.bin`.
pub fn tokenizer_bin(data: &[u8]) {
    if let Ok(t) = Tokenizer::from_llama2c_bytes(data) {
        exercise(&t);
    }
}

/// A Hugging Face `tokenizer.json` (any bytes: JSON or not).
pub fn tokenizer_json(data: &[u8]) {
    if let Ok(t) = Tokenizer::from_hf_json(data) {
        exercise(&t);
    }
}

/// The page's URL query: restored, written back, restored again to the same settings; the
/// settings run the chain on a small distribution.
pub fn url_query(data: &[u8]) {
    let Ok(q) = std::str::from_utf8(data) else {
        return;
    };
    let r = decoding_page::lesson::from_link(q, 512);
    let again = from_query(&to_query(&r.page, &r.settings), 512);
    assert_eq!(again.settings, r.settings, "{q:?}");
    let logits: Vec<f32> = (0..512).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
    let _ = process(&r.settings, &logits, History::default(), 0.5, true);
}

/// A request from the UI, as the worker reads it; one that reads is written again.
pub fn request_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(req) = decode::<Request>(text) {
        let text = encode(&req).expect("a request that was read can be written");
        let back: Request = decode(&text).expect("and read again");
        assert_eq!(back, req);
    }
}

/// The toy panel's logits text, run through the chain as the page does.
pub fn toy_logits(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(logits) = parse_toy(text) {
        let history: Vec<u32> = (0..logits.len() as u32).rev().collect();
        let settings = decoding_engine::decode::sampling::Settings::default();
        let _ = decoding_page::page::chain::toy_trace(&logits, &history, &settings);
    }
}
