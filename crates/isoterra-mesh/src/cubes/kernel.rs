//! The slice-by-slice marching cubes scan.
//!
//! Node slices (`z` = const) are classified once into packed bits (`value >= iso`,
//! 64 nodes per word, one spare zero word per row) with a per-row summary (all air,
//! all solid, or mixed). Classification runs one slice ahead of the slab being
//! meshed, so the values that gradients read on the far slice are already in cache.
//! Then, slab by slab:
//!
//! 1. the crossed x- and y-edges of the new node slice and the crossed z-edges
//!    between the two slices are found with word operations (`a ^ b`), each gets
//!    its vertex, and the vertex id is stored in an array indexed by the edge's
//!    position (two slices of x/y-edge ids, one slab of z-edge ids);
//! 2. the non-uniform cells of each cell row are found with word operations over
//!    the four node rows around it; rows whose four node rows are uniform and
//!    alike are skipped without touching a word (the role of Flying Edges' row
//!    trimming), and inside a row 64 cells are tested per word operation;
//! 3. each non-uniform cell looks up its triangles (edge triples) and writes the
//!    stored ids.
//!
//! Id arrays are never cleared: every crossed edge's slot is written before any
//! cell reads it, and cells only read the slots of crossed edges.
//!
//! Vertices and triangles go to a [`Sink`] (`sink.rs`): pushed onto vectors,
//! only counted, or written into one slab's exactly sized part of the output.

use super::CellBox;
use super::sink::Sink;
use super::tables::{CENTRE, SubEntry, TALLY_AMBIGUOUS, Tables, tables, tally_of};
use crate::scan::pack64;

/// Row summary: every node is air.
const AIR: u8 = 0;
/// Row summary: every node is solid.
const SOLID: u8 = 1;
/// Row summary: both kinds of nodes.
const MIXED: u8 = 2;

/// Validated inputs of one scan.
#[derive(Clone, Copy)]
pub(crate) struct Input<'a> {
    values: &'a [f32],
    materials: Option<&'a [u8]>,
    /// Node strides along y and z.
    sy: usize,
    sz: usize,
    origin: [f32; 3],
    cell_size: f32,
    cells: CellBox,
    iso: f32,
    /// Inclusive node bounds that gradients may read.
    lo: [u32; 3],
    hi: [u32; 3],
}

impl<'a> Input<'a> {
    /// Checks every bound the scan's unchecked reads rely on.
    ///
    /// Panics on a violation: the public entry points validate user input first,
    /// so a panic here is a bug in this crate.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        values: &'a [f32],
        materials: Option<&'a [u8]>,
        dims: [u32; 3],
        origin: [f32; 3],
        cell_size: f32,
        cells: CellBox,
        iso: f32,
        lo: [u32; 3],
        hi: [u32; 3],
    ) -> Self {
        let [w, h, d] = dims.map(|n| n as usize);
        assert_eq!(
            Some(values.len()),
            w.checked_mul(h).and_then(|n| n.checked_mul(d))
        );
        assert!(materials.is_none_or(|m| m.len() == values.len()));
        assert!(!cells.is_empty());
        assert!(cells.x1 < dims[0] && cells.y1 < dims[1] && cells.z1 < dims[2]);
        let (c0, c1) = (
            [cells.x0, cells.y0, cells.z0],
            [cells.x1, cells.y1, cells.z1],
        );
        for k in 0..3 {
            assert!(lo[k] <= c0[k] && c1[k] <= hi[k] && hi[k] < dims[k] && lo[k] < hi[k]);
        }
        Input {
            values,
            materials,
            sy: w,
            sz: w * h,
            origin,
            cell_size,
            cells,
            iso,
            lo,
            hi,
        }
    }

    /// The same input restricted to the cell layers `z0..z1` (inside the box);
    /// gradients keep the box's bounds, so vertices get the same bits.
    pub(crate) fn slab(&self, z0: u32, z1: u32) -> Self {
        assert!(self.cells.z0 <= z0 && z0 < z1 && z1 <= self.cells.z1);
        Input {
            cells: CellBox {
                z0,
                z1,
                ..self.cells
            },
            ..*self
        }
    }

    /// The box being meshed.
    pub(crate) fn cells(&self) -> CellBox {
        self.cells
    }

    /// Storage index of global node `(x, y, z)`.
    #[inline(always)]
    fn index(&self, x: u32, y: u32, z: u32) -> usize {
        z as usize * self.sz + y as usize * self.sy + x as usize
    }

    /// The value at storage index `i`.
    ///
    /// # Safety
    ///
    /// `i < self.values.len()`.
    #[inline(always)]
    unsafe fn value(&self, i: usize) -> f32 {
        debug_assert!(i < self.values.len());
        // SAFETY: the caller guarantees the bound.
        unsafe { *self.values.get_unchecked(i) }
    }
}

/// Upper bounds of what a scan emits, from the number of crossed edges `e`
/// in its box alone.
///
/// * Triangles: a cell's polygons are loops through its crossed edges, each
///   edge in one loop; a loop of `k` edges is `k - 2` triangles, or `k` when
///   fanned around a centre vertex. So a cell has at most as many triangles as
///   crossed edges, and since an edge touches at most four cells, the box has
///   at most `4e` triangles: `12e` corners.
/// * Vertices: one per crossed edge, plus one per cell with a centre vertex;
///   such a cell has at least [`MIN_CENTRE_LOOP`] crossed edges, so there are
///   at most `4e / MIN_CENTRE_LOOP` of them.
///
/// `tables.rs` checks both facts on the generated tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub(crate) vertices: u64,
    pub(crate) indices: u64,
}

/// Fewest crossed edges of a cell whose polygon has a centre vertex.
pub(crate) const MIN_CENTRE_LOOP: u64 = 9;

impl Bounds {
    pub(crate) fn of_edges(e: u64) -> Self {
        Bounds {
            vertices: e + 4 * e / MIN_CENTRE_LOOP,
            indices: 12 * e,
        }
    }
}

/// Sets `v` to `n` elements, zero where new. Room it does not have yet is
/// allocated zeroed (`vec![0; n]` asks the allocator for zeroed memory,
/// which fresh pages already are), so a new mesher of a large box does not
/// touch, and fault in, id slots that no crossed edge ever writes.
fn zeroed_len<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.capacity() < n {
        *v = vec![T::default(); n];
    } else {
        v.resize(n, T::default());
    }
}

/// Reusable scan buffers.
#[derive(Debug, Default, Clone)]
pub(crate) struct Scratch {
    /// Packed solid bits of node slices, `wpr` words per row, `ny` rows per
    /// slice: a ring of three (the slab's two slices and the next one, streamed
    /// ahead so that gradients find it in cache), or every slice of the box
    /// (see [`Packing`]).
    bits: Vec<u64>,
    /// Row summaries of the same node slices.
    kinds: Vec<u8>,
    /// Vertex ids: x-edges of slices 0 and 1, y-edges of slices 0 and 1, z-edges of
    /// the slab, then one row of cell-centre ids.
    ids: Vec<u32>,
}

/// How a scan gets the packed bits of its node slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packing {
    /// Pack each slice into a ring of three, one slice ahead.
    Ring,
    /// Pack every slice of the box and keep them all, for a [`Stored`](Self::Stored)
    /// scan of the same box after this one.
    Store,
    /// Use the slices that the previous scan, a [`Store`](Self::Store) scan of the
    /// same input on this scratch, packed.
    Stored,
}

/// Where one node slice's data lives.
#[derive(Clone, Copy)]
struct Slots {
    /// Index into `Scratch::bits` / `Scratch::kinds`.
    bits: usize,
    /// Id slot (0 or 1) of its x- and y-edges.
    ids: usize,
}

/// Sizes of the current scan.
#[derive(Clone, Copy)]
struct Layout {
    /// Nodes per box row, rows per box slice.
    nx: usize,
    ny: usize,
    /// Words per packed row (including the spare zero word).
    wpr: usize,
    /// Nodes per box slice.
    plane: usize,
}

impl Layout {
    /// The layout of a scan of the box `c`.
    fn of(c: CellBox) -> Self {
        let nx = (c.x1 - c.x0) as usize + 1;
        let ny = (c.y1 - c.y0) as usize + 1;
        Layout {
            nx,
            ny,
            wpr: nx.div_ceil(64) + 1,
            plane: nx * ny,
        }
    }

    /// Packed words of a node slice.
    #[inline(always)]
    fn slice_words(&self) -> usize {
        self.ny * self.wpr
    }
}

impl Layout {
    #[inline(always)]
    fn x_ids(&self, slot: usize) -> usize {
        slot * self.plane
    }
    #[inline(always)]
    fn y_ids(&self, slot: usize) -> usize {
        (2 + slot) * self.plane
    }
    #[inline(always)]
    fn z_ids(&self) -> usize {
        4 * self.plane
    }
    #[inline(always)]
    fn centre_ids(&self) -> usize {
        5 * self.plane
    }
}

/// Bits `i + 1` of a packed row, shifted down to position `i` (rows end with a
/// spare zero word).
#[inline(always)]
fn shr1(row: &[u64], w: usize) -> u64 {
    (row[w] >> 1) | (row[w + 1] << 63)
}

/// Mask of the bits of word `w` that name one of `n` items.
#[inline(always)]
fn valid(w: usize, n: usize) -> u64 {
    let end = n - w * 64;
    if end >= 64 { !0 } else { (1u64 << end) - 1 }
}

/// Packs `rest[i] >= iso` into bit `i` for fewer than 64 values, four at a
/// time (SSE2 on x86_64).
#[inline]
fn pack_tail(rest: &[f32], iso: f32) -> u64 {
    debug_assert!(rest.len() < 64);
    let quads = rest.len() / 4;
    let mut m = 0u64;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cmpge_ps, _mm_loadu_ps, _mm_movemask_ps, _mm_set1_ps};
        // SAFETY: SSE2 is part of the x86_64 baseline; every load reads
        // `4 * k .. 4 * k + 4 <= 4 * quads <= rest.len()` (unaligned loads are
        // allowed).
        unsafe {
            let t = _mm_set1_ps(iso);
            for k in 0..quads {
                let v = _mm_loadu_ps(rest.as_ptr().add(4 * k));
                m |= (_mm_movemask_ps(_mm_cmpge_ps(v, t)) as u32 as u64) << (4 * k);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (i, &v) in rest[..4 * quads].iter().enumerate() {
        m |= ((v >= iso) as u64) << i;
    }
    for (i, &v) in rest.iter().enumerate().skip(4 * quads) {
        m |= ((v >= iso) as u64) << i;
    }
    m
}

/// Packs `values[i] >= iso` into bit `i % 64` of word `i / 64` of `out` (the rest
/// of `out` is zeroed), 64 values at a time and the tail four at a time.
/// Returns the OR of the words and the AND of the words with the bits past
/// the end set.
#[inline]
pub(super) fn pack_signs(values: &[f32], iso: f32, out: &mut [u64]) -> (u64, u64) {
    let mut chunks = values.chunks_exact(64);
    let mut w = 0;
    let (mut any, mut all) = (0u64, !0u64);
    for chunk in &mut chunks {
        let chunk: &[f32; 64] = chunk.try_into().expect("chunks_exact gives 64 values");
        let m = pack64(chunk, iso);
        out[w] = m;
        any |= m;
        all &= m;
        w += 1;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let m = pack_tail(rest, iso);
        out[w] = m;
        any |= m;
        all &= m | !((1u64 << rest.len()) - 1);
        w += 1;
    }
    // Usually one spare word: a plain store instead of a `memset` call.
    match &mut out[w..] {
        [] => {}
        [o] => *o = 0,
        rest => rest.fill(0),
    }
    (any, all)
}

/// Packs `values[i] >= iso` into bit `i % 64` of word `i / 64` of `out` (the rest
/// of `out` is zeroed) and returns the row summary.
#[inline]
fn pack_row(values: &[f32], iso: f32, out: &mut [u64]) -> u8 {
    let (any, all) = pack_signs(values, iso, out);
    match (any != 0, all == !0) {
        (false, _) => AIR,
        (true, true) => SOLID,
        (true, false) => MIXED,
    }
}

/// `-n` normalised; where that is impossible (zero or non-finite), the unit
/// vector along `axis` from the edge's solid node to its air node.
#[inline(always)]
fn outward(n: [f32; 3], axis: usize, lower_is_solid: bool) -> [f32; 3] {
    let l2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    if (f32::MIN_POSITIVE..f32::INFINITY).contains(&l2) {
        let r = -1.0 / l2.sqrt();
        [n[0] * r, n[1] * r, n[2] * r]
    } else {
        outward_slow(n, axis, lower_is_solid)
    }
}

#[cold]
#[inline(never)]
fn outward_slow(n: [f32; 3], axis: usize, lower_is_solid: bool) -> [f32; 3] {
    let big = n[0].abs().max(n[1].abs()).max(n[2].abs());
    if n.iter().all(|c| c.is_finite()) && big > 0.0 {
        let s = n.map(|c| c / big);
        let l = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt();
        return s.map(|c| -c / l);
    }
    let mut e = [0.0; 3];
    e[axis] = if lower_is_solid { 1.0 } else { -1.0 };
    e
}

/// The (unnormalised) field gradient at storage index `i`, global node `g`:
/// central differences, one-sided on the first and last node of the allowed range.
#[inline(always)]
fn gradient(inp: &Input<'_>, i: usize, g: [u32; 3]) -> [f32; 3] {
    let s = [1, inp.sy, inp.sz];
    let mut out = [0.0; 3];
    for k in 0..3 {
        // SAFETY: `lo[k] <= g[k] <= hi[k] < dims[k]` and `lo[k] < hi[k]` (checked in
        // `Input::new` and by the callers' box bounds), so every neighbour read is a
        // node inside the field.
        out[k] = unsafe {
            if g[k] == inp.lo[k] {
                inp.value(i + s[k]) - inp.value(i)
            } else if g[k] == inp.hi[k] {
                inp.value(i) - inp.value(i - s[k])
            } else {
                (inp.value(i + s[k]) - inp.value(i - s[k])) * 0.5
            }
        };
    }
    out
}

/// Creates the vertex of the crossed edge along `AXIS` whose lower node is global
/// node `g` at storage index `ia`, and returns its id.
#[inline(always)]
fn edge_vertex<const AXIS: usize, const N: bool, const M: bool, S: Sink>(
    inp: &Input<'_>,
    ia: usize,
    g: [u32; 3],
    out: &mut S,
) -> u32 {
    if S::COUNT {
        return out.vertex::<N, M>([0.0; 3], [0.0; 3], 0);
    }
    let ib = ia + [1, inp.sy, inp.sz][AXIS];
    // SAFETY: both nodes of an edge inside the box lie inside the field.
    let (va, vb) = unsafe { (inp.value(ia), inp.value(ib)) };
    // Measured from the lower-index node. `max`/`min` (not `clamp`, which keeps
    // NaN) also map the NaN of a degenerate quotient (equal or non-finite values)
    // to 0.
    #[allow(clippy::manual_clamp)]
    let t = ((inp.iso - va) / (vb - va)).max(0.0).min(1.0);
    let (o, cs) = (inp.origin, inp.cell_size);
    let mut p = [
        o[0] + g[0] as f32 * cs,
        o[1] + g[1] as f32 * cs,
        o[2] + g[2] as f32 * cs,
    ];
    p[AXIS] = o[AXIS] + (g[AXIS] as f32 + t) * cs;
    let lower_is_solid = va >= inp.iso;
    let mut normal = [0.0; 3];
    if N {
        let ga = gradient(inp, ia, g);
        let mut gb_at = g;
        gb_at[AXIS] += 1;
        let gb = gradient(inp, ib, gb_at);
        let n = [
            ga[0] + t * (gb[0] - ga[0]),
            ga[1] + t * (gb[1] - ga[1]),
            ga[2] + t * (gb[2] - ga[2]),
        ];
        normal = outward(n, AXIS, lower_is_solid);
    }
    let mut material = 0;
    if M && let Some(m) = inp.materials {
        // SAFETY: `materials` has one id per node (checked in `Input::new`).
        material = unsafe { *m.get_unchecked(if lower_is_solid { ia } else { ib }) };
    }
    out.edge_vertex::<N, M>(p, normal, material, g, AXIS, t)
}

/// Cut cells in a word of 64 from which [`word_cases`] pays.
const DENSE_WORD_CELLS: u32 = 8;

/// The case of each of the 64 cells of a word: `cases[i]` has bit `k` set
/// when corner `k` of cell `i` is solid (`corners[k]` holds corner `k` of the
/// 64 cells). The eight corner words, read as an 8 x 8 matrix of bytes, are
/// transposed first (three rounds of block swaps), so that word `j` holds
/// byte `j` of every corner: the corners of cells `8j..8j + 8`. Those eight
/// bytes form an 8 x 8 bit matrix, transposed in three steps of swaps.
#[inline]
fn word_cases(corners: &[u64; 8], cases: &mut [u8; 64]) {
    let [
        mut m0,
        mut m1,
        mut m2,
        mut m3,
        mut m4,
        mut m5,
        mut m6,
        mut m7,
    ] = *corners;
    // Rows `k` and `k + d` swap their `8d`-bit blocks: after the three rounds,
    // byte `k` of word `j` is byte `j` of `corners[k]`.
    #[inline(always)]
    fn swap(a: &mut u64, b: &mut u64, bits: u32, lo: u64) {
        let (x, y) = (*a, *b);
        *a = (x & lo) | ((y & lo) << bits);
        *b = ((x >> bits) & lo) | (y & !lo);
    }
    const L32: u64 = 0x0000_0000_ffff_ffff;
    const L16: u64 = 0x0000_ffff_0000_ffff;
    const L8: u64 = 0x00ff_00ff_00ff_00ff;
    swap(&mut m0, &mut m4, 32, L32);
    swap(&mut m1, &mut m5, 32, L32);
    swap(&mut m2, &mut m6, 32, L32);
    swap(&mut m3, &mut m7, 32, L32);
    swap(&mut m0, &mut m2, 16, L16);
    swap(&mut m1, &mut m3, 16, L16);
    swap(&mut m4, &mut m6, 16, L16);
    swap(&mut m5, &mut m7, 16, L16);
    swap(&mut m0, &mut m1, 8, L8);
    swap(&mut m2, &mut m3, 8, L8);
    swap(&mut m4, &mut m5, 8, L8);
    swap(&mut m6, &mut m7, 8, L8);
    let m = [m0, m1, m2, m3, m4, m5, m6, m7];
    for (j, mut x) in m.into_iter().enumerate() {
        // Byte k, bit i: corner k of cell 8j + i. Transposed: byte i, bit k.
        let t = (x ^ (x >> 7)) & 0x00aa_00aa_00aa_00aa;
        x ^= t ^ (t << 7);
        let t = (x ^ (x >> 14)) & 0x0000_cccc_0000_cccc;
        x ^= t ^ (t << 14);
        let t = (x ^ (x >> 28)) & 0x0000_0000_f0f0_f0f0;
        x ^= t ^ (t << 28);
        cases[8 * j..8 * j + 8].copy_from_slice(&x.to_le_bytes());
    }
}

/// Decision bits of the ambiguous faces of `case` for the cell whose first
/// corner has storage index `i0`: bit `k` is set when the `k`-th ambiguous face
/// joins its solid corners (the asymptotic decider).
#[inline(never)]
fn decide(inp: &Input<'_>, t: &Tables, case: u8, i0: usize) -> u8 {
    let corner = |k: u8| {
        let i =
            i0 + (k & 1) as usize + ((k >> 1) & 1) as usize * inp.sy + (k >> 2) as usize * inp.sz;
        // SAFETY: the eight corners of a cell inside the box lie inside the field.
        unsafe { inp.value(i) - inp.iso }
    };
    let c: [f32; 8] = std::array::from_fn(|k| corner(k as u8));
    let mut d = 0;
    for (k, f) in t.ambiguous_faces(case).iter().enumerate() {
        let solid = c[f.solid[0] as usize] * c[f.solid[1] as usize];
        let air = c[f.air[0] as usize] * c[f.air[1] as usize];
        if solid >= air {
            d |= 1 << k;
        }
    }
    d
}

/// The triangle list of an ambiguous `case` for the cell whose first corner
/// has storage index `i0`, as the decider picks it.
#[inline]
fn decided(inp: &Input<'_>, t: &Tables, case: u8, i0: usize) -> SubEntry {
    t.subs[t.cases[case as usize].sub_start as usize + decide(inp, t, case, i0) as usize]
}

/// Adds the centre vertex of a loop (the mean of its vertices) and returns its id.
#[cold]
#[inline(never)]
fn centre_vertex<const N: bool, const M: bool, S: Sink>(loop_ids: &[u32], out: &mut S) -> u32 {
    if S::COUNT {
        return out.vertex::<N, M>([0.0; 3], [0.0; 3], 0);
    }
    let mut p = [0.0f32; 3];
    let mut n = [0.0f32; 3];
    for &id in loop_ids {
        let q = out.position(id);
        for k in 0..3 {
            p[k] += q[k];
        }
        if N {
            let m = out.normal(id);
            for k in 0..3 {
                n[k] += m[k];
            }
        }
    }
    let inv = 1.0 / loop_ids.len() as f32;
    let mut nn = [0.0; 3];
    if N {
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        nn = if l > 1e-6 {
            n.map(|c| c / l)
        } else {
            out.normal(loop_ids[0])
        };
    }
    let m = if M { out.material(loop_ids[0]) } else { 0 };
    out.vertex::<N, M>(p.map(|c| c * inv), nn, m)
}

impl Scratch {
    /// Meshes `inp.cells` into `out` (already reset). `N`: normals, `M`: materials.
    pub(crate) fn scan<const N: bool, const M: bool, S: Sink>(
        &mut self,
        inp: &Input<'_>,
        out: &mut S,
        packing: Packing,
    ) {
        let t = tables();
        let c = inp.cells;
        let lay = Layout::of(c);
        let (nx, ny) = (lay.nx, lay.ny);
        let slots = match packing {
            Packing::Ring => 3,
            Packing::Store | Packing::Stored => (c.z1 - c.z0) as usize + 1,
        };
        if packing == Packing::Stored {
            assert!(
                self.bits.len() >= slots * lay.slice_words() && self.kinds.len() >= slots * ny,
                "a stored scan follows a store scan of the same box"
            );
        } else {
            zeroed_len(&mut self.bits, slots * lay.slice_words());
            zeroed_len(&mut self.kinds, slots * ny);
        }
        let ring = packing == Packing::Ring;
        let pack = packing != Packing::Stored;
        zeroed_len(&mut self.ids, 5 * lay.plane + nx);

        // Node slice `z` lives in bit slot `(z - z0) % 3` (ring) or `z - z0`, and
        // in id slot `(z - z0) % 2`.
        let slot = |z: u32| Slots {
            bits: if ring {
                ((z - c.z0) % 3) as usize
            } else {
                (z - c.z0) as usize
            },
            ids: ((z - c.z0) % 2) as usize,
        };
        if pack {
            self.pack_slice(inp, &lay, slot(c.z0).bits, c.z0);
            self.pack_slice(inp, &lay, slot(c.z0 + 1).bits, c.z0 + 1);
        } else if !S::COUNT {
            // A stored scan does not read the field to classify it, so the
            // rows its vertices read are asked for ahead of use instead, when
            // packing would have read them.
            for z in c.z0..(c.z0 + 2).min(c.z1 + 1) {
                self.prefetch_rows(inp, &lay, z);
            }
        }
        self.slice_edges::<N, M, S>(inp, &lay, slot(c.z0), c.z0, out);
        out.first_slice_done();
        for z in c.z0..c.z1 {
            if pack && z + 2 <= c.z1 {
                self.pack_slice(inp, &lay, slot(z + 2).bits, z + 2);
            } else if !pack && !S::COUNT && z + 2 <= c.z1 {
                self.prefetch_rows(inp, &lay, z + 2);
            }
            if z + 1 == c.z1 {
                out.last_slice_begins();
            }
            self.slice_edges::<N, M, S>(inp, &lay, slot(z + 1), z + 1, out);
            self.z_edges::<N, M, S>(inp, &lay, slot(z), slot(z + 1), z, out);
            self.cells::<N, M, S>(inp, t, &lay, slot(z), slot(z + 1), z, out);
        }
    }

    /// Packs every node slice of the box, as a [`Packing::Store`] scan does, for
    /// a [`Packing::Stored`] scan of the same input after this call, and
    /// returns the number of crossed edges in the box: the number of vertices
    /// that scan creates on edges (see [`Bounds`] for the rest).
    ///
    /// Each slice is counted while its words are in cache, with the word
    /// operations the scan uses to find its edges, so the pass costs about
    /// what classifying the field costs.
    pub(crate) fn pack_box(&mut self, inp: &Input<'_>) -> u64 {
        let c = inp.cells;
        let lay = Layout::of(c);
        let (nx, ny, wpr, sw) = (lay.nx, lay.ny, lay.wpr, lay.slice_words());
        let slices = (c.z1 - c.z0) as usize + 1;
        zeroed_len(&mut self.bits, slices * sw);
        zeroed_len(&mut self.kinds, slices * ny);
        let words = |n: usize| n.div_ceil(64);
        let mut edges = 0u64;
        for s in 0..slices {
            self.pack_slice(inp, &lay, s, c.z0 + s as u32);
            edges += self.slice_xy_crossings(&lay, s);
            let bits = &self.bits[s * sw..(s + 1) * sw];
            let kinds = &self.kinds[s * ny..(s + 1) * ny];
            if s > 0 {
                let below = &self.bits[(s - 1) * sw..s * sw];
                let kinds_below = &self.kinds[(s - 1) * ny..s * ny];
                for j in 0..ny {
                    if kinds[j] != MIXED && kinds_below[j] == kinds[j] {
                        continue;
                    }
                    let (r0, r1) = (&below[j * wpr..], &bits[j * wpr..]);
                    for w in 0..words(nx) {
                        edges += ((r0[w] ^ r1[w]) & valid(w, nx)).count_ones() as u64;
                    }
                }
            }
        }
        edges
    }

    /// Crossed x- and y-edges of node slice `z` of the box (packed into this
    /// scratch's first slot): a sample of how much output the box makes.
    #[cfg(any(feature = "parallel", test))]
    pub(crate) fn slice_crossings(&mut self, inp: &Input<'_>, z: u32) -> u64 {
        let lay = Layout::of(inp.cells);
        zeroed_len(&mut self.bits, lay.slice_words());
        zeroed_len(&mut self.kinds, lay.ny);
        self.pack_slice(inp, &lay, 0, z);
        self.slice_xy_crossings(&lay, 0)
    }

    /// Crossed x- and y-edges of the node slice packed in `slot`, with the
    /// word operations the scan uses to find them.
    fn slice_xy_crossings(&self, lay: &Layout, slot: usize) -> u64 {
        let (nx, ny, wpr, sw) = (lay.nx, lay.ny, lay.wpr, lay.slice_words());
        let bits = &self.bits[slot * sw..(slot + 1) * sw];
        let kinds = &self.kinds[slot * ny..(slot + 1) * ny];
        let mut edges = 0u64;
        for j in 0..ny {
            let row = &bits[j * wpr..(j + 1) * wpr];
            if kinds[j] == MIXED {
                for w in 0..(nx - 1).div_ceil(64) {
                    edges += ((row[w] ^ shr1(row, w)) & valid(w, nx - 1)).count_ones() as u64;
                }
            }
            if j + 1 < ny && (kinds[j] == MIXED || kinds[j + 1] != kinds[j]) {
                let next = &bits[(j + 1) * wpr..(j + 2) * wpr];
                for w in 0..nx.div_ceil(64) {
                    edges += ((row[w] ^ next[w]) & valid(w, nx)).count_ones() as u64;
                }
            }
        }
        edges
    }

    /// Frees the slices kept by a [`Packing::Store`] scan
    /// when they hold more than a few KiB (a box's worth).
    pub(crate) fn release_stored_slices(&mut self) {
        self.release_stored_slices_above(3 * 1024);
    }

    /// Frees the packed slices when they hold more than `bytes`.
    pub(crate) fn release_stored_slices_above(&mut self, bytes: usize) {
        if self.bits.capacity() * 8 > bytes {
            self.bits = Vec::new();
            self.kinds = Vec::new();
        }
    }

    /// Asks the cache for the rows of node slice `z` that vertices will read,
    /// from the stored row summaries (a [`Packing::Stored`] scan): each row
    /// with a crossing in it, next to it, or between it and the slices
    /// beside it (the gradient at a vertex reads its neighbours on all three
    /// axes).
    fn prefetch_rows(&self, inp: &Input<'_>, lay: &Layout, z: u32) {
        let c = inp.cells;
        let ny = lay.ny;
        let kinds = |zz: u32| {
            let s = (zz - c.z0) as usize;
            &self.kinds[s * ny..(s + 1) * ny]
        };
        let here = kinds(z);
        let below = (z > c.z0).then(|| kinds(z - 1));
        let above = (z < c.z1).then(|| kinds(z + 1));
        for j in 0..ny {
            let lo = j.saturating_sub(1);
            let hi = (j + 1).min(ny - 1);
            let k = here[j];
            let busy = |ks: &[u8]| ks[lo..=hi].iter().any(|&r| r == MIXED || r != k);
            if busy(here) || below.is_some_and(busy) || above.is_some_and(busy) {
                let start = inp.index(c.x0, c.y0 + j as u32, z);
                crate::cache::prefetch_slice(&inp.values[start..start + lay.nx]);
            }
        }
    }

    /// Classifies node slice `z` into `bits[slot]` / `kinds[slot]`.
    fn pack_slice(&mut self, inp: &Input<'_>, lay: &Layout, slot: usize, z: u32) {
        let c = inp.cells;
        let sw = lay.slice_words();
        let bits = &mut self.bits[slot * sw..(slot + 1) * sw];
        let kinds = &mut self.kinds[slot * lay.ny..(slot + 1) * lay.ny];
        // Rows about 8 KiB ahead are asked for as each row is packed: on a
        // field larger than a core's caches the packing otherwise streams
        // the slice at what the hardware prefetcher alone fetches.
        let ahead = (8192 / (4 * lay.nx)).clamp(1, 16);
        for j in 0..lay.ny {
            let start = inp.index(c.x0, c.y0 + j as u32, z);
            if j + ahead < lay.ny {
                let a = start + ahead * inp.sy;
                crate::cache::prefetch_slice(&inp.values[a..a + lay.nx]);
            }
            let row = &inp.values[start..start + lay.nx];
            kinds[j] = pack_row(row, inp.iso, &mut bits[j * lay.wpr..(j + 1) * lay.wpr]);
        }
    }

    /// Vertices of the crossed x- and y-edges of node slice `z` (in `slot`).
    fn slice_edges<const N: bool, const M: bool, S: Sink>(
        &mut self,
        inp: &Input<'_>,
        lay: &Layout,
        slot: Slots,
        z: u32,
        out: &mut S,
    ) {
        let c = inp.cells;
        let (nx, wpr) = (lay.nx, lay.wpr);
        let (sw, ny) = (lay.slice_words(), lay.ny);
        let bits = &self.bits[slot.bits * sw..(slot.bits + 1) * sw];
        let kinds = &self.kinds[slot.bits * ny..(slot.bits + 1) * ny];
        let ids = &mut self.ids;
        let ncx = nx - 1;
        for j in 0..lay.ny {
            if kinds[j] != MIXED {
                continue;
            }
            let row = &bits[j * wpr..(j + 1) * wpr];
            let y = c.y0 + j as u32;
            let start = inp.index(c.x0, y, z);
            let base = lay.x_ids(slot.ids) + j * nx;
            for w in 0..ncx.div_ceil(64) {
                let mut m = (row[w] ^ shr1(row, w)) & valid(w, ncx);
                if S::COUNT {
                    out.count_vertices(m.count_ones());
                    continue;
                }
                while m != 0 {
                    let i = w * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    let g = [c.x0 + i as u32, y, z];
                    ids[base + i] = edge_vertex::<0, N, M, S>(inp, start + i, g, out);
                }
            }
        }
        for j in 0..lay.ny - 1 {
            let k = kinds[j];
            if k != MIXED && kinds[j + 1] == k {
                continue;
            }
            let r0 = &bits[j * wpr..(j + 1) * wpr];
            let r1 = &bits[(j + 1) * wpr..(j + 2) * wpr];
            let y = c.y0 + j as u32;
            let start = inp.index(c.x0, y, z);
            let base = lay.y_ids(slot.ids) + j * nx;
            for w in 0..nx.div_ceil(64) {
                let mut m = (r0[w] ^ r1[w]) & valid(w, nx);
                if S::COUNT {
                    out.count_vertices(m.count_ones());
                    continue;
                }
                while m != 0 {
                    let i = w * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    let g = [c.x0 + i as u32, y, z];
                    ids[base + i] = edge_vertex::<1, N, M, S>(inp, start + i, g, out);
                }
            }
        }
    }

    /// Vertices of the crossed z-edges between node slices `z` (in `a`) and
    /// `z + 1` (in `b`).
    #[allow(clippy::too_many_arguments)]
    fn z_edges<const N: bool, const M: bool, S: Sink>(
        &mut self,
        inp: &Input<'_>,
        lay: &Layout,
        a: Slots,
        b: Slots,
        z: u32,
        out: &mut S,
    ) {
        let c = inp.cells;
        let (nx, wpr) = (lay.nx, lay.wpr);
        let (sw, ny) = (lay.slice_words(), lay.ny);
        let ba = &self.bits[a.bits * sw..(a.bits + 1) * sw];
        let bb = &self.bits[b.bits * sw..(b.bits + 1) * sw];
        let ka = &self.kinds[a.bits * ny..(a.bits + 1) * ny];
        let kb = &self.kinds[b.bits * ny..(b.bits + 1) * ny];
        let ids = &mut self.ids;
        for j in 0..lay.ny {
            if ka[j] != MIXED && kb[j] == ka[j] {
                continue;
            }
            let r0 = &ba[j * wpr..(j + 1) * wpr];
            let r1 = &bb[j * wpr..(j + 1) * wpr];
            let y = c.y0 + j as u32;
            let start = inp.index(c.x0, y, z);
            let base = lay.z_ids() + j * nx;
            for w in 0..nx.div_ceil(64) {
                let mut m = (r0[w] ^ r1[w]) & valid(w, nx);
                if S::COUNT {
                    out.count_vertices(m.count_ones());
                    continue;
                }
                while m != 0 {
                    let i = w * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    let g = [c.x0 + i as u32, y, z];
                    ids[base + i] = edge_vertex::<2, N, M, S>(inp, start + i, g, out);
                }
            }
        }
    }

    /// Triangles of the cells of slab `z` (node slices `z` in `a` and `z + 1` in `b`).
    #[allow(clippy::too_many_arguments)]
    fn cells<const N: bool, const M: bool, S: Sink>(
        &mut self,
        inp: &Input<'_>,
        t: &Tables,
        lay: &Layout,
        a: Slots,
        b: Slots,
        z: u32,
        out: &mut S,
    ) {
        let c = inp.cells;
        let (nx, wpr) = (lay.nx, lay.wpr);
        let ncx = nx - 1;
        let (sw, ny) = (lay.slice_words(), lay.ny);
        let ba = &self.bits[a.bits * sw..(a.bits + 1) * sw];
        let bb = &self.bits[b.bits * sw..(b.bits + 1) * sw];
        let ka = &self.kinds[a.bits * ny..(a.bits + 1) * ny];
        let kb = &self.kinds[b.bits * ny..(b.bits + 1) * ny];
        let ids = &mut self.ids;
        // The cases of a dense word's cells (see `word_cases`).
        let mut cases = [0u8; 64];
        for j in 0..lay.ny - 1 {
            let k = ka[j];
            if k != MIXED && ka[j + 1] == k && kb[j] == k && kb[j + 1] == k {
                continue;
            }
            let a0 = &ba[j * wpr..(j + 1) * wpr];
            let a1 = &ba[(j + 1) * wpr..(j + 2) * wpr];
            let b0 = &bb[j * wpr..(j + 1) * wpr];
            let b1 = &bb[(j + 1) * wpr..(j + 2) * wpr];
            let row = j * nx;
            let (xa, xb) = (lay.x_ids(a.ids) + row, lay.x_ids(b.ids) + row);
            let (ya, yb) = (lay.y_ids(a.ids) + row, lay.y_ids(b.ids) + row);
            let zr = lay.z_ids() + row;
            // Slot of each cell edge (and of the centre vertex) for the cell at x = 0.
            // (Padded to 16 so that `e & 15` needs no bounds check.)
            let off: [usize; 16] = [
                xa,
                xa + nx,
                xb,
                xb + nx,
                ya,
                ya + 1,
                yb,
                yb + 1,
                zr,
                zr + 1,
                zr + nx,
                zr + nx + 1,
                lay.centre_ids(),
                0,
                0,
                0,
            ];
            debug_assert!(off.iter().all(|&o| o + ncx <= ids.len()));
            let i0 = inp.index(c.x0, c.y0 + j as u32, z);
            for w in 0..ncx.div_ceil(64) {
                let r = [
                    a0[w],
                    shr1(a0, w),
                    a1[w],
                    shr1(a1, w),
                    b0[w],
                    shr1(b0, w),
                    b1[w],
                    shr1(b1, w),
                ];
                let any = r[0] | r[1] | r[2] | r[3] | r[4] | r[5] | r[6] | r[7];
                let all = r[0] & r[1] & r[2] & r[3] & r[4] & r[5] & r[6] & r[7];
                let mut m = any & !all & valid(w, ncx);
                // Where most cells of the word are cut (a dense surface), the
                // cases of all 64 are had at once by transposing bits.
                let dense = m.count_ones() >= DENSE_WORD_CELLS;
                if dense {
                    word_cases(&r, &mut cases);
                }
                let case_at = |bit: u32| {
                    if dense {
                        cases[bit as usize]
                    } else {
                        let mut case = 0u8;
                        for (k, word) in r.iter().enumerate() {
                            case |= (((word >> bit) & 1) as u8) << k;
                        }
                        case
                    }
                };
                if S::COUNT {
                    // A count needs each cut cell's number of triangles and
                    // whether it has a centre vertex: one table word per case
                    // (summed over a whole dense word, where uncut cells add
                    // nothing), the decider only for ambiguous cases.
                    let mut sum = 0u64;
                    if dense && valid(w, ncx) == !0 {
                        for &case in &cases {
                            sum += t.tally[case as usize];
                        }
                    } else {
                        let mut mm = m;
                        while mm != 0 {
                            let bit = mm.trailing_zeros();
                            mm &= mm - 1;
                            sum += t.tally[case_at(bit) as usize];
                        }
                    }
                    if sum >= TALLY_AMBIGUOUS {
                        sum &= TALLY_AMBIGUOUS - 1;
                        let mut mm = m;
                        while mm != 0 {
                            let bit = mm.trailing_zeros();
                            mm &= mm - 1;
                            let case = case_at(bit);
                            if t.cases[case as usize].amb_count != 0 {
                                let x = w * 64 + bit as usize;
                                sum += tally_of(decided(inp, t, case, i0 + x));
                            }
                        }
                    }
                    out.count_vertices(((sum >> 16) & 0xffff) as u32);
                    out.count_corners(3 * (sum & 0xffff) as usize);
                    continue;
                }
                while m != 0 {
                    let bit = m.trailing_zeros();
                    m &= m - 1;
                    let x = w * 64 + bit as usize;
                    let case = case_at(bit);
                    let entry = &t.cases[case as usize];
                    // An unambiguous case's one list is kept in its entry.
                    let sub: SubEntry = if entry.amb_count == 0 {
                        entry.first
                    } else {
                        decided(inp, t, case, i0 + x)
                    };
                    if sub.centre_len != 0 {
                        let edges =
                            &t.centre_loops[sub.centre_start as usize..][..sub.centre_len as usize];
                        let mut loop_ids = [0u32; 12];
                        for (slot, &e) in loop_ids.iter_mut().zip(edges) {
                            *slot = ids[off[e as usize] + x];
                        }
                        ids[off[CENTRE as usize] + x] =
                            centre_vertex::<N, M, S>(&loop_ids[..edges.len()], out);
                    }
                    let n = 3 * sub.count as usize;
                    let tri = &t.tri_edges[sub.start as usize..][..n];
                    // SAFETY: every slot read is `off[e] + x` with `x < ncx`, which is
                    // inside `ids` (each offset is at most `centre_ids()` and the largest
                    // edge offset is `z_ids() + plane - nx - 1`; see the debug assertion
                    // above).
                    out.corners(n, |k| unsafe {
                        *ids.get_unchecked(off[(tri[k] & 15) as usize] + x)
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_row_matches_scalar_and_summarises() {
        let values: Vec<f32> = (0..150).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
        let mut out = vec![u64::MAX; 4];
        assert_eq!(pack_row(&values, 0.0, &mut out), MIXED);
        for (i, &v) in values.iter().enumerate() {
            assert_eq!((out[i / 64] >> (i % 64)) & 1 == 1, v >= 0.0, "node {i}");
        }
        assert_eq!(out[3], 0);
        assert_eq!(out[2] >> (150 - 128), 0);
        for n in [1, 63, 64, 65, 130] {
            let mut out = vec![7u64; n / 64 + 2];
            assert_eq!(pack_row(&vec![1.0; n], 0.0, &mut out), SOLID, "{n}");
            assert_eq!(pack_row(&vec![-1.0; n], 0.0, &mut out), AIR, "{n}");
            assert_eq!(*out.last().unwrap(), 0);
        }
        let mut out = vec![0u64; 2];
        assert_eq!(pack_row(&[0.0, f32::NAN], 0.0, &mut out), MIXED);
        assert_eq!(out[0], 1);
    }

    #[test]
    fn word_cases_match_one_cell_at_a_time() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let corners: [u64; 8] = std::array::from_fn(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            });
            let mut cases = [0u8; 64];
            word_cases(&corners, &mut cases);
            for (bit, &case) in cases.iter().enumerate() {
                let mut want = 0u8;
                for (k, word) in corners.iter().enumerate() {
                    want |= (((word >> bit) & 1) as u8) << k;
                }
                assert_eq!(case, want, "cell {bit}");
            }
        }
    }

    #[test]
    fn outward_normalises_and_falls_back() {
        let n = outward([0.0, -3.0, 4.0], 0, true);
        assert!((n[1] - 0.6).abs() < 1e-6 && (n[2] + 0.8).abs() < 1e-6 && n[0] == 0.0);
        assert_eq!(outward([0.0; 3], 1, true), [0.0, 1.0, 0.0]);
        assert_eq!(outward([0.0; 3], 2, false), [0.0, 0.0, -1.0]);
        assert_eq!(outward([f32::NAN, 0.0, 0.0], 0, false), [-1.0, 0.0, 0.0]);
        let big = outward([3e30, 4e30, 0.0], 0, true);
        assert!((big[0] + 0.6).abs() < 1e-6 && (big[1] + 0.8).abs() < 1e-6);
        let tiny = outward([1e-30, 0.0, 0.0], 0, true);
        assert!((tiny[0] + 1.0).abs() < 1e-6);
    }
}
