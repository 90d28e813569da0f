//! Heightmap chunk meshing: seams, stitching, winding, counts, morphing, skirts,
//! colliders and input errors.

use std::collections::HashMap;

use isoterra_mesh::{
    ChunkSide, HeightChunkInput, HeightfieldCollider, HeightmapMesh, HeightmapMesher,
    HeightmapOptions, MeshError, sample_chunk_heights,
};
use proptest::prelude::*;

/// A gentle global height function of the node index: slopes stay well below
/// one, so every surface face normal points up.
fn gentle(seed: u32) -> impl Fn([i64; 2]) -> f32 {
    let a = 0.05 + f64::from(seed % 7) * 0.01;
    let b = 0.3 + f64::from(seed % 5) * 0.1;
    move |[x, z]| {
        let (x, z) = (x as f64, z as f64);
        (b * (a * x).sin() + 0.4 * (0.13 * z + a).cos() + 0.02 * x - 0.01 * z) as f32
    }
}

/// A rough global height function: a hash of the node index in `[-8, 8)`.
fn rough(seed: u32) -> impl Fn([i64; 2]) -> f32 {
    move |[x, z]| {
        let mut h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (z as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ u64::from(seed);
        h ^= h >> 31;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 29;
        ((h >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
    }
}

#[derive(Debug, Clone, Copy)]
struct World {
    cells: u32,
    origin: [f32; 2],
    cell_size: f32,
}

fn mesh_chunk(
    world: World,
    chunk: [i32; 2],
    lod: u8,
    neighbours: [u8; 4],
    options: &HeightmapOptions,
    height: &dyn Fn([i64; 2]) -> f32,
) -> HeightmapMesh {
    let mut heights = Vec::new();
    sample_chunk_heights(world.cells, lod, chunk, &mut heights, height).unwrap();
    let input = HeightChunkInput::new(&heights)
        .with_cells(world.cells)
        .with_lod(lod)
        .with_chunk(chunk)
        .with_origin(world.origin)
        .with_cell_size(world.cell_size)
        .with_neighbours(neighbours);
    let mut mesh = HeightmapMesh::default();
    HeightmapMesher::new()
        .mesh(&input, options, &mut mesh)
        .unwrap();
    mesh
}

fn bits3(p: [f32; 3]) -> [u32; 3] {
    [p[0].to_bits(), p[1].to_bits(), p[2].to_bits()]
}

/// Twice the signed area of a triangle projected on the x/z plane, positive when
/// it is counter-clockwise seen from +y (that is, its normal has +y).
fn plan_area2(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> f64 {
    let (bx, bz) = (f64::from(b[0] - a[0]), f64::from(b[2] - a[2]));
    let (cx, cz) = (f64::from(c[0] - a[0]), f64::from(c[2] - a[2]));
    bz * cx - bx * cz
}

fn face_normal(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> [f64; 3] {
    let u = [
        f64::from(b[0] - a[0]),
        f64::from(b[1] - a[1]),
        f64::from(b[2] - a[2]),
    ];
    let v = [
        f64::from(c[0] - a[0]),
        f64::from(c[1] - a[1]),
        f64::from(c[2] - a[2]),
    ];
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

fn world() -> impl Strategy<Value = World> {
    (
        prop_oneof![Just(2u32), Just(4), Just(8), Just(16)],
        prop_oneof![
            Just([0.0f32, 0.0]),
            (-500.0f32..500.0, -500.0f32..500.0).prop_map(|(a, b)| [a, b])
        ],
        prop_oneof![Just(1.0f32), Just(0.5), 0.1f32..3.0],
    )
        .prop_map(|(cells, origin, cell_size)| World {
            cells,
            origin,
            cell_size,
        })
}

fn log2(cells: u32) -> u8 {
    cells.trailing_zeros() as u8
}

// ---------------------------------------------------------------------------
// Shared borders
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Two chunks cut from one global height function agree bit for bit on
    /// the positions and normals of their shared border, at any LOD, along x and z.
    #[test]
    fn shared_border_positions_and_normals_are_bitwise_identical(
        w in world(),
        lod_pick in 0u8..8,
        cx in -6i32..6,
        cz in -6i32..6,
        seed in 0u32..1000,
        use_rough in any::<bool>(),
    ) {
        let lod = lod_pick % (log2(w.cells) + 1);
        let n = (w.cells >> lod) as usize;
        let v = n + 1;
        let h: Box<dyn Fn([i64; 2]) -> f32> =
            if use_rough { Box::new(rough(seed)) } else { Box::new(gentle(seed)) };
        let opts = HeightmapOptions::DEFAULT;
        let nb = [lod; 4];
        let a = mesh_chunk(w, [cx, cz], lod, nb, &opts, &h);
        let east = mesh_chunk(w, [cx + 1, cz], lod, nb, &opts, &h);
        let north = mesh_chunk(w, [cx, cz + 1], lod, nb, &opts, &h);
        for t in 0..v {
            // +x border of `a` against the -x border of `east`.
            let (ia, ib) = (t * v + n, t * v);
            prop_assert_eq!(bits3(a.positions[ia]), bits3(east.positions[ib]));
            prop_assert_eq!(bits3(a.normals[ia]), bits3(east.normals[ib]));
            prop_assert_eq!(a.uvs[ia], east.uvs[ib]);
            // +z border of `a` against the -z border of `north`.
            let (ia, ib) = (n * v + t, t);
            prop_assert_eq!(bits3(a.positions[ia]), bits3(north.positions[ib]));
            prop_assert_eq!(bits3(a.normals[ia]), bits3(north.normals[ib]));
            prop_assert_eq!(a.uvs[ia], north.uvs[ib]);
        }
    }
}

#[test]
fn normals_are_unit_length_and_point_up() {
    let w = World {
        cells: 16,
        origin: [3.0, -2.0],
        cell_size: 0.75,
    };
    let h = rough(3);
    for lod in 0..=4 {
        let m = mesh_chunk(w, [2, -3], lod, [lod; 4], &HeightmapOptions::DEFAULT, &h);
        for nrm in &m.normals {
            let len = nrm
                .iter()
                .map(|c| f64::from(*c).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!((len - 1.0).abs() < 1e-6, "normal {nrm:?} has length {len}");
            assert!(nrm[1] > 0.0);
        }
    }
}

#[test]
fn normal_matches_the_analytic_slope_of_a_plane() {
    // h = 0.5 x - 0.25 z (node units, cell size 2): dh/dx = 0.25, dh/dz = -0.125.
    let w = World {
        cells: 8,
        origin: [0.0, 0.0],
        cell_size: 2.0,
    };
    let h = |[x, z]: [i64; 2]| (0.5 * x as f64 - 0.25 * z as f64) as f32;
    for lod in 0..=3 {
        let m = mesh_chunk(w, [0, 0], lod, [lod; 4], &HeightmapOptions::DEFAULT, &h);
        let expect = {
            let v = [-0.25f64, 1.0, 0.125];
            let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            [v[0] / l, v[1] / l, v[2] / l]
        };
        for nrm in &m.normals {
            for k in 0..3 {
                assert!((f64::from(nrm[k]) - expect[k]).abs() < 1e-6, "{nrm:?}");
            }
        }
    }
}

#[test]
fn positions_and_uvs_follow_the_global_node_formula() {
    let w = World {
        cells: 4,
        origin: [10.5, -7.25],
        cell_size: 0.3,
    };
    let h = gentle(1);
    let opts = HeightmapOptions::DEFAULT.with_uv_scale(4.0);
    let m = mesh_chunk(w, [-2, 3], 1, [1; 4], &opts, &h);
    // LOD 1 of a 4-cell chunk: 3 x 3 vertices, step 2 nodes.
    assert_eq!(m.vertex_count(), 9);
    for j in 0..3i64 {
        for i in 0..3i64 {
            let (gx, gz) = (-8 + 2 * i, 12 + 2 * j);
            let p = m.positions[(j * 3 + i) as usize];
            let x = (10.5f64 + gx as f64 * f64::from(0.3f32)) as f32;
            let z = (-7.25f64 + gz as f64 * f64::from(0.3f32)) as f32;
            assert_eq!(p, [x, h([gx, gz]), z]);
            assert_eq!(m.uvs[(j * 3 + i) as usize], [x / 4.0, z / 4.0]);
        }
    }
}

// ---------------------------------------------------------------------------
// LOD seams
// ---------------------------------------------------------------------------

/// Relaxes random LODs so that edge neighbours differ by at most one level.
fn two_to_one(mut lods: Vec<u8>, side: usize) -> Vec<u8> {
    loop {
        let mut changed = false;
        for z in 0..side {
            for x in 0..side {
                let mut limit = lods[z * side + x];
                for (dx, dz) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                    let (nx, nz) = (x as i64 + dx, z as i64 + dz);
                    if nx >= 0 && nz >= 0 && (nx as usize) < side && (nz as usize) < side {
                        limit = limit.min(lods[nz as usize * side + nx as usize] + 1);
                    }
                }
                if limit != lods[z * side + x] {
                    lods[z * side + x] = limit;
                    changed = true;
                }
            }
        }
        if !changed {
            return lods;
        }
    }
}

/// Neighbour LODs (−x, +x, −z, +z) of chunk `(x, z)`; the outer rim counts as
/// the chunk's own LOD.
fn neighbour_lods(lods: &[u8], side: usize, x: usize, z: usize) -> [u8; 4] {
    let own = lods[z * side + x];
    let at = |nx: i64, nz: i64| {
        if nx >= 0 && nz >= 0 && (nx as usize) < side && (nz as usize) < side {
            lods[nz as usize * side + nx as usize]
        } else {
            own
        }
    };
    let (x, z) = (x as i64, z as i64);
    [at(x - 1, z), at(x + 1, z), at(x, z - 1), at(x, z + 1)]
}

/// Meshes a `side x side` neighbourhood and checks that the union, welded by
/// exact position bits, is a watertight, consistently oriented sheet whose only
/// boundary is the outer rim, and that it covers the region exactly once.
fn check_neighbourhood(w: World, lods: &[u8], side: usize, h: &dyn Fn([i64; 2]) -> f32) {
    if let Err(e) = neighbourhood_seams(w, lods, side, h, true) {
        panic!("{e}");
    }
}

/// The checks of [`check_neighbourhood`], reporting the first failure.
fn neighbourhood_seams(
    w: World,
    lods: &[u8],
    side: usize,
    h: &dyn Fn([i64; 2]) -> f32,
    stitch: bool,
) -> Result<(), String> {
    let opts = HeightmapOptions::DEFAULT.with_stitch(stitch);
    let mut ids: HashMap<[u32; 3], u32> = HashMap::new();
    let mut points: Vec<[f32; 3]> = Vec::new();
    let mut tris: Vec<[u32; 3]> = Vec::new();
    let mut area2 = 0.0f64;
    for z in 0..side {
        for x in 0..side {
            let lod = lods[z * side + x];
            let nb = neighbour_lods(lods, side, x, z);
            let m = mesh_chunk(w, [x as i32, z as i32], lod, nb, &opts, h);
            let n = u64::from(w.cells >> lod);
            let stitched = if stitch {
                nb.iter().filter(|&&l| l == lod + 1).count() as u64
            } else {
                0
            };
            assert_eq!(m.triangle_count() as u64, 2 * n * n - n / 2 * stitched);
            for t in m.indices.chunks_exact(3) {
                let mut tri = [0u32; 3];
                for (k, &i) in t.iter().enumerate() {
                    let p = m.positions[i as usize];
                    let next = points.len() as u32;
                    tri[k] = *ids.entry(bits3(p)).or_insert_with(|| {
                        points.push(p);
                        next
                    });
                }
                let a = plan_area2(
                    points[tri[0] as usize],
                    points[tri[1] as usize],
                    points[tri[2] as usize],
                );
                assert!(
                    a > 0.0,
                    "triangle {tri:?} is not counter-clockwise from above (lods {lods:?})"
                );
                area2 += a;
                tris.push(tri);
            }
        }
    }
    // Directed edges: each at most once (consistent orientation, manifold).
    let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
    for t in &tris {
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
        }
    }
    let extent = f64::from(w.cells) * side as f64;
    let lo = [w.origin[0], w.origin[1]];
    let hi = [
        (f64::from(w.origin[0]) + extent * f64::from(w.cell_size)) as f32,
        (f64::from(w.origin[1]) + extent * f64::from(w.cell_size)) as f32,
    ];
    let on_rim = |a: [f32; 3], b: [f32; 3]| {
        (a[0] == lo[0] && b[0] == lo[0])
            || (a[0] == hi[0] && b[0] == hi[0])
            || (a[2] == lo[1] && b[2] == lo[1])
            || (a[2] == hi[1] && b[2] == hi[1])
    };
    for (&(a, b), &count) in &directed {
        if count != 1 {
            return Err(format!(
                "edge {a}->{b} is used {count} times in one direction"
            ));
        }
        let (pa, pb) = (points[a as usize], points[b as usize]);
        if !directed.contains_key(&(b, a)) && !on_rim(pa, pb) {
            return Err(format!(
                "interior crack: edge {pa:?} -> {pb:?} has one triangle (lods {lods:?})"
            ));
        }
    }
    // The plan-view areas add up to the region's area: no overlap, no hole.
    let expected = (f64::from(hi[0]) - f64::from(lo[0])) * (f64::from(hi[1]) - f64::from(lo[1]));
    if (area2 / 2.0 - expected).abs() > 1e-4 * expected {
        return Err(format!("plan area {} != {expected}", area2 / 2.0));
    }
    Ok(())
}

fn lod_layout(side: usize) -> impl Strategy<Value = (World, Vec<u8>)> {
    world().prop_flat_map(move |w| {
        let max = log2(w.cells);
        (Just(w), proptest::collection::vec(0..=max, side * side))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random LODs obeying 2:1 over a 3 x 3 neighbourhood: no interior cracks.
    #[test]
    fn lod_seams_are_watertight_3x3((w, lods) in lod_layout(3), seed in 0u32..100) {
        let lods = two_to_one(lods, 3);
        check_neighbourhood(w, &lods, 3, &rough(seed));
    }

    /// The same over 4 x 4 chunks.
    #[test]
    fn lod_seams_are_watertight_4x4((w, lods) in lod_layout(4), seed in 0u32..100) {
        let lods = two_to_one(lods, 4);
        check_neighbourhood(w, &lods, 4, &gentle(seed));
    }
}

#[test]
fn checkerboard_of_two_levels_is_watertight() {
    let w = World {
        cells: 8,
        origin: [-3.0, 5.0],
        cell_size: 1.25,
    };
    let lods: Vec<u8> = (0..16)
        .map(|k| (((k % 4) + (k / 4)) % 2) as u8 + 1)
        .collect();
    check_neighbourhood(w, &lods, 4, &rough(9));
}

#[test]
fn staircase_of_all_levels_is_watertight() {
    // LOD rises by one per chunk column: 0 1 2 3.
    let w = World {
        cells: 8,
        origin: [0.0, 0.0],
        cell_size: 1.0,
    };
    let lods: Vec<u8> = (0..16).map(|k| (k % 4) as u8).collect();
    check_neighbourhood(w, &lods, 4, &rough(1));
}

#[test]
fn the_seam_check_finds_cracks_without_stitching() {
    let w = World {
        cells: 8,
        origin: [0.0, 0.0],
        cell_size: 1.0,
    };
    let lods: Vec<u8> = (0..9).map(|k| u8::from(k % 2 == 1)).collect();
    let err = neighbourhood_seams(w, &lods, 3, &rough(5), false).unwrap_err();
    assert!(err.contains("interior crack"), "{err}");
    assert!(neighbourhood_seams(w, &lods, 3, &rough(5), true).is_ok());
}

#[test]
fn unstitched_seam_has_a_crack() {
    // The check above does detect cracks: the same layout without stitching fails.
    let w = World {
        cells: 4,
        origin: [0.0, 0.0],
        cell_size: 1.0,
    };
    let h = rough(2);
    let opts = HeightmapOptions::DEFAULT.with_stitch(false);
    let fine = mesh_chunk(w, [0, 0], 0, [0, 1, 0, 0], &opts, &h);
    let coarse = mesh_chunk(w, [1, 0], 1, [0, 1, 1, 1], &opts, &h);
    // The fine chunk's +x edge uses its odd vertex; the coarse chunk has no
    // vertex there: a T-junction.
    let odd = fine.positions[5 + 4];
    assert!(fine.indices.contains(&(5 + 4)));
    assert!(!coarse.positions.iter().any(|p| bits3(*p) == bits3(odd)));
}

// ---------------------------------------------------------------------------
// Counts and winding
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `(n + 1)²` vertices and `2 n² - (n / 2) * stitched` triangles, every one
    /// counter-clockwise from above, and no odd vertex of a stitched edge in use.
    #[test]
    fn counts_and_winding(w in world(), lod_pick in 0u8..8, mask in 0u8..16, seed in 0u32..100) {
        let lod = lod_pick % (log2(w.cells) + 1);
        let n = w.cells >> lod;
        let mask = if n >= 2 { mask } else { 0 };
        let nb: [u8; 4] = std::array::from_fn(|k| lod + ((mask >> k) & 1));
        let m = mesh_chunk(w, [1, -1], lod, nb, &HeightmapOptions::DEFAULT, &gentle(seed));
        let (n64, v) = (u64::from(n), n as usize + 1);
        prop_assert_eq!(m.vertex_count(), v * v);
        prop_assert_eq!(m.normals.len(), v * v);
        prop_assert_eq!(m.uvs.len(), v * v);
        prop_assert_eq!(m.morph.len(), v * v);
        prop_assert_eq!(m.morph_targets.len(), v * v);
        let stitched = u64::from(mask.count_ones());
        prop_assert_eq!(m.triangle_count() as u64, 2 * n64 * n64 - n64 / 2 * stitched);
        for t in m.indices.chunks_exact(3) {
            let (a, b, c) = (m.positions[t[0] as usize], m.positions[t[1] as usize], m.positions[t[2] as usize]);
            prop_assert!(face_normal(a, b, c)[1] > 0.0);
        }
        let used: std::collections::HashSet<u32> = m.indices.iter().copied().collect();
        for side in ChunkSide::ALL {
            if mask & (1 << side.index()) == 0 {
                continue;
            }
            for t in (1..v).step_by(2) {
                let (i, j) = match side {
                    ChunkSide::NegX => (0, t),
                    ChunkSide::PosX => (v - 1, t),
                    ChunkSide::NegZ => (t, 0),
                    ChunkSide::PosZ => (t, v - 1),
                };
                prop_assert!(!used.contains(&((j * v + i) as u32)));
            }
        }
    }
}

#[test]
fn default_chunk_counts_at_each_lod() {
    let w = World {
        cells: 64,
        origin: [0.0, 0.0],
        cell_size: 1.0,
    };
    let h = gentle(0);
    for (lod, verts, tris) in [
        (0u8, 65 * 65, 2 * 64 * 64),
        (1, 33 * 33, 2 * 32 * 32),
        (2, 17 * 17, 2 * 16 * 16),
        (3, 9 * 9, 2 * 8 * 8),
        (6, 4, 2),
    ] {
        let m = mesh_chunk(w, [0, 0], lod, [lod; 4], &HeightmapOptions::DEFAULT, &h);
        assert_eq!(
            (m.vertex_count(), m.triangle_count()),
            (verts, tris),
            "lod {lod}"
        );
    }
    // All four edges stitched at LOD 0: 2 * 64² - 4 * 32.
    let m = mesh_chunk(w, [0, 0], 0, [1; 4], &HeightmapOptions::DEFAULT, &h);
    assert_eq!(m.triangle_count(), 2 * 64 * 64 - 4 * 32);
}

// ---------------------------------------------------------------------------
// Morphing
// ---------------------------------------------------------------------------

/// Height of the LOD `k + 1` mesh at `(x, z)`, by its triangles.
fn coarse_height_at(coarse: &HeightmapMesh, x: f32, z: f32) -> Option<f64> {
    for t in coarse.surface_indices().chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| coarse.positions[i as usize]);
        let p = [x, 0.0, z];
        let total = plan_area2(a, b, c);
        let wa = plan_area2(p, b, c) / total;
        let wb = plan_area2(a, p, c) / total;
        let wc = plan_area2(a, b, p) / total;
        let eps = -1e-9;
        if wa >= eps && wb >= eps && wc >= eps {
            return Some(wa * f64::from(a[1]) + wb * f64::from(b[1]) + wc * f64::from(c[1]));
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Fully morphed (t = 1), a LOD k chunk has the shape of its LOD k + 1 mesh:
    /// vertices that stay keep their height, the others sit on the coarse surface.
    #[test]
    fn morph_targets_lie_on_the_coarser_mesh(
        cells in prop_oneof![Just(2u32), Just(4), Just(8), Just(16)],
        cell_size in prop_oneof![Just(1.0f32), Just(0.5), Just(0.25)],
        lod_pick in 0u8..8,
        seed in 0u32..100,
    ) {
        // Exact binary coordinates, so the barycentric check below measures the
        // morph, not position rounding.
        let w = World { cells, origin: [0.0, 0.0], cell_size };
        let lod = lod_pick % log2(w.cells);
        let h = rough(seed);
        let fine = mesh_chunk(w, [2, 1], lod, [lod; 4], &HeightmapOptions::DEFAULT, &h);
        let coarse = mesh_chunk(w, [2, 1], lod + 1, [lod + 1; 4], &HeightmapOptions::DEFAULT, &h);
        let v = (w.cells >> lod) as usize + 1;
        for j in 0..v {
            for i in 0..v {
                let k = j * v + i;
                let p = fine.positions[k];
                let even = i % 2 == 0 && j % 2 == 0;
                prop_assert_eq!(fine.morph[k], if even { 0.0 } else { 1.0 });
                let morphed = p[1] + fine.morph[k] * (fine.morph_targets[k] - p[1]);
                if even {
                    let c = coarse.positions[(j / 2) * (v / 2 + 1) + i / 2];
                    prop_assert_eq!(morphed.to_bits(), c[1].to_bits());
                } else {
                    let expect = coarse_height_at(&coarse, p[0], p[2]).unwrap();
                    prop_assert!((f64::from(morphed) - expect).abs() <= 1e-5 * (1.0 + expect.abs()),
                        "vertex ({}, {}) morphs to {} but the coarse mesh is at {}", i, j, morphed, expect);
                }
            }
        }
    }
}

#[test]
fn coarsest_level_does_not_morph() {
    let w = World {
        cells: 8,
        origin: [0.0, 0.0],
        cell_size: 1.0,
    };
    let m = mesh_chunk(w, [0, 0], 3, [3; 4], &HeightmapOptions::DEFAULT, &rough(4));
    assert!(m.morph.iter().all(|&t| t == 0.0));
    for (p, t) in m.positions.iter().zip(&m.morph_targets) {
        assert_eq!(p[1], *t);
    }
}

// ---------------------------------------------------------------------------
// Skirts
// ---------------------------------------------------------------------------

#[test]
fn skirts_hang_below_every_border_and_face_outward() {
    let w = World {
        cells: 8,
        origin: [1.0, 2.0],
        cell_size: 0.5,
    };
    let h = rough(6);
    for nb in [[0u8; 4], [1, 0, 1, 0], [1; 4]] {
        let opts = HeightmapOptions::DEFAULT.with_skirt_depth(3.0);
        let m = mesh_chunk(w, [0, 0], 0, nb, &opts, &h);
        let plain = mesh_chunk(w, [0, 0], 0, nb, &HeightmapOptions::DEFAULT, &h);
        // The surface part is unchanged.
        assert_eq!(&m.positions[..81], &plain.positions[..]);
        assert_eq!(m.surface_indices(), &plain.indices[..]);
        assert_eq!(m.skirt_vertex_start, 81);
        // Per side: n + 1 (or n / 2 + 1 when stitched) bottoms, 2 triangles per segment.
        let per_side: Vec<usize> = [2usize, 1, 3, 0]
            .iter()
            .map(|&s| if nb[s] == 1 { 5 } else { 9 })
            .collect();
        let verts: usize = per_side.iter().sum();
        let tris: usize = per_side.iter().map(|c| 2 * (c - 1)).sum();
        assert_eq!(m.vertex_count(), 81 + verts);
        assert_eq!(m.skirt_indices().len(), 3 * tris);
        assert_eq!(m.normals.len(), m.vertex_count());
        assert_eq!(m.morph_targets.len(), m.vertex_count());
        let (x0, x1, z0, z1) = (1.0f32, 5.0f32, 2.0f32, 6.0f32);
        for t in m.skirt_indices().chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| m.positions[i as usize]);
            let nrm = face_normal(a, b, c);
            assert!(nrm[1].abs() < 1e-9, "skirt faces are vertical");
            let mid = [(a[0] + b[0] + c[0]) / 3.0, (a[2] + b[2] + c[2]) / 3.0];
            let out = if mid[0] == x0 {
                [-1.0, 0.0]
            } else if mid[0] == x1 {
                [1.0, 0.0]
            } else if mid[1] == z0 {
                [0.0, -1.0]
            } else {
                assert_eq!(mid[1], z1);
                [0.0, 1.0]
            };
            assert!(
                nrm[0] * out[0] + nrm[2] * out[1] > 0.0,
                "skirt face points inward"
            );
        }
        for k in 81..m.vertex_count() {
            let p = m.positions[k];
            let top = m.positions[..81]
                .iter()
                .find(|q| q[0] == p[0] && q[2] == p[2])
                .unwrap();
            assert_eq!(p[1], top[1] - 3.0);
        }
    }
}

// ---------------------------------------------------------------------------
// Reuse and determinism
// ---------------------------------------------------------------------------

#[test]
fn reused_mesher_and_buffers_give_the_same_bytes() {
    let w = World {
        cells: 16,
        origin: [0.0, 0.0],
        cell_size: 1.0,
    };
    let h = rough(8);
    let mut mesher = HeightmapMesher::new();
    let mut out = HeightmapMesh::default();
    let mut heights = Vec::new();
    for (lod, nb, skirt) in [
        (0u8, [0u8, 1, 0, 1], 0.0f32),
        (2, [2, 2, 3, 3], 1.0),
        (0, [0, 1, 0, 1], 0.0),
        (4, [4; 4], 2.0),
        (1, [2, 1, 1, 2], 0.0),
    ] {
        sample_chunk_heights(w.cells, lod, [3, 4], &mut heights, &h).unwrap();
        let input = HeightChunkInput::new(&heights)
            .with_cells(16)
            .with_lod(lod)
            .with_chunk([3, 4])
            .with_neighbours(nb);
        let opts = HeightmapOptions::DEFAULT.with_skirt_depth(skirt);
        mesher.mesh(&input, &opts, &mut out).unwrap();
        let fresh = mesh_chunk(w, [3, 4], lod, nb, &opts, &h);
        assert_eq!(out, fresh);
    }
    let capacity = out.positions.capacity();
    out.reset();
    assert!(out.positions.is_empty() && out.indices.is_empty());
    assert_eq!(out.positions.capacity(), capacity);
}

// ---------------------------------------------------------------------------
// Colliders
// ---------------------------------------------------------------------------

#[test]
fn collider_corners_match_the_render_mesh() {
    let w = World {
        cells: 8,
        origin: [-4.0, 9.0],
        cell_size: 0.7,
    };
    let h = gentle(2);
    let mut heights = Vec::new();
    sample_chunk_heights(8, 1, [-1, 2], &mut heights, &h).unwrap();
    let input = HeightChunkInput::new(&heights)
        .with_cells(8)
        .with_lod(1)
        .with_chunk([-1, 2])
        .with_origin(w.origin)
        .with_cell_size(w.cell_size);
    let c = HeightfieldCollider::from_chunk(&input).unwrap();
    let m = mesh_chunk(w, [-1, 2], 1, [1; 4], &HeightmapOptions::DEFAULT, &h);
    assert_eq!((c.rows, c.cols), (5, 5));
    for z in 0..5u32 {
        for x in 0..5u32 {
            assert_eq!(c.height(x, z), Some(m.positions[(z * 5 + x) as usize][1]));
        }
    }
    let (first, last) = (m.positions[0], m.positions[24]);
    let half = [c.scale[0] / 2.0, c.scale[2] / 2.0];
    assert!((c.translation[0] - half[0] - first[0]).abs() < 1e-5);
    assert!((c.translation[0] + half[0] - last[0]).abs() < 1e-5);
    assert!((c.translation[2] - half[1] - first[2]).abs() < 1e-5);
    assert!((c.translation[2] + half[1] - last[2]).abs() < 1e-5);
    // Bad input is rejected the same way as by the mesher.
    let mut bad = heights.clone();
    bad[3] = f32::NAN;
    assert!(matches!(
        HeightfieldCollider::from_chunk(&input_with(&bad, &input)),
        Err(MeshError::NonFiniteHeight { index: 3, .. })
    ));
}

fn input_with<'a>(heights: &'a [f32], like: &HeightChunkInput<'_>) -> HeightChunkInput<'a> {
    HeightChunkInput::new(heights)
        .with_cells(like.cells)
        .with_lod(like.lod)
        .with_chunk(like.chunk)
        .with_origin(like.origin)
        .with_cell_size(like.cell_size)
        .with_neighbours(like.neighbours)
}

#[cfg(feature = "parry")]
#[test]
fn parry_heightfield_has_the_collider_grid() {
    let h = gentle(5);
    let mut heights = Vec::new();
    sample_chunk_heights(8, 0, [0, 0], &mut heights, &h).unwrap();
    let input = HeightChunkInput::new(&heights).with_cells(8);
    let c = HeightfieldCollider::from_chunk(&input).unwrap();
    let field = c.to_parry().unwrap();
    assert_eq!((field.nrows(), field.ncols()), (8, 8));
    // parry's cell (row z, column x) holds our node (x, z) at its corner.
    let heights_zx = field.heights();
    assert_eq!(heights_zx[(2, 5)], c.height(5, 2).unwrap());
    assert_eq!(field.x_at(0), -c.scale[0] / 2.0);
    let (t1, _) = field.triangles_at(0, 0);
    let t1 = t1.unwrap();
    // Same diagonal as the render mesh: (min x, min z) to (max x, max z).
    let corner = [t1.a, t1.b, t1.c]
        .iter()
        .filter(|p| (p.x == -4.0 && p.z == -4.0) || (p.x == -3.0 && p.z == -3.0))
        .count();
    assert_eq!(corner, 2);
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

fn try_mesh(
    input: &HeightChunkInput<'_>,
    options: &HeightmapOptions,
) -> (Result<(), MeshError>, HeightmapMesh) {
    // Pre-fill the output: an error must leave it untouched.
    let mut out = HeightmapMesh {
        positions: vec![[1.0, 2.0, 3.0]],
        indices: vec![7],
        ..HeightmapMesh::default()
    };
    let before = out.clone();
    let r = HeightmapMesher::new().mesh(input, options, &mut out);
    if r.is_err() {
        assert_eq!(out, before, "a failed call changed the output");
    }
    (r, out)
}

#[test]
fn nan_and_infinite_heights_are_errors_naming_the_sample() {
    let mut heights = vec![0.0f32; 7 * 7];
    heights[7 * 2 + 5] = f32::NAN;
    let input = HeightChunkInput::new(&heights).with_cells(4);
    let (r, _) = try_mesh(&input, &HeightmapOptions::DEFAULT);
    assert!(
        matches!(
            r,
            Err(MeshError::NonFiniteHeight { index: 19, x: 5, z: 2, value }) if value.is_nan()
        ),
        "{r:?}"
    );
    let msg = r.unwrap_err().to_string();
    assert!(
        msg.contains("sample 19") && msg.contains("column 5, row 2"),
        "{msg}"
    );

    // An apron sample counts too.
    heights[7 * 2 + 5] = 0.0;
    heights[0] = f32::NEG_INFINITY;
    let input = HeightChunkInput::new(&heights).with_cells(4);
    assert!(matches!(
        try_mesh(&input, &HeightmapOptions::DEFAULT).0,
        Err(MeshError::NonFiniteHeight {
            index: 0,
            x: 0,
            z: 0,
            ..
        })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A single NaN anywhere in the samples is reported at its index.
    #[test]
    fn any_nan_sample_is_reported(lod in 0u8..3, at in any::<proptest::sample::Index>()) {
        let side = (8usize >> lod) + 3;
        let mut heights = vec![1.0f32; side * side];
        let index = at.index(heights.len());
        heights[index] = f32::NAN;
        let input = HeightChunkInput::new(&heights).with_cells(8).with_lod(lod);
        match try_mesh(&input, &HeightmapOptions::DEFAULT).0 {
            Err(MeshError::NonFiniteHeight { index: got, x, z, .. }) => {
                prop_assert_eq!(got, index);
                prop_assert_eq!(z as usize * side + x as usize, index);
            }
            other => prop_assert!(false, "expected NonFiniteHeight, got {:?}", other),
        }
        prop_assert!(HeightfieldCollider::from_chunk(&input).is_err());
    }
}

#[test]
fn wrong_sample_count_is_an_error() {
    let heights = vec![0.0f32; 66 * 66];
    let input = HeightChunkInput::new(&heights);
    assert_eq!(
        try_mesh(&input, &HeightmapOptions::DEFAULT).0,
        Err(MeshError::HeightCountMismatch {
            expected: 67 * 67,
            got: 66 * 66,
            side: 67
        })
    );
    let input = HeightChunkInput::new(&heights).with_lod(1);
    assert!(matches!(
        try_mesh(&input, &HeightmapOptions::DEFAULT).0,
        Err(MeshError::HeightCountMismatch { expected: 1225, .. })
    ));
}

#[test]
fn bad_parameters_are_errors() {
    let heights = vec![0.0f32; 7 * 7];
    let base = HeightChunkInput::new(&heights).with_cells(4);
    let d = HeightmapOptions::DEFAULT;
    let param = |r: Result<(), MeshError>| match r {
        Err(MeshError::InvalidParameter { name, .. }) => name,
        other => panic!("expected InvalidParameter, got {other:?}"),
    };
    assert_eq!(param(try_mesh(&base.with_cells(6), &d).0), "cells");
    assert_eq!(param(try_mesh(&base.with_cells(0), &d).0), "cells");
    assert_eq!(param(try_mesh(&base.with_cells(1 << 13), &d).0), "cells");
    assert_eq!(param(try_mesh(&base.with_lod(3), &d).0), "lod");
    assert_eq!(param(try_mesh(&base.with_lod(255), &d).0), "lod");
    for cs in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert_eq!(param(try_mesh(&base.with_cell_size(cs), &d).0), "cell_size");
    }
    assert_eq!(
        param(try_mesh(&base.with_origin([f32::NAN, 0.0]), &d).0),
        "origin"
    );
    for uv in [0.0, -2.0, f32::NAN] {
        assert_eq!(param(try_mesh(&base, &d.with_uv_scale(uv)).0), "uv_scale");
    }
    for depth in [-0.5, f32::NAN, f32::INFINITY] {
        assert_eq!(
            param(try_mesh(&base, &d.with_skirt_depth(depth)).0),
            "skirt_depth"
        );
    }
}

#[test]
fn neighbours_breaking_two_to_one_are_errors() {
    let heights = vec![0.0f32; 7 * 7];
    let base = HeightChunkInput::new(&heights).with_cells(4);
    assert_eq!(
        try_mesh(
            &base.with_neighbours([0, 0, 2, 0]),
            &HeightmapOptions::DEFAULT
        )
        .0,
        Err(MeshError::NeighbourLod {
            side: ChunkSide::NegZ,
            lod: 0,
            neighbour: 2
        })
    );
    // A finer neighbour needs nothing from the coarser chunk.
    let heights1 = vec![0.0f32; 5 * 5];
    let lod1 = HeightChunkInput::new(&heights1).with_cells(4).with_lod(1);
    assert!(
        try_mesh(
            &lod1.with_neighbours([0, 1, 2, 1]),
            &HeightmapOptions::DEFAULT
        )
        .0
        .is_ok()
    );
    // At the coarsest level there is no coarser neighbour.
    let heights2 = vec![0.0f32; 4 * 4];
    let top = HeightChunkInput::new(&heights2).with_cells(4).with_lod(2);
    assert!(matches!(
        try_mesh(
            &top.with_neighbours([2, 3, 2, 2]),
            &HeightmapOptions::DEFAULT
        )
        .0,
        Err(MeshError::NeighbourLod {
            side: ChunkSide::PosX,
            ..
        })
    ));
    assert!(
        try_mesh(
            &top.with_neighbours([2, 1, 2, 2]),
            &HeightmapOptions::DEFAULT
        )
        .0
        .is_ok()
    );
    let msg = MeshError::NeighbourLod {
        side: ChunkSide::PosX,
        lod: 1,
        neighbour: 3,
    }
    .to_string();
    assert!(msg.contains("+x") && msg.contains("2:1"), "{msg}");
}
