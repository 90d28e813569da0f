//! Parallel marching cubes: the same bytes as one thread at any thread count,
//! welded across the slab seams, closed where the single-thread mesh is.
#![cfg(feature = "parallel")]

use std::collections::HashMap;

use isoterra_field::Field3;
use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};
use proptest::prelude::*;

/// Meshes on a pool of `threads` threads with a parallel mesher.
fn mesh_on(
    threads: usize,
    field: &Field3,
    materials: Option<&[u8]>,
    cells: CellBox,
    opts: &CubesOptions,
    out: &mut CubesOutput,
) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut mesher = MarchingCubes::new().with_parallel(true);
        match materials {
            Some(m) => mesher.mesh_with_materials(field, m, cells, opts, out),
            None => mesher.mesh(field, cells, opts, out),
        }
        .unwrap()
    });
}

/// The single-thread reference, into a reused (warm) buffer so that it takes
/// the push path, not the counted one.
fn reference(
    field: &Field3,
    materials: Option<&[u8]>,
    cells: CellBox,
    opts: &CubesOptions,
) -> CubesOutput {
    let mut out = CubesOutput::default();
    out.positions.reserve(1);
    let mut mesher = MarchingCubes::new();
    match materials {
        Some(m) => mesher.mesh_with_materials(field, m, cells, opts, &mut out),
        None => mesher.mesh(field, cells, opts, &mut out),
    }
    .unwrap();
    out
}

/// Bitwise equality of two meshes (so that `-0.0` and `0.0`, or two NaNs,
/// are told apart and matched exactly).
fn same_bits(a: &CubesOutput, b: &CubesOutput) -> bool {
    let bits =
        |v: &[[f32; 3]]| -> Vec<[u32; 3]> { v.iter().map(|p| p.map(f32::to_bits)).collect() };
    bits(&a.positions) == bits(&b.positions)
        && bits(&a.normals) == bits(&b.normals)
        && a.materials == b.materials
        && a.indices == b.indices
}

/// Undirected edges used once (cracks), more than twice, or twice the same way.
fn topology_faults(out: &CubesOutput) -> (usize, usize, usize) {
    let mut directed: HashMap<(u32, u32), usize> = HashMap::new();
    for t in out.indices.chunks_exact(3) {
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
        }
    }
    let (mut boundary, mut over, mut misoriented) = (0, 0, 0);
    for (&(a, b), &n) in &directed {
        if a > b && directed.contains_key(&(b, a)) {
            continue;
        }
        let back = directed.get(&(b, a)).copied().unwrap_or(0);
        match n + back {
            1 => boundary += 1,
            2 if n != 1 => misoriented += 1,
            2 => {}
            _ => over += 1,
        }
    }
    (boundary, over, misoriented)
}

/// A node value: many exactly at the iso level 0, some at +-1, some random.
fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => Just(0.0f32),
        2 => Just(-1.0f32),
        2 => Just(1.0f32),
        3 => -2.0f32..2.0,
    ]
}

/// A random field of 2..=max nodes per axis (z up to `max_z`).
fn field(max: u32, max_z: u32) -> impl Strategy<Value = Field3> {
    (2..=max, 2..=max, 2..=max_z)
        .prop_flat_map(|(w, h, d)| {
            (
                Just([w, h, d]),
                proptest::collection::vec(value(), (w * h * d) as usize),
                prop_oneof![Just(1.0f32), 0.1f32..3.0],
            )
        })
        .prop_map(|(d, v, cs)| {
            Field3::from_values(d[0], d[1], d[2], v)
                .unwrap()
                .with_cell_size(cs)
                .unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_thread_count_gives_the_single_thread_bytes(
        f in field(9, 40),
        iso in prop_oneof![Just(0.0f32), -0.5f32..0.5],
        normals in any::<bool>(),
        apron in any::<bool>(),
        border in any::<bool>(),
    ) {
        let mut f = f;
        if border {
            f.clear_border(-3.0).unwrap();
        }
        let opts = CubesOptions::DEFAULT
            .with_iso(iso)
            .with_normals(normals)
            .with_normals_apron(apron);
        let ids: Vec<u8> = (0..f.values().len()).map(|i| (i * 7 % 5) as u8).collect();
        let whole = CellBox::whole(&f);
        for materials in [None, Some(&ids[..])] {
            let want = reference(&f, materials, whole, &opts);
            for threads in [1, 2, 3, 7] {
                // A fresh output and a reused one with stale content.
                let mut fresh = CubesOutput::default();
                mesh_on(threads, &f, materials, whole, &opts, &mut fresh);
                prop_assert!(same_bits(&fresh, &want), "{} threads, fresh output", threads);
                let mut reused = want.clone();
                reused.positions.push([9.0; 3]);
                reused.indices.extend([0, 0, 0]);
                mesh_on(threads, &f, materials, whole, &opts, &mut reused);
                prop_assert!(same_bits(&reused, &want), "{} threads, reused output", threads);
            }
            if border {
                prop_assert_eq!(topology_faults(&want), (0, 0, 0));
            } else {
                let (_, over, misoriented) = topology_faults(&want);
                prop_assert_eq!((over, misoriented), (0, 0));
            }
        }
    }

    #[test]
    fn boxes_inside_the_field_mesh_alike_on_threads(
        f in field(8, 24),
        a in (0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0),
        b in (0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0),
        apron in any::<bool>(),
    ) {
        let dims = f.dims();
        let pick = |fa: f32, fb: f32, n: u32| {
            let (p, q) = ((fa * (n - 1) as f32) as u32, (fb * (n - 1) as f32) as u32);
            (p.min(q), p.max(q))
        };
        let (x0, x1) = pick(a.0, b.0, dims[0]);
        let (y0, y1) = pick(a.1, b.1, dims[1]);
        let (z0, z1) = pick(a.2, b.2, dims[2]);
        let cells = CellBox::new(x0, y0, z0, x1, y1, z1);
        let opts = CubesOptions::DEFAULT.with_normals_apron(apron);
        let want = reference(&f, None, cells, &opts);
        for threads in [2, 3, 7] {
            let mut out = CubesOutput::default();
            mesh_on(threads, &f, None, cells, &opts, &mut out);
            prop_assert!(same_bits(&out, &want), "{} threads", threads);
        }
    }
}

/// A sparse field: one or two noisy balls in a box of up to 40 x 40 x 48
/// nodes, so that the parallel mesher copies its slabs into place (a small
/// output next to the field) rather than counting them first.
fn sparse_field() -> impl Strategy<Value = Field3> {
    (
        (16u32..=40, 16u32..=40, 16u32..=48),
        proptest::collection::vec((0.2f32..0.8, 0.2f32..0.8, 0.2f32..0.8, 2.0f32..7.0), 1..=2),
        0.0f32..0.6,
        any::<u32>(),
    )
        .prop_map(|((w, h, d), balls, noise, seed)| {
            Field3::from_fn(w, h, d, |x, y, z| {
                let p = [x as f32, y as f32, z as f32];
                let dist = balls
                    .iter()
                    .map(|&(cx, cy, cz, r)| {
                        let c = [cx * w as f32, cy * h as f32, cz * d as f32];
                        let q = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
                        (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt() - r
                    })
                    .fold(f32::INFINITY, f32::min);
                let h = (x.wrapping_mul(73_856_093) ^ y.wrapping_mul(19_349_663))
                    ^ z.wrapping_mul(83_492_791)
                    ^ seed;
                let wobble = (h % 1000) as f32 / 1000.0 - 0.5;
                let v = -(dist + noise * wobble);
                // Some nodes exactly on the level, as real fields have.
                if h % 11 == 0 { v.round() } else { v }
            })
            .unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sparse_fields_copied_into_place_give_the_single_thread_bytes(
        f in sparse_field(),
        normals in any::<bool>(),
        apron in any::<bool>(),
        cut in (0.0f32..0.4, 0.6f32..1.0),
    ) {
        let opts = CubesOptions::DEFAULT
            .with_normals(normals)
            .with_normals_apron(apron);
        let ids: Vec<u8> = (0..f.values().len()).map(|i| (i * 3 % 7) as u8).collect();
        let whole = CellBox::whole(&f);
        // The whole field, and a box inside it (cut on every axis).
        let [w, h, d] = f.dims().map(|n| (n - 1) as f32);
        let part = CellBox::new(
            (cut.0 * w) as u32,
            (cut.0 * h) as u32,
            (cut.0 * d) as u32,
            (cut.1 * w) as u32,
            (cut.1 * h) as u32,
            (cut.1 * d) as u32,
        );
        for (materials, cells) in [(None, whole), (Some(&ids[..]), whole), (None, part)] {
            let want = reference(&f, materials, cells, &opts);
            for threads in [2, 3, 7] {
                let mut fresh = CubesOutput::default();
                mesh_on(threads, &f, materials, cells, &opts, &mut fresh);
                prop_assert!(same_bits(&fresh, &want), "{} threads", threads);
                prop_assert_eq!(fresh.indices.capacity(), fresh.indices.len());
                let mut reused = want.clone();
                reused.positions.push([9.0; 3]);
                mesh_on(threads, &f, materials, cells, &opts, &mut reused);
                prop_assert!(same_bits(&reused, &want), "{} threads, reused", threads);
            }
        }
    }
}

#[test]
fn a_large_gyroid_is_the_same_on_two_threads_and_closed() {
    let n = 96;
    let f = Field3::from_fn(n, n, n, |x, y, z| {
        if [x, y, z].iter().any(|&c| c == 0 || c == n - 1) {
            return -1.0;
        }
        let [x, y, z] = [x, y, z].map(|c| c as f32 * 0.37);
        x.sin() * y.cos() + y.sin() * z.cos() + z.sin() * x.cos()
    })
    .unwrap();
    let want = reference(&f, None, CellBox::whole(&f), &CubesOptions::DEFAULT);
    assert!(want.triangle_count() > 100_000);
    assert_eq!(topology_faults(&want), (0, 0, 0));
    for threads in [2, 5] {
        let mut out = CubesOutput::default();
        mesh_on(
            threads,
            &f,
            None,
            CellBox::whole(&f),
            &CubesOptions::DEFAULT,
            &mut out,
        );
        assert!(same_bits(&out, &want), "{threads} threads");
        assert_eq!(out.positions.capacity(), out.positions.len());
        assert_eq!(out.indices.capacity(), out.indices.len());
    }
}

#[test]
fn a_one_shot_call_keeps_no_spare_room() {
    // 69^3 cells: large enough to be sized before the scan.
    let f = Field3::from_fn(70, 70, 70, |x, y, z| {
        let d = [x, y, z].map(|c| c as f32 - 34.5);
        25.0 - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    })
    .unwrap();
    let mut out = CubesOutput::default();
    MarchingCubes::new()
        .mesh(&f, CellBox::whole(&f), &CubesOptions::DEFAULT, &mut out)
        .unwrap();
    assert_eq!(out.positions.capacity(), out.positions.len());
    assert_eq!(out.normals.capacity(), out.normals.len());
    assert_eq!(out.indices.capacity(), out.indices.len());
    assert!(same_bits(
        &out,
        &reference(&f, None, CellBox::whole(&f), &CubesOptions::DEFAULT)
    ));
}
