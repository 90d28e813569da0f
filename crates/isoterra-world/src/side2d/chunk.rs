//! Chunks of a side-view world and their cached meshes and colliders.

use isoterra_field::{Field2, MaterialGrid};
use isoterra_mesh::{
    CellRect, FillMesh, MarchingSquares, Polyline, Segments, Simplifier, SquaresOptions,
    SquaresOutput, StripBuilder, StripMesh,
};

use super::chain::{ChainScratch, chain_into};

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
    /// The segments chained into polylines: first the open chains, for
    /// contours that leave the chunk (their ends lie on the chunk's border and
    /// meet the neighbour's chains exactly), then the closed loops for
    /// contours inside the chunk (at least three points each).
    pub polylines: Vec<Polyline>,
    /// The polylines simplified for physics (Ramer–Douglas–Peucker) with the
    /// world's
    /// [`collider_tolerance_cells`](crate::Side2dParams::collider_tolerance_cells),
    /// in the same order. Open chains keep their ends, so colliders of
    /// neighbouring chunks meet exactly on the border; closed loops thinner
    /// than the tolerance (crumbs that simplification would flatten to a
    /// line) are dropped.
    pub colliders: Vec<Polyline>,
    /// The rim strip (a grass edge) along [`polylines`](Self::polylines), on
    /// the solid side, [`strip_width_cells`](crate::Side2dParams::strip_width_cells)
    /// wide (see [`edge_strip`](isoterra_mesh::edge_strip) for its layout);
    /// empty when the width is zero. A chain cut by the chunk border ends
    /// square to its last side there.
    pub strip: StripMesh,
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
    simplifier: Simplifier,
    strip: StripBuilder,
}

/// What a chunk rebuild needs besides the chunk.
#[derive(Clone, Copy)]
pub(crate) struct RebuildInput<'a> {
    pub(crate) field: &'a Field2,
    pub(crate) materials: &'a MaterialGrid,
    pub(crate) options: SquaresOptions,
    /// Collider tolerance in world units.
    pub(crate) tolerance: f32,
    /// Rim strip width in world units; 0 for none.
    pub(crate) strip_width: f32,
}

/// Simplifies `lines` into `out` for physics, reusing `spare` polylines:
/// Ramer–Douglas–Peucker with `tolerance` in world units (open chains keep
/// their ends), dropping closed loops thinner than the tolerance.
pub(crate) fn simplify_lines(
    lines: &[Polyline],
    tolerance: f32,
    simplifier: &mut Simplifier,
    spare: &mut Vec<Polyline>,
    out: &mut Vec<Polyline>,
) {
    spare.append(out);
    for line in lines {
        let mut c = spare.pop().unwrap_or_default();
        if simplifier.rdp(line, tolerance, &mut c).is_err() {
            // Only for a bad tolerance or a non-finite point, which the world
            // never hands in (parameters are validated, meshes are finite).
            c.points.clear();
            c.points.extend_from_slice(&line.points);
            c.closed = line.closed;
        }
        let min = if c.closed { 3 } else { 2 };
        if c.points.len() >= min && !(c.closed && is_crumb(&c.points, tolerance)) {
            out.push(c);
        } else {
            spare.push(c);
        }
    }
}

/// True for a simplified closed loop that is only a sliver: three points,
/// the third within `tolerance` of the segment between the first point and
/// the point farthest from it. Ramer–Douglas–Peucker keeps at least three
/// points of a loop; such a loop would otherwise have collapsed onto that
/// segment, so it encloses no more than a crumb thinner than the tolerance.
fn is_crumb(points: &[[f32; 2]], tolerance: f32) -> bool {
    let [a, b, c] = points else {
        return false;
    };
    let d2 = |p: &[f32; 2], q: &[f32; 2]| {
        let (dx, dy) = (q[0] as f64 - p[0] as f64, q[1] as f64 - p[1] as f64);
        dx * dx + dy * dy
    };
    let (far, other) = if d2(a, c) > d2(a, b) { (c, b) } else { (b, c) };
    let t = tolerance as f64;
    dist2_to_segment(other, a, far) <= t * t
}

/// Squared distance from `p` to the segment `a`–`b` (to `a` when it is a point).
fn dist2_to_segment(p: &[f32; 2], a: &[f32; 2], b: &[f32; 2]) -> f64 {
    let (abx, aby) = (b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64);
    let (apx, apy) = (p[0] as f64 - a[0] as f64, p[1] as f64 - a[1] as f64);
    let len2 = abx * abx + aby * aby;
    let t = if len2 > 0.0 {
        ((apx * abx + apy * aby) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (dx, dy) = (apx - t * abx, apy - t * aby);
    dx * dx + dy * dy
}

/// Rebuilds one chunk's mesh, segments, polylines, colliders and strip in
/// place, reusing its buffers.
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
        &mut s.simplifier,
        &mut chunk.spare,
        &mut chunk.colliders,
    );
    if input.strip_width > 0.0 {
        if s.strip
            .build(&chunk.polylines, input.strip_width, &mut chunk.strip)
            .is_err()
        {
            // Only for a bad width or a non-finite point, which the world
            // never hands in.
            chunk.strip.clear();
        }
    } else {
        chunk.strip.clear();
    }
    chunk.version += 1;
    chunk.dirty = false;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simplify(lines: &[Polyline], tolerance: f32) -> Vec<Polyline> {
        let mut out = Vec::new();
        simplify_lines(
            lines,
            tolerance,
            &mut Simplifier::new(),
            &mut Vec::new(),
            &mut out,
        );
        out
    }

    #[test]
    fn open_chains_keep_their_ends() {
        let pts: Vec<[f32; 2]> = (0..20).map(|i| [i as f32, (i % 2) as f32 * 0.01]).collect();
        let out = simplify(&[Polyline::new(pts.clone(), false)], 0.05);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].points, vec![pts[0], pts[19]]);
        assert!(!out[0].closed);
    }

    #[test]
    fn thin_loops_are_dropped_and_real_ones_kept() {
        // A sliver 0.02 high and 4 long: a crumb at tolerance 0.05.
        let sliver = Polyline::new(
            vec![[0.0, 0.0], [2.0, -0.01], [4.0, 0.0], [2.0, 0.01]],
            true,
        );
        let square = Polyline::new(vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], true);
        let triangle = Polyline::new(vec![[0.0, 0.0], [4.0, 0.0], [2.0, 0.5]], true);
        let out = simplify(&[sliver.clone(), square.clone(), triangle.clone()], 0.05);
        assert_eq!(out, vec![square, triangle.clone()]);
        // At tolerance 0 only exactly flat loops go.
        assert_eq!(simplify(std::slice::from_ref(&sliver), 0.0).len(), 1);
        let flat = Polyline::new(vec![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], true);
        assert!(simplify(&[flat], 0.0).is_empty());
        // A triangle whose height is within the tolerance is a crumb.
        assert!(simplify(&[triangle], 0.6).is_empty());
    }
}
