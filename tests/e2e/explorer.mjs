// What the explorer's end-to-end tests share: the page served and Chromium launched once per
// test file (every test fails on a console error or an uncaught exception in a page it
// opened), the page opened at its first distribution, the CLI the expected numbers come
// from, and the chips, the top row, a knob and the model picker as a user reaches them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { open, ROOT, serveAndLaunch } from './harness.mjs';

export const GREEDY =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\n' +
  'Lily\'s mom said, "Lily, let\'s go to the park." Lily was sad and didn\'t know what to do.';

export const CLI = path.join(ROOT, 'target/debug/decoding-explorer');
export function cli(...args) {
  assert.ok(fs.existsSync(CLI), `${CLI} is missing: run cargo test first (scripts/test.sh does)`);
  return execFileSync(CLI, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export const env = serveAndLaunch();

/** Opens the page and waits for the first distribution. */
export async function ready(query = '') {
  const sep = query ? (query.startsWith('?') ? '' : '?') : '';
  const { page, problems } = await open(env.browser.context, env.server.url + sep + query);
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  return { page, problems };
}

export const chips = (page) => page.getByTestId('chip');
export async function waitChips(page, n) {
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length === n, n, { timeout: 60_000 });
}
export async function topRow(page) {
  const row = page.getByTestId('dist-row').first();
  return {
    piece: await row.locator('.piece').innerText(),
    value: Number(await row.getByTestId('dist-value').innerText()),
  };
}
/** Sets a knob through its text box, as typing a value and pressing Enter does. */
export async function setKnob(page, field, value) {
  const box = page.getByTestId(`knob-${field}-value`);
  await box.fill(String(value));
  await box.press('Enter');
}

/** Puts files in the model picker's two inputs, built in the page (a Blob made of
 * references to one 1 MiB blob costs no memory) beside stories260K's real tokenizer, and
 * presses Load. */
export async function pickFiles(page, header, mib) {
  const tok = fs.readFileSync(path.join(ROOT, 'assets/models/stories260K/tok512.bin')).toString('base64');
  await page.getByTestId('load-model').click();
  await page.evaluate(({ header, mib, tok }) => {
    const chunk = new Blob([new Uint8Array(1 << 20)]);
    const model = new File([new Int32Array(header), ...Array(mib).fill(chunk)], 'hostile.bin');
    const put = (testid, file) => {
      const dt = new DataTransfer();
      dt.items.add(file);
      const input = document.querySelector(`[data-testid=${testid}]`);
      input.files = dt.files;
      input.dispatchEvent(new Event('change', { bubbles: true }));
    };
    put('model-file', model);
    put('tokenizer-file', new File([Uint8Array.from(atob(tok), (c) => c.charCodeAt(0))], 'tok512.bin'));
  }, { header, mib, tok });
  await page.getByTestId('load-files').click();
}
