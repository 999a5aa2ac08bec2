// End-to-end test harness: serves dist/ on 127.0.0.1 and drives Debian's Chromium through
// playwright-core (no browser download). WebGPU in headless Chromium is SwiftShader,
// enabled by --enable-unsafe-webgpu.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { before, after, afterEach } from 'node:test';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const DIST = path.join(ROOT, 'dist');
export const SHOTS = path.join(ROOT, 'tests/e2e/screenshots');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.bin': 'application/octet-stream',
};

/** The headers that make the page cross-origin isolated (Trunk.toml's [serve] sends them). */
export const ISOLATED = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/**
 * Serves `dir` on 127.0.0.1 at a free port; resolves to { url, close }. `patch` maps a path
 * to a function of the file's text (a test's instrumentation, e.g. of the worker's loader);
 * `routes(req, res, url)` answers the requests it takes (returning true) before the files.
 * The page is cross-origin isolated as scripts/serve.sh serves it (COOP/COEP: its engine on
 * threads) unless `isolated` is false (a static host without the headers: one thread).
 */
export function serve(dir = DIST, { patch = {}, routes = null, isolated = true } = {}) {
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    throw new Error(`${dir}/index.html is missing: build the page first (trunk build)`);
  }
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (routes && routes(req, res, url)) return;
    let file = path.normalize(path.join(dir, decodeURIComponent(url.pathname)));
    if (!file.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404).end('not found');
        return;
      }
      if (patch[url.pathname]) data = Buffer.from(patch[url.pathname](data.toString('utf8')));
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'Content-Length': data.length,
        'Cache-Control': 'no-store',
        ...(isolated ? ISOLATED : {}),
      });
      res.end(data);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** Launches headless Chromium; `webgpu` adds the flag that exposes WebGPU (SwiftShader), `locale`
 * the browser's language (navigator.languages, Accept-Language). */
export async function launch({ webgpu = false, locale } = {}) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'de-chromium-'));
  const args = [
    '--headless=new', '--no-sandbox', '--disable-gpu-sandbox', '--disable-dev-shm-usage',
    '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync',
  ];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args,
    viewport: { width: 1280, height: 900 },
    ...(locale ? { locale } : {}),
  });
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, close };
}

/** Every page opened since the last `assertNoPageProblems`, with its problems. */
const OPENED = [];

/**
 * Fails the current test if any page it opened logged a console error or threw (a worker
 * panic lands there); every test file calls it after each test. `allow` lists patterns a
 * test provoked on purpose.
 */
export function assertNoPageProblems(allow = []) {
  const found = OPENED.splice(0).flatMap(({ url, problems }) =>
    problems.filter((p) => !allow.some((re) => re.test(p))).map((p) => `${url}: ${p}`));
  assert.deepEqual(found, [], 'console errors or page errors');
}

/**
 * Opens the page; collects into `problems` console errors and uncaught exceptions of the page
 * and its workers, Content-Security-Policy violations, and any request that leaves the
 * page's origin.
 */
export async function open(context, url) {
  const page = await context.newPage();
  const problems = [];
  OPENED.push({ url, problems });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('worker', (w) => w.on('console', (m) => {
    if (m.type() === 'error') problems.push(`worker console: ${m.text()}`);
  }));
  const origin = new URL(url).origin;
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(`${origin}/`)) problems.push(`request outside the page's origin: ${u}`);
  });
  // Injected by the browser's debugging protocol (not an inline script of the page).
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.effectiveDirective} blocked ${e.blockedURI || 'inline'}`);
    });
  });
  await page.goto(url);
  return { page, problems };
}

export async function screenshot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * One server and one browser for a test file: started before its tests, closed after them,
 * and every test failing on a problem in a page it opened. `env.server` and `env.browser`
 * are set once the file's tests run.
 */
export function serveAndLaunch({ patch, routes, webgpu = false } = {}) {
  const env = {};
  before(async () => {
    env.server = await serve(DIST, { patch, routes });
    env.browser = await launch({ webgpu });
  });
  afterEach(() => assertNoPageProblems());
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
  return env;
}

/**
 * The page's address once the app has written it: the app writes the link once the view
 * has been still for a moment, so this waits for that and reads `location.href` two frames
 * on, from the page itself.
 */
export async function pageUrl(page) {
  // The page writes its link once the view has been still for a moment (<html> carries
  // data-link-pending until then); read it after that, two frames on.
  await page.waitForFunction(() => !document.documentElement.hasAttribute('data-link-pending'), null, { timeout: 10_000 });
  return page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(location.href)))));
}

/** A llama2.c checkpoint with random weights (shared classifier) and a tokenizer.bin with
 * `vocab` distinct pieces (ids 1 and 2 are BOS and EOS, then the 256 byte pieces). */
export function randomModel({ dim, hidden, layers, heads, kvHeads, vocab, seq }) {
  const hs = dim / heads;
  const kv = (dim * kvHeads) / heads;
  const floats = vocab * dim + layers * (2 * dim + 2 * dim * dim + 2 * kv * dim + 3 * hidden * dim) + dim + seq * hs;
  const model = Buffer.alloc(28 + 4 * floats);
  [dim, hidden, layers, heads, kvHeads, vocab, seq].forEach((v, i) => model.writeInt32LE(v, 4 * i));
  let x = 12345;
  for (let i = 0; i < floats; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    model.writeFloatLE((x / 2147483648 - 0.5) * 0.2, 28 + 4 * i);
  }
  const pieces = ['<unk>', '\n<s>\n', '\n</s>\n'];
  for (let b = 0; b < 256; b++) pieces.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  for (let i = pieces.length; i < vocab; i++) pieces.push(`t${i}`);
  const parts = [Buffer.from(Int32Array.of(16).buffer)];
  pieces.forEach((p, i) => {
    const bytes = Buffer.from(p, 'utf8');
    const head = Buffer.alloc(8);
    head.writeFloatLE(-i, 0);
    head.writeInt32LE(bytes.length, 4);
    parts.push(head, bytes);
  });
  return { model, tokenizer: Buffer.concat(parts) };
}

/** axe-core's serious and critical findings on the page as it is now. */
export async function axeSerious(page) {
  const src = fs.readFileSync(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(src);
  const r = await page.evaluate(() => window.axe.run(document, {
    resultTypes: ['violations'],
    rules: { 'label-content-name-mismatch': { enabled: true } },
  }));
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}
