//! The engine's web worker (built by Trunk as `worker.js` + `worker_bg.wasm`).

#[cfg(target_arch = "wasm32")]
fn main() {
    decoding_worker::glue::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the worker runs in a browser: build it with `trunk build`");
}
