//! The model's files as the command line names them (a llama2.c checkpoint and tokenizer,
//! a GGUF file, a Hugging Face set), loaded within the memory budget at the precision
//! asked for, and the backend opened for it.

use crate::error::CliError;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::backend::engine::Engine;
use decoding_engine::budget::Budget;
use decoding_engine::formats::hf::HfError;
use decoding_engine::formats::source::{
    DiskFile, Looks, ModelFile, ModelSource, Shared, PROBE_BYTES,
};
use decoding_engine::quant::Activations;
use decoding_engine::{Model, ModelError, Precision};
use decoding_gpu::open_backend;
use std::path::{Path, PathBuf};

const DEFAULT_MODEL: &str = "assets/models/stories260K/stories260K.bin";
const DEFAULT_TOKENIZER: &str = "assets/models/stories260K/tok512.bin";

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

/// `--memory-limit` in GiB: a finite number > 0 (no silent clamping).
pub fn parse_budget(gib: Option<&str>) -> Result<Budget, CliError> {
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

/// Checks that `sequences` KV caches fit beside the model's weights and run state in the
/// memory limit, before any is opened (`what`: the option that asks for them, for the
/// message): beam search keeps a cache a beam, a batch one a row.
pub fn check_sequences(
    c: &decoding_engine::Config,
    sequences: usize,
    budget: Budget,
    what: &str,
) -> Result<(), CliError> {
    decoding_engine::budget::Footprint::of(c)
        .and_then(|f| f.check_sequences(c, sequences.saturating_sub(1) as u64, budget))
        .map_err(|e| {
            CliError::Usage(format!(
                "{what}: {sequences} sequences' KV caches do not fit in the memory limit ({e}); \
                 ask for fewer, or raise --memory-limit"
            ))
        })
}

/// No `--model`, and the default model is not where it is looked for.
fn no_default_model() -> CliError {
    CliError::Usage(format!(
        "no --model given, and the default model ({DEFAULT_MODEL}) is neither in this \
         directory nor in the source tree this program was built from: run scripts/setup.sh \
         in the repository (it copies stories260K from ../shared/models or downloads it, \
         checking its sha256), or give --model PATH"
    ))
}

/// Where the model and tokenizer come from.
pub struct ModelFiles {
    pub model: Option<PathBuf>,
    pub tokenizer: Option<PathBuf>,
    pub budget: Budget,
    /// `--precision`: the matrices requantized after loading
    pub precision: Option<Precision>,
    /// `--activations`: what the CPU multiplies quantized matrices with
    pub activations: Activations,
    /// `--chat`: prompts go through the model's chat template
    pub chat: bool,
    /// `--chat-template`: a template file instead of the model's
    pub chat_template: Option<PathBuf>,
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

    pub fn read(path: &Path) -> Result<Vec<u8>, CliError> {
        std::fs::read(path).map_err(|e| CliError::Io {
            path: path.to_path_buf(),
            error: e.to_string(),
        })
    }

    /// The model, its prompts through its chat template with `--chat` (refused at once
    /// when it has none, or one that cannot be used).
    pub fn load(&self) -> Result<Model, CliError> {
        let loading = crate::progress::Progress::new("loading the model");
        let mut m = self.load_files()?;
        drop(loading);
        if let Some(p) = &self.chat_template {
            let source = String::from_utf8(Self::read(p)?).map_err(|e| CliError::Io {
                path: p.clone(),
                error: format!("not UTF-8 text ({e})"),
            })?;
            let t = decoding_engine::tokenizer::chat::ChatTemplate::new(source)
                .map_err(|e| CliError::Usage(format!("--chat-template {}: {e}", p.display())))?;
            m.chat_template = Some(Ok(t));
        }
        if self.chat {
            m.render_chat("")
                .map_err(|e| CliError::Usage(format!("--chat: {e}")))?;
            m.chat = true;
        }
        Ok(m)
    }

    fn load_files(&self) -> Result<Model, CliError> {
        let mp = Self::resolve(&self.model, DEFAULT_MODEL);
        if self.model.is_none() && !mp.exists() {
            return Err(no_default_model());
        }
        let mut first = Self::open(&mp)?;
        let model_err = |e: ModelError| CliError::Model {
            path: mp.clone(),
            error: e,
        };
        let looks = Looks::of(
            &first.head(PROBE_BYTES).map_err(|e| model_err(e.into()))?,
            first.len(),
        );
        // What goes with the model file: nothing with a GGUF file (it carries its
        // tokenizer), config.json and a tokenizer beside a Hugging Face checkpoint, else its
        // tokenizer. Which file is which is then told by content (`ModelSource`).
        let mut files = vec![first];
        // Each file's path, for the mapping below (a file's name is only for messages).
        let mut paths = vec![mp.clone()];
        match looks {
            Looks::Gguf if self.tokenizer.is_some() => {
                return Err(CliError::Usage(format!(
                    "{} is a GGUF file, which carries its own tokenizer: drop --tokenizer",
                    mp.display()
                )))
            }
            Looks::Gguf => {}
            Looks::Safetensors => {
                let dir = mp.parent().unwrap_or(Path::new("."));
                let config = dir.join("config.json");
                if !config.exists() {
                    return Err(CliError::Usage(format!(
                        "{} is a Hugging Face checkpoint (safetensors): it needs its config.json beside it, and {} is not there",
                        mp.display(),
                        config.display()
                    )));
                }
                let tok = self
                    .tokenizer
                    .clone()
                    .unwrap_or_else(|| dir.join("tokenizer.json"));
                paths.extend([config, tok]);
            }
            // A file named .gguf that is not one: the engine says so (rather than asking for
            // a llama2.c tokenizer it would not need).
            _ if self.tokenizer.is_none()
                && mp
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("gguf")) => {}
            _ => paths.push(Self::resolve(&self.tokenizer, DEFAULT_TOKENIZER)),
        }
        for p in &paths[1..] {
            files.push(Self::open(p)?);
        }
        let source = ModelSource::identify(&mut files).map_err(|e| model_err(e.into()))?;
        let file_err = |e: ModelError| Self::file_error(e, &source, &paths);
        let checked = source.check(&mut files, self.budget).map_err(file_err)?;
        if let ModelSource::Llama2c { checkpoint, .. } = source {
            // A llama2.c file is mapped, read-only, once its header passed: its float32
            // tensors are used in place, so the weights in memory are the file's pages
            // (shared with the page cache), not a copy, and nothing is read twice
            // (llama2.c's run.c maps its file too).
            let path = &paths[checkpoint];
            let file = std::fs::File::open(path).map_err(|e| Self::io(path, e))?;
            // SAFETY: the mapping is read-only and private; like every program that maps
            // its weights (run.c, llama.cpp) this assumes the file is not truncated or
            // rewritten by another process while it runs.
            let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }
                .map_err(|e| Self::io(path, e))?;
            files[checkpoint].bytes = Box::new(Shared(std::sync::Arc::new(map)));
        }
        let model = source
            .load(&mut files, checked, self.budget)
            .map_err(file_err)?;
        Ok(self.at_precision(model))
    }

    /// A load's error under the path of the file it is about: a tokenizer's under the
    /// tokenizer's, a config's under the config's, the rest under the model's.
    fn file_error(e: ModelError, source: &ModelSource, paths: &[PathBuf]) -> CliError {
        let at = match (&e, source) {
            (ModelError::Tokenizer(_), ModelSource::Llama2c { tokenizer, .. })
            | (ModelError::Tokenizer(_), ModelSource::HuggingFace { tokenizer, .. }) => *tokenizer,
            (
                ModelError::Hf(
                    HfError::ConfigJson(_)
                    | HfError::ConfigTooLarge { .. }
                    | HfError::Missing(_)
                    | HfError::Value { .. }
                    | HfError::Architecture(_)
                    | HfError::Unsupported(_),
                ),
                ModelSource::HuggingFace { config, .. },
            ) => *config,
            _ => 0,
        };
        CliError::Model {
            path: paths.get(at).or(paths.first()).cloned().unwrap_or_default(),
            error: e,
        }
    }

    /// A file of the model's, by its path.
    fn open(path: &Path) -> Result<ModelFile, CliError> {
        let file = DiskFile::open(path).map_err(|e| Self::io(path, e))?;
        Ok(ModelFile::new(path.display().to_string(), Box::new(file)))
    }

    fn io(path: &Path, e: std::io::Error) -> CliError {
        CliError::Io {
            path: path.to_path_buf(),
            error: e.to_string(),
        }
    }

    /// The model with its matrices at `--precision` (the loaded weights dropped), multiplied
    /// with `--activations`.
    pub fn at_precision(&self, model: Model) -> Model {
        let model = match self.precision {
            Some(p) if p != model.transformer.weights.precision() => {
                model.with_transformer(std::sync::Arc::new(model.transformer.at(p)))
            }
            _ => model,
        };
        model.with_activations(self.activations)
    }

    pub fn is_default(&self) -> bool {
        self.model.is_none()
    }
}
