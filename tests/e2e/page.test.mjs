// The served page, in headless Chromium: the model runs in wasm and the top next tokens
// for "Once upon a time" appear, "," first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, open, screenshot } from './harness.mjs';

let server, browser;
before(async () => {
  server = await serve();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('shows "," as the most likely token after "Once upon a time"', async () => {
  const { page, problems } = await open(browser.context, server.url);
  const firstRow = page.getByTestId('token-row').first();
  await firstRow.waitFor({ timeout: 60_000 });
  const cells = await firstRow.locator('td').allInnerTexts();
  assert.equal(cells[1], '432');
  assert.equal(cells[2], '","');
  assert.equal(cells[3], '0.9688');
  assert.equal(await page.getByTestId('prompt').inputValue(), 'Once upon a time');
  assert.match(await page.getByTestId('backend-badge').innerText(), /CPU/);
  await screenshot(page, 'foundation-next-tokens');
  assert.deepEqual(problems, []);
});

test('typing a new prompt updates the table from the worker', async () => {
  const { page, problems } = await open(browser.context, server.url);
  await page.getByTestId('token-row').first().waitFor({ timeout: 60_000 });
  await page.getByTestId('prompt').fill('Once upon a time, there was a little');
  await page.waitForFunction(() => {
    const row = document.querySelector('[data-testid=token-row] td:nth-child(3)');
    return row && row.textContent !== '","';
  });
  const top = await page.getByTestId('token-row').first().locator('td').nth(2).innerText();
  assert.notEqual(top, '","');
  assert.deepEqual(problems, []);
});
