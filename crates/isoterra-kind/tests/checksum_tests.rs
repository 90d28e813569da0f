//! Stored payloads carry a checksum: a bit flipped anywhere in a chunk's
//! stored bytes, or in a stroke's record, is reported as damage naming
//! what it hit, never read as different terrain (the rare bit a compressed
//! stream never reads changes nothing at all).

use std::path::Path;

use isoterra_kind::{Document, KindError, NewWorld, StrokeSpec, WorldKind};
use rusqlite::Connection;

/// A small world of `kind` with one stroke, so that it stores edited chunks
/// and a stroke record.
fn world_with_a_stroke(dir: &Path, kind: WorldKind) -> std::path::PathBuf {
    let path = dir.join(format!("{kind}.isoterra"));
    let new = match kind {
        WorldKind::Side2d => NewWorld::new(kind).with_size([64, 32]),
        WorldKind::Map => NewWorld::new(kind).with_size([48, 48]),
        _ => NewWorld::new(kind),
    };
    let mut doc = Document::create(&path, &new).unwrap();
    let (spec, at) = match kind {
        WorldKind::Side2d => (StrokeSpec::new("dig", 4.0), [32.0, 16.0, 0.0]),
        WorldKind::Heightmap => (StrokeSpec::new("raise", 6.0), [0.0, 0.0, 0.0]),
        WorldKind::Voxel => (StrokeSpec::new("dig", 4.0), [0.0, 0.0, 0.0]),
        WorldKind::Map => (
            StrokeSpec::new("paint", 6.0).with_param("texture", 5),
            [24.0, 0.0, 24.0],
        ),
    };
    doc.stroke(&spec, &[at]).unwrap();
    drop(doc);
    path
}

/// The rows of `table` as (rowid-like key text, payload).
fn blobs(path: &Path, sql: &str) -> Vec<(String, Vec<u8>)> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn set_blob(path: &Path, sql: &str, key: &str, bytes: &[u8]) {
    let conn = Connection::open(path).unwrap();
    let n = conn.execute(sql, rusqlite::params![bytes, key]).unwrap();
    assert_eq!(n, 1);
}

/// Puts the closed world file `from` at `to`, with no write-ahead log of
/// an earlier file left beside it.
fn restore(from: &Path, to: &Path) {
    for ext in ["-wal", "-shm"] {
        let mut side = to.as_os_str().to_os_string();
        side.push(ext);
        let _ = std::fs::remove_file(side);
    }
    std::fs::copy(from, to).unwrap();
}

/// About 60 bit positions spread over a payload past its first 20 bytes
/// (the codec header, whose fields are checked on their own), and the last
/// bit.
fn positions(len: usize) -> Vec<(usize, u8)> {
    let bits = len * 8;
    (160..bits)
        .step_by(((bits - 160) / 60).max(1) | 1)
        .chain([bits - 1])
        .map(|b| (b / 8, (b % 8) as u8))
        .collect()
}

#[test]
fn a_flipped_bit_in_a_stored_chunk_is_reported_with_its_chunk() {
    let dir = tempfile::tempdir().unwrap();
    for kind in WorldKind::ALL {
        let path = world_with_a_stroke(dir.path(), kind);
        let select = "SELECT layer || ',' || x || ',' || y || ',' || z || ',' || lod, payload \
                      FROM chunks";
        let update = "UPDATE chunks SET payload = ?1 \
                      WHERE layer || ',' || x || ',' || y || ',' || z || ',' || lod = ?2";
        let rows = blobs(&path, select);
        assert!(!rows.is_empty(), "{kind}: no stored chunk");
        let hash = Document::open(&path).unwrap().content_hash();
        let (mut tried, mut reported) = (0, 0);
        for (key, good) in rows.iter().take(2) {
            for (byte, bit) in positions(good.len()) {
                let mut bad = good.clone();
                bad[byte] ^= 1 << bit;
                set_blob(&path, update, key, &bad);
                match Document::open(&path) {
                    // A few bits of a compressed stream are never read
                    // (padding of its bit streams): flipping one changes
                    // nothing the world reads, which the checksum confirms.
                    Ok(doc) => assert_eq!(
                        doc.content_hash(),
                        hash,
                        "{kind}: bit {bit} of byte {byte} of chunk {key} changed the world unnoticed"
                    ),
                    Err(e) => {
                        let text = e.to_string();
                        assert!(
                            text.contains("chunk"),
                            "{kind}: the error does not say which chunk: {text}"
                        );
                        reported += 1;
                    }
                }
                tried += 1;
            }
            set_blob(&path, update, key, good);
        }
        assert!(tried > 10, "{kind}: only {tried} flips tried");
        assert!(
            reported * 10 >= tried * 9,
            "{kind}: only {reported} of {tried} flips reported"
        );
        // Mended, the world opens again.
        Document::open(&path).unwrap();
    }
}

#[test]
fn a_flipped_bit_in_a_stroke_record_fails_its_undo_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for kind in WorldKind::ALL {
        let path = world_with_a_stroke(dir.path(), kind);
        let before = Document::open(&path).unwrap().content_hash();
        // The file as it is, and what a sound undo gives (on a copy).
        let copy = dir.path().join(format!("{kind}-copy.isoterra"));
        std::fs::copy(&path, &copy).unwrap();
        let undone_hash = {
            let sound = dir.path().join(format!("{kind}-sound.isoterra"));
            std::fs::copy(&path, &sound).unwrap();
            let mut doc = Document::open(&sound).unwrap();
            doc.undo().unwrap();
            doc.content_hash()
        };
        let select = "SELECT CAST(id AS TEXT), delta FROM strokes";
        let update = "UPDATE strokes SET delta = ?1 WHERE CAST(id AS TEXT) = ?2";
        let rows = blobs(&path, select);
        assert_eq!(rows.len(), 1, "{kind}");
        let (id, good) = &rows[0];
        // The stroke records of the kinds have headers of different sizes:
        // flip bits past the first 32 bytes.
        let bits = good.len() * 8;
        let (mut tried, mut reported) = (0, 0);
        for b in (256..bits)
            .step_by(((bits.saturating_sub(256)) / 60).max(1) | 1)
            .chain([bits - 1])
        {
            // Each flip on a fresh copy: an undo that goes through is
            // committed.
            restore(&copy, &path);
            let mut bad = good.clone();
            bad[b / 8] ^= 1 << (b % 8);
            set_blob(&path, update, id, &bad);
            let Ok(mut doc) = Document::open(&path) else {
                tried += 1;
                reported += 1;
                continue;
            };
            let undone: Result<_, KindError> = doc.undo();
            if undone.is_ok() {
                // A bit the compressed record never reads: the undo is the
                // sound one.
                assert_eq!(
                    doc.content_hash(),
                    undone_hash,
                    "{kind}: bit {} of byte {} of stroke {id} changed the undo unnoticed",
                    b % 8,
                    b / 8
                );
            } else {
                assert_eq!(
                    doc.content_hash(),
                    before,
                    "{kind}: a failed undo changed the world"
                );
                reported += 1;
            }
            tried += 1;
        }
        assert!(tried > 0, "{kind}: stroke record too short to flip");
        assert!(
            reported * 10 >= tried * 9,
            "{kind}: only {reported} of {tried} flips reported"
        );
        restore(&copy, &path);
        let mut doc = Document::open(&path).unwrap();
        assert!(doc.undo().unwrap().is_some());
    }
}
