//! The documents over different stores: the same strokes, undos and redos
//! over a `MemoryStore` and over a `WorldFile` give the same world, the same
//! history and the same stored bytes; a document reopened from a memory
//! store restores its world; and a store whose commits fail leaves world and
//! store exactly as they were.

use std::collections::BTreeSet;
use std::path::Path;

use isoterra_field::{Side2dGen, Side2dPreset, VoxelGen, VoxelPreset};
use isoterra_store::{
    BakedRow, ChunkChange, ChunkKey, ChunkLayer, ChunkStore, ChunkVisitor, HeightmapDocument,
    MapDocument, MemoryStore, NewStroke, Side2dDocument, StoreError, StrokeCounts, StrokeRecord,
    VoxelDocument, WorldFile, WorldMeta,
};
use isoterra_world::{
    HeightBrush, HeightTool, HeightmapParams, MapBrush, MapParams, MapStroke, MapTool, Side2dBrush,
    Side2dParams, Side2dTool, VoxelBrush, VoxelParams, VoxelTool,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Small worlds of each kind.

fn side2d_params() -> Side2dParams {
    Side2dParams::DEFAULT.with_chunk_cells(16).with_generator(
        Side2dGen::DEFAULT
            .with_preset(Side2dPreset::Hills)
            .with_seed(5)
            .with_size(64, 32)
            .with_feature_cells(8.0)
            .with_fill(0.5),
    )
}

fn voxel_params() -> VoxelParams {
    VoxelParams::DEFAULT
        .with_chunk_cells(8)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 42))
}

fn heightmap_params() -> HeightmapParams {
    HeightmapParams::DEFAULT.with_chunk_cells(16).with_seed(11)
}

fn map_params() -> MapParams {
    MapParams::DEFAULT
        .with_size(64, 48)
        .with_chunk_cells(16)
        .with_seed(9)
}

/// One step of a random session. A brush is `(tool, x, y, radius)` with
/// `x`, `y` in `0..1` (scaled to each world) and `tool` picking one of the
/// kind's tools.
#[derive(Debug, Clone)]
enum Op {
    Stroke(u8, f32, f32, f32),
    /// Two stamps recorded as one stroke.
    Stamps([(u8, f32, f32, f32); 2]),
    Undo,
    Redo,
}

fn brush_strategy() -> impl Strategy<Value = (u8, f32, f32, f32)> {
    (0u8..4, 0.0f32..1.0, 0.0f32..1.0, 1.5f32..5.0)
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => brush_strategy().prop_map(|(t, x, y, r)| Op::Stroke(t, x, y, r)),
        1 => (brush_strategy(), brush_strategy()).prop_map(|(a, b)| Op::Stamps([a, b])),
        2 => Just(Op::Undo),
        2 => Just(Op::Redo),
    ]
}

/// A document of any kind over any store, as the tests drive it.
trait TestDoc {
    fn run(&mut self, op: &Op) -> Result<Option<i64>, StoreError>;
    fn hash(&self) -> String;
    /// `(strokes_total, undo_position, chunks_stored)` as the document
    /// reports them.
    fn counts(&self) -> (u64, u64, u64);
    fn chunk_store(&self) -> &dyn ChunkStore;
}

fn side2d_brush((t, x, y, r): (u8, f32, f32, f32)) -> Side2dBrush {
    let tool = if t % 2 == 0 {
        Side2dTool::Dig
    } else {
        Side2dTool::Fill
    };
    Side2dBrush::new(tool, [x * 64.0, y * 32.0], r).with_material(2)
}

fn voxel_brush((t, x, y, r): (u8, f32, f32, f32)) -> VoxelBrush {
    let tool = [
        VoxelTool::Dig,
        VoxelTool::Add,
        VoxelTool::Smooth,
        VoxelTool::Dig,
    ][t as usize % 4];
    // Around the origin, across chunk borders (chunks of 8 cells).
    VoxelBrush::new(tool, [x * 16.0 - 8.0, y * 16.0 - 8.0, (x - y) * 6.0], r)
}

fn height_brush((t, x, y, r): (u8, f32, f32, f32)) -> HeightBrush {
    let tool = [
        HeightTool::Raise,
        HeightTool::Lower,
        HeightTool::Smooth,
        HeightTool::Flatten,
    ][t as usize % 4];
    HeightBrush::new(tool, [x * 48.0 - 24.0, y * 48.0 - 24.0], r * 2.0)
}

fn map_stroke((t, x, y, r): (u8, f32, f32, f32)) -> MapStroke {
    let tool = [
        MapTool::Raise,
        MapTool::CliffUp,
        MapTool::Paint,
        MapTool::Pathing,
    ][t as usize % 4];
    let at = [x * 64.0, y * 48.0];
    MapStroke::new(
        MapBrush::new(tool, r * 1.5)
            .with_strength(0.8)
            .with_texture(3),
        vec![at, [at[0] + 3.0, at[1] + 1.0]],
    )
}

macro_rules! impl_test_doc {
    ($doc:ident, $stroke:expr, $stamps:expr) => {
        impl<S: ChunkStore> TestDoc for $doc<S> {
            fn run(&mut self, op: &Op) -> Result<Option<i64>, StoreError> {
                match op {
                    Op::Stroke(t, x, y, r) => $stroke(self, (*t, *x, *y, *r)),
                    Op::Stamps(b) => $stamps(self, b),
                    Op::Undo => self.undo(),
                    Op::Redo => self.redo(),
                }
            }

            fn hash(&self) -> String {
                self.content_hash()
            }

            fn counts(&self) -> (u64, u64, u64) {
                let i = self.info();
                (i.strokes_total, i.undo_position, i.chunks_stored)
            }

            fn chunk_store(&self) -> &dyn ChunkStore {
                self.store()
            }
        }
    };
}

impl_test_doc!(
    Side2dDocument,
    |d: &mut Side2dDocument<S>, b| d.stroke(&side2d_brush(b)).map(|o| o.id),
    |d: &mut Side2dDocument<S>, b: &[(u8, f32, f32, f32); 2]| d
        .stroke_stamps(&b.map(side2d_brush))
        .map(|o| o.id)
);
impl_test_doc!(
    VoxelDocument,
    |d: &mut VoxelDocument<S>, b| d.stroke(&voxel_brush(b)).map(|o| o.id),
    |d: &mut VoxelDocument<S>, b: &[(u8, f32, f32, f32); 2]| d
        .stroke_stamps(&b.map(voxel_brush))
        .map(|o| o.id)
);
impl_test_doc!(
    HeightmapDocument,
    |d: &mut HeightmapDocument<S>, b| d.stroke(&height_brush(b)).map(|o| o.id),
    |d: &mut HeightmapDocument<S>, b: &[(u8, f32, f32, f32); 2]| d
        .stroke_stamps(&b.map(height_brush))
        .map(|o| o.id)
);
// Map strokes have no stamps: a stroke already holds several dabs.
impl_test_doc!(
    MapDocument,
    |d: &mut MapDocument<S>, b| d.stroke(&map_stroke(b)).map(|o| o.id),
    |d: &mut MapDocument<S>, b: &[(u8, f32, f32, f32); 2]| d
        .stroke(&map_stroke(b[0]))
        .map(|o| o.id)
);

/// Everything a store holds that the documents write: chunk rows, stroke
/// counts and the world stamp.
fn contents(store: &dyn ChunkStore) -> Contents {
    let rows = store
        .chunk_keys()
        .unwrap()
        .into_iter()
        .map(|k| {
            let payload = store.chunk(&k).unwrap().expect("listed chunks exist");
            (k, payload)
        })
        .collect();
    (
        rows,
        store.stroke_counts().unwrap(),
        store.world_stamp().unwrap(),
    )
}

/// What [`contents`] reads.
type Contents = (Vec<(ChunkKey, Vec<u8>)>, StrokeCounts, String);

/// A document's whole observable state: content hash, counts, store.
type State = (String, (u64, u64, u64), Contents);

/// A document's whole observable state.
fn state(doc: &dyn TestDoc) -> State {
    (doc.hash(), doc.counts(), contents(doc.chunk_store()))
}

/// Runs `ops` on both documents and checks after every step that they
/// agree on results, content hashes, counts and stored bytes.
fn assert_in_step(a: &mut dyn TestDoc, b: &mut dyn TestDoc, ops: &[Op]) {
    assert_eq!(state(a), state(b), "fresh documents");
    for (i, op) in ops.iter().enumerate() {
        let ra = a.run(op).map_err(|e| e.to_string());
        let rb = b.run(op).map_err(|e| e.to_string());
        assert_eq!(ra, rb, "step {i}: {op:?}");
        assert_eq!(state(a), state(b), "after step {i}: {op:?}");
    }
}

fn cases() -> ProptestConfig {
    ProptestConfig::with_cases(16)
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn side2d_memory_and_file_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..10)) {
        let dir = tempfile::tempdir().unwrap();
        let mut file = Side2dDocument::create(dir.path().join("w.isoterra"), &side2d_params()).unwrap();
        let mut memory = Side2dDocument::create_in(MemoryStore::new(), &side2d_params()).unwrap();
        assert_in_step(&mut file, &mut memory, &ops);
    }

    #[test]
    fn voxel_memory_and_file_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..8)) {
        let dir = tempfile::tempdir().unwrap();
        let mut file = VoxelDocument::create(dir.path().join("w.isoterra"), &voxel_params()).unwrap();
        let mut memory = VoxelDocument::create_in(MemoryStore::new(), &voxel_params()).unwrap();
        assert_in_step(&mut file, &mut memory, &ops);
    }

    #[test]
    fn heightmap_memory_and_file_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..10)) {
        let dir = tempfile::tempdir().unwrap();
        let mut file = HeightmapDocument::create(dir.path().join("w.isoterra"), &heightmap_params()).unwrap();
        let mut memory = HeightmapDocument::create_in(MemoryStore::new(), &heightmap_params()).unwrap();
        assert_in_step(&mut file, &mut memory, &ops);
    }

    #[test]
    fn map_memory_and_file_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..8)) {
        let dir = tempfile::tempdir().unwrap();
        let mut file = MapDocument::create(dir.path().join("w.isoterra"), &map_params()).unwrap();
        let mut memory = MapDocument::create_in(MemoryStore::new(), &map_params()).unwrap();
        assert_in_step(&mut file, &mut memory, &ops);
    }
}

// ---------------------------------------------------------------------------
// The same documents over a PostgreSQL server (feature `postgres`).

#[cfg(feature = "postgres")]
mod pg_support;

/// A new world's store on the test server, or `None` when there is none.
#[cfg(feature = "postgres")]
fn pg_store(test: &str) -> Option<isoterra_store::PgStore> {
    let server = pg_support::server(test)?;
    Some(isoterra_store::PgStore::open(&pg_support::world_url(&server, "docs")).unwrap())
}

#[cfg(feature = "postgres")]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn side2d_memory_and_postgres_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..10)) {
        let Some(pg) = pg_store("side2d_memory_and_postgres_stay_in_step") else { return Ok(()) };
        let mut pg = Side2dDocument::create_in(pg, &side2d_params()).unwrap();
        let mut memory = Side2dDocument::create_in(MemoryStore::new(), &side2d_params()).unwrap();
        assert_in_step(&mut pg, &mut memory, &ops);
    }

    #[test]
    fn voxel_memory_and_postgres_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..8)) {
        let Some(pg) = pg_store("voxel_memory_and_postgres_stay_in_step") else { return Ok(()) };
        let mut pg = VoxelDocument::create_in(pg, &voxel_params()).unwrap();
        let mut memory = VoxelDocument::create_in(MemoryStore::new(), &voxel_params()).unwrap();
        assert_in_step(&mut pg, &mut memory, &ops);
    }

    #[test]
    fn heightmap_memory_and_postgres_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..10)) {
        let Some(pg) = pg_store("heightmap_memory_and_postgres_stay_in_step") else { return Ok(()) };
        let mut pg = HeightmapDocument::create_in(pg, &heightmap_params()).unwrap();
        let mut memory = HeightmapDocument::create_in(MemoryStore::new(), &heightmap_params()).unwrap();
        assert_in_step(&mut pg, &mut memory, &ops);
    }

    #[test]
    fn map_memory_and_postgres_stay_in_step(ops in prop::collection::vec(op_strategy(), 1..8)) {
        let Some(pg) = pg_store("map_memory_and_postgres_stay_in_step") else { return Ok(()) };
        let mut pg = MapDocument::create_in(pg, &map_params()).unwrap();
        let mut memory = MapDocument::create_in(MemoryStore::new(), &map_params()).unwrap();
        assert_in_step(&mut pg, &mut memory, &ops);
    }
}

/// Each kind's document over PostgreSQL, closed and opened again from the
/// server: the same world, counts and history.
#[cfg(feature = "postgres")]
#[test]
fn documents_reopened_from_postgres_restore_the_world() {
    use isoterra_store::PgStore;
    let Some(server) = pg_support::server("documents_reopened_from_postgres_restore_the_world")
    else {
        return;
    };
    let ops = session();
    let url = |tag| pg_support::world_url(&server, tag);
    let (u1, u2, u3, u4) = (
        url("re-side"),
        url("re-voxel"),
        url("re-height"),
        url("re-map"),
    );
    let reopen = |u: &str| PgStore::open_existing(u).unwrap();
    reopen_check(
        Side2dDocument::create_in(PgStore::open(&u1).unwrap(), &side2d_params()).unwrap(),
        &ops,
        |d| {
            drop(d);
            Side2dDocument::open_in(reopen(&u1)).unwrap()
        },
    );
    reopen_check(
        VoxelDocument::create_in(PgStore::open(&u2).unwrap(), &voxel_params()).unwrap(),
        &ops,
        |d| {
            drop(d);
            VoxelDocument::open_in(reopen(&u2)).unwrap()
        },
    );
    reopen_check(
        HeightmapDocument::create_in(PgStore::open(&u3).unwrap(), &heightmap_params()).unwrap(),
        &ops,
        |d| {
            drop(d);
            HeightmapDocument::open_in(reopen(&u3)).unwrap()
        },
    );
    reopen_check(
        MapDocument::create_in(PgStore::open(&u4).unwrap(), &map_params()).unwrap(),
        &ops,
        |d| {
            drop(d);
            MapDocument::open_in(reopen(&u4)).unwrap()
        },
    );
}

/// Two handles of one world, as two editor servers would hold it: a stale
/// writer is refused and changes nothing; after following the log it
/// writes again, and both end with the same world.
#[cfg(feature = "postgres")]
#[test]
fn a_stale_postgres_writer_is_refused_until_it_follows() {
    use isoterra_store::PgStore;
    let Some(server) = pg_support::server("a_stale_postgres_writer_is_refused_until_it_follows")
    else {
        return;
    };
    let url = pg_support::world_url(&server, "two");
    let mut a =
        HeightmapDocument::create_in(PgStore::open(&url).unwrap(), &heightmap_params()).unwrap();
    let mut b = HeightmapDocument::open_in(PgStore::open_existing(&url).unwrap()).unwrap();
    a.stroke(&height_brush((0, 0.4, 0.4, 3.0))).unwrap();
    let before = b.content_hash();
    let refused = b.stroke(&height_brush((1, 0.6, 0.6, 3.0)));
    assert!(
        matches!(refused, Err(StoreError::Conflict { .. })),
        "{refused:?}"
    );
    assert_eq!(b.content_hash(), before, "a refused stroke changes nothing");
    let followed = b.follow().unwrap();
    assert_eq!(followed.applied, 1);
    assert_eq!(b.content_hash(), a.content_hash());
    b.stroke(&height_brush((1, 0.6, 0.6, 3.0))).unwrap();
    a.follow().unwrap();
    assert_eq!(a.content_hash(), b.content_hash());
    assert_eq!(state(&a), state(&b));
}

// ---------------------------------------------------------------------------
// A store whose commits fail on demand.

/// Wraps a store and refuses the commits (chunk puts, strokes, undo and
/// redo marks) whose 0-based number is in `fail`, with
/// [`StoreError::Busy`] and without touching the inner store.
struct Failing<S> {
    inner: S,
    fail: BTreeSet<usize>,
    commits: usize,
    refused: usize,
}

impl<S: ChunkStore> Failing<S> {
    fn new(inner: S, fail: impl IntoIterator<Item = usize>) -> Self {
        Failing {
            inner,
            fail: fail.into_iter().collect(),
            commits: 0,
            refused: 0,
        }
    }

    /// Counts a commit; an error when this one is to fail.
    fn gate(&mut self) -> Result<(), StoreError> {
        let n = self.commits;
        self.commits += 1;
        if self.fail.contains(&n) {
            self.refused += 1;
            return Err(StoreError::Busy {
                path: self.inner.location().to_path_buf(),
            });
        }
        Ok(())
    }
}

impl<S: ChunkStore> ChunkStore for Failing<S> {
    fn backend(&self) -> &'static str {
        "failing"
    }

    fn location(&self) -> &Path {
        self.inner.location()
    }

    fn check_current(&self) -> Result<(), StoreError> {
        self.inner.check_current()
    }

    fn create_world(
        &mut self,
        meta: &WorldMeta,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        self.inner.create_world(meta, entries)
    }

    fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.inner.meta_entry(key)
    }

    fn migrate_format(
        &mut self,
        format_version: u32,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        self.inner.migrate_format(format_version, entries)
    }

    fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.chunk(key)
    }

    fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError> {
        self.inner.chunk_keys()
    }

    fn visit_chunks(&self, layer: ChunkLayer, f: &mut ChunkVisitor<'_>) -> Result<(), StoreError> {
        self.inner.visit_chunks(layer, f)
    }

    fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        self.gate()?;
        self.inner.put_chunks(changes)
    }

    fn commit_stroke(
        &mut self,
        stroke: &NewStroke,
        changes: &[ChunkChange],
    ) -> Result<i64, StoreError> {
        self.gate()?;
        self.inner.commit_stroke(stroke, changes)
    }

    fn mark_undone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        self.gate()?;
        self.inner.mark_undone(id, changes)
    }

    fn mark_redone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        self.gate()?;
        self.inner.mark_redone(id, changes)
    }

    fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
        self.inner.stroke(id)
    }

    fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        self.inner.last_done_stroke()
    }

    fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        self.inner.first_undone_stroke()
    }

    fn stroke_counts(&self) -> Result<StrokeCounts, StoreError> {
        self.inner.stroke_counts()
    }

    fn done_stroke_ids(&self) -> Result<Vec<i64>, StoreError> {
        self.inner.done_stroke_ids()
    }

    fn world_stamp(&self) -> Result<String, StoreError> {
        self.inner.world_stamp()
    }

    fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
        self.inner.put_baked(rows)
    }

    fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
        self.inner.baked_row(key)
    }

    fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
        self.inner.baked_keys_from(source)
    }

    fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError> {
        self.inner.baked_keys_after(after, limit)
    }

    fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
        self.inner.baked_content_hash()
    }
}

/// Runs `ops` on a document whose store refuses some commits and on a
/// reference document over a plain store that only gets the operations
/// that succeeded: a refused operation must leave the document (world,
/// counts) and its store exactly as before, so the two stay in step.
fn assert_failures_change_nothing(
    failing: &mut dyn TestDoc,
    reference: &mut dyn TestDoc,
    ops: &[Op],
) -> usize {
    let mut refused = 0;
    for (i, op) in ops.iter().enumerate() {
        let before = state(failing);
        match failing.run(op) {
            Ok(id) => {
                assert_eq!(reference.run(op).unwrap(), id, "step {i}: {op:?}");
            }
            Err(e) => {
                assert!(matches!(e, StoreError::Busy { .. }), "step {i}: {e}");
                assert_eq!(state(failing), before, "a refused {op:?} changed something");
                refused += 1;
            }
        }
        assert_eq!(
            (failing.hash(), failing.counts()),
            (reference.hash(), reference.counts()),
            "after step {i}: {op:?}"
        );
        assert_eq!(
            contents(failing.chunk_store()).0,
            contents(reference.chunk_store()).0,
            "stored chunks after step {i}: {op:?}"
        );
    }
    refused
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn side2d_refused_commits_change_nothing(
        ops in prop::collection::vec(op_strategy(), 1..10),
        fail in prop::collection::btree_set(0usize..10, 0..5),
    ) {
        let store = Failing::new(MemoryStore::new(), fail);
        let mut failing = Side2dDocument::create_in(store, &side2d_params()).unwrap();
        let mut reference = Side2dDocument::create_in(MemoryStore::new(), &side2d_params()).unwrap();
        let refused = assert_failures_change_nothing(&mut failing, &mut reference, &ops);
        prop_assert_eq!(refused, failing.store().refused);
    }

    #[test]
    fn voxel_refused_commits_change_nothing(
        ops in prop::collection::vec(op_strategy(), 1..8),
        fail in prop::collection::btree_set(0usize..8, 0..4),
    ) {
        let store = Failing::new(MemoryStore::new(), fail);
        let mut failing = VoxelDocument::create_in(store, &voxel_params()).unwrap();
        let mut reference = VoxelDocument::create_in(MemoryStore::new(), &voxel_params()).unwrap();
        let refused = assert_failures_change_nothing(&mut failing, &mut reference, &ops);
        prop_assert_eq!(refused, failing.store().refused);
    }

    #[test]
    fn heightmap_refused_commits_change_nothing(
        ops in prop::collection::vec(op_strategy(), 1..10),
        fail in prop::collection::btree_set(0usize..10, 0..5),
    ) {
        let store = Failing::new(MemoryStore::new(), fail);
        let mut failing = HeightmapDocument::create_in(store, &heightmap_params()).unwrap();
        let mut reference = HeightmapDocument::create_in(MemoryStore::new(), &heightmap_params()).unwrap();
        let refused = assert_failures_change_nothing(&mut failing, &mut reference, &ops);
        prop_assert_eq!(refused, failing.store().refused);
    }

    #[test]
    fn map_refused_commits_change_nothing(
        ops in prop::collection::vec(op_strategy(), 1..8),
        fail in prop::collection::btree_set(0usize..8, 0..4),
    ) {
        let store = Failing::new(MemoryStore::new(), fail);
        let mut failing = MapDocument::create_in(store, &map_params()).unwrap();
        let mut reference = MapDocument::create_in(MemoryStore::new(), &map_params()).unwrap();
        let refused = assert_failures_change_nothing(&mut failing, &mut reference, &ops);
        prop_assert_eq!(refused, failing.store().refused);
    }
}

#[test]
fn a_refused_stroke_undo_and_redo_each_change_nothing() {
    // Commits: 0 stroke (ok), 1 stroke (refused), 2 undo (refused), 3 undo
    // (ok), 4 redo (refused), 5 redo (ok).
    let store = Failing::new(MemoryStore::new(), [1, 2, 4]);
    let mut doc = VoxelDocument::create_in(store, &voxel_params()).unwrap();
    let fresh = doc.content_hash();
    let first = doc
        .stroke(&voxel_brush((0, 0.5, 0.5, 3.0)))
        .unwrap()
        .id
        .unwrap();
    let one = doc.content_hash();
    assert_ne!(one, fresh);
    let before = state(&doc);
    let err = doc.stroke(&voxel_brush((1, 0.2, 0.7, 2.5))).unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err}");
    assert_eq!(state(&doc), before);
    assert!(matches!(doc.undo(), Err(StoreError::Busy { .. })));
    assert_eq!(state(&doc), before);
    assert_eq!(doc.undo().unwrap(), Some(first));
    assert_eq!(doc.content_hash(), fresh);
    let undone = state(&doc);
    assert!(matches!(doc.redo(), Err(StoreError::Busy { .. })));
    assert_eq!(state(&doc), undone);
    assert_eq!(doc.redo().unwrap(), Some(first));
    assert_eq!(doc.content_hash(), one);
    assert_eq!(doc.store().refused, 3);
}

#[test]
fn a_refused_import_leaves_no_map_behind_in_memory() {
    // `create_with_layers_in` stores the imported chunks in one commit; when
    // it is refused the error comes back and the store holds no chunks.
    let params = map_params();
    let mut layers = isoterra_world::MapWorld::generate(&params).unwrap();
    layers.height[10] += 3.0;
    let store = Failing::new(MemoryStore::new(), [0]);
    let err = MapDocument::create_with_layers_in(store, &params, layers.clone()).unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err}");
    let doc = MapDocument::create_with_layers_in(MemoryStore::new(), &params, layers).unwrap();
    assert_eq!(doc.info().chunks_stored, 1);
    assert_eq!(doc.store().chunk_count(), 1);
}

// ---------------------------------------------------------------------------
// Reopening from memory, boxed stores, and the seam's edges.

/// Runs a few strokes and one undo, moves the store out and opens it
/// again: world, counts and history must come back.
fn reopen_check<D: TestDoc>(
    mut doc: D,
    ops: &[Op],
    reopen: impl FnOnce(D) -> D,
) -> (String, (u64, u64, u64)) {
    for op in ops {
        doc.run(op).unwrap();
    }
    let before = state(&doc);
    let mut again = reopen(doc);
    assert_eq!(state(&again), before);
    // The undone stroke can be redone, and gives what redoing it gave
    // before.
    let redone = again.run(&Op::Redo).unwrap();
    assert!(redone.is_some());
    (again.hash(), again.counts())
}

fn session() -> Vec<Op> {
    vec![
        Op::Stroke(0, 0.3, 0.4, 3.0),
        Op::Stroke(1, 0.6, 0.5, 2.5),
        Op::Stamps([(0, 0.5, 0.5, 2.0), (1, 0.55, 0.5, 2.0)]),
        Op::Undo,
    ]
}

#[test]
fn documents_reopened_from_a_memory_store_restore_the_world() {
    // Each kind: the reopened document redoes to the same state as one
    // that never closed.
    let ops = session();
    let mut redo = ops.clone();
    redo.push(Op::Redo);

    let run_all = |doc: &mut dyn TestDoc, ops: &[Op]| {
        for op in ops {
            doc.run(op).unwrap();
        }
        (doc.hash(), doc.counts())
    };

    let p = side2d_params();
    let got = reopen_check(
        Side2dDocument::create_in(MemoryStore::new(), &p).unwrap(),
        &ops,
        |d| Side2dDocument::open_in(d.into_store()).unwrap(),
    );
    let mut straight = Side2dDocument::create_in(MemoryStore::new(), &p).unwrap();
    assert_eq!(got, run_all(&mut straight, &redo));

    let p = voxel_params();
    let got = reopen_check(
        VoxelDocument::create_in(MemoryStore::new(), &p).unwrap(),
        &ops,
        |d| VoxelDocument::open_in(d.into_store()).unwrap(),
    );
    let mut straight = VoxelDocument::create_in(MemoryStore::new(), &p).unwrap();
    assert_eq!(got, run_all(&mut straight, &redo));

    let p = heightmap_params();
    let got = reopen_check(
        HeightmapDocument::create_in(MemoryStore::new(), &p).unwrap(),
        &ops,
        |d| HeightmapDocument::open_in(d.into_store()).unwrap(),
    );
    let mut straight = HeightmapDocument::create_in(MemoryStore::new(), &p).unwrap();
    assert_eq!(got, run_all(&mut straight, &redo));

    let p = map_params();
    let got = reopen_check(
        MapDocument::create_in(MemoryStore::new(), &p).unwrap(),
        &ops,
        |d| MapDocument::open_in(d.into_store()).unwrap(),
    );
    let mut straight = MapDocument::create_in(MemoryStore::new(), &p).unwrap();
    assert_eq!(got, run_all(&mut straight, &redo));
}

#[test]
fn a_world_file_opened_through_the_generic_path_matches_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.isoterra");
    let mut doc = Side2dDocument::create(&path, &side2d_params()).unwrap();
    for op in session() {
        doc.run(&op).unwrap();
    }
    let expected = state(&doc);
    doc.close().unwrap();
    let generic = Side2dDocument::open_in(WorldFile::open(&path).unwrap()).unwrap();
    assert_eq!(state(&generic), expected);
    assert_eq!(generic.store().path(), path.as_path());
    drop(generic);
    let plain = Side2dDocument::open(&path).unwrap();
    assert_eq!(state(&plain), expected);
}

#[test]
fn documents_run_over_boxed_and_borrowed_stores() {
    // A store chosen at run time.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boxed.isoterra");
    Side2dDocument::create(&path, &side2d_params())
        .unwrap()
        .close()
        .unwrap();
    let stores: Vec<Box<dyn ChunkStore>> = vec![
        Box::new(WorldFile::open(&path).unwrap()),
        Box::new(MemoryStore::named("boxed")),
    ];
    let mut states = Vec::new();
    for store in stores {
        let mut doc = if store.backend() == "sqlite" {
            Side2dDocument::open_in(store).unwrap()
        } else {
            Side2dDocument::create_in(store, &side2d_params()).unwrap()
        };
        for op in session() {
            doc.run(&op).unwrap();
        }
        states.push((doc.hash(), doc.counts(), contents(doc.store().as_ref())));
    }
    assert_eq!(states[0], states[1]);

    // A borrowed store stays with its owner after the document is gone.
    let mut memory = MemoryStore::new();
    let mut doc = VoxelDocument::create_in(&mut memory, &voxel_params()).unwrap();
    let id = doc
        .stroke(&voxel_brush((0, 0.5, 0.5, 3.0)))
        .unwrap()
        .id
        .unwrap();
    let hash = doc.content_hash();
    drop(doc);
    assert_eq!(memory.last_done_stroke().unwrap().map(|r| r.id), Some(id));
    let doc = VoxelDocument::open_in(memory).unwrap();
    assert_eq!(doc.content_hash(), hash);
}

#[test]
fn the_generic_constructors_refuse_what_does_not_fit() {
    // A world file always holds its world already.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("taken.isoterra");
    VoxelDocument::create(&path, &voxel_params()).unwrap();
    let err =
        Side2dDocument::create_in(WorldFile::open(&path).unwrap(), &side2d_params()).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
    // A memory store holds one world.
    let doc = HeightmapDocument::create_in(MemoryStore::named("one"), &heightmap_params()).unwrap();
    let err = MapDocument::create_in(doc.into_store(), &map_params()).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
    // Another kind is refused with the store's name in the error.
    let store = VoxelDocument::create_in(MemoryStore::named("vox"), &voxel_params())
        .unwrap()
        .into_store();
    match Side2dDocument::open_in(store) {
        Err(StoreError::WrongKind {
            path,
            expected,
            found,
        }) => {
            assert_eq!(path, Path::new("memory:vox"));
            assert_eq!((expected.as_str(), found.as_str()), ("side2d", "voxel"));
        }
        other => panic!("expected WrongKind, got {other:?}"),
    }
    // An empty store holds no world.
    let err = VoxelDocument::open_in(MemoryStore::new()).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("memory"), "{err}");
    // Invalid parameters leave the store without a world.
    let bad = VoxelParams::DEFAULT.with_chunk_cells(0);
    assert!(matches!(
        VoxelDocument::create_in(MemoryStore::new(), &bad),
        Err(StoreError::World(_))
    ));
}

#[test]
fn an_old_side2d_world_in_memory_is_migrated_on_open() {
    // A version-1 side2d world (no material table) opens with the default
    // table and is brought up to the current format, as a file would be.
    let doc = Side2dDocument::create_in(MemoryStore::new(), &side2d_params()).unwrap();
    let meta = doc.store().meta().unwrap();
    let old = WorldMeta {
        format_version: 1,
        ..meta
    };
    let mut store = MemoryStore::new();
    store.create_world(&old, &[]).unwrap();
    let doc = Side2dDocument::open_in(store).unwrap();
    let store = doc.into_store();
    assert_eq!(
        store.meta().unwrap().format_version,
        isoterra_store::SIDE2D_FORMAT_VERSION
    );
    assert!(
        store
            .meta_entry(isoterra_store::SIDE2D_MATERIALS_KEY)
            .unwrap()
            .is_some()
    );
}
