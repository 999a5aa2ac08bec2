//! Hugging Face checkpoints written by Hugging Face's own `safetensors` and `tokenizers`
//! packages (`scripts/make-hf-fixtures.py`, run by the README's test command into
//! `assets/models/fixtures/hf/`), read by `decoding_engine::formats::hf`: the llama2.c file's
//! distribution from every dtype, stories260K's known answers, the RoPE base and RMSNorm ε
//! of the model against an independent float64 forward pass (the script's numpy, in
//! Hugging Face's rotate-half convention), a byte-level BPE tokenizer as `tokenizers`
//! encodes, and a typed error for each malformed input.

mod common;

use decoding_engine::budget::Budget;
use decoding_engine::formats::hf::HfError;
use decoding_engine::model::Format;
use decoding_engine::{Model, ModelError, Transformer};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/models/fixtures/hf")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/test.sh (it writes the fixtures with Hugging Face's packages)",
            p.display()
        )
    })
}

fn hf(dir: &str) -> Model {
    let f = |n: &str| fixture(&format!("{dir}/{n}"));
    Model::from_memory(
        [
            ("config.json", &f("config.json")),
            ("model.safetensors", &f("model.safetensors")),
            ("tokenizer.json", &f("tokenizer.json")),
        ],
        Budget::default(),
    )
    .unwrap_or_else(|e| panic!("{dir}: {e}"))
}

fn llama2c(name: &str) -> Transformer {
    Transformer::new(decoding_engine::Checkpoint::from_bytes(&fixture(name)).unwrap())
}

use common::prefill_logits as logits;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn expected() -> serde_json::Value {
    serde_json::from_slice(&fixture("expected.json")).unwrap()
}

fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// The largest |ours − reference| over all positions, relative to the reference's largest
/// magnitude.
fn worst(ours: &[f32], reference: &serde_json::Value) -> f64 {
    let r: Vec<f64> = reference
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
        .collect();
    assert_eq!(ours.len(), r.len());
    let scale = r.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    ours.iter()
        .zip(&r)
        .map(|(&a, b)| (a as f64 - b).abs())
        .fold(0.0, f64::max)
        / scale
}

const TOKENS: [u32; 12] = [1, 403, 407, 261, 378, 432, 383, 409, 261, 498, 20, 7];

#[test]
fn stories260k_from_safetensors_gives_the_known_answers() {
    let m = hf("stories260K");
    let reference = common::stories260k();
    assert_eq!(m.config(), reference.config());
    assert_eq!(
        (m.format, m.architecture.as_str()),
        (Format::Safetensors, "LlamaForCausalLM")
    );
    // Q and K un-permuted from Hugging Face's rotate-half order: llama2.c's logits, bit
    // for bit.
    assert_eq!(
        bits(&logits(&m.transformer, &TOKENS)),
        bits(&logits(&reference.transformer, &TOKENS))
    );
    // tokenizer.json (written by `tokenizers`): the prompt's ids, p(",") = 0.9688, the
    // greedy text.
    common::assert_stories260k_answers(&m);
}

/// A safetensors file is read a tensor at a time as each is converted, never whole (issue
/// 51): no read past its largest tensor (the 512 × 64 f32 embedding), the answers kept.
#[test]
fn a_safetensors_file_is_read_a_tensor_at_a_time() {
    use decoding_engine::formats::source::ModelFile;
    let f = |n: &str| Box::new(fixture(&format!("stories260K/{n}")));
    let weights = common::Counted::new(*f("model.safetensors"));
    let (largest, len) = (weights.largest.clone(), weights.bytes.len());
    let mut files = vec![
        ModelFile::new("config.json", f("config.json")),
        ModelFile::new("model.safetensors", Box::new(weights)),
        ModelFile::new("tokenizer.json", f("tokenizer.json")),
    ];
    common::assert_stories260k_answers(&Model::load(&mut files, Budget::default()).unwrap());
    let tensor = 512 * 64 * 4;
    assert!(
        largest.get() <= tensor && len > 4 * tensor,
        "{largest:?} of {len}"
    );
}

#[test]
fn every_dtype_gives_the_distribution_of_its_llama2c_export() {
    // F32: the llama2.c file of the same weights, bit for bit.
    let f32 = hf("tiny-f32");
    assert!(!f32.config().shared_classifier);
    assert_eq!(f32.config().n_kv_heads, 2);
    let want = logits(&llama2c("tiny.bin"), &TOKENS);
    assert_eq!(bits(&logits(&f32.transformer, &TOKENS)), bits(&want));
    // F16 and BF16 widen exactly: the float32 file of what they hold, bit for bit, and
    // (being rounded) not the float32 model's logits.
    for dtype in ["f16", "bf16"] {
        let m = hf(&format!("tiny-{dtype}"));
        let got = logits(&m.transformer, &TOKENS);
        assert_eq!(
            bits(&got),
            bits(&logits(&llama2c(&format!("tiny-{dtype}-deq.bin")), &TOKENS)),
            "{dtype}"
        );
        assert_ne!(bits(&got), bits(&want), "{dtype} is not float32");
    }
}

#[test]
fn the_rope_base_and_rms_epsilon_come_from_the_model() {
    let e = expected();
    let tokens = ids(&e["tokens"]);
    // The reference itself: numpy's float64 Hugging Face forward pass of tiny.bin's weights
    // at θ 10,000 / ε 1e-5 is the llama2.c file's forward within float32 rounding.
    let plain = logits(&llama2c("tiny.bin"), &tokens);
    let w = worst(&plain, &e["tiny_logits"]);
    assert!(w < 1e-5, "reference vs llama2.c: {w}");
    // θ 100,000 and ε 1e-6 from config.json, and from GGUF's metadata.
    let m = hf("theta");
    assert_eq!(
        (m.config().rope_theta, m.config().rms_eps),
        (100_000.0, 1e-6)
    );
    let got = logits(&m.transformer, &tokens);
    let w = worst(&got, &e["theta_logits"]);
    assert!(w < 1e-5, "θ 100,000: {w}");
    // …which a model running θ 10,000 would miss by far more than that.
    assert!(worst(&plain, &e["theta_logits"]) > 1e-3);
    let g = Model::from_memory(
        [("model.gguf", &fixture("theta/theta.gguf"))],
        Budget::default(),
    )
    .unwrap();
    assert_eq!(
        (g.config().rope_theta, g.config().rms_eps),
        (100_000.0, 1e-6)
    );
    assert_eq!(bits(&logits(&g.transformer, &tokens)), bits(&got));
}

/// config.json as transformers 4.46, 4.57 and 5.25 wrote it (`tests/fixtures/hf-config/`,
/// `scripts/make-hf-configs.py`: θ 500,000 at the top level in 4, inside
/// `rope_parameters` in 5), over theta/'s weights: each gives numpy's float64 forward pass
/// at that base, plain and with Llama 3's scaling; YaRN is refused by name.
#[test]
fn configs_of_both_transformers_generations_give_the_reference_at_their_base() {
    let e = expected();
    let tokens = ids(&e["tokens"]);
    let (st, tok) = (
        fixture("theta/model.safetensors"),
        fixture("theta/tokenizer.json"),
    );
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/hf-config");
    let plain_100k = logits(&hf("theta").transformer, &tokens);
    for version in ["4.46.3", "4.57.6", "5.25.0"] {
        let config = |name: &str| std::fs::read(dir.join(format!("transformers-{version}/{name}")));
        let m = load(&config("plain.json").unwrap(), &st, &tok).unwrap();
        assert_eq!(m.config().rope_theta, 500_000.0, "{version}");
        let got = logits(&m.transformer, &tokens);
        let w = worst(&got, &e["theta5_logits"]);
        assert!(w < 1e-5, "{version} θ 500,000: {w}");
        // The base shows: θ 100,000's logits miss this reference by far more.
        assert!(worst(&plain_100k, &e["theta5_logits"]) > 1e-3);
        let m = load(&config("llama3.json").unwrap(), &st, &tok).unwrap();
        let scaled = logits(&m.transformer, &tokens);
        let w = worst(&scaled, &e["llama3_logits"]);
        assert!(w < 1e-5, "{version} Llama 3 scaling: {w}");
        assert!(worst(&got, &e["llama3_logits"]) > 1e-4, "the scaling shows");
        let err = hf_err(load(&config("yarn.json").unwrap(), &st, &tok));
        assert!(
            err.to_string().contains("rope_type \"yarn\""),
            "{version}: {err}"
        );
    }
}

#[test]
fn a_byte_level_bpe_tokenizer_encodes_and_decodes_as_tokenizers_does() {
    let e = expected();
    let m = hf("bytelevel");
    assert!(m.config().shared_classifier);
    assert_eq!(m.config().rope_theta, 100_000.0);
    for t in e["bytelevel_texts"].as_array().unwrap() {
        let text = t["text"].as_str().unwrap();
        let want = ids(&t["ids"]);
        assert_eq!(m.tokenizer.encode(text, false).unwrap(), want, "{text:?}");
        assert_eq!(m.tokenizer.decode(&want).unwrap(), text);
        // The transcript's chips: each token's piece as text (no "Ġ" for a space, no
        // U+FFFD), a byte of a character split across tokens as <0xNN>.
        for &id in &want {
            let p = m.tokenizer.piece(id).unwrap();
            assert!(
                !p.contains('\u{120}') && !p.contains('\u{fffd}'),
                "{id}: {p:?}"
            );
        }
        let streamed = m.tokenizer.text_after(None, &want, &[], true);
        assert_eq!(streamed, text);
    }
    let space = m
        .tokenizer
        .hf()
        .expect("a tokenizer.json")
        .token_to_id("\u{120}the")
        .unwrap();
    assert_eq!(m.tokenizer.piece(space).unwrap(), " the");
    let smile = "🙂".as_bytes();
    let split = (0..m.tokenizer.vocab_size() as u32)
        .find(|&i| m.tokenizer.piece(i).unwrap() == format!("<0x{:02X}>", smile[0]))
        .expect("the emoji's first byte is a token of its own");
    assert_eq!(m.tokenizer.decode_piece(None, split).unwrap(), &smile[..1]);
    // BOS/EOS from config.json: <|endoftext|>.
    let eot = m
        .tokenizer
        .hf()
        .expect("a tokenizer.json")
        .token_to_id("<|endoftext|>")
        .unwrap();
    assert_eq!((m.tokenizer.bos, m.tokenizer.eos), (eot, eot));
    let tokens = ids(&e["bytelevel_tokens"]);
    assert_eq!(tokens[0], eot);
    assert_eq!(
        m.encode_prompt(e["bytelevel_texts"][0]["text"].as_str().unwrap())
            .unwrap(),
        tokens
    );
    // BF16 weights, tied, θ 100,000, ε 1e-6: numpy's forward pass.
    let w = worst(&logits(&m.transformer, &tokens), &e["bytelevel_logits"]);
    assert!(w < 1e-5, "{w}");
}

fn load(config: &[u8], st: &[u8], tok: &[u8]) -> Result<Model, ModelError> {
    Model::from_memory(
        [
            ("config.json", config),
            ("model.safetensors", st),
            ("tokenizer.json", tok),
        ],
        Budget::default(),
    )
}

fn hf_err(r: Result<Model, ModelError>) -> HfError {
    match r {
        Err(ModelError::Hf(e)) => e,
        Err(e) => panic!("not a Hugging Face error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

fn find(b: &[u8], needle: &[u8]) -> usize {
    b.windows(needle.len())
        .position(|w| w == needle)
        .expect("present")
}

/// tiny-f32's three files: (config.json, model.safetensors, tokenizer.json).
fn tiny_f32_files() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    (
        fixture("tiny-f32/config.json"),
        fixture("tiny-f32/model.safetensors"),
        fixture("tiny-f32/tokenizer.json"),
    )
}

/// config.json's text with `key` set to `value`.
fn with_key(text: &str, key: &str, value: serde_json::Value) -> String {
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v[key] = value;
    v.to_string()
}

#[test]
fn malformed_hf_inputs_are_typed_errors() {
    let (config, st, tok) = tiny_f32_files();
    truncated_or_foreign_safetensors_are_typed_errors(&config, &st, &tok);
    corrupt_safetensors_tensors_are_typed_errors(&config, &st, &tok);
    malformed_config_json_is_a_typed_error(&config, &st, &tok);
    config_json_that_disagrees_with_the_files_is_refused(&config, &st, &tok);
    budget_and_missing_files_are_checked(&config, &st, &tok);
}

/// The safetensors file with `f` applied, loaded beside the good config and tokenizer.
fn st_err(config: &[u8], st: &[u8], tok: &[u8], f: &dyn Fn(&mut Vec<u8>)) -> HfError {
    let mut b = st.to_vec();
    f(&mut b);
    hf_err(load(config, &b, tok))
}

fn truncated_or_foreign_safetensors_are_typed_errors(config: &[u8], st: &[u8], tok: &[u8]) {
    let st_err = |f: &dyn Fn(&mut Vec<u8>)| st_err(config, st, tok, f);
    // Truncated anywhere: an error, never a panic.
    for cut in [0, 7, 8, 9, 100, 1000, st.len() / 2, st.len() - 1] {
        assert!(load(config, &st[..cut], tok).is_err(), "cut at {cut}");
    }
    assert!(matches!(
        st_err(&|b| b.truncate(5)),
        HfError::NotSafetensors(_)
    ));
    assert!(matches!(
        st_err(&|b| b.truncate(st.len() - 4)),
        HfError::Safetensors(_)
    ));
    // Not a safetensors file; a header length of 2^40 bytes.
    assert!(matches!(
        st_err(&|b| b[8] = b'['),
        HfError::NotSafetensors(_)
    ));
    assert_eq!(
        st_err(&|b| b[..8].copy_from_slice(&(1u64 << 40).to_le_bytes())),
        HfError::HeaderTooLarge {
            bytes: 1 << 40,
            limit: 16 << 20
        }
    );
}

fn corrupt_safetensors_tensors_are_typed_errors(config: &[u8], st: &[u8], tok: &[u8]) {
    let st_err = |f: &dyn Fn(&mut Vec<u8>)| st_err(config, st, tok, f);
    // A tensor's offsets past the data: the header's first data_offsets end changed (same
    // number of digits, so the header keeps its length).
    let e = st_err(&|b| {
        let at = find(b, b"\"data_offsets\":[") + 16;
        let end = at + b[at..].iter().position(|&c| c == b']').unwrap();
        let digits = &mut b[at..end];
        let comma = digits.iter().position(|&c| c == b',').unwrap();
        digits[comma + 1] = b'9';
    });
    assert!(matches!(e, HfError::Safetensors(_)), "{e}");
    // An unknown dtype (F32 → I32: same width, so the file stays consistent) is named.
    let e = st_err(&|b| {
        let at = find(b, b"\"F32\"");
        b[at + 1] = b'I';
    });
    assert!(
        matches!(e, HfError::Dtype { ref dtype, .. } if dtype == "I32"),
        "{e}"
    );
    // A missing tensor (renamed in the header).
    let e = st_err(&|b| {
        let at = find(b, b"model.norm.weight");
        b[at + 9] = b'X';
    });
    assert_eq!(e, HfError::MissingTensor("model.norm.weight".into()));
    // A non-finite weight.
    let e = st_err(&|b| {
        let n = b.len();
        b[n - 4..].copy_from_slice(&f32::NAN.to_le_bytes());
    });
    assert!(
        matches!(e, HfError::Tensor { ref why, .. } if why.contains("non-finite")),
        "{e}"
    );
}

/// config.json: not JSON, missing keys, another architecture, what the engine does not run.
fn malformed_config_json_is_a_typed_error(config: &[u8], st: &[u8], tok: &[u8]) {
    let text = String::from_utf8(config.to_vec()).unwrap();
    let cfg_err = |s: String| hf_err(load(s.as_bytes(), st, tok));
    assert!(matches!(
        cfg_err(text.replace('}', "")),
        HfError::ConfigJson(_)
    ));
    assert!(matches!(cfg_err("[1, 2]".into()), HfError::ConfigJson(_)));
    for key in [
        "num_hidden_layers",
        "hidden_size",
        "vocab_size",
        "intermediate_size",
        "max_position_embeddings",
        "num_attention_heads",
    ] {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut o = v.as_object().unwrap().clone();
        o.remove(key);
        assert_eq!(
            cfg_err(serde_json::Value::Object(o).to_string()).to_string(),
            format!("config.json lacks {key:?}")
        );
    }
    let set = |key: &str, value: serde_json::Value| with_key(&text, key, value);
    assert_eq!(
        cfg_err(set(
            "architectures",
            serde_json::json!(["MistralForCausalLM"])
        )),
        HfError::Architecture("MistralForCausalLM".into())
    );
    let e = cfg_err(set(
        "rope_scaling",
        serde_json::json!({"rope_type": "yarn", "factor": 4.0}),
    ));
    assert!(
        matches!(e, HfError::Unsupported(ref s) if s.contains("rope_scaling") && s.contains("yarn")),
        "{e}"
    );
    // Llama 3's scaling is read, all four of its numbers required.
    let e = cfg_err(set(
        "rope_scaling",
        serde_json::json!({"rope_type": "llama3", "factor": 8.0}),
    ));
    assert!(
        matches!(e, HfError::Value { ref key, ref why, .. } if key == "rope_scaling" && why.contains("low_freq_factor")),
        "{e}"
    );
    let e = cfg_err(set("attention_bias", serde_json::json!(true)));
    assert!(
        matches!(e, HfError::Unsupported(ref s) if s.contains("attention_bias")),
        "{e}"
    );
    let e = cfg_err(set("num_hidden_layers", serde_json::json!("two")));
    assert!(
        matches!(e, HfError::Value { ref key, .. } if key == "num_hidden_layers"),
        "{e}"
    );
    let e = cfg_err(set("rope_theta", serde_json::json!(-5.0)));
    assert!(e.to_string().contains("rope_theta"), "{e}");
}

/// config.json that disagrees with the safetensors file or the tokenizer.
fn config_json_that_disagrees_with_the_files_is_refused(config: &[u8], st: &[u8], tok: &[u8]) {
    let text = String::from_utf8(config.to_vec()).unwrap();
    let cfg_err = |s: String| hf_err(load(s.as_bytes(), st, tok));
    let set = |key: &str, value: serde_json::Value| with_key(&text, key, value);
    // Tied in the config, untied in the file.
    let e = cfg_err(set("tie_word_embeddings", serde_json::json!(true)));
    assert!(
        matches!(e, HfError::Unsupported(ref s) if s.contains("lm_head")),
        "{e}"
    );
    // A shape the file does not have.
    let e = cfg_err(set("intermediate_size", serde_json::json!(96)));
    assert!(
        matches!(e, HfError::Tensor { ref why, .. } if why.contains("shape")),
        "{e}"
    );
    // The config's vocabulary and the tokenizer's differ.
    let e = load(
        set("vocab_size", serde_json::json!(600)).as_bytes(),
        st,
        tok,
    )
    .err()
    .unwrap();
    assert!(matches!(e, ModelError::Tokenizer(_)), "{e}");
}

fn budget_and_missing_files_are_checked(config: &[u8], st: &[u8], tok: &[u8]) {
    // The memory budget is checked from config.json before any tensor is converted.
    let e = Model::from_memory(
        [
            ("config.json", config),
            ("model.safetensors", st),
            ("tokenizer.json", tok),
        ],
        Budget(1000),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("limit"), "{e}");
    // A safetensors file without its config.json.
    let e = Model::from_memory(
        [("model.safetensors", st), ("tokenizer.json", tok)],
        Budget::default(),
    )
    .err()
    .unwrap();
    assert!(
        e.to_string().starts_with(
            "model.safetensors is a Hugging Face checkpoint: give it with its config.json"
        ),
        "{e}"
    );
    // The same three files in any order, under any names, load (told apart by content).
    let m = Model::from_memory([("a", tok), ("b", config), ("c", st)], Budget::default()).unwrap();
    assert_eq!(m.format, Format::Safetensors);
}

/// A vocabulary of 256k tokens (Gemma's 256,000 and more: 262,144) loads with a
/// `tokenizer.json` of that many tokens and runs through the forward pass and the sampling
/// chain; one token more than the engine's limit is refused by name.
#[test]
fn a_vocabulary_of_256k_tokens_loads_and_samples() {
    use decoding_engine::decode::sampling::{process, History, RawSettings};
    use decoding_engine::weights::Checkpoint;
    use decoding_engine::Config;
    let n = 262_144usize;
    let mut vocab = serde_json::Map::new();
    vocab.insert("<s>".into(), 0.into());
    vocab.insert("</s>".into(), 1.into());
    for i in 2..n {
        vocab.insert(format!("w{i}"), i.into());
    }
    let json = serde_json::json!({
        "version": "1.0",
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<s>"}
    });
    let tok = decoding_engine::Tokenizer::from_hf_json(json.to_string().as_bytes()).unwrap();
    assert_eq!(tok.vocab_size(), n);
    let c = Config::from_header([16, 32, 1, 2, 2, n as i32, 32]).unwrap();
    let m = Model::new(Checkpoint::random(c, 3).unwrap(), tok).unwrap();
    let ids = m.encode_prompt("w5 w262143 w77").unwrap();
    assert_eq!(ids, [0, 5, 262_143, 77]);
    let l = logits(&m.transformer, &ids);
    let last = &l[3 * n..];
    assert_eq!(last.len(), n);
    let s = RawSettings::from_pairs([("temperature", "0.8"), ("top_p", "0.9")])
        .validate(n)
        .unwrap();
    let t = process(&s, last, History::default(), 0.5, false).unwrap();
    assert_eq!(t.probs.len(), n);
    assert!((t.probs.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(Config::from_header([16, 32, 1, 2, 2, (1 << 20) + 1, 32]).is_err());
}

/// A config of SmolLM2-135M's shape (docs/REFERENCES.md: 30 layers, hidden 576, 9 heads / 3 K/V
/// heads, intermediate 1,536, tied, vocab 49,152, RoPE base 100,000), trained at a context
/// of 8,192, parses with the keys a hub config carries beside them, runs at 4,096 (the
/// engine's longest run context, as llama.cpp runs at its n_ctx) and fits the page's 1.5 GiB
/// budget: 538 MB of weights, 189 MB of cache.
#[test]
fn a_smollm2_135m_config_parses_and_fits_the_pages_budget() {
    use decoding_engine::budget::Footprint;
    let config = serde_json::json!({
        "_name_or_path": "HuggingFaceTB/SmolLM2-135M",
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0,
        "hidden_act": "silu", "hidden_size": 576, "initializer_range": 0.041666666666666664,
        "intermediate_size": 1536, "is_llama_config": true, "max_position_embeddings": 8192,
        "model_type": "llama", "num_attention_heads": 9, "num_hidden_layers": 30,
        "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
        "rope_interleaved": false, "rope_scaling": null, "rope_theta": 100000,
        "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.40.1",
        "use_cache": true, "vocab_size": 49152
    });
    let hf = decoding_engine::formats::hf::HfConfig::parse(config.to_string().as_bytes()).unwrap();
    let c = hf.config;
    assert_eq!(
        (c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_size()),
        (576, 30, 9, 3, 64)
    );
    assert_eq!(
        (c.vocab_size, c.seq_len, c.shared_classifier),
        (49_152, 4096, true)
    );
    assert_eq!(hf.trained_context, 8192);
    assert_eq!((c.rope_theta, c.rms_eps), (100_000.0, 1e-5));
    assert_eq!((hf.bos, hf.eos), (Some(0), Some(0)));
    assert_eq!(hf.name.as_deref(), Some("HuggingFaceTB/SmolLM2-135M"));
    let f = Footprint::of(&c).unwrap();
    assert_eq!(f.kv_per_sequence, 2 * 4096 * 30 * 192 * 4);
    f.check(&c, Budget(3 << 29)).unwrap();
}
