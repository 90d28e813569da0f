//! `isoterra bench GROUP [--json]`: the standard workloads on this machine.
//!
//! Each workload runs `--reps` times after one warm-up run; the median is
//! reported. Peers are compared in `bench/`, not here. `cubes` reports each
//! volume warm (mesher and output reused) and cold (a new mesher and output
//! per call, what a one-shot call does), on one thread and with the parallel
//! mesher on two, with the process CPU time and minor page faults beside the
//! wall time (`cpu_ms`, `minor_faults`). `squares` does the same for the
//! contour and fill workloads, `map` gives `cpu_ms` for each workload,
//! `stream` the chunks built per CPU second (`chunks_per_cpu_s`), and
//! `erosion` the droplets per CPU second of the eroding thread: CPU time
//! holds up on a shared machine where wall time does not.

use std::time::Instant;

use anyhow::Context;
use isoterra::field::Side2dPreset;
use isoterra::field::noise::{Basis, Fractal, FractalKind, FractalParams, fill2};
use isoterra::field::{
    FbmParams, Field2, HeightGen, HeightParams, HeightPreset, HydraulicParams, fill_fbm2,
    fill_fbm3, hydraulic_erosion,
};
use isoterra::field::{VoxelGen, VoxelPreset};
use isoterra::mesh::{
    CellBox, CellRect, ContourTracer, CubesOptions, CubesOutput, MarchingCubes, MarchingSquares,
    SquaresOptions, SquaresOutput,
};
use isoterra::world::{
    Side2dBrush, Side2dTool, Side2dWorld, VoxelChunkMesh, VoxelMesher, VoxelParams, VoxelWorld,
};

use crate::args::{BenchArgs, BenchGroup};
use crate::commands::new::side2d_params;

struct Sample {
    group: &'static str,
    name: String,
    unit: &'static str,
    value: f64,
    note: String,
    /// More figures, printed as extra JSON fields.
    extra: Vec<(&'static str, f64)>,
}

pub fn run(a: &BenchArgs) -> anyhow::Result<()> {
    let reps = a.reps.max(1);
    // The machine's load around the run, so a figure from a busy machine
    // can be told from one from an idle one.
    let load_start = load_average();
    let yardstick = core_yardstick();
    let read_gbs = read_yardstick();
    let mut out = Vec::new();
    match a.group {
        BenchGroup::Squares => squares(reps, &mut out)?,
        BenchGroup::Noise => noise(reps, &mut out)?,
        BenchGroup::Edit => edit(reps, &mut out)?,
        BenchGroup::Cubes => cubes(reps, &mut out)?,
        BenchGroup::Erosion => erosion(reps, &mut out)?,
        BenchGroup::Map => {
            for (name, unit, value, note, extra) in super::bench_map::run(reps)? {
                out.push(Sample {
                    extra,
                    group: "map",
                    name,
                    unit,
                    value,
                    note,
                });
            }
        }
        BenchGroup::Store => {
            for (name, unit, value, note, extra) in super::bench_store::run(reps, a.url.as_deref())?
            {
                out.push(Sample {
                    extra,
                    group: "store",
                    name,
                    unit,
                    value,
                    note,
                });
            }
        }
        BenchGroup::Stream => {
            for (name, unit, value, note, extra) in super::bench_stream::run(reps)? {
                out.push(Sample {
                    extra,
                    group: "stream",
                    name,
                    unit,
                    value,
                    note,
                });
            }
        }
    }
    let load_end = load_average();
    if !a.json {
        eprintln!(
            "batch loops: the {} build; this core: {yardstick:.1} M yardstick steps per CPU s, \
             reads {read_gbs:.1} GB/s from memory on one thread",
            isoterra::field::noise::vector_build()
        );
    }
    for s in &out {
        if a.json {
            let mut line = serde_json::json!({
                "group": s.group, "name": s.name, "unit": s.unit,
                "value": (s.value * 1000.0).round() / 1000.0, "reps": reps, "note": s.note,
                "load_start": load_start, "load_end": load_end,
                "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
                "vector_build": isoterra::field::noise::vector_build(),
                "core_yardstick": (yardstick * 10.0).round() / 10.0,
                "read_yardstick_gbs": (read_gbs * 100.0).round() / 100.0,
            });
            for (k, v) in &s.extra {
                line[*k] = serde_json::json!((v * 1000.0).round() / 1000.0);
            }
            println!("{line}");
        } else {
            println!(
                "{:<8} {:<32} {:>12.3} {:<10} {}",
                s.group, s.name, s.value, s.unit, s.note
            );
        }
    }
    Ok(())
}

/// The middle value of `v` (the upper one of an even count).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median wall time of `f` in seconds over `reps` runs after one warm-up.
fn median_secs(reps: u32, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..reps)
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

/// The standard marching-squares input: `n x n` nodes over `[0, s]^2`,
/// `sin x + sin y + 0.3 sin(0.7x + 1.3y + 0.5)`.
pub fn sine_field(n: u32, s: f64) -> anyhow::Result<Field2> {
    let step = s / (n - 1) as f64;
    Ok(Field2::from_fn(n, n, |x, y| {
        let (x, y) = (x as f64 * step, y as f64 * step);
        (x.sin() + y.sin() + 0.3 * (0.7 * x + 1.3 * y + 0.5).sin()) as f32
    })?)
}

/// One `squares` sample from a [`Cost`]: `value` in ms of wall time, with the
/// CPU time and page faults beside it, warm or cold as `mode` says.
fn squares_sample(name: String, cost: &Cost, cold: bool, what: String) -> Sample {
    let how = if cold {
        "cold (new tracer or mesher and a new output each call, one-shot)"
    } else {
        "warm (tracer or mesher and output reused)"
    };
    Sample {
        group: "squares",
        name,
        unit: "ms",
        value: cost.wall_s * 1e3,
        note: format!(
            "{what}; {:.1} ms CPU, {:.0} page faults, {how}",
            cost.cpu_s * 1e3,
            cost.faults
        ),
        extra: vec![
            ("wall_ms", cost.wall_s * 1e3),
            ("cpu_ms", cost.cpu_s * 1e3),
            ("minor_faults", cost.faults),
            ("cold", if cold { 1.0 } else { 0.0 }),
        ],
    }
}

/// Adds a cold sample's floor: the `warm` figure of the same thread count
/// plus `zeroing_ms`, the CPU time the kernel takes to zero the fresh pages
/// of its output, shared by the `threads` that write them.
fn with_floor(mut sample: Sample, warm: &Cost, zeroing_ms: f64, threads: usize) -> Sample {
    let floor_ms = warm.wall_s * 1e3 + zeroing_ms / threads as f64;
    sample.extra.push(("fresh_pages_ms", zeroing_ms));
    sample.extra.push(("cold_floor_ms", floor_ms));
    sample.note.push_str(&format!(
        "; floor {floor_ms:.1} ms (warm + {zeroing_ms:.1} ms CPU to zero the output's fresh pages)"
    ));
    sample
}

fn squares(reps: u32, out: &mut Vec<Sample>) -> anyhow::Result<()> {
    let (fresh, spb) = fresh_memory_sample();
    out.push(fresh);
    let pi = std::f64::consts::PI;
    let mut tracer = ContourTracer::new();
    let mut lines = Vec::new();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .context("cannot start two worker threads")?;
    // The same contours per cell at 8192^2: S grows with the side.
    for (label, s, n) in [
        ("sparse", 16.0 * pi, 2048),
        ("dense", 128.0 * pi, 2048),
        ("dense", 512.0 * pi, 8192),
    ] {
        let field = sine_field(n, s)?;
        // Warm: one tracer and one output list reused.
        let warm = median_cost(reps, || {
            tracer.contour_lines(&field, 0.0, &mut lines).ok();
        });
        let what = format!("{} polylines", lines.len());
        // Cold: what `isoterra contour` and a first library call do.
        let cold = median_cost(reps, || {
            let mut fresh = Vec::new();
            ContourTracer::new()
                .contour_lines(&field, 0.0, &mut fresh)
                .ok();
            fresh
        });
        out.push(squares_sample(
            format!("contour_lines_{label}_{n}"),
            &warm,
            false,
            what.clone(),
        ));
        out.push(squares_sample(
            format!("contour_lines_{label}_{n}_cold"),
            &cold,
            true,
            what.clone(),
        ));
        // Two threads: row bands, and on a large field the open chains
        // followed on both threads; the same lines as one thread.
        let mut par = ContourTracer::new().with_parallel(true);
        let mut par_lines = Vec::new();
        let warm2 = two.install(|| {
            median_cost(reps, || {
                par.contour_lines(&field, 0.0, &mut par_lines).ok();
            })
        });
        let cold2 = two.install(|| {
            median_cost(reps, || {
                let mut fresh = Vec::new();
                ContourTracer::new()
                    .with_parallel(true)
                    .contour_lines(&field, 0.0, &mut fresh)
                    .ok();
                fresh
            })
        });
        if par_lines != lines {
            anyhow::bail!("contour {label} {n}: two threads gave other lines than one thread");
        }
        for (mode, cost, cold) in [
            ("_threads_2", &warm2, false),
            ("_cold_threads_2", &cold2, true),
        ] {
            let mut sample = squares_sample(
                format!("contour_lines_{label}_{n}{mode}"),
                cost,
                cold,
                format!("{what}, 2 threads"),
            );
            sample.extra.push(("threads", 2.0));
            out.push(sample);
        }
    }
    let field = sine_field(2048, 128.0 * pi)?;
    let mut mesher = MarchingSquares::new();
    let mut buf = SquaresOutput::default();
    let cells = CellRect {
        x0: 0,
        y0: 0,
        x1: field.width() - 1,
        y1: field.height() - 1,
    };
    let warm = median_cost(reps, || {
        mesher
            .mesh(&field, None, cells, &SquaresOptions::DEFAULT, &mut buf)
            .ok();
    });
    let cold = median_cost(reps, || {
        let mut fresh = SquaresOutput::default();
        MarchingSquares::new()
            .mesh(&field, None, cells, &SquaresOptions::DEFAULT, &mut fresh)
            .ok();
        fresh
    });
    let what = format!(
        "{} triangles, {} segments",
        buf.fill.indices.len() / 3,
        buf.segments.segments.len()
    );
    out.push(squares_sample(
        "fill_and_segments_dense_2048".into(),
        &warm,
        false,
        what.clone(),
    ));
    let zeroing_ms = fresh_pages_ms(
        spb,
        &[
            buf.fill.positions.len() * 12,
            buf.fill.normals.len() * 12,
            buf.fill.uvs.len() * 8,
            buf.fill.indices.len() * 4,
            buf.segments.points.len() * 8,
            buf.segments.keys.len() * 8,
            buf.segments.segments.len() * 8,
        ],
    );
    out.push(with_floor(
        squares_sample(
            "fill_and_segments_dense_2048_cold".into(),
            &cold,
            true,
            what,
        ),
        &warm,
        zeroing_ms,
        1,
    ));
    edit(reps, out)
}

fn edit(reps: u32, out: &mut Vec<Sample>) -> anyhow::Result<()> {
    let params = side2d_params(7, 4096, 1024, Side2dPreset::Hills, 32, 1.0)?;
    let mut world = Side2dWorld::generate(&params).context("cannot generate the bench world")?;
    world.rebuild(None);
    // Alternate dig and its undo so every repetition does the same work.
    // Dig just below the ground surface so every repetition changes solid.
    let surface = world
        .raycast([2048.0, 1023.0], [2048.0, 0.0])
        .context("the bench world has no ground under x = 2048")?;
    let brush = Side2dBrush::new(Side2dTool::Dig, [2048.0, surface.point[1] - 4.0], 8.0);
    let mut times = Vec::new();
    for i in 0..=reps {
        let s = Instant::now();
        let edit = world.apply_brush(&brush)?;
        anyhow::ensure!(!edit.is_empty(), "the bench dig changed nothing");
        world.rebuild(None);
        let t = s.elapsed().as_secs_f64();
        world.apply_edit(&edit, isoterra::world::EditDirection::Backward)?;
        world.rebuild(None);
        if i > 0 {
            times.push(t);
        }
    }
    times.sort_by(f64::total_cmp);
    out.push(Sample {
        extra: Vec::new(),
        group: "edit",
        name: "dig_r8_rebuild_4096x1024".into(),
        unit: "us",
        value: times[times.len() / 2] * 1e6,
        note: "dig r=8 cells, rebuild dirty chunks' meshes and colliders".into(),
    });
    Ok(())
}

fn noise(reps: u32, out: &mut Vec<Sample>) -> anyhow::Result<()> {
    let params = FbmParams::DEFAULT
        .with_octaves(4)
        .with_frequency(1.0 / 64.0);
    let n = 1024u32;
    let mut buf = vec![0.0f32; (n * n) as usize];
    let mut per_sample = |name: &str, note: &str, count: usize, secs: f64| {
        out.push(Sample {
            extra: Vec::new(),
            group: "noise",
            name: name.into(),
            unit: "ns/sample",
            value: secs * 1e9 / count as f64,
            note: note.into(),
        })
    };
    let secs = median_secs(reps, || {
        fill_fbm2(&params, 7, [0.0, 0.0], [1.0, 1.0], [n, n], &mut buf).ok();
    });
    per_sample(
        "fbm2d_4oct_1024",
        "Perlin fBm, 4 octaves, 1024x1024 batch",
        buf.len(),
        secs,
    );

    let m = 64u32;
    let mut buf3 = vec![0.0f32; (m * m * m) as usize];
    let secs = median_secs(reps, || {
        fill_fbm3(&params, 7, [0.0; 3], [1.0; 3], [m, m, m], &mut buf3).ok();
    });
    per_sample(
        "fbm3d_4oct_64",
        "Perlin fBm, 4 octaves, 64^3 batch",
        buf3.len(),
        secs,
    );

    let simplex = Fractal::new(
        &FractalParams::from_fbm(&params, Basis::OpenSimplex2, FractalKind::Fbm),
        7,
    )?;
    let secs = median_secs(reps, || {
        fill2(&simplex, [0.0; 2], [1.0; 2], [n, n], &mut buf).ok();
    });
    per_sample(
        "opensimplex2_fbm2d_4oct_1024",
        "OpenSimplex2 fBm, 4 octaves, 1024x1024 batch",
        buf.len(),
        secs,
    );
    Ok(())
}

fn erosion(reps: u32, out: &mut Vec<Sample>) -> anyhow::Result<()> {
    let n = 512u32;
    let mut heights = vec![0.0f32; (n * n) as usize];
    HeightGen::new(
        &HeightParams::preset(HeightPreset::Hills).with_height_scale(40.0),
        3,
    )?
    .fill_heights([0.0; 2], [4.0; 2], [n, n], &mut heights)?;
    let base = Field2::from_values(n, n, heights)?;
    let params = HydraulicParams::DEFAULT;
    let mut rates = Vec::new();
    let mut cpu_rates = Vec::new();
    for _ in 0..reps.max(1) {
        let mut f = base.clone();
        let start = Instant::now();
        let cpu0 = thread_cpu_s();
        let stats = hydraulic_erosion(&mut f, [0, 0], &params, 1)?;
        let cpu = thread_cpu_s() - cpu0;
        rates.push(stats.droplets as f64 / start.elapsed().as_secs_f64());
        cpu_rates.push(stats.droplets as f64 / cpu);
    }
    rates.sort_by(f64::total_cmp);
    cpu_rates.sort_by(f64::total_cmp);
    out.push(Sample {
        // droplets per second of this thread's CPU time (one thread erodes)
        extra: vec![("droplets_per_cpu_s", cpu_rates[cpu_rates.len() / 2])],
        group: "erosion",
        name: "hydraulic_512".into(),
        unit: "droplets/s",
        value: rates[rates.len() / 2],
        note: "hills heightmap 512x512, default droplet parameters".into(),
    });
    erosion_tools(reps, out)
}

/// What a user waits for: one dab of the erode and thermal brushes (as the
/// editor previews it, through the document), and `isoterra erode` of a
/// 1024 x 1024 region (the erosion and its commit, in memory).
fn erosion_tools(reps: u32, out: &mut Vec<Sample>) -> anyhow::Result<()> {
    use isoterra::kind::{Document, ErodeSpec, NewWorld, StrokeSpec, WorldKind};
    use isoterra::store::MemoryStore;
    let new = NewWorld::new(WorldKind::Heightmap).with_preset("mountains");
    for (tool, r) in [("erode", 32.0), ("erode", 64.0), ("thermal", 64.0)] {
        let mut doc = Document::create_in(MemoryStore::new(), &new)?;
        let stroke = doc.begin_stroke(&StrokeSpec::new(tool, r).with_strength(0.5))?;
        let mut times = Vec::new();
        // The first dab is the cold one; the median covers them all.
        for k in 0..reps.max(1) * 4 {
            let at = [f64::from(k) * r / 4.0, 0.0, 0.0];
            let start = Instant::now();
            doc.dab(stroke, at)?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let first = times[0];
        doc.end_stroke(stroke)?;
        times.sort_by(f64::total_cmp);
        out.push(Sample {
            extra: vec![("first_dab_ms", first)],
            group: "erosion",
            name: format!("{tool}_brush_r{r}"),
            unit: "ms/dab",
            value: times[times.len() / 2],
            note: format!(
                "{tool} brush radius {r} on mountains, median of {} dabs a quarter radius apart, preview included",
                times.len()
            ),
        });
    }
    let mut doc = Document::create_in(MemoryStore::new(), &new)?;
    let start = Instant::now();
    let cpu0 = thread_cpu_s();
    let done = doc.erode(&ErodeSpec::new([0.0, 0.0, 1023.0, 1023.0]))?;
    let cpu = thread_cpu_s() - cpu0;
    out.push(Sample {
        extra: vec![("thread_cpu_s", cpu)],
        group: "erosion",
        name: "erode_region_1024".into(),
        unit: "s",
        value: start.elapsed().as_secs_f64(),
        note: format!(
            "isoterra erode of 1024x1024 nodes on mountains, default settings ({} nodes changed), one run",
            done.changed_nodes
        ),
    });
    Ok(())
}

/// `n^3` samples, x fastest, of `f` over `linspace(lo, hi, n)` on every axis.
fn volume(n: u32, lo: f64, hi: f64, f: impl Fn(f64, f64, f64) -> f64) -> Vec<f32> {
    let step = (hi - lo) / (n - 1) as f64;
    let axis: Vec<f64> = (0..n).map(|i| lo + i as f64 * step).collect();
    // Huge pages where the system allows, as a field read from a .npy file
    // (and numpy's own arrays, which the peers mesh) has them.
    let mut v = isoterra::field::huge_pages::with_capacity((n as usize).pow(3));
    for &z in &axis {
        for &y in &axis {
            for &x in &axis {
                v.push(f(x, y, z) as f32);
            }
        }
    }
    v
}

/// The standard sparse volume: a sphere of radius 0.6 with a little noise.
pub fn sphere_noise(n: u32) -> Vec<f32> {
    volume(n, -1.0, 1.0, |x, y, z| {
        (x * x + y * y + z * z).sqrt() - 0.6
            + 0.05 * (7.0 * x + 1.3).sin() * (9.0 * y + 0.7).sin() * (8.0 * z + 2.1).sin()
            + 0.02 * (23.0 * x + 17.0 * y + 0.4).sin() * (19.0 * z + 1.1).cos()
    })
}

/// The standard dense volume: a gyroid with `k` periods per axis.
pub fn gyroid(n: u32, k: f64) -> Vec<f32> {
    let hi = 2.0 * std::f64::consts::PI * k;
    volume(n, 0.0, hi, |x, y, z| {
        x.sin() * y.cos() + y.sin() * z.cos() + z.sin() * x.cos()
    })
}

/// Wall time, CPU time of the whole process (every thread) and minor page
/// faults of one call, each the median over the runs.
struct Cost {
    wall_s: f64,
    cpu_s: f64,
    faults: f64,
}

/// CPU seconds of the process (user + system, every thread) and its minor page
/// faults so far.
#[cfg(unix)]
pub(crate) fn usage() -> (f64, f64) {
    // SAFETY: `getrusage` fills the zeroed struct it is given and reads nothing else.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(u.ru_utime) + secs(u.ru_stime), u.ru_minflt as f64)
}

#[cfg(not(unix))]
pub(crate) fn usage() -> (f64, f64) {
    (f64::NAN, f64::NAN)
}

/// CPU seconds of the calling thread (`CLOCK_THREAD_CPUTIME_ID`): what a
/// single-threaded figure costs however busy the machine is.
#[cfg(unix)]
pub(crate) fn thread_cpu_s() -> f64 {
    // SAFETY: `clock_gettime` writes the zeroed timespec it is given.
    let t = unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
        t
    };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

#[cfg(not(unix))]
pub(crate) fn thread_cpu_s() -> f64 {
    f64::NAN
}

/// A yardstick of this core's speed at the time of a run: millions of steps
/// per CPU second (wall seconds where CPU time is not available) of a fixed
/// chain of 64-bit multiplies, xors and shifts, each step waiting for the
/// last; the median of three runs of about 30 ms. It reads no memory, so it
/// follows the clock and the share of the core a virtual machine gets, not
/// the caches: figures from two days compare after scaling by it, where
/// they are bound by the core the same way.
fn core_yardstick() -> f64 {
    const STEPS: u64 = 10_000_000;
    let rates: Vec<f64> = (0..3)
        .map(|_| {
            let (cpu0, wall0) = (thread_cpu_s(), Instant::now());
            let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
            for i in 0..STEPS {
                x = (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ i;
            }
            std::hint::black_box(x);
            let cpu = thread_cpu_s() - cpu0;
            let secs = if cpu.is_finite() && cpu > 0.0 {
                cpu
            } else {
                wall0.elapsed().as_secs_f64()
            };
            STEPS as f64 / secs.max(1e-9) / 1e6
        })
        .collect();
    median(rates)
}

/// A yardstick of this machine's memory at the time of a run: GB/s that
/// one thread reads from a 64 MiB buffer (the size of a 256³ `f32` field)
/// with four independent sums, so that the loop waits on memory, not on
/// additions; the best of three passes after one that faults the pages in.
/// Figures bound by reading a large field (the sparse volumes, the dense
/// contours) follow it from host to host, as core-bound ones follow
/// `core_yardstick`.
fn read_yardstick() -> f64 {
    const WORDS: usize = 8 << 20;
    let words: Vec<u64> = (0..WORDS as u64).collect();
    let best = (0..3)
        .map(|_| {
            let start = Instant::now();
            let mut sums = [0u64; 4];
            for c in std::hint::black_box(&words).chunks_exact(4) {
                for (sum, &w) in sums.iter_mut().zip(c) {
                    *sum = sum.wrapping_add(w);
                }
            }
            std::hint::black_box(sums);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    (WORDS * 8) as f64 / best.max(1e-9) / 1e9
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), or null where
/// the system does not say.
fn load_average() -> serde_json::Value {
    let Ok(text) = std::fs::read_to_string("/proc/loadavg") else {
        return serde_json::Value::Null;
    };
    let v: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() == 3 {
        serde_json::json!(v)
    } else {
        serde_json::Value::Null
    }
}

/// The median [`Cost`] of `f` over `reps` runs after one warm-up. `f` returns
/// what it wants dropped after the clock stops.
fn median_cost<T>(reps: u32, mut f: impl FnMut() -> T) -> Cost {
    drop(f());
    let mut runs: Vec<[f64; 3]> = (0..reps)
        .map(|_| {
            let (c0, f0) = usage();
            let s = Instant::now();
            let kept = f();
            let wall = s.elapsed().as_secs_f64();
            let (c1, f1) = usage();
            drop(kept);
            [wall, c1 - c0, f1 - f0]
        })
        .collect();
    let mut median = |k: usize| {
        runs.sort_by(|a, b| a[k].total_cmp(&b[k]));
        runs[runs.len() / 2][k]
    };
    Cost {
        wall_s: median(0),
        cpu_s: median(1),
        faults: median(2),
    }
}

/// Seconds per byte that the kernel takes to hand this process fresh memory
/// (zeroed, and backed by huge pages where it allows, as a one-shot output's
/// room is): what a cold call pays per byte of output on top of a warm one,
/// however fast the mesher. The best of three 256 MiB mappings.
#[cfg(target_os = "linux")]
fn fresh_memory_s_per_byte() -> f64 {
    const LEN: usize = 256 << 20;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        // SAFETY: a private anonymous mapping of LEN bytes; the loop writes
        // one byte in each of its pages, inside the mapping, and the mapping
        // is unmapped before the block ends. madvise only advises.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return f64::NAN;
            }
            libc::madvise(p, LEN, libc::MADV_HUGEPAGE);
            let bytes = p.cast::<u8>();
            let s = Instant::now();
            for off in (0..LEN).step_by(4096) {
                bytes.add(off).write_volatile(1);
            }
            best = best.min(s.elapsed().as_secs_f64());
            libc::munmap(p, LEN);
        }
    }
    best / LEN as f64
}

#[cfg(not(target_os = "linux"))]
fn fresh_memory_s_per_byte() -> f64 {
    f64::NAN
}

/// Milliseconds of CPU the kernel takes, at `s_per_byte`, to zero the fresh
/// memory of an output of vectors of these byte lengths, each rounded up to
/// whole 2 MiB pages (a one-shot output's room is offered huge pages, and a
/// huge page is zeroed whole).
fn fresh_pages_ms(s_per_byte: f64, lens_bytes: &[usize]) -> f64 {
    const HUGE: usize = 2 << 20;
    let bytes: f64 = lens_bytes
        .iter()
        .filter(|&&b| b > 0)
        .map(|&b| b.next_multiple_of(HUGE) as f64)
        .sum();
    bytes * s_per_byte * 1e3
}

/// Bytes at the start of `o`'s buffers that lie before each buffer's first
/// 2 MiB boundary: a fresh buffer's first stretch, which stays in 4 KiB
/// pages whatever the huge-page advice (the allocator writes its header on
/// the mapping's first page before the advice is given), and whose length
/// depends on where the mapping landed in this process (BENCHMARKS.md,
/// "Where a one-shot output's first megabytes land").
fn small_page_head_bytes(o: &CubesOutput) -> usize {
    fn head<T>(v: &[T]) -> usize {
        const HUGE: usize = 2 << 20;
        let p = v.as_ptr() as usize;
        ((HUGE - p % HUGE) % HUGE).min(std::mem::size_of_val(v))
    }
    head(&o.positions) + head(&o.normals) + head(&o.materials) + head(&o.indices)
}

/// Adds a cold one-shot sample's small-page stretch (see
/// [`small_page_head_bytes`]) to its figures and note.
fn with_small_head(mut sample: Sample, bytes: usize) -> Sample {
    let kib = bytes as f64 / 1024.0;
    sample.extra.push(("small_page_head_kib", kib));
    sample.note.push_str(&format!(
        "; {kib:.0} KiB of the output in 4 KiB pages before its huge pages (varies from process to process)"
    ));
    sample
}

/// The sample of the machine's fresh-memory rate, and the rate (s per byte).
fn fresh_memory_sample() -> (Sample, f64) {
    let spb = fresh_memory_s_per_byte();
    let sample = Sample {
        group: "memory",
        name: "fresh_pages".into(),
        unit: "GB/s",
        value: 1e-9 / spb,
        note: format!(
            "the kernel zeroes and maps fresh memory at {:.1} GB/s (256 MiB, huge pages offered, best of 3): \
             a cold call's floor is its warm time plus its output's bytes at this rate",
            1e-9 / spb
        ),
        extra: vec![("ms_per_gib", spb * (1u64 << 30) as f64 * 1e3)],
    };
    (sample, spb)
}

fn cubes(reps: u32, out: &mut Vec<Sample>) -> anyhow::Result<()> {
    let (fresh, spb) = fresh_memory_sample();
    out.push(fresh);
    let mut mesher = MarchingCubes::new();
    let mut buf = CubesOutput::default();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .context("cannot start two worker threads")?;
    let cases: [(&str, u32, Vec<f32>); 4] = [
        ("sphere_noise_128", 128, sphere_noise(128)),
        ("sphere_noise_256", 256, sphere_noise(256)),
        ("gyroid8_128", 128, gyroid(128, 8.0)),
        ("gyroid16_256", 256, gyroid(256, 16.0)),
    ];
    for (name, n, values) in cases {
        let dims = [n, n, n];
        let cells = CellBox::new(0, 0, 0, n - 1, n - 1, n - 1);
        for normals in [true, false] {
            let options = CubesOptions::DEFAULT.with_normals(normals);
            let mut failed = None;
            let mut check = |r: Result<(), isoterra::mesh::MeshError>| {
                if let Err(e) = r {
                    failed = Some(e);
                }
            };
            // Warm: one mesher and one output reused across calls.
            let warm = median_cost(reps, || {
                check(mesher.mesh_slice(&values, dims, cells, &options, &mut buf))
            });
            // Cold: what a one-shot call does, a new mesher and a new output.
            let one_shot = |parallel: bool| {
                let mut o = CubesOutput::default();
                let r = MarchingCubes::new()
                    .with_parallel(parallel)
                    .mesh_slice(&values, dims, cells, &options, &mut o);
                (r, o)
            };
            let mut cold_failed = None;
            let mut small_head = 0;
            let cold = median_cost(reps, || {
                let (r, o) = one_shot(false);
                cold_failed = cold_failed.take().or(r.err());
                small_head = small_page_head_bytes(&o);
                o
            });
            // Cold, growing: a one-shot call into an output that already holds a
            // little memory, so the mesher pushes onto it and the vectors grow
            // as they fill (what a fresh output did before it was sized first).
            let cold_grow = median_cost(reps, || {
                let mut o = CubesOutput::default();
                o.positions.reserve(1);
                let r = MarchingCubes::new().mesh_slice(&values, dims, cells, &options, &mut o);
                cold_failed = cold_failed.take().or(r.err());
                o
            });
            let mut par = MarchingCubes::new().with_parallel(true);
            let mut par_buf = CubesOutput::default();
            let warm2 = two.install(|| {
                median_cost(reps, || {
                    check(par.mesh_slice(&values, dims, cells, &options, &mut par_buf))
                })
            });
            let cold2 = two.install(|| {
                median_cost(reps, || {
                    let (r, o) = one_shot(true);
                    cold_failed = cold_failed.take().or(r.err());
                    o
                })
            });
            if let Some(e) = failed.or(cold_failed) {
                return Err(e).context("marching cubes failed on a bench volume");
            }
            if par_buf != buf {
                anyhow::bail!("{name}: two threads gave another mesh than one thread");
            }
            let voxels = ((n - 1) as f64).powi(3);
            let tris = buf.triangle_count() as f64;
            let suffix = if normals { "" } else { "_no_normals" };
            // What zeroing the output's fresh pages alone costs a cold call.
            let zeroing_ms = fresh_pages_ms(
                spb,
                &[
                    buf.positions.len() * 12,
                    buf.normals.len() * 12,
                    buf.materials.len(),
                    buf.indices.len() * 4,
                ],
            );
            for (mode, threads, cost) in [
                ("", 1, &warm),
                ("_cold", 1, &cold),
                ("_cold_grow", 1, &cold_grow),
                ("_threads_2", 2, &warm2),
                ("_cold_threads_2", 2, &cold2),
            ] {
                let secs = cost.wall_s;
                let how = match (mode.starts_with("_cold"), threads) {
                    _ if mode == "_cold_grow" => "cold, output grown as it fills (not sized first)",
                    (false, 1) => "warm (reused mesher and output)",
                    (true, 1) => "cold (new mesher and output, sized before the scan, one-shot)",
                    (false, _) => "warm, parallel mesher",
                    (true, _) => "cold, parallel mesher, one-shot",
                };
                let sample = Sample {
                    group: "cubes",
                    name: format!("{name}{suffix}{mode}"),
                    unit: "Mvox/s",
                    value: voxels / secs / 1e6,
                    note: format!(
                        "{:.1} ms wall, {:.1} ms CPU, {:.0} page faults, {threads} thread{}, {how}; {} triangles, {:.1} M triangles/s",
                        secs * 1e3,
                        cost.cpu_s * 1e3,
                        cost.faults,
                        if threads == 1 { "" } else { "s" },
                        buf.triangle_count(),
                        tris / secs / 1e6
                    ),
                    extra: vec![
                        ("wall_ms", secs * 1e3),
                        ("cpu_ms", cost.cpu_s * 1e3),
                        ("minor_faults", cost.faults),
                        ("threads", threads as f64),
                    ],
                };
                out.push(match mode {
                    "_cold" => {
                        with_small_head(with_floor(sample, &warm, zeroing_ms, 1), small_head)
                    }
                    "_cold_threads_2" => with_floor(sample, &warm2, zeroing_ms, 2),
                    _ => sample,
                });
            }
        }
    }
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(32)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 7));
    let mut world = VoxelWorld::new(&params).context("cannot build the voxel bench world")?;
    let mut ring = Vec::new();
    for z in -3..=2 {
        for y in -3..=2 {
            for x in -3..=2 {
                ring.push([x, y, z]);
            }
        }
    }
    world.load_chunks(&ring);
    let block: Vec<[i32; 3]> = ring
        .iter()
        .copied()
        .filter(|c| c.iter().all(|v| (-2..=1).contains(v)))
        .collect();
    let mut mesher = VoxelMesher::new();
    let mut mesh = VoxelChunkMesh::default();
    let mut tris = 0usize;
    let secs = median_secs(reps, || {
        tris = 0;
        for &c in &block {
            world.mesh_chunk(c, &mut mesher, &mut mesh);
            tris += mesh.triangle_count();
        }
    });
    let voxels = block.len() as f64 * 32f64.powi(3);
    out.push(Sample {
        extra: Vec::new(),
        group: "cubes",
        name: "voxel_chunk32_gather_mesh".into(),
        unit: "Mvox/s",
        value: voxels / secs / 1e6,
        note: format!(
            "{:.2} ms, {} chunks of 32^3 incl. apron gather, normals, materials, {tris} triangles",
            secs * 1e3,
            block.len()
        ),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_page_head_is_what_lies_before_each_buffers_first_boundary() {
        assert_eq!(small_page_head_bytes(&CubesOutput::default()), 0);
        // A large buffer: its stretch is under 2 MiB and ends on a boundary.
        let mut o = CubesOutput {
            indices: vec![7; 3 << 20],
            ..Default::default()
        };
        let head = small_page_head_bytes(&o);
        assert!(head < 2 << 20, "{head}");
        assert_eq!((o.indices.as_ptr() as usize + head) % (2 << 20), 0);
        // A small one counts no more than its bytes.
        o.positions = vec![[1.0; 3]; 10];
        let with_small = small_page_head_bytes(&o);
        assert!(with_small - head <= 120, "{with_small} {head}");
        let s = with_small_head(
            Sample {
                group: "cubes",
                name: "x_cold".into(),
                unit: "Mvox/s",
                value: 1.0,
                note: "cold".into(),
                extra: Vec::new(),
            },
            3 << 10,
        );
        assert_eq!(s.extra, [("small_page_head_kib", 3.0)]);
        assert!(
            s.note.contains("3 KiB of the output in 4 KiB pages"),
            "{}",
            s.note
        );
    }
}
