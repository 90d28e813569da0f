//! Marching cubes: every case, welding, watertightness, orientation, seams,
//! normals, materials, validation.

use std::collections::{HashMap, HashSet};

use isoterra_field::Field3;
use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes, MeshError};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn mesh_field(field: &Field3, cells: CellBox, opts: &CubesOptions) -> CubesOutput {
    let mut out = CubesOutput::default();
    MarchingCubes::new()
        .mesh(field, cells, opts, &mut out)
        .unwrap();
    out
}

fn mesh_whole(field: &Field3) -> CubesOutput {
    mesh_field(field, CellBox::whole(field), &CubesOptions::DEFAULT)
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// Topology of a triangle list.
#[derive(Debug, Default, PartialEq, Eq)]
struct Topo {
    /// Undirected edges used by exactly one triangle.
    boundary: usize,
    /// Undirected edges used by more than two triangles.
    over: usize,
    /// Edges whose two triangles run it the same way.
    misoriented: usize,
    /// Triangles that repeat an index.
    degenerate: usize,
    /// Indices that point past the vertex buffer.
    out_of_range: usize,
}

fn topology(indices: &[u32], vertex_count: usize) -> Topo {
    let mut topo = Topo::default();
    let mut directed: HashMap<(u32, u32), usize> = HashMap::new();
    for t in indices.chunks(3) {
        if t.iter().any(|&i| i as usize >= vertex_count) {
            topo.out_of_range += 1;
        }
        if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
            topo.degenerate += 1;
            continue;
        }
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
        }
    }
    let mut seen = HashSet::new();
    for (&(a, b), &n) in &directed {
        let key = (a.min(b), a.max(b));
        if !seen.insert(key) {
            continue;
        }
        let back = directed.get(&(b, a)).copied().unwrap_or(0);
        match n + back {
            1 => topo.boundary += 1,
            2 if n != 1 => topo.misoriented += 1,
            2 => {}
            _ => topo.over += 1,
        }
    }
    topo
}

fn assert_closed_manifold(out: &CubesOutput, what: &str) {
    assert_eq!(
        topology(&out.indices, out.positions.len()),
        Topo::default(),
        "{what}"
    );
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn p64(p: [f32; 3]) -> [f64; 3] {
    p.map(|c| c as f64)
}

/// Signed volume enclosed by a closed mesh (divergence theorem).
fn volume(out: &CubesOutput) -> f64 {
    out.indices
        .chunks(3)
        .map(|t| {
            let [a, b, c] = [0, 1, 2].map(|k| p64(out.positions[t[k] as usize]));
            dot(a, cross(b, c)) / 6.0
        })
        .sum()
}

/// Signed volume of each connected component (by shared vertices).
fn component_volumes(out: &CubesOutput) -> Vec<f64> {
    let n = out.positions.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for t in out.indices.chunks(3) {
        for k in 1..3 {
            let (a, b) = (
                find(&mut parent, t[0] as usize),
                find(&mut parent, t[k] as usize),
            );
            parent[a] = b;
        }
    }
    let mut vols: HashMap<usize, f64> = HashMap::new();
    for t in out.indices.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|k| p64(out.positions[t[k] as usize]));
        *vols.entry(find(&mut parent, t[0] as usize)).or_default() += dot(a, cross(b, c)) / 6.0;
    }
    let mut v: Vec<f64> = vols.into_values().collect();
    v.sort_by(f64::total_cmp);
    v
}

/// `V - E + F` over the referenced vertices.
fn euler_characteristic(out: &CubesOutput) -> i64 {
    let mut verts = HashSet::new();
    let mut edges = HashSet::new();
    for t in out.indices.chunks(3) {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            verts.insert(a);
            edges.insert((a.min(b), a.max(b)));
        }
    }
    verts.len() as i64 - edges.len() as i64 + (out.indices.len() / 3) as i64
}

/// A grid edge: its lower node and its axis.
type Edge = ([u32; 3], usize);

/// The grid edge a vertex lies on, from its position in node-index units, or
/// `None` for a vertex with no integer coordinate (a cell centre) or one sitting
/// exactly on a node.
fn edge_of(p: [f32; 3]) -> Option<Edge> {
    let frac: Vec<usize> = (0..3).filter(|&k| p[k].fract() != 0.0).collect();
    if frac.len() != 1 {
        return None;
    }
    let axis = frac[0];
    Some((p.map(|c| c.floor() as u32), axis))
}

/// Every crossed edge of the grid inside the node box `[lo, hi]`.
fn crossed_edges(v: &[f32], dims: [u32; 3], lo: [u32; 3], hi: [u32; 3], iso: f32) -> Vec<Edge> {
    let idx = |p: [u32; 3]| ((p[2] * dims[1] + p[1]) * dims[0] + p[0]) as usize;
    let mut out = Vec::new();
    for z in lo[2]..=hi[2] {
        for y in lo[1]..=hi[1] {
            for x in lo[0]..=hi[0] {
                let p = [x, y, z];
                for axis in 0..3 {
                    if p[axis] == hi[axis] {
                        continue;
                    }
                    let mut q = p;
                    q[axis] += 1;
                    if (v[idx(p)] >= iso) != (v[idx(q)] >= iso) {
                        out.push((p, axis));
                    }
                }
            }
        }
    }
    out
}

fn bits3(p: [f32; 3]) -> [u32; 3] {
    p.map(f32::to_bits)
}

/// Triangles as (position, normal) bit triples, rotated to start at their
/// smallest vertex, sorted: an order-free fingerprint of a mesh.
fn triangle_set(out: &CubesOutput) -> Vec<[[u32; 6]; 3]> {
    let vert = |i: u32| {
        let p = bits3(out.positions[i as usize]);
        let n = out
            .normals
            .get(i as usize)
            .map(|&n| bits3(n))
            .unwrap_or_default();
        [p[0], p[1], p[2], n[0], n[1], n[2]]
    };
    let mut v: Vec<[[u32; 6]; 3]> = out
        .indices
        .chunks(3)
        .map(|t| {
            let mut tri = [vert(t[0]), vert(t[1]), vert(t[2])];
            let m = (0..3).min_by_key(|&k| tri[k]).unwrap();
            tri.rotate_left(m);
            tri
        })
        .collect();
    v.sort();
    v
}

fn assert_finite_unit_normals(out: &CubesOutput) {
    assert_eq!(out.normals.len(), out.positions.len());
    for (p, n) in out.positions.iter().zip(&out.normals) {
        assert!(p.iter().all(|c| c.is_finite()), "{p:?}");
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((l - 1.0).abs() < 1e-4, "normal {n:?} at {p:?}");
    }
}

// ---------------------------------------------------------------------------
// Every case
// ---------------------------------------------------------------------------

/// A 4x4x4 grid whose inner 2x2x2 nodes are the corners of `case` (solid
/// `+m`, air `-m`, `m` random in `[0.05, 1]`) and whose border is air: the
/// surface is closed and every triangle near the inner cell comes from its case.
fn case_grid(case: u8, rng: Option<&mut Rng>) -> Vec<f32> {
    let mut v = vec![-1.0f32; 64];
    let mut rng = rng;
    for k in 0..8u32 {
        let m = match rng.as_deref_mut() {
            Some(r) => r.range(0.05, 1.0),
            None => 1.0,
        };
        let p = [1 + (k & 1), 1 + ((k >> 1) & 1), 1 + (k >> 2)];
        v[((p[2] * 4 + p[1]) * 4 + p[0]) as usize] = if case & (1 << k) != 0 { m } else { -m };
    }
    v
}

fn check_case_grid(v: &[f32], what: &str) -> usize {
    let dims = [4, 4, 4];
    let mut out = CubesOutput::default();
    MarchingCubes::new()
        .mesh_slice(
            v,
            dims,
            CellBox::of_dims(dims),
            &CubesOptions::DEFAULT,
            &mut out,
        )
        .unwrap();
    assert_closed_manifold(&out, what);
    assert_finite_unit_normals(&out);
    // Welding: one vertex per crossed edge, plus cell centres; nothing else.
    let crossed: HashSet<Edge> = crossed_edges(v, dims, [0; 3], [3; 3], 0.0)
        .into_iter()
        .collect();
    let mut found = HashSet::new();
    let mut centres = 0;
    for &p in &out.positions {
        match edge_of(p) {
            Some(e) => {
                assert!(
                    crossed.contains(&e),
                    "{what}: vertex {p:?} off a crossed edge"
                );
                assert!(found.insert(e), "{what}: edge {e:?} has two vertices");
            }
            None => {
                assert!(
                    p.iter().all(|&c| c > 1.0 && c < 2.0),
                    "{what}: extra vertex {p:?} outside the inner cell"
                );
                centres += 1;
            }
        }
    }
    assert_eq!(found, crossed, "{what}: every crossed edge gets a vertex");
    let mut used = vec![false; out.positions.len()];
    for &i in &out.indices {
        used[i as usize] = true;
    }
    assert!(used.iter().all(|&u| u), "{what}: unused vertex");
    // Orientation: every component encloses solid (no cavity can exist here).
    for vol in component_volumes(&out) {
        assert!(vol > 0.0, "{what}: component volume {vol}");
    }
    // Triangles face the way the gradient normals point.
    let mut agree = 0.0;
    for t in out.indices.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|k| p64(out.positions[t[k] as usize]));
        let n = cross(sub(b, a), sub(c, a));
        let vn = [0, 1, 2]
            .map(|k| p64(out.normals[t[k] as usize]))
            .into_iter()
            .fold([0.0; 3], |s, m| [s[0] + m[0], s[1] + m[1], s[2] + m[2]]);
        agree += dot(n, vn);
    }
    assert!(
        out.indices.is_empty() || agree > 0.0,
        "{what}: triangles face against the normals"
    );
    centres
}

#[test]
fn all_256_cases_are_closed_welded_and_outward() {
    let mut rng = Rng(7);
    let mut centres = 0;
    for case in 0..=255u8 {
        check_case_grid(&case_grid(case, None), &format!("case {case} (+-1)"));
        for trial in 0..48 {
            let v = case_grid(case, Some(&mut rng));
            centres += check_case_grid(&v, &format!("case {case} trial {trial}"));
        }
    }
    // The rare configurations that need a cell-centre vertex were reached too.
    assert!(centres > 0);
}

#[test]
fn single_cell_cases_match_the_crossed_edges() {
    // A lone cell (2x2x2 nodes): the surface is open, but every vertex lies on a
    // crossed edge, every crossed edge is used, and no edge bounds more than two
    // triangles.
    let mut rng = Rng(11);
    for case in 0..=255u8 {
        for trial in 0..16 {
            let v: Vec<f32> = (0..8)
                .map(|k| {
                    let m = if trial == 0 {
                        1.0
                    } else {
                        rng.range(0.05, 1.0)
                    };
                    if case & (1 << k) != 0 { m } else { -m }
                })
                .collect();
            let mut out = CubesOutput::default();
            MarchingCubes::new()
                .mesh_slice(
                    &v,
                    [2, 2, 2],
                    CellBox::of_dims([2, 2, 2]),
                    &CubesOptions::DEFAULT,
                    &mut out,
                )
                .unwrap();
            let crossed: HashSet<Edge> = crossed_edges(&v, [2; 3], [0; 3], [1; 3], 0.0)
                .into_iter()
                .collect();
            let on_edges: HashSet<Edge> =
                out.positions.iter().filter_map(|&p| edge_of(p)).collect();
            assert_eq!(on_edges, crossed, "case {case}");
            let topo = topology(&out.indices, out.positions.len());
            assert_eq!(
                (
                    topo.over,
                    topo.misoriented,
                    topo.degenerate,
                    topo.out_of_range
                ),
                (0, 0, 0, 0)
            );
            if case == 0 || case == 255 {
                assert!(out.indices.is_empty());
            } else {
                assert!(!out.indices.is_empty(), "case {case}");
                // Boundary edges lie on the cell's faces: each joins two crossed
                // edges of one face.
                assert!(topo.boundary >= 3);
            }
            // A single solid corner's triangle faces away from it.
            if case.count_ones() == 1 {
                let k = case.trailing_zeros();
                let c = [k & 1, (k >> 1) & 1, k >> 2].map(|b| b as f64);
                let t = &out.indices[..3];
                let [a, b, d] = [0, 1, 2].map(|i| p64(out.positions[t[i] as usize]));
                let n = cross(sub(b, a), sub(d, a));
                assert!(dot(n, sub(a, c)) > 0.0, "case {case}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Random fields
// ---------------------------------------------------------------------------

/// A node value: many exactly at the iso level 0, some at +-1, some random.
fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => Just(0.0f32),
        2 => Just(-1.0f32),
        2 => Just(1.0f32),
        3 => -2.0f32..2.0,
    ]
}

/// A random field of 2..=max nodes per axis.
fn field(max: u32) -> impl Strategy<Value = Field3> {
    (2..=max, 2..=max, 2..=max)
        .prop_flat_map(|(w, h, d)| {
            (
                Just([w, h, d]),
                proptest::collection::vec(value(), (w * h * d) as usize),
                prop_oneof![Just(1.0f32), Just(0.25f32), 0.1f32..3.0],
                prop_oneof![
                    Just([0.0f32; 3]),
                    (-50.0f32..50.0, -50.0f32..50.0, -50.0f32..50.0)
                        .prop_map(|(a, b, c)| [a, b, c])
                ],
            )
        })
        .prop_map(|(d, v, cs, o)| {
            Field3::from_values(d[0], d[1], d[2], v)
                .unwrap()
                .with_cell_size(cs)
                .unwrap()
                .with_origin(o)
                .unwrap()
        })
}

/// Cut points `0 = c0 < c1 < ... = n` from random fractions.
fn cuts(n: u32, fracs: &[f32]) -> Vec<u32> {
    let mut c: Vec<u32> = fracs.iter().map(|f| (f * n as f32) as u32).collect();
    c.push(0);
    c.push(n);
    c.sort();
    c.dedup();
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_fields_with_air_border_are_closed_manifolds(f in field(12), iso in prop_oneof![Just(0.0f32), -0.5f32..0.5]) {
        let mut f = f;
        f.clear_border(-3.0).unwrap();
        let out = mesh_field(&f, CellBox::whole(&f), &CubesOptions::DEFAULT.with_iso(iso));
        prop_assert_eq!(topology(&out.indices, out.positions.len()), Topo::default());
        assert_finite_unit_normals(&out);
        prop_assert!(volume(&out) >= 0.0);
        // One vertex per crossed edge (samples at iso included), plus rare centres.
        let crossed = crossed_edges(f.values(), f.dims(), [0; 3], f.dims().map(|n| n - 1), iso).len();
        prop_assert!(out.positions.len() >= crossed);
        prop_assert!(out.positions.len() <= crossed + f.values().len());
    }

    #[test]
    fn random_fields_without_border_are_edge_manifold(f in field(10)) {
        // Open surfaces: boundary edges are allowed, everything else is not.
        let out = mesh_whole(&f);
        let topo = topology(&out.indices, out.positions.len());
        prop_assert_eq!((topo.over, topo.misoriented, topo.degenerate, topo.out_of_range), (0, 0, 0, 0));
        assert_finite_unit_normals(&out);
    }

    #[test]
    fn chunked_meshing_equals_whole_meshing(
        f in field(14),
        fx in proptest::collection::vec(0.0f32..1.0, 0..3),
        fy in proptest::collection::vec(0.0f32..1.0, 0..3),
        fz in proptest::collection::vec(0.0f32..1.0, 0..3),
    ) {
        let whole = mesh_whole(&f);
        let [w, h, d] = f.dims();
        let (cx, cy, cz) = (cuts(w - 1, &fx), cuts(h - 1, &fy), cuts(d - 1, &fz));
        let mut mesher = MarchingCubes::new();
        let mut out = CubesOutput::default();
        let mut all = Vec::new();
        for z in cz.windows(2) {
            for y in cy.windows(2) {
                for x in cx.windows(2) {
                    let b = CellBox::new(x[0], y[0], z[0], x[1], y[1], z[1]);
                    mesher.mesh(&f, b, &CubesOptions::DEFAULT, &mut out).unwrap();
                    let topo = topology(&out.indices, out.positions.len());
                    prop_assert_eq!((topo.over, topo.misoriented, topo.degenerate), (0, 0, 0));
                    all.extend(triangle_set(&out));
                }
            }
        }
        all.sort();
        prop_assert_eq!(all.len(), whole.triangle_count());
        prop_assert!(all == triangle_set(&whole), "chunk triangles differ from the whole mesh");
    }

    #[test]
    fn box_without_apron_equals_the_copied_sub_field(
        f in field(10),
        a in (0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0),
        b in (0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0),
    ) {
        // Meshing a box with `normals_apron = false` sees only the box's nodes:
        // it matches meshing a copy of those nodes, up to the position offset.
        let f = Field3::from_values(f.width(), f.height(), f.depth(), f.values().to_vec()).unwrap();
        let dims = f.dims();
        let pick = |fa: f32, fb: f32, n: u32| {
            let (p, q) = ((fa * (n - 1) as f32) as u32, (fb * (n - 1) as f32) as u32);
            (p.min(q), p.max(q).max(p.min(q) + 1).min(n - 1))
        };
        let (x0, x1) = pick(a.0, b.0, dims[0]);
        let (y0, y1) = pick(a.1, b.1, dims[1]);
        let (z0, z1) = pick(a.2, b.2, dims[2]);
        prop_assume!(x0 < x1 && y0 < y1 && z0 < z1);
        let opts = CubesOptions::DEFAULT.with_normals_apron(false);
        let boxed = mesh_field(&f, CellBox::new(x0, y0, z0, x1, y1, z1), &opts);
        let copy = Field3::from_fn(x1 - x0 + 1, y1 - y0 + 1, z1 - z0 + 1, |x, y, z| {
            f.get(x + x0, y + y0, z + z0)
        })
        .unwrap();
        let alone = mesh_whole(&copy);
        prop_assert_eq!(&boxed.indices, &alone.indices);
        prop_assert_eq!(&boxed.normals, &alone.normals);
        for (p, q) in boxed.positions.iter().zip(&alone.positions) {
            let shifted = [q[0] + x0 as f32, q[1] + y0 as f32, q[2] + z0 as f32];
            for k in 0..3 {
                prop_assert!((p[k] - shifted[k]).abs() < 1e-4, "{:?} vs {:?}", p, shifted);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Closed shapes
// ---------------------------------------------------------------------------

fn sphere(n: u32, r: f32) -> Field3 {
    let c = (n - 1) as f32 / 2.0;
    Field3::from_fn(n, n, n, |x, y, z| {
        let d = [x, y, z].map(|v| v as f32 - c);
        r - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    })
    .unwrap()
}

#[test]
fn sphere_is_closed_with_the_right_volume_and_outward_normals() {
    let r = 5.5;
    let f = sphere(16, r);
    let out = mesh_whole(&f);
    assert_closed_manifold(&out, "sphere");
    assert_eq!(euler_characteristic(&out), 2);
    let exact = 4.0 / 3.0 * std::f64::consts::PI * (r as f64).powi(3);
    let v = volume(&out);
    assert!(
        v > 0.0 && (v - exact).abs() / exact < 0.03,
        "volume {v} vs {exact}"
    );
    let c = 7.5f32;
    for (p, n) in out.positions.iter().zip(&out.normals) {
        let d = [p[0] - c, p[1] - c, p[2] - c];
        let l = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        assert!((l - r).abs() < 0.1, "vertex {p:?} off the sphere");
        let cos = (d[0] * n[0] + d[1] * n[1] + d[2] * n[2]) / l;
        assert!(cos > 0.98, "normal {n:?} at {p:?}");
    }
    // Triangles face outward too.
    for t in out.indices.chunks(3) {
        let [a, b, d] = [0, 1, 2].map(|k| p64(out.positions[t[k] as usize]));
        let n = cross(sub(b, a), sub(d, a));
        let centroid = [0, 1, 2].map(|k| (a[k] + b[k] + d[k]) / 3.0 - 7.5);
        assert!(dot(n, centroid) > 0.0);
    }
}

#[test]
fn world_units_follow_origin_and_cell_size() {
    let f = sphere(12, 4.0);
    let g = f
        .clone()
        .with_cell_size(0.5)
        .unwrap()
        .with_origin([10.0, -3.0, 2.0])
        .unwrap();
    let a = mesh_whole(&f);
    let b = mesh_whole(&g);
    assert_eq!(a.indices, b.indices);
    assert_eq!(a.normals, b.normals);
    for (p, q) in a.positions.iter().zip(&b.positions) {
        let expect = [10.0 + p[0] * 0.5, -3.0 + p[1] * 0.5, 2.0 + p[2] * 0.5];
        for k in 0..3 {
            assert!((q[k] - expect[k]).abs() < 1e-5);
        }
    }
    let v = volume(&b);
    assert!((v - volume(&a) / 8.0).abs() < 1e-3 * v);
    // The raw-slice entry works in node-index units and agrees bit for bit.
    let mut c = CubesOutput::default();
    MarchingCubes::new()
        .mesh_slice(
            f.values(),
            f.dims(),
            CellBox::whole(&f),
            &CubesOptions::DEFAULT,
            &mut c,
        )
        .unwrap();
    assert_eq!(a, c);
}

#[test]
fn torus_and_gyroid_are_closed() {
    let n = 20u32;
    let c = (n - 1) as f32 / 2.0;
    let torus = Field3::from_fn(n, n, n, |x, y, z| {
        let (px, py, pz) = (x as f32 - c, y as f32 - c, z as f32 - c);
        let q = (px * px + pz * pz).sqrt() - 5.5;
        2.2 - (q * q + py * py).sqrt()
    })
    .unwrap();
    let out = mesh_whole(&torus);
    assert_closed_manifold(&out, "torus");
    assert_eq!(euler_characteristic(&out), 0);
    let exact = 2.0 * std::f64::consts::PI.powi(2) * 5.5 * 2.2f64.powi(2);
    let v = volume(&out);
    assert!(
        (v - exact).abs() / exact < 0.05,
        "torus volume {v} vs {exact}"
    );

    let mut gyroid = Field3::from_fn(n, n, n, |x, y, z| {
        let s = 0.7;
        let (x, y, z) = (x as f32 * s, y as f32 * s, z as f32 * s);
        x.sin() * y.cos() + y.sin() * z.cos() + z.sin() * x.cos()
    })
    .unwrap();
    gyroid.clear_border(-1.0).unwrap();
    let out = mesh_whole(&gyroid);
    assert_closed_manifold(&out, "gyroid");
    assert!(volume(&out) > 0.0);
    assert!(out.triangle_count() > 2000);
    assert_finite_unit_normals(&out);
}

#[test]
fn samples_exactly_at_iso_make_no_holes() {
    // A slab whose top layer sits exactly at iso, a block that is entirely at iso,
    // and a checkerboard of iso and air: all solid, all closed.
    let n = 9;
    let slab = Field3::from_fn(n, n, n, |x, y, z| {
        if [x, y, z].iter().any(|&c| c == 0 || c == n - 1) {
            -1.0
        } else if y < 4 {
            1.0
        } else if y == 4 {
            0.0
        } else {
            -1.0
        }
    })
    .unwrap();
    let out = mesh_whole(&slab);
    assert_closed_manifold(&out, "slab");
    assert_eq!(euler_characteristic(&out), 2);
    // The solid is [1, 4] in y (the top layer at exactly iso counts as solid):
    // the surface sits at t = 0 on the edges toward air above it.
    let v = volume(&out);
    assert!(v > 0.0);
    let top = out.positions.iter().map(|p| p[1]).fold(f32::MIN, f32::max);
    assert_eq!(top, 4.0);

    let block = Field3::from_fn(n, n, n, |x, y, z| {
        if [x, y, z].iter().any(|&c| c == 0 || c == n - 1) {
            -1.0
        } else {
            0.0
        }
    })
    .unwrap();
    let out = mesh_whole(&block);
    assert_closed_manifold(&out, "block at iso");
    assert!(volume(&out) > 0.0);

    let checker = Field3::from_fn(n, n, n, |x, y, z| {
        if [x, y, z].iter().any(|&c| c == 0 || c == n - 1) || (x + y + z) % 2 == 1 {
            -1.0
        } else {
            0.0
        }
    })
    .unwrap();
    let out = mesh_whole(&checker);
    assert_closed_manifold(&out, "iso checkerboard");
    assert_finite_unit_normals(&out);
}

#[test]
fn extreme_values_stay_finite_and_closed() {
    let mut rng = Rng(3);
    let mut f = Field3::from_fn(8, 8, 8, |_, _, _| match rng.next() % 4 {
        0 => f32::MAX,
        1 => -f32::MAX,
        2 => f32::MIN_POSITIVE,
        _ => 0.0,
    })
    .unwrap();
    f.clear_border(-f32::MAX).unwrap();
    for iso in [0.0, f32::MAX, -f32::MAX, 1e30] {
        let out = mesh_field(&f, CellBox::whole(&f), &CubesOptions::DEFAULT.with_iso(iso));
        assert_closed_manifold(&out, &format!("iso {iso}"));
        assert_finite_unit_normals(&out);
    }
}

#[test]
fn non_finite_slice_values_never_panic() {
    let mut v = vec![1.0f32; 125];
    v[31] = f32::NAN;
    v[62] = f32::INFINITY;
    v[93] = f32::NEG_INFINITY;
    let mut out = CubesOutput::default();
    MarchingCubes::new()
        .mesh_slice(
            &v,
            [5, 5, 5],
            CellBox::of_dims([5, 5, 5]),
            &CubesOptions::DEFAULT,
            &mut out,
        )
        .unwrap();
    assert!(!out.indices.is_empty());
    let topo = topology(&out.indices, out.positions.len());
    assert_eq!(
        (
            topo.over,
            topo.misoriented,
            topo.degenerate,
            topo.out_of_range
        ),
        (0, 0, 0, 0)
    );
    assert_finite_unit_normals(&out);
}

// ---------------------------------------------------------------------------
// Normals and seams
// ---------------------------------------------------------------------------

#[test]
fn chunk_faces_get_bitwise_equal_normals_with_the_apron() {
    let f = sphere(17, 6.3);
    let opts = CubesOptions::DEFAULT;
    let lo = mesh_field(&f, CellBox::new(0, 0, 0, 8, 16, 16), &opts);
    let hi = mesh_field(&f, CellBox::new(8, 0, 0, 16, 16, 16), &opts);
    let on_seam = |out: &CubesOutput| -> HashMap<[u32; 3], [u32; 3]> {
        out.positions
            .iter()
            .zip(&out.normals)
            .filter(|(p, _)| p[0] == 8.0)
            .map(|(&p, &n)| (bits3(p), bits3(n)))
            .collect()
    };
    let (a, b) = (on_seam(&lo), on_seam(&hi));
    assert!(a.len() > 20);
    assert_eq!(a, b);
    // Without the apron the chunks see a one-sided gradient on the seam.
    let opts = opts.with_normals_apron(false);
    let lo = mesh_field(&f, CellBox::new(0, 0, 0, 8, 16, 16), &opts);
    let hi = mesh_field(&f, CellBox::new(8, 0, 0, 16, 16, 16), &opts);
    assert_ne!(on_seam(&lo), on_seam(&hi));
    assert_eq!(on_seam(&lo).len(), a.len());
}

#[test]
fn normals_can_be_skipped() {
    let f = sphere(10, 3.2);
    let with = mesh_whole(&f);
    let without = mesh_field(
        &f,
        CellBox::whole(&f),
        &CubesOptions::DEFAULT.with_normals(false),
    );
    assert!(without.normals.is_empty());
    assert_eq!(with.positions, without.positions);
    assert_eq!(with.indices, without.indices);
}

#[test]
fn gradient_normals_point_down_the_field() {
    // f = 5 - x: solid on the left, normals +x everywhere (central and one-sided).
    let f = Field3::from_fn(7, 4, 4, |x, _, _| 2.5 - x as f32).unwrap();
    let out = mesh_whole(&f);
    assert!(!out.positions.is_empty());
    for (p, n) in out.positions.iter().zip(&out.normals) {
        assert_eq!(p[0], 2.5);
        assert_eq!(*n, [1.0, 0.0, 0.0]);
    }
    // A plane: geometric normals agree with the gradient normals.
    for t in out.indices.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|k| p64(out.positions[t[k] as usize]));
        assert!(cross(sub(b, a), sub(c, a))[0] > 0.0);
    }
    // A flat field exactly at iso next to air: no gradient along the surface
    // direction is needed, normals stay unit and point from solid to air.
    let f = Field3::from_fn(3, 3, 3, |x, _, _| if x < 2 { 0.0 } else { -1.0 }).unwrap();
    let out = mesh_whole(&f);
    assert_finite_unit_normals(&out);
    assert!(out.normals.iter().all(|n| n[0] > 0.0));
}

// ---------------------------------------------------------------------------
// Materials
// ---------------------------------------------------------------------------

#[test]
fn vertices_take_the_material_of_their_solid_node() {
    let f = sphere(12, 4.2);
    let ids: Vec<u8> = (0..f.values().len()).map(|i| (i * 7 % 5) as u8).collect();
    let mut out = CubesOutput::default();
    let mut mesher = MarchingCubes::new();
    mesher
        .mesh_with_materials(
            &f,
            &ids,
            CellBox::whole(&f),
            &CubesOptions::DEFAULT,
            &mut out,
        )
        .unwrap();
    assert_eq!(out.materials.len(), out.positions.len());
    for (p, &m) in out.positions.iter().zip(&out.materials) {
        let (node, axis) = edge_of(*p).expect("sphere vertices sit inside edges");
        let mut other = node;
        other[axis] += 1;
        let solid = if f.get(node[0], node[1], node[2]) >= 0.0 {
            node
        } else {
            other
        };
        assert_eq!(m, ids[f.index(solid[0], solid[1], solid[2])]);
    }
    // Same geometry as without materials; the raw-slice entry agrees.
    let plain = mesh_whole(&f);
    assert_eq!(plain.positions, out.positions);
    assert_eq!(plain.indices, out.indices);
    assert!(plain.materials.is_empty());
    let mut raw = CubesOutput::default();
    mesher
        .mesh_slice_with_materials(
            f.values(),
            &ids,
            f.dims(),
            CellBox::whole(&f),
            &CubesOptions::DEFAULT,
            &mut raw,
        )
        .unwrap();
    assert_eq!(raw, out);
}

// ---------------------------------------------------------------------------
// Validation and reuse
// ---------------------------------------------------------------------------

#[test]
fn bad_input_is_a_typed_error_that_changes_nothing() {
    let f = sphere(6, 2.0);
    let mut mesher = MarchingCubes::new();
    let mut out = mesh_whole(&f);
    let before = out.clone();
    let all = CellBox::whole(&f);
    let opts = CubesOptions::DEFAULT;
    assert!(matches!(
        mesher.mesh(&f, all, &opts.with_iso(f32::NAN), &mut out),
        Err(MeshError::InvalidParameter { name: "iso", .. })
    ));
    assert!(matches!(
        mesher.mesh(&f, all, &opts.with_iso(f32::INFINITY), &mut out),
        Err(MeshError::InvalidParameter { name: "iso", .. })
    ));
    assert!(matches!(
        mesher.mesh(&f, CellBox::new(0, 0, 0, 6, 5, 5), &opts, &mut out),
        Err(MeshError::BoxOutOfBounds {
            width: 6,
            height: 6,
            depth: 6,
            ..
        })
    ));
    assert!(matches!(
        mesher.mesh(&f, CellBox::new(3, 0, 0, 2, 5, 5), &opts, &mut out),
        Err(MeshError::BoxOutOfBounds { .. })
    ));
    assert!(matches!(
        mesher.mesh_with_materials(&f, &[0; 10], all, &opts, &mut out),
        Err(MeshError::LengthMismatch {
            name: "materials",
            expected: 216,
            got: 10
        })
    ));
    assert!(matches!(
        mesher.mesh_slice(
            &[0.0; 7],
            [2, 2, 2],
            CellBox::of_dims([2, 2, 2]),
            &opts,
            &mut out
        ),
        Err(MeshError::LengthMismatch {
            name: "values",
            expected: 8,
            got: 7
        })
    ));
    assert!(matches!(
        mesher.mesh_slice(
            &[0.0; 8],
            [u32::MAX, u32::MAX, u32::MAX],
            CellBox::default(),
            &opts,
            &mut out
        ),
        Err(MeshError::InvalidParameter { .. }) | Err(MeshError::LengthMismatch { .. })
    ));
    assert!(matches!(
        mesher.mesh_slice(
            &[0.0; 8],
            [2, 2, 2],
            CellBox::new(0, 0, 0, 1, 1, 2),
            &opts,
            &mut out
        ),
        Err(MeshError::BoxOutOfBounds { .. })
    ));
    assert_eq!(out, before);
    // Empty boxes and degenerate grids are fine: nothing to mesh.
    mesher
        .mesh(&f, CellBox::new(2, 2, 2, 2, 5, 5), &opts, &mut out)
        .unwrap();
    assert_eq!(out, CubesOutput::default());
    mesher
        .mesh_slice(&[], [0, 0, 0], CellBox::default(), &opts, &mut out)
        .unwrap();
    assert_eq!(out.vertex_count(), 0);
}

#[test]
fn a_reused_mesher_is_deterministic_across_sizes() {
    let big = sphere(15, 5.0);
    let small = sphere(7, 2.1);
    let mut mesher = MarchingCubes::new();
    let mut out = CubesOutput::default();
    let mut runs = Vec::new();
    for f in [&big, &small, &big, &small] {
        mesher
            .mesh(f, CellBox::whole(f), &CubesOptions::DEFAULT, &mut out)
            .unwrap();
        runs.push(out.clone());
    }
    assert_eq!(runs[0], runs[2]);
    assert_eq!(runs[1], runs[3]);
    assert_eq!(runs[0], mesh_whole(&big));
    assert_eq!(runs[1], mesh_whole(&small));
}

#[test]
fn wide_rows_cross_word_boundaries() {
    // Rows longer than 64 and 128 nodes: crossings right at bit 63/64.
    let f = Field3::from_fn(140, 3, 3, |x, y, z| {
        if y == 1 && z == 1 && [63, 64, 70, 127, 128, 138].contains(&x) {
            1.0
        } else {
            -1.0
        }
    })
    .unwrap();
    let out = mesh_whole(&f);
    assert_closed_manifold(&out, "wide");
    let solid = f.values().iter().filter(|&&v| v >= 0.0).count();
    // Each solid node is a small closed blob: its own component; neighbours at
    // 63/64 and 127/128 merge into one.
    assert_eq!(component_volumes(&out).len(), solid - 2);
}
