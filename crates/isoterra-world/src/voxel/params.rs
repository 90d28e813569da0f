//! Parameters of the voxel world.

use isoterra_field::VoxelGen;

use crate::WorldError;

/// Parameters of a [`VoxelWorld`](crate::VoxelWorld).
///
/// World units are cells: node `(x, y, z)` (global integer coordinates)
/// sits at world position `(x, y, z)`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct VoxelParams {
    /// The generator of untouched chunks. Default value: [`VoxelGen::DEFAULT`].
    pub generator: VoxelGen,
    /// Cells per chunk along each axis, `2..=128`. Default value: `32`.
    pub chunk_cells: u32,
    /// Iso level: a node is solid when `value >= iso`; finite, in `(-1, 1)`.
    /// Default value: `0.0`.
    pub iso: f32,
}

impl VoxelParams {
    /// Largest [`chunk_cells`](Self::chunk_cells).
    pub const MAX_CHUNK_CELLS: u32 = 128;

    /// The defaults.
    pub const DEFAULT: Self = VoxelParams {
        generator: VoxelGen::DEFAULT,
        chunk_cells: 32,
        iso: 0.0,
    };

    /// Sets [`generator`](Self::generator).
    pub const fn with_generator(mut self, generator: VoxelGen) -> Self {
        self.generator = generator;
        self
    }

    /// Sets [`chunk_cells`](Self::chunk_cells).
    pub const fn with_chunk_cells(mut self, chunk_cells: u32) -> Self {
        self.chunk_cells = chunk_cells;
        self
    }

    /// Sets [`iso`](Self::iso).
    pub const fn with_iso(mut self, iso: f32) -> Self {
        self.iso = iso;
        self
    }

    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] or [`WorldError::Field`] naming the
    /// first bad value.
    pub fn validate(&self) -> Result<(), WorldError> {
        self.generator.validate()?;
        if !(2..=Self::MAX_CHUNK_CELLS).contains(&self.chunk_cells) {
            return Err(WorldError::param(
                "chunk_cells",
                self.chunk_cells,
                "must be in 2..=128",
            ));
        }
        if !(self.iso > -1.0 && self.iso < 1.0) {
            return Err(WorldError::param(
                "iso",
                self.iso,
                "must be finite and in (-1, 1) (densities lie in [-1, 1])",
            ));
        }
        Ok(())
    }
}

impl Default for VoxelParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}
