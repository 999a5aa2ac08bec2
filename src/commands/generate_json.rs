//! `generate --json`'s output (the README's "Output for scripts" documents it):
//!
//! - one object: `prompt`, `prompt_tokens`, `seed`, `tokens` (each `id`, `piece` as the
//!   vocabulary writes it, a split UTF-8 character as `<0xE4>`; `logprob`, the model's own
//!   log-probability of it, log-softmax of the raw logits as OpenAI's `logprobs` are; `p`,
//!   its probability in the processed distribution it was drawn from; `rank`, 1 for the
//!   model's most likely; with `--top-logprobs N`, `top_logprobs`: the N most likely tokens
//!   with theirs), `text`, `stop` (`reason` in snake case with its figure, and `message`) and
//!   `timings` (`prompt_tokens`, `prefill_ms`, `generated_tokens`, `decode_ms`,
//!   `decode_tokens_per_second`);
//! - `--stream`: a line `{"event":"start", prompt, prompt_tokens, seed}`, a line
//!   `{"event":"token", …}` as each token is chosen, and a last `{"event":"end", text, stop,
//!   timings}`.

use decoding_engine::decode::generation::{Step, StopReason};
use decoding_engine::Model;
use serde::Serialize;
use serde_json::{json, Value};

/// One of a token's alternatives.
#[derive(Debug, Serialize)]
pub struct Alternative {
    id: u32,
    piece: String,
    logprob: f64,
}

/// One generated token.
#[derive(Debug, Serialize)]
pub struct TokenJson {
    id: u32,
    piece: String,
    logprob: f64,
    p: f64,
    rank: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_logprobs: Option<Vec<Alternative>>,
}

/// What the whole run reports.
pub struct Report<'a> {
    model: &'a Model,
    prompt: String,
    prompt_tokens: Vec<u32>,
    seed: u64,
    top: usize,
    pub tokens: Vec<TokenJson>,
}

/// log-softmax of the logits, in f64 (a log-probability far below f32's smallest
/// probability is still finite).
fn log_softmax(z: &[f32]) -> Vec<f64> {
    let m = z.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x as f64));
    let lse = m + z.iter().map(|&x| (x as f64 - m).exp()).sum::<f64>().ln();
    z.iter().map(|&x| x as f64 - lse).collect()
}

impl TokenJson {
    /// The step's token, its log-probability from `logits` (the ones it was drawn from).
    pub fn of(step: &Step, logits: Option<&[f32]>, r: &Report) -> TokenJson {
        let lp = logits.map(log_softmax);
        let piece = |id: u32| r.model.tokenizer.piece(id).unwrap_or("?").to_string();
        let top_logprobs = (r.top > 0).then(|| {
            let lp = lp.as_deref().unwrap_or_default();
            let mut order: Vec<usize> = (0..lp.len()).collect();
            order.sort_by(|&i, &j| lp[j].total_cmp(&lp[i]).then(i.cmp(&j)));
            order
                .into_iter()
                .take(r.top)
                .map(|i| Alternative {
                    id: i as u32,
                    piece: piece(i as u32),
                    logprob: lp[i],
                })
                .collect()
        });
        TokenJson {
            id: step.token,
            piece: step.piece.clone(),
            logprob: lp
                .as_ref()
                .and_then(|l| l.get(step.token as usize).copied())
                .unwrap_or(step.model_prob.ln()),
            p: step.prob,
            rank: step.rank,
            top_logprobs,
        }
    }

    /// The token as a line of `--stream`.
    pub fn line(&self) -> Value {
        let mut v = json!({ "event": "token" });
        if let (Some(o), Ok(Value::Object(t))) = (v.as_object_mut(), serde_json::to_value(self)) {
            o.extend(t);
        }
        v
    }
}

impl<'a> Report<'a> {
    pub fn new(model: &'a Model, prompt: &str, ids: &[u32], seed: u64, top: usize) -> Self {
        Report {
            model,
            prompt: prompt.to_string(),
            prompt_tokens: ids.to_vec(),
            seed,
            top,
            tokens: Vec::new(),
        }
    }

    /// `--stream`'s first line.
    pub fn start_line(&self) -> Value {
        json!({
            "event": "start",
            "prompt": self.prompt,
            "prompt_tokens": self.prompt_tokens,
            "seed": self.seed,
        })
    }

    /// The last line: the whole object, or `--stream`'s end (`streamed`: the tokens were
    /// printed already).
    pub fn end(
        &self,
        text: &str,
        stop: &StopReason,
        prefill_s: f64,
        decode_s: f64,
        streamed: bool,
    ) -> Value {
        let n = self.tokens.len();
        let mut stop_json = serde_json::to_value(stop).unwrap_or(Value::Null);
        stop_json["message"] = json!(stop.to_string());
        let timings = json!({
            "prompt_tokens": self.prompt_tokens.len(),
            "prefill_ms": prefill_s * 1e3,
            "generated_tokens": n,
            "decode_ms": decode_s * 1e3,
            "decode_tokens_per_second": if decode_s > 0.0 { n as f64 / decode_s } else { 0.0 },
        });
        if streamed {
            return json!({ "event": "end", "text": text, "stop": stop_json, "timings": timings });
        }
        json!({
            "prompt": self.prompt,
            "prompt_tokens": self.prompt_tokens,
            "seed": self.seed,
            "tokens": self.tokens,
            "text": text,
            "stop": stop_json,
            "timings": timings,
        })
    }
}
