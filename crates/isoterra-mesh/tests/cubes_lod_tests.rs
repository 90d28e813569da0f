//! Marching cubes across LOD transitions: closed shapes meshed as blocks of
//! chunks with mixed LODs (2:1) stay closed, manifold and outward-facing;
//! validation of the chunk input.

use std::collections::HashMap;

use isoterra_mesh::{
    CellBox, CubesOptions, CubesOutput, LodChunkInput, LodMesher, MarchingCubes, MeshError,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Allocation counting (per thread, so parallel tests do not disturb it)
// ---------------------------------------------------------------------------

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocs;

// ---------------------------------------------------------------------------
// Fields on the global base grid
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Shape {
    /// A sphere with a little waviness.
    Ball {
        centre: [f32; 3],
        radius: f32,
        wave: f32,
    },
    /// A torus around the y axis.
    Torus {
        centre: [f32; 3],
        major: f32,
        minor: f32,
    },
    /// White noise (values bounded away from 0) inside the region, air on its
    /// outer two node layers.
    Noise { seed: u64 },
}

fn hash(seed: u64, g: [i64; 3]) -> u64 {
    let mut z = seed
        ^ (g[0] as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (g[1] as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ (g[2] as u64).wrapping_mul(0x1656_67b1_9e37_79f9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Shape {
    /// The value at global base node `g` in a region of `size` base cells.
    fn value(&self, g: [i64; 3], size: i64) -> f32 {
        let p = g.map(|c| c as f32);
        match *self {
            Shape::Ball {
                centre,
                radius,
                wave,
            } => {
                let d = [p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]];
                let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                radius - r + wave * (0.7 * p[0]).sin() * (0.9 * p[1] + 0.3).sin()
            }
            Shape::Torus {
                centre,
                major,
                minor,
            } => {
                let d = [p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]];
                let q = (d[0] * d[0] + d[2] * d[2]).sqrt() - major;
                minor - (q * q + d[1] * d[1]).sqrt()
            }
            Shape::Noise { seed } => {
                if g.iter().any(|&c| c < 2 || c > size - 2) {
                    return -1.0;
                }
                let h = hash(seed, g);
                let mag = 0.1 + 0.5 * ((h >> 40) as f32 / (1u64 << 24) as f32);
                if h & 1 == 0 { mag } else { -mag }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// A 2x2x2 block of units, each one coarse chunk or eight fine chunks
// ---------------------------------------------------------------------------

/// Meshes a block of 2x2x2 units of `2 * n * 2^base` base cells each. Unit `u` is
/// one chunk at LOD `base + 1` when bit `u` of `coarse` is set, else eight chunks
/// at LOD `base`. Returns every chunk's mesh.
fn mesh_block(shape: Shape, n: u32, base: u8, coarse: u8) -> Vec<CubesOutput> {
    let fine_cells = n as i64 * (1 << base); // base cells per fine chunk
    let unit = 2 * fine_cells;
    let size = 2 * unit;
    let is_coarse = |u: [i64; 3]| -> Option<bool> {
        if u.iter().any(|&c| !(0..2).contains(&c)) {
            return None;
        }
        Some(coarse & (1 << (u[0] + 2 * u[1] + 4 * u[2])) != 0)
    };
    let mut mesher = LodMesher::new();
    let opts = CubesOptions::DEFAULT;
    let mut meshes = Vec::new();
    for uz in 0..2 {
        for uy in 0..2 {
            for ux in 0..2 {
                let u = [ux, uy, uz];
                let origin = u.map(|c| c * unit);
                if is_coarse(u) == Some(true) {
                    let lod = base + 1;
                    let step = 1i64 << lod;
                    let samples = chunk_samples(shape, origin, n, step, size);
                    let side = 2 * n as i64 + 1;
                    let half = step / 2;
                    let faces: Vec<Vec<f32>> = (0..6)
                        .map(|f| {
                            let axis = f / 2;
                            let at = if f % 2 == 0 { 0 } else { n as i64 * step };
                            let mut out = Vec::new();
                            for v in 0..side {
                                for uu in 0..side {
                                    let mut g = origin;
                                    let (a, b) = match axis {
                                        0 => (1, 2),
                                        1 => (0, 2),
                                        _ => (0, 1),
                                    };
                                    g[axis] += at;
                                    g[a] += uu * half;
                                    g[b] += v * half;
                                    out.push(shape.value(g, size));
                                }
                            }
                            out
                        })
                        .collect();
                    let mut input = LodChunkInput::new(&samples, n, lod).with_base_node(origin);
                    for (f, fine) in faces.iter().enumerate() {
                        let axis = f / 2;
                        let mut nb = u;
                        nb[axis] += if f % 2 == 0 { -1 } else { 1 };
                        input = if is_coarse(nb) == Some(false) {
                            input.with_finer_face(f as u8, fine)
                        } else {
                            input.with_fine_face_samples(f as u8, fine)
                        };
                    }
                    for e in 0..12u8 {
                        let axis = (e / 4) as usize;
                        let others: Vec<usize> = (0..3).filter(|&b| b != axis).collect();
                        let r = e % 4;
                        let mut nb = u;
                        nb[others[0]] += if r & 1 == 0 { -1 } else { 1 };
                        nb[others[1]] += if r >> 1 == 0 { -1 } else { 1 };
                        if is_coarse(nb) == Some(false) {
                            input = input.with_finer_edge(e);
                        }
                    }
                    let mut out = CubesOutput::default();
                    mesher.mesh(&input, &opts, &mut out).unwrap();
                    meshes.push(out);
                } else {
                    for o in 0..8i64 {
                        let off = [o & 1, (o >> 1) & 1, o >> 2];
                        let origin = [0, 1, 2].map(|a| origin[a] + off[a] * fine_cells);
                        let step = 1i64 << base;
                        let samples = chunk_samples(shape, origin, n, step, size);
                        let input = LodChunkInput::new(&samples, n, base).with_base_node(origin);
                        let mut out = CubesOutput::default();
                        mesher.mesh(&input, &opts, &mut out).unwrap();
                        meshes.push(out);
                    }
                }
            }
        }
    }
    meshes
}

fn chunk_samples(shape: Shape, origin: [i64; 3], n: u32, step: i64, size: i64) -> Vec<f32> {
    let s = n as i64 + 1;
    let mut out = Vec::with_capacity((s * s * s) as usize);
    for k in 0..s {
        for j in 0..s {
            for i in 0..s {
                let g = [
                    origin[0] + i * step,
                    origin[1] + j * step,
                    origin[2] + k * step,
                ];
                out.push(shape.value(g, size));
            }
        }
    }
    out
}

/// Statistics of the union of meshes welded by exact position bits.
#[derive(Debug, Default)]
struct Topology {
    triangles: usize,
    degenerate: usize,
    /// Undirected edges used by one triangle.
    boundary: usize,
    /// Undirected edges used by more than two triangles.
    overused: usize,
    /// Directed edges that appear more than once (inconsistent orientation).
    flipped: usize,
    /// Six times the enclosed volume.
    volume6: f64,
}

fn topology(meshes: &[CubesOutput]) -> Topology {
    let mut ids: HashMap<[u32; 3], u32> = HashMap::new();
    let mut points: Vec<[f32; 3]> = Vec::new();
    let mut directed: HashMap<(u32, u32), usize> = HashMap::new();
    let mut topo = Topology::default();
    for m in meshes {
        let map: Vec<u32> = m
            .positions
            .iter()
            .map(|p| {
                *ids.entry(p.map(f32::to_bits)).or_insert_with(|| {
                    points.push(*p);
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
            let [a, b, c] = t.map(|i| points[i as usize].map(f64::from));
            topo.volume6 += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]);
        }
    }
    for (&(a, b), &count) in &directed {
        if count > 1 {
            topo.flipped += 1;
        }
        let back = directed.get(&(b, a)).copied().unwrap_or(0);
        let total = count + back;
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

fn ball() -> Shape {
    Shape::Ball {
        centre: [8.3, 7.6, 8.1],
        radius: 5.3,
        wave: 0.6,
    }
}

// ---------------------------------------------------------------------------
// Closed shapes with mixed LODs
// ---------------------------------------------------------------------------

#[test]
fn ball_is_closed_for_every_lod_layout() {
    // All 256 ways to choose coarse or fine for each of the eight units.
    for coarse in 0..=255u8 {
        let topo = topology(&mesh_block(ball(), 4, 0, coarse));
        assert_closed(&topo, &format!("layout {coarse:#010b}"));
    }
}

#[test]
fn white_noise_is_closed_for_every_lod_layout() {
    for coarse in 0..=255u8 {
        let shape = Shape::Noise {
            seed: coarse as u64 * 31 + 5,
        };
        let topo = topology(&mesh_block(shape, 4, 0, coarse));
        assert_closed(&topo, &format!("layout {coarse:#010b}"));
    }
}

#[test]
fn small_and_odd_chunk_sizes_close() {
    // 1 and 2 cells per chunk have no inner box; 3 and 5 have a small one.
    for n in [1u32, 2, 3, 5] {
        for coarse in (0..=255u8).step_by(7) {
            let shape = Shape::Noise {
                seed: coarse as u64 + 1000 * n as u64,
            };
            let topo = topology(&mesh_block(shape, n, 0, coarse));
            if topo.triangles == 0 {
                continue;
            }
            assert_closed(&topo, &format!("n {n} layout {coarse:#010b}"));
        }
    }
}

#[test]
fn torus_is_closed_at_higher_lods() {
    for coarse in [0b0000_0001u8, 0b0110_1001, 0b1111_1110, 0b1010_0101] {
        let shape = Shape::Torus {
            centre: [32.2, 31.7, 32.4],
            major: 17.0,
            minor: 7.4,
        };
        // Units of 2 * 4 * 2^2 = 16 base cells: LOD 2 next to LOD 3.
        let topo = topology(&mesh_block(shape, 4, 2, coarse));
        assert_closed(&topo, &format!("layout {coarse:#010b}"));
    }
}

#[test]
fn single_lod_matches_marching_cubes() {
    // Without finer neighbours the mesher is plain marching cubes: same
    // triangle and vertex counts as `MarchingCubes` on the same samples.
    let n = 8u32;
    let samples = chunk_samples(ball(), [4, 4, 4], n, 1, 64);
    let input = LodChunkInput::new(&samples, n, 0).with_base_node([4, 4, 4]);
    let mut out = CubesOutput::default();
    LodMesher::new()
        .mesh(&input, &CubesOptions::DEFAULT, &mut out)
        .unwrap();
    let mut reference = CubesOutput::default();
    let dims = [n + 1; 3];
    MarchingCubes::new()
        .mesh_slice(
            &samples,
            dims,
            CellBox::of_dims(dims),
            &CubesOptions::DEFAULT,
            &mut reference,
        )
        .unwrap();
    assert_eq!(out.triangle_count(), reference.triangle_count());
    assert_eq!(out.vertex_count(), reference.vertex_count());
    assert_eq!(out.normals.len(), out.positions.len());
    for nrm in &out.normals {
        let l = nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2];
        assert!((l - 1.0).abs() < 1e-4);
    }
}

#[test]
fn transition_faces_add_fine_vertices() {
    // A coarse chunk whose +x face borders a finer chunk gets vertices at the
    // fine resolution on that face.
    let n = 4u32;
    let shape = Shape::Ball {
        centre: [8.0, 4.2, 4.1],
        radius: 3.3,
        wave: 0.0,
    };
    let samples = chunk_samples(shape, [0; 3], n, 2, 64);
    let side = 2 * n as i64 + 1;
    let mut fine = Vec::new();
    for v in 0..side {
        for u in 0..side {
            fine.push(shape.value([8, u, v], 64));
        }
    }
    let plain = LodChunkInput::new(&samples, n, 1);
    assert_eq!(plain.transition_cell_count(), 0);
    let input = plain.with_finer_face(1, &fine);
    assert_eq!(input.transition_cell_count(), 16);
    let mut out = CubesOutput::default();
    let mut mesher = LodMesher::new();
    mesher
        .mesh(&input, &CubesOptions::DEFAULT, &mut out)
        .unwrap();
    let on_face = |o: &CubesOutput| o.positions.iter().filter(|p| p[0] == 8.0).count();
    let fine_count = on_face(&out);
    let mut coarse_out = CubesOutput::default();
    mesher
        .mesh(&plain, &CubesOptions::DEFAULT, &mut coarse_out)
        .unwrap();
    let odd = fine_count.saturating_sub(on_face(&coarse_out));
    assert!(odd > 0, "no vertex on the fine grid of the transition face");
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

#[test]
fn bad_input_is_rejected_and_leaves_output_alone() {
    let n = 2u32;
    let samples = vec![1.0f32; 27];
    let fine = vec![1.0f32; 25];
    let mut m = LodMesher::new();
    let mut out = CubesOutput::default();
    out.indices.push(7);
    let opts = CubesOptions::DEFAULT;
    let mut run = |input: &LodChunkInput<'_>, opts: &CubesOptions| m.mesh(input, opts, &mut out);

    let short = vec![1.0f32; 26];
    assert!(matches!(
        run(&LodChunkInput::new(&short, n, 1), &opts),
        Err(MeshError::LengthMismatch {
            name: "samples",
            expected: 27,
            got: 26
        })
    ));
    let mut nan = samples.clone();
    nan[5] = f32::NAN;
    assert!(matches!(
        run(&LodChunkInput::new(&nan, n, 1), &opts),
        Err(MeshError::NonFiniteSample {
            name: "samples",
            index: 5,
            ..
        })
    ));
    assert!(matches!(
        run(&LodChunkInput::new(&samples, 0, 1), &opts),
        Err(MeshError::InvalidParameter { name: "cells", .. })
    ));
    assert!(matches!(
        run(&LodChunkInput::new(&samples, n, 40), &opts),
        Err(MeshError::InvalidParameter { name: "lod", .. })
    ));
    assert!(matches!(
        run(
            &LodChunkInput::new(&samples, n, 0).with_finer_edge(3),
            &opts
        ),
        Err(MeshError::InvalidParameter { name: "lod", .. })
    ));
    assert!(matches!(
        run(
            &LodChunkInput::new(&samples, n, 1).with_finer_edge(3),
            &opts
        ),
        Err(MeshError::MissingFineSamples { .. })
    ));
    assert!(matches!(
        run(
            &LodChunkInput::new(&samples, n, 1).with_base_cell_size(f32::NAN),
            &opts
        ),
        Err(MeshError::InvalidParameter {
            name: "base_cell_size",
            ..
        })
    ));
    assert!(matches!(
        run(
            &LodChunkInput::new(&samples, n, 1),
            &opts.with_iso(f32::INFINITY)
        ),
        Err(MeshError::InvalidParameter { name: "iso", .. })
    ));
    let short_fine = vec![1.0f32; 24];
    assert!(matches!(
        run(
            &LodChunkInput::new(&samples, n, 1).with_finer_face(2, &short_fine),
            &opts
        ),
        Err(MeshError::LengthMismatch {
            name: "fine_faces",
            ..
        })
    ));
    let mut fine_nan = fine.clone();
    fine_nan[3] = f32::NEG_INFINITY;
    assert!(matches!(
        run(
            &LodChunkInput::new(&samples, n, 1).with_finer_face(2, &fine_nan),
            &opts
        ),
        Err(MeshError::NonFiniteSample {
            name: "fine_faces",
            index: 3,
            ..
        })
    ));
    let mut fine_off = fine.clone();
    fine_off[2] = 0.5;
    assert!(matches!(
        run(
            &LodChunkInput::new(&samples, n, 1).with_finer_face(4, &fine_off),
            &opts
        ),
        Err(MeshError::FineSampleMismatch { face: 4, index: 2 })
    ));
    assert_eq!(out.indices, vec![7], "output changed on error");
    // The valid version of the same input works.
    assert!(
        m.mesh(
            &LodChunkInput::new(&samples, n, 1).with_finer_face(4, &fine),
            &opts,
            &mut out
        )
        .is_ok()
    );
    assert!(out.indices.is_empty());
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

fn shape_strategy() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (
            7.0f32..9.0,
            7.0f32..9.0,
            7.0f32..9.0,
            2.0f32..5.5,
            0.0f32..0.8
        )
            .prop_map(|(x, y, z, radius, wave)| Shape::Ball {
                centre: [x, y, z],
                radius,
                wave
            }),
        (
            7.5f32..8.5,
            7.5f32..8.5,
            7.5f32..8.5,
            3.0f32..4.5,
            1.2f32..2.5
        )
            .prop_map(|(x, y, z, major, minor)| Shape::Torus {
                centre: [x, y, z],
                major,
                minor
            }),
        any::<u64>().prop_map(|seed| Shape::Noise { seed }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mixed_lods_stay_closed(shape in shape_strategy(), coarse in any::<u8>()) {
        let topo = topology(&mesh_block(shape, 4, 0, coarse));
        prop_assert_eq!(topo.boundary, 0);
        prop_assert_eq!(topo.overused, 0);
        prop_assert_eq!(topo.flipped, 0);
        prop_assert_eq!(topo.degenerate, 0);
        prop_assert!(topo.triangles == 0 || topo.volume6 > 0.0);
    }

    #[test]
    fn fine_and_coarse_normals_agree(shape in shape_strategy(), coarse in any::<u8>()) {
        // Every vertex on a face or edge shared by a coarse chunk and a finer
        // one is in both meshes with bit-identical position and normal.
        let (meshes, unit) = mesh_block_with_aprons(shape, 4, 0, coarse);
        check_shared_normals(&meshes, unit);
    }

    #[test]
    fn meshing_is_deterministic(shape in shape_strategy(), coarse in any::<u8>()) {
        let a = mesh_block(shape, 4, 1, coarse);
        let b = mesh_block(shape, 4, 1, coarse);
        prop_assert_eq!(a, b);
    }
}

// ---------------------------------------------------------------------------
// One chunk, welded by index
// ---------------------------------------------------------------------------

/// Undirected index edges used once, and directed index edges used twice or
/// more, in one chunk's mesh.
fn index_defects(out: &CubesOutput) -> (usize, usize, usize) {
    let mut directed: HashMap<(u32, u32), usize> = HashMap::new();
    let mut degenerate = 0;
    for t in out.indices.chunks_exact(3) {
        if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
            degenerate += 1;
        }
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    let open = directed
        .keys()
        .filter(|&&(a, b)| !directed.contains_key(&(b, a)))
        .count();
    let repeated = directed.values().filter(|&&c| c > 1).count();
    (open, repeated, degenerate)
}

/// A ball of squared radius `r2` around base node (8, 8, 8) in one chunk of 8
/// cells at LOD 1 whose six faces all border finer chunks.
fn ball_chunk(r2: f32) -> CubesOutput {
    let f = |g: [i64; 3]| {
        let d = g.map(|c| (c - 8) as f32);
        r2 - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    };
    let n = 8u32;
    let mut samples = Vec::new();
    for k in 0..=8i64 {
        for j in 0..=8i64 {
            for i in 0..=8i64 {
                samples.push(f([2 * i, 2 * j, 2 * k]));
            }
        }
    }
    let faces: Vec<Vec<f32>> = (0..6)
        .map(|face| {
            let axis = face / 2;
            let at = if face % 2 == 0 { 0 } else { 16 };
            let (a, b) = match axis {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            let mut out = Vec::new();
            for v in 0..17 {
                for u in 0..17 {
                    let mut g = [0i64; 3];
                    g[axis] = at;
                    g[a] = u;
                    g[b] = v;
                    out.push(f(g));
                }
            }
            out
        })
        .collect();
    let mut input = LodChunkInput::new(&samples, n, 1);
    for (face, fine) in faces.iter().enumerate() {
        input = input.with_finer_face(face as u8, fine);
    }
    let mut out = CubesOutput::default();
    LodMesher::new()
        .mesh(&input, &CubesOptions::DEFAULT, &mut out)
        .unwrap();
    out
}

#[test]
fn samples_exactly_at_iso_make_no_holes() {
    // 40 = 6^2 + 2^2 + 0^2: samples exactly at iso on the inner box's faces and
    // on the transition faces; 40.5 has none.
    for r2 in [40.0f32, 40.5, 36.0, 49.0] {
        let out = ball_chunk(r2);
        assert!(out.triangle_count() > 0, "r2 = {r2}");
        assert_eq!(index_defects(&out), (0, 0, 0), "r2 = {r2}");
    }
}

#[test]
fn steady_lod_loop_allocates_nothing() {
    // One coarse chunk's data, meshed with every face finer, with one finer
    // edge only, and with no finer neighbour, frame after frame.
    let f = |g: [i64; 3]| {
        let d = g.map(|c| c as f32 - 8.3);
        9.1 - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    };
    let samples: Vec<f32> = (0..729)
        .map(|i| f([2 * (i % 9), 2 * ((i / 9) % 9), 2 * (i / 81)]))
        .collect();
    let faces: Vec<Vec<f32>> = (0..6)
        .map(|face| {
            let axis = face / 2;
            let (a, b) = match axis {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            (0..289)
                .map(|i| {
                    let mut g = [0i64; 3];
                    g[axis] = if face % 2 == 0 { 0 } else { 16 };
                    g[a] = i % 17;
                    g[b] = i / 17;
                    f(g)
                })
                .collect()
        })
        .collect();
    let mut all = LodChunkInput::new(&samples, 8, 1);
    for (face, fine) in faces.iter().enumerate() {
        all = all.with_finer_face(face as u8, fine);
    }
    let edge = LodChunkInput::new(&samples, 8, 1)
        .with_fine_face_samples(1, &faces[1])
        .with_finer_edge(11);
    let plain = LodChunkInput::new(&samples, 8, 1);
    let inputs = [all, edge, plain];
    let mut mesher = LodMesher::new();
    let mut outs = vec![CubesOutput::default(); inputs.len()];
    let opts = CubesOptions::DEFAULT;
    let mut frame = |outs: &mut [CubesOutput]| {
        for (input, out) in inputs.iter().zip(outs.iter_mut()) {
            mesher.mesh(input, &opts, out).unwrap();
        }
    };
    frame(&mut outs);
    let before = allocs();
    for _ in 0..3 {
        frame(&mut outs);
    }
    assert_eq!(allocs() - before, 0, "a warmed-up LOD chunk loop allocated");
    assert!(outs.iter().all(|o| o.triangle_count() > 0));
    assert!(outs[0].vertex_count() > outs[2].vertex_count());
}

// ---------------------------------------------------------------------------
// Gradient normals with aprons, and materials
// ---------------------------------------------------------------------------

/// The `(n + 3)^3` apron samples of a chunk: nodes `-1..=n + 1` per axis.
fn chunk_apron(shape: Shape, origin: [i64; 3], n: u32, step: i64, size: i64) -> Vec<f32> {
    let o = origin.map(|c| c - step);
    chunk_samples(shape, o, n + 2, step, size)
}

/// The `(2n + 1)^2` fine samples of face `f` of a chunk at `origin`.
fn face_samples(shape: Shape, origin: [i64; 3], n: u32, step: i64, f: usize) -> Vec<f32> {
    let axis = f / 2;
    let (a, b) = match axis {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let side = 2 * n as i64 + 1;
    let mut out = Vec::new();
    for v in 0..side {
        for u in 0..side {
            let mut g = origin;
            g[axis] += if f.is_multiple_of(2) {
                0
            } else {
                n as i64 * step
            };
            g[a] += u * step / 2;
            g[b] += v * step / 2;
            out.push(shape.value(g, 1 << 20));
        }
    }
    out
}

fn plain_ball(centre: [f32; 3], radius: f32) -> Shape {
    Shape::Ball {
        centre,
        radius,
        wave: 0.0,
    }
}

fn material_of(g: [i64; 3]) -> u8 {
    (hash(5, g) % 251) as u8
}

fn chunk_materials(origin: [i64; 3], n: u32, step: i64) -> Vec<u8> {
    let s = n as i64 + 1;
    let mut out = Vec::new();
    for k in 0..s {
        for j in 0..s {
            for i in 0..s {
                out.push(material_of([
                    origin[0] + i * step,
                    origin[1] + j * step,
                    origin[2] + k * step,
                ]));
            }
        }
    }
    out
}

#[test]
fn same_lod_neighbours_share_normals_with_aprons() {
    // Two chunks at LOD 1 side by side along each axis; the second one also
    // has a finer neighbour on its far face, so its vertices on the shared face
    // come from the transition path while the first one's come from the scan.
    let n = 8u32;
    let step = 2i64;
    let width = n as i64 * step;
    for axis in 0..3 {
        let mut centre = [8.3f32, 8.6, 8.1];
        centre[axis] = width as f32 + 0.4;
        let shape = Shape::Ball {
            centre,
            radius: 6.7,
            wave: 0.5,
        };
        let a_org = [0i64; 3];
        let mut b_org = [0i64; 3];
        b_org[axis] = width;
        let (sa, sb) = (
            chunk_samples(shape, a_org, n, step, 1 << 20),
            chunk_samples(shape, b_org, n, step, 1 << 20),
        );
        let (pa, pb) = (
            chunk_apron(shape, a_org, n, step, 1 << 20),
            chunk_apron(shape, b_org, n, step, 1 << 20),
        );
        let far = 2 * axis + 1;
        let fine = face_samples(shape, b_org, n, step, far);
        let a = LodChunkInput::new(&sa, n, 1)
            .with_base_node(a_org)
            .with_apron(&pa);
        let b = LodChunkInput::new(&sb, n, 1)
            .with_base_node(b_org)
            .with_apron(&pb)
            .with_finer_face(far as u8, &fine);
        let mut mesher = LodMesher::new();
        let (mut oa, mut ob) = (CubesOutput::default(), CubesOutput::default());
        mesher.mesh(&a, &CubesOptions::DEFAULT, &mut oa).unwrap();
        mesher.mesh(&b, &CubesOptions::DEFAULT, &mut ob).unwrap();
        let key = |p: [f32; 3]| p.map(f32::to_bits);
        let normals_b: HashMap<[u32; 3], [f32; 3]> = ob
            .positions
            .iter()
            .zip(&ob.normals)
            .map(|(p, m)| (key(*p), *m))
            .collect();
        let mut shared = 0;
        for (p, m) in oa.positions.iter().zip(&oa.normals) {
            if p[axis] != width as f32 {
                continue;
            }
            let other = normals_b[&key(*p)];
            assert_eq!(
                m.map(f32::to_bits),
                other.map(f32::to_bits),
                "axis {axis}: normal at {p:?}"
            );
            shared += 1;
        }
        assert!(shared > 8, "axis {axis}: only {shared} shared vertices");
    }
}

#[test]
fn gradient_normals_point_outward_on_a_sphere() {
    let n = 8u32;
    let centre = [8.3f32, 7.7, 8.6];
    let shape = plain_ball(centre, 6.2);
    let samples = chunk_samples(shape, [0; 3], n, 2, 1 << 20);
    let apron = chunk_apron(shape, [0; 3], n, 2, 1 << 20);
    let faces: Vec<Vec<f32>> = (0..6)
        .map(|f| face_samples(shape, [0; 3], n, 2, f))
        .collect();
    let plain = LodChunkInput::new(&samples, n, 1);
    let mut refined = LodChunkInput::new(&samples, n, 1).with_apron(&apron);
    for (f, fine) in faces.iter().enumerate() {
        refined = refined.with_finer_face(f as u8, fine);
    }
    let inputs = [plain, plain.with_apron(&apron), refined];
    let mut mesher = LodMesher::new();
    for (i, input) in inputs.iter().enumerate() {
        let mut out = CubesOutput::default();
        mesher
            .mesh(input, &CubesOptions::DEFAULT, &mut out)
            .unwrap();
        assert!(out.triangle_count() > 50);
        assert_eq!(out.normals.len(), out.positions.len());
        for (p, m) in out.positions.iter().zip(&out.normals) {
            let l = (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt();
            assert!((l - 1.0).abs() < 1e-5, "input {i}: |n| = {l}");
            let d = [0, 1, 2].map(|q| p[q] - centre[q]);
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            let dot = (d[0] * m[0] + d[1] * m[1] + d[2] * m[2]) / r;
            assert!(dot > 0.9, "input {i}: normal {m:?} at {p:?}, dot {dot}");
        }
    }
}

#[test]
fn materials_come_from_the_solid_endpoint() {
    let n = 8u32;
    let step = 2i64;
    let origin = [-4i64, 2, 6];
    let shape = Shape::Ball {
        centre: [5.3, 9.7, 14.6],
        radius: 6.4,
        wave: 0.7,
    };
    let samples = chunk_samples(shape, origin, n, step, 1 << 20);
    let mats = chunk_materials(origin, n, step);
    let input = LodChunkInput::new(&samples, n, 1)
        .with_base_node(origin)
        .with_materials(&mats);
    let mut mesher = LodMesher::new();
    for normals in [true, false] {
        let opts = CubesOptions::DEFAULT.with_normals(normals);
        let mut out = CubesOutput::default();
        mesher.mesh(&input, &opts, &mut out).unwrap();
        assert_eq!(out.materials.len(), out.positions.len());
        assert_eq!(
            out.normals.len(),
            if normals { out.positions.len() } else { 0 }
        );
        let mut checked = 0;
        for (p, &m) in out.positions.iter().zip(&out.materials) {
            let local = [0, 1, 2].map(|q| (p[q] - origin[q] as f32) / step as f32);
            let frac: Vec<usize> = (0..3).filter(|&q| local[q].fract() != 0.0).collect();
            if frac.len() != 1 {
                continue;
            }
            let axis = frac[0];
            let a = local.map(|c| c.floor() as i64);
            let mut b = a;
            b[axis] += 1;
            let node = |l: [i64; 3]| [0, 1, 2].map(|q| origin[q] + l[q] * step);
            let solid = if shape.value(node(a), 1 << 20) >= 0.0 {
                a
            } else {
                b
            };
            assert_eq!(m, material_of(node(solid)), "vertex at {p:?}");
            checked += 1;
        }
        assert!(checked > 50);
    }
    // With transitions every vertex still gets a material of the chunk.
    let fine = face_samples(shape, origin, n, step, 1);
    let refined = input.with_finer_face(1, &fine);
    let mut out = CubesOutput::default();
    mesher
        .mesh(&refined, &CubesOptions::DEFAULT, &mut out)
        .unwrap();
    assert_eq!(out.materials.len(), out.positions.len());
    assert!(out.materials.iter().all(|m| mats.contains(m)));
}

#[test]
fn bad_apron_and_materials_are_rejected() {
    let n = 4u32;
    let shape = ball();
    let samples = chunk_samples(shape, [0; 3], n, 1, 64);
    let apron = chunk_apron(shape, [0; 3], n, 1, 64);
    let mats = chunk_materials([0; 3], n, 1);
    let mut mesher = LodMesher::new();
    let mut out = CubesOutput::default();
    out.positions.push([9.0; 3]);
    let short = &apron[1..];
    let bad = [
        LodChunkInput::new(&samples, n, 0).with_apron(short),
        LodChunkInput::new(&samples, n, 0).with_materials(&mats[1..]),
    ];
    for input in bad {
        let err = mesher.mesh(&input, &CubesOptions::DEFAULT, &mut out);
        assert!(
            matches!(err, Err(MeshError::LengthMismatch { .. })),
            "{err:?}"
        );
    }
    let mut nan = apron.clone();
    nan[0] = f32::NAN;
    let err = mesher.mesh(
        &LodChunkInput::new(&samples, n, 0).with_apron(&nan),
        &CubesOptions::DEFAULT,
        &mut out,
    );
    assert!(
        matches!(err, Err(MeshError::NonFiniteSample { .. })),
        "{err:?}"
    );
    let mut off = apron.clone();
    let a = n as usize + 3;
    off[(2 * a + 2) * a + 2] += 1.0;
    let err = mesher.mesh(
        &LodChunkInput::new(&samples, n, 0).with_apron(&off),
        &CubesOptions::DEFAULT,
        &mut out,
    );
    assert!(
        matches!(err, Err(MeshError::InvalidParameter { .. })),
        "{err:?}"
    );
    assert_eq!(out.positions, vec![[9.0; 3]], "output left alone");
    // The apron's outer ring is free: any finite values are accepted.
    let mut ring = apron.clone();
    ring[0] = 123.0;
    mesher
        .mesh(
            &LodChunkInput::new(&samples, n, 0)
                .with_apron(&ring)
                .with_materials(&mats),
            &CubesOptions::DEFAULT,
            &mut out,
        )
        .unwrap();
    assert_eq!(out.materials.len(), out.positions.len());
}

#[test]
fn edge_normals_match_marching_cubes() {
    // A LOD 0 chunk without apron and the regular mesher over the same slice
    // (one-sided differences on its first and last nodes in both) give the
    // same normal, bit for bit, to every vertex on a grid edge.
    let n = 8u32;
    let samples = chunk_samples(ball(), [4, 4, 4], n, 1, 64);
    let input = LodChunkInput::new(&samples, n, 0);
    let mut out = CubesOutput::default();
    LodMesher::new()
        .mesh(&input, &CubesOptions::DEFAULT, &mut out)
        .unwrap();
    let mut reference = CubesOutput::default();
    let dims = [n + 1; 3];
    MarchingCubes::new()
        .mesh_slice(
            &samples,
            dims,
            CellBox::of_dims(dims),
            &CubesOptions::DEFAULT,
            &mut reference,
        )
        .unwrap();
    assert_eq!(out.positions, reference.positions);
    let mut checked = 0;
    for ((p, a), b) in out
        .positions
        .iter()
        .zip(&out.normals)
        .zip(&reference.normals)
    {
        if p.iter().filter(|c| c.fract() != 0.0).count() == 1 {
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "at {p:?}");
            checked += 1;
        }
    }
    assert!(checked > 50);
}

// ---------------------------------------------------------------------------
// Normals across LOD transitions
// ---------------------------------------------------------------------------

/// The fine apron of face `f` of a chunk at `origin` with `n` cells at
/// spacing `step`: the nodes at spacing `step / 2` of the box one fine step
/// around the face (3 thick across it, `2n + 3` wide along it), x fastest.
fn fine_apron(shape: Shape, origin: [i64; 3], n: u32, step: i64, f: usize, size: i64) -> Vec<f32> {
    let axis = f / 2;
    let half = step / 2;
    let mut lo = origin.map(|c| c - half);
    if f % 2 == 1 {
        lo[axis] += n as i64 * step;
    }
    let mut dims = [2 * n as i64 + 3; 3];
    dims[axis] = 3;
    let mut out = Vec::new();
    for k in 0..dims[2] {
        for j in 0..dims[1] {
            for i in 0..dims[0] {
                let g = [lo[0] + i * half, lo[1] + j * half, lo[2] + k * half];
                out.push(shape.value(g, size));
            }
        }
    }
    out
}

/// One chunk's mesh in a block: its unit, whether the unit is coarse.
struct BlockMesh {
    unit: [i64; 3],
    coarse: bool,
    mesh: CubesOutput,
}

/// Like [`mesh_block`], with aprons on every chunk and fine aprons on every
/// face of a coarse chunk that has fine samples, so normals are comparable.
fn mesh_block_with_aprons(shape: Shape, n: u32, base: u8, coarse: u8) -> (Vec<BlockMesh>, i64) {
    let fine_cells = n as i64 * (1 << base);
    let unit = 2 * fine_cells;
    let size = 2 * unit;
    let is_coarse = |u: [i64; 3]| -> Option<bool> {
        if u.iter().any(|&c| !(0..2).contains(&c)) {
            return None;
        }
        Some(coarse & (1 << (u[0] + 2 * u[1] + 4 * u[2])) != 0)
    };
    let mut mesher = LodMesher::new();
    let opts = CubesOptions::DEFAULT;
    let mut meshes = Vec::new();
    for uz in 0..2 {
        for uy in 0..2 {
            for ux in 0..2 {
                let u = [ux, uy, uz];
                let origin = u.map(|c| c * unit);
                if is_coarse(u) == Some(true) {
                    let lod = base + 1;
                    let step = 1i64 << lod;
                    let samples = chunk_samples(shape, origin, n, step, size);
                    let apron = chunk_apron(shape, origin, n, step, size);
                    let faces: Vec<Vec<f32>> = (0..6)
                        .map(|f| {
                            let face = fine_apron(shape, origin, n, step, f, size);
                            // The face itself is the middle layer of its apron.
                            let axis = f / 2;
                            let side = 2 * n as usize + 1;
                            let mut dims = [side + 2; 3];
                            dims[axis] = 3;
                            let mut out = Vec::new();
                            let (a, b) = match axis {
                                0 => (1, 2),
                                1 => (0, 2),
                                _ => (0, 1),
                            };
                            for v in 0..side {
                                for w in 0..side {
                                    let mut g = [0usize; 3];
                                    g[axis] = 1;
                                    g[a] = w + 1;
                                    g[b] = v + 1;
                                    out.push(face[(g[2] * dims[1] + g[1]) * dims[0] + g[0]]);
                                }
                            }
                            out
                        })
                        .collect();
                    let rings: Vec<Vec<f32>> = (0..6)
                        .map(|f| fine_apron(shape, origin, n, step, f, size))
                        .collect();
                    let mut input = LodChunkInput::new(&samples, n, lod)
                        .with_base_node(origin)
                        .with_apron(&apron);
                    for f in 0..6 {
                        let axis = f / 2;
                        let mut nb = u;
                        nb[axis] += if f % 2 == 0 { -1 } else { 1 };
                        input = if is_coarse(nb) == Some(false) {
                            input.with_finer_face(f as u8, &faces[f])
                        } else {
                            input.with_fine_face_samples(f as u8, &faces[f])
                        };
                        input = input.with_fine_apron(f as u8, &rings[f]);
                    }
                    for e in 0..12u8 {
                        let axis = (e / 4) as usize;
                        let others: Vec<usize> = (0..3).filter(|&b| b != axis).collect();
                        let r = e % 4;
                        let mut nb = u;
                        nb[others[0]] += if r & 1 == 0 { -1 } else { 1 };
                        nb[others[1]] += if r >> 1 == 0 { -1 } else { 1 };
                        if is_coarse(nb) == Some(false) {
                            input = input.with_finer_edge(e);
                        }
                    }
                    let mut mesh = CubesOutput::default();
                    mesher.mesh(&input, &opts, &mut mesh).unwrap();
                    meshes.push(BlockMesh {
                        unit: u,
                        coarse: true,
                        mesh,
                    });
                } else {
                    for o in 0..8i64 {
                        let off = [o & 1, (o >> 1) & 1, o >> 2];
                        let origin = [0, 1, 2].map(|a| origin[a] + off[a] * fine_cells);
                        let step = 1i64 << base;
                        let samples = chunk_samples(shape, origin, n, step, size);
                        let apron = chunk_apron(shape, origin, n, step, size);
                        let input = LodChunkInput::new(&samples, n, base)
                            .with_base_node(origin)
                            .with_apron(&apron);
                        let mut mesh = CubesOutput::default();
                        mesher.mesh(&input, &opts, &mut mesh).unwrap();
                        meshes.push(BlockMesh {
                            unit: u,
                            coarse: false,
                            mesh,
                        });
                    }
                }
            }
        }
    }
    (meshes, unit)
}

type Bits3 = [u32; 3];

/// The vertices of `meshes` inside the closed box `lo..=hi`, by position
/// bits: their normals' bits (which must agree where a position repeats), and
/// whether one of their triangles leaves the box.
fn vertices_in(
    meshes: &[&CubesOutput],
    lo: [f32; 3],
    hi: [f32; 3],
) -> HashMap<Bits3, (Bits3, bool)> {
    let inside = |p: &[f32; 3]| (0..3).all(|q| lo[q] <= p[q] && p[q] <= hi[q]);
    let mut out: HashMap<Bits3, (Bits3, bool)> = HashMap::new();
    for m in meshes {
        let mut leaves = vec![false; m.positions.len()];
        for t in m.indices.chunks_exact(3) {
            if !t.iter().all(|&i| inside(&m.positions[i as usize])) {
                for &i in t {
                    leaves[i as usize] = true;
                }
            }
        }
        for (i, (p, nrm)) in m.positions.iter().zip(&m.normals).enumerate() {
            if inside(p) {
                let key = p.map(f32::to_bits);
                let val = nrm.map(f32::to_bits);
                let e = out.entry(key).or_insert((val, false));
                assert_eq!(e.0, val, "one position, two normals at {p:?}");
                e.1 |= leaves[i];
            }
        }
    }
    out
}

/// For every coarse unit and every fine unit it touches by a face or an
/// edge, on the shared face or edge: every vertex of the fine meshes is in
/// the coarse mesh with the same position and normal, bit for bit; and every
/// other vertex of the coarse mesh there is the centre of a loop lying flat
/// on the face (all its triangles stay on the face; the fine side closes that
/// spot with its own cells). Returns the number of vertices compared.
fn check_shared_normals(meshes: &[BlockMesh], unit: i64) -> usize {
    let mut compared = 0;
    let units: Vec<[i64; 3]> = (0..8).map(|u| [u & 1, (u >> 1) & 1, u >> 2]).collect();
    for &cu in &units {
        let coarse: Vec<&CubesOutput> = meshes
            .iter()
            .filter(|m| m.unit == cu && m.coarse)
            .map(|m| &m.mesh)
            .collect();
        if coarse.is_empty() {
            continue;
        }
        for &fu in &units {
            let fine: Vec<&CubesOutput> = meshes
                .iter()
                .filter(|m| m.unit == fu && !m.coarse)
                .map(|m| &m.mesh)
                .collect();
            let apart = (0..3).filter(|&q| cu[q] != fu[q]).count();
            if fine.is_empty() || !(1..=2).contains(&apart) {
                continue;
            }
            // The shared face or edge: the intersection of the two boxes.
            let lo = [0, 1, 2].map(|q| (cu[q].max(fu[q]) * unit) as f32);
            let hi = [0, 1, 2].map(|q| ((cu[q].min(fu[q]) + 1) * unit) as f32);
            let a = vertices_in(&coarse, lo, hi);
            let b = vertices_in(&fine, lo, hi);
            for (p, (m, _)) in &b {
                let at = p.map(f32::from_bits);
                let Some((mc, _)) = a.get(p) else {
                    panic!("units {cu:?} / {fu:?}: fine vertex {at:?} not in the coarse mesh");
                };
                assert_eq!(m, mc, "units {cu:?} / {fu:?}: normal at {at:?}");
                compared += 1;
            }
            for (p, (_, leaves)) in &a {
                assert!(
                    b.contains_key(p) || !leaves,
                    "units {cu:?} / {fu:?}: coarse vertex {:?} not in the fine meshes",
                    p.map(f32::from_bits)
                );
            }
        }
    }
    compared
}

#[test]
fn fine_and_coarse_chunks_share_normals_with_fine_aprons() {
    let mut total = 0;
    for coarse in [
        0b0000_0001u8,
        0b0110_1001,
        0b1111_1110,
        0b1010_0101,
        0b0011_1100,
    ] {
        let (meshes, unit) = mesh_block_with_aprons(ball(), 4, 0, coarse);
        total += check_shared_normals(&meshes, unit);
        let topo = topology(&meshes.into_iter().map(|m| m.mesh).collect::<Vec<_>>());
        assert_closed(&topo, &format!("layout {coarse:#010b}"));
    }
    assert!(total > 100, "only {total} shared vertices compared");
}

#[test]
fn bad_fine_aprons_are_rejected() {
    let n = 4u32;
    let shape = ball();
    let samples = chunk_samples(shape, [0; 3], n, 2, 1 << 20);
    let face = face_samples(shape, [0; 3], n, 2, 1);
    let ring = fine_apron(shape, [0; 3], n, 2, 1, 1 << 20);
    let mut mesher = LodMesher::new();
    let mut out = CubesOutput::default();
    let base = LodChunkInput::new(&samples, n, 1).with_finer_face(1, &face);
    mesher
        .mesh(
            &base.with_fine_apron(1, &ring),
            &CubesOptions::DEFAULT,
            &mut out,
        )
        .unwrap();
    out.positions.push([9.0; 3]);
    let before = out.clone();
    let err = mesher.mesh(
        &base.with_fine_apron(1, &ring[1..]),
        &CubesOptions::DEFAULT,
        &mut out,
    );
    assert!(
        matches!(
            err,
            Err(MeshError::LengthMismatch {
                name: "fine_aprons",
                ..
            })
        ),
        "{err:?}"
    );
    let mut nan = ring.clone();
    nan[0] = f32::NAN;
    let err = mesher.mesh(
        &base.with_fine_apron(1, &nan),
        &CubesOptions::DEFAULT,
        &mut out,
    );
    assert!(
        matches!(
            err,
            Err(MeshError::NonFiniteSample {
                name: "fine_aprons",
                ..
            })
        ),
        "{err:?}"
    );
    // A value on the face itself must match the fine face samples.
    let wide = 2 * n as usize + 3;
    let mut off = ring.clone();
    off[(4 * wide + 4) * 3 + 1] += 1.0;
    let err = mesher.mesh(
        &base.with_fine_apron(1, &off),
        &CubesOptions::DEFAULT,
        &mut out,
    );
    assert!(
        matches!(err, Err(MeshError::InvalidParameter { .. })),
        "{err:?}"
    );
    assert_eq!(out, before, "output left alone");
    // The ring and the two layers off the face are free.
    let mut free = ring.clone();
    free[0] = 42.0;
    free[wide * 3 + 1] += 0.5;
    mesher
        .mesh(
            &base.with_fine_apron(1, &free),
            &CubesOptions::DEFAULT,
            &mut out,
        )
        .unwrap();
    // A face index outside 0..6 is ignored.
    assert!(
        base.with_fine_apron(6, &ring)
            .fine_aprons
            .iter()
            .all(Option::is_none)
    );
}
