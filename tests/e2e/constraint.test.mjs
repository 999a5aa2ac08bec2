// Constrained decoding in the page, used as a user uses it in headless Chromium: a preset,
// a schema typed by hand, a grammar with a syntax error, an unsatisfiable constraint, the
// compare preset, and axe-core on the panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axeSerious, screenshot } from './harness.mjs';
import { ready, chips, waitChips } from './explorer.mjs';

/** Steps until the transcript says why it stopped; returns the stop text. */
async function stepToStop(page, most = 80) {
  for (let i = 0; i < most; i++) {
    const stop = await page.getByTestId('stop-reason').innerText().catch(() => '');
    if (/Stopped/.test(stop)) return stop;
    const n = await chips(page).count();
    await page.getByTestId('step').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length > n
      || /Stopped/.test(document.querySelector('[data-testid=stop-reason]')?.textContent ?? ''), n, { timeout: 30_000 });
  }
  return page.getByTestId('stop-reason').innerText();
}

/** The generated text alone (the transcript text less the prompt). */
async function generated(page, prompt) {
  const text = await page.getByTestId('transcript-text').innerText();
  assert.ok(text.startsWith(prompt), `${text} does not start with the prompt`);
  return text.slice(prompt.length);
}

test('the yes/no preset: Z_t, the mask, the greyed removals, a text the regex matches', async () => {
  const { page, problems } = await ready('backend=cpu');
  await page.getByTestId('constraint-preset-yes-no').click();
  const prompt = 'Lily asked her mom if she could play outside. Her mom said';
  await page.waitForFunction((p) => document.querySelector('[data-testid=prompt]')?.value === p, prompt);
  await page.getByTestId('constraint-measures').waitFor({ timeout: 30_000 });
  // The first token can only be a space (or a piece starting " yes"/" no"): few allowed.
  const allowed = await page.getByTestId('constraint-allowed').innerText();
  const [n, of] = allowed.match(/\d+/g).map(Number);
  assert.ok(n >= 1 && n < 10 && of === 512, allowed);
  const z = Number(await page.getByTestId('constraint-z').innerText());
  assert.ok(z > 0 && z < 1, `Z_t ${z}`);
  assert.match(await page.getByTestId('constraint-caption').innerText(), new RegExp(`Z_t = `));
  assert.match(await page.getByTestId('constraint-position').innerText(), /^next /);
  // The model's favourite tokens are greyed, removed by the constraint.
  const removed = page.locator('[data-testid=dist-row].removed .by').first();
  assert.equal(await removed.innerText(), 'removed by constraint');
  assert.match(await page.getByTestId('stage-constraint').innerText(), /constraint[\s\S]*regex/);
  await screenshot(page, 'constraint-yes-no');
  const stop = await stepToStop(page);
  assert.match(stop, /constraint is complete/);
  const out = await generated(page, prompt);
  assert.match(out, /^ (yes|no)\.$/);
  assert.deepEqual(problems, []);
});

test('a JSON Schema typed by hand: the field being filled, then an instance of it', async () => {
  const { page, problems } = await ready('backend=cpu');
  await page.getByTestId('constraint-kind').selectOption('json_schema');
  const schema = '{"type": "object", "properties": {"hero": {"type": "string", "maxLength": 12}, "brave": {"type": "boolean"}}, "required": ["hero", "brave"], "additionalProperties": false}';
  await page.getByTestId('constraint-source').fill(schema);
  await page.getByTestId('constraint-apply').click();
  await page.getByTestId('constraint-measures').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('constraint-position').innerText(), /^\$ · next "\{"/);
  // A few steps in, the position names the field being filled.
  let named = false;
  for (let i = 1; i <= 15 && !named; i++) {
    await page.getByTestId('step').click();
    await waitChips(page, i);
    await page.waitForTimeout(100);
    named = /\$\.hero/.test(await page.getByTestId('constraint-position').innerText());
  }
  assert.ok(named, await page.getByTestId('constraint-position').innerText());
  const stop = await stepToStop(page);
  assert.match(stop, /constraint is complete/);
  const out = JSON.parse(await generated(page, 'Once upon a time'));
  assert.deepEqual(Object.keys(out), ['hero', 'brave']);
  assert.equal(typeof out.hero, 'string');
  assert.ok(out.hero.length <= 12);
  assert.equal(typeof out.brave, 'boolean');
  // The link keeps it: a reload restores the constraint.
  await page.waitForFunction(() => /constraint=json_schema/.test(decodeURIComponent(location.search)));
  assert.deepEqual(problems, []);
});

test('the list preset (GBNF): the position names the rule being filled, the text is a list', async () => {
  const { page, problems } = await ready('backend=cpu');
  await page.getByTestId('constraint-preset-list').click();
  const prompt = 'Lily liked three things:';
  await page.waitForFunction((p) => document.querySelector('[data-testid=prompt]')?.value === p, prompt);
  await page.waitForFunction(() => /^root · next \[\\n\]/.test(document.querySelector('[data-testid=constraint-position]')?.textContent ?? ''), null, { timeout: 30_000 });
  // A few steps in, inside an item (its word or its punctuation).
  let seen = '';
  for (let i = 0; i < 6 && !/^item · /.test(seen); i++) {
    const before = await chips(page).count();
    await page.getByTestId('step').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length > n, before, { timeout: 30_000 });
    seen = await page.getByTestId('constraint-position').innerText();
  }
  assert.match(seen, /^item · next /);
  await screenshot(page, 'constraint-list');
  await stepToStop(page);
  assert.match(await generated(page, prompt), /^(\n- [a-z]+( [a-z]+)?\.){2,4}$/);
  assert.deepEqual(problems, []);
});

test('a grammar with a syntax error is refused with its line and column, within a second', async () => {
  const { page, problems } = await ready('backend=cpu');
  await page.getByTestId('constraint-kind').selectOption('grammar');
  await page.getByTestId('constraint-source').fill('root ::= item+\nitem ::= "- " [a-z]+ ) "\\n"\n');
  const t0 = Date.now();
  await page.getByTestId('constraint-apply').click();
  await page.getByTestId('constraint-error').waitFor({ timeout: 1_000 });
  const ms = Date.now() - t0;
  const msg = await page.getByTestId('constraint-error').innerText();
  assert.match(msg, /GBNF grammar syntax error at line 2, column \d+ \(rule item\)/);
  assert.ok(ms < 1000, `${ms} ms`);
  // The distribution goes on without it; stepping says why it cannot.
  assert.equal(await page.getByTestId('constraint-measures').count(), 0);
  await page.getByTestId('dist-row').first().waitFor();
  await screenshot(page, 'constraint-syntax-error');
  assert.deepEqual(problems, []);
});

test('an unsatisfiable constraint stops instead of sampling from nothing', async () => {
  const { page, problems } = await ready('backend=cpu');
  await page.getByTestId('constraint-kind').selectOption('regex');
  await page.getByTestId('constraint-source').fill('a[^\\x00-\\x{10FFFF}]');
  await page.getByTestId('constraint-apply').click();
  await page.getByTestId('constraint-measures').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('constraint-allowed').innerText(), /^0 of 512/);
  assert.match(await page.getByTestId('constraint-caption').innerText(), /allows no token/);
  await page.getByTestId('step').click();
  await page.waitForFunction(() => /allows no token/.test(document.querySelector('[data-testid=stop-reason]')?.textContent ?? ''), null, { timeout: 30_000 });
  assert.equal(await chips(page).count(), 0);
  assert.deepEqual(problems, []);
});

test('the compare preset: the same prompt without and with the schema, side by side', async () => {
  const { page, problems } = await ready('backend=cpu&prompt=Tom+had+a+dog+named&panels=compare');
  await page.getByTestId('cmp-preset').selectOption('constrained');
  await page.getByTestId('cmp-start').click();
  await page.getByTestId('cmp-view').waitFor({ timeout: 60_000 });
  // Step both columns until the constrained one has closed its object.
  for (let i = 0; i < 8; i++) {
    const t = await page.getByTestId('cmp-text-1').innerText();
    if (/\}\s*$/.test(t)) break;
    await page.getByTestId('cmp-step10').click();
    await page.waitForFunction((t) => document.querySelector('[data-testid=cmp-text-1]')?.textContent !== t, t, { timeout: 60_000 }).catch(() => {});
  }
  const free = await page.getByTestId('cmp-text-0').innerText();
  const bound = await page.getByTestId('cmp-text-1').innerText();
  const json = JSON.parse(bound.slice(bound.indexOf('{')));
  assert.deepEqual(Object.keys(json).sort(), ['age', 'name', 'pet']);
  assert.ok(!free.includes('{"name"'), free);
  await screenshot(page, 'constraint-compare');
  assert.deepEqual(problems, []);
});

test('axe-core: no serious or critical violation with the constraint at work, and at phone width', async () => {
  const { page, problems } = await ready('backend=cpu');
  await page.getByTestId('constraint-preset-character').click();
  await page.getByTestId('constraint-measures').waitFor({ timeout: 30_000 });
  const run = () => axeSerious(page);
  assert.deepEqual(await run(), []);
  await page.getByTestId('constraint-panel').scrollIntoViewIfNeeded();
  await screenshot(page, 'constraint-character');
  await page.setViewportSize({ width: 390, height: 844 });
  assert.deepEqual(await run(), []);
  await page.getByTestId('constraint-panel').scrollIntoViewIfNeeded();
  await screenshot(page, 'constraint-phone');
  assert.deepEqual(problems, []);
});
