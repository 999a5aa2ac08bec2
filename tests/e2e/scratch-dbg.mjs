import { serve, launch, open } from './harness.mjs';
const server = await serve();
const { context, close } = await launch();
const { page, problems } = await open(context, `${server.url}?backend=cpu&lesson=8&panels=kv`);
page.on('crash', () => console.log('CRASH'));
page.on('close', () => console.log('CLOSED'));
await page.waitForTimeout(3000);
console.log(problems, await page.locator('[data-testid=cmp-stats-1]').getAttribute('data-steps').catch(e => 'none'), await page.locator('[data-testid=error]').innerText().catch(() => 'no error'));
for (let i = 8; i < 15; i++) {
  await page.waitForTimeout(i == 7 || i == 12 ? 5000 : 2500);
  const cap = await page.locator('[data-testid=lesson-caption]').innerText().catch(() => '');
  console.log(i, page.url().split('?')[1], '\n   ', cap.slice(0, 200), await page.locator('[data-testid=error]').innerText().catch(() => ''));
  await page.keyboard.press('PageDown');
}
console.log(problems);
 await server.close();
