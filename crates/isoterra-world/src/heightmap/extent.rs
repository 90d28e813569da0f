//! The extent of an imported heightmap: the block of nodes the image covers,
//! the height range its codes mean, and what the world holds outside it.

use crate::WorldError;

use super::params::MAX_NODE_COORD;

/// Longest side, in nodes, of an extent.
pub const MAX_EXTENT_SIDE: u32 = 1 << 20;

/// What a world with an [`HeightExtent`] holds outside the extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum HeightOutside {
    /// The heights of the extent's edge, carried straight out: a node
    /// outside takes the imported height of the nearest edge node (the
    /// clamped node), as it was at import. Inside, the generator is off: the
    /// heights are the imported ones.
    #[default]
    Edge,
    /// The world's generator, inside and outside: the imported heights are
    /// an edit over the generated ground (a step at the edge is possible).
    Generated,
}

impl HeightOutside {
    /// The name used by the CLI and the JSON: `edge` or `generated`.
    pub const fn name(self) -> &'static str {
        match self {
            HeightOutside::Edge => "edge",
            HeightOutside::Generated => "generated",
        }
    }
}

/// The extent of an imported heightmap (see
/// [`HeightmapParams::extent`](crate::HeightmapParams::extent)).
///
/// The extent covers nodes `first[0] ..= first[0] + dims[0] - 1` on x and
/// likewise on z. With [`HeightOutside::Edge`] a node `g` outside reads the
/// edge profile at the clamped node: `south`/`north` hold the rows
/// `z = first[1]` and `z = first[1] + dims[1] - 1` (x ascending), `west` and
/// `east` the columns `x = first[0]` and `x = first[0] + dims[0] - 1` (z
/// ascending). A node clamped onto a row reads the row.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HeightExtent {
    /// The first node (smallest x and z).
    pub first: [i64; 2],
    /// Nodes along x and z, each from 1 to [`MAX_EXTENT_SIDE`].
    pub dims: [u32; 2],
    /// The heights the image's lowest and highest codes stand for: what
    /// an export of the world uses by default. Finite, `min < max`.
    pub range: [f32; 2],
    /// What the world holds outside the extent.
    pub outside: HeightOutside,
    /// The row `z = first[1]` (`dims[0]` heights; empty with
    /// [`HeightOutside::Generated`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub south: Vec<f32>,
    /// The row `z = first[1] + dims[1] - 1`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub north: Vec<f32>,
    /// The column `x = first[0]` (`dims[1]` heights).
    #[cfg_attr(feature = "serde", serde(default))]
    pub west: Vec<f32>,
    /// The column `x = first[0] + dims[0] - 1`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub east: Vec<f32>,
}

impl HeightExtent {
    /// The extent of a `dims` grid of `heights` (x fastest) whose first node
    /// is `first`, recording its edges for [`HeightOutside::Edge`].
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] for a bad size, a length that does
    /// not match, non-finite heights or a bad range.
    pub fn of_heights(
        first: [i64; 2],
        dims: [u32; 2],
        range: [f32; 2],
        outside: HeightOutside,
        heights: &[f32],
    ) -> Result<Self, WorldError> {
        let mut e = HeightExtent {
            first,
            dims,
            range,
            outside,
            south: Vec::new(),
            north: Vec::new(),
            west: Vec::new(),
            east: Vec::new(),
        };
        e.check_shape()?;
        let (w, h) = (dims[0] as usize, dims[1] as usize);
        if heights.len() as u64 != w as u64 * h as u64 {
            return Err(WorldError::param(
                "heights",
                heights.len(),
                "must hold dims[0] * dims[1] values",
            ));
        }
        if outside == HeightOutside::Edge {
            e.south = heights[..w].to_vec();
            e.north = heights[(h - 1) * w..].to_vec();
            e.west = (0..h).map(|j| heights[j * w]).collect();
            e.east = (0..h).map(|j| heights[j * w + w - 1]).collect();
        }
        e.validate()?;
        Ok(e)
    }

    /// The last node (largest x and z).
    pub fn last(&self) -> [i64; 2] {
        [
            self.first[0] + i64::from(self.dims[0]) - 1,
            self.first[1] + i64::from(self.dims[1]) - 1,
        ]
    }

    /// Whether node `g` lies in the extent.
    pub fn contains(&self, g: [i64; 2]) -> bool {
        let last = self.last();
        (self.first[0]..=last[0]).contains(&g[0]) && (self.first[1]..=last[1]).contains(&g[1])
    }

    /// Whether every node of the block `first .. first + dims` lies in the extent.
    pub fn contains_block(&self, first: [i64; 2], dims: [i64; 2]) -> bool {
        dims[0] > 0
            && dims[1] > 0
            && self.contains(first)
            && self.contains([first[0] + dims[0] - 1, first[1] + dims[1] - 1])
    }

    /// The height outside the extent at node `g` with [`HeightOutside::Edge`]:
    /// the edge profile at the clamped node.
    pub fn edge_height(&self, g: [i64; 2]) -> f32 {
        let last = self.last();
        let x = g[0].clamp(self.first[0], last[0]);
        let z = g[1].clamp(self.first[1], last[1]);
        let i = (x - self.first[0]) as usize;
        let j = (z - self.first[1]) as usize;
        let pick = |v: &[f32], k: usize| v.get(k).copied().unwrap_or(0.0);
        if z == self.first[1] {
            pick(&self.south, i)
        } else if z == last[1] {
            pick(&self.north, i)
        } else if x == self.first[0] {
            pick(&self.west, j)
        } else {
            pick(&self.east, j)
        }
    }

    fn check_shape(&self) -> Result<(), WorldError> {
        for (k, &n) in self.dims.iter().enumerate() {
            if !(1..=MAX_EXTENT_SIDE).contains(&n) {
                return Err(WorldError::param(
                    "extent.dims",
                    n,
                    "must be from 1 to 2^20 nodes",
                ));
            }
            let lo = self.first[k];
            let hi = lo.checked_add(i64::from(n) - 1);
            if lo.abs() > MAX_NODE_COORD - 2 || hi.is_none_or(|hi| hi.abs() > MAX_NODE_COORD - 2) {
                return Err(WorldError::param(
                    "extent.first",
                    format!("{:?}", self.first),
                    "the extent must lie within 2^30 nodes of the origin",
                ));
            }
        }
        let [lo, hi] = self.range;
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(WorldError::param(
                "extent.range",
                format!("{lo},{hi}"),
                "must be two finite heights, the minimum first and smaller",
            ));
        }
        Ok(())
    }

    /// Checks the extent.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] naming the bad field.
    pub fn validate(&self) -> Result<(), WorldError> {
        self.check_shape()?;
        let (w, h) = (self.dims[0] as usize, self.dims[1] as usize);
        let want = match self.outside {
            HeightOutside::Edge => [w, w, h, h],
            HeightOutside::Generated => [0, 0, 0, 0],
        };
        let edges = [
            ("extent.south", &self.south),
            ("extent.north", &self.north),
            ("extent.west", &self.west),
            ("extent.east", &self.east),
        ];
        for ((name, v), n) in edges.into_iter().zip(want) {
            if v.len() != n {
                return Err(WorldError::param(
                    name,
                    v.len(),
                    if n == 0 {
                        "must be empty when the outside is generated"
                    } else {
                        "must hold one height per node of its side of the extent"
                    },
                ));
            }
            if let Some(bad) = v.iter().find(|h| !h.is_finite()) {
                return Err(WorldError::param(name, bad, "must hold finite heights"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_carried_out_from_the_nearest_node() {
        // 3 x 2 grid at (10, 20): heights 0 1 2 / 3 4 5.
        let h = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let e = HeightExtent::of_heights([10, 20], [3, 2], [0.0, 8.0], HeightOutside::Edge, &h)
            .unwrap();
        assert_eq!(e.last(), [12, 21]);
        assert_eq!(e.edge_height([5, 5]), 0.0);
        assert_eq!(e.edge_height([11, -100]), 1.0);
        assert_eq!(e.edge_height([100, 100]), 5.0);
        assert_eq!(e.edge_height([11, 100]), 4.0);
        assert_eq!(e.edge_height([-3, 21]), 3.0);
        assert!(e.contains([12, 21]) && !e.contains([13, 21]));
    }

    #[test]
    fn bad_extents_are_refused() {
        let ok = |dims, range, len| {
            HeightExtent::of_heights([0, 0], dims, range, HeightOutside::Edge, &vec![0.0; len])
        };
        assert!(ok([2, 2], [0.0, 1.0], 4).is_ok());
        assert!(ok([0, 2], [0.0, 1.0], 0).is_err());
        assert!(ok([2, 2], [1.0, 1.0], 4).is_err());
        assert!(ok([2, 2], [f32::NAN, 1.0], 4).is_err());
        assert!(ok([2, 2], [0.0, 1.0], 3).is_err());
        let mut e = ok([2, 2], [0.0, 1.0], 4).unwrap();
        e.east[1] = f32::INFINITY;
        assert!(e.validate().is_err());
        e.east.pop();
        assert!(e.validate().is_err());
        let far = HeightExtent::of_heights(
            [MAX_NODE_COORD, 0],
            [2, 2],
            [0.0, 1.0],
            HeightOutside::Generated,
            &[0.0; 4],
        );
        assert!(far.is_err());
    }
}
