//! The Decoding Explorer page's engine worker: [`session`] is its logic in plain Rust
//! (tested natively: every request, every kind of model file), `glue` its browser glue
//! (wasm only: messages in and out, bytes read from files and fetches), and `fuzz` every
//! parser of outside data as a fuzz target (feature `fuzzing`).

pub mod session;

#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz;

#[cfg(target_arch = "wasm32")]
mod download;
#[cfg(target_arch = "wasm32")]
pub mod glue;
#[cfg(target_arch = "wasm32")]
mod store;
#[cfg(target_arch = "wasm32")]
pub mod threads;
