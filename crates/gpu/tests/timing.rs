//! Per-kernel GPU times (timestamps around each dispatch) on stories260K: the same logits
//! as untimed passes, every kernel of the plan named with its dispatch count, and a clear
//! refusal where the adapter writes no timestamps.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{gpu_backend, model};
use decoding_engine::backend::Backend;
use decoding_engine::{BackendError, Batch, Logits};
use decoding_gpu::backend::{KERNEL_NAMES, LAYER_KERNELS};
use pollster::block_on;

/// Prefill of 5 tokens then 6 decode steps; the logits of every step.
fn run(be: &mut dyn Backend) -> Vec<Vec<f32>> {
    let seq = be.new_sequence().unwrap();
    let mut out = vec![block_on(be.forward(seq, &[1, 40, 60, 80, 100], false)).unwrap()];
    for id in [7u32, 9, 300, 2, 450, 33] {
        out.push(block_on(be.forward(seq, &[id], false)).unwrap());
    }
    be.release(seq);
    out
}

#[test]
fn timed_passes_give_the_same_logits_and_time_every_kernel() {
    let m = model();
    let Some(mut be) = gpu_backend(&m) else {
        return;
    };
    let layers = m.transformer.config.n_layers as u64;
    let plain = run(&mut be);
    assert_eq!(be.take_kernel_times(), None, "not timing yet");
    if !be.timestamps() {
        let e = be.set_kernel_timing(true).unwrap_err();
        assert!(
            matches!(&e, BackendError::Unsupported(m) if m.contains("timestamp-query")),
            "{e}"
        );
        return;
    }
    be.set_kernel_timing(true).unwrap();
    let timed = run(&mut be);
    assert_eq!(timed, plain, "timing changed the logits");
    let t = be.take_kernel_times().unwrap();
    assert_eq!(t.passes, 7, "one prefill and six decode submissions");
    assert_eq!(t.untimed_passes, 0);
    let names: Vec<&str> = t.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, KERNEL_NAMES);
    for k in &t.kernels {
        let per_pass = if LAYER_KERNELS.contains(&k.name.as_str()) {
            layers
        } else {
            1
        };
        assert_eq!(k.dispatches, 7 * per_pass, "{}", k.name);
        assert!(
            k.gpu_ns > 0.0 && k.gpu_ns.is_finite(),
            "{}: {}",
            k.name,
            k.gpu_ns
        );
    }
    let again = be.take_kernel_times().unwrap();
    assert_eq!((again.passes, again.kernels.len()), (0, 0), "taking clears");
    be.set_kernel_timing(false).unwrap();
    run(&mut be);
    assert_eq!(be.take_kernel_times(), None, "timing off");
}

/// Two sequences in one pass: Q/K/V and attention run once a sequence's run; a pass
/// without logits has no final norm or classifier.
#[test]
fn a_batch_times_each_sequences_dispatches() {
    let m = model();
    let Some(mut be) = gpu_backend(&m) else {
        return;
    };
    if !be.timestamps() {
        return; // the refusal is the test above's
    }
    let layers = m.transformer.config.n_layers as u64;
    let (a, b) = (be.new_sequence().unwrap(), be.new_sequence().unwrap());
    let mut batch = Batch::tokens(a, 0, &[1, 5, 9], Logits::None);
    for r in Batch::tokens(b, 0, &[1, 7], Logits::None).rows() {
        batch.push(*r);
    }
    be.set_kernel_timing(true).unwrap();
    block_on(be.forward_batch(batch)).unwrap();
    let t = be.take_kernel_times().unwrap();
    let count = |n: &str| t.kernels.iter().find(|k| k.name == n).map(|k| k.dispatches);
    assert_eq!(count("qkv"), Some(2 * layers));
    assert_eq!(count("attention"), Some(2 * layers));
    assert_eq!(count("wo"), Some(layers));
    assert_eq!(count("classifier"), None);
}
