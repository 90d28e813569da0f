//! The side-view world: one field split into chunks, brushes, edits and the
//! rebuild queue.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use isoterra_field::{Field2, MaterialGrid, MaterialTable, NodeRect, generate_side2d};
use isoterra_mesh::{CellRect, SquaresOptions};

use super::brush::brush_edit;
use super::chunk::{ChunkScratch, RebuildInput, Side2dChunk, rebuild_chunk};
use crate::edit::check_finite;
use crate::{EditDirection, Side2dBrush, Side2dEdit, Side2dParams, WorldError};

/// Fewest dirty chunks in one batch for which a rebuild fans out over threads;
/// smaller batches run on the calling thread (waking workers costs more).
#[cfg(feature = "parallel")]
const PARALLEL_MIN_CHUNKS: usize = 8;

/// What [`Side2dWorld::rebuild`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RebuildReport {
    /// Chunks rebuilt by this call.
    pub rebuilt: usize,
    /// Dirty chunks still waiting.
    pub remaining: usize,
}

/// A 2D side-view world (Worms, Terraria-like diggers, Noita-like caves): one
/// corner-sampled density field with a material per node, split into chunks
/// that cache their fill meshes, contours and colliders.
///
/// * A node is solid when `value >= iso` ([`Side2dParams::iso`], default 0).
/// * The field has `(width_cells + 1) x (height_cells + 1)` nodes, node
///   `(x, y)` at `(x, y) * cell_size` (origin at zero, y up). Border nodes are
///   always empty, so every contour closes; brushes never touch them.
/// * Edits ([`apply_brush`](Self::apply_brush), [`apply_edit`](Self::apply_edit))
///   mark dirty exactly the chunks whose cells touch a changed node;
///   [`rebuild`](Self::rebuild) refreshes them, within a time budget if asked.
/// * A new world starts with every chunk dirty: call
///   [`rebuild_all`](Self::rebuild_all) (or spread `rebuild(Some(budget))`
///   over frames) before reading chunk meshes.
#[derive(Debug)]
pub struct Side2dWorld {
    pub(crate) params: Side2dParams,
    pub(crate) field: Field2,
    pub(crate) materials: MaterialGrid,
    pub(crate) table: MaterialTable,
    pub(crate) chunks_x: u32,
    pub(crate) chunks_y: u32,
    pub(crate) chunks: Vec<Side2dChunk>,
    /// Dirty chunk indices in the order they became dirty; each at most once.
    queue: Vec<u32>,
    /// Scratch memory for rebuild workers, kept between calls.
    pool: Mutex<Vec<ChunkScratch>>,
    /// Chunks moved out of `chunks` while a parallel batch rebuilds them.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    work: Vec<Side2dChunk>,
}

impl Clone for Side2dWorld {
    fn clone(&self) -> Self {
        Side2dWorld {
            params: self.params,
            field: self.field.clone(),
            materials: self.materials.clone(),
            table: self.table.clone(),
            chunks_x: self.chunks_x,
            chunks_y: self.chunks_y,
            chunks: self.chunks.clone(),
            queue: self.queue.clone(),
            pool: Mutex::new(Vec::new()),
            work: Vec::new(),
        }
    }
}

impl Side2dWorld {
    /// Generates a world from its parameters (validated first).
    pub fn generate(params: &Side2dParams) -> Result<Self, WorldError> {
        params.validate()?;
        let (field, materials) = generate_side2d(&params.generator)?;
        Self::from_parts(params, field, materials)
    }

    /// A world from an existing field and material grid (e.g. loaded from a
    /// file), with the default material table
    /// ([`MaterialTable::side2d_default`]).
    ///
    /// Checks that the parameters are valid, that the field has
    /// `(width_cells + 1) x (height_cells + 1)` nodes with the parameters' cell
    /// size and origin zero, that the material grid has the same size and only
    /// ids of the table, and that every border node is empty. A quantized
    /// [`storage`](Side2dParams::storage) rounds every value to its grid
    /// first.
    pub fn from_parts(
        params: &Side2dParams,
        field: Field2,
        materials: MaterialGrid,
    ) -> Result<Self, WorldError> {
        Self::from_parts_with_table(params, field, materials, MaterialTable::side2d_default())
    }

    /// As [`from_parts`](Self::from_parts), with the material table `table`
    /// (every id in `materials` must exist in it).
    pub fn from_parts_with_table(
        params: &Side2dParams,
        field: Field2,
        materials: MaterialGrid,
        table: MaterialTable,
    ) -> Result<Self, WorldError> {
        params.validate()?;
        let mut field = field;
        params.storage.snap_all(field.values_mut());
        let [cw, ch] = params.cells();
        let (w, h) = (cw as u64 + 1, ch as u64 + 1);
        if (field.width() as u64, field.height() as u64) != (w, h) {
            return Err(WorldError::mismatch(
                "field size in nodes",
                format!("{w}x{h}"),
                format!("{}x{}", field.width(), field.height()),
            ));
        }
        if (materials.width(), materials.height()) != (field.width(), field.height()) {
            return Err(WorldError::mismatch(
                "material grid size in nodes",
                format!("{w}x{h}"),
                format!("{}x{}", materials.width(), materials.height()),
            ));
        }
        if field.cell_size() != params.generator.cell_size {
            return Err(WorldError::mismatch(
                "field cell size",
                params.generator.cell_size,
                field.cell_size(),
            ));
        }
        if field.origin() != [0.0, 0.0] {
            return Err(WorldError::mismatch(
                "field origin",
                "[0.0, 0.0]",
                format!("{:?}", field.origin()),
            ));
        }
        check_material_ids(&materials, &table)?;
        let iso = params.iso;
        let (fw, fh) = (field.width(), field.height());
        let border_ok = |x: u32, y: u32| -> Result<(), WorldError> {
            let v = field.get(x, y);
            if v >= iso {
                return Err(WorldError::param(
                    "field",
                    format!("node ({x}, {y}) = {v}"),
                    "border nodes must be empty (below iso) so every contour closes; clear the border first",
                ));
            }
            Ok(())
        };
        for x in 0..fw {
            border_ok(x, 0)?;
            border_ok(x, fh - 1)?;
        }
        for y in 0..fh {
            border_ok(0, y)?;
            border_ok(fw - 1, y)?;
        }
        let [chunks_x, chunks_y] = params.chunks();
        let n = params.chunk_cells;
        let mut chunks = Vec::with_capacity(chunks_x as usize * chunks_y as usize);
        for cy in 0..chunks_y {
            for cx in 0..chunks_x {
                let cells = CellRect {
                    x0: cx * n,
                    y0: cy * n,
                    x1: (cx * n + n).min(cw),
                    y1: (cy * n + n).min(ch),
                };
                chunks.push(Side2dChunk::new([cx, cy], cells));
            }
        }
        let queue = (0..chunks.len() as u32).collect();
        Ok(Side2dWorld {
            params: *params,
            field,
            materials,
            table,
            chunks_x,
            chunks_y,
            chunks,
            queue,
            pool: Mutex::new(Vec::new()),
            work: Vec::new(),
        })
    }

    /// Replaces the material table. Every material id in the grid must exist
    /// in the new table; on error nothing changes.
    pub fn with_table(mut self, table: MaterialTable) -> Result<Self, WorldError> {
        check_material_ids(&self.materials, &table)?;
        self.table = table;
        Ok(self)
    }

    /// The parameters.
    pub fn params(&self) -> &Side2dParams {
        &self.params
    }

    /// The density field.
    pub fn field(&self) -> &Field2 {
        &self.field
    }

    /// The material id of every node.
    pub fn materials(&self) -> &MaterialGrid {
        &self.materials
    }

    /// The material table.
    pub fn table(&self) -> &MaterialTable {
        &self.table
    }

    /// Chunks along x.
    pub fn chunks_x(&self) -> u32 {
        self.chunks_x
    }

    /// Chunks along y.
    pub fn chunks_y(&self) -> u32 {
        self.chunks_y
    }

    /// Chunk `(cx, cy)`, or `None` outside the world. Its cached data is
    /// current only when it is not dirty.
    pub fn chunk(&self, cx: u32, cy: u32) -> Option<&Side2dChunk> {
        if cx >= self.chunks_x || cy >= self.chunks_y {
            return None;
        }
        self.chunks
            .get(cy as usize * self.chunks_x as usize + cx as usize)
    }

    /// Every chunk, row by row (x fastest).
    pub fn chunks(&self) -> &[Side2dChunk] {
        &self.chunks
    }

    /// Number of chunks waiting for a rebuild.
    pub fn dirty_count(&self) -> usize {
        self.queue.len()
    }

    /// Coordinates of the dirty chunks, in the order they became dirty.
    pub fn dirty_chunks(&self) -> impl Iterator<Item = [u32; 2]> + '_ {
        self.queue.iter().map(|&i| self.chunks[i as usize].coord)
    }

    /// Marks every chunk dirty (e.g. after changing the material table).
    pub fn mark_all_dirty(&mut self) {
        for i in 0..self.chunks.len() {
            self.mark_chunk(i);
        }
    }

    #[inline]
    fn mark_chunk(&mut self, i: usize) {
        let c = &mut self.chunks[i];
        if !c.dirty {
            c.dirty = true;
            self.queue.push(i as u32);
        }
    }

    /// Marks dirty every chunk whose cells touch node `(x, y)`: one chunk, or
    /// two or four for a node on chunk borders.
    fn mark_node(&mut self, x: u32, y: u32) {
        let n = self.params.chunk_cells;
        let [cw, ch] = self.params.cells();
        // Cells touching node x are x-1 and x (those that exist).
        let cx0 = (x.max(1) - 1) / n;
        let cx1 = x.min(cw - 1) / n;
        let cy0 = (y.max(1) - 1) / n;
        let cy1 = y.min(ch - 1) / n;
        for cy in cy0..=cy1 {
            for cx in cx0..=cx1 {
                self.mark_chunk(cy as usize * self.chunks_x as usize + cx as usize);
            }
        }
    }

    fn mark_nodes(&mut self, nodes: &[u32]) {
        let w = self.field.width();
        for &i in nodes {
            self.mark_node(i % w, i / w);
        }
    }

    /// Applies a brush and returns what it changed (for undo).
    ///
    /// The brush is validated first (see [`Side2dBrush::validate`]; also: radius at
    /// most four world diagonals, material in the table); on error nothing
    /// changes. Only nodes inside the brush's reach (`radius + one cell`) are
    /// visited; border nodes and nodes of indestructible materials are never
    /// changed. A brush entirely outside the world returns an empty edit.
    /// In a quantized world the new values are rounded to the storage's grid,
    /// and a node whose value and material come back unchanged is left out.
    pub fn apply_brush(&mut self, brush: &Side2dBrush) -> Result<Side2dEdit, WorldError> {
        brush.validate_for(&self.field, &self.table)?;
        let mut edit = brush_edit(
            brush,
            &self.field,
            &self.materials,
            &self.table,
            self.params.iso,
        );
        if !self.params.storage.is_exact() {
            snap_edit(&mut edit, self.params.storage, self.field.width());
        }
        self.write(&edit.nodes, &edit.after, &edit.mat_after);
        Ok(edit)
    }

    /// Writes one side of an edit: [`EditDirection::Forward`] writes `after`
    /// (redo), [`EditDirection::Backward`] writes `before` (undo). Both restore
    /// the exact bytes.
    ///
    /// The edit is checked first (parallel arrays of equal length, indices
    /// strictly ascending, inside the world and inside `rect`, not on the
    /// border, finite values, materials in the table); on error nothing changes.
    pub fn apply_edit(&mut self, edit: &Side2dEdit, dir: EditDirection) -> Result<(), WorldError> {
        self.check_edit(edit, dir)?;
        let (values, mats) = match dir {
            EditDirection::Forward => (&edit.after, &edit.mat_after),
            EditDirection::Backward => (&edit.before, &edit.mat_before),
        };
        self.write(&edit.nodes, values, mats);
        Ok(())
    }

    fn check_edit(&self, edit: &Side2dEdit, dir: EditDirection) -> Result<(), WorldError> {
        edit.check_lists()?;
        self.check_node_list(&edit.nodes, "edit node", |i, reason| {
            WorldError::malformed(format!("node {i} {reason}"))
        })?;
        let w = self.field.width();
        let r = edit.rect;
        if let Some(&i) = edit.nodes.iter().find(|&&i| !r.contains(i % w, i / w)) {
            return Err(WorldError::malformed(format!(
                "node ({}, {}) lies outside the edit's rect {r:?}",
                i % w,
                i / w
            )));
        }
        let (values, mats, side) = match dir {
            EditDirection::Forward => (&edit.after, &edit.mat_after, "after"),
            EditDirection::Backward => (&edit.before, &edit.mat_before, "before"),
        };
        check_finite(values, &edit.nodes, side)?;
        if let Some(k) = mats.iter().position(|&m| self.table.get(m).is_none()) {
            return Err(WorldError::malformed(format!(
                "material {} for node {} is not in the table",
                mats[k], edit.nodes[k]
            )));
        }
        Ok(())
    }

    /// Checks a list of storage indices: inside the field, strictly
    /// ascending, none on the border. `what` names the index in an
    /// out-of-bounds error; `bad(index, reason)` makes the other errors.
    pub(crate) fn check_node_list(
        &self,
        nodes: &[u32],
        what: &'static str,
        bad: impl Fn(u32, &'static str) -> WorldError,
    ) -> Result<(), WorldError> {
        let total = self.field.values().len() as u64;
        let w = self.field.width();
        let mut prev: Option<u32> = None;
        for &i in nodes {
            if i as u64 >= total {
                return Err(WorldError::OutOfBounds {
                    what,
                    index: i as u64,
                    len: total,
                });
            }
            if prev.is_some_and(|p| p >= i) {
                return Err(bad(i, "breaks the strictly ascending order"));
            }
            prev = Some(i);
            if self.field.is_border(i % w, i / w) {
                return Err(bad(i, "lies on the border, which is never changed"));
            }
        }
        Ok(())
    }

    /// Writes checked values and marks the touched chunks dirty.
    fn write(&mut self, nodes: &[u32], values: &[f32], mats: &[u8]) {
        {
            let vals = self.field.values_mut();
            for (&i, &v) in nodes.iter().zip(values) {
                vals[i as usize] = v;
            }
        }
        // An edit without materials (`mats` empty) leaves them alone.
        let ids = self.materials.ids_mut();
        for (&i, &m) in nodes.iter().zip(mats) {
            ids[i as usize] = m;
        }
        self.mark_nodes(nodes);
    }

    pub(crate) fn squares_options(&self) -> SquaresOptions {
        let mut o = SquaresOptions::DEFAULT;
        o.iso = self.params.iso;
        o
    }

    /// Rebuilds dirty chunks (mesh, segments, polylines, colliders and, when
    /// [`Side2dParams::strip_width_cells`] is above zero, the rim strip), oldest
    /// first.
    ///
    /// With `Some(budget)` it stops once the budget is spent — after at least
    /// one chunk — and reports how many remain, so a game can spread the work
    /// over frames. With `None` it rebuilds every dirty chunk. With the
    /// `parallel` feature, batches of chunks are rebuilt on rayon's threads;
    /// the result does not depend on the thread count. Chunk buffers are
    /// reused, so a steady edit-and-rebuild loop does not reallocate them.
    pub fn rebuild(&mut self, budget: Option<Duration>) -> RebuildReport {
        let start = Instant::now();
        let options = self.squares_options();
        let input = RebuildInput {
            field: &self.field,
            materials: &self.materials,
            options,
            tolerance: self.params.collider_tolerance_cells * self.field.cell_size(),
            strip_width: self.params.strip_width_cells * self.field.cell_size(),
        };
        let total = self.queue.len();
        let step = match budget {
            None => total.max(1),
            Some(_) => batch_size(),
        };
        let mut done = 0;
        while done < total {
            let end = (done + step).min(total);
            rebuild_batch(
                &input,
                &mut self.chunks,
                &self.queue[done..end],
                &self.pool,
                &mut self.work,
            );
            done = end;
            if budget.is_some_and(|b| start.elapsed() >= b) {
                break;
            }
        }
        self.queue.drain(..done);
        RebuildReport {
            rebuilt: done,
            remaining: self.queue.len(),
        }
    }

    /// Rebuilds every dirty chunk.
    pub fn rebuild_all(&mut self) {
        self.rebuild(None);
    }
}

fn check_material_ids(materials: &MaterialGrid, table: &MaterialTable) -> Result<(), WorldError> {
    let mut seen = [false; 256];
    for &id in materials.ids() {
        seen[id as usize] = true;
    }
    if let Some(id) = (0..256).find(|&id| seen[id] && table.get(id as u8).is_none()) {
        return Err(WorldError::param(
            "materials",
            id,
            "the material grid uses an id that the material table does not have",
        ));
    }
    Ok(())
}

/// Chunks per batch under a time budget: one per worker thread.
fn batch_size() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads().max(1)
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// Takes a scratch from the pool and gives it back when dropped.
struct Pooled<'a> {
    pool: &'a Mutex<Vec<ChunkScratch>>,
    scratch: Option<ChunkScratch>,
}

impl<'a> Pooled<'a> {
    fn take(pool: &'a Mutex<Vec<ChunkScratch>>) -> Self {
        let scratch = pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        Pooled {
            pool,
            scratch: Some(scratch),
        }
    }

    fn get(&mut self) -> &mut ChunkScratch {
        self.scratch.get_or_insert_with(ChunkScratch::default)
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.scratch.take() {
            self.pool.lock().unwrap_or_else(|e| e.into_inner()).push(s);
        }
    }
}

fn rebuild_batch(
    input: &RebuildInput<'_>,
    chunks: &mut [Side2dChunk],
    batch: &[u32],
    pool: &Mutex<Vec<ChunkScratch>>,
    work: &mut Vec<Side2dChunk>,
) {
    #[cfg(feature = "parallel")]
    if batch.len() >= PARALLEL_MIN_CHUNKS && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        work.clear();
        work.extend(
            batch
                .iter()
                .map(|&i| std::mem::take(&mut chunks[i as usize])),
        );
        work.par_iter_mut().for_each_init(
            || Pooled::take(pool),
            |scratch, chunk| rebuild_chunk(input, chunk, scratch.get()),
        );
        for (&i, chunk) in batch.iter().zip(work.drain(..)) {
            chunks[i as usize] = chunk;
        }
        return;
    }
    let _ = work;
    let mut scratch = Pooled::take(pool);
    for &i in batch {
        rebuild_chunk(input, &mut chunks[i as usize], scratch.get());
    }
}

/// Rounds an edit's new values to `storage`'s grid and drops the nodes that
/// then change nothing; the rectangle shrinks to the nodes left (empty when
/// none is).
fn snap_edit(edit: &mut Side2dEdit, storage: crate::Side2dStorage, width: u32) {
    let mats = !edit.mat_after.is_empty();
    let mut keep = 0;
    let mut rect = NodeRect::default();
    for k in 0..edit.nodes.len() {
        let after = storage.snap(edit.after[k]);
        let same_value = after.to_bits() == edit.before[k].to_bits();
        if same_value && (!mats || edit.mat_after[k] == edit.mat_before[k]) {
            continue;
        }
        let i = edit.nodes[k];
        edit.nodes[keep] = i;
        edit.before[keep] = edit.before[k];
        edit.after[keep] = after;
        if mats {
            edit.mat_before[keep] = edit.mat_before[k];
            edit.mat_after[keep] = edit.mat_after[k];
        }
        let (x, y) = (i % width, i / width);
        rect = rect.union(&NodeRect::new(x, y, x + 1, y + 1));
        keep += 1;
    }
    edit.nodes.truncate(keep);
    edit.before.truncate(keep);
    edit.after.truncate(keep);
    if mats {
        edit.mat_before.truncate(keep);
        edit.mat_after.truncate(keep);
    }
    edit.rect = rect;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Side2dWorld>();
        check::<Side2dChunk>();
    }

    #[test]
    fn node_to_chunk_mapping_covers_edges_and_corners() {
        let p = Side2dParams::DEFAULT
            .with_generator(isoterra_field::Side2dGen::DEFAULT.with_size(10, 10))
            .with_chunk_cells(4);
        let mut f = Field2::new(11, 11, -1.0).unwrap();
        f.clear_border(-1.0).unwrap();
        let m = MaterialGrid::like(&f, 0);
        let mut w = Side2dWorld::from_parts(&p, f, m).unwrap();
        w.rebuild_all();
        let mut marked = |x: u32, y: u32| {
            w.mark_node(x, y);
            let mut v: Vec<[u32; 2]> = w.dirty_chunks().collect();
            v.sort();
            w.rebuild_all();
            v
        };
        assert_eq!(marked(0, 0), vec![[0, 0]]);
        assert_eq!(marked(4, 0), vec![[0, 0], [1, 0]]);
        assert_eq!(marked(8, 8), vec![[1, 1], [1, 2], [2, 1], [2, 2]]);
        assert_eq!(marked(10, 10), vec![[2, 2]]);
        assert_eq!(marked(9, 3), vec![[2, 0]]);
    }
}
