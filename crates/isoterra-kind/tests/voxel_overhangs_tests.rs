//! The voxel `overhangs` preset makes ground that hangs over: a good share
//! of its surface faces down, measured on the meshed surface of a 128³
//! region around the ground.

use isoterra_kind::{AnyDocument, Document, NewWorld, WorldKind};
use isoterra_store::MemoryStore;
use isoterra_world::{VoxelParams, VoxelWorld};

/// Triangles whose outward normal has `y` below this face down.
const DOWN: f32 = -0.3;

/// `(down-facing area, total area)` of the surface of chunks `min..=max`.
fn down_facing(world: &mut VoxelWorld, min: [i32; 3], max: [i32; 3]) -> (f64, f64) {
    world.ensure_region(min, max).unwrap();
    world.rebuild_all();
    let mesh = world.merged_mesh(min, max);
    let (mut down, mut total) = (0.0f64, 0.0f64);
    for t in mesh.indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|k| mesh.positions[t[k] as usize].map(f64::from));
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        // Counter-clockwise seen from outside: u x v points out of the solid.
        let n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if len == 0.0 {
            continue;
        }
        let area = 0.5 * len;
        total += area;
        if n[1] / len < f64::from(DOWN) {
            down += area;
        }
    }
    (down, total)
}

/// The down-facing share of a 128³ region (x and z in `0..128`, y in
/// `-64..64`) of `params`' world.
fn share(params: &VoxelParams) -> f64 {
    let mut world = VoxelWorld::new(params).unwrap();
    let n = params.chunk_cells as i32;
    let (lo, hi) = (0, 128 / n - 1);
    let (ylo, yhi) = (-64 / n, 64 / n - 1);
    let (down, total) = down_facing(&mut world, [lo, ylo, lo], [hi, yhi, hi]);
    assert!(total > 0.0, "the region holds a surface");
    down / total
}

fn preset_params(preset: &str, seed: u64) -> VoxelParams {
    let doc = Document::create_in(
        MemoryStore::new(),
        &NewWorld::new(WorldKind::Voxel)
            .with_preset(preset)
            .with_seed(seed),
    )
    .unwrap();
    match doc.typed() {
        AnyDocument::Voxel(d) => *d.params(),
        _ => unreachable!("a voxel world"),
    }
}

#[test]
fn overhangs_face_down_on_a_tenth_of_the_surface() {
    for seed in [1, 2, 3] {
        let s = share(&preset_params("overhangs", seed));
        assert!(
            s >= 0.10,
            "seed {seed}: {:.2} % of the surface faces down",
            100.0 * s
        );
    }
}
