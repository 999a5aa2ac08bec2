import { serve, launch, open } from './harness.mjs';
const server = await serve();
const { context, close } = await launch();
const shots = [
  ['default', 'backend=cpu', 1280],
  ['compare', 'backend=cpu&panels=compare&cmp=strategy%3Dgreedy%3Btemperature%3D1.5%26top_p%3D0.98&cmp_steps=20', 1280],
  ['lesson6', 'backend=cpu&lesson=6&panels=compare&cmp=top_k%3D40%3Btop_p%3D0.9&cmp_steps=30', 1280],
  ['lesson10', 'backend=cpu&lesson=10&panels=spec&spec=quant%3Aq8%2C4%2Crejection%2C8', 1280],
  ['taxonomy-phone', 'backend=cpu&panels=taxonomy&lesson=15', 390],
];
for (const [name, q, w] of shots) {
  const { page, problems } = await open(context, `${server.url}?${q}`);
  await page.setViewportSize({ width: w, height: 900 });
  await page.waitForSelector('[data-testid=model-summary]');
  await page.waitForTimeout(2500);
  await page.screenshot({ path: `/tmp/x/${name}.png`, fullPage: name !== 'default' });
  const cap = await page.locator('[data-testid=lesson-caption]').innerText().catch(() => '');
  console.log(name, problems, cap);
  await page.close();
}
await close(); await server.close();
