//! Viewers, streaming settings and the wanted set of `(chunk, LOD)`: view
//! distances, LOD rings, prefetch along the velocity, unload hysteresis and
//! the 2:1 rule across neighbours (faces; in 3D also edges and corners).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::source::ChunkRequest;
use crate::WorldError;

/// A fast hasher for chunk coordinates (a multiply-rotate mix with a final
/// avalanche), for the maps the selection and the scheduler rebuild on
/// every update. Not resistant to chosen keys, which chunk coordinates
/// around viewers are not.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CoordHasher(u64);

impl CoordHasher {
    #[inline]
    fn mix(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(26) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Hasher for CoordHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(4);
        for w in &mut words {
            self.mix(u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
        }
        for &b in words.remainder() {
            self.mix(u64::from(b));
        }
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }

    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.mix(u64::from(i as u32));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }
}

/// A map keyed by chunk coordinate with [`CoordHasher`].
pub(crate) type CoordMap<V> = HashMap<ChunkCoord, V, BuildHasherDefault<CoordHasher>>;
/// A set of chunk coordinates with [`CoordHasher`].
#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
pub(crate) type CoordSet = HashSet<ChunkCoord, BuildHasherDefault<CoordHasher>>;

/// A chunk coordinate on the streaming grid. Chunk `c` covers the world box
/// `[c * chunk_size, (c + 1) * chunk_size)` on each streamed axis; 2D kinds
/// use `[c0, c1, 0]` (see [`Dim`]).
pub type ChunkCoord = [i32; 3];

/// Which world axes the chunk grid spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Dim {
    /// A 2D grid in the x/y plane (side-view worlds): coordinate
    /// `[cx, cy, 0]`, distances ignore z.
    Xy,
    /// A 2D grid in the x/z ground plane (heightmaps, maps): coordinate
    /// `[cx, cz, 0]`, distances ignore the height y.
    Xz,
    /// A 3D grid (voxel worlds): coordinate `[cx, cy, cz]`.
    #[default]
    Xyz,
}

impl Dim {
    /// The world axes of the coordinate's first entries (2 or 3 of them).
    pub const fn axes(self) -> &'static [usize] {
        match self {
            Dim::Xy => &[0, 1],
            Dim::Xz => &[0, 2],
            Dim::Xyz => &[0, 1, 2],
        }
    }

    /// The face-neighbour offsets on the grid (4 in 2D, 6 in 3D).
    pub const fn face_offsets(self) -> &'static [[i32; 3]] {
        match self {
            Dim::Xy | Dim::Xz => &[[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0]],
            Dim::Xyz => &[
                [-1, 0, 0],
                [1, 0, 0],
                [0, -1, 0],
                [0, 1, 0],
                [0, 0, -1],
                [0, 0, 1],
            ],
        }
    }
}

/// A point chunks are streamed around: a player, a camera, an editor view.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct StreamViewer {
    /// Caller's id for the viewer (not used for selection). Default value: `0`.
    pub id: u64,
    /// World position, finite. Default value: `[0.0, 0.0, 0.0]`.
    pub position: [f32; 3],
    /// Look direction (need not be unit length; zero means none): chunks in
    /// front are built before chunks behind. Finite. Default value:
    /// `[0.0, 0.0, 0.0]`.
    pub forward: [f32; 3],
    /// Velocity in world units per second, finite: the chunks around
    /// `position + velocity * prefetch_seconds` are wanted too (see
    /// [`StreamConfig::prefetch_seconds`]). Default value: `[0.0, 0.0, 0.0]`.
    pub velocity: [f32; 3],
    /// Chunks whose box comes within this distance are wanted; finite and
    /// `> 0`. Default value: `128.0`.
    pub view_distance: f32,
    /// LOD ring radii, ascending, finite and `>= 0`: a chunk at distance `d`
    /// gets the number of radii `<= d` as its LOD (so `[64, 128]` gives LOD 0
    /// closer than 64, LOD 1 up to 128, LOD 2 beyond), capped at
    /// [`StreamConfig::max_lod`]. Empty: every chunk at LOD 0. Default value:
    /// empty.
    pub lod_distances: Vec<f32>,
}

impl StreamViewer {
    /// The defaults.
    pub const DEFAULT: Self = StreamViewer {
        id: 0,
        position: [0.0; 3],
        forward: [0.0; 3],
        velocity: [0.0; 3],
        view_distance: 128.0,
        lod_distances: Vec::new(),
    };

    /// A viewer at `position` seeing `view_distance` far.
    pub const fn new(position: [f32; 3], view_distance: f32) -> Self {
        Self::DEFAULT
            .with_position(position)
            .with_view_distance(view_distance)
    }

    /// Sets [`id`](Self::id).
    pub const fn with_id(mut self, id: u64) -> Self {
        self.id = id;
        self
    }

    /// Sets [`position`](Self::position).
    pub const fn with_position(mut self, position: [f32; 3]) -> Self {
        self.position = position;
        self
    }

    /// Sets [`forward`](Self::forward).
    pub const fn with_forward(mut self, forward: [f32; 3]) -> Self {
        self.forward = forward;
        self
    }

    /// Sets [`velocity`](Self::velocity).
    pub const fn with_velocity(mut self, velocity: [f32; 3]) -> Self {
        self.velocity = velocity;
        self
    }

    /// Sets [`view_distance`](Self::view_distance).
    pub const fn with_view_distance(mut self, view_distance: f32) -> Self {
        self.view_distance = view_distance;
        self
    }

    /// Sets [`lod_distances`](Self::lod_distances).
    pub fn with_lod_distances(mut self, lod_distances: Vec<f32>) -> Self {
        self.lod_distances = lod_distances;
        self
    }

    /// The distance from which this viewer's ring LOD is at least
    /// `max_lod` (infinite when it has fewer rings).
    fn coarsest_from(&self, max_lod: u8) -> f64 {
        match usize::from(max_lod).checked_sub(1) {
            None => 0.0,
            Some(k) => self
                .lod_distances
                .get(k)
                .map_or(f64::INFINITY, |&r| f64::from(r)),
        }
    }

    /// The ring LOD at distance `d` (uncapped).
    fn ring_lod(&self, d: f64) -> u8 {
        let n = self
            .lod_distances
            .iter()
            .take_while(|&&r| f64::from(r) <= d)
            .count();
        n.min(usize::from(u8::MAX)) as u8
    }
}

impl Default for StreamViewer {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How chunks are chosen, built and dropped.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct StreamConfig {
    /// The axes of the chunk grid. Default value: [`Dim::Xyz`].
    pub dim: Dim,
    /// World size of one chunk side, finite and `> 0`. Default value: `32.0`
    /// (a 32³ voxel chunk of one unit per cell).
    pub chunk_size: f32,
    /// Coarsest LOD handed to sources, `0..=15`. Default value: `3`.
    pub max_lod: u8,
    /// A loaded chunk is kept until it is farther than `view_distance +
    /// unload_hysteresis` from every viewer, and is only made coarser when
    /// it is that much past its ring; finite and `>= 0`. Default value:
    /// `16.0`.
    pub unload_hysteresis: f32,
    /// Seconds of motion to look ahead: chunks around each viewer's
    /// `position + velocity * prefetch_seconds` are wanted as well; finite
    /// and `>= 0` (`0` turns prefetch off). Default value: `0.5`.
    pub prefetch_seconds: f32,
    /// Most build jobs queued or running at once (the pool's backlog);
    /// `>= 1`. Default value: `16`.
    pub max_in_flight: usize,
    /// Worker threads of the scheduler's own pool (`0`: one per core).
    /// Ignored when a pool is passed in. Default value: `0`.
    pub threads: usize,
    /// Optional inclusive chunk bounds `(min, max)`: chunks outside are never
    /// wanted (a finite world). Default value: `None`.
    pub bounds: Option<(ChunkCoord, ChunkCoord)>,
}

impl StreamConfig {
    /// Largest view distance in chunks on a 2D grid (including hysteresis).
    pub const MAX_RADIUS_2D: f32 = 256.0;
    /// Largest view distance in chunks on a 3D grid (including hysteresis).
    pub const MAX_RADIUS_3D: f32 = 32.0;
    /// Largest [`max_lod`](Self::max_lod).
    pub const MAX_LOD: u8 = 15;

    /// The defaults.
    pub const DEFAULT: Self = StreamConfig {
        dim: Dim::Xyz,
        chunk_size: 32.0,
        max_lod: 3,
        unload_hysteresis: 16.0,
        prefetch_seconds: 0.5,
        max_in_flight: 16,
        threads: 0,
        bounds: None,
    };

    /// Sets [`dim`](Self::dim).
    pub const fn with_dim(mut self, dim: Dim) -> Self {
        self.dim = dim;
        self
    }

    /// Sets [`chunk_size`](Self::chunk_size).
    pub const fn with_chunk_size(mut self, chunk_size: f32) -> Self {
        self.chunk_size = chunk_size;
        self
    }

    /// Sets [`max_lod`](Self::max_lod).
    pub const fn with_max_lod(mut self, max_lod: u8) -> Self {
        self.max_lod = max_lod;
        self
    }

    /// Sets [`unload_hysteresis`](Self::unload_hysteresis).
    pub const fn with_unload_hysteresis(mut self, unload_hysteresis: f32) -> Self {
        self.unload_hysteresis = unload_hysteresis;
        self
    }

    /// Sets [`prefetch_seconds`](Self::prefetch_seconds).
    pub const fn with_prefetch_seconds(mut self, prefetch_seconds: f32) -> Self {
        self.prefetch_seconds = prefetch_seconds;
        self
    }

    /// Sets [`max_in_flight`](Self::max_in_flight).
    pub const fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Sets [`threads`](Self::threads).
    pub const fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Sets [`bounds`](Self::bounds).
    pub const fn with_bounds(mut self, bounds: Option<(ChunkCoord, ChunkCoord)>) -> Self {
        self.bounds = bounds;
        self
    }

    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] naming the first bad field.
    pub fn validate(&self) -> Result<(), WorldError> {
        if !(self.chunk_size.is_finite() && self.chunk_size > 0.0 && self.chunk_size <= 1.0e9) {
            return Err(WorldError::param(
                "chunk_size",
                self.chunk_size,
                "must be finite, greater than zero and at most 1e9",
            ));
        }
        if self.max_lod > Self::MAX_LOD {
            return Err(WorldError::param(
                "max_lod",
                self.max_lod,
                "must be at most 15",
            ));
        }
        for (name, v) in [
            ("unload_hysteresis", self.unload_hysteresis),
            ("prefetch_seconds", self.prefetch_seconds),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(WorldError::param(
                    name,
                    v,
                    "must be finite and at least zero",
                ));
            }
        }
        if self.max_in_flight == 0 {
            return Err(WorldError::param("max_in_flight", 0, "must be at least 1"));
        }
        if self.threads > 1024 {
            return Err(WorldError::param(
                "threads",
                self.threads,
                "must be at most 1024 (0 picks one per core)",
            ));
        }
        if let Some((lo, hi)) = self.bounds
            && (0..3).any(|a| lo[a] > hi[a])
        {
            return Err(WorldError::param(
                "bounds",
                format!("{lo:?}..={hi:?}"),
                "min must not exceed max on any axis",
            ));
        }
        Ok(())
    }

    /// Checks the viewers against this configuration.
    pub(crate) fn check_viewers(&self, viewers: &[StreamViewer]) -> Result<(), WorldError> {
        self.validate()?;
        let max_radius = match self.dim {
            Dim::Xyz => Self::MAX_RADIUS_3D,
            _ => Self::MAX_RADIUS_2D,
        };
        let far = f64::from(self.chunk_size) * f64::from(1u32 << 29);
        for v in viewers {
            let vectors = [v.position, v.forward, v.velocity];
            if !vectors.iter().flatten().all(|c| c.is_finite()) {
                return Err(WorldError::param(
                    "viewer",
                    format!("{:?}", v.position),
                    "position, forward and velocity must be finite",
                ));
            }
            let ahead = predicted(v, self.prefetch_seconds);
            if v.position
                .iter()
                .map(|&p| f64::from(p))
                .chain(ahead)
                .any(|p| p.abs() >= far)
            {
                return Err(WorldError::param(
                    "viewer position",
                    format!("{:?}", v.position),
                    "is too far from the origin (at most 2^29 chunks, prefetch included)",
                ));
            }
            let reach = (f64::from(v.view_distance) + f64::from(self.unload_hysteresis))
                / f64::from(self.chunk_size);
            if !(v.view_distance.is_finite()
                && v.view_distance > 0.0
                && reach <= f64::from(max_radius))
            {
                return Err(WorldError::param(
                    "view_distance",
                    v.view_distance,
                    "must be finite, greater than zero and, with the unload hysteresis, at most 256 chunks in 2D or 32 chunks in 3D",
                ));
            }
            if v.lod_distances
                .iter()
                .any(|r| !(r.is_finite() && *r >= 0.0))
                || v.lod_distances.windows(2).any(|w| w[0] > w[1])
            {
                return Err(WorldError::param(
                    "lod_distances",
                    format!("{:?}", v.lod_distances),
                    "must be finite, at least zero and ascending",
                ));
            }
        }
        Ok(())
    }

    /// Distance from world point `p` to the box of chunk `c` on the grid's axes.
    #[inline]
    pub(crate) fn distance(&self, c: ChunkCoord, p: [f64; 3]) -> f64 {
        let size = f64::from(self.chunk_size);
        let mut d2 = 0.0;
        for (k, &axis) in self.dim.axes().iter().enumerate() {
            let lo = f64::from(c[k]) * size;
            let hi = lo + size;
            let d = (lo - p[axis]).max(p[axis] - hi).max(0.0);
            d2 += d * d;
        }
        d2.sqrt()
    }

    /// The world centre of chunk `c` (the unused axis of 2D grids at `p`'s value).
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    pub(crate) fn centre(&self, c: ChunkCoord, p: [f64; 3]) -> [f64; 3] {
        let size = f64::from(self.chunk_size);
        let mut out = p;
        for (k, &axis) in self.dim.axes().iter().enumerate() {
            out[axis] = (f64::from(c[k]) + 0.5) * size;
        }
        out
    }

    fn in_bounds(&self, c: ChunkCoord) -> bool {
        match self.bounds {
            None => true,
            Some((lo, hi)) => (0..3).all(|a| lo[a] <= c[a] && c[a] <= hi[a]),
        }
    }

    /// Visits every chunk whose box lies within `r` of one of `points`
    /// (at most [`MAX_POINTS`] of them) with the least `lod(d)` over the
    /// distances `d <= r` from those points, row by row: on each row of
    /// the first axis only the runs of chunks that can be that close are
    /// measured, and each chunk is visited once.
    fn for_chunks_within(
        &self,
        points: &[[f64; 3]],
        r: f64,
        lod: impl Fn(f64) -> u8,
        mut f: impl FnMut(ChunkCoord, u8),
    ) {
        let points = &points[..points.len().min(MAX_POINTS)];
        let Some(first) = points.first() else {
            return;
        };
        let size = f64::from(self.chunk_size);
        let axes = self.dim.axes();
        let mut lo = [0i32; 3];
        let mut hi = [0i32; 3];
        for (k, &axis) in axes.iter().enumerate() {
            let (mut a, mut b) = (first[axis], first[axis]);
            for p in points {
                a = a.min(p[axis]);
                b = b.max(p[axis]);
            }
            lo[k] = ((a - r) / size).floor() as i32;
            hi[k] = ((b + r) / size).floor() as i32;
        }
        // Distance from `p` to chunk column `c` along grid axis `k`.
        let gap = |p: &[f64; 3], k: usize, c: i32| {
            let axis = axes[k];
            let l = f64::from(c) * size;
            (l - p[axis]).max(p[axis] - (l + size)).max(0.0)
        };
        let (x_axis, r2) = (axes[0], r * r);
        // Per point: the run of x, and the squared gaps along y and z.
        let mut runs = [(0i32, -1i32); MAX_POINTS];
        let mut gaps = [(0.0f64, 0.0f64); MAX_POINTS];
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                // Per point, the chunks whose x gap can be within the rest
                // of `r`, one more each side for rounding; each is measured
                // exactly below.
                let (mut x_lo, mut x_hi) = (i32::MAX, i32::MIN);
                for ((run, g), p) in runs.iter_mut().zip(&mut gaps).zip(points) {
                    let dy = gap(p, 1, y);
                    let dz = if axes.len() > 2 { gap(p, 2, z) } else { 0.0 };
                    *g = (dy * dy, dz * dz);
                    let rest = r2 - (dy * dy + dz * dz);
                    *run = if rest < 0.0 {
                        (0, -1)
                    } else {
                        let s = rest.sqrt();
                        let x0 = (((p[x_axis] - s) / size).floor() as i32).saturating_sub(1);
                        let x1 = (((p[x_axis] + s) / size).floor() as i32).saturating_add(1);
                        (x0.max(lo[0]), x1.min(hi[0]))
                    };
                    if run.0 <= run.1 {
                        x_lo = x_lo.min(run.0);
                        x_hi = x_hi.max(run.1);
                    }
                }
                if x_lo > x_hi {
                    continue;
                }
                for x in x_lo..=x_hi {
                    let c = [x, y, z];
                    if self.bounds.is_some() && !self.in_bounds(c) {
                        continue;
                    }
                    let mut best: Option<u8> = None;
                    for ((p, run), g) in points.iter().zip(&runs).zip(&gaps) {
                        if run.0 <= x && x <= run.1 {
                            // As `distance`: the squares summed in axis order.
                            let dx = gap(p, 0, x);
                            let d = (dx * dx + g.0 + g.1).sqrt();
                            if d <= r {
                                let l = lod(d);
                                best = Some(best.map_or(l, |b| b.min(l)));
                            }
                        }
                    }
                    if let Some(l) = best {
                        f(c, l);
                    }
                }
            }
        }
    }
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Most points one viewer streams around (where it is and where it will be).
const MAX_POINTS: usize = 2;

/// The viewer's position after `seconds` of its velocity.
fn predicted(v: &StreamViewer, seconds: f32) -> [f64; 3] {
    std::array::from_fn(|a| {
        f64::from(v.position[a]) + f64::from(v.velocity[a]) * f64::from(seconds)
    })
}

/// The points a viewer wants chunks around: where it is and, when it
/// moves and prefetch is on, where it will be.
pub(crate) fn viewer_points(v: &StreamViewer, cfg: &StreamConfig) -> Vec<[f64; 3]> {
    let now = v.position.map(f64::from);
    let ahead = predicted(v, cfg.prefetch_seconds);
    if ahead == now {
        vec![now]
    } else {
        vec![now, ahead]
    }
}

/// The finest ring LOD any viewer point gives chunk `c`, `slack` world units
/// closer than it is.
fn ring_lod(
    cfg: &StreamConfig,
    points: &[(&StreamViewer, [f64; 3])],
    c: ChunkCoord,
    slack: f64,
) -> u8 {
    let mut lod = cfg.max_lod;
    for (v, p) in points {
        let d = (cfg.distance(c, *p) - slack).max(0.0);
        lod = lod.min(v.ring_lod(d));
    }
    lod
}

/// The edge-neighbour offsets of a 3D grid (chunks sharing one edge only).
const EDGE_OFFSETS: [[i32; 3]; 12] = [
    [0, -1, -1],
    [0, 1, -1],
    [0, -1, 1],
    [0, 1, 1],
    [-1, 0, -1],
    [1, 0, -1],
    [-1, 0, 1],
    [1, 0, 1],
    [-1, -1, 0],
    [1, -1, 0],
    [-1, 1, 0],
    [1, 1, 0],
];

/// The corner-neighbour offsets of a 3D grid.
const CORNER_OFFSETS: [[i32; 3]; 8] = [
    [-1, -1, -1],
    [1, -1, -1],
    [-1, 1, -1],
    [1, 1, -1],
    [-1, -1, 1],
    [1, -1, 1],
    [-1, 1, 1],
    [1, 1, 1],
];

/// The neighbour offsets the 2:1 rule looks at: faces, and in 3D edges and
/// corners too.
pub(crate) fn touching_offsets(dim: Dim) -> impl Iterator<Item = &'static [i32; 3]> {
    let (edges, corners): (&[[i32; 3]], &[[i32; 3]]) = if dim == Dim::Xyz {
        (&EDGE_OFFSETS, &CORNER_OFFSETS)
    } else {
        (&[], &[])
    };
    dim.face_offsets().iter().chain(edges).chain(corners)
}

/// `c + d`, wrapping.
#[inline]
pub(crate) fn offset(c: ChunkCoord, d: &[i32; 3]) -> ChunkCoord {
    [
        c[0].wrapping_add(d[0]),
        c[1].wrapping_add(d[1]),
        c[2].wrapping_add(d[2]),
    ]
}

/// Lowers LODs until face neighbours (and in 3D every two chunks that
/// touch) differ by at most one. Only ever refines, so it ends; the result
/// does not depend on visiting order (it is the largest assignment below
/// the input that keeps the rule). Only chunks at least two levels finer
/// than the coarsest can constrain a neighbour, so only they start the
/// work list.
fn enforce_two_to_one<S: std::hash::BuildHasher>(dim: Dim, map: &mut HashMap<ChunkCoord, u8, S>) {
    let Some(&coarsest) = map.values().max() else {
        return;
    };
    let mut work: Vec<ChunkCoord> = map
        .iter()
        .filter(|&(_, &l)| u16::from(l) + 1 < u16::from(coarsest))
        .map(|(c, _)| *c)
        .collect();
    while let Some(c) = work.pop() {
        let lod = map[&c];
        for d in touching_offsets(dim) {
            let n = offset(c, d);
            if let Some(nl) = map.get_mut(&n)
                && *nl > lod + 1
            {
                *nl = lod + 1;
                work.push(n);
            }
        }
    }
}

/// The chunks to hold: the wanted ones plus the `loaded` chunks (with the
/// LOD they are shown at) still inside the hysteresis band, with LOD
/// hysteresis; `hint` is the number of chunks expected.
///
/// Each chunk's ring LOD is taken while the spheres are swept (a point's
/// rings only matter inside its view distance once they reach `max_lod`
/// there; a point whose rings reach farther is measured against every
/// chunk afterwards), so the result is the finest ring LOD of any point,
/// as [`desired_chunks`] documents.
pub(crate) fn select(
    cfg: &StreamConfig,
    viewers: &[StreamViewer],
    loaded: impl IntoIterator<Item = (ChunkCoord, u8)>,
    hint: usize,
) -> CoordMap<u8> {
    let points: Vec<(&StreamViewer, [f64; 3])> = viewers
        .iter()
        .flat_map(|v| viewer_points(v, cfg).into_iter().map(move |p| (v, p)))
        .collect();
    let max = cfg.max_lod;
    let mut map: CoordMap<u8> = CoordMap::with_capacity_and_hasher(hint, Default::default());
    for v in viewers {
        let at = viewer_points(v, cfg);
        let ring = |d: f64| v.ring_lod(d).min(max);
        cfg.for_chunks_within(&at, f64::from(v.view_distance), ring, |c, lod| {
            map.entry(c)
                .and_modify(|l| *l = (*l).min(lod))
                .or_insert(lod);
        });
    }
    // Points whose rings give finer LODs beyond their view distance.
    for (v, p) in &points {
        if v.coarsest_from(max) > f64::from(v.view_distance) {
            for (c, l) in map.iter_mut() {
                *l = (*l).min(v.ring_lod(cfg.distance(*c, *p)).min(max));
            }
        }
    }
    let hyst = f64::from(cfg.unload_hysteresis);
    for (c, old) in loaded {
        let now = match map.get_mut(&c) {
            Some(l) => l,
            None => {
                let keep = viewers.iter().any(|v| {
                    cfg.distance(c, v.position.map(f64::from)) <= f64::from(v.view_distance) + hyst
                });
                if !keep {
                    continue;
                }
                map.entry(c).or_insert(ring_lod(cfg, &points, c, 0.0))
            }
        };
        // Coarser only once the chunk is `hysteresis` past its ring.
        if *now > old {
            *now = old.max(ring_lod(cfg, &points, c, hyst)).min(*now);
        }
    }
    enforce_two_to_one(cfg.dim, &mut map);
    map
}

/// The chunks the viewers want and their LODs, sorted by coordinate.
///
/// A chunk is wanted when its box comes within a viewer's
/// [`view_distance`](StreamViewer::view_distance) of the viewer's position
/// or, with prefetch on, of its predicted position (see
/// [`StreamConfig::prefetch_seconds`]); chunks outside
/// [`StreamConfig::bounds`] never are. Its LOD is the finest ring LOD that any
/// viewer gives it (see [`StreamViewer::lod_distances`]), capped at
/// [`StreamConfig::max_lod`]; then LODs are lowered until no two face
/// neighbours (in 3D no two chunks that touch by a face, an edge or a
/// corner, so meshes can be stitched with transition cells) differ by more than one level (the 2:1
/// rule). The result
/// depends only on the inputs, not on the order of the viewers.
///
/// ```
/// use isoterra_world::{Dim, StreamConfig, StreamViewer, desired_chunks};
/// let cfg = StreamConfig::DEFAULT.with_dim(Dim::Xz).with_chunk_size(64.0);
/// let viewer = StreamViewer::new([0.0, 10.0, 0.0], 100.0).with_lod_distances(vec![64.0, 128.0]);
/// let wanted = desired_chunks(&[viewer], &cfg)?;
/// assert!(wanted.contains(&([0, 0, 0], 0)));
/// assert!(wanted.iter().all(|(c, _)| c[2] == 0));
/// # Ok::<(), isoterra_world::WorldError>(())
/// ```
///
/// # Errors
///
/// [`WorldError::InvalidParameter`] for a bad configuration (see
/// [`StreamConfig::validate`]), a non-finite or far-away viewer, bad LOD
/// distances, or a view distance beyond
/// [`MAX_RADIUS_2D`](StreamConfig::MAX_RADIUS_2D) /
/// [`MAX_RADIUS_3D`](StreamConfig::MAX_RADIUS_3D) chunks.
pub fn desired_chunks(
    viewers: &[StreamViewer],
    config: &StreamConfig,
) -> Result<Vec<(ChunkCoord, u8)>, WorldError> {
    config.check_viewers(viewers)?;
    let map = select(config, viewers, std::iter::empty(), 0);
    let sorted: BTreeMap<ChunkCoord, u8> = map.into_iter().collect();
    Ok(sorted.into_iter().collect())
}

/// The request for chunk `c` at `lod` with the LODs of its face and edge
/// neighbours in `target`.
pub(crate) fn request_of(dim: Dim, target: &CoordMap<u8>, c: ChunkCoord, lod: u8) -> ChunkRequest {
    let at = |d: [i32; 3]| {
        let n = [
            c[0].wrapping_add(d[0]),
            c[1].wrapping_add(d[1]),
            c[2].wrapping_add(d[2]),
        ];
        target.get(&n).copied()
    };
    let mut faces = [None; 6];
    for (f, d) in dim.face_offsets().iter().enumerate() {
        faces[f] = at(*d);
    }
    let mut edges = [None; 12];
    if dim == Dim::Xyz {
        for (e, slot) in edges.iter_mut().enumerate() {
            let axis = e / 4;
            let (b0, b1) = match axis {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            let mut d = [0; 3];
            d[b0] = if e & 1 == 1 { 1 } else { -1 };
            d[b1] = if e & 2 == 2 { 1 } else { -1 };
            *slot = at(d);
        }
    }
    ChunkRequest::new(c, lod)
        .with_neighbour_lods(faces)
        .with_edge_lods(edges)
}

/// The build request of every chunk of `selection` (a `(chunk, LOD)` set
/// such as [`desired_chunks`](crate::desired_chunks) gives), in its order,
/// with the LODs of each chunk's face and edge neighbours in the selection:
/// what a [`StreamScheduler`](crate::StreamScheduler) hands its source once
/// the chunks have settled. Building each request with a
/// [`ChunkSource`](super::source::ChunkSource) gives the crack-free mixed-LOD
/// set a stream shows, all at once (a mesh export around a point).
pub fn chunk_requests(dim: Dim, selection: &[(ChunkCoord, u8)]) -> Vec<ChunkRequest> {
    let target: CoordMap<u8> = selection.iter().copied().collect();
    selection
        .iter()
        .map(|&(c, lod)| request_of(dim, &target, c, lod))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_count_the_radii_passed() {
        let v = StreamViewer::DEFAULT.with_lod_distances(vec![10.0, 20.0]);
        assert_eq!(v.ring_lod(0.0), 0);
        assert_eq!(v.ring_lod(9.9), 0);
        assert_eq!(v.ring_lod(10.0), 1);
        assert_eq!(v.ring_lod(25.0), 2);
    }

    #[test]
    fn two_to_one_refines_the_coarse_side() {
        let mut m: HashMap<ChunkCoord, u8> = HashMap::new();
        m.insert([0, 0, 0], 0u8);
        m.insert([1, 0, 0], 3);
        m.insert([2, 0, 0], 3);
        enforce_two_to_one(Dim::Xz, &mut m);
        assert_eq!(m[&[1, 0, 0]], 1);
        assert_eq!(m[&[2, 0, 0]], 2);
    }

    #[test]
    fn bad_configs_are_rejected() {
        let c = StreamConfig::DEFAULT;
        assert!(c.validate().is_ok());
        assert!(c.with_chunk_size(0.0).validate().is_err());
        assert!(c.with_chunk_size(f32::NAN).validate().is_err());
        assert!(c.with_max_lod(16).validate().is_err());
        assert!(c.with_max_in_flight(0).validate().is_err());
        assert!(c.with_prefetch_seconds(-1.0).validate().is_err());
        assert!(
            c.with_bounds(Some(([1, 0, 0], [0, 0, 0])))
                .validate()
                .is_err()
        );
    }
}
