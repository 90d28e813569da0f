//! The map world: layers, presets, strokes, undo and dirty tracking.

use isoterra_field::hash::Fnv1a64;
use isoterra_field::map::node_surface;
use isoterra_field::{
    Fbm, FbmParams, LayerMask, MAX_LEVEL, MapLayer, MapLayers, NO_WATER, Noise2, Splat, level_index,
};
use isoterra_mesh::{CellRect, MapMeshOutput, MapMesher, centre_is_solid};

use super::brush::{MAX_MAP_HEIGHT, MapBrush, MapStroke, MapTool};
use super::edit::{LayerChange, MapEdit, read_raw, write_raw};
use super::params::{MapParams, MapPreset};
use crate::{EditDirection, WorldError};

/// Height change of one raise / lower dab at full strength at the centre,
/// in world units.
const RAISE_STEP: f32 = 1.0;
/// Largest height change of one noise dab at full strength, in world units.
const NOISE_AMPLITUDE: f32 = 1.0;
/// Water change of one water dab at full strength at the centre, in world units.
const WATER_STEP: f32 = 0.5;
/// Seed salt of the noise tool (so it differs from the preset's noise).
const NOISE_TOOL_SALT: u64 = 0x6e6f_6973_655f_746c;

/// A top-down map world: all [`MapLayers`] of a `width x depth` cell map,
/// split into chunks for meshing, with per-chunk, per-layer dirty tracking.
///
/// Chunk `(cx, cz)` of `N` cells per side owns nodes `[c*N, c*N + N)` on
/// each axis (the last one also owns the final node) and meshes cells
/// `[c*N, min(c*N + N, cells))`. Meshing a chunk reads the nodes of its
/// cells plus a one-node apron on every side (for normals), so an edit of
/// node `n` dirties every chunk `c` with `c*N - 1 <= n <= c*N + N + 1` on
/// both axes, for the layers the edit changed.
///
/// ```
/// use isoterra_world::{EditDirection, MapBrush, MapParams, MapPreset, MapStroke, MapTool, MapWorld};
///
/// # fn main() -> Result<(), isoterra_world::WorldError> {
/// let params = MapParams::DEFAULT.with_size(128, 128).with_preset(MapPreset::Blank);
/// let mut world = MapWorld::new(&params)?;
/// world.take_dirty();
/// let before = world.content_hash();
/// let stroke = MapStroke::along(MapBrush::new(MapTool::CliffUp, 6.0), &[[40.0, 40.0], [60.0, 40.0]], 1.5)?;
/// let edit = world.apply_stroke(&stroke)?;
/// assert_eq!(world.layers().level_of(world.layers().index(50, 40).unwrap()), 1);
/// assert!(!world.take_dirty().is_empty());
/// world.apply_edit(&edit, EditDirection::Backward)?;
/// assert_eq!(world.content_hash(), before);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct MapWorld {
    params: MapParams,
    layers: MapLayers,
    /// Dirty layer bits per chunk, row-major (z, then x).
    dirty: Vec<u8>,
    /// The same bits for the world's own mesh cache: what changed in each
    /// chunk since [`rebuild`](Self::rebuild) last meshed it.
    stale: Vec<u8>,
    /// The mesh cache, one slot per chunk (row-major), filled by
    /// [`rebuild`](Self::rebuild).
    meshes: Vec<Option<MapChunkMesh>>,
}

/// A chunk's meshes as [`MapWorld::rebuild`] last made them.
#[derive(Debug, Clone, PartialEq)]
pub struct MapChunkMesh {
    /// The chunk's coordinate.
    pub coord: [u32; 2],
    /// Counts the rebuilds of this chunk, from 1: a viewer that holds
    /// version `v` holds these meshes.
    pub version: u64,
    /// Terrain and water meshes.
    pub mesh: MapMeshOutput,
}

impl MapWorld {
    /// A world with the layers of `params.preset` (a pure function of the
    /// parameters and seed). Every chunk starts dirty in every layer.
    ///
    /// # Errors
    ///
    /// The errors of [`MapParams::validate`].
    pub fn new(params: &MapParams) -> Result<Self, WorldError> {
        let layers = Self::generate(params)?;
        Ok(Self::with_layers(*params, layers))
    }

    /// A world over given layers (a loaded or imported map). Every chunk
    /// starts dirty in every layer.
    ///
    /// # Errors
    ///
    /// The errors of [`MapParams::validate`], [`WorldError::Mismatch`] when
    /// the layers' size differs from the parameters', and
    /// [`WorldError::Field`] when a layer holds invalid values.
    pub fn from_layers(params: &MapParams, layers: MapLayers) -> Result<Self, WorldError> {
        params.validate()?;
        let want = [params.width_cells, params.depth_cells];
        let got = [layers.width_cells(), layers.depth_cells()];
        if want != got {
            return Err(WorldError::mismatch(
                "map size in cells",
                format!("{want:?}"),
                format!("{got:?}"),
            ));
        }
        layers.validate()?;
        Ok(Self::with_layers(*params, layers))
    }

    fn with_layers(params: MapParams, layers: MapLayers) -> Self {
        let [cw, cd] = params.chunk_count();
        let n = cw as usize * cd as usize;
        MapWorld {
            params,
            layers,
            dirty: vec![LayerMask::ALL.0; n],
            stale: vec![LayerMask::ALL.0; n],
            meshes: vec![None; n],
        }
    }

    /// The layers `params.preset` generates for `params` (what
    /// [`new`](Self::new) starts with).
    ///
    /// # Errors
    ///
    /// The errors of [`MapParams::validate`].
    pub fn generate(params: &MapParams) -> Result<MapLayers, WorldError> {
        params.validate()?;
        let mut layers = MapLayers::new(params.width_cells, params.depth_cells)?;
        match params.preset {
            MapPreset::Blank => {}
            MapPreset::Island => generate_island(params, &mut layers)?,
            MapPreset::Plateaus => generate_plateaus(params, &mut layers)?,
        }
        debug_assert!(layers.validate().is_ok());
        Ok(layers)
    }

    /// The parameters.
    pub fn params(&self) -> &MapParams {
        &self.params
    }

    /// The layers.
    pub fn layers(&self) -> &MapLayers {
        &self.layers
    }

    /// Chunks along x and z.
    pub fn chunk_count(&self) -> [u32; 2] {
        self.params.chunk_count()
    }

    /// The cells chunk `chunk` meshes, as `[x0, z0, x1, z1]` (half-open), or
    /// `None` outside the chunk grid.
    pub fn chunk_cells(&self, chunk: [u32; 2]) -> Option<[u32; 4]> {
        let [cw, cd] = self.chunk_count();
        if chunk[0] >= cw || chunk[1] >= cd {
            return None;
        }
        let n = self.params.chunk_cells;
        Some([
            chunk[0] * n,
            chunk[1] * n,
            (chunk[0] * n + n).min(self.params.width_cells),
            (chunk[1] * n + n).min(self.params.depth_cells),
        ])
    }

    /// Applies a stroke: each dab in order, as described below, and returns
    /// the sparse edit (empty when nothing changed). The stroke is checked
    /// first; on error nothing changes.
    ///
    /// With `d` the distance from a node to the dab normalised by the
    /// radius under the brush shape's norm, `q = (1 - d)^2` (the quadratic
    /// falloff) and `p = min(1, 2 (1 - d))` (full over the inner half, then
    /// a linear edge), for nodes with `d <= 1`:
    ///
    /// - `raise` / `lower`: `height ± strength * q` (world units), clamped
    ///   to `±1e4`;
    /// - `plateau`: `height += (target - height) * strength * p`, the
    ///   target being [`MapBrush::height`] or the height of the node
    ///   nearest the first dab;
    /// - `smooth`: `height += (mean - height) * strength * q` with `mean`
    ///   the mean height of the 3 x 3 nodes around (inside the map), before
    ///   the dab;
    /// - `noise`: `height += strength * q * n(x, z) * (1 - softness)` with
    ///   `n` a seeded fBm in `[-1, 1]` of the node coordinates, so it does
    ///   not touch slopes and ramps;
    /// - `cliff-up` / `cliff-down`: the target level `T` is
    ///   [`MapBrush::level`], or one above / below the level of the node
    ///   nearest the first dab (outside `0..=15`: an error). With
    ///   `a = clamp((1 - d) * radius + 0.5, 0, 1)` (1 from half a cell
    ///   inside the rim), `level += (T - level) * a`, so the rim lies on the
    ///   brush outline and a round brush makes a round cliff. Softness is
    ///   left alone: new walls are vertical wherever softness is 0 and
    ///   slopes where a ramp was painted (use `ramp` to make slopes).
    ///   With a [`MapBrush::slope`] `w > 0` the cliff is a slope instead:
    ///   `a = clamp((1 - d) * radius / w, 0, 1)` (0 on the outline, 1 from
    ///   `w` cells inside it), and every node with `0 < a < 1` gets
    ///   softness 1, so the ground climbs evenly across those `w` cells;
    /// - `ramp`: turns the cliffs under the brush into ruled slopes that
    ///   climb one level every [`MapBrush::ramp_length`] cells `L`. For a
    ///   node of band `b` (its [`level_index`]), with `u` and `w` the
    ///   distances in cells to the nearest rim above (`level = b + 0.5`) and
    ///   below (`b - 0.5`), the marching-squares lines of the level field
    ///   before the dab, the target level is
    ///   `b + max(0, 1/2 - u / L) - max(0, 1/2 - w / L)` (kept inside the
    ///   band); then `level += (target - level) * strength * p` and
    ///   `softness += (1 - softness) * strength * p`. Along a straight rim
    ///   the ground becomes one plane across the rim, `L / 2` cells to each
    ///   side of it. Every node keeps its band, so the rims stay between
    ///   the same nodes; painting the same ramp again moves them by less
    ///   than half a cell (up to a cell where two rims lie closer than `L`
    ///   — a narrow gap or ridge, or stacked levels — and the slopes
    ///   overlap);
    /// - `water-raise` / `water-lower`: the water surface moves toward
    ///   [`MapBrush::height`] by `strength * p` of the way (only up for
    ///   raise, only down for lower), or by `0.5 * strength * q` world units
    ///   without a target; raising starts from the ground surface where
    ///   there is no water, and water lowered to the ground or below becomes
    ///   [`NO_WATER`];
    /// - `paint`: texture [`MapBrush::texture`] gains `strength * p` of the
    ///   missing weight and the other ids lose as much of theirs (8-bit
    ///   rounding); a texture not among the node's four ids replaces the
    ///   lightest one;
    /// - `pathing`: sets (or clears, with `pathing_set == false`) the
    ///   [`MapBrush::pathing`] bits.
    ///
    /// # Errors
    ///
    /// The errors of [`MapStroke::validate`], and
    /// [`WorldError::InvalidParameter`] `"level"` when a cliff tool's target
    /// level leaves `0..=15`.
    pub fn apply_stroke(&mut self, stroke: &MapStroke) -> Result<MapEdit, WorldError> {
        let edit = self.stroke_edit(stroke)?;
        self.write(&edit, EditDirection::Forward);
        Ok(edit)
    }

    /// `brush` with the targets it takes "under the first dab" fixed at
    /// `first` (in cells), as a stroke starting there fixes them: a plateau
    /// without a height gets the height of the node nearest `first`, a
    /// cliff tool without a level gets one above (cliff-up) or below
    /// (cliff-down) that node's level. A stroke drawn dab by dab (a live
    /// preview) uses this so that every dab agrees with the whole stroke.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] `"level"` when a cliff tool's
    /// target level leaves `0..=15`.
    pub fn resolve_brush(&self, brush: &MapBrush, first: [f32; 2]) -> Result<MapBrush, WorldError> {
        let node = self.nearest_node(first);
        let mut b = *brush;
        match b.tool {
            MapTool::Plateau if b.height.is_none() => b.height = Some(self.layers.height[node]),
            MapTool::CliffUp | MapTool::CliffDown => {
                let target = match b.level {
                    Some(l) => i32::from(l),
                    None => {
                        let base = i32::from(self.layers.level_of(node));
                        if b.tool == MapTool::CliffUp {
                            base + 1
                        } else {
                            base - 1
                        }
                    }
                };
                if !(0..=i32::from(MAX_LEVEL)).contains(&target) {
                    return Err(WorldError::param(
                        "level",
                        target,
                        "the target cliff level must lie in 0..=15",
                    ));
                }
                b.level = Some(target as u8);
            }
            _ => {}
        }
        Ok(b)
    }

    /// The edit `stroke` would make, without changing the world.
    ///
    /// # Errors
    ///
    /// Those of [`apply_stroke`](Self::apply_stroke).
    pub fn stroke_edit(&self, stroke: &MapStroke) -> Result<MapEdit, WorldError> {
        stroke.validate()?;
        let brush = &stroke.brush;
        let plan = Plan::new(self, brush, stroke.dabs[0])?;
        let layer = plan.layer();
        let Some(rect) = self.stroke_rect(stroke) else {
            return Ok(MapEdit::default());
        };
        let mut work = Work::new(&self.layers, layer, rect);
        // A ramp also moves the level field, a sloped cliff the softness.
        let stride = self.params.width_cells as usize + 1;
        let extra_layer = plan.extra_layer();
        let mut extra = extra_layer.map(|l| copy_rect(f32_layer(&self.layers, l), stride, rect));
        for &dab in &stroke.dabs {
            if let Some(r) = self.dab_rect(dab, brush.radius) {
                plan.dab(self, &mut work, extra.as_deref_mut(), rect, dab, r);
            }
        }
        let edit = work.diff(&self.layers, layer, rect);
        Ok(match (extra_layer, extra) {
            (Some(l), Some(values)) => Work::F32(values).diff(&self.layers, l, rect).merged(edit),
            _ => edit,
        })
    }

    /// Applies an edit made on this world: [`Forward`](EditDirection::Forward)
    /// writes its values after (redo), [`Backward`](EditDirection::Backward)
    /// its values before (undo), restoring the exact bits. The nodes and
    /// layers it touches become dirty.
    ///
    /// # Errors
    ///
    /// [`WorldError::MalformedEdit`] for an edit that is not well formed,
    /// [`WorldError::Mismatch`] when it was made on a map of another size or
    /// the world does not hold the values the edit starts from (undoing a
    /// stroke twice, or out of order). Nothing changes then.
    pub fn apply_edit(
        &mut self,
        edit: &MapEdit,
        direction: EditDirection,
    ) -> Result<(), WorldError> {
        if edit.is_empty() {
            return Ok(());
        }
        edit.validate()?;
        let cells = [self.params.width_cells, self.params.depth_cells];
        if edit.cells != cells {
            return Err(WorldError::mismatch(
                "edit map size in cells",
                format!("{cells:?}"),
                format!("{:?}", edit.cells),
            ));
        }
        for c in &edit.changes {
            let (_, expect) = MapEdit::sides(c, direction);
            if let Some(k) = c
                .nodes
                .iter()
                .zip(expect)
                .position(|(&i, &v)| read_raw(&self.layers, c.layer, i as usize) != v)
            {
                return Err(WorldError::mismatch(
                    "edit start values",
                    format!(
                        "the values the edit starts from in layer `{}`",
                        c.layer.name()
                    ),
                    format!("something else at node {}", c.nodes[k]),
                ));
            }
        }
        self.write(edit, direction);
        Ok(())
    }

    /// Writes one side of a checked edit and marks its chunks dirty.
    fn write(&mut self, edit: &MapEdit, direction: EditDirection) {
        for c in &edit.changes {
            let (values, _) = MapEdit::sides(c, direction);
            for (&i, &v) in c.nodes.iter().zip(values) {
                write_raw(&mut self.layers, c.layer, i as usize, v);
            }
        }
        // One walk over the edit's nodes marks both the dirty set and the
        // mesh cache's queue.
        let mut masks = vec![0u8; self.dirty.len()];
        self.mark(edit, &mut masks);
        for ((d, s), m) in self.dirty.iter_mut().zip(&mut self.stale).zip(masks) {
            *d |= m;
            *s |= m;
        }
    }

    /// ORs the layer bits of `edit` into `masks` (one per chunk, row-major)
    /// for every chunk that reads a changed node.
    fn mark(&self, edit: &MapEdit, masks: &mut [u8]) {
        let stride = self.params.width_cells as usize + 1;
        let n = self.params.chunk_cells;
        let [cw, cd] = self.chunk_count();
        let range = |v: u32, count: u32| {
            let lo = (v.saturating_sub(n + 1)).div_ceil(n);
            let hi = ((v + 1) / n).min(count - 1);
            lo..=hi
        };
        // The chunk columns of each node column, worked out once: a stroke
        // changes tens of thousands of nodes, and each would otherwise
        // divide three times.
        let columns: Vec<_> = (0..stride as u32).map(|x| range(x, cw)).collect();
        for c in &edit.changes {
            let bit = c.layer.bit();
            // The node row being walked: its first node, and its chunk rows.
            let mut row_start = usize::MAX;
            let mut zr = 0..=0;
            // The chunk columns last marked on this row: the next node of a
            // run usually has the same ones.
            let mut marked = None;
            for &node in &c.nodes {
                let node = node as usize;
                if !(row_start..row_start.saturating_add(stride)).contains(&node) {
                    let z = node / stride;
                    row_start = z * stride;
                    zr = range(z as u32, cd);
                    marked = None;
                }
                let cols = &columns[node - row_start];
                if marked == Some(cols) {
                    continue;
                }
                marked = Some(cols);
                for cz in zr.clone() {
                    let row = cz as usize * cw as usize;
                    for cx in cols.clone() {
                        masks[row + cx as usize] |= bit;
                    }
                }
            }
        }
    }

    /// The chunks `edit` dirties and with which layers, in row-major chunk
    /// order (z, then x), without touching the world's dirty set.
    pub fn affected(&self, edit: &MapEdit) -> Vec<([u32; 2], LayerMask)> {
        let mut masks = vec![0u8; self.dirty.len()];
        if edit.cells == [self.params.width_cells, self.params.depth_cells] {
            self.mark(edit, &mut masks);
        }
        collect_masks(&masks, self.chunk_count()[0])
    }

    /// The chunks touched since the last call, with the layers that changed
    /// in each, in row-major chunk order (z, then x); clears the dirty set.
    pub fn take_dirty(&mut self) -> Vec<([u32; 2], LayerMask)> {
        let out = collect_masks(&self.dirty, self.chunk_count()[0]);
        self.dirty.fill(0);
        out
    }

    /// How many chunks were touched since the last
    /// [`take_dirty`](Self::take_dirty).
    pub fn dirty_count(&self) -> usize {
        self.dirty.iter().filter(|m| **m != 0).count()
    }

    /// Marks every chunk dirty in every layer (e.g. after changing mesh
    /// options in a viewer).
    pub fn mark_all_dirty(&mut self) {
        self.dirty.fill(LayerMask::ALL.0);
        self.stale.fill(LayerMask::ALL.0);
    }

    /// Chunks whose cached meshes are out of date (see
    /// [`rebuild`](Self::rebuild)).
    pub fn stale_count(&self) -> usize {
        self.stale.iter().filter(|m| **m != 0).count()
    }

    /// Brings the world's mesh cache up to date, chunk by chunk in
    /// row-major order, until `budget` is spent (`None`: all of them): a
    /// chunk whose geometry changed is meshed again, one where only
    /// splats changed gets its attributes refreshed in place, one where
    /// only pathing changed keeps its meshes. Each chunk meshed or
    /// refreshed gets a new [`MapChunkMesh::version`]. Returns how many
    /// chunks it rebuilt; chunks left over stay queued for the next call.
    /// This queue is separate from [`take_dirty`](Self::take_dirty)'s.
    ///
    /// # Errors
    ///
    /// [`WorldError::Mesh`] from the mesher; the chunk stays queued.
    pub fn rebuild(&mut self, budget: Option<std::time::Duration>) -> Result<usize, WorldError> {
        let start = std::time::Instant::now();
        let cw = self.chunk_count()[0] as usize;
        let mut done = 0;
        for k in 0..self.stale.len() {
            let mask = LayerMask(self.stale[k]);
            if mask.0 == 0 {
                continue;
            }
            if budget.is_some_and(|b| done > 0 && start.elapsed() >= b) {
                break;
            }
            let coord = [(k % cw) as u32, (k / cw) as u32];
            let mut slot = self.meshes[k].take();
            let result = match &mut slot {
                Some(m) if !mask.affects_geometry() => {
                    if mask.contains(MapLayer::Splat) {
                        m.version += 1;
                        self.refresh_chunk_attributes(coord, &mut m.mesh)
                    } else {
                        Ok(())
                    }
                }
                _ => {
                    let mut mesh = slot.take().map(|m| (m.version, m.mesh)).unwrap_or_default();
                    mesh.1.clear();
                    let r = with_mesher(|mesher| self.mesh_chunk(coord, mesher, &mut mesh.1));
                    slot = Some(MapChunkMesh {
                        coord,
                        version: mesh.0 + 1,
                        mesh: mesh.1,
                    });
                    r
                }
            };
            self.meshes[k] = slot;
            result?;
            self.stale[k] = 0;
            done += 1;
        }
        Ok(done)
    }

    /// The cached meshes of every chunk that [`rebuild`](Self::rebuild) has
    /// meshed, in row-major chunk order.
    pub fn chunk_meshes(&self) -> impl Iterator<Item = &MapChunkMesh> {
        self.meshes.iter().flatten()
    }

    /// Meshes chunk `chunk` (its cells, see [`chunk_cells`](Self::chunk_cells))
    /// with the world's mesh options into `out`, reusing `mesher`'s scratch
    /// buffers. Chunks meshed one by one give the same triangles on their
    /// shared sides as the map meshed whole.
    ///
    /// # Errors
    ///
    /// [`WorldError::OutOfBounds`] for a chunk outside the grid, and
    /// [`WorldError::Mesh`] from the mesher (`out` is then untouched).
    pub fn mesh_chunk(
        &self,
        chunk: [u32; 2],
        mesher: &mut MapMesher,
        out: &mut MapMeshOutput,
    ) -> Result<(), WorldError> {
        let Some([x0, z0, x1, z1]) = self.chunk_cells(chunk) else {
            let [cw, cd] = self.chunk_count();
            let bad = if chunk[0] >= cw { chunk[0] } else { chunk[1] };
            return Err(WorldError::OutOfBounds {
                what: "map chunk coordinate",
                index: u64::from(bad),
                len: u64::from(if chunk[0] >= cw { cw } else { cd }),
            });
        };
        mesher.mesh(
            &self.layers,
            CellRect::new(x0, z0, x1, z1),
            &self.params.mesh,
            out,
        )?;
        Ok(())
    }

    /// Refreshes the per-vertex splats of `out`, a mesh of chunk `chunk`
    /// made by [`mesh_chunk`](Self::mesh_chunk) since the last edit that
    /// changed geometry, from the current splat layer, in place. Use it for
    /// chunks whose dirty [`LayerMask`] does not
    /// [`affect geometry`](LayerMask::affects_geometry) (a texture paint
    /// stroke); the result is bit for bit what `mesh_chunk` would give, at a
    /// fraction of the cost. Pathing-only changes need nothing at all.
    ///
    /// # Errors
    ///
    /// [`WorldError::OutOfBounds`] for a chunk outside the grid, and
    /// [`WorldError::Mesh`] when `out` is not a mesh of this map (`out` is
    /// then untouched).
    pub fn refresh_chunk_attributes(
        &self,
        chunk: [u32; 2],
        out: &mut MapMeshOutput,
    ) -> Result<(), WorldError> {
        let [cw, cd] = self.chunk_count();
        if chunk[0] >= cw || chunk[1] >= cd {
            let bad = if chunk[0] >= cw { chunk[0] } else { chunk[1] };
            return Err(WorldError::OutOfBounds {
                what: "map chunk coordinate",
                index: u64::from(bad),
                len: u64::from(if chunk[0] >= cw { cw } else { cd }),
            });
        }
        MapMesher::update_attributes(&self.layers, out)?;
        Ok(())
    }

    /// Meshes several chunks (e.g. those [`take_dirty`](Self::take_dirty)
    /// returned), fanning out over rayon's threads with the `parallel`
    /// feature (one mesher per worker); the outputs follow the order of
    /// `chunks` and do not depend on the thread count.
    ///
    /// # Errors
    ///
    /// Those of [`mesh_chunk`](Self::mesh_chunk), for the first failing
    /// chunk; every coordinate is checked before any meshing.
    pub fn mesh_chunks(&self, chunks: &[[u32; 2]]) -> Result<Vec<MapMeshOutput>, WorldError> {
        let [cw, cd] = self.chunk_count();
        if let Some(c) = chunks.iter().find(|c| c[0] >= cw || c[1] >= cd) {
            return self
                .mesh_chunk(*c, &mut MapMesher::new(), &mut MapMeshOutput::default())
                .map(|_| Vec::new());
        }
        let mut outs: Vec<MapMeshOutput> = vec![MapMeshOutput::default(); chunks.len()];
        let mut results: Vec<Result<(), WorldError>> = vec![Ok(()); chunks.len()];
        #[cfg(feature = "parallel")]
        if chunks.len() > 1 && rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            outs.par_iter_mut()
                .zip(results.par_iter_mut())
                .zip(chunks.par_iter())
                .for_each(|((out, r), &c)| {
                    *r = with_mesher(|m| self.mesh_chunk(c, m, out));
                });
            return results.into_iter().collect::<Result<(), _>>().map(|_| outs);
        }
        with_mesher(|m| {
            for ((out, r), &c) in outs.iter_mut().zip(results.iter_mut()).zip(chunks) {
                *r = self.mesh_chunk(c, m, out);
            }
        });
        results.into_iter().collect::<Result<(), _>>().map(|_| outs)
    }

    /// A hash of the layers: 16 hex digits of FNV-1a 64 over `"ITMP"`, the
    /// size in cells (u32 little-endian) and every layer in [`MapLayer`]
    /// order (`f32` bits little-endian, splat bytes, pathing bytes). Equal
    /// layers give equal hashes whatever the history.
    pub fn content_hash(&self) -> String {
        let mut h = Fnv1a64::new();
        h.write(b"ITMP");
        h.write(&self.layers.width_cells().to_le_bytes());
        h.write(&self.layers.depth_cells().to_le_bytes());
        let l = &self.layers;
        for values in [&l.ground, &l.level, &l.softness, &l.height, &l.water] {
            for v in values.iter() {
                h.write(&v.to_bits().to_le_bytes());
            }
        }
        for s in &l.splat {
            h.write(&s.to_bytes());
        }
        h.write(&l.pathing);
        h.hex()
    }

    /// Node rectangle `[x0, z0, x1, z1]` (inclusive) a dab can touch, or
    /// `None` when it misses the map.
    fn dab_rect(&self, dab: [f32; 2], radius: f32) -> Option<[u32; 4]> {
        let w = self.params.width_cells as f32;
        let d = self.params.depth_cells as f32;
        let x0 = (dab[0] - radius).ceil().max(0.0);
        let z0 = (dab[1] - radius).ceil().max(0.0);
        let x1 = (dab[0] + radius).floor().min(w);
        let z1 = (dab[1] + radius).floor().min(d);
        if x0 > x1 || z0 > z1 {
            return None;
        }
        Some([x0 as u32, z0 as u32, x1 as u32, z1 as u32])
    }

    /// Union of the dab rectangles of a stroke.
    fn stroke_rect(&self, stroke: &MapStroke) -> Option<[u32; 4]> {
        stroke
            .dabs
            .iter()
            .filter_map(|&d| self.dab_rect(d, stroke.brush.radius))
            .reduce(|a, b| {
                [
                    a[0].min(b[0]),
                    a[1].min(b[1]),
                    a[2].max(b[2]),
                    a[3].max(b[3]),
                ]
            })
    }

    /// Storage index of the node nearest `p`, clamped into the map.
    fn nearest_node(&self, p: [f32; 2]) -> usize {
        let x = p[0].round().clamp(0.0, self.params.width_cells as f32) as u32;
        let z = p[1].round().clamp(0.0, self.params.depth_cells as f32) as u32;
        z as usize * (self.params.width_cells as usize + 1) + x as usize
    }

    /// The ground surface height of node `i` in world units.
    fn surface(&self, i: usize) -> f32 {
        let l = &self.layers;
        node_surface(
            l.level[i],
            l.softness[i],
            l.height[i],
            self.params.mesh.level_height,
        )
    }
}

thread_local! {
    /// One mesher per thread for [`MapWorld::mesh_chunks`], so its scratch
    /// buffers stay warm from call to call.
    static MESHER: std::cell::RefCell<MapMesher> = std::cell::RefCell::new(MapMesher::new());
}

/// Runs `f` with this thread's mesher (a fresh one if it is in use).
fn with_mesher<R>(f: impl FnOnce(&mut MapMesher) -> R) -> R {
    MESHER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut m) => f(&mut m),
        Err(_) => f(&mut MapMesher::new()),
    })
}

fn collect_masks(masks: &[u8], chunks_x: u32) -> Vec<([u32; 2], LayerMask)> {
    masks
        .iter()
        .enumerate()
        .filter(|(_, m)| **m != 0)
        .map(|(k, &m)| {
            let k = k as u32;
            ([k % chunks_x, k / chunks_x], LayerMask(m))
        })
        .collect()
}

/// The layer values of a stroke's rectangle while its dabs are applied.
enum Work {
    F32(Vec<f32>),
    Splat(Vec<Splat>),
    Pathing(Vec<u8>),
}

/// Copies the rectangle `rect` (inclusive) of a layer, row by row.
fn copy_rect<T: Copy>(values: &[T], stride: usize, rect: [u32; 4]) -> Vec<T> {
    let [x0, z0, x1, z1] = rect.map(|v| v as usize);
    let mut out = Vec::with_capacity((x1 - x0 + 1) * (z1 - z0 + 1));
    for z in z0..=z1 {
        out.extend_from_slice(&values[z * stride + x0..=z * stride + x1]);
    }
    out
}

fn f32_layer(layers: &MapLayers, layer: MapLayer) -> &[f32] {
    match layer {
        MapLayer::Ground => &layers.ground,
        MapLayer::Level => &layers.level,
        MapLayer::Softness => &layers.softness,
        MapLayer::Water => &layers.water,
        _ => &layers.height,
    }
}

impl Work {
    fn new(layers: &MapLayers, layer: MapLayer, rect: [u32; 4]) -> Self {
        let stride = layers.width_cells() as usize + 1;
        match layer {
            MapLayer::Splat => Work::Splat(copy_rect(&layers.splat, stride, rect)),
            MapLayer::Pathing => Work::Pathing(copy_rect(&layers.pathing, stride, rect)),
            _ => Work::F32(copy_rect(f32_layer(layers, layer), stride, rect)),
        }
    }

    /// The sparse difference between the work values and the layer.
    fn diff(&self, layers: &MapLayers, layer: MapLayer, rect: [u32; 4]) -> MapEdit {
        let stride = layers.width_cells() as usize + 1;
        let [x0, z0, x1, z1] = rect.map(|v| v as usize);
        let rw = x1 - x0 + 1;
        let mut change = LayerChange {
            layer,
            nodes: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
        };
        for z in z0..=z1 {
            for x in x0..=x1 {
                let i = z * stride + x;
                let k = (z - z0) * rw + (x - x0);
                let after = match self {
                    Work::F32(v) => u64::from(v[k].to_bits()),
                    Work::Splat(v) => u64::from_le_bytes(v[k].to_bytes()),
                    Work::Pathing(v) => u64::from(v[k]),
                };
                let before = read_raw(layers, layer, i);
                if before != after {
                    change.nodes.push(i as u32);
                    change.before.push(before);
                    change.after.push(after);
                }
            }
        }
        if change.nodes.is_empty() {
            return MapEdit::default();
        }
        MapEdit {
            cells: [layers.width_cells(), layers.depth_cells()],
            changes: vec![change],
        }
    }
}

/// What a stroke does, with everything fixed before its first dab.
struct Plan {
    brush: MapBrush,
    kind: PlanKind,
}

enum PlanKind {
    Raise(f32),
    Plateau(f32),
    Smooth,
    Noise(Fbm),
    /// `slope`: the width of the slope at the rim in cells (0: a vertical wall).
    Cliff {
        level: f32,
        slope: f32,
    },
    /// Cells of slope per level.
    Ramp(f32),
    Water {
        up: bool,
        target: Option<f32>,
    },
    Paint,
    Pathing,
}

impl Plan {
    fn new(world: &MapWorld, brush: &MapBrush, first: [f32; 2]) -> Result<Self, WorldError> {
        let brush = &world.resolve_brush(brush, first)?;
        let kind = match brush.tool {
            MapTool::Raise => PlanKind::Raise(1.0),
            MapTool::Lower => PlanKind::Raise(-1.0),
            MapTool::Plateau => PlanKind::Plateau(brush.height.unwrap_or(0.0)),
            MapTool::Smooth => PlanKind::Smooth,
            MapTool::Noise => {
                let params = FbmParams::DEFAULT
                    .with_frequency(1.0 / 16.0)
                    .with_octaves(3);
                PlanKind::Noise(Fbm::new(&params, world.params.seed ^ NOISE_TOOL_SALT)?)
            }
            MapTool::CliffUp | MapTool::CliffDown => PlanKind::Cliff {
                level: f32::from(brush.level.unwrap_or(0)),
                slope: brush.slope.unwrap_or(0.0),
            },
            MapTool::Ramp => PlanKind::Ramp(brush.ramp_length()),
            MapTool::WaterRaise | MapTool::WaterLower => PlanKind::Water {
                up: brush.tool == MapTool::WaterRaise,
                target: brush.height,
            },
            MapTool::Paint => PlanKind::Paint,
            MapTool::Pathing => PlanKind::Pathing,
        };
        Ok(Plan {
            brush: *brush,
            kind,
        })
    }

    fn layer(&self) -> MapLayer {
        match self.kind {
            PlanKind::Raise(_) | PlanKind::Plateau(_) | PlanKind::Smooth | PlanKind::Noise(_) => {
                MapLayer::Height
            }
            PlanKind::Cliff { .. } => MapLayer::Level,
            PlanKind::Ramp(_) => MapLayer::Softness,
            PlanKind::Water { .. } => MapLayer::Water,
            PlanKind::Paint => MapLayer::Splat,
            PlanKind::Pathing => MapLayer::Pathing,
        }
    }

    /// The second layer a stroke changes, if any: the levels of a ramp
    /// (whose work is its softness), the softness of a sloped cliff.
    fn extra_layer(&self) -> Option<MapLayer> {
        match self.kind {
            PlanKind::Ramp(_) => Some(MapLayer::Level),
            PlanKind::Cliff { slope, .. } if slope > 0.0 => Some(MapLayer::Softness),
            _ => None,
        }
    }

    /// Applies one dab whose node rectangle is `r` to the work values of
    /// the stroke rectangle `rect` (and to those of its
    /// [`extra_layer`](Self::extra_layer)).
    fn dab(
        &self,
        world: &MapWorld,
        work: &mut Work,
        extra: Option<&mut [f32]>,
        rect: [u32; 4],
        dab: [f32; 2],
        r: [u32; 4],
    ) {
        let b = &self.brush;
        let stride = world.params.width_cells as usize + 1;
        let [sx0, sz0, sx1, _] = rect;
        let rw = (sx1 - sx0 + 1) as usize;
        let k_of = |x: u32, z: u32| (z - sz0) as usize * rw + (x - sx0) as usize;
        // Nodes of the dab with their normalised distance.
        let each = |f: &mut dyn FnMut(u32, u32, f32)| {
            for z in r[1]..=r[3] {
                for x in r[0]..=r[2] {
                    let d = b
                        .shape
                        .distance(x as f32 - dab[0], z as f32 - dab[1], b.radius);
                    if d <= 1.0 {
                        f(x, z, d);
                    }
                }
            }
        };
        let flat = |d: f32| (2.0 * (1.0 - d)).min(1.0);
        let quad = |d: f32| (1.0 - d) * (1.0 - d);
        let toward = |v: f32, t: f32, w: f32| if w >= 1.0 { t } else { v + (t - v) * w };
        let clamp_h = |v: f32| v.clamp(-MAX_MAP_HEIGHT, MAX_MAP_HEIGHT);
        match (&self.kind, work) {
            (PlanKind::Raise(sign), Work::F32(v)) => each(&mut |x, z, d| {
                let k = k_of(x, z);
                v[k] = clamp_h(v[k] + sign * RAISE_STEP * b.strength * quad(d));
            }),
            (PlanKind::Plateau(t), Work::F32(v)) => each(&mut |x, z, d| {
                let k = k_of(x, z);
                v[k] = toward(v[k], *t, b.strength * flat(d));
            }),
            (PlanKind::Smooth, Work::F32(v)) => {
                let heights = &world.layers.height;
                let [w, dd] = [world.params.width_cells, world.params.depth_cells];
                let mut new = Vec::new();
                each(&mut |x, z, d| {
                    let read = |xx: u32, zz: u32| {
                        if (sx0..=rect[2]).contains(&xx) && (sz0..=rect[3]).contains(&zz) {
                            v[k_of(xx, zz)]
                        } else {
                            heights[zz as usize * stride + xx as usize]
                        }
                    };
                    let (mut sum, mut count) = (0.0f32, 0.0f32);
                    for zz in z.saturating_sub(1)..=(z + 1).min(dd) {
                        for xx in x.saturating_sub(1)..=(x + 1).min(w) {
                            sum += read(xx, zz);
                            count += 1.0;
                        }
                    }
                    let k = k_of(x, z);
                    let h = v[k];
                    new.push((k, h + (sum / count - h) * b.strength * quad(d)));
                });
                for (k, h) in new {
                    v[k] = h;
                }
            }
            (PlanKind::Noise(fbm), Work::F32(v)) => {
                let soft = &world.layers.softness;
                each(&mut |x, z, d| {
                    let k = k_of(x, z);
                    let s = soft[z as usize * stride + x as usize];
                    let n = fbm.sample2(x as f32, z as f32);
                    v[k] = clamp_h(v[k] + b.strength * quad(d) * NOISE_AMPLITUDE * n * (1.0 - s));
                })
            }
            (PlanKind::Cliff { level: t, slope }, Work::F32(v)) if *slope > 0.0 => {
                let Some(soft) = extra else {
                    debug_assert!(false, "a sloped cliff works on the softness too");
                    return;
                };
                each(&mut |x, z, d| {
                    let k = k_of(x, z);
                    // 0 on the outline, 1 from `slope` cells inside it.
                    let a = ((1.0 - d) * b.radius / slope).clamp(0.0, 1.0);
                    v[k] = toward(v[k], *t, a).clamp(-0.5, MAX_LEVEL as f32 + 0.5);
                    if a > 0.0 && a < 1.0 {
                        soft[k] = 1.0;
                    }
                })
            }
            (PlanKind::Cliff { level: t, .. }, Work::F32(v)) => each(&mut |x, z, d| {
                let k = k_of(x, z);
                let a = ((1.0 - d) * b.radius + 0.5).clamp(0.0, 1.0);
                v[k] = toward(v[k], *t, a).clamp(-0.5, MAX_LEVEL as f32 + 0.5);
            }),
            (PlanKind::Ramp(length), Work::F32(v)) => {
                let Some(levels) = extra else {
                    debug_assert!(false, "a ramp works on the levels too");
                    return;
                };
                let rims = Rims::of(world, levels, rect, r, *length);
                let mut new = Vec::new();
                each(&mut |x, z, d| {
                    new.push((k_of(x, z), rims.target(x, z), b.strength * flat(d)));
                });
                for (k, target, w) in new {
                    let level = toward(levels[k], target, w);
                    // (Rounding could only nudge a node off its band's top.)
                    if level_index(level) == level_index(levels[k]) {
                        levels[k] = level;
                    }
                    v[k] = toward(v[k], 1.0, w).clamp(0.0, 1.0);
                }
            }
            (PlanKind::Water { up, target }, Work::F32(v)) => each(&mut |x, z, d| {
                let k = k_of(x, z);
                let s = world.surface(z as usize * stride + x as usize);
                let w = v[k];
                let present = w > s;
                let new = match (up, target) {
                    (true, None) => {
                        let step = WATER_STEP * b.strength * quad(d);
                        if step > 0.0 {
                            clamp_h(if present { w } else { s } + step)
                        } else {
                            w
                        }
                    }
                    (false, None) => {
                        if present {
                            w - WATER_STEP * b.strength * quad(d)
                        } else {
                            w
                        }
                    }
                    (true, Some(t)) => {
                        let base = if present { w } else { s };
                        if *t > base {
                            toward(base, *t, b.strength * flat(d))
                        } else {
                            w
                        }
                    }
                    (false, Some(t)) => {
                        if present && w > *t {
                            toward(w, *t, b.strength * flat(d))
                        } else {
                            w
                        }
                    }
                };
                v[k] = if new <= s && new != w { NO_WATER } else { new };
            }),
            (PlanKind::Paint, Work::Splat(v)) => each(&mut |x, z, d| {
                let k = k_of(x, z);
                v[k] = paint(v[k], b.texture, b.strength * flat(d));
            }),
            (PlanKind::Pathing, Work::Pathing(v)) => each(&mut |x, z, _| {
                let k = k_of(x, z);
                if b.pathing_set {
                    v[k] |= b.pathing;
                } else {
                    v[k] &= !b.pathing;
                }
            }),
            _ => debug_assert!(false, "work buffer does not match the tool"),
        }
    }
}

/// What a ramp dab needs of the cliff rims around it: for each node of the
/// dab's rectangle, the distance to the nearest rim above its band and to
/// the nearest one below (infinite past half a ramp length). The rims are
/// the marching-squares segments of the level field at every `k + 0.5`;
/// each segment updates only the nodes within half a ramp length of it, so
/// a dab costs (segments × length²), not (nodes × length²).
struct Rims {
    /// The dab's node rectangle (inclusive).
    rect: [u32; 4],
    /// Cells of slope per level.
    length: f32,
    /// Per node of `rect` (row-major): its band.
    bands: Vec<u8>,
    /// Per node of `rect` (row-major): distance to the rim above its band.
    up: Vec<f32>,
    /// Per node of `rect`: distance to the rim below its band.
    down: Vec<f32>,
}

impl Rims {
    /// The rims near node rectangle `r` of a ramp of `length` cells per
    /// level; `levels` holds the stroke rectangle `rect`'s current levels.
    fn of(world: &MapWorld, levels: &[f32], rect: [u32; 4], r: [u32; 4], length: f32) -> Self {
        let [w, d] = [world.params.width_cells, world.params.depth_cells];
        let stride = w as usize + 1;
        let rw = (rect[2] - rect[0] + 1) as usize;
        let read = |x: u32, z: u32| -> f32 {
            if (rect[0]..=rect[2]).contains(&x) && (rect[1]..=rect[3]).contains(&z) {
                levels[(z - rect[1]) as usize * rw + (x - rect[0]) as usize]
            } else {
                world.layers.level[z as usize * stride + x as usize]
            }
        };
        let (cols, rows) = ((r[2] - r[0] + 1) as usize, (r[3] - r[1] + 1) as usize);
        let mut bands = Vec::with_capacity(cols * rows);
        for z in r[1]..=r[3] {
            for x in r[0]..=r[2] {
                bands.push(level_index(read(x, z)));
            }
        }
        let mut up = vec![f32::INFINITY; cols * rows];
        let mut down = vec![f32::INFINITY; cols * rows];
        let half = length * 0.5;
        // The cells whose rims can reach a node of `r`.
        let reach = half.ceil() as u32 + 1;
        let window = [
            r[0].saturating_sub(reach),
            r[1].saturating_sub(reach),
            (r[2] + reach).min(w),
            (r[3] + reach).min(d),
        ];
        let mut splat = |k: u8, s: [f32; 4]| {
            let span = |lo: f32, hi: f32, a: u32, b: u32| {
                let lo = (lo - half).floor().max(a as f32) as u32;
                let hi = (hi + half).ceil().min(b as f32) as u32;
                lo..=hi
            };
            let xs = span(s[0].min(s[2]), s[0].max(s[2]), r[0], r[2]);
            let zs = span(s[1].min(s[3]), s[1].max(s[3]), r[1], r[3]);
            for z in zs {
                for x in xs.clone() {
                    let i = (z - r[1]) as usize * cols + (x - r[0]) as usize;
                    let slot = if k == bands[i] {
                        &mut up[i]
                    } else if k + 1 == bands[i] {
                        &mut down[i]
                    } else {
                        continue;
                    };
                    *slot = slot.min(segment_distance([x as f32, z as f32], s));
                }
            }
        };
        for cz in window[1]..window[3] {
            for cx in window[0]..window[2] {
                // Corners in ring order, and their positions.
                let v = [
                    read(cx, cz),
                    read(cx + 1, cz),
                    read(cx + 1, cz + 1),
                    read(cx, cz + 1),
                ];
                let (fx, fz) = (cx as f32, cz as f32);
                let p = [
                    [fx, fz],
                    [fx + 1.0, fz],
                    [fx + 1.0, fz + 1.0],
                    [fx, fz + 1.0],
                ];
                let corner_bands = v.map(level_index);
                let lo = corner_bands.iter().copied().min().unwrap_or(0);
                let hi = corner_bands.iter().copied().max().unwrap_or(0);
                for k in lo..hi {
                    let iso = f32::from(k) + 0.5;
                    let above = v.map(|x| x >= iso);
                    // Where side `i` (corner `i` to `i + 1`) crosses the rim.
                    let cross = |i: usize| -> [f32; 2] {
                        let j = (i + 1) % 4;
                        let t = (iso - v[i]) / (v[j] - v[i]);
                        [
                            p[i][0] + (p[j][0] - p[i][0]) * t,
                            p[i][1] + (p[j][1] - p[i][1]) * t,
                        ]
                    };
                    let segment = |a: [f32; 2], b: [f32; 2]| [a[0], a[1], b[0], b[1]];
                    let (mut crossed, mut n) = ([0usize; 4], 0);
                    for i in (0..4).filter(|&i| above[i] != above[(i + 1) % 4]) {
                        crossed[n] = i;
                        n += 1;
                    }
                    match n {
                        2 => splat(k, segment(cross(crossed[0]), cross(crossed[1]))),
                        4 => {
                            // A saddle: the centre (the corners' mean) decides
                            // which corners the lines cut off, as in the mesher.
                            let centre = centre_is_solid(v[0], v[1], v[2], v[3], iso);
                            for i in (0..4).filter(|&i| above[i] != centre) {
                                splat(k, segment(cross((i + 3) % 4), cross(i)));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        Rims {
            rect: r,
            length,
            bands,
            up,
            down,
        }
    }

    /// The ramp's target level for node `(x, z)` of the dab (see
    /// [`MapWorld::apply_stroke`]), inside the node's band.
    fn target(&self, x: u32, z: u32) -> f32 {
        let cols = (self.rect[2] - self.rect[0] + 1) as usize;
        let i = (z - self.rect[1]) as usize * cols + (x - self.rect[0]) as usize;
        let (band, up, down, length) = (self.bands[i], self.up[i], self.down[i], self.length);
        let b = f32::from(band);
        let t = b + (0.5 - up / length).max(0.0) - (0.5 - down / length).max(0.0);
        // A node on the rim itself would round into the band above.
        if band < MAX_LEVEL {
            t.min(b + 0.5 - RAMP_BAND_MARGIN)
        } else {
            t
        }
    }
}

/// How far below its band's upper rim (in levels) a ramp keeps a node.
const RAMP_BAND_MARGIN: f32 = 1.0e-3;

/// Distance from `p` to segment `s` (`[ax, az, bx, bz]`).
fn segment_distance(p: [f32; 2], s: [f32; 4]) -> f32 {
    let (dx, dz) = (s[2] - s[0], s[3] - s[1]);
    let (qx, qz) = (p[0] - s[0], p[1] - s[1]);
    let len2 = dx * dx + dz * dz;
    let t = if len2 > 0.0 {
        ((qx * dx + qz * dz) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ez) = (qx - dx * t, qz - dz * t);
    (ex * ex + ez * ez).sqrt()
}

/// Raises texture `id` of a splat by `w` (0..=1) of its missing weight and
/// lowers the other ids by the same fraction of theirs.
fn paint(mut s: Splat, id: u8, w: f32) -> Splat {
    let wq = (w * 256.0).round().clamp(0.0, 256.0) as u32;
    if wq == 0 {
        return s;
    }
    let slot = match s.ids.iter().position(|&t| t == id) {
        Some(k) => k,
        None => {
            let mut k = 0;
            for j in 1..4 {
                if s.weights[j] < s.weights[k] {
                    k = j;
                }
            }
            s.ids[k] = id;
            s.weights[k] = 0;
            k
        }
    };
    for j in 0..4 {
        let old = u32::from(s.weights[j]);
        s.weights[j] = if j == slot {
            (old + (((255 - old) * wq + 128) >> 8)) as u8
        } else {
            (old - ((old * wq + 128) >> 8).min(old)) as u8
        };
    }
    s
}

/// Deterministic fBm of a map preset.
fn preset_noise(seed: u64, salt: u64, frequency: f32) -> Result<Fbm, WorldError> {
    let p = FbmParams::DEFAULT.with_frequency(frequency).with_octaves(4);
    Ok(Fbm::new(
        &p,
        seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15),
    )?)
}

fn generate_island(params: &MapParams, l: &mut MapLayers) -> Result<(), WorldError> {
    let [w, d] = [params.width_cells, params.depth_cells];
    let size = w.max(d) as f32;
    let shape = preset_noise(params.seed, 1, 3.0 / size)?;
    let ramps = preset_noise(params.seed, 2, 6.0 / size)?;
    let bumps = preset_noise(params.seed, 3, 12.0 / size)?;
    let (hw, hd) = (w as f32 / 2.0, d as f32 / 2.0);
    for z in 0..=d {
        for x in 0..=w {
            let i = z as usize * (w as usize + 1) + x as usize;
            let (fx, fz) = (x as f32, z as f32);
            let u = (fx - hw) / hw;
            let v = (fz - hd) / hd;
            let r = (u * u + v * v).sqrt();
            let e = 0.8 - r + 0.6 * shape.sample2(fx, fz);
            l.level[i] = (e * 5.0).clamp(0.0, 3.0);
            l.softness[i] = ((ramps.sample2(fx, fz) - 0.3) * 6.0).clamp(0.0, 1.0);
            l.height[i] = if e < 0.0 {
                (e * 8.0).max(-4.0)
            } else {
                0.2 * bumps.sample2(fx, fz)
            };
            if e < 0.1 {
                l.water[i] = -0.3;
            }
            let level = level_index(l.level[i]);
            l.splat[i] = if e < 0.06 {
                Splat::single(1)
            } else if level >= 2 {
                Splat::single(2)
            } else {
                Splat::single(0)
            };
        }
    }
    Ok(())
}

fn generate_plateaus(params: &MapParams, l: &mut MapLayers) -> Result<(), WorldError> {
    let [w, d] = [params.width_cells, params.depth_cells];
    let size = w.max(d) as f32;
    let shape = preset_noise(params.seed, 11, 4.0 / size)?;
    let ramps = preset_noise(params.seed, 12, 8.0 / size)?;
    let chasms = preset_noise(params.seed, 13, 5.0 / size)?;
    let bumps = preset_noise(params.seed, 14, 16.0 / size)?;
    for z in 0..=d {
        for x in 0..=w {
            let i = z as usize * (w as usize + 1) + x as usize;
            let (fx, fz) = (x as f32, z as f32);
            l.level[i] = (2.0 + 6.0 * shape.sample2(fx, fz)).clamp(0.0, 4.0);
            l.softness[i] = ((ramps.sample2(fx, fz) - 0.3) * 6.0).clamp(0.0, 1.0);
            l.ground[i] = ((chasms.sample2(fx, fz) + 0.4) * 8.0).clamp(-1.0, 1.0);
            l.height[i] = 0.25 * bumps.sample2(fx, fz);
            let level = level_index(l.level[i]);
            l.splat[i] = Splat {
                ids: [level % 4, 3, 0, 0],
                weights: [255 - (level * 20), level * 20, 0, 0],
            };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_raises_the_texture_and_keeps_four_ids() {
        let s = Splat::single(0);
        let p = paint(s, 3, 1.0);
        assert_eq!(p.ids[..2], [0, 3]);
        assert_eq!(p.weights[..2], [0, 255]);
        let half = paint(s, 3, 0.5);
        assert_eq!(half.weights[0] as u32 + half.weights[1] as u32, 255);
        assert_eq!(paint(s, 0, 1.0), s);
        assert_eq!(paint(s, 5, 0.0), s);
        let full = Splat {
            ids: [1, 2, 3, 4],
            weights: [10, 20, 5, 40],
        };
        let q = paint(full, 9, 0.25);
        assert_eq!(q.ids, [1, 2, 9, 4]);
    }
}
