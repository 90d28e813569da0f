//! The row-by-row marching squares scan shared by [`MarchingSquares`](crate::MarchingSquares)
//! and [`ContourTracer`](crate::ContourTracer).
//!
//! Each node row is packed into bits (`value >= iso`), 64 nodes per word. Crossed
//! edges and non-uniform cells are then found with a few word operations and
//! visited with `trailing_zeros`, so runs of empty or full cells cost almost
//! nothing. Points on crossed edges are created once per edge, in a fixed order
//! (horizontal edges of the first node row, then for every cell row its vertical
//! edges followed by the horizontal edges of the next node row), and their ids
//! are kept in per-row arrays indexed by column: welding needs no hash map.

use crate::cases::{CASES, centre_is_solid, table_index};
use crate::cells::CellRect;
use crate::key::EdgeKey;

/// An id slot that holds nothing.
pub(crate) const NONE: u32 = u32::MAX;

/// Receives contour points and directed segments.
pub(crate) trait SegSink {
    /// False for the sink that ignores contours.
    const ACTIVE: bool;
    /// Stores a point and returns its id.
    fn point(&mut self, p: [f32; 2], key: EdgeKey) -> u32;
    /// Stores the directed segment `from -> to` (solid on the left).
    fn segment(&mut self, from: u32, to: u32);
    /// The scan has emitted the points of its first node row.
    #[inline(always)]
    fn first_row_done(&mut self) {}
    /// The scan is about to emit the points of its last node row.
    #[inline(always)]
    fn last_row_begins(&mut self) {}
}

/// Receives fill triangles.
pub(crate) trait TriSink {
    /// True when the sink wants the material of each cell.
    const MATERIAL: bool;
    /// One counter-clockwise triangle of a cell of material `m`.
    fn tri(&mut self, m: u8, t: [u32; 3]);
    /// A full cell: corners `c0, c1, c2, c3` counter-clockwise.
    fn quad(&mut self, m: u8, q: [u32; 4]);
}

/// Ignores contours.
pub(crate) struct NoSegs;

impl SegSink for NoSegs {
    const ACTIVE: bool = false;
    #[inline(always)]
    fn point(&mut self, _p: [f32; 2], _key: EdgeKey) -> u32 {
        NONE
    }
    #[inline(always)]
    fn segment(&mut self, _from: u32, _to: u32) {}
}

/// Ignores triangles.
pub(crate) struct NoTris;

impl TriSink for NoTris {
    const MATERIAL: bool = false;
    #[inline(always)]
    fn tri(&mut self, _m: u8, _t: [u32; 3]) {}
    #[inline(always)]
    fn quad(&mut self, _m: u8, _q: [u32; 4]) {}
}

/// Inputs of one scan.
pub(crate) struct ScanInput<'a> {
    pub values: &'a [f32],
    /// Field width in nodes (row stride).
    pub width: usize,
    pub iso: f32,
    pub origin: [f64; 2],
    pub cell_size: f64,
    pub cells: CellRect,
    /// Added to node coordinates when forming keys.
    pub key_offset: [u32; 2],
    /// Material ids laid out like `values`, when triangles carry materials.
    pub materials: Option<&'a [u8]>,
}

/// Per-row scratch of a scan: packed solid bits and point ids by column.
#[derive(Debug, Default, Clone)]
pub(crate) struct RowScratch {
    bot: Vec<u64>,
    top: Vec<u64>,
    xs: Vec<f32>,
    node_bot: Vec<u32>,
    node_top: Vec<u32>,
    hf_bot: Vec<u32>,
    hf_top: Vec<u32>,
    vf: Vec<u32>,
    hs_bot: Vec<u32>,
    hs_top: Vec<u32>,
    vs: Vec<u32>,
}

/// The parameter of the iso crossing on an edge, measured from its
/// lower-index node `a` toward its higher-index node `b`, clamped to `[0, 1]`.
#[inline]
pub(crate) fn edge_t(va: f32, vb: f32, iso: f32) -> f64 {
    let a = va as f64;
    let d = vb as f64 - a;
    if d == 0.0 {
        return 0.5;
    }
    ((iso as f64 - a) / d).clamp(0.0, 1.0)
}

/// The one formula for a coordinate on the grid: `origin + (index + t) * cell_size`,
/// evaluated in `f64` and rounded once.
#[inline]
pub(crate) fn coord(origin: f64, index: u32, t: f64, cell_size: f64) -> f32 {
    (origin + (index as f64 + t) * cell_size) as f32
}

/// Packs `chunk[i] >= iso` into bit `i` (SSE2 on x86_64, shared by the squares
/// scan and the cubes kernel).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn pack64(chunk: &[f32; 64], iso: f32) -> u64 {
    use std::arch::x86_64::{_mm_cmpge_ps, _mm_loadu_ps, _mm_movemask_ps, _mm_set1_ps};
    // SAFETY: SSE2 is part of the x86_64 baseline, so these intrinsics are always
    // available; `chunk` holds 64 values and every load reads `4 * k .. 4 * k + 4 <= 64`
    // (unaligned loads are allowed).
    unsafe {
        let t = _mm_set1_ps(iso);
        let mut m = 0u64;
        for k in 0..16 {
            let v = _mm_loadu_ps(chunk.as_ptr().add(4 * k));
            m |= (_mm_movemask_ps(_mm_cmpge_ps(v, t)) as u32 as u64) << (4 * k);
        }
        m
    }
}

/// Packs `chunk[i] >= iso` into bit `i` (portable fallback).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(crate) fn pack64(chunk: &[f32; 64], iso: f32) -> u64 {
    let mut m = 0u64;
    for (i, &v) in chunk.iter().enumerate() {
        m |= ((v >= iso) as u64) << i;
    }
    m
}

/// Packs `values[i] >= iso` into bit `i % 64` of word `i / 64`; zeroes the rest of `out`.
#[inline]
pub(crate) fn pack_solid(values: &[f32], iso: f32, out: &mut [u64]) {
    let mut chunks = values.chunks_exact(64);
    let mut w = 0;
    for chunk in &mut chunks {
        let chunk: &[f32; 64] = chunk.try_into().expect("chunks_exact gives 64 values");
        out[w] = pack64(chunk, iso);
        w += 1;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut m = 0u64;
        for (i, &v) in rest.iter().enumerate() {
            m |= ((v >= iso) as u64) << i;
        }
        out[w] = m;
        w += 1;
    }
    for o in &mut out[w..] {
        *o = 0;
    }
}

/// Bits `i + 1` of a packed row, shifted down to position `i` (the row holds a spare zero word).
#[inline(always)]
fn shr1(s: &[u64], w: usize) -> u64 {
    (s[w] >> 1) | (s[w + 1] << 63)
}

/// Mask of the valid bits of word `w` for `n` items.
#[inline(always)]
fn valid(w: usize, n: usize) -> u64 {
    let end = n - w * 64;
    if end >= 64 { !0 } else { (1u64 << end) - 1 }
}

/// The material of a cell: the most common id among its solid corners, ties
/// going to the smallest id.
#[inline]
pub(crate) fn cell_material(case: u8, ids: [u8; 4]) -> u8 {
    if ids[0] == ids[1] && ids[1] == ids[2] && ids[2] == ids[3] {
        return ids[0];
    }
    let mut best = u8::MAX;
    let mut best_count = 0;
    for k in 0..4 {
        if case & (1 << k) == 0 {
            continue;
        }
        let id = ids[k];
        let mut count = 0;
        for (j, &other) in ids.iter().enumerate() {
            if case & (1 << j) != 0 && other == id {
                count += 1;
            }
        }
        if count > best_count || (count == best_count && id < best) {
            best = id;
            best_count = count;
        }
    }
    best
}

/// What a scan of [`RowScratch::scan`] will emit, counted from the packed
/// rows alone (no points are made): for sizing a fresh output once.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanCounts {
    /// Nodes at or above the iso value.
    pub solid_nodes: usize,
    /// Edges between nodes on either side of it (horizontal and vertical).
    pub crossed_edges: usize,
    /// Cells whose four corners are solid.
    pub full_cells: usize,
    /// Cells whose corners are not all on one side (saddles included).
    pub mixed_cells: usize,
    /// Mixed cells with two diagonal solid corners.
    pub saddles: usize,
}

impl ScanCounts {
    /// Fill vertices: one per solid node and one per crossed edge.
    pub(crate) fn fill_vertices(&self) -> usize {
        self.solid_nodes + self.crossed_edges
    }

    /// Most fill triangles: two per full cell, at most three per mixed
    /// cell (a pentagon) and four per saddle (a hexagon).
    pub(crate) fn max_triangles(&self) -> usize {
        2 * self.full_cells + 3 * (self.mixed_cells - self.saddles) + 4 * self.saddles
    }

    /// Contour segments: one per mixed cell, two per saddle.
    pub(crate) fn segments(&self) -> usize {
        self.mixed_cells + self.saddles
    }
}

impl RowScratch {
    /// Counts what [`scan`](Self::scan) emits for `input`, reading only
    /// the packed rows.
    pub(crate) fn count(&mut self, input: &ScanInput<'_>) -> ScanCounts {
        let r = input.cells;
        let mut c = ScanCounts::default();
        if r.x1 <= r.x0 || r.y1 <= r.y0 {
            return c;
        }
        let ncx = (r.x1 - r.x0) as usize;
        let nnx = ncx + 1;
        let words = nnx.div_ceil(64);
        let cell_words = ncx.div_ceil(64);
        for v in [&mut self.bot, &mut self.top] {
            v.clear();
            v.resize(words + 1, 0);
        }
        let row = |j: u32| -> &[f32] {
            let start = j as usize * input.width + r.x0 as usize;
            &input.values[start..start + nnx]
        };
        // Solid nodes and crossed horizontal edges of a node row.
        let node_row = |bits: &[u64], c: &mut ScanCounts| {
            for (w, &word) in bits.iter().enumerate().take(words) {
                c.solid_nodes += (word & valid(w, nnx)).count_ones() as usize;
            }
            for w in 0..cell_words {
                c.crossed_edges +=
                    ((bits[w] ^ shr1(bits, w)) & valid(w, ncx)).count_ones() as usize;
            }
        };
        pack_solid(row(r.y0), input.iso, &mut self.top[..words]);
        node_row(&self.top, &mut c);
        for j in r.y0..r.y1 {
            std::mem::swap(&mut self.bot, &mut self.top);
            pack_solid(row(j + 1), input.iso, &mut self.top[..words]);
            node_row(&self.top, &mut c);
            let (bot, top) = (&self.bot, &self.top);
            for (w, (&b, &t)) in bot.iter().zip(top.iter()).enumerate().take(words) {
                c.crossed_edges += ((b ^ t) & valid(w, nnx)).count_ones() as usize;
            }
            for w in 0..cell_words {
                // Corners 0 (x, y), 1 (x + 1, y), 2 (x + 1, y + 1), 3 (x, y + 1).
                let (a, b, d, e) = (bot[w], shr1(bot, w), shr1(top, w), top[w]);
                let v = valid(w, ncx);
                c.full_cells += (a & b & d & e & v).count_ones() as usize;
                c.mixed_cells += (((a ^ b) | (a ^ d) | (a ^ e)) & v).count_ones() as usize;
                c.saddles += (!(a ^ d) & !(b ^ e) & (a ^ b) & v).count_ones() as usize;
            }
        }
        c
    }

    fn prepare(&mut self, nnx: usize, words: usize) {
        for v in [&mut self.bot, &mut self.top] {
            v.clear();
            v.resize(words + 1, 0);
        }
        for v in [
            &mut self.node_bot,
            &mut self.node_top,
            &mut self.hf_bot,
            &mut self.hf_top,
            &mut self.vf,
            &mut self.hs_bot,
            &mut self.hs_top,
            &mut self.vs,
        ] {
            v.clear();
            v.resize(nnx, NONE);
        }
    }

    fn swap_rows(&mut self) {
        std::mem::swap(&mut self.bot, &mut self.top);
        std::mem::swap(&mut self.node_bot, &mut self.node_top);
        std::mem::swap(&mut self.hf_bot, &mut self.hf_top);
        std::mem::swap(&mut self.hs_bot, &mut self.hs_top);
    }

    /// Runs the scan over `input.cells`. With `FILL`, solid nodes and crossed
    /// edges become vertices in `positions` and cells emit triangles into `tris`;
    /// contour points and segments go to `segs`.
    pub(crate) fn scan<const FILL: bool, S: SegSink, T: TriSink>(
        &mut self,
        input: &ScanInput<'_>,
        positions: &mut Vec<[f32; 3]>,
        segs: &mut S,
        tris: &mut T,
    ) {
        let r = input.cells;
        if r.x1 <= r.x0 || r.y1 <= r.y0 || !(FILL || S::ACTIVE) {
            return;
        }
        let ncx = (r.x1 - r.x0) as usize;
        let nnx = ncx + 1;
        let words = nnx.div_ceil(64);
        let cell_words = ncx.div_ceil(64);
        self.prepare(nnx, words);
        self.xs.clear();
        self.xs.extend(
            (0..nnx as u32).map(|i| coord(input.origin[0], r.x0 + i, 0.0, input.cell_size)),
        );

        let row = |j: u32| -> &[f32] {
            let start = j as usize * input.width + r.x0 as usize;
            &input.values[start..start + nnx]
        };

        let mut top_vals = row(r.y0);
        pack_solid(top_vals, input.iso, &mut self.top[..words]);
        self.node_row::<FILL, S>(input, r.y0, top_vals, positions, segs);
        segs.first_row_done();

        for j in r.y0..r.y1 {
            self.swap_rows();
            let bot_vals = top_vals;
            top_vals = row(j + 1);
            pack_solid(top_vals, input.iso, &mut self.top[..words]);
            self.vertical_edges::<FILL, S>(input, j, bot_vals, top_vals, positions, segs);
            if j + 1 == r.y1 {
                segs.last_row_begins();
            }
            self.node_row::<FILL, S>(input, j + 1, top_vals, positions, segs);
            let mats = input.materials.map(|m| {
                let b = j as usize * input.width + r.x0 as usize;
                let t = b + input.width;
                (&m[b..b + nnx], &m[t..t + nnx])
            });
            // The row after next, asked for a few cache lines per word of
            // cells so that it comes in while these cells are worked on.
            let ahead = if j + 2 <= r.y1 { row(j + 2) } else { &[] };
            self.cells::<FILL, S, T>(
                input, cell_words, ncx, bot_vals, top_vals, ahead, mats, segs, tris,
            );
        }
    }

    /// Vertices of node row `j` (solid nodes) and points on its crossed horizontal edges.
    /// Writes ids into the `*_top` arrays.
    #[inline]
    fn node_row<const FILL: bool, S: SegSink>(
        &mut self,
        input: &ScanInput<'_>,
        j: u32,
        vals: &[f32],
        positions: &mut Vec<[f32; 3]>,
        segs: &mut S,
    ) {
        let ncx = vals.len() - 1;
        let nnx = vals.len();
        let y = coord(input.origin[1], j, 0.0, input.cell_size);
        let ky = j + input.key_offset[1];
        let bits = &self.top;
        if FILL {
            let node_top = &mut self.node_top;
            for (w, &word) in bits.iter().enumerate().take(nnx.div_ceil(64)) {
                let mut m = word & valid(w, nnx);
                if m == 0 {
                    continue;
                }
                positions.reserve(m.count_ones() as usize);
                while m != 0 {
                    let i = w * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    node_top[i] = positions.len() as u32;
                    positions.push([self.xs[i], y, 0.0]);
                }
            }
        }
        for w in 0..ncx.div_ceil(64) {
            let mut m = (bits[w] ^ shr1(bits, w)) & valid(w, ncx);
            while m != 0 {
                let i = w * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let t = edge_t(vals[i], vals[i + 1], input.iso);
                let gx = input.cells.x0 + i as u32;
                let p = [coord(input.origin[0], gx, t, input.cell_size), y];
                if FILL {
                    self.hf_top[i] = positions.len() as u32;
                    positions.push([p[0], p[1], 0.0]);
                }
                if S::ACTIVE {
                    self.hs_top[i] =
                        segs.point(p, EdgeKey::horizontal(gx + input.key_offset[0], ky));
                }
            }
        }
    }

    /// Points on the crossed vertical edges between node rows `j` and `j + 1`.
    #[inline]
    fn vertical_edges<const FILL: bool, S: SegSink>(
        &mut self,
        input: &ScanInput<'_>,
        j: u32,
        bot_vals: &[f32],
        top_vals: &[f32],
        positions: &mut Vec<[f32; 3]>,
        segs: &mut S,
    ) {
        let nnx = bot_vals.len();
        let ky = j + input.key_offset[1];
        for w in 0..nnx.div_ceil(64) {
            let mut m = (self.bot[w] ^ self.top[w]) & valid(w, nnx);
            while m != 0 {
                let i = w * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let t = edge_t(bot_vals[i], top_vals[i], input.iso);
                let p = [self.xs[i], coord(input.origin[1], j, t, input.cell_size)];
                if FILL {
                    self.vf[i] = positions.len() as u32;
                    positions.push([p[0], p[1], 0.0]);
                }
                if S::ACTIVE {
                    let gx = input.cells.x0 + i as u32 + input.key_offset[0];
                    self.vs[i] = segs.point(p, EdgeKey::vertical(gx, ky));
                }
            }
        }
    }

    /// Triangles and segments of the cells of one row.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn cells<const FILL: bool, S: SegSink, T: TriSink>(
        &self,
        input: &ScanInput<'_>,
        cell_words: usize,
        ncx: usize,
        bot_vals: &[f32],
        top_vals: &[f32],
        ahead: &[f32],
        mats: Option<(&[u8], &[u8])>,
        segs: &mut S,
        tris: &mut T,
    ) {
        let (bot, top) = (&self.bot, &self.top);
        for w in 0..cell_words {
            for k in 0..4 {
                if let Some(v) = ahead.get(w * 64 + 16 * k) {
                    crate::cache::prefetch(v);
                }
            }
            let sb = bot[w];
            let sbn = shr1(bot, w);
            let st = top[w];
            let stn = shr1(top, w);
            let ok = valid(w, ncx);
            let full = sb & sbn & st & stn & ok;
            let any = (sb | sbn | st | stn) & ok;
            let mut m = if FILL { any } else { any & !full };
            while m != 0 {
                let b = m.trailing_zeros();
                m &= m - 1;
                let i = w * 64 + b as usize;
                let case = (((sb >> b) & 1)
                    | (((sbn >> b) & 1) << 1)
                    | (((stn >> b) & 1) << 2)
                    | (((st >> b) & 1) << 3)) as u8;
                let mat = match (T::MATERIAL, mats) {
                    (true, Some((mb, mt))) => {
                        cell_material(case, [mb[i], mb[i + 1], mt[i + 1], mt[i]])
                    }
                    _ => 0,
                };
                if case == 15 {
                    if FILL {
                        tris.quad(
                            mat,
                            [
                                self.node_bot[i],
                                self.node_bot[i + 1],
                                self.node_top[i + 1],
                                self.node_top[i],
                            ],
                        );
                    }
                    continue;
                }
                let connected = (case == 5 || case == 10)
                    && centre_is_solid(
                        bot_vals[i],
                        bot_vals[i + 1],
                        top_vals[i + 1],
                        top_vals[i],
                        input.iso,
                    );
                let info = &CASES[table_index(case, connected)];
                if FILL {
                    let ids = [
                        self.node_bot[i],
                        self.hf_bot[i],
                        self.node_bot[i + 1],
                        self.vf[i + 1],
                        self.node_top[i + 1],
                        self.hf_top[i],
                        self.node_top[i],
                        self.vf[i],
                    ];
                    for t in &info.tris[..info.ntri as usize] {
                        tris.tri(
                            mat,
                            [ids[t[0] as usize], ids[t[1] as usize], ids[t[2] as usize]],
                        );
                    }
                }
                if S::ACTIVE {
                    let ids = [
                        NONE,
                        self.hs_bot[i],
                        NONE,
                        self.vs[i + 1],
                        NONE,
                        self.hs_top[i],
                        NONE,
                        self.vs[i],
                    ];
                    for s in &info.segs[..info.nseg as usize] {
                        segs.segment(ids[s[0] as usize], ids[s[1] as usize]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_solid_matches_scalar() {
        let values: Vec<f32> = (0..150).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
        let mut out = vec![u64::MAX; 4];
        pack_solid(&values, 0.0, &mut out);
        for (i, &v) in values.iter().enumerate() {
            assert_eq!((out[i / 64] >> (i % 64)) & 1 == 1, v >= 0.0, "node {i}");
        }
        assert_eq!(out[3], 0);
        assert_eq!(out[2] >> (150 - 128), 0);
    }

    #[test]
    fn edge_t_guards_and_clamps() {
        assert_eq!(edge_t(-1.0, 1.0, 0.0), 0.5);
        assert_eq!(edge_t(0.0, -1.0, 0.0), 0.0);
        assert_eq!(edge_t(2.0, 2.0, 0.0), 0.5);
        assert_eq!(edge_t(f32::MAX, -f32::MAX, -f32::MAX), 1.0);
        let t = edge_t(-f32::MAX, f32::MAX, 0.0);
        assert!((t - 0.5).abs() < 1e-12);
    }

    #[test]
    fn material_rule_is_majority_then_smallest() {
        assert_eq!(cell_material(15, [3, 3, 3, 3]), 3);
        assert_eq!(cell_material(15, [1, 2, 2, 1]), 1);
        assert_eq!(cell_material(15, [4, 2, 2, 2]), 2);
        assert_eq!(cell_material(0b0001, [9, 2, 2, 2]), 9);
        assert_eq!(cell_material(0b0110, [0, 5, 7, 0]), 5);
        assert_eq!(cell_material(0b1011, [6, 6, 1, 2]), 6);
    }
}
