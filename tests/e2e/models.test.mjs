// Issue 49, models by link: against an imitation of the hub's file URLs on the page's own
// origin (tests/e2e/hub.mjs: redirects, Range, ETag), a list model and a typed repository load
// with a progress bar; a dropped connection resumes; a wrong sha256, a 404, an HTML page and
// a file over the budget are each refused with a clear message while the current model keeps
// working; a download cancelled resumes from its bytes; a shared link with model= loads it,
// and a second load comes from the browser's storage with no request. Expected values: the
// stories260K README (its sizes and its first distribution), the imitation's own log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIST, ROOT, open, pageUrl, serveAndLaunch } from './harness.mjs';
import { hub, hubPatch } from './hub.mjs';

const h = hub();
// The release the build stamped (scripts/release.py), and a next one the server can switch
// to: its page, its service worker and its engine marked, as a new build would change them.
const V = /<meta name="decoding-release" content="([0-9a-f]{16})"/.exec(fs.readFileSync(path.join(DIST, 'index.html'), 'utf8'))?.[1];
const release = { next: false };
const page2 = (t) => (release.next ? t.replace(`content="${V}"`, `content="${V}-2"`) : t);
const env = serveAndLaunch({
  routes: h.routes,
  patch: {
    '/': (t) => page2(hubPatch['/'](t)),
    '/index.html': (t) => page2(hubPatch['/index.html'](t)),
    '/sw.js': (t) => (release.next ? t.replace(`const VERSION = '${V}';`, `const VERSION = '${V}-2';`) : t),
    '/worker.js': (t) => (release.next ? `${t}\nself.RELEASE = 'next';\n` : t),
    '/worker_mt.js': (t) => (release.next ? `${t}\nself.RELEASE = 'next';\n` : t),
  },
});
const OWN = 'karpathy/tinyllamas/stories260K/stories260K.bin';

async function ready(query = 'backend=cpu') {
  const { page } = await open(env.browser.context, `${env.server.url}?${query}`);
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  return page;
}

async function picker(page) {
  if (!(await page.getByTestId('by-link').isVisible())) await page.getByTestId('load-model').click();
  await page.getByTestId('stored-models').waitFor();
}

/** The model summary once the model named `name` has loaded (or still runs). */
async function summary(page, re) {
  await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[data-testid=model-summary]')?.textContent ?? ''), re.source, { timeout: 60_000 });
  return page.getByTestId('model-summary').innerText();
}

/** The page's own model still decodes: its first distribution's top row (README). */
async function stillWorks(page) {
  await page.getByTestId('dist-row').first().waitFor();
  const top = await page.getByTestId('dist-row').first().innerText();
  assert.match(top, /","\s+0\.9688/, top);
}

async function error(page, re) {
  await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[data-testid=error]')?.textContent ?? ''), re.source, { timeout: 30_000 });
  const text = await page.getByTestId('error').innerText();
  await page.getByTestId('error').getByRole('button', { name: 'Dismiss' }).click();
  return text;
}

async function kept(page) {
  return page.getByTestId('stored-model').evaluateAll((ls) => ls.map((l) => ({ key: l.dataset.key, text: l.textContent })));
}

test('a listed model downloads with a progress bar and a cancel button, is kept, and loads from the browser with no request (a shared link with model=)', async () => {
  const page = await ready();
  await picker(page);
  h.state.slow.set(OWN, 32 * 1024);
  h.state.log.length = 0;
  await page.getByTestId('model-list').selectOption('stories260K');
  await page.getByTestId('model-list-load').click();
  await page.getByTestId('download-cancel').waitFor();
  await page.waitForFunction(() => {
    const p = document.querySelector('[data-testid=load-progress]');
    return p && p.value > 0 && p.value < p.max && p.max === 1056540;
  }, null, { timeout: 30_000 });
  h.state.slow.delete(OWN);
  await summary(page, /stories260K \(the page's own model, from the hub\)/);
  await stillWorks(page);
  assert.equal(await page.getByTestId('download-cancel').count(), 0);
  // Both files through the hub's redirect to its file host.
  const paths = h.state.log.map((l) => l.path);
  assert.ok(paths.includes(`/hub/karpathy/tinyllamas/resolve/main/stories260K/tok512.bin`), paths.join('\n'));
  assert.ok(paths.includes(`/cdn/${OWN}`), paths.join('\n'));
  const link = await pageUrl(page);
  assert.match(link, /model=stories260K/);
  const list = await kept(page);
  assert.deepEqual(list.map((k) => k.key), ['stories260K']);
  assert.match(list[0].text, /1\.01 MiB/);
  // The shared link in a new tab: the model comes from the browser's storage.
  h.state.log.length = 0;
  const again = await ready(new URL(link).search.slice(1));
  await summary(again, /from the hub/);
  await stillWorks(again);
  assert.deepEqual(h.state.log, [], 'no request to the hub the second time');
  await again.close();
  await page.close();
});

test('a typed repository resolves through the hub\'s listing; a connection dropped part way resumes with Range and If-Range', async () => {
  const page = await ready();
  await picker(page);
  h.state.log.length = 0;
  h.state.dropAfter.set('someone/tiny-gguf/stories260K.gguf', 300_000);
  await page.getByTestId('model-url').fill('someone/tiny-gguf');
  await page.getByTestId('model-url').press('Enter');
  const s = await summary(page, /someone\/tiny-gguf/);
  assert.match(s, /GGUF/);
  const gets = h.state.log.filter((l) => l.path === '/cdn/someone/tiny-gguf/stories260K.gguf');
  assert.ok(h.state.log.some((l) => l.path === '/hub/api/models/someone/tiny-gguf/tree/main'));
  assert.ok(gets.length >= 2, JSON.stringify(gets));
  assert.equal(gets[0].range, null);
  const resumed = gets.at(-1);
  assert.match(resumed.range ?? '', /^bytes=([1-9]\d*)-$/, JSON.stringify(gets));
  assert.match(resumed.ifRange ?? '', /^"[0-9a-f]{64}"$/);
  assert.match(await pageUrl(page), /model=someone%2Ftiny-gguf/);
  assert.ok((await kept(page)).some((k) => k.key === 'hf-someone--tiny-gguf'));
  await page.close();
});

test('refused, each with its reason, the current model working on: a wrong sha256, a 404, an HTML page, a file over the budget, nonsense', async () => {
  const page = await ready();
  await picker(page);
  await page.getByTestId('stored-models').waitFor();
  // Start from nothing kept for the list's model.
  for (const d of await page.locator('[data-key=stories260K] [data-testid=stored-delete]').all()) await d.click();
  const bad = Buffer.from(h.state.files.get(OWN));
  bad[5000] ^= 1;
  h.state.replaced.set(OWN, bad);
  await page.getByTestId('model-list').selectOption('stories260K');
  await page.getByTestId('model-list-load').click();
  assert.match(await error(page, /sha256/), /stories260K\.bin's sha256 is [0-9a-f]{64}, not the list's b0a507e7.*the current model is kept/);
  h.state.replaced.delete(OWN);
  await stillWorks(page);
  const cases = [
    ['/hub/someone/missing/resolve/main/x.gguf', /x\.gguf: not found \(HTTP 404\)/],
    ['/hub/someone/page/resolve/main/model.gguf', /is an HTML page, not a model file/],
    ['/hub/someone/big/resolve/main/model.gguf', /model\.gguf is 2000000000 bytes: more than the page's memory budget of 1610612736 bytes/],
  ];
  h.state.html.add('someone/page/model.gguf');
  h.state.files.set('someone/big/model.gguf', h.state.files.get('someone/tiny-gguf/stories260K.gguf'));
  h.state.claims.set('someone/big/model.gguf', 2_000_000_000);
  const keptBefore = (await kept(page)).map((k) => k.text).sort();
  for (const [url, re] of cases) {
    await page.getByTestId('model-url').fill(url);
    await page.getByTestId('model-url-load').click();
    const text = await error(page, re);
    assert.match(text, /the current model is kept/);
    await stillWorks(page);
    await page.getByTestId('step').click();
    await page.getByTestId('chip').first().waitFor();
    await page.getByTestId('rewind').click();
    // The list the worker sent with the refusal: nothing new in it (a typed link's key is
    // a hash of its URL, so the entries themselves are compared).
    assert.deepEqual((await kept(page)).map((k) => k.text).sort(), keptBefore, `nothing kept after ${url}`);
  }
  // Nonsense is said under the field, and nothing is asked.
  h.state.log.length = 0;
  await page.getByTestId('model-url').fill('http://example.org/m.gguf');
  await page.getByTestId('model-url-load').click();
  assert.match(await page.getByTestId('model-url-error').innerText(), /https only/);
  assert.deepEqual(h.state.log, []);
  assert.deepEqual((await kept(page)).map((k) => k.text).sort(), keptBefore, 'nothing refused is kept');
  await page.close();
});

test('a refusal in the page\'s language: a 404 and a plain http link, in Chinese', async () => {
  const page = await ready('backend=cpu&lang=zh-CN');
  await picker(page);
  await page.getByTestId('model-url').fill('/hub/someone/missing/resolve/main/x.gguf');
  await page.getByTestId('model-url-load').click();
  await page.waitForFunction(() => /HTTP 404/.test(document.querySelector('[data-testid=error]')?.textContent ?? ''), null, { timeout: 30_000 });
  // The worker's English, read back into the page's words: the whole of it.
  assert.match(await page.getByTestId('error').innerText(), /x\.gguf：未找到（HTTP 404）；当前模型保持不变/);
  assert.ok(!(await kept(page)).some((k) => /x\.gguf/.test(k.text)), 'a refused download is not listed as kept');
  await stillWorks(page);
  await page.getByTestId('model-url').fill('http://example.org/m.gguf');
  await page.getByTestId('model-url-load').click();
  assert.match(await page.getByTestId('model-url-error').innerText(), /^http:\/\/example\.org\/m\.gguf：本页只通过 https 下载/);
  await page.close();
});

test('a download cancelled stops at once and resumes from its bytes; a shared link whose model fails loads the page\'s own and says why', async () => {
  const page = await ready();
  await picker(page);
  for (const d of await page.locator('[data-key=stories260K] [data-testid=stored-delete]').all()) await d.click();
  h.state.slow.set(OWN, 8 * 1024);
  h.state.log.length = 0;
  await page.getByTestId('model-list').selectOption('stories260K');
  await page.getByTestId('model-list-load').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=load-progress]')?.value > 200_000, null, { timeout: 30_000 });
  await page.getByTestId('download-cancel').click();
  assert.match(await error(page, /cancelled/), /the download was cancelled; the current model is kept/);
  h.state.slow.delete(OWN);
  await stillWorks(page);
  await page.waitForFunction(() => /stopped part way/.test(document.querySelector('[data-key=stories260K]')?.textContent ?? ''));
  await page.locator('[data-key=stories260K] [data-testid=stored-load]').click();
  await summary(page, /from the hub/);
  const gets = h.state.log.filter((l) => l.path === `/cdn/${OWN}`);
  const from = Number(/^bytes=(\d+)-$/.exec(gets.at(-1).range ?? '')?.[1]);
  assert.ok(from >= 200_000, JSON.stringify(gets));
  assert.doesNotMatch(await kept(page).then((k) => k.find((x) => x.key === 'stories260K').text), /stopped part way/);
  await page.close();
  // A shared link to a model that is gone: the page's own model, and the reason.
  const gone = await ready('backend=cpu&model=%2Fhub%2Fsomeone%2Fgone%2Fresolve%2Fmain%2Fx.gguf');
  assert.match(await error(gone, /own model/), /not found \(HTTP 404\).*the page's own model is loaded instead/);
  await stillWorks(gone);
  assert.doesNotMatch(await pageUrl(gone), /model=/);
  await gone.close();
});

/** The release of the page shown and of its engine worker. */
async function releases(page) {
  const meta = await page.evaluate(() => document.querySelector('meta[name=decoding-release]').content);
  const [w] = page.workers();
  return { page: meta, engine: await w.evaluate(() => self.RELEASE ?? 'first') };
}

test('offline: once the page has been opened, it, its own model and a kept model load and decode with no network', async () => {
  assert.match(V ?? '', /^[0-9a-f]{16}$/, 'dist/index.html carries its release (scripts/release.py)');
  const page = await ready();
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  await picker(page);
  assert.ok((await kept(page)).some((k) => k.key === 'stories260K' && !/stopped/.test(k.text)), 'kept by the earlier tests');
  await env.browser.context.setOffline(true);
  try {
    await page.reload();
    await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
    await stillWorks(page);
    await page.getByTestId('step').click();
    await page.getByTestId('chip').first().waitFor();
    assert.deepEqual(await releases(page), { page: V, engine: 'first' });
    // A kept model, by its link.
    await page.goto(`${env.server.url}?backend=cpu&model=stories260K`);
    await summary(page, /from the hub/);
    await stillWorks(page);
    // One not kept: the network is needed, and the reason is said.
    await picker(page);
    await page.getByTestId('model-url').fill('someone/never-fetched');
    await page.getByTestId('model-url-load').click();
    assert.match(await error(page, /kept/), /never-fetched.*the current model is kept/);
    await stillWorks(page);
  } finally {
    await env.browser.context.setOffline(false);
  }
  await page.close();
});

test('an update is fetched in the background and applied at the next load; a page and an engine of two releases never run together', async () => {
  const page = await ready();
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  release.next = true;
  try {
    // The server has the next release: this load is still the first one, page and engine.
    await page.reload();
    await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
    assert.deepEqual(await releases(page), { page: V, engine: 'first' });
    // Meanwhile the next release installs beside it and waits; the page runs on untouched.
    const waiting = () => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.waiting?.state ?? null);
    for (let i = 0; i < 150 && (await waiting()) !== 'installed'; i++) await page.waitForTimeout(200);
    assert.equal(await waiting(), 'installed', 'the next release installed beside the first, waiting');
    await page.getByTestId('step').click();
    await page.getByTestId('chip').first().waitFor();
    assert.deepEqual(await releases(page), { page: V, engine: 'first' });
    // The step is in the link once its changes pause (a reload before then started afresh,
    // after it restored the step: the test read either by timing), and the distribution
    // after it is the first release's answer.
    await page.waitForFunction(() => !document.documentElement.hasAttribute('data-link-pending'), null, { timeout: 30_000 });
    await page.waitForFunction(() => !/^1\s+","/.test(document.querySelector('[data-testid=dist-row]')?.innerText ?? '1 ","'), null, { timeout: 30_000 });
    const afterStep = await page.getByTestId('dist-row').first().innerText();
    // The next load: the update is applied before the page starts, page and engine together.
    await page.reload();
    await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
    await page.waitForFunction((v) => document.querySelector('meta[name=decoding-release]')?.content === v, `${V}-2`, { timeout: 30_000 });
    assert.deepEqual(await releases(page), { page: `${V}-2`, engine: 'next' });
    // The next release restores the step and decodes as the first did.
    await page.getByTestId('chip').first().waitFor({ timeout: 30_000 });
    await page.waitForFunction((want) => document.querySelector('[data-testid=dist-row]')?.innerText === want, afterStep, { timeout: 30_000 });
    // The engine is named with its page's release, and a page of the first release still
    // open (or starting as the next takes over) gets the first release's engine: its files
    // are kept beside the next's and answered by the release that asks.
    assert.match(page.workers()[0].url(), new RegExp(`/worker(_mt)?_loader\\.js\\?release=${V}-2$`));
    assert.deepEqual(await page.evaluate(() => caches.keys()), [`release-${V}`, `release-${V}-2`]);
    for (const [tag, engine] of [[V, 'first'], [`${V}-2`, 'next']]) {
      const [probe] = await Promise.all([
        page.waitForEvent('worker'),
        page.evaluate((t) => { window.probe = new Worker(`/worker_loader.js?release=${t}`); }, tag),
      ]);
      // Asked from here until its script has run (an evaluation that lands before the
      // worker's scope is ready found no setTimeout there, once in a full run).
      let got = null;
      for (let i = 0; i < 400 && got === null; i++) {
        got = await probe.evaluate(() => (typeof wasm_bindgen === 'undefined' ? null : (self.RELEASE ?? 'first'))).catch(() => null);
        if (got === null) await page.waitForTimeout(25);
      }
      assert.equal(got, engine, `the engine of release ${tag}`);
      await page.evaluate(() => window.probe.terminate());
    }
  } finally {
    release.next = false;
  }
  await page.close();
});

test('a classroom bundle: the page and a chosen model in one folder, run by python3 -m http.server, load and decode', async () => {
  const CLI = path.join(ROOT, 'target/debug/decoding-explorer');
  const own = path.join(ROOT, 'assets/models/stories260K');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-')), 'usb');
  execFileSync(CLI, ['bundle', '--dist', DIST, '--out', out, '--add', `${own}/stories260K.bin,${own}/tok512.bin`]);
  const server = spawn('python3', ['-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const port = await new Promise((resolve, reject) => {
      server.stdout.on('data', (d) => {
        const m = /port (\d+)/.exec(d.toString());
        if (m) resolve(Number(m[1]));
      });
      server.on('exit', (c) => reject(new Error(`python3 -m http.server exited ${c}`)));
    });
    const { page } = await open(env.browser.context, `http://127.0.0.1:${port}/?backend=cpu`);
    await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
    await page.getByTestId('load-model').click();
    const entry = page.getByTestId('bundle-load');
    assert.equal(await entry.count(), 1);
    assert.match(await entry.innerText(), /stories260K \(1\.01 MiB\)/);
    await entry.click();
    await summary(page, /tok512\.bin \+ stories260K\.bin/);
    await stillWorks(page);
    assert.match(await pageUrl(page), /model=%2Fmodels%2Fbundle%2F1-stories260K%2Ftok512\.bin/);
    await page.close();
  } finally {
    server.kill();
  }
});
