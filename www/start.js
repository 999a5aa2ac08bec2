// Starts the page's wasm. Trunk's `pattern_script` (Trunk.toml) puts a <script> tag naming
// this file and the hashed wasm-bindgen files in index.html, instead of Trunk's inline
// loader, so that the page's Content-Security-Policy can refuse every inline script.
//
// The colour scheme is set first (the link's `theme=`, else the system's), so that the page
// is never drawn light and then dark; the app keeps it in step afterwards (ui/theme.rs).
const chosen = new URLSearchParams(location.search).get('theme');
const dark = chosen === 'dark' || (chosen !== 'light' && matchMedia('(prefers-color-scheme: dark)').matches);
document.documentElement.dataset.theme = dark ? 'dark' : 'light';
const tag = document.querySelector('script[data-wasm]');
// An update of the page that the service worker fetched in the background last time is
// applied now, before anything is drawn (www/sw.js): never under a lesson in progress. The
// waiting release is asked to take over, and the page reloads once it has. Chromium holds
// that activation while the outgoing worker has requests in flight (this page's preloads, at
// this moment), and looks again only when a request that the browser itself sees ends (a
// page's or a frame's, not a fetch's): so the page's script and wasm are read first, and each
// ask (every 250 ms) loads a small file the outgoing worker answers from its cache into a
// hidden frame. If the release has not taken over in 10 s, the page starts as it is: a
// reload then would put the next page's request to a worker being replaced, which Chromium
// can leave unanswered. Its engine is still its own even if the new release takes over while
// it starts (the engine's requests carry the page's release: www/sw.js).
const sw = navigator.serviceWorker;
if (sw?.controller) {
  const registration = await sw.getRegistration();
  if (registration?.waiting) {
    const deadline = new Promise((resolve) => setTimeout(() => resolve(false), 10000));
    const read = (url) => fetch(url).then((r) => r.arrayBuffer()).catch(() => {});
    await Promise.race([deadline, Promise.all([import(tag.dataset.js).catch(() => {}), read(tag.dataset.wasm)])]);
    const small = document.querySelector('link[rel=icon]')?.getAttribute('href') ?? tag.dataset.js;
    const tookOver = await Promise.race([deadline, new Promise((resolve) => {
      const ask = () => {
        if (!registration.waiting) return;
        registration.waiting.postMessage('take-over');
        // (A frame's load is a request the browser itself sees end; a fetch's is not.)
        const frame = Object.assign(document.createElement('iframe'), { src: small, hidden: true });
        frame.onload = frame.onerror = () => frame.remove();
        setTimeout(() => frame.remove(), 2000);
        document.documentElement.append(frame);
      };
      const again = setInterval(ask, 250);
      deadline.then(() => clearInterval(again));
      sw.addEventListener('controllerchange', () => {
        clearInterval(again);
        resolve(true);
      }, { once: true });
      ask();
    })]);
    if (tookOver) {
      location.reload();
      await new Promise(() => {});
    }
  }
}
const { default: init } = await import(tag.dataset.js);
await init({ module_or_path: tag.dataset.wasm });
// Offline use from now on (a page served without a service worker's support still runs).
// The first visit copies the release (about 10 MB) into the browser's cache, which on a
// machine of two cores competes with a slider being dragged: the worker is registered once
// the page has settled (5 s) and then when its user pauses (2 s with no input), or after a
// minute whatever the user does.
const INPUTS = ['pointerdown', 'pointermove', 'keydown', 'input', 'wheel'];
let quiet;
let registered = false;
const register = () => {
  if (registered) return;
  registered = true;
  clearTimeout(quiet);
  for (const t of INPUTS) removeEventListener(t, pause, { capture: true });
  sw?.register('/sw.js').catch((e) => console.warn(`offline use unavailable: ${e.message}`));
};
function pause() {
  clearTimeout(quiet);
  quiet = setTimeout(register, 2000);
}
setTimeout(() => {
  for (const t of INPUTS) addEventListener(t, pause, { capture: true, passive: true });
  pause();
}, 3000);
setTimeout(register, 60000);
