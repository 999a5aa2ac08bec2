//! `decoding-explorer`, the native command line on the same engine the page runs: generate
//! text, print the processed next-token distribution with every stage, process hand-typed
//! logits, run beam search, tokenize, benchmark. Errors go to stderr with a non-zero exit code
//! and no backtrace. Each subcommand lives in `commands/`; the model's files in `files.rs`.

/// `print!` to standard output that returns the write's error (`?`) instead of panicking:
/// a closed pipe (`| head`) then ends the command quietly (`main`).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($t)*)?
    }};
}

/// `println!`, as [`out!`].
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)?
    }};
}

mod bundle;
mod classroom;
mod commands;
mod error;
mod files;
mod knobs;
mod progress;

use clap::{Parser, Subcommand};
use commands::*;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::quant::Activations;
use decoding_engine::Precision;
use error::CliError;
use files::{parse_budget, ModelFiles};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    // The global options under one heading in every command's --help, apart from the
    // command's own and the decoding knobs.
    next_help_heading = "Model and engine (any command)",
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
    /// Worker threads for the CPU backend (default: all cores; decode steps run on one of
    /// them while that is faster, as on a machine busy with other programs)
    #[arg(long, global = true)]
    threads: Option<usize>,
    /// Memory a model may take, in GiB (weights, one sequence's KV cache, run state),
    /// checked from the header before loading (default 16)
    #[arg(long, global = true, value_name = "GIB", allow_hyphen_values = true)]
    memory_limit: Option<String>,
    /// Which backend runs the model
    #[arg(long, global = true, value_enum, default_value_t = BackendChoice::Cpu)]
    backend: BackendChoice,
    /// Weights as f32, q8 (int8, a scale per group of 64, llama2.c's Q8_0) or q4 (4 bits,
    /// a scale per 32, GGML's Q4_0), quantized in memory (default: the file's own: f32 for
    /// a legacy file, q8 for a version-2 one)
    #[arg(long, global = true, value_enum)]
    precision: Option<Precision>,
    /// What the CPU multiplies q8/q4 weights with: int8 activations (quantized per group
    /// once per matrix, integer dot products, as llama.cpp and runq.c) or f32 (dequantize,
    /// then multiply; the GPU's product)
    #[arg(long, global = true, value_enum, default_value_t = Activations::Int8)]
    activations: Activations,
    /// Give the prompt as one user message through the chat template the model's file
    /// carries (GGUF's tokenizer.chat_template), the assistant's turn opened, as the page's
    /// Chat toggle does
    #[arg(long, global = true)]
    chat: bool,
    /// Use this Jinja chat template (a file) instead of the one the model's file carries,
    /// or where it carries none; implies --chat
    #[arg(long, global = true, value_name = "PATH")]
    chat_template: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the prompt followed by generated text, streaming
    Generate(generate::GenerateArgs),
    /// Print the next-token distribution after a prompt, through the sampling chain
    Next(next::NextArgs),
    /// Process hand-typed logits through the sampling chain (no model)
    Sample(sample::SampleArgs),
    /// Beam search: finished sequences with scores, and the whole tree
    Beam(beam::BeamArgs),
    /// Print the token ids and pieces of a text
    Tokenize(tokenize::TokenizeArgs),
    /// Measure prefill and decode speed
    Bench(bench::BenchArgs),
    /// Write the model as a llama2.c version-2 (Q8_0) file, as export.py --version 2 does
    Quantize(quantize::QuantizeArgs),
    /// Speculative decoding: a draft proposes tokens, the model verifies them in one pass
    Speculate(speculate::SpeculateArgs),
    /// Prefill and decode throughput per batch size, with FLOPs and bytes per pass
    BatchedBench(batched::BatchedArgs),
    /// A seeded trace of requests through B slots: continuous or static batching
    ServeSim(batched::ServeArgs),
    /// What quantization costs: weight bytes, and over a fixed text the KL divergence from
    /// f32, the same top token and perplexity of q8 and q4
    Quality(quality::QualityArgs),
    /// Serve the page and a room where a class guesses the next token on their phones
    Classroom(classroom::ClassroomArgs),
    /// Write the built page and chosen models into one folder that runs from a USB stick
    /// with any static server (python3 -m http.server)
    Bundle(bundle::BundleArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Mesa's Vulkan drivers warn on stderr when XDG_RUNTIME_DIR is unset (as in containers
    // and CI); give them a private one so user-facing output stays clean. Set before any
    // thread exists.
    if cli.backend != BackendChoice::Cpu && std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join(format!("decoding-explorer-{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_ok() {
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`| head`): what it wanted it has; nothing to say.
        Err(CliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
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

fn dispatch(cli: Cli) -> Result<(), CliError> {
    let files = ModelFiles {
        model: cli.model,
        tokenizer: cli.tokenizer,
        budget: parse_budget(cli.memory_limit.as_deref())?,
        precision: cli.precision,
        activations: cli.activations,
        chat: cli.chat || cli.chat_template.is_some(),
        chat_template: cli.chat_template,
    };
    let choice = cli.backend;
    match cli.command {
        Command::Generate(a) => generate::generate(&files.load()?, choice, a),
        Command::Next(a) => next::next(&files.load()?, choice, a),
        Command::Sample(a) => sample::sample(a),
        Command::Beam(a) => beam::beam(&files.load()?, choice, a, files.budget),
        Command::Tokenize(a) => tokenize::tokenize(&files.load()?, a),
        Command::Bench(a) => bench::run(&files, choice, a),
        Command::Quantize(a) => quantize::quantize(&files.load()?, a),
        Command::Speculate(a) => speculate::speculate(&files.load()?, choice, a),
        Command::BatchedBench(a) => batched::batched_bench(&files, choice, a),
        Command::ServeSim(a) => batched::serve_sim(&files.load()?, choice, a, files.budget),
        Command::Quality(a) => quality::quality(&files.load()?, a),
        Command::Classroom(a) => classroom::classroom(&files, a),
        Command::Bundle(a) => bundle::bundle(a),
    }
}
