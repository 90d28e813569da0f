//! The map mesher: validation, per-node precomputation and the one pass over
//! the cells that cuts them into band pieces (tops, cliff walls, chasm walls)
//! and clips the tops under the water into the water mesh.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use isoterra_field::map::{MAX_LEVEL, MAX_TEXTURES, MapLayers};

use super::{MapMeshBuffers, MapMeshOptions, MapMeshOutput, WaterBuffers};
use crate::MeshError;
use crate::cases::centre_is_solid;
use crate::cells::CellRect;

/// Largest magnitude accepted for option products, ground, height and water
/// values: keeps every interpolation and sum finite.
const MAX_MAGNITUDE: f64 = 1.0e30;

/// `MAX_MAGNITUDE` as the nearest `f32`, which lies above it: an `f32`
/// whose magnitude is at most `1e30` is exactly one below this.
const MAGNITUDE_F32: f32 = MAX_MAGNITUDE as f32;

/// "No node" marker in [`Pt::node`] and unset entries of the vertex tables.
const NONE: u32 = u32::MAX;

// Planar point kinds (bits 40.. of a planar key).
const K_NODE: u64 = 0;
const K_HSIDE: u64 = 1;
const K_VSIDE: u64 = 2;
const K_CHORD: u64 = 5;

/// Event code of the chasm line `ground = 0` (events `0..15` are the rims `k + 0.5`).
const EV_GROUND: u64 = 16;

/// Ring edge kinds: `0..4` lie on a cell side, then the chasm cut, then rim
/// cuts `LCUT + k`.
const GCUT: u8 = 8;
const LCUT: u8 = 16;

/// Band slot of chasm wall bottom vertices in a vertex key.
const BOTTOM: u64 = 16;

#[inline]
fn pkey(kind: u64, x: u32, z: u32, slot: u64, ev: u64) -> u64 {
    (kind << 40) | ((x as u64) << 27) | ((z as u64) << 14) | (slot << 6) | ev
}

/// A multiplicative hasher for the integer vertex keys (they are already
/// well spread; a full SipHash would dominate the meshing time).
#[derive(Default, Clone, Copy)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        let m = (v ^ self.0) as u128 * 0x9E37_79B9_7F4A_7C15u128;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
}

type KeyMap = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

/// A point of the plane with every layer interpolated to it.
#[derive(Clone, Copy, Debug, Default)]
struct Pt {
    /// Planar key: which node, crossing or chord intersection this is.
    key: u64,
    x: f32,
    z: f32,
    /// Terrace value, softness, height offset, ground density, water height.
    l: f32,
    s: f32,
    h: f32,
    g: f32,
    w: f32,
    /// Gradients (d/dx, d/dz) of level, softness, height, ground and water.
    gl: [f32; 2],
    gs: [f32; 2],
    gh: [f32; 2],
    gg: [f32; 2],
    gw: [f32; 2],
    /// Storage index of the node whose splat this point takes.
    splat: u32,
    /// Local node index when the point is a node, else [`NONE`].
    node: u32,
    /// Kind of the ring edge that leaves this point.
    edge: u8,
    /// When `edge == GCUT`: which chasm chord of the cell the edge runs along.
    chord: u8,
}

#[inline]
fn mix(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

#[inline]
fn mix2(a: [f32; 2], b: [f32; 2], t: f32) -> [f32; 2] {
    [mix(a[0], b[0], t), mix(a[1], b[1], t)]
}

/// `a + (b - a) * t` in `f64`, rounded once.
#[inline]
fn mix64(a: f32, b: f32, t: f64) -> f32 {
    (a as f64 + (b as f64 - a as f64) * t) as f32
}

/// Interpolates every layer (not the key, position or bookkeeping).
#[inline]
fn lerp_pt(a: &Pt, b: &Pt, t: f32) -> Pt {
    Pt {
        key: 0,
        x: 0.0,
        z: 0.0,
        l: mix(a.l, b.l, t),
        s: mix(a.s, b.s, t),
        h: mix(a.h, b.h, t),
        g: mix(a.g, b.g, t),
        w: mix(a.w, b.w, t),
        gl: mix2(a.gl, b.gl, t),
        gs: mix2(a.gs, b.gs, t),
        gh: mix2(a.gh, b.gh, t),
        gg: mix2(a.gg, b.gg, t),
        gw: mix2(a.gw, b.gw, t),
        splat: a.splat,
        node: NONE,
        edge: 0,
        chord: 0,
    }
}

/// Parameter of value `c` between `va` (t = 0) and `vb` (t = 1), in `f64`.
#[inline]
fn param(va: f32, vb: f32, c: f32) -> f64 {
    let t = (c as f64 - va as f64) / (vb as f64 - va as f64);
    if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) }
}

/// The band (cliff level) of a terrace value: the same as
/// [`level_index`](isoterra_field::map::level_index) for every value at or
/// above `-0.5` (validated levels and their interpolations), where truncation
/// is the floor; without a call to `floorf`.
#[inline]
fn band(l: f32) -> u8 {
    ((l + 0.5) as i32).clamp(0, MAX_LEVEL as i32) as u8
}

/// Whether a terrace value lies exactly on a rim `k + 0.5` (with `k + 1` a level).
#[inline]
fn is_rim(l: f32) -> bool {
    let r = l + 0.5;
    r == (r as i32) as f32 && (1.0..=MAX_LEVEL as f32).contains(&r)
}

/// The lowest band that meets at a point: one below its own on a rim.
#[inline]
fn low_band(l: f32) -> u8 {
    let own = band(l);
    if is_rim(l) { own - 1 } else { own }
}

#[inline]
fn unit2(v: [f32; 2]) -> [f32; 2] {
    let len = (v[0] * v[0] + v[1] * v[1]).sqrt();
    if len > 0.0 && len.is_finite() {
        [v[0] / len, v[1] / len]
    } else {
        [0.0, 0.0]
    }
}

#[inline]
fn normalize3(v: [f32; 3]) -> [f32; 3] {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if len > 0.0 && len.is_finite() {
        let r = 1.0 / len;
        [v[0] * r, v[1] * r, v[2] * r]
    } else {
        [0.0, 1.0, 0.0]
    }
}

/// Splits the convex ring `ring` along the line(s) where a classification
/// changes, into the part(s) below (`lower`) and above (`upper`).
///
/// Crossing points are made once per ring edge and shared by both outputs;
/// the new edge along the cut gets kind `cut` on both sides. A line crosses
/// a convex ring twice; four crossings are a saddle of the cell (two cut
/// lines), and then the side that `upper_connected` says is not connected
/// comes out as two rings: the second goes to `second`. Returns whether a
/// second ring was made and on which side (`Some(true)`: above).
#[allow(clippy::too_many_arguments)]
fn split(
    ring: &[Pt],
    lower: &mut Vec<Pt>,
    upper: &mut Vec<Pt>,
    second: &mut Vec<Pt>,
    cut: u8,
    is_upper: impl Fn(&Pt) -> bool,
    mut cross: impl FnMut(&Pt, &Pt) -> Pt,
    upper_connected: impl FnOnce() -> bool,
) -> Option<bool> {
    lower.clear();
    upper.clear();
    second.clear();
    let n = ring.len();
    let mut crossings = 0;
    for i in 0..n {
        let a = &ring[i];
        let b = &ring[(i + 1) % n];
        let (ua, ub) = (is_upper(a), is_upper(b));
        if ua == ub {
            if ub {
                upper.push(*b)
            } else {
                lower.push(*b)
            }
            continue;
        }
        crossings += 1;
        let x = cross(a, b);
        let exit = Pt { edge: cut, ..x };
        let enter = Pt {
            edge: a.edge,
            chord: a.chord,
            ..x
        };
        if ua {
            upper.push(exit);
            lower.push(enter);
            lower.push(*b);
        } else {
            lower.push(exit);
            upper.push(enter);
            upper.push(*b);
        }
    }
    if crossings != 4 {
        return None;
    }
    let above = !upper_connected();
    let apart = if above { upper } else { lower };
    // The side that is not connected holds two runs, each closed by its own
    // cut edge (a point whose outgoing edge is `cut`).
    let mut cuts = apart
        .iter()
        .enumerate()
        .filter(|(_, p)| p.edge == cut)
        .map(|(i, _)| i);
    let (Some(c1), Some(c2)) = (cuts.next(), cuts.next()) else {
        return None;
    };
    second.extend_from_slice(&apart[c1 + 1..=c2]);
    apart.drain(c1 + 1..=c2);
    Some(above)
}

/// Removes consecutive (cyclic) repeats of a point, keeping the later copy
/// (whose outgoing edge is the one that leaves the point).
fn dedupe(ring: &mut Vec<Pt>) {
    let n = ring.len();
    if n < 2 {
        return;
    }
    let first = ring[0].key;
    let mut out = 0;
    for i in 0..n {
        let next = if i + 1 < n { ring[i + 1].key } else { first };
        if ring[i].key != next {
            ring[out] = ring[i];
            out += 1;
        }
    }
    ring.truncate(out);
}

/// Read-only state of one meshing call.
struct Geo<'a> {
    layers: &'a MapLayers,
    cs: f32,
    lh: f32,
    depth: f32,
    rect: CellRect,
    /// Nodes per local row (`rect.width() + 1`).
    nw: usize,
    nodes: &'a [Pt],
}

/// The four corners of a cell (`c0..c3` counter-clockwise in x/z from
/// `(x, z)`) and its coordinates.
struct Cell {
    pts: [Pt; 4],
    cx: u32,
    cz: u32,
}

impl Geo<'_> {
    /// The two ends of side `e` of a cell (side `e` joins corners `e` and
    /// `e + 1`), lower-index end first.
    #[inline]
    fn ends(e: u8) -> (usize, usize) {
        match e {
            0 => (0, 1),
            1 => (1, 2),
            2 => (3, 2),
            _ => (0, 3),
        }
    }

    /// Position at parameter `t` along side `e` (from its lower-index end),
    /// and the side's key (without event).
    fn side_pos(&self, cell: &Cell, e: u8, t: f64) -> (f32, f32, u64) {
        let cs = self.cs as f64;
        let (cx, cz) = (cell.cx, cell.cz);
        if e == 0 || e == 2 {
            let z = if e == 0 { cz } else { cz + 1 };
            let x = ((cx as f64 + t) * cs) as f32;
            (x, cell.pts[Self::ends(e).0].z, pkey(K_HSIDE, cx, z, 0, 0))
        } else {
            let x = if e == 3 { cx } else { cx + 1 };
            let z = ((cz as f64 + t) * cs) as f32;
            (cell.pts[Self::ends(e).0].x, z, pkey(K_VSIDE, x, cz, 0, 0))
        }
    }

    /// Where the rim `k + 0.5` (`ev = k`) or the chasm line (`ev = EV_GROUND`)
    /// crosses side `e`; `None` when the point is an end of the side.
    fn event_pos(&self, cell: &Cell, e: u8, ev: u64) -> Option<(f32, f32)> {
        let (a, b) = Self::ends(e);
        let (pa, pb) = (&cell.pts[a], &cell.pts[b]);
        let t = if ev == EV_GROUND {
            param(pa.g, pb.g, 0.0)
        } else {
            param(pa.l, pb.l, ev as f32 + 0.5)
        };
        if t == 0.0 || t == 1.0 {
            return None;
        }
        let (x, z, _) = self.side_pos(cell, e, t);
        if (x == pa.x && z == pa.z) || (x == pb.x && z == pb.z) {
            return None;
        }
        Some((x, z))
    }

    /// The point where event `ev` crosses side `e` of the cell, interpolated
    /// from the side's lower-index node to its higher-index node. A crossing
    /// on an end of the side is that end; a chasm crossing on a rim crossing
    /// is that rim crossing (with `ground = 0`).
    fn cross_at(&self, cell: &Cell, e: u8, ev: u64) -> Pt {
        let (a, b) = Self::ends(e);
        let (pa, pb) = (&cell.pts[a], &cell.pts[b]);
        let t = if ev == EV_GROUND {
            param(pa.g, pb.g, 0.0)
        } else {
            param(pa.l, pb.l, ev as f32 + 0.5)
        };
        if t == 0.0 {
            return *pa;
        }
        if t == 1.0 {
            return *pb;
        }
        let (x, z, skey) = self.side_pos(cell, e, t);
        if x == pa.x && z == pa.z {
            return *pa;
        }
        if x == pb.x && z == pb.z {
            return *pb;
        }
        if ev == EV_GROUND {
            let (ka, kb) = (band(pa.l), band(pb.l));
            for k in ka.min(kb)..ka.max(kb) {
                if self.event_pos(cell, e, k as u64) == Some((x, z)) {
                    return self.cross_at(cell, e, k as u64);
                }
            }
        }
        let mut p = lerp_pt(pa, pb, t as f32);
        p.x = x;
        p.z = z;
        p.key = skey | ev;
        if ev == EV_GROUND {
            p.g = 0.0;
        } else {
            p.l = ev as f32 + 0.5;
            if (pa.g < 0.0) != (pb.g < 0.0) && self.event_pos(cell, e, EV_GROUND) == Some((x, z)) {
                p.g = 0.0;
            }
        }
        p
    }

    /// The marching-squares segments of the rim `k + 0.5` in the cell, as
    /// pairs of side indices (a saddle's two segments decided by the cell's
    /// centre value, the corner average, as everywhere in this crate).
    fn rim_chords(&self, cell: &Cell, k: u8) -> ([[u8; 2]; 2], usize) {
        let up = [0, 1, 2, 3].map(|i| band(cell.pts[i].l) > k);
        let case = up
            .iter()
            .enumerate()
            .fold(0u8, |c, (i, &u)| c | ((u as u8) << i));
        let mut chords = [[0u8; 2]; 2];
        let mut n = 0;
        if case == 5 || case == 10 {
            let [l0, l1, l2, l3] = cell.pts.map(|p| p.l);
            let connected = centre_is_solid(l0, l1, l2, l3, k as f32 + 0.5);
            // The corners cut off: the low ones when the high ones connect.
            for i in 0..4u8 {
                if up[i as usize] != connected {
                    chords[n] = [i, (i + 3) % 4];
                    n += 1;
                }
            }
        } else {
            for e in 0..4u8 {
                let (a, b) = Self::ends(e);
                if up[a] != up[b] && n < 2 {
                    chords[n / 2][n % 2] = e;
                    n += 1;
                }
            }
            n /= 2;
        }
        (chords, n)
    }

    /// The point where rim `k + 0.5` crosses the chasm chord piece `a -> b`:
    /// the intersection of the rim's straight segment across the cell with
    /// the chord (so the rim stays one straight line through the cell).
    fn chord_cross(&self, cell: &Cell, a: &Pt, b: &Pt, k: u8) -> Pt {
        // A chord piece along a side of the cell (the chasm line running
        // exactly along it) is that side: the rim crosses it where it
        // crosses the side, as in the neighbouring cell.
        let sides = |p: &Pt| {
            ((p.z == cell.pts[0].z) as u8)
                | ((p.x == cell.pts[1].x) as u8) << 1
                | ((p.z == cell.pts[2].z) as u8) << 2
                | ((p.x == cell.pts[0].x) as u8) << 3
        };
        let common = sides(a) & sides(b);
        if common != 0 && a.key != b.key {
            return self.cross_at(cell, common.trailing_zeros() as u8, k as u64);
        }
        let (chords, n) = self.rim_chords(cell, k);
        let (ax, az) = (a.x as f64, a.z as f64);
        let (dx, dz) = (b.x as f64 - ax, b.z as f64 - az);
        let mut best: Option<(f64, f64, usize)> = None;
        for (ri, c) in chords.iter().take(n).enumerate() {
            let p = self.cross_at(cell, c[0], k as u64);
            let q = self.cross_at(cell, c[1], k as u64);
            let (px, pz) = (p.x as f64, p.z as f64);
            let (ex, ez) = (q.x as f64 - px, q.z as f64 - pz);
            let den = dx * ez - dz * ex;
            if den == 0.0 || !den.is_finite() {
                continue;
            }
            let (wx, wz) = (px - ax, pz - az);
            let s = (wx * ez - wz * ex) / den;
            let u = (wx * dz - wz * dx) / den;
            let off = |v: f64| (-v).max(v - 1.0).max(0.0);
            let bad = off(s) + off(u);
            if s.is_finite() && best.is_none_or(|(b, _, _)| bad < b) {
                best = Some((bad, s, ri));
            }
        }
        let (s, ri) = match best {
            Some((_, s, ri)) => (s.clamp(0.0, 1.0), ri),
            None => (param(a.l, b.l, k as f32 + 0.5), 0),
        };
        let (x, z) = (mix64(a.x, b.x, s), mix64(a.z, b.z, s));
        if s == 0.0 || (x == a.x && z == a.z) {
            return *a;
        }
        if s == 1.0 || (x == b.x && z == b.z) {
            return *b;
        }
        let mut p = lerp_pt(a, b, s as f32);
        p.x = x;
        p.z = z;
        p.l = k as f32 + 0.5;
        p.g = 0.0;
        p.splat = cell.pts[0].splat;
        p.key = pkey(
            K_CHORD,
            cell.cx,
            cell.cz,
            (a.chord as u64) * 2 + ri as u64,
            k as u64,
        );
        p
    }

    /// Height of point `p` on band `b`.
    #[inline]
    fn y(&self, p: &Pt, b: u8) -> f32 {
        let bf = b as f32;
        let continuous = p.l.clamp(0.0, MAX_LEVEL as f32);
        (bf + (continuous - bf) * p.s) * self.lh + p.h
    }
}

/// Scratch rings, reused across cells.
#[derive(Debug, Default, Clone)]
struct Rings {
    ring: Vec<Pt>,
    land: Vec<Pt>,
    land2: Vec<Pt>,
    chasm: Vec<Pt>,
    lower: Vec<Pt>,
    upper: Vec<Pt>,
    second: Vec<Pt>,
    /// Pieces still to cut, one after the other, with their spans
    /// `(start, len, next rim)`.
    stack: Vec<Pt>,
    spans: Vec<(usize, usize, u8)>,
}

/// The water side of the terrain pass: every top triangle under the water
/// is clipped at the shoreline into the water mesh.
struct Water<'a> {
    out: &'a mut WaterBuffers,
    /// Per terrain vertex: water height, water gradient, global vertex key,
    /// water vertex (or [`NONE`]).
    w: &'a mut Vec<f32>,
    gw: &'a mut Vec<[f32; 2]>,
    key: &'a mut Vec<u64>,
    vertex: &'a mut Vec<u32>,
    /// Shore points by the (local) terrain edge they lie on.
    map: &'a mut KeyMap,
}

/// Welding state and output of the terrain pass.
struct Emit<'a> {
    out: &'a mut MapMeshBuffers,
    map: &'a mut KeyMap,
    node_vertex: &'a mut [u32],
    water: Option<Water<'a>>,
    /// Whether the current cell may hold water.
    wet: bool,
}

impl Emit<'_> {
    /// The vertex of point `p` on band `b`. Bands whose vertices would sit at
    /// the same height are one vertex (pulled toward the point's own band).
    fn vertex(&mut self, geo: &Geo, p: &Pt, b: u8) -> u32 {
        let own = band(p.l);
        let mut b = b;
        while b > own && geo.y(p, b - 1) == geo.y(p, b) {
            b -= 1;
        }
        while b < own && geo.y(p, b + 1) == geo.y(p, b) {
            b += 1;
        }
        let key = (p.key << 5) | b as u64;
        if b == own && p.node != NONE {
            let slot = p.node as usize;
            if self.node_vertex[slot] == NONE {
                self.node_vertex[slot] = self.push_top(geo, p, b, key);
            }
            return self.node_vertex[slot];
        }
        if let Some(&v) = self.map.get(&key) {
            return v;
        }
        let v = self.push_top(geo, p, b, key);
        self.map.insert(key, v);
        v
    }

    /// The vertex of node `p` on its own band.
    #[inline]
    fn own_vertex(&mut self, geo: &Geo, p: &Pt) -> u32 {
        let slot = p.node as usize;
        let v = self.node_vertex[slot];
        if v != NONE {
            return v;
        }
        let b = band(p.l);
        let v = self.push_top(geo, p, b, (p.key << 5) | b as u64);
        self.node_vertex[slot] = v;
        v
    }

    /// Pushes the vertex of `p` on band `b` (a top or rim vertex) with its
    /// global key.
    fn push_top(&mut self, geo: &Geo, p: &Pt, b: u8, key: u64) -> u32 {
        let bf = b as f32;
        let continuous = p.l.clamp(0.0, MAX_LEVEL as f32);
        let dx = ((continuous - bf) * p.gs[0] + p.s * p.gl[0]) * geo.lh + p.gh[0];
        let dz = ((continuous - bf) * p.gs[1] + p.s * p.gl[1]) * geo.lh + p.gh[1];
        // The normal goes out unnormalized: the pass normalizes every
        // normal once at its end (see `push`). A tilted one is the unit
        // normal of the surface plus the tilt.
        let mut n = [-dx, 1.0, -dz];
        let mut blend = 0.0f32;
        let rim = is_rim(p.l) && p.s < 1.0;
        let edge = p.g == 0.0;
        if rim || edge {
            n = normalize3(n);
        }
        if rim {
            let w = 1.0 - p.s;
            let out = unit2([-p.gl[0], -p.gl[1]]);
            n[0] += w * out[0];
            n[2] += w * out[1];
            blend = w;
        }
        if edge {
            let out = unit2([-p.gg[0], -p.gg[1]]);
            n[0] += out[0];
            n[2] += out[1];
            blend = 1.0;
        }
        let v = self.push(geo, [p.x, geo.y(p, b), p.z], n, p.splat, blend);
        if let Some(water) = &mut self.water {
            water.w.push(p.w);
            water.gw.push(p.gw);
            water.key.push(key);
            water.vertex.push(NONE);
        }
        v
    }

    /// The chasm wall bottom vertex under `p`.
    fn bottom(&mut self, geo: &Geo, p: &Pt) -> u32 {
        let key = (p.key << 5) | BOTTOM;
        if let Some(&v) = self.map.get(&key) {
            return v;
        }
        let y = geo.y(p, low_band(p.l)) - geo.depth;
        let out = unit2([-p.gg[0], -p.gg[1]]);
        let v = self.push(geo, [p.x, y, p.z], [out[0], 0.0, out[1]], p.splat, 1.0);
        if let Some(water) = &mut self.water {
            // Never part of a top: no water.
            water.w.push(f32::NEG_INFINITY);
            water.gw.push([0.0; 2]);
            water.key.push(key);
            water.vertex.push(NONE);
        }
        self.map.insert(key, v);
        v
    }

    /// Pushes a terrain vertex. Its normal `n` need not be of unit length:
    /// [`MapMesher::terrain`] normalizes every normal at the end, in one
    /// loop whose square roots and divisions overlap; normalized as each
    /// vertex was made, every vertex waited for its own.
    ///
    /// Always inlined: called, its position and normal went through the
    /// stack as three 4-byte stores read back with 8-byte loads, which
    /// cannot be forwarded from the stores and waited for them to retire.
    #[inline(always)]
    fn push(&mut self, geo: &Geo, pos: [f32; 3], n: [f32; 3], splat: u32, blend: f32) -> u32 {
        let v = self.out.positions.len() as u32;
        self.out.positions.push(pos);
        self.out.normals.push(n);
        self.out.splat.push(geo.layers.splat[splat as usize]);
        self.out.splat_node.push(splat);
        self.out.blend.push(blend);
        v
    }

    /// Emits a triangle unless it repeats a vertex or has zero area.
    fn tri(&mut self, a: u32, b: u32, c: u32) {
        if a == b || b == c || a == c {
            return;
        }
        let p = &self.out.positions;
        let (pa, pb, pc) = (p[a as usize], p[b as usize], p[c as usize]);
        let u = [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]];
        let w = [pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]];
        let n = [
            u[1] * w[2] - u[2] * w[1],
            u[2] * w[0] - u[0] * w[2],
            u[0] * w[1] - u[1] * w[0],
        ];
        if n == [0.0; 3] {
            return;
        }
        self.out.indices.extend_from_slice(&[a, b, c]);
    }

    /// Emits a top triangle, and its part under the water when the cell may
    /// hold water.
    #[inline]
    fn top(&mut self, a: u32, b: u32, c: u32) {
        self.tri(a, b, c);
        if self.wet {
            self.water_tri([a, b, c]);
        }
    }

    /// Clips top triangle `t` (terrain vertices) to where the water lies
    /// above it (`depth > 0`) and emits that part into the water mesh.
    fn water_tri(&mut self, t: [u32; 3]) {
        if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
            return;
        }
        let Some(water) = &mut self.water else {
            return;
        };
        let pos = &self.out.positions;
        let d = t.map(|v| water.w[v as usize] - pos[v as usize][1]);
        if d.iter().all(|&d| d <= 0.0) {
            return;
        }
        let mut poly = [0u32; 4];
        let mut n = 0;
        for i in 0..3 {
            let j = (i + 1) % 3;
            if d[i] > 0.0 {
                poly[n] = water.vertex_of(pos, t[i], d[i]);
                n += 1;
            }
            if (d[i] > 0.0) != (d[j] > 0.0) {
                let s = water.shore(pos, t[i], t[j]);
                if n == 0 || poly[n - 1] != s {
                    poly[n] = s;
                    n += 1;
                }
            }
        }
        if n >= 2 && poly[0] == poly[n - 1] {
            n -= 1;
        }
        for i in 1..n.saturating_sub(1) {
            water.tri(poly[0], poly[i], poly[i + 1]);
        }
    }

    /// A vertical wall between two columns of vertices (top first), facing
    /// the left of the direction from column `a` to column `b` (seen from above).
    ///
    /// The strip steps down the column whose next vertex is higher; ties go to
    /// the column whose point has the smaller planar key (`a_first`). The rule
    /// does not depend on the direction, so the two faces of a zero-width ridge
    /// are the same triangles in opposite winding.
    fn wall(&mut self, a: &[u32], b: &[u32], a_first: bool) {
        let (m, n) = (a.len() - 1, b.len() - 1);
        let (mut i, mut j) = (0, 0);
        while i < m || j < n {
            let advance_a = if i == m {
                false
            } else if j == n {
                true
            } else {
                let p = &self.out.positions;
                let (ya, yb) = (p[a[i + 1] as usize][1], p[b[j + 1] as usize][1]);
                ya > yb || (ya == yb && a_first)
            };
            if advance_a {
                self.tri(a[i], a[i + 1], b[j]);
                i += 1;
            } else {
                self.tri(a[i], b[j + 1], b[j]);
                j += 1;
            }
        }
    }

    /// The column of a chasm wall under `p` for a piece of band `b`: the
    /// band's vertex, the vertices of lower bands meeting at `p`, the bottom.
    fn chasm_column(&mut self, geo: &Geo, p: &Pt, b: u8, col: &mut Column) {
        col.len = 0;
        let lo = low_band(p.l).min(b);
        let mut k = b;
        loop {
            col.push(self.vertex(geo, p, k));
            if k == lo {
                break;
            }
            k -= 1;
        }
        col.push(self.bottom(geo, p));
    }

    /// Emits the top faces and walls of one band piece of a cell.
    fn band(&mut self, geo: &Geo, ring: &mut Vec<Pt>, b: u8) {
        dedupe(ring);
        let n = ring.len();
        if n < 2 {
            return;
        }
        if n >= 3 {
            let v0 = self.vertex(geo, &ring[0], b);
            let mut prev = self.vertex(geo, &ring[1], b);
            for p in &ring[2..] {
                let v = self.vertex(geo, p, b);
                self.top(v0, v, prev);
                prev = v;
            }
        }
        let (mut ca, mut cb) = (Column::default(), Column::default());
        for i in 0..n {
            let p = &ring[i];
            let q = &ring[(i + 1) % n];
            if p.edge == LCUT + b {
                // The rim on this piece's upper side: wall from band b + 1 down to b.
                ca.len = 0;
                ca.push(self.vertex(geo, p, b + 1));
                ca.push(self.vertex(geo, p, b));
                cb.len = 0;
                cb.push(self.vertex(geo, q, b + 1));
                cb.push(self.vertex(geo, q, b));
                self.wall(ca.as_slice(), cb.as_slice(), p.key < q.key);
            } else if p.edge == GCUT {
                // Land on the left of p -> q; the wall faces the chasm.
                self.chasm_column(geo, q, b, &mut ca);
                self.chasm_column(geo, p, b, &mut cb);
                self.wall(ca.as_slice(), cb.as_slice(), q.key < p.key);
            }
        }
    }
}

impl Water<'_> {
    /// The water vertex over terrain vertex `v` (depth `d`, at least 0).
    fn vertex_of(&mut self, pos: &[[f32; 3]], v: u32, d: f32) -> u32 {
        let i = v as usize;
        if self.vertex[i] != NONE {
            return self.vertex[i];
        }
        let p = pos[i];
        let g = self.gw[i];
        let wv = self.push([p[0], self.w[i], p[2]], g, d.max(0.0));
        self.vertex[i] = wv;
        wv
    }

    /// The shoreline point (`depth = 0`) on the terrain edge `a - b`,
    /// interpolated from the end with the smaller global key, so that a cell
    /// side meshed in two chunks gives the same point; an end it lands on is
    /// that end.
    fn shore(&mut self, pos: &[[f32; 3]], a: u32, b: u32) -> u32 {
        let (lo, hi) = if self.key[a as usize] < self.key[b as usize] {
            (a, b)
        } else {
            (b, a)
        };
        let ekey = ((lo as u64) << 32) | hi as u64;
        if let Some(&v) = self.map.get(&ekey) {
            return v;
        }
        let (il, ih) = (lo as usize, hi as usize);
        let (dl, dh) = (self.w[il] - pos[il][1], self.w[ih] - pos[ih][1]);
        let t = param(dl, dh, 0.0);
        let (pl, ph) = (pos[il], pos[ih]);
        let (x, z) = (mix64(pl[0], ph[0], t), mix64(pl[2], ph[2], t));
        let v = if t == 0.0 || (x == pl[0] && z == pl[2]) {
            self.vertex_of(pos, lo, dl)
        } else if t == 1.0 || (x == ph[0] && z == ph[2]) {
            self.vertex_of(pos, hi, dh)
        } else {
            let tf = t as f32;
            let w = mix(self.w[il], self.w[ih], tf);
            let g = mix2(self.gw[il], self.gw[ih], tf);
            self.push([x, w, z], g, 0.0)
        };
        self.map.insert(ekey, v);
        v
    }

    fn push(&mut self, pos: [f32; 3], gw: [f32; 2], depth: f32) -> u32 {
        let v = self.out.positions.len() as u32;
        self.out.positions.push(pos);
        self.out.normals.push(normalize3([-gw[0], 1.0, -gw[1]]));
        self.out.depth.push(depth);
        v
    }

    fn tri(&mut self, a: u32, b: u32, c: u32) {
        if a == b || b == c || a == c {
            return;
        }
        let p = &self.out.positions;
        let (pa, pb, pc) = (p[a as usize], p[b as usize], p[c as usize]);
        let u = [pb[0] - pa[0], pb[2] - pa[2]];
        let w = [pc[0] - pa[0], pc[2] - pa[2]];
        // The water is a height field: a triangle must cover some area seen
        // from above (slivers whose corners round onto one line are dropped).
        if u[1] * w[0] - u[0] * w[1] <= 0.0 {
            return;
        }
        self.out.indices.extend_from_slice(&[a, b, c]);
    }
}

/// A short column of vertex indices without repeats.
#[derive(Default)]
struct Column {
    v: [u32; 20],
    len: usize,
}

impl Column {
    #[inline]
    fn push(&mut self, v: u32) {
        if self.len > 0 && self.v[self.len - 1] == v {
            return;
        }
        if self.len < self.v.len() {
            self.v[self.len] = v;
            self.len += 1;
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u32] {
        &self.v[..self.len]
    }
}

/// A reusable one-pass map mesher.
///
/// It owns per-call scratch (node tables, a vertex key map, clipping rings);
/// after the first call on a given size, a call that reuses its
/// [`MapMeshOutput`] allocates nothing. The geometry model, seam rule and
/// vertex attributes are documented in the [`map`](crate::map) module.
///
/// ```
/// use isoterra_field::map::MapLayers;
/// use isoterra_mesh::CellRect;
/// use isoterra_mesh::map::{MapMeshOptions, MapMeshOutput, MapMesher};
///
/// let mut layers = MapLayers::new(8, 8).unwrap();
/// // A plateau one level up in the middle.
/// for z in 3..=5 {
///     for x in 3..=5 {
///         let i = layers.index(x, z).unwrap();
///         layers.level[i] = 1.0;
///     }
/// }
/// let mut mesher = MapMesher::new();
/// let mut out = MapMeshOutput::default();
/// mesher
///     .mesh(&layers, CellRect::whole(&layers), &MapMeshOptions::DEFAULT, &mut out)
///     .unwrap();
/// assert!(out.terrain.triangle_count() > 2 * 64);
/// assert!(out.water.indices.is_empty());
/// ```
#[derive(Debug, Default, Clone)]
pub struct MapMesher {
    nodes: Vec<Pt>,
    /// Per node: its band, plus `0x80` where the ground is a chasm.
    node_class: Vec<u8>,
    /// Water above the ground on the rectangle's nodes plus a ring, NaN where dry.
    wet: Vec<f32>,
    /// The ground surface on the same nodes.
    surface: Vec<f32>,
    /// Whether some cell of the rectangle may hold water (see [`wet_bound`]).
    has_water: bool,
    node_vertex: Vec<u32>,
    map: KeyMap,
    rings: Rings,
    /// Per terrain vertex: water height, water gradient, global key, water vertex.
    vertex_water: Vec<f32>,
    vertex_water_grad: Vec<[f32; 2]>,
    vertex_key: Vec<u64>,
    water_vertex: Vec<u32>,
    water_map: KeyMap,
}

impl MapMesher {
    /// A mesher with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Meshes the cells `cells` of `layers` into `out` (cleared first): the
    /// terrain (tops, cliff walls, slopes, chasm walls) and the water.
    ///
    /// Errors, leaving `out` untouched, when the rectangle is empty or does not
    /// fit the map, when an option is not finite or not positive (or large
    /// enough to overflow), or when a node the call reads is invalid (layer
    /// lengths, non-finite values, level outside `-0.5..=15.5`, softness
    /// outside `0..=1`, a splat id of 16 or more, magnitudes above `1e30`).
    pub fn mesh(
        &mut self,
        layers: &MapLayers,
        cells: CellRect,
        options: &MapMeshOptions,
        out: &mut MapMeshOutput,
    ) -> Result<(), MeshError> {
        check_options(layers, options)?;
        check_rect(layers, cells)?;
        check_nodes(layers, cells)?;
        out.clear();
        self.prepare(layers, cells, options);
        let nodes = std::mem::take(&mut self.nodes);
        let geo = Geo {
            layers,
            cs: options.cell_size,
            lh: options.level_height,
            depth: options.chasm_depth,
            rect: cells,
            nw: cells.width() as usize + 1,
            nodes: &nodes,
        };
        self.terrain(&geo, out);
        self.nodes = nodes;
        Ok(())
    }

    /// Rewrites the terrain's per-vertex splats of `out` (a mesh of `layers`
    /// made by [`mesh`](Self::mesh)) from the layers' current splat values,
    /// without touching anything else. After an edit that changed only
    /// splats (and pathing, which the mesh does not read), the result is bit
    /// for bit what remeshing the same rectangle gives.
    ///
    /// Errors, leaving `out` untouched, when `out` does not look like a mesh
    /// of a map of this size (the splat source list's length differs from the
    /// vertex count, or names a node outside the map) or when a source node's
    /// splat holds a texture id of 16 or more.
    pub fn update_attributes(layers: &MapLayers, out: &mut MapMeshOutput) -> Result<(), MeshError> {
        let t = &mut out.terrain;
        if t.splat_node.len() != t.positions.len() || t.splat.len() != t.positions.len() {
            return Err(MeshError::LengthMismatch {
                name: "splat_node",
                expected: t.positions.len(),
                got: if t.splat_node.len() != t.positions.len() {
                    t.splat_node.len()
                } else {
                    t.splat.len()
                },
            });
        }
        let n = layers.node_count().min(layers.splat.len());
        // (Branch-free folds, so the checks vectorise.)
        if let Some(&i) = t.splat_node.iter().max().filter(|&&i| i as usize >= n) {
            return Err(MeshError::param(
                "splat_node",
                i,
                "names a node outside the map; mesh the chunk again",
            ));
        }
        let splats = &layers.splat[..n];
        // Texture ids are below 16 when no id byte has a high nibble.
        let high = t.splat_node.iter().fold(0u32, |acc, &i| {
            acc | u32::from_le_bytes(splats[i as usize].ids)
        });
        if high & 0xf0f0_f0f0 != 0 {
            let bad = t
                .splat_node
                .iter()
                .map(|&i| splats[i as usize].ids)
                .find(|ids| ids.iter().any(|&id| id >= MAX_TEXTURES))
                .unwrap_or_default();
            return Err(MeshError::param(
                "splat id",
                format!("{bad:?}"),
                "texture ids lie in 0..16",
            ));
        }
        for (dst, &i) in t.splat.iter_mut().zip(&t.splat_node) {
            *dst = splats[i as usize];
        }
        Ok(())
    }

    /// Fills the node tables of the rectangle (apron reads for gradients).
    fn prepare(&mut self, layers: &MapLayers, r: CellRect, o: &MapMeshOptions) {
        let [nx, nz] = layers.nodes();
        let row = nx as usize;
        let cs = o.cell_size;
        let cs64 = cs as f64;
        let lh = o.level_height;
        self.nodes.clear();
        self.node_class.clear();
        // 1 / (step * cs) for a central (2 cells) or one-sided (1 cell) difference.
        let inv = [1.0 / cs, 1.0 / (2.0 * cs)];
        // The water above each node's ground surface (`node_surface`, with
        // the band computed without `floorf`; NaN where dry) on the
        // rectangle's nodes and one more ring, so each node is done once.
        let (ax0, az0) = (r.x0.saturating_sub(1), r.y0.saturating_sub(1));
        let (ax1, az1) = ((r.x1 + 1).min(nx - 1), (r.y1 + 1).min(nz - 1));
        let aw = (ax1 - ax0 + 1) as usize;
        let mut wet = std::mem::take(&mut self.wet);
        wet.clear();
        let mut surface = std::mem::take(&mut self.surface);
        surface.clear();
        // Water at or below the lowest top vertex the nodes can have wets
        // nothing: most maps have no water, and then neither list is needed.
        let (mut lmin, mut hmin, mut wmax) = (f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY);
        for z in az0..=az1 {
            let span = z as usize * row + ax0 as usize..=z as usize * row + ax1 as usize;
            lmin = layers.level[span.clone()]
                .iter()
                .fold(lmin, |m, &v| m.min(v));
            hmin = layers.height[span.clone()]
                .iter()
                .fold(hmin, |m, &v| m.min(v));
            wmax = layers.water[span].iter().fold(wmax, |m, &v| m.max(v));
        }
        let mut any_wet = false;
        let may_wet = wmax > wet_bound(band(lmin), hmin, lh);
        for z in (az0..=az1).filter(|_| may_wet) {
            let base = z as usize * row;
            for i in base + ax0 as usize..=base + ax1 as usize {
                let l = layers.level[i];
                let terraced = band(l) as f32;
                let continuous = l.clamp(0.0, MAX_LEVEL as f32);
                let s = (terraced + (continuous - terraced) * layers.softness[i]) * lh
                    + layers.height[i];
                let w = layers.water[i];
                let is_wet = w > s;
                any_wet |= is_wet;
                wet.push(if is_wet { w } else { f32::NAN });
                surface.push(s);
            }
        }
        let wet_at = |x: u32, z: u32| wet[(z - az0) as usize * aw + (x - ax0) as usize];
        let surface_at = |x: u32, z: u32| surface[(z - az0) as usize * aw + (x - ax0) as usize];
        // The water surface's gradient; a dry neighbour (no water above its
        // ground) counts as the node's own value, so shores stay level.
        let water_grad = |x: u32, z: u32, own: f32| -> [f32; 2] {
            let at = |x: u32, z: u32| {
                let w = wet_at(x, z);
                if w.is_nan() { own } else { w }
            };
            let (xm, xp) = (x.saturating_sub(1), (x + 1).min(nx - 1));
            let (zm, zp) = (z.saturating_sub(1), (z + 1).min(nz - 1));
            let dx = (at(xp, z) - at(xm, z)) * inv[(xp - xm) as usize - 1];
            let dz = (at(x, zp) - at(x, zm)) * inv[(zp - zm) as usize - 1];
            [dx, dz]
        };
        // A dry node takes the highest water of its wet neighbours (the
        // eight around it, so every corner of a cell with water in it has a
        // water height), so the shoreline falls where the ground rises above
        // that water rather than next to the wet node (a painted lake next
        // to `NO_WATER`). It never takes more than its own ground: where the
        // ground falls away from the water (water painted on a slope, or a
        // basin wider than the paint), the water comes down to the ground
        // at the dry node instead of standing over it and ending in a
        // cell-stepped edge one node farther out.
        let effective_water = |x: u32, z: u32, own: f32| -> f32 {
            let w = wet_at(x, z);
            if !w.is_nan() {
                return w;
            }
            let mut best = f32::NAN;
            for zz in z.saturating_sub(1)..=(z + 1).min(nz - 1) {
                for xx in x.saturating_sub(1)..=(x + 1).min(nx - 1) {
                    let w = wet_at(xx, zz);
                    if !w.is_nan() && (best.is_nan() || w > best) {
                        best = w;
                    }
                }
            }
            if best.is_nan() {
                own
            } else {
                best.min(surface_at(x, z))
            }
        };
        let n = (r.width() as usize + 1) * (r.height() as usize + 1);
        self.nodes.reserve(n);
        self.node_class.reserve(n);
        // The lowest band, lowest height offset and highest water of the
        // rectangle's nodes, for [`wet_bound`].
        let (mut kmin, mut hmin, mut wmax) = (MAX_LEVEL, f32::INFINITY, f32::NEG_INFINITY);
        let mut local = 0u32;
        for z in r.y0..=r.y1 {
            let (zm, zp) = (z.saturating_sub(1), (z + 1).min(nz - 1));
            let zinv = inv[(zp - zm) as usize - 1];
            let (rm, r0, rp) = (zm as usize * row, z as usize * row, zp as usize * row);
            let zf = (z as f64 * cs64) as f32;
            // The rows below, at and above `z` of each layer the gradients read.
            let lv = rows3(&layers.level, rm, r0, rp, row);
            let sv = rows3(&layers.softness, rm, r0, rp, row);
            let hv = rows3(&layers.height, rm, r0, rp, row);
            let gv = rows3(&layers.ground, rm, r0, rp, row);
            let wrow = &layers.water[r0..r0 + row];
            for x in r.x0..=r.x1 {
                let (xm, xp) = (x.saturating_sub(1), (x + 1).min(nx - 1));
                let xinv = inv[(xp - xm) as usize - 1];
                let (xu, xmu, xpu) = (x as usize, xm as usize, xp as usize);
                let i = r0 + xu;
                // Central (or one-sided at the map's border) differences.
                let grad = |v: &[&[f32]; 3]| -> [f32; 2] {
                    [(v[1][xpu] - v[1][xmu]) * xinv, (v[2][xu] - v[0][xu]) * zinv]
                };
                let own = wrow[xu];
                let (w, gw) = if any_wet {
                    (effective_water(x, z, own), water_grad(x, z, own))
                } else {
                    // No water anywhere near: every neighbour counts as the
                    // node's own value, so the gradient is exactly zero.
                    (own, [0.0, 0.0])
                };
                let p = Pt {
                    key: pkey(K_NODE, x, z, 0, 0),
                    x: (x as f64 * cs64) as f32,
                    z: zf,
                    l: lv[1][xu],
                    s: sv[1][xu],
                    h: hv[1][xu],
                    g: gv[1][xu],
                    w,
                    gl: grad(&lv),
                    gs: grad(&sv),
                    gh: grad(&hv),
                    gg: grad(&gv),
                    gw,
                    splat: i as u32,
                    node: local,
                    edge: 0,
                    chord: 0,
                };
                let k = band(p.l);
                kmin = kmin.min(k);
                hmin = hmin.min(p.h);
                wmax = wmax.max(w);
                self.node_class.push(k | if p.g < 0.0 { 0x80 } else { 0 });
                self.nodes.push(p);
                local += 1;
            }
        }
        self.wet = wet;
        self.surface = surface;
        self.has_water = wmax > wet_bound(kmin, hmin, lh);
        let n = self.nodes.len();
        self.node_vertex.clear();
        self.node_vertex.resize(n, NONE);
        self.map.clear();
        self.vertex_water.clear();
        self.vertex_water_grad.clear();
        self.vertex_key.clear();
        self.water_vertex.clear();
        self.water_map.clear();
    }

    fn terrain(&mut self, geo: &Geo, out: &mut MapMeshOutput) {
        let MapMeshOutput {
            terrain: out,
            water: water_out,
        } = out;
        // At least one vertex per node and two triangles per cell.
        let n = geo.nodes.len();
        out.positions.reserve(n);
        out.normals.reserve(n);
        out.splat.reserve(n);
        out.blend.reserve(n);
        out.splat_node.reserve(n);
        out.indices
            .reserve(6 * geo.rect.width() as usize * geo.rect.height() as usize);
        let water = if self.has_water {
            Some(Water {
                out: water_out,
                w: &mut self.vertex_water,
                gw: &mut self.vertex_water_grad,
                key: &mut self.vertex_key,
                vertex: &mut self.water_vertex,
                map: &mut self.water_map,
            })
        } else {
            None
        };
        let mut emit = Emit {
            out,
            map: &mut self.map,
            node_vertex: &mut self.node_vertex,
            water,
            wet: false,
        };
        let rings = &mut self.rings;
        let r = geo.rect;
        let nw = geo.nw;
        let nodes = geo.nodes;
        let class = &self.node_class;
        for cz in r.y0..r.y1 {
            let base = (cz - r.y0) as usize * nw;
            // Classes of the cell row's lower and upper nodes.
            let (ka, kb) = (&class[base..base + nw], &class[base + nw..base + 2 * nw]);
            // The right-hand vertices of the previous cell when it was a
            // plain quad: this cell's left-hand ones.
            let mut carry: Option<(u32, u32)> = None;
            for k in 0..nw - 1 {
                let c0 = ka[k];
                let i0 = base + k;
                if c0 < 0x80 && ka[k + 1] == c0 && kb[k + 1] == c0 && kb[k] == c0 {
                    // One band, all land: two triangles on the c0 -> c2
                    // diagonal, with the nodes' own vertices (made in the
                    // order c0, c1, c2, c3 the first time a node is met).
                    let v = match carry {
                        Some((v0, v3)) => [
                            v0,
                            emit.own_vertex(geo, &nodes[i0 + 1]),
                            emit.own_vertex(geo, &nodes[i0 + 1 + nw]),
                            v3,
                        ],
                        None => [
                            emit.own_vertex(geo, &nodes[i0]),
                            emit.own_vertex(geo, &nodes[i0 + 1]),
                            emit.own_vertex(geo, &nodes[i0 + 1 + nw]),
                            emit.own_vertex(geo, &nodes[i0 + nw]),
                        ],
                    };
                    emit.out
                        .indices
                        .extend_from_slice(&[v[0], v[2], v[1], v[0], v[3], v[2]]);
                    carry = Some((v[1], v[2]));
                    if emit.water.is_some() {
                        // The tops are the nodes' own vertices: the cell holds
                        // water when one of them lies under it.
                        let corners = [i0, i0 + 1, i0 + 1 + nw, i0 + nw];
                        let p = &emit.out.positions;
                        if (0..4).any(|c| nodes[corners[c]].w > p[v[c] as usize][1]) {
                            emit.water_tri([v[0], v[2], v[1]]);
                            emit.water_tri([v[0], v[3], v[2]]);
                        }
                    }
                    continue;
                }
                carry = None;
                if c0 >= 0x80 && ka[k + 1] >= 0x80 && kb[k + 1] >= 0x80 && kb[k] >= 0x80 {
                    continue;
                }
                let c = [
                    &nodes[i0],
                    &nodes[i0 + 1],
                    &nodes[i0 + 1 + nw],
                    &nodes[i0 + nw],
                ];
                emit.wet = emit.water.is_some() && {
                    let kmin = c.iter().map(|p| band(p.l)).min().unwrap_or(0);
                    let hmin = c.iter().fold(f32::INFINITY, |m, p| m.min(p.h));
                    let wmax = c.iter().fold(f32::NEG_INFINITY, |m, p| m.max(p.w));
                    wmax > wet_bound(kmin, hmin, geo.lh)
                };
                let cell = Cell {
                    pts: [*c[0], *c[1], *c[2], *c[3]],
                    cx: r.x0 + k as u32,
                    cz,
                };
                cell_pieces(geo, &cell, rings, &mut emit);
            }
        }
        for n in &mut emit.out.normals {
            *n = normalize3(*n);
        }
    }
}

/// A lower bound (less a margin for rounding) of the height of every top
/// vertex in a cell whose corners' lowest band is `kmin` and lowest height
/// offset `hmin`: a band piece of band `b >= kmin` lies at least at
/// `(b - 0.5) * level_height` plus a height offset interpolated from the
/// corners. A cell whose water is nowhere above this bound holds no water.
/// Non-decreasing in `kmin` and `hmin`, so the bound of a rectangle's nodes
/// is below that of each of its cells.
#[inline]
fn wet_bound(kmin: u8, hmin: f32, lh: f32) -> f32 {
    ((kmin as f32 - 0.5) * lh + hmin) - 0.01 * lh
}

/// Rows `rm`, `r0` and `rp` (each `len` long) of a layer.
#[inline]
fn rows3(v: &[f32], rm: usize, r0: usize, rp: usize, len: usize) -> [&[f32]; 3] {
    [&v[rm..rm + len], &v[r0..r0 + len], &v[rp..rp + len]]
}

/// Meshes a cell that is not one plain quad: cuts it along the chasm line
/// and then along each rim, as marching squares does (straight segments
/// between the crossings on the cell's sides, a saddle decided by the
/// corner average), and emits every band piece.
fn cell_pieces(geo: &Geo, cell: &Cell, rings: &mut Rings, emit: &mut Emit) {
    let Rings {
        ring,
        land,
        land2,
        chasm,
        lower,
        upper,
        second,
        stack,
        spans,
    } = rings;
    ring.clear();
    for (i, p) in cell.pts.iter().enumerate() {
        ring.push(Pt {
            edge: i as u8,
            ..*p
        });
    }
    let [l0, l1, l2, l3] = cell.pts.map(|p| p.l);
    let neg = cell.pts.iter().filter(|p| p.g < 0.0).count();
    if neg == 4 {
        return;
    }
    stack.clear();
    spans.clear();
    let push = |stack: &mut Vec<Pt>, spans: &mut Vec<(usize, usize, u8)>, piece: &[Pt], k| {
        if !piece.is_empty() {
            spans.push((stack.len(), piece.len(), k));
            stack.extend_from_slice(piece);
        }
    };
    // Takes the piece on top of the stack into `ring`; returns its lowest rim.
    let pop = |stack: &mut Vec<Pt>, spans: &mut Vec<(usize, usize, u8)>, ring: &mut Vec<Pt>| {
        let (start, len, k) = spans.pop()?;
        ring.clear();
        ring.extend_from_slice(&stack[start..start + len]);
        stack.truncate(start);
        Some(k)
    };
    let lowest = |piece: &[Pt]| piece.iter().map(|p| band(p.l)).min().unwrap_or(0);
    // The piece being cut is in `ring`, with its lowest rim `k`; pieces
    // still to cut wait on the stack.
    let mut k;
    if neg > 0 {
        let [g0, g1, g2, g3] = cell.pts.map(|p| p.g);
        // The chasm is "above" the cut; the land connects across a saddle
        // when the centre is land.
        let apart = split(
            ring,
            land,
            chasm,
            land2,
            GCUT,
            |p| p.g < 0.0,
            |a, _| geo.cross_at(cell, a.edge, EV_GROUND),
            || !centre_is_solid(g0, g1, g2, g3, 0.0),
        );
        if apart != Some(false) {
            land2.clear();
        }
        let mut chord = 0;
        for p in land.iter_mut().chain(land2.iter_mut()) {
            if p.edge == GCUT {
                p.chord = chord;
                chord += 1;
            }
        }
        push(stack, spans, land2, lowest(land2));
        push(stack, spans, land, lowest(land));
        let Some(low) = pop(stack, spans, ring) else {
            return;
        };
        k = low;
    } else {
        k = lowest(ring);
    }
    // Peel the bands from the bottom: each piece is cut by its lowest rim,
    // the part below is emitted and the part above is cut next (it would
    // be the top of the stack), the second part of a saddle waiting on the
    // stack.
    loop {
        let kmax = ring.iter().map(|p| band(p.l)).max().unwrap_or(0);
        if k >= kmax {
            emit.band(geo, ring, k);
        } else {
            let apart = split(
                ring,
                lower,
                upper,
                second,
                LCUT + k,
                |p| band(p.l) > k,
                |a, b| match a.edge {
                    e if e < 4 => geo.cross_at(cell, e, k as u64),
                    GCUT => geo.chord_cross(cell, a, b, k),
                    _ => *a,
                },
                || centre_is_solid(l0, l1, l2, l3, k as f32 + 0.5),
            );
            emit.band(geo, lower, k);
            match apart {
                Some(false) => emit.band(geo, second, k),
                Some(true) => push(stack, spans, second, k + 1),
                None => {}
            }
            if !upper.is_empty() {
                std::mem::swap(ring, upper);
                k += 1;
                continue;
            }
        }
        let Some(next) = pop(stack, spans, ring) else {
            return;
        };
        k = next;
    }
}

fn check_options(layers: &MapLayers, o: &MapMeshOptions) -> Result<(), MeshError> {
    let side = layers.width_cells().max(layers.depth_cells()) as f64;
    for (name, v, limit) in [
        ("cell_size", o.cell_size, MAX_MAGNITUDE / side),
        ("level_height", o.level_height, MAX_MAGNITUDE / 16.0),
        ("chasm_depth", o.chasm_depth, MAX_MAGNITUDE),
    ] {
        if !(v.is_finite() && v > 0.0 && (v as f64) <= limit) {
            return Err(MeshError::param(
                name,
                v,
                "must be finite, greater than zero and small enough that the map's extent stays below 1e30",
            ));
        }
    }
    Ok(())
}

fn check_rect(layers: &MapLayers, r: CellRect) -> Result<(), MeshError> {
    if r.is_empty() {
        return Err(MeshError::param(
            "cells",
            format!("{}..{} x {}..{}", r.x0, r.x1, r.y0, r.y1),
            "the cell rectangle must hold at least one cell (x0 < x1 and z0 < z1)",
        ));
    }
    let [nx, nz] = layers.nodes();
    if r.x1 > layers.width_cells() || r.y1 > layers.depth_cells() {
        return Err(MeshError::RegionOutOfBounds {
            x0: r.x0,
            y0: r.y0,
            x1: r.x1,
            y1: r.y1,
            width: nx,
            height: nz,
        });
    }
    Ok(())
}

fn check_nodes(layers: &MapLayers, r: CellRect) -> Result<(), MeshError> {
    let n = layers.node_count();
    for (name, len) in [
        ("ground", layers.ground.len()),
        ("level", layers.level.len()),
        ("softness", layers.softness.len()),
        ("height", layers.height.len()),
        ("water", layers.water.len()),
        ("splat", layers.splat.len()),
    ] {
        if len != n {
            return Err(MeshError::LengthMismatch {
                name,
                expected: n,
                got: len,
            });
        }
    }
    let [nx, nz] = layers.nodes();
    let (xa, xb) = (r.x0.saturating_sub(1), (r.x1 + 1).min(nx - 1));
    let (za, zb) = (r.y0.saturating_sub(1), (r.y1 + 1).min(nz - 1));
    let row = nx as usize;
    for z in za..=zb {
        let range = z as usize * row + xa as usize..=z as usize * row + xb as usize;
        // Fast check of the whole row; the detailed pass below only runs to
        // name the first bad value.
        // (`fold` with `&` rather than `all`, so the loops vectorise.)
        let bounded = |v: &[f32]| v.iter().fold(true, |ok, &v| ok & (v.abs() < MAGNITUDE_F32));
        let within =
            |v: &[f32], lo: f32, hi: f32| v.iter().fold(true, |ok, &v| ok & (v >= lo) & (v <= hi));
        // Texture ids are below 16 when no id byte has a high nibble.
        debug_assert_eq!(MAX_TEXTURES, 16);
        let row_ok = bounded(&layers.ground[range.clone()])
            && bounded(&layers.height[range.clone()])
            && bounded(&layers.water[range.clone()])
            && within(&layers.level[range.clone()], -0.5, MAX_LEVEL as f32 + 0.5)
            && within(&layers.softness[range.clone()], 0.0, 1.0)
            && layers.splat[range.clone()]
                .iter()
                .fold(0u32, |acc, s| acc | u32::from_le_bytes(s.ids))
                & 0xf0f0_f0f0
                == 0;
        if row_ok {
            continue;
        }
        for (name, values, bounded) in [
            ("ground", &layers.ground, true),
            ("level", &layers.level, false),
            ("softness", &layers.softness, false),
            ("height", &layers.height, true),
            ("water", &layers.water, true),
        ] {
            for i in range.clone() {
                let v = values[i];
                if !v.is_finite() {
                    return Err(MeshError::NonFiniteSample {
                        name,
                        index: i,
                        value: v,
                    });
                }
                if bounded && (v as f64).abs() > MAX_MAGNITUDE {
                    return Err(MeshError::param(
                        name,
                        v,
                        "values beyond +-1e30 are not supported",
                    ));
                }
            }
        }
        for i in range.clone() {
            let l = layers.level[i];
            if !(-0.5..=MAX_LEVEL as f32 + 0.5).contains(&l) {
                return Err(MeshError::param(
                    "level",
                    l,
                    "cliff levels lie in 0..=15 (terrace values -0.5..=15.5)",
                ));
            }
            let s = layers.softness[i];
            if !(0.0..=1.0).contains(&s) {
                return Err(MeshError::param("softness", s, "softness lies in 0..=1"));
            }
            let ids = layers.splat[i].ids;
            if ids.iter().any(|&id| id >= MAX_TEXTURES) {
                return Err(MeshError::param(
                    "splat id",
                    format!("{ids:?}"),
                    "texture ids lie in 0..16",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedupe_keeps_the_later_copy() {
        let p = |key, edge| Pt {
            key,
            edge,
            ..Pt::default()
        };
        let mut r = vec![p(1, 0), p(2, 1), p(2, 2), p(1, 3)];
        dedupe(&mut r);
        let got: Vec<_> = r.iter().map(|p| (p.key, p.edge)).collect();
        assert_eq!(got, vec![(1, 0), (2, 2)]);
    }

    #[test]
    fn the_f32_magnitude_check_is_the_f64_one() {
        // Around the limit, the limit's own neighbours, and what is not finite.
        let limit = MAGNITUDE_F32;
        let mut values = vec![0.0, 1.0, f32::MAX, f32::INFINITY, f32::NAN, 1.0e30];
        for v in [
            limit,
            limit.next_down(),
            limit.next_down().next_down(),
            limit.next_up(),
        ] {
            values.extend([v, -v]);
        }
        for v in values {
            assert_eq!(
                v.abs() < MAGNITUDE_F32,
                (v as f64).abs() <= MAX_MAGNITUDE,
                "{v:e}"
            );
        }
    }

    #[test]
    fn the_lowest_vertex_bound_holds_for_every_node_surface() {
        // `prepare` skips its water pass when no water lies above this bound
        // of the rectangle's lowest level and height offset; every node's
        // own surface (the formula `prepare` uses) must lie at or above it.
        let lh = [0.001f32, 0.37, 1.0, 4.0, 1000.0];
        let levels = [-0.5f32, -0.25, 0.0, 0.49, 0.5, 0.51, 3.5, 7.2, 15.5];
        let heights = [-1.0e6f32, -3.3, 0.0, 0.7, 12345.6];
        for &lh in &lh {
            for &lmin in &levels {
                for &hmin in &heights {
                    let bound = wet_bound(band(lmin), hmin, lh);
                    for &l in levels.iter().filter(|&&l| l >= lmin) {
                        for &h in heights.iter().filter(|&&h| h >= hmin) {
                            for soft in [0.0f32, 0.3, 1.0] {
                                let terraced = band(l) as f32;
                                let continuous = l.clamp(0.0, MAX_LEVEL as f32);
                                let s = (terraced + (continuous - terraced) * soft) * lh + h;
                                assert!(s >= bound, "{l} {h} {soft} {lh}: {s} < {bound}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn band_matches_level_index() {
        use isoterra_field::map::level_index;
        let mut v = -0.5f32;
        while v <= 15.5 {
            for x in [v, v.next_up(), v.next_down().max(-0.5)] {
                assert_eq!(band(x), level_index(x), "{x}");
                let r = x + 0.5;
                assert_eq!(
                    is_rim(x),
                    r == r.floor() && (1.0..=15.0).contains(&r),
                    "{x}"
                );
            }
            v += 0.125;
        }
        assert_eq!(band(-0.50000006), 0);
    }

    #[test]
    fn rims_and_low_bands() {
        assert!(is_rim(0.5) && is_rim(14.5));
        assert!(!is_rim(-0.5) && !is_rim(15.5) && !is_rim(0.25));
        assert_eq!(low_band(0.5), 0);
        assert_eq!(low_band(0.7), 1);
        assert_eq!(low_band(15.5), 15);
    }

    #[test]
    fn hasher_spreads_low_bits() {
        let mut a = KeyHasher::default();
        a.write_u64(1);
        let mut b = KeyHasher::default();
        b.write_u64(2);
        assert_ne!(a.finish() & 0xff, b.finish() & 0xff);
    }
}
