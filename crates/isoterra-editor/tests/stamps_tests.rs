//! The store's multi-stamp strokes and previews that the editor relies on:
//! several stamps recorded as one stroke equal the stamps recorded one by
//! one, undo as one step, and a preview taken back leaves no trace.

use isoterra::store::{HeightmapDocument, Side2dDocument, VoxelDocument};
use isoterra::world::{
    HeightBrush, HeightTool, HeightmapParams, Side2dBrush, Side2dParams, Side2dTool, VoxelBrush,
    VoxelParams, VoxelTool,
};

fn side2d_params() -> Side2dParams {
    let p = Side2dParams::DEFAULT.with_chunk_cells(16);
    p.with_generator(p.generator.with_width_cells(96).with_height_cells(64))
}

#[test]
fn side2d_previews_leave_no_trace_and_stamps_equal_single_strokes() {
    let dir = tempfile::tempdir().unwrap();
    let stamps = [
        Side2dBrush::new(Side2dTool::Dig, [30.0, 20.0], 5.0),
        Side2dBrush::new(Side2dTool::Fill, [34.0, 22.0], 3.0).with_material(2),
        Side2dBrush::new(Side2dTool::Dig, [38.0, 20.0], 4.0),
    ];
    let mut one = Side2dDocument::create(dir.path().join("a.isoterra"), &side2d_params()).unwrap();
    let generated = one.content_hash();
    let edits: Vec<_> = stamps.iter().map(|b| one.preview(b).unwrap()).collect();
    assert_ne!(one.content_hash(), generated);
    for e in edits.iter().rev() {
        one.revert_preview(e).unwrap();
    }
    assert_eq!(one.content_hash(), generated);
    assert_eq!(one.info().strokes_total, 0, "previews record nothing");
    let out = one.stroke_stamps(&stamps).unwrap();
    assert!(out.id.is_some());
    let mut many = Side2dDocument::create(dir.path().join("b.isoterra"), &side2d_params()).unwrap();
    for b in &stamps {
        many.stroke(b).unwrap();
    }
    assert_eq!(one.content_hash(), many.content_hash());
    one.undo().unwrap();
    assert_eq!(one.content_hash(), generated);
    assert!(
        one.preview(&Side2dBrush::new(Side2dTool::Dig, [f32::NAN, 1.0], 3.0))
            .is_err()
    );
    assert_eq!(one.content_hash(), generated);
}

#[test]
fn heightmap_stamps_are_one_undo_step() {
    let dir = tempfile::tempdir().unwrap();
    let params = HeightmapParams::DEFAULT.with_chunk_cells(16).with_seed(5);
    let stamps = [
        HeightBrush::new(HeightTool::Raise, [4.0, 4.0], 6.0),
        HeightBrush::new(HeightTool::Smooth, [7.0, 5.0], 5.0).with_strength(0.7),
        HeightBrush::new(HeightTool::Lower, [-20.0, 3.0], 4.0),
    ];
    let mut one = HeightmapDocument::create(dir.path().join("a.isoterra"), &params).unwrap();
    let generated = one.content_hash();
    let out = one.stroke_stamps(&stamps).unwrap();
    assert!(out.id.is_some() && out.changed_nodes > 0);
    assert_eq!(one.info().strokes_total, 1);
    let mut many = HeightmapDocument::create(dir.path().join("b.isoterra"), &params).unwrap();
    for b in &stamps {
        many.stroke(b).unwrap();
    }
    assert_eq!(one.content_hash(), many.content_hash());
    let stroked = one.content_hash();
    one.undo().unwrap();
    assert_eq!(one.content_hash(), generated);
    one.redo().unwrap();
    assert_eq!(one.content_hash(), stroked);
    // Reopened, the stroke is still there.
    drop(one);
    let again = HeightmapDocument::open(dir.path().join("a.isoterra")).unwrap();
    assert_eq!(again.content_hash(), stroked);
    // A bad stamp changes nothing.
    let mut bad = HeightmapDocument::open(dir.path().join("b.isoterra")).unwrap();
    let before = bad.content_hash();
    let err = bad.stroke_stamps(&[
        stamps[0],
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], -1.0),
    ]);
    assert!(err.is_err());
    assert_eq!(bad.content_hash(), before);
    assert_eq!(bad.stroke_stamps(&[]).unwrap().id, None);
}

#[test]
fn voxel_stamps_are_one_undo_step() {
    let dir = tempfile::tempdir().unwrap();
    let params = VoxelParams::DEFAULT.with_chunk_cells(16);
    let stamps = [
        VoxelBrush::new(VoxelTool::Dig, [2.0, 2.0, 2.0], 4.0),
        VoxelBrush::new(VoxelTool::Add, [5.0, 2.0, 2.0], 3.0).with_material(3),
        VoxelBrush::new(VoxelTool::Dig, [-14.0, 1.0, 2.0], 3.0),
    ];
    let mut one = VoxelDocument::create(dir.path().join("a.isoterra"), &params).unwrap();
    one.ensure_region([-2, -1, -1], [1, 1, 1]).unwrap();
    let generated = one.content_hash();
    let out = one.stroke_stamps(&stamps).unwrap();
    assert!(out.id.is_some());
    let mut many = VoxelDocument::create(dir.path().join("b.isoterra"), &params).unwrap();
    many.ensure_region([-2, -1, -1], [1, 1, 1]).unwrap();
    for b in &stamps {
        many.stroke(b).unwrap();
    }
    assert_eq!(one.content_hash(), many.content_hash());
    let stroked = one.content_hash();
    one.undo().unwrap();
    assert_eq!(one.content_hash(), generated);
    one.redo().unwrap();
    assert_eq!(one.content_hash(), stroked);
    drop(one);
    let again = VoxelDocument::open(dir.path().join("a.isoterra")).unwrap();
    assert_eq!(again.info().strokes_total, 1);
}
