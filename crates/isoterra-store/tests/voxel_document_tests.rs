//! Tests of the voxel document: strokes on disk, undo/redo across reopening,
//! the 3D delta codec and damaged files.

use isoterra_field::{VoxelGen, VoxelPreset};
use isoterra_store::{
    ChunkKey, ChunkLayer, Side2dDocument, StoreError, VoxelDocument, WorldFile, decode_delta3,
    encode_delta3,
};
use isoterra_world::{Side2dParams, VoxelBrush, VoxelEdit, VoxelParams, VoxelTool};
use proptest::prelude::*;

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn params() -> VoxelParams {
    VoxelParams::DEFAULT
        .with_chunk_cells(8)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 42))
}

/// Value bits and materials of every node in a box around the origin.
fn sample(doc: &mut VoxelDocument) -> Vec<(u32, u8)> {
    let w = doc.world_mut();
    w.ensure_region([-2, -2, -2], [1, 1, 1]).unwrap();
    let mut out = Vec::new();
    for z in -16..16 {
        for y in -16..16 {
            for x in -16..16 {
                let (v, m) = w.node([x, y, z]).unwrap();
                out.push((v.to_bits(), m));
            }
        }
    }
    out
}

fn brushes() -> Vec<VoxelBrush> {
    vec![
        VoxelBrush::new(VoxelTool::Dig, [1.0, 0.0, 2.0], 4.5),
        VoxelBrush::new(VoxelTool::Add, [-6.0, 6.0, 3.0], 3.0).with_material(4),
        VoxelBrush::new(VoxelTool::Smooth, [0.0, 1.0, 0.0], 5.0).with_strength(0.5),
    ]
}

#[test]
fn strokes_survive_reopening_with_the_same_bytes() {
    let dir = temp();
    let path = dir.path().join("v.isoterra");
    let mut doc = VoxelDocument::create(&path, &params()).unwrap();
    let fresh_hash = doc.content_hash();
    for b in brushes() {
        let out = doc.stroke(&b).unwrap();
        assert!(out.id.is_some() && out.changed_nodes > 0);
    }
    let edited = sample(&mut doc);
    let hash = doc.content_hash();
    assert_ne!(hash, fresh_hash);
    let info = doc.info();
    assert_eq!(info.kind, "voxel");
    assert_eq!(info.strokes_total, 3);
    assert!(info.chunks_stored > 0);
    drop(doc);

    let mut doc = VoxelDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), hash);
    assert_eq!(sample(&mut doc), edited);
    assert_eq!(doc.info().undo_position, 3);
    assert_eq!(
        doc.world().modified_chunks().count() as u64,
        doc.info().chunks_stored
    );
}

#[test]
fn undo_and_redo_work_across_reopening() {
    let dir = temp();
    let path = dir.path().join("v.isoterra");
    let mut doc = VoxelDocument::create(&path, &params()).unwrap();
    let fresh = sample(&mut doc);
    let fresh_hash = doc.content_hash();
    let mut states = Vec::new();
    for b in brushes() {
        doc.stroke(&b).unwrap();
        states.push((sample(&mut doc), doc.content_hash()));
    }
    drop(doc);

    let mut doc = VoxelDocument::open(&path).unwrap();
    assert!(doc.undo().unwrap().is_some());
    assert_eq!(sample(&mut doc), states[1].0);
    drop(doc);
    let mut doc = VoxelDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), states[1].1);
    doc.undo().unwrap();
    doc.undo().unwrap();
    assert!(doc.undo().unwrap().is_none());
    assert_eq!(sample(&mut doc), fresh);
    assert_eq!(doc.content_hash(), fresh_hash);
    assert_eq!(doc.info().chunks_stored, 0);
    assert!(doc.info().redo_available);
    drop(doc);

    let mut doc = VoxelDocument::open(&path).unwrap();
    assert_eq!(doc.content_hash(), fresh_hash);
    for state in &states {
        assert!(doc.redo().unwrap().is_some());
        assert_eq!(&sample(&mut doc), &state.0);
        assert_eq!(doc.content_hash(), state.1);
    }
    assert!(doc.redo().unwrap().is_none());
    drop(doc);
    let mut doc = VoxelDocument::open(&path).unwrap();
    assert_eq!(sample(&mut doc), states[2].0);
}

#[test]
fn bad_brushes_change_nothing_and_record_nothing() {
    let dir = temp();
    let path = dir.path().join("v.isoterra");
    let mut doc = VoxelDocument::create(&path, &params()).unwrap();
    let before = doc.content_hash();
    let e = doc.stroke(&VoxelBrush::new(VoxelTool::Dig, [0.0; 3], f32::NAN));
    assert!(matches!(e, Err(StoreError::World(_))), "{e:?}");
    assert_eq!(doc.content_hash(), before);
    assert_eq!(doc.info().strokes_total, 0);
    // Digging where there is only air changes nothing and records nothing.
    let out = doc
        .stroke(&VoxelBrush::new(VoxelTool::Dig, [0.0, 500.0, 0.0], 2.0))
        .unwrap();
    assert_eq!(out.id, None);
}

#[test]
fn corrupt_chunk_payloads_are_reported() {
    let dir = temp();
    let path = dir.path().join("v.isoterra");
    let mut doc = VoxelDocument::create(&path, &params()).unwrap();
    doc.stroke(&brushes()[0]).unwrap();
    drop(doc);
    let mut file = WorldFile::open(&path).unwrap();
    let key = file.chunk_keys().unwrap()[0];
    file.put_chunks(&[(key, Some(vec![1, 2, 3, 4, 5]))])
        .unwrap();
    drop(file);
    let e = VoxelDocument::open(&path).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}");

    // A chunk of the wrong size.
    let mut file = WorldFile::open(&path).unwrap();
    let small = isoterra_store::ChunkData::new(
        isoterra_store::ChunkEncoding::F32,
        [2, 2, 2],
        vec![0.0; 8],
        Some(vec![0; 8]),
    )
    .unwrap();
    file.put_chunks(&[(key, Some(isoterra_store::encode_chunk(&small)))])
        .unwrap();
    drop(file);
    assert!(matches!(
        VoxelDocument::open(&path),
        Err(StoreError::Corrupt { .. })
    ));

    // A chunk at lod 1.
    let mut file = WorldFile::open(&path).unwrap();
    file.put_chunks(&[(key, None)]).unwrap();
    let lod1 = ChunkKey {
        layer: ChunkLayer::FIELD,
        lod: 1,
        ..key
    };
    file.put_chunks(&[(lod1, Some(isoterra_store::encode_chunk(&small)))])
        .unwrap();
    drop(file);
    assert!(matches!(
        VoxelDocument::open(&path),
        Err(StoreError::Corrupt { .. })
    ));
}

#[test]
fn other_kinds_are_refused() {
    let dir = temp();
    let path = dir.path().join("s.isoterra");
    drop(Side2dDocument::create(&path, &Side2dParams::DEFAULT).unwrap());
    assert!(matches!(
        VoxelDocument::open(&path),
        Err(StoreError::WrongKind { .. })
    ));
    let path = dir.path().join("v.isoterra");
    drop(VoxelDocument::create(&path, &params()).unwrap());
    assert!(VoxelDocument::create(&path, &params()).is_err());
    let bad = dir.path().join("bad.isoterra");
    assert!(VoxelDocument::create(&bad, &params().with_chunk_cells(0)).is_err());
    assert!(!bad.exists());
}

#[test]
fn damaged_deltas_are_errors() {
    let edit = VoxelEdit {
        nodes: vec![[-4, 2, 3], [1, 2, 3], [0, 0, 9]],
        before: vec![0.5, -1.0, 0.25],
        after: vec![-0.5, 1.0, 0.0],
        mat_before: vec![0, 1, 2],
        mat_after: vec![3, 4, 5],
    };
    let bytes = encode_delta3(&edit).unwrap();
    assert_eq!(decode_delta3(&bytes).unwrap(), edit);
    for cut in 0..bytes.len() {
        assert!(decode_delta3(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(decode_delta3(&bad).is_err());
    let mut unsorted = edit.clone();
    unsorted.nodes.swap(0, 1);
    assert!(encode_delta3(&unsorted).is_err());
}

/// A delta whose body is compressed as it is written (200,000 nodes, a
/// 6.8 MB body) decodes to the edit, bit for bit, and a damaged frame is
/// reported.
#[test]
fn a_large_delta_is_streamed_and_round_trips() {
    let mut edit = VoxelEdit::default();
    for i in 0..200_000i64 {
        edit.nodes.push([i % 100 - 50, (i / 100) % 40, i / 4000]);
        edit.before.push((i as f32 * 0.37).sin());
        edit.after.push(-((i as f32 * 0.11).cos()));
        edit.mat_before.push((i % 7) as u8);
        edit.mat_after.push((i % 5) as u8);
    }
    let bytes = encode_delta3(&edit).unwrap();
    assert!(bytes.len() < 200_000 * 34, "compressed: {}", bytes.len());
    let back = decode_delta3(&bytes).unwrap();
    assert_eq!(back.nodes, edit.nodes);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back.before), bits(&edit.before));
    assert_eq!(bits(&back.after), bits(&edit.after));
    assert_eq!(back.mat_before, edit.mat_before);
    assert_eq!(back.mat_after, edit.mat_after);
    let mut bad = bytes.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x10;
    assert!(decode_delta3(&bad).is_err(), "a flipped bit is caught");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn delta_round_trip_is_exact(
        raw in prop::collection::btree_map(
            prop::array::uniform3(-1000i64..1000),
            (-1.0f32..=1.0, -1.0f32..=1.0, any::<u8>(), any::<u8>()),
            0..40,
        )
    ) {
        let mut items: Vec<_> = raw.into_iter().collect();
        items.sort_by_key(|(p, _)| [p[2], p[1], p[0]]);
        let mut edit = VoxelEdit::default();
        for (p, (b, a, mb, ma)) in items {
            edit.nodes.push(p);
            edit.before.push(b);
            edit.after.push(a);
            edit.mat_before.push(mb);
            edit.mat_after.push(ma);
        }
        let back = decode_delta3(&encode_delta3(&edit).unwrap()).unwrap();
        prop_assert_eq!(back.nodes, edit.nodes);
        prop_assert_eq!(
            back.before.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            edit.before.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        prop_assert_eq!(
            back.after.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            edit.after.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        prop_assert_eq!(back.mat_before, edit.mat_before);
        prop_assert_eq!(back.mat_after, edit.mat_after);
    }
}
