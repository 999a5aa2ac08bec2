//! `quantize`: the model written as a llama2.c version-2 (Q8_0) file.

use crate::error::CliError;
use decoding_engine::units::thousands;
use decoding_engine::weights::Checkpoint;
use decoding_engine::Model;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct QuantizeArgs {
    /// Where to write the version-2 file
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// `quantize --out FILE`: the model as a llama2.c version-2 file (quantized to Q8 with
/// export.py's group size unless it already is Q8).
pub fn quantize(model: &Model, a: QuantizeArgs) -> Result<(), CliError> {
    let t = &model.transformer;
    let w = &t.weights;
    if !t.config.is_llama2c() || w.qkv_bias.is_some() || w.rope_factors.is_some() {
        return Err(CliError::Usage(format!(
            "a llama2.c file holds a plain Llama (RoPE θ 10,000, RMSNorm ε 1e-5, no biases, no RoPE factors); this model (θ {}, ε {}{}{}) would lose what the file cannot say",
            t.config.rope_theta,
            t.config.rms_eps,
            if w.qkv_bias.is_some() { ", Q/K/V biases" } else { "" },
            if w.rope_factors.is_some() { ", Llama 3 RoPE factors" } else { "" },
        )));
    }
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
    outln!(
        "wrote {} ({} bytes, llama2.c version 2: Q8_0, groups of {})",
        a.out.display(),
        thousands(bytes),
        decoding_engine::quant::q8_group_for(t.config.dim)
    );
    Ok(())
}
