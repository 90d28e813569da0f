//! `isoterra stroke`, `undo`, `redo` and `erode`.

use std::path::Path;

use anyhow::Context;
use isoterra::field::erosion::ThermalParams;
use isoterra::kind::{Document, ErodeSpec, StrokeSpec, WorldKind};
use isoterra::store::{ChunkStore, PgStore, is_postgres_url, redact_url};
use serde_json::{Value, json};

use crate::args::{ErodeArgs, Shape, StrokeArgs};
use crate::commands::parse;

/// Opens a world file of any kind (for the commands that take files only).
pub fn open(path: &Path) -> anyhow::Result<Document> {
    refuse_url(path)?;
    Document::open(path).with_context(|| format!("cannot open {}", path.display()))
}

/// Refuses a `postgres://` URL where a command takes only a world file.
pub fn refuse_url(path: &Path) -> anyhow::Result<()> {
    if path.to_str().is_some_and(is_postgres_url) {
        anyhow::bail!(
            "{}: this command takes a world file; worlds on a PostgreSQL server work with \
             new, stroke, undo, redo, info, export, bake, merge and edit",
            redact_url(&path.display().to_string())
        );
    }
    Ok(())
}

/// A world as the commands that take a file or a database URL open it.
pub enum World {
    /// A world file.
    File(Document),
    /// A world on a PostgreSQL server (`postgres://USER@HOST/DB?world=NAME`).
    Postgres(Box<Document<PgStore>>),
}

/// Opens the world at `location`: a `postgres://` URL names a world on a
/// server, anything else a world file.
pub fn open_world(location: &Path) -> anyhow::Result<World> {
    match location.to_str().filter(|l| is_postgres_url(l)) {
        Some(url) => {
            let doc = Document::open_with(|| Ok(PgStore::open_existing(url)?))
                .with_context(|| format!("cannot open {}", redact_url(url)))?;
            Ok(World::Postgres(Box::new(doc)))
        }
        None => open(location).map(World::File),
    }
}

/// Runs `$body` with `$doc` bound to the opened world's document (`&mut
/// Document<S>`), whatever its store.
macro_rules! with_world {
    ($world:expr, $doc:ident => $body:expr) => {
        match $world {
            $crate::commands::edit::World::File(mut d) => {
                let $doc = &mut d;
                $body
            }
            $crate::commands::edit::World::Postgres(mut d) => {
                let $doc = &mut *d;
                $body
            }
        }
    };
}
pub(crate) use with_world;

/// A point typed on the command line as the world point a dab takes:
/// `X,Y` (side2d) → `[x, y, 0]`, `X,Y,Z` (voxel), `X,Z` (heightmap, map)
/// → `[x, 0, z]`.
fn world_point(kind: WorldKind, text: &str) -> anyhow::Result<[f64; 3]> {
    let numbers = match kind.point_axes().len() {
        3 => parse::point3(text)?.to_vec(),
        _ => parse::point(text)?.to_vec(),
    };
    Ok(kind.point(&numbers)?)
}

/// The stroke the flags ask for, with the parameters given on the command
/// line (the rest take the tool schema's defaults).
fn spec(a: &StrokeArgs) -> anyhow::Result<StrokeSpec> {
    let mut spec =
        StrokeSpec::new(a.tool.clone(), f64::from(a.radius)).with_strength(f64::from(a.strength));
    spec.shape = Some(
        match a.shape {
            Shape::Circle => "circle",
            Shape::Square => "square",
            Shape::Diamond => "diamond",
            Shape::Sphere => "sphere",
            Shape::Box => "box",
            Shape::Capsule => "capsule",
        }
        .to_string(),
    );
    let p = &mut spec.params;
    if let Some(m) = a.material {
        p.insert("material".into(), json!(m));
    }
    // JSON has no NaN or infinity (they would become null, read as "not
    // given"): refuse them here.
    let finite = |name: &str, v: f32| -> anyhow::Result<Value> {
        anyhow::ensure!(v.is_finite(), "--{name} must be a finite number, got {v}");
        Ok(json!(v))
    };
    if let Some(h) = a.height {
        p.insert("height".into(), finite("height", h)?);
    }
    if let Some(n) = &a.normal {
        let n = parse::point3(n).context("--normal")?;
        p.insert("normal".into(), json!(n));
    }
    if let Some(t) = a.texture {
        p.insert("texture".into(), json!(t));
    }
    if let Some(l) = a.level {
        p.insert("level".into(), json!(l));
    }
    if let Some(l) = a.length {
        p.insert("length".into(), finite("length", l)?);
    }
    if let Some(w) = a.slope {
        p.insert("slope".into(), finite("slope", w)?);
    }
    if let Some(b) = a.blend {
        p.insert("blend".into(), finite("blend", b)?);
    }
    if let Some(s) = a.seed {
        p.insert("seed".into(), json!(s));
    }
    if let Some(flags) = &a.pathing {
        p.insert("pathing".into(), pathing_flags(flags)?);
    }
    if a.clear {
        p.insert("clear".into(), json!(true));
    }
    Ok(spec)
}

/// Parses `walk,fly,build` (or `all`) into the schema's flag list.
fn pathing_flags(text: &str) -> anyhow::Result<Value> {
    let mut flags: Vec<&str> = Vec::new();
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word.to_ascii_lowercase().as_str() {
            "all" => flags.extend(["walk", "fly", "build"]),
            "walk" => flags.push("walk"),
            "fly" => flags.push("fly"),
            "build" => flags.push("build"),
            _ => anyhow::bail!(
                "unknown pathing flag `{word}` in `{text}`; use walk, fly, build or all"
            ),
        }
    }
    if flags.is_empty() {
        anyhow::bail!("--pathing `{text}` names no flag; use a list of walk, fly, build");
    }
    Ok(json!(flags))
}

pub fn stroke(a: &StrokeArgs) -> anyhow::Result<()> {
    with_world!(open_world(&a.file)?, doc => stroke_in(doc, a))
}

fn stroke_in<S: ChunkStore>(doc: &mut Document<S>, a: &StrokeArgs) -> anyhow::Result<()> {
    let kind = doc.kind();
    let mut dabs = vec![world_point(kind, &a.at)?];
    if let Some(to) = &a.to {
        dabs.push(world_point(kind, to).context("--to")?);
    }
    let spec = spec(a)?;
    // A flag the tool does not take is refused, not silently dropped.
    if let Some(tool) = doc.tools().into_iter().find(|t| t.name == spec.tool) {
        for key in spec.params.keys() {
            if tool.param(key).is_none() {
                let takes: Vec<String> = tool
                    .params
                    .iter()
                    .map(|p| format!("--{}", p.name))
                    .collect();
                anyhow::bail!(
                    "--{key} does not apply to the {kind} tool `{}`; it takes {}",
                    tool.name,
                    if takes.is_empty() {
                        "no tool flags".to_string()
                    } else {
                        takes.join(", ")
                    }
                );
            }
        }
    }
    let done = doc.stroke(&spec, &dabs).context("stroke refused")?;
    match done.id {
        Some(id) => println!("stroke {id}: {} nodes changed", done.changed_nodes),
        None => println!("stroke changed nothing; nothing recorded"),
    }
    Ok(())
}

/// `isoterra erode`: a region of a heightmap world eroded as one stroke.
pub fn erode(a: &ErodeArgs) -> anyhow::Result<()> {
    let region = <[f32; 4]>::try_from(parse::numbers("region", &a.region)?)
        .map_err(|v| {
            anyhow::anyhow!(
                "--region {}: expected X0,Z0,X1,Z1, got {} numbers",
                a.region,
                v.len()
            )
        })?
        .map(f64::from);
    let mut spec = ErodeSpec::new(region);
    spec.hydraulic = match a.passes {
        Some(0) => None,
        passes => {
            let mut h = ErodeSpec::DEFAULT_HYDRAULIC;
            h.passes = passes.unwrap_or(h.passes);
            h.density = a.density.unwrap_or(h.density);
            h.lifetime = a.lifetime.unwrap_or(h.lifetime);
            h.radius = a.radius.unwrap_or(h.radius);
            h.capacity = a.capacity.unwrap_or(h.capacity);
            Some(h)
        }
    };
    if spec.hydraulic.is_none() {
        for (flag, given) in [
            ("density", a.density.is_some()),
            ("lifetime", a.lifetime.is_some()),
            ("radius", a.radius.is_some()),
            ("capacity", a.capacity.is_some()),
        ] {
            if given {
                anyhow::bail!("--{flag} is a hydraulic setting, but --passes 0 turns that off");
            }
        }
    }
    spec.thermal = match a.thermal {
        0 if a.talus.is_some() => {
            anyhow::bail!("--talus is a thermal setting: give --thermal ITERATIONS too")
        }
        0 => None,
        n => Some(
            ThermalParams::DEFAULT
                .with_iterations(n)
                .with_talus(a.talus.unwrap_or(ThermalParams::DEFAULT.talus)),
        ),
    };
    spec.blur = a.blur;
    spec.seed = a.seed;
    spec.feather = a.feather;
    let mut doc = open(&a.file)?;
    let start = std::time::Instant::now();
    let done = doc.erode(&spec).context("erosion refused")?;
    let seconds = start.elapsed().as_secs_f64();
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "stroke": done.id,
                "changed_nodes": done.changed_nodes,
                "seconds": seconds,
                "erosion": spec,
            })
        );
        return Ok(());
    }
    match done.id {
        Some(id) => println!(
            "stroke {id} (erode): {} nodes changed in {seconds:.2} s",
            done.changed_nodes
        ),
        None => println!("the erosion changed nothing; nothing recorded"),
    }
    Ok(())
}

pub fn undo(file: &Path) -> anyhow::Result<()> {
    match with_world!(open_world(file)?, doc => doc.undo()?) {
        Some(id) => println!("undid stroke {id}"),
        None => println!("nothing to undo"),
    }
    Ok(())
}

pub fn redo(file: &Path) -> anyhow::Result<()> {
    match with_world!(open_world(file)?, doc => doc.redo()?) {
        Some(id) => println!("redid stroke {id}"),
        None => println!("nothing to redo"),
    }
    Ok(())
}
