// Models from the user's files and the page's own failures, in headless Chromium: a bad file,
// GGUF and Hugging Face files picked or dropped, hostile files refused from their headers, a
// worker crash, a 32,000-token model and a GPU link in a browser without WebGPU.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { open, pageUrl, randomModel, screenshot, ROOT } from './harness.mjs';
import { cli, env, ready, chips, waitChips, topRow, pickFiles } from './explorer.mjs';

test('a bad model file gives a clear message and the current model keeps working', async () => {
  const { page } = await ready('backend=cpu');
  const model = fs.readFileSync(path.join(ROOT, 'assets/models/stories260K/stories260K.bin'));
  const tok = fs.readFileSync(path.join(ROOT, 'assets/models/stories260K/tok512.bin'));
  await page.getByTestId('load-model').click();
  await page.getByTestId('model-file').setInputFiles({ name: 'broken.bin', mimeType: 'application/octet-stream', buffer: model.subarray(0, 1000) });
  await page.getByTestId('tokenizer-file').setInputFiles({ name: 'tok512.bin', mimeType: 'application/octet-stream', buffer: tok });
  await page.getByTestId('load-files').click();
  await page.getByTestId('error').waitFor();
  assert.equal(await page.getByTestId('error').locator('span').innerText(), 'model: file is 1,000 bytes, header implies 1,056,540');
  // Nothing was lost: stepping still works on the old model.
  await page.getByTestId('step').click();
  await waitChips(page, 1);
  // A good pair of files loads (the same model, picked by hand).
  await page.getByTestId('load-model').click();
  await page.getByTestId('model-file').setInputFiles({ name: 'stories260K.bin', mimeType: 'application/octet-stream', buffer: model });
  await page.getByTestId('tokenizer-file').setInputFiles({ name: 'tok512.bin', mimeType: 'application/octet-stream', buffer: tok });
  await page.getByTestId('load-files').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=chip]').length === 0);
  assert.equal(await page.getByTestId('dist-row').first().locator('.piece').innerText(), '","');
});

test('a GGUF file (written by llama.cpp\'s gguf package) loads alone, picked or dropped, with the tokenizer it carries', async () => {
  const { page, problems } = await ready('backend=cpu');
  // Every load the page asks of its worker (a listener left by an earlier drawing of the
  // page once loaded each dropped file twice, and the second load reset the Chat toggle).
  await page.evaluate(() => {
    window.loadsAsked = 0;
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      if (m && typeof m === 'object' && Array.isArray(m.files)) window.loadsAsked += 1;
      return post.call(this, m, ...rest);
    };
  });
  const dir = path.join(ROOT, 'assets/models/fixtures/gguf');
  assert.ok(fs.existsSync(dir), `${dir} is missing: scripts/make-fixtures.sh writes it (scripts/test.sh runs it)`);
  // Picked: stories260K as GGUF gives the model card's first distribution.
  await page.getByTestId('load-model').click();
  await page.getByTestId('model-file').setInputFiles(path.join(dir, 'stories260K.gguf'));
  await page.getByTestId('load-files').click();
  await page.waitForFunction(() => /^\[LEARNED\] stories260K: 260,032 parameters, 5 layers/.test(document.querySelector('[data-testid=model-summary]')?.innerText ?? ''));
  assert.deepEqual(await topRow(page), { piece: '","', value: 0.9688 });
  // Dropped: the random Q8_0 Llama; its first distribution is the CLI's on the same file.
  const q8 = path.join(dir, 'tiny-q8_0.gguf');
  const drop = async (name, b64) => page.evaluate(({ name, b64 }) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], name));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { name, b64 });
  await drop('tiny-q8_0.gguf', fs.readFileSync(q8).toString('base64'));
  await page.waitForFunction(() => /^\[LEARNED\] tiny-q8_0: .* 2 layers, dim 64, 4 query \/ 2 K\/V heads, vocab 512, context 64; llama from GGUF, RoPE base 10,000, RMSNorm ε 1e-5; tensors in the file: Q8_0 ×16, F32 ×5; weights q8/.test(document.querySelector('[data-testid=model-summary]')?.innerText ?? ''));
  const want = JSON.parse(cli('--model', q8, 'next', '--prompt', 'Once upon a time', '--json'));
  await page.waitForFunction((p) => document.querySelector('[data-testid=dist-row] .piece')?.textContent === p, JSON.stringify(want.top[0].piece));
  assert.equal((await topRow(page)).value, Number(want.top[0].prob.toFixed(4)));
  // Dropped: a Q4_K_M file written by llama.cpp's own quantizer (Q4_K and Q6_K), run in its
  // own blocks; the card names the file's types, and the first distribution is the CLI's.
  const kq = path.join(ROOT, 'assets/models/fixtures/kquant/kq-q4_k_m.gguf');
  await drop('kq-q4_k_m.gguf', fs.readFileSync(kq).toString('base64'));
  await page.waitForFunction(() => /^\[LEARNED\] kq-q4_k_m: .* 2 layers, dim 256, .*; tensors in the file: Q4_K ×12, F32 ×5, Q6_K ×3; weights ggml: [0-9,]+ bytes/.test(document.querySelector('[data-testid=model-summary]')?.innerText ?? ''));
  const kqWant = JSON.parse(cli('--model', kq, 'next', '--prompt', 'Once upon a time', '--json'));
  await page.waitForFunction((p) => document.querySelector('[data-testid=dist-row] .piece')?.textContent === p, JSON.stringify(kqWant.top[0].piece));
  assert.equal((await topRow(page)).value, Number(kqWant.top[0].prob.toFixed(4)));
  // The weights select names the file's own blocks, and offers them again after a conversion.
  const weights = page.getByTestId('precision-select');
  assert.equal(await weights.inputValue(), 'ggml');
  await screenshot(page, 'files-kquant');
  // The quantization panel: the file's own blocks are a row after the four precisions made
  // from them, with the card's bytes, fewer than q8's.
  await page.getByTestId('toggle-quant').click();
  const fileRow = page.getByTestId('quant-file-row');
  await fileRow.waitFor({ timeout: 60_000 });
  assert.match(await fileRow.locator('th').innerText(), /^the file's blocks \(Q4_K ×12, F32 ×5, Q6_K ×3\) \(the transcript's\)$/);
  const kqBytes = (await page.getByTestId('quant-bytes').allInnerTexts()).map((t) => Number(t.replaceAll(',', '')));
  const cardBytes = Number(/weights ggml: ([\d,]+) bytes/.exec(await page.getByTestId('model-summary').innerText())[1].replaceAll(',', ''));
  assert.equal(kqBytes.length, 5, `${kqBytes}`);
  assert.equal(kqBytes[4], cardBytes);
  assert.ok(kqBytes[4] < kqBytes[2], `the file's blocks ${kqBytes[4]} bytes, q8 ${kqBytes[2]}`);
  assert.equal(await page.locator('p.note', { hasText: "This file holds its own blocks (Q4_K ×12, F32 ×5, Q6_K ×3): its \"f32\" is those weights dequantized" }).count(), 1);
  await fileRow.scrollIntoViewIfNeeded();
  await screenshot(page, 'quant-file-row');
  await page.getByTestId('toggle-quant').click();
  const card = (w) => page.waitForFunction((w) => document.querySelector('[data-testid=model-summary]')?.innerText.includes(`; weights ${w}:`), w);
  await weights.selectOption('q8');
  await card('q8');
  await weights.selectOption('ggml');
  await card('ggml');
  assert.equal((await topRow(page)).value, Number(kqWant.top[0].prob.toFixed(4)));
  // Dropped: a Qwen2 file (Q/K/V biases, a GPT-2 BPE vocabulary split as "qwen2", no BOS):
  // the card says so, and the first distribution is the CLI's on the same file.
  const arch = path.join(ROOT, 'assets/models/fixtures/arch');
  const qwen2 = path.join(arch, 'qwen2.gguf');
  await drop('qwen2.gguf', fs.readFileSync(qwen2).toString('base64'));
  await page.waitForFunction(() => /^\[LEARNED\] qwen2: .* 2 layers, dim 64, 4 query \/ 2 K\/V heads, vocab 420, context 4,096 \(of the file's 32,768, as llama\.cpp runs at its n_ctx\); qwen2 from GGUF, RoPE base 1,000,000, RMSNorm ε 1e-6; Q\/K\/V biases, byte-level BPE vocabulary, "qwen2" split, no BOS; tensors in the file: F32 ×/.test(document.querySelector('[data-testid=model-summary]')?.innerText ?? ''));
  const qWant = JSON.parse(cli('--model', qwen2, 'next', '--prompt', 'Once upon a time', '--json'));
  // (the page shows a piece's spaces as ␣)
  await page.waitForFunction((p) => document.querySelector('[data-testid=dist-row] .piece')?.textContent === p, JSON.stringify(qWant.top[0].piece.replaceAll(' ', '␣')));
  assert.equal((await topRow(page)).value, Number(qWant.top[0].prob.toFixed(4)));
  // Its file carries a ChatML template: "Chat" runs the prompt through it as one user
  // message, the template's special tokens one token each; the first distribution is the
  // CLI's on the rendered text. Off again, the prompt is the text as typed.
  assert.equal(await page.evaluate(() => window.loadsAsked), 4, 'one load a file picked or dropped');
  const ptoks = () => page.evaluate(() => [...document.querySelectorAll('[data-testid=prompt-token]')].map((e) => e.textContent));
  assert.equal(await page.getByTestId('chat-toggle').getAttribute('aria-pressed'), 'false');
  await page.getByTestId('chat-toggle').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=prompt-token]')?.textContent === '<|im_start|>');
  assert.match(await page.getByTestId('prompt-tokens').innerText(), /tokens, through the chat template: /);
  assert.equal((await ptoks()).filter((t) => t === '<|im_end|>').length, 1);
  const rendered = '<|im_start|>user\nOnce upon a time<|im_end|>\n<|im_start|>assistant\n';
  assert.equal(await page.getByTestId('prompt-text').innerText(), rendered);
  const chatWant = JSON.parse(cli('--model', qwen2, 'next', '--prompt', rendered, '--json'));
  await page.waitForFunction((p) => document.querySelector('[data-testid=dist-row] .piece')?.textContent === p, JSON.stringify(chatWant.top[0].piece.replaceAll(' ', '␣')));
  assert.equal((await topRow(page)).value, Number(chatWant.top[0].prob.toFixed(4)));
  await page.getByTestId('chat-toggle').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=prompt-token]')?.textContent === 'Once');
  assert.match(await page.getByTestId('prompt-tokens').innerText(), /tokens \(this vocabulary adds no BOS\): /);
  // A cut GGUF is refused with the engine's reason; the loaded model keeps working.
  const cut = fs.readFileSync(q8).subarray(0, 5000).toString('base64');
  await drop('cut.gguf', cut);
  await page.getByTestId('error').waitFor();
  assert.match(await page.getByTestId('error').locator('span').innerText(), /GGUF: the GGUF file ends at byte 5000 inside the value of "tokenizer\.ggml\.tokens"/);
  await page.getByTestId('step').click();
  await waitChips(page, 1);
  // A pre-tokenizer nobody has is refused by name within a second; Qwen2 keeps working.
  const t0 = Date.now();
  await drop('bpe-unknown.gguf', fs.readFileSync(path.join(arch, 'bpe-unknown.gguf')).toString('base64'));
  await page.waitForFunction(() => /tokenizer\.ggml\.pre is "no-such-pre", a pre-tokenizer this reader does not know \(it reads gpt-2, .*qwen2/.test(document.querySelector('[data-testid=error] span')?.innerText ?? ''));
  const took = Date.now() - t0;
  assert.ok(took < 1000, `refused after ${took} ms`);
  // So are an architecture and a tensor type this reader does not run.
  for (const [file, why] of [
    ['unsupported-arch.gguf', /general\.architecture is "phi3"; "llama" and "qwen2" models are read/],
    ['unsupported-type.gguf', /tensor "blk\.0\.ffn_extra\.weight" has type Q2_K, which this reader does not load/],
  ]) {
    const t1 = Date.now();
    await drop(file, fs.readFileSync(path.join(arch, file)).toString('base64'));
    await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[data-testid=error] span')?.innerText ?? ''), why.source);
    assert.ok(Date.now() - t1 < 1000, `${file} refused after ${Date.now() - t1} ms`);
  }
  await page.getByTestId('step').click();
  await waitChips(page, 2);
  assert.match(await page.getByTestId('model-summary').innerText(), /^\[LEARNED\] qwen2: /);
  assert.deepEqual(problems, []);
});

test('a Hugging Face checkpoint (config.json, model.safetensors, tokenizer.json written by Hugging Face\'s packages) loads picked or dropped', async () => {
  const { page, problems } = await ready('backend=cpu');
  const dir = path.join(ROOT, 'assets/models/fixtures/hf');
  assert.ok(fs.existsSync(dir), `${dir} is missing: scripts/make-fixtures.sh writes it (scripts/test.sh runs it)`);
  const summary = () => page.getByTestId('model-summary').innerText();
  // Picked, the three files in their three inputs: stories260K's first distribution.
  await page.getByTestId('load-model').click();
  const st = path.join(dir, 'stories260K');
  await page.getByTestId('model-file').setInputFiles(path.join(st, 'model.safetensors'));
  await page.getByTestId('tokenizer-file').setInputFiles(path.join(st, 'tokenizer.json'));
  await page.getByTestId('config-file').setInputFiles(path.join(st, 'config.json'));
  await page.getByTestId('load-files').click();
  await page.waitForFunction(() => /LlamaForCausalLM from safetensors/.test(document.querySelector('[data-testid=model-summary]')?.innerText ?? ''));
  assert.match(await summary(), /^\[LEARNED\] stories260K: 260,032 parameters, 5 layers, dim 64, 8 query \/ 4 K\/V heads, vocab 512, context 512; LlamaForCausalLM from safetensors, RoPE base 10,000, RMSNorm ε 1e-5; weights f32/);
  assert.deepEqual(await topRow(page), { piece: '","', value: 0.9688 });
  // Dropped together: a byte-level BPE model (tokenizers' GPT-2 style tokenizer, BF16
  // weights, RoPE base 100,000); its first distribution is the CLI's on the same files.
  const bl = path.join(dir, 'bytelevel');
  const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map((n) => ({ name: n, b64: fs.readFileSync(path.join(bl, n)).toString('base64') }));
  const drop = (list) => page.evaluate((list) => {
    const dt = new DataTransfer();
    for (const { name, b64 } of list) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, list);
  await drop(files);
  await page.waitForFunction(() => /^\[LEARNED\] bytelevel: /.test(document.querySelector('[data-testid=model-summary]')?.innerText ?? ''));
  assert.match(await summary(), /2 layers, dim 32, 4 query \/ 2 K\/V heads, vocab 320, context 128; LlamaForCausalLM from safetensors, RoPE base 100,000, RMSNorm ε 1e-6/);
  const want = JSON.parse(cli('--model', path.join(bl, 'model.safetensors'), 'next', '--prompt', 'Once upon a time', '--json'));
  await page.waitForFunction((p) => document.querySelector('[data-testid=dist-row] .piece')?.textContent === p, JSON.stringify(want.top[0].piece));
  assert.equal((await topRow(page)).value, Number(want.top[0].prob.toFixed(4)));
  // The prompt's chips are the text, byte-level pieces decoded (no "Ġ").
  const chips = await page.getByTestId('prompt-token').allInnerTexts();
  assert.equal(chips[0], '<|endoftext|>');
  assert.ok(chips.length > 2 && !chips.join('').includes('Ġ') && /upon/.test(chips.join('')), chips.join('|'));
  // The KV calculator has the loaded model as a preset: 2 × 128 × 2 layers × 16 × 4 bytes.
  await page.getByTestId('calc-model').selectOption({ label: 'bytelevel (GQA; loaded on this page)' });
  await page.getByTestId('calc-positions').fill('128');
  await page.getByTestId('calc-bytes').selectOption('4');
  assert.match(await page.getByTestId('calc-formula').innerText(), /^bytelevel: 2 × 128 × 2 layers × 16 \(d_kv = 2 K\/V heads × 8\) × 4 = 32,768 bytes/);
  assert.equal(await page.getByTestId('kv-allocated').innerText(), '32,768 bytes');
  // Without its config.json the set is refused before anything is read; the model stays.
  await drop(files.slice(1));
  await page.getByTestId('error').waitFor();
  assert.match(await page.getByTestId('error').locator('span').innerText(), /model\.safetensors is a Hugging Face checkpoint: give it with its config\.json and its tokenizer \(tokenizer\.json, or a llama2\.c tokenizer\.bin\)/);
  await page.getByTestId('step').click();
  await waitChips(page, 1);
  // stories260K's checkpoint with a llama2.c tokenizer.bin instead of its tokenizer.json:
  // read as one (told by its content), the same first distribution.
  await page.getByTestId('load-model').click();
  await page.getByTestId('model-file').setInputFiles(path.join(st, 'model.safetensors'));
  await page.getByTestId('tokenizer-file').setInputFiles(path.join(ROOT, 'assets/models/stories260K/tok512.bin'));
  await page.getByTestId('config-file').setInputFiles(path.join(st, 'config.json'));
  await page.getByTestId('load-files').click();
  await page.waitForFunction(() => /^\[LEARNED\] stories260K: .*LlamaForCausalLM from safetensors/.test(document.querySelector('[data-testid=model-summary]')?.innerText ?? ''));
  await page.waitForFunction(() => document.querySelector('[data-testid=dist-row] .piece')?.textContent === '","');
  assert.deepEqual(await topRow(page), { piece: '","', value: 0.9688 });
  assert.deepEqual(problems, []);
});

test('hostile model files are refused from their size and header, before they are read', async () => {
  const { page } = await ready('backend=cpu');
  // A header asking for a 32 GiB KV cache (seq_len 1,048,576 with tiny dims).
  await pickFiles(page, [64, 1, 64, 32, 32, 3, 1 << 20], 12);
  await page.getByTestId('error').waitFor();
  assert.match(await page.getByTestId('error').innerText(), /KV cache would need 32 GiB at seq_len 1,048,576; the limit is 1.50 GiB/);
  // stories260K's header on a 3 GiB file: refused by its size, not read into memory.
  await pickFiles(page, [64, 172, 5, 8, 4, 512, 512], 3072);
  await page.waitForFunction(() => /3,221,225,500/.test(document.querySelector('[data-testid=error]')?.textContent ?? ''));
  // The current model still works.
  await page.getByTestId('step').click();
  await waitChips(page, 1);
});

test('a worker crash is a message with a Reload that restores the link', async () => {
  const { page, problems } = await ready('backend=cpu&seed=3&temperature=0.8');
  for (let i = 1; i <= 3; i++) {
    await page.keyboard.press('n');
    await waitChips(page, i);
  }
  const text = await page.getByTestId('transcript-text').innerText();
  const [worker] = page.workers();
  await worker.evaluate(() => setTimeout(() => { throw new Error('simulated engine crash'); }));
  await page.getByTestId('crashed').waitFor();
  assert.match(await page.getByTestId('crashed').innerText(), /simulated engine crash.*Nothing you set is lost/s);
  await page.getByTestId('reload').click();
  await page.getByTestId('crashed').waitFor({ state: 'detached' });
  await waitChips(page, 3);
  assert.equal(await page.getByTestId('transcript-text').innerText(), text);
  // The crash was provoked: its report is expected, nothing else.
  const rest = problems.splice(0).filter((p) => !/simulated engine crash/.test(p));
  assert.deepEqual(rest, []);
});

test('a 32,000-token model with every token shown keeps ~60 rows in the page while sliders move', async () => {
  const { page } = await ready('backend=cpu');
  const { model, tokenizer } = randomModel({ dim: 16, hidden: 16, layers: 1, heads: 2, kvHeads: 2, vocab: 32000, seq: 64 });
  await page.getByTestId('load-model').click();
  await page.getByTestId('model-file').setInputFiles({ name: 'wide.bin', mimeType: 'application/octet-stream', buffer: model });
  await page.getByTestId('tokenizer-file').setInputFiles({ name: 'wide-tok.bin', mimeType: 'application/octet-stream', buffer: tokenizer });
  await page.getByTestId('load-files').click();
  await page.waitForFunction(() => /of 32000 tokens kept/.test(document.querySelector('[data-testid=entropy]')?.textContent ?? ''), null, { timeout: 60_000 });
  await page.getByTestId('dist-show-all').click();
  const rows = () => page.locator('[data-testid=dist-rows] [data-testid=dist-row]').count();
  assert.ok(await rows() <= 60, `${await rows()} rows`);
  // The list scrolls through all 32,000: at the bottom, the last rank is there.
  await page.getByTestId('dist-rows').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=dist-row] .rank')].some((r) => r.textContent === '32000'));
  assert.ok(await rows() <= 60, `${await rows()} rows`);
  // Twenty slider moves, each one traced: still a window of rows.
  const slider = page.getByTestId('knob-temperature');
  for (let i = 1; i <= 20; i++) {
    const t = (0.5 + i * 0.05).toFixed(2);
    await slider.evaluate((el, v) => { el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); }, t);
  }
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=knob-temperature-value]').value) === 1.5);
  assert.ok(await rows() <= 60, `${await rows()} rows`);
  await screenshot(page, 'explorer-32k-vocab');
});

test('a GPU link in a browser without WebGPU opens on the CPU with the reason and keeps its tokens', async () => {
  // This browser was started without WebGPU.
  const { page } = await open(env.browser.context, `${env.server.url}?backend=gpu&seed=4&steps=3`);
  await waitChips(page, 3);
  assert.equal(await page.getByTestId('backend-badge').innerText(), 'CPU');
  assert.match(await page.getByTestId('backend-reason').innerText(), /GPU asked for is not available .*running on the CPU/);
  assert.equal(await page.getByTestId('error').count(), 0);
  // The menu keeps the link's preference and says it could not be had.
  assert.equal(await page.getByTestId('backend-select').inputValue(), 'gpu');
  assert.match(await page.locator('[data-testid=backend-select] option[value=gpu]').innerText(), /unavailable: running on the CPU/);
  assert.match(await pageUrl(page), /steps=3/);
  // The same three tokens as the CLI with the link's seed.
  const out = cli('generate', '--prompt', 'Once upon a time', '--seed', '4', '--max-tokens', '3');
  assert.equal(await page.getByTestId('transcript-text').innerText(), out.trimEnd());
});
