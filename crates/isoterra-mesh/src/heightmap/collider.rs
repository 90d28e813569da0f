//! A heightfield collider as plain data, and its parry3d form behind the
//! `parry` feature.

use crate::MeshError;

use super::input::HeightChunkInput;

/// A chunk's heights as a heightfield collider, in plain data.
///
/// The grid has `rows` nodes along z and `cols` along x, stored row-major with
/// x fastest (`heights[z * cols + x]`), the chunk's own nodes at its LOD without
/// the apron. The collider spans `scale[0]` world units along x and `scale[2]`
/// along z, centred on `translation`; `scale[1]` multiplies the heights (1: the
/// heights are world units). This is the layout physics engines take; with the
/// `parry` feature, `to_parry` builds parry3d's `HeightField` (centred on its
/// origin, its cells cut along the same diagonal as the render mesh).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HeightfieldCollider {
    /// Nodes along z.
    pub rows: u32,
    /// Nodes along x.
    pub cols: u32,
    /// `rows * cols` heights, row-major with x fastest.
    pub heights: Vec<f32>,
    /// Extent along x, height multiplier, extent along z.
    pub scale: [f32; 3],
    /// World position of the collider's centre (`y` is 0).
    pub translation: [f32; 3],
}

impl HeightfieldCollider {
    /// The collider of one chunk: the same input, validated the same way, as
    /// [`HeightmapMesher::mesh`](crate::HeightmapMesher::mesh) (neighbours are
    /// ignored: a collider has no seams to stitch).
    pub fn from_chunk(input: &HeightChunkInput<'_>) -> Result<Self, MeshError> {
        let input = input.with_neighbours([input.lod; 4]);
        let (n, _) = input.validate()?;
        let side = n as usize + 3;
        let v = n as usize + 1;
        let mut heights = Vec::with_capacity(v * v);
        for j in 0..v {
            let row = (j + 1) * side + 1;
            heights.extend_from_slice(&input.heights[row..row + v]);
        }
        let step = 1i64 << input.lod;
        let cs = f64::from(input.cell_size);
        let coord = |chunk: i32, origin: f32, i: i64| -> f64 {
            // The mesher's position formula, so the collider's corners sit
            // exactly on the render mesh's corners.
            let node = i64::from(chunk) * i64::from(input.cells) + i * step;
            f64::from((f64::from(origin) + node as f64 * cs) as f32)
        };
        let x0 = coord(input.chunk[0], input.origin[0], 0);
        let x1 = coord(input.chunk[0], input.origin[0], i64::from(n));
        let z0 = coord(input.chunk[1], input.origin[1], 0);
        let z1 = coord(input.chunk[1], input.origin[1], i64::from(n));
        Ok(HeightfieldCollider {
            rows: v as u32,
            cols: v as u32,
            heights,
            scale: [(x1 - x0) as f32, 1.0, (z1 - z0) as f32],
            translation: [((x0 + x1) * 0.5) as f32, 0.0, ((z0 + z1) * 0.5) as f32],
        })
    }

    /// The height at node `(x, z)` of the grid, or `None` outside it.
    pub fn height(&self, x: u32, z: u32) -> Option<f32> {
        if x < self.cols && z < self.rows {
            self.heights
                .get(z as usize * self.cols as usize + x as usize)
                .copied()
        } else {
            None
        }
    }

    /// The parry3d heightfield (centred on its local origin: place it at
    /// [`translation`](Self::translation)). Its cells are split along the same
    /// diagonal as the render mesh, from the (min x, min z) corner to the
    /// (max x, max z) corner.
    ///
    /// Errors when the collider does not hold `rows * cols` heights or has fewer
    /// than two nodes per side (parry needs at least one cell).
    #[cfg(feature = "parry")]
    pub fn to_parry(&self) -> Result<parry3d::shape::HeightField, MeshError> {
        use parry3d::shape::{HeightField, HeightFieldCellStatus};
        use parry3d::utils::Array2;
        let (rows, cols) = (self.rows as usize, self.cols as usize);
        if rows < 2 || cols < 2 || self.heights.len() != rows * cols {
            return Err(MeshError::param(
                "heights",
                format!("{} values for {}x{} nodes", self.heights.len(), cols, rows),
                "a heightfield needs rows * cols values and at least 2 nodes per side",
            ));
        }
        // parry stores the grid column-major with rows along z.
        let grid = Array2::from_fn(rows, cols, |z, x| self.heights[z * cols + x]);
        let scale = parry3d::math::Vector::new(self.scale[0], self.scale[1], self.scale[2]);
        let mut field = HeightField::new(grid, scale);
        for status in field.cells_statuses_mut().data_mut() {
            *status = HeightFieldCellStatus::ZIGZAG_SUBDIVISION;
        }
        Ok(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_chunk_heights;

    #[test]
    fn collider_takes_the_chunk_nodes_without_apron() {
        let mut h = Vec::new();
        sample_chunk_heights(4, 1, [1, 0], &mut h, |[x, z]| (x * 100 + z) as f32).unwrap();
        let input = HeightChunkInput::new(&h)
            .with_cells(4)
            .with_lod(1)
            .with_chunk([1, 0])
            .with_cell_size(0.5);
        let c = HeightfieldCollider::from_chunk(&input).unwrap();
        assert_eq!((c.rows, c.cols), (3, 3));
        assert_eq!(c.height(0, 0), Some(400.0));
        assert_eq!(c.height(2, 1), Some(802.0));
        assert_eq!(c.height(3, 0), None);
        assert_eq!(c.scale, [2.0, 1.0, 2.0]);
        assert_eq!(c.translation, [3.0, 0.0, 1.0]);
    }
}
