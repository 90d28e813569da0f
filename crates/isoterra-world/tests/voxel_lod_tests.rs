//! Tests of voxel LOD: the octree selection (exact tiling, 2:1 rule) and
//! crack-free meshing of mixed-LOD selections of a world.

use std::collections::HashMap;

use isoterra_field::{VoxelGen, VoxelPreset, fill_density};
use isoterra_mesh::CubesOutput;
use isoterra_world::{
    VoxelBrush, VoxelLodChunk, VoxelLodMesher, VoxelLodParams, VoxelParams, VoxelTool, VoxelWorld,
    WorldError, select_voxel_lods, voxel_lod_transitions,
};
use proptest::prelude::*;

const N: u32 = 8;

/// LOD-0 chunk span `[lo, hi]` (inclusive) of a selected chunk.
fn span(c: &VoxelLodChunk) -> ([i64; 3], [i64; 3]) {
    let lo = c.first_world_chunk();
    (lo, lo.map(|v| v + (1i64 << c.lod) - 1))
}

fn check_selection(sel: &[VoxelLodChunk], min: [i32; 3], max: [i32; 3]) {
    // Exact tiling: every world chunk of the region is covered once, nothing
    // outside it.
    let mut cover: HashMap<[i64; 3], u32> = HashMap::new();
    let mut volume = 0u64;
    for c in sel {
        let (lo, hi) = span(c);
        volume += 1u64 << (3 * c.lod as u32);
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let p = [x, y, z];
                    assert!(
                        (0..3).all(|a| min[a] as i64 <= p[a] && p[a] <= max[a] as i64),
                        "{c:?} reaches outside the region"
                    );
                    *cover.entry(p).or_insert(0) += 1;
                }
            }
        }
    }
    let expected: u64 = (0..3).map(|a| (max[a] - min[a] + 1) as u64).product();
    assert_eq!(volume, expected, "volume sum");
    assert_eq!(cover.len() as u64, expected);
    assert!(cover.values().all(|&v| v == 1), "overlapping chunks");
    // 2:1 for every pair touching by a face, an edge or a corner.
    for (i, a) in sel.iter().enumerate() {
        let (alo, ahi) = span(a);
        for b in &sel[i + 1..] {
            let (blo, bhi) = span(b);
            let touch = (0..3).all(|k| alo[k] <= bhi[k] + 1 && blo[k] <= ahi[k] + 1);
            if touch {
                assert!(
                    a.lod.abs_diff(b.lod) <= 1,
                    "{a:?} and {b:?} touch but differ by more than one level"
                );
            }
        }
    }
    // Sorted by LOD, then z, y, x.
    assert!(
        sel.windows(2)
            .all(|w| (w[0].lod, w[0].coord[2], w[0].coord[1], w[0].coord[0])
                < (w[1].lod, w[1].coord[2], w[1].coord[1], w[1].coord[0]))
    );
}

#[test]
fn viewer_gets_fine_chunks_and_far_ones_stay_coarse() {
    let p = VoxelLodParams::DEFAULT
        .with_chunk_cells(N)
        .with_max_lod(3)
        .with_lod_distance(6.0);
    let sel = select_voxel_lods(&p, &[[1.0, 1.0, 1.0]], [0; 3], [31; 3]).unwrap();
    check_selection(&sel, [0; 3], [31; 3]);
    let at_viewer = sel
        .iter()
        .find(|c| {
            let (lo, hi) = span(c);
            (0..3).all(|a| lo[a] <= 0 && 0 <= hi[a])
        })
        .unwrap();
    assert_eq!(at_viewer.lod, 0);
    assert!(sel.iter().any(|c| c.lod == 3));
    // Deterministic.
    assert_eq!(
        sel,
        select_voxel_lods(&p, &[[1.0, 1.0, 1.0]], [0; 3], [31; 3]).unwrap()
    );
}

#[test]
fn two_to_one_rule_is_enforced_across_corners() {
    // A tiny split distance makes the viewer's chunk LOD 0 next to what would
    // otherwise be LOD 3 chunks: the balance pass must grade the levels.
    let p = VoxelLodParams::DEFAULT
        .with_chunk_cells(N)
        .with_max_lod(3)
        .with_lod_distance(0.5);
    let sel = select_voxel_lods(&p, &[[0.5, 0.5, 0.5]], [-8; 3], [7; 3]).unwrap();
    check_selection(&sel, [-8; 3], [7; 3]);
    assert!(sel.iter().any(|c| c.lod == 0));
    assert!(sel.iter().any(|c| c.lod == 1));
    assert!(sel.iter().any(|c| c.lod == 2));
}

#[test]
fn selection_rejects_bad_input_and_huge_regions() {
    let p = VoxelLodParams::DEFAULT.with_chunk_cells(N).with_max_lod(0);
    assert!(matches!(
        select_voxel_lods(&p, &[], [0; 3], [100; 3]),
        Err(WorldError::InvalidParameter { .. })
    ));
    assert!(select_voxel_lods(&p, &[[f32::INFINITY, 0.0, 0.0]], [0; 3], [1; 3]).is_err());
    assert!(select_voxel_lods(&p.with_lod_distance(-1.0), &[], [0; 3], [1; 3]).is_err());
    assert!(select_voxel_lods(&p.with_max_lod(40), &[], [0; 3], [1; 3]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn selection_tiles_the_region_with_two_to_one(
        max_lod in 0u8..=3,
        dist in 0.0f32..40.0,
        min in prop::array::uniform3(-6i32..6),
        size in prop::array::uniform3(1i32..9),
        viewers in prop::collection::vec(prop::array::uniform3(-60.0f32..60.0), 0..3),
    ) {
        let p = VoxelLodParams::DEFAULT
            .with_chunk_cells(N)
            .with_max_lod(max_lod)
            .with_lod_distance(dist);
        let max = [0, 1, 2].map(|a| min[a] + size[a] - 1);
        let sel = select_voxel_lods(&p, &viewers, min, max).unwrap();
        check_selection(&sel, min, max);
    }
}

// ---------------------------------------------------------------------------
// Meshing
// ---------------------------------------------------------------------------

/// A small noisy planet of radius about 10 (generator), with a ball added on
/// its side and a hole dug into its top (edited chunks).
fn planet_world() -> VoxelWorld {
    let generator = VoxelGen::new(VoxelPreset::Planet, 7)
        .with_planet_radius(10.0)
        .with_ground_amplitude(8.0)
        .with_cave_frequency(0.2)
        .with_cave_threshold(0.0);
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(N)
        .with_generator(generator);
    let mut world = VoxelWorld::new(&params).unwrap();
    world
        .apply_brush(&VoxelBrush::new(VoxelTool::Add, [13.1, 1.4, -0.3], 4.05))
        .unwrap();
    world
        .apply_brush(&VoxelBrush::new(VoxelTool::Dig, [0.3, 10.2, 1.1], 3.45))
        .unwrap();
    assert!(world.modified_chunks().count() > 0);
    world
}

/// The region (LOD-0 chunks) that holds the planet with air on its border.
const REGION: ([i32; 3], [i32; 3]) = ([-4; 3], [3; 3]);

#[derive(Debug, Default)]
struct Topology {
    triangles: usize,
    degenerate: usize,
    boundary: usize,
    overused: usize,
    flipped: usize,
    /// Six times the enclosed volume (positive when the surface faces out).
    volume6: f64,
}

/// The union of the meshes welded by exact position bits.
fn topology<'a>(meshes: impl IntoIterator<Item = &'a CubesOutput>) -> Topology {
    let mut ids: HashMap<[u32; 3], u32> = HashMap::new();
    let mut points: Vec<[f64; 3]> = Vec::new();
    let mut directed: HashMap<(u32, u32), usize> = HashMap::new();
    let mut topo = Topology::default();
    for m in meshes {
        let map: Vec<u32> = m
            .positions
            .iter()
            .map(|p| {
                *ids.entry(p.map(f32::to_bits)).or_insert_with(|| {
                    points.push(p.map(f64::from));
                    points.len() as u32 - 1
                })
            })
            .collect();
        for t in m.indices.chunks_exact(3) {
            let t = [map[t[0] as usize], map[t[1] as usize], map[t[2] as usize]];
            topo.triangles += 1;
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                topo.degenerate += 1;
                continue;
            }
            for k in 0..3 {
                *directed.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
            }
            let [a, b, c] = t.map(|i| points[i as usize]);
            topo.volume6 += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]);
        }
    }
    for (&(a, b), &count) in &directed {
        if count > 1 {
            topo.flipped += 1;
        }
        let total = count + directed.get(&(b, a)).copied().unwrap_or(0);
        if total == 1 {
            topo.boundary += 1;
        } else if total > 2 && a < b {
            topo.overused += 1;
        }
    }
    topo
}

fn assert_closed(topo: &Topology, what: &str) {
    assert!(topo.triangles > 0, "{what}: empty mesh");
    assert_eq!(topo.degenerate, 0, "{what}: degenerate triangles");
    assert_eq!(topo.boundary, 0, "{what}: boundary edges");
    assert_eq!(
        topo.overused, 0,
        "{what}: edges with more than two triangles"
    );
    assert_eq!(topo.flipped, 0, "{what}: inconsistent orientation");
    assert!(topo.volume6 > 0.0, "{what}: surface faces inward");
}

fn lod_params() -> VoxelLodParams {
    VoxelLodParams::DEFAULT.with_chunk_cells(N).with_max_lod(2)
}

#[test]
fn mixed_lod_planet_is_closed() {
    let world = planet_world();
    let sel = select_voxel_lods(
        &lod_params().with_lod_distance(2.0),
        &[[20.0, 2.0, 0.0]],
        REGION.0,
        REGION.1,
    )
    .unwrap();
    let lods: std::collections::BTreeSet<u8> = sel.iter().map(|c| c.lod).collect();
    assert_eq!(lods.len(), 3, "the selection mixes LODs 0, 1 and 2");
    let meshes = VoxelLodMesher::new().mesh_selection(&world, &sel).unwrap();
    assert_eq!(meshes.len(), sel.len());
    assert!(meshes.iter().zip(&sel).all(|((c, _), s)| c == s));
    // Surfaces at every LOD.
    for lod in 0..=2 {
        assert!(
            meshes
                .iter()
                .any(|(c, m)| c.lod == lod && m.triangle_count() > 0),
            "no surface at LOD {lod}"
        );
    }
    let mixed = topology(meshes.iter().map(|(_, m)| m));
    assert_closed(&mixed, "mixed LODs");

    // The same chunks without transition cells crack: the test can see seams.
    let mut mesher = VoxelLodMesher::new();
    let plain: Vec<CubesOutput> = sel
        .iter()
        .map(|c| {
            let mut out = CubesOutput::default();
            mesher.mesh_chunk(&world, c, 0, 0, &mut out).unwrap();
            out
        })
        .collect();
    assert!(topology(&plain).boundary > 0);

    // The enclosed volume is close to the all-LOD-0 one.
    let fine = mesher.mesh_region(&world, REGION.0, REGION.1, 0).unwrap();
    let fine = topology(fine.iter().map(|(_, m)| m));
    assert_closed(&fine, "LOD 0");
    let ratio = mixed.volume6 / fine.volume6;
    assert!((0.9..1.1).contains(&ratio), "volume ratio {ratio}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn random_mixed_lod_selections_are_closed(
        viewers in prop::collection::vec(prop::array::uniform3(-32.0f32..32.0), 1..3),
        dist in 0.0f32..12.0,
    ) {
        let world = planet_world();
        let sel = select_voxel_lods(
            &lod_params().with_lod_distance(dist),
            &viewers,
            REGION.0,
            REGION.1,
        )
        .unwrap();
        let meshes = VoxelLodMesher::new().mesh_selection(&world, &sel).unwrap();
        assert_closed(&topology(meshes.iter().map(|(_, m)| m)), "random selection");
    }
}

#[test]
fn uniform_lods_are_closed() {
    let world = planet_world();
    let mut mesher = VoxelLodMesher::new();
    for lod in 0..=2 {
        let meshes = mesher.mesh_region(&world, REGION.0, REGION.1, lod).unwrap();
        let side = |a: usize| ((REGION.1[a] >> lod) - (REGION.0[a] >> lod) + 1) as usize;
        assert_eq!(meshes.len(), side(0) * side(1) * side(2));
        assert_closed(
            &topology(meshes.iter().map(|(_, m)| m)),
            &format!("LOD {lod}"),
        );
    }
}

#[test]
fn lod_zero_selection_matches_world_meshes() {
    let mut world = planet_world();
    // Load one chunk more on each side so the world's aprons hold real values.
    world
        .ensure_region(REGION.0.map(|v| v - 1), REGION.1.map(|v| v + 1))
        .unwrap();
    world.rebuild_all();
    let sel = select_voxel_lods(&lod_params().with_max_lod(0), &[], REGION.0, REGION.1).unwrap();
    assert!(sel.iter().all(|c| c.lod == 0));
    let meshes = VoxelLodMesher::new().mesh_selection(&world, &sel).unwrap();
    let mut total = 0;
    for (c, m) in &meshes {
        let own = world.chunk_mesh(c.coord).map_or(0, |m| m.triangle_count());
        assert_eq!(m.triangle_count(), own, "chunk {:?}", c.coord);
        total += own;
    }
    assert!(total > 0);
}

#[test]
fn unloaded_chunks_read_the_generator_bit_for_bit() {
    let generator = VoxelGen::new(VoxelPreset::Overhangs, 3);
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(N)
        .with_generator(generator);
    let empty = VoxelWorld::new(&params).unwrap();
    let mut loaded = VoxelWorld::new(&params).unwrap();
    loaded.ensure_region([-3; 3], [3; 3]).unwrap();
    assert_eq!(loaded.modified_chunks().count(), 0);
    // The world's generated nodes equal the generator sampled on a coarse grid.
    let (origin, step, side) = ([-24i64, -20, -24], 4i64, 13u32);
    let mut expected = vec![0.0f32; (side * side * side) as usize];
    fill_density(
        &generator,
        origin.map(|v| v as f32),
        step as f32,
        [side; 3],
        &mut expected,
    )
    .unwrap();
    for k in 0..side as i64 {
        for j in 0..side as i64 {
            for i in 0..side as i64 {
                let g = [
                    origin[0] + i * step,
                    origin[1] + j * step,
                    origin[2] + k * step,
                ];
                let (v, _) = loaded.node(g).unwrap();
                let at = ((k * side as i64 + j) * side as i64 + i) as usize;
                assert_eq!(v.to_bits(), expected[at].to_bits(), "node {g:?}");
            }
        }
    }
    // Meshing a mixed selection reads the same values from either world.
    let sel = select_voxel_lods(
        &lod_params().with_lod_distance(3.0),
        &[[0.0, 0.0, 0.0]],
        [-3; 3],
        [2; 3],
    )
    .unwrap();
    let mut mesher = VoxelLodMesher::new();
    let a = mesher.mesh_selection(&empty, &sel).unwrap();
    let b = mesher.mesh_selection(&loaded, &sel).unwrap();
    assert_eq!(a, b);
    assert!(a.iter().any(|(_, m)| m.triangle_count() > 0));
}

#[test]
fn bad_selections_are_rejected() {
    let world = planet_world();
    let mut mesher = VoxelLodMesher::new();
    // A LOD 2 chunk next to LOD 0 chunks breaks the 2:1 rule.
    let mut sel = vec![VoxelLodChunk::new([0, 0, 0], 2)];
    sel.push(VoxelLodChunk::new([4, 0, 0], 0));
    assert!(matches!(
        mesher.mesh_selection(&world, &sel),
        Err(WorldError::InvalidParameter { .. })
    ));
    let dup = [VoxelLodChunk::new([0, 0, 0], 0); 2];
    assert!(mesher.mesh_selection(&world, &dup).is_err());
    let far = [VoxelLodChunk::new([i32::MAX, 0, 0], 3)];
    assert!(mesher.mesh_selection(&world, &far).is_err());
    let deep = [VoxelLodChunk::new([0, 0, 0], 30)];
    assert!(mesher.mesh_selection(&world, &deep).is_err());
    let mut out = CubesOutput::default();
    assert!(
        mesher
            .mesh_chunk(&world, &VoxelLodChunk::new([0, 0, 0], 0), 1, 0, &mut out)
            .is_err()
    );
    assert!(
        mesher
            .mesh_chunk(
                &world,
                &VoxelLodChunk::new([0, 0, 0], 1),
                1 << 6,
                0,
                &mut out
            )
            .is_err()
    );
    assert!(out.indices.is_empty());
    assert!(mesher.mesh_region(&world, [1; 3], [0; 3], 0).is_err());
    assert!(mesher.mesh_region(&world, [0; 3], [100; 3], 0).is_err());
}

#[test]
fn mesh_chunk_matches_the_selection() {
    let world = planet_world();
    let sel = select_voxel_lods(
        &lod_params().with_lod_distance(2.0),
        &[[20.0, 2.0, 0.0]],
        REGION.0,
        REGION.1,
    )
    .unwrap();
    let mut mesher = VoxelLodMesher::new();
    let all = mesher.mesh_selection(&world, &sel).unwrap();
    // Chunk by chunk with the selection's flags gives the same meshes.
    let flags = voxel_lod_transitions(&sel).unwrap();
    assert!(flags.iter().any(|&(f, _)| f != 0));
    assert!(flags.iter().any(|&(_, e)| e != 0));
    for ((c, mesh), &(faces, edges)) in all.iter().zip(&flags) {
        let mut out = CubesOutput::default();
        mesher
            .mesh_chunk(&world, c, faces, edges, &mut out)
            .unwrap();
        assert_eq!(&out, mesh, "{c:?}");
        if c.lod == 0 {
            assert_eq!((faces, edges), (0, 0));
        }
    }
    // Without flags a chunk equals the uniform-LOD mesh of the same chunk.
    let coarse = sel.iter().find(|c| c.lod == 2).unwrap();
    let mut out = CubesOutput::default();
    mesher.mesh_chunk(&world, coarse, 0, 0, &mut out).unwrap();
    let region = mesher
        .mesh_region(
            &world,
            coarse.first_world_chunk().map(|v| v as i32),
            coarse.first_world_chunk().map(|v| v as i32 + 3),
            2,
        )
        .unwrap();
    assert_eq!(region.len(), 1);
    assert_eq!(region[0].1, out);
    assert!(all.iter().any(|(c, _)| c == coarse));
}

#[test]
fn same_lod_chunks_share_normals_and_carry_materials() {
    let mut world = planet_world();
    world
        .apply_brush(&VoxelBrush::new(VoxelTool::Add, [-12.6, 0.4, 2.2], 3.6).with_material(3))
        .unwrap();
    let mut mesher = VoxelLodMesher::new();
    for lod in 0..=2 {
        let meshes = mesher.mesh_region(&world, REGION.0, REGION.1, lod).unwrap();
        // Every vertex at a position seen by two chunks has one normal.
        let mut seen: HashMap<[u32; 3], [u32; 3]> = HashMap::new();
        let mut shared = 0;
        let mut painted = 0;
        for (c, m) in &meshes {
            assert_eq!(m.normals.len(), m.positions.len(), "{c:?}");
            assert_eq!(m.materials.len(), m.positions.len(), "{c:?}");
            painted += m.materials.iter().filter(|&&id| id == 3).count();
            for (p, nrm) in m.positions.iter().zip(&m.normals) {
                let key = p.map(f32::to_bits);
                let bits = nrm.map(f32::to_bits);
                match seen.insert(key, bits) {
                    Some(prev) => {
                        assert_eq!(prev, bits, "LOD {lod}: normal at {p:?}");
                        shared += 1;
                    }
                    None => {
                        let l = nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2];
                        assert!((l - 1.0).abs() < 1e-4, "LOD {lod}: |n|^2 = {l}");
                    }
                }
            }
        }
        assert!(shared > 0, "LOD {lod}: no vertex on a shared face");
        assert!(painted > 0, "LOD {lod}: the painted material is missing");
    }
}

#[test]
fn mixed_lod_chunks_share_normals_on_their_seams() {
    // Every vertex position that two chunks of a mixed selection both have
    // (same LOD or one level apart) gets the same normal, bit for bit, from
    // both: across a LOD change the coarse chunk computes the finer chunk's
    // normals from the fine nodes around the shared face.
    let world = planet_world();
    let sel = select_voxel_lods(
        &lod_params().with_lod_distance(2.0),
        &[[20.0, 2.0, 0.0]],
        REGION.0,
        REGION.1,
    )
    .unwrap();
    let meshes = VoxelLodMesher::new().mesh_selection(&world, &sel).unwrap();
    let mut seen: HashMap<[u32; 3], ([u32; 3], u8)> = HashMap::new();
    let mut across = 0;
    for (c, m) in &meshes {
        for (p, nrm) in m.positions.iter().zip(&m.normals) {
            let key = p.map(f32::to_bits);
            let bits = nrm.map(f32::to_bits);
            if let Some((prev, lod)) = seen.insert(key, (bits, c.lod)) {
                assert_eq!(prev, bits, "normal at {p:?} (LODs {lod} and {})", c.lod);
                across += (lod != c.lod) as usize;
            }
        }
    }
    assert!(
        across > 20,
        "only {across} vertices shared across a LOD change"
    );
}
