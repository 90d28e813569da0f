//! Hydraulic erosion with water droplets.

use crate::noise::hash::{derive, mix64, unit_f32};
use crate::noise::kernel::floor_i32;
use crate::{Field2, FieldError};

/// Parameters of [`hydraulic_erosion`].
///
/// Distances are in cells and heights in height units; the gradient a
/// droplet follows is the height difference per cell.
///
/// ```
/// use isoterra_field::erosion::HydraulicParams;
/// let p = HydraulicParams::DEFAULT.with_passes(2).with_lifetime(20);
/// assert!(p.validate().is_ok());
/// // 2 passes x 2 x (20 + 3 + 2) nodes.
/// assert_eq!(p.margin(), 100);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct HydraulicParams {
    /// Droplets spawned per node and pass, in `(0, 1]` (each node spawns one
    /// with this probability, from a hash of the seed, pass and node).
    /// Default value: `0.25`.
    pub density: f32,
    /// Number of passes, `1..=64`; every pass reads the heights left by the
    /// previous one. Default value: `4`.
    pub passes: u32,
    /// Most steps of one droplet (one cell each), `1..=256`. Default value: `30`.
    pub lifetime: u32,
    /// Radius of the erosion brush in cells, `1..=8`. Default value: `3`.
    pub radius: u32,
    /// How much a droplet keeps its direction, in `[0, 1)`. Default value: `0.05`.
    pub inertia: f32,
    /// Sediment capacity factor, finite and `> 0`. Default value: `4.0`.
    pub capacity: f32,
    /// Lowest capacity (keeps flat areas eroding a little), finite and
    /// `>= 0`. Default value: `0.01`.
    pub min_capacity: f32,
    /// Fraction of excess sediment dropped per step, in `[0, 1]`.
    /// Default value: `0.3`.
    pub deposition: f32,
    /// Fraction of free capacity eroded per step, in `[0, 1]`.
    /// Default value: `0.3`.
    pub erosion: f32,
    /// Fraction of water evaporating per step, in `[0, 1)`. Default value: `0.01`.
    pub evaporation: f32,
    /// Acceleration down slopes, finite and `> 0`. Default value: `4.0`.
    pub gravity: f32,
    /// Starting water, finite and `> 0`. Default value: `1.0`.
    pub initial_water: f32,
    /// Starting speed, finite and `>= 0`. Default value: `1.0`.
    pub initial_speed: f32,
}

impl HydraulicParams {
    /// Most [`passes`](Self::passes).
    pub const MAX_PASSES: u32 = 64;
    /// Most [`lifetime`](Self::lifetime) steps.
    pub const MAX_LIFETIME: u32 = 256;
    /// Largest [`radius`](Self::radius) in cells.
    pub const MAX_RADIUS: u32 = 8;

    /// The defaults (see the field docs).
    pub const DEFAULT: Self = HydraulicParams {
        density: 0.25,
        passes: 4,
        lifetime: 30,
        radius: 3,
        inertia: 0.05,
        capacity: 4.0,
        min_capacity: 0.01,
        deposition: 0.3,
        erosion: 0.3,
        evaporation: 0.01,
        gravity: 4.0,
        initial_water: 1.0,
        initial_speed: 1.0,
    };

    /// Sets [`density`](Self::density).
    pub const fn with_density(mut self, density: f32) -> Self {
        self.density = density;
        self
    }

    /// Sets [`passes`](Self::passes).
    pub const fn with_passes(mut self, passes: u32) -> Self {
        self.passes = passes;
        self
    }

    /// Sets [`lifetime`](Self::lifetime).
    pub const fn with_lifetime(mut self, lifetime: u32) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// Sets [`radius`](Self::radius).
    pub const fn with_radius(mut self, radius: u32) -> Self {
        self.radius = radius;
        self
    }

    /// Sets [`inertia`](Self::inertia).
    pub const fn with_inertia(mut self, inertia: f32) -> Self {
        self.inertia = inertia;
        self
    }

    /// Sets [`capacity`](Self::capacity).
    pub const fn with_capacity(mut self, capacity: f32) -> Self {
        self.capacity = capacity;
        self
    }

    /// Sets [`deposition`](Self::deposition).
    pub const fn with_deposition(mut self, deposition: f32) -> Self {
        self.deposition = deposition;
        self
    }

    /// Sets [`erosion`](Self::erosion).
    pub const fn with_erosion(mut self, erosion: f32) -> Self {
        self.erosion = erosion;
        self
    }

    /// Sets [`evaporation`](Self::evaporation).
    pub const fn with_evaporation(mut self, evaporation: f32) -> Self {
        self.evaporation = evaporation;
        self
    }

    /// Sets [`gravity`](Self::gravity).
    pub const fn with_gravity(mut self, gravity: f32) -> Self {
        self.gravity = gravity;
        self
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), FieldError> {
        let unit = |name: &'static str, v: f32, open_top: bool| {
            let ok = v >= 0.0 && if open_top { v < 1.0 } else { v <= 1.0 };
            if ok {
                Ok(())
            } else {
                Err(FieldError::param(
                    name,
                    v,
                    if open_top {
                        "must be at least 0 and below 1"
                    } else {
                        "must be between 0 and 1"
                    },
                ))
            }
        };
        if !(self.density > 0.0 && self.density <= 1.0) {
            return Err(FieldError::param(
                "density",
                self.density,
                "must be greater than 0 and at most 1 (droplets per node and pass)",
            ));
        }
        let counts = [
            ("passes", self.passes, Self::MAX_PASSES),
            ("lifetime", self.lifetime, Self::MAX_LIFETIME),
            ("radius", self.radius, Self::MAX_RADIUS),
        ];
        for (name, v, max) in counts {
            if v == 0 || v > max {
                return Err(FieldError::param(
                    name,
                    v,
                    "out of range; see HydraulicParams docs",
                ));
            }
        }
        unit("inertia", self.inertia, true)?;
        unit("deposition", self.deposition, false)?;
        unit("erosion", self.erosion, false)?;
        unit("evaporation", self.evaporation, true)?;
        let positive = [
            ("capacity", self.capacity),
            ("gravity", self.gravity),
            ("initial_water", self.initial_water),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0 && v <= 1.0e6) {
                return Err(FieldError::param(
                    name,
                    v,
                    "must be finite, above 0 and at most 1e6",
                ));
            }
        }
        let non_negative = [
            ("min_capacity", self.min_capacity),
            ("initial_speed", self.initial_speed),
        ];
        for (name, v) in non_negative {
            if !(v.is_finite() && (0.0..=1.0e6).contains(&v)) {
                return Err(FieldError::param(
                    name,
                    v,
                    "must be finite, at least 0 and at most 1e6",
                ));
            }
        }
        Ok(())
    }

    /// How far (Chebyshev distance, in nodes) from a node the input heights
    /// that decide its eroded value can lie: `2 * passes * (lifetime + radius + 2)`.
    /// Erode a tile grown by this margin and keep the tile (see the
    /// [tiling rule](crate::erosion)).
    /// Saturates instead of overflowing for out-of-range parameters.
    pub const fn margin(&self) -> u32 {
        self.passes.saturating_mul(2).saturating_mul(self.reach())
    }

    /// Chebyshev distance from its spawn node within which one droplet reads
    /// and writes.
    const fn reach(&self) -> u32 {
        self.lifetime.saturating_add(self.radius).saturating_add(2)
    }
}

impl Default for HydraulicParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What one [`hydraulic_erosion`] call did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct ErosionStats {
    /// Droplets simulated.
    pub droplets: u64,
    /// Total height removed by erosion.
    pub eroded: f64,
    /// Total height added by deposition.
    pub deposited: f64,
    /// Total height the per-pass limit added (negative: removed) to keep
    /// every node within the range of its neighbourhood. The map's total
    /// height changes by `deposited - eroded + limited`.
    pub limited: f64,
}

/// The erosion brush: node offsets within `radius` and their weights
/// (summing to one), computed once per call.
struct Brush {
    /// `(dx, dy, weight)`, rows of `dy` from the top, `dx` left to right.
    taps: Vec<(i32, i32, f32)>,
    radius: i32,
}

impl Brush {
    fn new(radius: u32) -> Self {
        let r = radius as i32;
        let mut taps = Vec::new();
        let mut total = 0.0f64;
        for dy in -r..=r {
            for dx in -r..=r {
                let d = ((dx * dx + dy * dy) as f64).sqrt();
                if d < r as f64 {
                    let w = r as f64 - d;
                    taps.push((dx, dy, w));
                    total += w;
                }
            }
        }
        Brush {
            taps: taps
                .into_iter()
                .map(|(dx, dy, w)| (dx, dy, (w / total) as f32))
                .collect(),
            radius: r,
        }
    }

    /// Subtracts the brush spread of every node's `carved` amount from
    /// `delta` (both rows of `w` nodes): `delta[n + tap] -= carved[n] * weight`
    /// for every node `n` and tap. Only nodes at least `radius` from every
    /// border carry an amount (see [`apply`]), so every tap lands on the
    /// field. `rows[y]` is false where row `y` of `carved` is all zero.
    ///
    /// The order of the subtractions at a node is fixed by the nodes alone
    /// (source rows top to bottom, then taps in order), so two regions of
    /// one world agree wherever they carve the same amounts.
    #[inline(always)]
    fn spread(&self, carved: &[f32], rows: &[bool], delta: &mut [f32], w: usize) {
        let r = self.radius as usize;
        if w <= 2 * r {
            return;
        }
        for y in (0..rows.len()).filter(|&y| rows[y]) {
            let src = &carved[y * w + r..(y + 1) * w - r];
            for &(dx, dy, wt) in &self.taps {
                let at =
                    ((y as isize + dy as isize) * w as isize + r as isize + dx as isize) as usize;
                let dst = &mut delta[at..at + src.len()];
                for (d, &c) in dst.iter_mut().zip(src) {
                    *d -= c * wt;
                }
            }
        }
    }
}

/// Hydraulic erosion of `field` in place. `world_origin` is the world node
/// coordinate of the field's node `(0, 0)`: droplets are spawned and ordered
/// by world node, so regions of one world eroded separately agree (see the
/// [tiling rule](crate::erosion)).
///
/// Each pass, every node spawns a droplet with probability `density` at a
/// hashed position inside its cell. A droplet follows the bilinear gradient
/// of the heights (keeping `inertia` of its direction), moves one cell per
/// step, picks up sediment up to its capacity
/// `max(-Δh · speed · water · capacity, min_capacity)` with the brush of
/// `radius` cells, drops sediment bilinearly where it is over capacity or
/// climbing, speeds up with `gravity` down slopes and evaporates; it stops
/// after `lifetime` steps, when it leaves the field or stops moving. All
/// droplets of a pass read the heights at the start of the pass; their
/// changes are added at its end, limited so that no node leaves the height
/// range of its 3 x 3 neighbourhood at the start of the pass (no spikes or
/// pits from many droplets acting on the same heights).
///
/// Errors: invalid parameters, or a field smaller than 2 x 2 nodes (the field
/// is not changed).
pub fn hydraulic_erosion(
    field: &mut Field2,
    world_origin: [i64; 2],
    params: &HydraulicParams,
    seed: u64,
) -> Result<ErosionStats, FieldError> {
    params.validate()?;
    let (w, h) = (field.width() as usize, field.height() as usize);
    if w < 2 || h < 2 {
        return Err(FieldError::InvalidSize {
            width: w as u64,
            height: h as u64,
            reason: "hydraulic erosion needs at least 2 x 2 nodes",
        });
    }
    let brush = Brush::new(params.radius);
    let values = field.values_mut();
    let mut snap = values.to_vec();
    let mut changes = Changes {
        delta: vec![0.0f32; values.len()],
        carved: vec![0.0f32; values.len()],
        rows: vec![false; h],
    };
    let mut bounds = RowBounds::new(w);
    let mut stats = ErosionStats::default();
    // Spawn threshold on the top 24 bits of a hash.
    let threshold = (params.density as f64 * (1u64 << 24) as f64) as u64;
    for pass in 0..params.passes {
        snap.copy_from_slice(values);
        changes.delta.iter_mut().for_each(|d| *d = 0.0);
        changes.carved.iter_mut().for_each(|d| *d = 0.0);
        changes.rows.iter_mut().for_each(|d| *d = false);
        let pass = Pass {
            key: derive(seed, 0xE705_0000 + pass as u64),
            threshold,
            world_origin,
            wh: [w, h],
            params,
            brush: &brush,
        };
        pass.run(&snap, &mut changes, &mut stats);
        // Add the pass's changes, limited so that no node leaves the
        // height range of its 3 x 3 neighbourhood in the snapshot: all
        // droplets of a pass see the same heights, so without the limit a
        // thousand of them could fill the same pit a thousand times over.
        stats.limited += limit(&snap, &changes.delta, values, w, &mut bounds);
    }
    Ok(stats)
}

/// The droplets of one pass.
struct Pass<'a> {
    key: u64,
    /// Spawn threshold on the top 24 bits of a node's hash.
    threshold: u64,
    world_origin: [i64; 2],
    wh: [usize; 2],
    params: &'a HydraulicParams,
    brush: &'a Brush,
}

impl Pass<'_> {
    /// Spawns and runs the pass's droplets on `snap` and gathers what they
    /// do in `changes` (spread: ready to add).
    ///
    /// (Builds of this loop for AVX2 and AVX-512 were tried: the eight
    /// lanes in one register gave nothing with AVX-512 and took twice as
    /// long with AVX2, so it stays on the baseline's two registers.)
    fn run(&self, snap: &[f32], changes: &mut Changes, stats: &mut ErosionStats) {
        let [w, h] = self.wh;
        let mut batch = Batch::new(self.params.lifetime as usize);
        for y in 0..h {
            let gy = self.world_origin[1].wrapping_add(y as i64);
            for x in 0..w {
                let gx = self.world_origin[0].wrapping_add(x as i64);
                let hsh = mix64(self.key ^ mix64((gx as u64) ^ (gy as u64).rotate_left(32)));
                if hsh >> 40 >= self.threshold {
                    continue;
                }
                let u = unit_f32(mix64(hsh ^ 1));
                let v = unit_f32(mix64(hsh ^ 2));
                stats.droplets += 1;
                batch.push([x as i32, y as i32], [u, v], self.params);
                if batch.len == BATCH {
                    batch.run(snap, changes, self.wh, self.params, self.brush, stats);
                }
            }
        }
        batch.run(snap, changes, self.wh, self.params, self.brush, stats);
        self.brush
            .spread(&changes.carved, &changes.rows, &mut changes.delta, w);
    }
}

/// What the droplets of a pass do to the heights, gathered before it is
/// added.
struct Changes {
    /// Height added per node: deposits, and erosion clipped by the border.
    delta: Vec<f32>,
    /// Height a droplet took with the whole brush, summed at the brush's
    /// centre node; [`Brush::spread`] moves it into `delta` once per pass
    /// (one addition per step instead of one per tap).
    carved: Vec<f32>,
    /// Per row: whether any node of `carved` is set.
    rows: Vec<bool>,
}

/// One row of the limit's bounds: per column, then per node.
struct RowBounds {
    col_lo: Vec<f32>,
    col_hi: Vec<f32>,
    lo: Vec<f32>,
    hi: Vec<f32>,
}

impl RowBounds {
    fn new(w: usize) -> Self {
        RowBounds {
            col_lo: vec![0.0; w],
            col_hi: vec![0.0; w],
            lo: vec![0.0; w],
            hi: vec![0.0; w],
        }
    }
}

/// Sets `values` (rows of `w` nodes) to `snap + delta`, each node clamped to
/// the lowest and highest height of its 3 x 3 neighbourhood in `snap` (fewer
/// nodes at the borders), and returns the sum of `clamped - unclamped` over
/// the nodes in row-major order. `w >= 2` and at least two rows.
///
/// The bounds are taken a row at a time, columns first (loops that compile
/// to vector minimums and maximums); they are the minimum and maximum of
/// the same nodes as a node-by-node scan finds, and differ from one only in
/// which zero a tie of `+0` and `-0` gives.
fn limit(snap: &[f32], delta: &[f32], values: &mut [f32], w: usize, b: &mut RowBounds) -> f64 {
    let h = snap.len() / w;
    let mut limited = 0.0f64;
    for y in 0..h {
        let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
        let first = &snap[y0 * w..(y0 + 1) * w];
        b.col_lo.copy_from_slice(first);
        b.col_hi.copy_from_slice(first);
        for yy in y0 + 1..=y1 {
            let r = &snap[yy * w..(yy + 1) * w];
            for ((lo, hi), &s) in b.col_lo.iter_mut().zip(b.col_hi.iter_mut()).zip(r) {
                *lo = lo.min(s);
                *hi = hi.max(s);
            }
        }
        spread3(&b.col_lo, &mut b.lo, f32::min);
        spread3(&b.col_hi, &mut b.hi, f32::max);
        let row = y * w..(y + 1) * w;
        let (s_row, d_row) = (&snap[row.clone()], &delta[row.clone()]);
        let out = &mut values[row];
        for (((o, want), &lo), &hi) in out
            .iter_mut()
            .zip(s_row.iter().zip(d_row).map(|(s, d)| s + d))
            .zip(&b.lo)
            .zip(&b.hi)
        {
            *o = want.clamp(lo, hi);
        }
        // In node order, apart from the vector loop above: a sum in f64
        // does not reorder.
        for ((&o, &s), &d) in out.iter().zip(s_row).zip(d_row) {
            limited += (o - (s + d)) as f64;
        }
    }
    limited
}

/// `out[x] = f(f(col[x - 1], col[x]), col[x + 1])` over the columns that
/// exist (two at either end; `col` has at least two).
#[inline(always)]
fn spread3(col: &[f32], out: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    let w = col.len();
    out[0] = f(col[0], col[1]);
    for (o, c) in out[1..w - 1].iter_mut().zip(col.windows(3)) {
        *o = f(f(c[0], c[1]), c[2]);
    }
    out[w - 1] = f(col[w - 2], col[w - 1]);
}

/// Droplets simulated side by side. Droplets of a pass only read the
/// snapshot, so their paths are independent: a batch steps eight of them in
/// lockstep, one phase at a time over arrays of eight (which the compiler
/// turns into vector code), records what each does, then applies the
/// records droplet by droplet in spawn order — the same operations per
/// droplet, and the same additions in the same order, as simulating them one
/// at a time.
const BATCH: usize = 8;

/// What a droplet does to the map in one step.
#[derive(Debug, Clone, Copy, Default)]
struct Event {
    /// Cell corner node index and coordinates.
    ci: usize,
    cx: i32,
    cy: i32,
    fx: f32,
    fy: f32,
    /// Positive: deposit bilinearly; negative: erode with the brush.
    amount: f32,
}

/// Eight droplets, structure of arrays.
struct Batch {
    sx: [i32; BATCH],
    sy: [i32; BATCH],
    rx: [f32; BATCH],
    ry: [f32; BATCH],
    dx: [f32; BATCH],
    dy: [f32; BATCH],
    speed: [f32; BATCH],
    water: [f32; BATCH],
    sediment: [f32; BATCH],
    /// Lane `l`'s steps: `events[l * stride..][..steps[l]]`.
    events: Vec<Event>,
    steps: [usize; BATCH],
    /// Slots per lane: one more than the droplet lifetime.
    stride: usize,
    len: usize,
}

/// The four heights around node `i` (right, up, up-right).
#[inline(always)]
fn corners(h: &[f32], w: usize, i: usize) -> [f32; 4] {
    let q = &h[i..i + w + 2];
    [q[0], q[1], q[w], q[w + 1]]
}

/// Height and gradient from the four corners at `(fx, fy)` in the cell.
#[inline(always)]
fn bilinear(q: [f32; 4], fx: f32, fy: f32) -> (f32, f32, f32) {
    let [h00, h10, h01, h11] = q;
    let gx = (h10 - h00) * (1.0 - fy) + (h11 - h01) * fy;
    let gy = (h01 - h00) * (1.0 - fx) + (h11 - h10) * fx;
    let top = h00 + (h10 - h00) * fx;
    let bottom = h01 + (h11 - h01) * fx;
    (top + (bottom - top) * fy, gx, gy)
}

impl Batch {
    fn new(lifetime: usize) -> Self {
        Batch {
            sx: [0; BATCH],
            sy: [0; BATCH],
            rx: [0.0; BATCH],
            ry: [0.0; BATCH],
            dx: [0.0; BATCH],
            dy: [0.0; BATCH],
            speed: [0.0; BATCH],
            water: [0.0; BATCH],
            sediment: [0.0; BATCH],
            // One more slot per lane than steps: a lane that died keeps
            // writing the slot after its last counted step.
            events: vec![Event::default(); BATCH * (lifetime + 1)],
            steps: [0; BATCH],
            stride: lifetime + 1,
            len: 0,
        }
    }

    #[inline(always)]
    fn push(&mut self, s: [i32; 2], uv: [f32; 2], p: &HydraulicParams) {
        let l = self.len;
        self.sx[l] = s[0];
        self.sy[l] = s[1];
        self.rx[l] = uv[0];
        self.ry[l] = uv[1];
        self.dx[l] = 0.0;
        self.dy[l] = 0.0;
        self.speed[l] = p.initial_speed;
        self.water[l] = p.initial_water;
        self.sediment[l] = 0.0;
        self.steps[l] = 0;
        self.len += 1;
    }

    /// The cell of every lane's position: node index (0 for lanes that
    /// are or become dead), fractions, coordinates; clears `alive` for lanes
    /// whose cell leaves the field.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn cells(
        &self,
        [w, h]: [usize; 2],
        alive: &mut [bool; BATCH],
    ) -> (
        [usize; BATCH],
        [f32; BATCH],
        [f32; BATCH],
        [i32; BATCH],
        [i32; BATCH],
    ) {
        let (wi, hi) = (w as i32, h as i32);
        let mut ci = [0usize; BATCH];
        let (mut fx, mut fy) = ([0.0f32; BATCH], [0.0f32; BATCH]);
        let (mut cx, mut cy) = ([0i32; BATCH], [0i32; BATCH]);
        for l in 0..BATCH {
            // The noise's clamped floor: `floor` of a live droplet's offset
            // (finite, within `lifetime + 1` cells of its spawn node); a
            // dead lane's may be NaN, and what it gives is never read. A
            // plain `v as i32` saturates lane by lane and keeps this loop
            // scalar.
            let (ox, oy) = (floor_i32(self.rx[l]), floor_i32(self.ry[l]));
            let (x, y) = (self.sx[l].wrapping_add(ox), self.sy[l].wrapping_add(oy));
            let inside = x >= 0 && y >= 0 && x < wi - 1 && y < hi - 1;
            alive[l] &= inside;
            cx[l] = if alive[l] { x } else { 0 };
            cy[l] = if alive[l] { y } else { 0 };
            fx[l] = self.rx[l] - ox as f32;
            fy[l] = self.ry[l] - oy as f32;
        }
        for l in 0..BATCH {
            ci[l] = cy[l] as usize * w + cx[l] as usize;
        }
        (ci, fx, fy, cx, cy)
    }

    // Inlined into the pass loop: about 10 % faster than a call per batch.
    #[inline(always)]
    fn run(
        &mut self,
        snap: &[f32],
        changes: &mut Changes,
        wh: [usize; 2],
        p: &HydraulicParams,
        brush: &Brush,
        stats: &mut ErosionStats,
    ) {
        let w = wh[0];
        let mut alive = [false; BATCH];
        alive[..self.len].iter_mut().for_each(|a| *a = true);
        // The cell each lane stands in and its corner heights. A step ends
        // where the next begins, so the cell it moved to is carried over
        // rather than found again (nothing changes a lane's position or
        // `alive` in between).
        let (mut ci, mut fx, mut fy, mut cx, mut cy) = self.cells(wh, &mut alive);
        let mut q: [[f32; 4]; BATCH] = std::array::from_fn(|l| corners(snap, w, ci[l]));
        for _ in 0..p.lifetime {
            if !alive.iter().any(|&a| a) {
                break;
            }
            let mut height = [0.0f32; BATCH];
            for l in 0..BATCH {
                let (hgt, gx, gy) = bilinear(q[l], fx[l], fy[l]);
                height[l] = hgt;
                let dx = self.dx[l] * p.inertia - gx * (1.0 - p.inertia);
                let dy = self.dy[l] * p.inertia - gy * (1.0 - p.inertia);
                let len = (dx * dx + dy * dy).sqrt();
                alive[l] &= !(len.is_nan() || len <= 1e-12);
                self.dx[l] = dx / len;
                self.dy[l] = dy / len;
                self.rx[l] += self.dx[l];
                self.ry[l] += self.dy[l];
            }
            let (ni, nfx, nfy, ncx, ncy) = self.cells(wh, &mut alive);
            let nq: [[f32; 4]; BATCH] = std::array::from_fn(|l| corners(snap, w, ni[l]));
            let mut amount = [0.0f32; BATCH];
            for l in 0..BATCH {
                let (new_height, _, _) = bilinear(nq[l], nfx[l], nfy[l]);
                let dh = new_height - height[l];
                let sed = self.sediment[l];
                let cap = (-dh * self.speed[l] * self.water[l] * p.capacity).max(p.min_capacity);
                // Both outcomes are computed and one is selected: deposit
                // when over capacity or climbing, else erode.
                let deposit = sed > cap || dh > 0.0;
                let dropped = if dh > 0.0 {
                    dh.min(sed)
                } else {
                    (sed - cap) * p.deposition
                };
                let taken = ((cap - sed) * p.erosion).min(-dh);
                amount[l] = if deposit { dropped } else { -taken };
                self.sediment[l] = sed - amount[l];
                // Falling (dh < 0) turns height into speed: v² = v0² - g dh.
                let v2 = self.speed[l] * self.speed[l] - dh * p.gravity;
                self.speed[l] = v2.max(0.0).sqrt();
                self.water[l] *= 1.0 - p.evaporation;
            }
            // Every lane writes its next slot; only a live lane's is
            // counted, so a dead lane's writes are never applied.
            for l in 0..BATCH {
                let slot = l * self.stride + self.steps[l];
                self.events[slot] = Event {
                    ci: ci[l],
                    cx: cx[l],
                    cy: cy[l],
                    fx: fx[l],
                    fy: fy[l],
                    amount: amount[l],
                };
                self.steps[l] += usize::from(alive[l]);
            }
            (ci, fx, fy, cx, cy, q) = (ni, nfx, nfy, ncx, ncy, nq);
        }
        for l in 0..self.len {
            let lane = &self.events[l * self.stride..][..self.steps[l]];
            for e in lane {
                apply(e, changes, wh, brush, stats);
            }
        }
        self.len = 0;
    }
}

/// Applies one recorded step: a deposit to `delta`, an erosion to `carved`
/// (or, where the brush is clipped by the field border, to `delta`).
#[inline(always)]
fn apply(
    e: &Event,
    changes: &mut Changes,
    [w, h]: [usize; 2],
    brush: &Brush,
    stats: &mut ErosionStats,
) {
    let (ci, fx, fy) = (e.ci, e.fx, e.fy);
    let delta = &mut changes.delta;
    if e.amount >= 0.0 {
        let amount = e.amount;
        delta[ci] += amount * (1.0 - fx) * (1.0 - fy);
        delta[ci + 1] += amount * fx * (1.0 - fy);
        delta[ci + w] += amount * (1.0 - fx) * fy;
        delta[ci + w + 1] += amount * fx * fy;
        stats.deposited += amount as f64;
        return;
    }
    let amount = -e.amount;
    let (cx, cy, wi, hi) = (e.cx, e.cy, w as i32, h as i32);
    let r = brush.radius;
    if cx >= r && cy >= r && cx + r < wi && cy + r < hi {
        changes.carved[ci] += amount;
        changes.rows[cy as usize] = true;
    } else {
        // Clipped by the field border: spread over the taps inside,
        // renormalised, so the amount taken is what the droplet gains.
        let on_field = |bx: i32, by: i32| {
            let (x, y) = (cx + bx, cy + by);
            x >= 0 && y >= 0 && x < wi && y < hi
        };
        let mut total = 0.0f32;
        for &(bx, by, wt) in &brush.taps {
            if on_field(bx, by) {
                total += wt;
            }
        }
        for &(bx, by, wt) in &brush.taps {
            if on_field(bx, by) {
                let j = (cy + by) as usize * w + (cx + bx) as usize;
                delta[j] -= amount * (wt / total);
            }
        }
    }
    stats.eroded += amount as f64;
}

/// Erodes the tile of `dims` nodes whose first node is world node `origin`,
/// following the [tiling rule](crate::erosion): it reads
/// `height(world_x, world_y)` for the tile grown by
/// [`HydraulicParams::margin`] on every side, erodes that region, and returns
/// the tile's nodes (row-major). Two tiles eroded this way agree bit for bit
/// on every node they share, and with [`hydraulic_erosion`] of any region that
/// contains the grown tile.
///
/// Errors: invalid parameters, an empty tile, a grown region that is too
/// large for a [`Field2`], or a non-finite height.
pub fn erode_tile(
    params: &HydraulicParams,
    seed: u64,
    origin: [i64; 2],
    dims: [u32; 2],
    height: impl FnMut(i64, i64) -> f32,
) -> Result<Vec<f32>, FieldError> {
    params.validate()?;
    // World node coordinates wrap at the ends of the i64 range, as the
    // spawn hashing does.
    super::grown_tile(origin, dims, params.margin(), height, |region, first| {
        hydraulic_erosion(region, first, params, seed).map(|_| ())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brush_weights_sum_to_one() {
        for r in 1..=8 {
            let b = Brush::new(r);
            let s: f32 = b.taps.iter().map(|t| t.2).sum();
            assert!((s - 1.0).abs() < 1e-5, "{r}: {s}");
            assert!(b.taps.iter().all(|t| t.0.abs() < r as i32 + 1));
        }
    }

    proptest::proptest! {
        /// The row-wise limit gives what a node-by-node scan of each 3 x 3
        /// neighbourhood gives: the same heights (as numbers; a tie of
        /// `+0` and `-0` may pick the other zero) and the same sum.
        #[test]
        fn limit_matches_a_scan_of_each_neighbourhood(
            w in 2usize..12,
            h in 2usize..12,
            seed in proptest::collection::vec(-4i32..5, 144),
            push in proptest::collection::vec(-3i32..4, 144),
        ) {
            let snap: Vec<f32> = (0..w * h).map(|i| seed[i] as f32 * 0.75).collect();
            let delta: Vec<f32> = (0..w * h).map(|i| push[i] as f32 * 1.25).collect();
            let mut got = vec![0.0f32; w * h];
            let limited = limit(&snap, &delta, &mut got, w, &mut RowBounds::new(w));
            let mut want_sum = 0.0f64;
            for y in 0..h {
                for x in 0..w {
                    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                    for yy in y.saturating_sub(1)..=(y + 1).min(h - 1) {
                        for xx in x.saturating_sub(1)..=(x + 1).min(w - 1) {
                            lo = lo.min(snap[yy * w + xx]);
                            hi = hi.max(snap[yy * w + xx]);
                        }
                    }
                    let i = y * w + x;
                    let want = (snap[i] + delta[i]).clamp(lo, hi);
                    proptest::prop_assert_eq!(got[i], want, "node ({}, {})", x, y);
                    want_sum += (want - (snap[i] + delta[i])) as f64;
                }
            }
            proptest::prop_assert_eq!(limited.to_bits(), want_sum.to_bits());
        }
    }

    proptest::proptest! {
        /// Erosion steps inside the field, gathered at their centre nodes
        /// and spread once, take what the taps one at a time take: the same
        /// bits for a lone step, and the same heights to rounding for many
        /// steps; steps clipped by the border go to the taps directly.
        #[test]
        fn spread_steps_match_the_taps_one_at_a_time(
            radius in 1u32..=8,
            w in 17usize..40,
            h in 17usize..22,
            steps in proptest::collection::vec((0usize..1000, 0usize..1000, 1e-6f32..10.0), 1..40),
            start in proptest::collection::vec(-1000i32..1000, 40 * 22),
        ) {
            let brush = Brush::new(radius);
            let r = radius as i32;
            let base: Vec<f32> = (0..w * h).map(|i| start[i] as f32 * 0.37).collect();
            let mut want: Vec<f64> = base.iter().map(|&v| f64::from(v)).collect();
            let mut changes = Changes {
                delta: base.clone(),
                carved: vec![0.0; w * h],
                rows: vec![false; h],
            };
            let mut stats = ErosionStats::default();
            for &(x, y, amount) in &steps {
                let (cx, cy) = ((x % (w - 1)) as i32, (y % (h - 1)) as i32);
                let on = |bx: i32, by: i32| {
                    let (x, y) = (cx + bx, cy + by);
                    x >= 0 && y >= 0 && x < w as i32 && y < h as i32
                };
                let total: f64 = brush.taps.iter().filter(|t| on(t.0, t.1)).map(|t| f64::from(t.2)).sum();
                for &(dx, dy, wt) in brush.taps.iter().filter(|t| on(t.0, t.1)) {
                    let j = (cy + dy) as usize * w + (cx + dx) as usize;
                    want[j] -= f64::from(amount) * f64::from(wt) / total;
                }
                let ci = cy as usize * w + cx as usize;
                let e = Event { ci, cx, cy, fx: 0.5, fy: 0.5, amount: -amount };
                apply(&e, &mut changes, [w, h], &brush, &mut stats);
            }
            brush.spread(&changes.carved, &changes.rows, &mut changes.delta, w);
            let eroded: f64 = steps.iter().map(|s| f64::from(s.2)).sum();
            proptest::prop_assert!((stats.eroded - eroded).abs() <= 1e-9 * eroded.max(1.0));
            for (j, (&got, &want)) in changes.delta.iter().zip(&want).enumerate() {
                let tol = 1e-4 * (1.0 + want.abs() + eroded);
                proptest::prop_assert!((f64::from(got) - want).abs() <= tol, "node {}: {} vs {}", j, got, want);
            }
            // A lone step inside: the very bits of the taps one at a time.
            let (cx, cy) = (r + (steps[0].0 % (w - 2 * radius as usize)) as i32, r + (steps[0].1 % (h - 2 * radius as usize)) as i32);
            let amount = steps[0].2;
            let mut lone = Changes {
                delta: base.clone(),
                carved: vec![0.0; w * h],
                rows: vec![false; h],
            };
            let e = Event { ci: cy as usize * w + cx as usize, cx, cy, fx: 0.5, fy: 0.5, amount: -amount };
            apply(&e, &mut lone, [w, h], &brush, &mut stats);
            proptest::prop_assert!(lone.rows[cy as usize]);
            brush.spread(&lone.carved, &lone.rows, &mut lone.delta, w);
            let mut taps = base;
            for &(dx, dy, wt) in &brush.taps {
                taps[(cy + dy) as usize * w + (cx + dx) as usize] -= amount * wt;
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(bits(&lone.delta), bits(&taps));
        }
    }

    #[test]
    fn bilinear_sample_matches_corners() {
        let h = [0.0, 1.0, 2.0, 4.0];
        let q = corners(&h, 2, 0);
        assert_eq!(bilinear(q, 0.0, 0.0).0, 0.0);
        assert_eq!(bilinear(q, 1.0, 1.0).0, 4.0);
        let (_, gx, gy) = bilinear(q, 0.5, 0.5);
        assert_eq!((gx, gy), (1.5, 2.5));
    }
}
