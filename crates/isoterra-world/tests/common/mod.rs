//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeSet;

use isoterra_field::{Field2, MaterialGrid, Side2dGen, Side2dPreset};
use isoterra_mesh::{
    CellRect, ContourJoiner, MarchingSquares, Polyline, SquaresOptions, SquaresOutput,
};
use isoterra_world::{Side2dEdit, Side2dParams, Side2dWorld};

/// Parameters for a world of `w x h` cells with `chunk`-cell chunks.
pub fn params(w: u32, h: u32, chunk: u32) -> Side2dParams {
    Side2dParams::DEFAULT
        .with_generator(Side2dGen::DEFAULT.with_size(w, h))
        .with_chunk_cells(chunk)
}

/// A world from a density function of the node coordinates (border cleared),
/// all material 0.
pub fn world_from_fn(w: u32, h: u32, chunk: u32, f: impl Fn(f32, f32) -> f32) -> Side2dWorld {
    let p = params(w, h, chunk);
    let mut field =
        Field2::from_fn(w + 1, h + 1, |x, y| f(x as f32, y as f32).clamp(-1.0, 1.0)).unwrap();
    field.clear_border(-1.0).unwrap();
    let mats = MaterialGrid::like(&field, 0);
    Side2dWorld::from_parts(&p, field, mats).unwrap()
}

/// Flat ground: solid below `ground` (a ramp one cell wide).
pub fn flat_world(w: u32, h: u32, chunk: u32, ground: f32) -> Side2dWorld {
    world_from_fn(w, h, chunk, move |_, y| ground - y)
}

/// A generated world.
pub fn generated(preset: Side2dPreset, seed: u64, w: u32, h: u32, chunk: u32) -> Side2dWorld {
    let p = Side2dParams::DEFAULT
        .with_generator(
            Side2dGen::DEFAULT
                .with_preset(preset)
                .with_seed(seed)
                .with_size(w, h),
        )
        .with_chunk_cells(chunk);
    Side2dWorld::generate(&p).unwrap()
}

/// Field values as bit patterns, plus materials: the exact bytes of a world.
pub fn snapshot(world: &Side2dWorld) -> (Vec<u32>, Vec<u8>) {
    (
        world.field().values().iter().map(|v| v.to_bits()).collect(),
        world.materials().ids().to_vec(),
    )
}

/// Chunks whose cells touch a node of `nodes`, computed by brute force.
pub fn chunks_touching(world: &Side2dWorld, nodes: &[u32]) -> BTreeSet<[u32; 2]> {
    let w = world.field().width();
    let mut set = BTreeSet::new();
    for cy in 0..world.chunks_y() {
        for cx in 0..world.chunks_x() {
            let c = world.chunk(cx, cy).unwrap().cells;
            // The chunk's cells use nodes [x0, x1] x [y0, y1] (inclusive).
            if nodes.iter().any(|&i| {
                let (x, y) = (i % w, i / w);
                x >= c.x0 && x <= c.x1 && y >= c.y0 && y <= c.y1
            }) {
                set.insert([cx, cy]);
            }
        }
    }
    set
}

/// The dirty chunks of a world as a set.
pub fn dirty_set(world: &Side2dWorld) -> BTreeSet<[u32; 2]> {
    world.dirty_chunks().collect()
}

/// Contours of the whole field meshed in one piece (no chunks).
pub fn whole_field_contours(world: &Side2dWorld) -> Vec<Polyline> {
    let mut o = SquaresOptions::DEFAULT;
    o.iso = world.params().iso;
    o.fill = false;
    let mut out = SquaresOutput::default();
    MarchingSquares::new()
        .mesh(
            world.field(),
            None,
            CellRect::whole(world.field()),
            &o,
            &mut out,
        )
        .unwrap();
    let mut lines = Vec::new();
    ContourJoiner::new().join(&[&out.segments], &mut lines);
    lines
}

/// (closed loops, open chains, total signed area) of a set of polylines.
pub fn summary(lines: &[Polyline]) -> (usize, usize, f64) {
    let closed = lines.iter().filter(|l| l.closed).count();
    let area = lines
        .iter()
        .filter(|l| l.closed)
        .map(|l| isoterra_mesh::signed_area(&l.points))
        .sum();
    (closed, lines.len() - closed, area)
}

/// Checks the structural invariants of an edit against the world it came from.
pub fn check_edit_shape(world: &Side2dWorld, edit: &Side2dEdit) {
    let n = edit.nodes.len();
    assert_eq!(edit.before.len(), n);
    assert_eq!(edit.after.len(), n);
    assert_eq!(edit.mat_before.len(), n);
    assert_eq!(edit.mat_after.len(), n);
    assert!(
        edit.nodes.windows(2).all(|p| p[0] < p[1]),
        "nodes not ascending"
    );
    let w = world.field().width();
    for (k, &i) in edit.nodes.iter().enumerate() {
        let (x, y) = (i % w, i / w);
        assert!(
            edit.rect.contains(x, y),
            "node ({x}, {y}) outside {:?}",
            edit.rect
        );
        assert!(
            !world.field().is_border(x, y),
            "border node ({x}, {y}) changed"
        );
        assert!(
            edit.before[k].to_bits() != edit.after[k].to_bits()
                || edit.mat_before[k] != edit.mat_after[k],
            "unchanged node listed"
        );
    }
    if n == 0 {
        assert!(edit.rect.is_empty());
    } else {
        // The rect is the tightest one.
        let xs = edit.nodes.iter().map(|&i| i % w);
        let ys = edit.nodes.iter().map(|&i| i / w);
        assert_eq!(edit.rect.x0, xs.clone().min().unwrap());
        assert_eq!(edit.rect.x1, xs.max().unwrap() + 1);
        assert_eq!(edit.rect.y0, ys.clone().min().unwrap());
        assert_eq!(edit.rect.y1, ys.max().unwrap() + 1);
    }
}
