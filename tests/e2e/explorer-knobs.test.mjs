// The knobs, the sampling chain and the link, used as a user uses them in headless Chromium:
// the first distribution, greedy text, sliders checked against the CLI, top-k and top-p,
// invalid input, links, toy logits, the chain's order, profiles, the chips' probabilities and
// the samplers of 2026.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { pageUrl, screenshot } from './harness.mjs';
import { GREEDY, cli, env, ready, chips, waitChips, topRow, setKnob } from './explorer.mjs';

test('first distribution: "," on top after "Once upon a time" (CPU)', async () => {
  const { page, problems } = await ready('backend=cpu');
  const top = await topRow(page);
  assert.equal(top.piece, '","');
  assert.equal(top.value, 0.9688);
  assert.equal(await page.getByTestId('backend-badge').innerText(), 'CPU');
  assert.match(await page.getByTestId('entropy').innerText(), /exp\(H\) = 1\.17 effective tokens; 512 of 512 tokens kept/);
  await screenshot(page, 'explorer-default');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'explorer-phone');
  assert.deepEqual(problems, []);
});

test('temperature 0 and 30 steps give the README greedy text', async () => {
  const { page, problems } = await ready('backend=cpu');
  await setKnob(page, 'temperature', 0);
  for (let i = 1; i <= 30; i++) {
    await page.getByTestId('step').click();
    await waitChips(page, i);
  }
  const text = await page.getByTestId('transcript-text').innerText();
  assert.ok(text.length > 100, text);
  assert.ok(GREEDY.startsWith(text), `not a prefix of the greedy text:\n${text}`);
  // Step times are a mean (a worker's clock ticks in 0.1 ms: "0.0 ms" never shows), and the
  // KV panel says why the cache holds one position fewer than prompt + generated.
  const timings = await page.getByTestId('timings').innerText();
  assert.match(timings, /decode (\d+\.\d\d ms\/token = forward pass \d+\.\d\d ms \+ sampling chain \d+\.\d\d ms \(means of the last \d+ steps|under the browser clock's 0\.1 ms)/);
  assert.doesNotMatch(timings, /\b0\.0 ms|, 0\.0,/);
  assert.match(await page.getByTestId('kv-positions').innerText(),
    // The newest token's forward pass runs with the step that chose it (its time is part
    // of the step's), so every generated token is in the cache.
    /^35 of 512 positions: the prompt's 5 tokens and 30 of the 30 generated$/);
  await screenshot(page, 'explorer-greedy-30');
  assert.deepEqual(problems, []);
});

test('dragging the temperature slider follows the engine (checked against the CLI)', async () => {
  const { page } = await ready('backend=cpu');
  const slider = page.getByTestId('knob-temperature');
  // A real mouse drag to about a third of the track.
  const box = await slider.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  for (const f of [0.45, 0.4, 0.35, 0.3]) await page.mouse.move(box.x + box.width * f, box.y + box.height / 2);
  await page.mouse.up();
  const dragged = await page.getByTestId('knob-temperature-value').inputValue();
  assert.ok(Number(dragged) > 0 && Number(dragged) < 1, `dragged to ${dragged}`);
  // The page's top probability for token 432 follows the CLI at each temperature shown.
  const follows = async (t) => {
    await page.waitForFunction((t) => document.querySelector('[data-testid=knob-temperature-value]').value === t, t);
    const expected = JSON.parse(cli('next', '--prompt', 'Once upon a time', '--temperature', t, '--json')).probs[432];
    await page.waitForFunction(
      (e) => Math.abs(Number(document.querySelectorAll('[data-testid=dist-value]')[0].textContent) - e) < 6e-5,
      expected,
      { timeout: 10_000 },
    );
  };
  await follows(dragged);
  // The keyboard on the focused slider: End is the track's maximum (T = 2), Home its minimum
  // (T = 0, greedy: the top token takes all the mass).
  await slider.focus();
  await slider.press('End');
  await follows('2');
  await slider.press('Home');
  await follows('0');
  assert.equal(Number(await page.getByTestId('dist-value').first().innerText()), 1);
  for (const t of ['0.5', '1.5']) {
    await slider.evaluate((el, v) => { el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); }, t);
    await follows(t);
  }
});

test('top-k 3 leaves exactly three tokens not greyed', async () => {
  const { page } = await ready('backend=cpu');
  await setKnob(page, 'top_k', 3);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=dist-row]:not(.removed)').length === 3);
  assert.equal(await page.locator('[data-testid=dist-row].removed').first().locator('.by').innerText(), 'removed by top_k');
  await screenshot(page, 'explorer-top-k-3');
});

test('invalid input shows the engine message next to the control', async () => {
  const { page } = await ready('backend=cpu');
  await setKnob(page, 'top_p', 1.5);
  assert.match(await page.getByTestId('error-top_p').innerText(), /must be in \(0, 1\]/);
  await setKnob(page, 'top_p', 0.9);
  await page.getByTestId('error-top_p').waitFor({ state: 'detached' });
});

test('a link with settings and 10 steps reproduces the transcript', async () => {
  const { page } = await ready('backend=cpu&seed=11&top_p=0.9&temperature=0.8');
  for (let i = 1; i <= 10; i++) {
    await page.keyboard.press('n');
    await waitChips(page, i);
  }
  const text = await page.getByTestId('transcript-text').innerText();
  const link = await pageUrl(page);
  assert.match(link, /steps=10/);
  assert.match(link, /seed=11/);
  const again = await ready(link.slice(env.server.url.length));
  await waitChips(again.page, 10);
  assert.equal(await again.page.getByTestId('transcript-text').innerText(), text);
  // The same tokens as the CLI with the same seed and settings.
  const out = cli('generate', '--prompt', 'Once upon a time', '--seed', '11', '--top-p', '0.9', '--temperature', '0.8', '--max-tokens', '10');
  assert.equal(out.trimEnd(), text);
});

test('nonsense in the link is reported and replaced by defaults', async () => {
  const { page } = await ready('backend=cpu&temperature=banana&top_k=2&steps=oops');
  assert.match(await page.getByTestId('url-problems').innerText(), /temperature: "banana" is not a number/);
  assert.equal(await page.getByTestId('knob-temperature-value').inputValue(), '1');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=dist-row]:not(.removed)').length === 2);
});

test('toy logits: the lesson example at T = 0.5', async () => {
  const { page } = await ready('backend=cpu&panels=toy,chain&temperature=0.5');
  await page.getByTestId('toy-probs').waitFor();
  assert.equal(await page.getByTestId('toy-probs').innerText(), 'softmax → [0.864, 0.117, 0.019]');
  // A fourth logit: softmax(z / 0.5), computed here, replaces the three-token answer.
  const z = [2, 1, 0.1, 3].map((v) => v / 0.5);
  const m = Math.max(...z);
  const e = z.map((v) => Math.exp(v - m));
  const sum = e.reduce((a, b) => a + b, 0);
  const expected = `softmax → [${e.map((v) => (v / sum).toFixed(3)).join(', ')}]`;
  // The rows are the lesson's z₁, z₂, z₃, and the table has its three temperatures.
  const pieces = await page.locator('[data-testid=toy-rows] .piece').allInnerTexts();
  assert.deepEqual(pieces, ['z₁ = 2', 'z₂ = 1', 'z₃ = 0.1']);
  assert.deepEqual(await page.locator('[data-testid=toy-table] tbody tr td:first-of-type').allInnerTexts(), ['0.864', '0.659', '0.502']);
  assert.match(await page.getByTestId('toy-note').innerText(), /gives the top token ≈ 0\.84; softmax gives 0\.864 .*an error in the lesson/);
  await page.getByTestId('toy-logits').fill('2, 1, 0.1, 3');
  await page.waitForFunction((t) => document.querySelector('[data-testid=toy-probs]').textContent === t, expected);
  // Bad input is an error beside the box, and the old answer goes away.
  await page.getByTestId('toy-logits').fill('2, 1, abc');
  assert.match(await page.getByTestId('toy-error').innerText(), /"abc" is not a finite number/);
  assert.equal(await page.getByTestId('toy-probs').count(), 0);
  // A history the penalties see: z₁ "generated" twice, repetition penalty 2 at T = 0.5:
  // z₁'s logit 2 becomes 1 (positive logits are divided), so p(z₁) falls from 0.864.
  await page.getByTestId('toy-logits').fill('2, 1, 0.1');
  await page.getByTestId('toy-history').fill('0, 0');
  await setKnob(page, 'repetition_penalty', 2);
  const w = [1, 1, 0.1].map((v) => Math.exp(v / 0.5));
  const p1 = (w[0] / (w[0] + w[1] + w[2])).toFixed(3);
  await page.waitForFunction((p) => document.querySelector('[data-testid=toy-probs]')?.textContent.startsWith(`softmax → [${p},`), p1);
  await screenshot(page, 'explorer-toy');
});

test('the chain can be reordered with the keyboard buttons', async () => {
  const { page } = await ready('backend=cpu');
  const at = (name) => page.evaluate((name) => [...document.querySelectorAll('[data-testid=chain] .name')].map((e) => e.textContent).indexOf(name), name);
  const was = await at('temperature');
  assert.ok(was > 0);
  await page.getByTestId('up-temperature').click();
  await page.waitForFunction((was) => {
    const names = [...document.querySelectorAll('[data-testid=chain] .name')].map((e) => e.textContent);
    return names.indexOf('temperature') === was - 1;
  }, was);
  assert.match(await pageUrl(page), /order=/);
  // Enter twice on the focused ↓ of top_k moves top_k two rows down (the focus follows the
  // stage; it used to stay on the row, whose button then moved another stage back).
  const position = () => page.evaluate(() => [...document.querySelectorAll('[data-testid=chain] .name')].map((e) => e.textContent).indexOf('top_k'));
  const start = await position();
  await page.getByTestId('down-top_k').focus();
  for (const n of [1, 2]) {
    await page.keyboard.press('Enter');
    await page.waitForFunction(([s, n]) => [...document.querySelectorAll('[data-testid=chain] .name')].map((e) => e.textContent).indexOf('top_k') === s + n, [start, n]);
    await page.waitForFunction(() => document.activeElement?.dataset.testid === 'down-top_k');
  }
  assert.equal(await position(), start + 2);
});

test('an invalid temperature leaves the slider at the value in effect', async () => {
  const { page } = await ready('backend=cpu');
  await setKnob(page, 'temperature', 1.02);
  await page.waitForFunction(() => document.querySelector('[data-testid=knob-temperature]').value === '1.02');
  await setKnob(page, 'temperature', 'banana');
  await page.getByTestId('error-temperature').waitFor();
  assert.equal(await page.getByTestId('knob-temperature').inputValue(), '1.02');
  await setKnob(page, 'temperature', -3);
  await page.waitForFunction(() => /must be ≥ 0/.test(document.querySelector('[data-testid=error-temperature]')?.textContent ?? ''));
  assert.equal(await page.getByTestId('knob-temperature').inputValue(), '1.02');
});

test('greedy repetition loops are flagged', async () => {
  // Greedy, with the end tokens forbidden, until the context is full: it loops on the way.
  const { page } = await ready('backend=cpu&temperature=0&logit_bias=1:-100,2:-100&max_tokens=600&steps=600');
  await page.waitForFunction(() => /context is full/.test(document.querySelector('[data-testid=stop-reason]').textContent), null, { timeout: 60_000 });
  assert.match(await page.getByTestId('loop-warning').innerText(), /Repetition loop: the \d+-token phrase .* repeats \d+ times in a row in the last 64 tokens/);
});

test('a peer profile shows its hidden defaults, each settable to off; the default profile has none', async () => {
  const plain = await ready('backend=cpu');
  assert.equal(await plain.page.getByTestId('profile').inputValue(), 'lesson');
  assert.equal(await plain.page.locator('.default-of').count(), 0);
  const { page } = await ready('backend=cpu&profile=llama.cpp');
  assert.equal(await page.getByTestId('default-of-top_k').innerText(), 'default of llama.cpp');
  assert.equal(await page.getByTestId('knob-top_k-value').inputValue(), '40');
  assert.equal(await page.getByTestId('knob-temperature-value').inputValue(), '0.8');
  assert.equal(await page.getByTestId('stage-min_p').locator('.setting').innerText(), '0.05 (default of llama.cpp)');
  // The link names the profile, not its defaults; top-k 0 turns llama.cpp's 40 off, and
  // the off stays in the link.
  assert.doesNotMatch(await pageUrl(page), /top_k/);
  await setKnob(page, 'top_k', 0);
  await page.getByTestId('default-of-top_k').waitFor({ state: 'detached' });
  await page.waitForFunction(() => /top_k=0/.test(location.search));
  assert.equal(await page.getByTestId('stage-top_k').locator('.setting').innerText(), 'off');
  // Another profile keeps what the user set (top-k 0) and drops llama.cpp's defaults
  // (temperature back to 1); hf's own top-k 50 would apply only to an unset top-k.
  await page.getByTestId('profile').selectOption('hf');
  await page.waitForFunction(() => document.querySelector('[data-testid=knob-temperature-value]').value === '1');
  assert.equal(await page.getByTestId('knob-top_k-value').inputValue(), '0');
  assert.equal(await page.locator('.default-of').count(), 0);
  const hf = await ready('backend=cpu&profile=hf');
  assert.equal(await hf.page.getByTestId('default-of-top_k').innerText(), 'default of hf');
  assert.equal(await hf.page.getByTestId('knob-top_k-value').inputValue(), '50');
});

test('chips show the model\'s probability: the same under T = 0 and greedy, with the drawn one beside it', async () => {
  const chipsOf = async (query) => {
    const { page } = await ready(`backend=cpu&${query}&steps=3`);
    await waitChips(page, 3);
    const texts = await page.locator('[data-testid=chip] .p').allInnerTexts();
    await page.close();
    return texts;
  };
  const t0 = await chipsOf('temperature=0');
  const greedy = await chipsOf('strategy=greedy');
  // ", there was": the model's p from the CLI's raw distribution, step by step.
  const model = [];
  let prompt = 'Once upon a time';
  for (const piece of [',', ' there', ' was']) {
    const v = JSON.parse(cli('next', '--prompt', prompt, '--json'));
    model.push(v.input_probs[v.top.find((t) => t.piece === piece).id].toFixed(2));
    prompt += piece;
  }
  assert.deepEqual(greedy, model.map((p) => `${p} #1`));
  // At T = 0 the token was drawn with p = 1: shown beside the model's.
  assert.deepEqual(t0, model.map((p) => (p === '1.00' ? `${p} #1` : `${p}→1.00 #1`)));
});

test('top-p\'s adaptivity: the kept-set strip, the running sum against p, the tail removed, the coin on the CDF', async () => {
  const { page } = await ready('backend=cpu&top_k=3&steps=12');
  await waitChips(page, 12);
  const sizes = async () => (await page.getByTestId('kept-strip').getAttribute('data-sizes')).split(',').map(Number);
  assert.deepEqual(await sizes(), Array(12).fill(3), 'top-k is flat at k');
  assert.equal(await page.getByTestId('cut-line').count(), 0);
  // The prompt as its tokens, BOS first.
  assert.deepEqual(await page.getByTestId('prompt-token').allInnerTexts(), ['<s>', '␣Once', '␣upon', '␣a', '␣time']);
  const p = (await ready('backend=cpu&top_p=0.9&steps=12')).page;
  await waitChips(p, 12);
  await p.getByTestId('kept-strip').waitFor();
  const s = (await p.getByTestId('kept-strip').getAttribute('data-sizes')).split(',').map(Number);
  assert.ok(Math.min(...s) < Math.max(...s), `top-p adapts: ${s}`);
  // The first two sizes are the CLI's kept counts for those prefixes.
  const chipText = await p.locator('[data-testid=chip] .piece').first().innerText();
  const kept0 = JSON.parse(cli('next', '--prompt', 'Once upon a time', '--top-p', '0.9', '--json')).kept;
  const kept1 = JSON.parse(cli('next', '--prompt', `Once upon a time${chipText.replace('␣', ' ')}`, '--top-p', '0.9', '--json')).kept;
  assert.deepEqual(s.slice(0, 2), [kept0, kept1]);
  await p.getByTestId('cut-line').waitFor({ state: 'attached' });
  const entropy = await p.getByTestId('entropy').innerText();
  const m = /top-p \(p = 0\.9\) kept (\d+) and removed a tail of mass (\d\.\d+)/.exec(entropy);
  assert.ok(m, entropy);
  const kept = Number(m[1]);
  assert.equal(await p.locator('[data-testid=dist-row]:not(.removed)').count(), kept);
  // The running sum passes 0.9 at the last kept row and not before.
  const sums = (await p.getByTestId('dist-cum').allInnerTexts()).slice(0, kept + 1).map((t) => Number(t.replace('Σ ', '')));
  assert.ok(sums[kept - 1] >= 0.9 && (kept === 1 || sums[kept - 2] < 0.9), `${sums}`);
  assert.ok(Math.abs(Number(m[2]) - (1 - sums[kept - 1])) < 2e-3, `${m[2]} vs ${sums[kept - 1]}`);
  // The coin: a point on the cumulative distribution, at the token the chart marks as chosen.
  const chosen = await p.locator('[data-testid=dist-row].chosen').getAttribute('data-id');
  assert.equal(await p.getByTestId('coin-point').getAttribute('data-token'), chosen);
});

test('the samplers of 2026: mirostat replaces the chain and its μ is drawn over the steps and exported; DRY\'s breakers and a bad value\'s rule', async () => {
  const { page } = await ready('backend=cpu&panels=chain&profile=llama.cpp&mirostat=2&mirostat_tau=3&seed=1');
  for (let i = 0; i < 4; i++) await page.getByTestId('step').click();
  await waitChips(page, 4);
  // llama.cpp's common_sampler_init: logit bias → temperature → mirostat; the rest do not run.
  assert.match(await page.getByTestId('stage-top_k').locator('.setting').innerText(), /replaced by mirostat/);
  assert.match(await page.getByTestId('stage-temperature').locator('.setting').innerText(), /0\.8/);
  const states = page.getByTestId('stage-states');
  await states.getByTestId('state-mirostat').waitFor({ timeout: 10_000 });
  const text = await states.innerText();
  assert.match(text, /mirostat over the steps/);
  assert.match(text, /mu/);
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-stage-states-svg').click()]);
  const svg = fs.readFileSync(await d.path(), 'utf8');
  assert.match(svg, /mirostat over the steps/);
  // The engine's first μ is 2τ = 6 bits (llama.cpp's mirostat_v2 initialises μ so).
  const first = JSON.parse(cli('next', '--prompt', 'Once upon a time', '--profile', 'llama.cpp', '--mirostat', '2', '--mirostat-tau', '3', '--json'));
  const miro = first.stages.find((s) => s.stage === 'mirostat');
  assert.equal(miro.cut.values.find((v) => v.name === 'mu').value, 6);
  // DRY's default breakers show in their box; a negative multiplier shows its rule.
  assert.equal(await page.getByTestId('knob-dry_sequence_breaker').inputValue(), '\\n, :, ", *');
  await setKnob(page, 'dry_multiplier', '-1');
  assert.match(await page.getByTestId('error-dry_multiplier').innerText(), /must be in \[0, 10000\]/);
});
