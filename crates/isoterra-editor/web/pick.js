// CPU ray casting against the chunk triangles the client holds: each chunk's
// bounding box is tested first (nearest first), then its triangles
// (Moller-Trumbore), stopping as soon as no closer box can beat the best hit.

function rayBox(o, d, min, max) {
  let t0 = 0;
  let t1 = Infinity;
  for (let k = 0; k < 3; k++) {
    const inv = 1 / d[k];
    let a = (min[k] - o[k]) * inv;
    let b = (max[k] - o[k]) * inv;
    if (Number.isNaN(a) || Number.isNaN(b)) {
      // ray parallel to the slab and on its boundary
      if (o[k] < min[k] || o[k] > max[k]) return null;
      continue;
    }
    if (a > b) [a, b] = [b, a];
    if (a > t0) t0 = a;
    if (b < t1) t1 = b;
    if (t0 > t1) return null;
  }
  return t0;
}

function rayMesh(o, d, pos, idx, best) {
  let hit = best;
  let hitTri = -1;
  const [ox, oy, oz] = o;
  const [dx, dy, dz] = d;
  for (let i = 0; i + 2 < idx.length; i += 3) {
    const a = idx[i] * 3;
    const b = idx[i + 1] * 3;
    const c = idx[i + 2] * 3;
    const ax = pos[a], ay = pos[a + 1], az = pos[a + 2];
    const e1x = pos[b] - ax, e1y = pos[b + 1] - ay, e1z = pos[b + 2] - az;
    const e2x = pos[c] - ax, e2y = pos[c + 1] - ay, e2z = pos[c + 2] - az;
    const px = dy * e2z - dz * e2y;
    const py = dz * e2x - dx * e2z;
    const pz = dx * e2y - dy * e2x;
    const det = e1x * px + e1y * py + e1z * pz;
    if (det > -1e-12 && det < 1e-12) continue;
    const inv = 1 / det;
    const tx = ox - ax, ty = oy - ay, tz = oz - az;
    const u = (tx * px + ty * py + tz * pz) * inv;
    if (u < 0 || u > 1) continue;
    const qx = ty * e1z - tz * e1y;
    const qy = tz * e1x - tx * e1z;
    const qz = tx * e1y - ty * e1x;
    const v = (dx * qx + dy * qy + dz * qz) * inv;
    if (v < 0 || u + v > 1) continue;
    const t = (e2x * qx + e2y * qy + e2z * qz) * inv;
    if (t > 1e-6 && t < hit) {
      hit = t;
      hitTri = i;
    }
  }
  return { t: hit, tri: hitTri };
}

/**
 * Nearest hit of the ray `{origin, dir}` with the meshes (each
 * `{positions, indices, min, max}`), at most `maxT` away. Returns
 * `{point: [x, y, z], t, normal: [x, y, z]}` or null.
 */
export function pickMeshes(meshes, ray, maxT = Infinity) {
  const o = ray.origin;
  const d = ray.dir;
  const cand = [];
  for (const m of meshes) {
    const t = rayBox(o, d, m.min, m.max);
    if (t !== null && t < maxT) cand.push([t, m]);
  }
  cand.sort((a, b) => a[0] - b[0]);
  let best = maxT;
  let bestMesh = null;
  let bestTri = -1;
  for (const [tBox, m] of cand) {
    if (tBox > best) break;
    const r = rayMesh(o, d, m.positions, m.indices, best);
    if (r.tri >= 0) {
      best = r.t;
      bestMesh = m;
      bestTri = r.tri;
    }
  }
  if (!bestMesh) return null;
  const p = bestMesh.positions;
  const ix = bestMesh.indices;
  const a = ix[bestTri] * 3;
  const b = ix[bestTri + 1] * 3;
  const c = ix[bestTri + 2] * 3;
  const e1 = [p[b] - p[a], p[b + 1] - p[a + 1], p[b + 2] - p[a + 2]];
  const e2 = [p[c] - p[a], p[c + 1] - p[a + 1], p[c + 2] - p[a + 2]];
  let n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
  const l = Math.hypot(...n) || 1;
  n = n.map((x) => x / l);
  if (n[0] * d[0] + n[1] * d[1] + n[2] * d[2] > 0) n = n.map((x) => -x);
  return {
    point: [o[0] + d[0] * best, o[1] + d[1] * best, o[2] + d[2] * best],
    t: best,
    normal: n,
  };
}

/** Intersection of a ray with the plane `axis = value`, or null. */
export function pickPlane(ray, axis, value) {
  const d = ray.dir[axis];
  if (Math.abs(d) < 1e-9) return null;
  const t = (value - ray.origin[axis]) / d;
  if (t < 0) return null;
  const point = [0, 1, 2].map((k) => ray.origin[k] + ray.dir[k] * t);
  point[axis] = value;
  const normal = [0, 0, 0];
  normal[axis] = 1;
  return { point, t, normal };
}
