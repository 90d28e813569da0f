//! A steady edit-and-rebuild loop allocates nothing while rebuilding: chunk
//! buffers (meshes, segments, polylines and their points, colliders, strips)
//! and scratch memory are reused. Counted with an allocator that tallies the
//! allocations of the thread that asks for it.

use isoterra_field::{Side2dGen, Side2dPreset};
use isoterra_world::{EditDirection, Side2dBrush, Side2dParams, Side2dTool, Side2dWorld};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

fn world(strip: f32) -> Side2dWorld {
    let spec = Side2dGen::DEFAULT
        .with_preset(Side2dPreset::Hills)
        .with_seed(6)
        .with_size(128, 64);
    let params = Side2dParams::DEFAULT
        .with_generator(spec)
        .with_chunk_cells(16)
        .with_strip_width_cells(strip);
    let mut world = Side2dWorld::generate(&params).unwrap();
    world.rebuild_all();
    world
}

/// The first point where a disc of radius 5 is solid all round.
fn solid_spot(world: &Side2dWorld) -> [f32; 2] {
    for y in 6..40 {
        for x in 6..122 {
            let c = [x as f32, y as f32];
            let solid = (0..32).all(|k| {
                let a = k as f32 * std::f32::consts::TAU / 32.0;
                (0..=5).all(|r| {
                    let r = r as f32;
                    world.is_solid([c[0] + r * a.cos(), c[1] + r * a.sin()])
                })
            });
            if solid {
                return c;
            }
        }
    }
    panic!("no solid spot");
}

fn lines(world: &Side2dWorld) -> usize {
    world.chunks().iter().map(|c| c.polylines.len()).sum()
}

/// Runs dig / rebuild / undo / rebuild cycles and returns the allocations
/// the rebuilds made in the last five cycles, after three to warm up.
fn rebuild_allocations(world: &mut Side2dWorld, brush: &Side2dBrush) -> u64 {
    let mut total = 0;
    for round in 0..8 {
        // The world is single-chunk-batch sized here, so rebuilds run on
        // this thread (no worker threads to count).
        let e = world.apply_brush(brush).unwrap();
        let (_, a) = allocations(|| {
            world.rebuild(None);
        });
        world.apply_edit(&e, EditDirection::Backward).unwrap();
        let (_, b) = allocations(|| {
            world.rebuild(None);
        });
        if round >= 3 {
            total += a + b;
        }
    }
    total
}

#[test]
fn a_dig_that_adds_a_cave_loop_and_its_undo_allocate_nothing_in_rebuild() {
    for strip in [0.0, 0.5] {
        let mut world = world(strip);
        let brush = Side2dBrush::new(Side2dTool::Dig, solid_spot(&world), 2.5);
        let before = lines(&world);
        world
            .apply_brush(&brush)
            .map(|e| {
                world.rebuild(None);
                // The dig really adds a closed loop (a cave) to the chunk.
                assert!(lines(&world) > before);
                world.apply_edit(&e, EditDirection::Backward).unwrap();
                world.rebuild(None);
            })
            .unwrap();
        assert_eq!(lines(&world), before);
        assert_eq!(rebuild_allocations(&mut world, &brush), 0, "strip {strip}");
    }
}

#[test]
fn a_surface_dig_and_its_undo_allocate_nothing_in_rebuild() {
    let mut world = world(0.5);
    let brush = Side2dBrush::new(Side2dTool::Dig, [64.0, 30.0], 8.0);
    assert_eq!(rebuild_allocations(&mut world, &brush), 0);
}
