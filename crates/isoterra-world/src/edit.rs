//! Sparse edits: what a brush changed, for undo and redo.

use isoterra_field::NodeRect;

use crate::WorldError;

/// The nodes one operation changed, with their values and materials before and
/// after. Only nodes whose value or material actually changed are listed.
///
/// `nodes` are storage indices (`y * width + x`) in ascending order; `before`
/// and `after` run parallel to it, and so do `mat_before` and `mat_after`
/// unless both are empty (an edit that leaves materials alone). Applying an edit
/// [`Backward`](EditDirection::Backward) writes `before` (undo),
/// [`Forward`](EditDirection::Forward) writes `after` (redo); both restore the
/// exact bytes.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Side2dEdit {
    /// The smallest node rectangle holding every changed node; empty when
    /// nothing changed.
    pub rect: NodeRect,
    /// Storage indices of the changed nodes, ascending.
    pub nodes: Vec<u32>,
    /// Values before the edit.
    pub before: Vec<f32>,
    /// Values after the edit.
    pub after: Vec<f32>,
    /// Material ids before the edit (one per node, or empty with `mat_after`).
    pub mat_before: Vec<u8>,
    /// Material ids after the edit (one per node, or empty with `mat_before`).
    pub mat_after: Vec<u8>,
}

impl Side2dEdit {
    /// True when the edit changed nothing.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Number of changed nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Checks that the edit is well formed on its own: `before` and `after`
    /// hold one value per node, `mat_before` and `mat_after` one id per node
    /// or are both empty, `nodes` is strictly ascending, and every value is
    /// finite. Whether it fits a given world is checked by
    /// [`Side2dWorld::apply_edit`](crate::Side2dWorld::apply_edit).
    ///
    /// # Errors
    ///
    /// [`WorldError::MalformedEdit`] saying what is wrong.
    pub fn validate(&self) -> Result<(), WorldError> {
        self.check_lists()?;
        check_finite(&self.before, &self.nodes, "before")?;
        check_finite(&self.after, &self.nodes, "after")
    }

    /// The structural part of [`validate`](Self::validate): list lengths and
    /// ascending nodes, values unchecked.
    pub(crate) fn check_lists(&self) -> Result<(), WorldError> {
        let n = self.nodes.len();
        for (name, len) in [("before", self.before.len()), ("after", self.after.len())] {
            if len != n {
                return Err(WorldError::malformed(format!(
                    "`{name}` has {len} entries but `nodes` has {n}"
                )));
            }
        }
        let mats = self.mat_before.len();
        if mats != self.mat_after.len() || (mats != 0 && mats != n) {
            return Err(WorldError::malformed(format!(
                "`mat_before` / `mat_after` have {} / {} entries but `nodes` has {n} (use one per node, or none in both)",
                self.mat_before.len(),
                self.mat_after.len()
            )));
        }
        if let Some(w) = self.nodes.windows(2).find(|w| w[0] >= w[1]) {
            return Err(WorldError::malformed(format!(
                "`nodes` must be strictly ascending, found {} then {}",
                w[0], w[1]
            )));
        }
        Ok(())
    }

    /// The edit that undoes this one (before and after swapped).
    pub fn inverse(&self) -> Side2dEdit {
        Side2dEdit {
            rect: self.rect,
            nodes: self.nodes.clone(),
            before: self.after.clone(),
            after: self.before.clone(),
            mat_before: self.mat_after.clone(),
            mat_after: self.mat_before.clone(),
        }
    }
}

/// Fails when a value of `values` (parallel to `nodes`) is not finite.
pub(crate) fn check_finite(values: &[f32], nodes: &[u32], side: &str) -> Result<(), WorldError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(k) => Err(WorldError::malformed(format!(
            "`{side}` value {} for node {} is not finite",
            values[k],
            nodes.get(k).copied().unwrap_or_default()
        ))),
        None => Ok(()),
    }
}

/// Which side of an edit (of any kind: [`Side2dEdit`], [`HeightEdit`](crate::HeightEdit), [`VoxelEdit`](crate::VoxelEdit), [`MapEdit`](crate::MapEdit)) to write.
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

impl EditDirection {
    /// The other direction: undo for redo, redo for undo.
    pub const fn reversed(self) -> Self {
        match self {
            EditDirection::Forward => EditDirection::Backward,
            EditDirection::Backward => EditDirection::Forward,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Side2dEdit {
        Side2dEdit {
            rect: NodeRect::new(1, 1, 4, 2),
            nodes: vec![5, 6, 7],
            before: vec![0.5, 0.25, -0.5],
            after: vec![-1.0, -1.0, -1.0],
            mat_before: vec![0, 1, 2],
            mat_after: vec![0, 1, 2],
        }
    }

    #[test]
    fn validate_accepts_good_edits_with_or_without_materials() {
        sample().validate().unwrap();
        let mut e = sample();
        e.mat_before.clear();
        e.mat_after.clear();
        e.validate().unwrap();
        Side2dEdit::default().validate().unwrap();
        assert_eq!(sample().inverse().inverse(), sample());
    }

    #[test]
    fn validate_names_what_is_wrong() {
        type Damage = fn(&mut Side2dEdit);
        let cases: [(&str, Damage); 5] = [
            ("`after`", |e| {
                e.after.pop();
            }),
            ("`mat_before`", |e| {
                e.mat_before.pop();
            }),
            ("ascending", |e| e.nodes.swap(0, 1)),
            ("not finite", |e| e.before[1] = f32::NAN),
            ("not finite", |e| e.after[2] = f32::INFINITY),
        ];
        for (needle, damage) in cases {
            let mut e = sample();
            damage(&mut e);
            let err = e.validate().unwrap_err();
            assert!(matches!(err, WorldError::MalformedEdit { .. }), "{err}");
            assert!(err.to_string().contains(needle), "{err}");
        }
    }
}
