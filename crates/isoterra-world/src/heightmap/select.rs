//! Which chunks at which level of detail: distance rings, the 2:1 rule,
//! streaming with a move threshold and unload hysteresis, and a frustum test.

use std::collections::{BTreeMap, BTreeSet};

use super::params::HeightmapParams;
use crate::WorldError;

/// A point the terrain is streamed around (a camera or a player).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct Viewer {
    /// World position `[x, y, z]` (finite). Only x and z choose chunks.
    /// Default value: `[0.0, 0.0, 0.0]`.
    pub position: [f32; 3],
    /// Chunks whose square comes within this horizontal distance are
    /// selected; finite, > 0, at most 256 chunks. Default value: `512.0`.
    pub view_distance: f32,
}

impl Viewer {
    /// The defaults.
    pub const DEFAULT: Self = Viewer {
        position: [0.0; 3],
        view_distance: 512.0,
    };

    /// A viewer at `position` with the given view distance.
    pub const fn new(position: [f32; 3], view_distance: f32) -> Self {
        Viewer {
            position,
            view_distance,
        }
    }

    /// Sets [`position`](Self::position).
    pub const fn with_position(mut self, position: [f32; 3]) -> Self {
        self.position = position;
        self
    }

    /// Sets [`view_distance`](Self::view_distance).
    pub const fn with_view_distance(mut self, view_distance: f32) -> Self {
        self.view_distance = view_distance;
        self
    }
}

impl Default for Viewer {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Horizontal distance from `(x, z)` to the square of chunk `c`.
pub(crate) fn chunk_distance(params: &HeightmapParams, c: [i32; 2], x: f32, z: f32) -> f32 {
    let size = f64::from(params.chunk_world_size());
    let axis = |ci: i32, p: f32| {
        let lo = f64::from(ci) * size;
        let hi = lo + size;
        let p = f64::from(p);
        if p < lo {
            lo - p
        } else if p > hi {
            p - hi
        } else {
            0.0
        }
    };
    let dx = axis(c[0], x);
    let dz = axis(c[1], z);
    (dx * dx + dz * dz).sqrt() as f32
}

fn check_viewers(params: &HeightmapParams, viewers: &[Viewer]) -> Result<(), WorldError> {
    params.validate()?;
    for v in viewers {
        if !v.position.iter().all(|p| p.is_finite()) {
            return Err(WorldError::param(
                "viewer position",
                format!("{:?}", v.position),
                "must be finite",
            ));
        }
        let node =
            f64::from(v.position[0].abs().max(v.position[2].abs())) / f64::from(params.cell_size);
        if node > (super::params::MAX_NODE_COORD / 2) as f64 {
            return Err(WorldError::param(
                "viewer position",
                format!("{:?}", v.position),
                "is too far from the origin (at most 2^29 nodes)",
            ));
        }
        params.check_view_distance(v.view_distance)?;
        params.check_view_distance(v.view_distance + params.unload_hysteresis)?;
    }
    Ok(())
}

/// The chunks within `reach(viewer)` of some viewer that `keep` accepts,
/// with the finest ring LOD any viewer gives them.
fn ring_lods(
    params: &HeightmapParams,
    viewers: &[Viewer],
    reach: impl Fn(&Viewer) -> f32,
    keep: impl Fn([i32; 2], f32, &Viewer) -> bool,
) -> BTreeMap<[i32; 2], u8> {
    let size = f64::from(params.chunk_world_size());
    let mut out: BTreeMap<[i32; 2], u8> = BTreeMap::new();
    for v in viewers {
        let r = f64::from(reach(v));
        let [x, _, z] = v.position;
        let lo = |p: f32| ((f64::from(p) - r) / size).floor() as i32;
        let hi = |p: f32| ((f64::from(p) + r) / size).floor() as i32;
        for cz in lo(z)..=hi(z) {
            for cx in lo(x)..=hi(x) {
                let c = [cx, cz];
                let d = chunk_distance(params, c, x, z);
                if !keep(c, d, v) {
                    continue;
                }
                out.entry(c).or_insert(u8::MAX);
            }
        }
    }
    // The finest ring any viewer gives a selected chunk, even a viewer that
    // would not select it on its own.
    for (c, lod) in out.iter_mut() {
        for v in viewers {
            let d = chunk_distance(params, *c, v.position[0], v.position[2]);
            *lod = (*lod).min(params.ring_lod(d));
        }
    }
    out
}

/// Lowers LODs until every pair of edge neighbours differs by at most one.
/// Only ever refines, so it terminates; the result is independent of the
/// order chunks are visited in (it is the largest assignment below the input
/// that obeys the rule).
fn enforce_two_to_one(map: &mut BTreeMap<[i32; 2], u8>) {
    let mut work: BTreeSet<[i32; 2]> = map.keys().copied().collect();
    while let Some(c) = work.pop_first() {
        let lod = map[&c];
        for d in [[-1, 0], [1, 0], [0, -1], [0, 1]] {
            let n = [c[0].wrapping_add(d[0]), c[1].wrapping_add(d[1])];
            if let Some(nl) = map.get_mut(&n)
                && *nl > lod + 1
            {
                *nl = lod + 1;
                work.insert(n);
            }
        }
    }
}

/// Selects the chunks around `viewers` and their LODs, sorted by
/// `[cx, cz]` (lexicographic).
///
/// A chunk is selected when its square comes within a viewer's
/// [`view_distance`](Viewer::view_distance); its LOD is the finest ring LOD
/// any viewer (selecting it or not) gives it (see [`HeightmapParams`]); then LODs are lowered until
/// edge neighbours differ by at most one level (the 2:1 rule the mesher's
/// stitching needs).
///
/// # Errors
///
/// Invalid parameters, a non-finite or far-away viewer position, or a view
/// distance that is not finite and positive or covers more than 256 chunks.
pub fn select_chunks(
    params: &HeightmapParams,
    viewers: &[Viewer],
) -> Result<Vec<([i32; 2], u8)>, WorldError> {
    check_viewers(params, viewers)?;
    let mut map = ring_lods(
        params,
        viewers,
        |v| v.view_distance,
        |_, d, v| d <= v.view_distance,
    );
    enforce_two_to_one(&mut map);
    Ok(map.into_iter().collect())
}

/// The neighbour LODs to pass to the mesher for every chunk of a selection
/// (−x, +x, −z, +z): the neighbour's LOD when it is exactly one coarser, the
/// chunk's own LOD otherwise (finer or missing neighbours).
pub fn neighbour_lods(selection: &[([i32; 2], u8)]) -> Vec<[u8; 4]> {
    let map: BTreeMap<[i32; 2], u8> = selection.iter().copied().collect();
    selection
        .iter()
        .map(|&(c, lod)| {
            let mut out = [lod; 4];
            for (k, d) in [[-1, 0], [1, 0], [0, -1], [0, 1]].into_iter().enumerate() {
                let n = [c[0].wrapping_add(d[0]), c[1].wrapping_add(d[1])];
                if map.get(&n) == Some(&(lod + 1)) {
                    out[k] = lod + 1;
                }
            }
            out
        })
        .collect()
}

/// What changed between two selections of a [`ChunkStreamer`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamUpdate {
    /// Chunks that were not loaded and now are, with their LOD.
    pub load: Vec<([i32; 2], u8)>,
    /// Loaded chunks whose LOD changed (new LOD).
    pub relod: Vec<([i32; 2], u8)>,
    /// Chunks to drop.
    pub unload: Vec<[i32; 2]>,
}

impl StreamUpdate {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.load.is_empty() && self.relod.is_empty() && self.unload.is_empty()
    }
}

/// Keeps the set of loaded chunks around moving viewers.
///
/// [`update`](Self::update) selects again only when some viewer moved more
/// than [`move_threshold`](HeightmapParams::move_threshold) since the last
/// selection (or the parameters, the number of viewers or a view distance
/// changed). A new chunk loads when it
/// comes within the view distance; a loaded chunk unloads only beyond
/// `view_distance + unload_hysteresis`, so a viewer pacing on a chunk border
/// does not make chunks flicker. Loaded chunks in the hysteresis band take
/// part in the 2:1 rule like the others.
#[derive(Debug, Clone, Default)]
pub struct ChunkStreamer {
    params: Option<HeightmapParams>,
    last: Vec<Viewer>,
    loaded: BTreeMap<[i32; 2], u8>,
}

impl ChunkStreamer {
    /// A streamer with nothing loaded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The loaded chunks and their LODs, sorted.
    pub fn loaded(&self) -> Vec<([i32; 2], u8)> {
        self.loaded.iter().map(|(c, l)| (*c, *l)).collect()
    }

    /// The LOD of a loaded chunk.
    pub fn lod(&self, chunk: [i32; 2]) -> Option<u8> {
        self.loaded.get(&chunk).copied()
    }

    /// Selects again if needed and returns the difference.
    ///
    /// # Errors
    ///
    /// As [`select_chunks`]; the streamer is unchanged then.
    pub fn update(
        &mut self,
        params: &HeightmapParams,
        viewers: &[Viewer],
    ) -> Result<StreamUpdate, WorldError> {
        check_viewers(params, viewers)?;
        let same_params = self.params.as_ref() == Some(params);
        let moved = !same_params
            || self.last.len() != viewers.len()
            || self.last.iter().zip(viewers).any(|(last, v)| {
                let p = &last.position;
                if last.view_distance.to_bits() != v.view_distance.to_bits() {
                    return true;
                }
                let dx = f64::from(p[0]) - f64::from(v.position[0]);
                let dy = f64::from(p[1]) - f64::from(v.position[1]);
                let dz = f64::from(p[2]) - f64::from(v.position[2]);
                (dx * dx + dy * dy + dz * dz).sqrt() > f64::from(params.move_threshold)
            });
        if !moved {
            return Ok(StreamUpdate::default());
        }
        let loaded = &self.loaded;
        let mut map = ring_lods(
            params,
            viewers,
            |v| v.view_distance + params.unload_hysteresis,
            |c, d, v| {
                d <= v.view_distance
                    || (loaded.contains_key(&c) && d <= v.view_distance + params.unload_hysteresis)
            },
        );
        enforce_two_to_one(&mut map);
        let mut update = StreamUpdate::default();
        for (&c, &lod) in &map {
            match self.loaded.get(&c) {
                None => update.load.push((c, lod)),
                Some(&old) if old != lod => update.relod.push((c, lod)),
                _ => {}
            }
        }
        update.unload = self
            .loaded
            .keys()
            .filter(|c| !map.contains_key(*c))
            .copied()
            .collect();
        self.loaded = map;
        self.last = viewers.to_vec();
        self.params = Some(*params);
        Ok(update)
    }
}

/// A view frustum as six planes, for culling chunk boxes.
///
/// Built from a view-projection matrix given as 16 floats in column-major
/// order (as glTF, WebGL and most math libraries store it: element `(row r,
/// column c)` is `m[c * 4 + r]`), mapping world points to clip space. The
/// clip convention is OpenGL's: a point is visible when `-w <= x, y, z <= w`.
/// A matrix built for a `[0, w]` depth range (Direct3D, Vulkan, wgpu) also
/// works: its near plane is then tested as `z >= -w`, which only keeps a few
/// boxes just behind the near plane (the test stays conservative).
///
/// The test is conservative: a box is reported outside only when it lies
/// entirely on the outer side of one plane; a box that is outside but
/// straddles several planes near a corner may be kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frustum {
    planes: [[f64; 4]; 6],
}

impl Frustum {
    /// The frustum of a column-major view-projection matrix.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] when an element is not finite.
    pub fn from_view_projection(m: &[f32; 16]) -> Result<Self, WorldError> {
        if !m.iter().all(|v| v.is_finite()) {
            return Err(WorldError::param(
                "view_projection",
                format!("{m:?}"),
                "every element must be finite",
            ));
        }
        let row = |r: usize| -> [f64; 4] { std::array::from_fn(|c| f64::from(m[c * 4 + r])) };
        let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
        let add = |a: [f64; 4], b: [f64; 4]| -> [f64; 4] { std::array::from_fn(|i| a[i] + b[i]) };
        let sub = |a: [f64; 4], b: [f64; 4]| -> [f64; 4] { std::array::from_fn(|i| a[i] - b[i]) };
        Ok(Frustum {
            planes: [
                add(r3, r0),
                sub(r3, r0),
                add(r3, r1),
                sub(r3, r1),
                add(r3, r2),
                sub(r3, r2),
            ],
        })
    }

    /// True unless the box `[min, max]` lies entirely outside one plane.
    pub fn intersects_aabb(&self, min: [f32; 3], max: [f32; 3]) -> bool {
        self.planes.iter().all(|p| {
            // The box corner farthest along the plane normal.
            let v: [f64; 3] = std::array::from_fn(|i| {
                if p[i] >= 0.0 {
                    f64::from(max[i])
                } else {
                    f64::from(min[i])
                }
            });
            p[0] * v[0] + p[1] * v[1] + p[2] * v[2] + p[3] >= 0.0
        })
    }

    /// True when the point is inside or on the frustum.
    pub fn contains_point(&self, p: [f32; 3]) -> bool {
        self.intersects_aabb(p, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_to_one_lowers_the_coarse_side() {
        let mut m = BTreeMap::new();
        m.insert([0, 0], 0u8);
        m.insert([1, 0], 3);
        m.insert([2, 0], 3);
        enforce_two_to_one(&mut m);
        assert_eq!(m[&[1, 0]], 1);
        assert_eq!(m[&[2, 0]], 2);
    }

    #[test]
    fn neighbour_lods_only_report_one_coarser() {
        let sel = vec![([0, 0], 1u8), ([1, 0], 2), ([-1, 0], 0), ([0, 1], 1)];
        let n = neighbour_lods(&sel);
        assert_eq!(n[0], [1, 2, 1, 1]);
    }
}
