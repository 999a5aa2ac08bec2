// The page on WebGPU (headless Chromium's SwiftShader adapter, --enable-unsafe-webgpu): the
// backend badge says so, the first distribution matches the CPU's, and the greedy text too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open, screenshot, serveAndLaunch } from './harness.mjs';

// Instrumentation of the worker's loader, for the device-loss test only: every GPUDevice the
// engine opens is kept on the worker's global, so that the test can destroy it.
const KEEP_DEVICES = `self.__devices = [];
if (self.GPUAdapter) {
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = async function (...args) {
    const device = await requestDevice.apply(this, args);
    self.__devices.push(device);
    return device;
  };
}
`;

// Every test fails on a console error or an uncaught exception in a page it opened.
// (Either engine: the one on threads where the page is cross-origin isolated, as served here.)
const env = serveAndLaunch({ webgpu: true, patch: { '/worker_loader.js': (text) => KEEP_DEVICES + text, '/worker_mt_loader.js': (text) => KEEP_DEVICES + text } });

test('auto with SwiftShader: the software adapter is not chosen; the page runs on the CPU and says why', async () => {
  const { page } = await open(env.browser.context, env.server.url);
  await page.getByTestId('dist-row').first().waitFor({ timeout: 90_000 });
  assert.equal(await page.getByTestId('backend-badge').innerText(), 'CPU');
  const why = await page.getByTestId('backend-reason').innerText();
  assert.match(why, /software renderer/, why);
  // The lesson track's steps answer within seconds, not the 20–45 s of SwiftShader steps.
  const t0 = Date.now();
  await page.keyboard.press('PageDown');
  await page.waitForFunction(() => {
    const t = document.querySelector('[data-testid=lesson-track]');
    return t && !t.querySelector('[data-testid=lesson-waiting]');
  }, null, { timeout: 10_000 });
  assert.ok(Date.now() - t0 < 5_000, `${Date.now() - t0} ms`);
  // Asked for by name, WebGPU still runs on it.
  await page.getByTestId('backend-select').selectOption('gpu');
  await page.waitForFunction(() => document.querySelector('[data-testid=backend-badge]')?.textContent === 'WebGPU', null, { timeout: 90_000 });
});

test('WebGPU: "," first, and 10 greedy steps give the CPU text', async () => {
  const { page, problems } = await open(env.browser.context, env.server.url + '?backend=gpu&temperature=0');
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
  // Where a decoded token's time goes: 16 timed steps on SwiftShader (which offers
  // timestamp-query), each kernel named, the wall the busy time plus the overhead.
  await page.getByTestId('toggle-batch').click();
  await page.getByTestId('gpu-split-measure').click();
  await page.getByTestId('gpu-split-summary').waitFor({ timeout: 120_000 });
  const split = await page.getByTestId('gpu-split-summary').innerText();
  const [, wall, busy, over] = split.match(/^A decode step \(one row, 16 timed\) took ([\d.]+) ms on the wall: the GPU was busy in its 28 kernels for ([\d.]+) ms \(\d+ %\), and ([\d.]+) ms \(\d+ %\) went to launching them/).map(Number);
  // wall = busy + overhead (to the figures' rounding), or overhead 0 where overlapped passes
  // summed above the wall
  assert.ok(busy > 0 && (Math.abs(wall - busy - over) < 0.002 || (over === 0 && busy >= wall)), split);
  assert.deepEqual(await page.getByTestId('gpu-split-table').locator('tbody td:first-child').allInnerTexts(), ['embed', 'qkv', 'attention', 'wo', 'mlp_in', 'w2', 'final norm', 'classifier']);
  await page.getByTestId('gpu-split').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-webgpu-split');
  // Switching to the CPU keeps the transcript.
  await page.getByTestId('backend-select').selectOption('cpu');
  await page.waitForFunction(() => document.querySelector('[data-testid=backend-badge]').textContent === 'CPU');
  assert.equal(await page.getByTestId('transcript-text').innerText(), text);
  assert.equal(await page.getByTestId('chip').count(), 10);
  assert.deepEqual(problems, []);
});

test('WebGPU: the device destroyed mid-run, the transcript goes on on the CPU and the badge says why', async () => {
  const { page, problems } = await open(env.browser.context, env.server.url + '?backend=gpu&temperature=0&max_tokens=24');
  await page.getByTestId('dist-row').first().waitFor({ timeout: 90_000 });
  assert.equal(await page.getByTestId('backend-badge').innerText(), 'WebGPU');
  await page.getByTestId('run').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length >= 3, null, { timeout: 60_000 });
  const [worker] = page.workers();
  const destroyed = await worker.evaluate(() => {
    self.__devices.forEach((d) => d.destroy());
    return self.__devices.length;
  });
  assert.ok(destroyed >= 1, 'the engine opened a device');
  await page.waitForFunction(() => document.querySelector('[data-testid=backend-badge]').textContent === 'CPU', null, { timeout: 60_000 });
  assert.match(await page.getByTestId('backend-reason').innerText(), /lost|destroyed/i);
  // The run finishes on the CPU: 24 greedy tokens, the CPU's greedy text (nothing lost or
  // repeated at the switch).
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 24, null, { timeout: 60_000 });
  const text = await page.getByTestId('transcript-text').innerText();
  assert.ok(text.startsWith('Once upon a time, there was a little girl named Lily. She loved to play'), text);
  await screenshot(page, 'explorer-device-lost');
  // What the browser reports about the destroyed device is expected here; nothing else.
  const rest = problems.splice(0).filter((p) => !/destroy|lost|Device/i.test(p));
  assert.deepEqual(rest, []);
});
