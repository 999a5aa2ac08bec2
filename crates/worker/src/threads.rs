//! The engine's threads as web workers (the build with shared memory, `+atomics`:
//! `scripts/build-threads.sh`). A member of the engine's team (`par_team.rs`) is started
//! here: a worker running `thread.js` gets this module, its memory and a pointer to the
//! member's closure, instantiates the module on the same memory (wasm-bindgen gives the
//! instance its own stack and thread-locals, and runs `main` on the first instance only) and
//! calls [`thread_entry`]. Also what the page may use: the browser's logical processors
//! and, in the build without shared memory, why it runs one thread.

use crate::session::Cores;
use decoding_page::protocol::ThreadWhy;
#[cfg(target_feature = "atomics")]
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A member's closure, boxed twice so that a thin pointer crosses to the new worker.
#[cfg(target_feature = "atomics")]
type Start = Box<dyn FnOnce() + Send>;

/// Runs the closure `ptr` points at (`spawn`'s, given to this worker alone): a team member,
/// which returns when its team is retired; `thread.js` then closes the worker.
#[cfg(target_feature = "atomics")]
#[wasm_bindgen]
pub fn thread_entry(ptr: u32) {
    // SAFETY: `ptr` is `spawn`'s `Box::into_raw`, posted to exactly one worker, which calls
    // this once.
    let f = unsafe { Box::from_raw(ptr as *mut Start) };
    f();
}

/// Called by `thread.js` when [`thread_entry`] trapped (a panic aborts in the page's build):
/// the member's job is counted as done and panicked, so the engine's thread reports a crash
/// instead of waiting for it forever.
#[cfg(target_feature = "atomics")]
#[wasm_bindgen]
pub fn thread_trapped() {
    decoding_engine::par::member_trapped();
}

/// Starts a web worker running `f` on this module and memory.
#[cfg(target_feature = "atomics")]
fn spawn(f: Start) -> Result<(), String> {
    let js = |e: JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let opts = web_sys::WorkerOptions::new();
    opts.set_name("engine-thread");
    // thread.js with this worker's own query (its release: www/sw.js keeps them together).
    let search = web_sys::WorkerGlobalScope::location(&js_sys::global().unchecked_into()).search();
    let worker =
        web_sys::Worker::new_with_options(&format!("./thread.js{search}"), &opts).map_err(js)?;
    let ptr = Box::into_raw(Box::new(f));
    let msg = js_sys::Array::of3(
        &wasm_bindgen::module(),
        &wasm_bindgen::memory(),
        &JsValue::from(ptr as u32),
    );
    worker.post_message(&msg).map_err(|e| {
        // SAFETY: the message did not go: no worker holds the pointer.
        drop(unsafe { Box::from_raw(ptr) });
        js(e)
    })
}

/// Lets the engine start its team's members (once, at the worker's start).
pub fn install() {
    #[cfg(target_feature = "atomics")]
    decoding_engine::par::set_spawner(spawn);
}

/// The browser's processors, and why one thread where the page cannot have more.
pub fn cores() -> Cores {
    let global = js_sys::global();
    let logical = global
        .dyn_ref::<web_sys::WorkerGlobalScope>()
        .map_or(1.0, |g| g.navigator().hardware_concurrency()) as u32;
    let flag = |name: &str| {
        js_sys::Reflect::get(&global, &name.into())
            .ok()
            .is_some_and(|v| v.is_truthy())
    };
    let one_thread = if cfg!(target_feature = "atomics") {
        None
    } else if !flag("crossOriginIsolated") {
        Some(ThreadWhy::NotIsolated)
    } else {
        Some(ThreadWhy::NoSharedMemory)
    };
    Cores {
        logical: logical.max(1),
        one_thread,
    }
}
