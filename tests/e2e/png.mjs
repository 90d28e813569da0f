// A small PNG reader (8-bit greyscale, RGB, RGBA; non-interlaced) and image
// comparison helpers, so the browser tests compare real screenshots without
// any image package.

import zlib from 'node:zlib';

/** Decodes a PNG buffer into `{width, height, data}` with RGBA bytes. */
export function decodePng(buf) {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  for (let i = 0; i < 8; i++) if (buf[i] !== sig[i]) throw new Error('not a PNG');
  let off = 8;
  let width = 0;
  let height = 0;
  let depth = 0;
  let ctype = 0;
  let interlace = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('ascii', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      depth = body[8];
      ctype = body[9];
      interlace = body[12];
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
    off += 12 + len;
  }
  if (depth !== 8 || interlace !== 0) throw new Error(`unsupported PNG: depth ${depth}, interlace ${interlace}`);
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[ctype];
  if (!channels) throw new Error(`unsupported PNG colour type ${ctype}`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      let v = line[i];
      switch (filter) {
        case 0:
          break;
        case 1:
          v += a;
          break;
        case 2:
          v += b;
          break;
        case 3:
          v += (a + b) >> 1;
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          throw new Error(`bad PNG filter ${filter}`);
      }
      out[i] = v & 255;
    }
    prev = out;
  }
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0, j = 0; i < width * height; i++, j += channels) {
    const g = pixels[j];
    if (channels === 1) data.set([g, g, g, 255], i * 4);
    else if (channels === 2) data.set([g, g, g, pixels[j + 1]], i * 4);
    else if (channels === 3) data.set([pixels[j], pixels[j + 1], pixels[j + 2], 255], i * 4);
    else data.set([pixels[j], pixels[j + 1], pixels[j + 2], pixels[j + 3]], i * 4);
  }
  return { width, height, data };
}

/**
 * Compares two images inside `rect` ({x, y, width, height}, clamped to the
 * images). A pixel "changed" when any channel differs by more than `tol`.
 * Returns `{changed, total, fraction, meanDiff}`.
 */
export function compareRegion(a, b, rect, tol = 24) {
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`image sizes differ: ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  }
  const r = rect ?? { x: 0, y: 0, width: a.width, height: a.height };
  const x0 = Math.max(0, Math.floor(r.x));
  const y0 = Math.max(0, Math.floor(r.y));
  const x1 = Math.min(a.width, Math.ceil(r.x + r.width));
  const y1 = Math.min(a.height, Math.ceil(r.y + r.height));
  let changed = 0;
  let total = 0;
  let sum = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * a.width + x) * 4;
      let m = 0;
      for (let k = 0; k < 3; k++) {
        const d = Math.abs(a.data[i + k] - b.data[i + k]);
        sum += d;
        if (d > m) m = d;
      }
      if (m > tol) changed++;
      total++;
    }
  }
  return { changed, total, fraction: total ? changed / total : 0, meanDiff: total ? sum / (3 * total) : 0 };
}

/** Mean of (r + g + b) / 3 inside `rect` (clamped to the image). */
export function meanLuma(img, rect) {
  const x0 = Math.max(0, Math.floor(rect.x));
  const y0 = Math.max(0, Math.floor(rect.y));
  const x1 = Math.min(img.width, Math.ceil(rect.x + rect.width));
  const y1 = Math.min(img.height, Math.ceil(rect.y + rect.height));
  let sum = 0;
  let n = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * img.width + x) * 4;
      sum += (img.data[i] + img.data[i + 1] + img.data[i + 2]) / 3;
      n++;
    }
  }
  return n ? sum / n : 0;
}

/**
 * Mean absolute luma step between horizontally neighbouring pixels inside
 * `rect` (clamped): how much fine grain (texture) the region shows.
 */
export function grain(img, rect) {
  const x0 = Math.max(0, Math.floor(rect.x));
  const y0 = Math.max(0, Math.floor(rect.y));
  const x1 = Math.min(img.width, Math.ceil(rect.x + rect.width));
  const y1 = Math.min(img.height, Math.ceil(rect.y + rect.height));
  const luma = (i) => (img.data[i] + img.data[i + 1] + img.data[i + 2]) / 3;
  let sum = 0;
  let n = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0 + 1; x < x1; x++) {
      const i = (y * img.width + x) * 4;
      sum += Math.abs(luma(i) - luma(i - 4));
      n++;
    }
  }
  return n ? sum / n : 0;
}
