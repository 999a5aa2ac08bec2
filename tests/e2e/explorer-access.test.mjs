// The page for every user, in headless Chromium: keyboard only, its Content-Security-Policy,
// readable labels and tappable targets, presenter mode on one screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { screenshot, ROOT } from './harness.mjs';
import { ready, chips, waitChips } from './explorer.mjs';

test('keyboard only: step, rewind, visible focus, help overlay', async () => {
  const { page } = await ready('backend=cpu&temperature=0');
  await page.keyboard.press('n');
  await waitChips(page, 1);
  await page.keyboard.press('n');
  await waitChips(page, 2);
  await page.keyboard.press('b');
  await waitChips(page, 1);
  // Tab to the Step button: the focus ring is visible, Enter steps.
  await page.getByTestId('run-prompt').focus();
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.activeElement?.dataset.testid);
  assert.equal(focused, 'step');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none');
  await page.keyboard.press('Enter');
  await waitChips(page, 2);
  await page.keyboard.press('?');
  await page.getByTestId('help').waitFor();
  await screenshot(page, 'explorer-help');
  // A modal dialog: the focus is in it and stays there under Tab, and the page's shortcuts
  // do not reach the page behind it.
  await page.waitForFunction(() => document.activeElement?.dataset.testid === 'help-close');
  for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'help-close');
  await page.keyboard.press('n');
  await page.waitForTimeout(300);
  assert.equal(await page.getByTestId('chip').count(), 2);
  // Escape closes it and gives the focus back.
  await page.keyboard.press('Escape');
  await page.getByTestId('help').waitFor({ state: 'detached' });
  await page.waitForFunction(() => document.activeElement?.dataset.testid === 'step');
});

test('the page runs under its Content-Security-Policy, on its own origin only', async () => {
  const { page, problems } = await ready('backend=cpu');
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
  assert.doesNotMatch(csp, /unsafe-inline|\*|http:/);
  // Models by link may come from any https host (README, "The page's Content-Security-Policy").
  assert.match(csp, /connect-src 'self' https:;/);
  // The page works under it with no violation so far (every test also checks that).
  assert.deepEqual(problems, []);
  // The policy is in force: an injected inline script does not run and a fetch to another
  // origin is refused, each reported as a violation.
  const ran = await page.evaluate(async () => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = true';
    document.head.append(s);
    const fetched = await fetch('http://localhost:9/elsewhere').then(() => true, () => false);
    // An https host is allowed by the policy (nothing listens there: a network error, not a
    // violation).
    const https = await fetch('https://127.0.0.1:9/model.gguf').then(() => true, () => false);
    return { inline: window.__inline === true, fetched, https };
  });
  assert.deepEqual(ran, { inline: false, fetched: false, https: false });
  const want = [/CSP violation: script-src-elem blocked inline/, /CSP violation: connect-src blocked http:\/\/localhost:9/];
  for (let i = 0; i < 50 && !want.every((re) => problems.some((p) => re.test(p))); i++) {
    await page.waitForTimeout(100);
  }
  const seen = problems.splice(0);
  assert.ok(seen.some((p) => /CSP violation: script-src-elem blocked inline/.test(p)), seen.join('\n'));
  assert.ok(seen.some((p) => /CSP violation: connect-src blocked http:\/\/localhost:9/.test(p)), seen.join('\n'));
  assert.ok(!seen.some((p) => /CSP violation: connect-src blocked https:/.test(p)), seen.join('\n'));
});

test('labels are readable and targets tappable: KV grid and attention grid labels ≥ 11 px, chain charts ≥ 150 × 36, phone targets ≥ 24 × 24 (chain moves 44 × 44)', async () => {
  const { page } = await ready('backend=cpu&steps=2&panels=chain,kv,inside');
  await page.getByTestId('att-grid').waitFor({ timeout: 60_000 });
  for (const presenter of [false, true]) {
    if (presenter) await page.getByTestId('presenter').click();
    // The font size as drawn: the SVG's text size times its scale on screen (a glyph's box
    // would read a rotated "," as 9 px).
    const att = await page.evaluate(() => {
      const svg = document.querySelector('svg.att-grid');
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
    });
    assert.ok(att >= 11, `attention grid labels ${att} px${presenter ? ' in presenter mode' : ''}`);
  }
  await page.getByTestId('presenter').click();
  await waitChips(page, 2);
  const sizes = () => page.evaluate(() => {
    const box = (e) => e.getBoundingClientRect();
    return {
      label: Math.min(...[...document.querySelectorAll('svg.kv-grid text')].map((t) => box(t).height)),
      chart: [...document.querySelectorAll('svg.mini')].map((s) => [box(s).width, box(s).height])[0] ?? null,
      small: [...document.querySelectorAll('button, select, input, a')]
        .filter((e) => e.offsetParent && !e.classList.contains('skip'))
        .map((e) => [e.dataset.testid || e.tagName, Math.round(box(e).width), Math.round(box(e).height)])
        .filter(([, w, h]) => w < 24 || h < 24),
      moves: [...document.querySelectorAll('.stage .moves button')].map((b) => [box(b).width, box(b).height]),
    };
  });
  const desktop = await sizes();
  assert.ok(desktop.label >= 11, `KV labels ${desktop.label} px`);
  assert.ok(desktop.chart[0] >= 150 && desktop.chart[1] >= 36, `chain chart ${desktop.chart}`);
  await page.setViewportSize({ width: 390, height: 844 });
  const phone = await sizes();
  assert.ok(phone.label >= 11, `KV labels on a phone ${phone.label} px`);
  assert.deepEqual(phone.small, []);
  assert.ok(phone.moves.every(([w, h]) => w >= 44 && h >= 44), JSON.stringify(phone.moves.slice(0, 2)));
  await screenshot(page, 'explorer-phone-targets');
});

test('presenter mode fits one screen: at 1280×720 the temperature control and the top row are both in view', async () => {
  const { page } = await ready('backend=cpu&presenter=1&steps=20&top_p=0.9');
  await waitChips(page, 20);
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.evaluate(() => window.scrollTo(0, 0));
    const inView = async (loc) => {
      const b = await loc.boundingBox();
      return b && b.y >= 0 && b.y + b.height <= h && b.x >= 0 && b.x + b.width <= w;
    };
    assert.ok(await inView(page.getByTestId('knob-temperature')), `temperature slider in view at ${w}×${h}`);
    assert.ok(await inView(page.getByTestId('dist-row').first()), `top row in view at ${w}×${h}`);
    assert.ok(await inView(page.getByTestId('strategy')), `strategy in view at ${w}×${h}`);
    // The chips stay in view: the transcript scrolls to its newest chip.
    assert.ok(await inView(page.getByTestId('chip').last()), `newest chip in view at ${w}×${h}`);
    await page.screenshot({ path: path.join(ROOT, `tests/e2e/screenshots/explorer-presenter-${w}x${h}.png`) });
  }
  // Sizes readable from the back row: chips ≥ 18 px, rows ≥ 20 px, tags as dark badges.
  const px = (sel, prop) => page.evaluate(([s, p]) => parseFloat(getComputedStyle(document.querySelector(s))[p]), [sel, prop]);
  assert.ok(await px('[data-testid=chip] .piece', 'fontSize') >= 18);
  assert.ok(await px('[data-testid=dist-row]', 'fontSize') >= 20);
  assert.ok(await px('[data-testid=dist-row]', 'height') >= 20);
  assert.ok(await px('.tag', 'fontSize') >= 14);
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('.tag')).color), 'rgb(255, 255, 255)');
  // Scrolling the page keeps the lesson's knobs on screen beside what is below.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.getByTestId('toggle-kv').scrollIntoViewIfNeeded();
  const knobs = await page.getByTestId('lesson-knobs').boundingBox();
  assert.ok(knobs.y >= 0 && knobs.y < 40, `lesson knobs stuck at the top: ${knobs.y}`);
});
