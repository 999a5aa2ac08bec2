//! `quality`: what quantization costs, f32, f16, q8 and q4 over a fixed text against f32; q8
//! and q4 with int8 activations (the CPU's product) and with float32 ones (the GPU's), so
//! the error the activations' rounding adds is its own line.

use crate::error::CliError;
use crate::files::ModelFiles;
use decoding_engine::quant::Activations;
use decoding_engine::serving::quality::{compare, Quality, EVAL_TEXT};
use decoding_engine::units::{human_bytes, thousands};
use decoding_engine::{Model, Precision};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct QualityArgs {
    /// Text to evaluate on (default: the stories kept in the repository for this)
    #[arg(long, value_name = "FILE")]
    text: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct QualityRow {
    precision: Precision,
    /// q8 and q4: what the matrices multiply (int8 or f32 activations)
    #[serde(skip_serializing_if = "Option::is_none")]
    activations: Option<Activations>,
    weight_bytes: u64,
    #[serde(flatten)]
    quality: Quality,
}

/// `quality`: f32, q8 and q4 of the model over the evaluation text, against f32 (the
/// loaded weights dequantized when the file is quantized).
pub fn quality(model: &Model, a: QualityArgs) -> Result<(), CliError> {
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
    let working = crate::progress::Progress::new(format!(
        "quality: f32, f16, q8 and q4 over {} tokens",
        tokens.len()
    ));
    let mut rows = Vec::new();
    for p in Precision::ALL {
        let quantized = matches!(p, Precision::Q8 | Precision::Q4);
        let other = t.at(p);
        let variants: &[Option<Activations>] = if quantized {
            &[Some(Activations::Int8), Some(Activations::F32)]
        } else {
            &[None]
        };
        for &a in variants {
            let other = match a {
                Some(a) => other.with_activations(a),
                None => other.clone(),
            };
            let q = compare(&reference, &other, &tokens)
                .map_err(|e| CliError::Usage(format!("evaluating {p}: {e}")))?;
            rows.push(QualityRow {
                precision: p,
                activations: a,
                weight_bytes: other.weights.bytes(&t.config),
                quality: q,
            });
        }
    }
    drop(working);
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| CliError::Usage(e.to_string()))?
        );
        return Ok(());
    }
    outln!(
        "{} tokens of text, {} positions; against f32{}",
        tokens.len(),
        rows[0].quality.positions,
        if t.weights.precision() == Precision::F32 {
            ""
        } else {
            " (the file's weights dequantized)"
        }
    );
    outln!(
        "{:<18} {:>26} {:>10} {:>12} {:>10} {:>10}",
        "precision",
        "weight bytes",
        "mean KL",
        "max KL",
        "same top",
        "perplexity"
    );
    for r in &rows {
        outln!(
            "{:<18} {:>26} {:>10.6} {:>12.6} {:>9.1}% {:>10.3}",
            match r.activations {
                Some(a) => format!("{} ({} acts)", r.precision.name(), a.name()),
                None => r.precision.name().to_string(),
            },
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
