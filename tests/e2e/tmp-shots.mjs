import { serve, launch, open } from './harness.mjs';
const server = await serve();
const { context, close } = await launch();
const shots = async (q, name, steps, sizes, el) => {
  const { page, problems } = await open(context, server.url + '?' + q);
  await page.getByTestId('dist-row').first().waitFor({ timeout: 60000 });
  for (let i = 0; i < steps; i++) { await page.getByTestId('step').click(); await page.waitForTimeout(150); }
  await page.waitForTimeout(800);
  for (const [w, h] of sizes) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(300);
    await page.screenshot({ path: `/tmp/shots/${name}-${w}.png`, fullPage: false });
  }
  if (el) {
    const e = page.getByTestId(el);
    if (await e.count()) { await e.scrollIntoViewIfNeeded(); await e.screenshot({ path: `/tmp/shots/${name}-el.png` }); }
    else console.log('no element', el);
  }
  console.log(name, 'problems:', problems);
  await page.close();
};
await shots('backend=cpu&panels=chain&profile=llama.cpp&mirostat=2&mirostat_tau=3', 'miro', 8, [[1400, 1000]], 'stage-states');
await shots('backend=cpu&panels=chain&profile=llama.cpp&dry_multiplier=0.8&xtc_probability=0.5&xtc_threshold=0.1', 'dry', 8, [[1400, 1000]], 'chain');
await shots('backend=cpu', 'default', 0, [[1280, 720], [1400, 1000], [390, 844]], null);
await close(); await server.close();
