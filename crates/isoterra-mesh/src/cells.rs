//! Rectangles of cells, shared by the meshers of grids: marching squares
//! over a [`Field2`] (cells on x/y) and the map mesher over
//! [`MapLayers`] (cells on x/z).

use isoterra_field::Field2;
use isoterra_field::map::MapLayers;

/// A rectangle of *cells*, `x0..x1` by `y0..y1` (half-open). Cell `(x, y)` has
/// corners at nodes `(x, y)`, `(x+1, y)`, `(x, y+1)`, `(x+1, y+1)`.
///
/// The second axis is the grid's second axis: `y` for a [`Field2`], `z` for
/// a map's [`MapLayers`] (so on a map `y0..y1` are cell rows along z, and
/// meshing the rectangle reads the nodes `[x0, x1] x [y0, y1]` plus one more
/// ring, for normals, where the map has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CellRect {
    /// First cell column (inclusive).
    pub x0: u32,
    /// First cell row (inclusive); along z on a map.
    pub y0: u32,
    /// End cell column (exclusive).
    pub x1: u32,
    /// End cell row (exclusive); along z on a map.
    pub y1: u32,
}

/// A grid of cells a [`CellRect`] can cover whole: how many cells it has
/// along each axis.
pub trait CellGrid {
    /// Number of cells along the first and the second axis.
    fn cell_counts(&self) -> [u32; 2];
}

impl CellGrid for Field2 {
    /// `width - 1` by `height - 1`: the cells between the field's nodes.
    fn cell_counts(&self) -> [u32; 2] {
        [self.width() - 1, self.height() - 1]
    }
}

impl CellGrid for MapLayers {
    /// `width_cells` by `depth_cells` (x, then z).
    fn cell_counts(&self) -> [u32; 2] {
        [self.width_cells(), self.depth_cells()]
    }
}

impl CellRect {
    /// A rectangle from half-open bounds.
    pub const fn new(x0: u32, y0: u32, x1: u32, y1: u32) -> Self {
        CellRect { x0, y0, x1, y1 }
    }

    /// Every cell of `grid` (a [`Field2`] or a map's [`MapLayers`]).
    pub fn whole<G: CellGrid + ?Sized>(grid: &G) -> Self {
        let [w, h] = grid.cell_counts();
        CellRect::new(0, 0, w, h)
    }

    /// True when the rectangle holds no cell.
    pub const fn is_empty(&self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0
    }

    /// Number of cell columns.
    pub const fn width(&self) -> u32 {
        self.x1.saturating_sub(self.x0)
    }

    /// Number of cell rows (along z on a map).
    pub const fn height(&self) -> u32 {
        self.y1.saturating_sub(self.y0)
    }
}
