//! Chaining contour segments into polylines, and simplification.
//! (API skeleton; the implementation replaces every `todo!()`.)

use crate::{MeshError, Segments};

/// A contour polyline. Closed loops do not repeat the first point at the end.
/// Outer boundaries run counter-clockwise, holes clockwise (solid on the left).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Polyline {
    /// Points in world units.
    pub points: Vec<[f32; 2]>,
    /// True for a closed loop.
    pub closed: bool,
}

/// Joins segments (from one or several chunks) into polylines by their global keys.
#[derive(Debug, Default)]
pub struct ContourJoiner {
    _scratch: Vec<u32>,
}

impl ContourJoiner {
    /// A joiner with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Chains all segments of `parts` into `out` (cleared first): open chains
    /// from their ends first, then closed loops.
    pub fn join(&mut self, parts: &[&Segments], out: &mut Vec<Polyline>) {
        let _ = (parts, out);
        todo!()
    }
}

/// Signed area of a closed polygon (positive when counter-clockwise).
pub fn signed_area(points: &[[f32; 2]]) -> f64 {
    let _ = points;
    todo!()
}

/// Ramer–Douglas–Peucker simplification with `tolerance` in world units.
pub fn simplify_rdp(line: &Polyline, tolerance: f32) -> Result<Polyline, MeshError> {
    let _ = (line, tolerance);
    todo!()
}

/// Greedy (radial-distance / perpendicular) simplification with `tolerance` in world units.
pub fn simplify_greedy(line: &Polyline, tolerance: f32) -> Result<Polyline, MeshError> {
    let _ = (line, tolerance);
    todo!()
}
