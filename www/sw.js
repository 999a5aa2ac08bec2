// The page's service worker (issue 49): once the page has been opened, it and its engine
// work with no network, and an update never mixes two releases. scripts/release.py stamps
// VERSION (a hash of every file of the page) and FILES (what is kept) at build time.
//
// - Install: every file of this release into the cache `release-VERSION` (the default model
//   included; models by link are the worker's, in the browser's storage).
// - The page (a navigation to this folder): from the network when the server has this same
//   release (a classroom server's page carries its own mark), else this release's cached copy:
//   offline, or when the server already has a newer release, whose new service worker then
//   installs beside this one and waits (and once it waits, this release's copy at once).
// - The page's other files: from the cache of the release that asks. The engine's files
//   carry no hash in their names, so the page starts its engine as
//   `worker_loader.js?release=R` and a request of that worker (its scripts, its wasm) is
//   answered from `release-R`; a name with a hash is the same file in whichever release
//   holds it. So a page of one release never runs the engine of another, even when a new
//   release takes over while it starts. The release before this one is kept for that.
// - An update waiting is applied by start.js at the next load, before the page starts (never
//   under a lesson in progress): it asks the new worker to take over, then reloads.
const VERSION = 'dev';
const FILES = [];
const CACHE = `release-${VERSION}`;
const KEPT = new Set(FILES.map((f) => new URL(f, self.location).pathname));
const PAGE = new URL('./', self.location).pathname;

self.addEventListener('install', (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES.map((f) => new Request(f, { cache: 'no-store' })))));
});

self.addEventListener('activate', (e) => {
  e.waitUntil((async () => {
    // This release and the one before it (a page of it may still be open); older ones go.
    // (The keys come in the order the caches were made.)
    const older = (await caches.keys()).filter((k) => k.startsWith('release-') && k !== CACHE);
    for (const k of older.slice(0, -1)) await caches.delete(k);
    await self.clients.claim();
  })());
});

self.addEventListener('message', (e) => {
  if (e.data === 'take-over') self.skipWaiting();
});

async function page(request) {
  const cache = await caches.open(CACHE);
  // A newer release waiting means the server has moved on: this release's copy, at once (a
  // worker being replaced may be stopped while it waits on the network).
  const own = async () => (await cache.match(new URL('index.html', self.location).href)) ?? fetch(request);
  if (self.registration.waiting) return own();
  try {
    // (A navigation's own request cannot be given options: its URL is fetched.) A network
    // that does not answer within 4 s is taken as none.
    const net = await Promise.race([
      fetch(request.url, { cache: 'no-store', credentials: 'same-origin' }),
      new Promise((_, reject) => setTimeout(() => reject(new Error('no answer')), 4000)),
    ]);
    const text = await net.clone().text();
    const release = /<meta name="decoding-release" content="([^"]*)"/.exec(text)?.[1];
    if (net.ok && release === VERSION) return net;
  } catch {
    // Offline: this release's copy.
  }
  return own();
}

/** The release a request belongs to: its own `?release=`, else its worker's, else none. */
async function releaseOf(e, url) {
  const own = url.searchParams.get('release');
  if (own) return own;
  const client = e.clientId ? await self.clients.get(e.clientId) : null;
  return client ? new URL(client.url).searchParams.get('release') : null;
}

/** A file of the page: from the asking release's cache, else any release's, else the network. */
async function file(e, url) {
  const release = await releaseOf(e, url);
  const named = release && (await caches.has(`release-${release}`)) ? `release-${release}` : CACHE;
  const hit = (await (await caches.open(named)).match(url.pathname)) ?? (await caches.match(url.pathname));
  return hit ?? fetch(e.request);
}

self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== 'GET' || url.origin !== self.location.origin) return;
  if (e.request.mode === 'navigate' && (url.pathname === PAGE || url.pathname === `${PAGE}index.html`)) {
    e.respondWith(page(e.request));
    return;
  }
  // This release's files, and a file of the release before (a page of it still open asks
  // for its own hashed names, which this release may not have).
  if (KEPT.has(url.pathname) || url.searchParams.has('release') || /-[0-9a-f]{12,}(_bg)?\.(js|wasm|css)$/.test(url.pathname)) {
    e.respondWith(file(e, url));
  }
});
