//! Contour lines of row bands on a rayon thread pool, joined into the links of
//! the single scan.
//!
//! The scan of the cell rows `y0..y1` creates the points of node row `y0`
//! first, then, for each cell row `j`, those of its vertical edges and of node
//! row `j + 1`, and links the segments of row `j`. Cut at `ym`, the scan of
//! `y0..ym` followed by the scan of `ym..y1` without its first node row creates
//! the points of the whole scan in the same order. The upper band recomputes
//! the points of row `ym` only to learn their ids (they belong to the band
//! below: the same bits give the same points in the same order) and records
//! its links from and to them apart. Joining the bands renumbers their points
//! and applies those links after the band below's, as the single scan would:
//! the links, hence the polylines, are the single scan's exactly.

use isoterra_field::huge_pages::Room;
use rayon::prelude::*;

use crate::cells::CellRect;
use crate::key::EdgeKey;
use crate::scan::{NONE, NoTris, RowScratch, ScanInput, SegSink};

/// Marks a band-local id of a point of the band's first node row.
const GHOST: u32 = 1 << 31;

/// One band's points and links, in band-local ids.
#[derive(Debug, Default, Clone)]
pub(crate) struct Band {
    points: Vec<[f32; 2]>,
    next: Vec<u32>,
    has_prev: Vec<bool>,
    /// Links from, and "has a predecessor" marks of, the first row's points.
    ghost_next: Vec<u32>,
    ghost_has_prev: Vec<bool>,
    in_ghost: bool,
    /// Number of own points created before the last node row's.
    last_row_start: u32,
}

impl Band {
    fn reset(&mut self, ghost_first: bool) {
        self.points.clear();
        self.next.clear();
        self.has_prev.clear();
        self.ghost_next.clear();
        self.ghost_has_prev.clear();
        self.in_ghost = ghost_first;
        self.last_row_start = 0;
    }

    /// A new band (what a fresh tracer has) gets room for a point on every
    /// edge of its cells before the scan, as a fresh single scan does, so
    /// that its lists do not grow, copy and fault their way up.
    fn make_room(&mut self, cells: CellRect) {
        if self.points.capacity() == 0 {
            reserve_edge_room(cells, &mut self.points, &mut self.next, &mut self.has_prev);
        }
    }
}

impl SegSink for Band {
    const ACTIVE: bool = true;

    #[inline(always)]
    fn point(&mut self, p: [f32; 2], _key: EdgeKey) -> u32 {
        if self.in_ghost {
            let id = self.ghost_next.len() as u32;
            self.ghost_next.push(NONE);
            self.ghost_has_prev.push(false);
            return GHOST | id;
        }
        let id = self.points.len() as u32;
        self.points.push(p);
        self.next.push(NONE);
        self.has_prev.push(false);
        id
    }

    #[inline(always)]
    fn segment(&mut self, from: u32, to: u32) {
        if from & GHOST != 0 {
            self.ghost_next[(from & !GHOST) as usize] = to;
        } else {
            self.next[from as usize] = to;
        }
        if to & GHOST != 0 {
            self.ghost_has_prev[(to & !GHOST) as usize] = true;
        } else {
            self.has_prev[to as usize] = true;
        }
    }

    fn first_row_done(&mut self) {
        self.in_ghost = false;
    }

    fn last_row_begins(&mut self) {
        self.last_row_start = self.points.len() as u32;
    }
}

/// Room for a point on every edge of `cells` in a scan's lists of points,
/// links and "has a predecessor" marks, offered huge pages. Room never
/// written is never touched; where the address space is refused, the lists
/// grow as they fill instead.
fn reserve_edge_room(
    cells: CellRect,
    points: &mut Vec<[f32; 2]>,
    next: &mut Vec<u32>,
    has_prev: &mut Vec<bool>,
) {
    let edges = crate::tracer::edge_count(cells);
    let _ = crate::huge_pages::try_reserve_exact(points, edges)
        && crate::huge_pages::try_reserve_exact(next, edges)
        && crate::huge_pages::try_reserve_exact(has_prev, edges);
}

/// True when band-local ids of `cells` stay below [`GHOST`] (two points per
/// node at most) and the joined ids below the reserved markers.
pub(crate) fn fits(cells: CellRect) -> bool {
    let nodes = (cells.x1 - cells.x0) as u64 + 1;
    let rows = (cells.y1 - cells.y0) as u64 + 1;
    2 * nodes * rows < GHOST as u64
}

/// Scans `input.cells` in `n` row bands on the current thread pool and writes
/// the joined points and links, as the single scan makes them.
pub(crate) fn trace(
    input: &ScanInput<'_>,
    n: usize,
    bands: &mut Vec<Band>,
    points: &mut Room<[f32; 2]>,
    next: &mut Room<u32>,
    has_prev: &mut Room<bool>,
) {
    let r = input.cells;
    let rows = (r.y1 - r.y0) as usize;
    let n = n.clamp(1, rows.max(1));
    let cuts: Vec<(u32, u32)> = (0..n)
        .map(|k| {
            (
                r.y0 + (rows * k / n) as u32,
                r.y0 + (rows * (k + 1) / n) as u32,
            )
        })
        .collect();
    bands.resize_with(n, Band::default);
    bands.par_iter_mut().zip(&cuts).enumerate().for_each_init(
        RowScratch::default,
        |rows, (k, (band, &(a, b)))| {
            band.reset(k > 0);
            let slab = ScanInput {
                cells: CellRect { y0: a, y1: b, ..r },
                ..*input
            };
            band.make_room(slab.cells);
            rows.scan::<false, _, _>(&slab, &mut Vec::new(), band, &mut NoTris);
        },
    );

    // Renumber: own ids follow the bands below; ghost ids are the ids the
    // band below gave its last row.
    let mut base = Vec::with_capacity(n);
    let mut ghost_base = Vec::with_capacity(n);
    let mut total = 0u32;
    for (k, band) in bands[..n].iter().enumerate() {
        ghost_base.push(if k == 0 {
            0
        } else {
            base[k - 1] + bands[k - 1].last_row_start
        });
        base.push(total);
        total += band.points.len() as u32;
    }
    let remap = |k: usize, id: u32| {
        if id == NONE {
            NONE
        } else if id & GHOST != 0 {
            ghost_base[k] + (id & !GHOST)
        } else {
            base[k] + id
        }
    };
    // Each band's points and links go to their place on the pool's threads.
    let total = total as usize;
    points.clear();
    next.clear();
    has_prev.clear();
    points.reserve(total);
    next.reserve(total);
    has_prev.reserve(total);
    let mut places = Vec::with_capacity(n);
    {
        let mut rest = (
            &mut points.spare_capacity_mut()[..total],
            &mut next.spare_capacity_mut()[..total],
            &mut has_prev.spare_capacity_mut()[..total],
        );
        for band in &bands[..n] {
            let len = band.points.len();
            // Every point pushes a link and a flag (`Band::point`); the
            // writes below fill each part whole only then.
            assert!(band.next.len() == len && band.has_prev.len() == len);
            let (p, p_rest) = rest.0.split_at_mut(len);
            let (x, x_rest) = rest.1.split_at_mut(len);
            let (h, h_rest) = rest.2.split_at_mut(len);
            places.push((p, x, h));
            rest = (p_rest, x_rest, h_rest);
        }
    }
    places
        .into_par_iter()
        .zip(&bands[..n])
        .enumerate()
        .for_each(|(k, ((p, x, h), band))| {
            for (dst, &src) in p.iter_mut().zip(&band.points) {
                dst.write(src);
            }
            for (dst, &id) in x.iter_mut().zip(&band.next) {
                dst.write(remap(k, id));
            }
            for (dst, &src) in h.iter_mut().zip(&band.has_prev) {
                dst.write(src);
            }
        });
    // SAFETY: the bands' lengths add up to `total`, and the loop above wrote
    // each band's points, links and flags into its own part of the first
    // `total` slots of each vector's room.
    unsafe {
        points.set_len(total);
        next.set_len(total);
        has_prev.set_len(total);
    }
    for (k, band) in bands[..n].iter().enumerate().skip(1) {
        for (i, (&to, &prev)) in band.ghost_next.iter().zip(&band.ghost_has_prev).enumerate() {
            let at = (ghost_base[k] + i as u32) as usize;
            if to != NONE {
                next[at] = remap(k, to);
            }
            if prev {
                has_prev[at] = true;
            }
        }
    }
}
