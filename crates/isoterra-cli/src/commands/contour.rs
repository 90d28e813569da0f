//! `isoterra contour`: contours of any 2D `.npy` array.

use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::export::{export_polylines_svg, read_npy_file, write_polylines_json};
use isoterra::mesh::{ContourTracer, Polyline, simplify_rdp};

use crate::args::{ContourArgs, ContourFormat};
use crate::commands::{write_atomic, write_atomic_with};

pub fn run(a: &ContourArgs) -> anyhow::Result<()> {
    if !a.iso.is_finite() {
        bail!("--iso must be a finite number, got {}", a.iso);
    }
    if let Some(t) = a.simplify
        && !(t.is_finite() && t >= 0.0)
    {
        bail!("--simplify must be a finite tolerance >= 0, got {t}");
    }
    let threads = super::worker_threads(a.threads)?;
    let pool = super::worker_pool(threads)?;
    let t0 = Instant::now();
    // Large float32 files are read by the worker threads.
    let field = pool
        .install(|| read_npy_file(&a.npy))
        .with_context(|| format!("cannot read {}", a.npy.display()))?;
    let load_ms = ms(t0);

    let t1 = Instant::now();
    let mut lines: Vec<Polyline> = Vec::new();
    pool.install(|| {
        ContourTracer::new()
            .with_parallel(true)
            .contour_lines(&field, a.iso, &mut lines)
    })
    .context("contouring failed")?;
    if let Some(t) = a.simplify {
        lines = lines
            .iter()
            .map(|l| simplify_rdp(l, t))
            .collect::<Result<_, _>>()?;
    }
    let contour_ms = ms(t1);

    let t2 = Instant::now();
    match a.format {
        // Written as it is made, on the worker threads: no copy of the
        // whole text in memory.
        ContourFormat::Json => write_atomic_with(&a.out, |w| {
            Ok(pool.install(|| write_polylines_json(&lines, w))?)
        })?,
        ContourFormat::Svg => {
            let w = (field.width() - 1) as f32;
            let h = (field.height() - 1) as f32;
            let text = export_polylines_svg(&lines, [0.0, 0.0, w, h], &Default::default());
            write_atomic(&a.out, text.as_bytes())?;
        }
    }
    let write_ms = ms(t2);
    if a.timings {
        let points: usize = lines.iter().map(|l| l.points.len()).sum();
        let closed = lines.iter().filter(|l| l.closed).count();
        eprintln!(
            "{}",
            serde_json::json!({
                "load_ms": load_ms, "contour_ms": contour_ms, "write_ms": write_ms,
                "polylines": lines.len(), "closed": closed, "points": points,
                "width": field.width(), "height": field.height(), "threads": threads
            })
        );
    }
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
