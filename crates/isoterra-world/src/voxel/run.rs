//! Runs of voxel edits folded into one (see [`VoxelRun`]).

use std::collections::HashMap;

use super::{VoxelEdit, VoxelWorld};

/// Side of the blocks a [`VoxelRun`] groups its nodes in.
const BLOCK: i64 = 16;
/// Nodes of one block.
const BLOCK_NODES: usize = (BLOCK * BLOCK * BLOCK) as usize;

/// A touched node of a block: its index in the block (`(z * 16 + y) * 16 +
/// x`, so ascending indices are the `(z, y, x)` order) and its value and
/// material before the run. Eight bytes.
#[derive(Debug, Clone, Copy)]
struct Touched {
    before: f32,
    local: u16,
    mat: u8,
}

/// The touched nodes of one 16³ block: which (a bit each) and their values,
/// in the order they were first touched.
#[derive(Debug, Clone)]
struct Block {
    bits: [u64; BLOCK_NODES / 64],
    nodes: Vec<Touched>,
}

impl Block {
    fn new() -> Self {
        Block {
            bits: [0; BLOCK_NODES / 64],
            nodes: Vec::new(),
        }
    }

    fn has(&self, local: u16) -> bool {
        self.bits[usize::from(local) / 64] & (1 << (local % 64)) != 0
    }
}

/// A node's block and its index in the block.
fn split(g: [i64; 3]) -> ([i64; 3], u16) {
    let b = g.map(|c| c.div_euclid(BLOCK));
    let l = g.map(|c| c.rem_euclid(BLOCK));
    (b, ((l[2] * BLOCK + l[1]) * BLOCK + l[0]) as u16)
}

/// The value and material each node held before a run of edits (the dabs of
/// one stroke): each touched node once, with its value before the first
/// edit that touched it. What a stroke of many dabs takes back, or records,
/// is then [`edit`](Self::edit), whose size is the ground the stroke
/// covered, not the number of dabs.
///
/// Nodes are kept by 16³ block: a bit per node of a touched block and
/// eight bytes per touched node, about a quarter of what a map from the
/// node's three coordinates took (a radius-64 stroke of sixty dabs touches
/// 3.7 million nodes: 277 MB as a hash map).
#[derive(Debug, Clone, Default)]
pub struct VoxelRun {
    blocks: HashMap<[i64; 3], Box<Block>>,
    len: usize,
}

impl VoxelRun {
    /// The run of one edit.
    pub fn of(e: &VoxelEdit) -> Self {
        let mut run = VoxelRun::default();
        run.fold(e);
        run
    }

    /// Records `g`'s value before the run, unless the run holds `g`.
    fn first(&mut self, block: [i64; 3], local: u16, before: f32, mat: u8) {
        let b = self
            .blocks
            .entry(block)
            .or_insert_with(|| Box::new(Block::new()));
        if b.has(local) {
            return;
        }
        b.bits[usize::from(local) / 64] |= 1 << (local % 64);
        b.nodes.push(Touched { before, local, mat });
        self.len += 1;
    }

    /// Adds the nodes of an edit applied after the run; nodes the run
    /// already holds keep their older value.
    pub fn fold(&mut self, e: &VoxelEdit) {
        for (k, g) in e.nodes.iter().enumerate() {
            let (block, local) = split(*g);
            self.first(block, local, e.before[k], e.mat_before[k]);
        }
    }

    /// Folds a later run in.
    pub fn absorb(&mut self, later: VoxelRun) {
        for (block, b) in later.blocks {
            for t in &b.nodes {
                self.first(block, t.local, t.before, t.mat);
            }
        }
    }

    /// Nodes of `later` this run does not hold yet.
    pub fn new_nodes(&self, later: &VoxelRun) -> usize {
        later
            .blocks
            .iter()
            .map(|(block, b)| match self.blocks.get(block) {
                None => b.nodes.len(),
                Some(ours) => b.nodes.iter().filter(|t| !ours.has(t.local)).count(),
            })
            .sum()
    }

    /// Nodes the run holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the run holds no node.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The edit from the run's values before to `world`'s values now, every
    /// node of the run in the edit's node order (ascending `(z, y, x)`);
    /// applied backward it takes the run back. A node whose chunk `world`
    /// has not loaded keeps its value before as its value after.
    pub fn edit(&self, world: &VoxelWorld) -> VoxelEdit {
        // Blocks by (z, y, x); within one, nodes by index, the same order.
        let mut keys: Vec<[i64; 3]> = self.blocks.keys().copied().collect();
        keys.sort_unstable_by_key(|b| [b[2], b[1], b[0]]);
        let sorted: Vec<Vec<Touched>> = keys
            .iter()
            .map(|k| {
                let mut nodes = self.blocks[k].nodes.clone();
                nodes.sort_unstable_by_key(|t| t.local);
                nodes
            })
            .collect();
        let mut e = VoxelEdit::default();
        e.nodes.reserve_exact(self.len);
        e.before.reserve_exact(self.len);
        e.after.reserve_exact(self.len);
        e.mat_before.reserve_exact(self.len);
        e.mat_after.reserve_exact(self.len);
        let mut push = |block: [i64; 3], t: &Touched| {
            let l = i64::from(t.local);
            let g = [
                block[0] * BLOCK + l % BLOCK,
                block[1] * BLOCK + l / BLOCK % BLOCK,
                block[2] * BLOCK + l / (BLOCK * BLOCK),
            ];
            let (a, ma) = world.node(g).unwrap_or((t.before, t.mat));
            e.nodes.push(g);
            e.before.push(t.before);
            e.after.push(a);
            e.mat_before.push(t.mat);
            e.mat_after.push(ma);
        };
        // Walk each layer of blocks (one block z) node row by node row: for
        // every z, then every row of blocks (one block y), then every y, the
        // blocks of that row left to right, each contributing its run of
        // nodes at that (z, y). A cursor per block moves forward only.
        let mut cursor = vec![0usize; keys.len()];
        let mut layer = 0;
        while layer < keys.len() {
            let layer_end = layer + keys[layer..].partition_point(|k| k[2] == keys[layer][2]);
            for lz in 0..BLOCK {
                let mut row = layer;
                while row < layer_end {
                    let row_end =
                        row + keys[row..layer_end].partition_point(|k| k[1] == keys[row][1]);
                    for ly in 0..BLOCK {
                        let at = ((lz * BLOCK + ly) * BLOCK) as u16;
                        for i in row..row_end {
                            let nodes = &sorted[i];
                            let c = &mut cursor[i];
                            while *c < nodes.len() && nodes[*c].local < at + BLOCK as u16 {
                                push(keys[i], &nodes[*c]);
                                *c += 1;
                            }
                        }
                    }
                    row = row_end;
                }
            }
            layer = layer_end;
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::VoxelParams;
    use proptest::prelude::*;

    /// The plain model: the first value of each node, and the nodes in
    /// `(z, y, x)` order.
    fn model(edits: &[VoxelEdit]) -> std::collections::BTreeMap<[i64; 3], (f32, u8)> {
        let mut m = std::collections::BTreeMap::new();
        for e in edits {
            for (k, g) in e.nodes.iter().enumerate() {
                m.entry([g[2], g[1], g[0]])
                    .or_insert((e.before[k], e.mat_before[k]));
            }
        }
        m
    }

    fn edit_of(nodes: Vec<[i64; 3]>, seed: u32) -> VoxelEdit {
        let n = nodes.len();
        VoxelEdit {
            before: (0..n).map(|i| (i as u32 ^ seed) as f32 * 0.25).collect(),
            after: vec![0.0; n],
            mat_before: (0..n).map(|i| (i as u32 + seed) as u8).collect(),
            mat_after: vec![0; n],
            nodes,
        }
    }

    proptest! {
        #[test]
        fn a_run_holds_each_node_once_with_its_first_value_in_edit_order(
            edits in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::array::uniform3(-40i64..40),
                    0..120,
                ),
                1..6,
            ),
            split_at in 0usize..6,
        ) {
            let edits: Vec<VoxelEdit> = edits
                .into_iter()
                .enumerate()
                .map(|(i, nodes)| edit_of(nodes, i as u32 * 7919))
                .collect();
            // Folded one after another, or as two runs absorbed.
            let mut folded = VoxelRun::of(&edits[0]);
            for e in &edits[1..] {
                folded.fold(e);
            }
            let cut = split_at.clamp(1, edits.len());
            let mut head = VoxelRun::default();
            for e in &edits[..cut] {
                head.fold(e);
            }
            let mut tail = VoxelRun::default();
            for e in &edits[cut..] {
                tail.fold(e);
            }
            let fresh = head.new_nodes(&tail);
            let before_len = head.len();
            head.absorb(tail);
            let want = model(&edits);
            prop_assert_eq!(folded.len(), want.len());
            prop_assert_eq!(head.len(), want.len());
            prop_assert_eq!(before_len + fresh, want.len());
            let world = VoxelWorld::new(&VoxelParams::DEFAULT).unwrap();
            for run in [&folded, &head] {
                let e = run.edit(&world);
                let got: Vec<([i64; 3], f32, u8)> = e
                    .nodes
                    .iter()
                    .enumerate()
                    .map(|(k, g)| ([g[2], g[1], g[0]], e.before[k], e.mat_before[k]))
                    .collect();
                let expected: Vec<([i64; 3], f32, u8)> =
                    want.iter().map(|(k, &(b, m))| (*k, b, m)).collect();
                prop_assert_eq!(got, expected);
            }
        }
    }
}
