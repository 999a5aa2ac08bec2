//! "auto" chooses the backend by measuring: a GPU is not faster for every model. On a small
//! model a GPU loses to its dispatch overhead (stories260K decoded faster on the page's wasm
//! CPU path than on an NVIDIA H200 through native wgpu), and a software adapter (Chromium's
//! SwiftShader, Mesa's lavapipe) runs the same shaders on the CPU far slower still (the
//! figures: BENCHMARKS.md, the decision on "auto" in "Decisions, by topic"). So each
//! candidate decodes a few tokens on a scratch sequence, within a time budget, and the
//! faster one runs the model; the report says both figures and why.

use crate::backend::engine::BackendReport;
use crate::backend::{Backend, BackendError, BackendKind};
use serde::{Deserialize, Serialize};
use strum::{Display, EnumString, IntoStaticStr, VariantArray};

/// What the user asked for.
#[derive(EnumString, IntoStaticStr, Display, VariantArray)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BackendChoice {
    /// The faster of the CPU and a hardware GPU, measured; the CPU without one.
    #[default]
    Auto,
    /// WebGPU through wgpu (Vulkan natively).
    #[cfg_attr(feature = "clap", value(alias = "webgpu"))]
    #[strum(to_string = "gpu", serialize = "webgpu")]
    Gpu,
    /// The CPU (threads, SIMD kernels chosen for the machine).
    Cpu,
}

impl BackendChoice {
    /// Its one name (a link's, the menu's, the CLI's).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// By name (or "webgpu"), in any case.
    pub fn parse(s: &str) -> Option<BackendChoice> {
        s.trim().parse().ok()
    }
}

/// Least timed decode steps per candidate (after one untimed warm-up step).
const MIN_STEPS: usize = 3;
/// Most timed decode steps per candidate.
const MAX_STEPS: usize = 16;

/// What a backend's decode took: milliseconds a token (the median of the timed steps).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub ms_per_token: f64,
    pub steps: usize,
}

/// Decodes on a scratch sequence of `backend` (freed after): one untimed step (pipelines
/// are built, code is warmed), then steps timed one by one until `budget_ms` has passed
/// (at least `MIN_STEPS`, at most `MAX_STEPS`, never past the context). Returns the median.
pub async fn time_decode(
    backend: &mut dyn Backend,
    now: &dyn Fn() -> f64,
    budget_ms: f64,
) -> Result<Timed, BackendError> {
    let c = *backend.config();
    let seq = backend.new_sequence()?;
    let run = async {
        let start = now();
        let token = |i: usize| ((i * 7919 + 1) % c.vocab_size) as u32;
        backend.forward(seq, &[token(0)], false).await?;
        let mut times = Vec::new();
        for i in 1..c.seq_len.min(MAX_STEPS + 1) {
            if times.len() >= MIN_STEPS && now() - start >= budget_ms {
                break;
            }
            let t0 = now();
            backend.forward(seq, &[token(i)], false).await?;
            times.push(now() - t0);
        }
        Ok::<_, BackendError>(times)
    }
    .await;
    backend.release(seq);
    let mut times = run?;
    times.sort_by(f64::total_cmp);
    Ok(Timed {
        ms_per_token: times.get(times.len() / 2).copied().unwrap_or(f64::INFINITY),
        steps: times.len(),
    })
}

/// A backend "auto" may pick, with what to say if it does.
pub struct Candidate {
    pub backend: Box<dyn Backend>,
    pub report: BackendReport,
    /// How the report names it ("CPU", "WebGPU").
    pub label: &'static str,
}

fn label_ms(label: &str, ms: f64) -> String {
    if ms < 1.0 {
        format!("{label} {ms:.2} ms a token")
    } else {
        format!("{label} {ms:.1} ms a token")
    }
}

/// Times each candidate (`budget_ms` each) and returns the fastest, its report's reason
/// naming every figure: "measured: CPU 0.20 ms a token, WebGPU 1.9 ms a token; the CPU is
/// faster for this model". A candidate whose decode fails is left out (and said so); if
/// every one fails, the first one's error.
pub async fn choose_faster(
    candidates: Vec<Candidate>,
    now: &dyn Fn() -> f64,
    budget_ms: f64,
) -> Result<(Box<dyn Backend>, BackendReport), BackendError> {
    let mut timed = Vec::new();
    let mut failed = Vec::new();
    let mut first_error = None;
    for mut c in candidates {
        match time_decode(&mut *c.backend, now, budget_ms).await {
            Ok(t) => timed.push((t.ms_per_token, c)),
            Err(e) => {
                failed.push(format!("{} failed ({e})", c.label));
                first_error.get_or_insert(e);
            }
        }
    }
    let best = timed
        .iter()
        .enumerate()
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
        .map(|(i, _)| i);
    let Some(best) = best else {
        return Err(first_error.unwrap_or(BackendError::Gpu("no backend to choose".into())));
    };
    let figures: Vec<String> = timed
        .iter()
        .map(|(ms, c)| label_ms(c.label, *ms))
        .chain(failed)
        .collect();
    let (ms, mut chosen) = timed.swap_remove(best);
    let faster = match (chosen.report.kind, timed.is_empty()) {
        (_, true) => format!("{} runs it", chosen.label),
        (BackendKind::Cpu, false) => "the CPU is faster for this model".to_string(),
        (BackendKind::Gpu, false) => "the GPU is faster for this model".to_string(),
    };
    chosen.report.reason = format!(
        "auto, measured: {}; {faster} ({})",
        figures.join(", "),
        chosen.report.reason
    );
    chosen.report.measured_ms = Some(ms);
    Ok((chosen.backend, chosen.report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::testing::Paced;
    use crate::backend::CpuBackend;
    use std::cell::Cell;
    use std::rc::Rc;

    fn model() -> std::sync::Arc<crate::forward::Transformer> {
        let c = crate::config::Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
        std::sync::Arc::new(crate::forward::Transformer::new(
            crate::weights::Checkpoint::random(c, 7).unwrap(),
        ))
    }

    fn candidate(clock: &Rc<Cell<f64>>, kind: BackendKind, ms: f64) -> Candidate {
        let label = if kind == BackendKind::Cpu {
            "CPU"
        } else {
            "WebGPU"
        };
        Candidate {
            backend: Box::new(Paced::new(
                CpuBackend::new(model()),
                kind,
                clock.clone(),
                ms,
            )),
            report: BackendReport {
                kind,
                reason: format!("{label} here"),
                dispatches_per_token: None,
                measured_ms: None,
            },
            label,
        }
    }

    /// A GPU slower per token than the CPU is not chosen, a faster one is; the reason
    /// names both figures; the budget bounds the measuring.
    #[test]
    fn auto_runs_the_faster_backend_and_says_both_figures() {
        for (gpu_ms, want) in [(9.0, BackendKind::Cpu), (0.05, BackendKind::Gpu)] {
            let clock = Rc::new(Cell::new(0.0));
            let now = {
                let c = clock.clone();
                move || c.get()
            };
            let cands = vec![
                candidate(&clock, BackendKind::Cpu, 0.2),
                candidate(&clock, BackendKind::Gpu, gpu_ms),
            ];
            let (be, report) = pollster::block_on(choose_faster(cands, &now, 100.0)).unwrap();
            assert_eq!(be.kind(), want, "{}", report.reason);
            assert_eq!(report.kind, want);
            assert!(
                report.reason.contains("CPU 0.20 ms a token"),
                "{}",
                report.reason
            );
            let gpu = if gpu_ms < 1.0 {
                "WebGPU 0.05 ms"
            } else {
                "WebGPU 9.0 ms"
            };
            assert!(report.reason.contains(gpu), "{}", report.reason);
            let which = if want == BackendKind::Cpu {
                "the CPU is faster"
            } else {
                "the GPU is faster"
            };
            assert!(report.reason.contains(which), "{}", report.reason);
            let ms = if want == BackendKind::Cpu {
                0.2
            } else {
                gpu_ms
            };
            assert!(
                (report.measured_ms.unwrap() - ms).abs() < 1e-9,
                "{:?}",
                report.measured_ms
            );
            // The measuring stops at the budget: the CPU ran its warm-up and 16 steps
            // (17 × 0.2 ms of fake time, under the budget), the 9 ms GPU until the step that
            // crossed 100 ms (≤ 109 ms), not its 16 steps (153 ms).
            if gpu_ms > 1.0 {
                assert!(clock.get() <= 17.0 * 0.2 + 109.0 + 1e-9, "{}", clock.get());
            }
        }
    }

    /// A candidate whose decode fails is left out, and the reason says so.
    #[test]
    fn a_failing_candidate_is_left_out() {
        let clock = Rc::new(Cell::new(0.0));
        let now = {
            let c = clock.clone();
            move || c.get()
        };
        let lost = Candidate {
            backend: Box::new(crate::backend::testing::LosesDevice::after(
                CpuBackend::new(model()),
                0,
            )),
            report: BackendReport {
                kind: BackendKind::Gpu,
                reason: "a GPU".into(),
                dispatches_per_token: None,
                measured_ms: None,
            },
            label: "WebGPU",
        };
        let cands = vec![lost, candidate(&clock, BackendKind::Cpu, 0.3)];
        let (be, report) = pollster::block_on(choose_faster(cands, &now, 50.0)).unwrap();
        assert_eq!(be.kind(), BackendKind::Cpu);
        assert!(report.reason.contains("WebGPU failed"), "{}", report.reason);
    }
}
