//! Other model files: a written version-2 file, quantization's quality, GGUF, safetensors.

use super::*;

/// `quantize --out` writes llama2.c's version-2 file (magic, version, size); that file loads
/// as q8 and gives the same distribution as `--precision q8` on the float32 file (the same
/// quantization), within 1e-4 of the float32 model of its dequantized weights; bad
/// `--precision` values are refused.
#[test]
fn quantize_writes_a_v2_file_that_runs_as_q8() {
    let out = std::env::temp_dir().join(format!("de-cli-q80-{}.bin", std::process::id()));
    let o = cli(&["quantize", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("278,608 bytes"), "{}", stdout(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len(), 278_608);
    assert_eq!(&bytes[..8], &[0x32, 0x34, 0x6b, 0x61, 2, 0, 0, 0]);
    let probs = |args: &[&str]| -> Vec<f64> {
        let mut a = args.to_vec();
        a.extend(["next", "--prompt", "Once upon a time, there was", "--json"]);
        let o = cli(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["probs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_f64().unwrap())
            .collect()
    };
    let file = probs(&["--model", out.to_str().unwrap()]);
    let in_memory = probs(&["--precision", "q8"]);
    assert_eq!(file, in_memory);
    let f32 = probs(&[]);
    assert!(file.iter().zip(&f32).any(|(a, b)| a != b), "q8 is not f32");
    // The file's own dequantized weights as f32: the same distribution within 1e-4.
    let deq = probs(&["--model", out.to_str().unwrap(), "--precision", "f32"]);
    let worst = file
        .iter()
        .zip(&deq)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-4, "{worst}");
    assert_user_error(
        &cli(&["--precision", "q5", "next"]),
        "[possible values: f32, f16, q8, q4]",
    );
    assert_user_error(
        &cli(&["--backend", "tpu", "next"]),
        "[possible values: auto, gpu, cpu]",
    );
    let _ = std::fs::remove_file(&out);
}

/// `quality` over the kept evaluation text: f32 against itself is exact; f16's mean KL is
/// below q8's, q8's below q4's (each with float32 activations, and each again with int8
/// activations, which add x's rounding); the weight bytes are the formats'.
#[test]
fn quality_reports_kl_agreement_and_perplexity_per_precision() {
    let o = cli(&["quality", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v.as_array().unwrap();
    let get = |i: usize, k: &str| rows[i][k].as_f64().unwrap();
    // f32, f16, q8 (int8 activations), q8 (f32), q4 (int8), q4 (f32)
    assert_eq!(rows.len(), 6);
    let acts: Vec<&str> = rows
        .iter()
        .map(|r| r["activations"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(acts, ["-", "-", "int8", "f32", "int8", "f32"]);
    assert_eq!((get(0, "mean_kl"), get(0, "same_top")), (0.0, 1.0));
    assert!(get(1, "mean_kl") > 0.0 && get(1, "mean_kl") < get(3, "mean_kl"));
    assert!(get(3, "mean_kl") < get(5, "mean_kl"));
    assert!(get(1, "same_top") >= get(3, "same_top"));
    assert!(get(3, "same_top") > get(5, "same_top"));
    // int8 activations differ from float32 ones: their own rows, not a copy.
    assert!(get(2, "mean_kl") != get(3, "mean_kl") && get(4, "mean_kl") != get(5, "mean_kl"));
    assert_eq!(get(0, "perplexity"), get(0, "perplexity_ref"));
    let bytes: Vec<f64> = (0..6).map(|i| get(i, "weight_bytes")).collect();
    // f16: the 259,328 matrix weights at 2 bytes, the 704 norm weights at 4 (f32: 4 and 4);
    // the activations change no weight.
    assert_eq!(
        bytes,
        [
            1_040_128.0,
            521_472.0,
            278_352.0,
            278_352.0,
            164_896.0,
            164_896.0
        ]
    );
    assert!(get(0, "positions") > 500.0);
}

/// `--model <model>` of stories260K in a fixture's format (`scripts/make-fixtures.sh` writes
/// them) gives the README's greedy text and p(",") = 0.9688 after "Once upon a time".
fn assert_gives_the_greedy_text(model: &std::path::Path) {
    assert!(
        model.exists(),
        "{} is missing: run scripts/test.sh (scripts/make-fixtures.sh writes it)",
        model.display()
    );
    let m = model.to_str().unwrap();
    let o = generate_greedy(&["--model", m], "60");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        GREEDY.starts_with(text.trim_end()) && text.len() > 150,
        "{text}"
    );
    assert_first_is_stories260ks(&["--model", m]);
}

/// `next` after "Once upon a time" with `model_args` gives stories260K's known first token:
/// "," at p = 0.9688.
fn assert_first_is_stories260ks(model_args: &[&str]) {
    let args: Vec<&str> = model_args
        .iter()
        .copied()
        .chain(["next", "--prompt", "Once upon a time", "--json"])
        .collect();
    let v = json(&args);
    assert_eq!(v["top"][0]["piece"], ",");
    assert_eq!(
        format!("{:.4}", v["top"][0]["prob"].as_f64().unwrap()),
        "0.9688"
    );
}

/// `--model x.gguf`: stories260K written as GGUF by llama.cpp's `gguf` package
/// (`scripts/make-fixtures.sh`) gives the README's greedy text and p(",") = 0.9688, its
/// tokenizer from the file's metadata; a GGUF with `--tokenizer`, and a cut one, are errors.
#[test]
fn a_gguf_model_runs_with_the_tokenizer_it_carries() {
    let gguf = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets/models/fixtures/gguf/stories260K.gguf");
    assert_gives_the_greedy_text(&gguf);
    let g = gguf.to_str().unwrap();
    let tok =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/models/stories260K/tok512.bin");
    assert_user_error(
        &cli(&["--model", g, "--tokenizer", tok.to_str().unwrap(), "next"]),
        "carries its own tokenizer: drop --tokenizer",
    );
    let bytes = std::fs::read(&gguf).unwrap();
    let cut = temp_file("cut.gguf", &bytes[..bytes.len() / 2]);
    assert_user_error(
        &cli(&["--model", cut.to_str().unwrap(), "next"]),
        "run past the end of the data",
    );
}

/// `--model x.safetensors`: stories260K written as a Hugging Face checkpoint by Hugging
/// Face's `safetensors` and `tokenizers` packages (`scripts/make-fixtures.sh`), with
/// config.json and tokenizer.json beside it, gives the README's greedy text and
/// p(",") = 0.9688; the same file without its config.json is an error naming it.
#[test]
fn a_safetensors_model_runs_with_its_config_and_tokenizer_beside_it() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/models/fixtures/hf/stories260K");
    let st = dir.join("model.safetensors");
    assert_gives_the_greedy_text(&st);
    let alone = temp_file("alone.safetensors", &std::fs::read(&st).unwrap());
    assert_user_error(
        &cli(&["--model", alone.to_str().unwrap(), "next"]),
        "config.json",
    );
    // A llama2.c tokenizer.bin given for it is read as one (told by its content, not parsed
    // as JSON): stories260K's own vocabulary, the same first distribution.
    let tok =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/models/stories260K/tok512.bin");
    let (st_s, tok_s) = (st.to_str().unwrap(), tok.to_str().unwrap());
    assert_first_is_stories260ks(&["--model", st_s, "--tokenizer", tok_s]);
    // Text that is neither is refused as such, whatever it is called.
    let text = temp_file("tokenizer.json", b"hello world, not a tokenizer");
    assert_user_error(
        &cli(&["--model", st_s, "--tokenizer", text.to_str().unwrap(), "next"]),
        "neither a tokenizer.json (it does not start with '{') nor a llama2.c tokenizer.bin (a binary table); it starts with \"hello world, not a tokenizer\"",
    );
    // Named otherwise, the file is still told by its header, and refused without a config.
    let renamed = temp_file("weights.bin", &std::fs::read(&st).unwrap());
    assert_user_error(
        &cli(&["--model", renamed.to_str().unwrap(), "next"]),
        "needs its config.json",
    );
}

/// `--chat`: the prompt as one user message through the file's chat template (Qwen2's
/// ChatML), the same distribution as the rendered text given by hand (the page's Chat
/// toggle renders it the same way); a model whose file has none is refused at once.
#[test]
fn chat_gives_the_prompt_through_the_files_template() {
    let arch = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/models/fixtures/arch");
    let qwen2 = arch.join("qwen2.gguf");
    let q = qwen2.to_str().unwrap();
    let chat = json(&[
        "--model",
        q,
        "--chat",
        "next",
        "--prompt",
        "Hi there!",
        "--json",
    ]);
    let rendered = "<|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\n";
    let by_hand = json(&["--model", q, "next", "--prompt", rendered, "--json"]);
    let plain = json(&["--model", q, "next", "--prompt", "Hi there!", "--json"]);
    assert_eq!(chat["top"], by_hand["top"]);
    assert_ne!(chat["top"], plain["top"]);
    assert_user_error(
        &cli(&["--chat", "next"]),
        "--chat: chat: this model's file carries no chat template",
    );
}

/// `--chat-template FILE` (Llama 2's shape) on stories260K, a SentencePiece model whose file
/// has no template: the prompt goes through it, its `<s>` the BOS token (one), the text
/// after it as `tokenize` encodes it; a template that does not parse is refused by name.
#[test]
fn a_chat_template_file_is_used_and_its_specials_are_tokens() {
    let t = temp_file(
        "llama2.jinja",
        b"{{ bos_token }}[INST] {{ messages[0]['content'] }} [/INST]",
    );
    let v = json(&[
        "--chat-template",
        t.to_str().unwrap(),
        "next",
        "--prompt",
        "Hi",
        "--json",
        "--top",
        "1",
    ]);
    let plain = json(&["tokenize", "[INST] Hi [/INST]", "--json"]);
    assert_eq!(v["prompt_tokens"], plain["ids"]);
    assert_eq!(plain["ids"][0], 1);
    let bad = temp_file("bad.jinja", b"{% if %}");
    assert_user_error(
        &cli(&[
            "--chat-template",
            bad.to_str().unwrap(),
            "next",
            "--prompt",
            "Hi",
        ]),
        "the chat template could not be rendered",
    );
}
