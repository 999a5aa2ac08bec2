// Starts the page's wasm. Trunk's `pattern_script` (Trunk.toml) puts a <script> tag naming
// this file and the hashed wasm-bindgen files in index.html, instead of Trunk's inline
// loader, so that the page's Content-Security-Policy can refuse every inline script.
//
// The colour scheme is set first (the link's `theme=`, else the system's), so that the page
// is never drawn light and then dark; the app keeps it in step afterwards (ui/theme.rs).
const chosen = new URLSearchParams(location.search).get('theme');
const dark = chosen === 'dark' || (chosen !== 'light' && matchMedia('(prefers-color-scheme: dark)').matches);
document.documentElement.dataset.theme = dark ? 'dark' : 'light';
// An update of the page that the service worker fetched in the background last time is
// applied now, before anything is drawn (www/sw.js): never under a lesson in progress.
const sw = navigator.serviceWorker;
if (sw?.controller) {
  const waiting = (await sw.getRegistration())?.waiting;
  if (waiting) {
    // (Reloaded after 3 s at the latest: a page is never left blank waiting for it.)
    await new Promise((resolve) => {
      sw.addEventListener('controllerchange', resolve, { once: true });
      waiting.postMessage('take-over');
      setTimeout(resolve, 3000);
    });
    location.reload();
    await new Promise(() => {});
  }
}
const tag = document.querySelector('script[data-wasm]');
const { default: init } = await import(tag.dataset.js);
await init({ module_or_path: tag.dataset.wasm });
// Offline use from now on (a page served without a service worker's support still runs),
// registered once the page has settled: the first visit's copy of the release (about 10 MB)
// then does not compete with the first slider moves on a machine of two cores.
setTimeout(() => {
  sw?.register('/sw.js').catch((e) => console.warn(`offline use unavailable: ${e.message}`));
}, 5000);
