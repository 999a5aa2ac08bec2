// Starts the page's wasm. Trunk's `pattern_script` (Trunk.toml) puts a <script> tag naming
// this file and the hashed wasm-bindgen files in index.html, instead of Trunk's inline
// loader, so that the page's Content-Security-Policy can refuse every inline script.
const tag = document.querySelector('script[data-wasm]');
const { default: init } = await import(tag.dataset.js);
await init({ module_or_path: tag.dataset.wasm });
