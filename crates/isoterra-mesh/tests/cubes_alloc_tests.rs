//! A warmed-up marching cubes mesher allocates nothing.

use isoterra_field::Field3;
use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocs;

#[test]
fn steady_chunk_loop_allocates_nothing() {
    let f = Field3::from_fn(33, 33, 33, |x, y, z| {
        let (x, y, z) = (x as f32 * 0.31, y as f32 * 0.27, z as f32 * 0.23);
        x.sin() * y.cos() + y.sin() * z.cos() + z.sin() * x.cos()
    })
    .unwrap();
    let ids: Vec<u8> = (0..f.values().len()).map(|i| (i % 7) as u8).collect();
    let chunks: Vec<CellBox> = (0..8)
        .map(|c| {
            let [x, y, z] = [c & 1, (c >> 1) & 1, c >> 2].map(|b| b * 16);
            CellBox::new(x, y, z, x + 16, y + 16, z + 16)
        })
        .collect();
    let mut mesher = MarchingCubes::new();
    let mut outs = vec![CubesOutput::default(); chunks.len()];
    let opts = CubesOptions::DEFAULT;
    let frame = |mesher: &mut MarchingCubes, outs: &mut [CubesOutput]| {
        for (b, out) in chunks.iter().zip(outs.iter_mut()) {
            mesher.mesh(&f, *b, &opts, out).unwrap();
            mesher
                .mesh_with_materials(&f, &ids, *b, &opts, out)
                .unwrap();
            mesher
                .mesh_slice(f.values(), f.dims(), *b, &opts.with_normals(false), out)
                .unwrap();
            mesher
                .mesh_with_materials(&f, &ids, *b, &opts, out)
                .unwrap();
        }
    };
    frame(&mut mesher, &mut outs);
    let before = allocs();
    for _ in 0..3 {
        frame(&mut mesher, &mut outs);
    }
    assert_eq!(allocs() - before, 0, "a warmed-up chunk loop allocated");
    assert!(outs.iter().all(|o| o.triangle_count() > 100));
    assert!(outs.iter().all(|o| o.materials.len() == o.positions.len()));
}

#[test]
fn a_one_shot_call_reserves_its_output_once_and_never_grows_it() {
    // 79^3 cells of a dense gyroid: a fresh output large enough to be sized
    // before the scan, with about a million triangles.
    let n = 80;
    let f = Field3::from_fn(n, n, n, |x, y, z| {
        let [x, y, z] = [x, y, z].map(|c| c as f32 * 0.9);
        x.sin() * y.cos() + y.sin() * z.cos() + z.sin() * x.cos()
    })
    .unwrap();
    // The case tables are built once per process, by whichever thread meshes
    // first (thousands of allocations): build them before counting, as the
    // other test of this file may not have yet.
    MarchingCubes::new()
        .mesh(
            &f,
            CellBox::new(0, 0, 0, 2, 2, 2),
            &CubesOptions::DEFAULT,
            &mut CubesOutput::default(),
        )
        .unwrap();
    let mut out = CubesOutput::default();
    let before = allocs();
    MarchingCubes::new()
        .mesh(&f, CellBox::whole(&f), &CubesOptions::DEFAULT, &mut out)
        .unwrap();
    let made = allocs() - before;
    assert!(out.triangle_count() > 500_000, "{}", out.triangle_count());
    // Each of the three output buffers: one reservation and one hand-back of
    // the room it did not use; the scan's scratch: three buffers. Grown as it
    // filled, the output would have been reallocated about twenty times per
    // buffer.
    assert!(made <= 9, "{made} allocations");
    assert_eq!(out.positions.capacity(), out.positions.len());
    assert_eq!(out.normals.capacity(), out.normals.len());
    assert_eq!(out.indices.capacity(), out.indices.len());
    let mut warm = CubesOutput::default();
    warm.positions.reserve(1);
    MarchingCubes::new()
        .mesh(&f, CellBox::whole(&f), &CubesOptions::DEFAULT, &mut warm)
        .unwrap();
    assert_eq!(warm, out);
}
