//! `ChunkStore` used through a trait object, for every backend: the SQLite
//! `WorldFile`, the in-memory `MemoryStore` and (feature `postgres`, with a
//! server) `PgStore` pass the same checks.

#[cfg(feature = "postgres")]
mod pg_support;

use isoterra_store::{
    BakedChunk, BakedCollider, BakedRow, ChunkChange, ChunkKey, ChunkLayer, ChunkStore,
    MemoryStore, NewStroke, StoreError, WorldFile, WorldMeta,
};

fn meta() -> WorldMeta {
    WorldMeta {
        kind: "test".into(),
        format_version: 1,
        seed: 9,
        params: serde_json::json!({ "size": 4 }),
    }
}

fn stroke(tool: &str) -> NewStroke {
    NewStroke {
        tool: tool.into(),
        params: serde_json::json!({ "r": 2 }),
        delta: vec![1, 2, 3],
    }
}

/// Exercises a store only through the trait: chunks, log, undo/redo.
fn exercise(store: &mut dyn ChunkStore) -> Result<(), StoreError> {
    assert_eq!(store.meta_entry("kind")?.as_deref(), Some("test"));
    assert_eq!(store.meta_entry("nothing")?, None);
    let a = ChunkKey::field2(0, 0);
    let b = ChunkKey::field2(-3, 2);
    let c = ChunkKey {
        layer: ChunkLayer(7),
        x: 1,
        y: 1,
        z: 4,
        lod: 2,
    };
    store.put_chunks(&[(a, Some(vec![1])), (c, Some(vec![3, 3]))])?;
    let id = store.commit_stroke(&stroke("dig"), &[(b, Some(vec![2])), (a, None)])?;
    let mut keys = vec![b, c];
    keys.sort();
    assert_eq!(store.chunk_keys()?, keys);
    assert_eq!(store.chunk(&a)?, None);
    assert_eq!(store.chunk(&b)?, Some(vec![2]));
    assert_eq!(store.last_done_stroke()?.map(|r| r.id), Some(id));
    assert_eq!(store.stroke(id)?.map(|r| r.tool), Some("dig".to_string()));

    store.mark_undone(id, &[(b, None), (a, Some(vec![1]))])?;
    assert_eq!(store.stroke_counts()?.done, 0);
    assert_eq!(store.stroke_counts()?.undone, 1);
    assert_eq!(store.first_undone_stroke()?.map(|r| r.id), Some(id));
    assert_eq!(store.chunk(&b)?, None);
    assert_eq!(store.chunk(&a)?, Some(vec![1]));

    // Undoing again is refused and changes nothing.
    let changes: [ChunkChange; 1] = [(a, None)];
    assert!(matches!(
        store.mark_undone(id, &changes),
        Err(StoreError::History { .. })
    ));
    assert_eq!(store.chunk(&a)?, Some(vec![1]));

    store.mark_redone(id, &[(b, Some(vec![2])), (a, None)])?;
    assert_eq!(store.stroke_counts()?.done, 1);
    assert_eq!(store.first_undone_stroke()?, None);
    assert_eq!(store.chunk(&b)?, Some(vec![2]));
    Ok(())
}

#[test]
fn world_file_works_through_dyn_chunk_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.isoterra");
    let mut file = WorldFile::create(&path, &meta()).unwrap();
    let store: &mut dyn ChunkStore = &mut file;
    assert_eq!(store.backend(), "sqlite");
    exercise(store).unwrap();
    drop(file);
    // Everything committed through the trait is in the file.
    let mut boxed: Box<dyn ChunkStore> = Box::new(WorldFile::open(&path).unwrap());
    assert_eq!(boxed.stroke_counts().unwrap().done, 1);
    assert_eq!(
        boxed.chunk(&ChunkKey::field2(-3, 2)).unwrap(),
        Some(vec![2])
    );
    let id = boxed.last_done_stroke().unwrap().unwrap().id;
    boxed.mark_undone(id, &[]).unwrap();
    assert_eq!(boxed.stroke_counts().unwrap().undone, 1);
}

/// A small baked chunk whose content depends on `n`.
fn baked(n: u32) -> BakedChunk {
    BakedChunk {
        positions: vec![[n as f32, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        normals: Vec::new(),
        indices: vec![0, 1, 2],
        collider: BakedCollider::TriMesh,
        ..BakedChunk::default()
    }
}

fn bkey(x: i32, y: i32, z: i32) -> ChunkKey {
    ChunkKey {
        layer: ChunkLayer(0),
        x,
        y,
        z,
        lod: 0,
    }
}

/// Exercises the baked operations only through the trait.
fn exercise_baked(store: &mut dyn ChunkStore) -> Result<(), StoreError> {
    assert_eq!(store.baked_content_hash()?, None);
    assert_eq!(store.baked_keys_after(None, 10)?, Vec::<ChunkKey>::new());
    let stamp = store.world_stamp()?;
    assert_eq!(stamp.len(), 16);
    assert_eq!(store.world_stamp()?, stamp, "the stamp is stable");

    // One batch, in no particular order; negative coordinates sort first.
    let keys = [
        bkey(2, 0, 0),
        bkey(-1, 5, 0),
        bkey(0, 0, -3),
        bkey(0, 0, 7),
        ChunkKey {
            layer: ChunkLayer(1),
            ..bkey(-9, 0, 0)
        },
    ];
    let rows: Vec<BakedRow> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| BakedRow::new(*k, &stamp, &baked(i as u32)))
        .collect::<Result<_, _>>()?;
    store.put_baked(&rows)?;
    let counts = store.stroke_counts()?;
    assert_eq!(counts.total(), 0, "baked rows are not strokes");
    assert_eq!(
        store.world_stamp()?,
        stamp,
        "baked rows are not world changes"
    );
    for r in &rows {
        assert_eq!(store.baked_row(&r.key)?.as_ref(), Some(r));
    }
    assert_eq!(store.baked_row(&bkey(5, 5, 5))?, None);

    // Keys from a stamp, and in pages from a position.
    let mut sorted = keys.to_vec();
    sorted.sort();
    assert_eq!(
        store
            .baked_keys_from(&stamp)?
            .into_iter()
            .collect::<Vec<_>>(),
        sorted
    );
    assert!(store.baked_keys_from("0000000000000000")?.is_empty());
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = store.baked_keys_after(after.as_ref(), 2)?;
        assert!(page.len() <= 2);
        let Some(last) = page.last().copied() else {
            break;
        };
        paged.extend(page);
        after = Some(last);
    }
    assert_eq!(paged, sorted);
    assert_eq!(store.baked_keys_after(Some(&sorted[4]), 10)?, []);
    assert_eq!(store.baked_keys_after(Some(&sorted[1]), 10)?, sorted[2..]);
    assert_eq!(store.baked_keys_after(None, 0)?, []);

    // The content hash names the content, not the order of writing.
    let h1 = store.baked_content_hash()?.expect("rows are stored");
    let mut reversed = rows.clone();
    reversed.reverse();
    store.put_baked(&reversed)?;
    assert_eq!(store.baked_content_hash()?.as_deref(), Some(h1.as_str()));
    // Replacing a row changes it; putting the old one back restores it.
    store.put_baked(&[BakedRow::new(keys[0], &stamp, &baked(99))?])?;
    assert_ne!(store.baked_content_hash()?.as_deref(), Some(h1.as_str()));
    store.put_baked(&rows[..1])?;
    assert_eq!(store.baked_content_hash()?, Some(h1));

    // An empty batch is a no-op; a chunk change moves the stamp.
    store.put_baked(&[])?;
    store.put_chunks(&[(ChunkKey::field2(0, 0), Some(vec![4, 2]))])?;
    assert_ne!(store.world_stamp()?, stamp);
    Ok(())
}

#[test]
fn baked_rows_work_through_dyn_chunk_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baked.isoterra");
    let mut file = WorldFile::create(&path, &meta()).unwrap();
    exercise_baked(&mut file).unwrap();
    let (hash, stamp) = (
        file.baked_content_hash().unwrap(),
        file.world_stamp().unwrap(),
    );
    drop(file);
    // Committed, and the trait agrees with the file's own methods.
    let boxed: Box<dyn ChunkStore> = Box::new(WorldFile::open(&path).unwrap());
    assert_eq!(boxed.baked_content_hash().unwrap(), hash);
    assert_eq!(boxed.world_stamp().unwrap(), stamp);
    assert_eq!(boxed.baked_keys_after(None, 100).unwrap().len(), 5);
    let file = WorldFile::open(&path).unwrap();
    assert_eq!(file.baked_count().unwrap(), 5);
    file.integrity_check().unwrap();
}

#[test]
fn a_refused_baked_batch_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked.isoterra");
    let mut file = WorldFile::create(&path, &meta()).unwrap();
    let stamp = file.world_stamp().unwrap();
    let row = BakedRow::new(bkey(0, 0, 0), &stamp, &baked(1)).unwrap();
    // Another connection holds the write lock: the batch is refused whole.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    file.set_busy_timeout(std::time::Duration::from_millis(50))
        .unwrap();
    let store: &mut dyn ChunkStore = &mut file;
    let err = store
        .put_baked(&[
            row.clone(),
            BakedRow::new(bkey(1, 0, 0), &stamp, &baked(2)).unwrap(),
        ])
        .unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err:?}");
    other.execute_batch("ROLLBACK").unwrap();
    assert_eq!(store.baked_keys_after(None, 10).unwrap(), []);
    store.put_baked(&[row]).unwrap();
    assert_eq!(store.baked_keys_after(None, 10).unwrap(), [bkey(0, 0, 0)]);
}

#[test]
fn memory_store_passes_the_same_checks() {
    let mut store = MemoryStore::create(&meta()).unwrap();
    assert_eq!(store.backend(), "memory");
    exercise(&mut store).unwrap();
    let mut store = MemoryStore::create(&meta()).unwrap();
    exercise_baked(&mut store).unwrap();
    // Boxed and borrowed stores are stores too.
    let mut boxed: Box<dyn ChunkStore> = Box::new(MemoryStore::create(&meta()).unwrap());
    exercise(&mut boxed).unwrap();
    let mut inner = MemoryStore::create(&meta()).unwrap();
    let mut borrowed = &mut inner;
    exercise_baked(&mut borrowed).unwrap();
    assert_eq!(inner.baked_count(), 5);
}

#[test]
fn the_same_world_has_the_same_stamp_and_hashes_in_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = WorldFile::create(dir.path().join("same.isoterra"), &meta()).unwrap();
    let mut memory = MemoryStore::create(&meta()).unwrap();
    let stores: [&mut dyn ChunkStore; 2] = [&mut file, &mut memory];
    let mut seen = Vec::new();
    for store in stores {
        let empty = store.world_stamp().unwrap();
        exercise_baked(store).unwrap();
        exercise(store).unwrap();
        let keys = store.chunk_keys().unwrap();
        let rows: Vec<_> = keys.iter().map(|k| (*k, store.chunk(k).unwrap())).collect();
        seen.push((
            empty,
            store.world_stamp().unwrap(),
            store.baked_content_hash().unwrap(),
            rows,
            store.stroke_counts().unwrap(),
        ));
    }
    assert_eq!(seen[0], seen[1]);
    // A different world (another seed) has another stamp.
    let other = MemoryStore::create(&WorldMeta { seed: 10, ..meta() }).unwrap();
    assert_ne!(other.world_stamp().unwrap(), seen[0].0);
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_works_through_dyn_chunk_store() {
    use isoterra_store::PgStore;
    let Some(server) = pg_support::server("postgres_works_through_dyn_chunk_store") else {
        return;
    };
    let url = pg_support::world_url(&server, "contract");
    let mut pg = PgStore::open(&url).unwrap();
    pg.create_world(&meta(), &[]).unwrap();
    assert!(matches!(
        pg.create_world(&meta(), &[]),
        Err(StoreError::AlreadyExists { .. })
    ));
    let store: &mut dyn ChunkStore = &mut pg;
    assert_eq!(store.backend(), "postgres");
    assert_eq!(store.meta().unwrap(), meta());
    exercise(store).unwrap();
    // The same calls on a memory store leave the same world behind.
    let mut memory = MemoryStore::create(&meta()).unwrap();
    exercise(&mut memory).unwrap();
    assert_eq!(pg.world_stamp().unwrap(), memory.world_stamp().unwrap());
    drop(pg);
    // Everything committed through the trait is in the database.
    let mut again: Box<dyn ChunkStore> = Box::new(PgStore::open_existing(&url).unwrap());
    assert_eq!(again.stroke_counts().unwrap().done, 1);
    assert_eq!(
        again.chunk(&ChunkKey::field2(-3, 2)).unwrap(),
        Some(vec![2])
    );
    let id = again.last_done_stroke().unwrap().unwrap().id;
    again.mark_undone(id, &[]).unwrap();
    assert_eq!(again.stroke_counts().unwrap().undone, 1);
    // A world that is not there is named as missing, not made.
    let missing = pg_support::world_url(&server, "missing");
    assert!(matches!(
        PgStore::open_existing(&missing),
        Err(StoreError::NoSuchWorld { .. })
    ));
}

#[cfg(feature = "postgres")]
#[test]
fn baked_rows_work_on_postgres() {
    use isoterra_store::PgStore;
    let Some(server) = pg_support::server("baked_rows_work_on_postgres") else {
        return;
    };
    let mut pg = PgStore::open(&pg_support::world_url(&server, "baked")).unwrap();
    pg.create_world(&meta(), &[]).unwrap();
    exercise_baked(&mut pg).unwrap();
    let mut memory = MemoryStore::create(&meta()).unwrap();
    exercise_baked(&mut memory).unwrap();
    assert_eq!(
        pg.baked_content_hash().unwrap(),
        memory.baked_content_hash().unwrap()
    );
    assert_eq!(pg.baked_sources().unwrap(), memory.baked_sources().unwrap());
}
