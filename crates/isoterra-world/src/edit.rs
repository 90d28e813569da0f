//! Sparse edits: what a brush changed, for undo and redo.

use isoterra_field::NodeRect;

/// The nodes one operation changed, with their values and materials before and
/// after. Only nodes whose value or material actually changed are listed.
///
/// `nodes` are storage indices (`y * width + x`) in ascending order; `before`,
/// `after`, `mat_before` and `mat_after` run parallel to it. Applying an edit
/// [`Backward`](EditDirection::Backward) writes `before` (undo),
/// [`Forward`](EditDirection::Forward) writes `after` (redo); both restore the
/// exact bytes.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Edit {
    /// The smallest node rectangle holding every changed node; empty when
    /// nothing changed.
    pub rect: NodeRect,
    /// Storage indices of the changed nodes, ascending.
    pub nodes: Vec<u32>,
    /// Values before the edit.
    pub before: Vec<f32>,
    /// Values after the edit.
    pub after: Vec<f32>,
    /// Material ids before the edit.
    pub mat_before: Vec<u8>,
    /// Material ids after the edit.
    pub mat_after: Vec<u8>,
}

impl Edit {
    /// True when the edit changed nothing.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Number of changed nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The edit that undoes this one (before and after swapped).
    pub fn inverse(&self) -> Edit {
        Edit {
            rect: self.rect,
            nodes: self.nodes.clone(),
            before: self.after.clone(),
            after: self.before.clone(),
            mat_before: self.mat_after.clone(),
            mat_after: self.mat_before.clone(),
        }
    }
}

/// Which side of an [`Edit`] to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum EditDirection {
    /// Redo: write the `after` values and materials.
    Forward,
    /// Undo: write the `before` values and materials.
    Backward,
}
