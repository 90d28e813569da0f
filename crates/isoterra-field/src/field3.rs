use crate::FieldError;

/// A corner-sampled 3D grid of `f32` densities.
///
/// ```text
///        y
///        ^  (0,1,1)-----(1,1,1)        2 x 2 x 2 nodes make one cell.
///        | /|          /|              Node (x, y, z) is at
///   (0,1,0)-----(1,1,0) |                origin + (x, y, z) * cell_size.
///        | |        |   |              Storage is row-major, x fastest,
///        | (0,0,1)--|--(1,0,1)         then y, then z:
///        |/         |  /                 index = (z * height + y) * width + x.
///   (0,0,0)-----(1,0,0) -----> x
///       /
///      z                               Axes are right-handed, y up.
/// ```
///
/// Every value is finite: the validated constructors reject NaN and infinities,
/// and [`Field3::set`] refuses them too. The node count is capped by
/// [`Field3::MAX_NODES`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field3 {
    width: u32,
    height: u32,
    depth: u32,
    cell_size: f32,
    origin: [f32; 3],
    values: Vec<f32>,
}

impl Field3 {
    /// The largest number of nodes a 3D field may hold: 2^30 (1,073,741,824
    /// nodes, 1024^3, 4 GiB of `f32`). This is what a whole-volume mesh with
    /// 32-bit vertex ids can take (fewer than four vertices per node); whether
    /// a field this large fits in memory is up to the machine, and the
    /// readers report an allocation that fails.
    pub const MAX_NODES: u64 = 1 << 30;

    /// Checks a size and returns the node count.
    ///
    /// # Errors
    ///
    /// [`FieldError::InvalidSize`] when an axis has fewer than 2 nodes (its
    /// `width` / `height` carry x / y; the reason names the axis), and
    /// [`FieldError::TooLarge`] when the node count overflows or exceeds
    /// [`Field3::MAX_NODES`].
    pub fn check_size(width: u64, height: u64, depth: u64) -> Result<usize, FieldError> {
        if width < 2 || height < 2 {
            return Err(FieldError::InvalidSize {
                width,
                height,
                reason: "a 3D field needs at least 2 nodes along x, y and z (one cell)",
            });
        }
        if depth < 2 {
            return Err(FieldError::InvalidSize {
                width,
                height,
                reason: "the depth (z) of a 3D field must be at least 2 nodes (one cell)",
            });
        }
        let fits = |n: u64| n <= u32::MAX as u64;
        match width.checked_mul(height).and_then(|n| n.checked_mul(depth)) {
            Some(n) if n <= Self::MAX_NODES && fits(width) && fits(height) && fits(depth) => {
                Ok(n as usize)
            }
            _ => Err(FieldError::TooLarge {
                width,
                height,
                depth,
                max: Self::MAX_NODES,
                max_mib: Self::MAX_NODES * 4 / (1024 * 1024),
            }),
        }
    }

    /// A field of `width x height x depth` nodes, every node set to `fill`.
    pub fn new(width: u32, height: u32, depth: u32, fill: f32) -> Result<Self, FieldError> {
        let n = Self::check_size(width as u64, height as u64, depth as u64)?;
        if !fill.is_finite() {
            return Err(FieldError::NonFinite {
                index: 0,
                value: fill,
            });
        }
        Ok(Field3 {
            width,
            height,
            depth,
            cell_size: 1.0,
            origin: [0.0; 3],
            values: vec![fill; n],
        })
    }

    /// A field from row-major values (x fastest, then y, then z). Rejects a wrong
    /// length and non-finite values, naming the first bad index.
    pub fn from_values(
        width: u32,
        height: u32,
        depth: u32,
        values: Vec<f32>,
    ) -> Result<Self, FieldError> {
        let n = Self::check_size(width as u64, height as u64, depth as u64)?;
        if values.len() != n {
            return Err(FieldError::LengthMismatch {
                expected: n,
                got: values.len(),
            });
        }
        if let Some(index) = crate::first_non_finite(&values) {
            return Err(FieldError::NonFinite {
                index,
                value: values[index],
            });
        }
        Ok(Field3 {
            width,
            height,
            depth,
            cell_size: 1.0,
            origin: [0.0; 3],
            values,
        })
    }

    /// A field whose node `(x, y, z)` holds `f(x, y, z)`, called in storage
    /// order. Rejects non-finite results, naming the first bad index.
    pub fn from_fn(
        width: u32,
        height: u32,
        depth: u32,
        mut f: impl FnMut(u32, u32, u32) -> f32,
    ) -> Result<Self, FieldError> {
        let n = Self::check_size(width as u64, height as u64, depth as u64)?;
        let mut values = crate::huge_pages::with_capacity(n);
        for z in 0..depth {
            for y in 0..height {
                for x in 0..width {
                    values.push(f(x, y, z));
                }
            }
        }
        Self::from_values(width, height, depth, values)
    }

    /// Sets the distance between neighbouring nodes (finite, > 0).
    pub fn with_cell_size(mut self, cell_size: f32) -> Result<Self, FieldError> {
        if !(cell_size.is_finite() && cell_size > 0.0) {
            return Err(FieldError::param(
                "cell_size",
                cell_size,
                "must be finite and greater than zero",
            ));
        }
        self.cell_size = cell_size;
        Ok(self)
    }

    /// Sets the world position of node `(0, 0, 0)` (finite).
    pub fn with_origin(mut self, origin: [f32; 3]) -> Result<Self, FieldError> {
        if !origin.iter().all(|c| c.is_finite()) {
            return Err(FieldError::param(
                "origin",
                format!("{origin:?}"),
                "must be finite",
            ));
        }
        self.origin = origin;
        Ok(self)
    }

    /// Number of nodes along x.
    #[inline]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Number of nodes along y.
    #[inline]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Number of nodes along z.
    #[inline]
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Number of nodes along x, y and z.
    #[inline]
    pub fn dims(&self) -> [u32; 3] {
        [self.width, self.height, self.depth]
    }

    /// Distance between neighbouring nodes in world units.
    #[inline]
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// World position of node `(0, 0, 0)`.
    #[inline]
    pub fn origin(&self) -> [f32; 3] {
        self.origin
    }

    /// All values, row-major: x fastest, then y, then z.
    #[inline]
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// All values, mutable. The caller keeps them finite (meshers and the store
    /// assume it); use [`Field3::set`] for checked writes.
    #[inline]
    pub fn values_mut(&mut self) -> &mut [f32] {
        &mut self.values
    }

    /// Consumes the field, returning its values.
    pub fn into_values(self) -> Vec<f32> {
        self.values
    }

    /// Storage index of node `(x, y, z)`.
    #[inline]
    pub fn index(&self, x: u32, y: u32, z: u32) -> usize {
        debug_assert!(x < self.width && y < self.height && z < self.depth);
        (z as usize * self.height as usize + y as usize) * self.width as usize + x as usize
    }

    /// Value at node `(x, y, z)`. Panics when out of bounds (a programmer error).
    #[inline]
    pub fn get(&self, x: u32, y: u32, z: u32) -> f32 {
        assert!(
            x < self.width && y < self.height && z < self.depth,
            "node ({x}, {y}, {z}) out of bounds"
        );
        self.values[self.index(x, y, z)]
    }

    /// Value at node `(x, y, z)`, or `None` out of bounds.
    #[inline]
    pub fn try_get(&self, x: i64, y: i64, z: i64) -> Option<f32> {
        if x < 0
            || y < 0
            || z < 0
            || x >= self.width as i64
            || y >= self.height as i64
            || z >= self.depth as i64
        {
            return None;
        }
        Some(self.values[self.index(x as u32, y as u32, z as u32)])
    }

    /// Sets node `(x, y, z)`. Non-finite values and out-of-bounds nodes are
    /// errors that change nothing.
    pub fn set(&mut self, x: u32, y: u32, z: u32, value: f32) -> Result<(), FieldError> {
        if x >= self.width || y >= self.height || z >= self.depth {
            return Err(FieldError::param(
                "node",
                format!("({x}, {y}, {z})"),
                "outside the field",
            ));
        }
        let i = self.index(x, y, z);
        if !value.is_finite() {
            return Err(FieldError::NonFinite { index: i, value });
        }
        self.values[i] = value;
        Ok(())
    }

    /// World position of node `(x, y, z)`: `origin + (x, y, z) * cell_size`.
    #[inline]
    pub fn node_position(&self, x: u32, y: u32, z: u32) -> [f32; 3] {
        [
            self.origin[0] + x as f32 * self.cell_size,
            self.origin[1] + y as f32 * self.cell_size,
            self.origin[2] + z as f32 * self.cell_size,
        ]
    }

    /// Converts a world position into fractional node coordinates.
    #[inline]
    pub fn to_grid(&self, p: [f32; 3]) -> [f32; 3] {
        [
            (p[0] - self.origin[0]) / self.cell_size,
            (p[1] - self.origin[1]) / self.cell_size,
            (p[2] - self.origin[2]) / self.cell_size,
        ]
    }

    /// Trilinear density at a world position, or `None` outside the field or for
    /// a non-finite position.
    pub fn sample(&self, p: [f32; 3]) -> Option<f32> {
        let g = self.to_grid(p);
        let dims = self.dims();
        let mut base = [0u32; 3];
        let mut frac = [0f32; 3];
        for k in 0..3 {
            if !g[k].is_finite() || g[k] < 0.0 || g[k] > (dims[k] - 1) as f32 {
                return None;
            }
            base[k] = (g[k].floor() as u32).min(dims[k] - 2);
            frac[k] = g[k] - base[k] as f32;
        }
        let i = self.index(base[0], base[1], base[2]);
        let (sy, sz) = (
            self.width as usize,
            self.width as usize * self.height as usize,
        );
        let v = &self.values;
        let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
        let row = |j: usize| lerp(v[j], v[j + 1], frac[0]);
        let c0 = lerp(row(i), row(i + sy), frac[1]);
        let c1 = lerp(row(i + sz), row(i + sz + sy), frac[1]);
        Some(lerp(c0, c1, frac[2]))
    }

    /// Sets every border node (first/last node along any axis) to `value`, so
    /// that every isosurface closes. `value` must be finite.
    pub fn clear_border(&mut self, value: f32) -> Result<(), FieldError> {
        if !value.is_finite() {
            return Err(FieldError::NonFinite { index: 0, value });
        }
        let [w, h, d] = self.dims();
        for z in 0..d {
            for y in 0..h {
                let row = self.index(0, y, z);
                if z == 0 || y == 0 || z + 1 == d || y + 1 == h {
                    self.values[row..row + w as usize].fill(value);
                } else {
                    self.values[row] = value;
                    self.values[row + w as usize - 1] = value;
                }
            }
        }
        Ok(())
    }

    /// True when node `(x, y, z)` lies on the border.
    #[inline]
    pub fn is_border(&self, x: u32, y: u32, z: u32) -> bool {
        x == 0
            || y == 0
            || z == 0
            || x + 1 == self.width
            || y + 1 == self.height
            || z + 1 == self.depth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_small_and_huge_sizes() {
        for (w, h, d) in [(0, 0, 0), (1, 5, 5), (5, 1, 5), (5, 5, 1), (5, 5, 0)] {
            assert!(
                matches!(
                    Field3::new(w, h, d, 0.0),
                    Err(FieldError::InvalidSize { .. })
                ),
                "{w}x{h}x{d}"
            );
        }
        assert!(matches!(
            Field3::new(u32::MAX, u32::MAX, u32::MAX, 0.0),
            Err(FieldError::TooLarge { .. })
        ));
        // 2^10 * 2^10 * 2^11 = 2^31 > 2^30; checked before any allocation.
        match Field3::new(1 << 10, 1 << 10, 1 << 11, 0.0) {
            Err(
                e @ FieldError::TooLarge {
                    width,
                    height,
                    depth,
                    max,
                    ..
                },
            ) => {
                assert_eq!(
                    (width, height, depth, max),
                    (1 << 10, 1 << 10, 1 << 11, Field3::MAX_NODES)
                );
                assert!(e.to_string().contains("1024x1024x2048 nodes"), "{e}");
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
        // 700^3 (above the old 2^28 cap) and 1024^3 (the cap) are sizes a
        // user may mesh.
        assert_eq!(Field3::check_size(700, 700, 700), Ok(343_000_000));
        assert_eq!(Field3::check_size(1 << 10, 1 << 10, 1 << 10), Ok(1 << 30));
        assert!(Field3::check_size(1 << 10, 1 << 10, (1 << 10) + 1).is_err());
        assert!(matches!(
            Field3::check_size(2, 2, u64::MAX),
            Err(FieldError::TooLarge { .. })
        ));
    }

    #[test]
    fn rejects_non_finite_naming_the_index() {
        let mut v = vec![0.0; 27];
        v[13] = f32::NAN;
        v[20] = f32::INFINITY;
        match Field3::from_values(3, 3, 3, v) {
            Err(FieldError::NonFinite { index, .. }) => assert_eq!(index, 13),
            other => panic!("expected NonFinite, got {other:?}"),
        }
        assert!(matches!(
            Field3::from_values(3, 3, 3, vec![0.0; 26]),
            Err(FieldError::LengthMismatch {
                expected: 27,
                got: 26
            })
        ));
        match Field3::from_fn(2, 3, 4, |x, y, z| {
            if (x, y, z) == (1, 2, 3) {
                f32::NEG_INFINITY
            } else {
                0.0
            }
        }) {
            Err(FieldError::NonFinite { index, .. }) => assert_eq!(index, 23),
            other => panic!("expected NonFinite, got {other:?}"),
        }
        assert!(Field3::new(2, 2, 2, f32::NAN).is_err());
        let mut f = Field3::new(3, 3, 3, 0.0).unwrap();
        match f.set(1, 1, 1, f32::NAN) {
            Err(FieldError::NonFinite { index, .. }) => assert_eq!(index, 13),
            other => panic!("expected NonFinite, got {other:?}"),
        }
        assert!(f.set(3, 0, 0, 1.0).is_err());
        assert!(f.values().iter().all(|&v| v == 0.0));
        assert!(f.clone().with_cell_size(0.0).is_err());
        assert!(f.clone().with_cell_size(f32::INFINITY).is_err());
        assert!(f.clone().with_origin([0.0, f32::NAN, 0.0]).is_err());
        assert!(f.clear_border(f32::NAN).is_err());
    }

    #[test]
    fn storage_is_x_fastest_then_y_then_z() {
        let f = Field3::from_fn(4, 3, 2, |x, y, z| (x + 10 * y + 100 * z) as f32).unwrap();
        assert_eq!(f.dims(), [4, 3, 2]);
        assert_eq!(f.index(1, 2, 1), (3 + 2) * 4 + 1);
        assert_eq!(f.values()[f.index(3, 1, 1)], 113.0);
        assert_eq!(f.get(2, 2, 1), 122.0);
        assert_eq!(f.try_get(2, 2, 1), Some(122.0));
        assert_eq!(f.try_get(-1, 0, 0), None);
        assert_eq!(f.try_get(0, 0, 2), None);
        let mut g = f.clone();
        g.set(0, 1, 1, -5.0).unwrap();
        assert_eq!(g.get(0, 1, 1), -5.0);
        assert_eq!(g.into_values().len(), 24);
    }

    #[test]
    fn trilinear_sample_matches_nodes_and_midpoints() {
        let f = Field3::from_fn(3, 3, 3, |x, y, z| (x + 10 * y + 100 * z) as f32)
            .unwrap()
            .with_cell_size(2.0)
            .unwrap()
            .with_origin([1.0, 1.0, 1.0])
            .unwrap();
        assert_eq!(f.node_position(1, 2, 0), [3.0, 5.0, 1.0]);
        assert_eq!(f.to_grid([3.0, 5.0, 1.0]), [1.0, 2.0, 0.0]);
        assert_eq!(f.sample([1.0, 1.0, 1.0]), Some(0.0));
        assert_eq!(f.sample([5.0, 5.0, 5.0]), Some(222.0));
        assert_eq!(f.sample([2.0, 2.0, 2.0]), Some(55.5));
        assert_eq!(f.sample([4.0, 1.0, 3.0]), Some(101.5));
        assert_eq!(f.sample([0.0, 1.0, 1.0]), None);
        assert_eq!(f.sample([1.0, 1.0, 5.5]), None);
        assert_eq!(f.sample([f32::NAN, 1.0, 1.0]), None);
    }

    #[test]
    fn clear_border_touches_only_the_border() {
        let mut f = Field3::new(4, 5, 3, 1.0).unwrap();
        f.clear_border(-1.0).unwrap();
        for z in 0..3 {
            for y in 0..5 {
                for x in 0..4 {
                    let expect = if f.is_border(x, y, z) { -1.0 } else { 1.0 };
                    assert_eq!(f.get(x, y, z), expect, "({x}, {y}, {z})");
                }
            }
        }
        let mut g = Field3::new(5, 5, 5, 1.0).unwrap();
        g.clear_border(0.0).unwrap();
        assert_eq!(g.values().iter().filter(|&&v| v == 1.0).count(), 27);
    }
}
