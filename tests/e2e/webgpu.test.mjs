// The page on WebGPU (headless Chromium's SwiftShader adapter, --enable-unsafe-webgpu): the
// backend badge says so, the first distribution matches the CPU's, and the greedy text too.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, open, screenshot, assertNoPageProblems } from './harness.mjs';

let server, browser;
before(async () => {
  server = await serve();
  browser = await launch({ webgpu: true });
});
// Every test fails on a console error or an uncaught exception in a page it opened.
afterEach(() => assertNoPageProblems());

after(async () => {
  await browser?.close();
  await server?.close();
});

test('WebGPU: "," first, and 10 greedy steps give the CPU text', async () => {
  const { page, problems } = await open(browser.context, server.url + '?backend=gpu&temperature=0');
  await page.getByTestId('dist-row').first().waitFor({ timeout: 90_000 });
  assert.equal(await page.getByTestId('backend-badge').innerText(), 'WebGPU');
  assert.equal(await page.getByTestId('dist-row').first().locator('.piece').innerText(), '","');
  for (let i = 1; i <= 10; i++) {
    await page.getByTestId('step').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length === n, i, { timeout: 60_000 });
  }
  const text = await page.getByTestId('transcript-text').innerText();
  // 10 tokens: ",", " there", " was", " a", " little", " girl", " named", " L", "ily"… as
  // the CPU's greedy text has them (the model README's known answer).
  assert.ok(text.startsWith('Once upon a time, there was a little girl named Lily'), text);
  await screenshot(page, 'explorer-webgpu');
  // Switching to the CPU keeps the transcript.
  await page.getByTestId('backend-select').selectOption('cpu');
  await page.waitForFunction(() => document.querySelector('[data-testid=backend-badge]').textContent === 'CPU');
  assert.equal(await page.getByTestId('transcript-text').innerText(), text);
  assert.equal(await page.getByTestId('chip').count(), 10);
  assert.deepEqual(problems, []);
});
