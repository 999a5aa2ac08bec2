// Starts the page's wasm. Trunk's `pattern_script` (Trunk.toml) puts a <script> tag naming
// this file and the hashed wasm-bindgen files in index.html, instead of Trunk's inline
// loader, so that the page's Content-Security-Policy can refuse every inline script.
// The colour scheme is set first (the link's `theme=`, else the system's), so that the page
// is never drawn light and then dark; the app keeps it in step afterwards (ui/theme.rs).
const chosen = new URLSearchParams(location.search).get('theme');
const dark = chosen === 'dark' || (chosen !== 'light' && matchMedia('(prefers-color-scheme: dark)').matches);
document.documentElement.dataset.theme = dark ? 'dark' : 'light';
const tag = document.querySelector('script[data-wasm]');
const { default: init } = await import(tag.dataset.js);
await init({ module_or_path: tag.dataset.wasm });
