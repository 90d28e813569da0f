//! A steady dig / undo / rebuild loop on a warmed voxel world allocates
//! nothing while gathering and meshing: the gather grid and marching cubes
//! scratch live in a reused mesher, and each chunk's new mesh is written
//! into the buffers of its previous one. Counted with an allocator that
//! tallies the allocations of the thread that asks for it.

use std::collections::BTreeMap;

use isoterra_field::{VoxelGen, VoxelPreset};
use isoterra_world::{
    EditDirection, VoxelBrush, VoxelChunkMesh, VoxelMesher, VoxelParams, VoxelTool, VoxelWorld,
};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

const N: u32 = 16;

/// A caves world with the chunks `[-1, 0]^3` meshed (their neighbours
/// generated).
fn world() -> VoxelWorld {
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(N)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 3).with_ground_amplitude(8.0));
    let mut w = VoxelWorld::new(&params).unwrap();
    w.ensure_region([-1; 3], [0; 3]).unwrap();
    w.rebuild_all();
    w
}

/// The first solid node down the column x = z = 0.
fn surface(w: &VoxelWorld) -> [f32; 3] {
    for y in (-15..15).rev() {
        if w.node([0, y, 0]).is_some_and(|(v, _)| v >= 0.0) {
            return [0.0, y as f32, 0.0];
        }
    }
    panic!("no ground in the column");
}

fn brushes(w: &VoxelWorld) -> [VoxelBrush; 3] {
    let at = surface(w);
    [
        VoxelBrush::new(VoxelTool::Dig, at, 5.0),
        VoxelBrush::new(VoxelTool::Add, [at[0] + 2.0, at[1] + 3.0, at[2] - 1.0], 3.0)
            .with_material(4),
        VoxelBrush::new(VoxelTool::Paint, at, 6.0).with_material(2),
    ]
}

/// Rebuilds in a one-thread pool (so that the meshing runs on the thread
/// that counts) and returns the allocations and how many chunks were
/// rebuilt.
fn counted_rebuild(pool: &rayon::ThreadPool, w: &mut VoxelWorld) -> (usize, u64) {
    pool.install(|| {
        let (r, a) = allocations(|| w.rebuild(None));
        (r.rebuilt, a)
    })
}

#[test]
fn steady_dig_undo_rebuild_allocates_nothing_in_rebuild() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut w = world();
    let brushes = brushes(&w);
    let mut warmup = 0;
    let mut counted = 0;
    let mut rebuilt = 0;
    for round in 0..6 {
        for b in &brushes {
            let e = w.apply_brush(b).unwrap();
            assert!(!e.is_empty(), "{b:?}");
            let (k1, a1) = counted_rebuild(&pool, &mut w);
            w.apply_edit(&e, EditDirection::Backward).unwrap();
            let (k2, a2) = counted_rebuild(&pool, &mut w);
            if round == 0 {
                warmup += a1 + a2;
            } else if round >= 2 {
                counted += a1 + a2;
                rebuilt += k1 + k2;
            }
        }
    }
    // The first rebuilds on this thread do allocate (a new mesher), which
    // shows that the counter sees the meshing.
    assert!(warmup > 0);
    assert!(rebuilt > 0);
    assert_eq!(counted, 0, "allocations in {rebuilt} chunk rebuilds");
}

/// Meshes the dirty chunks with `mesh_chunk` into `meshes` (entries made
/// beforehand), then clears the dirty set; returns the allocations of the
/// meshing, the chunks meshed and their triangles.
fn mesh_dirty(
    w: &mut VoxelWorld,
    mesher: &mut VoxelMesher,
    meshes: &mut BTreeMap<[i32; 3], VoxelChunkMesh>,
) -> (u64, usize, usize) {
    let dirty: Vec<[i32; 3]> = w.dirty_chunks().collect();
    for c in &dirty {
        meshes.entry(*c).or_default();
    }
    let (triangles, a) = allocations(|| {
        let mut triangles = 0;
        for c in &dirty {
            let out = meshes.get_mut(c).unwrap();
            w.mesh_chunk(*c, mesher, out);
            triangles += out.triangle_count();
        }
        triangles
    });
    w.rebuild_all();
    (a, dirty.len(), triangles)
}

#[test]
fn steady_mesh_chunk_loop_allocates_nothing() {
    let mut w = world();
    let brushes = brushes(&w);
    let mut mesher = VoxelMesher::new();
    let mut meshes = BTreeMap::new();
    let mut warmup = 0;
    let mut counted = 0;
    let mut meshed = 0;
    let mut triangles = 0;
    for round in 0..6 {
        for b in &brushes {
            let e = w.apply_brush(b).unwrap();
            let (a1, k1, t1) = mesh_dirty(&mut w, &mut mesher, &mut meshes);
            w.apply_edit(&e, EditDirection::Backward).unwrap();
            let (a2, k2, t2) = mesh_dirty(&mut w, &mut mesher, &mut meshes);
            if round == 0 {
                warmup += a1 + a2;
            } else if round >= 2 {
                counted += a1 + a2;
                meshed += k1 + k2;
                triangles += t1 + t2;
            }
        }
    }
    assert!(warmup > 0);
    assert!(meshed > 0 && triangles > 0);
    assert_eq!(counted, 0, "allocations in {meshed} chunk meshings");
}
