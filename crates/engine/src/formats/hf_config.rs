//! `config.json` as transformers writes it, read through one typed struct ([`Raw`], serde,
//! every key optional so that a missing one is named) whatever the generation:
//!
//! - transformers 4 writes the RoPE base at the top level (`rope_theta`) and a scaling, or
//!   null, under `rope_scaling` (`type` in older files, `rope_type` since 4.43);
//! - transformers 5 writes both in one `rope_parameters` object (`rope_theta`,
//!   `rope_type`, and the scaling's numbers), and neither top-level key.
//!
//! The rule is transformers 5's own for reading either (`modeling_rope_utils.py`,
//! `convert_rope_params_to_dict` and `standardize_rope_params`): a non-null `rope_scaling`
//! replaces `rope_parameters`; a form nested by layer type is read at `full_attention`; the
//! type is `rope_type`, else `type`, else "default"; the base is the object's
//! `rope_theta`, else the top-level one, else 10,000 (`default_theta`); Llama 3's
//! `original_max_position_embeddings` is the object's, else the top-level one, else
//! `max_position_embeddings`. "default" is plain RoPE, "llama3" Llama 3's factors; any
//! other type (yarn, linear, dynamic, longrope…) and a `partial_rotary_factor` other than
//! 1 are refused by name. Fixtures written by transformers 4.46, 4.57 and 5.25 themselves:
//! `tests/fixtures/hf-config/` (`scripts/make-hf-configs.py`).

use super::hf::{HfConfig, HfError, MAX_CONFIG_BYTES};
use crate::config::{Config, Llama3Rope};
use serde::Deserialize;
use serde_json::Value;

/// A token id, or a list of them (`eos_token_id: [128001, 128009]`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Ids {
    One(u64),
    Many(Vec<u64>),
}

/// `rope_parameters` (transformers 5) or `rope_scaling` (transformers 4).
#[derive(Debug, Default, Deserialize)]
struct RopeDict {
    rope_type: Option<String>,
    /// The key's name before transformers 4.43.
    #[serde(rename = "type")]
    legacy_type: Option<String>,
    rope_theta: Option<f64>,
    factor: Option<f64>,
    low_freq_factor: Option<f64>,
    high_freq_factor: Option<f64>,
    original_max_position_embeddings: Option<f64>,
    partial_rotary_factor: Option<f64>,
    /// The form nested by layer type (`{"full_attention": {…}}`).
    full_attention: Option<Box<RopeDict>>,
}

/// The keys of `LlamaConfig` / `Qwen2Config` this engine reads; any other is ignored.
#[derive(Debug, Deserialize)]
struct Raw {
    architectures: Option<Vec<String>>,
    model_type: Option<String>,
    hidden_size: Option<u64>,
    intermediate_size: Option<u64>,
    num_hidden_layers: Option<u64>,
    num_attention_heads: Option<u64>,
    num_key_value_heads: Option<u64>,
    vocab_size: Option<u64>,
    max_position_embeddings: Option<u64>,
    rms_norm_eps: Option<f64>,
    rope_theta: Option<f64>,
    rope_scaling: Option<RopeDict>,
    rope_parameters: Option<RopeDict>,
    partial_rotary_factor: Option<f64>,
    original_max_position_embeddings: Option<f64>,
    tie_word_embeddings: Option<bool>,
    hidden_act: Option<String>,
    attention_bias: Option<bool>,
    mlp_bias: Option<bool>,
    use_sliding_window: Option<bool>,
    head_dim: Option<u64>,
    bos_token_id: Option<Ids>,
    eos_token_id: Option<Ids>,
    #[serde(rename = "_name_or_path")]
    name_or_path: Option<String>,
}

impl HfConfig {
    pub fn parse(bytes: &[u8]) -> Result<HfConfig, HfError> {
        if bytes.len() > MAX_CONFIG_BYTES {
            return Err(HfError::ConfigTooLarge {
                bytes: bytes.len() as u64,
                limit: MAX_CONFIG_BYTES,
            });
        }
        let v: Value =
            serde_json::from_slice(bytes).map_err(|e| HfError::ConfigJson(e.to_string()))?;
        if !v.is_object() {
            return Err(HfError::ConfigJson("the top level is not an object".into()));
        }
        let raw: Raw = serde_path_to_error::deserialize(&v).map_err(|e| wrong_type(&v, e))?;
        raw.read()
    }
}

/// A key of the wrong type, named with its value and what it must be.
fn wrong_type(v: &Value, e: serde_path_to_error::Error<serde_json::Error>) -> HfError {
    let key = e.path().to_string();
    let pointer = format!("/{}", key.replace('.', "/"));
    let value = v
        .pointer(&pointer)
        .map_or_else(|| "?".into(), Value::to_string);
    let inner = e.into_inner().to_string();
    let expected = inner.rsplit_once("expected ").map_or("", |(_, x)| x);
    let why = match expected {
        "u64" => "it must be a whole number".to_string(),
        "f64" => "it must be a number".to_string(),
        "a boolean" => "it must be true or false".to_string(),
        "a string" => "it must be a string".to_string(),
        _ => inner,
    };
    HfError::Value { key, value, why }
}

impl Raw {
    fn read(self) -> Result<HfConfig, HfError> {
        let architecture = self.architecture()?;
        let config = self.config()?;
        self.refuse_unsupported(&config)?;
        let (theta, llama3) = self.rope()?;
        let config = config
            .with_norms(theta, self.rms_norm_eps.unwrap_or(1e-6))
            .map_err(HfError::from)?;
        let rope_factors = llama3
            .map(|r| r.factors(config.head_size(), config.rope_theta))
            .map(|f| match f.iter().all(|x| (1e-3..=1e6).contains(x)) {
                true => Ok(f),
                false => Err(HfError::Unsupported(format!(
                    "the RoPE scaling gives factors {f:?}; they must be in [0.001, 1e6]"
                ))),
            })
            .transpose()?;
        let vocab = config.vocab_size;
        Ok(HfConfig {
            trained_context: self.max_position_embeddings.unwrap_or_default(),
            qkv_bias: architecture == "Qwen2ForCausalLM",
            rope_factors,
            config,
            bos: id("bos_token_id", &self.bos_token_id, vocab)?,
            eos: id("eos_token_id", &self.eos_token_id, vocab)?,
            architecture,
            name: self
                .name_or_path
                .filter(|n| !n.is_empty() && n.len() <= 200),
        })
    }

    /// `architectures[0]`, checked to be a Llama or a Qwen2 (or, without it, the one
    /// `model_type` "llama" or "qwen2" names).
    fn architecture(&self) -> Result<String, HfError> {
        let named = self.architectures.as_ref().and_then(|a| a.first());
        match (named.map(String::as_str), self.model_type.as_deref()) {
            (Some(a @ ("LlamaForCausalLM" | "Qwen2ForCausalLM")), _) => Ok(a.into()),
            (Some(a), _) => Err(HfError::Architecture(a.into())),
            (None, Some("llama")) => Ok("LlamaForCausalLM".into()),
            (None, Some("qwen2")) => Ok("Qwen2ForCausalLM".into()),
            (None, Some(t)) => Err(HfError::Architecture(format!("model_type {t:?}"))),
            (None, None) => Err(HfError::Architecture(
                "no architecture (neither \"architectures\" nor \"model_type\")".into(),
            )),
        }
    }

    /// The model's shape (its norms are set by `read`).
    fn config(&self) -> Result<Config, HfError> {
        let heads = int("num_attention_heads", self.num_attention_heads)?;
        let vocab = int("vocab_size", self.vocab_size)?;
        let header = [
            int("hidden_size", self.hidden_size)?,
            int("intermediate_size", self.intermediate_size)?,
            int("num_hidden_layers", self.num_hidden_layers)?,
            heads,
            int(
                "num_key_value_heads",
                self.num_key_value_heads.or(Some(heads.max(0) as u64)),
            )?,
            match self.tie_word_embeddings.unwrap_or(false) {
                true => vocab,
                false => vocab.saturating_neg(),
            },
            int("max_position_embeddings", self.max_position_embeddings)?
                .min(crate::config::MAX_RUN_CONTEXT),
        ];
        Ok(Config::from_header(header)?)
    }

    /// What this engine does not run, refused by name.
    fn refuse_unsupported(&self, config: &Config) -> Result<(), HfError> {
        let refuse = |what: String| Err(HfError::Unsupported(what));
        if let Some(a) = self.hidden_act.as_deref().filter(|a| *a != "silu") {
            return refuse(format!(
                "hidden_act is {a:?}; this engine runs SwiGLU with silu only"
            ));
        }
        for (key, on) in [
            ("attention_bias", self.attention_bias),
            ("mlp_bias", self.mlp_bias),
            ("use_sliding_window", self.use_sliding_window),
        ] {
            if on == Some(true) {
                return refuse(format!(
                    "{key} is true; this engine runs no biases but Qwen2's on Q, K and V, and full attention"
                ));
            }
        }
        match self.head_dim {
            Some(h) if h != config.head_size() as u64 => refuse(format!(
                "head_dim is {h}; this engine runs head_dim = hidden_size / num_attention_heads = {}",
                config.head_size()
            )),
            _ => Ok(()),
        }
    }

    /// The RoPE base, and Llama 3's scaling if the file asks for it (the module's rule).
    fn rope(&self) -> Result<(f64, Option<Llama3Rope>), HfError> {
        let none = RopeDict::default();
        let (key, dict) = match (&self.rope_scaling, &self.rope_parameters) {
            (Some(s), _) => ("rope_scaling", s),
            (None, Some(p)) => ("rope_parameters", p),
            (None, None) => ("rope_parameters", &none),
        };
        let dict = dict.full_attention.as_deref().unwrap_or(dict);
        let theta = dict.rope_theta.or(self.rope_theta).unwrap_or(10_000.0);
        if let Some(p) = dict
            .partial_rotary_factor
            .or(self.partial_rotary_factor)
            .filter(|p| *p != 1.0)
        {
            return Err(HfError::Unsupported(format!(
                "partial_rotary_factor is {p}; this engine rotates the whole head (1.0)"
            )));
        }
        let kind = dict.rope_type.as_deref().or(dict.legacy_type.as_deref());
        match kind.unwrap_or("default") {
            "default" => Ok((theta, None)),
            "llama3" => self.llama3(key, dict).map(|r| (theta, Some(r))),
            other => Err(HfError::Unsupported(format!(
                "{key} has rope_type {other:?}; this engine runs plain RoPE (\"default\") and Llama 3's (\"llama3\") only"
            ))),
        }
    }

    /// Llama 3's four numbers, each positive, high_freq_factor above low_freq_factor.
    fn llama3(&self, key: &str, d: &RopeDict) -> Result<Llama3Rope, HfError> {
        let bad = |why: String| {
            HfError::Value {
            key: key.to_string(),
            value: format!(
                "{{factor: {:?}, low_freq_factor: {:?}, high_freq_factor: {:?}, original_max_position_embeddings: {:?}}}",
                d.factor, d.low_freq_factor, d.high_freq_factor, d.original_max_position_embeddings
            ),
            why,
        }
        };
        let num = |name: &str, x: Option<f64>| {
            x.filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| bad(format!("its {name} must be a positive number")))
        };
        let original = d
            .original_max_position_embeddings
            .or(self.original_max_position_embeddings)
            .or(self.max_position_embeddings.map(|n| n as f64));
        let r = Llama3Rope {
            factor: num("factor", d.factor)?,
            low_freq_factor: num("low_freq_factor", d.low_freq_factor)?,
            high_freq_factor: num("high_freq_factor", d.high_freq_factor)?,
            original_max_position_embeddings: num("original_max_position_embeddings", original)?,
        };
        if r.high_freq_factor <= r.low_freq_factor {
            return Err(bad(
                "its high_freq_factor must be above its low_freq_factor".into(),
            ));
        }
        Ok(r)
    }
}

/// A whole number that fits an i32, or the key named as missing.
fn int(key: &'static str, v: Option<u64>) -> Result<i32, HfError> {
    let n = v.ok_or(HfError::Missing(key))?;
    i32::try_from(n).map_err(|_| HfError::Value {
        key: key.into(),
        value: n.to_string(),
        why: "it is too large".into(),
    })
}

/// A token id (the first when a list) of a vocabulary of `vocab`.
fn id(key: &str, v: &Option<Ids>, vocab: usize) -> Result<Option<u32>, HfError> {
    let first = match v {
        None => return Ok(None),
        Some(Ids::One(i)) => Some(*i),
        Some(Ids::Many(l)) => l.first().copied(),
    };
    match first {
        None => Ok(None),
        Some(i) if (i as usize) < vocab => Ok(Some(i as u32)),
        Some(i) => Err(HfError::Value {
            key: key.into(),
            value: i.to_string(),
            why: format!("it is not a token id of a vocabulary of {vocab}"),
        }),
    }
}

#[cfg(test)]
#[path = "hf_config_tests.rs"]
mod tests;
