//! The grass rim of a side-view world: a strip just inside the stretches of
//! ground contour that face up and are open to the sky (dug crater rims
//! included, cave floors not). The editor draws it, and the glb and PNG
//! exports carry it.

use isoterra_field::Field2;
use isoterra_mesh::{Polyline, StripMesh, edge_strip};

use super::chunk::Side2dChunk;
use super::world::Side2dWorld;
use crate::WorldError;

/// Width of the grass rim, in cells.
pub const GRASS_RIM_CELLS: f32 = 0.9;
/// A contour segment carries grass when its outward normal points up at
/// least this much (a slope up to about 70 degrees).
pub(crate) const GRASS_MIN_UP: f32 = 0.35;

/// Whether nothing solid lies straight above world point `p`: the nodes of
/// its column, from the first one above it to the top of the field, are all
/// below `iso`. Cave floors are covered; crater floors are open.
pub(crate) fn open_to_sky(field: &Field2, iso: f32, p: [f32; 2]) -> bool {
    let g = field.to_grid(p);
    if !(g[0].is_finite() && g[1].is_finite()) {
        return false;
    }
    let x = g[0]
        .round()
        .clamp(0.0, field.width().saturating_sub(1) as f32) as u32;
    let from = (g[1] + 0.5).ceil().max(0.0) as u32;
    (from..field.height()).all(|y| field.get(x, y) < iso)
}

/// The stretches of `lines` whose ground faces up and, at the middle of each
/// segment, is `open` (to the sky). Contours run with the solid on their
/// left, so the outward normal of a segment `a -> b` is `(dy, -dx)`: up
/// where the segment runs towards -x.
pub(crate) fn upward_runs(lines: &[Polyline], open: impl Fn([f32; 2]) -> bool) -> Vec<Polyline> {
    let mut runs = Vec::new();
    for line in lines {
        let n = line.points.len();
        let segments = if line.closed { n } else { n.saturating_sub(1) };
        let mut run: Vec<[f32; 2]> = Vec::new();
        for i in 0..segments {
            let (a, b) = (line.points[i], line.points[(i + 1) % n]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let len = dx.hypot(dy);
            let up = len > 0.0
                && -dx >= GRASS_MIN_UP * len
                && open([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0]);
            if up {
                if run.is_empty() {
                    run.push(a);
                }
                run.push(b);
            } else if run.len() >= 2 {
                runs.push(Polyline::new(std::mem::take(&mut run), false));
            } else {
                run.clear();
            }
        }
        if run.len() >= 2 {
            runs.push(Polyline::new(run, false));
        }
    }
    runs
}

/// The opacity of the grass rim at strip coordinate `v` (0 on the contour,
/// 1 on the inner edge): 0.92 over the outer half, fading smoothly to 0.
pub fn grass_alpha(v: f32) -> f32 {
    let t = ((v - 0.55) / 0.45).clamp(0.0, 1.0);
    0.92 * (1.0 - t * t * (3.0 - 2.0 * t))
}

impl Side2dWorld {
    /// The stretches of `chunk`'s contours that carry grass: those whose
    /// outward normal points up (slopes up to about 70 degrees) with
    /// nothing solid straight above them (crater floors yes, cave floors
    /// no).
    pub fn grass_runs(&self, chunk: &Side2dChunk) -> Vec<Polyline> {
        let field = self.field();
        let iso = self.params().iso;
        upward_runs(&chunk.polylines, |p| open_to_sky(field, iso, p))
    }

    /// The grass rim of `chunk` as a strip [`GRASS_RIM_CELLS`] wide just
    /// inside its [`grass_runs`](Self::grass_runs) (`v` = 0 on the contour,
    /// 1 on the inner edge), written into `out` (cleared first).
    ///
    /// # Errors
    ///
    /// A contour point that is not finite (`out` is left empty).
    pub fn grass_strip(&self, chunk: &Side2dChunk, out: &mut StripMesh) -> Result<(), WorldError> {
        let width = GRASS_RIM_CELLS * self.field().cell_size();
        let r = edge_strip(&self.grass_runs(chunk), width, out);
        if r.is_err() {
            out.clear();
        }
        Ok(r?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grass_grows_on_open_ground_that_faces_up() {
        // A closed loop, solid inside (counter-clockwise): bottom edge runs
        // +x (faces down), top edge runs -x (faces up).
        let square = Polyline::new(vec![[0.0, 0.0], [4.0, 0.0], [4.0, 2.0], [0.0, 2.0]], true);
        let runs = upward_runs(&[square], |_| true);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].points, vec![[4.0, 2.0], [0.0, 2.0]]);
        // A crater's bowl (a surface running -x, down then up) is grass all along.
        let bowl = Polyline::new(
            vec![[10.0, 5.0], [8.0, 3.0], [6.0, 2.5], [4.0, 3.0], [2.0, 5.0]],
            false,
        );
        assert_eq!(
            upward_runs(std::slice::from_ref(&bowl), |_| true)[0]
                .points
                .len(),
            5
        );
        // Covered ground (a cave floor) gets none.
        assert!(upward_runs(&[bowl], |_| false).is_empty());
        // The sky test: open above the ground, covered under a roof.
        let mut field = Field2::new(4, 8, -1.0).unwrap();
        for x in 0..4 {
            field.set(x, 0, 1.0).unwrap();
            field.set(x, 1, 1.0).unwrap();
        }
        assert!(open_to_sky(&field, 0.0, [1.0, 1.5]));
        field.set(1, 6, 1.0).unwrap();
        assert!(!open_to_sky(&field, 0.0, [1.0, 1.5]));
        assert!(open_to_sky(&field, 0.0, [3.0, 1.5]));
    }
}
