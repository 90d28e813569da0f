//! The neighbour LODs of a heightmap selection, for stitching, and a view
//! frustum test for culling chunks. Which chunks to hold at which LOD is
//! [`desired_chunks`](crate::desired_chunks) with the
//! [`stream_config`](crate::HeightmapSource::stream_config) of the world's
//! grid, and streaming them is the [`StreamScheduler`](crate::StreamScheduler)'s
//! job.

use std::collections::BTreeMap;

use crate::WorldError;

/// The neighbour LODs to pass to the mesher for every chunk of a selection
/// (−x, +x, −z, +z): the neighbour's LOD when it is exactly one coarser, the
/// chunk's own LOD otherwise (finer or missing neighbours).
pub fn neighbour_lods(selection: &[([i32; 2], u8)]) -> Vec<[u8; 4]> {
    let map: BTreeMap<[i32; 2], u8> = selection.iter().copied().collect();
    selection
        .iter()
        .map(|&(c, lod)| {
            let mut out = [lod; 4];
            for (k, d) in [[-1, 0], [1, 0], [0, -1], [0, 1]].into_iter().enumerate() {
                let n = [c[0].wrapping_add(d[0]), c[1].wrapping_add(d[1])];
                if map.get(&n) == Some(&(lod + 1)) {
                    out[k] = lod + 1;
                }
            }
            out
        })
        .collect()
}

/// A view frustum as six planes, for culling chunk boxes.
///
/// Built from a view-projection matrix given as 16 floats in column-major
/// order (as glTF, WebGL and most math libraries store it: element `(row r,
/// column c)` is `m[c * 4 + r]`), mapping world points to clip space. The
/// clip convention is OpenGL's: a point is visible when `-w <= x, y, z <= w`.
/// A matrix built for a `[0, w]` depth range (Direct3D, Vulkan, wgpu) also
/// works: its near plane is then tested as `z >= -w`, which only keeps a few
/// boxes just behind the near plane (the test stays conservative).
///
/// The test is conservative: a box is reported outside only when it lies
/// entirely on the outer side of one plane; a box that is outside but
/// straddles several planes near a corner may be kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frustum {
    planes: [[f64; 4]; 6],
}

impl Frustum {
    /// The frustum of a column-major view-projection matrix.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] when an element is not finite.
    pub fn from_view_projection(m: &[f32; 16]) -> Result<Self, WorldError> {
        if !m.iter().all(|v| v.is_finite()) {
            return Err(WorldError::param(
                "view_projection",
                format!("{m:?}"),
                "every element must be finite",
            ));
        }
        let row = |r: usize| -> [f64; 4] { std::array::from_fn(|c| f64::from(m[c * 4 + r])) };
        let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
        let add = |a: [f64; 4], b: [f64; 4]| -> [f64; 4] { std::array::from_fn(|i| a[i] + b[i]) };
        let sub = |a: [f64; 4], b: [f64; 4]| -> [f64; 4] { std::array::from_fn(|i| a[i] - b[i]) };
        Ok(Frustum {
            planes: [
                add(r3, r0),
                sub(r3, r0),
                add(r3, r1),
                sub(r3, r1),
                add(r3, r2),
                sub(r3, r2),
            ],
        })
    }

    /// True unless the box `[min, max]` lies entirely outside one plane.
    pub fn intersects_aabb(&self, min: [f32; 3], max: [f32; 3]) -> bool {
        self.planes.iter().all(|p| {
            // The box corner farthest along the plane normal.
            let v: [f64; 3] = std::array::from_fn(|i| {
                if p[i] >= 0.0 {
                    f64::from(max[i])
                } else {
                    f64::from(min[i])
                }
            });
            p[0] * v[0] + p[1] * v[1] + p[2] * v[2] + p[3] >= 0.0
        })
    }

    /// True when the point is inside or on the frustum.
    pub fn contains_point(&self, p: [f32; 3]) -> bool {
        self.intersects_aabb(p, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbour_lods_only_report_one_coarser() {
        let sel = vec![([0, 0], 1u8), ([1, 0], 2), ([-1, 0], 0), ([0, 1], 1)];
        let n = neighbour_lods(&sel);
        assert_eq!(n[0], [1, 2, 1, 1]);
    }
}
