//! Parameters of a map world: size, chunking, seed, preset and mesh options.

use std::fmt;
use std::str::FromStr;

use isoterra_field::MAX_MAP_CELLS;

use crate::WorldError;
use isoterra_mesh::MapMeshOptions;

/// What a new map starts as. Every preset is a pure function of the seed and
/// the node coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum MapPreset {
    /// Flat ground at level 0, no water, texture 0 everywhere.
    Blank,
    /// An island: land rising in up to three cliff levels from a sea, sand
    /// along the shore and rock on the high ground.
    #[default]
    Island,
    /// Rolling plateaus on levels 0..=4 joined by a few natural ramps, with
    /// some chasms.
    Plateaus,
}

impl MapPreset {
    /// Every preset, in declaration order.
    pub const ALL: [MapPreset; 3] = [MapPreset::Blank, MapPreset::Island, MapPreset::Plateaus];

    /// The lower-case name (`blank`, `island`, `plateaus`).
    pub const fn name(self) -> &'static str {
        match self {
            MapPreset::Blank => "blank",
            MapPreset::Island => "island",
            MapPreset::Plateaus => "plateaus",
        }
    }
}

impl fmt::Display for MapPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MapPreset {
    type Err = WorldError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        MapPreset::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                WorldError::param(
                    "preset",
                    format!("{s:?}"),
                    "expected one of: blank, island, plateaus",
                )
            })
    }
}

/// Parameters of a [`MapWorld`](crate::MapWorld).
///
/// The map has `width_cells x depth_cells` cells on the x/z plane (so one
/// more node along each axis), split into chunks of `chunk_cells` cells per
/// side; the last chunk of a row or column may be smaller.
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
pub struct MapParams {
    /// Cells along x, `1..=4096`. Default value: `256`.
    pub width_cells: u32,
    /// Cells along z, `1..=4096`. Default value: `256`.
    pub depth_cells: u32,
    /// Cells per chunk side, `4..=4096`. Default value: `64`.
    pub chunk_cells: u32,
    /// Seed of the preset and of the noise tool. Default value: `0`.
    pub seed: u64,
    /// What the map starts as. Default value: `MapPreset::Island`.
    pub preset: MapPreset,
    /// Options of the map mesher (cell size, level height, chasm depth).
    /// Default value: `MapMeshOptions::DEFAULT`.
    pub mesh: MapMeshOptions,
}

impl MapParams {
    /// The defaults: a 256 x 256 island in 64-cell chunks, seed 0.
    pub const DEFAULT: Self = MapParams {
        width_cells: 256,
        depth_cells: 256,
        chunk_cells: 64,
        seed: 0,
        preset: MapPreset::Island,
        mesh: MapMeshOptions::DEFAULT,
    };

    /// Sets [`width_cells`](Self::width_cells) and [`depth_cells`](Self::depth_cells).
    pub const fn with_size(mut self, width_cells: u32, depth_cells: u32) -> Self {
        self.width_cells = width_cells;
        self.depth_cells = depth_cells;
        self
    }

    /// Sets [`width_cells`](Self::width_cells).
    pub const fn with_width_cells(mut self, width_cells: u32) -> Self {
        self.width_cells = width_cells;
        self
    }

    /// Sets [`depth_cells`](Self::depth_cells).
    pub const fn with_depth_cells(mut self, depth_cells: u32) -> Self {
        self.depth_cells = depth_cells;
        self
    }

    /// Sets [`chunk_cells`](Self::chunk_cells).
    pub const fn with_chunk_cells(mut self, chunk_cells: u32) -> Self {
        self.chunk_cells = chunk_cells;
        self
    }

    /// Sets [`seed`](Self::seed).
    pub const fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets [`preset`](Self::preset).
    pub const fn with_preset(mut self, preset: MapPreset) -> Self {
        self.preset = preset;
        self
    }

    /// Sets [`mesh`](Self::mesh).
    pub const fn with_mesh(mut self, mesh: MapMeshOptions) -> Self {
        self.mesh = mesh;
        self
    }

    /// Chunks along x and z: `ceil(cells / chunk_cells)`.
    pub const fn chunk_count(&self) -> [u32; 2] {
        [
            self.width_cells.div_ceil(self.chunk_cells),
            self.depth_cells.div_ceil(self.chunk_cells),
        ]
    }

    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] naming the first bad field (mesh
    /// options included: each must be finite, greater than zero and at
    /// most `1e6`).
    pub fn validate(&self) -> Result<(), WorldError> {
        for (name, v) in [
            ("width_cells", self.width_cells),
            ("depth_cells", self.depth_cells),
        ] {
            if v == 0 || v > MAX_MAP_CELLS {
                return Err(WorldError::param(
                    name,
                    v,
                    "a map side is from 1 to 4096 cells",
                ));
            }
        }
        if !(4..=MAX_MAP_CELLS).contains(&self.chunk_cells) {
            return Err(WorldError::param(
                "chunk_cells",
                self.chunk_cells,
                "must be from 4 to 4096 (64 is usual)",
            ));
        }
        for (name, v) in [
            ("mesh.cell_size", self.mesh.cell_size),
            ("mesh.level_height", self.mesh.level_height),
            ("mesh.chasm_depth", self.mesh.chasm_depth),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 1.0e6) {
                return Err(WorldError::param(
                    name,
                    v,
                    "must be finite, greater than zero and at most 1e6",
                ));
            }
        }
        Ok(())
    }
}

impl Default for MapParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_count_chunks() {
        let p = MapParams::DEFAULT;
        p.validate().unwrap();
        assert_eq!(p.chunk_count(), [4, 4]);
        assert_eq!(p.with_size(65, 1).chunk_count(), [2, 1]);
    }

    #[test]
    fn bad_values_are_rejected() {
        let p = MapParams::DEFAULT;
        assert!(p.with_size(0, 4).validate().is_err());
        assert!(p.with_size(4, 5000).validate().is_err());
        assert!(p.with_chunk_cells(2).validate().is_err());
        assert!(p.with_chunk_cells(8192).validate().is_err());
        let mesh = MapMeshOptions::DEFAULT;
        assert!(p.with_mesh(mesh.with_cell_size(0.0)).validate().is_err());
        assert!(
            p.with_mesh(mesh.with_level_height(f32::NAN))
                .validate()
                .is_err()
        );
        assert!(p.with_mesh(mesh.with_chasm_depth(-1.0)).validate().is_err());
    }

    #[test]
    fn presets_parse_by_name() {
        for p in MapPreset::ALL {
            assert_eq!(p.name().parse::<MapPreset>().unwrap(), p);
        }
        assert!("volcano".parse::<MapPreset>().is_err());
    }
}
