import { serve, launch, open } from './harness.mjs';
const server = await serve();
const browser = await launch();
const shoot = async (query, width, name, presenter = false) => {
  const { page } = await open(browser.context, server.url + '?' + query);
  await page.setViewportSize({ width, height: 900 });
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60000 });
  if (presenter) await page.getByText('Presenter mode').click();
  await page.getByTestId('toggle-inside').click();
  for (let i = 0; i < 12; i++) { await page.getByTestId('step').click(); await page.waitForTimeout(150); }
  await page.waitForFunction(() => document.querySelector('[data-testid=att-grid]')?.getAttribute('data-positions') === '17', null, { timeout: 60000 });
  await page.getByTestId('att-grid').focus();
  await page.keyboard.press('ArrowUp');
  const abs = (id) => page.getByTestId(id).evaluate((e) => { const r = e.getBoundingClientRect(); return { y: r.top + window.scrollY, height: r.height }; });
  const box = await abs('inside-cost');
  const end = await abs('lens-last');
  await page.screenshot({ path: `/tmp/${name}.png`, fullPage: true, clip: { x: 0, y: box.y - 60, width, height: end.y + end.height - box.y + 80 } });
  await page.close();
};
await shoot('backend=cpu&temperature=0', 1280, 'inside-desktop');
await shoot('backend=cpu&temperature=0', 390, 'inside-phone');
await shoot('backend=cpu&temperature=0', 1280, 'inside-presenter', true);
await browser.close(); await server.close();
