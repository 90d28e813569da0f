//! `isoterra bench stream`: chunk streaming around a moving viewer (voxel
//! caves and heightmap), memory per loaded chunk, and world file bytes per
//! edited chunk.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::Context;
use isoterra::field::{VoxelGen, VoxelPreset};
use isoterra::mesh::HeightmapOptions;
use isoterra::store::{ChunkData, ChunkEncoding, encode_chunk};
use isoterra::world::{
    ChunkCoord, ChunkRequest, ChunkSource, HeightmapChunk, HeightmapParams, HeightmapSource,
    StreamEvent, StreamScheduler, StreamViewer, VoxelBrush, VoxelChunkMesh, VoxelParams,
    VoxelSource, VoxelTool, VoxelWorld,
};

use super::bench::median;

/// One measured figure: name, unit, value, note, and more figures beside it
/// (CPU time: `cpu_s` of the process for the scheduler runs, of the thread
/// for one-thread runs).
pub type Figure = (String, &'static str, f64, String, Vec<(&'static str, f64)>);

/// Runs every stream workload; `reps` repeats the streaming runs (the
/// median rate is reported).
pub fn run(reps: u32) -> anyhow::Result<Vec<Figure>> {
    let mut out = Vec::new();
    voxel(reps, &mut out)?;
    heightmap(reps, &mut out)?;
    payloads(&mut out)?;
    Ok(out)
}

/// What a streaming run measured.
struct Run<T> {
    built: u64,
    secs: f64,
    /// CPU seconds of the whole process (every thread) over the run.
    cpu_s: f64,
    loaded: HashMap<ChunkCoord, T>,
}

/// Streams around a viewer moving along +x in `steps` updates of `stride`
/// world units, waiting for each step to settle; counts built chunks.
fn stream<S: ChunkSource>(
    source: S,
    cfg: isoterra::world::StreamConfig,
    viewer: &StreamViewer,
    steps: u32,
    stride: f32,
) -> anyhow::Result<Run<S::Output>> {
    let mut s = StreamScheduler::new(source, cfg).context("cannot start the stream scheduler")?;
    let mut loaded = HashMap::new();
    let (cpu0, _) = super::bench::usage();
    let start = Instant::now();
    for i in 0..steps {
        let mut v = viewer.clone();
        v.position[0] += i as f32 * stride;
        s.update(&[v]).context("bad viewer")?;
        for e in s.wait() {
            match e {
                StreamEvent::ChunkReady { coord, output, .. } => {
                    loaded.insert(coord, output);
                }
                StreamEvent::ChunkUnloaded { coord, .. } => {
                    loaded.remove(&coord);
                }
                _ => {}
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let (cpu1, _) = super::bench::usage();
    Ok(Run {
        built: s.stats().built,
        secs,
        cpu_s: cpu1 - cpu0,
        loaded,
    })
}

fn voxel_mesh_bytes(m: &VoxelChunkMesh) -> usize {
    m.positions.len() * 12 + m.normals.len() * 12 + m.materials.len() + m.indices.len() * 4
}

/// Builds each of `coords` at LOD 0 on this thread, without a scheduler,
/// with `build`, described in the note as `what`: chunks per second, and per
/// CPU second of the thread beside it.
fn one_thread<T>(
    name: &str,
    coords: &[ChunkCoord],
    what: &str,
    build: impl Fn(ChunkCoord) -> T,
) -> Figure {
    let cpu0 = super::bench::thread_cpu_s();
    let start = Instant::now();
    for &c in coords {
        std::hint::black_box(build(c));
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu_s = super::bench::thread_cpu_s() - cpu0;
    (
        name.into(),
        "chunks/s",
        coords.len() as f64 / secs,
        format!(
            "{what} over the {} loaded chunks at LOD 0 on one thread, no scheduler",
            coords.len()
        ),
        vec![("chunks_per_cpu_s", coords.len() as f64 / cpu_s)],
    )
}

fn voxel(reps: u32, out: &mut Vec<Figure>) -> anyhow::Result<()> {
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(32)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 7));
    // At the ground, moving along +x; every chunk at full resolution.
    let viewer = StreamViewer::new([0.0, 0.0, 0.0], 128.0).with_velocity([64.0, 0.0, 0.0]);
    let threads = rayon::current_num_threads();
    let (mut rates, mut cpu_rates) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..reps.clamp(1, 5) {
        let source = VoxelSource::new(&params).context("voxel source")?;
        let cfg = source
            .stream_config()
            .with_max_lod(0)
            .with_max_in_flight(4 * threads);
        let run = stream(source, cfg, &viewer, 24, 16.0)?;
        rates.push(run.built as f64 / run.secs);
        cpu_rates.push(run.built as f64 / run.cpu_s);
        last = Some(run);
    }
    let run = last.context("no run")?;
    let surface = run.loaded.values().filter(|m| !m.is_empty()).count();
    out.push((
        "voxel_caves_32_chunks".into(),
        "chunks/s",
        median(rates),
        format!(
            "generate + mesh 32^3, {} chunks per run, {} threads, view 128, {} of {} loaded chunks have a surface",
            run.built,
            threads,
            surface,
            run.loaded.len()
        ),
        vec![("chunks_per_cpu_s", median(cpu_rates))],
    ));
    // The source alone on one thread, over the loaded chunks.
    let source = VoxelSource::new(&params).context("voxel source")?;
    let mut coords: Vec<ChunkCoord> = run.loaded.keys().copied().collect();
    coords.sort_unstable();
    out.push(one_thread(
        "voxel_caves_32_source_1_thread",
        &coords,
        "VoxelSource::build_mesh",
        |c| source.build_mesh(c, 0, None),
    ));
    // The same chunks as the scheduler asks for them (`ChunkSource::build`:
    // transition cells toward finer neighbours, positions measured on the
    // global node grid; here every neighbour is at LOD 0, so none).
    out.push(one_thread(
        "voxel_caves_32_request_1_thread",
        &coords,
        "VoxelSource::build_request (the scheduler's build)",
        |c| source.build_request(&ChunkRequest::new(c, 0), None),
    ));
    let bytes: usize = run.loaded.values().map(voxel_mesh_bytes).sum();
    out.push((
        "voxel_mem_per_loaded_chunk".into(),
        "bytes",
        bytes as f64 / run.loaded.len().max(1) as f64,
        format!(
            "mesh + collider (shared buffers), mean over {} loaded chunks; {:.0} per chunk with a surface; generated densities are not kept",
            run.loaded.len(),
            bytes as f64 / surface.max(1) as f64
        ),
        Vec::new(),
    ));
    Ok(())
}

fn heightmap_bytes(c: &HeightmapChunk) -> usize {
    let m = &c.mesh;
    let mesh = m.positions.len() * 12
        + m.normals.len() * 12
        + m.uvs.len() * 8
        + m.morph.len() * 4
        + m.morph_targets.len() * 4
        + m.indices.len() * 4;
    mesh + c.collider.as_ref().map_or(0, |h| h.heights.len() * 4)
}

fn heightmap(reps: u32, out: &mut Vec<Figure>) -> anyhow::Result<()> {
    let params = HeightmapParams::DEFAULT
        .with_seed(7)
        .with_chunk_cells(64)
        .with_lod_count(4)
        .with_mesh(HeightmapOptions::DEFAULT.with_skirt_depth(4.0));
    let viewer = StreamViewer::new([0.0, 40.0, 0.0], 1024.0)
        .with_lod_distances(vec![128.0, 256.0, 512.0])
        .with_velocity([64.0, 0.0, 0.0]);
    let threads = rayon::current_num_threads();
    let (mut rates, mut cpu_rates) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..reps.clamp(1, 5) {
        let source = HeightmapSource::new(&params).context("heightmap source")?;
        let cfg = source.stream_config().with_max_in_flight(4 * threads);
        let run = stream(source, cfg, &viewer, 24, 64.0)?;
        rates.push(run.built as f64 / run.secs);
        cpu_rates.push(run.built as f64 / run.cpu_s);
        last = Some(run);
    }
    let run = last.context("no run")?;
    out.push((
        "heightmap_64_mixed_lod_chunks".into(),
        "chunks/s",
        median(rates),
        format!(
            "64^2 chunks at LOD 0-3 with skirts and colliders, {} chunks per run, {} threads, view 1024",
            run.built, threads
        ),
        vec![("chunks_per_cpu_s", median(cpu_rates))],
    ));
    let bytes: usize = run.loaded.values().map(heightmap_bytes).sum();
    out.push((
        "heightmap_mem_per_loaded_chunk".into(),
        "bytes",
        bytes as f64 / run.loaded.len().max(1) as f64,
        format!(
            "mesh + heightfield collider, mean over {} loaded chunks at mixed LOD",
            run.loaded.len()
        ),
        Vec::new(),
    ));
    Ok(())
}

/// Encoded size of edited voxel chunks near the surface, f32 vs u8.
/// The stored payloads (`encode_chunk`, zstd) of the chunks a few digs
/// reach in a 32^3 voxel cave world with materials, and the raw bytes of
/// one chunk.
pub fn dug_payloads(enc: ChunkEncoding) -> anyhow::Result<(Vec<Vec<u8>>, usize)> {
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(32)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 7));
    let mut world = VoxelWorld::new(&params).context("voxel world")?;
    world
        .ensure_region([-2, -2, -2], [1, 1, 1])
        .context("voxel region")?;
    for i in 0..6 {
        let x = -48.0 + 20.0 * i as f32;
        let brush =
            VoxelBrush::new(VoxelTool::Dig, [x, -4.0, 8.0 * i as f32 - 24.0], 9.0).with_material(2);
        world.apply_brush(&brush).context("dig")?;
    }
    let edited: Vec<ChunkCoord> = world.modified_chunks().collect();
    let len = world.chunk_len();
    let n = world.chunk_cells();
    let mut out = Vec::with_capacity(edited.len());
    for &c in &edited {
        let ch = world.chunk(c).context("edited chunk")?;
        let data = ChunkData::new(
            enc,
            [n; 3],
            ch.density.to_dense(len),
            Some(ch.materials.to_dense(len)),
        )?;
        out.push(encode_chunk(&data));
    }
    let raw = len * (if enc == ChunkEncoding::F32 { 4 } else { 1 } + 1);
    Ok((out, raw))
}

fn payloads(out: &mut Vec<Figure>) -> anyhow::Result<()> {
    for (label, enc) in [("f32", ChunkEncoding::F32), ("u8", ChunkEncoding::U8)] {
        let (payloads, raw) = dug_payloads(enc)?;
        let total: usize = payloads.iter().map(Vec::len).sum();
        out.push((
            format!("world_file_bytes_per_edited_chunk_{label}"),
            "bytes",
            total as f64 / payloads.len().max(1) as f64,
            format!(
                "encode_chunk payload of a dug 32^3 voxel chunk with materials (zstd), mean over {} chunks; raw {raw} bytes",
                payloads.len(),
            ),
            Vec::new(),
        ));
    }
    Ok(())
}
