// Lesson 10's taxonomy, "same θ, different config", the lesson track, exports and
// accessibility, in headless Chromium as a teacher uses them. Expected values come from the
// lesson's own text, the CLI, the model card, and axe-core (Deque's checker, from npm).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { open, pageUrl, ROOT, SHOTS, serveAndLaunch } from './harness.mjs';

const CLI = path.join(ROOT, 'target/debug/decoding-explorer');
function cli(...args) {
  assert.ok(fs.existsSync(CLI), `${CLI} is missing: run cargo test first (scripts/test.sh does)`);
  return execFileSync(CLI, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
const LESSON = path.join(ROOT, '../shared/docs/lesson-10-inference.md');
const ALL_PANELS = 'chain,beam,kv,toy,quant,spec,batch,compare,taxonomy,inside';

const env = serveAndLaunch();

async function ready(query = '') {
  const q = query.replace(/^\?/, '');
  const { page, problems } = await open(env.browser.context, `${env.server.url}?${q}`);
  page.on('crash', () => problems.push('the page crashed'));
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  return { page, problems };
}

async function shot(page, name, width) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.setViewportSize({ width, height: 900 });
  await page.waitForTimeout(200);
  await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
}

test('every control and panel carries its badge from the one table; the lesson\'s table is the lesson\'s', async () => {
  const { page } = await ready(`backend=cpu&panels=${ALL_PANELS}&lesson=15`);
  await page.getByTestId('load-model').click();
  await page.getByTestId('model-file').waitFor({ state: 'attached' });
  await page.getByTestId('cmp-start').click();
  await page.getByTestId('cmp-view').waitFor();
  const report = await page.evaluate(() => {
    const bad = [];
    const ok = (tag) => tag && /^\[(LEARNED|CONFIG|STATE)\]$/.test(tag.textContent.trim()) && tag.dataset.category;
    const controls = [...document.querySelectorAll('input, select, textarea')];
    for (const el of controls) {
      const box = el.closest('[data-tagged]');
      const tag = box?.querySelector('.tag');
      if (!ok(tag)) bad.push(`control ${el.dataset.testid ?? el.id ?? el.outerHTML.slice(0, 60)}`);
    }
    const panels = [...document.querySelectorAll('section.panel')];
    for (const p of panels) {
      if (!ok(p.querySelector('h2 .tag'))) bad.push(`panel ${p.getAttribute('aria-labelledby')}`);
    }
    const missing = document.querySelectorAll('.tag-missing').length;
    return { bad, missing, controls: controls.length, panels: panels.length };
  });
  assert.deepEqual(report.bad, []);
  assert.equal(report.missing, 0);
  assert.ok(report.controls >= 40, `${report.controls} controls walked`);
  assert.ok(report.panels >= 14, `${report.panels} panels walked`);
  // The quantities inside the panels carry their own badges.
  await page.getByTestId('quant-table').waitFor({ timeout: 60_000 });
  for (const [of, want] of [['kv-grid', 'state'], ['cache-compare', 'state'], ['batch-results', 'state'],
    ['quant-table', 'state'], ['quant-weights', 'learned'], ['cmp-view', 'state'], ['timings', 'state'],
    ['memory', 'state'], ['chain-charts', 'state'], ['lesson-caption', 'state']]) {
    assert.equal(await page.locator(`.tag[data-of="${of}"]`).first().getAttribute('data-category'), want, of);
  }
  // A few by hand: a knob is [CONFIG], the KV grid's panel [STATE], the model card [LEARNED].
  const cat = (of) => page.locator(`.tag[data-of="${of}"]`).first().getAttribute('data-category');
  assert.equal(await cat('knob-temperature'), 'config');
  assert.equal(await cat('panel-kv'), 'state');
  assert.equal(await cat('model-summary'), 'learned');
  assert.equal(await cat('precision-select'), 'config');
  // The legend, and the lesson's table row by row as lesson 10 writes it.
  assert.match(await page.getByTestId('legend').innerText(), /\[LEARNED\].*\[CONFIG\].*\[STATE\]/s);
  const lessonRows = fs.readFileSync(LESSON, 'utf8').split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| At inference'))
    .map((l) => l.split('|').slice(1, 3).map((c) => c.trim().replace(/\$\\theta\$/g, 'θ').replace(/\$k\$/g, 'k')));
  assert.equal(lessonRows.length, 5);
  const pageRows = await page.locator('[data-testid=taxonomy-table] tbody tr').evaluateAll((rows) =>
    rows.map((r) => [r.querySelector('th').textContent.trim(), r.querySelector('td').textContent.trim()]));
  assert.deepEqual(pageRows.slice(0, 5), lessonRows);
  assert.match(pageRows[5][0], /this page's addition/);
});

test('same θ, different config: the lesson\'s preset stepped 20 times is the CLI\'s greedy and sampled text; the link reproduces both', async () => {
  const { page } = await ready('backend=cpu&panels=compare');
  await page.getByTestId('cmp-preset').selectOption('terse-wild');
  await page.getByTestId('cmp-view').waitFor();
  await page.getByTestId('cmp-step10').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=cmp-stats-0]')?.dataset.steps === '10');
  await page.getByTestId('cmp-step10').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=cmp-stats-1]')?.dataset.steps === '20');
  const prompt = 'Once upon a time';
  const greedy = cli('generate', '--prompt', prompt, '--strategy', 'greedy', '--max-tokens', '20').trimEnd();
  const wild = cli('generate', '--prompt', prompt, '--temperature', '1.5', '--top-p', '0.98', '--seed', '0', '--max-tokens', '20').trimEnd();
  const text = async (p, i) => prompt + await p.getByTestId(`cmp-text-${i}`).innerText();
  assert.equal(await text(page, 0), greedy);
  assert.equal(await text(page, 1), wild);
  assert.notEqual(greedy, wild);
  // The knobs that differ are highlighted in both columns.
  const differ = await page.locator('[data-testid=cmp-column-1] li.differ').evaluateAll((l) => l.map((e) => e.dataset.knob));
  assert.deepEqual(differ.sort(), ['strategy', 'temperature', 'top_p']);
  // Entropy: greedy's next distribution is the model's; the wild column's is flatter.
  const ent = (i) => page.getByTestId(`cmp-stats-${i}`).getAttribute('data-entropy').then(Number);
  assert.ok(await ent(1) > await ent(0));
  await shot(page, 'compare', 1280);
  await shot(page, 'compare', 390);
  const link = await pageUrl(page);
  assert.match(link, /cmp=/);
  assert.match(link, /cmp_steps=20/);
  const again = await ready(link.slice(env.server.url.length));
  await again.page.waitForFunction(() => document.querySelector('[data-testid=cmp-stats-1]')?.dataset.steps === '20', null, { timeout: 60_000 });
  assert.equal(await text(again.page, 0), greedy);
  assert.equal(await text(again.page, 1), wild);
  // A column the rules refuse says so and starts nothing.
  await again.page.getByTestId('cmp-col-1').fill('temperature=-1');
  await again.page.getByTestId('cmp-col-1').press('Enter');
  await again.page.getByTestId('cmp-start').click();
  assert.match(await again.page.getByTestId('cmp-error-1').innerText(), /temperature/);
});

/** The caption's numbers by key, once its view has arrived. */
async function caption(page, step) {
  await page.waitForFunction((s) => {
    const t = document.querySelector('[data-testid=lesson-track]');
    return t?.dataset.step === String(s) && !t.querySelector('[data-testid=lesson-waiting]');
  }, step, { timeout: 90_000 });
  return page.locator('[data-testid=lesson-caption] .num').evaluateAll((ns) =>
    Object.fromEntries(ns.map((n) => [n.dataset.key, Number(n.dataset.value)])));
}

test('the lesson track: every step opens its view, its numbers are the engine\'s, PageDown / PageUp walk it, the step is in the link', async () => {
  const { page } = await ready('backend=cpu');
  await page.keyboard.press('PageDown');
  let n = await caption(page, 0);
  // The generation loop after 5 tokens: 5 prompt tokens (BOS first) + 5.
  assert.equal(n.context, 10);
  assert.equal(await page.getByTestId('chip').count(), 5);
  const seen = [n];
  for (let i = 1; i < 15; i++) {
    await page.keyboard.press('PageDown');
    seen.push(await caption(page, i));
    assert.match(await pageUrl(page), new RegExp(`lesson=${i + 1}`));
    // The compare editors show the step's comparison (Start restarts what is shown).
    if (i === 5) assert.equal(await page.getByTestId('cmp-col-0').inputValue(), 'top_k=40');
    if (i === 4 || i === 9) {
      await shot(page, `lesson-step-${i + 1}`, 1280);
      await shot(page, `lesson-step-${i + 1}`, 390);
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }
  // Temperature on [2, 1, 0.1]: the figures, to 3 places.
  assert.equal(seen[4].t1.toFixed(3), '0.659');
  assert.equal(seen[4].t05.toFixed(3), '0.864');
  assert.equal(seen[4].t2.toFixed(3), '0.502');
  // Top-k is rigid, top-p adapts.
  assert.equal(seen[5].k_min, 40);
  assert.equal(seen[5].k_max, 40);
  assert.ok(seen[5].p_min < seen[5].p_max);
  // Greedy loops on "The dog"; the penalty breaks it.
  assert.ok(seen[6].loop_repeats >= 3 && seen[6].penalized_repeats < seen[6].loop_repeats);
  // KV bytes at the shown n by hand: stories260K has 5 layers of 4 K/V heads × 8 = 32, f32.
  assert.equal(seen[9].n, 5 + 20);
  assert.equal(seen[9].bytes, 2 * 25 * 5 * 32 * 4);
  assert.equal(seen[9].l2_bytes, 2 * 4096 * 32 * 4096 * 2);
  // Speculative: tokens per call against the formula at the measured α.
  const { alpha, gamma, formula } = seen[10];
  assert.ok(Math.abs(formula - (1 - alpha ** (gamma + 1)) / (1 - alpha)) < 1e-9);
  // The taxonomy: the counts add up to the table's members.
  assert.ok(seen[14].learned >= 1 && seen[14].config > seen[14].learned && seen[14].state > 5);
  // PageUp goes back and the link opens the step where it was.
  await page.keyboard.press('PageUp');
  const back = await caption(page, 13);
  assert.ok(back.params > 0);
  const link = await pageUrl(page);
  const again = await ready(link.slice(env.server.url.length));
  const n13 = await caption(again.page, 13);
  assert.equal(n13.params, back.params);
  // Presenter mode and a phone: the track fits.
  await again.page.getByTestId('presenter').click();
  await shot(again.page, 'lesson-presenter', 1280);
  await again.page.getByTestId('presenter').click();
  await shot(again.page, 'lesson-step-14', 1280);
  await shot(again.page, 'lesson-step-14', 390);
  const box = await again.page.getByTestId('lesson-track').boundingBox();
  assert.ok(box.width <= 390, `the track is ${box.width} px wide on a phone`);
});

/** Saves what clicking `testid` downloads; returns its bytes and name. */
async function download(page, testid) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testid).click()]);
  const file = await d.path();
  return { name: d.suggestedFilename(), bytes: fs.readFileSync(file) };
}

/** A PNG's size and how many of its pixels are not white (its filters undone). */
function png(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  let at = 8, width = 0, height = 0, depth = 0, colour = 0;
  const idat = [];
  while (at < bytes.length) {
    const len = bytes.readUInt32BE(at);
    const type = bytes.subarray(at + 4, at + 8).toString('latin1');
    const data = bytes.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') [width, height, depth, colour] = [data.readUInt32BE(0), data.readUInt32BE(4), data[8], data[9]];
    if (type === 'IDAT') idat.push(data);
    at += 12 + len;
  }
  assert.equal(depth, 8);
  const channels = { 2: 3, 6: 4 }[colour];
  assert.ok(channels, `colour type ${colour}`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  assert.equal(raw.length, height * (stride + 1));
  const out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= channels ? out[y * stride + x - channels] : 0;
      const b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? out[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
      out[y * stride + x] = (v + pred) & 255;
    }
  }
  let ink = 0;
  for (let i = 0; i < out.length; i += channels) if (out[i] < 200 || out[i + 1] < 200 || out[i + 2] < 200) ink++;
  return { width, height, ink };
}

test('exports: the distribution and the beam tree as SVG (labelled, parsed back) and PNG (decoded); the transcript as JSON loads back into the same view', async () => {
  const { page } = await ready('backend=cpu&prompt=The+dog&strategy=beam&beams=3&steps=6&panels=beam');
  await page.getByTestId('beam-tree').waitFor();
  const parse = (svg) => page.evaluate((s) => {
    const doc = new DOMParser().parseFromString(s, 'image/svg+xml');
    if (doc.querySelector('parsererror')) return { error: doc.querySelector('parsererror').textContent };
    const root = doc.documentElement;
    return { tag: root.tagName, width: Number(root.getAttribute('width')), texts: [...doc.querySelectorAll('text')].map((t) => t.textContent), shapes: doc.querySelectorAll('rect, circle, line, polyline').length };
  }, svg);
  for (const [name, must] of [['distribution', ['probability', 'token (most likely first)', 'final p']], ['beam-tree', ['prompt', 'depth → (tokens generated)']]]) {
    const svg = await download(page, `export-${name}-svg`);
    assert.equal(svg.name, `${name}.svg`);
    const doc = await parse(svg.bytes.toString('utf8'));
    assert.equal(doc.error, undefined, doc.error);
    assert.equal(doc.tag, 'svg');
    for (const m of must) assert.ok(doc.texts.some((t) => t.includes(m)), `${name}: no ${m} in ${doc.texts.slice(0, 20)}`);
    assert.ok(doc.shapes > 10, `${name}: ${doc.shapes} shapes`);
    const p = await download(page, `export-${name}-png`);
    assert.equal(p.name, `${name}.png`);
    const img = png(p.bytes);
    assert.equal(img.width, Math.ceil(doc.width * 2), `${name}: the PNG is the SVG at twice its size`);
    assert.ok(img.ink > img.width * img.height * 0.005, `${name}: ${img.ink} drawn pixels`);
  }
  // The distribution's labels are the page's: its top token's piece is in the SVG.
  const top = await page.getByTestId('dist-row').first().locator('.piece').innerText();
  const svg = (await download(page, 'export-distribution-svg')).bytes.toString('utf8');
  assert.ok((await parse(svg)).texts.includes(top), `${top} labels a bar`);

  // The transcript: sampled with a seed, exported, loaded into a page showing something else.
  const s = await ready('backend=cpu&seed=5&temperature=0.8&steps=12');
  await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 12);
  const text = await s.page.getByTestId('transcript-text').innerText();
  const json = await download(s.page, 'export-transcript');
  const f = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(f.format, 'decoding-explorer transcript');
  assert.equal(f.tokens.length, 12);
  assert.deepEqual(f.settings, [['temperature', '0.8'], ['seed', '5']]);
  const file = path.join(SHOTS, '..', 'results', 'transcript.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, json.bytes);
  const other = await ready('backend=cpu&temperature=0&steps=3');
  await other.page.getByTestId('load-transcript').setInputFiles(file);
  await other.page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 12, null, { timeout: 60_000 });
  assert.equal(await other.page.getByTestId('transcript-text').innerText(), text);
  assert.equal(await other.page.getByTestId('knob-temperature-value').inputValue(), '0.8');
  // A file whose tokens are not what the replay gives is reported.
  f.tokens[3] = (f.tokens[3] + 1) % 512;
  fs.writeFileSync(file, JSON.stringify(f));
  await other.page.getByTestId('load-transcript').setInputFiles(file);
  assert.match(await other.page.getByTestId('error').innerText(), /differ from this model's replay/);
  fs.writeFileSync(file, '{"format": "something"}');
  await other.page.getByTestId('load-transcript').setInputFiles(file);
  await other.page.waitForFunction(() => /not a transcript/.test(document.querySelector('[data-testid=error]')?.textContent ?? ''));
});

/** axe-core's serious and critical findings on the page as it is now. */
async function axe(page) {
  const src = fs.readFileSync(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(src);
  // label-content-name-mismatch (a control's accessible name holds its visible label) is
  // one of axe's experimental rules: on by request.
  const r = await page.evaluate(() => window.axe.run(document, {
    resultTypes: ['violations'],
    rules: { 'label-content-name-mismatch': { enabled: true } },
  }));
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

test('accessibility by axe-core: no serious or critical violation in the default view, with every panel open, in presenter mode and at phone width', async () => {
  const { page } = await ready('backend=cpu&steps=8');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 8);
  assert.deepEqual(await axe(page), [], 'default view');
  const all = await ready(`backend=cpu&steps=8&panels=${ALL_PANELS}&prompt=The+dog&lesson=14&cmp=strategy%3Dgreedy%3Btop_p%3D0.9&cmp_steps=5&spec=quant%3Aq8%2C3%2Crejection%2C2`);
  await all.page.getByTestId('cmp-view').waitFor({ timeout: 60_000 });
  await all.page.getByTestId('quant-row').waitFor({ timeout: 60_000 });
  await all.page.getByTestId('lens-grid').waitFor({ timeout: 60_000 });
  assert.deepEqual(await axe(all.page), [], 'every panel open');
  await all.page.getByTestId('presenter').click();
  assert.deepEqual(await axe(all.page), [], 'presenter mode');
  await all.page.getByTestId('presenter').click();
  await all.page.setViewportSize({ width: 390, height: 844 });
  assert.deepEqual(await axe(all.page), [], 'phone width');
});
