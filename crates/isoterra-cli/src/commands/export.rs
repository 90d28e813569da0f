//! `isoterra export`

use std::time::Instant;

use anyhow::Context;
use isoterra::export::{PngOptions, polylines_json, polylines_svg, render_side2d_png};
use isoterra::store::Side2dDocument;
use isoterra::world::Side2dWorld;

use crate::args::{ExportArgs, ExportFormat};
use crate::commands::write_atomic;

pub fn run(a: &ExportArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let mut doc = Side2dDocument::open(&a.file)
        .with_context(|| format!("cannot open {}", a.file.display()))?;
    let load_ms = ms(t0);
    let t1 = Instant::now();
    doc.rebuild();
    let world = doc.world();
    let contours = world.contours();
    let mesh_ms = ms(t1);
    let t2 = Instant::now();
    let bytes = match a.format {
        ExportFormat::Png => png(world, &contours, a.scale)?,
        ExportFormat::Svg => svg(world, &contours).into_bytes(),
        ExportFormat::Colliders => {
            let colliders = world
                .colliders(a.tolerance)
                .context("cannot build colliders")?;
            polylines_json(&colliders).into_bytes()
        }
    };
    write_atomic(&a.out, &bytes)?;
    let write_ms = ms(t2);
    if a.timings {
        eprintln!(
            "{}",
            serde_json::json!({
                "load_ms": load_ms, "mesh_ms": mesh_ms, "write_ms": write_ms,
                "contours": contours.len(), "bytes": bytes.len()
            })
        );
    }
    println!("wrote {} ({} bytes)", a.out.display(), bytes.len());
    Ok(())
}

fn png(
    world: &Side2dWorld,
    contours: &[isoterra::mesh::Polyline],
    scale: Option<f32>,
) -> anyhow::Result<Vec<u8>> {
    let mut options = PngOptions::DEFAULT.with_iso(world.params().iso);
    if let Some(s) = scale {
        options = options.with_pixels_per_cell(s);
    }
    Ok(render_side2d_png(
        world.field(),
        Some(world.materials()),
        world.table(),
        contours,
        &options,
    )?)
}

fn svg(world: &Side2dWorld, contours: &[isoterra::mesh::Polyline]) -> String {
    let f = world.field();
    let [ox, oy] = f.origin();
    let w = (f.width() - 1) as f32 * f.cell_size();
    let h = (f.height() - 1) as f32 * f.cell_size();
    polylines_svg(contours, [ox, oy, w, h], &Default::default())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
