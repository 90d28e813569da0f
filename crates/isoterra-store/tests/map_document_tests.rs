//! Map documents: strokes, undo/redo across reopening, stored chunks, errors.

use isoterra_field::{LayerMask, MapLayer};
use isoterra_store::{
    HeightmapDocument, MAP_KIND, MapDocument, StoreError, decode_map_edit, detect_kind,
    encode_map_edit,
};
use isoterra_world::{
    HeightmapParams, MapBrush, MapParams, MapPreset, MapStroke, MapTool, MapWorld,
};
use proptest::prelude::*;

fn params() -> MapParams {
    MapParams::DEFAULT
        .with_size(96, 80)
        .with_chunk_cells(32)
        .with_seed(9)
}

fn stroke(tool: MapTool, radius: f32, dabs: &[[f32; 2]]) -> MapStroke {
    MapStroke::new(
        MapBrush::new(tool, radius)
            .with_strength(0.8)
            .with_texture(5),
        dabs.to_vec(),
    )
}

#[test]
fn stroke_undo_redo_and_reopen_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.isoterra");
    let mut doc = MapDocument::create(&path, &params()).unwrap();
    assert_eq!(detect_kind(&path).unwrap(), MAP_KIND);
    let generated = doc.content_hash();
    let mut hashes = vec![generated.clone()];
    for (tool, dabs) in [
        (MapTool::CliffUp, vec![[30.0, 30.0], [40.0, 33.0]]),
        (MapTool::Raise, vec![[31.5, 32.0]]),
        (MapTool::Paint, vec![[64.0, 64.0], [70.0, 60.0]]),
        (MapTool::Pathing, vec![[10.0, 70.0]]),
        (MapTool::WaterRaise, vec![[50.0, 50.0]]),
        (MapTool::Ramp, vec![[33.0, 30.0]]),
    ] {
        let out = doc.stroke(&stroke(tool, 7.0, &dabs)).unwrap();
        assert!(out.id.is_some(), "{tool}");
        assert!(out.changed_nodes > 0);
        assert!(!out.dirty.is_empty());
        if tool == MapTool::Paint {
            assert!(
                out.dirty
                    .iter()
                    .all(|(_, m)| *m == LayerMask::of(MapLayer::Splat))
            );
        }
        hashes.push(doc.content_hash());
    }
    let info = doc.info();
    assert_eq!(info.strokes_total, 6);
    assert_eq!(info.undo_position, 6);
    assert!(info.chunks_stored > 0);
    let last = doc.content_hash();
    doc.close().unwrap();

    // Reopen: the same contents.
    let mut doc = MapDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), last);
    assert_eq!(doc.info().chunks_stored, info.chunks_stored);
    // Undo everything, checking each state, across one more reopen.
    for k in (0..6).rev() {
        assert!(doc.undo().unwrap().is_some());
        assert_eq!(doc.content_hash(), hashes[k], "undo to {k}");
        if k == 3 {
            drop(doc);
            doc = MapDocument::open(&path).unwrap();
            assert_eq!(doc.content_hash(), hashes[3]);
        }
    }
    assert_eq!(doc.undo().unwrap(), None);
    assert_eq!(doc.content_hash(), generated);
    // Undo marks what it touched dirty, for remeshing.
    doc.take_dirty();
    doc.redo().unwrap();
    let dirty = doc.take_dirty();
    assert!(
        !dirty.is_empty()
            && dirty
                .iter()
                .all(|(_, m)| *m == LayerMask::of(MapLayer::Level))
    );
    doc.undo().unwrap();
    assert_eq!(doc.take_dirty(), dirty);
    assert_eq!(doc.info().chunks_stored, 0);
    assert!(doc.info().redo_available);
    // Redo everything.
    for (k, hash) in hashes.iter().enumerate().skip(1) {
        assert!(doc.redo().unwrap().is_some());
        assert_eq!(&doc.content_hash(), hash, "redo to {k}");
    }
    assert_eq!(doc.redo().unwrap(), None);
    drop(doc);
    let doc = MapDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), last);
    // The world matches a fresh world with the same strokes.
    let mut fresh = MapWorld::new(&params()).unwrap();
    assert_ne!(fresh.content_hash(), last);
    fresh.take_dirty();
    assert_eq!(doc.world().params(), &params());
}

#[test]
fn a_new_stroke_drops_the_redo_tail_and_no_op_strokes_record_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.isoterra");
    let mut doc = MapDocument::create(&path, &params().with_preset(MapPreset::Blank)).unwrap();
    doc.stroke(&stroke(MapTool::Raise, 5.0, &[[20.0, 20.0]]))
        .unwrap();
    doc.undo().unwrap();
    assert!(doc.info().redo_available);
    // Lowering water where there is none changes nothing.
    let out = doc
        .stroke(&stroke(MapTool::WaterLower, 5.0, &[[20.0, 20.0]]))
        .unwrap();
    assert_eq!(out.id, None);
    assert_eq!(out.changed_nodes, 0);
    assert!(doc.info().redo_available);
    // A stroke outside the map changes nothing either.
    let out = doc
        .stroke(&stroke(MapTool::Raise, 3.0, &[[-50.0, -50.0]]))
        .unwrap();
    assert_eq!(out.id, None);
    doc.stroke(&stroke(MapTool::Lower, 5.0, &[[20.0, 20.0]]))
        .unwrap();
    let info = doc.info();
    assert_eq!((info.strokes_total, info.undo_position), (1, 1));
    assert!(!info.redo_available);
}

#[test]
fn bad_strokes_change_nothing_in_memory_or_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.isoterra");
    let mut doc = MapDocument::create(&path, &params()).unwrap();
    let hash = doc.content_hash();
    let bad = [
        MapStroke::dab(MapBrush::new(MapTool::Raise, f32::NAN), [1.0, 1.0]),
        MapStroke::dab(
            MapBrush::new(MapTool::Raise, 4.0).with_strength(2.0),
            [1.0, 1.0],
        ),
        MapStroke::dab(
            MapBrush::new(MapTool::CliffUp, 4.0).with_level(Some(20)),
            [1.0, 1.0],
        ),
        MapStroke::new(MapBrush::new(MapTool::Raise, 4.0), vec![[f32::NAN, 0.0]]),
    ];
    for s in &bad {
        assert!(matches!(doc.stroke(s), Err(StoreError::World(_))), "{s:?}");
    }
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.info().strokes_total, 0);
    drop(doc);
    let doc = MapDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.file().chunk_count().unwrap(), 0);
}

#[test]
fn other_kinds_and_damaged_data_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hm = dir.path().join("hills.isoterra");
    HeightmapDocument::create(&hm, &HeightmapParams::DEFAULT).unwrap();
    assert!(matches!(
        MapDocument::open(&hm),
        Err(StoreError::WrongKind { .. })
    ));
    let path = dir.path().join("map.isoterra");
    MapDocument::create(&path, &params()).unwrap();
    assert!(matches!(
        MapDocument::create(&path, &params()),
        Err(StoreError::AlreadyExists { .. })
    ));
    assert!(matches!(
        MapDocument::create(dir.path().join("bad.isoterra"), &params().with_size(0, 3)),
        Err(StoreError::World(_))
    ));
    assert!(decode_map_edit(b"IMD1").is_err());
    assert!(decode_map_edit(&[0u8; 40]).is_err());
}

#[test]
fn imported_layers_are_stored_and_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("import.isoterra");
    let p = params().with_preset(MapPreset::Blank);
    let layers = MapWorld::generate(&params().with_preset(MapPreset::Plateaus)).unwrap();
    let doc = MapDocument::create_with_layers(&path, &p, layers.clone()).unwrap();
    let hash = doc.content_hash();
    assert_eq!(doc.info().chunks_stored, 3 * 3);
    drop(doc);
    let doc = MapDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.world().layers(), &layers);
}

#[test]
fn edits_survive_the_delta_codec() {
    let mut world = MapWorld::new(&params()).unwrap();
    for tool in MapTool::ALL {
        let edit = match world.apply_stroke(&stroke(tool, 6.0, &[[40.0, 40.0], [47.0, 41.0]])) {
            Ok(e) => e,
            Err(_) => continue,
        };
        let back = decode_map_edit(&encode_map_edit(&edit).unwrap()).unwrap();
        assert_eq!(back, edit, "{tool}");
    }
}

fn op_strategy() -> impl Strategy<Value = (u8, usize, f32, f32)> {
    (0u8..4, 0..MapTool::ALL.len(), 0.0f32..96.0, 0.0f32..80.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Any mix of strokes, undos and redos reopens to the same contents.
    #[test]
    fn reopening_always_gives_the_same_world(ops in prop::collection::vec(op_strategy(), 1..8)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.isoterra");
        let mut doc = MapDocument::create(&path, &params()).unwrap();
        for (kind, tool, x, z) in ops {
            match kind {
                0 => {
                    doc.undo().unwrap();
                }
                1 => {
                    doc.redo().unwrap();
                }
                _ => {
                    let _ = doc.stroke(&stroke(MapTool::ALL[tool], 9.0, &[[x, z], [x + 5.0, z]]));
                }
            }
        }
        let hash = doc.content_hash();
        let info = doc.info();
        drop(doc);
        let doc = MapDocument::open(&path).unwrap();
        prop_assert_eq!(doc.content_hash(), hash);
        prop_assert_eq!(doc.info(), info);
    }
}
