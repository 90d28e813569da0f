// The isoterra editor page: connects to the server, keeps the chunk meshes it
// is sent, draws them, and turns pointer drags into brush strokes.

import { Connection, parseFrame } from './protocol.js';
import { Renderer } from './render.js';
import { SideCamera, MapCamera, FlyCamera } from './camera.js';
import { pickMeshes, pickPlane } from './pick.js';
import { rayFromNdc, mat4, vec3, clamp } from './math.js';
import { chunkKey } from './render.js';
import { LAYER_TERRAIN, LAYER_WATER, LAYER_LINES, LAYER_DECAL } from './protocol.js';
import { Ui } from './ui.js';

const canvas = document.getElementById('view');
const ui = new Ui();

// `?aa=0` turns multisampling off (for slow software rasterizers);
// `?adaptive=0` keeps the full resolution however slow drawing is
const urlQuery = new URLSearchParams(location.search);
const ADAPTIVE = urlQuery.get('adaptive') !== '0';
// `?detail=0` draws the terrain in its vertex colours only, untextured
let DETAIL = urlQuery.get('detail') !== '0';
/** `?cull=0` draws every held mesh, in view or not (to measure what culling saves). */
const CULL = urlQuery.get('cull') !== '0';
// A frame that takes longer than this lowers the resolution while the view
// moves; once it stops, one frame at full resolution follows.
const SLOW_FRAME_MS = 50;
const FAST_FRAME_MS = 20;
const MIN_SCALE = 0.35;
const REFINE_AFTER_MS = 250;
// Mesh uploads per animation frame stop after this many milliseconds.
const UPLOAD_BUDGET_MS = 12;
const MINIMAP_EVERY_MS = 1000;
let renderer;
try {
  renderer = new Renderer(canvas, { antialias: urlQuery.get('aa') !== '0' });
  renderer.cull = CULL;
} catch (e) {
  ui.fatal(`This browser cannot draw the editor: ${e.message}`);
  throw e;
}

const DEFAULT_RADIUS = { side2d: 6, map: 8, heightmap: 12, voxel: 5 };
const FLY_START = {
  heightmap: { pos: [-70, 110, -70], yaw: Math.PI / 4, pitch: -0.5 },
  voxel: { pos: [-26, 36, -26], yaw: Math.PI / 4, pitch: -0.6, viewDistance: 192 },
};

/** Where the free-fly camera starts: above the terrain near the origin. */
function flyStart(kind, world) {
  const start = { ...FLY_START[kind] };
  const vd = Number(urlQuery.get('view_distance'));
  const range = world?.height_range;
  if (kind === 'heightmap' && Array.isArray(range) && range.every(Number.isFinite)) {
    start.pos = [-70, range[1] + 45, -70];
  }
  if (Number.isFinite(world?.view_distance)) start.viewDistance = world.view_distance;
  if (urlQuery.has('view_distance') && Number.isFinite(vd) && vd > 0) start.viewDistance = vd;
  return start;
}

const app = {
  ready: false,
  connected: false,
  kind: null,
  world: null,
  tools: [],
  limits: { radius: [0.5, 100], strength: [0, 1] },
  exports: [],
  history: { can_undo: false, can_redo: false, strokes: 0 },
  clientId: null,
  camera: null,
  cameraKey: null,
  hover: null,
  pointer: { x: 0, y: 0, inside: false, moved: false },
  drag: null,
  armed: false,
  stroke: null,
  strokeSeq: 0,
  pendingAcks: new Set(),
  failedStrokes: new Set(),
  acks: [],
  lastAck: null,
  errors: [],
  status: null,
  keys: new Set(),
  spaceHeld: false,
  needsRender: true,
  renders: 0,
  // World units of one detail texture tile (ground, rock), and whether
  // ground is projected from three sides.
  detailUnits: [8, 12, false],
  lastRenderAt: 0,
  frames: 0,
  lastFrameAt: 0,
  frameErrors: 0,
  lastCameraSent: 0,
  cameraDirty: false,
  welcomes: 0,
  dabs: 0,
  historyEvents: 0,
  statusAt: 0,
  chunksChangedAt: 0,
  welcomeAt: 0,
  // mesh frames received but not uploaded yet, newest per chunk layer
  pendingFrames: new Map(),
  // undo/redo pressed while a stroke of this page was not acknowledged yet
  historyQueue: [],
  // acks and history events in arrival order (for tests and the status bar)
  events: [],
  renderScale: 1,
  lastRenderFull: true,
  renderStartedAt: 0,
  renderPending: false,
  lastChangeAt: 0,
  pathing: { on: false, auto: false, busy: false, dirty: false, version: 0, flags: null, w: 0, d: 0 },
  minimap: { dirty: true, renderedAt: 0, image: null, rect: null, side: false, renders: 0 },
  startCamera: null,
};

// ---------------------------------------------------------------- connection

const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
const conn = new Connection(wsUrl, {
  onOpen() {
    app.connected = true;
    ui.setConnection(true);
  },
  onClose(ev, wasOpen) {
    app.connected = false;
    app.ready = false;
    app.stroke = null;
    ui.setConnection(false);
    ui.overlay(wasOpen ? 'Connection to the server lost — reconnecting…' : 'Cannot reach the isoterra server — retrying…');
    if (ev.code === 1009) ui.toast('too_large', 'the server closed the connection: a message was too large');
  },
  onJson: handleMessage,
  onFrame(buf) {
    let frame;
    try {
      frame = parseFrame(buf);
    } catch (e) {
      app.frameErrors++;
      ui.toast('bad_frame', e.message);
      return;
    }
    app.frames++;
    // a frame of another kind belongs to a world that was just replaced
    if (app.kind && frame.kindName !== app.kind) return;
    // uploaded in the next animation frame; a newer frame of the same chunk
    // layer replaces one still waiting
    const key = chunkKey(frame.layer, frame.chunk);
    app.pendingFrames.delete(key);
    app.pendingFrames.set(key, frame);
    app.lastFrameAt = performance.now();
  },
  onProtocolError(msg) {
    ui.toast('bad_message', msg);
  },
});

function send(msg) {
  return conn.send(msg);
}

function handleMessage(msg) {
  switch (msg.type) {
    case 'welcome':
      onWelcome(msg);
      break;
    case 'ack':
      app.pendingAcks.delete(msg.stroke);
      app.lastAck = msg;
      app.acks.push(msg);
      if (app.acks.length > 100) app.acks.shift();
      logEvent({ type: 'ack', stroke: msg.stroke, id: msg.id ?? null });
      if (msg.history) setHistory(msg.history);
      // a stroke that changed nothing is not in the history: an undo
      // pressed for it would undo the stroke before
      if (msg.id === null || msg.id === undefined) dropQueuedHistory('the stroke changed nothing');
      ui.setSaveState(app.pendingAcks.size ? 'saving' : 'saved');
      flushHistoryQueue();
      overlayChanged();
      break;
    case 'history':
      app.historyEvents++;
      logEvent({ type: 'history', action: msg.action ?? null, stroke: msg.stroke ?? null });
      setHistory(msg);
      overlayChanged();
      break;
    case 'error':
      onError(msg);
      break;
    case 'unload': {
      const chunks = msg.chunks ?? [];
      for (const c of chunks) for (const layer of [LAYER_TERRAIN, LAYER_WATER, LAYER_LINES, LAYER_DECAL]) app.pendingFrames.delete(chunkKey(layer, c));
      renderer.unload(chunks);
      app.needsRender = true;
      app.hoverStale = true;
      app.minimap.dirty = true;
      break;
    }
    case 'status':
      if (!app.status || app.status.chunks !== msg.chunks) app.chunksChangedAt = performance.now();
      app.status = msg;
      app.statusAt = performance.now();
      ui.setStatus(msg, app.pendingAcks.size > 0);
      break;
    default:
      break;
  }
}

function onWelcome(msg) {
  const world = msg.world ?? {};
  const kind = msg.kind ?? world.kind;
  app.welcomes++;
  app.welcomeAt = performance.now();
  app.status = null;
  app.kind = kind;
  app.world = world;
  app.clientId = msg.client_id ?? null;
  app.tools = Array.isArray(msg.tools) ? msg.tools : [];
  app.limits = { radius: [0.5, 100], strength: [0, 1], ...(msg.limits ?? {}) };
  app.exports = Array.isArray(msg.exports) ? msg.exports : [];
  app.stroke = null;
  app.pendingAcks.clear();
  app.pendingFrames.clear();
  app.historyQueue.length = 0;
  renderer.clear();
  ui.resetStatus();
  app.pathing = { ...app.pathing, busy: false, dirty: false, flags: null };
  app.minimap = { ...app.minimap, dirty: true, image: null, rect: null };
  const bounds = world.bounds ?? null;
  const view = kind === 'side2d' ? 'side' : kind === 'map' ? 'map' : 'fly';
  // Detail textures: one tile of ground every 8 cells, of rock every 12
  // (side views, seen whole from further away: 16 and 24).
  const cell = Number(world.cell_size) > 0 ? Number(world.cell_size) : 1;
  const tile = kind === 'side2d' ? 2 : 1;
  // Voxel ground faces every way, and side views face the camera: every
  // class is projected from three sides (a side view's from the front).
  app.detailUnits = [8 * cell * tile, 12 * cell * tile, kind === 'voxel' || kind === 'side2d'];
  renderer.setDetail(DETAIL, ...app.detailUnits);
  if (msg.detail) {
    renderer
      .loadDetail(msg.detail)
      .then((loaded) => {
        if (!loaded) return;
        app.needsRender = true;
        app.minimap.dirty = true;
      })
      .catch((err) => console.warn(`isoterra: ${err.message}`));
  }
  renderer.setView(view, kind === 'side2d' ? bounds : null);
  // keep the camera when the same world comes back (reconnect), else reset it
  const key = JSON.stringify([kind, world.file, world.seed, world.preset, world.size]);
  if (!app.camera || app.cameraKey !== key) {
    app.camera = startCamera(view, kind, world);
    app.startCamera = app.camera.state();
  }
  app.cameraKey = key;
  ui.setWorld(world, kind, app.exports);
  ui.setTools(app.tools, kind, app.limits, DEFAULT_RADIUS[kind] ?? 8, msg.shapes);
  ui.setHelp(app.camera.helpText());
  ui.setViewDistance(view === 'fly' ? app.camera.viewDistance : null, app.limits.view_distance);
  setHistory(msg.history ?? { can_undo: false, can_redo: false, strokes: 0 });
  ui.setPathingAvailable(kind === 'map');
  setPathingOverlay(kind === 'map' && app.pathing.on);
  ui.overlay(null);
  ui.setSaveState('saved');
  app.ready = true;
  app.needsRender = true;
  app.hoverStale = true;
  sendCamera(true);
}

/** A fresh camera of `view` framing the world, as a new page starts. */
function startCamera(view, kind, world) {
  const bounds = world.bounds ?? null;
  const cam = view === 'side' ? new SideCamera() : view === 'map' ? new MapCamera() : new FlyCamera(flyStart(kind, world));
  const { w, h } = cssSize();
  cam.fit(bounds, w, h);
  if (view === 'fly' && Array.isArray(app.limits.view_distance)) {
    cam.viewDistance = clamp(cam.viewDistance, ...app.limits.view_distance);
  }
  return cam;
}

/** Home: the view the page started with (the view distance is kept). */
function resetView() {
  if (!app.camera || !app.world) return;
  const view = app.camera.kind;
  const keep = app.camera.viewDistance;
  const cam = startCamera(view, app.kind, app.world);
  if (view === 'fly' && Number.isFinite(keep)) cam.viewDistance = keep;
  app.camera = cam;
  cameraChanged();
  sendCamera(true);
}

function logEvent(e) {
  app.events.push({ ...e, at: performance.now() });
  if (app.events.length > 200) app.events.shift();
}

function setHistory(h) {
  app.history = { ...app.history, ...h };
  ui.setHistory(app.history);
}

function onError(msg) {
  app.errors.push(msg);
  if (app.errors.length > 100) app.errors.shift();
  if (msg.stroke) {
    if (app.pendingAcks.has(msg.stroke)) dropQueuedHistory('the stroke was not saved');
    app.pendingAcks.delete(msg.stroke);
    if (app.stroke && app.stroke.id === msg.stroke) app.stroke.failed = true;
    if (app.failedStrokes.has(msg.stroke) && msg.code === 'unknown_stroke') return;
    app.failedStrokes.add(msg.stroke);
  }
  ui.toast(msg.code ?? 'error', msg.message ?? JSON.stringify(msg));
  ui.setSaveState(app.pendingAcks.size ? 'saving' : 'saved');
  flushHistoryQueue();
}

// ---------------------------------------------------------------- geometry

function cssSize() {
  return { w: Math.max(1, canvas.clientWidth), h: Math.max(1, canvas.clientHeight) };
}

function matrices() {
  const { w, h } = cssSize();
  return app.camera.matrices(w, h);
}

/** Pick at a point given in canvas CSS pixels. */
function pickAt(x, y) {
  const t0 = performance.now();
  const r = pickAtInner(x, y);
  app.pickMs = performance.now() - t0;
  return r;
}

function pickAtInner(x, y) {
  if (!app.camera) return null;
  const { w, h } = cssSize();
  const m = app.camera.matrices(w, h);
  if (!m.invViewProj) return null;
  const ray = rayFromNdc(m.invViewProj, (x / w) * 2 - 1, 1 - (y / h) * 2);
  if (app.kind === 'side2d') return pickPlane(ray, 2, 0);
  const hit = pickMeshes(renderer.pickable(), ray, app.kind === 'map' ? Infinity : (app.camera.viewDistance ?? 400) * 3);
  if (hit) return hit;
  if (app.kind === 'map') {
    const b = app.world?.bounds;
    const p = pickPlane(ray, 1, 0);
    if (p && b && p.point[0] >= b.min[0] && p.point[0] <= b.max[0] && p.point[2] >= b.min[2] && p.point[2] <= b.max[2]) return p;
  }
  return null;
}

function worldToCss(p) {
  const { w, h } = cssSize();
  const m = matrices();
  const c = mat4.transform(m.viewProj, [p[0], p[1], p[2] ?? 0, 1]);
  if (c[3] <= 0) return null;
  return [((c[0] / c[3] + 1) / 2) * w, ((1 - c[1] / c[3]) / 2) * h];
}

// ---------------------------------------------------------------- strokes

function brushMode() {
  return app.kind === 'voxel' ? 2 : 1;
}

function dabPoint(hit) {
  const p = hit.point;
  if (app.kind === 'side2d') return [p[0], p[1], 0];
  return [p[0], p[1], p[2]];
}

function beginStroke(hit) {
  const tool = ui.tool;
  if (!tool || !app.ready) return;
  const id = `c${app.clientId ?? 0}-${++app.strokeSeq}`;
  const msg = {
    type: 'stroke_begin',
    stroke: id,
    tool: tool.name,
    radius: ui.radius,
    strength: ui.strength,
    shape: ui.shape,
    params: ui.paramValues(hit),
  };
  if (!send(msg)) return;
  app.stroke = { id, last: null, dabs: 0, failed: false, tool: tool.name };
  app.pendingAcks.add(id);
  ui.setSaveState('saving');
  addDab(hit);
}

function sendDab(at) {
  const s = app.stroke;
  const max = (app.limits.dabs_per_stroke ?? 10000) - 1;
  if (s.dabs >= max) return;
  send({ type: 'dab', stroke: s.id, at: at.map((v) => Math.round(v * 1000) / 1000) });
  s.dabs++;
  app.dabs++;
  s.last = at;
}

/** Sends dabs from the previous one to `hit`, one every quarter radius. */
function addDab(hit) {
  const s = app.stroke;
  if (!s || s.failed || !hit) return;
  const at = dabPoint(hit);
  if (!s.last) {
    sendDab(at);
    return;
  }
  const spacing = Math.max(ui.radius / 4, 0.05);
  const d = app.kind === 'voxel' ? vec3.dist(s.last, at) : Math.hypot(at[0] - s.last[0], at[1] - s.last[1], at[2] - s.last[2]);
  if (d < spacing) return;
  const steps = Math.min(Math.floor(d / spacing), 64);
  const from = s.last;
  for (let i = 1; i <= steps; i++) sendDab(vec3.lerp(from, at, (i * spacing) / d));
}

function endStroke() {
  const s = app.stroke;
  if (!s) return;
  send({ type: 'stroke_end', stroke: s.id });
  app.stroke = null;
}

/**
 * Undo and redo wait for this page's strokes: pressed while a stroke is
 * drawn or not yet acknowledged, they are queued and sent once its ack
 * arrives, so Ctrl+Z right after mouse-up undoes that very stroke.
 */
function historyAction(type) {
  if (app.stroke || app.pendingAcks.size > 0 || app.historyQueue.length > 0) {
    app.historyQueue.push(type);
    ui.setSaveState('queued');
    return;
  }
  send({ type });
}

function flushHistoryQueue() {
  if (app.stroke || app.pendingAcks.size > 0) return;
  while (app.historyQueue.length) send({ type: app.historyQueue.shift() });
}

function dropQueuedHistory(why) {
  if (!app.historyQueue.length) return;
  app.historyQueue.length = 0;
  ui.toast('undo_skipped', `undo/redo skipped: ${why}`, 'info');
}

function undo() {
  historyAction('undo');
}

function redo() {
  historyAction('redo');
}

// ---------------------------------------------------------------- camera

function sendCamera(force) {
  if (!app.ready || !(app.camera instanceof FlyCamera || app.camera instanceof MapCamera)) return;
  const now = performance.now();
  if (!force && now - app.lastCameraSent < 200) {
    app.cameraDirty = true;
    return;
  }
  app.lastCameraSent = now;
  app.cameraDirty = false;
  const c = app.camera;
  if (c instanceof MapCamera) {
    // A large map is streamed around the point looked at: chunks within
    // about the camera's distance of it come in full, the rest as a coarse
    // overview (the server caps the radius).
    const [lo, hi] = app.limits.view_distance ?? [1, 4000];
    send({
      type: 'camera',
      position: c.target.map((v) => Math.round(v * 100) / 100),
      view_distance: Math.min(hi, Math.max(lo, Math.round(c.dist * 1.5))),
    });
    return;
  }
  send({
    type: 'camera',
    position: c.pos.map((v) => Math.round(v * 100) / 100),
    forward: c.forward().map((v) => Math.round(v * 10000) / 10000),
    view_distance: c.viewDistance,
  });
}

function cameraChanged() {
  app.needsRender = true;
  app.hoverStale = true;
  app.minimap.frustumStale = true;
  sendCamera(false);
}

// ---------------------------------------------------------------- pathing overlay

// Overlay colours (RGBA, alpha is the blend) by pathing bits; the legend in
// index.html names them.
const PATHING_WALK = 1;
const PATHING_FLY = 2;
const PATHING_BUILD = 4;
const PATHING_SHALLOW = 8;
const PATHING_DEEP = 16;

function pathingColor(bits) {
  if (!(bits & PATHING_FLY)) return [200, 60, 220, 150];
  if (bits & PATHING_DEEP) return [40, 90, 220, 140];
  if (!(bits & PATHING_WALK)) return [230, 40, 40, 140];
  if (bits & PATHING_SHALLOW) return [60, 200, 230, 120];
  if (!(bits & PATHING_BUILD)) return [240, 200, 40, 120];
  return [60, 200, 80, 45];
}

function setPathingOverlay(on) {
  app.pathing.on = on;
  ui.setPathingOverlay(on);
  if (!on) {
    renderer.setOverlay(null);
    app.needsRender = true;
    app.minimap.dirty = true;
    return;
  }
  fetchPathing();
}

/** After an edit or an undo: the pathing overlay is fetched again. */
function overlayChanged() {
  if (app.pathing.on && app.kind === 'map') fetchPathing();
}

async function fetchPathing() {
  const pth = app.pathing;
  if (pth.busy) {
    pth.dirty = true;
    return;
  }
  pth.busy = true;
  pth.dirty = false;
  try {
    const r = await fetch('/api/pathing', { cache: 'no-store' });
    if (!r.ok) throw new Error(`the server answered ${r.status}`);
    const buf = await r.arrayBuffer();
    const view = new DataView(buf);
    const w = view.getUint32(0, true);
    const d = view.getUint32(4, true);
    const cells = new Uint8Array(buf, 8);
    if (cells.length !== w * d) throw new Error('a pathing grid of the wrong size');
    if (!pth.on || app.kind !== 'map') return;
    const rgba = new Uint8Array(w * d * 4);
    for (let i = 0; i < cells.length; i++) rgba.set(pathingColor(cells[i]), i * 4);
    const cs = app.world?.cell_size ?? 1;
    renderer.setOverlay(rgba, w, d, [0, 0, w * cs, d * cs]);
    pth.flags = cells;
    pth.w = w;
    pth.d = d;
    pth.version++;
    app.needsRender = true;
    app.minimap.dirty = true;
  } catch (e) {
    ui.toast('pathing', `cannot show the pathing overlay: ${e.message}`);
  } finally {
    pth.busy = false;
    if (pth.dirty) fetchPathing();
  }
}

// ---------------------------------------------------------------- overview map

const minimapCanvas = document.getElementById('minimap');
const minimapCtx = minimapCanvas.getContext('2d');

/** The rectangle the overview shows: [u0, v0, u1, v1] (x/z, or x/y side on). */
function minimapRect() {
  const b = app.world?.bounds;
  if (app.kind === 'side2d' && b) return [b.min[0], b.min[1], b.max[0], b.max[1]];
  if (app.kind === 'map' && b) return [b.min[0], b.min[2], b.max[0], b.max[2]];
  const tb = renderer.terrainBounds();
  if (!tb) return null;
  return [tb.min[0], tb.min[2], tb.max[0], tb.max[2]];
}

/** The rectangle fitted to the canvas's aspect, centred on the original. */
function fitRect(rect, w, h) {
  let [u0, v0, u1, v1] = rect;
  const rw = Math.max(1e-3, u1 - u0);
  const rh = Math.max(1e-3, v1 - v0);
  const aspect = w / h;
  if (rw / rh > aspect) {
    const nh = rw / aspect;
    const c = (v0 + v1) / 2;
    v0 = c - nh / 2;
    v1 = c + nh / 2;
  } else {
    const nw = rh * aspect;
    const c = (u0 + u1) / 2;
    u0 = c - nw / 2;
    u1 = c + nw / 2;
  }
  return [u0, v0, u1, v1];
}

function renderMinimap() {
  const mm = app.minimap;
  mm.dirty = false;
  mm.renderedAt = performance.now();
  const rect = minimapRect();
  if (!rect) {
    mm.image = null;
    drawMinimap();
    return;
  }
  const w = minimapCanvas.width;
  const h = minimapCanvas.height;
  mm.side = app.kind === 'side2d';
  mm.rect = fitRect(rect, w, h);
  const pixels = renderer.renderOverview(w, h, mm.rect, mm.side);
  mm.image = new ImageData(pixels, w, h);
  mm.renders++;
  drawMinimap();
}

/** World point (x/z, or x/y side on) to overview pixels. */
function toMinimap(p) {
  const mm = app.minimap;
  const [u0, v0, u1, v1] = mm.rect;
  const w = minimapCanvas.width;
  const h = minimapCanvas.height;
  const x = ((p[0] - u0) / (u1 - u0)) * w;
  // top-down: -z is up; side on: +y is up
  const y = mm.side ? ((v1 - p[1]) / (v1 - v0)) * h : ((p[1] - v0) / (v1 - v0)) * h;
  return [x, y];
}

function fromMinimap(x, y) {
  const mm = app.minimap;
  const [u0, v0, u1, v1] = mm.rect;
  const u = u0 + (x / minimapCanvas.width) * (u1 - u0);
  const v = mm.side ? v1 - (y / minimapCanvas.height) * (v1 - v0) : v0 + (y / minimapCanvas.height) * (v1 - v0);
  return [u, v];
}

/**
 * What the view shows, as a polygon on the overview's plane: the corners of
 * the screen cast onto the ground (or the side view's rectangle).
 */
function viewFootprint() {
  if (!app.camera) return null;
  const m = matrices();
  if (!m.invViewProj) return null;
  if (app.camera.kind === 'side') {
    const pts = [
      [-1, -1],
      [1, -1],
      [1, 1],
      [-1, 1],
    ].map(([x, y]) => rayFromNdc(m.invViewProj, x, y).origin);
    return pts.map((p) => [p[0], p[1]]);
  }
  const tb = renderer.terrainBounds();
  const ground = app.camera.kind === 'map' ? app.camera.target[1] : tb ? (tb.min[1] + tb.max[1]) / 2 : 0;
  const far = app.camera.kind === 'map' ? app.camera.dist * 4 : (app.camera.viewDistance ?? 256);
  const eye = m.eye;
  const out = [];
  for (const [x, y] of [
    [-1, -1],
    [1, -1],
    [1, 1],
    [-1, 1],
  ]) {
    const ray = rayFromNdc(m.invViewProj, x, y);
    let t = far;
    if (ray.dir[1] < -1e-4) t = Math.min(far, (ground - ray.origin[1]) / ray.dir[1]);
    if (!(t > 0)) t = far;
    const p = vec3.add(ray.origin, vec3.scale(ray.dir, t));
    out.push([p[0], p[2]]);
  }
  out.push([eye[0], eye[2]]);
  return out;
}

function drawMinimap() {
  const mm = app.minimap;
  mm.frustumStale = false;
  const w = minimapCanvas.width;
  const h = minimapCanvas.height;
  minimapCtx.fillStyle = '#1b1e22';
  minimapCtx.fillRect(0, 0, w, h);
  if (!mm.image || !mm.rect) return;
  minimapCtx.putImageData(mm.image, 0, 0);
  const fp = viewFootprint();
  mm.footprint = fp;
  if (!fp) return;
  const corners = (mm.side ? fp : fp.slice(0, 4)).map(toMinimap);
  minimapCtx.beginPath();
  corners.forEach(([x, y], i) => (i ? minimapCtx.lineTo(x, y) : minimapCtx.moveTo(x, y)));
  minimapCtx.closePath();
  minimapCtx.fillStyle = 'rgba(255, 220, 80, 0.15)';
  minimapCtx.fill();
  minimapCtx.strokeStyle = 'rgba(255, 220, 80, 0.95)';
  minimapCtx.lineWidth = 1.5;
  minimapCtx.stroke();
  if (!mm.side) {
    const [ex, ey] = toMinimap(fp[4]);
    minimapCtx.fillStyle = '#ffdc50';
    minimapCtx.beginPath();
    minimapCtx.arc(ex, ey, 3, 0, Math.PI * 2);
    minimapCtx.fill();
  }
}

/** Moves the view so that it looks at overview pixel (x, y). */
function minimapJump(x, y) {
  const mm = app.minimap;
  if (!mm.rect || !app.camera) return;
  const [u, v] = fromMinimap(x, y);
  const cam = app.camera;
  if (cam.kind === 'side') {
    cam.cx = u;
    cam.cy = v;
  } else if (cam.kind === 'map') {
    cam.target = [u, cam.target[1], v];
  } else {
    // keep height and heading; put the point where the view's centre meets
    // the ground
    const tb = renderer.terrainBounds();
    const ground = tb ? (tb.min[1] + tb.max[1]) / 2 : 0;
    const f = cam.forward();
    const flat = Math.hypot(f[0], f[2]);
    let back = 0;
    if (f[1] < -0.05 && flat > 1e-3) back = ((cam.pos[1] - ground) / -f[1]) * flat;
    back = Math.min(back, (cam.viewDistance ?? 256) * 0.8);
    cam.pos = [u - (f[0] / (flat || 1)) * back, cam.pos[1], v - (f[2] / (flat || 1)) * back];
  }
  cameraChanged();
  sendCamera(true);
}

let minimapDrag = false;
minimapCanvas.addEventListener('pointerdown', (ev) => {
  if (ev.button !== 0) return;
  minimapDrag = true;
  minimapCanvas.setPointerCapture(ev.pointerId);
  minimapJump(ev.offsetX * (minimapCanvas.width / minimapCanvas.clientWidth), ev.offsetY * (minimapCanvas.height / minimapCanvas.clientHeight));
});
minimapCanvas.addEventListener('pointermove', (ev) => {
  if (!minimapDrag) return;
  minimapJump(ev.offsetX * (minimapCanvas.width / minimapCanvas.clientWidth), ev.offsetY * (minimapCanvas.height / minimapCanvas.clientHeight));
});
for (const t of ['pointerup', 'pointercancel', 'lostpointercapture']) minimapCanvas.addEventListener(t, () => (minimapDrag = false));

// ---------------------------------------------------------------- input

function localPoint(ev) {
  const r = canvas.getBoundingClientRect();
  return [ev.clientX - r.left, ev.clientY - r.top];
}

canvas.addEventListener('contextmenu', (ev) => ev.preventDefault());

canvas.addEventListener('pointerdown', (ev) => {
  canvas.focus({ preventScroll: true });
  const [x, y] = localPoint(ev);
  app.pointer = { x, y, inside: true, moved: true };
  if (!app.camera) return;
  const view = app.camera.kind;
  let mode = null;
  if (ev.button === 0 && !(app.spaceHeld && view !== 'fly')) mode = 'paint';
  else if (ev.button === 0) mode = 'pan';
  else if (ev.button === 1) mode = view === 'map' ? 'rotate' : 'pan';
  else if (ev.button === 2) mode = view === 'fly' ? 'rotate' : ev.shiftKey && view === 'map' ? 'rotate' : 'pan';
  if (!mode) return;
  ev.preventDefault();
  canvas.setPointerCapture(ev.pointerId);
  if (mode === 'paint') {
    if (app.drag || app.stroke) return;
    const hit = pickAt(x, y);
    app.hover = hit;
    // pressed over nothing: the stroke starts where the drag first meets ground
    app.armed = true;
    if (hit) beginStroke(hit);
    app.needsRender = true;
    return;
  }
  app.drag = { mode, x: ev.clientX, y: ev.clientY, button: ev.button };
  canvas.classList.add('panning');
});

canvas.addEventListener('pointermove', (ev) => {
  const [x, y] = localPoint(ev);
  app.pointer = { x, y, inside: true, moved: true };
  if (app.drag) {
    const dx = ev.clientX - app.drag.x;
    const dy = ev.clientY - app.drag.y;
    app.drag.x = ev.clientX;
    app.drag.y = ev.clientY;
    const { w, h } = cssSize();
    if (app.drag.mode === 'pan') app.camera.pan(dx, dy, w, h);
    else app.camera.rotate(dx, dy);
    cameraChanged();
    return;
  }
  if (app.stroke || app.armed) {
    const hit = pickAt(x, y);
    if (hit) {
      app.hover = hit;
      if (app.stroke) addDab(hit);
      else beginStroke(hit);
    }
    app.needsRender = true;
    return;
  }
  app.hoverStale = true;
  app.needsRender = true;
});

function endPointer(ev) {
  if (ev.button === 0 || ev.type !== 'pointerup') {
    app.armed = false;
    if (app.stroke) endStroke();
  }
  if (app.drag && (ev.type !== 'pointerup' || ev.button === app.drag.button)) {
    app.drag = null;
    canvas.classList.remove('panning');
    sendCamera(true);
  }
  app.needsRender = true;
}
canvas.addEventListener('pointerup', endPointer);
canvas.addEventListener('pointercancel', endPointer);
canvas.addEventListener('lostpointercapture', endPointer);

canvas.addEventListener('pointerleave', () => {
  if (app.stroke || app.drag || app.armed) return;
  app.pointer.inside = false;
  app.hover = null;
  app.needsRender = true;
  ui.setCursor(null);
});

canvas.addEventListener(
  'wheel',
  (ev) => {
    if (!app.camera) return;
    ev.preventDefault();
    const [x, y] = localPoint(ev);
    const { w, h } = cssSize();
    let dy = ev.deltaY;
    if (ev.deltaMode === 1) dy *= 16;
    else if (ev.deltaMode === 2) dy *= h;
    dy = clamp(dy, -400, 400);
    app.camera.zoom(dy, (x / w) * 2 - 1, 1 - (y / h) * 2, w, h);
    cameraChanged();
  },
  { passive: false },
);

function typingTarget(t) {
  if (!t || !t.tagName) return false;
  const tag = t.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return !['range', 'checkbox', 'radio', 'button'].includes(t.type);
  return t.isContentEditable;
}

const MOVE_KEYS = new Set(['KeyW', 'KeyA', 'KeyS', 'KeyD', 'KeyQ', 'KeyE', 'KeyC', 'Space', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'ShiftLeft', 'ShiftRight']);

function toggleKeysHelp() {
  if (!app.camera) return;
  const extra = app.kind === 'map' ? [['P', 'pathing overlay on/off']] : [];
  ui.toggleKeys(app.camera.helpText(), extra);
}

window.addEventListener('keydown', (ev) => {
  if (ev.key === '?' && !typingTarget(ev.target)) {
    const keys = document.getElementById('keys-dialog');
    if (keys.open || !document.querySelector('dialog[open]')) {
      ev.preventDefault();
      toggleKeysHelp();
      return;
    }
  }
  if (typingTarget(ev.target) || document.querySelector('dialog[open]')) return;
  const ctrl = ev.ctrlKey || ev.metaKey;
  if (ctrl && (ev.key === 'z' || ev.key === 'Z')) {
    ev.preventDefault();
    if (ev.shiftKey) redo();
    else undo();
    return;
  }
  if (ctrl && (ev.key === 'y' || ev.key === 'Y')) {
    ev.preventDefault();
    redo();
    return;
  }
  if (ctrl || ev.altKey) return;
  if (ev.key === 'Home') {
    ev.preventDefault();
    resetView();
    return;
  }
  if ((ev.key === 'p' || ev.key === 'P') && app.kind === 'map' && !app.tools.some((t) => t.key === ev.key)) {
    ev.preventDefault();
    app.pathing.auto = false;
    setPathingOverlay(!app.pathing.on);
    return;
  }
  if (ev.key === '[' || ev.key === ']') {
    ev.preventDefault();
    ui.stepRadius(ev.key === ']' ? 1 : -1);
    app.needsRender = true;
    return;
  }
  const t = app.tools.find((tool) => tool.key && tool.key === ev.key);
  if (t) {
    ev.preventDefault();
    ui.selectTool(t.name);
    app.needsRender = true;
    return;
  }
  if (ev.code === 'Space') {
    app.spaceHeld = true;
    if (ev.target === document.body || ev.target === canvas || ev.target?.tagName === 'BUTTON') ev.preventDefault();
  }
  if (MOVE_KEYS.has(ev.code)) {
    if (ev.target?.tagName === 'INPUT' && ev.code.startsWith('Arrow')) return;
    app.keys.add(ev.code);
    app.needsRender = true;
  }
});

window.addEventListener('keyup', (ev) => {
  if (ev.code === 'Space') app.spaceHeld = false;
  app.keys.delete(ev.code);
});

window.addEventListener('blur', () => {
  app.keys.clear();
  app.spaceHeld = false;
});

// ---------------------------------------------------------------- UI wiring

ui.onUndo = undo;
ui.onRedo = redo;
ui.onChange = () => {
  app.needsRender = true;
  // the pathing tool shows the pathing overlay while it is picked
  if (app.kind !== 'map') return;
  const pathingTool = ui.tool?.name === 'pathing';
  if (pathingTool && !app.pathing.on) {
    app.pathing.auto = true;
    setPathingOverlay(true);
  } else if (!pathingTool && app.pathing.auto && app.pathing.on) {
    app.pathing.auto = false;
    setPathingOverlay(false);
  }
};
document.getElementById('pathing-overlay').addEventListener('change', (ev) => {
  app.pathing.auto = false;
  setPathingOverlay(ev.target.checked);
});
document.getElementById('reset-view').addEventListener('click', resetView);
document.getElementById('keys-help').addEventListener('click', toggleKeysHelp);
ui.onViewDistance = (v) => {
  if (!(app.camera instanceof FlyCamera)) return;
  app.camera.viewDistance = v;
  app.needsRender = true;
  sendCamera(true);
};
ui.onNewWorld = (spec) => {
  if (!send({ type: 'new_world', ...spec })) ui.toast('offline', 'not connected to the server');
};

const ro = new ResizeObserver((entries) => {
  for (const e of entries) {
    const dp = e.devicePixelContentBoxSize?.[0];
    if (dp) {
      renderer.deviceWidth = dp.inlineSize;
      renderer.deviceHeight = dp.blockSize;
    } else {
      renderer.deviceWidth = Math.round(e.contentRect.width * devicePixelRatio);
      renderer.deviceHeight = Math.round(e.contentRect.height * devicePixelRatio);
    }
  }
  app.needsRender = true;
  app.hoverStale = true;
});
try {
  ro.observe(canvas, { box: 'device-pixel-content-box' });
} catch {
  ro.observe(canvas);
}

// ---------------------------------------------------------------- frame loop

let lastTick = performance.now();
const renderTimes = [];

/** Uploads waiting mesh frames, oldest first, for at most `budgetMs`. */
function applyFrames(budgetMs) {
  if (!app.pendingFrames.size) return;
  const t0 = performance.now();
  for (const [key, frame] of app.pendingFrames) {
    app.pendingFrames.delete(key);
    renderer.upsert(frame);
    if (performance.now() - t0 > budgetMs) break;
  }
  app.needsRender = true;
  app.hoverStale = true;
  app.minimap.dirty = true;
}

/**
 * How long the last frame took (from its start to the next animation frame,
 * which waits for the GPU) steers the resolution: slow frames lower it while
 * things move, fast ones raise it again.
 */
function adaptScale(now) {
  if (!app.renderPending) return;
  app.renderPending = false;
  if (!ADAPTIVE) return;
  // a sharp frame after a low-resolution one says nothing about the scale
  if (app.renderWasRefine) return;
  const cost = now - app.renderStartedAt;
  if (cost > SLOW_FRAME_MS) app.renderScale = Math.max(MIN_SCALE, app.renderScale * 0.75);
  else if (cost < FAST_FRAME_MS && app.renderScale < 1) app.renderScale = Math.min(1, app.renderScale * 1.15);
}

function tick(now) {
  const dt = Math.min(0.1, (now - lastTick) / 1000);
  lastTick = now;
  adaptScale(now);
  applyFrames(UPLOAD_BUDGET_MS);
  if (app.camera && app.keys.size && !(app.keys.size === 1 && app.keys.has('Space') && app.camera.kind !== 'fly')) {
    const { w, h } = cssSize();
    if (app.camera.update(dt, app.keys, w, h)) cameraChanged();
  }
  if (app.cameraDirty && now - app.lastCameraSent >= 200) sendCamera(true);
  if (app.camera && app.pointer.inside && app.hoverStale && !app.stroke && !app.drag) {
    app.hoverStale = false;
    app.hover = pickAt(app.pointer.x, app.pointer.y);
    app.needsRender = true;
  }
  if (app.camera && renderer.needsResize()) {
    app.needsRender = true;
    app.hoverStale = true;
  }
  if (app.needsRender) app.lastChangeAt = now;
  // still for a while after a low-resolution frame: draw it sharp once
  const refine = !app.needsRender && !app.lastRenderFull && now - app.lastChangeAt >= REFINE_AFTER_MS;
  if ((app.needsRender || refine || app.forceFull) && app.camera) {
    app.needsRender = false;
    const { h } = cssSize();
    const tool = ui.tool;
    const showBrush = app.hover && (app.pointer.inside || app.stroke) && tool;
    const full = refine || app.forceFull || app.renderScale >= 1;
    app.renderWasRefine = full && app.renderScale < 1;
    app.forceFull = false;
    renderer.scale = full ? 1 : app.renderScale;
    // Frames drawn at reduced resolution (a slow GPU while things move)
    // skip the detail textures too; the sharp frame that follows has them.
    renderer.setDetail(DETAIL && full, ...app.detailUnits);
    const t0 = performance.now();
    app.renderStartedAt = now;
    app.renderPending = true;
    renderer.render(matrices(), {
      brush: showBrush
        ? { pos: app.hover.point, radius: ui.radius, strength: ui.strength, color: tool.color, mode: brushMode(), shape: ui.shape }
        : null,
      worldPerPixel: app.camera.worldPerPixel?.(h) ?? 1,
      viewDistance: app.camera.viewDistance ?? 0,
      // Voxel chunks end on a sphere around the camera, which cuts far hills
      // into floating slivers: fog hides that edge. Heightmap chunks end on
      // the horizon, so their fog only starts near the view distance.
      fog: app.kind === 'voxel' ? [0.6, 1.0] : [0.9, 2.2],
    });
    app.renders++;
    app.lastRenderFull = full;
    app.lastRenderAt = performance.now();
    app.renderMs = app.lastRenderAt - t0;
    renderTimes.push(now);
    ui.setCursor(showBrush ? app.hover.point : null);
  }
  // the overview: redrawn at most once a second, and not while painting
  const mm = app.minimap;
  if (app.camera && app.ready && mm.dirty && !app.stroke && now - mm.renderedAt >= MINIMAP_EVERY_MS) renderMinimap();
  else if (mm.frustumStale) drawMinimap();
  while (renderTimes.length && renderTimes[0] < now - 1000) renderTimes.shift();
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);

setInterval(() => {
  ui.setCounters({
    chunks: renderer.knownCount(),
    tris: renderer.triangleCount(),
    fps: renderTimes.length,
    scale: renderer.scale,
  });
}, 250);

// ---------------------------------------------------------------- test hook

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A small read-only view of the editor state for automated tests, plus a few
 * helpers: coordinates between world and page pixels, and `settle()` which
 * resolves once the page is connected, nothing is pending and no mesh frame
 * arrived for `quietMs`.
 */
window.isoterra = {
  /** The new-world dialog's generator panel: previews drawn, the last
   *  one's round trip in ms, its error, whether one is in flight or
   *  wanted, and the recipe it would create. */
  get recipe() {
    const r = ui.recipe;
    return { previews: r.previews, lastMs: r.lastMs, lastError: r.lastError, busy: r.inFlight || r.dirty, modified: r.modified, preset: r.preset, current: r.recipe ? r.current() : null };
  },
  get ready() {
    return app.ready;
  },
  /** Whether the terrain is drawn with the detail textures now. */
  get detail() {
    return renderer.detailActive;
  },
  /** Culling on or off (as `?cull=0`), from the next frame. */
  setCull(on) {
    renderer.cull = !!on;
    app.needsRender = true;
  },
  /** Detail textures on or off (as `?detail=0`), from the next frame. */
  setDetail(on) {
    DETAIL = !!on;
    renderer.setDetail(DETAIL, ...app.detailUnits);
    app.needsRender = true;
  },
  get connected() {
    return app.connected;
  },
  get kind() {
    return app.kind;
  },
  get world() {
    return app.world;
  },
  get tools() {
    return app.tools.map((t) => t.name);
  },
  get tool() {
    return ui.tool?.name ?? null;
  },
  /** `{name, color, key, params}` of a tool of this world, or null. */
  toolInfo(name) {
    const t = app.tools.find((x) => x.name === name);
    return t ? JSON.parse(JSON.stringify(t)) : null;
  },
  /** Milliseconds of the last draw call batch and of the last pick. */
  get timings() {
    return { render: app.renderMs ?? 0, pick: app.pickMs ?? 0 };
  },
  /** Dabs this page has sent. */
  get dabs() {
    return app.dabs;
  },
  get historyEvents() {
    return app.historyEvents;
  },
  get radius() {
    return ui.radius;
  },
  get strength() {
    return ui.strength;
  },
  get chunks() {
    return renderer.chunkCount();
  },
  get meshes() {
    return renderer.meshes.size;
  },
  /** The LOD of the terrain mesh held for chunk `[x, y, z]`, or null. */
  lodOf(chunk) {
    return renderer.meshes.get(chunkKey(LAYER_TERRAIN, chunk))?.lod ?? null;
  },
  /** Terrain meshes held, by LOD (a large map: 0 in full, 1 overview tiles). */
  get lods() {
    const n = {};
    for (const m of renderer.meshes.values()) if (m.layer === LAYER_TERRAIN) n[m.lod] = (n[m.lod] ?? 0) + 1;
    return n;
  },
  /** Draw calls and triangles of the last frame of the main view (meshes
   *  outside the view are not drawn). */
  get drawn() {
    return { ...(renderer.lastDrawn ?? { calls: 0, tris: 0 }) };
  },
  /** Bounding box of every mesh held: `{min, max}` or null. */
  meshBounds() {
    const min = [Infinity, Infinity, Infinity];
    const max = [-Infinity, -Infinity, -Infinity];
    for (const m of renderer.meshes.values()) {
      for (let k = 0; k < 3; k++) {
        min[k] = Math.min(min[k], m.min[k]);
        max[k] = Math.max(max[k], m.max[k]);
      }
    }
    return renderer.meshes.size ? { min, max } : null;
  },
  get frames() {
    return app.frames;
  },
  get frameErrors() {
    return app.frameErrors;
  },
  get lastAck() {
    return app.lastAck;
  },
  get acks() {
    return app.acks.length;
  },
  get errors() {
    return app.errors.slice();
  },
  get history() {
    return { ...app.history };
  },
  get status() {
    return app.status;
  },
  get renders() {
    return app.renders;
  },
  get pending() {
    return app.pendingAcks.size + (app.stroke ? 1 : 0);
  },
  get welcomes() {
    return app.welcomes;
  },
  get devicePixelRatio() {
    return devicePixelRatio;
  },
  get canvasSize() {
    return [canvas.width, canvas.height];
  },
  camera() {
    return app.camera?.state() ?? null;
  },
  setCamera(state) {
    app.camera?.setState(state);
    if (app.camera instanceof FlyCamera) ui.setViewDistance(app.camera.viewDistance, app.limits.view_distance);
    cameraChanged();
    sendCamera(true);
  },
  selectTool(name) {
    ui.selectTool(name);
    return ui.tool?.name === name;
  },
  setRadius(r) {
    ui.setRadius(r);
  },
  setStrength(s) {
    ui.setStrength(s);
  },
  setParam(name, value) {
    ui.setParam(name, value);
  },
  /** Acks and history events in arrival order: `{type, stroke, id | action}`. */
  get events() {
    return app.events.map((e) => ({ ...e }));
  },
  /** Undo/redo presses waiting for a stroke's ack. */
  get queuedHistory() {
    return app.historyQueue.length;
  },
  /** Resolution scale of the last frame (1 = full). */
  get renderScale() {
    return renderer.scale;
  },
  get lastRenderFull() {
    return app.lastRenderFull;
  },
  /** The status bar's text. */
  statusText() {
    return [...document.querySelectorAll('#statusbar .st')].map((e) => e.textContent).join(' | ');
  },
  /** `{on, version, cells}` of the pathing overlay; cells counts by colour class. */
  pathingOverlay() {
    const p = app.pathing;
    return { on: p.on, version: p.version, busy: p.busy, w: p.w, d: p.d };
  },
  /** The overview: renders so far, its world rectangle and the view's footprint. */
  minimap() {
    const mm = app.minimap;
    return { renders: mm.renders, rect: mm.rect, footprint: viewFootprint(), side: mm.side };
  },
  /** Overview pixels of a world point (x/z, or x/y side on), in page pixels. */
  minimapToPage(u, v) {
    if (!app.minimap.rect) return null;
    const [x, y] = toMinimap([u, v]);
    const r = minimapCanvas.getBoundingClientRect();
    return [r.left + (x * r.width) / minimapCanvas.width, r.top + (y * r.height) / minimapCanvas.height];
  },
  /** Renders the overview now. */
  refreshMinimap() {
    renderMinimap();
    return app.minimap.renders;
  },
  /** Sends one raw JSON message, as the page itself would. */
  send(msg) {
    return send(msg);
  },
  /** Page (client) pixel coordinates of a world point, or null if behind. */
  toScreen(p) {
    const c = worldToCss(p);
    if (!c) return null;
    const r = canvas.getBoundingClientRect();
    return [r.left + c[0], r.top + c[1]];
  },
  /** The world point under a page pixel (what a brush there would hit), or null. */
  toWorld(px, py) {
    const r = canvas.getBoundingClientRect();
    return pickAt(px - r.left, py - r.top)?.point ?? null;
  },
  canvasRect() {
    const r = canvas.getBoundingClientRect();
    return { x: r.left, y: r.top, width: r.width, height: r.height };
  },
  async settle(quietMs = 500, timeoutMs = 30000) {
    const start = performance.now();
    for (;;) {
      const now = performance.now();
      const quiet = now - app.lastFrameAt >= quietMs;
      const drawn = app.lastRenderAt >= app.lastFrameAt && !app.needsRender && app.pendingFrames.size === 0 && app.lastRenderFull;
      const overlay = !app.pathing.busy && !app.pathing.dirty;
      // the server's chunk count must have been reported after the last
      // camera move and have stayed put for a while (streaming is done)
      const streamed =
        app.status !== null &&
        app.statusAt > Math.max(app.lastCameraSent, app.welcomeAt) &&
        now - Math.max(app.chunksChangedAt, app.lastCameraSent) >= Math.max(quietMs, 1100);
      const queued = app.historyQueue.length === 0;
      if (app.ready && app.connected && quiet && drawn && overlay && queued && streamed && app.pendingAcks.size === 0 && !app.stroke) return true;
      if (now - start > timeoutMs) return false;
      await sleep(50);
    }
  },
  /**
   * Draws one frame at full resolution and waits for the GPU to finish it
   * (a pixel read back); its wall time in ms.
   */
  frameCost() {
    const gl = renderer.gl;
    const t0 = performance.now();
    app.forceFull = true;
    renderer.scale = 1;
    renderer.setDetail(DETAIL, ...app.detailUnits);
    renderer.render(matrices(), {
      brush: null,
      worldPerPixel: app.camera.worldPerPixel?.(cssSize().h) ?? 1,
      viewDistance: app.camera.viewDistance ?? 0,
      fog: app.kind === 'voxel' ? [0.6, 1.0] : [0.9, 2.2],
    });
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
    return performance.now() - t0;
  },
  /** Renders now (even when nothing changed) and resolves after it. */
  async redraw() {
    app.needsRender = true;
    app.forceFull = true;
    const n = app.renders;
    for (let i = 0; i < 500 && app.renders === n; i++) await sleep(20);
    return app.renders > n;
  },
};
