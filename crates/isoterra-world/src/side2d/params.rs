//! Parameters of a side-view world.

use crate::WorldError;
use isoterra_field::{Quantizer8, Quantizer16, Side2dGen};

/// How a side-view world stores its density values: exact `f32`, or
/// quantized to 16 or 8 bits over `[-1, 1]` (the range side-view fields
/// hold).
///
/// A quantized world keeps every value on its grid in memory too: the
/// generator's output, every brush's result and every imported field are
/// rounded to the nearest code, so that what the file stores is exactly what
/// the world shows, undo restores the same bytes and a reopened world hashes
/// as it did. One `u8` step is `2 / 255 ≈ 0.0078` (256 levels, enough for
/// smooth contours); a brush change smaller than half a step is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Side2dStorage {
    /// Exact 32-bit floats (4 bytes per node before compression).
    #[default]
    F32,
    /// 16-bit codes (2 bytes per node, steps of `2 / 65535`).
    U16,
    /// 8-bit codes (1 byte per node, steps of `2 / 255`).
    U8,
}

impl Side2dStorage {
    /// Every storage, exact first.
    pub const ALL: [Side2dStorage; 3] = [Side2dStorage::F32, Side2dStorage::U16, Side2dStorage::U8];

    /// The name the recipe and the world file use: `f32`, `u16` or `u8`.
    pub const fn name(self) -> &'static str {
        match self {
            Side2dStorage::F32 => "f32",
            Side2dStorage::U16 => "u16",
            Side2dStorage::U8 => "u8",
        }
    }

    /// Whether values are stored exactly.
    pub const fn is_exact(self) -> bool {
        matches!(self, Side2dStorage::F32)
    }

    /// `v` as this storage keeps it: unchanged for `f32`, else the value of
    /// its nearest code (values outside `[-1, 1]` saturate). Snapping twice
    /// gives the same bits as snapping once.
    #[inline]
    pub fn snap(self, v: f32) -> f32 {
        match self {
            Side2dStorage::F32 => v,
            Side2dStorage::U16 => {
                let q = Quantizer16::DEFAULT;
                q.dequantize(q.quantize(v))
            }
            Side2dStorage::U8 => {
                let q = Quantizer8::DEFAULT;
                q.dequantize(q.quantize(v))
            }
        }
    }

    /// Snaps every value of `values` (see [`snap`](Self::snap)).
    pub fn snap_all(self, values: &mut [f32]) {
        if !self.is_exact() {
            for v in values {
                *v = self.snap(*v);
            }
        }
    }
}

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
    /// How the density values are stored (see [`Side2dStorage`]). Default
    /// value: [`Side2dStorage::F32`], which the world file's JSON leaves out
    /// (files from before this field read as `f32`).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "storage_is_exact"))]
    pub storage: Side2dStorage,
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
        storage: Side2dStorage::F32,
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

    /// Sets [`Side2dParams::storage`].
    pub fn with_storage(mut self, storage: Side2dStorage) -> Self {
        self.storage = storage;
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

/// Whether `s` is exact `f32`, the default the world file's JSON leaves out.
#[cfg(feature = "serde")]
fn storage_is_exact(s: &Side2dStorage) -> bool {
    s.is_exact()
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
    fn snapping_is_idempotent_saturating_and_exact_for_f32() {
        let values = [
            -3.0f32, -1.0, -0.73, -0.0, 0.0, 1e-9, 0.3333, 0.999, 1.0, 7.5,
        ];
        for storage in Side2dStorage::ALL {
            for v in values {
                let once = storage.snap(v);
                assert_eq!(
                    storage.snap(once).to_bits(),
                    once.to_bits(),
                    "{storage:?} {v}"
                );
                assert!(
                    (-1.0..=1.0).contains(&once) || storage.is_exact(),
                    "{storage:?} {v}"
                );
            }
        }
        for v in values {
            assert_eq!(Side2dStorage::F32.snap(v).to_bits(), v.to_bits());
        }
        // A u8 step is 2/255; the nearest code is within half of it.
        assert!((Side2dStorage::U8.snap(0.3333) - 0.3333).abs() <= 1.0 / 255.0);
        assert!((Side2dStorage::U16.snap(0.3333) - 0.3333).abs() <= 1.0 / 65535.0);
        assert_eq!(Side2dStorage::U8.snap(-7.0), -1.0);
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
