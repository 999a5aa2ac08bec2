// The class joins in (issue 48), as a classroom uses it in headless Chromium: the one-screen
// round with a typed tally, then `decoding-explorer classroom` on 127.0.0.1 with a
// presenter's page and 30 students' browser contexts (each its own storage, as phones are):
// joined by the QR code's address (read from the image) and by the code, guesses counted
// exactly, three rounds, a student who drops and comes back, a presenter who reloads.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { PNG } from 'pngjs';
import jsQR from 'jsqr';
import { chromium } from 'playwright-core';
import { serve, open, screenshot, axeSerious, pageUrl, assertNoPageProblems } from './harness.mjs';
import { startClassroom } from './classroom-server.mjs';

let browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});
after(async () => browser?.close());
// Every page a test opened fails it on a console error or an uncaught exception.
afterEach(() => assertNoPageProblems());

/** The counts column of the reveal's chart, as numbers. */
async function chartCounts(page) {
  const cells = await page.locator('[data-testid=class-chart] tbody tr td:nth-child(2)').allInnerTexts();
  return cells.map((c) => Number(c.match(/\((\d+)\)/)[1]));
}

test('one screen: a typed tally revealed against the model, drawn, scored; whole at 1280×720', async () => {
  const server = await serve();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  try {
    const { page, problems } = await open(ctx, `${server.url}?backend=cpu&class=1&presenter=1&steps=3&temperature=0`);
    await page.getByTestId('class-tally').waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 3, null, { timeout: 60_000 });
    // The next token is hidden: no distribution on the page.
    assert.equal(await page.getByTestId('dist-row').count(), 0);
    await page.getByTestId('class-tally').fill('girl ×5, boy x3, cat ×0');
    assert.match(await page.getByTestId('class-tally-error').innerText(), /a count is a whole number/);
    assert.ok(await page.getByTestId('class-reveal').isDisabled());
    // By the keyboard, as a presenter types: the tally, Enter reveals and puts the focus on
    // Draw; Enter draws and puts it back in the (empty) tally.
    await page.getByTestId('class-tally').fill('girl ×5, boy x3, a ×2, !');
    await page.getByTestId('class-tally').press('Enter');
    await page.getByTestId('class-chart').waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => document.activeElement?.dataset.testid === 'class-draw');
    assert.equal(Number(await page.getByTestId('class-total').innerText()), 11);
    const counts = await chartCounts(page);
    assert.deepEqual(counts.filter((c) => c > 0).sort((a, b) => b - a), [5, 3, 2, 1]);
    // Each row names the guesses it counts: "a" is the model's own favourite, ␣a.
    assert.match(await page.getByTestId('class-chart').innerText(), /"␣a"\s*← a/);
    // H(c, p) ≥ KL ≥ 0, as the lesson's L6 has it (H(c,p) = H(c) + KL).
    const nats = async (id) => Number((await page.getByTestId(id).innerText()).split(' ')[0]);
    const [ce, kl] = [await nats('class-ce'), await nats('class-kl')];
    assert.ok(ce >= kl && kl >= 0, `H(c,p) ${ce}, KL ${kl}`);
    // The whole reveal on one presenter screen: the Draw button is in the viewport.
    const box = await page.getByTestId('class-draw').boundingBox();
    assert.ok(box && box.y + box.height <= 720, `Draw at ${JSON.stringify(box)}`);
    assert.deepEqual(await axeSerious(page), []);
    await screenshot(page, 'class-one-screen-reveal');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 4, null, { timeout: 30_000 });
    await page.getByTestId('class-tally').waitFor();
    await page.waitForFunction(() => document.activeElement?.dataset.testid === 'class-tally');
    assert.equal(await page.getByTestId('class-tally').inputValue(), '');
    // Greedy drew " a" (the model's top-1); the class's top guess was " g".
    assert.match(await page.getByTestId('class-score').innerText(), /on 0 of 1, the model's top-1 on 1 of 1; the class beat the model's top-1 on 0 of 1/);
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
    await server.close();
  }
});

/** The QR code in the presenter's room box, read from its pixels. */
async function readQr(page) {
  // Read once the code is drawn (a shot taken while the page still lays out can catch it
  // half painted, or the room box as it is drawn again when the room's state changes): a
  // few tries, a frame apart.
  await page.locator('[data-testid=room-qr] svg').waitFor();
  let found = null;
  for (let i = 0; i < 10 && !found; i++) {
    if (i) await page.waitForTimeout(100);
    const shot = await page.getByTestId('room-qr').screenshot({ timeout: 5_000 }).catch(() => null);
    if (!shot) continue;
    const png = PNG.sync.read(shot);
    found = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  }
  assert.ok(found, 'no QR code found in the room box');
  return found.data;
}

/** A student's page at `url`, its round shown. */
async function student(ctx, url, code) {
  const { page, problems } = await open(ctx, url);
  if (code) {
    await page.getByTestId('join-code').fill(code);
    await page.getByTestId('join').click();
  }
  await page.getByTestId('context').waitFor({ timeout: 30_000 });
  return { page, problems };
}

async function guessed(presenter, n) {
  await presenter.waitForFunction((n) => new RegExp(`, ${n} guessed`).test(document.querySelector('[data-testid=room-count]')?.textContent ?? ''), n, { timeout: 30_000 });
}

/** Every student guesses `words[i]` (typed), and the presenter sees them all. */
async function everyoneGuesses(presenter, students, words) {
  for (const [i, s] of students.entries()) {
    if (words[i] !== null) await s.page.getByTestId('guess-text').fill(words[i]);
    await s.page.getByTestId('submit-guess').click();
  }
  for (const s of students) await s.page.waitForFunction(() => /is in/.test(document.querySelector('[data-testid=status]').textContent));
  await guessed(presenter, students.length);
}

async function revealAndDraw(presenter, expected, round, { revealed = false } = {}) {
  // (round: the round being revealed; the next one opens after the draw.)
  if (!revealed) await presenter.getByTestId('class-reveal').click();
  await presenter.getByTestId('class-chart').waitFor({ timeout: 30_000 });
  assert.equal(Number(await presenter.getByTestId('class-total').innerText()), expected.reduce((a, b) => a + b, 0));
  assert.deepEqual((await chartCounts(presenter)).filter((c) => c > 0).sort((a, b) => b - a), expected);
  const chips = await presenter.getByTestId('chip').count();
  await presenter.getByTestId('class-draw').click();
  await presenter.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length === n + 1, chips, { timeout: 30_000 });
  await presenter.waitForFunction((r) => new RegExp(`^Round ${r}:`).test(document.querySelector('[data-testid=room-count]')?.textContent ?? ''), round + 1, { timeout: 30_000 });
}

test('classroom: a presenter and 30 phones, by QR and by code, three rounds, a dropped phone and a reloaded presenter', { timeout: 600_000 }, async () => {
  const server = await startClassroom();
  const contexts = [];
  try {
    const pctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    contexts.push(pctx);
    const { page: presenter, problems } = await open(pctx, `${server.url}/?backend=cpu&class=1&presenter=1&temperature=0&steps=3`);
    await presenter.getByTestId('room-box').waitFor({ timeout: 60_000 });
    // The classroom serves the page cross-origin isolated: its engine on threads.
    assert.equal(await presenter.evaluate(() => crossOriginIsolated), true);
    // (Presenter mode hides the thread count: read from the page.)
    await presenter.getByTestId('threads-badge').waitFor({ state: 'attached', timeout: 30_000 });
    assert.match(await presenter.getByTestId('threads-badge').textContent(), /· timed$/);
    const code = await presenter.getByTestId('room-code').innerText();
    const join = await presenter.getByTestId('room-join').innerText();
    assert.equal(join, `${server.url}/join?code=${code}`);
    assert.equal(await readQr(presenter), join);
    await presenter.waitForFunction(() => /^Round 1:/.test(document.querySelector('[data-testid=room-count]')?.textContent ?? ''), null, { timeout: 30_000 });
    // The link names the room; the secret is not in it.
    assert.match(presenter.url(), new RegExp(`room=${code}`));
    assert.doesNotMatch(presenter.url(), /key=/);
    assert.deepEqual(await axeSerious(presenter), []);
    await screenshot(presenter, 'classroom-presenter-room');

    const students = [];
    for (let i = 0; i < 30; i++) {
      const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
      contexts.push(ctx);
      students.push(i < 15 ? await student(ctx, join) : await student(ctx, `${server.url}/join`, code.toLowerCase()));
    }
    const text = await presenter.getByTestId('transcript-text').innerText();
    assert.equal(await students[7].page.getByTestId('context').innerText(), text.trim());
    await presenter.waitForFunction(() => /30 students in/.test(document.querySelector('[data-testid=room-count]')?.textContent ?? ''));
    assert.deepEqual(await axeSerious(students[0].page), []);

    // Round 1: 15 girl, 10 dog, 5 cat.
    await everyoneGuesses(presenter, students, students.map((_, i) => (i < 15 ? 'girl' : i < 25 ? 'dog' : 'cat')));
    await presenter.getByTestId('class-reveal').click();
    await presenter.getByTestId('class-chart').waitFor({ timeout: 30_000 });
    assert.deepEqual((await chartCounts(presenter)).filter((c) => c > 0).sort((a, b) => b - a), [15, 10, 5]);
    const box = await presenter.getByTestId('class-draw').boundingBox();
    assert.ok(box && box.y + box.height <= 720, `Draw at ${JSON.stringify(box)}`);
    await screenshot(presenter, 'classroom-presenter-reveal');
    await students[0].page.waitForFunction(() => /rank \d+/.test(document.querySelector('[data-testid=result]').textContent));
    assert.match(await students[20].page.getByTestId('result').innerText(), /Your guess “dog” is the token ␣?d\S*: the model gave it p = [\d.e-]+ \(rank \d+\); 33% of the class guessed it/);
    await screenshot(students[0].page, 'classroom-student-result');
    assert.match(await students[20].page.getByTestId('status').innerText(), /Guessing is closed; your guess “dog” counts/);
    await presenter.getByTestId('class-draw').click();
    await presenter.waitForFunction(() => /^Round 2:/.test(document.querySelector('[data-testid=room-count]')?.textContent ?? ''), null, { timeout: 30_000 });
    await students[0].page.waitForFunction((t) => document.querySelector('[data-testid=context]').textContent.length > t, text.trim().length);

    // Round 2: one phone picks one of the model's favourites; one drops after guessing and
    // comes back with its guess kept; the presenter reloads and the room goes on.
    await students[0].page.getByTestId('choice').first().click();
    await everyoneGuesses(presenter, students, students.map((_, i) => (i === 0 ? null : 'mom')));
    const address = students[3].page.url();
    assert.match(address, new RegExp(`/join\\?code=${code}$`));
    await students[3].page.close();
    students[3] = await student(contexts[4], address);
    await students[3].page.waitForFunction(() => /“mom” is in/.test(document.querySelector('[data-testid=status]').textContent));
    assert.equal(await students[3].page.getByTestId('guess-text').inputValue(), 'mom');
    assert.ok(await students[3].page.getByTestId('submit-guess').isDisabled());
    await guessed(presenter, 30);
    await pageUrl(presenter);
    await presenter.reload();
    await presenter.getByTestId('room-box').waitFor({ timeout: 60_000 });
    assert.equal(await presenter.getByTestId('room-code').innerText(), code);
    await presenter.waitForFunction(() => /^Round 2: 30 students in, 30 guessed/.test(document.querySelector('[data-testid=room-count]')?.textContent ?? ''), null, { timeout: 30_000 });
    await presenter.getByTestId('class-reveal').click();
    await presenter.getByTestId('class-chart').waitFor({ timeout: 30_000 });
    assert.equal(Number(await presenter.getByTestId('class-total').innerText()), 30);
    assert.ok(Math.max(...await chartCounts(presenter)) >= 29);
    const chipsNow = await presenter.getByTestId('chip').count();
    await presenter.getByTestId('class-draw').click();
    await presenter.waitForFunction((n) => document.querySelectorAll('[data-testid=chip]').length === n + 1, chipsNow, { timeout: 30_000 });
    await presenter.waitForFunction(() => /^Round 3:/.test(document.querySelector('[data-testid=room-count]')?.textContent ?? ''), null, { timeout: 30_000 });

    // Round 3: everyone the same word; the presenter reloads after the reveal and the page
    // reveals the same guesses again (the room kept them), then draws.
    await everyoneGuesses(presenter, students, students.map(() => 'sun'));
    await presenter.getByTestId('class-reveal').click();
    await presenter.getByTestId('class-chart').waitFor({ timeout: 30_000 });
    await pageUrl(presenter);
    await presenter.reload();
    await presenter.getByTestId('class-chart').waitFor({ timeout: 60_000 });
    assert.deepEqual((await chartCounts(presenter)).filter((c) => c > 0), [30]);
    await revealAndDraw(presenter, [30], 3, { revealed: true });
    // Each phone is told the token drawn, and the next round opens on it.
    await students[0].page.waitForFunction(() => /^Last round the model wrote \S+\.$/.test(document.querySelector('[data-testid=drawn]').textContent));
    await students[0].page.waitForFunction(() => /^Round 4$/.test(document.querySelector('#round-h').textContent.trim()));
    assert.match(await presenter.getByTestId('class-score').innerText(), /on \d of 3/);
    assert.deepEqual(problems, []);
    for (const s of students) assert.deepEqual(s.problems, []);
  } finally {
    for (const c of contexts) await c.close();
    await server.close();
  }
});

test('a lesson step\'s class check: the question on the track, the guesses against top-p\'s kept set, back to the step', async () => {
  const server = await serve();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  try {
    const topp = 6; // the lesson's "topk-topp" step, 1-based in links
    const { page, problems } = await open(ctx, `${server.url}?backend=cpu&presenter=1&lesson=${topp}`);
    await page.getByTestId('lesson-check').waitFor({ timeout: 60_000 });
    await page.getByTestId('lesson-check').click();
    await page.getByTestId('class-tally').waitFor({ timeout: 30_000 });
    assert.match(await page.getByTestId('lesson-check-question').innerText(), /^Class check: Top-p 0\.9 keeps/);
    assert.equal(await page.getByTestId('lesson-check').getAttribute('aria-pressed'), 'true');
    // The page's chain against the CLI's (the same engine, run natively: `next --prompt
    // "Lily went to the" --top-p 0.9` lists ␣p (park) kept with q 0.7569 and ␣h (house) cut).
    // The kept set itself is worked out from p alone, independently of the chain, in
    // crates/worker/src/session/tests/class.rs.
    await page.getByTestId('class-tally').fill('park ×3, house, a ×2');
    await page.waitForFunction(() => !document.querySelector('[data-testid=class-reveal]').disabled, null, { timeout: 30_000 });
    await page.getByTestId('class-reveal').click();
    await page.getByTestId('class-chart').waitFor({ timeout: 30_000 });
    const rows = await page.locator('[data-testid=class-chart] tbody tr').allInnerTexts();
    // The guess "park" is in top-p 0.9's kept set, "house" in the tail it cuts.
    assert.ok(rows.some((r) => /← park/.test(r) && /\t0\.757$/.test(r.trim())), rows.join('\n'));
    assert.ok(rows.some((r) => /← house/.test(r) && /✕ top_p$/.test(r.trim())), rows.join('\n'));
    await screenshot(page, 'class-check-top-p');
    assert.deepEqual(await axeSerious(page), []);
    // Pressed again: back to the step, its own caption.
    await page.getByTestId('lesson-check').click();
    await page.getByTestId('class-panel').waitFor({ state: 'detached', timeout: 30_000 });
    await page.waitForFunction(() => !document.querySelector('[data-testid=lesson-check-question]'));
    assert.match(await page.url(), new RegExp(`lesson=${topp}`));
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
    await server.close();
  }
});
