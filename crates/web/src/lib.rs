//! The Decoding Explorer page. The UI (Leptos, bin `app`) and the engine (bin `worker`, a web
//! worker) talk through the typed messages of [`protocol`]; [`session`] is the worker's logic
//! in plain Rust, tested natively. Browser glue lives in `ui` and `worker_glue` (wasm only).

pub mod protocol;
pub mod session;
pub mod state;

#[cfg(target_arch = "wasm32")]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod worker_glue;
