//! Voxel streaming: per client, a LOD selection of chunks around its camera
//! (fine near it, coarser farther away, with the 2:1 rule so that transition
//! cells close every seam), what the client holds, and the order in which
//! missing or stale chunks are sent (nearest first, in front of the camera
//! before behind it).
//!
//! A chunk at LOD `k` covers `2^k` world (LOD 0) chunks per axis. Its frames
//! are keyed by the coordinate of the first world chunk it covers, so a frame
//! replaces whatever the client holds at that coordinate, whatever its LOD;
//! the other coordinates a coarser chunk now covers are unloaded once it has
//! been sent.

use std::collections::{HashMap, VecDeque};

use axum::body::Bytes;
use isoterra_mesh::CubesOutput;
use isoterra_world::{
    VoxelLodChunk, VoxelLodMesher, VoxelLodParams, VoxelWorld, select_voxel_lods,
    voxel_lod_transitions,
};

/// Most world chunks the region reaches from the camera's chunk, sideways.
pub(crate) const MAX_RADIUS_XZ: i32 = 48;
/// … and vertically.
pub(crate) const MAX_RADIUS_Y: i32 = 12;
/// Coarsest LOD streamed.
pub(crate) const MAX_LOD: u8 = 4;
/// The LOD split distance, in chunks of the world: a chunk at LOD `k` is
/// split while the camera is closer than `LOD_DISTANCE_CHUNKS * N * 2^k` to it.
pub(crate) const LOD_DISTANCE_CHUNKS: f32 = 1.0;

/// How a chunk is meshed: its LOD and the faces and edges it shares with a
/// finer neighbour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub lod: u8,
    pub faces: u8,
    pub edges: u16,
}

/// The key of a mesh frame: the chunk's first world chunk, and its shape.
pub(crate) type FrameId = ([i32; 3], Shape);

/// The frame coordinate of a LOD chunk: its first world chunk.
pub(crate) fn frame_key(c: &VoxelLodChunk) -> [i32; 3] {
    c.first_world_chunk()
        .map(|v| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
}

/// The LOD chunk of a frame coordinate and LOD.
pub(crate) fn lod_chunk(key: [i32; 3], lod: u8) -> VoxelLodChunk {
    VoxelLodChunk::new(key.map(|v| v >> lod), lod)
}

/// What the client was sent for one coordinate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    shape: Shape,
    /// False once an edit changed what the chunk reads.
    fresh: bool,
}

/// The streaming state of one client.
#[derive(Debug, Default)]
pub(crate) struct VoxelStream {
    /// Camera position, unit forward (zero when unknown) and view distance.
    camera: Option<([f32; 3], [f32; 3], f32)>,
    reselect: bool,
    want: HashMap<[i32; 3], Shape>,
    held: HashMap<[i32; 3], Held>,
    queue: VecDeque<[i32; 3]>,
    requeue: bool,
    /// Held coordinates no longer wanted, kept until the coarser chunk that
    /// covers them has been sent.
    deferred: bool,
}

impl VoxelStream {
    /// A new camera: the selection is made again at the next tick.
    pub fn set_camera(&mut self, position: [f32; 3], forward: Option<[f32; 3]>, distance: f32) {
        let f = forward.unwrap_or([0.0; 3]);
        let len = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
        let f = if len > 1e-6 {
            f.map(|v| v / len)
        } else {
            [0.0; 3]
        };
        self.camera = Some((position, f, distance));
        self.reselect = true;
    }

    /// Whether the stream has something to do.
    pub fn busy(&self) -> bool {
        self.reselect || self.requeue || self.deferred || !self.queue.is_empty()
    }

    /// Coordinates the client holds (frames sent and not unloaded).
    pub fn held_count(&self) -> usize {
        self.held.len()
    }

    /// Whether the client holds the frame `id` (any freshness).
    pub fn holds(&self, id: &FrameId) -> bool {
        self.held.get(&id.0).is_some_and(|h| h.shape == id.1)
    }

    /// Makes the selection again when the camera changed. Returns the
    /// coordinates to unload now.
    pub fn select(&mut self, chunk_cells: u32) -> Vec<[i32; 3]> {
        if !self.reselect {
            return Vec::new();
        }
        self.reselect = false;
        let Some((position, _, distance)) = self.camera else {
            return Vec::new();
        };
        let Some(selection) = selection(position, distance, chunk_cells) else {
            return Vec::new();
        };
        let Ok(flags) = voxel_lod_transitions(&selection) else {
            return Vec::new();
        };
        self.want = selection
            .iter()
            .zip(flags)
            .map(|(c, (faces, edges))| {
                (
                    frame_key(c),
                    Shape {
                        lod: c.lod,
                        faces,
                        edges,
                    },
                )
            })
            .collect();
        self.requeue = true;
        self.unloads()
    }

    /// Marks stale every held chunk that reads a node of the world chunks
    /// `dirty` (an edit changed them).
    pub fn mark_edited(&mut self, dirty: &[[i32; 3]], chunk_cells: u32) {
        for (key, h) in &mut self.held {
            if reads_any(*key, h.shape.lod, dirty, chunk_cells) {
                h.fresh = false;
                self.requeue = true;
            }
        }
    }

    /// The held coordinates no longer wanted whose unload need not wait:
    /// they are forgotten and returned.
    pub fn unloads(&mut self) -> Vec<[i32; 3]> {
        let mut out = Vec::new();
        let mut deferred = false;
        for (key, h) in &self.held {
            if self.want.contains_key(key) {
                continue;
            }
            // A coarser wanted chunk covering it and not sent yet: keep it
            // until that one arrives, so that nothing shows a hole.
            let waits = (h.shape.lod + 1..=MAX_LOD).any(|l| {
                let k = key.map(|v| (v >> l) << l);
                self.want.get(&k).is_some_and(|w| w.lod == l)
                    && self.held.get(&k).map(|x| x.shape.lod) != Some(l)
            });
            if waits {
                deferred = true;
            } else {
                out.push(*key);
            }
        }
        for k in &out {
            self.held.remove(k);
        }
        out.sort_unstable();
        self.deferred = deferred;
        out
    }

    /// The next frame to send, if any: the wanted chunks whose held frame is
    /// missing, of another shape or stale. Edited chunks come first, then the
    /// others by distance from the camera, those in front first.
    pub fn next(&mut self, chunk_cells: u32) -> Option<FrameId> {
        if self.requeue {
            self.requeue = false;
            self.rebuild_queue(chunk_cells);
        }
        while let Some(key) = self.queue.pop_front() {
            if let Some(shape) = self.pending(&key) {
                return Some((key, shape));
            }
        }
        None
    }

    /// Records that frame `id` was sent.
    pub fn sent(&mut self, id: FrameId) {
        self.held.insert(
            id.0,
            Held {
                shape: id.1,
                fresh: true,
            },
        );
    }

    fn pending(&self, key: &[i32; 3]) -> Option<Shape> {
        let shape = *self.want.get(key)?;
        let up_to_date = Held { shape, fresh: true };
        (self.held.get(key) != Some(&up_to_date)).then_some(shape)
    }

    fn rebuild_queue(&mut self, chunk_cells: u32) {
        let (position, forward, _) = self.camera.unwrap_or(([0.0; 3], [0.0; 3], 0.0));
        let mut order: Vec<(u8, f64, [i32; 3])> = self
            .want
            .iter()
            .filter_map(|(key, shape)| {
                self.pending(key)?;
                let edited = self
                    .held
                    .get(key)
                    .is_some_and(|h| h.shape == *shape && !h.fresh);
                let score = priority(position, forward, *key, shape.lod, chunk_cells);
                Some((u8::from(!edited), score, *key))
            })
            .collect();
        order.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        self.queue = order.into_iter().map(|(_, _, k)| k).collect();
    }
}

/// The world box (in world units, one per cell) of the chunk at `key` and `lod`.
pub(crate) fn chunk_box(key: [i32; 3], lod: u8, chunk_cells: u32) -> ([f64; 3], [f64; 3]) {
    let n = f64::from(chunk_cells);
    let span = n * f64::from(1u32 << lod);
    let lo = key.map(|v| f64::from(v) * n);
    (lo, lo.map(|v| v + span))
}

/// Distance from `p` to the box `lo..hi`.
pub(crate) fn box_distance(p: [f32; 3], lo: [f64; 3], hi: [f64; 3]) -> f64 {
    let mut d2 = 0.0;
    for a in 0..3 {
        let v = f64::from(p[a]);
        let d = (lo[a] - v).max(v - hi[a]).max(0.0);
        d2 += d * d;
    }
    d2.sqrt()
}

/// The sending order of a chunk: its distance from the camera, weighted from
/// 1 (straight ahead) to 2 (straight behind).
fn priority(position: [f32; 3], forward: [f32; 3], key: [i32; 3], lod: u8, n: u32) -> f64 {
    let (lo, hi) = chunk_box(key, lod, n);
    let d = box_distance(position, lo, hi);
    if d == 0.0 {
        return 0.0;
    }
    let mut to = [0.0f64; 3];
    let mut len = 0.0;
    for a in 0..3 {
        to[a] = (lo[a] + hi[a]) * 0.5 - f64::from(position[a]);
        len += to[a] * to[a];
    }
    let len = len.sqrt().max(1e-9);
    let cos: f64 = (0..3).map(|a| to[a] / len * f64::from(forward[a])).sum();
    d * (1.0 + 0.5 * (1.0 - cos))
}

/// Whether the chunk at `key` and `lod` reads a node of one of the world
/// chunks `dirty` (those whose own meshes read a changed node, which include
/// the chunks owning the changed nodes). A LOD 0 chunk reads the same nodes
/// as the world chunk it is; a coarser one reads one of its steps beyond its
/// footprint on each side.
pub(crate) fn reads_any(key: [i32; 3], lod: u8, dirty: &[[i32; 3]], n: u32) -> bool {
    let span = 1i64 << lod;
    let grow = if lod == 0 {
        0
    } else {
        (span + i64::from(n) - 1) / i64::from(n)
    };
    dirty.iter().any(|d| {
        (0..3).all(|a| {
            let k = i64::from(key[a]);
            let v = i64::from(d[a]);
            k - grow <= v && v < k + span + grow
        })
    })
}

/// The LOD selection around a camera: the world chunks within the view
/// distance (at most [`MAX_RADIUS_XZ`] sideways and [`MAX_RADIUS_Y`]
/// vertically), the region widened to whole chunks of the coarsest LOD.
pub(crate) fn selection(position: [f32; 3], distance: f32, n: u32) -> Option<Vec<VoxelLodChunk>> {
    let nf = n as f32;
    let r = ((distance / nf).ceil() as i32).clamp(1, MAX_RADIUS_XZ);
    let ry = r.min(MAX_RADIUS_Y);
    let lod = ((r as u32).ilog2() as u8).min(MAX_LOD);
    let centre = position.map(|p| (p / nf).floor() as i32);
    let reach = [r, ry, r];
    let mut lo = [0i32; 3];
    let mut hi = [0i32; 3];
    for a in 0..3 {
        let l = centre[a].saturating_sub(reach[a]);
        let h = centre[a].saturating_add(reach[a]);
        lo[a] = (l >> lod).saturating_mul(1 << lod);
        hi[a] = ((h >> lod).saturating_add(1)).saturating_mul(1 << lod) - 1;
    }
    let params = VoxelLodParams::DEFAULT
        .with_chunk_cells(n)
        .with_max_lod(lod)
        .with_lod_distance(nf * LOD_DISTANCE_CHUNKS);
    select_voxel_lods(&params, &[position], lo, hi).ok()
}

/// Meshes `jobs` over rayon's threads, one mesher of `meshers` per thread,
/// and encodes their frames (in the order of `jobs`). A chunk that cannot be
/// meshed gets an empty frame.
pub(crate) fn mesh_frames(
    world: &VoxelWorld,
    meshers: &mut [VoxelLodMesher],
    jobs: &[FrameId],
) -> Vec<Bytes> {
    use rayon::prelude::*;
    if jobs.is_empty() || meshers.is_empty() {
        return Vec::new();
    }
    let per = jobs.len().div_ceil(meshers.len()).max(1);
    let mut parts: Vec<Vec<Bytes>> = Vec::new();
    meshers
        .par_iter_mut()
        .zip(jobs.par_chunks(per))
        .map(|(mesher, part)| {
            let mut out = CubesOutput::default();
            part.iter()
                .map(|(key, shape)| {
                    let ch = lod_chunk(*key, shape.lod);
                    let ok = mesher
                        .mesh_chunk(world, &ch, shape.faces, shape.edges, &mut out)
                        .is_ok();
                    if !ok {
                        out.reset();
                    }
                    Bytes::from(crate::kinds::voxel_frame(*key, shape.lod, &out))
                })
                .collect()
        })
        .collect_into_vec(&mut parts);
    parts.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_keys_are_the_first_world_chunk() {
        let c = VoxelLodChunk::new([-1, 2, 0], 2);
        assert_eq!(frame_key(&c), [-4, 8, 0]);
        assert_eq!(lod_chunk([-4, 8, 0], 2), c);
    }

    #[test]
    fn selections_are_fine_near_the_camera_and_coarse_far_away() {
        let sel = selection([5.0, 5.0, 5.0], 200.0, 16).expect("selection");
        let near = sel
            .iter()
            .find(|c| {
                let (lo, hi) = chunk_box(frame_key(c), c.lod, 16);
                box_distance([5.0, 5.0, 5.0], lo, hi) == 0.0
            })
            .expect("a chunk holds the camera");
        assert_eq!(near.lod, 0);
        assert!(sel.iter().any(|c| c.lod >= 2));
        // Every world chunk of the region is covered exactly once.
        let mut seen = std::collections::HashSet::new();
        for c in &sel {
            let k = frame_key(c);
            let s = 1 << c.lod;
            for z in 0..s {
                for y in 0..s {
                    for x in 0..s {
                        assert!(seen.insert([k[0] + x, k[1] + y, k[2] + z]));
                    }
                }
            }
        }
    }

    #[test]
    fn queued_chunks_come_nearest_first_and_in_front_first() {
        let mut s = VoxelStream::default();
        s.set_camera([8.0, 8.0, 8.0], Some([1.0, 0.0, 0.0]), 40.0);
        assert!(s.select(16).is_empty());
        let first = s.next(16).expect("a chunk");
        assert_eq!(first.0, [0, 0, 0]);
        let mut order = vec![first];
        while let Some(id) = s.next(16) {
            order.push(id);
        }
        let ahead = order.iter().position(|(k, _)| *k == [1, 0, 0]).unwrap();
        let behind = order.iter().position(|(k, _)| *k == [-1, 0, 0]).unwrap();
        assert!(ahead < behind);
    }

    #[test]
    fn finer_chunks_wait_for_the_coarse_one_that_replaces_them() {
        let mut s = VoxelStream::default();
        s.set_camera([8.0, 8.0, 8.0], None, 40.0);
        s.select(16);
        while let Some(id) = s.next(16) {
            s.sent(id);
        }
        let held: Vec<[i32; 3]> = s.held.keys().copied().collect();
        // Far away: nothing covers the old chunks, all go at once.
        s.set_camera([5000.0, 8.0, 8.0], None, 40.0);
        let mut gone = s.select(16);
        gone.sort_unstable();
        let mut expected = held.clone();
        expected.sort_unstable();
        assert_eq!(gone, expected);
        assert_eq!(s.held_count(), 0);
    }

    #[test]
    fn edits_mark_the_chunks_that_read_them() {
        assert!(reads_any([0, 0, 0], 0, &[[0, 0, 0]], 16));
        assert!(!reads_any([0, 0, 0], 0, &[[1, 0, 0]], 16));
        assert!(reads_any([0, 0, 0], 2, &[[4, 3, 0]], 16));
        assert!(reads_any([0, 0, 0], 2, &[[-1, 0, 0]], 16));
        assert!(!reads_any([0, 0, 0], 2, &[[5, 0, 0]], 16));
        assert!(!reads_any([0, 0, 0], 2, &[[-2, 0, 0]], 16));
    }
}
