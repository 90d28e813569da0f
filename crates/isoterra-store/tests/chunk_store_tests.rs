//! `ChunkStore` used through a trait object, as a second backend would be.

use isoterra_store::{
    ChunkChange, ChunkKey, ChunkLayer, ChunkStore, NewStroke, StoreError, WorldFile, WorldMeta,
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
