//! Sized output: a fresh output's room before one scan ([`run_fresh`]), or
//! exactly sized output slab by slab: count, allocate once, fill.
//!
//! The box's cell layers are cut into z-slabs. A first scan of each slab only
//! counts its vertices and triangle corners ([`CountSink`]); prefix sums give
//! each slab the id of its first vertex and the place of its first index; the
//! output vectors are reserved once to their exact final length; a second scan
//! writes each slab straight into its own part ([`SlabSink`]). Slabs are
//! independent in both scans, so they can run on several threads; the output
//! is the output of the single scan of the whole box, bit for bit, however the
//! layers are cut (see `sink.rs` for why).

use super::CubesOutput;
use super::kernel::{Bounds, Input, Packing, Scratch};
#[cfg(any(feature = "parallel", test))]
use super::sink::LocalSink;
use super::sink::{CountSink, Counts, Ghost, SlabParts, SlabSink, VecSink};

/// Cuts the cell layers of `inp`'s box into `n` slabs (at most one per layer)
/// of nearly equal thickness, bottom to top.
#[cfg(any(feature = "parallel", test))]
pub(crate) fn cut(inp: &Input<'_>, n: usize) -> Vec<(u32, u32)> {
    let c = inp.cells();
    let layers = (c.z1 - c.z0) as usize;
    let n = n.clamp(1, layers.max(1));
    (0..n)
        .map(|k| {
            let a = c.z0 + (layers * k / n) as u32;
            let b = c.z0 + (layers * (k + 1) / n) as u32;
            (a, b)
        })
        .collect()
}

/// Counts what slab `k` (`z0..z1`) emits.
pub(crate) fn count<const N: bool, const M: bool>(
    scratch: &mut Scratch,
    inp: &Input<'_>,
    k: usize,
    (z0, z1): (u32, u32),
    packing: Packing,
) -> Counts {
    let mut sink = CountSink::new(k > 0);
    scratch.scan::<N, M, _>(&inp.slab(z0, z1), &mut sink, packing);
    sink.counts
}

/// Where each slab's output starts.
pub(crate) struct Plan {
    /// Id of each slab's first own vertex, then the total vertex count.
    pub(crate) vertex_start: Vec<usize>,
    /// Index of each slab's first triangle corner, then the total.
    pub(crate) index_start: Vec<usize>,
    /// Id of the first vertex of each slab's first node slice (owned by the slab
    /// below; unused for slab 0).
    pub(crate) ghost_start: Vec<u32>,
    /// Number of vertices of each slab's first node slice that the slab below
    /// owns (0 for slab 0).
    #[cfg_attr(not(any(feature = "parallel", test)), allow(dead_code))]
    pub(crate) ghosts: Vec<u32>,
}

impl Plan {
    pub(crate) fn new(counts: &[Counts]) -> Self {
        let mut vertex_start = vec![0usize];
        let mut index_start = vec![0usize];
        let mut ghost_start = vec![0u32];
        for (k, c) in counts.iter().enumerate() {
            let v = vertex_start[k];
            if k + 1 < counts.len() {
                ghost_start.push((v + c.last_slice_start as usize) as u32);
            }
            vertex_start.push(v + c.vertices as usize);
            index_start.push(index_start[k] + c.indices);
        }
        Plan {
            vertex_start,
            index_start,
            ghost_start,
            ghosts: counts.iter().map(|c| c.ghost).collect(),
        }
    }

    pub(crate) fn vertices(&self) -> usize {
        *self.vertex_start.last().expect("at least one start")
    }

    pub(crate) fn indices(&self) -> usize {
        *self.index_start.last().expect("at least one start")
    }
}

/// Cuts `buf` into consecutive parts whose lengths are the differences of
/// `starts` (empty parts when `buf` is empty).
fn split<'a, T>(mut buf: &'a mut [T], starts: &[usize]) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(starts.len().saturating_sub(1));
    for w in starts.windows(2) {
        let n = if buf.is_empty() { 0 } else { w[1] - w[0] };
        let (head, rest) = std::mem::take(&mut buf).split_at_mut(n);
        parts.push(head);
        buf = rest;
    }
    parts
}

/// The output buffers, cleared and reserved to the plan's exact lengths, cut
/// into one [`SlabParts`] per slab. Call [`commit`] once every part is full.
pub(crate) fn parts<'a, const N: bool, const M: bool>(
    out: &'a mut CubesOutput,
    plan: &Plan,
) -> Vec<SlabParts<'a>> {
    out.reset();
    let (v, i) = (plan.vertices(), plan.indices());
    crate::huge_pages::reserve_exact(&mut out.positions, v);
    if N {
        crate::huge_pages::reserve_exact(&mut out.normals, v);
    }
    if M {
        crate::huge_pages::reserve_exact(&mut out.materials, v);
    }
    crate::huge_pages::reserve_exact(&mut out.indices, i);
    let positions = split(
        &mut out.positions.spare_capacity_mut()[..v],
        &plan.vertex_start,
    );
    let normals = split(
        &mut out.normals.spare_capacity_mut()[..if N { v } else { 0 }],
        &plan.vertex_start,
    );
    let materials = split(
        &mut out.materials.spare_capacity_mut()[..if M { v } else { 0 }],
        &plan.vertex_start,
    );
    let indices = split(
        &mut out.indices.spare_capacity_mut()[..i],
        &plan.index_start,
    );
    positions
        .into_iter()
        .zip(normals)
        .zip(materials)
        .zip(indices)
        .map(|(((positions, normals), materials), indices)| SlabParts {
            positions,
            normals,
            materials,
            indices,
        })
        .collect()
}

/// Fills slab `k` into `parts`; returns false when the scan did not fill them
/// exactly (a bug in this crate).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill<const N: bool, const M: bool>(
    scratch: &mut Scratch,
    ghost: &mut Ghost,
    inp: &Input<'_>,
    plan: &Plan,
    k: usize,
    (z0, z1): (u32, u32),
    parts: SlabParts<'_>,
    packing: Packing,
) -> bool {
    let ghost = (k > 0).then(|| (ghost, plan.ghost_start[k]));
    let mut sink = SlabSink::new(parts, plan.vertex_start[k] as u32, ghost);
    scratch.scan::<N, M, _>(&inp.slab(z0, z1), &mut sink, packing);
    sink.is_full()
}

/// Exposes the filled buffers.
///
/// # Panics
///
/// When a slab was not filled exactly (`filled` holds a false): a bug in this
/// crate, never a consequence of the input.
pub(crate) fn commit<const N: bool, const M: bool>(
    out: &mut CubesOutput,
    plan: &Plan,
    filled: &[bool],
) {
    assert!(
        filled.iter().all(|&f| f),
        "marching cubes: a slab's second scan disagreed with its count (please report this bug)"
    );
    let (v, i) = (plan.vertices(), plan.indices());
    // SAFETY: `parts` cut `[..v]` / `[..i]` of the spare capacity into one part
    // per slab, and every slab wrote every slot of its parts (checked above).
    unsafe {
        out.positions.set_len(v);
        if N {
            out.normals.set_len(v);
        }
        if M {
            out.materials.set_len(v);
        }
        out.indices.set_len(i);
    }
}

/// Meshes `inp` into `out` with exactly sized buffers on this thread: one slab,
/// so one count and one fill. The count keeps every packed node slice, so
/// the fill reads the field's signs once, not twice.
pub(crate) fn run_serial<const N: bool, const M: bool>(
    scratch: &mut Scratch,
    inp: &Input<'_>,
    out: &mut CubesOutput,
) {
    let slab = (inp.cells().z0, inp.cells().z1);
    let plan = Plan::new(&[count::<N, M>(scratch, inp, 0, slab, Packing::Store)]);
    let mut ghost = Ghost::default();
    let filled: Vec<bool> = parts::<N, M>(out, &plan)
        .into_iter()
        .map(|p| fill::<N, M>(scratch, &mut ghost, inp, &plan, 0, slab, p, Packing::Stored))
        .collect();
    scratch.release_stored_slices();
    commit::<N, M>(out, &plan, &filled);
}

/// Meshes `inp` into a fresh `out` in one scan, with its room reserved
/// before the scan so that the vectors do not grow and copy as they fill.
///
/// 1. The output gets room for the most the box can hold ([`Bounds`] from
///    three crossed edges per node). Room that is reserved and never written
///    is never touched, so it costs address space, not memory (and the room
///    is offered huge pages, so a large output takes few page faults); what
///    is left is handed back after the scan (an mmapped buffer shrinks in
///    place, without a copy).
/// 2. Where that much address space is refused (a system that does not
///    overcommit memory, a box near the size limit), one pass packs the
///    field's signs and counts its crossed edges, for a tight bound.
/// 3. Where even that is refused, the output is counted exactly first.
pub(crate) fn run_fresh<const N: bool, const M: bool>(
    scratch: &mut Scratch,
    inp: &Input<'_>,
    out: &mut CubesOutput,
) {
    let c = inp.cells();
    let nodes = (c.x1 - c.x0 + 1) as u64 * (c.y1 - c.y0 + 1) as u64 * (c.z1 - c.z0 + 1) as u64;
    if make_room::<N, M>(out, Bounds::of_edges(3 * nodes)) {
        fill_room::<N, M>(scratch, inp, out, Packing::Ring);
        return;
    }
    let crossed = Bounds::of_edges(scratch.pack_box(inp));
    if make_room::<N, M>(out, crossed) {
        fill_room::<N, M>(scratch, inp, out, Packing::Stored);
        scratch.release_stored_slices();
        return;
    }
    run_serial::<N, M>(scratch, inp, out);
}

/// Reserves room for `b` in the empty `out`; `false`, with `out` emptied of
/// any room, when the memory (address space) cannot be had.
fn make_room<const N: bool, const M: bool>(out: &mut CubesOutput, b: Bounds) -> bool {
    let (Ok(v), Ok(i)) = (usize::try_from(b.vertices), usize::try_from(b.indices)) else {
        return false;
    };
    let reserved = crate::huge_pages::try_reserve_exact(&mut out.positions, v)
        && (!N || crate::huge_pages::try_reserve_exact(&mut out.normals, v))
        && (!M || crate::huge_pages::try_reserve_exact(&mut out.materials, v))
        && crate::huge_pages::try_reserve_exact(&mut out.indices, i);
    if !reserved {
        *out = CubesOutput::default();
    }
    reserved
}

/// Scans into the room [`make_room`] made and hands back what is left.
fn fill_room<const N: bool, const M: bool>(
    scratch: &mut Scratch,
    inp: &Input<'_>,
    out: &mut CubesOutput,
    packing: Packing,
) {
    scratch.scan::<N, M, _>(inp, &mut VecSink(out), packing);
    out.positions.shrink_to_fit();
    out.normals.shrink_to_fit();
    out.materials.shrink_to_fit();
    out.indices.shrink_to_fit();
}

/// One slab's buffers, kept by a parallel mesher between calls.
#[cfg(any(feature = "parallel", test))]
#[derive(Debug, Default, Clone)]
pub(crate) struct SlabScratch {
    /// Scan buffers of a [`Sizing::Counted`] call, whose packed slices last
    /// from the slab's count to its fill.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    scratch: Scratch,
    ghost: Ghost,
    /// The slab's own output, for a [`Sizing::Copied`] call.
    local: CubesOutput,
}

/// Scan buffers of a [`Sizing::Copied`] call, one per pool thread (a slab's
/// scan needs them only while it runs), kept by a parallel mesher between
/// calls: a first call faults in one set per thread, not one per slab.
#[cfg(feature = "parallel")]
#[derive(Debug, Default)]
pub(crate) struct ThreadScratch(Vec<std::sync::Mutex<Scratch>>);

/// A clone starts with no buffers: they hold no state between calls.
#[cfg(feature = "parallel")]
impl Clone for ThreadScratch {
    fn clone(&self) -> Self {
        ThreadScratch::default()
    }
}

/// How a parallel call sizes its output.
#[cfg(any(feature = "parallel", test))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sizing {
    /// Each slab is counted, the output allocated once, and each slab filled
    /// into its own part of it.
    Counted,
    /// Each slab is meshed into its own buffers in one scan, as one thread
    /// meshes, and copied into place: for an output small next to the field,
    /// where copying it costs less than a counting scan. `vertices` is the
    /// sampled estimate of the box's vertices, which sizes each slab's
    /// buffers before its scan.
    Copied { vertices: u64 },
}

/// Picks the sizing of a parallel call from three sampled node slices: the
/// output is copied when the bytes it is likely to take are at most those
/// of the field's values in the box (the copy then costs a fraction of a
/// count, which reads every value).
#[cfg(any(feature = "parallel", test))]
pub(crate) fn sizing<const N: bool, const M: bool>(
    scratch: &mut Scratch,
    inp: &Input<'_>,
) -> Sizing {
    let c = inp.cells();
    let slices = u64::from(c.z1 - c.z0) + 1;
    let crossings: u64 = (1..=3u32)
        .map(|k| scratch.slice_crossings(inp, c.z0 + (c.z1 - c.z0) * k / 4))
        .sum();
    // x and y crossings of a node slice, and about as many z-crossings per
    // slice as either, so 1.5 vertices per sampled crossing; two triangles
    // (six corners) per vertex on a closed surface.
    let vertices = crossings * slices / 3 * 3 / 2;
    let per_vertex = 12 + if N { 12 } else { 0 } + u64::from(M) + 6 * 4;
    let nodes = u64::from(c.x1 - c.x0 + 1) * u64::from(c.y1 - c.y0 + 1) * slices;
    if vertices.saturating_mul(per_vertex) <= 4 * nodes {
        Sizing::Copied { vertices }
    } else {
        Sizing::Counted
    }
}

/// Meshes `inp` into `out` in `slabs` slabs at a time on the current rayon
/// thread pool, sized as `sizing` says. Each slab has its own buffers in
/// `scratches`, kept across calls.
///
/// Counted: a slab's count packs its node slices and keeps them for its
/// fill, so the field's signs are classified once (on a sparse volume,
/// classifying is most of the work). The count adds up a table word per
/// cell case (the decider runs only for ambiguous cases), so it costs a
/// small part of the fill. A warm call allocates no scan buffers.
///
/// Copied: each slab meshes into its own buffers in one scan, then is
/// copied into its exactly sized part of the output, its local ids mapped
/// to the output's.
#[cfg(feature = "parallel")]
pub(crate) fn run_parallel<const N: bool, const M: bool>(
    scratches: &mut Vec<SlabScratch>,
    thread_scratch: &mut ThreadScratch,
    inp: &Input<'_>,
    slabs: usize,
    sizing: Sizing,
    out: &mut CubesOutput,
) {
    use rayon::prelude::*;

    let cuts = cut(inp, slabs);
    scratches.resize_with(cuts.len(), Default::default);
    let scratches = &mut scratches[..cuts.len()];
    if let Sizing::Copied { vertices } = sizing {
        let layers = u64::from(inp.cells().z1 - inp.cells().z0).max(1);
        let thread_scratch = &mut thread_scratch.0;
        thread_scratch.resize_with(rayon::current_num_threads(), Default::default);
        let thread_scratch = &*thread_scratch;
        let counts: Vec<Counts> = scratches
            .par_iter_mut()
            .zip(cuts.par_iter())
            .enumerate()
            .map(|(k, (s, &slab))| {
                // A quarter more than the slab's share of the estimate, so
                // that its buffers rarely grow (and copy) during the scan.
                let share = vertices * u64::from(slab.1 - slab.0) / layers;
                let room = usize::try_from(share + share / 4 + 64).unwrap_or(0);
                // Each pool thread runs one slab at a time, so its buffers
                // are free; a slab run off the pool takes any that is.
                let i = rayon::current_thread_index().unwrap_or(0) % thread_scratch.len();
                let mut scan = thread_scratch[i]
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                mesh_local::<N, M>(&mut scan, &mut s.ghost, &mut s.local, inp, k, slab, room)
            })
            .collect();
        let plan = Plan::new(&counts);
        let filled: Vec<bool> = parts::<N, M>(out, &plan)
            .into_par_iter()
            .zip(scratches.par_iter_mut())
            .enumerate()
            .map(|(k, (p, s))| {
                let ok = place::<N, M>(p, &s.local, &plan, k);
                if s.local.positions.capacity() * 12 + s.local.indices.capacity() * 4
                    > KEEP_SLAB_BYTES
                {
                    s.local = CubesOutput::default();
                }
                ok
            })
            .collect();
        commit::<N, M>(out, &plan, &filled);
        return;
    }
    let counts: Vec<Counts> = scratches
        .par_iter_mut()
        .zip(cuts.par_iter())
        .enumerate()
        .map(|(k, (s, &slab))| count::<N, M>(&mut s.scratch, inp, k, slab, Packing::Store))
        .collect();
    let plan = Plan::new(&counts);
    let filled: Vec<bool> = parts::<N, M>(out, &plan)
        .into_par_iter()
        .zip(scratches.par_iter_mut())
        .zip(cuts.par_iter())
        .enumerate()
        .map(|(k, ((p, s), &slab))| {
            let ok = fill::<N, M>(
                &mut s.scratch,
                &mut s.ghost,
                inp,
                &plan,
                k,
                slab,
                p,
                Packing::Stored,
            );
            s.scratch.release_stored_slices_above(KEEP_SLAB_BYTES);
            ok
        })
        .collect();
    commit::<N, M>(out, &plan, &filled);
}

/// Meshes slab `k` (`z0..z1`) into `s.local` (with room for `room`
/// vertices and twice as many triangles) with local ids (see [`LocalSink`])
/// and returns what it emitted.
#[cfg(any(feature = "parallel", test))]
fn mesh_local<const N: bool, const M: bool>(
    scratch: &mut Scratch,
    ghost: &mut Ghost,
    local: &mut CubesOutput,
    inp: &Input<'_>,
    k: usize,
    (z0, z1): (u32, u32),
    room: usize,
) -> Counts {
    local.reset();
    local.positions.reserve(room);
    if N {
        local.normals.reserve(room);
    }
    if M {
        local.materials.reserve(room);
    }
    local.indices.reserve(room.saturating_mul(6));
    let mut sink = LocalSink::new(local, ghost, k > 0);
    scratch.scan::<N, M, _>(&inp.slab(z0, z1), &mut sink, Packing::Ring);
    sink.counts()
}

/// Copies slab `k`'s own buffers `local` into its part of the output, each
/// local id mapped to its output id: a ghost (below the slab's ghost count)
/// to the slab below's last slice, an own vertex to the slab's first id on.
/// Returns false when the part's size does not match (a bug in this crate).
#[cfg(any(feature = "parallel", test))]
fn place<const N: bool, const M: bool>(
    p: SlabParts<'_>,
    local: &CubesOutput,
    plan: &Plan,
    k: usize,
) -> bool {
    let v = local.positions.len();
    if p.positions.len() != v
        || p.indices.len() != local.indices.len()
        || (N && local.normals.len() != v)
        || (M && local.materials.len() != v)
    {
        return false;
    }
    for (d, &s) in p.positions.iter_mut().zip(&local.positions) {
        d.write(s);
    }
    if N {
        for (d, &s) in p.normals.iter_mut().zip(&local.normals) {
            d.write(s);
        }
    }
    if M {
        for (d, &s) in p.materials.iter_mut().zip(&local.materials) {
            d.write(s);
        }
    }
    let own = plan.vertex_start[k] as u32;
    let ghost = plan.ghost_start[k];
    let ghosts = plan.ghosts[k];
    for (d, &l) in p.indices.iter_mut().zip(&local.indices) {
        d.write(if l < ghosts {
            ghost + l
        } else {
            own + (l - ghosts)
        });
    }
    true
}

/// What a slab keeps between parallel calls, its packed slices or its own
/// output: a slab of a 512^3 box cut for a few threads; more is freed
/// after each call.
#[cfg(feature = "parallel")]
const KEEP_SLAB_BYTES: usize = 4 << 20;

/// Meshes `inp` into `out` in `slabs` slabs, one after the other on this thread
/// (what [`run_parallel`] does, without threads).
#[cfg(test)]
pub(crate) fn run_slabs<const N: bool, const M: bool>(
    inp: &Input<'_>,
    slabs: usize,
    out: &mut CubesOutput,
) {
    let cuts = cut(inp, slabs);
    let mut scratch = Scratch::default();
    let counts: Vec<Counts> = cuts
        .iter()
        .enumerate()
        .map(|(k, &slab)| count::<N, M>(&mut scratch, inp, k, slab, Packing::Ring))
        .collect();
    let plan = Plan::new(&counts);
    let mut ghost = Ghost::default();
    let filled: Vec<bool> = parts::<N, M>(out, &plan)
        .into_iter()
        .zip(&cuts)
        .enumerate()
        .map(|(k, (p, &slab))| {
            fill::<N, M>(
                &mut scratch,
                &mut ghost,
                inp,
                &plan,
                k,
                slab,
                p,
                Packing::Ring,
            )
        })
        .collect();
    commit::<N, M>(out, &plan, &filled);
}

/// Meshes `inp` into `out` in `slabs` slabs, one after the other on this
/// thread, each into its own buffers and then copied into place (what a
/// [`Sizing::Copied`] [`run_parallel`] does, without threads).
#[cfg(test)]
pub(crate) fn run_slabs_copied<const N: bool, const M: bool>(
    inp: &Input<'_>,
    slabs: usize,
    out: &mut CubesOutput,
) {
    let cuts = cut(inp, slabs);
    let mut scratches = vec![SlabScratch::default(); cuts.len()];
    let mut scan = Scratch::default();
    let counts: Vec<Counts> = scratches
        .iter_mut()
        .zip(&cuts)
        .enumerate()
        .map(|(k, (s, &slab))| {
            mesh_local::<N, M>(&mut scan, &mut s.ghost, &mut s.local, inp, k, slab, 0)
        })
        .collect();
    let plan = Plan::new(&counts);
    let filled: Vec<bool> = parts::<N, M>(out, &plan)
        .into_iter()
        .zip(&scratches)
        .enumerate()
        .map(|(k, (p, s))| place::<N, M>(p, &s.local, &plan, k))
        .collect();
    commit::<N, M>(out, &plan, &filled);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cubes::CellBox;

    /// Values from a small generator: a third exactly at 0, the rest in [-1, 1).
    fn values(n: usize, mut seed: u64) -> Vec<f32> {
        (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let r = (seed >> 40) as u32;
                if r.is_multiple_of(3) {
                    0.0
                } else {
                    (r % 2001) as f32 / 1000.0 - 1.0
                }
            })
            .collect()
    }

    #[test]
    fn any_cut_into_slabs_gives_the_single_scan_bytes() {
        for (seed, dims) in [
            (1, [5, 4, 9]),
            (2, [3, 3, 2]),
            (3, [7, 2, 12]),
            (4, [66, 3, 6]),
            (5, [130, 4, 5]),
            (6, [128, 3, 4]),
        ] {
            let v = values(dims.iter().map(|&d| d as usize).product(), seed);
            let m: Vec<u8> = (0..v.len()).map(|i| (i % 5) as u8).collect();
            let cells = CellBox::of_dims(dims);
            let hi = dims.map(|n| n - 1);
            let inp = Input::new(&v, Some(&m), dims, [0.5; 3], 0.25, cells, 0.0, [0; 3], hi);
            let mut want = CubesOutput::default();
            Scratch::default().scan::<true, true, _>(&inp, &mut VecSink(&mut want), Packing::Ring);
            assert!(want.triangle_count() > 0);
            for slabs in 1..=dims[2] as usize {
                let mut got = CubesOutput::default();
                run_slabs::<true, true>(&inp, slabs, &mut got);
                assert_eq!(got, want, "seed {seed}, {slabs} slabs");
                let mut got = CubesOutput::default();
                run_slabs_copied::<true, true>(&inp, slabs, &mut got);
                assert_eq!(got, want, "seed {seed}, {slabs} slabs copied");
            }
            let mut got = CubesOutput::default();
            run_serial::<true, true>(&mut Scratch::default(), &inp, &mut got);
            assert_eq!(got, want, "seed {seed}, counted");
            assert_eq!(got.indices.capacity(), got.indices.len());
            let mut got = CubesOutput::default();
            run_fresh::<true, true>(&mut Scratch::default(), &inp, &mut got);
            assert_eq!(got, want, "seed {seed}, fresh");
            assert_eq!(got.indices.capacity(), got.indices.len());
            // Each way `run_fresh` can size the room gives the same bytes; the
            // bounds hold, so the room is never outgrown.
            let mut scratch = Scratch::default();
            let edges = scratch.pack_box(&inp);
            let b = Bounds::of_edges(edges);
            let nodes = v.len() as u64;
            for (bounds, packing) in [
                (b, Packing::Stored),
                (
                    Bounds {
                        vertices: 1,
                        indices: 1,
                    },
                    Packing::Stored,
                ),
                (Bounds::of_edges(3 * nodes), Packing::Ring),
            ] {
                let mut got = CubesOutput::default();
                assert!(make_room::<true, true>(&mut got, bounds));
                let room = (got.positions.capacity(), got.indices.capacity());
                fill_room::<true, true>(&mut scratch, &inp, &mut got, packing);
                assert_eq!(got, want, "seed {seed}, {bounds:?}");
                if bounds
                    != (Bounds {
                        vertices: 1,
                        indices: 1,
                    })
                {
                    assert!(got.positions.len() <= room.0 && got.indices.len() <= room.1);
                }
            }
            let centres = want.positions.len() as u64 - edges;
            assert!(centres <= 4 * edges / 9, "seed {seed}");
            assert!(want.indices.len() as u64 <= b.indices);
            assert!(!make_room::<true, true>(
                &mut got,
                Bounds {
                    vertices: u64::MAX / 8,
                    indices: 1
                }
            ));
            assert_eq!(got, CubesOutput::default());
        }
    }

    /// A sphere of radius `r` nodes in a box of `n^3` nodes.
    fn sphere(n: u32, r: f32) -> Vec<f32> {
        let c = (n - 1) as f32 / 2.0;
        let mut v = Vec::with_capacity((n * n * n) as usize);
        for z in 0..n {
            for y in 0..n {
                for x in 0..n {
                    let d = [x, y, z].map(|i| i as f32 - c);
                    v.push((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() - r);
                }
            }
        }
        v
    }

    #[test]
    fn sparse_surfaces_are_copied_and_dense_ones_counted() {
        let n = 48;
        let dims = [n; 3];
        let cells = CellBox::of_dims(dims);
        let hi = dims.map(|d| d - 1);
        let ball = sphere(n, 10.0);
        let inp = Input::new(&ball, None, dims, [0.0; 3], 1.0, cells, 0.0, [0; 3], hi);
        let mut scratch = Scratch::default();
        let Sizing::Copied { vertices } = sizing::<true, false>(&mut scratch, &inp) else {
            panic!("a small ball is copied");
        };
        let mut want = CubesOutput::default();
        Scratch::default().scan::<true, false, _>(&inp, &mut VecSink(&mut want), Packing::Ring);
        // The estimate is near the truth.
        let truth = want.positions.len() as u64;
        assert!(
            vertices > truth / 2 && vertices < truth * 2,
            "{vertices} vs {truth}"
        );
        for slabs in [2, 5, 47] {
            let mut got = CubesOutput::default();
            run_slabs_copied::<true, false>(&inp, slabs, &mut got);
            assert_eq!(got, want, "{slabs} slabs");
        }
        // Alternating signs on every other node: every cell is cut.
        let dense: Vec<f32> = (0..n * n * n)
            .map(|i| {
                if (i % n + i / n % n + i / (n * n)) % 2 == 0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let inp = Input::new(&dense, None, dims, [0.0; 3], 1.0, cells, 0.0, [0; 3], hi);
        assert_eq!(sizing::<true, false>(&mut scratch, &inp), Sizing::Counted);
    }

    #[test]
    fn cuts_cover_the_layers_in_order() {
        let v = vec![0.0; 2 * 2 * 11];
        let cells = CellBox::new(0, 0, 3, 1, 1, 10);
        let inp = Input::new(
            &v,
            None,
            [2, 2, 11],
            [0.0; 3],
            1.0,
            cells,
            0.0,
            [0; 3],
            [1, 1, 10],
        );
        for n in 1..12 {
            let c = cut(&inp, n);
            assert_eq!(c.len(), n.min(7));
            assert_eq!((c[0].0, c[c.len() - 1].1), (3, 10));
            assert!(c.windows(2).all(|w| w[0].1 == w[1].0));
            assert!(c.iter().all(|s| s.0 < s.1));
        }
    }
}
