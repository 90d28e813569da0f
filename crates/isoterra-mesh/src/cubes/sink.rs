//! Where the scan's vertices and triangles go.
//!
//! The scan (`kernel.rs`) emits vertices and triangles in one fixed order. A
//! [`Sink`] receives them:
//!
//! * [`VecSink`] pushes onto a [`CubesOutput`] (the reused-buffer path);
//! * [`CountSink`] only counts them, so that the output can be sized exactly
//!   before a second scan fills it;
//! * [`SlabSink`] writes one z-slab's vertices and triangles into its own,
//!   exactly sized, part of the output, so that slabs can be filled in parallel.
//!
//! # Slabs and the shared slice
//!
//! The scan of the cells `z0..z1` emits the x- and y-edge vertices of node slice
//! `z0` first, then, for each cell layer `z`, those of slice `z + 1`, the z-edge
//! vertices of the layer and the layer's cell-centre vertices. Cut at `zm`, the
//! scan of `z0..zm` followed by the scan of `zm..z1` without its first slice emits
//! exactly the vertices of the scan of `z0..z1`, in the same order. The second
//! slab still needs the ids (and, for cell-centre vertices, the data) of slice
//! `zm`'s vertices: it recomputes them into a small *ghost* buffer (the same
//! nodes, the same arithmetic, so the same bits) and gives them the ids that the
//! first slab gives them. Triangles are emitted layer by layer, so their order is
//! the concatenation too.

use std::mem::MaybeUninit;

use super::CubesOutput;

/// Receiver of the scan's output. `N`: normals, `M`: materials.
pub(crate) trait Sink {
    /// True when the sink only counts: the scan then skips all vertex arithmetic.
    const COUNT: bool;

    /// Adds a vertex and returns its id.
    fn vertex<const N: bool, const M: bool>(&mut self, p: [f32; 3], n: [f32; 3], m: u8) -> u32;

    /// Adds the vertex of the crossed grid edge from node `g` along `axis`, at
    /// `t` of the edge (as [`vertex`](Self::vertex) with its position `p`),
    /// for sinks that keep where a vertex came from.
    #[inline(always)]
    fn edge_vertex<const N: bool, const M: bool>(
        &mut self,
        p: [f32; 3],
        n: [f32; 3],
        m: u8,
        g: [u32; 3],
        axis: usize,
        t: f32,
    ) -> u32 {
        let _ = (g, axis, t);
        self.vertex::<N, M>(p, n, m)
    }

    /// Position of vertex `id` (an id this sink returned).
    fn position(&self, id: u32) -> [f32; 3];

    /// Normal of vertex `id`.
    fn normal(&self, id: u32) -> [f32; 3];

    /// Material of vertex `id`.
    fn material(&self, id: u32) -> u8;

    /// Adds `n` triangle corners, corner `k` being `id(k)`.
    fn corners(&mut self, n: usize, id: impl Fn(usize) -> u32);

    /// Adds `n` vertices whose ids nobody reads (counting sinks only).
    #[inline(always)]
    fn count_vertices(&mut self, n: u32) {
        debug_assert!(Self::COUNT, "only a counting sink skips vertices");
        let _ = n;
    }

    /// Adds `n` triangle corners whose ids nobody reads (counting sinks only).
    #[inline(always)]
    fn count_corners(&mut self, n: usize) {
        debug_assert!(Self::COUNT, "only a counting sink skips corners");
        let _ = n;
    }

    /// The scan has emitted the vertices of its first node slice.
    #[inline(always)]
    fn first_slice_done(&mut self) {}

    /// The scan is about to emit the vertices of its last node slice.
    #[inline(always)]
    fn last_slice_begins(&mut self) {}
}

/// Pushes onto the vectors of a [`CubesOutput`].
pub(crate) struct VecSink<'a>(pub(crate) &'a mut CubesOutput);

impl Sink for VecSink<'_> {
    const COUNT: bool = false;

    #[inline(always)]
    fn vertex<const N: bool, const M: bool>(&mut self, p: [f32; 3], n: [f32; 3], m: u8) -> u32 {
        let out = &mut *self.0;
        let id = out.positions.len() as u32;
        out.positions.push(p);
        if N {
            out.normals.push(n);
        }
        if M {
            out.materials.push(m);
        }
        id
    }

    fn position(&self, id: u32) -> [f32; 3] {
        self.0.positions[id as usize]
    }

    fn normal(&self, id: u32) -> [f32; 3] {
        self.0.normals[id as usize]
    }

    fn material(&self, id: u32) -> u8 {
        self.0.materials[id as usize]
    }

    #[inline(always)]
    fn corners(&mut self, n: usize, id: impl Fn(usize) -> u32) {
        let indices = &mut self.0.indices;
        indices.reserve(n);
        let len = indices.len();
        // SAFETY: `reserve(n)` made room for `n` more ids after `len`, and the `n`
        // writes land in `len..len + n` before `set_len` exposes them.
        unsafe {
            let dst = indices.as_mut_ptr().add(len);
            for k in 0..n {
                dst.add(k).write(id(k));
            }
            indices.set_len(len + n);
        }
    }
}

/// What one scan emits, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Vertices of the first node slice when they are a ghost (they belong to
    /// the slab below).
    pub ghost: u32,
    /// Vertices that belong to this scan.
    pub vertices: u32,
    /// Triangle corners (indices).
    pub indices: usize,
    /// Number of own vertices emitted before the last node slice's.
    pub last_slice_start: u32,
}

/// Counts what a scan emits.
pub(crate) struct CountSink {
    /// True while the first slice's vertices are counted as ghosts.
    ghost: bool,
    pub(crate) counts: Counts,
}

impl CountSink {
    /// A sink that counts the first slice as a ghost when `ghost_first`.
    pub(crate) fn new(ghost_first: bool) -> Self {
        CountSink {
            ghost: ghost_first,
            counts: Counts::default(),
        }
    }
}

impl Sink for CountSink {
    const COUNT: bool = true;

    #[inline(always)]
    fn vertex<const N: bool, const M: bool>(&mut self, _: [f32; 3], _: [f32; 3], _: u8) -> u32 {
        if self.ghost {
            self.counts.ghost += 1;
        } else {
            self.counts.vertices += 1;
        }
        0
    }

    #[inline(always)]
    fn count_vertices(&mut self, n: u32) {
        if self.ghost {
            self.counts.ghost += n;
        } else {
            self.counts.vertices += n;
        }
    }

    fn position(&self, _: u32) -> [f32; 3] {
        [0.0; 3]
    }

    fn normal(&self, _: u32) -> [f32; 3] {
        [0.0; 3]
    }

    fn material(&self, _: u32) -> u8 {
        0
    }

    #[inline(always)]
    fn corners(&mut self, n: usize, _: impl Fn(usize) -> u32) {
        self.counts.indices += n;
    }

    #[inline(always)]
    fn count_corners(&mut self, n: usize) {
        self.counts.indices += n;
    }

    fn first_slice_done(&mut self) {
        self.ghost = false;
    }

    fn last_slice_begins(&mut self) {
        self.counts.last_slice_start = self.counts.vertices;
    }
}

/// The vertices of a slab's first node slice, which the slab below owns
/// (in an output's vertex vectors; its indices stay empty).
#[derive(Debug, Default, Clone)]
pub(crate) struct Ghost(CubesOutput);

impl Ghost {
    fn clear(&mut self) {
        self.0.reset();
    }

    /// Adds a vertex and returns its index among the ghosts.
    #[inline(always)]
    fn push<const N: bool, const M: bool>(&mut self, p: [f32; 3], n: [f32; 3], m: u8) -> u32 {
        VecSink(&mut self.0).vertex::<N, M>(p, n, m)
    }
}

/// One slab's part of the output buffers.
pub(crate) struct SlabParts<'a> {
    pub(crate) positions: &'a mut [MaybeUninit<[f32; 3]>],
    /// Empty without normals.
    pub(crate) normals: &'a mut [MaybeUninit<[f32; 3]>],
    /// Empty without materials.
    pub(crate) materials: &'a mut [MaybeUninit<u8>],
    pub(crate) indices: &'a mut [MaybeUninit<u32>],
}

/// Writes one slab into its exactly sized part of the output.
pub(crate) struct SlabSink<'a, 'g> {
    parts: SlabParts<'a>,
    /// Id of the slab's first own vertex.
    base: u32,
    /// Id of the first ghost vertex; meaningful while `ghost` is `Some`.
    ghost_base: u32,
    /// The ghost slice, while it is being emitted and after (for lookups).
    ghost: Option<&'g mut Ghost>,
    /// True while the first slice is emitted as ghosts.
    in_ghost: bool,
    /// Own vertices and corners written so far.
    pub(crate) vertices: usize,
    pub(crate) indices: usize,
}

impl<'a, 'g> SlabSink<'a, 'g> {
    /// A sink whose own vertices get ids from `base`; with `ghost`, the first
    /// slice's vertices get ids from `ghost_base` and go into `ghost` (cleared).
    pub(crate) fn new(
        parts: SlabParts<'a>,
        base: u32,
        ghost: Option<(&'g mut Ghost, u32)>,
    ) -> Self {
        let (ghost, ghost_base, in_ghost) = match ghost {
            Some((g, b)) => {
                g.clear();
                (Some(g), b, true)
            }
            None => (None, 0, false),
        };
        SlabSink {
            parts,
            base,
            ghost_base,
            ghost,
            in_ghost,
            vertices: 0,
            indices: 0,
        }
    }

    /// True when every slot of the slab's part has been written.
    pub(crate) fn is_full(&self) -> bool {
        self.vertices == self.parts.positions.len() && self.indices == self.parts.indices.len()
    }
}

impl Sink for SlabSink<'_, '_> {
    const COUNT: bool = false;

    #[inline(always)]
    fn vertex<const N: bool, const M: bool>(&mut self, p: [f32; 3], n: [f32; 3], m: u8) -> u32 {
        if self.in_ghost {
            let g = self
                .ghost
                .as_deref_mut()
                .expect("a ghost slice has a buffer");
            return self.ghost_base + g.push::<N, M>(p, n, m);
        }
        let i = self.vertices;
        // Indexing checks the bound: a count that disagreed with this scan would
        // be a bug in this crate, never a write out of the slab's part.
        self.parts.positions[i].write(p);
        if N {
            self.parts.normals[i].write(n);
        }
        if M {
            self.parts.materials[i].write(m);
        }
        self.vertices = i + 1;
        self.base + i as u32
    }

    fn position(&self, id: u32) -> [f32; 3] {
        if id >= self.base {
            let i = (id - self.base) as usize;
            assert!(i < self.vertices, "vertex {id} read before it was written");
            // SAFETY: slots `0..self.vertices` have been written.
            unsafe { self.parts.positions[i].assume_init() }
        } else {
            let g = self
                .ghost
                .as_deref()
                .expect("an id below the slab is a ghost");
            g.0.positions[(id - self.ghost_base) as usize]
        }
    }

    fn normal(&self, id: u32) -> [f32; 3] {
        if id >= self.base {
            let i = (id - self.base) as usize;
            assert!(i < self.vertices, "vertex {id} read before it was written");
            // SAFETY: slots `0..self.vertices` have been written.
            unsafe { self.parts.normals[i].assume_init() }
        } else {
            let g = self
                .ghost
                .as_deref()
                .expect("an id below the slab is a ghost");
            g.0.normals[(id - self.ghost_base) as usize]
        }
    }

    fn material(&self, id: u32) -> u8 {
        if id >= self.base {
            let i = (id - self.base) as usize;
            assert!(i < self.vertices, "vertex {id} read before it was written");
            // SAFETY: slots `0..self.vertices` have been written.
            unsafe { self.parts.materials[i].assume_init() }
        } else {
            let g = self
                .ghost
                .as_deref()
                .expect("an id below the slab is a ghost");
            g.0.materials[(id - self.ghost_base) as usize]
        }
    }

    #[inline(always)]
    fn corners(&mut self, n: usize, id: impl Fn(usize) -> u32) {
        let start = self.indices;
        let dst = &mut self.parts.indices[start..start + n];
        let p = dst.as_mut_ptr().cast::<u32>();
        for k in 0..n {
            // SAFETY: `dst` is `n` slots long (the slice above checked the
            // bound), so slot `k < n` lies inside it; `MaybeUninit<u32>` has
            // the layout of `u32`.
            unsafe { p.add(k).write(id(k)) };
        }
        self.indices = start + n;
    }

    fn first_slice_done(&mut self) {
        self.in_ghost = false;
    }
}

/// Writes one slab into its own growing buffers, with ids local to the slab:
/// the vertices of its first node slice (a ghost, owned by the slab below)
/// are `0..ghosts`, its own vertices follow. Placing the slab in the output
/// maps each local id to its id there (see `slabs::place`).
#[cfg(any(feature = "parallel", test))]
pub(crate) struct LocalSink<'a> {
    own: &'a mut CubesOutput,
    ghost: &'a mut Ghost,
    /// True while the first slice is emitted as ghosts.
    in_ghost: bool,
    /// Number of ghost vertices, fixed once the first slice is done.
    ghosts: u32,
    /// Own vertices emitted before the last node slice's.
    last_slice_start: u32,
}

#[cfg(any(feature = "parallel", test))]
impl<'a> LocalSink<'a> {
    /// A sink into `own` (reset first); with `ghost_first`, the first slice's
    /// vertices go into `ghost` (cleared).
    pub(crate) fn new(own: &'a mut CubesOutput, ghost: &'a mut Ghost, ghost_first: bool) -> Self {
        own.reset();
        ghost.clear();
        LocalSink {
            own,
            ghost,
            in_ghost: ghost_first,
            ghosts: 0,
            last_slice_start: 0,
        }
    }

    /// What the scan emitted.
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            ghost: self.ghosts,
            vertices: self.own.positions.len() as u32,
            indices: self.own.indices.len(),
            last_slice_start: self.last_slice_start,
        }
    }
}

#[cfg(any(feature = "parallel", test))]
impl Sink for LocalSink<'_> {
    const COUNT: bool = false;

    #[inline(always)]
    fn vertex<const N: bool, const M: bool>(&mut self, p: [f32; 3], n: [f32; 3], m: u8) -> u32 {
        if self.in_ghost {
            return self.ghost.push::<N, M>(p, n, m);
        }
        self.ghosts + VecSink(self.own).vertex::<N, M>(p, n, m)
    }

    fn position(&self, id: u32) -> [f32; 3] {
        match id.checked_sub(self.ghosts) {
            Some(i) => self.own.positions[i as usize],
            None => self.ghost.0.positions[id as usize],
        }
    }

    fn normal(&self, id: u32) -> [f32; 3] {
        match id.checked_sub(self.ghosts) {
            Some(i) => self.own.normals[i as usize],
            None => self.ghost.0.normals[id as usize],
        }
    }

    fn material(&self, id: u32) -> u8 {
        match id.checked_sub(self.ghosts) {
            Some(i) => self.own.materials[i as usize],
            None => self.ghost.0.materials[id as usize],
        }
    }

    #[inline(always)]
    fn corners(&mut self, n: usize, id: impl Fn(usize) -> u32) {
        VecSink(self.own).corners(n, id);
    }

    fn first_slice_done(&mut self) {
        self.in_ghost = false;
        self.ghosts = self.ghost.0.positions.len() as u32;
    }

    fn last_slice_begins(&mut self) {
        self.last_slice_start = self.own.positions.len() as u32;
    }
}
