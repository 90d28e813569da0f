//! Shortest routes over a pathing grid: A* on the 8-connected cell grid.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::PathingGrid;

/// Cost of a diagonal step, in straight steps.
const DIAGONAL: f64 = std::f64::consts::SQRT_2;

/// A heap entry: estimated total cost, then cost so far, then the cell.
#[derive(Clone, Copy, PartialEq)]
struct Open {
    estimate: f64,
    cost: f64,
    cell: u32,
}

impl Eq for Open {}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        // Smallest estimate first; among equals the one furthest along
        // (largest cost), then the smallest cell, so the route found does
        // not depend on the heap's internals.
        other
            .estimate
            .total_cmp(&self.estimate)
            .then(self.cost.total_cmp(&other.cost))
            .then(other.cell.cmp(&self.cell))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The octile distance between two cells: the cost of the shortest route
/// with no obstacle.
fn octile(a: [u32; 2], b: [u32; 2]) -> f64 {
    let dx = a[0].abs_diff(b[0]) as f64;
    let dz = a[1].abs_diff(b[1]) as f64;
    let (lo, hi) = if dx < dz { (dx, dz) } else { (dz, dx) };
    hi - lo + lo * DIAGONAL
}

/// A shortest route from cell `from` to cell `to` through cells that have
/// every bit of `bits` (for example [`PathingGrid::WALK`] for ground
/// units, [`PathingGrid::FLY`] for air units): the cells in order, both
/// ends included. Steps go to the eight neighbours, straight ones cost 1
/// and diagonal ones √2; a diagonal step never cuts a corner (both cells
/// beside it must be passable too), so a unit following the route keeps
/// off blocked cells.
///
/// `None` when either end is outside the grid or not passable, or no route
/// exists. Ties between routes of equal cost are broken the same way on
/// every run.
///
/// ```
/// use isoterra_world::{PathingGrid, find_route};
/// // A 3x3 grid whose centre is blocked: around it.
/// let mut cells = vec![PathingGrid::WALK; 9];
/// cells[4] = 0;
/// let grid = PathingGrid::from_cells(3, 3, cells).unwrap();
/// let route = find_route(&grid, [0, 1], [2, 1], PathingGrid::WALK).unwrap();
/// assert_eq!(route.len(), 5);
/// assert!(!route.contains(&[1, 1]));
/// ```
pub fn find_route(
    grid: &PathingGrid,
    from: [u32; 2],
    to: [u32; 2],
    bits: u8,
) -> Option<Vec<[u32; 2]>> {
    let (w, d) = (grid.width_cells(), grid.depth_cells());
    let passable = |x: i64, z: i64| x >= 0 && z >= 0 && grid.has(x as u32, z as u32, bits);
    if !passable(from[0] as i64, from[1] as i64) || !passable(to[0] as i64, to[1] as i64) {
        return None;
    }
    let index = |c: [u32; 2]| c[1] as usize * w as usize + c[0] as usize;
    let cell = |i: u32| [i % w, i / w];
    let n = w as usize * d as usize;
    let mut best = vec![f64::INFINITY; n];
    let mut came = vec![u32::MAX; n];
    let mut closed = vec![false; n];
    let start = index(from) as u32;
    let goal = index(to) as u32;
    best[start as usize] = 0.0;
    let mut open = BinaryHeap::new();
    open.push(Open {
        estimate: octile(from, to),
        cost: 0.0,
        cell: start,
    });
    while let Some(Open { cost, cell: i, .. }) = open.pop() {
        if closed[i as usize] {
            continue;
        }
        closed[i as usize] = true;
        if i == goal {
            let mut route = vec![cell(i)];
            let mut at = i;
            while at != start {
                at = came[at as usize];
                route.push(cell(at));
            }
            route.reverse();
            return Some(route);
        }
        let [x, z] = cell(i);
        let (x, z) = (x as i64, z as i64);
        for dz in -1i64..=1 {
            for dx in -1i64..=1 {
                if dx == 0 && dz == 0 {
                    continue;
                }
                let (nx, nz) = (x + dx, z + dz);
                if !passable(nx, nz) {
                    continue;
                }
                let diagonal = dx != 0 && dz != 0;
                if diagonal && !(passable(x + dx, z) && passable(x, z + dz)) {
                    continue;
                }
                let next = [nx as u32, nz as u32];
                let j = index(next);
                if closed[j] {
                    continue;
                }
                let c = cost + if diagonal { DIAGONAL } else { 1.0 };
                if c < best[j] {
                    best[j] = c;
                    came[j] = i;
                    open.push(Open {
                        estimate: c + octile(next, to),
                        cost: c,
                        cell: j as u32,
                    });
                }
            }
        }
    }
    None
}

/// The ground height at the centre of map cell `c` (world units): the
/// mean of its four corners' surface heights, as the mesher and the
/// pathing rules place them ([`node_surface`](isoterra_field::map::node_surface)
/// with `level_height`). Where a unit following a route stands.
pub fn cell_height(map: &isoterra_field::map::MapLayers, level_height: f32, c: [u32; 2]) -> f32 {
    let nx = map.width_cells() as usize + 1;
    let mut sum = 0.0;
    for (dx, dz) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let i = (c[1] as usize + dz) * nx + c[0] as usize + dx;
        sum += isoterra_field::map::node_surface(
            map.level[i],
            map.softness[i],
            map.height[i],
            level_height,
        );
    }
    sum / 4.0
}

/// The cost of a route as [`find_route`] counts it (1 per straight step,
/// √2 per diagonal one).
pub fn route_cost(route: &[[u32; 2]]) -> f64 {
    route
        .windows(2)
        .map(|p| {
            let diagonal = p[0][0] != p[1][0] && p[0][1] != p[1][1];
            if diagonal { DIAGONAL } else { 1.0 }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Cheapest costs from `from` to every cell (Dijkstra without a
    /// heuristic, straight from the step rules), for comparison.
    fn reference_costs(grid: &PathingGrid, from: [u32; 2], bits: u8) -> Vec<f64> {
        let (w, d) = (grid.width_cells() as i64, grid.depth_cells() as i64);
        let ok = |x: i64, z: i64| {
            x >= 0 && z >= 0 && x < w && z < d && grid.has(x as u32, z as u32, bits)
        };
        let mut cost = vec![f64::INFINITY; (w * d) as usize];
        let mut done = vec![false; (w * d) as usize];
        cost[(from[1] as i64 * w + from[0] as i64) as usize] = 0.0;
        loop {
            let mut at = None;
            for i in 0..cost.len() {
                if !done[i] && cost[i].is_finite() && at.is_none_or(|a: usize| cost[i] < cost[a]) {
                    at = Some(i);
                }
            }
            let Some(i) = at else { break };
            done[i] = true;
            let (x, z) = (i as i64 % w, i as i64 / w);
            for dz in -1..=1 {
                for dx in -1..=1 {
                    let (nx, nz) = (x + dx, z + dz);
                    if (dx == 0 && dz == 0) || !ok(nx, nz) {
                        continue;
                    }
                    let diag = dx != 0 && dz != 0;
                    if diag && !(ok(x + dx, z) && ok(x, z + dz)) {
                        continue;
                    }
                    let c = cost[i] + if diag { DIAGONAL } else { 1.0 };
                    let j = (nz * w + nx) as usize;
                    if c < cost[j] {
                        cost[j] = c;
                    }
                }
            }
        }
        cost
    }

    fn grid_strategy() -> impl Strategy<Value = PathingGrid> {
        (1u32..14, 1u32..14).prop_flat_map(|(w, d)| {
            prop::collection::vec(prop::bool::weighted(0.7), (w * d) as usize).prop_map(
                move |open| {
                    let cells = open
                        .into_iter()
                        .map(|o| {
                            if o {
                                PathingGrid::WALK | PathingGrid::FLY
                            } else {
                                PathingGrid::FLY
                            }
                        })
                        .collect();
                    PathingGrid::from_cells(w, d, cells).unwrap()
                },
            )
        })
    }

    proptest! {
        /// A route exists exactly when the reference reaches the goal; it
        /// keeps to passable cells, steps to neighbours without cutting
        /// corners, and costs what the cheapest route costs.
        #[test]
        fn routes_are_valid_and_shortest(grid in grid_strategy(), a in any::<(u32, u32, u32, u32)>()) {
            let (w, d) = (grid.width_cells(), grid.depth_cells());
            let from = [a.0 % w, a.1 % d];
            let to = [a.2 % w, a.3 % d];
            let bits = PathingGrid::WALK;
            let route = find_route(&grid, from, to, bits);
            let ends_ok = grid.has(from[0], from[1], bits) && grid.has(to[0], to[1], bits);
            let reference = if ends_ok {
                reference_costs(&grid, from, bits)[(to[1] * w + to[0]) as usize]
            } else {
                f64::INFINITY
            };
            match route {
                None => prop_assert!(reference.is_infinite()),
                Some(route) => {
                    prop_assert_eq!(route[0], from);
                    prop_assert_eq!(*route.last().unwrap(), to);
                    for c in &route {
                        prop_assert!(grid.has(c[0], c[1], bits));
                    }
                    for p in route.windows(2) {
                        let (dx, dz) = (p[0][0].abs_diff(p[1][0]), p[0][1].abs_diff(p[1][1]));
                        prop_assert!(dx <= 1 && dz <= 1 && dx + dz > 0);
                        if dx == 1 && dz == 1 {
                            prop_assert!(grid.has(p[1][0], p[0][1], bits));
                            prop_assert!(grid.has(p[0][0], p[1][1], bits));
                        }
                    }
                    prop_assert!((route_cost(&route) - reference).abs() < 1e-9,
                        "cost {} vs shortest {}", route_cost(&route), reference);
                    // The same route every time.
                    prop_assert_eq!(find_route(&grid, from, to, bits), Some(route));
                }
            }
        }
    }

    #[test]
    fn ends_outside_or_blocked_have_no_route() {
        let mut cells = vec![PathingGrid::WALK; 16];
        cells[5] = 0;
        let grid = PathingGrid::from_cells(4, 4, cells).unwrap();
        assert_eq!(find_route(&grid, [0, 0], [4, 0], PathingGrid::WALK), None);
        assert_eq!(find_route(&grid, [0, 0], [1, 1], PathingGrid::WALK), None);
        assert_eq!(
            find_route(&grid, [0, 0], [0, 0], PathingGrid::WALK),
            Some(vec![[0, 0]])
        );
        // A wall across the grid.
        let mut cells = vec![PathingGrid::WALK; 16];
        for z in 0..4 {
            cells[z * 4 + 2] = PathingGrid::FLY;
        }
        let grid = PathingGrid::from_cells(4, 4, cells).unwrap();
        assert_eq!(find_route(&grid, [0, 0], [3, 3], PathingGrid::WALK), None);
        // Flyers cross it.
        let cells: Vec<u8> = grid.cells().iter().map(|&b| b | PathingGrid::FLY).collect();
        let grid = PathingGrid::from_cells(4, 4, cells).unwrap();
        let r = find_route(&grid, [0, 0], [3, 3], PathingGrid::FLY).unwrap();
        assert_eq!(r.len(), 4);
    }
}
