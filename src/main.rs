//! `decoding-explorer`, the native command line on the same engine the page runs: generate
//! text, print the processed next-token distribution with every stage, process hand-typed
//! logits, run beam search, tokenize, benchmark. Errors go to stderr with a non-zero exit code
//! and no backtrace.

mod batched;
mod bench;
mod error;
mod knobs;
mod probe;

use clap::{Parser, Subcommand};
use decoding_engine::beam::{beam_search, score_continuation, BeamConfig};
use decoding_engine::budget::Budget;
use decoding_engine::generation::{Generation, StepOutcome, StopReason};
use decoding_engine::llama2c::Checkpoint;
use decoding_engine::quality::{compare, Quality, EVAL_TEXT};
use decoding_engine::sampling::chain::process_f64;
use decoding_engine::sampling::settings::BEAM_DEFAULTS;
use decoding_engine::sampling::Knob;
use decoding_engine::sampling::{process, step_coin, History, Settings, Strategy, Trace};
use decoding_engine::units::{human_bytes, thousands};
use decoding_engine::{Backend, Model, Precision};
use decoding_gpu::{open_backend, BackendChoice, Engine};
use error::CliError;
use knobs::{BeamKnobArgs, KnobArgs};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const DEFAULT_MODEL: &str = "assets/models/stories260K/stories260K.bin";
const DEFAULT_TOKENIZER: &str = "assets/models/stories260K/tok512.bin";

#[derive(Parser, Debug)]
#[command(
    name = "decoding-explorer",
    version,
    about = "Run a Llama model (llama2.c, GGUF or Hugging Face safetensors) and look at how it decodes"
)]
struct Cli {
    /// Model: a llama2.c checkpoint (.bin, its tokenizer from --tokenizer), a GGUF file
    /// (tokenizer inside) or a Hugging Face model.safetensors (config.json and
    /// tokenizer.json beside it) (default: the stories260K model set up in assets/)
    #[arg(long, global = true, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Tokenizer: llama2.c tokenizer.bin or Hugging Face tokenizer.json (for a
    /// .safetensors model, instead of the tokenizer.json beside it)
    #[arg(long, global = true, value_name = "PATH")]
    tokenizer: Option<PathBuf>,
    /// Worker threads for the CPU backend (default: all cores)
    #[arg(long, global = true)]
    threads: Option<usize>,
    /// Memory a model may take, in GiB (weights, one sequence's KV cache, run state),
    /// checked from the header before loading (default 16)
    #[arg(long, global = true, value_name = "GIB", allow_hyphen_values = true)]
    memory_limit: Option<String>,
    /// cpu, gpu (WebGPU through wgpu: Vulkan natively) or auto (the GPU when there is one)
    #[arg(long, global = true, default_value = "cpu")]
    backend: String,
    /// Weights as f32, q8 (int8, a scale per group of 64, llama2.c's Q8_0) or q4 (4 bits,
    /// a scale per 32, GGML's Q4_0), quantized in memory (default: the file's own: f32 for
    /// a legacy file, q8 for a version-2 one)
    #[arg(long, global = true, value_name = "f32|q8|q4")]
    precision: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the prompt followed by generated text, streaming
    Generate(GenerateArgs),
    /// Print the next-token distribution after a prompt, through the sampling chain
    Next(NextArgs),
    /// Process hand-typed logits through the sampling chain (no model)
    Sample(SampleArgs),
    /// Beam search: finished sequences with scores, and the whole tree
    Beam(BeamArgs),
    /// Print the token ids and pieces of a text
    Tokenize(TokenizeArgs),
    /// Measure prefill and decode speed
    Bench(bench::BenchArgs),
    /// Write the model as a llama2.c version-2 (Q8_0) file, as export.py --version 2 does
    Quantize(QuantizeArgs),
    /// Speculative decoding: a draft proposes tokens, the model verifies them in one pass
    Speculate(SpeculateArgs),
    /// Prefill and decode throughput per batch size, with FLOPs and bytes per pass
    BatchedBench(batched::BatchedArgs),
    /// A seeded trace of requests through B slots: continuous or static batching
    ServeSim(batched::ServeArgs),
    /// What quantization costs: weight bytes, and over a fixed text the KL divergence from
    /// f32, the same top token and perplexity of q8 and q4
    Quality(QualityArgs),
}

#[derive(clap::Args, Debug)]
struct SpeculateArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    /// quant:q8, quant:q4 (the model's weights quantized), exit:K (its first K layers) or
    /// ngram:N (prompt lookup on the last N tokens)
    #[arg(long, default_value = "quant:q8")]
    draft: String,
    /// Tokens drafted a cycle (1–16)
    #[arg(long, default_value_t = 4)]
    gamma: usize,
    /// rejection (accept with min(1, p/q), resample the residual) or match (keep drafts
    /// equal to the model's own seeded token: plain decoding's text)
    #[arg(long, default_value = "rejection")]
    rule: String,
    #[command(flatten)]
    knobs: KnobArgs,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct QuantizeArgs {
    /// Where to write the version-2 file
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
struct QualityArgs {
    /// Text to evaluate on (default: the stories kept in the repository for this)
    #[arg(long, value_name = "FILE")]
    text: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct GenerateArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    #[command(flatten)]
    knobs: KnobArgs,
}

#[derive(clap::Args, Debug)]
struct NextArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    /// How many of the most likely tokens to print
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Also show inside the prompt's last step: `attention` (its query's weights over the
    /// cache, per layer and head) and/or `lens` (the raw logit lens, layer by position)
    #[arg(long, value_enum, value_delimiter = ',')]
    probe: Vec<ProbeKind>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    knobs: KnobArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ProbeKind {
    Attention,
    Lens,
}

#[derive(clap::Args, Debug)]
struct SampleArgs {
    /// Comma-separated logits, e.g. "2,1,0.1" (the lesson's example)
    #[arg(long, allow_hyphen_values = true)]
    logits: String,
    /// Token ids generated so far (all penalties see them), comma-separated
    #[arg(long, default_value = "")]
    history: String,
    /// Prompt token ids (seen by penalties whose profile includes the prompt)
    #[arg(long, default_value = "")]
    prompt_history: String,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    knobs: KnobArgs,
}

#[derive(clap::Args, Debug)]
struct BeamArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    knobs: BeamKnobArgs,
}

#[derive(clap::Args, Debug)]
struct TokenizeArgs {
    text: String,
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Mesa's Vulkan drivers warn on stderr when XDG_RUNTIME_DIR is unset (as in containers
    // and CI); give them a private one so user-facing output stays clean. Set before any
    // thread exists.
    if cli.backend != "cpu" && std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join(format!("decoding-explorer-{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_ok() {
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    if cli.threads == Some(0) {
        return Err(CliError::Usage("--threads must be at least 1".into()));
    }
    decoding_engine::par::set_threads(cli.threads).map_err(CliError::Usage)?;
    // Everything runs on the engine's worker pool, so each forward pass starts on a warm
    // worker instead of handing off from this thread.
    decoding_engine::par::install(|| dispatch(cli))
}

/// `--memory-limit` in GiB: a finite number > 0 (no silent clamping).
fn parse_budget(gib: Option<&str>) -> Result<Budget, CliError> {
    let Some(text) = gib else {
        return Ok(Budget::default());
    };
    match text.trim().parse::<f64>() {
        Ok(g) if g.is_finite() && g > 0.0 && g <= 1e9 => {
            Ok(Budget((g * (1u64 << 30) as f64) as u64))
        }
        _ => Err(CliError::Usage(format!(
            "--memory-limit {text:?}: give a number of GiB above 0"
        ))),
    }
}

fn dispatch(cli: Cli) -> Result<(), CliError> {
    let precision = cli
        .precision
        .as_deref()
        .map(Precision::parse)
        .transpose()
        .map_err(|e| CliError::Usage(format!("--precision: {e}")))?;
    let files = ModelFiles {
        model: cli.model,
        tokenizer: cli.tokenizer,
        budget: parse_budget(cli.memory_limit.as_deref())?,
        precision,
    };
    let choice = BackendChoice::parse(&cli.backend).ok_or_else(|| {
        CliError::Usage(format!(
            "--backend {:?}: choose cpu, gpu or auto",
            cli.backend
        ))
    })?;
    match cli.command {
        Command::Generate(a) => generate(&files.load()?, choice, a),
        Command::Next(a) => next(&files.load()?, choice, a),
        Command::Sample(a) => sample(a),
        Command::Beam(a) => beam(&files.load()?, choice, a),
        Command::Tokenize(a) => tokenize(&files.load()?, a),
        Command::Bench(a) => bench::run(&files, choice, a),
        Command::Quantize(a) => quantize(&files.load()?, a),
        Command::Speculate(a) => speculate(&files.load()?, choice, a),
        Command::BatchedBench(a) => batched::batched_bench(&files, choice, a),
        Command::ServeSim(a) => batched::serve_sim(&files.load()?, choice, a),
        Command::Quality(a) => quality(&files.load()?, a),
    }
}

/// Opens the chosen backend for `model`; says on stderr which one runs unless it is the CPU
/// by choice.
pub fn open(
    model: &std::sync::Arc<decoding_engine::Transformer>,
    choice: BackendChoice,
) -> Result<Engine, CliError> {
    let start = std::time::Instant::now();
    let now = || start.elapsed().as_secs_f64() * 1000.0;
    let (backend, report) = pollster::block_on(open_backend(choice, model, &now))
        .map_err(|e| CliError::Usage(e.to_string()))?;
    if choice != BackendChoice::Cpu {
        eprintln!("backend: {} ({})", report.kind, report.reason);
    }
    Ok(Engine::new(model.clone(), backend, report))
}

/// Where the model and tokenizer come from.
pub struct ModelFiles {
    model: Option<PathBuf>,
    tokenizer: Option<PathBuf>,
    budget: Budget,
    /// `--precision`: the matrices requantized after loading
    pub precision: Option<Precision>,
}

impl ModelFiles {
    /// A default path is looked up in the current directory, then in the source tree.
    fn resolve(given: &Option<PathBuf>, default: &str) -> PathBuf {
        if let Some(p) = given {
            return p.clone();
        }
        let here = PathBuf::from(default);
        if here.exists() {
            return here;
        }
        Path::new(env!("CARGO_MANIFEST_DIR")).join(default)
    }

    fn read(path: &Path) -> Result<Vec<u8>, CliError> {
        std::fs::read(path).map_err(|e| CliError::Io {
            path: path.to_path_buf(),
            error: e.to_string(),
        })
    }

    pub fn load(&self) -> Result<Model, CliError> {
        let mp = Self::resolve(&self.model, DEFAULT_MODEL);
        let tp = Self::resolve(&self.tokenizer, DEFAULT_TOKENIZER);
        let io = |path: &Path, e: std::io::Error| CliError::Io {
            path: path.to_path_buf(),
            error: e.to_string(),
        };
        // The checkpoint is read tensor by tensor from the file (one copy of the weights in
        // memory, not the file and the weights); the tokenizer, small, whole.
        let mut file = std::fs::File::open(&mp).map_err(|e| io(&mp, e))?;
        let len = file.metadata().map_err(|e| io(&mp, e))?.len();
        if Self::is_gguf(&mut file).map_err(|e| io(&mp, e))? {
            // A GGUF file carries its tokenizer.
            if self.tokenizer.is_some() {
                return Err(CliError::Usage(format!(
                    "{} is a GGUF file, which carries its own tokenizer: drop --tokenizer",
                    mp.display()
                )));
            }
            let bytes = Self::read(&mp)?;
            let model = Model::from_gguf(&bytes, self.budget)
                .map_err(|e| CliError::Model { path: mp, error: e })?;
            return Ok(self.at_precision(model));
        }
        if mp
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"))
        {
            // A Hugging Face checkpoint: config.json beside it, and tokenizer.json unless
            // --tokenizer names another.
            let dir = mp.parent().unwrap_or(Path::new("."));
            let config = Self::read(&dir.join("config.json"))?;
            let tok = Self::read(&match &self.tokenizer {
                Some(t) => t.clone(),
                None => dir.join("tokenizer.json"),
            })?;
            let model = Model::read_files(&mut file, len, &tok, Some(&config), self.budget)
                .map_err(|e| CliError::Model { path: mp, error: e })?;
            return Ok(self.at_precision(model));
        }
        let tok = Self::read(&tp)?;
        // A llama2.c file is mapped, read-only, and its float32 tensors are used in place:
        // the weights in memory are the file's pages (shared with the page cache), not a
        // copy, and nothing is read twice (issue 11; llama2.c's run.c maps its file too).
        // Its header is checked against the budget and the file's length before mapping.
        let mut head = Vec::with_capacity(256);
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, 256), &mut head)
            .map_err(|e| io(&mp, e))?;
        if !decoding_engine::hf::is_safetensors(&head) {
            Model::check_files(&head, len, tok.len() as u64, self.budget).map_err(|e| {
                CliError::Model {
                    path: mp.clone(),
                    error: e,
                }
            })?;
        }
        // SAFETY: the mapping is read-only and private; like every program that maps its
        // weights (run.c, llama.cpp) this assumes the file is not truncated or rewritten by
        // another process while it runs.
        let map =
            unsafe { memmap2::MmapOptions::new().populate().map(&file) }.map_err(|e| io(&mp, e))?;
        let model = Model::from_shared(std::sync::Arc::new(map), &tok, self.budget)
            .map_err(|e| CliError::Model { path: mp, error: e })?;
        Ok(self.at_precision(model))
    }

    /// Whether the file starts with GGUF's magic (the file is left at its start).
    fn is_gguf(file: &mut std::fs::File) -> std::io::Result<bool> {
        use std::io::{Read, Seek};
        let mut magic = [0u8; 4];
        let n = file.read(&mut magic)?;
        file.rewind()?;
        Ok(n == 4 && decoding_engine::gguf::Gguf::is_gguf(&magic))
    }

    /// The model with its matrices at `--precision` (the loaded weights dropped).
    pub fn at_precision(&self, model: Model) -> Model {
        match self.precision {
            Some(p) if p != model.transformer.weights.precision() => {
                model.with_transformer(std::sync::Arc::new(model.transformer.at(p)))
            }
            _ => model,
        }
    }

    pub fn is_default(&self) -> bool {
        self.model.is_none()
    }
}

fn end_tokens(model: &Model) -> Vec<u32> {
    vec![model.tokenizer.eos, model.tokenizer.bos]
}

fn decode(model: &Model, ids: &[u32]) -> Result<String, CliError> {
    Ok(model.tokenizer.decode(ids)?)
}

fn generate(model: &Model, choice: BackendChoice, a: GenerateArgs) -> Result<(), CliError> {
    let mut raw = a.knobs.raw.clone();
    let clock_seed = raw.get(Knob::Seed).is_none().then(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    if let Some(s) = clock_seed {
        raw.put(Knob::Seed, s.to_string());
    }
    let settings = raw.validate(model.config().vocab_size)?;
    if let Some(s) = clock_seed {
        eprintln!("seed: {s}");
    }
    if let Strategy::Beam { .. } = settings.strategy {
        return Err(CliError::Usage(
            "generate samples or decodes greedily; use the beam command for beam search".into(),
        ));
    }
    let ids = model.encode_prompt(&a.prompt)?;
    let mut engine = open(&model.transformer, choice)?;
    let mut g = pollster::block_on(Generation::start(
        &mut engine,
        ids.clone(),
        end_tokens(model),
    ))?;
    // A one-shot run never rewinds: only the newest step's logits are needed.
    g.keep_logits(0);
    let mut out = std::io::stdout().lock();
    write!(out, "{}", decode(model, &ids)?)?;
    out.flush()?;
    // Text is printed as it becomes final: held back while it could still be the start of a
    // stop sequence, or an incomplete UTF-8 character.
    let hold = settings.stop.iter().map(|s| s.len()).max().unwrap_or(1) - 1;
    let mut printed = 0;
    let tk = &model.tokenizer;
    let reason = loop {
        // A lost GPU device switches to the CPU and rebuilds the cache (said on stderr).
        let kind = engine.report.kind;
        let outcome = pollster::block_on(g.step(&mut engine, &settings, tk))?;
        if engine.report.kind != kind {
            eprintln!("backend: {}", engine.report.reason);
        }
        match outcome {
            StepOutcome::Stopped(r) => break r,
            StepOutcome::Token { stop, .. } => {
                let text = g.generated_text(tk, stop.is_some());
                let mut end = match &stop {
                    Some(StopReason::StopSequence { stop }) => {
                        text.find(stop.as_str()).unwrap_or(text.len())
                    }
                    Some(_) => text.len(),
                    None => text.len().saturating_sub(hold),
                };
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                if end > printed {
                    write!(out, "{}", &text[printed..end])?;
                    out.flush()?;
                    printed = end;
                }
                if let Some(r) = stop {
                    break r;
                }
            }
        }
    };
    writeln!(out)?;
    eprintln!("stopped: {reason}; {} tokens generated", g.steps().len());
    Ok(())
}

/// The JSON shape shared by `sample` and `next --json`.
fn trace_json(trace: &Trace) -> serde_json::Value {
    let stages: Vec<serde_json::Value> = trace
        .stages
        .iter()
        .map(|s| {
            serde_json::json!({
                "stage": s.stage.name(),
                "active": s.active,
                "setting": s.setting,
                "default_of": s.default_of.map(|p| p.name()),
                "probs": s.probs,
                "removed": s.removed,
                "kept": s.kept,
            })
        })
        .collect();
    serde_json::json!({
        "input_probs": trace.input_probs,
        "stages": stages,
        "probs": trace.probs,
        "kept": trace.kept,
        "entropy": trace.entropy,
        "effective_tokens": trace.effective_tokens,
        "coin": trace.coin,
        "token": trace.token,
        "rank": trace.rank,
        "prob": trace.prob,
    })
}

fn print_trace_table(trace: &Trace, label: impl Fn(usize) -> String, top: usize) {
    let mut order: Vec<usize> = (0..trace.probs.len()).collect();
    order.sort_by(|&i, &j| {
        trace.input_probs[j]
            .total_cmp(&trace.input_probs[i])
            .then(i.cmp(&j))
    });
    order.truncate(top);
    let active: Vec<_> = trace.stages.iter().filter(|s| s.active).collect();
    let defaults: Vec<String> = active
        .iter()
        .filter_map(|s| {
            s.default_of
                .map(|p| format!("{} {} (default of {p})", s.stage, s.setting))
        })
        .collect();
    if !defaults.is_empty() {
        println!(
            "unset knobs at the profile's defaults: {}",
            defaults.join(", ")
        );
    }
    print!("{:>5}  {:<14} {:>8}", "id", "token", "input");
    for s in &active {
        print!(" {:>12}", format!("{}", s.stage.name()));
    }
    println!(" {:>8}", "final");
    for &i in &order {
        print!("{:>5}  {:<14} {:>8.4}", i, label(i), trace.input_probs[i]);
        for s in &active {
            print!(" {:>12.4}", s.probs[i]);
        }
        let mark = if i as u32 == trace.token {
            "  <- chosen"
        } else {
            ""
        };
        println!(" {:>8.4}{mark}", trace.probs[i]);
    }
    println!(
        "entropy {:.4} nats, exp(entropy) {:.3} tokens, {} kept; token {} (rank {}, p = {:.4}){}",
        trace.entropy,
        trace.effective_tokens,
        trace.kept,
        trace.token,
        trace.rank,
        trace.prob,
        trace
            .coin
            .map_or(String::new(), |c| format!(", coin {c:.6}"))
    );
}

fn next(model: &Model, choice: BackendChoice, a: NextArgs) -> Result<(), CliError> {
    let settings = a.knobs.raw.validate(model.config().vocab_size)?;
    let ids = model.encode_prompt(&a.prompt)?;
    let mut backend = open(&model.transformer, choice)?;
    let seq = backend.new_sequence()?;
    let (logits, record) = if a.probe.is_empty() {
        (pollster::block_on(backend.forward(seq, &ids, false))?, None)
    } else {
        let batch = decoding_engine::Batch::tokens(seq, 0, &ids, decoding_engine::Logits::Last);
        let spec = decoding_engine::ProbeSpec {
            lens_rows: ids.len(),
        };
        let p = pollster::block_on(backend.forward_probe(batch, spec))?;
        (p.logits, Some(p.record))
    };
    let history = History {
        prompt: &ids,
        generated: &[],
    };
    let trace = process(
        &settings,
        &logits,
        history,
        step_coin(settings.seed, 0),
        true,
    )?;
    let tk = &model.tokenizer;
    if a.json {
        let mut order: Vec<usize> = (0..trace.probs.len()).collect();
        order.sort_by(|&i, &j| trace.probs[j].total_cmp(&trace.probs[i]).then(i.cmp(&j)));
        let top: Vec<serde_json::Value> = order
            .iter()
            .take(a.top)
            .enumerate()
            .map(|(rank, &i)| {
                serde_json::json!({
                    "rank": rank + 1,
                    "id": i,
                    "piece": tk.piece(i as u32).unwrap_or("?"),
                    "prob": trace.probs[i],
                    "logprob": trace.probs[i].ln(),
                })
            })
            .collect();
        let mut v = trace_json(&trace);
        v["prompt_tokens"] = serde_json::json!(ids);
        v["top"] = serde_json::json!(top);
        if let Some(r) = &record {
            let kinds = (
                a.probe.contains(&ProbeKind::Attention),
                a.probe.contains(&ProbeKind::Lens),
            );
            v["probe"] = probe::json(model, r, &ids, kinds);
        }
        println!("{v}");
    } else {
        let label = |i: usize| format!("{:?}", tk.piece(i as u32).unwrap_or("?"));
        print_trace_table(&trace, label, a.top);
        if let Some(r) = &record {
            if a.probe.contains(&ProbeKind::Attention) {
                probe::print_attention(model, r, &ids);
            }
            if a.probe.contains(&ProbeKind::Lens) {
                probe::print_lens(model, r, &ids);
            }
        }
    }
    Ok(())
}

fn parse_ids(s: &str, what: &str) -> Result<Vec<u32>, CliError> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<u32>()
                .map_err(|_| CliError::Usage(format!("{what}: {p:?} is not a token id")))
        })
        .collect()
}

fn sample(a: SampleArgs) -> Result<(), CliError> {
    let mut logits = Vec::new();
    for p in a.logits.split(',').map(str::trim) {
        match p.parse::<f64>() {
            Ok(v) if v.is_finite() => logits.push(v),
            _ => {
                return Err(CliError::Usage(format!(
                    "--logits: {p:?} is not a finite number"
                )))
            }
        }
    }
    let history = parse_ids(&a.history, "--history")?;
    let prompt = parse_ids(&a.prompt_history, "--prompt-history")?;
    for &id in history.iter().chain(&prompt) {
        if id as usize >= logits.len() {
            return Err(CliError::Usage(format!(
                "token {id} in the history is outside the {} logits",
                logits.len()
            )));
        }
    }
    let settings = a.knobs.raw.validate(logits.len())?;
    let h = History {
        prompt: &prompt,
        generated: &history,
    };
    let trace = process_f64(&settings, &logits, h, step_coin(settings.seed, 0), true)?;
    if a.json {
        println!("{}", trace_json(&trace));
    } else {
        print_trace_table(&trace, |i| format!("#{i}"), logits.len());
    }
    Ok(())
}

/// Greedy decoding of `n` tokens after `ids`, and their log-probability.
fn greedy_baseline(
    model: &Model,
    backend: &mut dyn Backend,
    ids: &[u32],
    n: usize,
) -> Result<(Vec<u32>, f64), CliError> {
    let greedy_settings = Settings {
        temperature: 0.0,
        max_tokens: n,
        ..Settings::default()
    };
    let mut g = pollster::block_on(Generation::start(backend, ids.to_vec(), end_tokens(model)))?;
    while let StepOutcome::Token { .. } =
        pollster::block_on(g.step(backend, &greedy_settings, &model.tokenizer))?
    {}
    let greedy = g.generated_ids();
    let (_, lp) = pollster::block_on(score_continuation(backend, ids, &greedy))?;
    Ok((greedy, lp))
}

fn beam(model: &Model, choice: BackendChoice, a: BeamArgs) -> Result<(), CliError> {
    let mut raw = a.knobs.raw.clone();
    raw.put(Knob::Strategy, "beam");
    if raw.get(Knob::MaxTokens).is_none() {
        // Beam search keeps every hypothesis' cache: a shorter default than generate's.
        raw.put(Knob::MaxTokens, "32");
    }
    let settings: Settings = raw.validate(model.config().vocab_size)?;
    // The strategy is beam search (set above), so the fallback is never used.
    let config = BeamConfig::from_settings(&settings, BEAM_DEFAULTS);
    let ids = model.encode_prompt(&a.prompt)?;
    let mut engine = open(&model.transformer, choice)?;
    let backend: &mut dyn Backend = &mut engine;
    let seq = backend.new_sequence()?;
    let logits = pollster::block_on(backend.forward(seq, &ids, false))?;
    let search = pollster::block_on(beam_search(
        backend,
        config,
        seq,
        ids.len(),
        logits,
        end_tokens(model),
    ))?;
    let results = search.results();
    // Greedy over as many tokens as the best beam, for the lesson's comparison.
    let best_len = results.first().map_or(0, |h| h.tokens.len());
    let (greedy, greedy_lp) = greedy_baseline(model, backend, &ids, best_len.max(1))?;
    let text = |toks: &[u32]| -> Result<String, CliError> {
        let mut all = ids.clone();
        all.extend_from_slice(toks);
        decode(model, &all)
    };
    if a.json {
        let seqs: Vec<serde_json::Value> = results
            .iter()
            .map(|h| -> Result<serde_json::Value, CliError> {
                Ok(serde_json::json!({
                    "tokens": h.tokens,
                    "text": text(&h.tokens)?,
                    "sum_logprob": h.sum_logprob,
                    "score": h.score,
                    "ended": h.ended,
                    "node": h.node,
                }))
            })
            .collect::<Result<_, _>>()?;
        let out = serde_json::json!({
            "prompt_tokens": ids,
            "sequences": seqs,
            "nodes": search.nodes(),
            "greedy": { "tokens": greedy, "text": text(&greedy)?, "sum_logprob": greedy_lp },
        });
        println!("{out}");
    } else {
        for (i, h) in results.iter().enumerate() {
            println!(
                "#{} score {:.4}, log p {:.4}, {} tokens{}:\n{}\n",
                i + 1,
                h.score,
                h.sum_logprob,
                h.tokens.len(),
                if h.ended { ", ended" } else { "" },
                text(&h.tokens)?
            );
        }
        println!(
            "greedy, {} tokens: log p {:.4}\n{}\n",
            greedy.len(),
            greedy_lp,
            text(&greedy)?
        );
        println!("tree: {} nodes", search.nodes().len());
    }
    Ok(())
}

fn tokenize(model: &Model, a: TokenizeArgs) -> Result<(), CliError> {
    let ids = model.tokenizer.encode(&a.text, true)?;
    let tk = &model.tokenizer;
    let pieces: Vec<&str> = ids.iter().map(|&i| tk.piece(i)).collect::<Result<_, _>>()?;
    if a.json {
        println!("{}", serde_json::json!({ "ids": ids, "pieces": pieces }));
    } else {
        for (id, piece) in ids.iter().zip(pieces) {
            println!("{id}\t{piece:?}");
        }
    }
    Ok(())
}

/// `quantize --out FILE`: the model as a llama2.c version-2 file (quantized to Q8 with
/// export.py's group size unless it already is Q8).
fn quantize(model: &Model, a: QuantizeArgs) -> Result<(), CliError> {
    let t = &model.transformer;
    let ck = Checkpoint {
        config: t.config,
        weights: t.weights.clone(),
    };
    let io = |e: std::io::Error| CliError::Usage(format!("cannot write {}: {e}", a.out.display()));
    let file = std::fs::File::create(&a.out).map_err(io)?;
    let mut out = std::io::BufWriter::new(file);
    ck.write_v2(&mut out).map_err(io)?;
    out.flush().map_err(io)?;
    let bytes = std::fs::metadata(&a.out).map_err(io)?.len();
    println!(
        "wrote {} ({} bytes, llama2.c version 2: Q8_0, groups of {})",
        a.out.display(),
        thousands(bytes),
        decoding_engine::quant::q8_group_for(t.config.dim)
    );
    Ok(())
}

#[derive(serde::Serialize)]
struct QualityRow {
    precision: Precision,
    weight_bytes: u64,
    #[serde(flatten)]
    quality: Quality,
}

/// `quality`: f32, q8 and q4 of the model over the evaluation text, against f32 (the
/// loaded weights dequantized when the file is quantized).
fn quality(model: &Model, a: QualityArgs) -> Result<(), CliError> {
    let text = match &a.text {
        Some(p) => String::from_utf8(ModelFiles::read(p)?).map_err(|e| CliError::Io {
            path: p.clone(),
            error: e.to_string(),
        })?,
        None => EVAL_TEXT.to_string(),
    };
    let tokens = model.tokenizer.encode(&text, true)?;
    let t = &model.transformer;
    let reference = t.at(Precision::F32);
    let mut rows = Vec::new();
    for p in Precision::ALL {
        let other = t.at(p);
        let q = compare(&reference, &other, &tokens)
            .map_err(|e| CliError::Usage(format!("evaluating {p}: {e}")))?;
        rows.push(QualityRow {
            precision: p,
            weight_bytes: other.weights.bytes(&t.config),
            quality: q,
        });
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| CliError::Usage(e.to_string()))?
        );
        return Ok(());
    }
    println!(
        "{} tokens of text, {} positions; against f32{}",
        tokens.len(),
        rows[0].quality.positions,
        if t.weights.precision() == Precision::F32 {
            ""
        } else {
            " (the file's weights dequantized)"
        }
    );
    println!(
        "{:<9} {:>26} {:>10} {:>12} {:>10} {:>10}",
        "precision", "weight bytes", "mean KL", "max KL", "same top", "perplexity"
    );
    for r in &rows {
        println!(
            "{:<9} {:>26} {:>10.6} {:>12.6} {:>9.1}% {:>10.3}",
            r.precision.name(),
            format!(
                "{} ({})",
                thousands(r.weight_bytes),
                human_bytes(r.weight_bytes)
            ),
            r.quality.mean_kl,
            r.quality.max_kl,
            100.0 * r.quality.same_top,
            r.quality.perplexity
        );
    }
    Ok(())
}

/// `speculate`: the text on stdout (the statistics on stderr), or with `--json` the emitted
/// ids, every cycle and the totals.
fn speculate(model: &Model, choice: BackendChoice, a: SpeculateArgs) -> Result<(), CliError> {
    use decoding_engine::speculative::{expected_tokens_per_cycle, Draft, Rule, Speculator};
    let usage = |e: decoding_engine::speculative::SpecError| CliError::Usage(e.to_string());
    let draft = Draft::parse(&a.draft, model.config().n_layers).map_err(usage)?;
    let rule = Rule::parse(&a.rule).map_err(usage)?;
    let settings = a.knobs.raw.validate(model.config().vocab_size)?;
    if let Strategy::Beam { .. } = settings.strategy {
        return Err(CliError::Usage(
            "speculative decoding samples or decodes greedily, not beam search".into(),
        ));
    }
    let ids = model.encode_prompt(&a.prompt)?;
    let mut engine = open(&model.transformer, choice)?;
    let mut sp = pollster::block_on(Speculator::start(
        &mut engine,
        &model.transformer,
        ids.clone(),
        draft,
        a.gamma,
        rule,
    ))
    .map_err(usage)?;
    // The draft is built; time the cycles from here.
    let t0 = std::time::Instant::now();
    let cycles = pollster::block_on(sp.run(
        &mut engine,
        &settings,
        settings.max_tokens,
        &end_tokens(model),
    ))
    .map_err(usage)?;
    let secs = t0.elapsed().as_secs_f64();
    let emitted = sp.emitted().to_vec();
    let st = sp.stats.clone();
    sp.release(&mut engine);
    // Plain decoding of as many tokens on the same backend, for the wall-clock comparison.
    let t1 = std::time::Instant::now();
    let mut g = pollster::block_on(Generation::start(&mut engine, ids.clone(), vec![]))?;
    for _ in 0..emitted.len() {
        if let StepOutcome::Stopped(_) =
            pollster::block_on(g.step(&mut engine, &settings, &model.tokenizer))?
        {
            break;
        }
    }
    let plain_secs = t1.elapsed().as_secs_f64();
    let alpha = {
        let o: Vec<f64> = cycles
            .iter()
            .flat_map(|c| c.checked.iter().map(|k| k.overlap))
            .collect();
        o.iter().sum::<f64>() / o.len().max(1) as f64
    };
    if a.json {
        let v = serde_json::json!({
            "draft": draft.name(),
            "gamma": a.gamma,
            "rule": rule,
            "tokens": emitted,
            "cycles": cycles,
            "totals": {
                "cycles": st.cycles,
                "target_calls": st.target_calls,
                "drafted": st.drafted,
                "accepted": st.accepted,
                "emitted": st.emitted,
                "acceptance_rate": st.acceptance_rate(),
                "tokens_per_cycle": st.tokens_per_cycle(),
                "mean_overlap": alpha,
                "formula_tokens_per_cycle": expected_tokens_per_cycle(alpha, a.gamma),
                "seconds": secs,
                "plain_seconds": plain_secs,
                "tokens_per_second": emitted.len() as f64 / secs,
                "plain_tokens_per_second": emitted.len() as f64 / plain_secs,
                "speedup": plain_secs / secs,
            },
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| CliError::Usage(e.to_string()))?
        );
        return Ok(());
    }
    let all: Vec<u32> = ids.iter().chain(&emitted).copied().collect();
    println!("{}", decode(model, &all)?);
    eprintln!(
        "{}: {} cycles, {} of {} drafts accepted ({:.1} %), {:.2} tokens a target pass \
         (formula at α = {:.3}: {:.2}), {:.1} tokens/s against {:.1} plain",
        draft.name(),
        st.cycles,
        st.accepted,
        st.drafted,
        100.0 * st.acceptance_rate(),
        st.tokens_per_cycle(),
        alpha,
        expected_tokens_per_cycle(alpha, a.gamma),
        emitted.len() as f64 / secs,
        emitted.len() as f64 / plain_secs
    );
    Ok(())
}
