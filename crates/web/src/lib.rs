//! The Decoding Explorer page's engine side. The UI (crate `decoding-app`) and the engine (bin
//! `worker` here, a web worker) talk through the typed messages of [`protocol`]; [`session`] is
//! the worker's logic and [`page`] the page's plain state (links, KV arithmetic), both tested
//! natively. `worker_glue` is the worker's browser glue (wasm only).

pub mod export;
pub mod finite;
pub mod fuzz;
pub mod geometry;
pub mod heap;
pub mod lesson;
pub mod packed;
pub mod page;
pub mod protocol;
pub mod session;
pub mod taxonomy;
pub mod verdict;

#[cfg(target_arch = "wasm32")]
pub mod worker_glue;
