//! Floating islands: solid regions that nothing holds up.

use isoterra_field::{Field2, NodeRect};
use isoterra_mesh::{
    ContourJoiner, FillMesh, MarchingSquares, Polyline, SquaresOutput, signed_area,
};

use crate::{Side2dEdit, Side2dWorld, WorldError};

/// A solid region that touches neither the ground row nor an indestructible
/// node (see [`Side2dWorld::islands`]). A game typically turns it into a
/// falling debris body and removes it with [`Side2dWorld::remove_island`].
#[derive(Debug, Clone, PartialEq)]
pub struct Island {
    /// Contours of this region only, in world units: outer loops
    /// counter-clockwise, holes clockwise.
    pub outline: Vec<Polyline>,
    /// Solid area (the fill area: outer loops minus holes), in square world units.
    pub area: f32,
    /// Number of solid nodes in the region.
    pub node_count: usize,
    /// The smallest node rectangle holding the region.
    pub bounds: NodeRect,
    /// Storage indices of the region's nodes, ascending.
    pub nodes: Vec<u32>,
    /// The region's fill mesh alone, in world units (what a debris body
    /// draws), without per-material submeshes.
    pub mesh: FillMesh,
}

impl Island {
    /// The island's centre of area, in world units (from its fill mesh);
    /// `None` for an island without area.
    pub fn centroid(&self) -> Option<[f32; 2]> {
        let m = &self.mesh;
        let (mut cx, mut cy, mut total) = (0.0f64, 0.0f64, 0.0f64);
        for t in m.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| m.positions[t[k] as usize]);
            let area =
                0.5 * f64::from((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]));
            cx += area * f64::from(a[0] + b[0] + c[0]) / 3.0;
            cy += area * f64::from(a[1] + b[1] + c[1]) / 3.0;
            total += area;
        }
        (total > 1e-6).then(|| [(cx / total) as f32, (cy / total) as f32])
    }
}

/// True when the two solid corners of a saddle cell (`a`, `d` solid on one
/// diagonal, the others empty, or the reverse) are joined by the marching
/// squares fill: the cell centre, the mean of its four corners, is solid.
/// Evaluated exactly as the mesher does (`sum >= 4 iso` in `f64`).
#[inline]
pub(crate) fn saddle_joined(v00: f32, v10: f32, v01: f32, v11: f32, iso: f32) -> bool {
    (v00 as f64 + v10 as f64 + v01 as f64 + v11 as f64) >= 4.0 * iso as f64
}

impl Side2dWorld {
    /// Every floating island, ordered by its lowest node index.
    ///
    /// Regions are found by a flood fill over solid nodes with 4-connectivity,
    /// plus the diagonal of a saddle cell when marching squares joins its two
    /// solid corners (the cell centre is solid), so a region is exactly a
    /// connected piece of the fill mesh. A region is *anchored* when it
    /// touches row `y = 1` (the first row above the empty border: the ground)
    /// or holds a node of an indestructible material; every other region is
    /// reported with its own outline, area, node count and bounds.
    ///
    /// This scans the whole field (linear in its size).
    pub fn islands(&self) -> Vec<Island> {
        let f = &self.field;
        let iso = self.params.iso;
        let (w, h) = (f.width() as usize, f.height() as usize);
        let v = f.values();
        let ids = self.materials.ids();
        let mut locked = [false; 256];
        for (id, m) in self.table.iter().enumerate() {
            locked[id] = m.indestructible;
        }
        // 0: not visited; otherwise region number + 1.
        let mut label = vec![0u32; v.len()];
        let mut stack: Vec<u32> = Vec::new();
        let mut region: Vec<u32> = Vec::new();
        let mut islands = Vec::new();
        let mut next_label = 0u32;
        let solid = |i: usize| v[i] >= iso;
        for start in 0..v.len() {
            if label[start] != 0 || !solid(start) {
                continue;
            }
            next_label += 1;
            let id = next_label;
            label[start] = id;
            stack.push(start as u32);
            region.clear();
            let mut anchored = false;
            let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
            while let Some(i) = stack.pop() {
                let i = i as usize;
                region.push(i as u32);
                let (x, y) = (i % w, i / w);
                anchored |= y == 1 || locked[ids[i] as usize];
                x0 = x0.min(x);
                x1 = x1.max(x);
                y0 = y0.min(y);
                y1 = y1.max(y);
                let mut visit = |j: usize, label: &mut [u32]| {
                    if label[j] == 0 && solid(j) {
                        label[j] = id;
                        stack.push(j as u32);
                    }
                };
                if x > 0 {
                    visit(i - 1, &mut label);
                }
                if x + 1 < w {
                    visit(i + 1, &mut label);
                }
                if y > 0 {
                    visit(i - w, &mut label);
                }
                if y + 1 < h {
                    visit(i + w, &mut label);
                }
                // Diagonals through saddle cells.
                for (sx, sy) in [(-1i64, -1i64), (1, -1), (-1, 1), (1, 1)] {
                    let (dx, dy) = (x as i64 + sx, y as i64 + sy);
                    if dx < 0 || dy < 0 || dx >= w as i64 || dy >= h as i64 {
                        continue;
                    }
                    let d = dy as usize * w + dx as usize;
                    let b = y * w + dx as usize; // same row, diagonal's column
                    let c = dy as usize * w + x; // same column, diagonal's row
                    if label[d] != 0 || !solid(d) || solid(b) || solid(c) {
                        continue;
                    }
                    // Corners of the cell in (x, y) order: low/high column, low/high row.
                    let (lx, ly) = (x.min(dx as usize), y.min(dy as usize));
                    let c00 = v[ly * w + lx];
                    let c10 = v[ly * w + lx + 1];
                    let c01 = v[(ly + 1) * w + lx];
                    let c11 = v[(ly + 1) * w + lx + 1];
                    if saddle_joined(c00, c10, c01, c11, iso) {
                        visit(d, &mut label);
                    }
                }
            }
            if anchored {
                continue;
            }
            region.sort_unstable();
            let bounds = NodeRect::new(x0 as u32, y0 as u32, x1 as u32 + 1, y1 as u32 + 1);
            let (outline, area, mesh) = self.region_outline(&label, id, bounds);
            islands.push(Island {
                outline,
                area,
                mesh,
                node_count: region.len(),
                bounds,
                nodes: region.clone(),
            });
        }
        islands
    }

    /// Contours, area and fill mesh of one labelled region: the field inside
    /// the region's bounds (plus a ring of one node), with every solid node
    /// of another region lowered below iso.
    fn region_outline(
        &self,
        label: &[u32],
        id: u32,
        bounds: NodeRect,
    ) -> (Vec<Polyline>, f32, FillMesh) {
        let f = &self.field;
        let iso = self.params.iso;
        let w = f.width() as usize;
        // Region nodes are never on the border (it is always empty), so the
        // ring stays inside; clamp anyway.
        let (wx0, wy0) = (bounds.x0.saturating_sub(1), bounds.y0.saturating_sub(1));
        let (wx1, wy1) = (
            (bounds.x1 + 1).min(f.width()),
            (bounds.y1 + 1).min(f.height()),
        );
        let (ww, wh) = (wx1 - wx0, wy1 - wy0);
        let mut vals = Vec::with_capacity(ww as usize * wh as usize);
        for y in wy0..wy1 {
            for x in wx0..wx1 {
                let i = y as usize * w + x as usize;
                let v = f.values()[i];
                vals.push(if v >= iso && label[i] != id {
                    iso - 1.0
                } else {
                    v
                });
            }
        }
        let window = Field2::from_values(ww, wh, vals)
            .and_then(|fw| fw.with_cell_size(f.cell_size()))
            .and_then(|fw| fw.with_origin(f.node_position(wx0, wy0)));
        let Ok(window) = window else {
            return (Vec::new(), 0.0, FillMesh::default());
        };
        let mut options = self.squares_options();
        options.fill = true;
        let mut out = SquaresOutput::default();
        let cells = isoterra_mesh::CellRect {
            x0: 0,
            y0: 0,
            x1: ww - 1,
            y1: wh - 1,
        };
        if MarchingSquares::new()
            .mesh(&window, None, cells, &options, &mut out)
            .is_err()
        {
            return (Vec::new(), 0.0, FillMesh::default());
        }
        let mut lines = Vec::new();
        ContourJoiner::new().join(&[&out.segments], &mut lines);
        let area: f64 = lines
            .iter()
            .filter(|l| l.closed)
            .map(|l| signed_area(&l.points))
            .sum();
        (lines, area as f32, std::mem::take(&mut out.fill))
    }

    /// Removes an island (e.g. once a game has turned it into debris): every
    /// node of `island.nodes` is set to `-1.0` (fully empty), except nodes of
    /// indestructible materials. Returns the edit for undo. The island should
    /// come from [`islands`](Self::islands) on the current state; its node list
    /// is checked (ascending, inside, not on the border) and on error nothing
    /// changes.
    pub fn remove_island(&mut self, island: &Island) -> Result<Side2dEdit, WorldError> {
        self.check_node_list(&island.nodes, "island node", |i, reason| {
            WorldError::param("island.nodes", i, reason)
        })?;
        let w = self.field.width();
        let mut edit = Side2dEdit::default();
        let mut rect = NodeRect::default();
        for &i in &island.nodes {
            let old = self.field.values()[i as usize];
            let mat = self.materials.ids()[i as usize];
            if self.table.is_indestructible(mat) || old.to_bits() == (-1.0f32).to_bits() {
                continue;
            }
            edit.nodes.push(i);
            edit.before.push(old);
            edit.after.push(-1.0);
            edit.mat_before.push(mat);
            edit.mat_after.push(mat);
            let (x, y) = (i % w, i / w);
            rect = rect.union(&NodeRect::new(x, y, x + 1, y + 1));
        }
        edit.rect = rect;
        self.apply_edit(&edit, crate::EditDirection::Forward)?;
        Ok(edit)
    }
}
