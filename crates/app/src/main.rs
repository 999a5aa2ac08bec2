//! The page's UI thread (built by Trunk from `www/index.html`): a Leptos app that talks to the
//! engine's web worker (`decoding-worker`'s bin `worker`) through typed messages.

#[cfg(target_arch = "wasm32")]
mod ui;

#[cfg(target_arch = "wasm32")]
fn main() {
    ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the app runs in a browser: serve it with `scripts/serve.sh`");
}
