//! Chunks of a side-view world and their cached meshes and colliders.

use isoterra_field::{Field2, MaterialGrid};
use isoterra_mesh::{
    CellRect, FillMesh, MarchingSquares, Polyline, Segments, SquaresOptions, SquaresOutput,
};

use crate::chain::{ChainScratch, chain_into};
use crate::simplify::{RdpScratch, rdp_into};

/// One chunk of a [`Side2dWorld`](crate::Side2dWorld): a rectangle of cells of
/// the world's single field, and what was built from it.
///
/// Chunk `(cx, cy)` of a world with `N`-cell chunks covers the cells
/// `[cx*N, min(cx*N + N, cells_x)) x [cy*N, min(cy*N + N, cells_y))`; the last
/// chunk of a row or column may be smaller. Meshing it reads one extra row and
/// column of nodes (its + neighbours' first nodes), and vertices on shared
/// edges are bit-identical in both chunks.
///
/// The cached data is valid when [`Side2dChunk::is_dirty`] is false; a new
/// world starts with every chunk dirty, and an edit dirties the chunks it
/// touches until [`Side2dWorld::rebuild`](crate::Side2dWorld::rebuild) runs.
#[derive(Debug, Clone, Default)]
pub struct Side2dChunk {
    /// Chunk coordinate `[cx, cy]`.
    pub coord: [u32; 2],
    /// The cells this chunk covers.
    pub cells: CellRect,
    /// Fill mesh of the solid part, with one submesh per material.
    pub mesh: FillMesh,
    /// Directed contour segments (solid on the left), with global keys.
    pub segments: Segments,
    /// The segments chained into polylines: closed loops for contours inside
    /// the chunk, open chains for contours that leave it (their ends lie on
    /// the chunk's border and meet the neighbour's chains exactly).
    pub polylines: Vec<Polyline>,
    /// The polylines simplified for physics with the world's
    /// [`collider_tolerance_cells`](crate::Side2dParams::collider_tolerance_cells).
    /// Open chains keep their ends; closed loops that shrink below three points
    /// (crumbs thinner than the tolerance) are dropped.
    pub colliders: Vec<Polyline>,
    /// Incremented every time the chunk is rebuilt (0: never built).
    pub version: u64,
    pub(crate) dirty: bool,
    spare: Vec<Polyline>,
}

impl Side2dChunk {
    pub(crate) fn new(coord: [u32; 2], cells: CellRect) -> Self {
        Side2dChunk {
            coord,
            cells,
            dirty: true,
            ..Default::default()
        }
    }

    /// True when the cached data is stale (waiting for a rebuild).
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }
}

/// Per-worker scratch memory for chunk rebuilds.
#[derive(Debug, Default)]
pub(crate) struct ChunkScratch {
    pub(crate) mesher: MarchingSquares,
    chain: ChainScratch,
    rdp: RdpScratch,
}

/// What a chunk rebuild needs besides the chunk.
#[derive(Clone, Copy)]
pub(crate) struct RebuildInput<'a> {
    pub(crate) field: &'a Field2,
    pub(crate) materials: &'a MaterialGrid,
    pub(crate) options: SquaresOptions,
    /// Collider tolerance in world units.
    pub(crate) tolerance: f32,
}

/// Simplifies `lines` into `out` for physics, reusing `spare` polylines.
pub(crate) fn simplify_lines(
    lines: &[Polyline],
    tolerance: f32,
    scratch: &mut RdpScratch,
    spare: &mut Vec<Polyline>,
    out: &mut Vec<Polyline>,
) {
    spare.append(out);
    for line in lines {
        let mut c = spare.pop().unwrap_or_default();
        rdp_into(&line.points, line.closed, tolerance, scratch, &mut c.points);
        c.closed = line.closed;
        let min = if line.closed { 3 } else { 2 };
        if c.points.len() >= min {
            out.push(c);
        } else {
            spare.push(c);
        }
    }
}

/// Rebuilds one chunk's mesh, segments, polylines and colliders in place,
/// reusing its buffers.
pub(crate) fn rebuild_chunk(
    input: &RebuildInput<'_>,
    chunk: &mut Side2dChunk,
    s: &mut ChunkScratch,
) {
    // Lend the chunk's buffers to the mesher so their memory is reused.
    let mut out = SquaresOutput::default();
    std::mem::swap(&mut out.fill, &mut chunk.mesh);
    std::mem::swap(&mut out.segments, &mut chunk.segments);
    let meshed = s.mesher.mesh(
        input.field,
        Some(input.materials),
        chunk.cells,
        &input.options,
        &mut out,
    );
    if meshed.is_err() {
        // Chunk rectangles and material grids are validated when the world is
        // built, so this cannot happen; leave the chunk empty rather than stale.
        out.reset();
    }
    std::mem::swap(&mut out.fill, &mut chunk.mesh);
    std::mem::swap(&mut out.segments, &mut chunk.segments);
    chain_into(
        &chunk.segments,
        &mut s.chain,
        &mut chunk.spare,
        &mut chunk.polylines,
    );
    simplify_lines(
        &chunk.polylines,
        input.tolerance,
        &mut s.rdp,
        &mut chunk.spare,
        &mut chunk.colliders,
    );
    chunk.version += 1;
    chunk.dirty = false;
}
