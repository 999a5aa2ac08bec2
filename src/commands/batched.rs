//! `batched-bench` (llama.cpp's `batched-bench` table: prefill and decode throughput per
//! batch size, with the FLOPs and bytes each pass needs and what that achieves) and
//! `serve-sim` (a seeded trace of requests through B slots, continuous or static batching).

use crate::error::CliError;
use crate::files::ModelFiles;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::serving::batching::{simulate, throughput, trace, Policy, Throughput};
use decoding_engine::serving::roofline::{self, Bound};
use decoding_engine::units::human_bytes;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BatchedArgs {
    /// Batch sizes: sequences run together
    #[arg(long, default_value = "1,2,4,8,16")]
    batch: String,
    /// Prompt tokens of each sequence (its prefill)
    #[arg(long, default_value_t = 64)]
    prompt_tokens: usize,
    /// Tokens each sequence then decodes, one a pass for all
    #[arg(long, default_value_t = 32)]
    gen_tokens: usize,
    /// Seeded random weights of this shape instead of the model files
    #[arg(long, value_name = "SHAPE")]
    random_weights: Option<String>,
    /// The bandwidth probe's matrix, MiB (default: the size of the model's weights, at most
    /// 256 MiB, so the probe reads from where the decode reads)
    #[arg(long)]
    peak_buffer_mib: Option<usize>,
    #[arg(long)]
    json: bool,
}

fn sizes(s: &str) -> Result<Vec<usize>, CliError> {
    s.split(',')
        .map(|p| match p.trim().parse::<usize>() {
            Ok(b) if (1..=256).contains(&b) => Ok(b),
            _ => Err(CliError::Usage(format!(
                "--batch {s:?}: sizes 1 to 256, comma-separated"
            ))),
        })
        .collect()
}

/// A row of the table with where it lands on the machine's roofline.
#[derive(serde::Serialize)]
struct Row {
    #[serde(flatten)]
    t: Throughput,
    prefill_gflops: f64,
    prefill_gbytes_per_s: f64,
    prefill_intensity: f64,
    /// achieved / the roof at this intensity
    prefill_of_roof: f64,
    prefill_bound: Bound,
    decode_gflops: f64,
    decode_gbytes_per_s: f64,
    decode_intensity: f64,
    decode_of_roof: f64,
    decode_bound: Bound,
}

impl Row {
    /// A batch size's throughput placed under the machine's roof.
    fn new(t: Throughput, roof: &roofline::Roof) -> Row {
        let (pf, pb) = t.prefill_rates();
        let (df, db) = t.decode_rates();
        let (pi, di) = (t.prefill.intensity(), t.decode.intensity());
        Row {
            prefill_gflops: pf / 1e9,
            prefill_gbytes_per_s: pb / 1e9,
            prefill_intensity: pi,
            prefill_of_roof: pf / roof.attainable(pi),
            prefill_bound: roof.bound(pi),
            decode_gflops: df / 1e9,
            decode_gbytes_per_s: db / 1e9,
            decode_intensity: di,
            decode_of_roof: df / roof.attainable(di),
            decode_bound: roof.bound(di),
            t,
        }
    }
}

/// The machine's peaks, then a Markdown row per batch size.
fn print_table(
    name: &str,
    backend: &str,
    weight_bytes: u64,
    peaks: &roofline::Peaks,
    rows: &[Row],
) -> Result<(), CliError> {
    let roof = &peaks.roof;
    outln!(
        "model {name}, backend {backend}, {} thread(s); weights {}",
        decoding_engine::par::thread_count(),
        human_bytes(weight_bytes)
    );
    outln!(
        "machine peaks (measured by this program on {} thread(s) and on one, the faster): read {:.1} GB/s over {}, multiply-add {:.1} GFLOP/s; ridge {:.1} FLOP/byte",
        peaks.threads,
        roof.bytes_per_s / 1e9,
        human_bytes(peaks.buffer_bytes),
        roof.flops / 1e9,
        roof.ridge()
    );
    outln!(
        "|    B |   PP |   TG | prefill tok/s | decode tok/s | prefill GFLOP/s | GB/s | FLOP/B | of roof | decode GFLOP/s | GB/s | FLOP/B | of roof | decode bound |"
    );
    outln!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let over = rows
        .iter()
        .any(|r| r.prefill_of_roof > 1.0 || r.decode_of_roof > 1.0);
    for r in rows {
        outln!(
            "| {:>4} | {:>4} | {:>4} | {:>13.1} | {:>12.1} | {:>15.2} | {:>4.1} | {:>6.1} | {:>6.0} % | {:>14.2} | {:>4.1} | {:>6.2} | {:>6.0} % | {:?} |",
            r.t.batch, r.t.prompt_tokens, r.t.gen_tokens, r.t.prefill_tokens_per_s, r.t.decode_tokens_per_s,
            r.prefill_gflops, r.prefill_gbytes_per_s, r.prefill_intensity, 100.0 * r.prefill_of_roof,
            r.decode_gflops, r.decode_gbytes_per_s, r.decode_intensity, 100.0 * r.decode_of_roof,
            r.decode_bound
        );
    }
    if over {
        outln!("A point above 100 % of its roof means the roof was under-measured (a busy machine during the probe): rerun.");
    }
    Ok(())
}

pub fn batched_bench(
    files: &ModelFiles,
    choice: BackendChoice,
    a: BatchedArgs,
) -> Result<(), CliError> {
    let (name, t) = super::bench::load_model(files, a.random_weights.as_deref())?;
    let c = t.config;
    let (p, g) = (a.prompt_tokens, a.gen_tokens);
    if p == 0 || g == 0 || p + g > c.seq_len {
        return Err(CliError::Usage(format!(
            "--prompt-tokens and --gen-tokens must be at least 1 and fit the context of {} together",
            c.seq_len
        )));
    }
    if a.peak_buffer_mib.is_some_and(|m| !(1..=4096).contains(&m)) {
        return Err(CliError::Usage(
            "--peak-buffer-mib: 1 to 4,096 (MiB)".into(),
        ));
    }
    let batches = sizes(&a.batch)?;
    let most = batches.iter().copied().max().unwrap_or(1);
    crate::files::check_sequences(&c, most, files.budget, "--batch")?;
    let weight_bytes = t.weights.bytes(&c);
    let start = Instant::now();
    let now = move || start.elapsed().as_secs_f64() * 1000.0;
    // The machine's ceilings, measured by this program with its own kernels before and
    // after the runs (the better of the two): the bandwidth over a matrix the size of the
    // weights (where decode reads).
    let probe = a
        .peak_buffer_mib
        .map_or((weight_bytes as usize).clamp(1 << 20, 256 << 20), |m| {
            m << 20
        });
    let before = roofline::measure(probe, c.dim, 5, &now);
    let mut engine = crate::files::open(&t, choice)?;
    let mut runs = Vec::new();
    for b in batches {
        let t = pollster::block_on(throughput(&mut engine, b, p, g, weight_bytes, &now))
            .map_err(|e| CliError::Usage(e.to_string()))?;
        runs.push(t);
    }
    let peaks = before.best(roofline::measure(probe, c.dim, 5, &now));
    let roof = peaks.roof;
    let rows: Vec<Row> = runs.into_iter().map(|t| Row::new(t, &roof)).collect();
    let backend = engine.report.kind.to_string();
    if a.json {
        let v = serde_json::json!({ "model": name, "config": c, "backend": backend, "peaks": peaks, "ridge": roof.ridge(), "rows": rows });
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| CliError::Usage(e.to_string()))?
        );
        return Ok(());
    }
    print_table(&name, &backend, weight_bytes, &peaks, &rows)?;
    Ok(())
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The trace's seed (arrivals, prompt and output lengths, each request's sampling seed)
    #[arg(long, default_value_t = 1)]
    trace: u64,
    /// Requests in the trace
    #[arg(long, default_value_t = 24)]
    requests: usize,
    /// Slots: requests run together
    #[arg(long, default_value_t = 4)]
    slots: usize,
    /// continuous (admit into free slots at every step) or static (a new batch when the
    /// last one has finished)
    #[arg(long, value_enum, default_value_t = Policy::Continuous)]
    policy: Policy,
    /// Longest prompt and longest output of a request
    #[arg(long, default_value_t = 24)]
    max_prompt: usize,
    #[arg(long, default_value_t = 48)]
    max_new: usize,
    /// Mean steps between arrivals
    #[arg(long, default_value_t = 2.0)]
    mean_gap: f64,
    #[command(flatten)]
    knobs: crate::knobs::KnobArgs,
    #[arg(long)]
    json: bool,
}

pub fn serve_sim(
    model: &decoding_engine::Model,
    choice: BackendChoice,
    a: ServeArgs,
    budget: decoding_engine::budget::Budget,
) -> Result<(), CliError> {
    let policy = a.policy;
    if a.requests == 0 || a.requests > 10_000 || a.slots == 0 || a.slots > 256 {
        return Err(CliError::Usage(
            "--requests 1–10,000 and --slots 1–256".into(),
        ));
    }
    if !a.mean_gap.is_finite() || a.mean_gap < 0.0 || a.mean_gap > 1e6 {
        return Err(CliError::Usage(
            "--mean-gap: a number of steps from 0 to 1,000,000".into(),
        ));
    }
    let c = *model.config();
    crate::files::check_sequences(&c, a.slots, budget, "--slots")?;
    if a.max_prompt < 2 || a.max_new < 1 || a.max_prompt + a.max_new > c.seq_len {
        return Err(CliError::Usage(format!(
            "--max-prompt (≥ 2) and --max-new (≥ 1) must fit the context of {} together",
            c.seq_len
        )));
    }
    let settings = a.knobs.raw.validate(c.vocab_size)?;
    let reqs = trace(
        a.trace,
        a.requests,
        c.vocab_size,
        a.max_prompt,
        a.max_new,
        a.mean_gap,
    );
    let mut engine = crate::files::open(&model.transformer, choice)?;
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64() * 1000.0;
    let ends = [model.tokenizer.eos, model.tokenizer.bos];
    let r = pollster::block_on(simulate(
        &mut engine,
        &settings,
        &reqs,
        a.slots,
        policy,
        &ends,
        &clock,
    ))
    .map_err(|e| CliError::Usage(e.to_string()))?;
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&r).map_err(|e| CliError::Usage(e.to_string()))?
        );
        return Ok(());
    }
    outln!("| request | arrival | prompt | tokens | admitted | first token (step) | finished (step) | time to first token ms | total ms |");
    outln!("|---|---|---|---|---|---|---|---|---|");
    for s in &r.served {
        outln!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} |",
            s.id,
            s.arrival,
            reqs[s.id].prompt.len(),
            s.tokens.len(),
            s.admitted,
            s.first_token,
            s.finished,
            s.first_token_ms,
            s.total_ms
        );
    }
    let secs = r.wall_ms / 1000.0;
    outln!(
        "{:?}, {} slots: {} tokens in {} passes over {} steps, {:.1} tokens a pass, occupancy {:.0} %, {:.1} tokens/s; mean time to first token {:.2} ms",
        r.policy, r.slots, r.tokens, r.passes, r.steps, r.tokens as f64 / r.passes.max(1) as f64,
        100.0 * r.occupancy, r.tokens as f64 / secs.max(1e-9),
        r.served.iter().map(|s| s.first_token_ms).sum::<f64>() / r.served.len().max(1) as f64
    );
    Ok(())
}
