// The panels, used as a user uses them in headless Chromium: beam search, the KV cache and
// the view inside the step (checked against the CLI), the cache comparison, the per-step
// time, quantization, speculative decoding and batching.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open, pageUrl, screenshot } from './harness.mjs';
import { cli, env, ready, chips, waitChips, topRow } from './explorer.mjs';

test('beam search with width 3 for 5 steps draws the engine\'s tree', async () => {
  const { page } = await ready('backend=cpu&strategy=beam&beams=3&panels=beam');
  for (let i = 0; i < 5; i++) await page.getByTestId('step').click();
  const engine = JSON.parse(cli('beam', '--prompt', 'Once upon a time', '--beams', '3', '--max-tokens', '5', '--json'));
  const want = engine.nodes.length;
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=beam-node]').length === n, want, { timeout: 30_000 });
  assert.equal(want, 31);
  const pruned = await page.locator('[data-testid=beam-node][data-status=pruned]').count();
  assert.equal(pruned, engine.nodes.filter((n) => n.status === 'pruned').length);
  assert.match(await page.getByTestId('beam-compare').innerText(), /After 5 tokens: best beam log p = -?\d/);
  await screenshot(page, 'explorer-beam');
});

test('the KV panel shows the formula\'s figures; the calculator gives 2 GiB for Llama-2-7B', async () => {
  const { page } = await ready('backend=cpu');
  assert.equal(await page.getByTestId('kv-per-token').innerText(), '1,280 bytes');
  assert.equal(await page.getByTestId('kv-allocated').innerText(), '655,360 bytes');
  await page.getByTestId('calc-model').selectOption({ label: 'Llama-2-7B (MHA)' });
  await page.getByTestId('calc-positions').fill('4096');
  await page.getByTestId('calc-bytes').selectOption('2');
  assert.equal(await page.getByTestId('calc-gqa').innerText(), '2 GiB');
  // An MHA model is the MHA row, marked: not listed a second time as "this model".
  const rows = () => page.locator('table.calc tbody tr td:first-child').allInnerTexts();
  assert.deepEqual(await rows(), ['MHA (one K/V per query head; this model)', 'MQA (one K/V for all)']);
  await page.getByTestId('calc-model').selectOption({ label: 'Llama-3-8B (GQA)' });
  assert.equal(await page.getByTestId('calc-gqa').innerText(), '512 MiB');
  assert.equal(await page.getByTestId('calc-mha').innerText(), '2 GiB');
  assert.deepEqual(await rows(), ['MHA (one K/V per query head)', 'GQA (this model)', 'MQA (one K/V for all)']);
  await page.getByTestId('kv-grid').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-kv');
});

test('inside the step: the new token\'s attention over the cache and the logit lens (checked against the CLI)', async () => {
  const { page, problems } = await ready('backend=cpu&temperature=0');
  await page.getByTestId('toggle-inside').click();
  await page.getByTestId('att-grid').waitFor();
  assert.match(await page.getByTestId('inside-cost').innerText(), /n = 5 cached positions: 5 dot products of size 8 per head/);
  for (let i = 1; i <= 3; i++) {
    await page.getByTestId('step').click();
    await waitChips(page, i);
  }
  // 5 prompt tokens (BOS first) + 3 generated: the third token's query over 8 positions.
  await page.waitForFunction(() => document.querySelector('[data-testid=att-grid]')?.getAttribute('data-positions') === '8', null, { timeout: 60_000 });
  const grid = await page.getByTestId('att-grid').evaluate((svg) => ({
    rows: svg.querySelectorAll('g.att-row').length,
    cells: [...svg.querySelectorAll('g.att-row')].map((g) => g.querySelectorAll('rect.att').length),
    kv: [...svg.querySelectorAll('g.att-row')].slice(0, 8).map((g) => Number(g.dataset.kvHead)),
    labels: [...svg.querySelectorAll('text.att-pos')].map((t) => t.textContent),
  }));
  assert.equal(grid.rows, 5 * 8, 'n_layers × n_heads rows');
  assert.ok(grid.cells.every((c) => c === 8), `every row over 8 positions: ${grid.cells}`);
  assert.deepEqual(grid.kv, [0, 0, 1, 1, 2, 2, 3, 3], 'heads grouped by the K/V head they read');
  assert.equal(grid.labels.length, 8);
  assert.match(await page.getByTestId('inside-cost').innerText(), /n = 8 cached positions: 8 dot products of size 8 per head.*in this step's own forward pass/s);
  // The readout against the CLI's probe of the same 8 tokens.
  const text = await page.getByTestId('transcript-text').innerText();
  const cli8 = JSON.parse(cli('next', '--prompt', text, '--probe', 'attention,lens', '--json'));
  assert.equal(cli8.probe.tokens.length, 8, `the CLI re-encodes ${JSON.stringify(text)} to the same 8 tokens`);
  const weight = (layer, head, pos) => cli8.probe.attention.find((h) => h.layer === layer && h.head === head).weights[pos];
  const readout = async () => page.getByTestId('att-readout').innerText();
  assert.match(await readout(), new RegExp(`^layer 4, head 0 \\(K/V head 0\\): ${weight(4, 0, 7).toFixed(3)} of its attention on .* at position 7$`));
  await page.getByTestId('att-grid').focus();
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowUp');
  assert.match(await readout(), new RegExp(`^layer 3, head 7 \\(K/V head 3\\): ${weight(3, 7, 6).toFixed(3)} of its attention`));
  // The lens: n_layers rows, the top (final) row's newest cell the distribution's top token.
  const lens = await page.getByTestId('lens-grid').evaluate((t) => [...t.querySelectorAll('tr.lens-row')].map((r) => ({
    layer: Number(r.dataset.layer), cells: [...r.querySelectorAll('td')].map((c) => ({ id: Number(c.dataset.id), piece: c.querySelector('.lens-piece').textContent })),
  })));
  assert.deepEqual(lens.map((r) => r.layer), [4, 3, 2, 1, 0]);
  assert.ok(lens.every((r) => r.cells.length === 8));
  const top = await topRow(page);
  assert.equal(lens[0].cells[7].piece, top.piece);
  // The same lens as the CLI's, layer by layer at every position.
  for (const r of lens) assert.deepEqual(r.cells.map((c) => c.id), cli8.probe.lens.layers[r.layer].cells.map((c) => c.id), `layer ${r.layer}`);
  assert.match(await page.getByTestId('lens-note').innerText(), /^The raw logit lens: the final norm and classifier applied to intermediate layers, which the model was not trained for\./);
  const kl = await page.getByTestId('lens-kl').allInnerTexts();
  assert.equal(kl[0], '0.0000', 'the final layer against itself');
  assert.ok(Number(kl[4]) > 0);
  await page.getByTestId('att-grid').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-inside');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('lens-grid').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-inside-phone');
  // Stopped: no probe while stepping on.
  await page.getByTestId('toggle-inside').click();
  await page.getByTestId('att-grid').waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
});

test('the cache comparison measures both ways of decoding', async () => {
  const { page } = await ready('backend=cpu');
  await page.getByTestId('cache-compare').click();
  const rows = page.getByTestId('cache-compare-table').locator('tbody tr');
  await rows.nth(5).waitFor({ timeout: 60_000 });
  const cells = async (i) => (await rows.nth(i).locator('td').allInnerTexts());
  const first = await cells(0);
  const last = await cells(5);
  assert.equal(first[0], '16');
  assert.equal(last[0], '512');
  const macs = (c) => Number(c[5].replaceAll(',', '')) / Number(c[4].replaceAll(',', ''));
  assert.ok(macs(last) > 10 * macs(first), `${first} / ${last}`);
  // Measured, not only counted: at n = 512, re-running the prefix takes longer than one
  // cached step (512 rows through every matrix against one).
  const [cachedMs, naiveMs] = [Number(last[1]), Number(last[2])];
  assert.ok(cachedMs > 0 && naiveMs > cachedMs, `cached ${cachedMs} ms, no cache ${naiveMs} ms`);
  // Beside each cached step, its bandwidth model: the card's weight bytes and lesson 10's
  // 2 × n × 5 layers × 32 × 4 bytes of K/V, over the bandwidth the note gives.
  const note = await page.getByTestId('kv-bandwidth').innerText();
  const gbs = Number(/([\d.]+) GB\/s/.exec(note)[1]);
  assert.ok(gbs > 0.1, note);
  const weights = Number(/weights f32: ([\d,]+) bytes/.exec(await page.getByTestId('model-summary').innerText())[1].replaceAll(',', ''));
  for (const i of [0, 5]) {
    const c = await cells(i);
    const [n, read, modelMs] = [Number(c[0]), Number(c[6].replaceAll(',', '')), Number(c[7])];
    assert.equal(read, weights + 2 * n * 5 * 32 * 4, `row ${c}`);
    // (the note's bandwidth is rounded to 0.1 GB/s)
    assert.ok(Math.abs(modelMs - read / (gbs * 1e9) * 1e3) <= 0.05 * modelMs + 0.001, `model ${modelMs} ms for ${read} bytes at ${gbs} GB/s`);
    assert.match(c[8], /^[\d.]+×$/);
  }
  await page.getByTestId('cache-compare-table').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-cache-compare');
});

test('beam search is capped at 16 beams; 16 beams over 500 tokens stays a bounded drawing', async () => {
  const capped = await ready('backend=cpu&strategy=beam&beams=64');
  assert.match(await capped.page.getByTestId('url-problems').innerText(), /beams: must be in 1\.\.=16 \(each beam is a KV cache/);
  const { page } = await ready('backend=cpu&strategy=beam&beams=16&max_tokens=500&panels=beam');
  await page.getByTestId('run').click();
  await page.waitForFunction(() => /search finished/.test(document.querySelector('[data-testid=beam-count]')?.textContent ?? ''), null, { timeout: 120_000 });
  const count = Number((await page.getByTestId('beam-count').innerText()).split(' ')[0]);
  const drawn = await page.getByTestId('beam-node').count();
  const depth = Number((await page.getByTestId('beam-compare').innerText()).match(/After (\d+) tokens/)[1]);
  // At most ten levels of 2 × 16 candidates are drawn, however deep the search went.
  assert.ok(drawn <= 10 * 32 + 1, `${drawn} nodes drawn of ${count}`);
  if (depth > 10) {
    assert.ok(count > drawn, `${count} nodes, ${drawn} drawn`);
    assert.match(await page.getByTestId('beam-collapsed').textContent(), new RegExp(`… ${depth - 9} earlier levels`));
  }
});

test('a chip\'s popover floats over the page; choosing beam search opens its panel', async () => {
  const { page } = await ready('backend=cpu&steps=3');
  await waitChips(page, 3);
  const below = async () => (await page.locator('section[aria-labelledby=dist-h]').boundingBox()).y;
  const y0 = await below();
  await page.getByTestId('chip').nth(1).hover();
  await page.getByTestId('chip-popover').waitFor();
  assert.match(await page.getByTestId('chip-popover').innerText(), /Token 2 was drawn from/);
  assert.equal(await below(), y0, 'the page did not move');
  const chip = await page.getByTestId('chip').nth(1).boundingBox();
  const pop = await page.getByTestId('chip-popover').boundingBox();
  assert.ok(pop.y >= chip.y + chip.height && pop.y < chip.y + chip.height + 20, `popover at ${pop.y}, chip ends at ${chip.y + chip.height}`);
  await page.mouse.move(0, 0);
  await page.getByTestId('chip-popover').waitFor({ state: 'detached' });
  // The Strategy menu's beam search opens the beam panel and starts the tree.
  assert.equal(await page.getByTestId('beam-step').count(), 0);
  await page.getByTestId('strategy').selectOption('beam');
  await page.getByTestId('beam-step').waitFor();
  await page.waitForFunction(() => /panels=[^&]*beam/.test(decodeURIComponent(location.search)));
  await page.getByTestId('beam-tree').waitFor();
});

test('beam search first-class: menu, 20 steps on "The dog", paths highlighted, newest level in view, the link restores the tree', async () => {
  const { page } = await ready('backend=cpu&prompt=The+dog');
  await page.getByTestId('strategy').selectOption('beam');
  await page.getByTestId('beam-tree').waitFor();
  for (let i = 0; i < 20; i++) {
    await page.getByTestId('step').click();
    await page.waitForFunction((n) => /After (\d+) tokens/.exec(document.querySelector('[data-testid=beam-compare]')?.innerText ?? '')?.[1] == n, i + 1);
  }
  // The transcript mirrors the best beam: 20 chips, and the best beam's text.
  await waitChips(page, 20);
  const best = (await page.locator('.path-line').nth(1).innerText()).replace(/^Best beam \(in the transcript\): /, '');
  assert.equal(await page.getByTestId('transcript-text').innerText(), best);
  // Both paths drawn; the newest level inside the tree's visible area.
  assert.ok(await page.locator('[data-testid=beam-node].best').count() >= 10);
  // Greedy left the tree early on this prompt: its path goes on in its own dashed row.
  assert.ok(await page.locator('[data-testid=greedy-node]').count() >= 9);
  assert.match(await page.getByTestId('beam-greedy').innerText(), /then beam search pruned it/);
  assert.ok(await page.locator('svg.tree .edge.best').count() >= 9);
  await page.waitForFunction(() => {
    const wrap = document.querySelector('[data-testid=beam-tree-wrap]').getBoundingClientRect();
    const xs = [...document.querySelectorAll('[data-testid=beam-node].best circle')].map((c) => c.getBoundingClientRect());
    const last = xs.reduce((a, b) => (b.x > a.x ? b : a));
    return last.x >= wrap.x && last.x + last.width <= wrap.x + wrap.width;
  });
  const labels = await page.evaluate(() => Math.min(...[...document.querySelectorAll('svg.tree .node text')].map((t) => parseFloat(getComputedStyle(t).fontSize))));
  assert.ok(labels >= 12, `tree labels ${labels}px`);
  await screenshot(page, 'explorer-beam-20');
  // Rewind works in beam search: one level back.
  await page.getByTestId('rewind').click();
  await page.waitForFunction(() => /After 19 tokens/.test(document.querySelector('[data-testid=beam-compare]').innerText));
  await waitChips(page, 19);
  await page.getByTestId('step').click();
  await page.waitForFunction(() => /After 20 tokens/.test(document.querySelector('[data-testid=beam-compare]').innerText));
  // The link holds the beam steps: a reload shows the same tree.
  await page.waitForFunction(() => /steps=20/.test(location.search));
  const tree = async (p) => [await p.getByTestId('beam-compare').innerText(), await p.getByTestId('beam-count').innerText(),
    await p.locator('[data-testid=beam-node]').count()];
  const before = await tree(page);
  const again = await ready((await pageUrl(page)).split('?')[1]);
  await again.page.waitForFunction(() => /After 20 tokens/.test(document.querySelector('[data-testid=beam-compare]')?.innerText ?? ''));
  assert.deepEqual(await tree(again.page), before);
  // The example is one click away, and its figures are the CLI's.
  await again.page.getByTestId('beam-example').click();
  await again.page.waitForFunction(() => /After 10 tokens/.test(document.querySelector('[data-testid=beam-compare]')?.innerText ?? ''));
  const engine = JSON.parse(cli('beam', '--prompt', 'The dog', '--max-tokens', '10', '--json'));
  const text = await again.page.getByTestId('beam-compare').innerText();
  assert.match(text, new RegExp(`best beam log p = ${engine.sequences[0].sum_logprob.toFixed(3)}; greedy path log p = ${engine.greedy.sum_logprob.toFixed(3)}`));
  // The figures first measured on this prompt, to their two decimals.
  const [, b, g] = /best beam log p = (-[\d.]+); greedy path log p = (-[\d.]+)/.exec(text).map(Number);
  assert.ok(Math.abs(b - -4.35) < 0.005 && Math.abs(g - -10.10) < 0.005, text);
});

test('the per-step time includes the forward pass: a model where it dominates shows it', async () => {
  // About 19M parameters with a small vocabulary: the forward pass is most of a step.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'de-forward-'));
  cli('bench', '--random-weights', '448,1200,8,8,8,512,256', '--write', dir);
  const { page } = await ready('backend=cpu');
  await page.getByTestId('load-model').click();
  await page.getByTestId('model-file').setInputFiles(path.join(dir, 'model.bin'));
  await page.getByTestId('tokenizer-file').setInputFiles(path.join(dir, 'tokenizer.bin'));
  await page.getByTestId('load-files').click();
  await page.waitForFunction(() => /dim 448/.test(document.querySelector('[data-testid=model-summary]')?.textContent ?? ''), null, { timeout: 60_000 });
  await page.getByTestId('dist-row').first().waitFor();
  for (let i = 1; i <= 5; i++) {
    await page.getByTestId('step').click();
    await waitChips(page, i);
  }
  const text = await page.getByTestId('timings').innerText();
  const [, total, fwd] = /decode (\d+\.\d+) ms\/token = forward pass (\d+\.\d+) ms/.exec(text).map(Number);
  // The forward pass measured apart: the KV panel's cached decode step at 16 positions
  // (the steps above ran at 19 to 23).
  if (await page.getByTestId('toggle-kv').getAttribute('aria-expanded') !== 'true') await page.getByTestId('toggle-kv').click();
  await page.getByTestId('cache-compare').click();
  const first = page.getByTestId('cache-compare-table').locator('tbody tr').first();
  await first.waitFor({ timeout: 60_000 });
  const [n, cachedMs] = (await first.locator('td').allInnerTexts()).map(Number);
  assert.equal(n, 16);
  // Timing only the chain showed a small fraction of it.
  assert.ok(fwd >= 0.7 * cachedMs, `shown forward ${fwd} ms per token, a cached step measures ${cachedMs} ms: ${text}`);
  assert.ok(fwd >= 0.5 * total, text);
  // One copy of the weights in wasm memory: the file is read from JavaScript tensor by
  // tensor, never copied whole into wasm beside the weights (wasm memory never shrinks).
  const file = fs.statSync(path.join(dir, 'model.bin')).size;
  const engine = Number(await page.getByTestId('memory-engine').getAttribute('data-bytes'));
  assert.ok(engine < 1.4 * file, `engine memory ${engine} bytes for a ${file}-byte model`);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('quantization: f16, q8 and back keep the transcript; the panel shows four distributions, their KL and agreement, and the weight bytes', async () => {
  const { page } = await ready('backend=cpu&seed=5');
  const summary = page.getByTestId('model-summary');
  await page.waitForFunction(() => /weights f32: 1,040,128 bytes/.test(document.querySelector('[data-testid=model-summary]').innerText));
  // f16 at the prompt: the CLI's f16 distribution (the weights rounded the same way).
  await page.getByTestId('precision-select').selectOption('f16');
  await page.waitForFunction(() => /weights f16: 521,472 bytes/.test(document.querySelector('[data-testid=model-summary]').innerText));
  const f16Top = Number(cli('--precision', 'f16', 'next', '--prompt', 'Once upon a time', '--top', '1').split('\n')[1].trim().split(/\s+/)[2]);
  await page.waitForFunction((v) => Number(document.querySelector('[data-testid=dist-value]').innerText) === v, f16Top);
  assert.match(await pageUrl(page), /precision=f16/);
  // q8 at the prompt: the CLI's q8 distribution (quantized in memory the same way).
  await page.getByTestId('precision-select').selectOption('q8');
  await page.waitForFunction(() => /weights q8: 278,352 bytes/.test(document.querySelector('[data-testid=model-summary]').innerText));
  const top1 = (...flags) => Number(cli(...flags, '--precision', 'q8', 'next', '--prompt', 'Once upon a time', '--top', '1').split('\n')[1].trim().split(/\s+/)[2]);
  // With float32 activations q8 is the float32 model of its dequantized weights (0.9684); the
  // CPU's default int8 activations round x as well, which moves it a little, not to it.
  assert.equal(top1('--activations', 'f32'), 0.9684);
  const q8Top = top1();
  assert.ok(q8Top !== 0.9684 && Math.abs(q8Top - 0.9684) < 0.01, `${q8Top}`);
  await page.waitForFunction((v) => Number(document.querySelector('[data-testid=dist-value]').innerText) === v, q8Top);
  assert.match(await pageUrl(page), /precision=q8/);
  // The KV panel: the weights at q8 beside the (float32) cache; the calculator in 8 bits.
  assert.match(await page.getByTestId('kv-weights').innerText(), /^278,352 bytes; with the allocated cache 933,712 bytes/);
  assert.equal(await page.getByTestId('calc-bytes').inputValue(), '1');
  for (let i = 1; i <= 8; i++) {
    await page.keyboard.press('n');
    await waitChips(page, i);
  }
  const text = await page.getByTestId('transcript-text').innerText();
  // Back to f32: the same tokens, f32's numbers.
  await page.getByTestId('precision-select').selectOption('f32');
  await page.waitForFunction(() => /weights f32: 1,040,128 bytes/.test(document.querySelector('[data-testid=model-summary]').innerText));
  await waitChips(page, 8);
  assert.equal(await page.getByTestId('transcript-text').innerText(), text);
  // The panel: four precisions side by side at the current position.
  await page.getByTestId('toggle-quant').click();
  const table = page.getByTestId('quant-table');
  await table.waitFor({ timeout: 30_000 });
  assert.deepEqual(await page.getByTestId('quant-bytes').allInnerTexts(), ['1,040,128', '521,472', '278,352', '164,896']);
  const kl = (await page.getByTestId('quant-kl').allInnerTexts()).map(Number);
  assert.equal(kl[0], 0);
  assert.ok(kl[1] > 0 && kl[2] > kl[1] && kl[3] > kl[2], `KL f32/f16/q8/q4: ${kl}`);
  assert.equal((await page.getByTestId('quant-top').allInnerTexts())[0], 'same');
  // Under q8's and q4's KL, the same weights with float32 activations: their own numbers
  // (no int8 rounding of x), none for f32 and f16.
  const klF32Acts = await page.getByTestId('quant-kl-f32-acts').allInnerTexts();
  assert.equal(klF32Acts.length, 2, `${klF32Acts}`);
  const [q8Acts, q4Acts] = klF32Acts.map(Number);
  assert.ok(q8Acts > 0 && q8Acts !== kl[2] && q4Acts > q8Acts && q4Acts !== kl[3], `KL with f32 activations: ${klF32Acts}; int8: ${kl}`);
  assert.ok((await page.getByTestId('quant-decode').allInnerTexts()).every((t) => /ms\s+\d+ tokens\/s/.test(t)));
  // The 15M shape's column: a step at each precision on random weights that leave the cache.
  const shapeMs = (await page.getByTestId('quant-shape-decode').allInnerTexts()).map((t) => Number(/([\d.]+) ms/.exec(t)[1]));
  assert.equal(shapeMs.length, 4);
  assert.ok(shapeMs.every((ms) => ms > 0), shapeMs.join());
  console.log(`the 15M shape's decode step in the page, f32 / f16 / q8 / q4: ${shapeMs.join(' / ')} ms`);
  assert.match(await page.getByTestId('quant-shape-note').innerText(), /15M shape \(57\.95 MiB at f32\)/);
  const tokens = page.getByTestId('quant-token');
  assert.ok(await tokens.count() >= 3);
  assert.equal(await tokens.first().locator(".qbar").count(), 4);
  assert.match(await page.getByTestId('quant-row').innerText(), /starts inside a group/);
  assert.match(await page.getByTestId('quant-panel').innerText(), /After the transcript's 13 tokens/);
  // A step with the panel open: it follows.
  await page.keyboard.press('n');
  await waitChips(page, 9);
  await page.waitForFunction(() => /After the transcript's 14 tokens/.test(document.querySelector('[data-testid=quant-panel]').innerText));
  await page.getByTestId('quant-panel').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-quantization');
  assert.ok(summary);
});

test('speculative decoding: cycles with drafted, accepted and resampled chips and their Σ min(p, q); the CLI\'s run; a link reproduces it', async () => {
  const { page } = await ready('backend=cpu&seed=4&panels=chain,kv,spec');
  await page.getByTestId('spec-draft').selectOption('exit:2');
  await page.getByTestId('spec-gamma').fill('3');
  await page.getByTestId('spec-gamma').press('Tab');
  await page.getByTestId('spec-run').click();
  const stats = page.getByTestId('spec-stats');
  await stats.waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => /^10$/.test(document.querySelector('[data-testid=spec-stats] td')?.textContent ?? ''));
  const kinds = await page.getByTestId('spec-token').evaluateAll((els) => els.map((e) => e.dataset.kind));
  assert.ok(kinds.includes('spec-accepted') && kinds.includes('spec-resampled'), kinds.join(' '));
  await page.getByTestId('spec-cycle').waitFor();
  assert.ok(await page.getByTestId('spec-drafted').count() >= 1);
  for (const t of await page.getByTestId('spec-overlap').allInnerTexts()) assert.match(t, /^Σ min\(p, q\) = [01]\.\d{3}$/);
  assert.match(await page.getByTestId('spec-per-call').innerText(), /^\d\.\d\d measured; \(1 − α\^\(γ\+1\)\) \/ \(1 − α\) = \d\.\d\d/);
  assert.match(await page.getByTestId('spec-speed').innerText(), /ms a token speculative, [\d.]+ ms plain/);
  // The CLI's run with the same seed, draft, γ and rule begins with the page's tokens.
  const ids = (await page.getByTestId('spec-token').evaluateAll((els) => els.map((e) => Number(e.dataset.id))));
  const out = JSON.parse(cli('speculate', '--prompt', 'Once upon a time', '--seed', '4', '--draft', 'exit:2', '--gamma', '3', '--rule', 'rejection', '--json'));
  assert.deepEqual(out.tokens.slice(0, ids.length), ids);
  const link = await pageUrl(page);
  assert.match(link, /spec=exit%3A2%2C3%2Crejection%2C10/);
  const text = await page.getByTestId('spec-text').innerText();
  await page.getByTestId('spec-panel').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-speculative');
  const again = await ready(link.slice(env.server.url.length));
  await again.page.waitForFunction((t) => document.querySelector('[data-testid=spec-text]')?.innerText === t, text, { timeout: 60_000 });
});

test('batching: four lanes step together (lane 0 is the transcript\'s text), throughput per B, prefill right of decode on the roofline, continuous against static, the calculator\'s batch', async () => {
  const { page } = await ready('backend=cpu&seed=5&panels=batch');
  for (let i = 1; i <= 8; i++) {
    await page.keyboard.press('n');
    await waitChips(page, i);
  }
  const transcript = await page.getByTestId('transcript-text').innerText();
  await page.getByTestId('batch-size').selectOption('4');
  await page.getByTestId('batch-tokens').fill('8');
  await page.getByTestId('batch-tokens').press('Tab');
  await page.getByTestId('batch-run').click();
  await page.getByTestId('lane').nth(3).waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId('lane').count(), 4);
  const lanes = await page.getByTestId('lane-text').allInnerTexts();
  assert.ok(transcript.endsWith(lanes[0]), `lane 0 ${JSON.stringify(lanes[0])} against the transcript ${JSON.stringify(transcript)}`);
  assert.equal(new Set(lanes).size, 4, 'four seeds, four texts');
  assert.match(await page.getByTestId('lanes-summary').innerText(), /^4 lanes: prefill of 4 × \d+ prompt rows in one pass .*, then 8 passes of ≤ 4 rows/);
  await page.getByTestId('batch-step').click();
  await page.waitForFunction(() => /then 9 passes/.test(document.querySelector('[data-testid=lanes-summary]').innerText));
  // Throughput against B, measured in the worker, and the roofline with the machine's peaks.
  await page.getByTestId('batch-measure').click();
  await page.getByTestId('tp-chart').waitFor({ timeout: 120_000 });
  assert.equal(await page.getByTestId('tp-decode-point').count(), 5);
  assert.equal(await page.getByTestId('tp-prefill-point').count(), 5);
  assert.match(await page.getByTestId('tp-why').innerText(), /sit in the CPU's caches/);
  assert.match(await page.getByTestId('roof-peaks').innerText(), /decode's product streams [\d.]+ GB\/s over 1 MiB \(the size of this model's weights\), the batched product computes [\d.]+ GFLOP\/s; ridge [\d.]+ FLOP\/byte/);
  const xs = async (id) => (await page.getByTestId('roofline').getByTestId(id).evaluateAll((els) => els.map((e) => Number(e.dataset.x))));
  const [px, dx] = [await xs('roof-prefill'), await xs('roof-decode')];
  assert.equal(px.length, 5);
  assert.equal(dx.length, 5);
  px.forEach((x, i) => assert.ok(x > dx[i], `prefill x ${x} right of decode x ${dx[i]} at the ${i}-th B`));
  assert.ok(dx[4] > dx[0], 'decode moves right as B grows');
  assert.match(await page.getByTestId('roof-h100').innerText(), /ridge 295 FLOP\/byte\) one sequence does 0\.98 FLOP per byte/);
  // On the CPU backend there are no GPU kernels to time, and the panel says so.
  await page.getByTestId('gpu-split-measure').click();
  await page.getByTestId('gpu-split-none').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('gpu-split-none').innerText(), /^Not measured here: the page runs on the CPU backend, which launches no GPU kernels/);
  // Continuous against static on one seeded trace.
  await page.getByTestId('serve-run').click();
  await page.getByTestId('serve-static').waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId('serve-continuous').getByTestId('tl-request').count(), 12);
  assert.equal(await page.getByTestId('serve-static').getByTestId('tl-request').count(), 12);
  const passes = async (id) => Number((await page.getByTestId(id).innerText()).match(/tokens in (\d+) passes/)[1]);
  const tokens = async (id) => Number((await page.getByTestId(id).innerText()).match(/^(\d+) tokens/)[1]);
  assert.equal(await tokens('serve-continuous-stats'), await tokens('serve-static-stats'));
  assert.ok(await passes('serve-continuous-stats') < await passes('serve-static-stats'));
  assert.match(await page.getByTestId('serve-verdict').innerText(), /^The same \d+ tokens \(each request's own, as alone\): continuous batching needed \d+ passes where static needed \d+/);
  await page.getByTestId('batch-panel').scrollIntoViewIfNeeded();
  await screenshot(page, 'explorer-batching');
  // The KV calculator: Llama-2-7B's weights against 8 sequences' caches.
  await page.getByTestId('toggle-kv').click();
  await page.getByTestId('calc-batch').fill('8');
  await page.waitForFunction(() => /With B = 8 the caches outweigh the weights from n = 3,214 on/.test(document.querySelector('[data-testid=calc-crossover]')?.innerText ?? ''));
  // fp16 by default (as real models are served; the lesson track's KV caption quotes it).
  assert.equal(await page.getByTestId('calc-weights').innerText(), '12.55 GiB', 'at fp16');
  await page.getByTestId('calc-bytes').selectOption('4');
  await page.waitForFunction(() => document.querySelector('[data-testid=calc-weights]').innerText === '25.10 GiB');
  assert.match(await pageUrl(page), /kv_bytes=4/);
  await page.getByTestId('calc-bytes').selectOption('2');
  await page.waitForFunction(() => document.querySelector('[data-testid=calc-weights]').innerText === '12.55 GiB');
  // 8 × 2 × 4,096 × 32 × 4,096 × 2 bytes = 16 GiB of caches at the default n = 4,096.
  assert.equal(await page.getByTestId('calc-kv-batch').innerText(), '16 GiB');
  await page.getByTestId('calc-batch').fill('0');
  await page.getByTestId('calc-error').waitFor();
});
