//! Constrained decoding on stories260K: greedy under GBNF grammars token for token against
//! llama.cpp's own grammar sampler (tests/fixtures/grammar/llama-cpp.json, written by
//! scripts/llama-cpp-grammar-reference.py from llama.cpp 0c1e57098), sampled outputs that
//! match their regex (Rust's `regex`, not the matcher's engine) and parse as instances of
//! their schema (Python's `jsonschema`, in the fixtures' virtual environment), beam search
//! and speculative decoding under a constraint.

mod common;

use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::beam::{BeamConfig, BeamSearch};
use decoding_engine::decode::constraint::{gbnf, native_clock, ConstraintSpec, ConstraintVocab};
use decoding_engine::decode::generation::{Generation, StepOutcome, StopReason};
use decoding_engine::decode::sampling::{RawSettings, Settings};
use decoding_engine::decode::speculative::{Draft, Rule, Speculator};
use decoding_engine::Model;
use pollster::block_on;

use common::settings;

use common::ends;

fn vocab(m: &Model) -> ConstraintVocab {
    ConstraintVocab::new(&m.tokenizer, 512, &ends(m), native_clock).unwrap()
}

/// The generated ids and why it stopped.
fn generate(m: &Model, be: &mut CpuBackend, prompt: &str, s: &Settings) -> (Vec<u32>, StopReason) {
    generate_with(m, be, prompt, s, (&vocab(m), &ends(m)))
}

/// [`generate`] with a vocabulary and end tokens of the caller's.
fn generate_with(
    m: &Model,
    be: &mut CpuBackend,
    prompt: &str,
    s: &Settings,
    (vocab, ends): (&ConstraintVocab, &[u32]),
) -> (Vec<u32>, StopReason) {
    let ids = m.encode_prompt(prompt).unwrap();
    let mut g = block_on(Generation::start(be, ids, ends.to_vec())).unwrap();
    g.sync_constraint(s, vocab).unwrap();
    let reason = loop {
        match block_on(g.step(be, s, &m.tokenizer)).unwrap() {
            StepOutcome::Stopped(r) => break r,
            StepOutcome::Token { stop: Some(r), .. } => break r,
            StepOutcome::Token { .. } => {}
        }
    };
    let out = g.generated_ids();
    g.release(be);
    (out, reason)
}

fn text(m: &Model, prompt: &str, ids: &[u32]) -> String {
    let p = m.encode_prompt(prompt).unwrap();
    m.tokenizer
        .text_after(p.last().copied(), ids, &ends(m), true)
}

#[test]
fn greedy_under_gbnf_grammars_is_llama_cpps_grammar_sampler_token_for_token() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let fixture: serde_json::Value = serde_json::from_slice(&common::fixture(
        "../../tests/fixtures/grammar",
        "llama-cpp.json",
    ))
    .unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 5);
    // The translation reads some runs as one lexeme (`[a-z]+` as `/[...]+/`): the comparison
    // covers them.
    let merged = cases
        .iter()
        .filter(|c| {
            let lark = gbnf::to_lark(c["grammar"].as_str().unwrap()).unwrap();
            lark.contains("]+/") || lark.contains("}/")
        })
        .count();
    assert!(
        merged >= 3,
        "{merged} grammars with a run read as one lexeme"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let prompt = case["prompt"].as_str().unwrap();
        let want: Vec<u32> = serde_json::from_value(case["tokens"].clone()).unwrap();
        let prompt_ids: Vec<u32> = serde_json::from_value(case["prompt_ids"].clone()).unwrap();
        assert_eq!(m.encode_prompt(prompt).unwrap(), prompt_ids, "{name}");
        let max = case["max_tokens"].as_u64().unwrap().to_string();
        let grammar = format!("grammar:{}", case["grammar"].as_str().unwrap());
        let s = settings(&[
            ("temperature", "0"),
            ("max_tokens", &max),
            ("constraint", &grammar),
        ]);
        let (got, reason) = generate(&m, &mut be, prompt, &s);
        // llama.cpp samples EOS where the grammar leaves nothing else; we stop there, saying
        // the constraint is complete.
        let eos = m.tokenizer.eos;
        let (want_body, want_end) = match want.split_last() {
            Some((&last, body)) if last == eos => (body.to_vec(), true),
            _ => (want.clone(), false),
        };
        let got_body: Vec<u32> = got.iter().copied().filter(|&t| t != eos).collect();
        assert_eq!(got_body, want_body, "{name}: {:?}", text(&m, prompt, &got));
        assert_eq!(
            reason == StopReason::ConstraintComplete,
            want_end,
            "{name}: stopped by {reason}"
        );
        assert_eq!(
            text(&m, prompt, &got),
            case["text"].as_str().unwrap(),
            "{name}"
        );
    }
}

/// Regexes the tests sample under, anchored for Rust's `regex`.
const REGEXES: [&str; 3] = [
    r" (yes|no)\.",
    r" [0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
    r" [A-Z][a-z]{1,8}( [A-Z][a-z]{1,8})?!",
];

#[test]
fn every_sampled_output_matches_its_regex() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    for rx in REGEXES {
        let check = regex::Regex::new(&format!("^(?:{rx})$")).unwrap();
        let constraint = format!("regex:{rx}");
        for seed in 0..50 {
            let seed = seed.to_string();
            let s = settings(&[
                ("temperature", "1"),
                ("seed", &seed),
                ("max_tokens", "40"),
                ("constraint", &constraint),
            ]);
            let (ids, reason) = generate(&m, &mut be, "Once upon a time", &s);
            let t = text(&m, "Once upon a time", &ids);
            assert_eq!(
                reason,
                StopReason::ConstraintComplete,
                "{rx} seed {seed}: {t:?}"
            );
            assert!(check.is_match(&t), "{rx} seed {seed}: {t:?}");
        }
    }
}

/// The page's story-character schema.
const CHARACTER: &str = r#"{"type": "object", "properties": {"name": {"type": "string", "pattern": "^[A-Z][a-z]{1,10}$"}, "age": {"type": "integer", "minimum": 1, "maximum": 12}, "pet": {"enum": ["dog", "cat", "bird", "fish"]}}, "required": ["name", "age", "pet"], "additionalProperties": false}"#;

#[test]
fn every_sampled_output_is_an_instance_of_its_schema_by_an_independent_validator() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let constraint = format!("json_schema:{CHARACTER}");
    let mut outputs = Vec::new();
    for seed in 0..50 {
        let seed = seed.to_string();
        let s = settings(&[
            ("temperature", "1"),
            ("seed", &seed),
            ("max_tokens", "80"),
            ("constraint", &constraint),
        ]);
        let (ids, reason) = generate(&m, &mut be, "Tom had a dog named", &s);
        let t = text(&m, "Tom had a dog named", &ids);
        assert_eq!(reason, StopReason::ConstraintComplete, "seed {seed}: {t:?}");
        outputs.push(t);
    }
    let python = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../.venv-fixtures/bin/python");
    let script = "import json, sys, jsonschema\n\
        schema = json.loads(sys.argv[1])\n\
        outs = json.load(sys.stdin)\n\
        for o in outs:\n    jsonschema.validate(json.loads(o), schema)\n\
        print(len(outs))\n";
    let mut child = std::process::Command::new(&python)
        .args(["-c", script, CHARACTER])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run scripts/test.sh (its set-up makes it)",
                python.display()
            )
        });
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&outputs).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{outputs:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "50");
}

#[test]
fn beam_search_under_a_constraint_keeps_only_instances() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let seq = be.new_sequence().unwrap();
    let logits = block_on(be.forward(seq, &prompt, false)).unwrap();
    let config = BeamConfig {
        width: 4,
        length_penalty: 1.0,
        early_stopping: true,
        num_return: 4,
        max_tokens: 20,
    };
    let mut search = BeamSearch::new(config, seq, prompt.len(), 512, logits, ends(&m));
    let spec = ConstraintSpec::parse(&format!("regex:{}", REGEXES[1]))
        .unwrap()
        .unwrap();
    search.constrain(spec.compile(&vocab(&m)).unwrap());
    while !block_on(search.step(&mut be)).unwrap() {}
    let check = regex::Regex::new(&format!("^(?:{})$", REGEXES[1])).unwrap();
    let results = search.results();
    assert_eq!(results.len(), 4);
    for h in &results {
        let t = text(&m, "Once upon a time", &h.tokens);
        assert!(h.ended && check.is_match(&t), "{t:?}");
    }
}

#[test]
fn a_draft_the_constraint_forbids_is_refused_and_said_so() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let rx = REGEXES[1];
    let s = settings(&[("temperature", "0"), ("constraint", &format!("regex:{rx}"))]);
    let spec = ConstraintSpec::parse(&format!("regex:{rx}"))
        .unwrap()
        .unwrap();
    let mut sp = block_on(Speculator::start(
        &mut be,
        &m.transformer,
        prompt.clone(),
        Draft::Exit(3),
        4,
        Rule::Rejection,
    ))
    .unwrap();
    sp.constrain(Some(spec.compile(&vocab(&m)).unwrap()));
    let cycles = block_on(sp.run(&mut be, &s, 30, &ends(&m))).unwrap();
    let forbidden: usize = cycles
        .iter()
        .flat_map(|c| &c.checked)
        .filter(|c| c.forbidden)
        .inspect(|c| assert!(!c.accepted && c.p == 0.0))
        .count();
    // The early-exit draft knows nothing of dates: it proposes words the mask forbids.
    assert!(forbidden > 0);
    // Greedy speculation emits greedy decoding's text under the same constraint.
    let emitted: Vec<u32> = sp.emitted().to_vec();
    let (plain, _) = generate(&m, &mut be, "Once upon a time", &s);
    let body: Vec<u32> = emitted
        .iter()
        .copied()
        .filter(|t| !ends(&m).contains(t))
        .collect();
    assert_eq!(body, plain);
    let t = text(&m, "Once upon a time", &plain);
    assert!(
        regex::Regex::new(&format!("^(?:{rx})$"))
            .unwrap()
            .is_match(&t),
        "{t:?}"
    );
}

#[test]
fn an_unsatisfiable_constraint_stops_instead_of_sampling_from_nothing() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    // "é" has no piece of its own but its bytes do; a class that excludes every character
    // leaves nothing after "a".
    let s = settings(&[
        ("temperature", "1"),
        ("constraint", "regex: a[^\\x00-\\x{10FFFF}]"),
    ]);
    let (ids, reason) = generate(&m, &mut be, "Once upon a time", &s);
    assert_eq!(reason, StopReason::ConstraintUnsatisfiable, "{ids:?}");
}

#[test]
fn a_generation_never_applies_an_old_constraints_mask_to_a_new_one() {
    let m = common::stories260k();
    let mut be = CpuBackend::new(m.transformer.clone());
    let ids = m.encode_prompt("Once upon a time").unwrap();
    let mut g = block_on(Generation::start(&mut be, ids, ends(&m))).unwrap();
    let a = settings(&[("constraint", "regex: (yes|no)\\.")]);
    g.sync_constraint(&a, &vocab(&m)).unwrap();
    block_on(g.step(&mut be, &a, &m.tokenizer)).unwrap();
    let b = settings(&[("constraint", "regex: (maybe)\\.")]);
    let e = block_on(g.step(&mut be, &b, &m.tokenizer)).unwrap_err();
    assert!(
        e.to_string().contains("changed since it was compiled"),
        "{e}"
    );
    // Compiled, it replays the text so far: " " fits both, so it goes on.
    g.sync_constraint(&b, &vocab(&m)).unwrap();
    block_on(g.step(&mut be, &b, &m.tokenizer)).unwrap();
    // A rewind replays the constraint too: the next mask is the one after the first token.
    assert_eq!(g.generated_ids().len(), 2);
    g.rewind(&mut be).unwrap();
    let after_rewind = g.constraint_allowed(&b).unwrap().unwrap();
    let spec = ConstraintSpec::parse("regex: (maybe)\\.").unwrap().unwrap();
    let mut fresh = spec.compile(&vocab(&m)).unwrap();
    fresh.replay(&g.generated_ids()).unwrap();
    assert_eq!(after_rewind.words, fresh.allowed().unwrap().words);
    assert!(after_rewind.count > 0);
    g.release(&mut be);
}

/// A GPT-2 byte-level BPE vocabulary (the SmolLM-style GGUF fixture, a seeded random model):
/// its tokens' bytes are the text they print (the byte alphabet undone: "Ġ" a space), so
/// every sampled output matches its regex, multi-byte characters included.
#[test]
fn a_gpt2_bpe_vocabulary_spells_what_the_regex_allows() {
    let bytes = common::fixture("../../assets/models/fixtures/arch", "bpe-smollm.gguf");
    let m = Model::from_memory(
        [("model.gguf", &bytes)],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let mut be = CpuBackend::new(m.transformer.clone());
    let vocab_size = m.config().vocab_size;
    let rx = " (café|naïve|señor) [0-9]{2}!";
    let check = regex::Regex::new(&format!("^(?:{rx})$")).unwrap();
    let ends = vec![m.tokenizer.eos];
    let v = ConstraintVocab::new(&m.tokenizer, vocab_size, &ends, native_clock).unwrap();
    for seed in 0..20 {
        let s = RawSettings::from_pairs([
            ("temperature", "1"),
            ("seed", &seed.to_string()),
            ("max_tokens", "40"),
            ("constraint", &format!("regex:{rx}")),
        ])
        .validate(vocab_size)
        .unwrap();
        let last = m.encode_prompt("Hello").unwrap().last().copied();
        let (ids, reason) = generate_with(&m, &mut be, "Hello", &s, (&v, &ends));
        let t = m.tokenizer.text_after(last, &ids, &ends, true);
        assert_eq!(reason, StopReason::ConstraintComplete, "seed {seed}: {t:?}");
        assert!(check.is_match(&t), "seed {seed}: {t:?}");
    }
}
