//! Chaining contour segments into polylines.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use crate::Segments;
use crate::cache::{prefetch, prefetch_slice};
use crate::scan::NONE;

/// A contour polyline. Closed loops do not repeat the first point at the end.
/// Outer boundaries run counter-clockwise, holes clockwise (solid on the left).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Polyline {
    /// Points in world units.
    pub points: Vec<[f32; 2]>,
    /// True for a closed loop.
    pub closed: bool,
}

impl Polyline {
    /// A polyline from points.
    pub fn new(points: Vec<[f32; 2]>, closed: bool) -> Self {
        Polyline { points, closed }
    }

    /// Signed area of the loop (positive when counter-clockwise); 0 for an open chain.
    pub fn signed_area(&self) -> f64 {
        if self.closed {
            signed_area(&self.points)
        } else {
            0.0
        }
    }

    /// Length in world units, including the closing side of a loop.
    pub fn length(&self) -> f64 {
        let p = &self.points;
        let mut sum: f64 = p.windows(2).map(|w| dist(w[0], w[1])).sum();
        if self.closed && p.len() > 2 {
            sum += dist(p[p.len() - 1], p[0]);
        }
        sum
    }
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f64 {
    let dx = b[0] as f64 - a[0] as f64;
    let dy = b[1] as f64 - a[1] as f64;
    (dx * dx + dy * dy).sqrt()
}

/// "Visited" marker in a `next` array.
pub(crate) const DONE: u32 = u32::MAX - 1;

/// Writes polylines into a caller's vector, reusing the point buffers of the
/// polylines already there.
pub(crate) struct PolyWriter<'a> {
    out: &'a mut Vec<Polyline>,
    n: usize,
    /// Point buffers of polylines dropped by earlier calls, for new ones.
    spare: Option<&'a mut Vec<Vec<[f32; 2]>>>,
    /// The points of a polyline begun without a buffer of its own, until it
    /// ends and gets one of exactly its size.
    stage: Vec<[f32; 2]>,
    /// Whether the polyline begun last is written in `stage`.
    staged: bool,
}

impl<'a> PolyWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<Polyline>) -> Self {
        PolyWriter {
            out,
            n: 0,
            spare: None,
            stage: Vec::new(),
            staged: false,
        }
    }

    /// A writer that keeps the buffers of the polylines it drops in `spare`
    /// and takes new polylines' buffers from there, so that a caller who
    /// reuses its output and the pool allocates nothing.
    pub(crate) fn with_spare(
        out: &'a mut Vec<Polyline>,
        spare: &'a mut Vec<Vec<[f32; 2]>>,
    ) -> Self {
        PolyWriter {
            out,
            n: 0,
            spare: Some(spare),
            stage: Vec::new(),
            staged: false,
        }
    }

    /// Adds a polyline at the end of the output.
    fn push_line(&mut self) {
        let points = self
            .spare
            .as_deref_mut()
            .and_then(Vec::pop)
            .unwrap_or_default();
        self.out.push(Polyline {
            points,
            closed: false,
        });
    }

    /// Starts a new, empty polyline: its points go to the returned buffer.
    ///
    /// A polyline with a buffer to reuse is written straight into it. One
    /// without (every polyline of a one-shot call) is written into the
    /// writer's stage and copied at [`end`](Self::end) into a buffer of
    /// exactly its size, instead of growing its own by doubling: one
    /// allocation and one copy of its points, where growing took about
    /// eight of each and left the memory of the smaller buffers behind.
    fn begin(&mut self) -> &mut Vec<[f32; 2]> {
        if self.n == self.out.len() {
            self.push_line();
        }
        let line = &mut self.out[self.n];
        self.n += 1;
        self.staged = line.points.capacity() == 0;
        if self.staged {
            self.stage.clear();
            &mut self.stage
        } else {
            line.points.clear();
            &mut line.points
        }
    }

    /// Keeps the polyline begun last unless it is degenerate: a loop with
    /// fewer than three distinct points, or a chain with fewer than two. A
    /// loop's last point is dropped when it repeats the first.
    fn end(&mut self, closed: bool) {
        let line = &mut self.out[self.n - 1];
        line.closed = closed;
        let p = if self.staged {
            &mut self.stage
        } else {
            &mut line.points
        };
        if closed && p.len() > 1 && p[p.len() - 1] == p[0] {
            p.pop();
        }
        let min = if closed { 3 } else { 2 };
        if p.len() < min {
            self.n -= 1;
            if self.staged {
                // The slot keeps the stage's room, so that a caller who
                // reuses the output finds a buffer there next time.
                self.stage.clear();
                std::mem::swap(&mut line.points, &mut self.stage);
            }
        } else if self.staged {
            line.points.reserve_exact(self.stage.len());
            line.points.extend_from_slice(&self.stage);
        }
        self.staged = false;
    }

    /// The points of the `k`-th polyline after the ones written so far (its
    /// buffer reused when there is one), for [`end_slots`](Self::end_slots).
    #[inline(always)]
    fn slot(&mut self, k: usize) -> &mut Vec<[f32; 2]> {
        let i = self.n + k;
        while i >= self.out.len() {
            self.push_line();
        }
        &mut self.out[i].points
    }

    /// Ends the polylines filled through [`slot`](Self::slot) `0..closed.len()`,
    /// in that order, as [`begin`](Self::begin) and [`end`](Self::end) would
    /// have: degenerate ones are dropped and the rest close up.
    fn end_slots(&mut self, closed: &[bool]) {
        let base = self.n;
        for (k, &c) in closed.iter().enumerate() {
            self.out.swap(self.n, base + k);
            self.n += 1;
            self.end(c);
        }
    }

    /// The next `count` polylines after the ones written (their buffers
    /// reused where there are some), to be filled as [`slot`](Self::slot)s
    /// `0..count` and ended with [`end_slots`](Self::end_slots).
    #[cfg(feature = "parallel")]
    fn next_slots(&mut self, count: usize) -> &mut [Polyline] {
        if count > 0 {
            self.slot(count - 1);
        }
        &mut self.out[self.n..self.n + count]
    }

    /// Drops the polylines past the ones written.
    pub(crate) fn finish(self) {
        match self.spare {
            Some(spare) => spare.extend(self.out.drain(self.n..).map(|l| l.points)),
            None => self.out.truncate(self.n),
        }
    }
}

#[inline(always)]
fn push_point(points: &mut Vec<[f32; 2]>, p: [f32; 2]) {
    if points.last() != Some(&p) {
        points.push(p);
    }
}

/// Follows `next` links into polylines: first open chains from their start
/// points (points with no predecessor), in id order, then closed loops from
/// their lowest id. Marks visited points (`DONE`, or a loop walk's claim).
///
/// `lanes` is given when no point has two incoming links (true of the links
/// [`ContourTracer`](crate::ContourTracer) makes): the open chains then
/// cannot meet, and on a large field the chains and then the loops are
/// walked several at a time (see [`walk_open_interleaved`] and
/// [`walk_loops_interleaved`]), which gives the same polylines. With
/// `parallel` too, the open chains are walked on the current rayon pool's
/// threads when it has several ([`walk_open_parallel`]).
pub(crate) fn walk_chains(
    points: &[[f32; 2]],
    next: &mut [u32],
    has_prev: &[bool],
    lanes: Option<&mut LaneScratch>,
    parallel: bool,
    w: &mut PolyWriter<'_>,
) {
    if let Some(lanes) = lanes
        && next.len() >= INTERLEAVE_FROM_POINTS
    {
        if on_pool(parallel) {
            #[cfg(feature = "parallel")]
            walk_open_parallel(points, next, has_prev, w);
        } else {
            let n = next.len();
            walk_open_interleaved(points, next, has_prev, 0..n, &mut lanes.closed, w);
            w.end_slots(&lanes.closed);
        }
        if loops_fit_claims(next.len()) {
            walk_loops_interleaved(points, next, lanes, w);
            return;
        }
    } else {
        if next.len() >= WARM_FROM_POINTS {
            // The scan wrote the points and links row by row and then read
            // on through the field, which pushes its early rows out of the
            // shared cache on a busy machine; a walk that found them there
            // would wait on memory at nearly every point. Asked for in
            // order, they come back at the memory's streaming speed.
            prefetch_slice(next);
            prefetch_slice(points);
        }
        walk_open(points, next, has_prev, w);
    }
    walk_loops(points, next, w);
}

/// Fewest points for which [`walk_chains`] asks for the points and links
/// in order before walking them one chain at a time: below it they fit a
/// core's own cache (about 400 KiB of points and links). Above, up to
/// [`INTERLEAVE_FROM_POINTS`], they fit the shared cache of the machines
/// measured, and on a dense 2048^2 field (440 thousand points) asking for
/// them first took the walk from 4.1-8.3 to 3.4-5.4 ms (medians of 150
/// calls, the two alternated; BENCHMARKS.md).
const WARM_FROM_POINTS: usize = 1 << 15;

/// True when a walk asked to run on the current rayon pool (`parallel`)
/// finds several threads there.
fn on_pool(parallel: bool) -> bool {
    #[cfg(feature = "parallel")]
    return parallel && rayon::current_num_threads() > 1;
    #[cfg(not(feature = "parallel"))]
    {
        let _ = parallel;
        false
    }
}

/// Where [`walk_open_interleaved`] writes the `k`-th chain it begins.
trait ChainSlots {
    fn slot(&mut self, k: usize) -> &mut Vec<[f32; 2]>;
}

impl ChainSlots for PolyWriter<'_> {
    #[inline(always)]
    fn slot(&mut self, k: usize) -> &mut Vec<[f32; 2]> {
        PolyWriter::slot(self, k)
    }
}

impl ChainSlots for [Polyline] {
    #[inline(always)]
    fn slot(&mut self, k: usize) -> &mut Vec<[f32; 2]> {
        &mut self[k].points
    }
}

/// The links a walk follows and marks: a slice, or a slice that walks on
/// several threads share, each following chains of its own.
trait Links {
    fn get(&self, i: usize) -> u32;
    fn set(&mut self, i: usize, v: u32);
    fn prefetch(&self, i: usize);
}

impl Links for [u32] {
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        self[i]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, v: u32) {
        self[i] = v;
    }

    #[inline(always)]
    fn prefetch(&self, i: usize) {
        prefetch(&self[i]);
    }
}

/// Links shared by walks on several threads. Each walk reads and marks only
/// the points of its own chains, which no other walk reaches (no point has
/// two incoming links), so the accesses need no ordering.
#[cfg(feature = "parallel")]
struct SharedLinks<'a>(&'a [std::sync::atomic::AtomicU32]);

#[cfg(feature = "parallel")]
impl Links for SharedLinks<'_> {
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        self.0[i].load(std::sync::atomic::Ordering::Relaxed)
    }

    #[inline(always)]
    fn set(&mut self, i: usize, v: u32) {
        self.0[i].store(v, std::sync::atomic::Ordering::Relaxed);
    }

    #[inline(always)]
    fn prefetch(&self, i: usize) {
        prefetch(&self.0[i]);
    }
}

/// Walks the open chains as [`walk_open_interleaved`] does, on the current
/// rayon pool: the ids are cut into a few ranges per thread, the chains
/// that start in each range are counted, each range gets that many of the
/// output's next polylines (their buffers reused), in range order, which is
/// the order of the chains' starts, and one task per range walks its chains
/// into them: the same polylines as one walk.
///
/// Only for links where no point has two incoming links, so that the
/// chains, hence the tasks' points, are disjoint.
#[cfg(feature = "parallel")]
fn walk_open_parallel(
    points: &[[f32; 2]],
    next: &mut [u32],
    has_prev: &[bool],
    w: &mut PolyWriter<'_>,
) {
    use rayon::prelude::*;
    let n = next.len();
    let ranges = (8 * rayon::current_num_threads()).min(n.max(1));
    let range = |k: usize| n * k / ranges..n * (k + 1) / ranges;
    let starts: Vec<usize> = (0..ranges)
        .into_par_iter()
        .map(|k| {
            let next = &*next;
            range(k).filter(|&s| !has_prev[s] && next[s] < DONE).count()
        })
        .collect();
    let mut rest = w.next_slots(starts.iter().sum());
    let mut parts = Vec::with_capacity(ranges);
    for &count in &starts {
        let (part, tail) = rest.split_at_mut(count);
        parts.push(part);
        rest = tail;
    }
    // SAFETY: `AtomicU32` has the size, alignment and bit validity of
    // `u32`, and `next` stays borrowed for as long as `shared` is used.
    let shared = unsafe { &*(next as *mut [u32] as *const [std::sync::atomic::AtomicU32]) };
    let closed: Vec<Vec<bool>> = parts
        .into_par_iter()
        .enumerate()
        .map(|(k, lines)| {
            let mut closed = Vec::with_capacity(lines.len());
            let mut links = SharedLinks(shared);
            walk_open_interleaved(points, &mut links, has_prev, range(k), &mut closed, lines);
            closed
        })
        .collect();
    w.end_slots(&closed.concat());
}

/// Open chains, one at a time, from their start points in id order.
fn walk_open(points: &[[f32; 2]], next: &mut [u32], has_prev: &[bool], w: &mut PolyWriter<'_>) {
    for start in 0..next.len() {
        if !has_prev[start] && next[start] < DONE {
            walk(start as u32, points, next, w);
        }
    }
}

/// What is left once the open chains are walked: loops, each from its
/// lowest id.
fn walk_loops(points: &[[f32; 2]], next: &mut [u32], w: &mut PolyWriter<'_>) {
    for start in 0..next.len() {
        if next[start] < DONE {
            walk(start as u32, points, next, w);
        }
    }
}

/// Fewest points for which open chains are walked several at a time: about
/// 6.8 MB of points and links, which with the field the scan read before
/// them (4 bytes a node, about twice the points' bytes on a dense field)
/// is more than the shared cache keeps. Below it the chains' points are
/// mostly in cache, and one walk at a time is faster (a dense 2048^2 field,
/// 440 thousand points: 9-10 against 14.5-15 ms a call); above it the
/// walks wait on memory (a dense 2896^2 field, 875 thousand points: 23-39
/// ms one at a time, as the host's other load goes, against a steady 24-25
/// several at a time; 4096^2, 1.75 million: 61-66 against 50-51).
const INTERLEAVE_FROM_POINTS: usize = 1 << 19;

/// How many chains [`walk_open_interleaved`] (or loops,
/// [`walk_loops_interleaved`]) follows at once.
const LANES: usize = 16;

/// One open chain being followed.
#[derive(Default, Clone, Copy)]
struct Lane {
    busy: bool,
    /// Whether the chain is written in the lane's stage.
    staged: bool,
    start: u32,
    cur: u32,
    /// Place of the chain in the output order.
    seq: usize,
}

/// The buffers of [`walk_open_interleaved`] and [`walk_loops_interleaved`],
/// kept between calls so that a warmed-up tracer allocates nothing.
#[derive(Debug, Default, Clone)]
pub(crate) struct LaneScratch {
    /// Whether each chain begun so far ended back at its start.
    closed: Vec<bool>,
    /// The points of each lane's loop walk.
    lane_points: Vec<Vec<[f32; 2]>>,
    /// The points of loop walks that ended, until their loops are written.
    arena: Vec<[f32; 2]>,
    /// Loop walks from the earliest one not yet written.
    pieces: VecDeque<Piece>,
}

/// Walks the open chains [`LANES`] at a time, one step of each in turn, and
/// writes them in the order of their start points, as one-at-a-time walking
/// does. Each step's next point is prefetched, so the lanes' cache misses
/// overlap: an open chain runs across the whole field (a diagonal contour of
/// a large grid visits one point per row), and walked alone it waits on
/// memory at every point.
///
/// Each chain is written straight into the polyline it becomes (the one at
/// its place in the start order), so a warmed-up tracer reuses the same
/// buffers for the same chains and nothing is copied.
///
/// Only for links where no point has two incoming links: chains that met
/// would be cut where they meet in the order the lanes reach the meeting
/// point, not in start order.
fn walk_open_interleaved<L: Links + ?Sized, S: ChainSlots + ?Sized>(
    points: &[[f32; 2]],
    next: &mut L,
    has_prev: &[bool],
    mut candidates: std::ops::Range<usize>,
    closed: &mut Vec<bool>,
    w: &mut S,
) {
    let mut lanes = [Lane::default(); LANES];
    // Each lane's chain while it is walked, where its polyline has no
    // buffer yet: copied at the end into one of exactly its size, as
    // `PolyWriter::begin` does for one chain at a time.
    let mut stages: [Vec<[f32; 2]>; LANES] = Default::default();
    closed.clear();
    loop {
        let mut busy = 0;
        for lane in &mut lanes {
            if !lane.busy {
                for s in candidates.by_ref() {
                    if !has_prev[s] && next.get(s) < DONE {
                        let seq = closed.len();
                        closed.push(false);
                        let line = w.slot(seq);
                        line.clear();
                        *lane = Lane {
                            busy: true,
                            staged: line.capacity() == 0,
                            start: s as u32,
                            cur: s as u32,
                            seq,
                        };
                        break;
                    }
                }
            }
            busy += usize::from(lane.busy);
        }
        if busy == 0 {
            break;
        }
        for (lane, stage) in lanes.iter_mut().zip(&mut stages).filter(|(l, _)| l.busy) {
            let pts = if lane.staged {
                &mut *stage
            } else {
                w.slot(lane.seq)
            };
            match step::<true, _>(lane.start, lane.cur, points, next, pts) {
                Ok(nx) => {
                    lane.cur = nx;
                    next.prefetch(nx as usize);
                    prefetch(&points[nx as usize]);
                }
                Err(c) => {
                    lane.busy = false;
                    closed[lane.seq] = c;
                    if lane.staged {
                        let line = w.slot(lane.seq);
                        line.reserve_exact(stage.len());
                        line.extend_from_slice(stage);
                        stage.clear();
                    }
                }
            }
        }
    }
}

/// True when [`walk_loops_interleaved`] can mark `n` points with claims
/// (`n + walk` for every walk, below the `DONE` marker).
fn loops_fit_claims(n: usize) -> bool {
    n.checked_mul(2).is_some_and(|m| m < DONE as usize)
}

/// Walks the closed loops left after the open chains [`LANES`] at a time,
/// one step of each in turn, and writes each loop from its lowest id, in
/// the order of those ids: what [`walk_loops`] writes.
///
/// Walks begin at the unvisited ids in increasing order, so a later walk
/// may begin on a loop that an earlier walk is still following (a loop
/// crosses a row of the grid at least twice). Each walk claims the points
/// it passes (their link becomes `n + walk`). A point has one predecessor,
/// so a walk that reaches a claimed point has reached the start of the walk
/// that claimed it: its piece of the loop goes on with that walk's piece.
/// Once the pieces link back to where they began the loop is whole, and the
/// earliest walk on it, which began at the loop's lowest id, writes the
/// pieces in order; the other walks write nothing. A loop followed by one
/// walk links to itself. Loops are written in walk order, so a finished
/// piece waits (in one arena of points) for the walks begun before it.
///
/// Only for links where no point has two incoming links, with the open
/// chains walked already (every point left is on a loop).
fn walk_loops_interleaved(
    points: &[[f32; 2]],
    next: &mut [u32],
    scratch: &mut LaneScratch,
    w: &mut PolyWriter<'_>,
) {
    let n = next.len();
    debug_assert!(loops_fit_claims(n));
    let claim = |walk: usize| (n + walk) as u32;
    // The walk of each lane and the point it goes to next.
    let mut lanes: [Option<(usize, u32)>; LANES] = [None; LANES];
    let LaneScratch {
        lane_points,
        arena,
        pieces,
        ..
    } = scratch;
    lane_points.resize_with(LANES, Vec::new);
    arena.clear();
    pieces.clear();
    // Walk number of `pieces[0]`, and walks begun.
    let (mut first, mut begun) = (0usize, 0usize);
    let mut candidates = 0..n;
    loop {
        let mut busy = 0;
        for (lane, pts) in lanes.iter_mut().zip(lane_points.iter_mut()) {
            if lane.is_none() {
                for s in candidates.by_ref() {
                    let link = next[s];
                    if (link as usize) < n {
                        // Claimed before any lane steps again, so a claimed
                        // point is always a walk's start or reached from a
                        // point of the same walk.
                        pts.clear();
                        pts.push(points[s]);
                        next[s] = claim(begun);
                        pieces.push_back(Piece::default());
                        *lane = Some((begun, link));
                        begun += 1;
                        break;
                    }
                }
            }
            busy += usize::from(lane.is_some());
        }
        if busy == 0 {
            break;
        }
        for (lane, pts) in lanes.iter_mut().zip(lane_points.iter_mut()) {
            let Some((walk, cur)) = *lane else { continue };
            let link = next[cur as usize] as usize;
            if link < n {
                push_point(pts, points[cur as usize]);
                next[cur as usize] = claim(walk);
                *lane = Some((walk, link as u32));
                prefetch(&next[link]);
                prefetch(&points[link]);
                continue;
            }
            *lane = None;
            // The start of walk `link - n`: this walk's own when one walk
            // went round the loop. (A point outside every loop, which only
            // inconsistent links have, ends the walk as its own loop.)
            let other = if link < 2 * n { link - n } else { walk };
            pieces[walk - first] = Piece {
                start: arena.len(),
                len: pts.len(),
                link: other,
                state: PieceState::Walked,
            };
            arena.extend_from_slice(pts);
            join_loop(walk, first, pieces);
        }
        while let Some(front) = pieces.front() {
            match front.state {
                PieceState::Walking | PieceState::Walked => break,
                PieceState::Part => {}
                PieceState::Head => {
                    let line = w.begin();
                    let mut at = first;
                    loop {
                        let piece = &pieces[at - first];
                        let mut rest = arena[piece.start..piece.start + piece.len].iter();
                        // Consecutive equal points are one point, across
                        // pieces too.
                        if let Some(&p) = rest.next() {
                            push_point(line, p);
                        }
                        line.extend(rest);
                        at = piece.link;
                        if at == first {
                            break;
                        }
                    }
                    w.end(true);
                }
            }
            pieces.pop_front();
            first += 1;
        }
        if pieces.is_empty() {
            arena.clear();
        }
    }
}

/// Where a loop walk stands.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum PieceState {
    #[default]
    Walking,
    /// Ended, its loop not yet whole.
    Walked,
    /// The earliest walk of a whole loop: writes it.
    Head,
    /// Another walk of a whole loop.
    Part,
}

/// One loop walk's piece: its points in the arena, and the walk whose start
/// it ran into.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Piece {
    start: usize,
    len: usize,
    link: usize,
    state: PieceState,
}

/// When the pieces linked from walk `walk` close into a loop, marks the
/// earliest walk on it to write it and the others as its parts.
fn join_loop(walk: usize, first: usize, pieces: &mut VecDeque<Piece>) {
    let (mut at, mut lowest) = (walk, walk);
    loop {
        let piece = &pieces[at - first];
        if piece.state == PieceState::Walking {
            return;
        }
        at = piece.link;
        if at == walk {
            break;
        }
        lowest = lowest.min(at);
    }
    loop {
        pieces[at - first].state = if at == lowest {
            PieceState::Head
        } else {
            PieceState::Part
        };
        at = pieces[at - first].link;
        if at == walk {
            break;
        }
    }
}

fn walk(start: u32, points: &[[f32; 2]], next: &mut [u32], w: &mut PolyWriter<'_>) {
    let pts = w.begin();
    let mut cur = start;
    let closed = loop {
        match step::<false, _>(start, cur, points, next, pts) {
            Ok(nx) => cur = nx,
            Err(closed) => break closed,
        }
    };
    w.end(closed);
}

/// One step of the walk begun at `start`: appends the point `cur` to `pts`,
/// marks it `DONE` and returns the next point, or `Err(closed)` where the
/// walk ends: at the chain's end, back at its start (a loop), or where it
/// runs into a chain already walked (only with inconsistent input; that
/// point is appended too).
///
/// With `AHEAD`, for links where no point has two incoming links, the check
/// that the next point was walked already is made when the walk gets there,
/// so that the point's link is read once, from the cache line prefetched
/// for it one step earlier. The same points are appended: nothing but this
/// walk can reach its next point.
#[inline(always)]
fn step<const AHEAD: bool, L: Links + ?Sized>(
    start: u32,
    cur: u32,
    points: &[[f32; 2]],
    next: &mut L,
    pts: &mut Vec<[f32; 2]>,
) -> Result<u32, bool> {
    push_point(pts, points[cur as usize]);
    let nx = next.get(cur as usize);
    if AHEAD && nx == DONE {
        return Err(false);
    }
    next.set(cur as usize, DONE);
    if nx == NONE {
        return Err(false);
    }
    if nx == start {
        return Err(true);
    }
    if !AHEAD && next.get(nx as usize) == DONE {
        push_point(pts, points[nx as usize]);
        return Err(false);
    }
    Ok(nx)
}

/// A small, well-mixing hasher for `u64` keys (splitmix64 finaliser).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        let mut x = v ^ self.0.rotate_left(29);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = x ^ (x >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Joins segments (from one or several chunks) into polylines by their global keys.
///
/// Points of different parts with the same [`EdgeKey`](crate::EdgeKey) are the same
/// point (its position is taken from the first part that holds it). Each point
/// is then followed along its outgoing segment. The result:
///
/// * open chains first, each started at a point without an incoming segment (the
///   contour leaves the meshed area there), in order of first appearance;
/// * then closed loops (the first point is not repeated at the end), each
///   started at its earliest point;
/// * consecutive points at exactly the same position (a contour passing through
///   a node whose value equals `iso`) are merged, and loops left with fewer than
///   three points or chains with fewer than two (they enclose nothing) are dropped.
///
/// Joining the segments of every chunk of a field gives the same polylines as
/// joining the segments of the whole field, up to their order and the point a
/// loop starts at.
///
/// Input that [`MarchingSquares`](crate::MarchingSquares) cannot produce is handled
/// without panicking: segments with out-of-range indices or joining a point to
/// itself are skipped, identical duplicates are ignored, and a second, different
/// segment leaving the same point becomes its own two-point chain.
#[derive(Debug, Default, Clone)]
pub struct ContourJoiner {
    map: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    points: Vec<[f32; 2]>,
    next: Vec<u32>,
    has_prev: Vec<bool>,
    local: Vec<u32>,
    extra: Vec<[u32; 2]>,
}

impl ContourJoiner {
    /// A joiner with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Chains all segments of `parts` into `out` (cleared first): open chains
    /// from their ends first, then closed loops.
    ///
    /// The polylines already in `out` lend their point buffers, so a steady
    /// loop that reuses `out` allocates nothing once warmed up.
    pub fn join(&mut self, parts: &[&Segments], out: &mut Vec<Polyline>) {
        self.map.clear();
        self.points.clear();
        self.next.clear();
        self.has_prev.clear();
        self.extra.clear();
        for part in parts {
            let n = part.points.len().min(part.keys.len());
            self.local.clear();
            for i in 0..n {
                let key = part.keys[i].0;
                let points = &mut self.points;
                let next = &mut self.next;
                let has_prev = &mut self.has_prev;
                let id = *self.map.entry(key).or_insert_with(|| {
                    points.push(part.points[i]);
                    next.push(NONE);
                    has_prev.push(false);
                    (points.len() - 1) as u32
                });
                self.local.push(id);
            }
            for &[a, b] in &part.segments {
                let (a, b) = (a as usize, b as usize);
                if a >= n || b >= n {
                    continue;
                }
                let (ga, gb) = (self.local[a], self.local[b]);
                if ga == gb {
                    continue;
                }
                let slot = &mut self.next[ga as usize];
                if *slot == NONE {
                    *slot = gb;
                    self.has_prev[gb as usize] = true;
                } else if *slot != gb {
                    self.extra.push([ga, gb]);
                }
            }
        }
        let mut w = PolyWriter::new(out);
        // Parts may disagree, so two links may enter one point: walk one
        // chain at a time.
        walk_chains(
            &self.points,
            &mut self.next,
            &self.has_prev,
            None,
            false,
            &mut w,
        );
        for &[a, b] in &self.extra {
            let pts = w.begin();
            push_point(pts, self.points[a as usize]);
            push_point(pts, self.points[b as usize]);
            w.end(false);
        }
        w.finish();
    }
}

/// Signed area of a closed polygon (positive when counter-clockwise).
///
/// The polygon is closed implicitly (the last point joins the first). Computed
/// in `f64` relative to the first point.
pub fn signed_area(points: &[[f32; 2]]) -> f64 {
    if points.len() < 3 {
        return 0.0;
    }
    let (x0, y0) = (points[0][0] as f64, points[0][1] as f64);
    let mut sum = 0.0;
    for w in points[1..].windows(2) {
        let (ax, ay) = (w[0][0] as f64 - x0, w[0][1] as f64 - y0);
        let (bx, by) = (w[1][0] as f64 - x0, w[1][1] as f64 - y0);
        sum += ax * by - ay * bx;
    }
    0.5 * sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EdgeKey;

    fn seg(points: &[[f32; 2]], segments: &[[u32; 2]]) -> Segments {
        Segments {
            points: points.to_vec(),
            keys: (0..points.len() as u32)
                .map(|i| EdgeKey::node(i, 0))
                .collect(),
            segments: segments.to_vec(),
        }
    }

    #[test]
    fn area_of_unit_square_both_ways() {
        let sq = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        assert_eq!(signed_area(&sq), 1.0);
        let mut rev = sq;
        rev.reverse();
        assert_eq!(signed_area(&rev), -1.0);
        assert_eq!(signed_area(&sq[..2]), 0.0);
    }

    #[test]
    fn joins_loop_and_chain() {
        let s = seg(
            &[
                [0.0, 0.0],
                [1.0, 0.0],
                [1.0, 1.0],
                [5.0, 5.0],
                [6.0, 5.0],
                [7.0, 5.0],
            ],
            &[[1, 2], [4, 5], [2, 0], [0, 1], [3, 4]],
        );
        let mut out = vec![Polyline::default(); 5];
        ContourJoiner::new().join(&[&s], &mut out);
        assert_eq!(out.len(), 2);
        assert!(!out[0].closed);
        assert_eq!(out[0].points, vec![[5.0, 5.0], [6.0, 5.0], [7.0, 5.0]]);
        assert!(out[1].closed);
        assert_eq!(out[1].points, vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]);
    }

    #[test]
    fn malformed_input_does_not_panic() {
        let s = seg(
            &[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]],
            &[[0, 1], [0, 1], [0, 2], [1, 1], [9, 0], [2, 1]],
        );
        let mut out = Vec::new();
        ContourJoiner::new().join(&[&s], &mut out);
        let total: usize = out.iter().map(|l| l.points.len()).sum();
        assert!(total >= 3);
    }

    /// Links made of disjoint chains and loops over shuffled ids, with some
    /// points repeated (as at a node exactly at the iso level).
    fn disjoint_links()
    -> impl proptest::strategy::Strategy<Value = (Vec<[f32; 2]>, Vec<u32>, Vec<bool>)> {
        use proptest::prelude::*;
        (
            prop::collection::vec((1usize..40, any::<bool>()), 0..40),
            any::<u64>(),
        )
            .prop_map(|(parts, seed)| {
                let n: usize = parts.iter().map(|p| p.0).sum();
                // A seeded shuffle of the ids.
                let mut ids: Vec<u32> = (0..n as u32).collect();
                let mut x = seed | 1;
                for i in (1..n).rev() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ids.swap(i, (x % (i as u64 + 1)) as usize);
                }
                let points: Vec<[f32; 2]> = (0..n)
                    .map(|i| [(i / 3) as f32, (i % 5) as f32 * 0.5])
                    .collect();
                let mut next = vec![NONE; n];
                let mut has_prev = vec![false; n];
                let mut at = 0;
                for (len, closed) in parts {
                    let chain = &ids[at..at + len];
                    at += len;
                    for w in chain.windows(2) {
                        next[w[0] as usize] = w[1];
                        has_prev[w[1] as usize] = true;
                    }
                    if closed && len > 1 {
                        next[chain[len - 1] as usize] = chain[0];
                        has_prev[chain[0] as usize] = true;
                    }
                }
                (points, next, has_prev)
            })
    }

    proptest::proptest! {
        /// Walking loops several at a time gives what walking them one at a
        /// time gives, with many walks on one loop (the ids are shuffled) and
        /// runs of equal points (positions with few values).
        #[test]
        fn interleaved_loops_equal_one_at_a_time(
            (points, next, has_prev) in disjoint_links(),
            coarse in proptest::prelude::any::<bool>(),
        ) {
            let points: Vec<[f32; 2]> = if coarse {
                (0..points.len()).map(|i| [(i % 2) as f32, 0.0]).collect()
            } else {
                points
            };
            let walked = |interleaved: bool| {
                let mut next = next.clone();
                let mut out = vec![Polyline::new(vec![[7.0, 7.0]; 3], false); 4];
                let mut w = PolyWriter::new(&mut out);
                walk_open(&points, &mut next, &has_prev, &mut w);
                if interleaved {
                    let mut lanes = LaneScratch::default();
                    walk_loops_interleaved(&points, &mut next, &mut lanes, &mut w);
                } else {
                    walk_loops(&points, &mut next, &mut w);
                }
                w.finish();
                out
            };
            let one = walked(false);
            proptest::prop_assert_eq!(&one, &walked(true));
        }

        /// Walking open chains several at a time gives what walking them one
        /// at a time gives: the same polylines in the same order.
        #[test]
        fn interleaved_walks_equal_one_at_a_time((points, next, has_prev) in disjoint_links()) {
            let walked = |interleaved: bool| {
                let mut next = next.clone();
                let mut out = Vec::new();
                let mut w = PolyWriter::new(&mut out);
                if interleaved {
                    let n = next.len();
                    let mut closed = Vec::new();
                    walk_open_interleaved(&points, &mut next[..], &has_prev, 0..n, &mut closed, &mut w);
                    w.end_slots(&closed);
                } else {
                    walk_open(&points, &mut next, &has_prev, &mut w);
                }
                walk_loops(&points, &mut next, &mut w);
                w.finish();
                (out, next)
            };
            let (one, next_one) = walked(false);
            let (many, next_many) = walked(true);
            proptest::prop_assert_eq!(&one, &many);
            proptest::prop_assert_eq!(next_one, next_many);
        }

        /// Walking open chains on a pool of three threads gives what one
        /// walk gives: the same polylines in the same order, the same marks,
        /// into an output whose polylines are reused.
        #[cfg(feature = "parallel")]
        #[test]
        fn parallel_walks_equal_one_at_a_time((points, next, has_prev) in disjoint_links()) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let walked = |parallel: bool| {
                let mut next = next.clone();
                let mut out = vec![Polyline::new(vec![[7.0, 7.0]; 3], true); 2];
                let mut spare = vec![vec![[1.0, 1.0]]];
                let mut w = PolyWriter::with_spare(&mut out, &mut spare);
                if parallel {
                    pool.install(|| walk_open_parallel(&points, &mut next, &has_prev, &mut w));
                } else {
                    walk_open(&points, &mut next, &has_prev, &mut w);
                }
                walk_loops(&points, &mut next, &mut w);
                w.finish();
                (out, next)
            };
            let (one, next_one) = walked(false);
            let (many, next_many) = walked(true);
            proptest::prop_assert_eq!(&one, &many);
            proptest::prop_assert_eq!(next_one, next_many);
        }
    }
}
