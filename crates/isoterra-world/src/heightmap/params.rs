//! Parameters of a heightmap world.

use isoterra_field::HeightParams;
use isoterra_mesh::HeightmapOptions;

use crate::WorldError;

use super::erosion::HeightErosion;
use super::extent::HeightExtent;

/// Largest `|node index|` a heightmap world addresses on either axis (`2^30`).
pub const MAX_NODE_COORD: i64 = 1 << 30;

/// Largest number of chunks a selection may hold around one viewer
/// (view distances are checked against it).
const MAX_VIEW_CHUNKS_RADIUS: f32 = 256.0;

/// Parameters of a [`HeightmapWorld`](crate::HeightmapWorld): the height
/// generator and its seed, the chunk grid, the level-of-detail rings and the
/// streaming distances.
///
/// Global node `(gx, gz)` sits at world `(gx * cell_size, gz * cell_size)`
/// (evaluated in `f64`, rounded once to `f32`), with the height on y.
///
/// Level-of-detail rings: a chunk at horizontal distance `d` from a viewer
/// (from the viewer to the nearest point of the chunk's square) gets LOD `0`
/// when `d < lod_distance`, and LOD `k` when
/// `lod_distance * 2^(k-1) <= d < lod_distance * 2^k`, capped at
/// `lod_count - 1`; a [`StreamViewer`](crate::StreamViewer) gets these rings
/// with `lod_distances` `[lod_distance, 2 * lod_distance, …]` (`lod_count -
/// 1` of them), as [`ring_lod`](Self::ring_lod) counts them.
///
/// The store saves this struct as JSON (with the `serde` feature); a missing
/// field takes its default.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct HeightmapParams {
    /// The height generator. Default value: `HeightParams::DEFAULT` (hills).
    pub generator: HeightParams,
    /// Seed of the generator and of the noise brush. Default value: `0`.
    pub seed: u64,
    /// Cells per chunk side at LOD 0: a power of two from 2 to 4096.
    /// Default value: `64`.
    pub chunk_cells: u32,
    /// World units between two adjacent nodes: finite, greater than zero,
    /// at most `1e6`. Default value: `1.0`.
    pub cell_size: f32,
    /// Number of levels of detail (LOD `0..lod_count`), from 1 to
    /// `log2(chunk_cells) + 1`. Default value: `4`.
    pub lod_count: u8,
    /// Outer radius of the LOD 0 ring in world units (finite, > 0); each
    /// further ring doubles it. Default value: `128.0`.
    pub lod_distance: f32,
    /// Default view distance of a viewer (the editor's camera uses it when
    /// the client names none), in world units: finite, > 0, at most 256
    /// chunks. Default value: `512.0`.
    pub view_distance: f32,
    /// How far (world units) some viewer had to move before the old chunk
    /// streamer selected chunks again; finite, `>= 0`. Nothing in isoterra
    /// reads it now: the [`StreamScheduler`](crate::StreamScheduler) selects
    /// at every update, and its unload hysteresis keeps chunks from
    /// flickering. It stays so that parameters and world files that set it
    /// still load. Default value: `16.0`.
    pub move_threshold: f32,
    /// A streamed chunk stays loaded until it is farther than
    /// `view_distance + unload_hysteresis` from every viewer (the
    /// [`stream_config`](crate::HeightmapSource::stream_config) of the world
    /// passes it on); finite, `>= 0`. Default value: `64.0`.
    pub unload_hysteresis: f32,
    /// Options of the chunk mesher (UV scale, stitching, skirts).
    /// Default value: `HeightmapOptions::DEFAULT`.
    pub mesh: HeightmapOptions,
    /// The imported heightmap this world was made of, if any: its block of
    /// nodes, its height range and what lies outside it (see
    /// [`HeightExtent`]). Default value: `None` (generated everywhere).
    pub extent: Option<HeightExtent>,
    /// The erosion the world's starting ground was made with, if any (see
    /// [`HeightErosion`]: it is run once when the world is created, and
    /// kept here so that its recipe can be printed again; the world itself
    /// does not erode). Left out of the stored JSON when `None`, so worlds
    /// without one store what they always did. Default value: `None`.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub erosion: Option<HeightErosion>,
}

impl HeightmapParams {
    /// The defaults.
    pub const DEFAULT: Self = HeightmapParams {
        generator: HeightParams::DEFAULT,
        seed: 0,
        chunk_cells: 64,
        cell_size: 1.0,
        lod_count: 4,
        lod_distance: 128.0,
        view_distance: 512.0,
        move_threshold: 16.0,
        unload_hysteresis: 64.0,
        mesh: HeightmapOptions::DEFAULT,
        extent: None,
        erosion: None,
    };

    /// Sets [`generator`](Self::generator).
    pub const fn with_generator(mut self, generator: HeightParams) -> Self {
        self.generator = generator;
        self
    }

    /// Sets [`seed`](Self::seed).
    pub const fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets [`chunk_cells`](Self::chunk_cells).
    pub const fn with_chunk_cells(mut self, chunk_cells: u32) -> Self {
        self.chunk_cells = chunk_cells;
        self
    }

    /// Sets [`cell_size`](Self::cell_size).
    pub const fn with_cell_size(mut self, cell_size: f32) -> Self {
        self.cell_size = cell_size;
        self
    }

    /// Sets [`lod_count`](Self::lod_count).
    pub const fn with_lod_count(mut self, lod_count: u8) -> Self {
        self.lod_count = lod_count;
        self
    }

    /// Sets [`lod_distance`](Self::lod_distance).
    pub const fn with_lod_distance(mut self, lod_distance: f32) -> Self {
        self.lod_distance = lod_distance;
        self
    }

    /// Sets [`view_distance`](Self::view_distance).
    pub const fn with_view_distance(mut self, view_distance: f32) -> Self {
        self.view_distance = view_distance;
        self
    }

    /// Sets [`move_threshold`](Self::move_threshold).
    pub const fn with_move_threshold(mut self, move_threshold: f32) -> Self {
        self.move_threshold = move_threshold;
        self
    }

    /// Sets [`unload_hysteresis`](Self::unload_hysteresis).
    pub const fn with_unload_hysteresis(mut self, unload_hysteresis: f32) -> Self {
        self.unload_hysteresis = unload_hysteresis;
        self
    }

    /// Sets [`mesh`](Self::mesh).
    pub const fn with_mesh(mut self, mesh: HeightmapOptions) -> Self {
        self.mesh = mesh;
        self
    }

    /// Sets [`erosion`](Self::erosion).
    pub const fn with_erosion(mut self, erosion: Option<HeightErosion>) -> Self {
        self.erosion = erosion;
        self
    }

    /// Sets [`extent`](Self::extent).
    pub fn with_extent(mut self, extent: Option<HeightExtent>) -> Self {
        self.extent = extent;
        self
    }

    /// The coarsest LOD, `lod_count - 1`.
    pub const fn max_lod(&self) -> u8 {
        self.lod_count.saturating_sub(1)
    }

    /// World size of one chunk side (`chunk_cells * cell_size`).
    pub fn chunk_world_size(&self) -> f32 {
        (f64::from(self.chunk_cells) * f64::from(self.cell_size)) as f32
    }

    /// World coordinate of node index `g` on either axis:
    /// `(g as f64 * cell_size as f64) as f32`.
    pub fn node_coord(&self, g: i64) -> f32 {
        (g as f64 * f64::from(self.cell_size)) as f32
    }

    /// The LOD of the ring at horizontal distance `d` (see the type docs).
    pub fn ring_lod(&self, d: f32) -> u8 {
        let mut lod = 0u8;
        let mut edge = self.lod_distance;
        while lod < self.max_lod() && d >= edge {
            lod += 1;
            edge *= 2.0;
        }
        lod
    }

    /// The ring radii of [`ring_lod`](Self::ring_lod) as a stream viewer
    /// takes them ([`StreamViewer::lod_distances`](crate::StreamViewer::lod_distances)):
    /// `lod_distance * 2^k` for `k` in `0..max_lod`.
    pub fn ring_distances(&self) -> Vec<f32> {
        (0..self.max_lod())
            .map(|k| self.lod_distance * (1u32 << k) as f32)
            .collect()
    }

    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] naming the first bad field, or
    /// [`WorldError::Field`] for bad generator parameters.
    pub fn validate(&self) -> Result<(), WorldError> {
        self.generator.validate()?;
        if !self.chunk_cells.is_power_of_two() || !(2..=4096).contains(&self.chunk_cells) {
            return Err(WorldError::param(
                "chunk_cells",
                self.chunk_cells,
                "must be a power of two from 2 to 4096 (64 is usual)",
            ));
        }
        if !(self.cell_size.is_finite() && self.cell_size > 0.0 && self.cell_size <= 1.0e6) {
            return Err(WorldError::param(
                "cell_size",
                self.cell_size,
                "must be finite, greater than zero and at most 1e6",
            ));
        }
        if self.lod_count == 0 || u32::from(self.lod_count) > self.chunk_cells.trailing_zeros() + 1
        {
            return Err(WorldError::param(
                "lod_count",
                self.lod_count,
                "must be from 1 to log2(chunk_cells) + 1",
            ));
        }
        let positive = [
            ("lod_distance", self.lod_distance),
            ("view_distance", self.view_distance),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(WorldError::param(
                    name,
                    v,
                    "must be finite and greater than zero",
                ));
            }
        }
        let non_negative = [
            ("move_threshold", self.move_threshold),
            ("unload_hysteresis", self.unload_hysteresis),
        ];
        for (name, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(WorldError::param(
                    name,
                    v,
                    "must be finite and at least zero",
                ));
            }
        }
        self.check_view_distance(self.view_distance + self.unload_hysteresis)?;
        if let Some(e) = &self.extent {
            e.validate()?;
        }
        if let Some(e) = &self.erosion {
            e.validate()?;
        }
        Ok(())
    }

    /// Checks that a view distance is finite, positive and covers at most
    /// 256 chunks in each direction.
    pub(crate) fn check_view_distance(&self, d: f32) -> Result<(), WorldError> {
        if !(d.is_finite() && d > 0.0 && d / self.chunk_world_size() <= MAX_VIEW_CHUNKS_RADIUS) {
            return Err(WorldError::param(
                "view_distance",
                d,
                "must be finite, greater than zero and at most 256 chunks (including the unload hysteresis)",
            ));
        }
        Ok(())
    }
}

impl Default for HeightmapParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_rings_double() {
        let p = HeightmapParams::DEFAULT;
        p.validate().unwrap();
        assert_eq!(p.ring_lod(0.0), 0);
        assert_eq!(p.ring_lod(127.9), 0);
        assert_eq!(p.ring_lod(128.0), 1);
        assert_eq!(p.ring_lod(256.0), 2);
        assert_eq!(p.ring_lod(600.0), 3);
        assert_eq!(p.ring_lod(1.0e9), 3);
    }

    #[test]
    fn bad_values_are_rejected() {
        assert!(
            HeightmapParams::DEFAULT
                .with_chunk_cells(48)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_chunk_cells(1)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_cell_size(f32::NAN)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_lod_count(0)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_chunk_cells(8)
                .with_lod_count(5)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_chunk_cells(8)
                .with_lod_count(4)
                .validate()
                .is_ok()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_view_distance(-1.0)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_view_distance(1.0e9)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_move_threshold(f32::INFINITY)
                .validate()
                .is_err()
        );
        assert!(
            HeightmapParams::DEFAULT
                .with_unload_hysteresis(-0.5)
                .validate()
                .is_err()
        );
    }
}
