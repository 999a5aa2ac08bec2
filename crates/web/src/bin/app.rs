//! The page's UI thread (built by Trunk from `www/index.html`).

#[cfg(target_arch = "wasm32")]
fn main() {
    decoding_web::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the app runs in a browser: serve it with `scripts/serve`");
}
