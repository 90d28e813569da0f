//! Helpers shared by the marching squares test files.
#![allow(dead_code)]

use isoterra_field::Field2;
use isoterra_mesh::{
    CellRect, ContourJoiner, MarchingSquares, Polyline, SquaresOptions, SquaresOutput,
};
use proptest::prelude::*;

/// A node value: many exactly at the iso level 0, some at +-1, some random.
pub fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => Just(0.0f32),
        2 => Just(-1.0f32),
        2 => Just(1.0f32),
        3 => -2.0f32..2.0,
    ]
}

/// A random field of 2..=max nodes per side, with a random origin and cell size.
pub fn field(max: u32) -> impl Strategy<Value = Field2> {
    (2..=max, 2..=max)
        .prop_flat_map(|(w, h)| {
            (
                Just(w),
                Just(h),
                proptest::collection::vec(value(), (w * h) as usize),
                prop_oneof![Just(1.0f32), Just(0.25f32), 0.1f32..3.0],
                prop_oneof![
                    Just([0.0f32, 0.0]),
                    (-50.0f32..50.0, -50.0f32..50.0).prop_map(|(a, b)| [a, b])
                ],
            )
        })
        .prop_map(|(w, h, v, cs, o)| {
            Field2::from_values(w, h, v)
                .unwrap()
                .with_cell_size(cs)
                .unwrap()
                .with_origin(o)
                .unwrap()
        })
}

/// The same field with every border node strictly below iso 0.
pub fn with_empty_border(mut f: Field2) -> Field2 {
    f.clear_border(-1.0).unwrap();
    f
}

pub fn mesh_rect(field: &Field2, rect: CellRect, opts: &SquaresOptions) -> SquaresOutput {
    let mut out = SquaresOutput::default();
    MarchingSquares::new()
        .mesh(field, None, rect, opts, &mut out)
        .unwrap();
    out
}

pub fn mesh_whole(field: &Field2) -> SquaresOutput {
    mesh_rect(field, CellRect::whole(field), &SquaresOptions::DEFAULT)
}

/// Rects of about `n` cells tiling the field.
pub fn tiles(field: &Field2, nx: u32, ny: u32) -> Vec<CellRect> {
    let (cw, ch) = (field.width() - 1, field.height() - 1);
    let mut v = Vec::new();
    let mut y = 0;
    while y < ch {
        let mut x = 0;
        while x < cw {
            v.push(CellRect::new(x, y, (x + nx).min(cw), (y + ny).min(ch)));
            x += nx;
        }
        y += ny;
    }
    v
}

/// Signed area (f64) of triangle `t` of a fill mesh.
pub fn tri_area(pos: &[[f32; 3]], t: &[u32]) -> f64 {
    let a = pos[t[0] as usize];
    let b = pos[t[1] as usize];
    let c = pos[t[2] as usize];
    let (abx, aby) = (b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64);
    let (acx, acy) = (c[0] as f64 - a[0] as f64, c[1] as f64 - a[1] as f64);
    0.5 * (abx * acy - aby * acx)
}

pub fn fill_area(out: &SquaresOutput) -> f64 {
    out.fill
        .indices
        .chunks(3)
        .map(|t| tri_area(&out.fill.positions, t))
        .sum()
}

pub fn join(parts: &[&isoterra_mesh::Segments]) -> Vec<Polyline> {
    let mut lines = Vec::new();
    ContourJoiner::new().join(parts, &mut lines);
    lines
}

pub fn bits2(p: [f32; 2]) -> [u32; 2] {
    [p[0].to_bits(), p[1].to_bits()]
}

/// A loop rotated to start at its smallest point (by bits), for order-free comparison.
pub fn canonical(line: &Polyline) -> (bool, Vec<[u32; 2]>) {
    let mut b: Vec<[u32; 2]> = line.points.iter().map(|&p| bits2(p)).collect();
    if line.closed
        && let Some(i) = (0..b.len()).min_by_key(|&i| b[i])
    {
        b.rotate_left(i);
    }
    (line.closed, b)
}

pub fn canonical_set(lines: &[Polyline]) -> Vec<(bool, Vec<[u32; 2]>)> {
    let mut v: Vec<_> = lines.iter().map(canonical).collect();
    v.sort();
    v
}

pub fn rel_close(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + abs
}

/// A 1200 x 2049 field with more than 2^21 crossings, so the tracer walks
/// several chains and loops at a time: 1,100 columns of open chains that run
/// the field's height, and loops in the rest.
pub fn long_chains_field() -> Field2 {
    Field2::from_fn(1200, 2049, |x, y| {
        if x < 1100 {
            let s = if x % 2 == 0 { 1.0 } else { -1.0 };
            s * (1.0 + 0.5 * (y as f32 * 0.1 + x as f32).sin())
        } else {
            (x as f32 * 0.4).sin() + (y as f32 * 0.4).sin() - 0.5
        }
    })
    .unwrap()
}
