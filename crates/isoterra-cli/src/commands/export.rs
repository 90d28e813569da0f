//! `isoterra export`

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::kind::{
    Document, ExportFormat as Format, ExportRequest, FileRole, LodRings, WorldKind,
};
use isoterra::store::ChunkStore;

use crate::args::ExportArgs;
use crate::commands::edit::{open_world, with_world};
use crate::commands::{parse, write_atomic, write_atomic_with};

/// The mixed-LOD request of `--lod-rings`, `--around` and `--radius`.
fn lod_rings(a: &ExportArgs) -> anyhow::Result<Option<LodRings>> {
    let Some(text) = a.lod_rings.as_deref() else {
        if a.around.is_some() || a.radius.is_some() {
            bail!("--around and --radius go with --lod-rings");
        }
        return Ok(None);
    };
    let Some(around) = a.around.clone() else {
        bail!("--lod-rings needs --around, the point the rings are centred on");
    };
    let rings = if text.trim() == "auto" {
        Vec::new()
    } else {
        text.split(',')
            .map(|r| {
                r.trim().parse::<f32>().map_err(|_| {
                    anyhow::anyhow!(
                        "--lod-rings `{text}`: `{r}` is not a number (give radii such as \
                         64,128,256, or auto)"
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?
    };
    Ok(Some(LodRings::new(rings, around).with_radius(a.radius)))
}

pub fn run(a: &ExportArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let world = open_world(&a.file)?;
    let load_ms = ms(t0);
    with_world!(world, doc => export_from(doc, a, load_ms))
}

fn export_from<S: ChunkStore>(
    doc: &mut Document<S>,
    a: &ExportArgs,
    load_ms: f64,
) -> anyhow::Result<()> {
    let mut req = ExportRequest::new(a.format).with_region(a.region.clone());
    req.lod = a.lod;
    req.range = a.range.as_deref().map(parse::range).transpose()?;
    req.scale = a.scale;
    req.tolerance = a.tolerance;
    req.pad = a.pad;
    req.strict = a.strict;
    req.lod_rings = lod_rings(a)?;
    req.stem = a.out.file_stem().map(|s| s.to_string_lossy().into_owned());
    req.tmx = a
        .out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("tmx"));
    if doc.kind() == WorldKind::Map
        && req.format == Format::PngLayers
        && a.out.extension().is_some_and(|e| e == "json")
    {
        bail!(
            "the layer image needs a .png output name; its sidecar is written beside it as .json"
        );
    }
    if matches!(req.format, Format::Glb | Format::Obj) {
        return streamed(a, doc, &req, load_ms);
    }
    let t1 = Instant::now();
    let exported = doc.export(&req).context("export refused")?;
    let mesh_ms = ms(t1);
    let t2 = Instant::now();
    let mut written = Vec::new();
    // Sidecars first, so the main file appears last and complete.
    for f in exported.files.iter().rev() {
        let path = file_path(a, f.role);
        write_atomic(&path, &f.bytes)?;
        written.push((path, f.bytes.len()));
    }
    written.reverse();
    let bytes = exported.main().bytes.len() as u64;
    let times = [load_ms, mesh_ms, ms(t2)];
    report(a, times, bytes, &exported.counts, &written);
    Ok(())
}

/// Where a file of the export in `role` goes: the output path, or the
/// output path with the role's extension.
fn file_path(a: &ExportArgs, role: FileRole) -> PathBuf {
    match role.extension() {
        None => a.out.clone(),
        Some(ext) => a.out.with_extension(ext),
    }
}

/// The `--timings` line (`[load_ms, mesh_ms, write_ms]`, the main file's
/// bytes and the export's counts), the files written, main file first, and
/// the export's warnings.
fn report(
    a: &ExportArgs,
    [load_ms, mesh_ms, write_ms]: [f64; 3],
    bytes: u64,
    counts: &serde_json::Map<String, serde_json::Value>,
    written: &[(PathBuf, usize)],
) {
    if a.timings {
        let mut line = serde_json::json!({
            "load_ms": load_ms, "mesh_ms": mesh_ms, "write_ms": write_ms, "bytes": bytes
        });
        if let Some(obj) = line.as_object_mut() {
            obj.extend(counts.clone());
        }
        eprintln!("{line}");
    }
    for (path, n) in written {
        println!("wrote {} ({n} bytes)", path.display());
    }
    if let Some(warnings) = counts.get("warnings").and_then(|w| w.as_array()) {
        for w in warnings.iter().filter_map(|w| w.as_str()) {
            eprintln!("warning: {w}");
        }
    }
}

/// A glb or OBJ, encoded straight into the output file as it is made (a
/// 4096 x 4096 map's glb is 1.9 GB, its OBJ 5 GB; neither is held whole).
/// The other files (an OBJ's material library, a side view's colliders)
/// are written after it. `mesh_ms` covers meshing and writing the main file
/// together.
fn streamed<S: ChunkStore>(
    a: &ExportArgs,
    doc: &mut Document<S>,
    req: &ExportRequest,
    load_ms: f64,
) -> anyhow::Result<()> {
    let t1 = Instant::now();
    let done = write_atomic_with(&a.out, |w| doc.export_to(req, w).context("export refused"))?;
    let mesh_ms = ms(t1);
    let t2 = Instant::now();
    let mut written = vec![(a.out.clone(), done.main_bytes as usize)];
    for f in &done.others {
        let path = file_path(a, f.role);
        write_atomic(&path, &f.bytes)?;
        written.push((path, f.bytes.len()));
    }
    let times = [load_ms, mesh_ms, ms(t2)];
    report(a, times, done.main_bytes, &done.counts, &written);
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
