//! Loads the default model from `assets/models/stories260K/` (filled by `scripts/fetch-models.sh`).
#![allow(dead_code)]

pub mod softmax;

use decoding_engine::Model;
use std::path::PathBuf;

pub fn model_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/models/stories260K")
}

pub fn read(name: &str) -> Vec<u8> {
    let path = model_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models.sh (the README's test command does)",
            path.display()
        )
    })
}

/// A file of `dir` (relative to the engine crate), written by the test command's set-up.
pub fn fixture(dir: &str, name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(dir)
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/test.sh (its set-up writes the fixtures)",
            p.display()
        )
    })
}

/// Settings from knob pairs, valid for stories260K's 512 tokens.
pub fn settings(pairs: &[(&str, &str)]) -> decoding_engine::decode::sampling::Settings {
    decoding_engine::decode::sampling::RawSettings::from_pairs(pairs.iter().copied())
        .validate(512)
        .unwrap()
}

/// The tokens that end a llama2.c model's text: EOS, and BOS (its sequence delimiter).
pub fn ends(m: &Model) -> Vec<u32> {
    vec![m.tokenizer.eos, m.tokenizer.bos]
}

pub fn stories260k() -> Model {
    Model::from_memory(
        [
            ("model.bin", &read("stories260K.bin")),
            ("tokenizer.bin", &read("tok512.bin")),
        ],
        decoding_engine::budget::Budget::default(),
    )
    .expect("stories260K loads")
}

/// The model README's greedy continuation of "Once upon a time".
pub const GREEDY: &str = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\nLily's mom said, \"Lily, let's go to the park.\" Lily was sad and didn't know what to do.";

/// Every position's logits of `tokens`, one prefill.
pub fn prefill_logits(t: &decoding_engine::Transformer, tokens: &[u32]) -> Vec<f32> {
    use decoding_engine::{Batch, KvCache, Logits, SeqId};
    let mut cache = KvCache::new(&t.config);
    let b = Batch::tokens(SeqId(0), 0, tokens, Logits::All);
    t.forward(
        &mut decoding_engine::forward::RunState::default(),
        &mut cache,
        &b,
    )
    .unwrap()
}

/// stories260K's known answers (its README), from a model read from any format: the
/// prompt's ids, p(",") = 0.9688 after "Once upon a time", BOS/EOS 1/2 and the greedy text.
pub fn assert_stories260k_answers(m: &Model) {
    let ids = m.encode_prompt("Once upon a time").unwrap();
    assert_eq!(ids, [1, 403, 407, 261, 378]);
    assert_eq!((m.tokenizer.bos, m.tokenizer.eos), (1, 2));
    let l = prefill_logits(&m.transformer, &ids);
    let row = &l[4 * 512..];
    let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = row.iter().map(|&z| (z as f64 - max).exp()).sum();
    assert_eq!(
        format!("{:.4}", (row[432] as f64 - max).exp() / sum),
        "0.9688"
    );
    assert_eq!(m.tokenizer.piece(432).unwrap(), ",");
    let mut toks = ids.clone();
    while toks.len() < 200 {
        let l = prefill_logits(&m.transformer, &toks);
        let last = &l[(toks.len() - 1) * 512..];
        let next = (0..512)
            .max_by(|&a, &b| last[a].total_cmp(&last[b]).then(b.cmp(&a)))
            .unwrap() as u32;
        if next == 2 || next == 1 {
            break;
        }
        toks.push(next);
    }
    let text = m.tokenizer.decode(&toks[1..]).unwrap();
    assert!(text.trim_start().starts_with(GREEDY), "{text}");
}

/// A file's bytes that count what is asked of them: the largest single read and the bytes
/// read in all.
pub struct Counted {
    pub bytes: Vec<u8>,
    pub largest: std::rc::Rc<std::cell::Cell<usize>>,
    pub total: std::rc::Rc<std::cell::Cell<usize>>,
}

impl Counted {
    pub fn new(bytes: Vec<u8>) -> Counted {
        Counted {
            bytes,
            largest: Default::default(),
            total: Default::default(),
        }
    }
}

impl decoding_engine::formats::source::ByteSource for Counted {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let from = (offset as usize).min(self.bytes.len());
        let n = buf.len().min(self.bytes.len() - from);
        buf[..n].copy_from_slice(&self.bytes[from..from + n]);
        self.largest.set(self.largest.get().max(n));
        self.total.set(self.total.get() + n);
        Ok(n)
    }
}
