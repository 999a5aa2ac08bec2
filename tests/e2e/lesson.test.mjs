// Lesson 10's taxonomy, "same θ, different config", the lesson track, exports and
// accessibility, in headless Chromium as a teacher uses them. Expected values come from the
// lesson's own text, the CLI, the model card, and axe-core (Deque's checker, from npm).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { axeSerious, open, pageUrl, ROOT, SHOTS, serveAndLaunch } from './harness.mjs';

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
    // A control of how the page is shown (its language) is no quantity of inference.
    const controls = [...document.querySelectorAll('input, select, textarea')].filter((el) => !el.closest('[data-presentation]'));
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

/** The caption's numbers by key, once its view has arrived (within `timeout` ms). */
async function caption(page, step, timeout = 90_000) {
  await page.waitForFunction((s) => {
    const t = document.querySelector('[data-testid=lesson-track]');
    return t?.dataset.step === String(s) && !t.querySelector('[data-testid=lesson-waiting]');
  }, step, { timeout });
  return page.locator('[data-testid=lesson-caption] .num').evaluateAll((ns) =>
    Object.fromEntries(ns.map((n) => [n.dataset.key, Number(n.dataset.value)])));
}

/** The prompt each step runs (the default one unless the step's link names another). */
const STEP_PROMPTS = { 'greedy-vs-beam': 'The dog', tail: 'She saw a', penalty: 'The dog' };

/** Where a step stands on screen: its key, what it shows, and where that is. */
async function place(page) {
  return page.evaluate(() => {
    const track = document.querySelector('[data-testid=lesson-track]');
    const key = track.dataset.key;
    const shows = track.dataset.shows;
    const el = document.querySelector(`[data-testid=${shows}]`);
    const r = el?.getBoundingClientRect();
    return {
      key,
      shows,
      top: r ? r.top : null,
      bottom: r ? r.bottom : null,
      track: track.getBoundingClientRect().bottom,
      height: innerHeight,
      focus: document.activeElement?.dataset?.testid ?? document.activeElement?.tagName,
      prompt: document.querySelector('[data-testid=prompt]').value,
    };
  });
}

/**
 * Walks the whole track by keyboard: at every step what it shows comes into the viewport's
 * upper half (under the track), the prompt box holds the step's prompt, the focus is on the
 * caption, and the caption has its numbers within 5 s on the CPU. Returns each step's numbers
 * by key.
 */
async function walk(page, shots, onStep = async () => {}) {
  const seen = {};
  for (let i = 0; i < 15; i++) {
    await page.keyboard.press('PageDown');
    const n = await caption(page, i, 5_000);
    // The panel comes up under the track (a smooth scroll: give it a moment).
    await page.waitForFunction(() => {
      const t = document.querySelector('[data-testid=lesson-track]');
      const el = document.querySelector(`[data-testid=${t.dataset.shows}]`);
      if (!el) return false;
      const r = el.getBoundingClientRect();
      return r.top < innerHeight / 2 && r.bottom > 0;
    }, null, { timeout: 5_000 }).catch(() => {});
    const at = await place(page);
    assert.ok(at.top !== null, `${at.key}: [data-testid=${at.shows}] is not on the page`);
    assert.ok(at.top < at.height / 2 && at.bottom > 0,
      `${at.key}: ${at.shows} spans ${Math.round(at.top)}–${Math.round(at.bottom)} px of ${at.height}`);
    assert.equal(at.prompt, STEP_PROMPTS[at.key] ?? 'Once upon a time', at.key);
    assert.equal(at.focus, 'lesson-caption', `${at.key}: the focus is on ${at.focus}`);
    seen[at.key] = n;
    await onStep(at.key);
    // The shot once the smooth scroll and the settling are over (mid-scroll, a frame can be
    // half drawn).
    if (shots) await page.waitForTimeout(700);
    if (shots) await page.screenshot({ path: path.join(SHOTS, `${shots}-${String(i + 1).padStart(2, '0')}-${at.key}.png`) });
  }
  return seen;
}

test('the lesson track carries a class: every step a place, by keyboard, at 1280×720 presenter and 1400×1000', async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const [width, height, presenter] of [[1280, 720, true], [1400, 1000, false]]) {
    const { page } = await ready(`backend=cpu${presenter ? '&presenter=1' : ''}`);
    await page.setViewportSize({ width, height });
    // A presenter clicked into the prompt box: the clicker's PageDown still opens the track.
    await page.getByTestId('prompt').click();
    const seen = await walk(page, presenter ? 'track-presenter' : 'track-1400', async (key) => {
      // The caption's Llama-2-7B figure is the calculator's, as the calculator is set.
      if (key === 'kv-memory') {
        assert.equal(await page.getByTestId('calc-bytes').inputValue(), '2');
        assert.equal(await page.getByTestId('calc-gqa').innerText(), '2 GiB');
      }
    });
    // Temperature on [2, 1, 0.1]: the lesson's figures, to 3 places (0.864 where the lesson
    // writes ≈ 0.84, and the caption says so).
    assert.equal(seen.temperature.t1.toFixed(3), '0.659');
    assert.equal(seen.temperature.t05.toFixed(3), '0.864');
    assert.equal(seen.temperature.t2.toFixed(3), '0.502');
    // Top-k is rigid, top-p adapts.
    assert.equal(seen['topk-topp'].k_min, 40);
    assert.ok(seen['topk-topp'].p_min < seen['topk-topp'].p_max);
    // Greedy loops on "The dog"; the penalty breaks it.
    assert.ok(seen.penalty.loop_repeats >= 3 && seen.penalty.penalized_repeats < seen.penalty.loop_repeats);
    // KV bytes at the shown n by hand: stories260K has 5 layers of 4 K/V heads × 8 = 32, f32;
    // Llama-2-7B in fp16 as the calculator below it is set.
    assert.equal(seen['kv-memory'].n, 5 + 20);
    assert.equal(seen['kv-memory'].bytes, 2 * 25 * 5 * 32 * 4);
    assert.equal(seen['kv-memory'].l2_bytes, 2 * 4096 * 32 * 4096 * 2);
    // Speculative: tokens per call against the formula at the measured α.
    const { alpha, gamma, formula } = seen.speculative;
    assert.ok(Math.abs(formula - (1 - alpha ** (gamma + 1)) / (1 - alpha)) < 1e-9);
    // The taxonomy: the counts add up to the table's members.
    assert.ok(seen.taxonomy.learned >= 1 && seen.taxonomy.config > seen.taxonomy.learned);
    // PageUp goes back; Esc leaves the prompt box, after which "," (a track key outside text
    // fields) works too; "n" typed in the box is text, not a step.
    await page.keyboard.press('PageUp');
    await caption(page, 13, 5_000);
    await page.getByTestId('prompt').click();
    await page.keyboard.press('n');
    assert.equal(await page.getByTestId('lesson-track').getAttribute('data-step'), '13');
    await page.keyboard.press('Escape');
    assert.notEqual(await page.evaluate(() => document.activeElement?.dataset?.testid), 'prompt');
    await page.keyboard.press(',');
    await caption(page, 12, 5_000);
    const link = await pageUrl(page);
    assert.match(link, /lesson=13/);
    await page.close();
  }
});

test('a step on a slide: ?lesson=k alone opens the step with its view; PageUp / PageDown from there', async () => {
  const { page } = await ready('backend=cpu&lesson=2&presenter=1');
  await page.setViewportSize({ width: 1280, height: 720 });
  const n = await caption(page, 1, 10_000);
  assert.ok(n.beam_logprob > n.greedy_logprob);
  assert.equal(await page.getByTestId('prompt').inputValue(), 'The dog');
  await page.keyboard.press('PageDown');
  await caption(page, 2, 10_000);
  const at = await place(page);
  assert.equal(at.key, 'beam-bland');
  assert.equal(at.prompt, 'Once upon a time');
});

test('prefill against decode: the caption\'s claim holds on its own numbers on five loads in a row', async () => {
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const { page } = await ready('backend=cpu&lesson=9');
    const n = await caption(page, 8, 10_000);
    const text = await page.getByTestId('lesson-caption').innerText();
    runs.push({ prefill: n.prefill_rate, decode: n.decode_rate, ratio: n.ratio, predicted: n.predicted, claim: /compute-bound/.test(text) });
    // Timed on the 15M shape's random weights (61 MB at f32), not the 1 MB model.
    assert.equal(n.weight_bytes, 60_766_848);
    assert.equal(n.prompt_tokens, 64);
    assert.equal(n.gen_tokens, 16);
    assert.ok(Math.abs(n.ratio - n.prefill_rate / n.decode_rate) < 1e-6 * n.ratio);
    if (/compute-bound/.test(text)) {
      assert.ok(n.ratio >= 1.3, text);
      assert.ok(n.decode_intensity < n.ridge && n.ridge <= n.prefill_intensity, text);
      assert.ok(3 * n.ratio >= n.predicted, text);
    } else assert.match(text, /no regime is claimed/);
    await page.close();
  }
  console.log('prefill-decode loads', JSON.stringify(runs));
});

test('the page\'s roofline: every measured point under its measured roof', async () => {
  const { page } = await ready('backend=cpu&lesson=13');
  await caption(page, 12, 10_000);
  await page.getByTestId('roofline').waitFor();
  assert.equal(await page.getByTestId('roofline-under-measured').count(), 0, 'the roof was drawn under a point');
  assert.equal(await page.getByTestId('roofline-roof').count(), 1);
  // And by the numbers the points carry: each title's share of the roof is at most 100 %.
  const shares = await page.locator('[data-testid=roofline] g title').evaluateAll((ts) =>
    ts.map((t) => Number(/\((\d+) % of the roof there\)/.exec(t.textContent)?.[1])));
  assert.ok(shares.length >= 6 && shares.every((x) => x > 0 && x <= 100), JSON.stringify(shares));
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

const axe = axeSerious;

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
