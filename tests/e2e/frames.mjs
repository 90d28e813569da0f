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
  return 'frame parser: header, positions, normals, colours, indices, empty and line frames, 5 kinds of bad frame';
}
