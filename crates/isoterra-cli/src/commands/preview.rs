//! `isoterra preview`: a picture of what a preset or recipe makes.

use std::time::Instant;

use isoterra::kind::{PreviewOptions, preview};
use serde_json::json;

use crate::args::PreviewArgs;

pub fn run(a: &PreviewArgs) -> anyhow::Result<()> {
    let new = super::new::new_world(&a.generator, None)?;
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
