// Browser tests of the isoterra web editor: the real `isoterra edit` server,
// driven through Debian's Chromium by playwright-core.
//
//   ISOTERRA_BIN=target/debug/isoterra node tests/e2e/editor.test.mjs
//
// Environment:
//   ISOTERRA_BIN               the isoterra binary (required)
//   CHROMIUM                   the browser (default /usr/bin/chromium)
//   ISOTERRA_SCREENSHOTS       where screenshots go (default target/e2e-screenshots)
//   ISOTERRA_DOC_SCREENSHOTS=1 also write docs/screenshots/<kind>.png
//   ISOTERRA_E2E_ONLY          comma-separated scenario names to run (map, map-stream, side2d,
//                              voxel, heightmap, recipe)
//
// Each scenario creates a world through the editor's New world dialog, paints
// strokes with the mouse, checks that the canvas changed where the strokes
// went and nowhere far away, undoes (Ctrl+Z) and checks the pixels come back,
// redoes (Ctrl+Shift+Z), restarts the server on the same file, reloads and
// checks the picture is the one from before the restart.

import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodePng, compareRegion, meanLuma, grain } from './png.mjs';
import { checkFrameParser } from './frames.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = process.env.ISOTERRA_BIN;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = path.resolve(ROOT, process.env.ISOTERRA_SCREENSHOTS || path.join('target', 'e2e-screenshots'));
const DOC_SHOTS = process.env.ISOTERRA_DOC_SCREENSHOTS === '1';
const ONLY = (process.env.ISOTERRA_E2E_ONLY || '').split(',').map((s) => s.trim()).filter(Boolean);
const VIEWPORT = { width: 1280, height: 800 };
const TOTAL_TIMEOUT_MS = 15 * 60 * 1000;

// Pixel thresholds. A pixel "changed" when a channel moved by more than 24/255.
const STROKE_MIN_CHANGED = 0.03; // at least 3% of the stroke's box must change
const FAR_MAX_CHANGED = 0.002; // at most 0.2% of a far box may change
const SAME_MAX_CHANGED = 0.004; // "the same picture": at most 0.4% of the canvas differs

const START = Date.now();

function log(...args) {
  console.log(`[e2e ${((Date.now() - START) / 1000).toFixed(1).padStart(6)}s]`, ...args);
}

class TestFailure extends Error {}

function check(cond, message) {
  if (!cond) throw new TestFailure(message);
}

// ------------------------------------------------------------------ server

// Every server still running, killed if this script ends early.
const LIVE = new Set();
process.on('exit', () => {
  for (const c of LIVE) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGPIPE']) {
  process.on(sig, () => {
    for (const c of LIVE) c.kill('SIGKILL');
    process.exit(1);
  });
}

class Server {
  constructor(child, url, lines) {
    this.child = child;
    this.url = url;
    this.lines = lines;
  }

  /** Starts `isoterra edit FILE --port 0` and waits for the address it prints. */
  static start(file, cwd, label) {
    return new Promise((resolve, reject) => {
      const child = spawn(BIN, ['edit', file, '--port', '0'], {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, RUST_BACKTRACE: '1' },
      });
      LIVE.add(child);
      child.on('exit', () => LIVE.delete(child));
      const lines = [];
      let done = false;
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        child.kill('SIGKILL');
        reject(new Error(`server did not print its address within 120 s; output:\n${lines.join('\n')}`));
      }, 120000);
      let buf = '';
      child.stdout.on('data', (d) => {
        buf += d.toString();
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          lines.push(`[${label} stdout] ${line}`);
          const m = /isoterra editor on (http:\/\/[^\s/]+\/)/.exec(line);
          if (m && !done) {
            done = true;
            clearTimeout(timer);
            resolve(new Server(child, m[1], lines));
          }
        }
      });
      child.stderr.on('data', (d) => {
        for (const line of d.toString().split('\n')) if (line.trim()) lines.push(`[${label} stderr] ${line}`);
      });
      child.on('error', (e) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        reject(new Error(`cannot start ${BIN}: ${e.message}`));
      });
      child.on('exit', (code, sig) => {
        lines.push(`[${label}] exited with ${code ?? sig}`);
        if (done) return;
        done = true;
        clearTimeout(timer);
        reject(new Error(`server exited (${code ?? sig}) before printing its address; output:\n${lines.join('\n')}`));
      });
    });
  }

  /** Stops the server the way a user does (Ctrl+C), SIGKILL after 15 s. */
  stop() {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        resolve();
        return;
      }
      const t = setTimeout(() => this.child.kill('SIGKILL'), 15000);
      this.child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      this.child.kill('SIGINT');
    });
  }
}

// ------------------------------------------------------------------ browser

async function launchBrowser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'isoterra-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: VIEWPORT,
    deviceScaleFactor: 1,
    acceptDownloads: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--use-gl=angle',
      '--use-angle=swiftshader',
      '--enable-unsafe-swiftshader',
    ],
  });
  return { ctx, profile };
}

function watchPage(page, problems) {
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
}

async function openEditor(page, url) {
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => window.isoterra && window.isoterra.ready, null, { timeout: 60000 });
  await settle(page);
}

async function settle(page, quietMs = 700) {
  const ok = await page.evaluate((q) => window.isoterra.settle(q, 120000), quietMs);
  check(ok, 'the editor did not settle (mesh frames kept coming or an ack never came)');
  await page.evaluate(() => window.isoterra.redraw());
}

/** Moves the mouse off the canvas (hides the brush ring) and redraws. */
async function hideCursor(page) {
  await page.mouse.move(VIEWPORT.width - 5, VIEWPORT.height - 5);
  await page.evaluate(() => window.isoterra.redraw());
}

async function canvasRect(page) {
  return page.evaluate(() => window.isoterra.canvasRect());
}

async function shot(page, name) {
  const r = await canvasRect(page);
  // A screenshot of a frame drawn at full resolution: when the editor drew
  // another frame meanwhile (a low-resolution one, while a software
  // renderer is slow), draw it sharp again and take the picture again.
  let buf = null;
  for (let attempt = 0; attempt < 10 && !buf; attempt++) {
    const before = await page.evaluate(() => (window.isoterra.lastRenderFull ? window.isoterra.renders : -1));
    if (before >= 0) {
      buf = await page.screenshot({
        clip: { x: Math.round(r.x), y: Math.round(r.y), width: Math.floor(r.width), height: Math.floor(r.height) },
        path: path.join(SHOTS, `${name}.png`),
      });
      if ((await page.evaluate(() => window.isoterra.renders)) !== before) buf = null;
    }
    if (!buf) {
      // frames still coming in (a stream after a reconnect): wait for quiet
      await page.evaluate(() => window.isoterra.settle(300, 60000));
      await page.evaluate(() => window.isoterra.redraw());
    }
  }
  check(buf, `${name}: no frame at full resolution to take a picture of`);
  return decodePng(buf);
}

async function newWorld(page, spec) {
  const w0 = await page.evaluate(() => window.isoterra.welcomes);
  await page.click('#new-world');
  await page.selectOption('#nw-kind', spec.kind);
  if (spec.preset) await page.selectOption('#nw-preset', spec.preset);
  await page.fill('#nw-seed', String(spec.seed ?? 1));
  if (spec.size) {
    await page.fill('#nw-w', String(spec.size[0]));
    await page.fill('#nw-h', String(spec.size[1]));
  }
  await page.click('#nw-create');
  // replacing the world asks first
  await page.waitForSelector('#confirm-dialog[open]', { timeout: 10000 });
  await page.click('#nw-confirm');
  await page.waitForFunction(
    ([w, k]) => window.isoterra.welcomes > w && window.isoterra.kind === k && window.isoterra.ready,
    [w0, spec.kind],
    { timeout: 60000 },
  );
  await settle(page);
  const chunks = await page.evaluate(() => window.isoterra.chunks);
  check(chunks > 0, `no chunk meshes arrived for the new ${spec.kind} world`);
}

async function selectTool(page, name) {
  const tool = await page.evaluate((n) => window.isoterra.toolInfo(n), name);
  check(tool, `the ${name} tool is not in the palette (tools: ${await page.evaluate(() => window.isoterra.tools.join(', '))})`);
  if (tool.key) await page.keyboard.press(tool.key);
  else await page.click(`.tool[data-tool="${name}"]`);
  const now = await page.evaluate(() => window.isoterra.tool);
  check(now === name, `pressing ${tool.key} selected ${now}, not ${name}`);
}

/**
 * Drags a stroke with the left button along `points` (page pixels) and waits
 * for its ack. Returns the ack.
 */
async function dragStroke(page, tool, points, { radius, strength }) {
  await selectTool(page, tool);
  await page.evaluate(([r, s]) => {
    window.isoterra.setRadius(r);
    window.isoterra.setStrength(s);
  }, [radius, strength]);
  const acks = await page.evaluate(() => window.isoterra.acks);
  await page.mouse.move(points[0][0], points[0][1]);
  await page.waitForTimeout(50);
  await page.mouse.down();
  for (const p of points.slice(1)) {
    await page.mouse.move(p[0], p[1], { steps: 3 });
  }
  await page.mouse.up();
  log(`  ${tool} stroke drawn (${await page.evaluate(() => window.isoterra.dabs)} dabs sent so far), waiting for its ack`);
  await page.waitForFunction((n) => window.isoterra.acks > n && window.isoterra.pending === 0, acks, { timeout: 60000 });
  const ack = await page.evaluate(() => window.isoterra.lastAck);
  check(ack && ack.id !== null && ack.id !== undefined, `the ${tool} stroke changed nothing (ack ${JSON.stringify(ack)})`);
  await settle(page);
  return ack;
}

async function pressHistory(page, keys, times) {
  for (let i = 0; i < times; i++) {
    const n = await page.evaluate(() => window.isoterra.historyEvents);
    await page.keyboard.press(keys);
    await page.waitForFunction((k) => window.isoterra.historyEvents > k, n, { timeout: 60000 });
  }
  await page.waitForTimeout(200);
  await settle(page);
}

/** A page-pixel box around a polyline, grown by `pad` pixels, relative to the canvas. */
function boxAround(points, pad, rect) {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return {
    x: Math.min(...xs) - pad - rect.x,
    y: Math.min(...ys) - pad - rect.y,
    width: Math.max(...xs) - Math.min(...xs) + 2 * pad,
    height: Math.max(...ys) - Math.min(...ys) + 2 * pad,
  };
}

/** Brush radius on screen, in pixels, at a page point (via the world point under it). */
async function radiusPx(page, point, radius) {
  return page.evaluate(
    ([p, r]) => {
      const w = window.isoterra.toWorld(p[0], p[1]);
      if (!w) return r;
      const a = window.isoterra.toScreen(w);
      const b = window.isoterra.toScreen([w[0] + r, w[1], w[2]]);
      const c = window.isoterra.toScreen([w[0], w[1], w[2] + r]);
      const d = window.isoterra.toScreen([w[0], w[1] + r, w[2]]);
      return Math.max(...[b, c, d].filter(Boolean).map((q) => Math.hypot(q[0] - a[0], q[1] - a[1])));
    },
    [point, radius],
  );
}

function describe(cmp) {
  return `${(cmp.fraction * 100).toFixed(2)}% of ${cmp.total} px changed, mean diff ${cmp.meanDiff.toFixed(2)}`;
}

function expectChanged(a, b, box, what) {
  const cmp = compareRegion(a, b, box);
  log(`  ${what}: ${describe(cmp)}`);
  check(cmp.total > 0, `${what}: the box is outside the canvas`);
  check(cmp.fraction >= STROKE_MIN_CHANGED, `${what}: expected the pixels to change (${describe(cmp)})`);
}

function expectUnchanged(a, b, box, what, max = FAR_MAX_CHANGED) {
  const cmp = compareRegion(a, b, box);
  log(`  ${what}: ${describe(cmp)}`);
  check(cmp.total > 0, `${what}: the box is outside the canvas`);
  check(cmp.fraction <= max, `${what}: expected no change (${describe(cmp)})`);
}

async function docShot(page, kind, hover, viewDistance, tool) {
  if (!DOC_SHOTS) return;
  if (tool) await selectTool(page, tool);
  const dir = path.join(ROOT, 'docs', 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  // the view distance the scenario runs with (its slider shows it)
  const before = viewDistance ? await page.evaluate(() => Number(document.getElementById('view-distance').value)) : null;
  if (viewDistance) {
    await page.evaluate((v) => window.isoterra.setCamera({ viewDistance: v }), viewDistance);
    await page.waitForTimeout(300);
    await settle(page);
  }
  // every chunk the server means to send for this view has arrived (a slow
  // build can pause the stream for longer than settle's quiet time)
  const streamed = await page
    .waitForFunction(
      () => {
        const st = window.isoterra.status;
        return st && (st.wanted === null || st.wanted === undefined || st.chunks >= st.wanted);
      },
      null,
      { timeout: 180000 },
    )
    .then(() => true, () => false);
  if (!streamed) log(`  ${kind}: not every wanted chunk arrived before the screenshot: ${await page.evaluate(() => window.isoterra.statusText())}`);
  await settle(page);
  await page.evaluate(() => document.querySelectorAll('.toast').forEach((t) => t.remove()));
  if (hover) {
    await page.mouse.move(hover[0], hover[1]);
    await page.evaluate(() => window.isoterra.redraw());
    await page.waitForTimeout(300);
  }
  // the picture at full resolution (the view drops it while things change)
  await page.waitForFunction(() => window.isoterra.lastRenderFull, null, { timeout: 30000 });
  await page.screenshot({ path: path.join(dir, `${kind}.png`) });
  log(`  wrote docs/screenshots/${kind}.png`);
  // The scenario goes on with its own view: a software renderer takes
  // seconds a frame on the far one, and strokes would wait on it.
  if (before) {
    await page.evaluate((v) => window.isoterra.setCamera({ viewDistance: v }), before);
    await page.waitForTimeout(300);
    await settle(page);
  }
}

async function checkNoErrors(page, problems, what) {
  const errors = await page.evaluate(() => window.isoterra.errors);
  const frameErrors = await page.evaluate(() => window.isoterra.frameErrors);
  check(errors.length === 0, `${what}: the server reported errors: ${JSON.stringify(errors)}`);
  check(frameErrors === 0, `${what}: ${frameErrors} mesh frames did not parse`);
  check(problems.length === 0, `${what}: ${problems.join('; ')}`);
}

// ------------------------------------------------------------------ scenarios

/**
 * The shared flow: create the world through the dialog, paint the strokes
 * `makeStrokes` returns ({tool, points, radius, strength, extraPad}), check
 * the pixels in each stroke's box and in the `farBoxFn` box, undo, redo,
 * restart the server, reload, check the picture, undo again (the history
 * survives the restart) and redo. `extra` runs last, with the page, the
 * canvas rectangle and the editor's address.
 */
async function scenario(ctx, name, spec, makeStrokes, farBoxFn, extra) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `isoterra-e2e-${name}-`));
  const file = path.join(dir, 'world.isoterra');
  const problems = [];
  let server = await Server.start(file, dir, `${name} server`);
  const page = await ctx.newPage();
  watchPage(page, problems);
  try {
    log(`${name}: editor at ${server.url}`);
    await openEditor(page, editorUrl(server.url, spec));
    await newWorld(page, spec);
    log(`  new ${spec.kind} world ready: ${await page.evaluate(() => window.isoterra.chunks)} chunks`);
    await hideCursor(page);
    const rect = await canvasRect(page);
    const before = await shot(page, `${name}-0-before`);

    const strokes = await makeStrokes(page, rect);
    const images = [before];
    const boxes = [];
    for (let i = 0; i < strokes.length; i++) {
      const s = strokes[i];
      const pad = (await radiusPx(page, s.points[Math.floor(s.points.length / 2)], s.radius)) * 1.3 + 6;
      const ack = await dragStroke(page, s.tool, s.points, s);
      log(`  ${s.tool} stroke acked: id ${ack.id}, ${ack.changed_nodes ?? '?'} nodes`);
      await hideCursor(page);
      const img = await shot(page, `${name}-${i + 1}-after-${s.tool}`);
      const box = boxAround(s.points, pad + (s.extraPad ?? 0), rect);
      boxes.push(box);
      expectChanged(images[images.length - 1], img, box, `${s.tool} stroke region`);
      images.push(img);
    }
    const after = images[images.length - 1];
    const far = farBoxFn(rect, boxes);
    expectUnchanged(before, after, far, 'far region');

    // Ctrl+Z for each stroke: back to the first picture
    await pressHistory(page, 'Control+z', strokes.length);
    const undone = await shot(page, `${name}-${strokes.length + 1}-undone`);
    expectUnchanged(before, undone, null, 'after undo vs before', SAME_MAX_CHANGED);
    const h = await page.evaluate(() => window.isoterra.history);
    check(h.can_redo, `after undo the history says nothing can be redone: ${JSON.stringify(h)}`);

    // Ctrl+Shift+Z: the strokes come back
    await pressHistory(page, 'Control+Shift+z', strokes.length);
    const redone = await shot(page, `${name}-${strokes.length + 2}-redone`);
    expectUnchanged(after, redone, null, 'after redo vs after strokes', SAME_MAX_CHANGED);
    await checkNoErrors(page, problems, name);

    // restart the server on the same file and reload: the state is still there
    await server.stop();
    server = await Server.start(file, dir, `${name} server (restarted)`);
    log(`  restarted at ${server.url}`);
    await openEditor(page, editorUrl(server.url, spec));
    check((await page.evaluate(() => window.isoterra.kind)) === spec.kind, 'the restarted server opened another kind of world');
    await hideCursor(page);
    const reloaded = await shot(page, `${name}-${strokes.length + 3}-restarted`);
    expectUnchanged(after, reloaded, null, 'after restart vs before restart', SAME_MAX_CHANGED);
    const h2 = await page.evaluate(() => window.isoterra.history);
    check(h2.can_undo, `after the restart there is nothing to undo: ${JSON.stringify(h2)}`);
    // the undo history survived the restart too
    await pressHistory(page, 'Control+z', strokes.length);
    const undoneAgain = await shot(page, `${name}-${strokes.length + 4}-restarted-undone`);
    expectUnchanged(before, undoneAgain, null, 'undo after restart vs before', SAME_MAX_CHANGED);
    await pressHistory(page, 'Control+Shift+z', strokes.length);

    await checkNoErrors(page, problems, name);
    const lastStroke = strokes[strokes.length - 1];
    const last = lastStroke.points;
    await docShot(page, spec.kind, last[Math.floor(last.length / 2)], spec.docViewDistance, lastStroke.tool);
    if (extra) await extra(page, rect, editorUrl(server.url, spec));
    check(problems.length === 0, `${name}: ${problems.join('; ')}`);
  } catch (e) {
    await page.screenshot({ path: path.join(SHOTS, `${name}-failure.png`) }).catch(() => {});
    e.serverOutput = server.lines.slice(-40).join('\n');
    throw e;
  } finally {
    await page.close().catch(() => {});
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The editor's address with the scenario's query. Multisampling is turned off
 * (`aa=0`) unless README screenshots are being made: software rendering in a
 * headless browser is slow, and the pixel checks do not need it.
 */
function editorUrl(base, spec) {
  const q = new URLSearchParams(spec.query ?? '');
  if (!DOC_SHOTS) q.set('aa', '0');
  const qs = q.toString();
  return qs ? `${base}?${qs}` : base;
}

/** Page points of world points (x/z on the map, y 0). */
async function screenPoints(page, worldPts) {
  const pts = await page.evaluate((w) => w.map((p) => window.isoterra.toScreen(p)), worldPts);
  check(pts.every(Boolean), `a stroke point is behind the camera: ${JSON.stringify(worldPts)}`);
  return pts;
}

/** Snaps page points onto terrain: the world point under each must exist. */
async function requireHits(page, pts, what) {
  const hits = await page.evaluate((p) => p.map((q) => window.isoterra.toWorld(q[0], q[1])), pts);
  check(hits.every(Boolean), `${what}: the stroke path is not over terrain: ${JSON.stringify(pts)}`);
  return hits;
}

function farCorner(rect, boxes, frac = 0.14) {
  // the canvas corner farthest from every stroke box
  const corners = [
    { x: 4, y: 4 },
    { x: rect.width * (1 - frac) - 4, y: 4 },
    { x: 4, y: rect.height * (1 - frac) - 4 },
    { x: rect.width * (1 - frac) - 4, y: rect.height * (1 - frac) - 4 },
  ];
  let best = corners[0];
  let bestD = -1;
  for (const c of corners) {
    const cx = c.x + (rect.width * frac) / 2;
    const cy = c.y + (rect.height * frac) / 2;
    const d = Math.min(...boxes.map((b) => Math.hypot(cx - (b.x + b.width / 2), cy - (b.y + b.height / 2))));
    if (d > bestD) {
      bestD = d;
      best = c;
    }
  }
  return { x: best.x, y: best.y, width: rect.width * frac, height: rect.height * frac };
}

async function mapScenario(ctx) {
  const size = [128, 128];
  await scenario(
    ctx,
    'map',
    { kind: 'map', seed: 7, preset: 'island', size },
    async (page) => {
      const [w, d] = size;
      // back and forth, so the ground rises well above its neighbours
      const raise = await screenPoints(page, [0.36, 0.44, 0.52, 0.6, 0.52, 0.44, 0.36, 0.44, 0.52, 0.6].map((t) => [w * t, 0, d * 0.45]));
      const cliff = await screenPoints(page, [0.38, 0.46, 0.54, 0.62].map((t) => [w * t, 0, d * 0.62]));
      await requireHits(page, raise, 'raise');
      await requireHits(page, cliff, 'cliff-up');
      return [
        { tool: 'raise', points: raise, radius: 7, strength: 1, extraPad: 16 },
        { tool: 'cliff-up', points: cliff, radius: 6, strength: 1, extraPad: 16 },
      ];
    },
    farCorner,
    async (page, rect) => {
      // the strategy camera: right drag pans, the wheel zooms, Q turns
      const c0 = await page.evaluate(() => window.isoterra.camera());
      const cx = rect.x + rect.width / 2;
      const cy = rect.y + rect.height / 2;
      await page.mouse.move(cx, cy);
      await page.mouse.down({ button: 'right' });
      await page.mouse.move(cx + 120, cy + 60, { steps: 5 });
      await page.mouse.up({ button: 'right' });
      const c1 = await page.evaluate(() => window.isoterra.camera());
      check(c1.target[0] !== c0.target[0] || c1.target[2] !== c0.target[2], 'a right drag did not pan the map view');
      await page.mouse.wheel(0, -300);
      await page.waitForTimeout(100);
      const c2 = await page.evaluate(() => window.isoterra.camera());
      check(c2.dist < c1.dist, `the wheel did not zoom in (${c1.dist} -> ${c2.dist})`);
      await page.keyboard.down('q');
      await page.waitForTimeout(300);
      await page.keyboard.up('q');
      const c3 = await page.evaluate(() => window.isoterra.camera());
      check(c3.yaw !== c2.yaw, 'Q did not turn the map view');
      const acks = await page.evaluate(() => window.isoterra.acks);
      check(acks === 0, 'camera moves made strokes');
      log('  map camera: right-drag pan, wheel zoom and Q turn work');
      await editorBasics(page, rect, size);
      await pathingOverlay(page, rect, size);
      await swatchPaint(page, rect, size);
      await rampAcrossTheCliff(page, rect, size);
      await minimapChecks(page, size);
      await detailTextures(page, 'map');
      await newWorldCancel(page);
      await slowRendering(page, size);
    },
  );
}

/** Keyboard help, tooltips, Home and the status bar. */
async function editorBasics(page, rect, size) {
  await page.keyboard.press('?');
  await page.waitForSelector('#keys-dialog[open]', { timeout: 5000 });
  const keys = await page.locator('#keys-table').innerText();
  for (const want of ['Ctrl+Z', 'Home', 'raise', 'pathing overlay', '[']) {
    check(keys.includes(want), `the keyboard help does not mention ${want}: ${keys}`);
  }
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.getElementById('keys-dialog').open, null, { timeout: 5000 });
  log('  ? shows the keyboard help, Esc closes it');

  const title = await page.getAttribute('.tool[data-tool="cliff-up"]', 'title');
  check(title && title.length > 15 && !title.startsWith('cliff-up'), `the cliff-up tooltip says only ${JSON.stringify(title)}`);
  const help = await page.locator('#tool-help').innerText();
  check(help.length > 10, 'the picked tool has no description under the palette');
  await selectTool(page, 'pathing');
  const paramTitle = await page.locator('#params > *').first().getAttribute('title');
  check(paramTitle && paramTitle.length > 5, 'the pathing tool options have no tooltip');
  log(`  tooltips: "${title}"; options: "${paramTitle}"`);
  await selectTool(page, 'raise');

  // the camera was moved above: Home brings the first view back
  await page.evaluate(() => window.isoterra.setCamera({ yaw: 0.7, dist: 60, target: [10, 0, 10] }));
  await page.mouse.move(rect.x + rect.width / 2, rect.y + rect.height / 2);
  await page.keyboard.press('Home');
  const home = await page.evaluate(() => window.isoterra.camera());
  const b = await page.evaluate(() => window.isoterra.world.bounds);
  const mid = [(b.min[0] + b.max[0]) / 2, (b.min[2] + b.max[2]) / 2];
  check(home.yaw === 0 && Math.abs(home.target[0] - mid[0]) < 1 && Math.abs(home.target[2] - mid[1]) < 1, `Home did not reset the view: ${JSON.stringify(home)}`);
  await settle(page);
  const status = await page.evaluate(() => window.isoterra.statusText());
  const m = /chunks (\d+)(?: \/ (\d+))?/.exec(status);
  check(m && m[2] !== undefined, `the status bar does not say chunks shown / wanted: ${status}`);
  check(+m[2] > 0 && +m[1] === +m[2], `the status bar's chunk count is off once settled: ${status}`);
  log(`  Home resets the view; status bar: ${status}`);
}

/** Picking the pathing tool shows the overlay; a pathing stroke changes it; P hides it. */
async function pathingOverlay(page, rect, size) {
  await selectTool(page, 'pathing');
  await page.waitForFunction(() => {
    const p = window.isoterra.pathingOverlay();
    return p.on && p.version > 0 && !p.busy;
  }, null, { timeout: 30000 });
  check(await page.isVisible('#pathing-legend'), 'the pathing legend is not shown with the overlay');
  await page.evaluate(() => window.isoterra.setParam('pathing', ['walk', 'build']));
  await settle(page);
  await hideCursor(page);
  const before = await shot(page, 'map-pathing-0-overlay');
  const [w, d] = size;
  const pts = await screenPoints(page, [0.42, 0.5, 0.58].map((t) => [w * t, 0, d * 0.53]));
  await requireHits(page, pts, 'pathing');
  const v0 = await page.evaluate(() => window.isoterra.pathingOverlay().version);
  const pad = (await radiusPx(page, pts[1], 4)) * 1.3 + 6;
  const ack = await dragStroke(page, 'pathing', pts, { radius: 4, strength: 1 });
  await page.waitForFunction((v) => window.isoterra.pathingOverlay().version > v, v0, { timeout: 30000 });
  await settle(page);
  await hideCursor(page);
  const after = await shot(page, 'map-pathing-1-stroke');
  const box = boxAround(pts, pad, rect);
  log(`  pathing stroke acked (${ack.changed_nodes ?? '?'} nodes)`);
  expectChanged(before, after, box, 'pathing stroke on the overlay');
  await page.keyboard.press('p');
  await page.waitForFunction(() => !window.isoterra.pathingOverlay().on, null, { timeout: 5000 });
  await settle(page);
  await hideCursor(page);
  const off = await shot(page, 'map-pathing-2-off');
  expectChanged(after, off, box, 'P hides the pathing overlay');
  // the pathing stroke is undone so later pictures compare with the map alone
  await pressHistory(page, 'Control+z', 1);
}

/** A texture picked from the swatches is the colour that gets painted. */
async function swatchPaint(page, rect, size) {
  await selectTool(page, 'paint');
  const names = await page.evaluate(() => [...document.querySelectorAll('#params .swatches button')].map((b) => b.title));
  check(names.length === 16 && names[8].includes('snow'), `the texture swatches are not the world's 16 named textures: ${JSON.stringify(names)}`);
  await page.click('#params .swatches button[data-swatch="8"]');
  const label = await page.locator('#params .swatch-name').innerText();
  check(label.includes('snow'), `picking the snow swatch shows ${label}`);
  await hideCursor(page);
  const before = await shot(page, 'map-paint-0');
  const [w, d] = size;
  const pts = await screenPoints(page, [0.4, 0.48, 0.56].map((t) => [w * t, 0, d * 0.38]));
  await requireHits(page, pts, 'paint');
  const pad = (await radiusPx(page, pts[1], 5)) * 0.5;
  await dragStroke(page, 'paint', pts, { radius: 5, strength: 1 });
  await hideCursor(page);
  const after = await shot(page, 'map-paint-1-snow');
  const box = boxAround(pts, pad, rect);
  expectChanged(before, after, box, 'snow painted from the swatch');
  const l0 = meanLuma(before, box);
  const l1 = meanLuma(after, box);
  log(`  snow swatch: mean brightness ${l0.toFixed(1)} -> ${l1.toFixed(1)}`);
  check(l1 > l0 + 25, `painting with the snow swatch did not lighten the ground (${l0.toFixed(1)} -> ${l1.toFixed(1)})`);
  await pressHistory(page, 'Control+z', 1);
}

/**
 * The ramp tool offers its `length` (2..64, default 4); a ramp drawn with
 * length 6 across the rim of the scenario's cliff changes the picture there,
 * and is undone.
 */
async function rampAcrossTheCliff(page, rect, size) {
  const info = await page.evaluate(() => window.isoterra.toolInfo('ramp'));
  const length = (info?.params ?? []).find((p) => p.name === 'length');
  check(
    length && length.min === 2 && length.max === 64 && length.default === 4,
    `the ramp tool has no length parameter 2..64 with default 4: ${JSON.stringify(info?.params)}`,
  );
  await selectTool(page, 'ramp');
  await page.evaluate(() => window.isoterra.setParam('length', 6));
  const [w, d] = size;
  // close to that cliff: one level is one world unit high
  await page.evaluate((t) => window.isoterra.setCamera({ target: t, dist: 45 }), [w * 0.5, 0, d * 0.62 + 6]);
  await settle(page);
  await hideCursor(page);
  const before = await shot(page, 'map-ramp-0');
  // across the rim of the cliff-up stroke (radius 6 about the line z = 0.62 d)
  const pts = await screenPoints(page, [2, 5, 8, 11].map((dz) => [w * 0.5, 0, d * 0.62 + dz]));
  await requireHits(page, pts, 'ramp');
  const pad = (await radiusPx(page, pts[1], 4)) * 0.8;
  const ack = await dragStroke(page, 'ramp', pts, { radius: 4, strength: 1 });
  check(ack.changed_nodes > 0, `the ramp changed nothing: ${JSON.stringify(ack)}`);
  await hideCursor(page);
  const after = await shot(page, 'map-ramp-1');
  expectChanged(before, after, boxAround(pts, pad, rect), 'ramp across the cliff');
  await pressHistory(page, 'Control+z', 1);
  await page.keyboard.press('Home');
  await settle(page);
}

/**
 * The terrain is drawn with the detail textures: the same view untextured
 * (`setDetail(false)`) has the same colours on average but less grain.
 */
async function detailTextures(page, name) {
  const on = await page.evaluate(() => window.isoterra.detail);
  check(on, `${name}: the detail textures are not in use`);
  const textured = await shot(page, `${name}-detail-on`);
  await page.evaluate(() => window.isoterra.setDetail(false));
  await page.evaluate(() => window.isoterra.redraw());
  const plain = await shot(page, `${name}-detail-off`);
  await page.evaluate(() => window.isoterra.setDetail(true));
  await page.evaluate(() => window.isoterra.redraw());
  // the lower middle of the view, where the terrain is near
  const box = { x: textured.width * 0.25, y: textured.height * 0.6, width: textured.width * 0.5, height: textured.height * 0.35 };
  const g1 = grain(textured, box);
  const g0 = grain(plain, box);
  const l1 = meanLuma(textured, box);
  const l0 = meanLuma(plain, box);
  log(`  detail textures: grain ${g0.toFixed(2)} -> ${g1.toFixed(2)}, mean brightness ${l0.toFixed(1)} -> ${l1.toFixed(1)}`);
  check(g1 > g0 * 1.3 + 0.2, `${name}: the detail textures add no grain (${g0.toFixed(2)} -> ${g1.toFixed(2)})`);
  check(Math.abs(l1 - l0) < 20, `${name}: the detail textures change the brightness (${l0.toFixed(1)} -> ${l1.toFixed(1)})`);
}

/** The overview shows the world and the view; a click there moves the view. */
async function minimapChecks(page, size) {
  await page.evaluate(() => window.isoterra.refreshMinimap());
  const mm = await page.evaluate(() => window.isoterra.minimap());
  check(mm.renders > 0 && mm.rect && mm.footprint, `the overview was not drawn: ${JSON.stringify(mm)}`);
  const colours = await page.evaluate(() => {
    const c = document.getElementById('minimap');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const set = new Set();
    for (let i = 0; i < d.length; i += 4) set.add(((d[i] >> 3) << 10) | ((d[i + 1] >> 3) << 5) | (d[i + 2] >> 3));
    return set.size;
  });
  check(colours > 20, `the overview is nearly blank (${colours} colours)`);
  const to = [size[0] * 0.25, size[1] * 0.7];
  await page.locator('#minimap').scrollIntoViewIfNeeded();
  check(await page.isVisible('#minimap'), 'the overview is not visible');
  const p = await page.evaluate(([u, v]) => window.isoterra.minimapToPage(u, v), to);
  await page.mouse.click(p[0], p[1]);
  const cam = await page.evaluate(() => window.isoterra.camera());
  check(Math.abs(cam.target[0] - to[0]) < 2 && Math.abs(cam.target[2] - to[1]) < 2, `a click on the overview did not move the view there: ${JSON.stringify(cam.target)} vs ${to}`);
  const fp = await page.evaluate(() => window.isoterra.minimap().footprint);
  const cx = fp.slice(0, 4).reduce((a, q) => a + q[0], 0) / 4;
  check(Math.abs(cx - to[0]) < size[0] * 0.25, `the view outline did not follow the view: ${JSON.stringify(fp)}`);
  log(`  overview: ${colours} colours, a click moved the view to ${to.map((v) => v.toFixed(0))}`);
  await page.keyboard.press('Home');
  await settle(page);
}

/** "New world…" asks before it replaces the world; Cancel keeps it. */
async function newWorldCancel(page) {
  const w0 = await page.evaluate(() => window.isoterra.welcomes);
  await page.click('#new-world');
  await page.click('#nw-create');
  await page.waitForSelector('#confirm-dialog[open]', { timeout: 5000 });
  const text = await page.locator('#confirm-text').innerText();
  check(/backup/.test(text) && /replaces/.test(text), `the confirmation does not say what happens: ${text}`);
  await page.click('#nw-cancel');
  await page.waitForTimeout(1500);
  check((await page.evaluate(() => window.isoterra.welcomes)) === w0, 'Cancel still replaced the world');
  log(`  New world asks first ("${text.slice(0, 70)}…"); Cancel keeps the world`);
}

/**
 * With software rendering at 1600x900: Ctrl+Z pressed right after mouse-up
 * waits for the stroke's ack and then undoes that stroke.
 */
async function slowRendering(page, size) {
  await page.setViewportSize({ width: 1600, height: 900 });
  try {
    await settle(page);
    await hideCursor(page);
    const before = await shot(page, 'map-slow-0-before');
    const [w, d] = size;
    const pts = await screenPoints(page, [0.35, 0.45, 0.55, 0.65].map((t) => [w * t, 0, d * 0.5]));
    await requireHits(page, pts, 'slow raise');
    await selectTool(page, 'raise');
    await page.evaluate(() => {
      window.isoterra.setRadius(8);
      window.isoterra.setStrength(1);
    });
    const e0 = (await page.evaluate(() => window.isoterra.events)).length;
    await page.mouse.move(pts[0][0], pts[0][1]);
    await page.mouse.down();
    for (const q of pts.slice(1)) await page.mouse.move(q[0], q[1], { steps: 4 });
    await page.mouse.up();
    await page.keyboard.press('Control+z');
    const upAt = await page.evaluate(() => performance.now());
    const queued = await page.evaluate(() => window.isoterra.queuedHistory);
    await page.waitForFunction((n) => window.isoterra.events.slice(n).some((e) => e.type === 'history' && e.action === 'undo'), e0, { timeout: 60000 });
    const events = (await page.evaluate(() => window.isoterra.events)).slice(e0);
    const ack = events.findIndex((e) => e.type === 'ack');
    const undo = events.findIndex((e) => e.type === 'history' && e.action === 'undo');
    check(ack >= 0 && ack < undo, `the undo did not wait for the stroke's ack: ${JSON.stringify(events)}`);
    check(events[ack].id !== null, `the stroke changed nothing: ${JSON.stringify(events[ack])}`);
    await settle(page);
    await hideCursor(page);
    const undone = await shot(page, 'map-slow-1-undone');
    expectUnchanged(before, undone, null, 'Ctrl+Z right after mouse-up undid that stroke', SAME_MAX_CHANGED);
    const ackDelay = events[ack].at - upAt;
    log(`  1600x900: Ctrl+Z pressed ${queued ? 'before' : 'after'} the ack (${queued} queued); ack ${ackDelay.toFixed(0)} ms after mouse-up, then the undo`);
  } finally {
    await page.setViewportSize(VIEWPORT);
  }
}

async function side2dScenario(ctx) {
  const size = [256, 128];
  await scenario(
    ctx,
    'side2d',
    { kind: 'side2d', seed: 3, preset: 'hills', size },
    async (page) => {
      const [w, h] = size;
      const pts = await screenPoints(page, [0.3, 0.4, 0.5, 0.6, 0.7].map((t) => [w * t, h * 0.22, 0]));
      return [{ tool: 'dig', points: pts, radius: 9, strength: 1 }];
    },
    (rect, boxes) => {
      // a box of ground far below-left of the stroke, and the sky above it
      return farCorner(rect, boxes, 0.12);
    },
    async (page, rect, url) => {
      await twoWindows(page, rect, url, size);
      await detailTextures(page, 'side2d');
      // crisp on HiDPI: the canvas backing store follows devicePixelRatio
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setDeviceMetricsOverride', { ...VIEWPORT, deviceScaleFactor: 2, mobile: false });
      try {
        await page.waitForFunction(() => {
          const r = window.isoterra.canvasRect();
          const [w, h] = window.isoterra.canvasSize;
          return window.devicePixelRatio === 2 && Math.abs(w - r.width * 2) <= 2 && Math.abs(h - r.height * 2) <= 2;
        }, null, { timeout: 10000 });
        log('  HiDPI: the canvas backing store is 2x its CSS size at devicePixelRatio 2');
      } finally {
        await cdp.send('Emulation.clearDeviceMetricsOverride');
        await cdp.detach();
        await page.setViewportSize(VIEWPORT);
      }
      await exportAndErrorChecks(page);
      // the size keys
      const r0 = await page.evaluate(() => window.isoterra.radius);
      await page.keyboard.press(']');
      const r1 = await page.evaluate(() => window.isoterra.radius);
      await page.keyboard.press('[');
      await page.keyboard.press('[');
      const r2 = await page.evaluate(() => window.isoterra.radius);
      check(r1 > r0 && r2 < r1, `[ and ] did not change the brush size: ${r0} -> ${r1} -> ${r2}`);
      await settle(page);
    },
  );
}

/** A second window on the same world sees a stroke made in the first. */
async function twoWindows(page, rect, url, size) {
  const other = await page.context().newPage();
  const problems = [];
  watchPage(other, problems);
  try {
    await openEditor(other, url);
    await hideCursor(other);
    const b0 = await shot(other, 'side2d-window2-0-before');
    const events = await other.evaluate(() => window.isoterra.historyEvents);
    const [w, h] = size;
    const pts = await screenPoints(page, [0.15, 0.25].map((t) => [w * t, h * 0.85, 0])); // in the sky
    await page.bringToFront();
    await dragStroke(page, 'fill', pts, { radius: 7, strength: 1 });
    await other.waitForFunction((n) => window.isoterra.historyEvents > n, events, { timeout: 30000 });
    await settle(other);
    const b1 = await shot(other, 'side2d-window2-1-after-fill');
    const pad = (await radiusPx(page, pts[0], 7)) * 1.3 + 6;
    expectChanged(b0, b1, boxAround(pts, pad, rect), 'second window: the first window\'s fill stroke');
    check(problems.length === 0, `second window: ${problems.join('; ')}`);
  } finally {
    await other.close();
  }
  await hideCursor(page);
}

/** The export menu downloads a file; a server error shows as a toast. */
async function exportAndErrorChecks(page) {
  const formats = await page.evaluate(() => [...document.querySelectorAll('#export-list a')].map((a) => a.dataset.format));
  check(formats.length > 0, 'the export menu lists no formats');
  await page.click('#export-menu summary');
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 60000 }),
    page.click(`#export-list a[data-format="${formats[0]}"]`),
  ]);
  const file = await download.path();
  const size = file ? fs.statSync(file).size : 0;
  check(size > 0, `the ${formats[0]} export downloaded nothing`);
  log(`  export ${formats[0]}: ${download.suggestedFilename()} (${size} bytes)`);

  const before = await page.evaluate(() => window.isoterra.errors.length);
  await page.evaluate(() =>
    window.isoterra.send({ type: 'stroke_begin', stroke: 'bad-1', tool: 'dig', radius: 1e9, strength: 0.5, params: {} }),
  );
  await page.waitForFunction((n) => window.isoterra.errors.length > n, before, { timeout: 10000 });
  const err = await page.evaluate(() => window.isoterra.errors.at(-1));
  check(err.code === 'invalid_parameter', `an out-of-range radius got ${JSON.stringify(err)}`);
  const toast = page.locator('.toast', { hasText: 'invalid_parameter' });
  await toast.first().waitFor({ state: 'visible', timeout: 5000 });
  log(`  error toast shown: ${(await toast.first().innerText()).replace(/\s+/g, ' ')}`);
}

/** Finds a horizontal drag across the middle of the view that stays on terrain. */
async function terrainDrag(page, rect, spanFrac = 0.14) {
  for (const fy of [0.55, 0.62, 0.48, 0.7, 0.4, 0.78]) {
    for (const fx of [0.5, 0.4, 0.6, 0.3, 0.7]) {
      const y = rect.y + rect.height * fy;
      const cx = rect.x + rect.width * fx;
      const span = rect.width * spanFrac;
      const pts = [-0.5, -0.25, 0, 0.25, 0.5].map((t) => [cx + t * span, y]);
      const hits = await page.evaluate((p) => p.map((q) => window.isoterra.toWorld(q[0], q[1])), pts);
      if (hits.every(Boolean)) return pts;
    }
  }
  throw new TestFailure('no terrain under the middle of the view to paint on');
}

async function voxelScenario(ctx) {
  await scenario(
    ctx,
    'voxel',
    { kind: 'voxel', seed: 5, preset: 'caves', query: '?view_distance=64', docViewDistance: 256 },
    async (page, rect) => {
      const pts = await terrainDrag(page, rect);
      return [{ tool: 'dig', points: pts, radius: 5, strength: 1, extraPad: 20 }];
    },
    farCorner,
    async (page, rect) => {
      // voxel brushes are solids: the shape picker offers them, dig takes
      // a blend, and a box dig is taken
      await selectTool(page, 'dig');
      const shapes = await page.locator('#shape option').allInnerTexts();
      check(shapes.join(',') === 'sphere,box,capsule', `voxel shapes offered: ${shapes}`);
      await page.selectOption('#shape', 'box');
      const blend = await page.evaluate(() => window.isoterra.toolInfo('dig').params.map((p) => p.name));
      check(blend.includes('blend'), `the dig tool has no blend parameter: ${blend}`);
      const ack = await dragStroke(page, 'dig', await terrainDrag(page, rect, 0.06), { radius: 4, strength: 1 });
      log(`  box dig: ${ack.changed_nodes} nodes changed`);
      // the view draws only the chunks in front of the camera: the stream
      // holds them all around it
      await page.evaluate(() => window.isoterra.redraw());
      const drawn = await page.evaluate(() => ({ ...window.isoterra.drawn, held: window.isoterra.meshes }));
      log(`  culling: drew ${drawn.calls} of ${drawn.held} meshes, ${Math.round(drawn.tris)} triangles`);
      check(drawn.calls > 0 && drawn.tris > 0, `the last frame drew nothing: ${JSON.stringify(drawn)}`);
      check(drawn.calls < drawn.held, `every held mesh was drawn, none culled: ${JSON.stringify(drawn)}`);
    },
  );
}

async function heightmapScenario(ctx) {
  await scenario(
    ctx,
    'heightmap',
    { kind: 'heightmap', seed: 11, preset: 'hills', query: '?view_distance=256' },
    async (page, rect) => {
      const pts = await terrainDrag(page, rect);
      return [{ tool: 'raise', points: pts, radius: 10, strength: 1, extraPad: 60 }];
    },
    farCorner,
    async (page, rect) => {
      // the free-fly camera: W flies forward, a right drag looks around, and
      // the server streams chunks for the new place
      const c0 = await page.evaluate(() => window.isoterra.camera());
      await page.keyboard.down('w');
      await page.waitForTimeout(1500);
      await page.keyboard.up('w');
      const c1 = await page.evaluate(() => window.isoterra.camera());
      const moved = Math.hypot(c1.pos[0] - c0.pos[0], c1.pos[1] - c0.pos[1], c1.pos[2] - c0.pos[2]);
      check(moved > 5, `W did not fly the camera forward (moved ${moved.toFixed(2)})`);
      const cx = rect.x + rect.width / 2;
      const cy = rect.y + rect.height / 2;
      await page.mouse.move(cx, cy);
      await page.mouse.down({ button: 'right' });
      await page.mouse.move(cx + 200, cy, { steps: 5 });
      await page.mouse.up({ button: 'right' });
      const c2 = await page.evaluate(() => window.isoterra.camera());
      check(c2.yaw !== c1.yaw, 'a right drag did not turn the free-fly camera');
      await settle(page);
      check((await page.evaluate(() => window.isoterra.chunks)) > 0, 'no chunks after flying');
      log(`  fly camera: W moved ${moved.toFixed(1)} units, right drag turned, streaming settled`);
      await hideCursor(page);
      await detailTextures(page, 'heightmap');
      // the erosion brushes, each an acknowledged stroke that changes the
      // ground: hydraulic erode on the hills, thermal slumping on a ridge
      // raised steeper than its talus (the hills' own slopes are gentler)
      const path = await terrainDrag(page, rect, 0.1);
      let ack = await dragStroke(page, 'erode', path, { radius: 24, strength: 1 });
      check(ack.changed_nodes > 0, 'the erode stroke changed nothing');
      log(`  erode brush: ${ack.changed_nodes} nodes changed`);
      for (let i = 0; i < 3; i++) await dragStroke(page, 'raise', path, { radius: 6, strength: 1 });
      ack = await dragStroke(page, 'thermal', path, { radius: 16, strength: 1 });
      check(ack.changed_nodes > 0, 'the thermal stroke changed nothing on a steep ridge');
      log(`  thermal brush: ${ack.changed_nodes} nodes changed on a raised ridge`);
    },
  );
}

/**
 * Pixels of the new-world dialog's preview image: their count and a checksum.
 * Waits until no preview is in flight or wanted; a new preview that replaces
 * the image while it decodes (the dialog asks again after a change that came
 * in during a request) makes the decode fail, and the read is tried again.
 */
async function previewBytes(page) {
  let last = null;
  for (let attempt = 0; attempt < 20; attempt++) {
    await page.waitForFunction(() => !window.isoterra.recipe.busy, null, { timeout: 30000 });
    const got = await readPreview(page).catch((e) => ({ error: String(e) }));
    const still = await page.evaluate(() => !window.isoterra.recipe.busy);
    if (!got.error && got.src === got.srcAfter && still) return got;
    last = got.error ?? 'the image changed while it was read';
    await page.waitForTimeout(200);
  }
  throw new Error(`the preview image could not be read: ${last}`);
}

async function readPreview(page) {
  return page.evaluate(async () => {
    const img = document.getElementById('nw-preview');
    const src = img.src;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const buf = g.getImageData(0, 0, c.width, c.height).data;
    let h = 2166136261;
    for (const b of buf) h = Math.imul(h ^ b, 16777619) >>> 0;
    return { length: buf.length, hash: h, src, srcAfter: img.src };
  });
}

/** Waits until the preview in flight (if any) is back and `n` were drawn. */
async function previewsAtLeast(page, n, what) {
  const ok = await page
    .waitForFunction((k) => window.isoterra.recipe.previews >= k, n, { timeout: 30000 })
    .then(() => true, () => false);
  const r = await page.evaluate(() => window.isoterra.recipe);
  check(ok, `${what}: no new preview (${r.previews} drawn, last error ${r.lastError})`);
  return r;
}

/** Drags the slider of the field `id` from its left third to its right. */
async function dragSlider(page, id) {
  const slider = page.locator(`label:has(#${id}) input[type=range]`);
  await slider.scrollIntoViewIfNeeded();
  const box = await slider.boundingBox();
  check(box, `no slider for ${id}`);
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.3, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.8, y, { steps: 12 });
  await page.mouse.up();
}

/**
 * The generator panel of the new-world dialog: controls built from the
 * recipe's fields, a live preview while a slider is dragged, refused
 * values, the cellular-only fields, the curve editor, and a world created
 * from exactly the edited recipe.
 */
async function recipeScenario(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'isoterra-e2e-recipe-'));
  const file = path.join(dir, 'world.isoterra');
  const problems = [];
  const server = await Server.start(file, dir, 'recipe server');
  const page = await ctx.newPage();
  watchPage(page, problems);
  try {
    await openEditor(page, server.url);
    await page.click('#new-world');
    await page.selectOption('#nw-kind', 'heightmap');
    await page.waitForFunction(() => window.isoterra.recipe.preset === 'hills' && document.getElementById('rf-mountain_strength'), null, { timeout: 30000 });
    let r = await previewsAtLeast(page, 1, 'heightmap hills');
    const groups = await page.locator('#nw-fields legend').allInnerTexts();
    check(groups.join(',') === 'Base noise,Mountains,Mountain mask,Domain warp,Height,Erosion', `unexpected groups: ${groups}`);
    const sliders = await page.locator('#nw-fields input[type=range]').count();
    check(sliders >= 20, `only ${sliders} sliders for the heightmap recipe`);
    const p0 = await previewBytes(page);
    log(`  heightmap recipe: ${groups.length} groups, ${sliders} sliders; first preview ${Math.round(r.lastMs)} ms`);

    // Dragging a slider redraws the preview while it moves.
    const before = r.previews;
    await dragSlider(page, 'rf-mountain_strength');
    r = await previewsAtLeast(page, before + 1, 'dragging mountain strength');
    await page.waitForFunction(() => !document.getElementById('nw-preview-info').textContent.startsWith('drawing'), null, { timeout: 10000 });
    await page.waitForTimeout(300);
    const p1 = await previewBytes(page);
    const strength = r.current.params.mountain_strength;
    check(p1.hash !== p0.hash, 'the preview did not change with the mountain strength');
    check(Math.abs(strength - 1.0) > 0.01 && r.modified, `the slider did not change the recipe (${strength})`);
    const times = [];
    r = await page.evaluate(() => window.isoterra.recipe);
    log(`  dragging mountain strength to ${strength}: ${r.previews - before} previews while it moved, last ${Math.round(r.lastMs)} ms`);
    times.push(r.lastMs);

    // A value out of range is refused where it is typed.
    await page.fill('#rf-base-octaves', '40');
    const invalid = await page.locator('#rf-base-octaves').evaluate((e) => e.classList.contains('invalid'));
    r = await page.evaluate(() => window.isoterra.recipe);
    check(invalid && r.current.params.base.octaves !== 40, 'octaves 40 was not refused');
    await page.fill('#rf-base-octaves', '3');
    r = await page.evaluate(() => window.isoterra.recipe);
    check(r.current.params.base.octaves === 3, 'octaves 3 was not taken');

    // Cellular noise brings its own two fields; another basis drops them.
    await page.selectOption('#rf-base-basis-type', 'cellular');
    check(await page.locator('#rf-base-basis-jitter').isVisible(), 'no jitter field for cellular noise');
    r = await page.evaluate(() => window.isoterra.recipe);
    check(r.current.params.base.basis.ret === 'f1' && r.current.params.base.basis.jitter === 1, `cellular basis: ${JSON.stringify(r.current.params.base.basis)}`);
    await page.selectOption('#rf-base-basis-type', 'value');
    check(!(await page.locator('#rf-base-basis-jitter').isVisible()), 'the jitter field stayed for value noise');
    r = await page.evaluate(() => window.isoterra.recipe);
    check(JSON.stringify(r.current.params.base.basis) === '{"type":"value"}', `value basis: ${JSON.stringify(r.current.params.base.basis)}`);

    // The curve editor: a double-click adds a point, a drag moves it up.
    const curve0 = r.current.params.curve;
    await page.locator('#rf-curve').scrollIntoViewIfNeeded();
    const cbox = await page.locator('#rf-curve').boundingBox();
    const toScreen = (c, pts, q) => {
      const ys = pts.map((p) => p[1]);
      const [y0, y1] = [Math.min(0, ...ys), Math.max(1, ...ys)];
      const pad = 8;
      const k = cbox.width / c.width;
      return [cbox.x + (pad + q[0] * (c.width - 2 * pad)) * k, cbox.y + (c.height - pad - ((q[1] - y0) / (y1 - y0)) * (c.height - 2 * pad)) * k];
    };
    const dims = await page.locator('#rf-curve').evaluate((c) => ({ width: c.width, height: c.height }));
    const mid = toScreen(dims, curve0, [0.5, 0.3]);
    await page.mouse.dblclick(mid[0], mid[1]);
    r = await page.evaluate(() => window.isoterra.recipe);
    const curveAdded = r.current.params.curve;
    check(curveAdded.length === curve0.length + 1, `a double-click did not add a curve point: ${JSON.stringify(curveAdded)}`);
    const k1 = curveAdded.findIndex((q) => Math.abs(q[0] - 0.5) < 0.05);
    check(k1 > 0, `the new point is not at x = 0.5: ${JSON.stringify(curveAdded)}`);
    const at = toScreen(dims, curveAdded, curveAdded[k1]);
    await page.mouse.move(at[0], at[1]);
    await page.mouse.down();
    await page.mouse.move(at[0], at[1] - 25, { steps: 5 });
    await page.mouse.up();
    r = await page.evaluate(() => window.isoterra.recipe);
    const curve1 = r.current.params.curve;
    check(curve1.length === curveAdded.length && curve1[k1][1] > curveAdded[k1][1] + 0.05 && curve1[k1][0] === curveAdded[k1][0], `the curve did not follow the drag: ${JSON.stringify(curveAdded)} -> ${JSON.stringify(curve1)}`);
    const nPreviews = r.previews;
    await previewsAtLeast(page, nPreviews, 'after the curve drag');
    await page.waitForTimeout(500);
    r = await page.evaluate(() => window.isoterra.recipe);
    check(r.lastError === null, `the edited recipe was refused: ${r.lastError}`);
    log(`  octaves 40 refused, cellular fields come and go, curve point added at x = 0.5 and dragged to y = ${curve1[k1][1]}`);
    if (DOC_SHOTS) {
      const d = path.join(ROOT, 'docs', 'screenshots');
      fs.mkdirSync(d, { recursive: true });
      await page.locator('.nw-left').evaluate((e) => {
        e.scrollTop = 0;
      });
      await page.locator('#new-world-dialog').screenshot({ path: path.join(d, 'new-world-recipe.png') });
      log('  wrote docs/screenshots/new-world-recipe.png');
    }

    // The erosion step: off at first; its toggle brings its fields and
    // redraws the preview with the region eroded. A small region and light
    // settings keep the creation quick in a debug build.
    check(!(await page.locator('#rf-erosion-passes').isVisible()), 'erosion fields shown while erosion is off');
    await page.locator('#rf-erosion').scrollIntoViewIfNeeded();
    const e0 = await previewBytes(page);
    r = await page.evaluate(() => window.isoterra.recipe);
    await page.check('#rf-erosion');
    check(await page.locator('#rf-erosion-passes').isVisible(), 'no erosion fields after the toggle');
    if (DOC_SHOTS) {
      // The default step, close by (the preview inside its region).
      const d = path.join(ROOT, 'docs', 'screenshots');
      const k = (await page.evaluate(() => window.isoterra.recipe)).previews;
      await page.selectOption('#nw-area', '256');
      await previewsAtLeast(page, k + 1, 'preview area 256');
      await page.waitForTimeout(500);
      await previewBytes(page);
      await page.locator('#rf-erosion').evaluate((e) => e.closest('fieldset').scrollIntoView({ block: 'start' }));
      await page.locator('#new-world-dialog').screenshot({ path: path.join(d, 'new-world-erosion.png') });
      log('  wrote docs/screenshots/new-world-erosion.png');
      await page.selectOption('#nw-area', 'auto');
    }
    await page.fill('#rf-erosion-region-0', '-96');
    await page.fill('#rf-erosion-region-1', '-96');
    await page.fill('#rf-erosion-region-2', '96');
    await page.fill('#rf-erosion-region-3', '96');
    await page.fill('#rf-erosion-passes', '2');
    await page.fill('#rf-erosion-lifetime', '16');
    await previewsAtLeast(page, r.previews + 1, 'erosion on');
    await page.waitForFunction(() => !document.getElementById('nw-preview-info').textContent.startsWith('drawing'), null, { timeout: 20000 });
    await page.waitForTimeout(500);
    const e1 = await previewBytes(page);
    r = await page.evaluate(() => window.isoterra.recipe);
    const erosion = r.current.params.erosion;
    check(r.lastError === null, `the eroding recipe was refused: ${r.lastError}`);
    check(e1.hash !== e0.hash, 'the preview did not change with erosion on');
    check(JSON.stringify(erosion.region) === '[-96,-96,96,96]' && erosion.passes === 2 && erosion.lifetime === 16, `the erosion fields did not reach the recipe: ${JSON.stringify(erosion)}`);
    log(`  erosion on: region ${JSON.stringify(erosion.region)}, ${erosion.passes} passes; preview ${Math.round(r.lastMs)} ms`);

    // Create: the world is made from exactly this recipe.
    const wanted = r.current;
    const w0 = await page.evaluate(() => window.isoterra.welcomes);
    await page.click('#nw-create');
    await page.waitForSelector('#confirm-dialog[open]', { timeout: 10000 });
    const text = await page.locator('#confirm-text').innerText();
    check(/edited from hills/.test(text), `the confirmation does not say the recipe was edited: ${text}`);
    await page.click('#nw-confirm');
    await page.waitForFunction(([w]) => window.isoterra.welcomes > w && window.isoterra.kind === 'heightmap' && window.isoterra.ready, [w0], { timeout: 60000 });
    const info = await page.evaluate(async () => (await fetch('api/info')).json());
    // Parameters are f32 in the world: compare at that precision.
    // Keys sorted: the server writes them in its order, the page in the
    // order the fields were turned on.
    const sorted = (x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted(x[k])])) : Array.isArray(x) ? x.map(sorted) : x);
    const f32 = (v) => JSON.stringify(sorted(v), (_, x) => (typeof x === 'number' ? Math.fround(x) : x));
    check(f32(info.recipe.params) === f32(wanted.params), `the world's recipe is not the edited one:\n${JSON.stringify(info.recipe.params)}\n${JSON.stringify(wanted.params)}`);
    // The erosion ran: the file stores the eroded ground as chunks (a new
    // uneroded heightmap stores none), and there is nothing to undo.
    const stored = JSON.parse(await runCli(['info', file, '--json'], dir));
    check(stored.chunks_stored > 0 && stored.strokes_total === 0, `the eroded world stores no eroded ground: ${JSON.stringify(stored)}`);
    log(`  created: the world file holds exactly the edited recipe, and ${stored.chunks_stored} chunks of eroded ground`);

    // side2d: the size is part of the preview; the fill slider redraws it.
    await page.click('#new-world');
    await page.selectOption('#nw-kind', 'side2d');
    await page.waitForFunction(() => window.isoterra.recipe.preset === 'hills' && document.getElementById('rf-fill'), null, { timeout: 30000 });
    r = await page.evaluate(() => window.isoterra.recipe);
    await previewsAtLeast(page, r.previews + 1, 'side2d hills');
    await page.waitForTimeout(300);
    const s0 = await previewBytes(page);
    r = await page.evaluate(() => window.isoterra.recipe);
    await dragSlider(page, 'rf-fill');
    await previewsAtLeast(page, r.previews + 1, 'dragging fill');
    await page.waitForTimeout(500);
    const s1 = await previewBytes(page);
    r = await page.evaluate(() => window.isoterra.recipe);
    check(s1.hash !== s0.hash, 'the side2d preview did not change with the fill');
    times.push(r.lastMs);
    log(`  side2d fill ${r.current.params.fill}: preview ${Math.round(r.lastMs)} ms (round trip, this build)`);
    await page.keyboard.press('Escape');
    await checkNoErrors(page, problems, 'recipe');
  } finally {
    await page.close();
    await server.stop();
  }
}

/** Runs `isoterra ARGS...` and waits for it; throws with its output on failure. */
function runCli(args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`isoterra ${args.join(' ')} failed (${code}):\n${out}`))));
  });
}

/**
 * The README's close-up of a War3-style map: a two-level plateau with a
 * ramp down its front and a flooded basin, made with the command line's
 * strokes, then shown in the editor from close by. Only with
 * ISOTERRA_DOC_SCREENSHOTS=1 (it writes docs/screenshots/map-closeup.png).
 */
async function mapCloseupScenario(ctx) {
  if (!DOC_SHOTS) {
    log('  (only with ISOTERRA_DOC_SCREENSHOTS=1)');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'isoterra-e2e-closeup-'));
  const file = path.join(dir, 'closeup.isoterra');
  // cliffs two and a half cells tall, as on a War3 map
  const recipe = path.join(dir, 'closeup.json');
  fs.writeFileSync(recipe, JSON.stringify({ version: 1, kind: 'map', name: 'closeup', params: { generator: 'blank', level_height: 2.5, chasm_depth: 2.0 } }));
  await runCli(['new', file, '--kind', 'map', '--size', '96x96', '--recipe', recipe, '--seed', '3'], dir);
  const strokes = [
    // a plateau, and a higher one on it
    ['--tool', 'cliff-up', '--at', '40,40', '--radius', '16', '--level', '1'],
    ['--tool', 'cliff-up', '--at', '35,35', '--radius', '9', '--level', '2'],
    // a ramp down the front of the lower rim, 5 cells per level
    ['--tool', 'ramp', '--at', '50,53', '--radius', '5', '--length', '5'],
    // a basin, flooded flat
    ['--tool', 'lower', '--at', '64,63', '--radius', '12'],
    ['--tool', 'lower', '--at', '64,63', '--radius', '8'],
    ['--tool', 'water', '--at', '64,63', '--radius', '22', '--height', '-0.3'],
    // dirt on the plateau, rock on the top, sand round the lake
    ['--tool', 'paint', '--at', '40,40', '--radius', '15', '--texture', '1', '--strength', '0.7'],
    ['--tool', 'paint', '--at', '35,35', '--radius', '8', '--texture', '2', '--strength', '0.9'],
    ['--tool', 'paint', '--at', '64,63', '--radius', '13', '--texture', '3', '--strength', '0.9'],
  ];
  for (const s of strokes) await runCli(['stroke', file, ...s], dir);
  const server = await Server.start(file, dir, 'closeup server');
  const page = await ctx.newPage();
  const problems = [];
  watchPage(page, problems);
  try {
    await openEditor(page, editorUrl(server.url, {}));
    const cam = JSON.parse(process.env.ISOTERRA_CLOSEUP_CAMERA ?? 'null') ?? { target: [53, 1, 53], yaw: 0.62, pitch: 0.55, dist: 52 };
    await page.evaluate((c) => window.isoterra.setCamera(c), cam);
    await page.waitForTimeout(300);
    await settle(page);
    await hideCursor(page);
    await page.waitForFunction(() => window.isoterra.lastRenderFull, null, { timeout: 30000 });
    const out = path.join(ROOT, 'docs', 'screenshots', 'map-closeup.png');
    await page.screenshot({ path: out });
    log('  wrote docs/screenshots/map-closeup.png');
    await checkNoErrors(page, problems, 'closeup');
  } finally {
    await page.close();
    await server.stop();
  }
}

// A map of more chunks than the server sends whole (320² cells in chunks
// of 16: 400) is streamed around the camera: every chunk arrives, those
// near the point looked at in full and the rest as coarse overview tiles;
// moving the camera brings the chunks there in full. The picture of the
// whole map shows terrain everywhere (no hole where a tile or a chunk is
// missing), and so does a close view across the edge of the full chunks.
async function mapStreamScenario(ctx) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'isoterra-e2e-stream-'));
  const file = path.join(dir, 'large.isoterra');
  await runCli(['new', file, '--kind', 'map', '--size', '320x320', '--chunk', '16', '--seed', '5'], dir);
  const server = await Server.start(file, dir, 'stream server');
  const page = await ctx.newPage();
  const problems = [];
  watchPage(page, problems);
  try {
    await openEditor(page, editorUrl(server.url, {}));
    await page.waitForFunction(() => window.isoterra.chunks >= 400, null, { timeout: 240000 });
    await settle(page);
    const first = await page.evaluate(() => window.isoterra.lods);
    log(`  whole map: ${JSON.stringify(first)} terrain meshes by LOD`);
    check((first[0] ?? 0) > 0 && (first[1] ?? 0) > 0, `full chunks near the camera and tiles elsewhere: ${JSON.stringify(first)}`);
    check((first[0] ?? 0) + (first[1] ?? 0) === 400, `one terrain mesh per chunk: ${JSON.stringify(first)}`);
    await hideCursor(page);
    const whole = await shot(page, 'map-stream-whole');
    // The map fills the middle of the view: no sky shows through it.
    const box = (img, fx, fy, fw, fh) => ({ x: Math.round(img.width * fx), y: Math.round(img.height * fy), w: Math.round(img.width * fw), h: Math.round(img.height * fh) });
    const mid = box(whole, 0.4, 0.45, 0.2, 0.1);
    check(!skyIn(whole, mid), 'the middle of the whole map shows sky: a tile or a chunk is missing');
    // While the camera looks at the middle, a corner chunk is a tile. (A
    // camera message of the page's first moments may have had it in full;
    // the middle camera's turns it back into a tile.) This is checked before
    // the camera moves: after the move the chunk may come in full before a
    // check could see it as a tile.
    const cam = await page.evaluate(() => window.isoterra.camera());
    await page
      .waitForFunction(() => window.isoterra.lodOf([3, 0, 3]) === 1, null, { timeout: 60000 })
      .catch(() => check(false, `a corner chunk is not a tile while the camera is away (camera ${JSON.stringify(cam)})`));
    // Close over the corner: the chunks there come in full.
    await page.evaluate((c) => window.isoterra.setCamera({ ...c, target: [60, c.target[1], 60], dist: 70, pitch: 0.7 }), cam);
    await page.waitForFunction(() => window.isoterra.lodOf([3, 0, 3]) === 0, null, { timeout: 60000 });
    await page.waitForTimeout(500);
    await settle(page);
    const near = await page.evaluate(() => window.isoterra.lods);
    log(`  close to a corner: ${JSON.stringify(near)}`);
    const close = await shot(page, 'map-stream-corner');
    const low = box(close, 0.3, 0.6, 0.4, 0.3);
    check(!skyIn(close, low), 'the ground in front of the camera shows sky: a gap between full chunks and tiles');
    await checkNoErrors(page, problems, 'stream');
  } finally {
    await page.close();
    await server.stop();
  }
}

/** Whether more than 1% of the pixels of `box` in `img` are sky blue. */
function skyIn(img, box) {
  let sky = 0;
  let n = 0;
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const i = (y * img.width + x) * 4;
      const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
      // the sky gradient: blue over red and green, light
      if (b > 150 && b > r + 40 && b > g + 10) sky++;
      n++;
    }
  }
  return sky > n * 0.01;
}

const SCENARIOS = [
  ['map', mapScenario],
  ['map-closeup', mapCloseupScenario],
  ['map-stream', mapStreamScenario],
  ['side2d', side2dScenario],
  ['voxel', voxelScenario],
  ['heightmap', heightmapScenario],
  ['recipe', recipeScenario],
];

// ------------------------------------------------------------------ main

async function main() {
  if (!BIN) {
    console.error('ISOTERRA_BIN must name the isoterra binary');
    process.exit(2);
  }
  fs.mkdirSync(SHOTS, { recursive: true });
  log(await checkFrameParser(ROOT));
  log(`binary ${BIN}`);
  log(`browser ${CHROMIUM}`);
  log(`screenshots in ${SHOTS}`);
  const watchdog = setTimeout(() => {
    console.error(`[e2e] FAILED: the browser tests ran longer than ${TOTAL_TIMEOUT_MS / 60000} minutes`);
    process.exit(1);
  }, TOTAL_TIMEOUT_MS);
  const { ctx, profile } = await launchBrowser();
  const failures = [];
  try {
    const gl = await (async () => {
      const page = await ctx.newPage();
      const r = await page.evaluate(() => !!document.createElement('canvas').getContext('webgl2'));
      await page.close();
      return r;
    })();
    if (!gl) throw new Error('this Chromium has no WebGL2 (swiftshader flags not honoured?)');
    for (const [name, fn] of SCENARIOS) {
      if (ONLY.length && !ONLY.includes(name)) continue;
      const t0 = Date.now();
      log(`--- ${name}`);
      try {
        await fn(ctx);
        log(`ok ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (e) {
        log(`FAILED ${name}: ${e.message}`);
        if (!(e instanceof TestFailure)) console.error(e.stack);
        if (e.serverOutput) console.error(`server output (last lines):\n${e.serverOutput}`);
        failures.push(name);
      }
    }
  } finally {
    await ctx.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
    clearTimeout(watchdog);
  }
  if (failures.length) {
    console.error(`[e2e] FAILED: ${failures.join(', ')} (screenshots in ${SHOTS})`);
    process.exit(1);
  }
  log(`all browser scenarios passed (screenshots in ${SHOTS})`);
}

main().catch((e) => {
  console.error('[e2e] FAILED:', e.stack || e.message);
  process.exit(1);
});
