//! Sparse 3D edits for undo and redo.

use crate::WorldError;

/// The nodes one voxel operation changed, with values and materials before
/// and after. Only nodes whose value bits or material changed are listed.
///
/// `nodes` are global node coordinates `[x, y, z]` (node `(x, y, z)` sits at
/// world position `(x, y, z)`), strictly ascending by `(z, y, x)`; the other
/// lists run parallel to it. Applying an edit
/// [`Backward`](crate::EditDirection::Backward) writes `before` (undo),
/// [`Forward`](crate::EditDirection::Forward) writes `after` (redo); both
/// restore the exact bytes.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VoxelEdit {
    /// Global coordinates of the changed nodes, ascending by `(z, y, x)`.
    pub nodes: Vec<[i64; 3]>,
    /// Values before the edit.
    pub before: Vec<f32>,
    /// Values after the edit.
    pub after: Vec<f32>,
    /// Material ids before the edit.
    pub mat_before: Vec<u8>,
    /// Material ids after the edit.
    pub mat_after: Vec<u8>,
}

/// The sort key of a node: z, then y, then x.
#[inline]
pub(crate) fn node_key(n: [i64; 3]) -> [i64; 3] {
    [n[2], n[1], n[0]]
}

impl VoxelEdit {
    /// True when the edit changed nothing.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Number of changed nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The edit that undoes this one.
    pub fn inverse(&self) -> VoxelEdit {
        VoxelEdit {
            nodes: self.nodes.clone(),
            before: self.after.clone(),
            after: self.before.clone(),
            mat_before: self.mat_after.clone(),
            mat_after: self.mat_before.clone(),
        }
    }

    /// Checks that the edit is well formed: parallel lists of equal length,
    /// nodes strictly ascending by `(z, y, x)` and within ±2^40, finite
    /// values in `[-1, 1]`.
    ///
    /// # Errors
    ///
    /// [`WorldError::MalformedEdit`] saying what is wrong.
    pub fn validate(&self) -> Result<(), WorldError> {
        let n = self.nodes.len();
        for (name, len) in [
            ("before", self.before.len()),
            ("after", self.after.len()),
            ("mat_before", self.mat_before.len()),
            ("mat_after", self.mat_after.len()),
        ] {
            if len != n {
                return Err(WorldError::malformed(format!(
                    "`{name}` has {len} entries but `nodes` has {n}"
                )));
            }
        }
        const LIMIT: i64 = 1 << 40;
        if let Some(p) = self
            .nodes
            .iter()
            .find(|p| p.iter().any(|c| c.unsigned_abs() > LIMIT as u64))
        {
            return Err(WorldError::malformed(format!(
                "node {p:?} is too far from the origin"
            )));
        }
        if let Some(w) = self
            .nodes
            .windows(2)
            .find(|w| node_key(w[0]) >= node_key(w[1]))
        {
            return Err(WorldError::malformed(format!(
                "`nodes` must be strictly ascending by (z, y, x), found {:?} then {:?}",
                w[0], w[1]
            )));
        }
        for (side, values) in [("before", &self.before), ("after", &self.after)] {
            if let Some(k) = values
                .iter()
                .position(|v| !(v.is_finite() && v.abs() <= 1.0))
            {
                return Err(WorldError::malformed(format!(
                    "`{side}` value {} for node {:?} is not a finite value in [-1, 1]",
                    values[k], self.nodes[k]
                )));
            }
        }
        Ok(())
    }
}
