//! Tests of the one-pass map mesher (`isoterra_mesh::map`).

use std::collections::HashMap;

use isoterra_field::Splat;
use isoterra_field::map::{MapLayers, NO_WATER, level_index, node_surface};
use isoterra_mesh::CellRect;
use isoterra_mesh::MeshError;
use isoterra_mesh::map::{MapMeshOptions, MapMeshOutput, MapMesher};
use proptest::prelude::*;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

/// Chasm depth used by the crack tests: wall bottoms land far below any top.
const DEEP: f32 = 1000.0;
/// Every vertex below this is a chasm wall bottom in the crack tests.
const BOTTOM_Y: f32 = -500.0;

fn mesh(layers: &MapLayers, rect: CellRect, options: &MapMeshOptions) -> MapMeshOutput {
    let mut out = MapMeshOutput::default();
    MapMesher::new()
        .mesh(layers, rect, options, &mut out)
        .expect("valid input meshes");
    out
}

fn whole(layers: &MapLayers, options: &MapMeshOptions) -> MapMeshOutput {
    mesh(layers, CellRect::whole(layers), options)
}

fn tri(indices: &[u32], t: usize) -> [usize; 3] {
    [
        indices[3 * t] as usize,
        indices[3 * t + 1] as usize,
        indices[3 * t + 2] as usize,
    ]
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(u: [f32; 3], w: [f32; 3]) -> f32 {
    u[0] * w[0] + u[1] * w[1] + u[2] * w[2]
}

fn cross(u: [f32; 3], w: [f32; 3]) -> [f32; 3] {
    [
        u[1] * w[2] - u[2] * w[1],
        u[2] * w[0] - u[0] * w[2],
        u[0] * w[1] - u[1] * w[0],
    ]
}

fn face_normal(p: &[[f32; 3]], t: [usize; 3]) -> [f32; 3] {
    cross(sub(p[t[1]], p[t[0]]), sub(p[t[2]], p[t[0]]))
}

/// A wall triangle has a zero footprint on the x/z plane (its three vertices
/// stand on two x/z points); a top or slope triangle does not.
fn is_wall(p: &[[f32; 3]], t: [usize; 3]) -> bool {
    let (a, b, c) = (p[t[0]], p[t[1]], p[t[2]]);
    (b[0] - a[0]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[0] - a[0]) == 0.0
}

/// Triangles as bit patterns of their vertices (position, normal, splat,
/// blend), rotated so the smallest vertex comes first (winding kept), sorted.
fn terrain_triangles(out: &MapMeshOutput) -> Vec<[[u32; 9]; 3]> {
    let m = &out.terrain;
    let vert = |i: usize| -> [u32; 9] {
        let p = m.positions[i];
        let n = m.normals[i];
        let s = m.splat[i].to_bytes();
        [
            p[0].to_bits(),
            p[1].to_bits(),
            p[2].to_bits(),
            n[0].to_bits(),
            n[1].to_bits(),
            n[2].to_bits(),
            u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
            u32::from_le_bytes([s[4], s[5], s[6], s[7]]),
            m.blend[i].to_bits(),
        ]
    };
    let mut tris: Vec<_> = (0..m.triangle_count())
        .map(|t| {
            let [a, b, c] = tri(&m.indices, t).map(vert);
            canonical([a, b, c])
        })
        .collect();
    tris.sort_unstable();
    tris
}

fn water_triangles(out: &MapMeshOutput) -> Vec<[[u32; 7]; 3]> {
    let m = &out.water;
    let vert = |i: usize| -> [u32; 7] {
        let p = m.positions[i];
        let n = m.normals[i];
        [
            p[0].to_bits(),
            p[1].to_bits(),
            p[2].to_bits(),
            n[0].to_bits(),
            n[1].to_bits(),
            n[2].to_bits(),
            m.depth[i].to_bits(),
        ]
    };
    let mut tris: Vec<_> = (0..m.triangle_count())
        .map(|t| canonical(tri(&m.indices, t).map(vert)))
        .collect();
    tris.sort_unstable();
    tris
}

fn canonical<T: Ord + Copy>(t: [T; 3]) -> [T; 3] {
    let [a, b, c] = t;
    if a <= b && a <= c {
        [a, b, c]
    } else if b <= a && b <= c {
        [b, c, a]
    } else {
        [c, a, b]
    }
}

/// Edge use counts by welded index pair.
fn edge_uses(indices: &[u32]) -> HashMap<(u32, u32), Vec<usize>> {
    let mut edges: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for t in 0..indices.len() / 3 {
        let v = [indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]];
        for k in 0..3 {
            let (a, b) = (v[k], v[(k + 1) % 3]);
            edges.entry((a.min(b), a.max(b))).or_default().push(t);
        }
    }
    edges
}

/// Removes "fins": pairs of triangles with the same three vertices in
/// opposite winding. They are the two faces of a zero-width ridge (a band
/// whose region in a cell is a segment, e.g. a node exactly on a rim between
/// lower nodes), which is the exact limit of a thin wall and closed by itself.
fn without_fins(indices: &[u32]) -> Vec<u32> {
    let mut by_set: HashMap<[u32; 3], Vec<usize>> = HashMap::new();
    for t in 0..indices.len() / 3 {
        let mut v = [indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]];
        v.sort_unstable();
        by_set.entry(v).or_default().push(t);
    }
    let mut drop = vec![false; indices.len() / 3];
    for tris in by_set.values() {
        let orient = |t: usize| canonical([indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]]);
        let mut open: Vec<usize> = Vec::new();
        for &t in tris {
            let o = orient(t);
            let flipped = canonical([o[0], o[2], o[1]]);
            if let Some(k) = open.iter().position(|&u| orient(u) == flipped) {
                drop[open.remove(k)] = true;
                drop[t] = true;
            } else {
                open.push(t);
            }
        }
    }
    (0..indices.len() / 3)
        .filter(|&t| !drop[t])
        .flat_map(|t| [indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]])
        .collect()
}

/// Checks the crack invariants of a whole-map terrain mesh meshed with
/// `chasm_depth = DEEP`, counting edges as welded index pairs:
///
/// 1. every edge used by exactly one triangle lies on the map's outer border
///    (both ends on the same border line) or is the bottom edge of a chasm
///    wall (both ends below `BOTTOM_Y`): the mesh has no cracks;
/// 2. with zero-width fins set aside (see [`without_fins`]), every edge shared
///    by a top (or slope) triangle and a wall triangle is used by exactly two
///    triangles (one top, one wall), and every edge that is not vertical is
///    used by at most two triangles. (A vertical edge may join four walls
///    where a cliff rim and a chasm rim touch in one point.)
fn assert_no_cracks(layers: &MapLayers, options: &MapMeshOptions, out: &MapMeshOutput) {
    let m = &out.terrain;
    let p = &m.positions;
    let xmax = (layers.width_cells() as f64 * options.cell_size as f64) as f32;
    let zmax = (layers.depth_cells() as f64 * options.cell_size as f64) as f32;
    let on_border = |a: [f32; 3], b: [f32; 3]| {
        (a[0] == 0.0 && b[0] == 0.0)
            || (a[0] == xmax && b[0] == xmax)
            || (a[2] == 0.0 && b[2] == 0.0)
            || (a[2] == zmax && b[2] == zmax)
    };
    for ((a, b), tris) in edge_uses(&m.indices) {
        let (pa, pb) = (p[a as usize], p[b as usize]);
        if tris.len() == 1 {
            let bottom = pa[1] < BOTTOM_Y && pb[1] < BOTTOM_Y;
            assert!(
                on_border(pa, pb) || bottom,
                "open edge {pa:?}-{pb:?} inside the map (a crack)"
            );
        }
    }
    let kept = without_fins(&m.indices);
    for ((a, b), tris) in edge_uses(&kept) {
        let (pa, pb) = (p[a as usize], p[b as usize]);
        let vertical = pa[0] == pb[0] && pa[2] == pb[2];
        assert!(
            vertical || tris.len() <= 2,
            "edge {pa:?}-{pb:?} is used by {} triangles",
            tris.len()
        );
        let walls = tris.iter().filter(|&&t| is_wall(p, tri(&kept, t))).count();
        if walls > 0 && walls < tris.len() {
            assert_eq!((tris.len(), walls), (2, 1), "rim edge {pa:?}-{pb:?}");
        }
    }
}

/// Checks that every wall triangle faces out of the higher ground: a top that
/// shares the wall's upper edge lies behind the wall, a top that shares its
/// lower edge lies in front of it.
fn assert_walls_face_out(out: &MapMeshOutput) {
    let m = &out.terrain;
    let p = &m.positions;
    let indices = without_fins(&m.indices);
    let edges = edge_uses(&indices);
    for t in 0..indices.len() / 3 {
        let w = tri(&indices, t);
        if !is_wall(p, w) {
            continue;
        }
        let n = face_normal(p, w);
        // A wall no taller than a ten-thousandth of its length (where soft
        // nodes bring two levels' heights within rounding of each other)
        // has no face to turn either way: its "above" and "below" are
        // rounding.
        // (|n| is twice the area, so |n| / longest edge is the height.)
        let longest_sq = (0..3)
            .map(|k| {
                let e = sub(p[w[(k + 1) % 3]], p[w[k]]);
                dot(e, e)
            })
            .fold(0.0f32, f32::max);
        if dot(n, n).sqrt() <= 1e-4 * longest_sq {
            continue;
        }
        for k in 0..3 {
            let (a, b, third) = (w[k], w[(k + 1) % 3], w[(k + 2) % 3]);
            let (pa, pb, pt) = (p[a], p[b], p[third]);
            if pa[0] == pb[0] && pa[2] == pb[2] {
                continue; // the wall's vertical edge
            }
            let key = (a.min(b) as u32, a.max(b) as u32);
            // The edge end above or below the third vertex.
            let same = if pa[0] == pt[0] && pa[2] == pt[2] {
                pa
            } else {
                pb
            };
            let upper_edge = pt[1] < same[1];
            let shared = &edges[&key];
            if shared.len() != 2 {
                continue;
            }
            for &other in shared {
                let o = tri(&indices, other);
                if other == t || is_wall(p, o) {
                    continue;
                }
                let c = [
                    (p[o[0]][0] + p[o[1]][0] + p[o[2]][0]) / 3.0,
                    (p[o[0]][2] + p[o[1]][2] + p[o[2]][2]) / 3.0,
                ];
                let mid = [(pa[0] + pb[0]) / 2.0, (pa[2] + pb[2]) / 2.0];
                let d = (c[0] - mid[0]) * n[0] + (c[1] - mid[1]) * n[2];
                let len = (n[0] * n[0] + n[2] * n[2]).sqrt();
                if d.abs() <= 1e-4 * len {
                    continue; // a sliver top: no side to tell
                }
                if upper_edge {
                    assert!(d < 0.0, "wall {w:?} faces into the ground above it");
                } else {
                    assert!(d > 0.0, "wall {w:?} faces away from the ground below it");
                }
            }
        }
    }
}

/// Index range, degenerate triangles, finite values, unit normals, tops'
/// normals up, blend range, water depth.
fn assert_basic(out: &MapMeshOutput) {
    let m = &out.terrain;
    let nv = m.positions.len();
    assert_eq!(m.normals.len(), nv);
    assert_eq!(m.splat.len(), nv);
    assert_eq!(m.blend.len(), nv);
    assert_eq!(m.indices.len() % 3, 0);
    let mut top_vertex = vec![false; nv];
    for t in 0..m.triangle_count() {
        let v = tri(&m.indices, t);
        assert!(v.iter().all(|&i| i < nv), "index out of range");
        assert!(
            v[0] != v[1] && v[1] != v[2] && v[0] != v[2],
            "index-degenerate triangle"
        );
        assert_ne!(face_normal(&m.positions, v), [0.0; 3], "zero-area triangle");
        if !is_wall(&m.positions, v) {
            for i in v {
                top_vertex[i] = true;
            }
        }
    }
    for (((p, n), blend), top) in m
        .positions
        .iter()
        .zip(&m.normals)
        .zip(&m.blend)
        .zip(&top_vertex)
    {
        assert!(p.iter().chain(n.iter()).all(|v| v.is_finite()));
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((len - 1.0).abs() < 1e-4, "normal {n:?} is not unit");
        assert!((0.0..=1.0).contains(blend));
        if *top {
            assert!(n[1] > 0.0, "top vertex normal {n:?} points down");
        }
    }
    let w = &out.water;
    let nw = w.positions.len();
    assert_eq!(w.normals.len(), nw);
    assert_eq!(w.depth.len(), nw);
    for t in 0..w.triangle_count() {
        let v = tri(&w.indices, t);
        assert!(v.iter().all(|&i| i < nw));
        assert!(v[0] != v[1] && v[1] != v[2] && v[0] != v[2]);
        let n = face_normal(&w.positions, v);
        assert!(n[1] > 0.0, "water faces down");
    }
    for i in 0..nw {
        assert!(w.positions[i].iter().all(|v| v.is_finite()));
        assert!(w.depth[i] >= 0.0 && w.depth[i].is_finite());
        let n = w.normals[i];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((len - 1.0).abs() < 1e-4 && n[1] > 0.0);
    }
}

/// The terrain top (not wall) over the point `(x, z)`: the barycentric
/// interpolation of the top triangles whose footprint holds the point
/// clear of its outline, the highest of them; or, for a point on no
/// footprint or within rounding of an outline (a sliver, the foot of a
/// cliff, where the pieces on both sides hold it), the lowest of those
/// within a small tolerance; `None` where there is no ground.
fn surface_at(out: &MapMeshOutput, x: f64, z: f64) -> Option<f32> {
    let m = &out.terrain;
    let p = &m.positions;
    let (mut inside, mut near): (Option<f64>, Option<f64>) = (None, None);
    for t in 0..m.triangle_count() {
        let v = tri(&m.indices, t);
        if is_wall(p, v) {
            continue;
        }
        let [a, b, c] = v.map(|i| p[i].map(f64::from));
        let (ux, uz) = (b[0] - a[0], b[2] - a[2]);
        let (wx, wz) = (c[0] - a[0], c[2] - a[2]);
        let det = ux * wz - uz * wx;
        if det == 0.0 {
            continue;
        }
        let (qx, qz) = (x - a[0], z - a[2]);
        let s = (qx * wz - qz * wx) / det;
        let u = (ux * qz - uz * qx) / det;
        let y = a[1] + s * (b[1] - a[1]) + u * (c[1] - a[1]);
        let low = s.min(u).min(1.0 - s - u);
        if low >= 1e-5 {
            inside = Some(inside.map_or(y, |b| b.max(y)));
        } else if low >= -1e-5 {
            near = Some(near.map_or(y, |b| b.min(y)));
        }
    }
    inside.or(near).map(|y| y as f32)
}

/// Checks that the water lies over wet ground only: at the centroid of
/// every water triangle there is a terrain top, and it is not above the
/// water (beyond a small epsilon), so water and ground never overlap.
fn assert_water_over_wet_ground(out: &MapMeshOutput) {
    let w = &out.water;
    for t in 0..w.triangle_count() {
        let v = tri(&w.indices, t);
        let c = [0, 1, 2].map(|k| v.iter().map(|&i| w.positions[i][k] as f64).sum::<f64>() / 3.0);
        let Some(g) = surface_at(out, c[0], c[2]) else {
            panic!("water triangle {t} at {c:?} lies over no ground");
        };
        let g = g as f64;
        let eps = 1e-4 * (1.0 + c[1].abs().max(g.abs()));
        assert!(
            g <= c[1] + eps,
            "water triangle {t} at {c:?} lies under the ground ({g})"
        );
    }
}

/// Meshes `layers` in chunks of `cw x cd` cells (one reused mesher) and
/// compares the triangles with the whole-map mesh, bit for bit.
fn assert_chunked_equals_whole(layers: &MapLayers, options: &MapMeshOptions, cw: u32, cd: u32) {
    let all = whole(layers, options);
    let mut mesher = MapMesher::new();
    let mut out = MapMeshOutput::default();
    let (mut terrain, mut water) = (Vec::new(), Vec::new());
    let mut z0 = 0;
    while z0 < layers.depth_cells() {
        let z1 = (z0 + cd).min(layers.depth_cells());
        let mut x0 = 0;
        while x0 < layers.width_cells() {
            let x1 = (x0 + cw).min(layers.width_cells());
            mesher
                .mesh(layers, CellRect::new(x0, z0, x1, z1), options, &mut out)
                .unwrap();
            terrain.extend(terrain_triangles(&out));
            water.extend(water_triangles(&out));
            x0 = x1;
        }
        z0 = z1;
    }
    terrain.sort_unstable();
    water.sort_unstable();
    assert_eq!(terrain.len(), all.terrain.triangle_count());
    assert!(
        terrain == terrain_triangles(&all),
        "chunked terrain differs"
    );
    assert!(water == water_triangles(&all), "chunked water differs");
}

// ---------------------------------------------------------------------------
// Random maps

fn level_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => (0u8..=4).prop_map(|k| k as f32),
        2 => (0u8..=4).prop_map(|k| k as f32 + 0.5),
        1 => Just(15.0f32),
        1 => Just(-0.5f32),
        4 => -0.5f32..5.5,
    ]
}

fn softness_value() -> impl Strategy<Value = f32> {
    prop_oneof![3 => Just(0.0f32), 2 => Just(1.0f32), 2 => 0.0f32..=1.0]
}

fn ground_value() -> impl Strategy<Value = f32> {
    prop_oneof![5 => Just(1.0f32), 1 => Just(0.0f32), 2 => Just(-1.0f32), 3 => -1.0f32..1.0]
}

fn height_value() -> impl Strategy<Value = f32> {
    prop_oneof![3 => Just(0.0f32), 1 => -0.5f32..0.5]
}

fn water_value() -> impl Strategy<Value = f32> {
    prop_oneof![3 => Just(NO_WATER), 1 => Just(0.5f32), 2 => -0.5f32..3.0]
}

fn splat_value() -> impl Strategy<Value = Splat> {
    (0u8..16, 0u8..16, any::<u8>()).prop_map(|(a, b, w)| Splat {
        ids: [a, b, 0, 0],
        weights: [255 - w, w, 0, 0],
    })
}

/// A random map of up to `max x max` cells.
fn random_map(max: u32) -> impl Strategy<Value = MapLayers> {
    (1..=max, 1..=max).prop_flat_map(|(w, d)| {
        let n = ((w + 1) * (d + 1)) as usize;
        (
            Just((w, d)),
            proptest::collection::vec(level_value(), n),
            proptest::collection::vec(softness_value(), n),
            proptest::collection::vec(ground_value(), n),
            proptest::collection::vec(height_value(), n),
            proptest::collection::vec(water_value(), n),
            proptest::collection::vec(splat_value(), n),
        )
            .prop_map(|((w, d), level, softness, ground, height, water, splat)| {
                let mut m = MapLayers::new(w, d).unwrap();
                m.level = level;
                m.softness = softness;
                m.ground = ground;
                m.height = height;
                m.water = water;
                m.splat = splat;
                m
            })
    })
}

fn random_options() -> impl Strategy<Value = MapMeshOptions> {
    (
        prop_oneof![Just(1.0f32), Just(0.5f32), 0.1f32..4.0],
        prop_oneof![Just(1.0f32), Just(0.75f32), 0.1f32..3.0],
    )
        .prop_map(|(cs, lh)| {
            MapMeshOptions::DEFAULT
                .with_cell_size(cs)
                .with_level_height(lh)
                .with_chasm_depth(DEEP)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn no_cracks_on_random_maps(layers in random_map(10), options in random_options()) {
        let out = whole(&layers, &options);
        assert_no_cracks(&layers, &options, &out);
    }

    #[test]
    fn basic_invariants_on_random_maps(layers in random_map(10), options in random_options()) {
        let out = whole(&layers, &options);
        assert_basic(&out);
        assert_walls_face_out(&out);
    }

    #[test]
    fn water_lies_over_wet_ground_on_random_maps(layers in random_map(8), options in random_options()) {
        let out = whole(&layers, &options);
        assert_water_over_wet_ground(&out);
    }

    #[test]
    fn chunked_equals_whole_on_random_maps(
        layers in random_map(12),
        options in random_options(),
        cw in 1u32..6,
        cd in 1u32..6,
    ) {
        assert_chunked_equals_whole(&layers, &options, cw, cd);
    }

    #[test]
    fn softness_one_gives_no_walls(layers in random_map(8), options in random_options()) {
        let mut layers = layers;
        layers.softness.iter_mut().for_each(|s| *s = 1.0);
        layers.ground.iter_mut().for_each(|g| *g = g.abs());
        let out = whole(&layers, &options);
        let m = &out.terrain;
        for t in 0..m.triangle_count() {
            prop_assert!(!is_wall(&m.positions, tri(&m.indices, t)));
        }
        // Every node's own vertex sits at node_surface.
        prop_assert!(m.triangle_count() >= 2 * (layers.width_cells() * layers.depth_cells()) as usize);
        assert_no_cracks(&layers, &options, &out);
    }

    #[test]
    fn reusing_a_mesher_gives_the_same_bytes(layers in random_map(8), options in random_options()) {
        let mut mesher = MapMesher::new();
        let mut a = MapMeshOutput::default();
        let mut b = MapMeshOutput::default();
        mesher.mesh(&layers, CellRect::whole(&layers), &options, &mut a).unwrap();
        let other = MapLayers::new(3, 3).unwrap();
        mesher.mesh(&other, CellRect::whole(&other), &options, &mut b).unwrap();
        mesher.mesh(&layers, CellRect::whole(&layers), &options, &mut b).unwrap();
        prop_assert!(a == b);
    }
}

/// Splat edits: `(node seed, new splat)` pairs applied modulo the node count.
fn splat_edits() -> impl Strategy<Value = Vec<(usize, Splat)>> {
    proptest::collection::vec((any::<usize>(), splat_value()), 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn attribute_update_equals_a_full_remesh(
        layers in random_map(10),
        options in random_options(),
        edits in splat_edits(),
        rect in (0u32..10, 0u32..10, 1u32..11, 1u32..11),
    ) {
        let (w, d) = (layers.width_cells(), layers.depth_cells());
        let x0 = rect.0 % w;
        let z0 = rect.1 % d;
        let cells = CellRect::new(x0, z0, (x0 + rect.2).min(w), (z0 + rect.3).min(d));
        let mut mesher = MapMesher::new();
        let mut kept = MapMeshOutput::default();
        mesher.mesh(&layers, cells, &options, &mut kept).unwrap();
        prop_assert_eq!(kept.terrain.splat_node.len(), kept.terrain.positions.len());
        let mut painted = layers.clone();
        let n = painted.node_count();
        for (i, s) in edits {
            painted.splat[i % n] = s;
        }
        MapMesher::update_attributes(&painted, &mut kept).unwrap();
        let mut fresh = MapMeshOutput::default();
        mesher.mesh(&painted, cells, &options, &mut fresh).unwrap();
        prop_assert!(kept == fresh);
    }
}

#[test]
fn attribute_update_rejects_foreign_meshes() {
    let big = plateaus(20, 20);
    let mut out = mesh(&big, CellRect::whole(&big), &MapMeshOptions::DEFAULT);
    let before = out.clone();
    let small = MapLayers::new(4, 4).unwrap();
    assert!(matches!(
        MapMesher::update_attributes(&small, &mut out),
        Err(MeshError::InvalidParameter {
            name: "splat_node",
            ..
        })
    ));
    assert!(out == before);
    let mut bad = big.clone();
    bad.splat[0].ids[0] = 16;
    assert!(MapMesher::update_attributes(&bad, &mut out).is_err());
    assert!(out == before);
    out.terrain.splat_node.pop();
    assert!(matches!(
        MapMesher::update_attributes(&big, &mut out),
        Err(MeshError::LengthMismatch { .. })
    ));
}

// ---------------------------------------------------------------------------
// A larger procedural map (the bench's kind of layer set)

/// Plateaus with several levels, a ramp, a chasm and a lake.
fn plateaus(w: u32, d: u32) -> MapLayers {
    let mut m = MapLayers::new(w, d).unwrap();
    for z in 0..=d {
        for x in 0..=w {
            let i = m.index(x, z).unwrap();
            let (fx, fz) = (x as f32, z as f32);
            let wave =
                (fx * 0.045).sin() * (fz * 0.037).cos() + 0.5 * (fx * 0.11 + fz * 0.07).sin();
            m.level[i] = (2.0 + 2.2 * wave).clamp(0.0, 15.0);
            m.softness[i] = if (fx - 0.3 * fz).rem_euclid(40.0) < 6.0 {
                1.0
            } else {
                0.0
            };
            m.height[i] = 0.1 * (fx * 0.5).sin() * (fz * 0.3).cos();
            let (cx, cz) = (fx - w as f32 * 0.7, fz - d as f32 * 0.3);
            m.ground[i] = (cx * cx + cz * cz).sqrt() - 9.5;
            let (lx, lz) = (fx - w as f32 * 0.25, fz - d as f32 * 0.7);
            m.water[i] = if (lx * lx + lz * lz).sqrt() < 14.0 {
                1.6
            } else {
                NO_WATER
            };
            m.splat[i] = Splat::single(((x / 7 + z / 5) % 4) as u8);
        }
    }
    m
}

#[test]
fn plateaus_chunks_of_64_equal_whole() {
    let layers = plateaus(150, 90);
    let options = MapMeshOptions::DEFAULT.with_chasm_depth(DEEP);
    assert_chunked_equals_whole(&layers, &options, 64, 64);
    let out = whole(&layers, &options);
    assert_no_cracks(&layers, &options, &out);
    assert_basic(&out);
    assert_walls_face_out(&out);
    assert!(!out.water.indices.is_empty());
}

#[test]
fn steady_chunk_loop_allocates_nothing() {
    let layers = plateaus(192, 128);
    let options = MapMeshOptions::DEFAULT;
    let mut mesher = MapMesher::new();
    let mut out = MapMeshOutput::default();
    let mut pass = || {
        let mut tris = 0;
        for cz in 0..2 {
            for cx in 0..3 {
                let rect = CellRect::new(cx * 64, cz * 64, cx * 64 + 64, cz * 64 + 64);
                mesher.mesh(&layers, rect, &options, &mut out).unwrap();
                tris += out.terrain.triangle_count() + out.water.triangle_count();
            }
        }
        tris
    };
    let warm = pass();
    let before = counting_alloc::allocs();
    let again = pass();
    assert_eq!(
        counting_alloc::allocs() - before,
        0,
        "a warmed-up loop allocated"
    );
    assert_eq!(warm, again);
    assert!(warm > 2 * 6 * 64 * 64);
}

// ---------------------------------------------------------------------------
// Hand-built maps

#[test]
fn flat_map_is_two_triangles_per_cell_at_zero() {
    let layers = MapLayers::new(7, 5).unwrap();
    let out = whole(&layers, &MapMeshOptions::DEFAULT);
    let m = &out.terrain;
    assert_eq!(m.triangle_count(), 2 * 7 * 5);
    assert_eq!(m.positions.len(), 8 * 6);
    assert!(m.positions.iter().all(|p| p[1] == 0.0));
    assert!(m.normals.iter().all(|n| *n == [0.0, 1.0, 0.0]));
    assert!(m.blend.iter().all(|&b| b == 0.0));
    assert!(m.splat.iter().all(|&s| s == Splat::single(0)));
    assert!(out.water.indices.is_empty());
    for t in 0..m.triangle_count() {
        assert!(face_normal(&m.positions, tri(&m.indices, t))[1] > 0.0);
    }
}

#[test]
fn flat_map_at_a_level_sits_at_that_level() {
    let mut layers = MapLayers::new(3, 3).unwrap();
    layers.level.iter_mut().for_each(|l| *l = 3.2);
    let options = MapMeshOptions::DEFAULT.with_level_height(0.5);
    let out = whole(&layers, &options);
    assert_eq!(out.terrain.triangle_count(), 18);
    assert!(out.terrain.positions.iter().all(|p| p[1] == 1.5));
}

fn plateau(softness: f32) -> MapLayers {
    let mut layers = MapLayers::new(8, 8).unwrap();
    for z in 3..=5 {
        for x in 3..=5 {
            let i = layers.index(x, z).unwrap();
            layers.level[i] = 1.0;
        }
    }
    layers.softness.iter_mut().for_each(|s| *s = softness);
    layers
}

#[test]
fn plateau_walls_are_one_level_high() {
    let options = MapMeshOptions::DEFAULT.with_level_height(2.5);
    let layers = plateau(0.0);
    let out = whole(&layers, &options);
    let m = &out.terrain;
    assert!(m.positions.iter().all(|p| p[1] == 0.0 || p[1] == 2.5));
    let mut walls = 0;
    for t in 0..m.triangle_count() {
        let v = tri(&m.indices, t);
        if is_wall(&m.positions, v) {
            walls += 1;
            let ys = v.map(|i| m.positions[i][1]);
            let (lo, hi) = (
                ys.iter().cloned().fold(f32::MAX, f32::min),
                ys.iter().cloned().fold(f32::MIN, f32::max),
            );
            assert_eq!((lo, hi), (0.0, 2.5));
        }
    }
    assert!(walls >= 8);
    // The rim is closed: walls go all the way round, so every wall vertex on
    // the upper row is shared with the plateau top.
    assert_no_cracks(&layers, &options, &out);
    assert_walls_face_out(&out);
    assert_basic(&out);
    // Wall vertices carry blend 1, interior tops 0.
    assert!(m.blend.contains(&1.0));
    assert!(m.blend.contains(&0.0));
}

#[test]
fn softness_one_plateau_is_a_smooth_hill() {
    let layers = plateau(1.0);
    let options = MapMeshOptions::DEFAULT;
    let out = whole(&layers, &options);
    let m = &out.terrain;
    for t in 0..m.triangle_count() {
        assert!(!is_wall(&m.positions, tri(&m.indices, t)));
        assert!(face_normal(&m.positions, tri(&m.indices, t))[1] > 0.0);
    }
    // Node vertices sit at node_surface.
    for z in 0..=8 {
        for x in 0..=8 {
            let i = layers.index(x, z).unwrap();
            let y = node_surface(layers.level[i], 1.0, 0.0, 1.0);
            assert!(
                m.positions
                    .iter()
                    .any(|p| p[0] == x as f32 && p[2] == z as f32 && p[1] == y)
            );
        }
    }
    assert_no_cracks(&layers, &options, &out);
}

#[test]
fn half_soft_wall_is_half_as_high() {
    let layers = plateau(0.5);
    let out = whole(&layers, &MapMeshOptions::DEFAULT);
    let m = &out.terrain;
    let mut walls = 0;
    for t in 0..m.triangle_count() {
        let v = tri(&m.indices, t);
        if is_wall(&m.positions, v) {
            walls += 1;
            let ys = v.map(|i| m.positions[i][1]);
            let lo = ys.iter().cloned().fold(f32::MAX, f32::min);
            let hi = ys.iter().cloned().fold(f32::MIN, f32::max);
            // Rim at level 0.5: upper lerp(1, 0.5, 0.5) = 0.75, lower lerp(0, 0.5, 0.5) = 0.25.
            assert_eq!((lo, hi), (0.25, 0.75));
        }
    }
    assert!(walls > 0);
}

#[test]
fn several_levels_in_one_cell() {
    // One node five levels up: the cells around it cross five rims.
    let mut layers = MapLayers::new(2, 2).unwrap();
    let i = layers.index(1, 1).unwrap();
    layers.level[i] = 5.0;
    let options = MapMeshOptions::DEFAULT;
    let out = whole(&layers, &options);
    let m = &out.terrain;
    let mut heights: Vec<u32> = m.positions.iter().map(|p| p[1] as u32).collect();
    heights.sort_unstable();
    heights.dedup();
    assert_eq!(heights, vec![0, 1, 2, 3, 4, 5]);
    assert_no_cracks(&layers, &options, &out);
    assert_walls_face_out(&out);
    assert_basic(&out);
    assert_chunked_equals_whole(&layers, &options, 1, 1);
}

#[test]
fn chasm_walls_drop_by_the_chasm_depth() {
    let mut layers = MapLayers::new(6, 6).unwrap();
    for z in 2..=4 {
        for x in 2..=4 {
            let i = layers.index(x, z).unwrap();
            layers.ground[i] = -1.0;
        }
    }
    let options = MapMeshOptions::DEFAULT.with_chasm_depth(3.0);
    let out = whole(&layers, &options);
    let m = &out.terrain;
    assert!(m.positions.iter().all(|p| p[1] == 0.0 || p[1] == -3.0));
    let bottoms = m.positions.iter().filter(|p| p[1] == -3.0).count();
    assert!(bottoms >= 8);
    // No top inside the chasm: the node (3, 3) is not a vertex.
    assert!(!m.positions.iter().any(|p| p[0] == 3.0 && p[2] == 3.0));
    assert_walls_face_out(&out);
    assert_basic(&out);
    let deep = MapMeshOptions::DEFAULT.with_chasm_depth(DEEP);
    assert_no_cracks(&layers, &deep, &whole(&layers, &deep));
}

#[test]
fn water_in_a_basin() {
    let mut layers = MapLayers::new(6, 6).unwrap();
    layers.level.iter_mut().for_each(|l| *l = 1.0);
    for z in 1..=5 {
        for x in 1..=5 {
            let i = layers.index(x, z).unwrap();
            layers.level[i] = 0.0;
        }
    }
    layers.water.iter_mut().for_each(|w| *w = 0.5);
    let out = whole(&layers, &MapMeshOptions::DEFAULT);
    let w = &out.water;
    // Water over the 4 x 4 inner cells fully, and up to the foot of the
    // cliff (the rim at level 0.5, half a cell out) in the ring around them:
    // it is half a level deep there, against the wall.
    assert!(w.triangle_count() >= 32);
    assert!(w.positions.iter().all(|p| p[1] == 0.5));
    assert!(w.depth.iter().all(|&d| d == 0.5));
    assert!(
        w.positions
            .iter()
            .all(|p| (0.5..=5.5).contains(&p[0]) && (0.5..=5.5).contains(&p[2]))
    );
    assert!(w.positions.iter().any(|p| p[0] == 0.5));
    assert!(w.positions.iter().any(|p| p[2] == 5.5));
    assert_basic(&out);
    assert_water_over_wet_ground(&out);
}

#[test]
fn a_level_lake_has_upright_normals_up_to_its_shore() {
    let mut layers = MapLayers::new(12, 12).unwrap();
    for z in 0..=12u32 {
        for x in 0..=12u32 {
            let i = layers.index(x, z).unwrap();
            let r = ((x as f32 - 6.0).powi(2) + (z as f32 - 6.0).powi(2)).sqrt();
            layers.height[i] = (r - 4.0) * 0.25;
            layers.water[i] = if r < 5.0 { 0.0 } else { NO_WATER };
        }
    }
    let options = MapMeshOptions::DEFAULT;
    let out = whole(&layers, &options);
    assert!(out.water.triangle_count() > 20);
    assert!(out.water.normals.iter().all(|n| *n == [0.0, 1.0, 0.0]));
    assert!(out.water.positions.iter().all(|p| p[1] == 0.0));
    assert_basic(&out);
    assert_chunked_equals_whole(&layers, &options, 5, 7);
}

#[test]
fn rim_vertices_take_the_lower_index_splat_and_wall_blend() {
    // Node (1, 0) one level up: rims cross the sides (0,0)-(1,0) and (1,0)-(2,0).
    let mut layers = MapLayers::new(2, 1).unwrap();
    for (i, s) in layers.splat.iter_mut().enumerate() {
        *s = Splat::single(i as u8);
    }
    let i = layers.index(1, 0).unwrap();
    layers.level[i] = 1.0;
    let out = whole(&layers, &MapMeshOptions::DEFAULT);
    let m = &out.terrain;
    let mut seen = [false; 2];
    for (k, p) in m.positions.iter().enumerate() {
        if p[2] != 0.0 {
            continue;
        }
        if p[0] == 0.5 {
            assert_eq!(m.splat[k], Splat::single(0), "rim on side (0,0)-(1,0)");
            assert_eq!(m.blend[k], 1.0);
            seen[0] = true;
        }
        if p[0] == 1.5 {
            assert_eq!(m.splat[k], Splat::single(1), "rim on side (1,0)-(2,0)");
            assert_eq!(m.blend[k], 1.0);
            seen[1] = true;
        }
        if p[0] == 0.0 || p[0] == 2.0 {
            assert_eq!(m.blend[k], 0.0);
        }
    }
    assert_eq!(seen, [true, true]);
    // Both copies (upper and lower) of each rim point exist.
    let at = |x: f32| {
        let mut ys: Vec<f32> = m
            .positions
            .iter()
            .filter(|p| p[0] == x && p[2] == 0.0)
            .map(|p| p[1])
            .collect();
        ys.sort_by(f32::total_cmp);
        ys
    };
    assert_eq!(at(0.5), vec![0.0, 1.0]);
    assert_eq!(at(1.5), vec![0.0, 1.0]);
}

#[test]
fn rect_of_one_cell_matches_the_whole() {
    let layers = plateau(0.0);
    assert_chunked_equals_whole(&layers, &MapMeshOptions::DEFAULT, 1, 1);
    assert_chunked_equals_whole(&layers, &MapMeshOptions::DEFAULT, 3, 5);
}

// ---------------------------------------------------------------------------
// Errors

fn err(layers: &MapLayers, rect: CellRect, options: &MapMeshOptions) -> MeshError {
    let mut out = MapMeshOutput::default();
    out.terrain.positions.push([9.0; 3]);
    let e = MapMesher::new()
        .mesh(layers, rect, options, &mut out)
        .unwrap_err();
    assert_eq!(
        out.terrain.positions,
        vec![[9.0; 3]],
        "an error changed the output"
    );
    e
}

#[test]
fn bad_rects_are_errors() {
    let layers = MapLayers::new(4, 3).unwrap();
    let o = MapMeshOptions::DEFAULT;
    assert!(matches!(
        err(&layers, CellRect::new(2, 0, 2, 3), &o),
        MeshError::InvalidParameter { .. }
    ));
    assert!(matches!(
        err(&layers, CellRect::new(3, 2, 1, 3), &o),
        MeshError::InvalidParameter { .. }
    ));
    assert!(matches!(
        err(&layers, CellRect::new(0, 0, 5, 3), &o),
        MeshError::RegionOutOfBounds { .. }
    ));
    assert!(matches!(
        err(&layers, CellRect::new(0, 0, 4, 4), &o),
        MeshError::RegionOutOfBounds { .. }
    ));
    assert!(matches!(
        err(&layers, CellRect::new(0, u32::MAX - 1, 4, u32::MAX), &o),
        MeshError::RegionOutOfBounds { .. }
    ));
    assert_eq!(CellRect::whole(&layers), CellRect::new(0, 0, 4, 3));
}

#[test]
fn bad_options_are_errors() {
    let layers = MapLayers::new(4, 3).unwrap();
    let r = CellRect::whole(&layers);
    let d = MapMeshOptions::DEFAULT;
    for o in [
        d.with_cell_size(0.0),
        d.with_cell_size(-1.0),
        d.with_cell_size(f32::NAN),
        d.with_cell_size(f32::INFINITY),
        d.with_cell_size(1e30),
        d.with_level_height(0.0),
        d.with_level_height(f32::NAN),
        d.with_level_height(1e30),
        d.with_chasm_depth(0.0),
        d.with_chasm_depth(-2.0),
        d.with_chasm_depth(f32::INFINITY),
    ] {
        assert!(
            matches!(err(&layers, r, &o), MeshError::InvalidParameter { .. }),
            "{o:?}"
        );
    }
}

#[test]
fn bad_layers_are_errors() {
    let base = MapLayers::new(4, 3).unwrap();
    let r = CellRect::whole(&base);
    let o = MapMeshOptions::DEFAULT;
    let i = base.index(2, 1).unwrap();
    type Change = Box<dyn Fn(&mut MapLayers)>;
    let cases: Vec<(&str, Change)> = vec![
        ("nan level", Box::new(move |m| m.level[i] = f32::NAN)),
        ("inf height", Box::new(move |m| m.height[i] = f32::INFINITY)),
        ("nan ground", Box::new(move |m| m.ground[i] = f32::NAN)),
        ("nan water", Box::new(move |m| m.water[i] = f32::NAN)),
        ("nan softness", Box::new(move |m| m.softness[i] = f32::NAN)),
        ("level 16", Box::new(move |m| m.level[i] = 16.0)),
        ("level -1", Box::new(move |m| m.level[i] = -1.0)),
        ("softness 1.5", Box::new(move |m| m.softness[i] = 1.5)),
        (
            "splat 16",
            Box::new(move |m| m.splat[i] = Splat::single(16)),
        ),
        ("huge height", Box::new(move |m| m.height[i] = 1e35)),
        (
            "short level",
            Box::new(|m| {
                m.level.pop();
            }),
        ),
        ("long water", Box::new(|m| m.water.push(0.0))),
    ];
    for (name, f) in cases {
        let mut m = base.clone();
        f(&mut m);
        let e = err(&m, r, &o);
        assert!(
            matches!(
                e,
                MeshError::NonFiniteSample { .. }
                    | MeshError::InvalidParameter { .. }
                    | MeshError::LengthMismatch { .. }
            ),
            "{name}: {e}"
        );
    }
}

#[test]
fn only_nodes_the_rect_reads_are_checked() {
    let mut layers = MapLayers::new(10, 10).unwrap();
    let far = layers.index(9, 9).unwrap();
    layers.height[far] = f32::NAN;
    // Cells 0..3 read nodes 0..=3 and the apron node 4.
    let mut out = MapMeshOutput::default();
    MapMesher::new()
        .mesh(
            &layers,
            CellRect::new(0, 0, 3, 3),
            &MapMeshOptions::DEFAULT,
            &mut out,
        )
        .unwrap();
    assert_eq!(out.terrain.triangle_count(), 18);
    // The apron node (next to the rect) is checked.
    let near = layers.index(4, 2).unwrap();
    layers.height[near] = f32::NAN;
    assert!(
        MapMesher::new()
            .mesh(
                &layers,
                CellRect::new(0, 0, 3, 3),
                &MapMeshOptions::DEFAULT,
                &mut out
            )
            .is_err()
    );
}

#[test]
fn options_defaults_and_setters() {
    let d = MapMeshOptions::default();
    assert_eq!(d, MapMeshOptions::DEFAULT);
    assert_eq!(
        (d.cell_size, d.level_height, d.chasm_depth),
        (1.0, 1.0, 2.0)
    );
    let o = d
        .with_cell_size(2.0)
        .with_level_height(3.0)
        .with_chasm_depth(4.0);
    assert_eq!(
        (o.cell_size, o.level_height, o.chasm_depth),
        (2.0, 3.0, 4.0)
    );
    let r = CellRect::new(1, 2, 4, 7);
    assert_eq!((r.width(), r.height(), r.is_empty()), (3, 5, false));
}

// ---------------------------------------------------------------------------
// Rim accuracy: round cliffs

/// Map side of the circle tests, in cells (room for a radius of 20 around
/// a centre in the middle).
const CIRCLE_SIDE: u32 = 48;

/// A round cliff as the `cliff-up` brush paints it, from level `base` to
/// `base + 1`: `level = base + clamp(r - dist + 0.5, 0, 1)`, whose rim (the
/// iso line `base + 0.5`) is the circle of radius `r` around `centre` (in
/// cells). `width` stretches the linear band across the rim (1 for the
/// brush; wider bands make a smooth field whose sampled iso line follows the
/// circle more closely).
fn circle_cliff(centre: [f64; 2], r: f64, base: u8, width: f64) -> MapLayers {
    let mut m = MapLayers::new(CIRCLE_SIDE, CIRCLE_SIDE).unwrap();
    for z in 0..=CIRCLE_SIDE {
        for x in 0..=CIRCLE_SIDE {
            let i = m.index(x, z).unwrap();
            let d = (x as f64 - centre[0]).hypot(z as f64 - centre[1]);
            let a = ((r - d) / width + 0.5).clamp(-0.45, 1.45);
            let a = if width == 1.0 { a.clamp(0.0, 1.0) } else { a };
            m.level[i] = (base as f64 + a) as f32;
        }
    }
    m
}

/// The marching-squares crossings of the rim `base + 0.5` of `layers`: on
/// every side between nodes of different level (as `level_index` sees
/// them), the point interpolated linearly from the lower-index node.
fn rim_crossings(layers: &MapLayers, base: u8, cs: f64) -> Vec<[f64; 2]> {
    crossings(&layers.level, layers, base as f64 + 0.5, cs, |v| {
        level_index(v) > base
    })
}

/// The marching-squares crossings of the iso line `iso` of `values` (a
/// layer of `layers`), nodes classified by `above`.
fn crossings(
    values: &[f32],
    layers: &MapLayers,
    iso: f64,
    cs: f64,
    above: impl Fn(f32) -> bool,
) -> Vec<[f64; 2]> {
    let [nx, nz] = layers.nodes();
    let mut out = Vec::new();
    let lv = |x: u32, z: u32| values[layers.index(x, z).unwrap()];
    for z in 0..nz {
        for x in 0..nx {
            for (x2, z2) in [(x + 1, z), (x, z + 1)] {
                if x2 >= nx || z2 >= nz {
                    continue;
                }
                let (a, b) = (lv(x, z), lv(x2, z2));
                if above(a) == above(b) {
                    continue;
                }
                let t = ((iso - a as f64) / (b as f64 - a as f64)).clamp(0.0, 1.0);
                out.push([
                    (x as f64 + t * (x2 - x) as f64) * cs,
                    (z as f64 + t * (z2 - z) as f64) * cs,
                ]);
            }
        }
    }
    out
}

/// The distinct x/z points of the wall vertices (the rim points).
fn rim_points(out: &MapMeshOutput) -> Vec<[f64; 2]> {
    let m = &out.terrain;
    let mut pts: Vec<[f64; 2]> = Vec::new();
    for t in 0..m.triangle_count() {
        let v = tri(&m.indices, t);
        if !is_wall(&m.positions, v) {
            continue;
        }
        for i in v {
            let p = m.positions[i];
            pts.push([p[0] as f64, p[2] as f64]);
        }
    }
    pts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    pts.dedup();
    pts
}

fn nearest(points: &[[f64; 2]], p: [f64; 2]) -> f64 {
    points
        .iter()
        .map(|q| (q[0] - p[0]).hypot(q[1] - p[1]))
        .fold(f64::INFINITY, f64::min)
}

/// Checks the rims of a round cliff: the rim points are exactly the
/// marching-squares crossings of the level field (both ways, within
/// `1e-4` cell), every rim point lies on a cell side (the rim is straight
/// through each cell: no vertex inside a cell, so no notch), and the rim
/// points lie within `tol` cells of the analytic circle. Returns the largest
/// distance to the circle.
fn check_round_rim(
    layers: &MapLayers,
    options: &MapMeshOptions,
    centre: [f64; 2],
    r: f64,
    base: u8,
    tol: f64,
) -> f64 {
    let out = whole(layers, options);
    let cs = options.cell_size as f64;
    let rim = rim_points(&out);
    let ms = rim_crossings(layers, base, cs);
    assert!(!rim.is_empty(), "no rim");
    let mut worst: f64 = 0.0;
    for &p in &rim {
        let off = nearest(&ms, p) / cs;
        assert!(
            off <= 1e-4,
            "rim point {p:?} is {off} cells off the marching-squares contour"
        );
        let (gx, gz) = (p[0] / cs, p[1] / cs);
        let on_side = (gx - gx.round()).abs() < 1e-5 || (gz - gz.round()).abs() < 1e-5;
        assert!(on_side, "rim point {p:?} lies inside a cell");
        let d = ((gx - centre[0]).hypot(gz - centre[1]) - r).abs();
        worst = worst.max(d);
    }
    for &p in &ms {
        let off = nearest(&rim, p) / cs;
        assert!(
            off <= 1e-4,
            "marching-squares crossing {p:?} is no rim point ({off} cells away)"
        );
    }
    assert!(
        worst <= tol,
        "rim {worst} cells off the circle (r = {r}, centre {centre:?}, allowed {tol})"
    );
    worst
}

/// Sub-cell offsets of a circle's centre: on a node, half-way, or anywhere.
fn centre_offset() -> impl Strategy<Value = f64> {
    prop_oneof![2 => Just(0.0f64), 1 => Just(0.5f64), 3 => 0.0f64..1.0]
}

/// Radii: whole numbers (through nodes when the centre is on one: 5 passes
/// through (3, 4)), halves, or anywhere in 2..=20.
fn circle_radius() -> impl Strategy<Value = f64> {
    prop_oneof![
        2 => (2u32..=20).prop_map(f64::from),
        1 => (4u32..40).prop_map(|h| h as f64 / 2.0),
        3 => 2.0f64..20.0,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A round cliff painted the brush's way: the rim is the field's
    /// marching-squares contour. (Against the analytic circle it can be no
    /// better than that contour, whose error comes from sampling the
    /// brush's one-cell band at the nodes: below 0.1 cell.)
    #[test]
    fn brush_cliff_rims_are_the_marching_squares_contour(
        ox in centre_offset(),
        oz in centre_offset(),
        r in circle_radius(),
        base in 0u8..3,
        soft in prop_oneof![Just(0.0f32), Just(0.5f32)],
    ) {
        let c = [24.0 + ox, 24.0 + oz];
        let mut layers = circle_cliff(c, r, base, 1.0);
        layers.softness.iter_mut().for_each(|s| *s = soft);
        let options = MapMeshOptions::DEFAULT;
        check_round_rim(&layers, &options, c, r, base, 0.1);
        assert_chunked_equals_whole(&layers, &options, 16, 16);
        let deep = options.with_chasm_depth(DEEP);
        assert_no_cracks(&layers, &deep, &whole(&layers, &deep));
    }

    /// A round chasm: its rim (the chasm walls' top) is the marching-squares
    /// contour of the ground field, straight through every cell.
    #[test]
    fn round_chasm_rims_are_the_marching_squares_contour(
        ox in centre_offset(),
        oz in centre_offset(),
        r in circle_radius(),
    ) {
        let c = [24.0 + ox, 24.0 + oz];
        let mut layers = MapLayers::new(CIRCLE_SIDE, CIRCLE_SIDE).unwrap();
        for z in 0..=CIRCLE_SIDE {
            for x in 0..=CIRCLE_SIDE {
                let i = layers.index(x, z).unwrap();
                let d = (x as f64 - c[0]).hypot(z as f64 - c[1]);
                layers.ground[i] = ((d - r) / 2.0).clamp(-1.0, 1.0) as f32;
            }
        }
        let options = MapMeshOptions::DEFAULT.with_chasm_depth(DEEP);
        let out = whole(&layers, &options);
        let rim = rim_points(&out);
        let ms = crossings(&layers.ground, &layers, 0.0, 1.0, |g| g >= 0.0);
        prop_assert!(!rim.is_empty());
        for &p in &rim {
            prop_assert!(nearest(&ms, p) <= 1e-4, "chasm rim point {:?} off the contour", p);
        }
        for &p in &ms {
            prop_assert!(nearest(&rim, p) <= 1e-4, "crossing {:?} is no chasm rim point", p);
        }
        assert_no_cracks(&layers, &options, &out);
    }

    /// A smooth round cliff (a level field linear in the distance over four
    /// cells): the rim follows the circle within the interpolation error of
    /// the field along a cell side, `1 / (8 (r - 1))`, which is 0.02 cell
    /// from a radius of 7.25 on.
    #[test]
    fn smooth_round_rims_follow_the_circle(
        ox in centre_offset(),
        oz in centre_offset(),
        r in circle_radius(),
        cs in prop_oneof![Just(1.0f32), Just(0.5f32), Just(2.0f32)],
    ) {
        let c = [24.0 + ox, 24.0 + oz];
        let layers = circle_cliff(c, r, 1, 4.0);
        let options = MapMeshOptions::DEFAULT.with_cell_size(cs);
        let bound = 1.0 / (8.0 * (r - 1.0)) + 1e-4;
        let tol = if r >= 7.25 { bound.min(0.02) } else { bound };
        check_round_rim(&layers, &options, c, r, 1, tol);
    }
}

#[test]
fn rim_through_nodes_has_no_notch() {
    // Radius 5 around a node passes exactly through the nodes (3, 4), (4, 3),
    // (5, 0), ... from the centre: the rim goes straight through them.
    let c = [24.0, 24.0];
    let layers = circle_cliff(c, 5.0, 0, 1.0);
    let options = MapMeshOptions::DEFAULT;
    let out = whole(&layers, &options);
    let rim = rim_points(&out);
    assert!(rim.contains(&[27.0, 28.0]) && rim.contains(&[29.0, 24.0]));
    check_round_rim(&layers, &options, c, 5.0, 0, 0.1);
    assert_no_cracks(&layers, &options, &out);
    assert_walls_face_out(&out);
}

// ---------------------------------------------------------------------------
// Ramps

/// A straight ramp: the level rises linearly from `base` to `base + 1` over
/// `width` cells along the direction `angle`, through the point `at`;
/// softness `soft` everywhere.
fn straight_ramp(angle: f64, width: f64, at: [f64; 2], soft: f32) -> MapLayers {
    let mut m = MapLayers::new(16, 16).unwrap();
    let (dx, dz) = (angle.cos(), angle.sin());
    for z in 0..=16u32 {
        for x in 0..=16u32 {
            let i = m.index(x, z).unwrap();
            let along = (x as f64 - at[0]) * dx + (z as f64 - at[1]) * dz;
            m.level[i] = (1.0 + (along / width).clamp(0.0, 1.0)) as f32;
            m.softness[i] = soft;
        }
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Across a straight ramp (any direction, width and softness) the
    /// ground never goes down: the surface sampled along lines in the
    /// ramp's direction is monotone.
    #[test]
    fn straight_ramps_are_monotone(
        angle in 0.0f64..std::f64::consts::TAU,
        width in prop_oneof![Just(1.0f64), 0.5f64..6.0],
        ax in 6.0f64..10.0,
        az in 6.0f64..10.0,
        soft in prop_oneof![Just(1.0f32), Just(0.0f32), 0.0f32..=1.0],
    ) {
        let layers = straight_ramp(angle, width, [ax, az], soft);
        let out = whole(&layers, &MapMeshOptions::DEFAULT);
        let (dx, dz) = (angle.cos(), angle.sin());
        for k in -4..=4 {
            let off = k as f64 * 0.73;
            let mut last: Option<f32> = None;
            for i in 0..=240 {
                let along = -6.0 + i as f64 * 0.05;
                let x = ax + along * dx - off * dz;
                let z = az + along * dz + off * dx;
                if !(0.0..=16.0).contains(&x) || !(0.0..=16.0).contains(&z) {
                    continue;
                }
                let Some(y) = surface_at(&out, x, z) else {
                    continue;
                };
                if let Some(prev) = last {
                    prop_assert!(y >= prev - 1e-4, "the ramp goes down at ({x}, {z}): {prev} -> {y}");
                }
                last = Some(y);
            }
        }
    }
}

#[test]
fn a_soft_straight_ramp_is_one_plane() {
    // Softness 1 and a level linear across the ramp: every top vertex lies
    // on the plane y = level, so the ramp is one flat slope without folds.
    for angle in [0.0f64, 0.3, 1.0, 2.5] {
        let (dx, dz) = (angle.cos(), angle.sin());
        let (at, width) = ([8.0, 8.0], 3.0);
        let layers = straight_ramp(angle, width, at, 1.0);
        let out = whole(&layers, &MapMeshOptions::DEFAULT);
        let m = &out.terrain;
        for t in 0..m.triangle_count() {
            assert!(!is_wall(&m.positions, tri(&m.indices, t)));
        }
        for p in &m.positions {
            let along = (p[0] as f64 - at[0]) * dx + (p[2] as f64 - at[1]) * dz;
            let level = 1.0 + (along / width).clamp(0.0, 1.0);
            // Off the plane only in cells the clamp at the ramp's ends bends.
            let inside = along > 1.5 && along < width - 1.5;
            if inside {
                assert!(
                    (p[1] as f64 - level).abs() < 1e-5,
                    "vertex {p:?} off the ramp's plane ({level})"
                );
            }
        }
    }
}

/// The steepest slope (rise over run) of any water triangle.
fn steepest_water(out: &MapMeshOutput) -> f64 {
    let w = &out.water;
    let mut worst = 0.0f64;
    for t in 0..w.triangle_count() {
        let v = tri(&w.indices, t);
        let p = v.map(|i| w.positions[i].map(|c| c as f64));
        let e1 = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
        let e2 = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
        let n = [
            e1[1] * e2[2] - e1[2] * e2[1],
            e1[2] * e2[0] - e1[0] * e2[2],
            e1[0] * e2[1] - e1[1] * e2[0],
        ];
        let horizontal = (n[0] * n[0] + n[2] * n[2]).sqrt();
        if n[1].abs() > 1e-12 {
            worst = worst.max(horizontal / n[1].abs());
        }
    }
    worst
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Water painted on part of a slope (a sheet `depth` above the ground
    /// on a round patch, none around it) comes down to the ground at the
    /// first dry node: no water triangle is steeper than the ground plus
    /// the drop from the sheet to the ground over one cell, however the
    /// slope runs. (It used to stand over the first dry node downhill and
    /// end in a cell-stepped edge one node farther out.)
    #[test]
    fn water_on_a_slope_ends_without_a_step(
        angle in 0.0f32..std::f32::consts::TAU,
        slope in 0.05f32..0.8,
        depth in 0.05f32..1.0,
        radius in 2.0f32..6.0,
        centre in (5.0f32..11.0, 5.0f32..11.0),
    ) {
        let mut layers = MapLayers::new(16, 16).unwrap();
        let (dx, dz) = (angle.cos() * slope, angle.sin() * slope);
        for z in 0..=16u32 {
            for x in 0..=16u32 {
                let i = layers.index(x, z).unwrap();
                let h = dx * x as f32 + dz * z as f32;
                layers.height[i] = h;
                let r = ((x as f32 - centre.0).powi(2) + (z as f32 - centre.1).powi(2)).sqrt();
                layers.water[i] = if r <= radius { h + depth } else { NO_WATER };
            }
        }
        let out = whole(&layers, &MapMeshOptions::DEFAULT);
        prop_assert!(out.water.triangle_count() > 0);
        let bound = (slope + depth) as f64 * 1.5 + 1e-3;
        let worst = steepest_water(&out);
        prop_assert!(worst <= bound, "a water triangle rises {} per unit (bound {})", worst, bound);
        assert_water_over_wet_ground(&out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `tops_apart` keeps every triangle where it was, bit for bit; every
    /// top triangle then uses only vertices with no wall blend and upward
    /// unit normals, walls keep their vertices, and every vertex still
    /// carries its splat node's splat.
    #[test]
    fn tops_apart_keeps_the_shape_and_frees_the_tops(layers in random_map(8), options in random_options()) {
        let out = whole(&layers, &options);
        let t = &out.terrain;
        let a = t.tops_apart();
        prop_assert_eq!(a.indices.len(), t.indices.len());
        prop_assert_eq!(a.positions.len(), a.normals.len());
        prop_assert_eq!(a.positions.len(), a.blend.len());
        prop_assert_eq!(a.positions.len(), a.splat.len());
        prop_assert_eq!(a.positions.len(), a.splat_node.len());
        let tops = t.top_normals();
        for (new, old) in a.indices.chunks_exact(3).zip(t.indices.chunks_exact(3)) {
            for k in 0..3 {
                prop_assert_eq!(a.positions[new[k] as usize], t.positions[old[k] as usize]);
            }
            // A wall (or a degenerate sliver): its face normal lies flat.
            let p = [0, 1, 2].map(|k| t.positions[old[k] as usize]);
            let e1 = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
            let e2 = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
            let f = [
                e1[1] * e2[2] - e1[2] * e2[1],
                e1[2] * e2[0] - e1[0] * e2[2],
                e1[0] * e2[1] - e1[1] * e2[0],
            ];
            let len = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
            if !(len > 0.0 && (f[1] / len).abs() > 1.0e-3) {
                prop_assert_eq!(new, old);
                continue;
            }
            for &v in old {
                prop_assert!(tops[v as usize].is_some());
            }
            for &v in new {
                let v = v as usize;
                prop_assert_eq!(a.blend[v], 0.0);
                let n = a.normals[v];
                prop_assert!(n[1] > 0.0, "normal {:?}", n);
                prop_assert!(((n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt() - 1.0).abs() < 1e-4);
            }
        }
        for v in 0..a.positions.len() {
            prop_assert_eq!(a.splat[v], layers.splat[a.splat_node[v] as usize]);
        }
    }
}

#[test]
fn a_cliff_gets_its_rim_vertices_copied_for_the_tops() {
    let mut layers = MapLayers::new(8, 8).unwrap();
    for z in 3..=5 {
        for x in 3..=5 {
            let i = layers.index(x, z).unwrap();
            layers.level[i] = 1.0;
        }
    }
    let out = whole(&layers, &MapMeshOptions::DEFAULT);
    let t = &out.terrain;
    let a = t.tops_apart();
    let rim = t.blend.iter().filter(|&&b| b > 0.0).count();
    assert!(rim > 0);
    // Every rim vertex with a top around it got one copy.
    let tops = t.top_normals();
    let shared = (0..t.positions.len())
        .filter(|&v| t.blend[v] > 0.0 && tops[v].is_some())
        .count();
    assert!(shared > 0);
    assert_eq!(a.positions.len(), t.positions.len() + shared);
    assert_basic(&out);
}
