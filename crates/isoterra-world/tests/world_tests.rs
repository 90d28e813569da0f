//! Side-view world: construction, chunks, dirty tracking, rebuilds, contours,
//! colliders, queries and islands.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use isoterra_field::{Field2, Material, MaterialGrid, MaterialTable, NodeRect, Side2dPreset};
use isoterra_world::{
    EditDirection, Side2dBrush, Side2dEdit, Side2dParams, Side2dTool, Side2dWorld, WorldError,
};

// ---------------------------------------------------------------- construction

#[test]
fn generate_builds_the_chunk_grid_and_starts_all_dirty() {
    let world = generated(Side2dPreset::Hills, 3, 100, 40, 32);
    assert_eq!((world.field().width(), world.field().height()), (101, 41));
    assert_eq!((world.chunks_x(), world.chunks_y()), (4, 2));
    assert_eq!(world.dirty_count(), 8);
    let last = world.chunk(3, 1).unwrap();
    assert_eq!(
        (last.cells.x0, last.cells.x1, last.cells.y0, last.cells.y1),
        (96, 100, 32, 40)
    );
    assert!(last.is_dirty());
    assert!(world.chunk(4, 0).is_none());
    assert!(world.chunk(0, 2).is_none());
}

#[test]
fn rebuild_all_clears_the_queue_and_bumps_versions() {
    let mut world = generated(Side2dPreset::Caves, 5, 64, 48, 16);
    world.rebuild_all();
    assert_eq!(world.dirty_count(), 0);
    for c in world.chunks() {
        assert!(!c.is_dirty());
        assert_eq!(c.version, 1);
    }
    let r = world.rebuild(None);
    assert_eq!((r.rebuilt, r.remaining), (0, 0));
    // Something was meshed.
    let tris: usize = world.chunks().iter().map(|c| c.mesh.indices.len()).sum();
    assert!(tris > 0);
}

#[test]
fn generate_rejects_bad_params() {
    let p = params(64, 32, 16);
    for bad in [p.with_chunk_cells(0), p.with_iso(f32::NAN), p.with_iso(2.0)] {
        assert!(matches!(
            Side2dWorld::generate(&bad),
            Err(WorldError::InvalidParameter { .. })
        ));
    }
    let zero = p.with_generator(p.generator.with_size(0, 10));
    assert!(matches!(
        Side2dWorld::generate(&zero),
        Err(WorldError::Field(_))
    ));
}

#[test]
fn from_parts_checks_sizes_border_and_materials() {
    let p = params(20, 10, 8);
    let good = || {
        let mut f = Field2::from_fn(21, 11, |_, y| 4.0 - y as f32).unwrap();
        f.clear_border(-1.0).unwrap();
        f
    };
    let f = good();
    let m = MaterialGrid::like(&f, 0);
    assert!(Side2dWorld::from_parts(&p, f.clone(), m.clone()).is_ok());
    // Wrong field size.
    let small = Field2::new(20, 11, -1.0).unwrap();
    assert!(matches!(
        Side2dWorld::from_parts(&p, small.clone(), MaterialGrid::like(&small, 0)),
        Err(WorldError::Mismatch { .. })
    ));
    // Wrong material size.
    assert!(matches!(
        Side2dWorld::from_parts(&p, f.clone(), MaterialGrid::new(21, 10, 0).unwrap()),
        Err(WorldError::Mismatch { .. })
    ));
    // Wrong cell size and origin.
    let scaled = f.clone().with_cell_size(2.0).unwrap();
    assert!(Side2dWorld::from_parts(&p, scaled, m.clone()).is_err());
    let moved = f.clone().with_origin([1.0, 0.0]).unwrap();
    assert!(Side2dWorld::from_parts(&p, moved, m.clone()).is_err());
    // Solid border.
    let mut solid_border = f.clone();
    solid_border.set(0, 3, 0.5).unwrap();
    assert!(matches!(
        Side2dWorld::from_parts(&p, solid_border, m.clone()),
        Err(WorldError::InvalidParameter { .. })
    ));
    // Unknown material id.
    let mut bad_ids = m.clone();
    bad_ids.set(5, 5, 200).unwrap();
    assert!(Side2dWorld::from_parts(&p, f, bad_ids).is_err());
}

#[test]
fn with_table_checks_ids() {
    let world = flat_world(16, 16, 8, 6.0);
    let one = MaterialTable::new(vec![Material::new("stone", [1, 2, 3, 255])]).unwrap();
    let world = world.with_table(one).unwrap();
    assert_eq!(world.table().len(), 1);
    let mut ids = world.materials().clone();
    ids.set(3, 3, 2).unwrap();
    let p = *world.params();
    let w2 = Side2dWorld::from_parts(&p, world.field().clone(), ids).unwrap();
    let one = MaterialTable::new(vec![Material::new("stone", [1, 2, 3, 255])]).unwrap();
    assert!(w2.with_table(one).is_err());
}

// ---------------------------------------------------------------- edits and undo

#[test]
fn dig_then_undo_restores_exact_bytes_and_redo_the_after_state() {
    let mut world = generated(Side2dPreset::Caves, 11, 96, 64, 16);
    let before = snapshot(&world);
    let edit = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [40.3, 30.7], 7.5))
        .unwrap();
    assert!(!edit.is_empty());
    check_edit_shape(&world, &edit);
    let after = snapshot(&world);
    assert_ne!(before, after);
    world.apply_edit(&edit, EditDirection::Backward).unwrap();
    assert_eq!(snapshot(&world), before);
    world.apply_edit(&edit, EditDirection::Forward).unwrap();
    assert_eq!(snapshot(&world), after);
    // The inverse edit undoes forward.
    world
        .apply_edit(&edit.inverse(), EditDirection::Forward)
        .unwrap();
    assert_eq!(snapshot(&world), before);
}

#[test]
fn fill_sets_material_only_where_nodes_become_solid() {
    let mut world = flat_world(40, 40, 16, 10.0);
    let edit = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Fill, [20.0, 10.0], 5.0).with_material(2))
        .unwrap();
    check_edit_shape(&world, &edit);
    let iso = world.params().iso;
    for k in 0..edit.nodes.len() {
        let became_solid = edit.before[k] < iso && edit.after[k] >= iso;
        assert_eq!(
            edit.mat_after[k] == 2,
            became_solid,
            "node {}",
            edit.nodes[k]
        );
    }
    assert!(world.is_solid([20.0, 14.0]));
    assert_eq!(world.materials().get(20, 14), 2);
    // Deep ground kept its material.
    assert_eq!(world.materials().get(20, 6), 0);
}

#[test]
fn strength_blends_toward_the_target() {
    let mut world = world_from_fn(30, 30, 16, |_, _| 1.0);
    let edit = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [15.0, 15.0], 4.0).with_strength(0.5))
        .unwrap();
    // Centre: target -1, old 1 -> 0.
    assert_eq!(world.field().get(15, 15), 0.0);
    assert!(!edit.is_empty());
    // A second half-strength stroke goes halfway again.
    world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [15.0, 15.0], 4.0).with_strength(0.5))
        .unwrap();
    assert_eq!(world.field().get(15, 15), -0.5);
}

#[test]
fn square_brush_uses_chebyshev_distance() {
    let mut a = world_from_fn(40, 40, 16, |_, _| 1.0);
    let mut b = a.clone();
    a.apply_brush(&Side2dBrush::new(Side2dTool::Dig, [20.0, 20.0], 6.0))
        .unwrap();
    b.apply_brush(
        &Side2dBrush::new(Side2dTool::Dig, [20.0, 20.0], 6.0)
            .with_shape(isoterra_world::Side2dBrushShape::Square),
    )
    .unwrap();
    // The corner (25, 25): distance 7.07 for the circle, 5 for the square.
    assert!(a.is_solid([25.0, 25.0]));
    assert!(!b.is_solid([25.0, 25.0]));
    assert_eq!(b.field().get(25, 25), -1.0);
}

#[test]
fn brushes_skip_border_and_indestructible_nodes() {
    let mut field = Field2::from_fn(41, 41, |_, _| 1.0).unwrap();
    field.clear_border(-1.0).unwrap();
    // A bedrock column at x = 20.
    let mut mats = MaterialGrid::like(&field, 0);
    for y in 0..41 {
        mats.set(20, y, 3).unwrap();
    }
    let p = params(40, 40, 16);
    let mut world = Side2dWorld::from_parts(&p, field, mats).unwrap();
    let before = snapshot(&world);
    let edit = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [20.0, 2.0], 9.0))
        .unwrap();
    check_edit_shape(&world, &edit);
    let after = snapshot(&world);
    for y in 0..41u32 {
        let i = (y * 41 + 20) as usize;
        assert_eq!(before.0[i], after.0[i], "bedrock node (20, {y}) changed");
    }
    // Border untouched everywhere.
    for i in 0..before.0.len() {
        let (x, y) = (i as u32 % 41, i as u32 / 41);
        if world.field().is_border(x, y) {
            assert_eq!(before.0[i], after.0[i]);
        }
    }
    // Fill skips bedrock too.
    let mut field = Field2::new(41, 41, -1.0).unwrap();
    field.clear_border(-1.0).unwrap();
    let mut mats = MaterialGrid::like(&field, 0);
    mats.set(10, 10, 3).unwrap();
    let mut world = Side2dWorld::from_parts(&p, field, mats).unwrap();
    world
        .apply_brush(&Side2dBrush::new(Side2dTool::Fill, [10.0, 10.0], 3.0))
        .unwrap();
    assert_eq!(world.field().get(10, 10), -1.0);
    assert_eq!(world.field().get(11, 10), 1.0);
}

#[test]
fn bad_brushes_change_nothing() {
    let mut world = generated(Side2dPreset::Hills, 2, 64, 32, 16);
    world.rebuild_all();
    let before = snapshot(&world);
    let ok = Side2dBrush::new(Side2dTool::Dig, [30.0, 20.0], 4.0);
    for bad in [
        ok.with_radius(f32::NAN),
        ok.with_radius(f32::INFINITY),
        ok.with_radius(0.0),
        ok.with_radius(-3.0),
        ok.with_radius(1e9),
        ok.with_strength(f32::NAN),
        ok.with_strength(0.0),
        ok.with_strength(1.0001),
        ok.with_strength(-0.5),
        ok.with_center([f32::NAN, 3.0]),
        ok.with_center([1.0, f32::INFINITY]),
        ok.with_material(99),
        ok.with_tool(Side2dTool::Fill).with_material(5),
    ] {
        let err = world.apply_brush(&bad).unwrap_err();
        assert!(
            matches!(err, WorldError::InvalidParameter { .. }),
            "{bad:?}: {err}"
        );
        assert_eq!(snapshot(&world), before);
        assert_eq!(world.dirty_count(), 0);
    }
}

#[test]
fn brush_outside_the_world_is_an_empty_edit() {
    let mut world = flat_world(32, 32, 8, 10.0);
    world.rebuild_all();
    let before = snapshot(&world);
    for c in [[-50.0, 10.0], [10.0, 500.0], [1e30, -1e30], [-3.0, -3.0]] {
        let edit = world
            .apply_brush(&Side2dBrush::new(Side2dTool::Dig, c, 2.0))
            .unwrap();
        assert!(edit.is_empty(), "{c:?}");
        assert!(edit.rect.is_empty());
    }
    assert_eq!(snapshot(&world), before);
    assert_eq!(world.dirty_count(), 0);
    // A brush in the air changes nothing either.
    let edit = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [16.0, 25.0], 2.0))
        .unwrap();
    assert!(edit.is_empty());
}

#[test]
fn apply_edit_rejects_malformed_edits_and_changes_nothing() {
    let mut world = flat_world(32, 32, 8, 10.0);
    let edit = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [16.0, 10.0], 3.0))
        .unwrap();
    world.rebuild_all();
    let state = snapshot(&world);
    let w = world.field().width();
    let mut cases: Vec<Side2dEdit> = Vec::new();
    let mut e = edit.clone();
    e.before.pop();
    cases.push(e);
    let mut e = edit.clone();
    e.mat_after.push(0);
    cases.push(e);
    let mut e = edit.clone();
    e.nodes.swap(0, 1);
    cases.push(e);
    let mut e = edit.clone();
    *e.nodes.last_mut().unwrap() = 10_000_000;
    cases.push(e);
    let mut e = edit.clone();
    e.nodes[0] = 0; // border
    e.rect = NodeRect::new(0, 0, w, w);
    cases.push(e);
    let mut e = edit.clone();
    e.rect = NodeRect::new(0, 0, 1, 1);
    cases.push(e);
    let mut e = edit.clone();
    e.before[2] = f32::NAN;
    cases.push(e);
    let mut e = edit.clone();
    e.mat_before[1] = 250;
    cases.push(e);
    for bad in &cases {
        assert!(world.apply_edit(bad, EditDirection::Backward).is_err());
        assert_eq!(snapshot(&world), state);
        assert_eq!(world.dirty_count(), 0);
    }
    // NaN in `before` does not matter for a redo.
    let mut e = edit.clone();
    e.before[2] = f32::NAN;
    assert!(world.apply_edit(&e, EditDirection::Forward).is_ok());
    // An empty edit is fine.
    world
        .apply_edit(&Side2dEdit::default(), EditDirection::Backward)
        .unwrap();
}

// ---------------------------------------------------------------- dirty tracking

#[test]
fn dirty_chunks_are_exactly_those_touching_changed_nodes() {
    let mut world = generated(Side2dPreset::Caves, 21, 96, 64, 16);
    for (i, (c, r)) in [
        ([40.0, 30.0], 5.0),
        ([16.0, 16.0], 2.0),
        ([47.5, 31.9], 0.7),
        ([3.0, 60.0], 4.0),
        ([95.0, 10.0], 6.0),
    ]
    .into_iter()
    .enumerate()
    {
        world.rebuild_all();
        let tool = if i % 2 == 0 {
            Side2dTool::Dig
        } else {
            Side2dTool::Fill
        };
        let edit = world.apply_brush(&Side2dBrush::new(tool, c, r)).unwrap();
        assert_eq!(
            dirty_set(&world),
            chunks_touching(&world, &edit.nodes),
            "brush at {c:?}"
        );
        // Undo dirties the same chunks.
        world.rebuild_all();
        world.apply_edit(&edit, EditDirection::Backward).unwrap();
        assert_eq!(dirty_set(&world), chunks_touching(&world, &edit.nodes));
    }
}

#[test]
fn a_node_on_a_chunk_corner_dirties_four_chunks() {
    let mut world = flat_world(64, 64, 16, 30.0);
    world.rebuild_all();
    let w = world.field().width();
    let make = |x: u32, y: u32, old: f32| Side2dEdit {
        rect: NodeRect::new(x, y, x + 1, y + 1),
        nodes: vec![y * w + x],
        before: vec![old],
        after: vec![0.25],
        mat_before: vec![0],
        mat_after: vec![0],
    };
    type Chunks = BTreeSet<[u32; 2]>;
    let cases: [(u32, u32, Chunks); 4] = [
        (32, 32, [[1, 1], [2, 1], [1, 2], [2, 2]].into()),
        (32, 20, [[1, 1], [2, 1]].into()),
        (20, 16, [[1, 0], [1, 1]].into()),
        (21, 21, [[1, 1]].into()),
    ];
    for (x, y, expect) in cases {
        let old = world.field().get(x, y);
        let e = make(x, y, old);
        world.apply_edit(&e, EditDirection::Forward).unwrap();
        assert_eq!(dirty_set(&world), expect, "node ({x}, {y})");
        world.apply_edit(&e, EditDirection::Backward).unwrap();
        world.rebuild_all();
    }
    // Nodes next to the world's edge (x = 1 and x = 63) touch their column only.
    let e = make(63, 40, world.field().get(63, 40));
    world.apply_edit(&e, EditDirection::Forward).unwrap();
    assert_eq!(dirty_set(&world), BTreeSet::from([[3, 2]]));
}

#[test]
fn rebuild_with_a_budget_makes_progress_and_finishes() {
    let mut world = generated(Side2dPreset::Caves, 8, 128, 64, 8);
    let total = world.dirty_count();
    assert_eq!(total, 16 * 8);
    let mut rounds = 0;
    let mut rebuilt = 0;
    loop {
        let r = world.rebuild(Some(Duration::ZERO));
        assert!(r.rebuilt >= 1);
        rebuilt += r.rebuilt;
        assert_eq!(r.remaining, world.dirty_count());
        assert_eq!(rebuilt + r.remaining, total);
        rounds += 1;
        if r.remaining == 0 {
            break;
        }
    }
    assert!(rounds > 1);
    assert!(
        world
            .chunks()
            .iter()
            .all(|c| !c.is_dirty() && c.version == 1)
    );
    // A generous budget does everything at once.
    world.mark_all_dirty();
    let r = world.rebuild(Some(Duration::from_secs(3600)));
    assert_eq!((r.rebuilt, r.remaining), (total, 0));
}

#[test]
fn rebuilt_chunks_equal_fresh_rebuilds() {
    // Incremental rebuilds after edits give the same chunks as a world built
    // from the final field in one go.
    let mut world = generated(Side2dPreset::Hills, 4, 96, 64, 16);
    world.rebuild_all();
    for (k, c) in [[20.0, 40.0], [33.0, 33.0], [64.0, 16.0], [70.0, 45.0]]
        .into_iter()
        .enumerate()
    {
        let tool = if k % 2 == 0 {
            Side2dTool::Dig
        } else {
            Side2dTool::Fill
        };
        world.apply_brush(&Side2dBrush::new(tool, c, 6.0)).unwrap();
        world.rebuild(Some(Duration::ZERO));
    }
    world.rebuild_all();
    let mut fresh = Side2dWorld::from_parts(
        world.params(),
        world.field().clone(),
        world.materials().clone(),
    )
    .unwrap();
    fresh.rebuild_all();
    for (a, b) in world.chunks().iter().zip(fresh.chunks()) {
        assert_eq!(a.mesh, b.mesh);
        assert_eq!(a.segments, b.segments);
        assert_eq!(a.polylines, b.polylines);
        assert_eq!(a.colliders, b.colliders);
    }
}

#[test]
fn rebuild_output_does_not_depend_on_thread_count() {
    let base = generated(Side2dPreset::Cellular, 9, 96, 96, 16);
    let build = |threads: usize| {
        let mut w = base.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| w.rebuild_all());
        w
    };
    let one = build(1);
    let four = build(4);
    for (a, b) in one.chunks().iter().zip(four.chunks()) {
        assert_eq!(a.mesh, b.mesh);
        assert_eq!(a.segments, b.segments);
        assert_eq!(a.polylines, b.polylines);
        assert_eq!(a.colliders, b.colliders);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| four.contours()), one.contours());
}

#[test]
fn steady_dig_and_rebuild_reuses_chunk_buffers() {
    steady_loop_reuses_buffers(
        |_| Side2dBrush::new(Side2dTool::Dig, [64.0, 30.0], 8.0),
        false,
    );
}

fn steady_loop_reuses_buffers(pick: impl Fn(&Side2dWorld) -> Side2dBrush, new_loop: bool) {
    // Point buffers move between a chunk's polylines and its spare ones when
    // a dig changes how many polylines it has; `alloc_tests.rs` checks them
    // by counting allocations.
    let mut world = Side2dWorld::generate(
        &params(128, 64, 16)
            .with_generator(
                isoterra_field::Side2dGen::DEFAULT
                    .with_preset(Side2dPreset::Hills)
                    .with_seed(6)
                    .with_size(128, 64),
            )
            .with_strip_width_cells(0.5),
    )
    .unwrap();
    world.rebuild_all();
    let brush = pick(&world);
    let cycle = |world: &mut Side2dWorld| {
        let e = world.apply_brush(&brush).unwrap();
        world.rebuild(None);
        world.apply_edit(&e, EditDirection::Backward).unwrap();
        world.rebuild(None);
        e
    };
    // Warm up.
    let e = cycle(&mut world);
    cycle(&mut world);
    let touched = chunks_touching(&world, &e.nodes);
    assert!(!touched.is_empty());
    let lines_now = |world: &Side2dWorld| -> usize {
        touched
            .iter()
            .map(|&[cx, cy]| world.chunk(cx, cy).unwrap().polylines.len())
            .sum()
    };
    let undone_lines = lines_now(&world);
    world.apply_brush(&brush).unwrap();
    world.rebuild(None);
    let dug_lines = lines_now(&world);
    world.apply_edit(&e, EditDirection::Backward).unwrap();
    world.rebuild(None);
    if new_loop {
        assert!(dug_lines > undone_lines, "{dug_lines} vs {undone_lines}");
    }
    let fingerprint = |world: &Side2dWorld| -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for &[cx, cy] in &touched {
            let c = world.chunk(cx, cy).unwrap();
            v.push((
                c.mesh.positions.as_ptr() as usize,
                c.mesh.positions.capacity(),
            ));
            v.push((c.mesh.indices.as_ptr() as usize, c.mesh.indices.capacity()));
            v.push((c.mesh.uvs.as_ptr() as usize, c.mesh.uvs.capacity()));
            v.push((
                c.segments.points.as_ptr() as usize,
                c.segments.points.capacity(),
            ));
            v.push((
                c.segments.segments.as_ptr() as usize,
                c.segments.segments.capacity(),
            ));
            v.push((c.polylines.as_ptr() as usize, c.polylines.capacity()));
            v.push((c.colliders.as_ptr() as usize, c.colliders.capacity()));
            v.push((
                c.strip.positions.as_ptr() as usize,
                c.strip.positions.capacity(),
            ));
            v.push((
                c.strip.indices.as_ptr() as usize,
                c.strip.indices.capacity(),
            ));
        }
        v
    };
    let versions: Vec<u64> = world.chunks().iter().map(|c| c.version).collect();
    let before = fingerprint(&world);
    for _ in 0..5 {
        cycle(&mut world);
    }
    assert_eq!(fingerprint(&world), before);
    // The touched chunks were really rebuilt (twice per cycle).
    for &[cx, cy] in &touched {
        let i = (cy * world.chunks_x() + cx) as usize;
        assert_eq!(world.chunks()[i].version, versions[i] + 10);
    }
}

// ---------------------------------------------------------------- contours and colliders

#[test]
fn chunked_contours_equal_whole_field_contours() {
    for (preset, seed, chunk) in [
        (Side2dPreset::Caves, 1, 16),
        (Side2dPreset::Hills, 2, 7),
        (Side2dPreset::Cellular, 3, 32),
        (Side2dPreset::Caves, 4, 5),
    ] {
        let mut world = generated(preset, seed, 100, 70, chunk);
        world.rebuild_all();
        let whole = summary(&whole_field_contours(&world));
        let chunked = summary(&world.contours());
        assert_eq!(chunked.0, whole.0, "{preset} loops");
        assert_eq!(
            chunked.1, 0,
            "{preset}: open chains in a world with an empty border"
        );
        assert!(
            (chunked.2 - whole.2).abs() < 1e-6 * whole.2.abs().max(1.0),
            "{preset} area"
        );
        assert!(whole.2 > 0.0);
    }
}

#[test]
fn contours_of_a_partly_dirty_world_match_too() {
    let mut world = generated(Side2dPreset::Caves, 12, 96, 64, 16);
    world.rebuild_all();
    world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [48.0, 32.0], 9.0))
        .unwrap();
    world
        .apply_brush(&Side2dBrush::new(Side2dTool::Fill, [20.0, 50.0], 5.0))
        .unwrap();
    assert!(world.dirty_count() > 0);
    let whole = summary(&whole_field_contours(&world));
    let chunked = summary(&world.contours());
    assert_eq!(chunked.0, whole.0);
    assert_eq!(chunked.1, 0);
    assert!((chunked.2 - whole.2).abs() < 1e-6 * whole.2.abs().max(1.0));
    // contours() did not rebuild anything.
    assert!(world.dirty_count() > 0);
}

#[test]
fn chunk_chains_end_on_chunk_borders() {
    let mut world = generated(Side2dPreset::Caves, 13, 96, 64, 16);
    world.rebuild_all();
    let mut open = 0;
    for c in world.chunks() {
        let r = c.cells;
        let on_border = |p: [f32; 2]| {
            p[0] == r.x0 as f32 || p[0] == r.x1 as f32 || p[1] == r.y0 as f32 || p[1] == r.y1 as f32
        };
        for l in &c.polylines {
            if !l.closed {
                open += 1;
                assert!(on_border(l.points[0]) && on_border(*l.points.last().unwrap()));
            }
        }
        // Colliders keep the chain ends.
        let ends = |v: &[isoterra_mesh::Polyline]| -> Vec<[[f32; 2]; 2]> {
            v.iter()
                .filter(|l| !l.closed)
                .map(|l| [l.points[0], *l.points.last().unwrap()])
                .collect()
        };
        assert_eq!(ends(&c.colliders), ends(&c.polylines));
        let seg_count: usize = c.polylines.iter().map(|l| l.points.len()).sum();
        let col_count: usize = c.colliders.iter().map(|l| l.points.len()).sum();
        assert!(col_count <= seg_count);
    }
    assert!(open > 0);
}

#[test]
fn chunk_polylines_equal_the_joiner_on_the_chunk_segments() {
    let mut world = generated(Side2dPreset::Caves, 15, 96, 64, 16);
    world.rebuild_all();
    let mut joiner = isoterra_mesh::ContourJoiner::new();
    let mut out = Vec::new();
    let mut lines = 0;
    for c in world.chunks() {
        joiner.join(&[&c.segments], &mut out);
        assert_eq!(c.polylines, out, "chunk {:?}", c.coord);
        // Open chains first, closed loops after.
        let first_loop = c.polylines.iter().position(|l| l.closed);
        if let Some(k) = first_loop {
            assert!(c.polylines[k..].iter().all(|l| l.closed));
        }
        assert!(
            c.polylines
                .iter()
                .all(|l| l.points.len() >= if l.closed { 3 } else { 2 })
        );
        lines += c.polylines.len();
    }
    assert!(lines > 0);
}

#[test]
fn strips_follow_the_contours_when_enabled() {
    let spec = isoterra_field::Side2dGen::DEFAULT
        .with_preset(Side2dPreset::Caves)
        .with_seed(16)
        .with_size(96, 64);
    let base = Side2dParams::DEFAULT
        .with_generator(spec)
        .with_chunk_cells(16);
    let mut off = Side2dWorld::generate(&base).unwrap();
    off.rebuild_all();
    assert!(
        off.chunks()
            .iter()
            .all(|c| c.strip.positions.is_empty() && c.strip.indices.is_empty())
    );
    let mut on = Side2dWorld::generate(&base.with_strip_width_cells(0.75)).unwrap();
    on.rebuild_all();
    let mut with_contours = 0;
    let (mut inner_solid, mut inner_total) = (0, 0);
    for c in on.chunks() {
        let s = &c.strip;
        assert_eq!(s.positions.len(), s.uvs.len());
        assert_eq!(s.indices.len() % 3, 0);
        assert!(s.indices.iter().all(|&i| (i as usize) < s.positions.len()));
        if c.polylines.is_empty() {
            assert!(s.indices.is_empty());
            continue;
        }
        with_contours += 1;
        assert!(
            !s.indices.is_empty(),
            "chunk {:?} has contours but no strip",
            c.coord
        );
        // Two vertices per polyline point (one more point per closed loop).
        let points: usize = c
            .polylines
            .iter()
            .map(|l| l.points.len() + usize::from(l.closed))
            .sum();
        assert_eq!(s.positions.len(), 2 * points);
        // The inner edge lies in solid ground (but where the solid is thinner
        // than the strip).
        let inside = s
            .positions
            .iter()
            .zip(&s.uvs)
            .filter(|(_, uv)| uv[1] == 1.0)
            .filter(|(p, _)| on.is_solid([p[0], p[1]]))
            .count();
        inner_solid += inside;
        inner_total += s.positions.len() / 2;
    }
    assert!(with_contours > 0);
    assert!(
        inner_solid * 10 >= inner_total * 9,
        "{inner_solid} of {inner_total} inner vertices in solid"
    );
    // Digging rebuilds the strip with the chunk.
    let e = on
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [48.0, 32.0], 6.0))
        .unwrap();
    on.rebuild_all();
    for [cx, cy] in chunks_touching(&on, &e.nodes) {
        let c = on.chunk(cx, cy).unwrap();
        assert_eq!(c.strip.indices.is_empty(), c.polylines.is_empty());
    }
}

#[test]
fn colliders_simplify_within_tolerance() {
    let mut world = generated(Side2dPreset::Hills, 14, 128, 64, 32);
    world.rebuild_all();
    let contours = world.contours();
    let exact = world.colliders(0.0).unwrap();
    let simple = world.colliders(0.05).unwrap();
    let coarse = world.colliders(0.5).unwrap();
    let count = |v: &[isoterra_mesh::Polyline]| v.iter().map(|l| l.points.len()).sum::<usize>();
    assert!(count(&simple) <= count(&exact));
    assert!(count(&exact) <= count(&contours));
    assert!(count(&coarse) < count(&simple));
    assert!(simple.iter().all(|l| l.closed && l.points.len() >= 3));
    // Area barely changes at 0.05 cells.
    let a0 = summary(&contours).2;
    let a1 = summary(&simple).2;
    let perimeter: f64 = contours
        .iter()
        .map(|l| {
            let n = l.points.len();
            (0..n)
                .map(|i| {
                    let (p, q) = (l.points[i], l.points[(i + 1) % n]);
                    (((q[0] - p[0]) as f64).powi(2) + ((q[1] - p[1]) as f64).powi(2)).sqrt()
                })
                .sum::<f64>()
        })
        .sum();
    assert!((a0 - a1).abs() <= 0.05 * perimeter, "{a0} vs {a1}");
    for bad in [f32::NAN, -0.1, 5.0, f32::INFINITY] {
        assert!(world.colliders(bad).is_err());
    }
}

#[test]
fn dug_holes_are_round() {
    let mut world = world_from_fn(64, 64, 16, |_, _| 1.0);
    let (c, r) = ([31.3, 32.6], 9.0);
    world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, c, r))
        .unwrap();
    let lines = world.contours();
    // The outer boundary and the hole.
    assert_eq!(lines.len(), 2);
    let hole = lines
        .iter()
        .find(|l| isoterra_mesh::signed_area(&l.points) < 0.0)
        .unwrap();
    let mut worst = 0.0f32;
    for p in &hole.points {
        let d = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2)).sqrt();
        worst = worst.max((d - r).abs());
    }
    assert!(
        worst < 0.05,
        "the hole deviates {worst} cells from the circle"
    );
}

// ---------------------------------------------------------------- queries

#[test]
fn density_and_is_solid_agree_with_the_field() {
    let world = flat_world(32, 32, 8, 10.0);
    assert_eq!(world.density_at([5.0, 10.0]), Some(0.0));
    assert!(world.is_solid([5.0, 10.0]));
    assert!(!world.is_solid([5.0, 10.5]));
    assert!(world.is_solid([5.0, 9.5]));
    assert_eq!(world.density_at([-1.0, 5.0]), None);
    assert_eq!(world.density_at([5.0, 33.0]), None);
    assert_eq!(world.density_at([f32::NAN, 5.0]), None);
    assert!(!world.is_solid([-1.0, 5.0]));
    let n = world.normal_at([5.0, 10.0]).unwrap();
    assert!((n[0]).abs() < 1e-6 && (n[1] - 1.0).abs() < 1e-6);
}

#[test]
fn raycast_finds_the_ground_and_agrees_with_is_solid() {
    let world = generated(Side2dPreset::Hills, 31, 128, 64, 16);
    let top = 64.0;
    for i in 1..64 {
        let x = i as f32 * 2.0 + 0.37;
        let Some(hit) = world.raycast([x, top], [x, 0.0]) else {
            continue;
        };
        assert!(world.is_solid(hit.point), "hit point not solid at x = {x}");
        assert!((0.0..=1.0).contains(&hit.t));
        let expect_y = top + (0.0 - top) * hit.t;
        assert!((hit.point[1] - expect_y).abs() < 1e-3);
        // A hair above is empty, and so is everything above it.
        let mut y = hit.point[1] + 1e-3;
        while y < top {
            assert!(!world.is_solid([x, y]), "solid above the hit at ({x}, {y})");
            y += 0.1;
        }
        // The normal points up-ish (out of the ground).
        assert!(hit.normal[1] > 0.0);
    }
}

#[test]
fn raycast_edge_cases() {
    let world = flat_world(32, 32, 8, 10.0);
    // Start inside solid: t = 0.
    let hit = world.raycast([5.0, 5.0], [5.0, 30.0]).unwrap();
    assert_eq!(hit.t, 0.0);
    assert_eq!(hit.point, [5.0, 5.0]);
    // All in the air.
    assert!(world.raycast([2.0, 20.0], [30.0, 25.0]).is_none());
    // Starting outside the world and entering it.
    let hit = world.raycast([-10.0, 5.0], [20.0, 5.0]).unwrap();
    assert!(world.is_solid(hit.point));
    assert!((hit.point[0] - 1.0).abs() < 0.6, "{hit:?}");
    // From far above, straight down.
    let hit = world.raycast([16.0, 1000.0], [16.0, -1000.0]).unwrap();
    assert!((hit.point[1] - 10.0).abs() < 1e-3, "{hit:?}");
    // Entirely outside, or degenerate or non-finite.
    assert!(world.raycast([-10.0, 5.0], [-1.0, 5.0]).is_none());
    assert!(world.raycast([16.0, 20.0], [16.0, 20.0]).is_none());
    assert!(world.raycast([16.0, 5.0], [16.0, 5.0]).is_some());
    assert!(world.raycast([f32::NAN, 5.0], [16.0, 5.0]).is_none());
    assert!(world.raycast([16.0, 5.0], [f32::INFINITY, 5.0]).is_none());
}

// ---------------------------------------------------------------- islands

fn ground_and_blob(blob_center: [f32; 2], blob_r: f32) -> Side2dWorld {
    world_from_fn(64, 64, 16, move |x, y| {
        let ground = 12.0 - y;
        let d = ((x - blob_center[0]).powi(2) + (y - blob_center[1]).powi(2)).sqrt();
        ground.max(blob_r - d)
    })
}

#[test]
fn a_detached_blob_is_an_island_and_the_ground_is_not() {
    let mut world = ground_and_blob([32.0, 40.0], 6.0);
    let islands = world.islands();
    assert_eq!(islands.len(), 1);
    let isl = &islands[0];
    let area = std::f32::consts::PI * 36.0;
    assert!((isl.area - area).abs() < 0.03 * area, "area {}", isl.area);
    assert_eq!(isl.outline.len(), 1);
    assert!(isl.outline[0].closed);
    assert!(isoterra_mesh::signed_area(&isl.outline[0].points) > 0.0);
    assert_eq!(isl.bounds, NodeRect::new(26, 34, 39, 47));
    assert_eq!(isl.node_count, isl.nodes.len());
    let solid_in_blob = (0..65 * 65)
        .filter(|&i| {
            let (x, y) = (i % 65, i / 65);
            y > 20 && world.field().get(x, y) >= 0.0
        })
        .count();
    assert_eq!(isl.node_count, solid_in_blob);
    // Removing it leaves no island; undo brings it back.
    let before = snapshot(&world);
    let edit = world.remove_island(isl).unwrap();
    assert!(world.islands().is_empty());
    assert!(!world.is_solid([32.0, 40.0]));
    world.apply_edit(&edit, EditDirection::Backward).unwrap();
    assert_eq!(snapshot(&world), before);
}

#[test]
fn blobs_touching_the_ground_or_bedrock_are_anchored() {
    // Touching the ground.
    let world = ground_and_blob([32.0, 16.0], 6.0);
    assert!(world.islands().is_empty());
    // Floating but holding a bedrock node.
    let world = ground_and_blob([32.0, 40.0], 6.0);
    let mut mats = world.materials().clone();
    mats.set(32, 40, 3).unwrap();
    let world = Side2dWorld::from_parts(world.params(), world.field().clone(), mats).unwrap();
    assert!(world.islands().is_empty());
}

#[test]
fn digging_under_a_ledge_makes_an_island() {
    // A pillar on the ground, cut through near its foot.
    let mut world = world_from_fn(64, 64, 16, |x, y| {
        (10.0 - y).max(4.0 - (x - 32.0).abs()).min(40.0 - y)
    });
    assert!(world.islands().is_empty());
    world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [32.0, 16.0], 5.0))
        .unwrap();
    let islands = world.islands();
    assert_eq!(islands.len(), 1);
    assert!(islands[0].bounds.y0 > 16);
}

#[test]
fn saddle_cells_join_islands_as_the_mesh_does() {
    // Two solid nodes on a diagonal, the other two corners empty.
    let build = |centre_solid: bool| {
        let (a, b) = if centre_solid {
            (1.0, -0.5)
        } else {
            (0.4, -0.9)
        };
        world_from_fn(16, 16, 8, move |x, y| match (x as u32, y as u32) {
            (7, 8) | (8, 9) => a,
            (8, 8) | (7, 9) => b,
            _ => -1.0,
        })
    };
    let joined = build(true);
    assert_eq!(joined.islands().len(), 1);
    assert_eq!(joined.islands()[0].node_count, 2);
    assert_eq!(joined.contours().len(), 1);
    let apart = build(false);
    assert_eq!(apart.islands().len(), 2);
    assert_eq!(apart.contours().len(), 2);
}

#[test]
fn island_with_a_hole_has_outer_and_inner_outlines() {
    let world = world_from_fn(64, 64, 16, |x, y| {
        let d = ((x - 32.0).powi(2) + (y - 40.0).powi(2)).sqrt();
        (12.0 - y).max((10.0 - d).min(d - 4.0))
    });
    let islands = world.islands();
    assert_eq!(islands.len(), 1);
    let isl = &islands[0];
    assert_eq!(isl.outline.len(), 2);
    let areas: Vec<f64> = isl
        .outline
        .iter()
        .map(|l| isoterra_mesh::signed_area(&l.points))
        .collect();
    assert!(areas.iter().any(|&a| a > 0.0) && areas.iter().any(|&a| a < 0.0));
    let expect = std::f32::consts::PI * (100.0 - 16.0);
    assert!((isl.area - expect).abs() < 0.03 * expect);
    // Its fill mesh covers the ring only: the same area as the outlines,
    // and no vertex inside the hole or outside the ring.
    let m = &isl.mesh;
    assert!(!m.indices.is_empty());
    let mesh_area: f64 = m
        .indices
        .chunks_exact(3)
        .map(|t| {
            let [a, b, c] = [0, 1, 2].map(|k| m.positions[t[k] as usize]);
            0.5 * f64::from((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
        })
        .sum();
    assert!((mesh_area - f64::from(isl.area)).abs() < 1e-3 * f64::from(isl.area));
    for p in &m.positions {
        let d = ((p[0] - 32.0).powi(2) + (p[1] - 40.0).powi(2)).sqrt();
        assert!(
            (3.9..=10.1).contains(&d),
            "vertex {p:?} at {d} from the centre"
        );
    }
}

#[test]
fn remove_island_rejects_bad_node_lists() {
    let mut world = ground_and_blob([32.0, 40.0], 6.0);
    let mut isl = world.islands().pop().unwrap();
    let before = snapshot(&world);
    isl.nodes.swap(0, 1);
    assert!(world.remove_island(&isl).is_err());
    isl.nodes = vec![0];
    assert!(world.remove_island(&isl).is_err());
    isl.nodes = vec![u32::MAX];
    assert!(world.remove_island(&isl).is_err());
    assert_eq!(snapshot(&world), before);
}

#[test]
fn params_accessors_and_defaults() {
    let p = Side2dParams::DEFAULT;
    assert_eq!(p.chunk_cells, 32);
    assert_eq!(p.iso, 0.0);
    assert_eq!(p.collider_tolerance_cells, 0.05);
    let world = Side2dWorld::generate(&p).unwrap();
    assert_eq!(world.params(), &p);
    assert_eq!(world.table(), &MaterialTable::side2d_default());
}

#[cfg(feature = "serde")]
#[test]
fn params_brush_and_edit_round_trip_through_json() {
    let p = params(40, 20, 8).with_iso(0.1);
    let s = serde_json::to_string(&p).unwrap();
    assert!(s.contains("\"generator\""), "{s}");
    let back: Side2dParams = serde_json::from_str(&s).unwrap();
    assert_eq!(back, p);
    let partial: Side2dParams = serde_json::from_str("{\"chunk_cells\": 8}").unwrap();
    assert_eq!(partial, Side2dParams::DEFAULT.with_chunk_cells(8));
    let b = Side2dBrush::new(Side2dTool::Fill, [1.0, 2.0], 3.0)
        .with_shape(isoterra_world::Side2dBrushShape::Square);
    let s = serde_json::to_string(&b).unwrap();
    assert!(s.contains("\"fill\"") && s.contains("\"square\""), "{s}");
    assert_eq!(serde_json::from_str::<Side2dBrush>(&s).unwrap(), b);
    let mut world = flat_world(16, 16, 8, 6.0);
    let e = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, [8.0, 6.0], 2.0))
        .unwrap();
    let back: Side2dEdit = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
    assert_eq!(back, e);
}
