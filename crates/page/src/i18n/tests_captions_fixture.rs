//! Views made by hand for the captions' tests: every step's caption can be drawn from them,
//! in two variants whose numbers take the captions' branches apart (`bold`: each claim
//! holds; otherwise each caption says what was measured and why the claim does not show).

use crate::i18n::Lang;
use crate::lesson::{Live, Step};
use crate::page::{self, PageState};
use crate::protocol::*;
use decoding_engine::decode::generation::{Step as Token, StopReason};
use decoding_engine::decode::sampling::Settings;
use decoding_engine::decode::speculative::{Draft, Rule};
use decoding_engine::forward::kv_cache::CacheBytes;
use decoding_engine::serving::batching::Throughput;
use decoding_engine::serving::cost::PassCost;
use decoding_engine::{Config, Precision};

/// Tokens of the model's vocabulary (its pieces are `w0`, `w1`, …).
const VOCAB: usize = 24;

pub(super) struct Fixture {
    info: ModelInfo,
    page: PageState,
    transcript: TranscriptView,
    trace: TraceView,
    beam: BeamView,
    toy: TraceView,
    toy_logits: Vec<f64>,
    cache_rows: Vec<CompareRow>,
    columns: ColumnsView,
    spec: SpecView,
    quant: QuantView,
    regime: SweepView,
    batching: SweepView,
}

fn token(id: u32, p: f64, kept: usize) -> Token {
    Token {
        token: id,
        piece: format!("w{id}"),
        prob: p,
        model_prob: p,
        rank: 1,
        kept,
        coin: None,
        top: vec![],
        state: Default::default(),
        cuts: vec![],
    }
}

/// A column of `ids`, each drawn with probability `p`, the chain keeping `kept(i)` tokens.
fn column(ids: &[u32], p: f64, kept: impl Fn(usize) -> usize) -> ColumnView {
    ColumnView {
        settings: Settings::default(),
        steps: ids
            .iter()
            .enumerate()
            .map(|(i, &id)| token(id, p, kept(i)))
            .collect(),
        text: String::new(),
        // Stopped: no step waits for more tokens.
        stop: Some(StopReason::MaxTokens { max: ids.len() }),
        top: vec![],
        kept: 1,
        entropy: 0.0,
        next: None,
        logprob: ids.len() as f64 * p.ln(),
    }
}

/// `n` tokens repeating a 3-token phrase, or none repeating.
fn ids(n: usize, looping: bool) -> Vec<u32> {
    (0..n as u32)
        .map(|i| if looping { 1 + i % 3 } else { i % VOCAB as u32 })
        .collect()
}

fn info() -> ModelInfo {
    ModelInfo {
        name: "fixture".into(),
        config: Config {
            dim: 64,
            hidden_dim: 172,
            n_layers: 5,
            n_heads: 8,
            n_kv_heads: 4,
            vocab_size: VOCAB,
            seq_len: 512,
            shared_classifier: true,
            rope_theta: Config::LLAMA2C_ROPE_THETA,
            rms_eps: Config::LLAMA2C_RMS_EPS,
        },
        params: 260_032,
        pieces: (0..VOCAB).map(|i| format!("w{i}")).collect(),
        format: decoding_engine::model::Format::Llama2c,
        architecture: "llama".into(),
        tensor_types: None,
        precision: Default::default(),
        extras: vec![],
        trained_context: None,
        chat_template: false,
        link: None,
        add_bos: true,
    }
}

fn beam(bold: bool) -> BeamView {
    BeamView {
        reset: false,
        base: 0,
        node_count: 0,
        changed: vec![],
        finished: vec![],
        depth: 12,
        done: true,
        width: 3,
        greedy_tokens: vec![],
        greedy_text: String::new(),
        greedy_logprob: -10.5,
        greedy_cum: vec![],
        best_logprob: if bold { -8.25 } else { -10.5 },
        best_text: String::new(),
        best_node: None,
    }
}

fn spec() -> SpecView {
    SpecView {
        draft: Draft::Quant(Precision::Q8),
        gamma: 4,
        rule: Rule::Rejection,
        greedy: false,
        prompt: vec![],
        tokens: vec![],
        last: None,
        cycles: 6,
        target_calls: 6,
        drafted: 24,
        accepted: 20,
        alpha: 0.8125,
        tokens_per_call: 3.5,
        formula: (1.0 - 0.8125f64.powi(5)) / (1.0 - 0.8125),
        spec_ms_per_token: 1.0,
        plain_ms_per_token: 2.0,
    }
}

fn quant(bold: bool) -> QuantView {
    let p = |precision, weight_bytes, decode_ms: f64, kl| PrecisionView {
        precision,
        weight_bytes,
        decode_ms,
        decode_range: (decode_ms * 0.95, decode_ms * 1.05),
        kl,
        kl_f32_activations: None,
        top: 1,
        same_top: true,
    };
    // The loaded model: q8 clearly faster than f32 only in the second variant.
    let q8_ms = if bold { 0.98 } else { 0.5 };
    let ms = |t: f64| (t, t * 0.97, t * 1.03);
    QuantView {
        position: 7,
        precisions: vec![
            p(Precision::F32, 1_040_000, 1.0, 0.0),
            p(Precision::F16, 520_000, 1.1, 1.2e-7),
            p(Precision::Q8, 290_000, q8_ms, 0.00042),
            p(Precision::Q4, 160_000, 0.9, 0.0123),
        ],
        tokens: vec![],
        row: WeightRowView {
            label: "w".into(),
            ..Default::default()
        },
        f32_is_dequantized: false,
        file: None,
        shape: Some(ShapeDecode {
            position: 7,
            weight_bytes: [60_816_384, 30_408_192, 16_153_344, 8_076_672],
            decode_ms: if bold {
                [ms(9.2), ms(14.8), ms(3.1), ms(2.4)]
            } else {
                [ms(9.2), ms(9.4), ms(8.9), ms(9.0)]
            },
        }),
    }
}

/// A sweep of `batches`: decode at `decode(b)` tokens/s, prefill at `prefill`, each row's
/// runs ±`spread` of it.
fn sweep(
    model: SweepModel,
    (prompt_tokens, gen_tokens): (usize, usize),
    batches: &[usize],
    prefill: f64,
    decode: impl Fn(usize) -> f64,
    spread: f64,
) -> SweepView {
    let rows: Vec<Throughput> = batches
        .iter()
        .map(|&b| Throughput {
            batch: b,
            prompt_tokens,
            gen_tokens,
            prefill_ms: 1e3 * prompt_tokens as f64 / prefill,
            decode_ms: 1e3 * gen_tokens as f64 / decode(b),
            prefill_tokens_per_s: prefill,
            decode_tokens_per_s: decode(b),
            prefill: PassCost {
                flops: 6_400_000_000,
                bytes: 100_000_000,
            },
            decode: PassCost {
                flops: 160_000_000,
                bytes: 320_000_000,
            },
        })
        .collect();
    let spread = rows
        .iter()
        .map(|r| SweepSpread {
            batch: r.batch,
            reps: 9,
            prefill: (
                r.prefill_tokens_per_s * (1.0 - spread),
                r.prefill_tokens_per_s * (1.0 + spread),
            ),
            decode: (
                r.decode_tokens_per_s * (1.0 - spread),
                r.decode_tokens_per_s * (1.0 + spread),
            ),
            runs: vec![],
        })
        .collect();
    SweepView {
        model,
        backend: "cpu".into(),
        weight_bytes: 60_816_384,
        peaks: crate::export::figures::tests::peaks(),
        rows,
        spread,
    }
}

impl Fixture {
    pub(super) fn new(bold: bool) -> Fixture {
        let info = info();
        // A flat distribution (a fat tail), or one token far ahead of the rest.
        let logits: Vec<f64> = (0..VOCAB)
            .map(|i| match (bold, i) {
                (false, 3) => 12.0,
                (true, _) => 1.0 - i as f64 * 0.05,
                _ => 0.0,
            })
            .collect();
        let trace = page::chain::toy_trace(&logits, &[], &Settings::default()).unwrap();
        // The toy logits: the lesson's (its 0.84 at T = 0.5 is an error), or a set whose
        // top mass at T = 0.5 is 0.84.
        let toy_logits = if bold {
            vec![2.0, 1.0, 0.1]
        } else {
            vec![2.0, 1.0, 0.551]
        };
        let toy = page::chain::toy_trace(&toy_logits, &[], &Settings::default()).unwrap();
        let (transcript, columns) = transcript_and_columns(bold);
        let cache_rows = vec![CompareRow {
            n: 128,
            cached_ms: if bold { 0.5 } else { 1.0 },
            naive_ms: if bold { 2.0 } else { 1.1 },
            cached_macs: 1_234_567,
            naive_macs: 98_765_432,
            model: None,
        }];
        let regime = if bold {
            sweep(
                SweepModel::Random15M,
                (64, 16),
                &[1],
                2400.0,
                |_| 190.0,
                0.05,
            )
        } else {
            sweep(SweepModel::Random15M, (64, 16), &[1], 230.0, |_| 190.0, 0.2)
        };
        let batching = sweep(
            SweepModel::Loaded,
            (16, 32),
            &[1, 4, 16],
            5000.0,
            |b| {
                if bold {
                    1200.0 * b as f64
                } else {
                    1200.0 + b as f64
                }
            },
            0.05,
        );
        let page = page::from_query("", VOCAB).page;
        Fixture {
            info,
            page,
            transcript,
            trace,
            beam: beam(bold),
            toy,
            toy_logits,
            cache_rows,
            columns,
            spec: spec(),
            quant: quant(bold),
            regime,
            batching,
        }
    }

    /// What the page holds when `step`'s caption is drawn in `lang`.
    pub(super) fn live(&self, step: &Step, lang: Lang) -> Live<'_> {
        Live {
            lang,
            info: Some(&self.info),
            page: Some(&self.page),
            transcript: Some(&self.transcript),
            trace: Some(&self.trace),
            beam: Some(&self.beam),
            toy: Some(&self.toy),
            toy_logits: Some(&self.toy_logits),
            cache_rows: Some(&self.cache_rows),
            columns: Some(&self.columns),
            spec: Some(&self.spec),
            quant: Some(&self.quant),
            sweep: Some(if step.key == "batching" {
                &self.batching
            } else {
                &self.regime
            }),
        }
    }
}

/// The transcript (40 tokens at p̂ 0.99 or 0.2) and the two compared columns.
fn transcript_and_columns(bold: bool) -> (TranscriptView, ColumnsView) {
    let generated = ids(40, bold);
    let beam_p = if bold { 0.99 } else { 0.2 };
    let prompt: Vec<PromptToken> = [0u32, 5, 9]
        .iter()
        .map(|&id| PromptToken {
            id,
            piece: format!("w{id}"),
        })
        .collect();
    let transcript = TranscriptView {
        prompt: prompt.clone(),
        prompt_text: "w5w9".into(),
        generated_text: String::new(),
        steps: generated.iter().map(|&id| token(id, beam_p, 7)).collect(),
        stop: None,
        cache_len: 43,
        cache: CacheBytes {
            used: 0,
            allocated: 0,
        },
        timings: Default::default(),
        memory_bytes: None,
        heap_bytes: None,
        loop_warning: None,
    };
    // Column 0: greedy, looping, top-k's fixed 40 (or 35 to 40); column 1: the other
    // configuration, its top-p set 3 to 30 wide (or 10 to 12).
    let columns = ColumnsView {
        prompt,
        prompt_text: "w5w9".into(),
        columns: vec![
            column(&ids(80, bold), 0.9, |i| if bold { 40 } else { 35 + i % 6 }),
            column(&ids(80, !bold), if bold { 0.2 } else { 0.8 }, |i| {
                if bold {
                    3 + i % 28
                } else {
                    10 + i % 3
                }
            }),
        ],
        differ: vec!["temperature".into()],
    };
    (transcript, columns)
}
