//! `decoding-explorer`, the native command line on the same engine the page runs: generate
//! text, print the next-token distribution, tokenize, benchmark. Errors go to stderr with a
//! non-zero exit code and no backtrace.

mod bench;
mod error;

use clap::{Parser, Subcommand};
use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::sampler::{argmax, sample_from, softmax_t, Coin};
use decoding_engine::tokenizer::TextDecoder;
use decoding_engine::Model;
use error::CliError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const DEFAULT_MODEL: &str = "assets/models/stories260K/stories260K.bin";
const DEFAULT_TOKENIZER: &str = "assets/models/stories260K/tok512.bin";

#[derive(Parser, Debug)]
#[command(
    name = "decoding-explorer",
    version,
    about = "Run a llama2.c model and look at how it decodes"
)]
struct Cli {
    /// llama2.c checkpoint (default: the stories260K model set up in assets/)
    #[arg(long, global = true, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Tokenizer: llama2.c tokenizer.bin or Hugging Face tokenizer.json
    #[arg(long, global = true, value_name = "PATH")]
    tokenizer: Option<PathBuf>,
    /// Worker threads for the CPU backend (default: all cores)
    #[arg(long, global = true)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the prompt followed by generated text, streaming
    Generate(GenerateArgs),
    /// Print the next-token distribution after a prompt
    Next(NextArgs),
    /// Print the token ids and pieces of a text
    Tokenize(TokenizeArgs),
    /// Measure prefill and decode speed
    Bench(bench::BenchArgs),
}

#[derive(clap::Args, Debug)]
struct GenerateArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    /// New tokens to generate at most
    #[arg(long, default_value_t = 256)]
    max_tokens: usize,
    /// 0 = greedy
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    temperature: f64,
    /// Seed of the sampler (default: from the clock, printed on stderr)
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(clap::Args, Debug)]
struct NextArgs {
    #[arg(long, default_value = "")]
    prompt: String,
    /// How many of the most likely tokens to print
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct TokenizeArgs {
    text: String,
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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

fn dispatch(cli: Cli) -> Result<(), CliError> {
    let files = ModelFiles {
        model: cli.model,
        tokenizer: cli.tokenizer,
    };
    match cli.command {
        Command::Generate(a) => generate(&files.load()?, a),
        Command::Next(a) => next(&files.load()?, a),
        Command::Tokenize(a) => tokenize(&files.load()?, a),
        Command::Bench(a) => bench::run(&files, a),
    }
}

/// Where the model and tokenizer come from.
pub struct ModelFiles {
    model: Option<PathBuf>,
    tokenizer: Option<PathBuf>,
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
        let model = Self::read(&mp)?;
        let tok = Self::read(&tp)?;
        Model::from_bytes(&model, &tok).map_err(|e| CliError::Model { path: mp, error: e })
    }

    pub fn is_default(&self) -> bool {
        self.model.is_none()
    }
}

/// Prints token pieces as text, in order, holding back incomplete UTF-8.
struct Printer<'m> {
    model: &'m Model,
    decoder: TextDecoder,
    prev: Option<u32>,
    out: std::io::StdoutLock<'static>,
}

impl<'m> Printer<'m> {
    fn new(model: &'m Model) -> Self {
        Printer {
            model,
            decoder: TextDecoder::default(),
            prev: None,
            out: std::io::stdout().lock(),
        }
    }

    fn print(&mut self, id: u32) -> Result<(), CliError> {
        let tk = &self.model.tokenizer;
        if id != tk.bos && id != tk.eos {
            let bytes = tk
                .decode_piece(self.prev, id)
                .map_err(decoding_engine::ModelError::from)?;
            let text = self.decoder.push(bytes);
            self.out.write_all(text.as_bytes())?;
            self.out.flush()?;
        }
        self.prev = Some(id);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), CliError> {
        let rest = self.decoder.finish();
        writeln!(self.out, "{rest}")?;
        Ok(())
    }
}

fn generate(model: &Model, a: GenerateArgs) -> Result<(), CliError> {
    if !a.temperature.is_finite() || a.temperature < 0.0 {
        return Err(CliError::Usage(format!(
            "--temperature must be a finite number >= 0 (got {})",
            a.temperature
        )));
    }
    if a.max_tokens == 0 {
        return Err(CliError::Usage("--max-tokens must be at least 1".into()));
    }
    let seed = a.seed.unwrap_or_else(|| {
        let s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        eprintln!("seed: {s}");
        s
    });
    let mut coin = Coin::new(seed);
    let mut ids = model.encode_prompt(&a.prompt)?;
    let seq_len = model.config().seq_len;
    let mut backend = CpuBackend::new(model.transformer.clone());
    let seq = backend.new_sequence()?;
    let mut logits = pollster::block_on(backend.forward(seq, &ids, false))?;
    let mut printer = Printer::new(model);
    for &id in &ids {
        printer.print(id)?;
    }
    let tk = &model.tokenizer;
    let mut generated = 0;
    let reason = loop {
        let next = if a.temperature == 0.0 {
            argmax(&logits)
        } else {
            sample_from(&softmax_t(&logits, a.temperature), coin.flip())
        };
        if next == tk.eos || next == tk.bos {
            break format!("end of sequence (token {next})");
        }
        printer.print(next)?;
        ids.push(next);
        generated += 1;
        if generated == a.max_tokens {
            break format!("max tokens ({})", a.max_tokens);
        }
        if ids.len() >= seq_len {
            break format!("context full ({seq_len} tokens)");
        }
        logits = pollster::block_on(backend.forward(seq, &[next], false))?;
    };
    printer.finish()?;
    eprintln!("stopped: {reason}; {generated} tokens generated");
    Ok(())
}

#[derive(serde::Serialize)]
struct TokenProb<'a> {
    rank: usize,
    id: u32,
    piece: &'a str,
    prob: f64,
    logprob: f64,
}

fn next(model: &Model, a: NextArgs) -> Result<(), CliError> {
    let ids = model.encode_prompt(&a.prompt)?;
    let mut backend = CpuBackend::new(model.transformer.clone());
    let seq = backend.new_sequence()?;
    let logits = pollster::block_on(backend.forward(seq, &ids, false))?;
    let probs = softmax_t(&logits, 1.0);
    let mut order: Vec<usize> = (0..probs.len()).collect();
    order.sort_by(|&i, &j| probs[j].total_cmp(&probs[i]).then(i.cmp(&j)));
    let tk = &model.tokenizer;
    let mut rows = Vec::new();
    for (rank, &i) in order.iter().take(a.top).enumerate() {
        rows.push(TokenProb {
            rank: rank + 1,
            id: i as u32,
            piece: tk
                .piece(i as u32)
                .map_err(decoding_engine::ModelError::from)?,
            prob: probs[i],
            logprob: probs[i].ln(),
        });
    }
    if a.json {
        let out = serde_json::json!({
            "prompt_tokens": ids,
            "top": rows,
            "probs": probs,
        });
        println!("{out}");
    } else {
        println!(
            "{:>4}  {:>5}  {:<16} {:>8}  {:>9}",
            "rank", "id", "piece", "prob", "logprob"
        );
        for r in rows {
            println!(
                "{:>4}  {:>5}  {:<16} {:>8.4}  {:>9.4}",
                r.rank,
                r.id,
                format!("{:?}", r.piece),
                r.prob,
                r.logprob
            );
        }
    }
    Ok(())
}

fn tokenize(model: &Model, a: TokenizeArgs) -> Result<(), CliError> {
    let ids = model.tokenizer.encode(&a.text, true)?;
    let tk = &model.tokenizer;
    let pieces: Vec<&str> = ids
        .iter()
        .map(|&i| tk.piece(i))
        .collect::<Result<_, _>>()
        .map_err(decoding_engine::ModelError::from)?;
    if a.json {
        println!("{}", serde_json::json!({ "ids": ids, "pieces": pieces }));
    } else {
        for (id, piece) in ids.iter().zip(pieces) {
            println!("{id}\t{piece:?}");
        }
    }
    Ok(())
}
