//! `bench --backend gpu`: where a decoded token's GPU time goes. The decode runs again with
//! GPU timestamps around each dispatch; each kernel's time per token is printed with the
//! launch overhead, the untimed decode's wall time minus the GPU's busy time.

use crate::error::CliError;
use decoding_engine::backend::timing::{KernelTimes, TimeSplit};
use decoding_engine::Backend;

/// One kernel's time per decoded token.
#[derive(serde::Serialize)]
pub struct KernelLine {
    name: String,
    dispatches_per_token: f64,
    gpu_us_per_token: f64,
    /// of the GPU's busy time
    share: f64,
}

/// The split of a decoded token's time, or why there is none.
#[derive(serde::Serialize)]
pub struct GpuTimes {
    /// None when the adapter writes no timestamps; then `reason` says so
    #[serde(skip_serializing_if = "Option::is_none")]
    split: Option<TimeSplit>,
    /// The plain (untimed) decode's seconds a token
    untimed_s: f64,
    kernels: Vec<KernelLine>,
    /// Decode steps timed
    tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// Decodes `ids[1..]` after `ids[0]` with timing on: the split is of that run's own wall
/// time (the same passes), and `untimed_s` (the plain decode's seconds a token) is shown
/// beside it, since a pass a dispatch costs something too. A backend without timestamps
/// gives the reason, not an error.
pub fn measure(
    backend: &mut dyn Backend,
    ids: &[u32],
    untimed_s: f64,
) -> Result<GpuTimes, CliError> {
    let seq = backend.new_sequence()?;
    pollster::block_on(backend.forward(seq, &ids[..1], false))?;
    if let Err(e) = backend.set_kernel_timing(true) {
        backend.release(seq);
        return Ok(GpuTimes {
            split: None,
            untimed_s,
            kernels: Vec::new(),
            tokens: 0,
            reason: Some(e.to_string()),
        });
    }
    let t0 = std::time::Instant::now();
    let decoded = ids[1..]
        .iter()
        .try_for_each(|&id| pollster::block_on(backend.forward(seq, &[id], false)).map(|_| ()));
    let wall = t0.elapsed().as_secs_f64();
    let times = backend.take_kernel_times().unwrap_or_default();
    backend.set_kernel_timing(false)?;
    backend.release(seq);
    decoded?;
    let tokens = times.passes.max(1) as f64;
    Ok(report(&times, wall / tokens, untimed_s))
}

fn report(t: &KernelTimes, wall_s: f64, untimed_s: f64) -> GpuTimes {
    let tokens = t.passes;
    let busy = t.busy_ns();
    let per = |x: f64| if tokens == 0 { 0.0 } else { x / tokens as f64 };
    let kernels = t
        .kernels
        .iter()
        .map(|k| KernelLine {
            name: k.name.clone(),
            dispatches_per_token: per(k.dispatches as f64),
            gpu_us_per_token: per(k.gpu_ns) / 1e3,
            share: if busy > 0.0 { k.gpu_ns / busy } else { 0.0 },
        })
        .collect();
    let reason = (t.untimed_passes > 0).then(|| {
        format!(
            "{} passes too long for one query set ran untimed",
            t.untimed_passes
        )
    });
    GpuTimes {
        split: t.split(wall_s, tokens),
        untimed_s,
        kernels,
        tokens,
        reason,
    }
}

pub fn print(g: &GpuTimes) -> Result<(), CliError> {
    let Some(s) = g.split else {
        let why = g.reason.as_deref().unwrap_or("no timed passes");
        outln!("GPU time per kernel: not measured ({why})");
        return Ok(());
    };
    outln!(
        "GPU time per decoded token ({} tokens, a timed pass a dispatch): wall {:.3} ms = GPU busy {:.3} ms + launch overhead {:.3} ms ({:.0} %); untimed decode {:.3} ms",
        g.tokens,
        s.wall_s * 1e3,
        s.gpu_busy_s * 1e3,
        s.overhead_s * 1e3,
        100.0 * s.overhead_s / s.wall_s.max(f64::MIN_POSITIVE),
        g.untimed_s * 1e3
    );
    for k in &g.kernels {
        outln!(
            "  {:<11} {:>5.1} dispatches {:>10.1} µs {:>5.1} %",
            k.name,
            k.dispatches_per_token,
            k.gpu_us_per_token,
            100.0 * k.share
        );
    }
    Ok(())
}
