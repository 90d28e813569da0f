//! `isoterra bench map`: editing and meshing workloads of a 512 x 512 map.
//!
//! * `brush_r100_512_apply_remesh`: one raise dab of radius 100 cells applied
//!   to a 512 x 512 map (64-cell chunks) and every dirty chunk remeshed, in
//!   parallel with one mesher per worker (the stroke is undone, untimed,
//!   after each run);
//! * `full_mesh_512_chunks`: every chunk of the map meshed, in parallel;
//! * `full_mesh_512_whole`: the whole map as one mesh on one thread;
//! * `paint_r100_512_remesh`: a texture stroke of radius 100 applied and the
//!   dirty chunks remeshed.

use std::time::Instant;

use isoterra::mesh::{MapCellRect, MapMeshOptions, MapMeshOutput, MapMesher};
use isoterra::world::{
    EditDirection, MapBrush, MapParams, MapPreset, MapStroke, MapTool, MapWorld,
};
use rayon::prelude::*;

/// One result: name, unit, value, note.
pub type MapSample = (String, &'static str, f64, String);

fn mesh_options(params: &MapParams) -> MapMeshOptions {
    MapMeshOptions::DEFAULT
        .with_cell_size(params.mesh.cell_size)
        .with_level_height(params.mesh.level_height)
        .with_chasm_depth(params.mesh.chasm_depth)
}

/// Remeshes `chunks` of `world` in parallel; returns the triangle count.
fn remesh(world: &MapWorld, chunks: &[[u32; 2]], opts: &MapMeshOptions) -> anyhow::Result<usize> {
    let tris = chunks
        .par_iter()
        .map_init(
            || (MapMesher::new(), MapMeshOutput::default()),
            |(mesher, out), &c| -> anyhow::Result<usize> {
                let [x0, z0, x1, z1] = world
                    .chunk_cells(c)
                    .ok_or_else(|| anyhow::anyhow!("chunk {c:?} is outside the map"))?;
                out.clear();
                mesher.mesh(world.layers(), MapCellRect::new(x0, z0, x1, z1), opts, out)?;
                Ok(out.terrain.triangle_count() + out.water.triangle_count())
            },
        )
        .collect::<anyhow::Result<Vec<usize>>>()?;
    Ok(tris.into_iter().sum())
}

fn median_ms(reps: u32, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    f()?;
    let mut t = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

/// Applies `stroke`, remeshes the dirty chunks and undoes it (untimed).
fn stroke_run(
    world: &mut MapWorld,
    stroke: &MapStroke,
    opts: &MapMeshOptions,
    reps: u32,
) -> anyhow::Result<StrokeTimes> {
    let mut chunks = 0;
    let mut tris = 0;
    let mut total = Vec::with_capacity(reps as usize + 1);
    let mut apply = Vec::with_capacity(reps as usize + 1);
    for _ in 0..=reps {
        world.take_dirty();
        let s = Instant::now();
        let edit = world.apply_stroke(stroke)?;
        let dirty: Vec<[u32; 2]> = world.take_dirty().into_iter().map(|(c, _)| c).collect();
        apply.push(s.elapsed().as_secs_f64() * 1e3);
        tris = remesh(world, &dirty, opts)?;
        total.push(s.elapsed().as_secs_f64() * 1e3);
        chunks = dirty.len();
        world.apply_edit(&edit, EditDirection::Backward)?;
        world.take_dirty();
    }
    // The first run warms the meshers up.
    let median = |mut v: Vec<f64>| {
        let mut t = v.split_off(1);
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    Ok(StrokeTimes {
        total_ms: median(total),
        apply_ms: median(apply),
        chunks,
        tris,
    })
}

/// Medians of a stroke workload.
struct StrokeTimes {
    total_ms: f64,
    apply_ms: f64,
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
    let t = stroke_run(&mut world, &stroke, &opts, reps)?;
    out.push((
        "brush_r100_512_apply_remesh".to_string(),
        "ms",
        t.total_ms,
        format!(
            "apply {:.2} ms, {} chunks of 64 cells remeshed, {} triangles, {threads} threads",
            t.apply_ms, t.chunks, t.tris
        ),
    ));

    let [cw, cd] = world.chunk_count();
    let all: Vec<[u32; 2]> = (0..cd).flat_map(|z| (0..cw).map(move |x| [x, z])).collect();
    let mut tris = 0;
    let ms = median_ms(reps, || {
        tris = remesh(&world, &all, &opts)?;
        Ok(())
    })?;
    out.push((
        "full_mesh_512_chunks".to_string(),
        "ms",
        ms,
        format!("{} chunks, {tris} triangles, {threads} threads", all.len()),
    ));

    let mut mesher = MapMesher::new();
    let mut whole = MapMeshOutput::default();
    let ms = median_ms(reps.min(5), || {
        whole.clear();
        mesher.mesh(
            world.layers(),
            MapCellRect::whole(world.layers()),
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
    ));

    let paint = MapBrush::new(MapTool::Paint, 100.0)
        .with_strength(1.0)
        .with_texture(3);
    let stroke = MapStroke::dab(paint, [256.0, 256.0]);
    let t = stroke_run(&mut world, &stroke, &opts, reps)?;
    out.push((
        "paint_r100_512_remesh".to_string(),
        "ms",
        t.total_ms,
        format!(
            "apply {:.2} ms, {} chunks remeshed (texture only), {threads} threads",
            t.apply_ms, t.chunks
        ),
    ));
    Ok(out)
}
