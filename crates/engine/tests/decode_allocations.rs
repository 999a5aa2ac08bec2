//! A decode step allocates nothing (issue 50: transformers.js v4 slows 3–6.5× past 2,048
//! positions because a buffer is reallocated every step, REFERENCES.md). Every allocation
//! of the process is counted (this file is its own test binary, its one test alone in it);
//! after a prefill and a few warm-up steps (the run state, the engine's threads and their
//! scratch sized once), `Transformer::decode` runs 48 steps into the caller's logits with
//! no allocation on any thread, at every precision whose activations differ (float32, int8
//! in groups, f16), on the engine's threads and on one.

use decoding_engine::forward::RunState;
use decoding_engine::{Checkpoint, Config, KvCache, Precision, Transformer};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator as it is; the counter only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations during `f` (all threads).
fn allocations(f: impl FnOnce()) -> usize {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    ALLOCATIONS.load(Ordering::SeqCst)
}

#[test]
fn a_decode_step_allocates_nothing_at_any_position_precision_or_thread_count() {
    // Wide enough that every product and the attention split over the engine's threads.
    let config = Config::from_header([256, 768, 4, 8, 4, 1024, 600]).unwrap();
    let base = Transformer::new(Checkpoint::random(config, 7).unwrap());
    for precision in [Precision::F32, Precision::Q8, Precision::Q4, Precision::F16] {
        let model = base.at(precision);
        for alone in [false, true] {
            let run = || {
                let mut s = RunState::new(&config);
                let mut cache = KvCache::new(&config);
                let prompt: Vec<u32> = (0..200).map(|i| (i * 37 % 1024) as u32).collect();
                model.prefill(&mut cache, &prompt, false).unwrap();
                let mut logits = vec![0.0f32; config.vocab_size];
                let mut token = 3u32;
                let mut step = |s: &mut RunState, cache: &mut KvCache, logits: &mut [f32]| {
                    model.decode(s, cache, token, logits).unwrap();
                    token = (token * 31 + 7) % 1024;
                };
                for _ in 0..4 {
                    step(&mut s, &mut cache, &mut logits);
                }
                let n = allocations(|| {
                    for _ in 0..48 {
                        step(&mut s, &mut cache, &mut logits);
                    }
                });
                assert!(logits.iter().all(|v| v.is_finite()));
                assert_eq!(cache.len(), 252);
                n
            };
            let n = if alone {
                decoding_engine::par::alone(run)
            } else {
                run()
            };
            assert_eq!(
                n, 0,
                "{precision:?}, alone {alone}: {n} allocations in 48 steps"
            );
        }
    }
}
