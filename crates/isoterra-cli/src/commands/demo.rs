//! `isoterra demo`: create a side-view world, dig, export a PNG.

use anyhow::Context;
use isoterra::export::{PngOptions, export_side2d_png};
use isoterra::store::Side2dDocument;
use isoterra::world::{Side2dBrush, Side2dTool};

use isoterra::field::Side2dPreset;

use crate::args::DemoArgs;
use crate::commands::new::side2d_params;
use crate::commands::write_atomic;

pub fn run(a: &DemoArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create folder {}", a.out.display()))?;
    let file = a.out.join("demo.isoterra");
    for suffix in ["", "-wal", "-shm"] {
        let p = a.out.join(format!("demo.isoterra{suffix}"));
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("cannot replace {}", p.display()))?;
        }
    }
    let params = side2d_params(a.seed, 512, 256, Side2dPreset::Hills, 32, 1.0)?;
    let mut doc = Side2dDocument::create(&file, &params)
        .with_context(|| format!("cannot create {}", file.display()))?;
    println!(
        "created {} (side2d hills, 512x256 cells, seed {})",
        file.display(),
        a.seed
    );

    // Dig a row of craters into the ground and fill a bridge of earth.
    let mut strokes = 0;
    for (i, x) in [64.0f32, 150.0, 256.0, 360.0, 448.0]
        .into_iter()
        .enumerate()
    {
        let y = surface_y(&doc, x).unwrap_or(160.0);
        let r = 10.0 + 4.0 * i as f32;
        if doc
            .stroke(&Side2dBrush::new(Side2dTool::Dig, [x, y], r))?
            .id
            .is_some()
        {
            strokes += 1;
        }
    }
    // Pile a mound of sand on the ground between two craters.
    for k in 0..5 {
        let x = 300.0 + 6.0 * k as f32;
        let y = surface_y(&doc, x).unwrap_or(160.0);
        let b = Side2dBrush::new(Side2dTool::Fill, [x, y + 2.0], 6.0).with_material(2);
        if doc.stroke(&b)?.id.is_some() {
            strokes += 1;
        }
    }
    println!("applied {strokes} strokes (each saved before it returned)");

    doc.rebuild();
    let world = doc.world();
    let contours = world.contours();
    let png = export_side2d_png(
        world.field(),
        Some(world.materials()),
        world.table(),
        &contours,
        &PngOptions::DEFAULT.with_pixels_per_cell(2.0),
    )?;
    let png_path = a.out.join("demo.png");
    write_atomic(&png_path, &png)?;
    let islands = world.islands();
    println!(
        "wrote {} ({} contours, {} floating islands)",
        png_path.display(),
        contours.len(),
        islands.len()
    );
    println!("next: isoterra info {} --hash", file.display());
    Ok(())
}

/// The highest solid point in column `x`, if any (where a crater should go).
fn surface_y(doc: &Side2dDocument, x: f32) -> Option<f32> {
    let world = doc.world();
    let f = world.field();
    let top = (f.height() - 1) as f32 * f.cell_size();
    world.raycast([x, top], [x, 0.0]).map(|hit| hit.point[1])
}
