//! `decoding-explorer bench`: prefill and decode tokens per second on real work (the model's
//! forward pass over a fixed token sequence), optionally the cache-less naive mode, on the
//! stories260K files or on a random-weight checkpoint of any llama2.c shape.

use crate::error::CliError;
use crate::files::ModelFiles;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::{Backend, Checkpoint, Config, Logits, Transformer};
use std::sync::Arc;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Positions to prefill and to decode
    #[arg(long, default_value_t = 256)]
    tokens: usize,
    /// Also time decoding without the KV cache (the whole prefix re-run each step)
    #[arg(long)]
    naive: bool,
    /// Build a seeded random checkpoint of this shape instead of loading one:
    /// dim,hidden,layers,heads,kv_heads,vocab,seq_len (e.g. 288,768,6,6,6,32000,256)
    #[arg(long, value_name = "SHAPE")]
    random_weights: Option<String>,
    /// With --random-weights: write that checkpoint to DIR/model.bin and a tokenizer of its
    /// vocabulary size to DIR/tokenizer.bin (for llama2.c's run.c, the page, or --model),
    /// then stop without measuring
    #[arg(long, value_name = "DIR", requires = "random_weights")]
    write: Option<std::path::PathBuf>,
    /// Also time decoding with the probe on (each step's attention weights and residual
    /// streams recorded, and the logit lens computed from them), as the page's view inside
    /// the step runs it
    #[arg(long)]
    probe: bool,
    /// Runs of each measurement; the median and best are reported
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    #[arg(long)]
    json: bool,
    /// Also time the constraint's mask per token (`bench_mask.rs`) on the model's own
    /// vocabulary (loaded files) and on each --mask-vocab file's, against a decode step
    #[arg(long)]
    mask: bool,
    /// A model file (GGUF) whose vocabulary the mask is also timed on; repeatable
    #[arg(long, value_name = "FILE", requires = "mask")]
    mask_vocab: Vec<std::path::PathBuf>,
    /// Also time decode from each of these positions (e.g. 128,1024,4096: each prefilled,
    /// then --at-steps tokens decoded) against the bandwidth model (`bench_context.rs`)
    #[arg(long, value_name = "POSITIONS")]
    at: Option<String>,
    /// Tokens decoded from each --at position
    #[arg(long, default_value_t = 16, requires = "at")]
    at_steps: usize,
}

#[derive(serde::Serialize)]
struct Timing {
    tokens: usize,
    median_s: f64,
    best_s: f64,
    median_tokens_per_s: f64,
    best_tokens_per_s: f64,
}

impl Timing {
    fn new(tokens: usize, mut runs: Vec<f64>) -> Timing {
        runs.sort_by(f64::total_cmp);
        let median = runs[runs.len() / 2];
        let best = runs[0];
        Timing {
            tokens,
            median_s: median,
            best_s: best,
            median_tokens_per_s: tokens as f64 / median,
            best_tokens_per_s: tokens as f64 / best,
        }
    }
}

#[derive(serde::Serialize)]
struct Report {
    model: String,
    config: Config,
    params: u64,
    precision: decoding_engine::Precision,
    /// Bytes of the weights in memory at that precision
    weight_bytes: u64,
    backend: String,
    backend_detail: String,
    /// The CPU kernels' instruction set (the build's: avx512, avx2, wasm or portable)
    cpu_kernel: &'static str,
    /// The decode loops' variants as measured (int8 at start-up, f32 over the first decode
    /// steps; CPU backend)
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_variants: Option<decoding_engine::kernels::tune::Tuning>,
    /// Compute dispatches per decoded token (GPU backend).
    #[serde(skip_serializing_if = "Option::is_none")]
    dispatches_per_token: Option<usize>,
    /// Each kernel's GPU time per decoded token and the launch overhead (GPU backend).
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu_times: Option<super::kernel_times::GpuTimes>,
    threads: usize,
    /// Whether decode steps ran on one thread at the end (`par::decode_step` chooses: on a
    /// machine busy with other programs one thread can be faster than the team)
    decode_alone: bool,
    prefill: Timing,
    decode: Timing,
    #[serde(skip_serializing_if = "Option::is_none")]
    naive: Option<Timing>,
    /// naive seconds / cached seconds over the same positions
    #[serde(skip_serializing_if = "Option::is_none")]
    naive_over_cached: Option<f64>,
    /// The constraint's mask per token (`--mask`)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    masks: Vec<super::bench_mask::MaskTiming>,
    /// Decode at long positions against the bandwidth model (`--at`)
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<super::bench_context::Context>,
    /// decode with the probe on (the passes only)
    #[serde(skip_serializing_if = "Option::is_none")]
    probed: Option<Timing>,
    /// probed decode seconds / plain decode seconds
    #[serde(skip_serializing_if = "Option::is_none")]
    probed_over_plain: Option<f64>,
    /// the logit lens on each probed step's record (every layer through the head)
    #[serde(skip_serializing_if = "Option::is_none")]
    lens: Option<Timing>,
    /// (probed passes + lens) seconds / plain decode seconds
    #[serde(skip_serializing_if = "Option::is_none")]
    probed_and_lens_over_plain: Option<f64>,
}

/// Parses "dim,hidden,layers,heads,kv_heads,vocab,seq_len" and validates it like a header.
fn parse_shape(s: &str) -> Result<Config, CliError> {
    let parts: Vec<i32> = s
        .split(',')
        .map(|p| p.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::Usage(format!("--random-weights {s:?}: {e}")))?;
    let header: [i32; 7] = parts.try_into().map_err(|p: Vec<i32>| {
        CliError::Usage(format!(
            "--random-weights needs 7 numbers dim,hidden,layers,heads,kv_heads,vocab,seq_len (got {})",
            p.len()
        ))
    })?;
    Config::from_header(header).map_err(|e| CliError::Usage(format!("--random-weights {s:?}: {e}")))
}

fn time<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t0 = Instant::now();
    let r = f();
    (t0.elapsed().as_secs_f64(), r)
}

/// The model to measure: random weights of a shape, or the files given.
fn load(files: &ModelFiles, a: &BenchArgs) -> Result<(String, Arc<Transformer>), CliError> {
    load_model(files, a.random_weights.as_deref())
}

/// The model to measure: seeded random weights of a shape ("dim,hidden,…"), or the files.
pub fn load_model(
    files: &ModelFiles,
    random_weights: Option<&str>,
) -> Result<(String, Arc<Transformer>), CliError> {
    match random_weights {
        Some(shape) => {
            let config = parse_shape(shape)?;
            let ck =
                Checkpoint::random(config, 1234).map_err(|e| CliError::Usage(e.to_string()))?;
            let t = Transformer::new(ck);
            let t = match files.precision {
                Some(p) if p != decoding_engine::Precision::F32 => t.at(p),
                _ => t,
            };
            Ok((format!("random weights {shape}"), Arc::new(t)))
        }
        None => {
            let name = if files.is_default() {
                "stories260K"
            } else {
                "model"
            };
            Ok((name.to_string(), files.load()?.transformer))
        }
    }
}

/// Seconds of each run: prefill of all the tokens, decode one at a time, and (with
/// `naive`) every step re-running its prefix on a fresh sequence.
#[derive(Default)]
struct Runs {
    prefill: Vec<f64>,
    decode: Vec<f64>,
    naive: Vec<f64>,
    probed: Vec<f64>,
    lens: Vec<f64>,
}

fn measure(
    backend: &mut dyn Backend,
    model: &Transformer,
    ids: &[u32],
    repeat: usize,
    (naive, probe): (bool, bool),
) -> Result<Runs, CliError> {
    let mut runs = Runs::default();
    for _ in 0..repeat {
        let seq = backend.new_sequence()?;
        let (t, r) = time(|| pollster::block_on(backend.forward(seq, ids, false)));
        r?;
        runs.prefill.push(t);
        backend.truncate(seq, 0)?;
        let (t, r) = time(|| -> Result<(), CliError> {
            for &id in ids {
                pollster::block_on(backend.forward(seq, &[id], false))?;
            }
            Ok(())
        });
        r?;
        runs.decode.push(t);
        if probe {
            // The probed passes and the lens on their records, timed apart.
            backend.truncate(seq, 0)?;
            let spec = decoding_engine::ProbeSpec { lens_rows: 1 };
            let (mut pass, mut lens) = (0.0, 0.0);
            for (pos, &id) in ids.iter().enumerate() {
                let b = decoding_engine::Batch::tokens(seq, pos, &[id], Logits::Last);
                let (t, p) = time(|| pollster::block_on(backend.forward_probe(b, spec)));
                pass += t;
                let p = p?;
                let (t, l) = time(|| model.lens(&p.record, 5));
                lens += t;
                std::hint::black_box(l);
            }
            runs.probed.push(pass);
            runs.lens.push(lens);
        }
        backend.release(seq);
        if naive {
            // Without a cache: every step runs the whole prefix on a fresh sequence.
            let (t, r) = time(|| -> Result<(), CliError> {
                for n in 1..=ids.len() {
                    let s = backend.new_sequence()?;
                    let r = pollster::block_on(backend.forward(s, &ids[..n], false));
                    backend.release(s);
                    r?;
                }
                Ok(())
            });
            r?;
            runs.naive.push(t);
        }
    }
    Ok(runs)
}

/// A llama2.c vocabulary of `n` pieces (n ≥ 260): `<unk>`, BOS, EOS, the 256 byte pieces
/// `<0x00>`…`<0xFF>`, " " (run.c's encoder looks it up as the dummy prefix), then distinct
/// made-up pieces; every piece scored below the previous.
fn synthetic_vocab(n: usize) -> decoding_engine::tokenizer::Llama2cVocab {
    let mut pieces: Vec<String> = vec!["<unk>".into(), "\n<s>\n".into(), "\n</s>\n".into()];
    pieces.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
    pieces.push(" ".into());
    let mut i = 0;
    while pieces.len() < n {
        pieces.push(format!(" t{i}"));
        i += 1;
    }
    pieces.truncate(n);
    let scores = (0..pieces.len()).map(|i| -(i as f32)).collect();
    let max_token_length = pieces.iter().map(String::len).max().unwrap_or(1) as u32;
    decoding_engine::tokenizer::Llama2cVocab {
        max_token_length,
        pieces,
        scores,
    }
}

/// `--write DIR`: the seeded random checkpoint of `--random-weights` and its tokenizer.
fn write_random(shape: &str, dir: &std::path::Path) -> Result<(), CliError> {
    let config = parse_shape(shape)?;
    if config.vocab_size < 260 {
        return Err(CliError::Usage(format!(
            "--write needs a vocabulary of at least 260 pieces (3 special, 256 bytes, \" \"); {shape:?} has {}",
            config.vocab_size
        )));
    }
    let ck = Checkpoint::random(config, 1234).map_err(|e| CliError::Usage(e.to_string()))?;
    let write = |name: &str, bytes: Vec<u8>| {
        let path = dir.join(name);
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&path, bytes))
            .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display())))
    };
    write("model.bin", ck.to_bytes())?;
    write(
        "tokenizer.bin",
        synthetic_vocab(config.vocab_size).to_bytes(),
    )?;
    outln!(
        "wrote {} and {}",
        dir.join("model.bin").display(),
        dir.join("tokenizer.bin").display()
    );
    Ok(())
}

/// `measure`, with its line on stderr while it runs (a terminal's).
fn measure_said(
    backend: &mut dyn Backend,
    model: &Transformer,
    ids: &[u32],
    a: &BenchArgs,
) -> Result<Runs, CliError> {
    let _line = crate::progress::Progress::new(format!(
        "measuring {} tokens, {} time(s){}",
        a.tokens,
        a.repeat,
        if a.naive {
            ", and without the cache"
        } else {
            ""
        }
    ));
    measure(backend, model, ids, a.repeat, (a.naive, a.probe))
}

pub fn run(files: &ModelFiles, choice: BackendChoice, a: BenchArgs) -> Result<(), CliError> {
    if let (Some(shape), Some(dir)) = (&a.random_weights, &a.write) {
        return write_random(shape, dir);
    }
    if a.repeat == 0 {
        return Err(CliError::Usage("--repeat must be at least 1".into()));
    }
    let (name, transformer) = load(files, &a)?;
    let c = transformer.config;
    if a.tokens == 0 || a.tokens > c.seq_len {
        return Err(CliError::Usage(format!(
            "--tokens must be in 1..={} (the model's context)",
            c.seq_len
        )));
    }
    let ids = bench_ids(a.tokens, c.vocab_size);
    let mut engine = crate::files::open(&transformer, choice)?;
    let cpu_variants = settle_cpu_loops(&mut engine, &ids)?;
    let runs = measure_said(&mut engine, &transformer, &ids, &a)?;
    let decode = Timing::new(a.tokens, runs.decode);
    let gpu_times = match engine.report.kind {
        decoding_engine::BackendKind::Gpu => Some(super::kernel_times::measure(
            &mut engine,
            &ids,
            decode.median_s / a.tokens as f64,
        )?),
        decoding_engine::BackendKind::Cpu => None,
    };
    let naive = a.naive.then(|| Timing::new(a.tokens, runs.naive));
    let both: Vec<f64> = runs
        .probed
        .iter()
        .zip(&runs.lens)
        .map(|(p, l)| p + l)
        .collect();
    let probed = a.probe.then(|| Timing::new(a.tokens, runs.probed));
    let lens = a.probe.then(|| Timing::new(a.tokens, runs.lens));
    let both = a.probe.then(|| Timing::new(a.tokens, both));
    let mut report = Report {
        model: name,
        config: c,
        params: c.n_params(),
        precision: transformer.weights.precision(),
        weight_bytes: transformer.weights.bytes(&c),
        backend: engine.report.kind.to_string(),
        backend_detail: engine.report.reason.clone(),
        cpu_kernel: decoding_engine::kernels::KERNEL,
        cpu_variants,
        dispatches_per_token: engine.report.dispatches_per_token,
        gpu_times,
        threads: decoding_engine::par::thread_count(),
        decode_alone: decoding_engine::par::decode_alone_now(),
        prefill: Timing::new(a.tokens, runs.prefill),
        naive_over_cached: naive.as_ref().map(|n| n.median_s / decode.median_s),
        probed_over_plain: probed.as_ref().map(|p| p.median_s / decode.median_s),
        probed_and_lens_over_plain: both.as_ref().map(|b| b.median_s / decode.median_s),
        probed,
        lens,
        masks: Vec::new(),
        context: None,
        decode,
        naive,
    };
    let at = (a.at.as_deref(), a.at_steps, a.repeat);
    report.context = super::bench_context::at(&mut engine, &c, report.weight_bytes, at)?;
    if a.mask {
        let own = match a.random_weights {
            Some(_) => None,
            None => Some(files.load()?),
        };
        let vocabs = super::bench_mask::vocabularies(own.as_ref(), &a.mask_vocab)?;
        let step_ms = 1000.0 * report.decode.median_s / a.tokens as f64;
        report.masks = super::bench_mask::measure(&vocabs, a.repeat, step_ms)?;
    }
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| CliError::Usage(e.to_string()))?
        );
    } else {
        print_report(&report)?;
    }
    Ok(())
}

/// A fixed token sequence of `n`: BOS, then ids spread over the vocabulary.
pub(super) fn bench_ids(n: usize, vocab: usize) -> Vec<u32> {
    (0..n)
        .map(|i| {
            if i == 0 {
                1
            } else {
                ((i * 7919 + 3) % vocab) as u32
            }
        })
        .collect()
}

/// The CPU's decode loops choose their variants on first use, the float32 loop over the
/// first decode steps: untimed steps (the sequence's first positions) let them choose
/// before the timed runs. The variants chosen, on the CPU backend.
fn settle_cpu_loops(
    engine: &mut decoding_engine::backend::engine::Engine,
    ids: &[u32],
) -> Result<Option<decoding_engine::kernels::tune::Tuning>, CliError> {
    if engine.report.kind != decoding_engine::BackendKind::Cpu {
        return Ok(None);
    }
    let seq = engine.new_sequence()?;
    for k in 0..decoding_engine::kernels::tune::TRIAL_STEPS {
        if k % ids.len() == 0 {
            engine.truncate(seq, 0)?;
        }
        let id = &ids[k % ids.len()..][..1];
        pollster::block_on(engine.forward(seq, id, false))?;
    }
    engine.release(seq);
    Ok(Some(decoding_engine::kernels::tune::tuning()))
}

fn print_report(r: &Report) -> Result<(), CliError> {
    let c = &r.config;
    outln!(
        "model {} (dim {}, hidden {}, layers {}, heads {}/{} kv, vocab {}, seq_len {}; {:.2}M params)",
        r.model,
        c.dim,
        c.hidden_dim,
        c.n_layers,
        c.n_heads,
        c.n_kv_heads,
        c.vocab_size,
        c.seq_len,
        r.params as f64 / 1e6
    );
    outln!(
        "weights {} ({} bytes)",
        r.precision,
        decoding_engine::units::thousands(r.weight_bytes)
    );
    match r.dispatches_per_token {
        Some(d) => outln!(
            "backend {} ({}), {d} compute dispatches per token",
            r.backend,
            r.backend_detail
        ),
        None => outln!(
            "backend {}, {} thread(s){}, {} kernels",
            r.backend,
            r.threads,
            if r.decode_alone {
                " (decode steps on one: faster on this machine now)"
            } else {
                ""
            },
            r.cpu_kernel
        ),
    }
    if let Some(t) = &r.cpu_variants {
        outln!("{}", t.describe());
    }
    if let Some(g) = &r.gpu_times {
        super::kernel_times::print(g)?;
    }
    let line = |what: &str, t: &Timing| -> Result<(), CliError> {
        outln!(
            "{what:<8} {:>6} tokens: {:>10.1} tokens/s median, {:>10.1} best",
            t.tokens,
            t.median_tokens_per_s,
            t.best_tokens_per_s
        );
        Ok(())
    };
    line("prefill", &r.prefill)?;
    line("decode", &r.decode)?;
    if let Some(n) = &r.naive {
        line("naive", n)?;
    }
    if let Some(x) = r.naive_over_cached {
        outln!(
            "naive / cached time over {} positions: {x:.1}x",
            r.decode.tokens
        );
    }
    if let Some(p) = &r.probed {
        line("probed", p)?;
    }
    if let Some(l) = &r.lens {
        line("lens", l)?;
    }
    super::bench_mask::print(&r.masks)?;
    if let (Some(x), Some(y)) = (r.probed_over_plain, r.probed_and_lens_over_plain) {
        outln!(
            "decode time with the probe / without: {x:.2}x; with the probe and the lens: {y:.2}x"
        );
    }
    for l in r.context.iter().flat_map(super::bench_context::lines) {
        outln!("{l}");
    }
    Ok(())
}
