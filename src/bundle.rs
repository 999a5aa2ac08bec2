//! `decoding-explorer bundle`: the built page and chosen models in one folder that runs from a
//! USB stick with any static server (`python3 -m http.server`). Each model's files are checked
//! by the engine as the page would check them (`ModelSource::identify` and `check`, against the
//! page's 1.5 GiB budget) before they are copied; `bundle.json` lists them with their sizes and
//! sha256, and the page (told by `<meta name="decoding-bundle">`) offers them under "In this
//! folder". The page's service worker then keeps the page for offline use as anywhere else.

use crate::error::CliError;
use decoding_engine::budget::Budget;
use decoding_engine::formats::source::{DiskFile, ModelFile, ModelSource};
use decoding_page::remote::{safe_name, BundleEntry, BundleFile};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct BundleArgs {
    /// The folder to write (it must not exist, or be empty)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The built page (`trunk build` writes it to dist/)
    #[arg(long, value_name = "DIR", default_value = "dist")]
    dist: PathBuf,
    /// A model to put in the folder: its files separated by commas (a GGUF file alone; a
    /// llama2.c checkpoint and its tokenizer; a Hugging Face config.json, tokenizer.json and
    /// model.safetensors). Repeat for more models.
    #[arg(long = "add", value_name = "FILE[,FILE...]")]
    add: Vec<String>,
}

/// The page's memory budget (wasm32's `Budget::default()`).
const PAGE_BUDGET: Budget = Budget(3 << 29);

const META: &str = r#"<meta name="decoding-bundle" content="bundle.json" />"#;

pub fn bundle(a: BundleArgs) -> Result<(), CliError> {
    let usage = |m: String| CliError::Usage(m);
    let index = a.dist.join("index.html");
    let html = std::fs::read_to_string(&index).map_err(|e| io(&index, e))?;
    if !html.contains(r#"<meta name="decoding-release" content=""#)
        || html.contains(r#"content="dev""#)
    {
        return Err(usage(format!(
            "{}: not a built page (run `trunk build` first: scripts/serve.sh builds it)",
            index.display()
        )));
    }
    let inside = |p: &Path| {
        let (p, d) = (std::path::absolute(p), std::path::absolute(&a.dist));
        matches!((p, d), (Ok(p), Ok(d)) if p.starts_with(&d))
    };
    if inside(&a.out) {
        return Err(usage(format!(
            "{} is inside the page's folder {}: give a folder outside it",
            a.out.display(),
            a.dist.display()
        )));
    }
    if a.out.exists()
        && std::fs::read_dir(&a.out)
            .map_err(|e| io(&a.out, e))?
            .next()
            .is_some()
    {
        return Err(usage(format!(
            "{} is not empty: give a new folder",
            a.out.display()
        )));
    }
    // Every model checked before anything is written.
    let mut models = Vec::new();
    for set in &a.add {
        models.push(check_set(set)?);
    }
    copy_dir(&a.dist, &a.out)?;
    let mut entries = Vec::new();
    for (i, (paths, name)) in models.into_iter().enumerate() {
        let folder = format!("models/bundle/{}-{}", i + 1, safe_name(&name));
        std::fs::create_dir_all(a.out.join(&folder)).map_err(|e| io(&a.out, e))?;
        let mut files = Vec::new();
        for p in &paths {
            let file = safe_name(&p.file_name().unwrap_or_default().to_string_lossy());
            let to = a.out.join(&folder).join(&file);
            std::fs::copy(p, &to).map_err(|e| io(p, e))?;
            let (size, sha256) = digest(&to)?;
            files.push(BundleFile {
                url: format!("/{folder}/{file}"),
                size,
                sha256,
            });
        }
        entries.push(BundleEntry { name, files });
    }
    let json = serde_json::to_string_pretty(&entries).map_err(|e| usage(e.to_string()))?;
    std::fs::write(a.out.join("bundle.json"), json).map_err(|e| io(&a.out, e))?;
    let page = a.out.join("index.html");
    let stamped = html.replacen("</head>", &format!("  {META}\n  </head>"), 1);
    std::fs::write(&page, stamped).map_err(|e| io(&page, e))?;
    outln!(
        "{}: the page and {} model(s). Run it with any static server, e.g.\n  cd {} && python3 -m http.server 8000\nthen open http://127.0.0.1:8000/ (once opened, it also works offline).",
        a.out.display(),
        entries.len(),
        a.out.display()
    );
    Ok(())
}

/// A model's files, checked as the page checks them; its name (the largest file's stem).
fn check_set(set: &str) -> Result<(Vec<PathBuf>, String), CliError> {
    let paths: Vec<PathBuf> = set
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect();
    let mut files = Vec::new();
    for p in &paths {
        let f = DiskFile::open(p).map_err(|e| io(p, e))?;
        files.push(ModelFile::new(p.display().to_string(), Box::new(f)));
    }
    let source = ModelSource::identify(&mut files)
        .map_err(|e| CliError::Usage(format!("--add {set}: {e}")))?;
    let checked = source
        .check(&mut files, PAGE_BUDGET)
        .map_err(|e| CliError::Usage(format!("--add {set}: {e} (the page's budget is 1.5 GiB)")))?;
    let mut ordered = paths.clone();
    ordered.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let name = checked
        .name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(&checked.name)
        .to_string();
    Ok((ordered, name))
}

fn digest(p: &Path) -> Result<(u64, String), CliError> {
    let mut f = std::fs::File::open(p).map_err(|e| io(p, e))?;
    let (mut sha, mut buf, mut size) = (Sha256::new(), vec![0u8; 1 << 20], 0u64);
    loop {
        let n = f.read(&mut buf).map_err(|e| io(p, e))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        size += n as u64;
    }
    Ok((
        size,
        sha.finalize().iter().map(|b| format!("{b:02x}")).collect(),
    ))
}

/// The page's files, without the tests' model fixtures.
fn copy_dir(from: &Path, to: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    for e in std::fs::read_dir(from).map_err(|e| io(from, e))? {
        let e = e.map_err(|err| io(from, err))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == "fixtures" || e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if e.file_type().map_err(|err| io(&src, err))?.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|err| io(&src, err))?;
        }
    }
    Ok(())
}

fn io(p: &Path, e: std::io::Error) -> CliError {
    CliError::Io {
        path: p.to_path_buf(),
        error: e.to_string(),
    }
}
