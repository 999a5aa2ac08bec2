//! Replays the fuzzers' corpus (`fuzz/corpus/<target>/`: the seeds and every input the
//! fuzzers kept, the crashes they found included) through the same functions the fuzz
//! targets call (`decoding_worker::fuzz`). Each input must return, without a panic, within a
//! second.

use decoding_worker::fuzz::TARGETS;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

#[test]
fn every_fuzz_target_returns_on_its_whole_corpus() {
    for (name, target) in TARGETS {
        let dir = corpus(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(files.len() >= 3, "{name}: only {} inputs", files.len());
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let t0 = Instant::now();
            target(&data);
            let took = t0.elapsed();
            assert!(
                took < Duration::from_secs(1),
                "{}: {took:?}",
                file.display()
            );
        }
    }
}

/// Writes the hand-made seeds the fuzzers started from (run once with `--ignored`; the
/// fuzzers then grow the corpus): a tiny checkpoint in both classifier layouts, a bare
/// header, stories260K's tokenizer and a small one with their JSON conversions, links the
/// page writes, requests the UI sends, the lesson's toy logits.
#[test]
#[ignore]
fn write_seed_corpus() {
    write_checkpoint_seeds();
    write_tokenizer_seeds();
    write_url_query_seeds();
    write_request_seeds();
    write_toy_logits_seeds();
}

/// Writes one seed, `seed-<name>`, into a target's corpus.
fn put(target: &str, name: &str, bytes: &[u8]) {
    let dir = corpus(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
}

/// A tiny checkpoint in both classifier layouts, one with a single token, a bare header.
fn write_checkpoint_seeds() {
    use decoding_engine::weights::Checkpoint;
    use decoding_engine::Config;
    let tiny = |shared_classifier, vocab_size, seq_len| Config {
        dim: 8,
        hidden_dim: 16,
        n_layers: 1,
        n_heads: 2,
        n_kv_heads: 1,
        vocab_size,
        seq_len,
        shared_classifier,
        rope_theta: Config::LLAMA2C_ROPE_THETA,
        rms_eps: Config::LLAMA2C_RMS_EPS,
    };
    for shared in [true, false] {
        let ck = Checkpoint::random(tiny(shared, 6, 4), 1).unwrap();
        put(
            "checkpoint",
            &format!("tiny-shared-{shared}"),
            &ck.to_bytes(),
        );
    }
    let one = Checkpoint::random(tiny(true, 1, 1), 2).unwrap().to_bytes();
    put("checkpoint", "vocab-1", &one);
    put("checkpoint", "header-only", &one[..28]);
}

/// stories260K's tokenizer and a small one, in llama2.c's layout and as JSON.
fn write_tokenizer_seeds() {
    use decoding_engine::tokenizer::{Llama2cVocab, Tokenizer};
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/models/stories260K");
    let tok = std::fs::read(models.join("tok512.bin")).unwrap();
    put("tokenizer_bin", "tok512", &tok);
    let small = Llama2cVocab {
        max_token_length: 4,
        pieces: ["<unk>", "<s>", "</s>", "a", " b", "ab"]
            .map(String::from)
            .to_vec(),
        scores: vec![0.0, 0.0, 0.0, -1.0, -2.0, -0.5],
    };
    put("tokenizer_bin", "small", &small.to_bytes());
    put("tokenizer_bin", "no-pieces", &4i32.to_le_bytes());
    let big = Llama2cVocab::from_bytes(&tok).unwrap();
    for (name, vocab) in [("small", &small), ("tok512", &big)] {
        let json = vocab.to_hf_tokenizer().unwrap().to_string(false).unwrap();
        assert!(Tokenizer::from_hf_json(json.as_bytes()).is_ok());
        put("tokenizer_json", name, json.as_bytes());
    }
    put(
        "tokenizer_json",
        "word-level",
        br#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{"type":"WordLevel","vocab":{"<s>":0,"</s>":1,"hi":2},"unk_token":"<s>"}}"#,
    );
}

/// Links the page writes.
fn write_url_query_seeds() {
    let queries = [
        "?prompt=Once+upon+a+time&temperature=0.7&top_k=40&steps=3",
        "?strategy=beam&beams=4&length_penalty=1.5&panels=beam,chain",
        "?profile=llama.cpp&top_k=0&logit_bias=432:-5,13:2&stop=.&stop=!",
        "?order=top_k,temperature,top_p,min_p,typical_p,logit_bias,repetition_penalty,\
         frequency_penalty,presence_penalty,no_repeat_ngram&toy=2,1,0.1&presenter=1",
        "?backend=cpu&max_tokens=4294967296&top_p=1e-320&seed=18446744073709551615",
    ];
    for (i, q) in queries.iter().enumerate() {
        put("url_query", &i.to_string(), q.as_bytes());
    }
}

/// Requests the UI sends.
fn write_request_seeds() {
    use decoding_engine::decode::sampling::RawSettings;
    use decoding_page::protocol::*;
    let settings = RawSettings::from_pairs([("temperature", "0.5"), ("top_k", "3")])
        .validate(512)
        .unwrap();
    let requests = [
        Request::Transcript(TranscriptRequest::SetSettings {
            settings: settings.clone(),
        }),
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "Once".into(),
            settings,
            steps: 3,
        }),
        Request::Transcript(TranscriptRequest::Step { count: 4 }),
        Request::Kv(KvRequest::CacheCompare {
            positions: vec![16, 512],
        }),
        Request::Transcript(TranscriptRequest::Rewind),
    ];
    for (i, r) in requests.iter().enumerate() {
        put(
            "request_json",
            &i.to_string(),
            encode(r).unwrap().as_bytes(),
        );
    }
}

/// The lesson's toy logits.
fn write_toy_logits_seeds() {
    for (i, t) in ["2, 1, 0.1", "0,-1,-1,-1", "1e308, -1e308", "3;2\n1 0"]
        .iter()
        .enumerate()
    {
        put("toy_logits", &i.to_string(), t.as_bytes());
    }
}

/// The safetensors target's main seed is a whole Hugging Face set (so the fuzzer starts
/// from a model that loads and runs, not only from parse errors).
#[test]
fn the_safetensors_seed_is_a_model_that_loads() {
    let data = std::fs::read(corpus("safetensors").join("seed-bytelevel")).unwrap();
    let len = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    let (c, t) = (len(0), len(4));
    let m = decoding_engine::Model::from_memory(
        [
            ("config.json", &data[8..8 + c]),
            ("model.safetensors", &data[8 + c + t..]),
            ("tokenizer.json", &data[8 + c..8 + c + t]),
        ],
        decoding_worker::fuzz::BUDGET,
    )
    .unwrap();
    assert_eq!(m.config().rope_theta, 100_000.0);
}
