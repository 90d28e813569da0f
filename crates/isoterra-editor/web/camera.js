// Cameras, one per kind of view: an orthographic side view (side2d), a tilted
// top-down strategy-game camera (map) and a free-fly camera (heightmap, voxel).
// Every camera answers `matrices(width, height)` in CSS pixels and reacts to
// drags, the wheel and held keys.

import { mat4, vec3, clamp } from './math.js';

function finishMatrices(view, proj, eye) {
  const viewProj = mat4.multiply(proj, view);
  return { view, proj, viewProj, invViewProj: mat4.invert(viewProj), eye };
}

/** Orthographic camera looking down -z at the x/y plane (x right, y up). */
export class SideCamera {
  constructor() {
    this.kind = 'side';
    this.cx = 0;
    this.cy = 0;
    this.halfH = 64;
    this.ortho = true;
  }

  fit(bounds, width, height) {
    const min = bounds?.min ?? [0, 0, 0];
    const max = bounds?.max ?? [256, 128, 0];
    const w = Math.max(1, max[0] - min[0]);
    const h = Math.max(1, max[1] - min[1]);
    const aspect = width / Math.max(1, height);
    this.cx = (min[0] + max[0]) / 2;
    this.cy = (min[1] + max[1]) / 2;
    this.halfH = Math.max(h / 2, w / 2 / aspect) * 1.06;
  }

  matrices(width, height) {
    const aspect = width / Math.max(1, height);
    const hw = this.halfH * aspect;
    const proj = mat4.ortho(this.cx - hw, this.cx + hw, this.cy - this.halfH, this.cy + this.halfH, -1000, 1000);
    return finishMatrices(mat4.identity(), proj, [this.cx, this.cy, 1000]);
  }

  worldPerPixel(height) {
    return (2 * this.halfH) / Math.max(1, height);
  }

  pan(dx, dy, width, height) {
    const s = this.worldPerPixel(height);
    this.cx -= dx * s;
    this.cy += dy * s;
  }

  rotate() {}

  zoom(deltaY, ndcX, ndcY, width, height) {
    const aspect = width / Math.max(1, height);
    const wx = this.cx + ndcX * this.halfH * aspect;
    const wy = this.cy + ndcY * this.halfH;
    const nh = clamp(this.halfH * Math.exp(deltaY * 0.0015), 2, 1e5);
    this.cx = wx - ndcX * nh * aspect;
    this.cy = wy - ndcY * nh;
    this.halfH = nh;
  }

  update(dt, keys, width, height) {
    let dx = 0;
    let dy = 0;
    if (keys.has('KeyA') || keys.has('ArrowLeft')) dx += 1;
    if (keys.has('KeyD') || keys.has('ArrowRight')) dx -= 1;
    if (keys.has('KeyW') || keys.has('ArrowUp')) dy += 1;
    if (keys.has('KeyS') || keys.has('ArrowDown')) dy -= 1;
    if (!dx && !dy) return false;
    const px = 600 * dt;
    this.pan(dx * px, dy * px, width, height);
    return true;
  }

  state() {
    return { cx: this.cx, cy: this.cy, halfH: this.halfH };
  }

  setState(s) {
    Object.assign(this, s);
  }

  helpText() {
    return 'Left drag: paint · Right/middle drag or Space+drag: pan · Wheel: zoom · WASD: pan';
  }
}

/** A tilted camera orbiting a point on the ground (x/z plane, y up). */
export class MapCamera {
  constructor() {
    this.kind = 'map';
    this.target = [128, 0, 128];
    this.yaw = 0;
    this.pitch = 0.95;
    this.dist = 300;
    this.fov = (40 * Math.PI) / 180;
    this.ortho = false;
  }

  eye() {
    const cp = Math.cos(this.pitch);
    return vec3.add(this.target, [
      this.dist * cp * Math.sin(this.yaw),
      this.dist * Math.sin(this.pitch),
      this.dist * cp * Math.cos(this.yaw),
    ]);
  }

  fit(bounds, width, height) {
    const min = bounds?.min ?? [0, 0, 0];
    const max = bounds?.max ?? [256, 16, 256];
    this.target = [(min[0] + max[0]) / 2, Math.max(0, min[1]), (min[2] + max[2]) / 2];
    const size = Math.max(max[0] - min[0], max[2] - min[2], 8);
    const aspect = width / Math.max(1, height);
    // the map's far edge is smaller on screen than its near edge: fit the
    // width at the centre with a little room, and the depth vertically
    const fitW = size / 2 / (Math.tan(this.fov / 2) * aspect);
    const fitH = (size / 2) * Math.sin(0.95) / Math.tan(this.fov / 2);
    this.dist = Math.max(fitW, fitH) * 1.02 + size * 0.1;
    this.yaw = 0;
    this.pitch = 0.95;
  }

  matrices(width, height) {
    const aspect = width / Math.max(1, height);
    const eye = this.eye();
    const near = Math.max(0.1, this.dist * 0.02);
    const proj = mat4.perspective(this.fov, aspect, near, this.dist * 6 + 2000);
    const view = mat4.lookAt(eye, this.target, [0, 1, 0]);
    return finishMatrices(view, proj, eye);
  }

  pan(dx, dy, width, height) {
    const s = (2 * this.dist * Math.tan(this.fov / 2)) / Math.max(1, height);
    const right = [Math.cos(this.yaw), 0, -Math.sin(this.yaw)];
    const back = [Math.sin(this.yaw), 0, Math.cos(this.yaw)];
    this.target = vec3.add(this.target, vec3.add(vec3.scale(right, -dx * s), vec3.scale(back, -dy * s / Math.max(0.3, Math.sin(this.pitch)))));
  }

  rotate(dx, dy) {
    this.yaw -= dx * 0.005;
    this.pitch = clamp(this.pitch + dy * 0.005, 0.15, 1.55);
  }

  zoom(deltaY) {
    this.dist = clamp(this.dist * Math.exp(deltaY * 0.0015), 4, 20000);
  }

  update(dt, keys, width, height) {
    let changed = false;
    let dx = 0;
    let dy = 0;
    if (keys.has('KeyA') || keys.has('ArrowLeft')) dx += 1;
    if (keys.has('KeyD') || keys.has('ArrowRight')) dx -= 1;
    if (keys.has('KeyW') || keys.has('ArrowUp')) dy += 1;
    if (keys.has('KeyS') || keys.has('ArrowDown')) dy -= 1;
    if (dx || dy) {
      const px = 500 * dt;
      this.pan(dx * px, dy * px, width, height);
      changed = true;
    }
    if (keys.has('KeyQ')) {
      this.yaw += 1.5 * dt;
      changed = true;
    }
    if (keys.has('KeyE')) {
      this.yaw -= 1.5 * dt;
      changed = true;
    }
    return changed;
  }

  state() {
    return { target: [...this.target], yaw: this.yaw, pitch: this.pitch, dist: this.dist };
  }

  setState(s) {
    Object.assign(this, s);
  }

  helpText() {
    return 'Left drag: paint · Right drag / WASD: pan · Middle or Shift+right drag: rotate · Q/E: turn · Wheel: zoom';
  }
}

/** A free-fly camera: WASD to move, right drag to look around. */
export class FlyCamera {
  constructor(start) {
    this.kind = 'fly';
    this.pos = start?.pos ?? [0, 80, 0];
    this.yaw = start?.yaw ?? Math.PI / 4;
    this.pitch = start?.pitch ?? -0.45;
    this.fov = (60 * Math.PI) / 180;
    this.speed = 40;
    this.viewDistance = start?.viewDistance ?? 400;
    this.ortho = false;
  }

  forward() {
    const cp = Math.cos(this.pitch);
    return [cp * Math.sin(this.yaw), Math.sin(this.pitch), cp * Math.cos(this.yaw)];
  }

  right() {
    return vec3.normalize(vec3.cross(this.forward(), [0, 1, 0]));
  }

  fit() {}

  matrices(width, height) {
    const aspect = width / Math.max(1, height);
    const proj = mat4.perspective(this.fov, aspect, 0.2, this.viewDistance * 2.5);
    const view = mat4.lookAt(this.pos, vec3.add(this.pos, this.forward()), [0, 1, 0]);
    return finishMatrices(view, proj, [...this.pos]);
  }

  rotate(dx, dy) {
    this.yaw -= dx * 0.004;
    this.pitch = clamp(this.pitch - dy * 0.004, -1.55, 1.55);
  }

  pan(dx, dy, width, height) {
    const s = this.speed / Math.max(1, height);
    this.pos = vec3.add(this.pos, vec3.add(vec3.scale(this.right(), -dx * s * 4), [0, dy * s * 4, 0]));
  }

  zoom(deltaY) {
    this.pos = vec3.add(this.pos, vec3.scale(this.forward(), -deltaY * 0.05 * (this.speed / 40)));
  }

  update(dt, keys) {
    let move = [0, 0, 0];
    const f = this.forward();
    const r = this.right();
    if (keys.has('KeyW') || keys.has('ArrowUp')) move = vec3.add(move, f);
    if (keys.has('KeyS') || keys.has('ArrowDown')) move = vec3.sub(move, f);
    if (keys.has('KeyD') || keys.has('ArrowRight')) move = vec3.add(move, r);
    if (keys.has('KeyA') || keys.has('ArrowLeft')) move = vec3.sub(move, r);
    if (keys.has('KeyE') || keys.has('Space')) move = vec3.add(move, [0, 1, 0]);
    if (keys.has('KeyQ') || keys.has('KeyC')) move = vec3.sub(move, [0, 1, 0]);
    if (vec3.length(move) === 0) return false;
    const fast = keys.has('ShiftLeft') || keys.has('ShiftRight') ? 4 : 1;
    this.pos = vec3.add(this.pos, vec3.scale(vec3.normalize(move), this.speed * fast * dt));
    return true;
  }

  state() {
    return { pos: [...this.pos], yaw: this.yaw, pitch: this.pitch };
  }

  setState(s) {
    Object.assign(this, s);
  }

  helpText() {
    return 'Left drag: paint · Right drag: look · WASD: fly · E/Space up, Q/C down · Shift: fast · Wheel: dolly';
  }
}
