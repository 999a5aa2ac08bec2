// Soak test: 10,000 slider moves and 2,000 generated tokens in one page, with the
// page's JS heap (after a forced garbage collection) and the heap in use of the page's and
// the engine worker's wasm (`heap::live_bytes`, a count kept by their allocator) measured
// after a warm-up and at the end: each must stay within 10 %. The wasm memories' sizes are
// reported too, but they are high-water marks (linear memory never shrinks): the page's
// reached its plateau (3.7–4.1 MB) in the warm-up in some runs and only in the measured
// phase in others, which failed CI twice with no leak; a leak grows the heap in use.
// The figures go to tests/e2e/results/soak.json and stdout; BENCHMARKS.md records them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { open, ROOT, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

/** `moves` slider moves, in batches of 100 each waited for until the engine has traced it. */
async function moveSliders(page, moves) {
  for (let done = 0; done < moves; done += 100) {
    const last = await page.evaluate((n) => {
      const el = document.querySelector('[data-testid=knob-temperature]');
      let v = '';
      for (let i = 0; i < n; i++) {
        v = (0.2 + ((i * 37) % 150) / 100).toFixed(2);
        el.value = v;
        el.dispatchEvent(new Event('input', { bubbles: true }));
      }
      return el.value;
    }, Math.min(100, moves - done));
    await page.waitForFunction((v) => document.querySelector('[data-testid=knob-temperature-value]').value === v, last);
  }
}

/** `tokens` steps (the Step key, n, pressed that many times: Run is paced for a class at
 * 120 ms a token), then back to the prompt. */
async function generate(page, tokens) {
  await page.locator('body').focus();
  for (let i = 0; i < tokens; i++) await page.keyboard.press('n');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length === n, tokens, { timeout: 240_000 });
  await page.getByTestId('reset').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 0);
}

async function memory(page, cdp) {
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const jsHeap = metrics.find((m) => m.name === 'JSHeapUsedSize').value;
  // One step so that the transcript (and its memory line) is fresh.
  await page.getByTestId('step').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 1);
  const bytes = (id) => page.getByTestId(id).getAttribute('data-bytes').then(Number);
  const live = (id) => page.getByTestId(id).getAttribute('data-live').then(Number);
  const m = {
    js_heap: jsHeap,
    page_heap: await live('memory-page'),
    engine_heap: await live('memory-engine'),
    page_wasm: await bytes('memory-page'),
    engine_wasm: await bytes('memory-engine'),
  };
  await page.getByTestId('reset').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 0);
  return m;
}

test('10,000 slider moves and 2,000 tokens: memory flat within 10 %', async () => {
  // max_tokens 500 fits the 512-token context after the prompt; no end token stops a run.
  const { page } = await open(env.browser.context, `${env.server.url}?backend=cpu&max_tokens=500&logit_bias=1:-10000,2:-10000&seed=5`);
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const t0 = Date.now();
  // Warm-up: caches, JIT tiers and the allocator reach their working size. Wasm memory
  // only grows, so what is measured is its high-water mark, which the page reached after
  // two rounds in some runs and only during the measured phase in others (3.5–3.9 MB, then
  // 4,063,232 bytes in every run: a plateau, not a trend). So the warm-up goes on, round
  // by round, until one round grows neither wasm memory (at most 6 rounds; a leak grows
  // every round and still fails below).
  let before = await memory(page, cdp);
  let rounds = 0;
  while (rounds < 6) {
    rounds += 1;
    await moveSliders(page, 1000);
    await generate(page, 500);
    const after = await memory(page, cdp);
    const grew = after.page_wasm > before.page_wasm || after.engine_wasm > before.engine_wasm;
    before = after;
    if (rounds >= 2 && !grew) break;
  }
  const start = before;
  await moveSliders(page, 10_000);
  for (let i = 0; i < 4; i++) await generate(page, 500);
  const end = await memory(page, cdp);
  const growth = Object.fromEntries(Object.keys(start).map((k) => [k, Math.round((end[k] / start[k] - 1) * 1000) / 10]));
  const results = { warm_up_rounds: rounds, slider_moves: 10_000, tokens: 2000, seconds: Math.round((Date.now() - t0) / 1000), start, end, growth_percent: growth };
  const dir = path.join(ROOT, 'tests/e2e/results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'soak.json'), JSON.stringify(results, null, 2));
  console.log('SOAK ' + JSON.stringify(results));
  for (const k of ['js_heap', 'page_heap', 'engine_heap']) {
    assert.ok(start[k] > 0, `${k} was measured`);
    assert.ok(end[k] <= start[k] * 1.1, `${k} grew from ${start[k]} to ${end[k]} bytes`);
  }
});
