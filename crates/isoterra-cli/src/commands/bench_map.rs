//! `isoterra bench map`: editing and meshing workloads of a 512 x 512 map.
//!
//! * `brush_r100_512_apply_remesh`: one raise dab of radius 100 cells applied
//!   to a 512 x 512 map (64-cell chunks) and every dirty chunk remeshed in
//!   parallel (`MapWorld::mesh_chunks`); the note also gives the same on one
//!   thread with one reused mesher and output (the stroke is undone, untimed,
//!   after each run);
//! * `full_mesh_512_chunks`: every chunk of the map meshed, in parallel (the
//!   note gives one thread);
//! * `full_mesh_512_whole`: the whole map as one mesh on one thread;
//! * `paint_r100_512_remesh`: a texture stroke of radius 100 applied and the
//!   meshes of its dirty chunks brought up to date the way an editor does:
//!   texture-only chunks get their splats refreshed in place
//!   (`MapWorld::refresh_chunk_attributes`), on one thread; the note gives
//!   the time of a full parallel remesh of the same chunks.
//!
//! Each line carries `cpu_ms`: CPU time of the process for the parallel
//! workloads, of the measuring thread for the one-thread ones (and
//! `one_thread_ms` / `one_thread_cpu_ms` where the note gives one thread).

use std::time::Instant;

use super::bench::median;

use isoterra::field::LayerMask;
use isoterra::mesh::{CellRect, MapMeshOptions, MapMeshOutput, MapMesher};
use isoterra::world::{
    EditDirection, MapBrush, MapParams, MapPreset, MapStroke, MapTool, MapWorld,
};

/// One result: name, unit, value, note, and CPU figures beside it.
pub type MapSample = (String, &'static str, f64, String, Vec<(&'static str, f64)>);

/// CPU seconds so far: of the whole process (every thread) when `process`,
/// else of the calling thread.
fn cpu_s(process: bool) -> f64 {
    if process {
        super::bench::usage().0
    } else {
        super::bench::thread_cpu_s()
    }
}

fn mesh_options(params: &MapParams) -> MapMeshOptions {
    MapMeshOptions::DEFAULT
        .with_cell_size(params.mesh.cell_size)
        .with_level_height(params.mesh.level_height)
        .with_chasm_depth(params.mesh.chasm_depth)
}

/// Remeshes `chunks` of `world` in parallel (`MapWorld::mesh_chunks`: one
/// warm mesher per worker thread); returns the triangle count.
fn remesh(world: &MapWorld, chunks: &[[u32; 2]]) -> anyhow::Result<usize> {
    Ok(world
        .mesh_chunks(chunks)?
        .iter()
        .map(|o| o.terrain.triangle_count() + o.water.triangle_count())
        .sum())
}

/// Median wall and CPU milliseconds of `f` (CPU of the process when
/// `process`, else of this thread) over `reps` runs after a warm-up.
fn median_ms(
    reps: u32,
    process: bool,
    mut f: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<(f64, f64)> {
    f()?;
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let c = cpu_s(process);
        let s = Instant::now();
        f()?;
        wall.push(s.elapsed().as_secs_f64() * 1e3);
        cpu.push((cpu_s(process) - c) * 1e3);
    }
    Ok((median(wall), median(cpu)))
}

/// Applies `stroke`, updates the meshes of the dirty chunks with `update`
/// (which returns a triangle count) and undoes the stroke (untimed).
/// CPU time is the process's when `process` (a parallel update), else this
/// thread's.
fn stroke_run(
    world: &mut MapWorld,
    stroke: &MapStroke,
    reps: u32,
    process: bool,
    mut update: impl FnMut(&MapWorld, &[([u32; 2], LayerMask)]) -> anyhow::Result<usize>,
) -> anyhow::Result<StrokeTimes> {
    let mut chunks = 0;
    let mut tris = 0;
    let mut total = Vec::with_capacity(reps as usize + 1);
    let mut apply = Vec::with_capacity(reps as usize + 1);
    let mut cpu = Vec::with_capacity(reps as usize + 1);
    for _ in 0..=reps {
        world.take_dirty();
        let c = cpu_s(process);
        let s = Instant::now();
        let edit = world.apply_stroke(stroke)?;
        let dirty = world.take_dirty();
        apply.push(s.elapsed().as_secs_f64() * 1e3);
        tris = update(world, &dirty)?;
        total.push(s.elapsed().as_secs_f64() * 1e3);
        cpu.push((cpu_s(process) - c) * 1e3);
        chunks = dirty.len();
        world.apply_edit(&edit, EditDirection::Backward)?;
        world.take_dirty();
    }
    // The first run warms the meshers up.
    let median = |mut v: Vec<f64>| median(v.split_off(1));
    Ok(StrokeTimes {
        total_ms: median(total),
        apply_ms: median(apply),
        cpu_ms: median(cpu),
        chunks,
        tris,
    })
}

/// The chunk coordinates of a dirty list.
fn coords(dirty: &[([u32; 2], LayerMask)]) -> Vec<[u32; 2]> {
    dirty.iter().map(|(c, _)| *c).collect()
}

/// Medians of a stroke workload.
struct StrokeTimes {
    total_ms: f64,
    apply_ms: f64,
    /// CPU milliseconds of the whole stroke (see [`stroke_run`]).
    cpu_ms: f64,
    chunks: usize,
    tris: usize,
}

/// Runs the map workloads.
pub fn run(reps: u32) -> anyhow::Result<Vec<MapSample>> {
    let params = MapParams::DEFAULT
        .with_size(512, 512)
        .with_chunk_cells(64)
        .with_seed(1)
        .with_preset(MapPreset::Plateaus);
    let mut world = MapWorld::new(&params)?;
    let opts = mesh_options(&params);
    let threads = rayon::current_num_threads();
    let mut out = Vec::new();

    let brush = MapBrush::new(MapTool::Raise, 100.0).with_strength(0.5);
    let stroke = MapStroke::dab(brush, [256.0, 256.0]);
    let par = stroke_run(&mut world, &stroke, reps, true, |w, dirty| {
        remesh(w, &coords(dirty))
    })?;
    let mut mesher = MapMesher::new();
    let mut one = MapMeshOutput::default();
    let t = stroke_run(&mut world, &stroke, reps, false, |w, dirty| {
        let mut tris = 0;
        for &(c, _) in dirty {
            w.mesh_chunk(c, &mut mesher, &mut one)?;
            tris += one.terrain.triangle_count() + one.water.triangle_count();
        }
        Ok(tris)
    })?;
    out.push((
        "brush_r100_512_apply_remesh".to_string(),
        "ms",
        par.total_ms,
        format!(
            "apply {:.2} ms, {} chunks of 64 cells remeshed, {} triangles, {threads} threads; \
             one thread (one reused mesher): {:.3} ms",
            par.apply_ms, par.chunks, par.tris, t.total_ms
        ),
        vec![
            ("cpu_ms", par.cpu_ms),
            ("one_thread_ms", t.total_ms),
            ("one_thread_cpu_ms", t.cpu_ms),
        ],
    ));

    let [cw, cd] = world.chunk_count();
    let all: Vec<[u32; 2]> = (0..cd).flat_map(|z| (0..cw).map(move |x| [x, z])).collect();
    let mut tris = 0;
    let (ms, cpu_ms) = median_ms(reps, true, || {
        tris = remesh(&world, &all)?;
        Ok(())
    })?;
    let (one_ms, one_cpu_ms) = median_ms(reps.min(5), false, || {
        for &c in &all {
            world.mesh_chunk(c, &mut mesher, &mut one)?;
        }
        Ok(())
    })?;
    out.push((
        "full_mesh_512_chunks".to_string(),
        "ms",
        ms,
        format!(
            "{} chunks, {tris} triangles, {threads} threads; one thread: {one_ms:.3} ms",
            all.len()
        ),
        vec![
            ("cpu_ms", cpu_ms),
            ("one_thread_ms", one_ms),
            ("one_thread_cpu_ms", one_cpu_ms),
        ],
    ));

    let mut whole = MapMeshOutput::default();
    let (ms, cpu_ms) = median_ms(reps.min(5), false, || {
        whole.clear();
        mesher.mesh(
            world.layers(),
            CellRect::whole(world.layers()),
            &opts,
            &mut whole,
        )?;
        Ok(())
    })?;
    out.push((
        "full_mesh_512_whole".to_string(),
        "ms",
        ms,
        format!(
            "{} triangles, one thread",
            whole.terrain.triangle_count() + whole.water.triangle_count()
        ),
        vec![("cpu_ms", cpu_ms)],
    ));

    let paint = MapBrush::new(MapTool::Paint, 100.0)
        .with_strength(1.0)
        .with_texture(3);
    let stroke = MapStroke::dab(paint, [256.0, 256.0]);
    let full = stroke_run(&mut world, &stroke, reps, true, |w, dirty| {
        remesh(w, &coords(dirty))
    })?;
    // The editor's texture path: the kept chunk meshes get new splats in
    // place (a chunk whose mask touched geometry would be remeshed).
    let mut kept: Vec<MapMeshOutput> = world.mesh_chunks(&all)?;
    let t = stroke_run(&mut world, &stroke, reps, false, |w, dirty| {
        let mut tris = 0;
        for &(c, mask) in dirty {
            let k = (c[1] * cw + c[0]) as usize;
            if mask.affects_geometry() {
                w.mesh_chunk(c, &mut mesher, &mut kept[k])?;
            } else {
                w.refresh_chunk_attributes(c, &mut kept[k])?;
            }
            tris += kept[k].terrain.triangle_count();
        }
        Ok(tris)
    })?;
    out.push((
        "paint_r100_512_remesh".to_string(),
        "ms",
        t.total_ms,
        format!(
            "apply {:.2} ms, {} chunks' splats refreshed in place (texture only), one thread; \
             full remesh of those chunks instead: {:.3} ms, {threads} threads",
            t.apply_ms, t.chunks, full.total_ms
        ),
        vec![("cpu_ms", t.cpu_ms)],
    ));
    Ok(out)
}
