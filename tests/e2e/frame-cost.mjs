// Frame cost of the editor with and without detail textures, in a real
// Chromium with software rendering (SwiftShader, what a user without a
// usable GPU gets): `node frame-cost.mjs ISOTERRA_BIN WORLD [rounds] [query]`
// (query: more page options, e.g. `cull=0`).
// Waits until every chunk the view wants has arrived, then prints the wall
// time of full-resolution frames (redraw() to the frame drawn and read
// back) at 1280x800, detail off and on in turns, culled and with every held
// mesh drawn, and the draw calls and triangles of each.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [bin, world, roundsArg, query] = process.argv.slice(2);
if (!bin || !world) {
  console.error('usage: node frame-cost.mjs ISOTERRA_BIN WORLD [rounds] [query]');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3);
const server = spawn(bin, ['edit', world, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) =>
  server.stdout.on('data', (d) => {
    const m = /http:\/\/\S+/.exec(String(d));
    if (m) resolve(m[0]);
  }),
);
const ctx = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'isoterra-cost-')), {
  executablePath: process.env.ISOTERRA_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  deviceScaleFactor: 1,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
try {
  const page = await ctx.newPage();
  await page.goto(`${url}?adaptive=0${query ? `&${query}` : ''}`);
  await page.waitForFunction(() => window.isoterra && window.isoterra.ready, null, { timeout: 60000 });
  await page.evaluate(() => window.isoterra.settle(800, 120000));
  // every chunk the server means to send for this view has arrived
  const t0 = Date.now();
  await page
    .waitForFunction(
      () => {
        const st = window.isoterra.status;
        return st && (st.wanted === null || st.wanted === undefined || st.chunks >= st.wanted);
      },
      null,
      { timeout: 600000, polling: 1000 },
    )
    .catch(() => console.log('(not every wanted chunk arrived)'));
  console.log(`streamed in ${((Date.now() - t0) / 1000).toFixed(0)} s more`);
  await page.evaluate(() => window.isoterra.settle(800, 120000));
  await page.mouse.move(1275, 795);
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const fmt = (a) => a.map((v) => v.toFixed(0)).join(' ');
  const held = await page.evaluate(() => ({ meshes: window.isoterra.meshes, status: window.isoterra.statusText() }));
  console.log(`held: ${held.meshes} meshes (${held.status})`);
  // Culled (what the editor does) and every held mesh drawn, each with the
  // detail textures off and on, in turns.
  for (const cull of [true, false]) {
    await page.evaluate((c) => window.isoterra.setCull(c), cull);
    const times = { off: [], on: [] };
    for (let r = 0; r < rounds; r++) {
      for (const on of [false, true]) {
        await page.evaluate((o) => window.isoterra.setDetail(o), on);
        await page.evaluate(() => window.isoterra.frameCost());
        times[on ? 'on' : 'off'].push(await page.evaluate(() => window.isoterra.frameCost()));
      }
    }
    const drawn = await page.evaluate(() => window.isoterra.drawn);
    console.log(`${cull ? 'culled' : 'all drawn'}: ${drawn.calls} draw calls, ${Math.round(drawn.tris)} triangles`);
    console.log(`  detail off: ${fmt(times.off)} ms (median ${median(times.off).toFixed(0)})`);
    console.log(`  detail on:  ${fmt(times.on)} ms (median ${median(times.on).toFixed(0)})`);
  }
} finally {
  await ctx.close();
  server.kill('SIGINT');
}
