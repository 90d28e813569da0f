//! Marching cubes: welded, watertight isosurfaces of 3D density grids.
//!
//! The contract (sign, interpolation, space, winding, normals, ambiguity, chunk
//! seams) is written on [`MarchingCubes`]; `tables.rs` explains how the case tables
//! are generated and `kernel.rs` how the scan works.

mod kernel;
mod sink;
mod slabs;
mod tables;
mod transition;

pub use transition::{LodChunkInput, LodMesher, MAX_LOD, MAX_LOD_CELLS};

use isoterra_field::Field3;

use crate::MeshError;
use kernel::{Input, Packing, Scratch};
use sink::VecSink;

/// A box of *cells*, `x0..x1` by `y0..y1` by `z0..z1` (half-open). Cell
/// `(x, y, z)` has its corners at nodes `(x..=x+1, y..=y+1, z..=z+1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CellBox {
    /// First cell along x (inclusive).
    pub x0: u32,
    /// First cell along y (inclusive).
    pub y0: u32,
    /// First cell along z (inclusive).
    pub z0: u32,
    /// End cell along x (exclusive).
    pub x1: u32,
    /// End cell along y (exclusive).
    pub y1: u32,
    /// End cell along z (exclusive).
    pub z1: u32,
}

impl CellBox {
    /// A box from half-open bounds.
    pub const fn new(x0: u32, y0: u32, z0: u32, x1: u32, y1: u32, z1: u32) -> Self {
        CellBox {
            x0,
            y0,
            z0,
            x1,
            y1,
            z1,
        }
    }

    /// Every cell of `field`.
    pub fn whole(field: &Field3) -> Self {
        Self::of_dims(field.dims())
    }

    /// Every cell of a grid of `dims` nodes (empty when an axis has fewer than 2).
    pub const fn of_dims(dims: [u32; 3]) -> Self {
        CellBox::new(
            0,
            0,
            0,
            dims[0].saturating_sub(1),
            dims[1].saturating_sub(1),
            dims[2].saturating_sub(1),
        )
    }

    /// True when the box holds no cell.
    pub const fn is_empty(&self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0 || self.z1 <= self.z0
    }

    /// Number of cells along x, y and z.
    pub const fn size(&self) -> [u32; 3] {
        [
            self.x1.saturating_sub(self.x0),
            self.y1.saturating_sub(self.y0),
            self.z1.saturating_sub(self.z0),
        ]
    }

    /// Number of cells.
    pub const fn cell_count(&self) -> u64 {
        let [x, y, z] = self.size();
        x as u64 * y as u64 * z as u64
    }
}

/// Options for [`MarchingCubes`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct CubesOptions {
    /// Iso level; a node is solid when `value >= iso`. Must be finite. Default value: `0.0`.
    pub iso: f32,
    /// Emit per-vertex normals (`-∇f`, normalised). Default value: `true`.
    pub normals: bool,
    /// Let gradients read the nodes just outside the cell box when the field has
    /// them, so that a vertex on a face shared by two boxes gets the same normal
    /// from both. With `false` the box's nodes stand for the whole field
    /// (one-sided differences on the box faces). Default value: `true`.
    pub normals_apron: bool,
}

impl CubesOptions {
    /// The defaults.
    pub const DEFAULT: Self = CubesOptions {
        iso: 0.0,
        normals: true,
        normals_apron: true,
    };

    /// Sets [`iso`](Self::iso).
    pub const fn with_iso(mut self, iso: f32) -> Self {
        self.iso = iso;
        self
    }

    /// Sets [`normals`](Self::normals).
    pub const fn with_normals(mut self, normals: bool) -> Self {
        self.normals = normals;
        self
    }

    /// Sets [`normals_apron`](Self::normals_apron).
    pub const fn with_normals_apron(mut self, normals_apron: bool) -> Self {
        self.normals_apron = normals_apron;
        self
    }
}

impl Default for CubesOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A triangle mesh from [`MarchingCubes`]; `reset` keeps the memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CubesOutput {
    /// Vertex positions (world units for [`MarchingCubes::mesh`], node-index units
    /// for [`MarchingCubes::mesh_slice`]).
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals pointing out of the solid; empty unless
    /// [`CubesOptions::normals`].
    pub normals: Vec<[f32; 3]>,
    /// Per-vertex material ids (the id of the solid node of the vertex's edge);
    /// empty unless a material channel was given.
    pub materials: Vec<u8>,
    /// Triangle list, counter-clockwise seen from outside the solid.
    pub indices: Vec<u32>,
}

impl CubesOutput {
    /// Clears every buffer, keeping its memory.
    pub fn reset(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.materials.clear();
        self.indices.clear();
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// A reusable marching cubes mesher.
///
/// It owns per-slice scratch buffers; after the first call on a given box size, a
/// call that reuses its [`CubesOutput`] allocates nothing.
///
/// # Contract
///
/// * **Sign.** A node is solid when `value >= iso`; a value exactly at `iso` is
///   solid. An edge whose two nodes are both solid has no vertex, even when one of
///   them equals `iso`.
/// * **Cells.** Cell `(x, y, z)` has its corners at nodes `(x + dx, y + dy, z + dz)`,
///   `dx, dy, dz` in `{0, 1}`. A [`CellBox`] is half-open in cells, so meshing it
///   reads nodes `[x0, x1] x [y0, y1] x [z0, z1]`.
/// * **Vertices.** Every crossed grid edge inside the box gets exactly one vertex,
///   shared by every triangle that uses it (welding by per-slice id arrays, never
///   by comparing floats). It is interpolated from the edge's lower-index node `a`
///   to its higher-index node `b`: `t = clamp((iso - v_a) / (v_b - v_a), 0, 1)`
///   (in `f32`), and its coordinate along the edge is
///   `origin + (index_a + t) * cell_size`; the other two coordinates are
///   `origin + index * cell_size`. A few configurations of ambiguous faces add one
///   extra vertex inside a cell (the mean of the loop it closes).
/// * **Space.** [`MarchingCubes::mesh`] works in the field's world units (its
///   origin and cell size); [`MarchingCubes::mesh_slice`] works in node-index
///   units (origin `0`, cell size `1`). Axes are right-handed, y up.
/// * **Winding.** Triangles are counter-clockwise seen from outside the solid, so
///   their geometric normals point out of the solid, toward lower density.
/// * **Normals.** Optional per-vertex normals are `-∇f` normalised: node
///   gradients are central differences (one-sided on the first and last node of
///   an axis), interpolated along the edge with the vertex's `t`. Where the
///   gradient vanishes the normal is the edge direction from its solid node to its
///   air node.
/// * **Materials.** Optional per-vertex material ids: each vertex takes the id of
///   the solid node of its edge (a cell-centre vertex takes the id of the first
///   vertex of its loop).
/// * **Ambiguity.** A face whose diagonal corners agree is decided by the
///   asymptotic decider from its four values alone (the solid corners are joined
///   when `(s0 - iso)(s1 - iso) >= (a0 - iso)(a1 - iso)`), so the two cells that
///   share it agree. Each cell's polygons are the loops that the face decisions
///   draw on its faces, so the surface is watertight and edge-manifold for any
///   finite input (no triangle repeats an index); the tables are generated from
///   the cube's geometry, see `tables.rs`.
///
/// # Chunk seams
///
/// A chunk of `N` cells per axis at chunk coordinate `c` meshes the cells
/// `[c*N, c*N + N)`: it *owns* the faces of the surface inside them, reads nodes
/// `[c*N, c*N + N]` for positions, and, with
/// [`normals_apron`](CubesOptions::normals_apron), nodes `[c*N - 1, c*N + N + 1]`
/// (clamped to the field) for gradients:
///
/// ```text
///   node index:  cN-1 | cN    cN+1   ...   cN+N | cN+N+1
///                     |<-- cells of chunk c --->|
///                     |  signs, positions, t    |
///                <----+---- gradients (apron) --+---->
///
///        chunk c           |        chunk c+1
///   ... cell cN+N-1        |  cell cN+N ...
///                          ^ face x = cN+N: same nodes, same t, same face
///                            decisions -> same vertices and normals, bit for bit
/// ```
///
/// Bit-identical seams need both chunks to be meshed as boxes of one shared field
/// (or of one shared slice). A chunk copied into its own [`Field3`] keeps one extra
/// node on the minus side and two on the plus side of each axis (`N + 3` nodes) and
/// meshes the cells `[1, N + 1)`: its normals and face decisions then match its
/// neighbours' exactly, and its positions match up to the rounding of
/// `origin + (index + t) * cell_size` with a different origin.
///
/// Two chunks that share a face compute bit-identical positions and (with the
/// apron) normals for the vertices on it, and the asymptotic decider gives both
/// the same face segments, so their meshes meet without cracks. Vertices on a
/// shared face appear in both chunk meshes; weld them by position bits or by the
/// global edge if one buffer is wanted.
///
/// # Example
///
/// ```
/// use isoterra_field::Field3;
/// use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};
///
/// // A ball of radius 3 in a 9^3 grid.
/// let field = Field3::from_fn(9, 9, 9, |x, y, z| {
///     let d = [x, y, z].map(|c| c as f32 - 4.0);
///     3.0 - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
/// })
/// .unwrap();
/// let mut mesher = MarchingCubes::new();
/// let mut out = CubesOutput::default();
/// mesher
///     .mesh(&field, CellBox::whole(&field), &CubesOptions::DEFAULT, &mut out)
///     .unwrap();
/// assert!(out.triangle_count() > 100);
/// assert_eq!(out.normals.len(), out.positions.len());
/// ```
///
/// # How it works
///
/// The scan classifies each node slice into packed bits once, finds crossed edges
/// and non-uniform cells with word operations (so empty or full runs cost almost
/// nothing), creates each crossed edge's vertex once and keeps its id in arrays
/// indexed by position, and looks up each cell's triangles in tables generated from
/// the cube's geometry.
#[derive(Debug, Default, Clone)]
pub struct MarchingCubes {
    scratch: Scratch,
    #[cfg(feature = "parallel")]
    parallel: bool,
    /// One scratch per slab of a parallel call, kept across calls.
    #[cfg(feature = "parallel")]
    slab_scratch: Vec<slabs::SlabScratch>,
    /// One set of scan buffers per pool thread, for slabs copied into place.
    #[cfg(feature = "parallel")]
    thread_scratch: slabs::ThreadScratch,
}

/// Largest node count of a box, so that vertex ids fit `u32`: a box of `n`
/// nodes has fewer than `3n` edges and fewer than `n` cells (one centre vertex
/// each at most), so fewer than `4n <= 2^32` vertices. 1024^3 nodes, the
/// same as [`Field3::MAX_NODES`](isoterra_field::Field3::MAX_NODES).
const MAX_BOX_NODES: u64 = 1 << 30;

fn check_iso(iso: f32) -> Result<(), MeshError> {
    if !iso.is_finite() {
        return Err(MeshError::param("iso", iso, "must be finite"));
    }
    Ok(())
}

fn check_box(dims: [u32; 3], cells: CellBox) -> Result<(), MeshError> {
    let fits = |lo: u32, hi: u32, n: u32| lo <= hi && hi <= n.saturating_sub(1);
    if !(fits(cells.x0, cells.x1, dims[0])
        && fits(cells.y0, cells.y1, dims[1])
        && fits(cells.z0, cells.z1, dims[2]))
    {
        return Err(MeshError::BoxOutOfBounds {
            x0: cells.x0,
            y0: cells.y0,
            z0: cells.z0,
            x1: cells.x1,
            y1: cells.y1,
            z1: cells.z1,
            width: dims[0],
            height: dims[1],
            depth: dims[2],
        });
    }
    let [x, y, z] = cells.size();
    let nodes = (x as u64 + 1) * (y as u64 + 1) * (z as u64 + 1);
    if !cells.is_empty() && nodes > MAX_BOX_NODES {
        return Err(MeshError::param(
            "cells",
            format!("{x}x{y}x{z}"),
            "too many cells for 32-bit indices: mesh the grid in smaller boxes",
        ));
    }
    Ok(())
}

fn node_count(dims: [u32; 3]) -> Result<usize, MeshError> {
    (dims[0] as usize)
        .checked_mul(dims[1] as usize)
        .and_then(|n| n.checked_mul(dims[2] as usize))
        .ok_or_else(|| MeshError::param("dims", format!("{dims:?}"), "the node count overflows"))
}

fn check_materials(materials: Option<&[u8]>, nodes: usize) -> Result<(), MeshError> {
    match materials {
        Some(m) if m.len() != nodes => Err(MeshError::LengthMismatch {
            name: "materials",
            expected: nodes,
            got: m.len(),
        }),
        _ => Ok(()),
    }
}

impl MarchingCubes {
    /// A mesher with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// With `true`, each call cuts the box into slabs of cell layers along z
    /// and meshes them on the current rayon thread pool (run it inside
    /// `ThreadPool::install` to choose the threads). The output is the same,
    /// bit for bit, as a single-thread call's, whatever the number of threads:
    /// the same vertices in the same order, the same triangles, the same
    /// normals. A pool of one thread meshes on the calling thread.
    ///
    /// A call samples three node slices to judge its output's size. A dense
    /// surface is counted slab by slab, then each slab is filled into its
    /// part of an output allocated once. A sparse one (an output no larger
    /// than the field's values) is meshed slab by slab into each slab's own
    /// buffers and copied into place, which costs less than a count. The
    /// mesher keeps its scan buffers (a few slabs per thread) and those slab
    /// buffers between calls. Default: `false`.
    #[cfg(feature = "parallel")]
    pub fn with_parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// Meshes the cells of `cells` of `field` into `out` (which is reset first).
    /// Positions are in world units: `origin + (index + t) * cell_size`.
    ///
    /// # Errors
    ///
    /// [`MeshError::InvalidParameter`] for a non-finite `iso` or a box of more
    /// than 2^30 nodes (1024^3), [`MeshError::BoxOutOfBounds`] when `cells` does not
    /// fit the field. On error `out` is left untouched.
    pub fn mesh(
        &mut self,
        field: &Field3,
        cells: CellBox,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) -> Result<(), MeshError> {
        self.run_field(field, None, cells, options, out)
    }

    /// Like [`mesh`](Self::mesh), and each vertex takes the material id of the
    /// solid node of its edge from `materials` (one id per node, laid out like the
    /// field's values) into [`CubesOutput::materials`].
    ///
    /// # Errors
    ///
    /// As [`mesh`](Self::mesh), plus [`MeshError::LengthMismatch`] when
    /// `materials` does not hold one id per node.
    pub fn mesh_with_materials(
        &mut self,
        field: &Field3,
        materials: &[u8],
        cells: CellBox,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) -> Result<(), MeshError> {
        self.run_field(field, Some(materials), cells, options, out)
    }

    /// Meshes the cells of `cells` of a grid given as a plain slice of
    /// `dims[0] * dims[1] * dims[2]` values (x fastest, then y, then z) into `out`
    /// (which is reset first). Positions are in node-index units (origin 0, cell
    /// size 1).
    ///
    /// The values should be finite. NaN is treated as air and infinities as very
    /// large values: the output stays finite and the mesh stays closed, but
    /// positions and normals near such nodes are arbitrary.
    ///
    /// # Errors
    ///
    /// [`MeshError::LengthMismatch`] when `values` does not hold one value per
    /// node, [`MeshError::InvalidParameter`] for a non-finite `iso`, a `dims`
    /// whose node count overflows or a box of more than 2^30 nodes (1024^3),
    /// [`MeshError::BoxOutOfBounds`] when `cells` does not fit `dims`. On error
    /// `out` is left untouched.
    pub fn mesh_slice(
        &mut self,
        values: &[f32],
        dims: [u32; 3],
        cells: CellBox,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) -> Result<(), MeshError> {
        self.run_slice(values, None, dims, cells, options, out)
    }

    /// Like [`mesh_slice`](Self::mesh_slice) with a material channel (one id per
    /// node); see [`mesh_with_materials`](Self::mesh_with_materials).
    ///
    /// # Errors
    ///
    /// As [`mesh_slice`](Self::mesh_slice), plus [`MeshError::LengthMismatch`]
    /// when `materials` does not hold one id per node.
    pub fn mesh_slice_with_materials(
        &mut self,
        values: &[f32],
        materials: &[u8],
        dims: [u32; 3],
        cells: CellBox,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) -> Result<(), MeshError> {
        self.run_slice(values, Some(materials), dims, cells, options, out)
    }

    fn run_field(
        &mut self,
        field: &Field3,
        materials: Option<&[u8]>,
        cells: CellBox,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) -> Result<(), MeshError> {
        check_iso(options.iso)?;
        check_box(field.dims(), cells)?;
        check_materials(materials, field.values().len())?;
        self.run(
            field.values(),
            materials,
            field.dims(),
            field.origin(),
            field.cell_size(),
            cells,
            options,
            out,
        );
        Ok(())
    }

    fn run_slice(
        &mut self,
        values: &[f32],
        materials: Option<&[u8]>,
        dims: [u32; 3],
        cells: CellBox,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) -> Result<(), MeshError> {
        check_iso(options.iso)?;
        let nodes = node_count(dims)?;
        if values.len() != nodes {
            return Err(MeshError::LengthMismatch {
                name: "values",
                expected: nodes,
                got: values.len(),
            });
        }
        check_box(dims, cells)?;
        check_materials(materials, nodes)?;
        self.run(values, materials, dims, [0.0; 3], 1.0, cells, options, out);
        Ok(())
    }

    /// The scan of the cells `cells` of `values` (`dims` nodes, checked by
    /// the caller) into `sink`: positions in node-index units, no normals or
    /// materials.
    pub(crate) fn scan_into<S: sink::Sink>(
        &mut self,
        values: &[f32],
        dims: [u32; 3],
        cells: CellBox,
        iso: f32,
        sink: &mut S,
    ) {
        if cells.is_empty() {
            return;
        }
        let (lo, hi) = (
            [cells.x0, cells.y0, cells.z0],
            [cells.x1, cells.y1, cells.z1],
        );
        let input = Input::new(values, None, dims, [0.0; 3], 1.0, cells, iso, lo, hi);
        self.scratch
            .scan::<false, false, _>(&input, sink, Packing::Ring);
    }

    /// Runs the scan on validated input.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        values: &[f32],
        materials: Option<&[u8]>,
        dims: [u32; 3],
        origin: [f32; 3],
        cell_size: f32,
        cells: CellBox,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) {
        out.reset();
        if cells.is_empty() {
            return;
        }
        let (lo, hi) = if options.normals_apron {
            ([0; 3], dims.map(|n| n - 1))
        } else {
            (
                [cells.x0, cells.y0, cells.z0],
                [cells.x1, cells.y1, cells.z1],
            )
        };
        let input = Input::new(
            values,
            materials,
            dims,
            origin,
            cell_size,
            cells,
            options.iso,
            lo,
            hi,
        );
        match (options.normals, materials.is_some()) {
            (false, false) => self.dispatch::<false, false>(&input, out),
            (true, false) => self.dispatch::<true, false>(&input, out),
            (false, true) => self.dispatch::<false, true>(&input, out),
            (true, true) => self.dispatch::<true, true>(&input, out),
        }
    }

    /// Picks the way to fill `out`: a fresh output (no memory yet) of a large
    /// box gets its room before the scan and gives back what it did not use
    /// (see `slabs::run_fresh`); a reused one,
    /// or a small box (a chunk, whose output grows in a few cheap steps), is
    /// filled straight into the memory it has; a parallel mesher meshes slabs
    /// on the thread pool, counted first or copied into place after (see
    /// `slabs::sizing`).
    fn dispatch<const N: bool, const M: bool>(&mut self, input: &Input<'_>, out: &mut CubesOutput) {
        #[cfg(feature = "parallel")]
        if self.parallel {
            let threads = rayon::current_num_threads();
            if threads > 1 {
                let sizing = slabs::sizing::<N, M>(&mut self.scratch, input);
                slabs::run_parallel::<N, M>(
                    &mut self.slab_scratch,
                    &mut self.thread_scratch,
                    input,
                    SLABS_PER_THREAD * threads,
                    sizing,
                    out,
                );
                return;
            }
        }
        if out.positions.capacity() == 0 && input.cells().cell_count() >= SIZE_FIRST_CELLS {
            slabs::run_fresh::<N, M>(&mut self.scratch, input, out);
        } else {
            self.scratch
                .scan::<N, M, _>(input, &mut VecSink(out), Packing::Ring);
        }
    }
}

/// Smallest box (in cells, 64^3) whose fresh output is sized before it is
/// filled: below it the output is small and growing it costs less than the
/// sizing pass.
const SIZE_FIRST_CELLS: u64 = 1 << 18;

/// Slabs per worker thread of a parallel call: a few, so that a thread that
/// finishes early takes over work, and not many, since each slab recomputes
/// the vertices of its first node slice.
#[cfg(feature = "parallel")]
const SLABS_PER_THREAD: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_setters_and_defaults() {
        let o = CubesOptions::DEFAULT
            .with_iso(0.5)
            .with_normals(false)
            .with_normals_apron(false);
        assert_eq!((o.iso, o.normals, o.normals_apron), (0.5, false, false));
        assert_eq!(CubesOptions::default(), CubesOptions::DEFAULT);
    }

    #[test]
    fn cell_box_helpers() {
        let f = Field3::new(5, 3, 4, 0.0).unwrap();
        let b = CellBox::whole(&f);
        assert_eq!(b, CellBox::new(0, 0, 0, 4, 2, 3));
        assert_eq!(
            (b.size(), b.cell_count(), b.is_empty()),
            ([4, 2, 3], 24, false)
        );
        assert!(CellBox::new(1, 0, 0, 1, 2, 2).is_empty());
        assert_eq!(CellBox::of_dims([1, 0, 3]), CellBox::new(0, 0, 0, 0, 0, 2));
        assert!(check_box(f.dims(), b).is_ok());
        assert!(check_box(f.dims(), CellBox::new(0, 0, 0, 5, 2, 3)).is_err());
        assert!(check_box(f.dims(), CellBox::new(3, 0, 0, 2, 2, 3)).is_err());
        assert!(check_box([0, 0, 0], CellBox::default()).is_ok());
        assert!(
            check_box(
                [1 << 11, 1 << 11, 1 << 10],
                CellBox::of_dims([1 << 11, 1 << 11, 1 << 10])
            )
            .is_err()
        );
        assert!(check_iso(f32::NAN).is_err());
        assert!(node_count([u32::MAX, u32::MAX, u32::MAX]).is_err());
    }

    #[test]
    fn reset_keeps_capacity() {
        let mut out = CubesOutput::default();
        out.indices.extend_from_slice(&[1, 2, 3]);
        out.positions.push([0.0; 3]);
        let cap = out.indices.capacity();
        out.reset();
        assert!(out.indices.is_empty() && out.positions.is_empty());
        assert_eq!(out.indices.capacity(), cap);
        assert_eq!((out.triangle_count(), out.vertex_count()), (0, 0));
    }
}
