//! Whole-world contours and colliders, joined across chunk borders.

use isoterra_mesh::{
    ContourJoiner, MarchingSquares, Polyline, Segments, Simplifier, SquaresOutput,
};

use super::chunk::simplify_lines;
use crate::{Side2dWorld, WorldError};

impl Side2dWorld {
    /// Every contour of the world as polylines joined across chunk borders:
    /// closed loops, counter-clockwise around solid and clockwise around holes
    /// (solid on the left). Uses the chunks' cached segments; dirty chunks are
    /// meshed on the fly (without changing them).
    pub fn contours(&self) -> Vec<Polyline> {
        let mut options = self.squares_options();
        options.fill = false;
        let dirty: Vec<usize> = (0..self.chunks.len())
            .filter(|&i| self.chunks[i].dirty)
            .collect();
        let mesh_one = |ms: &mut MarchingSquares, i: usize| {
            let mut out = SquaresOutput::default();
            if ms
                .mesh(&self.field, None, self.chunks[i].cells, &options, &mut out)
                .is_err()
            {
                // Chunk rectangles are validated when the world is built.
                out.reset();
            }
            out.segments
        };
        #[cfg(feature = "parallel")]
        let fresh: Vec<Segments> = {
            use rayon::prelude::*;
            dirty
                .par_iter()
                .map_init(MarchingSquares::new, |ms, &i| mesh_one(ms, i))
                .collect()
        };
        #[cfg(not(feature = "parallel"))]
        let fresh: Vec<Segments> = {
            let mut ms = MarchingSquares::new();
            dirty.iter().map(|&i| mesh_one(&mut ms, i)).collect()
        };
        let mut k = 0;
        let parts: Vec<&Segments> = self
            .chunks
            .iter()
            .map(|c| {
                if c.dirty {
                    k += 1;
                    &fresh[k - 1]
                } else {
                    &c.segments
                }
            })
            .collect();
        let mut out = Vec::new();
        ContourJoiner::new().join(&parts, &mut out);
        out
    }

    /// The world's contours ([`contours`](Self::contours)) simplified for
    /// physics with Ramer–Douglas–Peucker, `tolerance_cells` in cells
    /// (`0..=4`; 0.05 is a good default: invisible, and far fewer edges).
    /// Closed loops thinner than the tolerance (crumbs that simplification
    /// would flatten to a line) are dropped.
    pub fn colliders(&self, tolerance_cells: f32) -> Result<Vec<Polyline>, WorldError> {
        if !(tolerance_cells.is_finite() && (0.0..=4.0).contains(&tolerance_cells)) {
            return Err(WorldError::param(
                "tolerance_cells",
                tolerance_cells,
                "must be finite and in 0..=4 cells (0.05 is a good default)",
            ));
        }
        let contours = self.contours();
        let mut out = Vec::with_capacity(contours.len());
        simplify_lines(
            &contours,
            tolerance_cells * self.field.cell_size(),
            &mut Simplifier::new(),
            &mut Vec::new(),
            &mut out,
        );
        Ok(out)
    }
}
