use crate::FieldError;

/// A rectangle of nodes, `x0..x1` by `y0..y1` (half-open), in node indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeRect {
    /// First column (inclusive).
    pub x0: u32,
    /// First row (inclusive).
    pub y0: u32,
    /// Last column (exclusive).
    pub x1: u32,
    /// Last row (exclusive).
    pub y1: u32,
}

impl NodeRect {
    /// A rectangle from half-open bounds.
    pub const fn new(x0: u32, y0: u32, x1: u32, y1: u32) -> Self {
        NodeRect { x0, y0, x1, y1 }
    }

    /// True when the rectangle holds no node.
    pub const fn is_empty(&self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0
    }

    /// Number of columns.
    pub const fn width(&self) -> u32 {
        self.x1.saturating_sub(self.x0)
    }

    /// Number of rows.
    pub const fn height(&self) -> u32 {
        self.y1.saturating_sub(self.y0)
    }

    /// True when node `(x, y)` lies inside.
    pub const fn contains(&self, x: u32, y: u32) -> bool {
        x >= self.x0 && x < self.x1 && y >= self.y0 && y < self.y1
    }

    /// The smallest rectangle holding both (an empty side is ignored).
    pub fn union(&self, other: &NodeRect) -> NodeRect {
        if self.is_empty() {
            return *other;
        }
        if other.is_empty() {
            return *self;
        }
        NodeRect {
            x0: self.x0.min(other.x0),
            y0: self.y0.min(other.y0),
            x1: self.x1.max(other.x1),
            y1: self.y1.max(other.y1),
        }
    }
}

/// A corner-sampled 2D grid of `f32` densities.
///
/// ```text
///  y
///  ^   (0,2)---(1,2)---(2,2)      3 x 3 nodes make 2 x 2 cells.
///  |     |  c01  |  c11  |        Node (x, y) is at origin + (x, y) * cell_size.
///  |   (0,1)---(1,1)---(2,1)      Storage is row-major, x fastest:
///  |     |  c00  |  c10  |        index = y * width + x.
///  |   (0,0)---(1,0)---(2,0)
///  +-----------------------> x
/// ```
///
/// Every value is finite: the validated constructors reject NaN and infinities,
/// and [`Field2::set`] refuses them too.
#[derive(Debug, Clone, PartialEq)]
pub struct Field2 {
    width: u32,
    height: u32,
    cell_size: f32,
    origin: [f32; 2],
    values: Vec<f32>,
}

impl Field2 {
    /// The largest number of nodes a field may hold: 2^30 (1,073,741,824
    /// nodes, 4 GiB of `f32`; 32768², the same as
    /// [`Field3::MAX_NODES`](crate::Field3::MAX_NODES)). Larger worlds are
    /// built from chunks.
    pub const MAX_NODES: u64 = 1 << 30;

    /// Checks a size and returns the node count.
    pub fn check_size(width: u64, height: u64) -> Result<usize, FieldError> {
        if width < 2 || height < 2 {
            return Err(FieldError::InvalidSize {
                width,
                height,
                reason: "a field needs at least 2x2 nodes (one cell)",
            });
        }
        let nodes = width.checked_mul(height);
        match nodes {
            Some(n)
                if n <= Self::MAX_NODES
                    && width <= u32::MAX as u64
                    && height <= u32::MAX as u64 =>
            {
                Ok(n as usize)
            }
            _ => Err(FieldError::TooLarge {
                width,
                height,
                depth: 1,
                max: Self::MAX_NODES,
                max_mib: Self::MAX_NODES * 4 / (1024 * 1024),
            }),
        }
    }

    /// A field of `width x height` nodes, every node set to `fill`.
    pub fn new(width: u32, height: u32, fill: f32) -> Result<Self, FieldError> {
        let n = Self::check_size(width as u64, height as u64)?;
        if !fill.is_finite() {
            return Err(FieldError::NonFinite {
                index: 0,
                value: fill,
            });
        }
        Ok(Field2 {
            width,
            height,
            cell_size: 1.0,
            origin: [0.0, 0.0],
            values: vec![fill; n],
        })
    }

    /// A field from row-major values (x fastest). Rejects a wrong length and
    /// non-finite values, naming the first bad index.
    pub fn from_values(width: u32, height: u32, values: Vec<f32>) -> Result<Self, FieldError> {
        let n = Self::check_size(width as u64, height as u64)?;
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
        Ok(Field2 {
            width,
            height,
            cell_size: 1.0,
            origin: [0.0, 0.0],
            values,
        })
    }

    /// A field whose node `(x, y)` holds `f(x, y)`. Rejects non-finite results.
    pub fn from_fn(
        width: u32,
        height: u32,
        mut f: impl FnMut(u32, u32) -> f32,
    ) -> Result<Self, FieldError> {
        let n = Self::check_size(width as u64, height as u64)?;
        let mut values = crate::huge_pages::with_capacity(n);
        for y in 0..height {
            for x in 0..width {
                values.push(f(x, y));
            }
        }
        Self::from_values(width, height, values)
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

    /// Sets the world position of node `(0, 0)` (finite).
    pub fn with_origin(mut self, origin: [f32; 2]) -> Result<Self, FieldError> {
        if !(origin[0].is_finite() && origin[1].is_finite()) {
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

    /// Distance between neighbouring nodes in world units.
    #[inline]
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// World position of node `(0, 0)`.
    #[inline]
    pub fn origin(&self) -> [f32; 2] {
        self.origin
    }

    /// All values, row-major, x fastest.
    #[inline]
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// All values, mutable. The caller keeps them finite (meshers and the store
    /// assume it); use [`Field2::set`] for checked writes.
    #[inline]
    pub fn values_mut(&mut self) -> &mut [f32] {
        &mut self.values
    }

    /// Consumes the field, returning its values.
    pub fn into_values(self) -> Vec<f32> {
        self.values
    }

    /// Storage index of node `(x, y)`.
    #[inline]
    pub fn index(&self, x: u32, y: u32) -> usize {
        debug_assert!(x < self.width && y < self.height);
        y as usize * self.width as usize + x as usize
    }

    /// Value at node `(x, y)`. Panics when out of bounds (a programmer error).
    #[inline]
    pub fn get(&self, x: u32, y: u32) -> f32 {
        assert!(
            x < self.width && y < self.height,
            "node ({x}, {y}) out of bounds"
        );
        self.values[self.index(x, y)]
    }

    /// Value at node `(x, y)`, or `None` out of bounds.
    #[inline]
    pub fn try_get(&self, x: i64, y: i64) -> Option<f32> {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return None;
        }
        Some(self.values[y as usize * self.width as usize + x as usize])
    }

    /// Sets node `(x, y)`. Non-finite values and out-of-bounds nodes are errors.
    pub fn set(&mut self, x: u32, y: u32, value: f32) -> Result<(), FieldError> {
        if x >= self.width || y >= self.height {
            return Err(FieldError::param(
                "node",
                format!("({x}, {y})"),
                "outside the field",
            ));
        }
        if !value.is_finite() {
            return Err(FieldError::NonFinite {
                index: self.index(x, y),
                value,
            });
        }
        let i = self.index(x, y);
        self.values[i] = value;
        Ok(())
    }

    /// World position of node `(x, y)`.
    #[inline]
    pub fn node_position(&self, x: u32, y: u32) -> [f32; 2] {
        [
            self.origin[0] + x as f32 * self.cell_size,
            self.origin[1] + y as f32 * self.cell_size,
        ]
    }

    /// Converts a world position into fractional node coordinates.
    #[inline]
    pub fn to_grid(&self, p: [f32; 2]) -> [f32; 2] {
        [
            (p[0] - self.origin[0]) / self.cell_size,
            (p[1] - self.origin[1]) / self.cell_size,
        ]
    }

    /// Bilinear density at a world position, or `None` outside the field or for
    /// a non-finite position.
    pub fn sample(&self, p: [f32; 2]) -> Option<f32> {
        let [gx, gy] = self.to_grid(p);
        if !(gx.is_finite() && gy.is_finite()) {
            return None;
        }
        let maxx = (self.width - 1) as f32;
        let maxy = (self.height - 1) as f32;
        if gx < 0.0 || gy < 0.0 || gx > maxx || gy > maxy {
            return None;
        }
        let x0 = (gx.floor() as u32).min(self.width - 2);
        let y0 = (gy.floor() as u32).min(self.height - 2);
        let tx = gx - x0 as f32;
        let ty = gy - y0 as f32;
        let i = self.index(x0, y0);
        let w = self.width as usize;
        let v00 = self.values[i];
        let v10 = self.values[i + 1];
        let v01 = self.values[i + w];
        let v11 = self.values[i + w + 1];
        let a = v00 + (v10 - v00) * tx;
        let b = v01 + (v11 - v01) * tx;
        Some(a + (b - a) * ty)
    }

    /// Whole field as a node rectangle.
    pub fn rect(&self) -> NodeRect {
        NodeRect::new(0, 0, self.width, self.height)
    }

    /// Sets every border node (first/last row and column) to `value`, so that
    /// every contour closes. `value` must be finite.
    pub fn clear_border(&mut self, value: f32) -> Result<(), FieldError> {
        if !value.is_finite() {
            return Err(FieldError::NonFinite { index: 0, value });
        }
        let (w, h) = (self.width as usize, self.height as usize);
        for x in 0..w {
            self.values[x] = value;
            self.values[(h - 1) * w + x] = value;
        }
        for y in 0..h {
            self.values[y * w] = value;
            self.values[y * w + w - 1] = value;
        }
        Ok(())
    }

    /// True when node `(x, y)` lies on the border.
    #[inline]
    pub fn is_border(&self, x: u32, y: u32) -> bool {
        x == 0 || y == 0 || x + 1 == self.width || y + 1 == self.height
    }

    /// Copies the nodes of `rect` into a new row-major vector.
    pub fn read_rect(&self, rect: NodeRect) -> Vec<f32> {
        let mut out = Vec::with_capacity(rect.width() as usize * rect.height() as usize);
        for y in rect.y0..rect.y1.min(self.height) {
            let row = self.index(0, y);
            out.extend_from_slice(
                &self.values[row + rect.x0 as usize..row + rect.x1.min(self.width) as usize],
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_zero_and_huge_sizes() {
        assert!(matches!(
            Field2::new(0, 0, 0.0),
            Err(FieldError::InvalidSize { .. })
        ));
        assert!(matches!(
            Field2::new(1, 5, 0.0),
            Err(FieldError::InvalidSize { .. })
        ));
        assert!(matches!(
            Field2::new(u32::MAX, u32::MAX, 0.0),
            Err(FieldError::TooLarge { .. })
        ));
        assert!(matches!(
            Field2::new(1 << 16, 1 << 15, 0.0),
            Err(FieldError::TooLarge { .. })
        ));
        // The limit itself, without allocating: 32768² is allowed, one row
        // more is not, and the message names the limit.
        assert_eq!(Field2::check_size(1 << 15, 1 << 15).unwrap(), 1 << 30);
        assert_eq!(Field2::check_size(16385, 16385).unwrap(), 16385 * 16385);
        let e = Field2::check_size(1 << 15, (1 << 15) + 1).unwrap_err();
        assert!(matches!(e, FieldError::TooLarge { max, .. } if max == 1 << 30));
        assert!(e.to_string().contains("4096 MiB"), "{e}");
    }

    #[test]
    fn rejects_nan_naming_the_index() {
        let mut v = vec![0.0; 9];
        v[5] = f32::NAN;
        match Field2::from_values(3, 3, v) {
            Err(FieldError::NonFinite { index, .. }) => assert_eq!(index, 5),
            other => panic!("expected NonFinite, got {other:?}"),
        }
        let mut f = Field2::new(3, 3, 0.0).unwrap();
        assert!(f.set(1, 1, f32::INFINITY).is_err());
        assert_eq!(f.get(1, 1), 0.0);
        assert!(f.clone().with_cell_size(0.0).is_err());
        assert!(f.clone().with_cell_size(f32::NAN).is_err());
    }

    #[test]
    fn bilinear_sample_matches_nodes_and_midpoints() {
        let f = Field2::from_fn(3, 3, |x, y| (x + 10 * y) as f32)
            .unwrap()
            .with_cell_size(2.0)
            .unwrap()
            .with_origin([1.0, 1.0])
            .unwrap();
        assert_eq!(f.sample([1.0, 1.0]), Some(0.0));
        assert_eq!(f.sample([5.0, 5.0]), Some(22.0));
        assert_eq!(f.sample([2.0, 1.0]), Some(0.5));
        assert_eq!(f.sample([0.0, 1.0]), None);
        assert_eq!(f.sample([f32::NAN, 1.0]), None);
    }

    #[test]
    fn clear_border_touches_only_the_border() {
        let mut f = Field2::new(4, 5, 1.0).unwrap();
        f.clear_border(-1.0).unwrap();
        for y in 0..5 {
            for x in 0..4 {
                let expect = if f.is_border(x, y) { -1.0 } else { 1.0 };
                assert_eq!(f.get(x, y), expect);
            }
        }
    }
}
