//! The heightmap document: strokes on disk, undo/redo across reopening,
//! only edited chunks stored, typed errors.

use isoterra_store::{
    HEIGHTMAP_KIND, HeightmapDocument, Side2dDocument, StoreError, decode_height_edit, detect_kind,
    encode_height_edit,
};
use isoterra_world::{HeightBrush, HeightEdit, HeightTool, HeightmapParams, Side2dParams};
use proptest::prelude::*;

fn params() -> HeightmapParams {
    HeightmapParams::DEFAULT.with_chunk_cells(16).with_seed(11)
}

fn probe(doc: &HeightmapDocument) -> Vec<u32> {
    (-40..40)
        .step_by(3)
        .flat_map(|z| (-40..40).step_by(3).map(move |x| [x, z]))
        .map(|g| doc.world().height(g).to_bits())
        .collect()
}

#[test]
fn strokes_undo_redo_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hm.isoterra");
    let mut doc = HeightmapDocument::create(&path, &params()).unwrap();
    assert_eq!(detect_kind(&path).unwrap(), HEIGHTMAP_KIND);
    let h0 = doc.content_hash();
    let p0 = probe(&doc);
    let a = doc
        .stroke(&HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 12.0))
        .unwrap();
    assert!(a.id.is_some() && a.changed_nodes > 0);
    assert!(a.dirty_chunks.contains(&[0, 0]) && a.dirty_chunks.contains(&[-1, -1]));
    let b = doc
        .stroke(&HeightBrush::new(HeightTool::Noise, [20.0, -5.0], 9.0).with_strength(1.0))
        .unwrap();
    assert!(b.id.is_some());
    let h2 = doc.content_hash();
    let p2 = probe(&doc);
    assert_ne!(h2, h0);
    // Only edited chunks are stored.
    assert_eq!(
        doc.file().chunk_count().unwrap(),
        doc.world().edited_chunks().len() as u64
    );
    assert_eq!(
        doc.info().chunks_stored,
        doc.world().edited_chunks().len() as u64
    );
    assert_eq!(doc.undo().unwrap(), b.id);
    doc.close().unwrap();

    // Reopen: one stroke in effect, one to redo.
    let mut doc = HeightmapDocument::open(&path).unwrap();
    let info = doc.info();
    assert_eq!(info.strokes_total, 2);
    assert_eq!(info.undo_position, 1);
    assert!(info.redo_available);
    assert_eq!(doc.redo().unwrap(), b.id);
    assert_eq!(doc.content_hash(), h2);
    assert_eq!(probe(&doc), p2);
    assert_eq!(doc.undo().unwrap(), b.id);
    assert_eq!(doc.undo().unwrap(), a.id);
    assert_eq!(doc.undo().unwrap(), None);
    assert_eq!(doc.content_hash(), h0);
    assert_eq!(probe(&doc), p0);
    assert_eq!(doc.file().chunk_count().unwrap(), 0);
    drop(doc);
    let doc = HeightmapDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), h0);
    assert!(doc.world().edited_chunks().is_empty());
}

#[test]
fn bad_brushes_record_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hm.isoterra");
    let mut doc = HeightmapDocument::create(&path, &params()).unwrap();
    doc.stroke(&HeightBrush::new(HeightTool::Lower, [3.0, 3.0], 5.0))
        .unwrap();
    let hash = doc.content_hash();
    for b in [
        HeightBrush::new(HeightTool::Raise, [f32::NAN, 0.0], 4.0),
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], -1.0),
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 4.0).with_strength(2.0),
    ] {
        assert!(matches!(doc.stroke(&b), Err(StoreError::World(_))));
    }
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(doc.info().strokes_total, 1);
    // A brush that covers no node records nothing.
    let none = doc
        .stroke(&HeightBrush::new(HeightTool::Raise, [0.5, 0.5], 0.1))
        .unwrap();
    assert_eq!(none.id, None);
    assert_eq!(doc.info().strokes_total, 1);
}

#[test]
fn kinds_and_existing_files_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hm.isoterra");
    HeightmapDocument::create(&path, &params()).unwrap();
    assert!(matches!(
        HeightmapDocument::create(&path, &params()),
        Err(StoreError::AlreadyExists { .. })
    ));
    let side = dir.path().join("side.isoterra");
    Side2dDocument::create(&side, &Side2dParams::DEFAULT).unwrap();
    assert!(matches!(
        HeightmapDocument::open(&side),
        Err(StoreError::WrongKind { .. })
    ));
    let bad = dir.path().join("bad.isoterra");
    assert!(matches!(
        HeightmapDocument::create(&bad, &params().with_chunk_cells(3)),
        Err(StoreError::World(_))
    ));
    assert!(!bad.exists());
}

#[test]
fn corrupt_deltas_are_errors() {
    assert!(decode_height_edit(b"garbage").is_err());
    let e = HeightEdit {
        nodes: vec![[1, 0], [0, 1]],
        before: vec![0.0, 0.0],
        after: vec![1.0, 2.0],
    };
    let bytes = encode_height_edit(&e).unwrap();
    assert_eq!(decode_height_edit(&bytes).unwrap(), e);
    let mut unsorted = e.clone();
    unsorted.nodes.swap(0, 1);
    let bytes = encode_height_edit(&unsorted).unwrap();
    assert!(matches!(
        decode_height_edit(&bytes),
        Err(StoreError::CorruptData { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn deltas_round_trip(
        nodes in proptest::collection::btree_set((-1000i64..1000, -1000i64..1000), 0..50),
        seed in any::<u32>(),
    ) {
        let nodes: Vec<[i64; 2]> = nodes.into_iter().map(|(z, x)| [x, z]).collect();
        let n = nodes.len();
        let e = HeightEdit {
            nodes,
            before: (0..n).map(|k| (k as f32) * 0.5 - seed as f32 * 1e-3).collect(),
            after: (0..n).map(|k| -(k as f32) * 0.25).collect(),
        };
        let back = decode_height_edit(&encode_height_edit(&e).unwrap()).unwrap();
        prop_assert_eq!(back, e);
    }
}

#[test]
fn imported_heights_are_a_stroke() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hm.isoterra");
    let mut doc = HeightmapDocument::create(&path, &params()).unwrap();
    let h0 = doc.content_hash();
    let dims = [20u32, 12];
    let heights: Vec<f32> = (0..240).map(|k| (k % 20) as f32 * 0.75 - 3.0).collect();
    let out = doc.set_heights([-5, -3], dims, &heights).unwrap();
    assert_eq!(out.changed_nodes, 240);
    for (k, h) in heights.iter().enumerate() {
        let g = [-5 + (k % 20) as i64, -3 + (k / 20) as i64];
        assert!((doc.world().height(g) - h).abs() <= 1e-4, "{g:?}");
    }
    assert!(matches!(
        doc.set_heights([0, 0], dims, &heights[..10]),
        Err(StoreError::World(_))
    ));
    assert!(matches!(
        doc.set_heights([0, 0], [1, 1], &[f32::NAN]),
        Err(StoreError::World(_))
    ));
    assert_eq!(doc.info().strokes_total, 1);
    doc.undo().unwrap();
    assert_eq!(doc.content_hash(), h0);
}

#[test]
fn a_world_made_of_an_image_keeps_it_across_reopening() {
    use isoterra_world::{HeightExtent, HeightOutside};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("img.isoterra");
    let dims = [37u32, 21];
    let heights: Vec<f32> = (0..dims[0] * dims[1])
        .map(|k| ((k % 37) as f32 * 0.3).sin() * 9.0 + (k / 37) as f32)
        .collect();
    let extent =
        HeightExtent::of_heights([3, -4], dims, [-10.0, 30.0], HeightOutside::Edge, &heights)
            .unwrap();
    let p = params().with_extent(Some(extent));
    let mut doc =
        HeightmapDocument::create_from_heights(&path, &p, [3, -4], dims, &heights).unwrap();
    let info = doc.info();
    assert_eq!(
        info.strokes_total, 0,
        "the image is the world, not a stroke"
    );
    assert_eq!(info.height_range, [-10.0, 30.0]);
    assert_eq!(info.extent.as_ref().unwrap().dims, dims);
    let (hash, seen) = (doc.content_hash(), probe(&doc));
    for (k, h) in heights.iter().enumerate() {
        let g = [3 + (k % 37) as i64, -4 + (k / 37) as i64];
        assert_eq!(doc.world().height(g).to_bits(), h.to_bits(), "{g:?}");
    }
    // Far outside: the nearest edge node.
    assert_eq!(
        doc.world().height([-500, -500]).to_bits(),
        heights[0].to_bits()
    );
    doc.stroke(&HeightBrush::new(HeightTool::Raise, [60.0, 0.0], 5.0))
        .unwrap();
    doc.undo().unwrap();
    assert_eq!(doc.content_hash(), hash);
    doc.close().unwrap();
    let doc = HeightmapDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(probe(&doc), seen);
    assert_eq!(doc.params(), &p);
    // The same heights without the extent are another world.
    let plain = HeightmapDocument::create_from_heights(
        dir.path().join("plain.isoterra"),
        &params(),
        [3, -4],
        dims,
        &heights,
    )
    .unwrap();
    assert_ne!(plain.content_hash(), hash);
    // Bad input creates nothing.
    let bad = dir.path().join("bad.isoterra");
    let r = HeightmapDocument::create_from_heights(&bad, &params(), [0, 0], [4, 4], &[0.0; 3]);
    assert!(matches!(r, Err(StoreError::World(_))));
    assert!(!bad.exists());
}
