// Issue 49, the page's reach: the dark theme (the system's preference followed, a toggle kept
// in the link, the figures and exports in the theme, axe-core clean over the lesson track's
// views in both schemes). Expected values: axe-core's findings (Deque's checker, from npm),
// WCAG's contrast formula computed here from the browser's computed colours, the light page's
// own text for the seeded text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { axeSerious, launch, open, pageUrl, ROOT, SHOTS, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

async function ready(query) {
  const { page } = await open(env.browser.context, `${env.server.url}?${query}`);
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  return page;
}

const theme = (page) => page.evaluate(() => document.documentElement.dataset.theme);

/** WCAG 2's contrast ratio of two CSS rgb() colours, and the body's text against its ground. */
async function bodyContrast(page) {
  return page.evaluate(() => {
    const rgb = (c) => c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
    const lum = (c) => {
      const [r, g, b] = rgb(c).map((v) => {
        const s = v / 255;
        return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const root = getComputedStyle(document.documentElement);
    const panel = getComputedStyle(document.querySelector('.panel'));
    const [a, b] = [lum(panel.color), lum(panel.backgroundColor)];
    return {
      ground: lum(root.backgroundColor),
      panel: lum(panel.backgroundColor),
      ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05),
    };
  });
}

/** The seeded text the page stepped, chip by chip. */
const chips = (page) => page.getByTestId('chip').locator('.piece').allInnerTexts();

/** Walks the lesson track by keyboard, each step's view checked by axe once its caption has
 * its numbers. Returns the findings by step. */
/**
 * The interface's English sentences (en/*.ftl: each message's text between its arguments,
 * three words or more), which a translated page must not show: a view that kept its English
 * shows one.
 */
const ENGLISH = (() => {
  const dir = path.join(ROOT, 'crates/page/locales/en');
  const out = new Set();
  for (const f of fs.readdirSync(dir)) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const m = /^([a-z0-9-]+) = (.*)$/.exec(line);
      // (The badges' names and the lesson's formulas are the same in every language.)
      if (!m) continue;
      for (const chunk of m[2].split(/\{[^}]*\}/)) {
        const words = chunk.match(/[A-Za-z]{3,}/g) ?? [];
        if (words.length >= 3) out.add(chunk.trim());
      }
    }
  }
  return [...out];
})();

/** The interface's English sentences on the page (`ENGLISH`), none once it is translated. */
async function englishLeft(page) {
  const text = await page.evaluate(() => document.body.innerText);
  return ENGLISH.filter((e) => text.includes(e));
}

async function axeTrack(page, scheme, eachStep = async () => {}) {
  const found = {};
  await page.getByTestId('lesson-open').click();
  for (let i = 0; i < 15; i++) {
    if (i > 0) await page.keyboard.press('PageDown');
    await page.waitForFunction((s) => {
      const t = document.querySelector('[data-testid=lesson-track]');
      return t?.dataset.step === String(s) && !t.querySelector('[data-testid=lesson-waiting]');
    }, i, { timeout: 30_000 });
    const key = await page.getByTestId('lesson-track').getAttribute('data-key');
    // The step's view keeps the scheme (a step's link says nothing of it).
    assert.equal(await theme(page), scheme, `step ${i + 1} ${key}`);
    const v = await axeSerious(page);
    if (v.length) found[`${i + 1} ${key}`] = v;
    await eachStep(`${i + 1} ${key}`);
  }
  return found;
}

test('dark theme: the system\'s preference followed, the link\'s choice kept, the figures and exports dark, the seeded text unchanged', async () => {
  const q = 'backend=cpu&steps=8&panels=chain,kv,beam&strategy=beam&beams=2';
  const page = await ready(q);
  await page.getByTestId('beam-tree').waitFor();
  assert.equal(await theme(page), 'light');
  const text = await chips(page);
  assert.equal(text.length, 8);
  const lc = await bodyContrast(page);
  assert.ok(lc.ground > 0.8, `light ground luminance ${lc.ground}`);

  // The system turns dark: the page follows at once, and a reload starts dark, the scheme set
  // before the app is mounted (start.js), so the page is never drawn light first.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  await page.addInitScript(() => document.addEventListener('DOMContentLoaded', () => {
    window.themeAtStart = `${document.documentElement.dataset.theme} ${!!document.querySelector('.app')}`;
  }));
  await page.reload();
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  assert.equal(await page.evaluate(() => window.themeAtStart), 'dark false');
  await page.getByTestId('beam-tree').waitFor();
  assert.equal(await theme(page), 'dark');
  const dc = await bodyContrast(page);
  assert.ok(dc.ground < 0.05 && dc.panel < 0.05, `dark ground ${dc.ground}, panel ${dc.panel}`);
  assert.ok(dc.ratio >= 7, `panel text ${dc.ratio.toFixed(2)}:1`);
  assert.deepEqual(await chips(page), text, 'the seeded text is the light page\'s');
  assert.doesNotMatch(await pageUrl(page), /theme=/, 'following the system writes nothing in the link');
  // The figures on the page are drawn dark (their ground is the dark table's).
  const grounds = await page.evaluate(() => [...document.querySelectorAll('.figure svg, .tree-wrap svg')]
    .map((s) => s.querySelector('rect')?.getAttribute('fill')));
  assert.ok(grounds.length >= 2 && grounds.every((g) => g === '#1e2029'), `figure grounds ${grounds}`);
  // An export is the figure as shown: dark.
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-beam-tree-svg').click()]);
  const svg = fs.readFileSync(await d.path(), 'utf8');
  assert.match(svg, /<rect x="0\.0" y="0\.0" width="[\d.]+" height="[\d.]+" fill="#1e2029"\/>/);
  assert.doesNotMatch(svg, /fill="#ffffff"/);

  // The toggle: light, kept in the link; a reload keeps it though the system is dark. The
  // figures on the page are drawn again in it at once.
  await page.getByTestId('theme-toggle').click();
  assert.equal(await theme(page), 'light');
  await page.waitForFunction(() => [...document.querySelectorAll('.figure svg, .tree-wrap svg')]
    .every((s) => s.querySelector('rect')?.getAttribute('fill') === '#ffffff'), null, { timeout: 5_000 });
  assert.equal(await page.getByTestId('theme-toggle').getAttribute('aria-pressed'), 'false');
  const link = await pageUrl(page);
  assert.match(link, /theme=light/);
  await page.goto(link);
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  assert.equal(await theme(page), 'light');
  assert.equal(await page.evaluate(() => window.themeAtStart), 'light false');
  // A link's dark wins over a light system.
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(link.replace('theme=light', 'theme=dark'));
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
  assert.equal(await theme(page), 'dark');
  assert.deepEqual(await chips(page), text);
  await page.close();
});

test('axe-core in both themes: no serious or critical violation over the lesson track\'s views, in presenter mode and at phone width', async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const scheme of ['dark', 'light']) {
    const page = await ready(`backend=cpu&theme=${scheme}`);
    await page.setViewportSize({ width: 1400, height: 1000 });
    assert.deepEqual(await axeTrack(page, scheme), {}, `${scheme}: the lesson track`);
    await page.screenshot({ path: path.join(SHOTS, `theme-${scheme}-track-1400.png`) });
    await page.getByTestId('presenter').click();
    await page.setViewportSize({ width: 1280, height: 720 });
    assert.deepEqual(await axeSerious(page), [], `${scheme}: presenter`);
    await page.screenshot({ path: path.join(SHOTS, `theme-${scheme}-presenter-1280.png`) });
    await page.getByTestId('presenter').click();
    await page.setViewportSize({ width: 390, height: 844 });
    assert.deepEqual(await axeSerious(page), [], `${scheme}: phone`);
    await page.screenshot({ path: path.join(SHOTS, `theme-${scheme}-phone.png`) });
    await page.close();
  }
  // Every panel open, dark (the panels the track does not open together).
  const all = await ready('backend=cpu&theme=dark&steps=8&panels=chain,beam,kv,toy,quant,spec,batch,compare,taxonomy,inside&prompt=The+dog&cmp=strategy%3Dgreedy%3Btop_p%3D0.9&cmp_steps=5&spec=quant%3Aq8%2C3%2Crejection%2C2');
  await all.getByTestId('cmp-view').waitFor({ timeout: 60_000 });
  await all.getByTestId('quant-row').waitFor({ timeout: 60_000 });
  await all.setViewportSize({ width: 1400, height: 1000 });
  assert.deepEqual(await axeSerious(all), [], 'dark, every panel open');
  await all.screenshot({ path: path.join(SHOTS, 'theme-dark-all-1400.png'), fullPage: true });
  await all.close();
});

test('the interface translated: the browser\'s language chosen, the menu and the link change it, numbers as Intl.NumberFormat writes them, the seeded text unchanged', async () => {
  const zhBrowser = await launch({ locale: 'zh-CN' });
  try {
    const { page } = await open(zhBrowser.context, `${env.server.url}?backend=cpu&steps=8`);
    await page.getByTestId('dist-row').first().waitFor({ timeout: 60_000 });
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN');
    assert.equal(await page.getByTestId('lesson-open').innerText(), '课程导览');
    assert.equal(await page.getByTestId('lang-select').inputValue(), 'zh-CN');
    const summary = () => page.getByTestId('model-summary').innerText();
    const intl = (lang, n) => page.evaluate(([l, v]) => new Intl.NumberFormat(l).format(v), [lang, n]);
    assert.ok((await summary()).includes(`${await intl('zh-CN', 260032)} 个参数`), await summary());
    const zhText = await chips(page);
    assert.doesNotMatch(await pageUrl(page), /lang=/, 'the browser\'s language writes nothing in the link');
    // The menu: Spanish, kept in the link; its numbers are CLDR's Spanish ones.
    await page.getByTestId('lang-select').selectOption('es');
    await page.waitForFunction(() => document.documentElement.lang === 'es');
    // The page is drawn again in Spanish, the focus back on the menu.
    await page.waitForFunction(() => document.activeElement?.dataset.testid === 'lang-select');
    assert.equal(await page.getByTestId('lesson-open').innerText(), 'Recorrido de la lección');
    assert.ok((await summary()).includes(`${await intl('es', 260032)} parámetros`), await summary());
    assert.equal(await intl('es', 260032), '260.032');
    assert.match(await pageUrl(page), /lang=es/);
    assert.deepEqual(await chips(page), zhText);
    await page.close();
  } finally {
    await zhBrowser.close();
  }
  // A link's language in an English browser; the lesson track's chrome in it.
  const page = await ready('backend=cpu&steps=8&lang=zh-CN');
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN');
  await page.getByTestId('lesson-open').click();
  await page.getByTestId('lesson-track').waitFor();
  assert.match(await page.locator('#lesson-h').innerText(), /^第 10 课，§1 —— 生成循环/);
  assert.equal(await page.getByTestId('lesson-position').innerText(), '第 1 步，共 15 步');
  await page.close();
  const en = await ready('backend=cpu&steps=8');
  assert.deepEqual(await chips(en), await (async () => {
    const zh = await ready('backend=cpu&steps=8&lang=zh-CN');
    const t = await chips(zh);
    await zh.close();
    return t;
  })(), 'the seeded text is the same in every language');
  await en.close();
});

test('axe-core in Chinese, in both themes, over the lesson track\'s views: no serious or critical violation, every caption and panel in Chinese', async () => {
  assert.ok(ENGLISH.length > 300, `${ENGLISH.length} English sentences read`);
  for (const scheme of ['dark', 'light']) {
    const page = await ready(`backend=cpu&theme=${scheme}&lang=zh-CN`);
    await page.setViewportSize({ width: 1400, height: 1000 });
    const english = {};
    const captions = {};
    const eachStep = async (step) => {
      const left = await englishLeft(page);
      if (left.length) english[step] = left;
      const caption = await page.getByTestId('lesson-caption').innerText();
      if (!/[\u4e00-\u9fff]/.test(caption)) captions[step] = caption;
    };
    assert.deepEqual(await axeTrack(page, scheme, eachStep), {}, `zh-CN ${scheme}: the lesson track`);
    assert.deepEqual(english, {}, `zh-CN ${scheme}: English left on the lesson track's views`);
    assert.deepEqual(captions, {}, `zh-CN ${scheme}: captions not in Chinese`);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN');
    await page.screenshot({ path: path.join(SHOTS, `lang-zh-CN-${scheme}-track-1400.png`) });
    await page.close();
  }
});

test('every panel open in Spanish and in Chinese: no sentence of the interface left in English, numbers in the language\'s separators', async () => {
  const query = 'backend=cpu&steps=8&panels=chain,beam,kv,toy,quant,spec,batch,compare,taxonomy,inside&prompt=The+dog&cmp=strategy%3Dgreedy%3Btop_p%3D0.9&cmp_steps=5&spec=quant%3Aq8%2C3%2Crejection%2C2';
  // The check sees English where there is English: the same view in English shows many.
  const en = await ready(query);
  await en.getByTestId('cmp-view').waitFor({ timeout: 60_000 });
  const shown = (await englishLeft(en)).length;
  assert.ok(shown > 40, `${shown} of the interface's English sentences on the English page`);
  await en.close();
  for (const lang of ['es', 'zh-CN']) {
    const page = await ready(`${query}&lang=${lang}`);
    await page.getByTestId('cmp-view').waitFor({ timeout: 60_000 });
    await page.getByTestId('quant-row').waitFor({ timeout: 60_000 });
    await page.setViewportSize({ width: 1400, height: 1000 });
    assert.deepEqual(await englishLeft(page), [], `${lang}: every panel open`);
    await page.keyboard.press('?');
    await page.getByTestId('help').waitFor();
    assert.deepEqual(await englishLeft(page), [], `${lang}: the keyboard shortcuts`);
    await page.keyboard.press('Escape');
    if (lang === 'es') {
      // The distribution's probabilities with a decimal comma (es: 0,969).
      assert.match(await page.getByTestId('dist-row').first().innerText(), /0,\d{3}/);
    }
    await page.screenshot({ path: path.join(SHOTS, `lang-${lang}-all-1400.png`), fullPage: true });
    await page.close();
  }
});
