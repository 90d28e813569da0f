//! Schema migration: a checked-in `side2d` file of format version 1 (no
//! material table) opens, migrates to the current format and keeps its
//! stroke log working.
//!
//! `tests/data/side2d_v1.isoterra` was made by `write_side2d_v1_fixture`
//! below: a current file of a tiny world with one stroke, from which the
//! material table entry was removed and whose format version was set back to
//! 1 — exactly what format version 1 wrote (its SQLite schema is the same).
//! Regenerate it with
//! `ISOTERRA_WRITE_V1_FIXTURE=crates/isoterra-store/tests/data/side2d_v1.isoterra
//! cargo test -p isoterra-store --test migration_tests -- --ignored write_side2d_v1_fixture`
//! (then update the pinned hash if the generator changed).

use std::path::{Path, PathBuf};

use isoterra_field::{MaterialTable, Side2dGen, Side2dPreset};
use isoterra_store::{
    SIDE2D_FORMAT_VERSION, SIDE2D_MATERIALS_KEY, Side2dDocument, WorldFile, open_any,
};
use isoterra_world::{Side2dBrush, Side2dParams, Side2dTool};

/// The content hash of the fixture's world with its one stroke done.
const PINNED_HASH_DONE: &str = "eaf52eba447cc0bf";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/side2d_v1.isoterra")
}

/// A temporary copy of the fixture: the checked-in file is never opened for
/// writing.
fn fixture_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.isoterra");
    std::fs::copy(fixture(), &path).unwrap();
    (dir, path)
}

fn tiny_params() -> Side2dParams {
    Side2dParams::DEFAULT.with_chunk_cells(8).with_generator(
        Side2dGen::DEFAULT
            .with_preset(Side2dPreset::Hills)
            .with_seed(11)
            .with_size(16, 8)
            .with_feature_cells(4.0)
            .with_fill(0.5),
    )
}

#[test]
#[ignore = "writes the checked-in version-1 fixture"]
fn write_side2d_v1_fixture() {
    let Ok(out) = std::env::var("ISOTERRA_WRITE_V1_FIXTURE") else {
        return;
    };
    let _ = std::fs::remove_file(&out);
    let mut doc = Side2dDocument::create(&out, &tiny_params()).unwrap();
    let id = doc
        .stroke(&Side2dBrush::new(Side2dTool::Dig, [8.0, 3.0], 2.5))
        .unwrap()
        .id;
    assert!(id.is_some(), "the fixture's stroke changed nothing");
    println!("hash with the stroke done: {}", doc.content_hash());
    doc.close().unwrap();
    let c = rusqlite::Connection::open(&out).unwrap();
    c.execute("DELETE FROM meta WHERE key = ?1", [SIDE2D_MATERIALS_KEY])
        .unwrap();
    c.execute(
        "UPDATE meta SET value = '1' WHERE key = 'format_version'",
        [],
    )
    .unwrap();
    // Small pages keep the checked-in file a few kilobytes.
    c.execute_batch(
        "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM; PRAGMA journal_mode = WAL;",
    )
    .unwrap();
    drop(c);
}

#[test]
fn the_checked_in_fixture_is_format_version_1() {
    // Even a read-only connection leaves `-shm`/`-wal` files beside a WAL
    // database, so the original is read through a copy as well.
    let (_dir, path) = fixture_copy();
    let c =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let version: String = c
        .query_row(
            "SELECT value FROM meta WHERE key = 'format_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, "1");
    let tables: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM meta WHERE key = ?1",
            [SIDE2D_MATERIALS_KEY],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0, "a version-1 file has no material table");
    let strokes: i64 = c
        .query_row("SELECT COUNT(*) FROM strokes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(strokes, 1);
    assert!(std::fs::metadata(fixture()).unwrap().len() < 32 * 1024);
}

#[test]
fn a_version_1_file_opens_and_migrates() {
    let (_dir, path) = fixture_copy();
    assert_eq!(open_any(&path).unwrap().format_version, 1);
    let doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.world().table(), &MaterialTable::side2d_default());
    assert_eq!(doc.content_hash(), PINNED_HASH_DONE);
    assert_eq!(doc.info().undo_position, 1);
    assert_eq!(doc.info().strokes_total, 1);
    doc.file().integrity_check().unwrap();
    // Migrated on open: the current version with the table written.
    let meta = doc.file().meta().unwrap();
    assert_eq!(meta.format_version, SIDE2D_FORMAT_VERSION);
    let json = doc
        .file()
        .meta_entry(SIDE2D_MATERIALS_KEY)
        .unwrap()
        .expect("the migration writes the material table");
    let table: MaterialTable = serde_json::from_str(&json).unwrap();
    assert_eq!(table, MaterialTable::side2d_default());
    doc.close().unwrap();
    // Reopening a migrated file changes nothing further.
    let doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), PINNED_HASH_DONE);
    assert_eq!(
        doc.file().meta().unwrap().format_version,
        SIDE2D_FORMAT_VERSION
    );
}

#[test]
fn undo_and_redo_work_on_the_version_1_stroke() {
    let (_dir, path) = fixture_copy();
    let mut doc = Side2dDocument::open(&path).unwrap();
    let id = doc.undo().unwrap().expect("the fixture holds one stroke");
    let undone_hash = doc.content_hash();
    assert_ne!(undone_hash, PINNED_HASH_DONE);
    assert_eq!(doc.undo().unwrap(), None);
    drop(doc);
    // The undo is durable across reopening, and redo brings the stroke back.
    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), undone_hash);
    assert_eq!(doc.redo().unwrap(), Some(id));
    assert_eq!(doc.content_hash(), PINNED_HASH_DONE);
    assert_eq!(doc.redo().unwrap(), None);
    drop(doc);
    let doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), PINNED_HASH_DONE);
    doc.file().integrity_check().unwrap();
}

#[test]
fn migrate_format_refuses_going_back_and_reserved_keys() {
    let (_dir, path) = fixture_copy();
    drop(Side2dDocument::open(&path).unwrap());
    let mut f = WorldFile::open(&path).unwrap();
    assert!(f.migrate_format(1, &[]).is_err());
    assert!(
        f.migrate_format(SIDE2D_FORMAT_VERSION, &[("seed", "1")])
            .is_err()
    );
    assert_eq!(f.meta().unwrap().format_version, SIDE2D_FORMAT_VERSION);
    f.migrate_format(SIDE2D_FORMAT_VERSION, &[("note", "x")])
        .unwrap();
    assert_eq!(f.meta_entry("note").unwrap().as_deref(), Some("x"));
}

/// The format version, the material table's presence and the schema
/// version of a file, read without opening it as a world.
fn versions(path: &Path) -> (String, i64, i64) {
    let c = rusqlite::Connection::open(path).unwrap();
    let format: String = c
        .query_row(
            "SELECT value FROM meta WHERE key = 'format_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let tables: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM meta WHERE key = ?1",
            [SIDE2D_MATERIALS_KEY],
            |r| r.get(0),
        )
        .unwrap();
    let schema: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    (format, tables, schema)
}

/// A read of a damaged old file reports the damage and migrates nothing:
/// the file checks every chunk first, and upgrades only a whole world.
#[test]
fn a_damaged_version_1_file_is_reported_and_left_unmigrated() {
    let (_dir, path) = fixture_copy();
    let before = versions(&path);
    assert_eq!(before, ("1".to_string(), 0, 1));
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        let n = c
            .execute(
                "UPDATE chunks SET payload = X'49544b43' WHERE rowid IN \
                 (SELECT rowid FROM chunks LIMIT 1)",
                [],
            )
            .or_else(|_| {
                // WITHOUT ROWID: damage the first chunk by its key.
                c.execute(
                    "UPDATE chunks SET payload = X'49544b43' WHERE (layer, x, y, z, lod) = \
                     (SELECT layer, x, y, z, lod FROM chunks ORDER BY layer, x, y, z, lod LIMIT 1)",
                    [],
                )
            })
            .unwrap();
        assert_eq!(n, 1);
    }
    let err = match Side2dDocument::open(&path) {
        Ok(_) => panic!("a damaged chunk went unnoticed"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("chunk"), "{err}");
    assert_eq!(versions(&path), before, "a failed read migrated the file");
    // Opening the store alone (what every document does first) migrates
    // nothing either.
    drop(WorldFile::open(&path).unwrap());
    assert_eq!(versions(&path), before);
}
