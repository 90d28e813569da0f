//! What a bake covers and reads: [`BakeSource`] (the world being baked),
//! [`BakeSource::plan`] and [`BakePlan`] (the chunk keys of a region, split
//! into parts), and [`BakeSource::input_box`] / [`BakeInputBox`] (the stored
//! chunks each baked chunk is made from, which its input stamp covers).

use std::ops::Range;

use isoterra_store::{BAKED_TERRAIN, BakedChunk, ChunkKey, ChunkLayer, StoreError};

use super::ChunkBaker;
use crate::{BakeSource, WorldKind};

/// The most chunks one bake plan may hold.
pub const MAX_BAKE_CHUNKS: u64 = 1_000_000;

/// What one kind's world gives a bake, written in the kind's module: the
/// chunks a region covers, the stored chunks each baked chunk reads, and
/// the baked chunk itself.
pub(crate) trait BakeWorld: Sync {
    /// The kind.
    fn kind(&self) -> WorldKind;

    /// The names of a region corner's coordinates (`x, y` side view, `x, z`
    /// seen from above, `x, y, z` in 3D).
    fn axis_names(&self) -> &'static [&'static str];

    /// The coarsest LOD a bake may use.
    fn max_lod(&self) -> u8 {
        0
    }

    /// Layers each baked chunk has (from [`BAKED_TERRAIN`] on).
    fn layers(&self) -> u16 {
        1
    }

    /// The chunk coordinates (inclusive, `[min, max]` per key axis) whose
    /// cells meet the half-open world box `[lo, hi)` at `lod`; `lo` and
    /// `hi` are checked (as many as [`axis_names`](Self::axis_names),
    /// finite, `lo < hi`).
    fn chunk_box(&self, lo: &[f32], hi: &[f32], lod: u8) -> Result<[[i64; 3]; 2], RegionError>;

    /// The storage chunks the bake of `key` reads (`key`'s LOD and layer
    /// checked), on each axis of the key.
    fn input_box(&self, key: &ChunkKey) -> Result<BakeInputBox, StoreError>;

    /// Bakes `key` (its LOD and layer checked).
    fn bake(&self, baker: &mut ChunkBaker, key: &ChunkKey) -> Result<BakedChunk, StoreError>;
}

/// Why a region's axis has no chunks: what [`BakeWorld::chunk_box`]
/// reports, for [`BakeSource::plan`] to name the axis and its range.
#[derive(Debug)]
pub(crate) enum RegionError {
    /// The range on axis `.0` lies outside a bounded world.
    Outside(usize),
    /// The range on axis `.0` lies too far out; `.1` says how far is too far.
    Far(usize, String),
}

/// The error for a key outside a bounded world.
pub(crate) fn outside_world(key: &ChunkKey) -> StoreError {
    StoreError::input(
        "chunk",
        format!("({}, {}, {}) is outside the world", key.x, key.y, key.z),
    )
}

/// A bounded world's chunks on one axis meeting `[lo, hi)`: chunks of
/// `size` world units from `origin`, clipped to `0..count`.
pub(crate) fn bounded_axis(
    a: usize,
    lo: f32,
    hi: f32,
    origin: f64,
    size: f64,
    count: u32,
) -> Result<(i64, i64), RegionError> {
    let (c0, c1) = axis_chunks(lo, hi, origin, size).map_err(|e| RegionError::Far(a, e))?;
    let (c0, c1) = (c0.max(0), c1.min(i64::from(count) - 1));
    if c0 > c1 {
        return Err(RegionError::Outside(a));
    }
    Ok((c0, c1))
}

/// An endless world's chunks on one axis meeting `[lo, hi)`: chunks of
/// `size` world units from 0, no further out than chunk `±limit`
/// (`beyond` says what the limit is).
pub(crate) fn endless_axis(
    a: usize,
    lo: f32,
    hi: f32,
    size: f64,
    limit: i64,
    beyond: impl FnOnce() -> String,
) -> Result<(i64, i64), RegionError> {
    let (c0, c1) = axis_chunks(lo, hi, 0.0, size).map_err(|e| RegionError::Far(a, e))?;
    if c0 < -limit || c1 > limit {
        return Err(RegionError::Far(a, beyond()));
    }
    Ok((c0, c1))
}

/// The chunks a bake covers: a box of chunk coordinates at one LOD.
///
/// Baked chunks use [`ChunkKey`] with layer [`BAKED_TERRAIN`]:
/// - `side2d`: `(cx, cy, 0)`, LOD 0 only;
/// - `heightmap`: `(cx, cz, 0)` (the same chunk at every LOD; coarser LODs
///   have fewer vertices);
/// - `voxel`: `(x, y, z)` in chunks of the LOD, each covering `2^lod` world
///   chunks per axis;
/// - `map`: `(cx, cz, 0)`, LOD 0 only, in two layers: the terrain
///   ([`BAKED_TERRAIN`]) and the water surface ([`BAKED_WATER`](isoterra_store::BAKED_WATER)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BakePlan {
    /// The first layer of the baked rows.
    pub layer: ChunkLayer,
    /// How many layers from [`layer`](Self::layer) on each chunk has (1, or
    /// 2 for maps).
    pub layer_count: u16,
    /// Smallest chunk coordinate on each axis (key `x, y, z`).
    pub min: [i32; 3],
    /// Largest chunk coordinate on each axis, inclusive.
    pub max: [i32; 3],
    /// Level of detail.
    pub lod: u8,
}

impl BakePlan {
    /// Number of keys (chunks times layers).
    pub fn count(&self) -> u64 {
        (0..3)
            .map(|a| (i64::from(self.max[a]) - i64::from(self.min[a]) + 1).max(0) as u64)
            .product::<u64>()
            * u64::from(self.layer_count)
    }

    /// Every key of the plan, in ascending [`ChunkKey`] order (the canonical
    /// order: layer, then `x`, `y`, `z`).
    pub fn keys(&self) -> impl Iterator<Item = ChunkKey> + '_ {
        let (min, max, lod) = (self.min, self.max, self.lod);
        let first = self.layer.0;
        let layers = first..first.saturating_add(self.layer_count);
        layers.flat_map(move |l| {
            let layer = ChunkLayer(l);
            (min[0]..=max[0]).flat_map(move |x| {
                (min[1]..=max[1]).flat_map(move |y| {
                    (min[2]..=max[2]).map(move |z| ChunkKey {
                        layer,
                        x,
                        y,
                        z,
                        lod,
                    })
                })
            })
        })
    }

    /// The positions `[start, end)` in [`keys`](Self::keys) of part `part`
    /// (counted from 0) when the plan is cut into `parts` contiguous ranges
    /// of the canonical key order. Part `i` starts at `floor(i * count /
    /// parts)`, so the parts cover the plan exactly once, in order, and their
    /// sizes differ by at most one chunk; with more parts than keys some
    /// parts are empty. This is how a bake is split across processes or
    /// machines (`docs/scaling.md`): the parts depend only on the plan, so
    /// every worker computes its own range without talking to the others.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] when `parts` is 0 or `part >= parts`.
    pub fn part_range(&self, part: u64, parts: u64) -> Result<Range<u64>, StoreError> {
        if parts == 0 {
            return Err(StoreError::input(
                "part",
                "0 parts: a bake splits into at least 1 part",
            ));
        }
        if part >= parts {
            return Err(StoreError::input(
                "part",
                format!(
                    "part {part} of {parts} does not exist (parts are counted from 0 to {})",
                    parts - 1
                ),
            ));
        }
        let n = u128::from(self.count());
        let at = |i: u64| (n * u128::from(i) / u128::from(parts)) as u64;
        Ok(at(part)..at(part + 1))
    }

    /// The keys of part `part` of `parts` (see
    /// [`part_range`](Self::part_range)), in ascending [`ChunkKey`] order.
    ///
    /// # Errors
    ///
    /// As [`part_range`](Self::part_range).
    pub fn part_keys(
        &self,
        part: u64,
        parts: u64,
    ) -> Result<impl Iterator<Item = ChunkKey> + '_, StoreError> {
        let r = self.part_range(part, parts)?;
        let skip = usize::try_from(r.start).unwrap_or(usize::MAX);
        let take = usize::try_from(r.end - r.start).unwrap_or(usize::MAX);
        Ok(self.keys().skip(skip).take(take))
    }

    /// The key at position `pos` of [`keys`](Self::keys), computed
    /// directly (a queue job names its range by positions), or `None` past
    /// the end.
    pub fn key_at(&self, pos: u64) -> Option<ChunkKey> {
        if pos >= self.count() {
            return None;
        }
        let n = |a: usize| (i64::from(self.max[a]) - i64::from(self.min[a]) + 1) as u64;
        let (nx, ny, nz) = (n(0), n(1), n(2));
        let z = pos % nz;
        let y = pos / nz % ny;
        let x = pos / (nz * ny) % nx;
        let layer = pos / (nz * ny * nx);
        let at = |a: usize, v: u64| (i64::from(self.min[a]) + v as i64) as i32;
        Some(ChunkKey {
            layer: ChunkLayer(self.layer.0 + layer as u16),
            x: at(0, x),
            y: at(1, y),
            z: at(2, z),
            lod: self.lod,
        })
    }

    /// The keys at positions `range` of [`keys`](Self::keys) (clipped to
    /// the plan), in order.
    pub fn keys_in(&self, range: Range<u64>) -> impl Iterator<Item = ChunkKey> + '_ {
        let end = range.end.min(self.count());
        (range.start.min(end)..end).filter_map(|p| self.key_at(p))
    }

    /// True when the plan holds `key`.
    pub fn contains(&self, key: &ChunkKey) -> bool {
        (self.layer.0..self.layer.0.saturating_add(self.layer_count)).contains(&key.layer.0)
            && key.lod == self.lod
            && (0..3).all(|a| {
                let c = [key.x, key.y, key.z][a];
                self.min[a] <= c && c <= self.max[a]
            })
    }
}

/// Chunk range `[first, last]` along one axis for the half-open world range
/// `[lo, hi)` and chunks of `size` world units starting at `origin`.
pub(crate) fn axis_chunks(lo: f32, hi: f32, origin: f64, size: f64) -> Result<(i64, i64), String> {
    let a = ((f64::from(lo) - origin) / size).floor();
    let b = ((f64::from(hi) - origin) / size).ceil() - 1.0;
    let limit = f64::from(i32::MAX);
    if !(a.abs() <= limit && b.abs() <= limit) {
        return Err("lies too far out (chunk coordinates beyond ±2^31)".into());
    }
    Ok((a as i64, (b as i64).max(a as i64)))
}

impl BakeSource<'_> {
    /// The world kind (`"side2d"`, `"heightmap"`, `"voxel"`).
    pub fn kind(&self) -> &'static str {
        self.ops().kind().name()
    }

    /// Number of coordinates of a region corner: 2 (`X, Y` side-view,
    /// `X, Z` heightmap) or 3 (`X, Y, Z` voxel).
    pub fn region_axes(&self) -> usize {
        self.ops().axis_names().len()
    }

    /// The coarsest LOD a bake may use: 0 for side-view worlds and maps,
    /// the world's coarsest level for heightmaps,
    /// [`VoxelLodParams::MAX_LOD`](isoterra_world::VoxelLodParams::MAX_LOD)
    /// for voxels.
    pub fn max_lod(&self) -> u8 {
        self.ops().max_lod()
    }

    /// The chunks whose cells meet the half-open world box `[lo, hi)` at
    /// `lod`. `lo` and `hi` hold [`region_axes`](Self::region_axes)
    /// coordinates each. A side-view world is bounded: the box is clipped to
    /// it.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a wrong number of coordinates, a
    /// coordinate that is NaN or infinite, `lo >= hi` on an axis (empty or
    /// inverted), a box outside a side-view world, a LOD above
    /// [`max_lod`](Self::max_lod), or more than [`MAX_BAKE_CHUNKS`] chunks.
    pub fn plan(&self, lo: &[f32], hi: &[f32], lod: u8) -> Result<BakePlan, StoreError> {
        let axes = self.region_axes();
        let names = self.ops().axis_names();
        if lo.len() != axes || hi.len() != axes {
            return Err(StoreError::input(
                "region",
                format!(
                    "a {} world takes {axes} coordinates per corner ({})",
                    self.kind(),
                    names.join(", ")
                ),
            ));
        }
        for a in 0..axes {
            if !(lo[a].is_finite() && hi[a].is_finite()) {
                return Err(StoreError::input(
                    "region",
                    format!("{} range {}..{} is not finite", names[a], lo[a], hi[a]),
                ));
            }
            if lo[a] >= hi[a] {
                return Err(StoreError::input(
                    "region",
                    format!(
                        "{} range {}..{} is {}: the minimum must be below the maximum",
                        names[a],
                        lo[a],
                        hi[a],
                        if lo[a] == hi[a] { "empty" } else { "inverted" }
                    ),
                ));
            }
        }
        if lod > self.max_lod() {
            return Err(StoreError::input(
                "lod",
                format!(
                    "{lod} is beyond the coarsest level {} of this {} world",
                    self.max_lod(),
                    self.kind()
                ),
            ));
        }
        let [min, max] = self.ops().chunk_box(lo, hi, lod).map_err(|e| match e {
            RegionError::Outside(a) => StoreError::input(
                "region",
                format!(
                    "{} range {}..{} lies outside the world",
                    names[a], lo[a], hi[a]
                ),
            ),
            RegionError::Far(a, e) => StoreError::input("region", format!("{}: {e}", names[a])),
        })?;
        let layers = u64::from(self.ops().layers());
        let count: u64 = (0..3)
            .map(|a| (max[a] - min[a] + 1) as u64)
            .fold(layers, |acc, n| acc.saturating_mul(n));
        if count > MAX_BAKE_CHUNKS {
            return Err(StoreError::input(
                "region",
                format!(
                    "covers {count} chunks; a bake holds at most {MAX_BAKE_CHUNKS} (bake smaller regions one after another)"
                ),
            ));
        }
        Ok(BakePlan {
            layer: BAKED_TERRAIN,
            layer_count: layers as u16,
            min: min.map(|v| v as i32),
            max: max.map(|v| v as i32),
            lod,
        })
    }
}

/// The stored chunks one baked chunk is made from: the field chunks (layer
/// [`ChunkLayer::FIELD`]) whose `x`, `y`, `z` lie in `[min, max]` on every
/// axis (inclusive; `z` is `0..=0` for the 2D kinds). Stored chunks in the
/// box feed the bake; absent ones are whatever the generator gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BakeInputBox {
    /// Smallest storage chunk coordinate on each axis.
    pub min: [i32; 3],
    /// Largest storage chunk coordinate on each axis, inclusive.
    pub max: [i32; 3],
}

impl BakeInputBox {
    /// True when `key` is a field chunk inside the box.
    pub fn contains(&self, key: &ChunkKey) -> bool {
        key.layer == ChunkLayer::FIELD
            && [key.x, key.y, key.z]
                .iter()
                .enumerate()
                .all(|(a, &c)| self.min[a] <= c && c <= self.max[a])
    }

    /// Number of storage chunk coordinates in the box.
    pub fn count(&self) -> u64 {
        (0..3)
            .map(|a| (i64::from(self.max[a]) - i64::from(self.min[a]) + 1).max(0) as u64)
            .product()
    }
}

/// `[floor(lo / n), floor(hi / n)]` as chunk coordinates, for the node range
/// `[lo, hi]` of an unbounded world with chunks of `n` nodes.
pub(crate) fn unbounded_axis(
    lo: i64,
    hi: i64,
    n: i64,
    axis: &str,
) -> Result<(i32, i32), StoreError> {
    let fit = |v: i64| {
        i32::try_from(v.div_euclid(n)).map_err(|_| {
            StoreError::input(
                "chunk",
                format!("its inputs along {axis} lie beyond chunk coordinate ±2^31"),
            )
        })
    };
    Ok((fit(lo)?, fit(hi)?))
}

impl BakeSource<'_> {
    /// Refuses a key whose LOD this kind does not have or whose layer it
    /// does not bake.
    pub(super) fn check_lod_and_layer(&self, key: &ChunkKey) -> Result<(), StoreError> {
        if key.lod > self.max_lod() {
            return Err(StoreError::input(
                "lod",
                format!(
                    "{} is beyond the coarsest level {}",
                    key.lod,
                    self.max_lod()
                ),
            ));
        }
        let layers = self.ops().layers();
        if key.layer.0 >= layers {
            return Err(StoreError::input(
                "layer",
                format!("a {} world bakes layers below {layers}", self.kind()),
            ));
        }
        Ok(())
    }

    /// The storage chunks the bake of `key` reads (its [input
    /// box](BakeInputBox)), from how each kind meshes a chunk:
    ///
    /// - `side2d`: chunk `(cx, cy)` meshes its cells, reading the nodes
    ///   `[c*N, c*N + N]` on each axis: its own storage chunk and the next one
    ///   up on each axis (`[c, c + 1]`, clipped to the world);
    /// - `heightmap` at LOD `k` (`s = 2^k`): the nodes `[c*N - s, c*N + N + s]`
    ///   on each axis (its nodes and a one-sample apron for normals, the
    ///   collider the same), so `[c - 1, c + 1]` and `c + 2` when `s = N`;
    /// - `voxel` at LOD `k`: the base nodes `[c*N*s - s, (c + 1)*N*s + s]` on
    ///   each axis (the chunk's `2^k` world chunks per axis, the nodes one
    ///   sample past its faces for normals, and the first node of the next
    ///   chunk), so `[c*2^k - 1, (c + 1)*2^k]` when `2^k < N`;
    /// - `map` (terrain and water alike): the nodes `[c*N - 1, c*N + N + 1]`,
    ///   clipped to the map (the chunk's cells plus one ring for normals and
    ///   for water spreading from wet neighbours); the last chunk of a row or
    ///   column also owns the final node.
    ///
    /// `N` is the world's `chunk_cells`, storage chunk `c` owns the nodes
    /// `[c*N, c*N + N)` per axis.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a key this world does not bake (as
    /// [`ChunkBaker::bake`](crate::ChunkBaker::bake): outside a bounded world, a LOD the kind does not
    /// have, a layer it does not bake, `z != 0` for a 2D kind) or whose inputs
    /// lie beyond chunk coordinate ±2^31.
    pub fn input_box(&self, key: &ChunkKey) -> Result<BakeInputBox, StoreError> {
        self.check_lod_and_layer(key)?;
        if self.region_axes() == 2 && key.z != 0 {
            return Err(StoreError::input(
                "chunk",
                format!("{} chunks have z = 0", self.kind()),
            ));
        }
        self.ops().input_box(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_key_at_a_position_is_the_key_the_walk_reaches_there(
            min in proptest::array::uniform3(-5i32..5),
            size in proptest::array::uniform3(1i32..5),
            layers in 1u16..3,
            from in 0u64..200,
            len in 0u64..60,
        ) {
            let plan = BakePlan {
                layer: ChunkLayer(0x100),
                layer_count: layers,
                min,
                max: [min[0] + size[0] - 1, min[1] + size[1] - 1, min[2] + size[2] - 1],
                lod: 1,
            };
            let walked: Vec<ChunkKey> = plan.keys().skip(from as usize).take(len as usize).collect();
            let direct: Vec<ChunkKey> = plan.keys_in(from..from + len).collect();
            proptest::prop_assert_eq!(walked, direct);
            proptest::prop_assert_eq!(plan.key_at(plan.count()), None);
        }
    }

    #[test]
    fn axis_chunks_are_half_open() {
        assert_eq!(axis_chunks(0.0, 64.0, 0.0, 32.0), Ok((0, 1)));
        assert_eq!(axis_chunks(0.0, 64.5, 0.0, 32.0), Ok((0, 2)));
        assert_eq!(axis_chunks(-1.0, 1.0, 0.0, 32.0), Ok((-1, 0)));
        assert!(axis_chunks(-1e30, 1.0, 0.0, 1.0).is_err());
    }
}
