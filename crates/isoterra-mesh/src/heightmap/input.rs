//! The input of the heightmap mesher: one chunk's heights with their apron,
//! its place in the world, and the options.

use std::fmt;

use crate::MeshError;

/// Largest chunk size in cells per side.
const MAX_CELLS: u32 = 4096;

/// One side of a chunk, in the order used by [`HeightChunkInput::neighbours`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ChunkSide {
    /// The side at the smallest x (index 0).
    NegX,
    /// The side at the largest x (index 1).
    PosX,
    /// The side at the smallest z (index 2).
    NegZ,
    /// The side at the largest z (index 3).
    PosZ,
}

impl ChunkSide {
    /// The four sides in neighbour-array order: −x, +x, −z, +z.
    pub const ALL: [ChunkSide; 4] = [
        ChunkSide::NegX,
        ChunkSide::PosX,
        ChunkSide::NegZ,
        ChunkSide::PosZ,
    ];

    /// The position of this side in [`HeightChunkInput::neighbours`].
    pub const fn index(self) -> usize {
        match self {
            ChunkSide::NegX => 0,
            ChunkSide::PosX => 1,
            ChunkSide::NegZ => 2,
            ChunkSide::PosZ => 3,
        }
    }
}

impl fmt::Display for ChunkSide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChunkSide::NegX => "-x",
            ChunkSide::PosX => "+x",
            ChunkSide::NegZ => "-z",
            ChunkSide::PosZ => "+z",
        })
    }
}

/// One chunk's heights and its place in the world.
///
/// See [`HeightmapMesher`](crate::HeightmapMesher) for the sample
/// layout. Build it with [`HeightChunkInput::new`] and the `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct HeightChunkInput<'a> {
    /// `(n + 3)²` heights in world units, `n = cells >> lod`: the chunk's nodes at
    /// this LOD plus a one-node apron ring at the same step, row-major with x
    /// fastest, then z. Every value must be finite.
    pub heights: &'a [f32],
    /// Cells per chunk side at LOD 0 (`N`). A power of two from 1 to 4096.
    /// Default value: `64`.
    pub cells: u32,
    /// Level of detail `k`: the chunk samples every `2^k`-th node. At most
    /// `log2(cells)`. Default value: `0`.
    pub lod: u8,
    /// Chunk coordinates `(cx, cz)`; the chunk's node `(0, 0)` is the global node
    /// `(cx * cells, cz * cells)`. Default value: `[0, 0]`.
    pub chunk: [i32; 2],
    /// World `x, z` of the global node `(0, 0)` (the same for every chunk of a
    /// world). Must be finite. Default value: `[0.0, 0.0]`.
    pub origin: [f32; 2],
    /// World units between two adjacent LOD 0 nodes. Finite and greater than
    /// zero. Default value: `1.0`.
    pub cell_size: f32,
    /// LODs of the edge neighbours on the −x, +x, −z and +z sides (see
    /// [`ChunkSide`]). Each must be at most `lod + 1` (the 2:1 rule); the edge is
    /// stitched when the neighbour is exactly `lod + 1`. A neighbour at `lod`
    /// or finer (or no neighbour at all) leaves the edge at full resolution:
    /// pass `lod` for those. Default value: `[0, 0, 0, 0]`.
    pub neighbours: [u8; 4],
}

impl<'a> HeightChunkInput<'a> {
    /// An input for chunk `(0, 0)` of a 64-cell chunk grid at LOD 0, origin 0,
    /// cell size 1, with no coarser neighbour.
    pub const fn new(heights: &'a [f32]) -> Self {
        HeightChunkInput {
            heights,
            cells: 64,
            lod: 0,
            chunk: [0, 0],
            origin: [0.0, 0.0],
            cell_size: 1.0,
            neighbours: [0; 4],
        }
    }

    /// Sets [`cells`](Self::cells).
    pub const fn with_cells(mut self, cells: u32) -> Self {
        self.cells = cells;
        self
    }

    /// Sets [`lod`](Self::lod).
    pub const fn with_lod(mut self, lod: u8) -> Self {
        self.lod = lod;
        self
    }

    /// Sets [`chunk`](Self::chunk).
    pub const fn with_chunk(mut self, chunk: [i32; 2]) -> Self {
        self.chunk = chunk;
        self
    }

    /// Sets [`origin`](Self::origin).
    pub const fn with_origin(mut self, origin: [f32; 2]) -> Self {
        self.origin = origin;
        self
    }

    /// Sets [`cell_size`](Self::cell_size).
    pub const fn with_cell_size(mut self, cell_size: f32) -> Self {
        self.cell_size = cell_size;
        self
    }

    /// Sets [`neighbours`](Self::neighbours) (−x, +x, −z, +z).
    pub const fn with_neighbours(mut self, neighbours: [u8; 4]) -> Self {
        self.neighbours = neighbours;
        self
    }

    /// Cells per side at this LOD (`n = cells >> lod`), after checking `cells`
    /// and `lod`.
    pub fn lod_cells(&self) -> Result<u32, MeshError> {
        lod_cells(self.cells, self.lod)
    }

    /// The global node index of sample `(i, j)` of [`heights`](Self::heights)
    /// (apron included: sample `(1, 1)` is the chunk's node `(0, 0)`).
    pub fn sample_node(&self, i: u32, j: u32) -> [i64; 2] {
        sample_node(self.cells, self.lod, self.chunk, i, j)
    }

    /// Checks every field; returns `n`, the cells per side at this LOD, and the
    /// mask of stitched sides (bit [`ChunkSide::index`]).
    pub(crate) fn validate(&self) -> Result<(u32, u8), MeshError> {
        let n = self.lod_cells()?;
        if !(self.cell_size.is_finite() && self.cell_size > 0.0) {
            return Err(MeshError::param(
                "cell_size",
                self.cell_size,
                "must be finite and greater than zero",
            ));
        }
        if !(self.origin[0].is_finite() && self.origin[1].is_finite()) {
            return Err(MeshError::param(
                "origin",
                format!("{:?}", self.origin),
                "both coordinates must be finite",
            ));
        }
        let mut stitch = 0u8;
        for side in ChunkSide::ALL {
            let neighbour = self.neighbours[side.index()];
            if neighbour > self.lod.saturating_add(1) {
                return Err(MeshError::NeighbourLod {
                    side,
                    lod: self.lod,
                    neighbour,
                });
            }
            if neighbour == self.lod + 1 {
                // `lod_cells` allows lod == log2(cells); a coarser neighbour
                // then has no level to be at.
                if n < 2 {
                    return Err(MeshError::NeighbourLod {
                        side,
                        lod: self.lod,
                        neighbour,
                    });
                }
                stitch |= 1 << side.index();
            }
        }
        let side = n + 3;
        let expected = side as usize * side as usize;
        if self.heights.len() != expected {
            return Err(MeshError::HeightCountMismatch {
                expected,
                got: self.heights.len(),
                side,
            });
        }
        if let Some(index) = self.heights.iter().position(|h| !h.is_finite()) {
            return Err(MeshError::NonFiniteHeight {
                index,
                x: (index % side as usize) as u32,
                z: (index / side as usize) as u32,
                value: self.heights[index],
            });
        }
        Ok((n, stitch))
    }
}

/// `cells >> lod` after checking that `cells` is a power of two in `1..=4096`
/// and `lod <= log2(cells)`.
pub(crate) fn lod_cells(cells: u32, lod: u8) -> Result<u32, MeshError> {
    if !cells.is_power_of_two() || cells > MAX_CELLS {
        return Err(MeshError::param(
            "cells",
            cells,
            "must be a power of two from 1 to 4096 (64 is the usual chunk size)",
        ));
    }
    if u32::from(lod) > cells.trailing_zeros() {
        return Err(MeshError::param(
            "lod",
            lod,
            "must be at most log2(cells): the coarsest level has one cell per chunk side",
        ));
    }
    Ok(cells >> lod)
}

fn sample_node(cells: u32, lod: u8, chunk: [i32; 2], i: u32, j: u32) -> [i64; 2] {
    let step = 1i64 << lod.min(31);
    [
        i64::from(chunk[0]) * i64::from(cells) + (i64::from(i) - 1) * step,
        i64::from(chunk[1]) * i64::from(cells) + (i64::from(j) - 1) * step,
    ]
}

/// Fills `out` with the `(n + 3)²` height samples of chunk `chunk` at LOD
/// `lod` (apron included), calling `height` with the global node index
/// `[gx, gz]` of each sample, row-major with x fastest.
///
/// `out` is cleared first and keeps its memory. Errors: `cells` not a power of
/// two in `1..=4096`, or `lod > log2(cells)`; `out` is left untouched then.
pub fn sample_chunk_heights(
    cells: u32,
    lod: u8,
    chunk: [i32; 2],
    out: &mut Vec<f32>,
    mut height: impl FnMut([i64; 2]) -> f32,
) -> Result<(), MeshError> {
    let side = lod_cells(cells, lod)? + 3;
    out.clear();
    out.reserve(side as usize * side as usize);
    for j in 0..side {
        for i in 0..side {
            out.push(height(sample_node(cells, lod, chunk, i, j)));
        }
    }
    Ok(())
}

/// Options for [`HeightmapMesher`](crate::HeightmapMesher).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct HeightmapOptions {
    /// World units per texture repeat: UV = world `(x, z) / uv_scale`. Finite and
    /// greater than zero. Default value: `1.0`.
    pub uv_scale: f32,
    /// Close seams with coarser neighbours by stitching (see
    /// [`HeightChunkInput::neighbours`]). When `false` every edge stays at full
    /// resolution (use skirts to hide the cracks). Default value: `true`.
    pub stitch: bool,
    /// Depth of the vertical skirt hung below every border, in world units;
    /// `0` means no skirt. Finite and not negative. Default value: `0.0`.
    pub skirt_depth: f32,
}

impl HeightmapOptions {
    /// The default options.
    pub const DEFAULT: HeightmapOptions = HeightmapOptions {
        uv_scale: 1.0,
        stitch: true,
        skirt_depth: 0.0,
    };

    /// Sets [`uv_scale`](Self::uv_scale).
    pub const fn with_uv_scale(mut self, uv_scale: f32) -> Self {
        self.uv_scale = uv_scale;
        self
    }

    /// Sets [`stitch`](Self::stitch).
    pub const fn with_stitch(mut self, stitch: bool) -> Self {
        self.stitch = stitch;
        self
    }

    /// Sets [`skirt_depth`](Self::skirt_depth).
    pub const fn with_skirt_depth(mut self, skirt_depth: f32) -> Self {
        self.skirt_depth = skirt_depth;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), MeshError> {
        if !(self.uv_scale.is_finite() && self.uv_scale > 0.0) {
            return Err(MeshError::param(
                "uv_scale",
                self.uv_scale,
                "must be finite and greater than zero",
            ));
        }
        if !(self.skirt_depth.is_finite() && self.skirt_depth >= 0.0) {
            return Err(MeshError::param(
                "skirt_depth",
                self.skirt_depth,
                "must be finite and not negative (0 disables skirts)",
            ));
        }
        Ok(())
    }
}

impl Default for HeightmapOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lod_cells_checks_power_of_two_and_range() {
        assert_eq!(lod_cells(64, 0).unwrap(), 64);
        assert_eq!(lod_cells(64, 6).unwrap(), 1);
        assert!(lod_cells(64, 7).is_err());
        assert!(lod_cells(48, 0).is_err());
        assert!(lod_cells(0, 0).is_err());
        assert!(lod_cells(8192, 0).is_err());
    }

    #[test]
    fn sample_nodes_include_the_apron() {
        let input = HeightChunkInput::new(&[])
            .with_cells(8)
            .with_lod(1)
            .with_chunk([2, -1]);
        assert_eq!(input.sample_node(0, 0), [16 - 2, -8 - 2]);
        assert_eq!(input.sample_node(1, 1), [16, -8]);
        assert_eq!(input.sample_node(5, 5), [24, 0]);
    }

    #[test]
    fn sample_chunk_heights_fills_row_major() {
        let mut out = vec![9.0];
        sample_chunk_heights(2, 0, [0, 0], &mut out, |[x, z]| (x * 10 + z) as f32).unwrap();
        assert_eq!(out.len(), 25);
        assert_eq!(out[0], -11.0);
        assert_eq!(out[1], -1.0);
        assert_eq!(out[5], -10.0);
        assert!(sample_chunk_heights(3, 0, [0, 0], &mut out, |_| 0.0).is_err());
        assert_eq!(out.len(), 25);
    }

    #[test]
    fn side_order_matches_indices() {
        for (k, side) in ChunkSide::ALL.iter().enumerate() {
            assert_eq!(side.index(), k);
        }
        assert_eq!(ChunkSide::PosZ.to_string(), "+z");
    }
}
