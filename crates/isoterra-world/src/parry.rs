//! Conversion of collider polylines to parry2d shapes (feature `parry2d`).

use isoterra_mesh::Polyline;
use parry2d::math::Vector;
use parry2d::shape::{Polyline as ParryPolyline, PolylineFlags};

fn parts(line: &Polyline) -> Option<(Vec<Vector>, Vec<[u32; 2]>)> {
    let n = line.points.len();
    if n < 2 {
        return None;
    }
    let vertices: Vec<Vector> = line
        .points
        .iter()
        .map(|p| Vector::new(p[0], p[1]))
        .collect();
    let mut indices: Vec<[u32; 2]> = (1..n as u32).map(|i| [i - 1, i]).collect();
    if line.closed && n >= 3 {
        indices.push([n as u32 - 1, 0]);
    }
    Some((vertices, indices))
}

/// One two-sided parry2d polyline per input polyline (closed ones get their
/// closing segment); polylines with fewer than two points are skipped.
pub fn parry_polylines(polylines: &[Polyline]) -> Vec<ParryPolyline> {
    polylines
        .iter()
        .filter_map(parts)
        .map(|(v, i)| ParryPolyline::new(v, Some(i)))
        .collect()
}

/// Like [`parry_polylines`], but one-sided: since contours run
/// counter-clockwise around solid, the polylines only collide from outside
/// the terrain, which keeps crushed bodies from being pushed into it. Best
/// with closed loops (whole-world [`colliders`](crate::Side2dWorld::colliders)).
pub fn parry_oriented_polylines(polylines: &[Polyline]) -> Vec<ParryPolyline> {
    polylines
        .iter()
        .filter_map(parts)
        .map(|(v, i)| ParryPolyline::with_flags(v, Some(i), PolylineFlags::ORIENTED))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_loops_get_a_closing_segment() {
        let square = Polyline {
            points: vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]],
            closed: true,
        };
        let open = Polyline {
            points: vec![[0.0, 0.0], [1.0, 0.0]],
            closed: false,
        };
        let dot = Polyline {
            points: vec![[0.0, 0.0]],
            closed: false,
        };
        let out = parry_polylines(&[square.clone(), open, dot]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].num_segments(), 4);
        assert_eq!(out[1].num_segments(), 1);
        assert_eq!(parry_oriented_polylines(&[square])[0].num_segments(), 4);
    }
}
