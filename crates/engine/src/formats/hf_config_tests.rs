//! The configs transformers 4.46, 4.57 and 5.25 wrote (`tests/fixtures/hf-config/`), and
//! transformers 5's reading rule on the forms between them.

use super::*;
use serde_json::json;

macro_rules! files {
    ($v:literal) => {
        [
            include_str!(concat!(
                "../../../../tests/fixtures/hf-config/transformers-",
                $v,
                "/plain.json"
            )),
            include_str!(concat!(
                "../../../../tests/fixtures/hf-config/transformers-",
                $v,
                "/llama3.json"
            )),
            include_str!(concat!(
                "../../../../tests/fixtures/hf-config/transformers-",
                $v,
                "/yarn.json"
            )),
            include_str!(concat!(
                "../../../../tests/fixtures/hf-config/transformers-",
                $v,
                "/qwen2.json"
            )),
        ]
    };
}

/// Each version's files, as it wrote them.
const VERSIONS: [(&str, [&str; 4]); 3] = [
    ("4.46.3", files!("4.46.3")),
    ("4.57.6", files!("4.57.6")),
    ("5.25.0", files!("5.25.0")),
];

fn parse(v: &Value) -> Result<HfConfig, HfError> {
    HfConfig::parse(v.to_string().as_bytes())
}

/// The tiny Llama's keys with `extra` set (null removes nothing: it is a value).
fn tiny(extra: Value) -> Value {
    let mut v = json!({
        "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 512, "max_position_embeddings": 64,
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn llama3_factors(original: f64) -> Vec<f32> {
    Llama3Rope {
        factor: 8.0,
        low_freq_factor: 1.0,
        high_freq_factor: 4.0,
        original_max_position_embeddings: original,
    }
    .factors(16, 500_000.0)
}

#[test]
fn both_generations_give_the_same_model() {
    for (version, [plain, llama3, yarn, qwen2]) in VERSIONS {
        // The files are what each version writes: 4 at the top level, 5 in one object.
        let text: Value = serde_json::from_str(plain).unwrap();
        assert_eq!(
            text.get("rope_parameters").is_some(),
            version.starts_with('5'),
            "{version}"
        );
        let p = HfConfig::parse(plain.as_bytes()).unwrap();
        assert_eq!(p.config.rope_theta, 500_000.0, "{version}");
        assert_eq!(p.config.rms_eps, 1e-6, "{version}");
        assert_eq!(p.rope_factors, None, "{version}");
        let l = HfConfig::parse(llama3.as_bytes()).unwrap();
        assert_eq!(l.config.rope_theta, 500_000.0, "{version}");
        assert_eq!(l.rope_factors, Some(llama3_factors(40.0)), "{version}");
        let e = HfConfig::parse(yarn.as_bytes()).unwrap_err();
        assert!(
            matches!(e, HfError::Unsupported(ref s) if s.contains("\"yarn\"")),
            "{version}: {e}"
        );
        let q = HfConfig::parse(qwen2.as_bytes()).unwrap();
        assert_eq!(
            (q.config.rope_theta, q.architecture.as_str(), q.qkv_bias),
            (1_000_000.0, "Qwen2ForCausalLM", true),
            "{version}"
        );
    }
}

#[test]
fn transformers_5s_rule_for_the_forms_between() {
    let theta = |v: Value| parse(&tiny(v)).unwrap().config.rope_theta;
    // No key: LlamaConfig's default.
    assert_eq!(theta(json!({})), 10_000.0);
    assert_eq!(theta(json!({"rope_theta": 100000.0})), 100_000.0);
    // The object's base wins over a stray top-level one.
    assert_eq!(
        theta(
            json!({"rope_theta": 1.5e4, "rope_parameters": {"rope_type": "default", "rope_theta": 5e5}})
        ),
        500_000.0
    );
    // An object without a base takes the top-level one; without a type, "default".
    assert_eq!(
        theta(json!({"rope_theta": 2e5, "rope_parameters": {"rope_type": "default"}})),
        200_000.0
    );
    assert_eq!(
        theta(json!({"rope_parameters": {"rope_theta": 3e5}})),
        300_000.0
    );
    // The form nested by layer type.
    assert_eq!(
        theta(
            json!({"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 4e5}}})
        ),
        400_000.0
    );
    // A non-null rope_scaling replaces rope_parameters; a null one does not.
    let both = json!({
        "rope_parameters": {"rope_type": "default", "rope_theta": 5e5},
        "rope_scaling": {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 40},
    });
    let c = parse(&tiny(both)).unwrap();
    assert_eq!(
        (c.config.rope_theta, c.rope_factors.is_some()),
        (10_000.0, true)
    );
    let null = json!({"rope_scaling": null, "rope_parameters": {"rope_theta": 5e5}});
    assert_eq!(theta(null), 500_000.0);
    // Llama 3's original context: the object's, else the top level's, else the model's.
    let l3 = |extra: Value| {
        let mut d = json!({"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0,
                           "low_freq_factor": 1.0, "high_freq_factor": 4.0});
        for (k, x) in extra.as_object().unwrap() {
            d[k] = x.clone();
        }
        d
    };
    let factors = |v: Value| parse(&tiny(v)).unwrap().rope_factors;
    assert_eq!(
        factors(json!({"rope_parameters": l3(json!({}))})),
        Some(llama3_factors(64.0))
    );
    assert_eq!(
        factors(json!({"rope_parameters": l3(json!({})), "original_max_position_embeddings": 40})),
        Some(llama3_factors(40.0))
    );
}

#[test]
fn what_the_engine_does_not_run_is_refused_by_name() {
    let err = |v: Value| parse(&tiny(v)).unwrap_err().to_string();
    for t in ["yarn", "linear", "dynamic", "longrope"] {
        let e = err(json!({"rope_parameters": {"rope_type": t, "rope_theta": 5e5, "factor": 4.0}}));
        assert!(
            e.contains(&format!("rope_parameters has rope_type \"{t}\"")),
            "{e}"
        );
        let e = err(json!({"rope_scaling": {"type": t, "factor": 4.0}}));
        assert!(
            e.contains(&format!("rope_scaling has rope_type \"{t}\"")),
            "{e}"
        );
    }
    let e = err(json!({"partial_rotary_factor": 0.5}));
    assert!(e.contains("partial_rotary_factor is 0.5"), "{e}");
    let e =
        err(json!({"rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.25}}));
    assert!(e.contains("partial_rotary_factor is 0.25"), "{e}");
    let e = err(json!({"rope_parameters": {"rope_type": "llama3", "factor": 8.0}}));
    assert!(
        e.contains("low_freq_factor must be a positive number"),
        "{e}"
    );
}

#[test]
fn a_key_of_the_wrong_type_is_named_with_its_value() {
    let e = parse(&tiny(json!({"hidden_size": "64"}))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "config.json's \"hidden_size\" is \"64\"; it must be a whole number"
    );
    let e = parse(&tiny(json!({"rope_parameters": {"rope_theta": "big"}}))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "config.json's \"rope_parameters.rope_theta\" is \"big\"; it must be a number"
    );
    let e = parse(&tiny(json!({"tie_word_embeddings": 1}))).unwrap_err();
    assert!(e.to_string().ends_with("it must be true or false"), "{e}");
    // A list of end tokens reads its first; one outside the vocabulary is refused.
    let c = parse(&tiny(json!({"eos_token_id": [2, 7]}))).unwrap();
    assert_eq!(c.eos, Some(2));
    let e = parse(&tiny(json!({"bos_token_id": 9999}))).unwrap_err();
    assert!(
        e.to_string()
            .contains("not a token id of a vocabulary of 512"),
        "{e}"
    );
}
