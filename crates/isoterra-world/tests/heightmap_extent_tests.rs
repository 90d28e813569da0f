//! Heightmap worlds made from an imported image: inside the extent the
//! heights are the image's exactly, outside they carry its edge (or the
//! generated hills), chunk meshes read the same heights, and sculpting
//! anywhere undoes exactly.

use isoterra_world::{
    EditDirection, HeightBrush, HeightExtent, HeightOutside, HeightTool, HeightmapParams,
    HeightmapWorld, MeshKey,
};
use proptest::prelude::*;

fn params(extent: HeightExtent) -> HeightmapParams {
    HeightmapParams::DEFAULT
        .with_chunk_cells(8)
        .with_lod_count(3)
        .with_lod_distance(16.0)
        .with_view_distance(64.0)
        .with_seed(3)
        .with_extent(Some(extent))
}

/// An imported world of `heights` (`dims`, x fastest) at `first`.
fn imported(
    first: [i64; 2],
    dims: [u32; 2],
    heights: &[f32],
    outside: HeightOutside,
) -> HeightmapWorld {
    let e = HeightExtent::of_heights(first, dims, [-100.0, 100.0], outside, heights).unwrap();
    let mut w = HeightmapWorld::new(&params(e)).unwrap();
    w.import_heights(first, dims, heights).unwrap();
    w.take_dirty();
    w
}

fn grid() -> impl Strategy<Value = ([i64; 2], [u32; 2], Vec<f32>)> {
    (-30i64..30, -30i64..30, 1u32..24, 1u32..24).prop_flat_map(|(x, z, w, h)| {
        (
            Just([x, z]),
            Just([w, h]),
            proptest::collection::vec(-90.0f32..90.0, (w * h) as usize),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn inside_is_the_image_and_outside_its_nearest_edge(
        (first, dims, heights) in grid(),
        probes in proptest::collection::vec((-60i64..60, -60i64..60), 1..40),
    ) {
        let w = imported(first, dims, &heights, HeightOutside::Edge);
        let (nx, nz) = (i64::from(dims[0]), i64::from(dims[1]));
        let expect = |g: [i64; 2]| {
            let x = (g[0] - first[0]).clamp(0, nx - 1);
            let z = (g[1] - first[1]).clamp(0, nz - 1);
            heights[(z * nx + x) as usize]
        };
        for (x, z) in probes {
            prop_assert_eq!(w.height([x, z]).to_bits(), expect([x, z]).to_bits(), "node ({}, {})", x, z);
        }
        // Chunk meshes read those heights, at every LOD.
        for lod in 0..3u8 {
            let key = MeshKey::new([first[0].div_euclid(8) as i32, first[1].div_euclid(8) as i32], lod);
            let mesh = w.build_mesh(&key).unwrap();
            for p in &mesh.positions[..mesh.skirt_vertex_start as usize] {
                let g = [p[0].round() as i64, p[2].round() as i64];
                prop_assert_eq!(p[1].to_bits(), expect(g).to_bits());
            }
        }
    }

    #[test]
    fn sculpting_inside_and_outside_undoes_exactly(
        (first, dims, heights) in grid(),
        strokes in proptest::collection::vec((0usize..5, -40.0f32..40.0, -40.0f32..40.0, 1.0f32..9.0), 1..6),
    ) {
        let mut w = imported(first, dims, &heights, HeightOutside::Edge);
        let probe = |w: &HeightmapWorld| {
            let mut v = Vec::new();
            for z in -45..45 {
                for x in -45..45 {
                    v.push(w.height([x, z]).to_bits());
                }
            }
            v
        };
        let before = probe(&w);
        let mut edits = Vec::new();
        for (t, x, z, r) in strokes {
            let brush = HeightBrush::new(HeightTool::ALL[t], [x, z], r).with_strength(0.8);
            edits.push(w.apply_brush(&brush).unwrap());
        }
        for e in edits.iter().rev() {
            w.apply_edit(e, EditDirection::Backward).unwrap();
        }
        prop_assert_eq!(probe(&w), before);
    }

    #[test]
    fn with_generated_outside_the_hills_go_on(
        (first, dims, heights) in grid(),
        probes in proptest::collection::vec((-60i64..60, -60i64..60), 1..40),
    ) {
        let w = imported(first, dims, &heights, HeightOutside::Generated);
        let plain = HeightmapWorld::new(&w.params().clone().with_extent(None)).unwrap();
        let (nx, nz) = (i64::from(dims[0]), i64::from(dims[1]));
        for (x, z) in probes {
            let (i, j) = (x - first[0], z - first[1]);
            if (0..nx).contains(&i) && (0..nz).contains(&j) {
                let want = heights[(j * nx + i) as usize];
                // generated + (height - generated): one f32 rounding.
                prop_assert!((w.height([x, z]) - want).abs() <= 1e-4 * want.abs().max(1.0));
            } else {
                prop_assert_eq!(w.height([x, z]).to_bits(), plain.height([x, z]).to_bits());
            }
        }
    }
}

#[test]
fn bad_imports_change_nothing() {
    let h = vec![1.0; 16];
    let mut w = imported([0, 0], [4, 4], &h, HeightOutside::Edge);
    let before: Vec<u32> = (0..8).map(|x| w.height([x, 2]).to_bits()).collect();
    assert!(w.import_heights([0, 0], [4, 4], &h[..15]).is_err());
    assert!(w.import_heights([0, 0], [0, 4], &[]).is_err());
    let mut bad = h.clone();
    bad[7] = f32::NAN;
    assert!(w.import_heights([0, 0], [4, 4], &bad).is_err());
    bad[7] = 2.0e9;
    assert!(w.import_heights([0, 0], [4, 4], &bad).is_err());
    assert!(w.import_heights([1 << 30, 0], [4, 4], &h).is_err());
    let after: Vec<u32> = (0..8).map(|x| w.height([x, 2]).to_bits()).collect();
    assert_eq!(before, after);
    assert_eq!(w.dirty_count(), 0);
}
