// Checks the page's mesh-frame parser (web/protocol.js) on hand-made frames
// laid out exactly as docs/protocol.md describes, without a browser.

import fs from 'node:fs';
import path from 'node:path';

function frame({ kind = 3, layer = 0, lod = 2, chunk = [-1, 5, 7], positions, normals, colors, indices }) {
  const V = positions.length / 3;
  const I = indices.length;
  const buf = new ArrayBuffer(32 + 28 * V + 4 * I);
  const dv = new DataView(buf);
  [0x49, 0x54, 0x4d, 0x46].forEach((b, i) => dv.setUint8(i, b));
  dv.setUint8(4, 1);
  dv.setUint8(5, kind);
  dv.setUint8(6, layer);
  dv.setUint8(7, lod);
  chunk.forEach((c, i) => dv.setInt32(8 + 4 * i, c, true));
  dv.setUint32(20, V, true);
  dv.setUint32(24, I, true);
  dv.setUint32(28, 0, true);
  positions.forEach((v, i) => dv.setFloat32(32 + 4 * i, v, true));
  normals.forEach((v, i) => dv.setFloat32(32 + 12 * V + 4 * i, v, true));
  colors.forEach((v, i) => dv.setUint8(32 + 24 * V + i, v));
  indices.forEach((v, i) => dv.setUint32(32 + 28 * V + 4 * i, v, true));
  return buf;
}

function expectThrow(fn, what) {
  try {
    fn();
  } catch {
    return;
  }
  throw new Error(`frame parser: ${what} was accepted`);
}

/** Throws on the first wrong answer; returns a one-line summary. */
export async function checkFrameParser(root) {
  // loaded as a module whatever Node.js thinks of a bare .js file
  const src = fs.readFileSync(path.join(root, 'crates/isoterra-editor/web/protocol.js'), 'utf8');
  const { parseFrame } = await import(`data:text/javascript;base64,${Buffer.from(src).toString('base64')}`);
  const good = {
    positions: [0, 1, 2, 3, 4, 5, 6, 7, 8],
    normals: [0, 1, 0, 0, 1, 0, 0, 1, 0],
    colors: [1, 2, 3, 255, 4, 5, 6, 255, 7, 8, 9, 128],
    indices: [0, 1, 2],
  };
  const f = parseFrame(frame(good));
  const same = (a, b) => a.length === b.length && [...a].every((v, i) => v === b[i]);
  if (f.kindName !== 'voxel' || f.layer !== 0 || f.lod !== 2) throw new Error(`frame parser: header ${JSON.stringify(f)}`);
  if (!same(f.chunk, [-1, 5, 7])) throw new Error(`frame parser: chunk ${f.chunk}`);
  if (f.vertexCount !== 3 || f.indexCount !== 3) throw new Error('frame parser: counts');
  if (!same(f.positions, good.positions)) throw new Error(`frame parser: positions ${[...f.positions]}`);
  if (!same(f.normals, good.normals)) throw new Error(`frame parser: normals ${[...f.normals]}`);
  if (!same(f.colors, good.colors)) throw new Error(`frame parser: colours ${[...f.colors]}`);
  if (!same(f.indices, good.indices)) throw new Error(`frame parser: indices ${[...f.indices]}`);
  const empty = parseFrame(frame({ kind: 1, layer: 1, chunk: [2, 0, 3], positions: [], normals: [], colors: [], indices: [] }));
  if (empty.vertexCount !== 0 || empty.kindName !== 'map' || empty.layer !== 1) throw new Error('frame parser: empty frame');
  const lines = parseFrame(frame({ kind: 0, layer: 2, chunk: [0, 0, 0], ...good, indices: [0, 1, 1, 2] }));
  if (lines.kindName !== 'side2d' || lines.indexCount !== 4) throw new Error('frame parser: line frame');

  const bytes = new Uint8Array(frame(good));
  expectThrow(() => parseFrame(bytes.slice(0, bytes.length - 1).buffer), 'a truncated frame');
  expectThrow(() => parseFrame(bytes.slice(0, 20).buffer), 'a frame shorter than its header');
  const magic = bytes.slice();
  magic[0] = 0x58;
  expectThrow(() => parseFrame(magic.buffer), 'a bad magic');
  const version = bytes.slice();
  version[4] = 2;
  expectThrow(() => parseFrame(version.buffer), 'an unknown version');
  expectThrow(() => parseFrame(frame({ ...good, indices: [0, 1, 3] })), 'an index past the vertices');
  const fuzzed = fuzzFrameParser(parseFrame, [frame(good), withSurface(frame(good)), bytes.buffer], 50000);
  return `frame parser: header, positions, normals, colours, indices, empty and line frames, 5 kinds of bad frame; ${fuzzed}`;
}

/** `buf` (a frame without surface weights) with FLAG_SURFACE and a weight block. */
function withSurface(buf) {
  const dv = new DataView(buf);
  const V = dv.getUint32(20, true);
  const I = dv.getUint32(24, true);
  const out = new Uint8Array(buf.byteLength + 4 * V);
  const src = new Uint8Array(buf);
  out.set(src.subarray(0, 32 + 28 * V), 0);
  for (let i = 0; i < 4 * V; i++) out[32 + 28 * V + i] = (i * 37) & 255;
  out.set(src.subarray(32 + 28 * V, 32 + 28 * V + 4 * I), 32 + 32 * V);
  new DataView(out.buffer).setUint32(28, 1, true);
  return out.buffer;
}

/**
 * Feeds the parser `n` frames mutated from `seeds` (flipped bytes, counts and
 * flags set to edge values, cuts, random tails) and random buffers, with a
 * fixed-seed generator. Every frame must either throw the parser's own
 * error ("mesh frame ...") or parse into views that lie inside the buffer,
 * with every index below the vertex count. Throws on the first frame that
 * does neither; returns a one-line summary.
 */
export function fuzzFrameParser(parseFrame, seeds, n) {
  let x = 0x2545f491;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  const edges = [0, 1, 2, 3, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 1 << 20];
  let accepted = 0;
  let refused = 0;
  for (let k = 0; k < n; k++) {
    let bytes;
    if (k % 10 === 9) {
      bytes = new Uint8Array(next() % 96);
      for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 255;
      if (bytes.length >= 5 && next() % 2) bytes.set([0x49, 0x54, 0x4d, 0x46, 1]);
    } else {
      bytes = new Uint8Array(seeds[next() % seeds.length]).slice();
      const dv = new DataView(bytes.buffer);
      for (let m = 1 + (next() % 3); m > 0; m--) {
        const what = next() % 5;
        if (what === 0 && bytes.length) bytes[next() % bytes.length] ^= 1 << (next() % 8);
        else if (what === 1 && bytes.length >= 32) dv.setUint32(20 + 4 * (next() % 3), edges[next() % edges.length] + (next() % 3), true);
        else if (what === 2) bytes = bytes.slice(0, next() % (bytes.length + 1));
        else if (what === 3) {
          const tail = new Uint8Array(bytes.length + 1 + (next() % 64));
          tail.set(bytes);
          for (let i = bytes.length; i < tail.length; i++) tail[i] = next() & 255;
          bytes = tail;
        } else if (bytes.length >= 32) dv.setUint32(24, next() % 16, true);
      }
    }
    const buf = bytes.buffer.byteLength === bytes.length ? bytes.buffer : bytes.slice().buffer;
    let f;
    try {
      f = parseFrame(buf);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith('mesh frame')) {
        throw new Error(`frame fuzz: input ${k} threw something not the parser's own: ${e}`);
      }
      refused++;
      continue;
    }
    const V = f.vertexCount;
    const inside = (view) => view.byteOffset + view.byteLength <= buf.byteLength && view.buffer === buf;
    const ok =
      f.positions.length === 3 * V &&
      f.normals.length === 3 * V &&
      f.colors.length === 4 * V &&
      (f.surface === null || f.surface.length === 4 * V) &&
      f.indices.length === f.indexCount &&
      [f.positions, f.normals, f.colors, f.indices].every(inside) &&
      (f.surface === null || inside(f.surface)) &&
      f.indices.every((i) => i < V);
    if (!ok) throw new Error(`frame fuzz: input ${k} parsed into views that do not fit: ${JSON.stringify({ V, I: f.indexCount })}`);
    accepted++;
  }
  return `${n} fuzzed frames (${accepted} parsed, ${refused} refused with the parser's error)`;
}
