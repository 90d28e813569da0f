//! Collider contours of every cliff level.

use isoterra_field::Field2;
use isoterra_field::map::{MAX_LEVEL, MapLayers};
use isoterra_mesh::{ContourTracer, Polyline, Simplifier};

use super::check_layers;
use crate::WorldError;

/// The simplification tolerance of [`level_colliders`] suggested for game
/// colliders: 0.05 cell.
pub const DEFAULT_COLLIDER_TOLERANCE: f32 = 0.05;

/// The closed outlines of one level's region.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelContour {
    /// The level: `0` for the ground itself (its outlines surround land and
    /// cut out chasms), `k >= 1` for the region of nodes on level `k` or above.
    pub level: u8,
    /// Closed polylines in cell units (the closing segment from the last point
    /// back to the first is implied; the first point is not repeated). They
    /// run counter-clockwise around the region and clockwise around its holes
    /// (the region is on the left).
    pub polylines: Vec<Vec<[f32; 2]>>,
}

/// Contours of each level's region, simplified with Ramer–Douglas–Peucker so
/// that every point of the exact contour stays within `tolerance` cells of
/// the simplified one ([`DEFAULT_COLLIDER_TOLERANCE`] is a good choice; `0`
/// keeps every non-collinear point).
///
/// * Level 0 is the ground: the iso line 0 of the `ground` layer.
/// * Level `k` in `1..=15` is the iso line `k - 0.5` of the `level` layer
///   (the rim between levels `k - 1` and `k`), only for levels some node
///   reaches.
///
/// Contours come from marching squares on each layer padded with one ring of
/// empty nodes, with points outside the map moved onto its border, so every
/// contour is closed: a region that touches the border is closed along it.
/// Levels without any region (for example no land at all) are left out.
///
/// Errors when the layers are invalid or `tolerance` is negative or not finite.
pub fn level_colliders(map: &MapLayers, tolerance: f32) -> Result<Vec<LevelContour>, WorldError> {
    check_layers(map)?;
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(WorldError::param(
            "tolerance",
            tolerance,
            "must be finite and at least zero (cells)",
        ));
    }
    let top = (0..map.node_count())
        .map(|i| map.level_of(i))
        .max()
        .unwrap_or(0)
        .min(MAX_LEVEL);
    let mut tracer = ContourTracer::new();
    let mut simplifier = Simplifier::new();
    let mut lines = Vec::new();
    let mut simple = Polyline::default();
    let mut out = Vec::new();
    for level in 0..=top {
        let (values, iso) = if level == 0 {
            (&map.ground, 0.0)
        } else {
            (&map.level, level as f32 - 0.5)
        };
        let field = padded(map, values, iso)?;
        tracer.contour_lines(&field, iso, &mut lines)?;
        let (w, d) = (map.width_cells() as f32, map.depth_cells() as f32);
        let mut contour = LevelContour {
            level,
            polylines: Vec::new(),
        };
        for line in &lines {
            let mut pts: Vec<[f32; 2]> = Vec::with_capacity(line.points.len());
            for p in &line.points {
                let q = [p[0].clamp(0.0, w), p[1].clamp(0.0, d)];
                if pts.last() != Some(&q) {
                    pts.push(q);
                }
            }
            while pts.len() > 1 && pts.first() == pts.last() {
                pts.pop();
            }
            if pts.len() < 3 {
                continue;
            }
            let closed = Polyline::new(pts, true);
            simplifier.rdp(&closed, tolerance, &mut simple)?;
            if simple.points.len() >= 3 {
                contour.polylines.push(simple.points.clone());
            }
        }
        if !contour.polylines.is_empty() {
            out.push(contour);
        }
    }
    Ok(out)
}

/// The layer as a field with one extra ring of nodes below `iso` all around,
/// origin `[-1, -1]`, so that node `(x, z)` of the map sits at `(x, z)`.
fn padded(map: &MapLayers, values: &[f32], iso: f32) -> Result<Field2, WorldError> {
    let [nx, nz] = map.nodes();
    let empty = iso - 1.0;
    let field = Field2::from_fn(nx + 2, nz + 2, |x, z| {
        if x == 0 || z == 0 || x == nx + 1 || z == nz + 1 {
            empty
        } else {
            values[(z - 1) as usize * nx as usize + (x - 1) as usize]
        }
    })?;
    Ok(field.with_origin([-1.0, -1.0])?)
}
