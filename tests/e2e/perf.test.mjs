// Reports (does not assert) the page's speed: time from navigation to the first distribution,
// the wasm and asset sizes (raw and gzip), slider-move-to-chart latency over 100 moves, and
// decode speed in the browser on each backend against the native CLI. Results go to
// tests/e2e/results/perf.json and stdout; BENCHMARKS.md records them.
import { test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { serve, launch, open, ROOT, DIST, assertNoPageProblems } from './harness.mjs';

const results = {};
const RESULTS = path.join(ROOT, 'tests/e2e/results');

// Every test fails on a console error or an uncaught exception in a page it opened.
afterEach(() => assertNoPageProblems());

after(() => {
  fs.mkdirSync(RESULTS, { recursive: true });
  fs.writeFileSync(path.join(RESULTS, 'perf.json'), JSON.stringify(results, null, 2));
  console.log('PERF ' + JSON.stringify(results));
});

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const p95 = (v) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.ceil(v.length * 0.95) - 1)];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

test('sizes of what the page downloads', () => {
  const files = fs.readdirSync(DIST).filter((f) => /\.(wasm|js|css|html)$/.test(f));
  const sizes = {};
  for (const f of files) {
    const raw = fs.readFileSync(path.join(DIST, f));
    const key = f.replace(/-[0-9a-f]{8,}/, '');
    sizes[key] = { raw: raw.length, gzip: zlib.gzipSync(raw, { level: 9 }).length };
  }
  const model = fs.statSync(path.join(DIST, 'models/stories260K/stories260K.bin')).size;
  const tok = fs.statSync(path.join(DIST, 'models/stories260K/tok512.bin')).size;
  sizes['model files'] = { raw: model + tok, gzip: zlib.gzipSync(fs.readFileSync(path.join(DIST, 'models/stories260K/stories260K.bin'))).length + tok };
  results.sizes = sizes;
  assert.ok(sizes['app_bg.wasm'] && sizes['worker_bg.wasm']);
});

async function firstDistribution(browser, server, query) {
  const { page } = await open(browser.context, server.url + query);
  const t = await page.waitForFunction(() => document.querySelector('[data-testid=dist-row]') && performance.now(), null, { timeout: 120_000 });
  return { page, ms: await t.jsonValue() };
}

test('CPU backend: first distribution, slider latency, decode speed', async () => {
  const server = await serve();
  const browser = await launch();
  try {
    const loads = [];
    for (let i = 0; i < 3; i++) {
      const { page, ms } = await firstDistribution(browser, server, '?backend=cpu');
      loads.push(ms);
      await page.close();
    }
    results.first_distribution_ms = { median: round(median(loads)), runs: loads.map((x) => round(x)) };

    const { page } = await firstDistribution(browser, server, '?backend=cpu');
    const { dom, frame } = await page.evaluate(async () => {
      const slider = document.querySelector('[data-testid=knob-temperature]');
      const dom = [];
      const frame = [];
      for (let i = 0; i < 100; i++) {
        const v = (0.5 + (i % 50) * 0.02 + (i >= 50 ? 0.01 : 0)).toFixed(2);
        const before = document.querySelector('[data-testid=entropy]').textContent;
        const changed = new Promise((res) => {
          const obs = new MutationObserver(() => {
            const e = document.querySelector('[data-testid=entropy]');
            if (e && e.textContent !== before) { obs.disconnect(); res(); }
          });
          obs.observe(document.body, { subtree: true, childList: true, characterData: true });
        });
        const t0 = performance.now();
        slider.value = v;
        slider.dispatchEvent(new Event('input', { bubbles: true }));
        await changed;
        dom.push(performance.now() - t0);
        await new Promise((r) => requestAnimationFrame(() => r()));
        frame.push(performance.now() - t0);
      }
      return { dom, frame };
    });
    const stats = (v) => ({ moves: v.length, median: round(median(v)), p95: round(p95(v)), max: round(Math.max(...v)) });
    // To the chart's DOM update, and to the next animation frame after it (which adds up to a
    // frame of waiting for the display).
    results.slider_to_chart_ms = { dom_updated: stats(dom), next_frame: stats(frame) };
    await page.close();

    results.decode_cpu = await decodeSpeed(browser, server, 'cpu', 200);
  } finally {
    await browser.close();
    await server.close();
  }
  // The native figure over the same positions: the release build when there is one (the
  // test command builds the debug one, which is slower).
  const release = path.join(ROOT, 'target/release/decoding-explorer');
  const bin = fs.existsSync(release) ? release : path.join(ROOT, 'target/debug/decoding-explorer');
  const native = JSON.parse(execFileSync(bin, ['--threads', '1', 'bench', '--tokens', '205', '--repeat', '3', '--json'], { cwd: ROOT, encoding: 'utf8' }));
  results.decode_native = { build: path.basename(path.dirname(bin)), tokens_per_s: round(native.decode.median_tokens_per_s) };
});

/** Replays `steps` greedy tokens from a link and reads the worker's per-token step times. */
async function decodeSpeed(browser, server, backend, steps) {
  const { page } = await open(browser.context, `${server.url}?backend=${backend}&temperature=0&logit_bias=1:-100,2:-100&max_tokens=${steps}&steps=${steps}`);
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length === n, steps, { timeout: 300_000 });
  const text = await page.getByTestId('timings').innerText();
  const tps = Number(/last run: \d+ tokens in \d+ ms = (\d+) tokens\/s/.exec(text)?.[1]);
  const badge = await page.getByTestId('backend-badge').innerText();
  await page.close();
  return { backend: badge, steps, tokens_per_s: tps, timings: text };
}

test('WebGPU backend: first distribution and decode speed', async () => {
  const server = await serve();
  const browser = await launch({ webgpu: true });
  try {
    const { page, ms } = await firstDistribution(browser, server, '?backend=gpu');
    results.first_distribution_webgpu_ms = round(ms);
    await page.close();
    results.decode_webgpu = await decodeSpeed(browser, server, 'gpu', 50);
  } finally {
    await browser.close();
    await server.close();
  }
});
