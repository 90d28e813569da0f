//! Tests of `Side2dDocument`: strokes are durable, undo restores exact bytes
//! across reopening, failures change nothing, damaged files are reported.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use isoterra_field::{Material, MaterialTable, Side2dGen, Side2dPreset};
use isoterra_store::{
    ChunkData, ChunkEncoding, ChunkKey, ChunkLayer, SIDE2D_FORMAT_VERSION, SIDE2D_KIND,
    SIDE2D_MATERIALS_KEY, Side2dDocument, StoreError, WorldFile, WorldMeta, detect_kind,
    encode_chunk, field2_content_hash, open_any,
};
use isoterra_world::{
    EditDirection, Side2dBrush, Side2dBrushShape, Side2dParams, Side2dStorage, Side2dTool,
    Side2dWorld,
};
use proptest::prelude::*;

/// A small hills world: 64 x 32 cells in chunks of `chunk` cells.
fn params(seed: u64, chunk: u32) -> Side2dParams {
    Side2dParams::DEFAULT
        .with_chunk_cells(chunk)
        .with_generator(
            Side2dGen::DEFAULT
                .with_preset(Side2dPreset::Hills)
                .with_seed(seed)
                .with_size(64, 32)
                .with_feature_cells(8.0)
                .with_fill(0.5),
        )
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn dig(x: f32, y: f32, r: f32) -> Side2dBrush {
    Side2dBrush::new(Side2dTool::Dig, [x, y], r)
}

fn fill(x: f32, y: f32, r: f32) -> Side2dBrush {
    Side2dBrush::new(Side2dTool::Fill, [x, y], r).with_material(2)
}

/// The world's exact bytes: value bits and material ids.
fn bytes_of(world: &Side2dWorld) -> (Vec<u32>, Vec<u8>) {
    (
        world.field().values().iter().map(|v| v.to_bits()).collect(),
        world.materials().ids().to_vec(),
    )
}

fn hash_of(world: &Side2dWorld) -> String {
    let f = world.field();
    field2_content_hash(f.width(), f.height(), f.values(), world.materials().ids())
}

/// A stroke that surely changes something: a dig in the solid lower half and
/// a fill in the empty upper half.
fn strokes() -> [Side2dBrush; 2] {
    [dig(20.0, 8.0, 4.0), fill(44.0, 26.0, 3.0)]
}

fn new_doc(dir: &Path, name: &str) -> (PathBuf, Side2dDocument) {
    let path = dir.join(name);
    let doc = Side2dDocument::create(&path, &params(7, 16)).unwrap();
    (path, doc)
}

fn checkpointed_bytes(doc: &Side2dDocument) -> Vec<u8> {
    doc.file().checkpoint().unwrap();
    fs::read(doc.path()).unwrap()
}

#[test]
fn create_stores_only_metadata_and_open_regenerates() {
    let dir = temp();
    let (path, doc) = new_doc(dir.path(), "a.isoterra");
    let generated = Side2dWorld::generate(&params(7, 16)).unwrap();
    assert_eq!(bytes_of(doc.world()), bytes_of(&generated));
    let info = doc.info();
    assert_eq!(info.kind, "side2d");
    assert_eq!(info.seed, 7);
    assert_eq!(info.preset, "hills");
    assert_eq!(
        (info.width_cells, info.height_cells, info.chunk_cells),
        (64, 32, 16)
    );
    assert_eq!(info.chunks_total, 8);
    assert_eq!(
        (
            info.chunks_stored,
            info.strokes_total,
            info.undo_position,
            info.redo_available
        ),
        (0, 0, 0, false)
    );
    let json = serde_json::to_value(&info).unwrap();
    assert_eq!(json["preset"], "hills");
    let hash = doc.content_hash();
    assert_eq!(hash, hash_of(&generated));
    drop(doc);

    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.params(), &params(7, 16));
    // A fresh world has every chunk dirty; meshing goes through the document.
    let first = doc.rebuild_within(Duration::ZERO);
    assert!(first.rebuilt >= 1);
    let rest = doc.rebuild();
    assert_eq!((first.rebuilt + rest.rebuilt, rest.remaining), (8, 0));
    assert_eq!(doc.world().dirty_count(), 0);
    doc.stroke(&strokes()[0]).unwrap();
    assert!(doc.world().dirty_count() > 0);
    drop(doc);
    let meta = open_any(&path).unwrap();
    assert_eq!(meta.kind, SIDE2D_KIND);
    assert_eq!(meta.seed, 7);
    assert_eq!(detect_kind(&path).unwrap(), "side2d");
}

#[test]
fn create_validates_and_leaves_nothing_on_error() {
    let dir = temp();
    let path = dir.path().join("bad.isoterra");
    let err = Side2dDocument::create(&path, &params(1, 0)).unwrap_err();
    assert!(matches!(err, StoreError::World(_)), "{err}");
    assert!(err.to_string().contains("chunk_cells"));
    assert!(!path.exists());
    let (taken, _doc) = new_doc(dir.path(), "taken.isoterra");
    assert!(matches!(
        Side2dDocument::create(&taken, &params(1, 16)),
        Err(StoreError::AlreadyExists { .. })
    ));
}

#[test]
fn stroke_then_undo_restores_exact_bytes_also_after_reopen() {
    let dir = temp();
    let (path, mut doc) = new_doc(dir.path(), "u.isoterra");
    let original = bytes_of(doc.world());
    let original_hash = doc.content_hash();

    let [a, b] = strokes();
    let out = doc.stroke(&a).unwrap();
    assert!(out.id.is_some() && out.changed_nodes > 0 && !out.rect.is_empty());
    let out_b = doc.stroke(&b).unwrap();
    assert!(out_b.id.unwrap() > out.id.unwrap());
    let edited = bytes_of(doc.world());
    let edited_hash = doc.content_hash();
    assert_ne!(edited_hash, original_hash);
    assert!(doc.info().chunks_stored > 0);
    drop(doc);

    // Reopening reproduces the edited world from the stored chunks.
    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(bytes_of(doc.world()), edited);
    assert_eq!(doc.undo().unwrap(), out_b.id);
    assert_eq!(doc.undo().unwrap(), out.id);
    assert_eq!(doc.undo().unwrap(), None);
    assert_eq!(bytes_of(doc.world()), original);
    assert_eq!(doc.content_hash(), original_hash);
    // Every chunk is back to its generated state, so none is stored.
    let info = doc.info();
    assert_eq!(
        (
            info.chunks_stored,
            info.strokes_total,
            info.undo_position,
            info.redo_available
        ),
        (0, 2, 0, true)
    );
    // The counts kept in memory agree with the file.
    assert_eq!(doc.file().chunk_count().unwrap(), 0);
    assert_eq!(doc.file().stroke_counts().unwrap().undone, 2);
    drop(doc);

    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(bytes_of(doc.world()), original);
    assert_eq!(doc.redo().unwrap(), out.id);
    drop(doc);
    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.redo().unwrap(), out_b.id);
    assert_eq!(doc.redo().unwrap(), None);
    assert_eq!(bytes_of(doc.world()), edited);
    assert_eq!(doc.content_hash(), edited_hash);
    doc.file().integrity_check().unwrap();
}

#[test]
fn a_new_stroke_after_undo_drops_the_redo_tail() {
    let dir = temp();
    let (path, mut doc) = new_doc(dir.path(), "t.isoterra");
    let [a, b] = strokes();
    let first = doc.stroke(&a).unwrap().id.unwrap();
    let second = doc.stroke(&b).unwrap().id.unwrap();
    doc.undo().unwrap();
    assert!(doc.info().redo_available);
    let third = doc.stroke(&dig(50.0, 6.0, 3.0)).unwrap().id.unwrap();
    assert!(third > second);
    let info = doc.info();
    assert_eq!(
        (info.strokes_total, info.undo_position, info.redo_available),
        (2, 2, false)
    );
    assert_eq!(doc.redo().unwrap(), None);
    assert!(doc.file().stroke(second).unwrap().is_none());
    let hash = doc.content_hash();
    drop(doc);
    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.undo().unwrap(), Some(third));
    assert_eq!(doc.undo().unwrap(), Some(first));
}

#[test]
fn equal_contents_hash_equal_whatever_the_history() {
    let dir = temp();
    let (p1, mut one) = new_doc(dir.path(), "one.isoterra");
    let (p2, mut two) = new_doc(dir.path(), "two.isoterra");
    let b1 = dig(20.0, 8.0, 4.0);
    let b2 = dig(26.0, 9.0, 4.0);
    // A full-strength dig is idempotent and digs commute: the same holes made
    // in a different order, one of them twice.
    one.stroke(&b1).unwrap();
    one.stroke(&b2).unwrap();
    two.stroke(&b2).unwrap();
    two.stroke(&b1).unwrap();
    let again = two.stroke(&b1).unwrap();
    assert_eq!((again.id, again.changed_nodes), (None, 0));
    assert_eq!(one.content_hash(), two.content_hash());
    assert_eq!(bytes_of(one.world()), bytes_of(two.world()));
    assert_eq!(two.info().strokes_total, 2);
    drop((one, two));
    let one = Side2dDocument::open(&p1).unwrap();
    let two = Side2dDocument::open(&p2).unwrap();
    assert_eq!(one.content_hash(), two.content_hash());
}

#[test]
fn stamps_recorded_as_one_stroke_equal_separate_strokes() {
    let dir = temp();
    let (p1, mut one) = new_doc(dir.path(), "stamps.isoterra");
    let (_p2, mut two) = new_doc(dir.path(), "separate.isoterra");
    let original = one.content_hash();
    let stamps = [
        dig(20.0, 8.0, 4.0),
        dig(23.0, 8.5, 4.0).with_strength(0.5),
        fill(22.0, 8.0, 2.0),
    ];
    let out = one.stroke_stamps(&stamps).unwrap();
    for b in &stamps {
        two.stroke(b).unwrap();
    }
    assert_eq!(one.content_hash(), two.content_hash());
    assert!(out.changed_nodes > 0);
    let info = one.info();
    assert_eq!((info.strokes_total, info.undo_position), (1, 1));
    let rec = one.file().last_done_stroke().unwrap().unwrap();
    assert_eq!(rec.tool, "mixed");
    assert_eq!(rec.params.as_array().map(Vec::len), Some(3));
    let edited = one.content_hash();
    one.undo().unwrap();
    assert_eq!(one.content_hash(), original);
    drop(one);
    let mut one = Side2dDocument::open(&p1).unwrap();
    one.redo().unwrap();
    assert_eq!(one.content_hash(), edited);
    assert_eq!(one.stroke_stamps(&[]).unwrap().id, None);
    let same_tool = one.stroke_stamps(&[dig(40.0, 6.0, 2.0), dig(42.0, 6.0, 2.0)]);
    assert!(same_tool.unwrap().id.is_some());
    assert_eq!(one.file().last_done_stroke().unwrap().unwrap().tool, "dig");
}

#[test]
fn an_invalid_stamp_reverts_the_stamps_before_it() {
    let dir = temp();
    let (_path, mut doc) = new_doc(dir.path(), "badstamp.isoterra");
    let hash = doc.content_hash();
    let bytes = checkpointed_bytes(&doc);
    let err = doc
        .stroke_stamps(&[
            dig(20.0, 8.0, 4.0),
            fill(30.0, 20.0, 3.0),
            dig(10.0, 10.0, f32::NAN),
        ])
        .unwrap_err();
    assert!(matches!(err, StoreError::World(_)), "{err}");
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.info().strokes_total, 0);
    assert_eq!(checkpointed_bytes(&doc), bytes);
}

#[test]
fn an_empty_stroke_records_nothing() {
    let dir = temp();
    let (_path, mut doc) = new_doc(dir.path(), "e.isoterra");
    let before = checkpointed_bytes(&doc);
    // Far outside the world, and inside the empty sky.
    for b in [dig(-500.0, -500.0, 3.0), dig(32.0, 31.0, 0.5)] {
        let out = doc.stroke(&b).unwrap();
        assert_eq!(out.id, None);
        assert_eq!(out.changed_nodes, 0);
    }
    assert_eq!(doc.info().strokes_total, 0);
    assert_eq!(checkpointed_bytes(&doc), before);
}

#[test]
fn a_bad_brush_changes_neither_world_nor_file() {
    let dir = temp();
    let (_path, mut doc) = new_doc(dir.path(), "bad.isoterra");
    doc.stroke(&strokes()[0]).unwrap();
    let hash = doc.content_hash();
    let file_before = checkpointed_bytes(&doc);
    for b in [
        dig(f32::NAN, 3.0, 2.0),
        dig(10.0, 10.0, -1.0),
        dig(10.0, 10.0, f32::INFINITY),
        dig(10.0, 10.0, 1e9),
        fill(10.0, 10.0, 3.0).with_material(200),
        dig(10.0, 10.0, 3.0).with_strength(0.0),
        dig(10.0, 10.0, 3.0).with_strength(f32::NAN),
    ] {
        let err = doc.stroke(&b).unwrap_err();
        assert!(matches!(err, StoreError::World(_)), "{err}");
    }
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.info().strokes_total, 1);
    assert_eq!(checkpointed_bytes(&doc), file_before);
}

#[test]
fn a_failed_commit_reverts_the_world() {
    let dir = temp();
    let (path, mut doc) = new_doc(dir.path(), "lock.isoterra");
    let [a, b] = strokes();
    doc.stroke(&a).unwrap();
    let hash = doc.content_hash();
    let bytes = bytes_of(doc.world());
    doc.file()
        .set_busy_timeout(Duration::from_millis(20))
        .unwrap();

    let blocker = rusqlite::Connection::open(&path).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    for result in [doc.stroke(&b).map(|_| ()), doc.undo().map(|_| ())] {
        let err = result.unwrap_err();
        assert!(matches!(err, StoreError::Busy { .. }), "{err}");
        assert_eq!(doc.content_hash(), hash);
        assert_eq!(bytes_of(doc.world()), bytes);
    }
    blocker.execute_batch("ROLLBACK").unwrap();
    drop(blocker);
    assert_eq!(doc.info().strokes_total, 1);

    // After the lock is gone the same calls work, and the file agrees.
    doc.undo().unwrap();
    blocker_free_redo(&mut doc);
    assert_eq!(doc.content_hash(), hash);
    drop(doc);
    assert_eq!(Side2dDocument::open(&path).unwrap().content_hash(), hash);
}

fn blocker_free_redo(doc: &mut Side2dDocument) {
    doc.file()
        .set_busy_timeout(Duration::from_millis(20))
        .unwrap();
    let blocker = rusqlite::Connection::open(doc.path()).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let undone = doc.content_hash();
    assert!(matches!(doc.redo(), Err(StoreError::Busy { .. })));
    assert_eq!(doc.content_hash(), undone);
    blocker.execute_batch("ROLLBACK").unwrap();
    doc.redo().unwrap().unwrap();
}

#[test]
fn a_second_handle_gets_a_conflict_and_stays_as_it_was() {
    let dir = temp();
    let (path, mut a) = new_doc(dir.path(), "two.isoterra");
    let mut b = Side2dDocument::open(&path).unwrap();
    let [s1, s2] = strokes();
    a.stroke(&s1).unwrap();
    let b_hash = b.content_hash();
    for result in [b.stroke(&s2).map(|_| ()), b.undo().map(|_| ())] {
        let err = result.unwrap_err();
        assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
        assert_eq!(b.content_hash(), b_hash);
    }
    let b = Side2dDocument::open(&path).unwrap();
    assert_eq!(b.content_hash(), a.content_hash());
}

#[test]
fn two_handles_interleaving_strokes_never_corrupt() {
    let dir = temp();
    let (path, first) = new_doc(dir.path(), "inter.isoterra");
    drop(first);
    let mut docs = [
        Side2dDocument::open(&path).unwrap(),
        Side2dDocument::open(&path).unwrap(),
    ];
    let mut accepted = 0;
    for i in 0..12 {
        let k = i % 2;
        let brush = if i % 3 == 0 {
            fill(8.0 + 4.0 * i as f32, 24.0, 2.5)
        } else {
            dig(6.0 + 4.5 * i as f32, 10.0, 3.0)
        };
        match docs[k].stroke(&brush) {
            Ok(o) => accepted += usize::from(o.id.is_some()),
            Err(StoreError::Conflict { .. }) => {
                docs[k] = Side2dDocument::open(&path).unwrap();
                accepted += usize::from(docs[k].stroke(&brush).unwrap().id.is_some());
            }
            Err(e) => panic!("unexpected error {e}"),
        }
        if i % 4 == 3 {
            let _ = docs[(k + 1) % 2].undo();
        }
    }
    assert!(accepted >= 8);
    let last_hashes: Vec<String> = docs.iter().map(|d| d.content_hash()).collect();
    drop(docs);
    let doc = Side2dDocument::open(&path).unwrap();
    doc.file().integrity_check().unwrap();
    // The file equals whichever handle wrote last.
    assert!(last_hashes.contains(&doc.content_hash()));
    // Undoing everything returns to the generated world.
    let mut doc = doc;
    while doc.undo().unwrap().is_some() {}
    assert_eq!(
        doc.content_hash(),
        hash_of(&Side2dWorld::generate(&params(7, 16)).unwrap())
    );
    assert_eq!(doc.info().chunks_stored, 0);
}

#[test]
fn another_kind_is_named() {
    let dir = temp();
    let path = dir.path().join("voxel.isoterra");
    WorldFile::create(
        &path,
        &WorldMeta {
            kind: "voxel".into(),
            format_version: 1,
            seed: 3,
            params: serde_json::json!({}),
        },
    )
    .unwrap();
    let err = Side2dDocument::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::WrongKind { .. }), "{err}");
    assert!(err.to_string().contains("`voxel`"), "{err}");
    assert_eq!(detect_kind(&path).unwrap(), "voxel");
}

/// Creates a side2d file and lets `damage` edit it through SQLite.
fn damaged(dir: &Path, name: &str, damage: impl FnOnce(&rusqlite::Connection)) -> PathBuf {
    let (path, mut doc) = new_doc(dir, name);
    doc.stroke(&strokes()[0]).unwrap();
    drop(doc);
    let c = rusqlite::Connection::open(&path).unwrap();
    damage(&c);
    drop(c);
    path
}

/// One way of damaging a file through SQLite.
type Damage = Box<dyn FnOnce(&rusqlite::Connection)>;

#[test]
fn damaged_documents_are_reported_clearly() {
    let dir = temp();
    let cases: Vec<(&str, Damage, &str)> = vec![
        (
            "params",
            Box::new(|c| {
                c.execute(
                    "UPDATE meta SET value = '{\"chunk_cells\": 0}' WHERE key = 'params'",
                    [],
                )
                .unwrap();
            }),
            "parameters are invalid",
        ),
        (
            "params-type",
            Box::new(|c| {
                c.execute("UPDATE meta SET value = '[1, 2]' WHERE key = 'params'", [])
                    .unwrap();
            }),
            "side2d parameters",
        ),
        (
            "seed",
            Box::new(|c| {
                c.execute("UPDATE meta SET value = '99' WHERE key = 'seed'", [])
                    .unwrap();
            }),
            "seed",
        ),
        (
            "format",
            Box::new(|c| {
                c.execute(
                    "UPDATE meta SET value = '9' WHERE key = 'format_version'",
                    [],
                )
                .unwrap();
            }),
            "format version 9",
        ),
        (
            "chunk-bytes",
            Box::new(|c| {
                c.execute("UPDATE chunks SET payload = x'00010203'", [])
                    .unwrap();
            }),
            "chunk (",
        ),
        (
            "chunk-outside",
            Box::new(|c| {
                c.execute("UPDATE chunks SET x = 40", []).unwrap();
            }),
            "outside",
        ),
        (
            "chunk-dims",
            Box::new(|c| {
                let wrong = encode_chunk(
                    &ChunkData::new(
                        ChunkEncoding::F32,
                        [2, 2, 1],
                        vec![0.0; 4],
                        Some(vec![0; 4]),
                    )
                    .unwrap(),
                );
                c.execute("UPDATE chunks SET payload = ?1", [wrong])
                    .unwrap();
            }),
            "the world needs",
        ),
        (
            "chunk-border",
            Box::new(|c| {
                // A chunk whose border nodes are solid does not fit the world.
                let solid = encode_chunk(
                    &ChunkData::new(
                        ChunkEncoding::F32,
                        [16, 16, 1],
                        vec![1.0; 256],
                        Some(vec![0; 256]),
                    )
                    .unwrap(),
                );
                c.execute("DELETE FROM chunks", []).unwrap();
                c.execute("INSERT INTO chunks VALUES (0, 0, 0, 0, 0, ?1)", [solid])
                    .unwrap();
            }),
            "do not fit",
        ),
        (
            "materials-json",
            Box::new(|c| {
                c.execute("UPDATE meta SET value = '{' WHERE key = 'materials'", [])
                    .unwrap();
            }),
            "metadata `materials`",
        ),
        (
            "materials-empty",
            Box::new(|c| {
                c.execute(
                    "UPDATE meta SET value = '{\"materials\": []}' WHERE key = 'materials'",
                    [],
                )
                .unwrap();
            }),
            "1 to 256",
        ),
        (
            "materials-too-many",
            Box::new(|c| {
                let one = r#"{"name": "m", "color": [1, 2, 3, 255], "indestructible": false}"#;
                let many = format!("{{\"materials\": [{}]}}", vec![one; 257].join(","));
                c.execute("UPDATE meta SET value = ?1 WHERE key = 'materials'", [many])
                    .unwrap();
            }),
            "holds 257 materials",
        ),
        (
            "materials-name",
            Box::new(|c| {
                let t = serde_json::to_string(
                    &MaterialTable::new(vec![
                        Material::new("dirt", [1, 2, 3, 255]),
                        Material::new(" ", [1, 2, 3, 255]),
                    ])
                    .unwrap(),
                )
                .unwrap();
                c.execute("UPDATE meta SET value = ?1 WHERE key = 'materials'", [t])
                    .unwrap();
            }),
            "material 1 has an empty name",
        ),
        (
            "materials-colour",
            Box::new(|c| {
                let t = r#"{"materials": [{"name": "dirt", "color": [1, 2, 300, 255], "indestructible": false}]}"#;
                c.execute("UPDATE meta SET value = ?1 WHERE key = 'materials'", [t])
                    .unwrap();
            }),
            "metadata `materials`",
        ),
        (
            "materials-missing-ids",
            Box::new(|c| {
                // The generated world uses ids this one-material table lacks.
                let t = serde_json::to_string(
                    &MaterialTable::new(vec![Material::new("dirt", [1, 2, 3, 255])]).unwrap(),
                )
                .unwrap();
                c.execute("UPDATE meta SET value = ?1 WHERE key = 'materials'", [t])
                    .unwrap();
            }),
            "material table does not have",
        ),
    ];
    for (name, damage, expect) in cases {
        let path = damaged(dir.path(), &format!("{name}.isoterra"), damage);
        let err = Side2dDocument::open(&path).unwrap_err();
        assert!(
            err.to_string().contains(expect),
            "{name}: expected `{expect}` in: {err}"
        );
    }
    // Rows of other layers are ignored.
    let path = damaged(dir.path(), "layer.isoterra", |c| {
        c.execute("INSERT INTO chunks VALUES (5, 0, 0, 0, 0, x'00')", [])
            .unwrap();
    });
    let doc = Side2dDocument::open(&path).unwrap();
    assert!(
        doc.file()
            .chunk(&ChunkKey {
                layer: ChunkLayer(5),
                ..ChunkKey::default()
            })
            .unwrap()
            .is_some()
    );
}

#[test]
fn a_stroke_log_that_disagrees_with_the_world_is_refused() {
    let dir = temp();
    // Delete the stored chunks behind the document's back: the world reopens
    // as generated, and undoing a stroke it does not show must not apply.
    let path = damaged(dir.path(), "log.isoterra", |c| {
        c.execute("DELETE FROM chunks", []).unwrap();
    });
    let mut doc = Side2dDocument::open(&path).unwrap();
    let hash = doc.content_hash();
    let err = doc.undo().unwrap_err();
    assert!(matches!(err, StoreError::History { .. }), "{err}");
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.info().undo_position, 1);
}

#[test]
fn non_files_and_foreign_files_give_clear_errors() {
    let dir = temp();
    assert!(matches!(
        Side2dDocument::open(dir.path().join("nope.isoterra")),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        Side2dDocument::open(dir.path()),
        Err(StoreError::NotAWorldFile { .. })
    ));
    let empty = dir.path().join("empty.isoterra");
    fs::write(&empty, b"").unwrap();
    assert!(matches!(
        Side2dDocument::open(&empty),
        Err(StoreError::NotAWorldFile { .. })
    ));
    let foreign = dir.path().join("foreign.isoterra");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (a); INSERT INTO t VALUES (1);")
        .unwrap();
    let bytes = fs::read(&foreign).unwrap();
    let err = Side2dDocument::open(&foreign).unwrap_err();
    assert!(err.to_string().contains("foreign"), "{err}");
    assert!(matches!(
        open_any(&foreign),
        Err(StoreError::NotAWorldFile { .. })
    ));
    assert_eq!(fs::read(&foreign).unwrap(), bytes);
}

/// A real document file with strokes, folded into one file.
fn real_file(dir: &Path) -> Vec<u8> {
    let (path, mut doc) = new_doc(dir, "real.isoterra");
    for b in strokes() {
        doc.stroke(&b).unwrap();
    }
    doc.undo().unwrap();
    doc.file().checkpoint().unwrap();
    doc.close().unwrap();
    fs::read(path).unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Stroke(Side2dBrush),
    Stamps(Vec<Side2dBrush>),
    Undo,
    Redo,
    Reopen,
}

/// Nodes whose value bits or material differ between two snapshots.
fn changed_nodes(a: &(Vec<u32>, Vec<u8>), b: &(Vec<u32>, Vec<u8>)) -> usize {
    (0..a.0.len())
        .filter(|&i| a.0[i] != b.0[i] || a.1[i] != b.1[i])
        .count()
}

fn brush_strategy() -> impl Strategy<Value = Side2dBrush> {
    (
        any::<bool>(),
        any::<bool>(),
        -4.0f32..68.0,
        -4.0f32..36.0,
        0.3f32..9.0,
        prop_oneof![Just(1.0f32), 0.05f32..1.0],
        0u8..5,
    )
        .prop_map(|(fill, square, x, y, r, s, m)| {
            Side2dBrush::new(
                if fill {
                    Side2dTool::Fill
                } else {
                    Side2dTool::Dig
                },
                [x, y],
                r,
            )
            .with_shape(if square {
                Side2dBrushShape::Square
            } else {
                Side2dBrushShape::Circle
            })
            .with_strength(s)
            .with_material(m)
        })
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => brush_strategy().prop_map(Op::Stroke),
        2 => prop::collection::vec(brush_strategy(), 0..4).prop_map(Op::Stamps),
        2 => Just(Op::Undo),
        1 => Just(Op::Redo),
        1 => Just(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// The document behaves like a plain world with an in-memory undo stack,
    /// and reopening never changes a byte.
    #[test]
    fn document_matches_an_in_memory_model(
        ops in prop::collection::vec(op_strategy(), 1..14),
        chunk in prop_oneof![Just(16u32), Just(24), Just(7)],
        seed in 0u64..1000,
        storage in prop_oneof![Just(Side2dStorage::F32), Just(Side2dStorage::U16), Just(Side2dStorage::U8)],
    ) {
        let dir = temp();
        let path = dir.path().join("model.isoterra");
        let p = params(seed, chunk).with_storage(storage);
        let mut doc = Side2dDocument::create(&path, &p).unwrap();
        let mut model = Side2dWorld::generate(&p).unwrap();
        // Each recorded stroke is the list of edits the model applied for it.
        let mut done: Vec<Vec<isoterra_world::Side2dEdit>> = Vec::new();
        let mut undone: Vec<Vec<isoterra_world::Side2dEdit>> = Vec::new();
        for op in ops {
            match op {
                Op::Stroke(_) | Op::Stamps(_) => {
                    let before = bytes_of(&model);
                    let (brushes, out) = match &op {
                        Op::Stroke(b) => (vec![*b], doc.stroke(b).unwrap()),
                        Op::Stamps(v) => (v.clone(), doc.stroke_stamps(v).unwrap()),
                        _ => unreachable!(),
                    };
                    let edits: Vec<_> = brushes.iter().map(|b| model.apply_brush(b).unwrap()).collect();
                    let after = bytes_of(&model);
                    prop_assert_eq!(out.changed_nodes, changed_nodes(&before, &after));
                    prop_assert_eq!(out.id.is_some(), before != after);
                    if before != after {
                        done.push(edits);
                        undone.clear();
                    } else {
                        for e in edits.iter().rev() {
                            model.apply_edit(e, EditDirection::Backward).unwrap();
                        }
                    }
                }
                Op::Undo => {
                    let got = doc.undo().unwrap();
                    prop_assert_eq!(got.is_some(), !done.is_empty());
                    if let Some(edits) = done.pop() {
                        for e in edits.iter().rev() {
                            model.apply_edit(e, EditDirection::Backward).unwrap();
                        }
                        undone.push(edits);
                    }
                }
                Op::Redo => {
                    let got = doc.redo().unwrap();
                    prop_assert_eq!(got.is_some(), !undone.is_empty());
                    if let Some(edits) = undone.pop() {
                        for e in &edits {
                            model.apply_edit(e, EditDirection::Forward).unwrap();
                        }
                        done.push(edits);
                    }
                }
                Op::Reopen => {
                    drop(doc);
                    doc = Side2dDocument::open(&path).unwrap();
                }
            }
            prop_assert_eq!(bytes_of(doc.world()), bytes_of(&model));
            prop_assert_eq!(doc.content_hash(), hash_of(&model));
            // A quantized world holds only values of its grid.
            let off = doc.world().field().values().iter().find(|v| storage.snap(**v).to_bits() != v.to_bits());
            prop_assert!(off.is_none(), "{:?} value off its grid: {:?}", storage, off);
            let info = doc.info();
            prop_assert_eq!(info.undo_position, done.len() as u64);
            prop_assert_eq!(info.redo_available, !undone.is_empty());
            prop_assert_eq!(info.strokes_total, (done.len() + undone.len()) as u64);
            prop_assert_eq!(info.chunks_stored, doc.file().chunk_count().unwrap());
        }
        drop(doc);
        let doc = Side2dDocument::open(&path).unwrap();
        prop_assert_eq!(bytes_of(doc.world()), bytes_of(&model));
        doc.file().integrity_check().unwrap();
    }

    #[test]
    fn truncated_document_files_never_panic(cuts in prop::collection::vec(any::<prop::sample::Index>(), 1..6)) {
        let dir = temp();
        let full = real_file(dir.path());
        let copy = dir.path().join("cut.isoterra");
        for cut in cuts {
            let cut = cut.index(full.len());
            fs::write(&copy, &full[..cut]).unwrap();
            let _ = Side2dDocument::open(&copy);
            let _ = open_any(&copy);
            prop_assert_eq!(fs::read(&copy).unwrap(), &full[..cut]);
        }
    }

    #[test]
    fn random_bytes_never_open(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let dir = temp();
        let path = dir.path().join("random.isoterra");
        fs::write(&path, &bytes).unwrap();
        prop_assert!(Side2dDocument::open(&path).is_err());
        prop_assert_eq!(fs::read(&path).unwrap(), bytes);
    }
}

// ---------------------------------------------------------------- material table

/// The default side-view table plus an indestructible "steel" (id 5).
fn table_with_steel() -> MaterialTable {
    let mut materials: Vec<Material> = MaterialTable::side2d_default().iter().cloned().collect();
    materials[0].color = [10, 20, 30, 40];
    materials.push(Material::new("steel", [90, 100, 110, 255]).indestructible());
    MaterialTable::new(materials).unwrap()
}

#[test]
fn the_material_table_round_trips_through_the_file() {
    let dir = temp();
    let path = dir.path().join("steel.isoterra");
    let doc = Side2dDocument::create_with_table(&path, &params(7, 16), table_with_steel()).unwrap();
    assert_eq!(doc.world().table(), &table_with_steel());
    drop(doc);
    let doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.world().table(), &table_with_steel());
    assert_eq!(
        open_any(&path).unwrap().format_version,
        SIDE2D_FORMAT_VERSION
    );
    let json = doc
        .file()
        .meta_entry(SIDE2D_MATERIALS_KEY)
        .unwrap()
        .unwrap();
    assert!(
        json.contains("\"steel\"") && json.contains("\"indestructible\":true"),
        "{json}"
    );
    drop(doc);
    // `create` stores the default table.
    let (path, doc) = new_doc(dir.path(), "default.isoterra");
    drop(doc);
    let doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.world().table(), &MaterialTable::side2d_default());
    assert!(
        doc.file()
            .meta_entry(SIDE2D_MATERIALS_KEY)
            .unwrap()
            .is_some()
    );
}

#[test]
fn a_custom_indestructible_material_is_honoured_after_reopen() {
    let dir = temp();
    let path = dir.path().join("steel.isoterra");
    let mut doc =
        Side2dDocument::create_with_table(&path, &params(7, 16), table_with_steel()).unwrap();
    // A steel block in the empty upper half.
    let at = [44.0, 26.0];
    assert!(!doc.world().is_solid(at));
    let block = Side2dBrush::new(Side2dTool::Fill, at, 3.0).with_material(5);
    assert!(doc.stroke(&block).unwrap().changed_nodes > 0);
    assert!(doc.world().is_solid(at));
    let steel: Vec<usize> = (0..doc.world().materials().ids().len())
        .filter(|&i| doc.world().materials().ids()[i] == 5)
        .collect();
    assert!(!steel.is_empty());
    drop(doc);

    let mut doc = Side2dDocument::open(&path).unwrap();
    assert!(doc.world().table().is_indestructible(5));
    let values = |doc: &Side2dDocument| -> Vec<u32> {
        steel
            .iter()
            .map(|&i| doc.world().field().values()[i].to_bits())
            .collect()
    };
    let before = values(&doc);
    doc.stroke(&Side2dBrush::new(Side2dTool::Dig, at, 4.0))
        .unwrap();
    assert_eq!(values(&doc), before, "the dig changed steel nodes");
    assert!(doc.world().is_solid(at));

    // Without the stored table the same file would have no material 5: the
    // default table cannot describe it.
    let plain = dir.path().join("plain.isoterra");
    let mut doc = Side2dDocument::create(&plain, &params(7, 16)).unwrap();
    assert!(matches!(doc.stroke(&block), Err(StoreError::World(_))));
}

#[test]
fn bad_material_tables_are_refused_and_nothing_is_created() {
    let dir = temp();
    let path = dir.path().join("bad.isoterra");
    let unnamed = MaterialTable::new(vec![
        Material::new("dirt", [1, 2, 3, 255]),
        Material::new("", [1, 2, 3, 255]),
    ])
    .unwrap();
    let err = Side2dDocument::create_with_table(&path, &params(7, 16), unnamed).unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err}");
    assert!(err.to_string().contains("empty name"), "{err}");
    assert!(!path.exists());
    // The generated world uses ids 0..=4: a table without them does not fit.
    let short = MaterialTable::new(vec![Material::new("dirt", [1, 2, 3, 255])]).unwrap();
    let err = Side2dDocument::create_with_table(&path, &params(7, 16), short).unwrap_err();
    assert!(matches!(err, StoreError::World(_)), "{err}");
    assert!(!path.exists());
}

#[test]
fn files_without_a_material_table_open_with_the_default() {
    let dir = temp();
    let (path, mut doc) = new_doc(dir.path(), "v1.isoterra");
    doc.stroke(&strokes()[0]).unwrap();
    let hash = doc.content_hash();
    drop(doc);
    // What format version 1 wrote: no table.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute("DELETE FROM meta WHERE key = 'materials'", [])
        .unwrap();
    c.execute(
        "UPDATE meta SET value = '1' WHERE key = 'format_version'",
        [],
    )
    .unwrap();
    drop(c);
    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.world().table(), &MaterialTable::side2d_default());
    assert_eq!(doc.content_hash(), hash);
    assert!(doc.undo().unwrap().is_some());
}

/// The value encoding byte of a stored chunk payload (see the chunk codec).
fn chunk_encodings(doc: &Side2dDocument) -> Vec<u8> {
    let conn = rusqlite::Connection::open(doc.path()).unwrap();
    let mut st = conn.prepare("SELECT payload FROM chunks").unwrap();
    st.query_map([], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|p| p.unwrap()[5])
        .collect()
}

/// A quantized world stores `u8`/`u16` chunks and strokes, keeps its values
/// on the grid, and its file is smaller than the same strokes in `f32`;
/// undo and reopen still restore exact bytes.
#[test]
fn quantized_storage_is_smaller_and_still_exact() {
    let dir = temp();
    let big = |storage| {
        Side2dParams::DEFAULT
            .with_chunk_cells(32)
            .with_storage(storage)
            .with_generator(
                Side2dGen::DEFAULT
                    .with_preset(Side2dPreset::Caves)
                    .with_seed(3)
                    .with_size(256, 128),
            )
    };
    let mut sizes = Vec::new();
    for (storage, code) in [
        (Side2dStorage::F32, 0u8),
        (Side2dStorage::U16, 2),
        (Side2dStorage::U8, 1),
    ] {
        let path = dir.path().join(format!("{}.isoterra", storage.name()));
        let mut doc = Side2dDocument::create(&path, &big(storage)).unwrap();
        let start = bytes_of(doc.world());
        let mut after_all = None;
        for k in 0..40 {
            let (x, y) = (12.0 + (k * 37 % 230) as f32, 10.0 + (k * 53 % 100) as f32);
            let b = if k % 3 == 0 {
                fill(x, y, 6.0)
            } else {
                dig(x, y, 7.0).with_strength(0.6)
            };
            doc.stroke(&b).unwrap();
            after_all = Some(bytes_of(doc.world()));
        }
        let after_all = after_all.unwrap();
        assert!(
            doc.world()
                .field()
                .values()
                .iter()
                .all(|v| storage.snap(*v).to_bits() == v.to_bits()),
            "{storage:?}"
        );
        let encodings = chunk_encodings(&doc);
        assert!(!encodings.is_empty());
        assert!(
            encodings.iter().all(|&e| e == code),
            "{storage:?}: {encodings:?}"
        );
        let size = checkpointed_bytes(&doc).len();
        sizes.push(size);
        drop(doc);
        let mut doc = Side2dDocument::open(&path).unwrap();
        assert_eq!(bytes_of(doc.world()), after_all, "{storage:?} reopened");
        while doc.undo().unwrap().is_some() {}
        assert_eq!(bytes_of(doc.world()), start, "{storage:?} undone");
        while doc.redo().unwrap().is_some() {}
        assert_eq!(bytes_of(doc.world()), after_all, "{storage:?} redone");
        drop(doc);
        let params = WorldFile::open(&path)
            .unwrap()
            .meta_entry("params")
            .unwrap()
            .unwrap();
        assert_eq!(
            params.contains("\"storage\""),
            storage != Side2dStorage::F32,
            "{params}"
        );
    }
    let [f32_size, u16_size, u8_size] = [sizes[0], sizes[1], sizes[2]];
    eprintln!("40 strokes on 256x128 caves: f32 {f32_size} B, u16 {u16_size} B, u8 {u8_size} B");
    assert!(u8_size < u16_size && u16_size < f32_size, "{sizes:?}");
}
