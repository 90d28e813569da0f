//! Previews of consecutive dabs of one stroke folded into one: each node
//! the dabs touched, once, with its value before the first of them.
//!
//! A stroke of many dabs over the same ground then costs memory for the
//! ground it covers (the union of the nodes it touched), not for each dab:
//! sixty voxel dabs of radius 64 on one spot hold one sphere's nodes.

use std::collections::HashMap;

pub(crate) use isoterra_world::VoxelRun;
use isoterra_world::{HeightEdit, HeightmapWorld};

/// Heightmap: the edit-layer delta of each touched node before the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeightRun {
    before: HashMap<[i64; 2], f32>,
}

impl HeightRun {
    pub(crate) fn of(e: &HeightEdit) -> Self {
        let mut run = HeightRun::default();
        run.before.reserve(e.nodes.len());
        for (k, g) in e.nodes.iter().enumerate() {
            run.before.entry(*g).or_insert(e.before[k]);
        }
        run
    }

    /// Folds a later run in.
    pub(crate) fn absorb(&mut self, later: HeightRun) {
        for (g, v) in later.before {
            self.before.entry(g).or_insert(v);
        }
    }

    /// Nodes of `later` this run does not hold yet.
    pub(crate) fn new_nodes(&self, later: &HeightRun) -> usize {
        later
            .before
            .keys()
            .filter(|g| !self.before.contains_key(*g))
            .count()
    }

    pub(crate) fn len(&self) -> usize {
        self.before.len()
    }

    /// The edit that takes the run back, in the edit's node order.
    pub(crate) fn edit(&self, world: &HeightmapWorld) -> HeightEdit {
        let mut nodes: Vec<[i64; 2]> = self.before.keys().copied().collect();
        nodes.sort_unstable_by_key(|g| [g[1], g[0]]);
        let mut e = HeightEdit::default();
        for g in nodes {
            e.before.push(self.before[&g]);
            e.after.push(world.delta(g));
            e.nodes.push(g);
        }
        e
    }
}
