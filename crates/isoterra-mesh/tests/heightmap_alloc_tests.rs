//! A warmed-up heightmap mesher and its output allocate nothing while chunks
//! of one size are meshed at any LOD, stitching and skirt setting.

use isoterra_mesh::{
    HeightChunkInput, HeightmapMesh, HeightmapMesher, HeightmapOptions, sample_chunk_heights,
};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocs;

fn height([x, z]: [i64; 2]) -> f32 {
    ((x as f32) * 0.13).sin() * 3.0 + ((z as f32) * 0.07).cos()
}

#[test]
fn steady_chunk_loop_allocates_nothing() {
    let mut mesher = HeightmapMesher::new();
    let mut out = HeightmapMesh::default();
    let mut heights = Vec::new();
    let mut run = |lod: u8, chunk: [i32; 2], mask: u8, skirt: f32| {
        sample_chunk_heights(64, lod, chunk, &mut heights, height).unwrap();
        let nb: [u8; 4] = std::array::from_fn(|k| lod + ((mask >> k) & 1));
        let input = HeightChunkInput::new(&heights)
            .with_lod(lod)
            .with_chunk(chunk)
            .with_neighbours(nb);
        let opts = HeightmapOptions::DEFAULT.with_skirt_depth(skirt);
        mesher.mesh(&input, &opts, &mut out).unwrap();
        out.triangle_count()
    };
    // Warm up with the largest case: LOD 0, no stitching, skirts.
    run(0, [0, 0], 0, 2.0);
    let before = allocs();
    let mut triangles = 0;
    for (k, lod) in [0u8, 1, 2, 3, 0, 2].into_iter().enumerate() {
        for mask in [0u8, 1, 6, 15] {
            let skirt = if k % 2 == 0 { 0.0 } else { 1.5 };
            triangles += run(lod, [k as i32, -(k as i32)], mask, skirt);
        }
    }
    assert_eq!(allocs() - before, 0, "the warmed-up loop allocated");
    assert!(triangles > 0);
}
