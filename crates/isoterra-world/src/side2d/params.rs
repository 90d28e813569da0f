//! Parameters of a side-view world.

use crate::WorldError;
use isoterra_field::Side2dGen;

/// Parameters of a [`Side2dWorld`](crate::Side2dWorld): the generator, the
/// chunk size, the iso level, the collider tolerance and the rim strip width.
///
/// The store saves this struct as JSON (with the `serde` feature); a missing
/// field takes its default.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct Side2dParams {
    /// The generator: world size in cells, cell size, preset, seed.
    /// Default value: `Side2dGen::DEFAULT`.
    pub generator: Side2dGen,
    /// Cells per chunk along each axis, `1..=4096`; the last chunk of a row or
    /// column may be smaller. Default value: `32`.
    pub chunk_cells: u32,
    /// Iso level: a node is solid when `value >= iso`; finite and inside
    /// `(-1, 1)` (fields hold values in `[-1, 1]`). Default value: `0.0`.
    pub iso: f32,
    /// Tolerance of the collider simplification (Ramer–Douglas–Peucker) that
    /// every chunk rebuild applies, in cells; `0..=4`. Default value: `0.05`.
    pub collider_tolerance_cells: f32,
    /// Width of the rim strip (a grass edge) every chunk rebuild lays along
    /// the chunk's contours on the solid side, in cells; `0..=8`, `0` turns
    /// the strip off (see [`Side2dChunk::strip`](crate::Side2dChunk::strip)).
    /// Default value: `0.0`.
    pub strip_width_cells: f32,
}

impl Side2dParams {
    /// Most chunks a world may have (`2^18`, which a field of the largest size
    /// reaches with 32-cell chunks).
    pub const MAX_CHUNKS: u64 = 1 << 18;

    /// The defaults.
    pub const DEFAULT: Self = Side2dParams {
        generator: Side2dGen::DEFAULT,
        chunk_cells: 32,
        iso: 0.0,
        collider_tolerance_cells: 0.05,
        strip_width_cells: 0.0,
    };

    /// Sets [`Side2dParams::generator`].
    pub fn with_generator(mut self, generator: Side2dGen) -> Self {
        self.generator = generator;
        self
    }

    /// Sets [`Side2dParams::chunk_cells`].
    pub fn with_chunk_cells(mut self, chunk_cells: u32) -> Self {
        self.chunk_cells = chunk_cells;
        self
    }

    /// Sets [`Side2dParams::iso`].
    pub fn with_iso(mut self, iso: f32) -> Self {
        self.iso = iso;
        self
    }

    /// Sets [`Side2dParams::collider_tolerance_cells`].
    pub fn with_collider_tolerance_cells(mut self, tolerance: f32) -> Self {
        self.collider_tolerance_cells = tolerance;
        self
    }

    /// Sets [`Side2dParams::strip_width_cells`].
    pub fn with_strip_width_cells(mut self, width: f32) -> Self {
        self.strip_width_cells = width;
        self
    }

    /// Cells along x and y.
    pub fn cells(&self) -> [u32; 2] {
        [self.generator.width_cells, self.generator.height_cells]
    }

    /// Chunks along x and y (`ceil(cells / chunk_cells)`); `[0, 0]` when
    /// `chunk_cells` is zero.
    pub fn chunks(&self) -> [u32; 2] {
        if self.chunk_cells == 0 {
            return [0, 0];
        }
        let [w, h] = self.cells();
        [w.div_ceil(self.chunk_cells), h.div_ceil(self.chunk_cells)]
    }

    /// Checks every parameter, the generator's included.
    pub fn validate(&self) -> Result<(), WorldError> {
        self.generator.validate()?;
        if !(1..=4096).contains(&self.chunk_cells) {
            return Err(WorldError::param(
                "chunk_cells",
                self.chunk_cells,
                "must be 1 to 4096 cells (32 is a good default)",
            ));
        }
        if !(self.iso.is_finite() && self.iso > -1.0 && self.iso < 1.0) {
            return Err(WorldError::param(
                "iso",
                self.iso,
                "must be finite and inside (-1, 1); fields hold values in [-1, 1]",
            ));
        }
        let t = self.collider_tolerance_cells;
        if !(t.is_finite() && (0.0..=4.0).contains(&t)) {
            return Err(WorldError::param(
                "collider_tolerance_cells",
                t,
                "must be finite and in 0..=4 cells (0.05 is a good default)",
            ));
        }
        let s = self.strip_width_cells;
        if !(s.is_finite() && (0.0..=8.0).contains(&s)) {
            return Err(WorldError::param(
                "strip_width_cells",
                s,
                "must be finite and in 0..=8 cells (0 turns the rim strip off)",
            ));
        }
        let [cx, cy] = self.chunks();
        if cx as u64 * cy as u64 > Self::MAX_CHUNKS {
            return Err(WorldError::param(
                "chunk_cells",
                self.chunk_cells,
                "gives more than 2^18 chunks for this world size; use larger chunks",
            ));
        }
        Ok(())
    }
}

impl Default for Side2dParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_setters_set() {
        Side2dParams::DEFAULT.validate().unwrap();
        let p = Side2dParams::DEFAULT
            .with_chunk_cells(16)
            .with_iso(0.25)
            .with_collider_tolerance_cells(0.1)
            .with_strip_width_cells(1.5);
        assert_eq!(p.strip_width_cells, 1.5);
        assert_eq!(p.chunk_cells, 16);
        assert_eq!(p.iso, 0.25);
        assert_eq!(p.collider_tolerance_cells, 0.1);
        p.validate().unwrap();
    }

    #[test]
    fn bad_values_are_rejected() {
        let d = Side2dParams::DEFAULT;
        for p in [
            d.with_chunk_cells(0),
            d.with_chunk_cells(5000),
            d.with_iso(f32::NAN),
            d.with_iso(1.0),
            d.with_iso(-1.5),
            d.with_collider_tolerance_cells(-0.1),
            d.with_collider_tolerance_cells(f32::INFINITY),
            d.with_strip_width_cells(-0.5),
            d.with_strip_width_cells(8.5),
            d.with_strip_width_cells(f32::NAN),
        ] {
            assert!(
                matches!(p.validate(), Err(WorldError::InvalidParameter { .. })),
                "{p:?}"
            );
        }
    }

    #[test]
    fn chunk_counts_round_up() {
        let p = Side2dParams::DEFAULT.with_chunk_cells(32);
        let [w, h] = p.cells();
        assert_eq!(p.chunks(), [w.div_ceil(32), h.div_ceil(32)]);
    }
}
