//! `isoterra preview`: a picture of what a preset or recipe makes.

use std::time::Instant;

use isoterra::kind::{NewWorld, PreviewOptions, preview};
use serde_json::json;

use crate::args::PreviewArgs;
use crate::commands::parse;

pub fn run(a: &PreviewArgs) -> anyhow::Result<()> {
    let size = match &a.size {
        Some(text) => {
            let (w, h) = parse::size(text)?;
            Some([w, h])
        }
        None => None,
    };
    let recipe = match &a.recipe {
        Some(path) => Some(super::recipe::read(path)?),
        None => None,
    };
    let new = NewWorld {
        kind: super::new::world_kind(a.kind),
        seed: a.seed,
        size,
        preset: a.preset.clone(),
        recipe,
        chunk: None,
        cell_size: Some(a.cell_size),
    };
    let options = PreviewOptions::DEFAULT
        .with_pixels(a.pixels)
        .with_area(a.area);
    let start = Instant::now();
    let p = preview(&new, &options)?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    super::write_atomic(&a.out, &p.png)?;
    if a.json {
        println!(
            "{}",
            json!({
                "file": a.out.display().to_string(),
                "width": p.width,
                "height": p.height,
                "area": p.area,
                "ms": ms,
            })
        );
    } else {
        println!(
            "wrote {} ({}x{} px, {} world units across, drawn in {ms:.1} ms)",
            a.out.display(),
            p.width,
            p.height,
            p.area
        );
    }
    Ok(())
}
