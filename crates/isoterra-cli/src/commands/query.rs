//! `isoterra islands` and `isoterra raycast`: questions a game asks of a
//! world, answered from the file.

use anyhow::bail;
use isoterra::kind::{AnyDocument, WorldKind};
use serde_json::json;

use crate::args::{IslandsArgs, RaycastArgs};
use crate::commands::parse;

pub fn islands(a: &IslandsArgs) -> anyhow::Result<()> {
    let doc = super::edit::open(&a.file)?;
    let AnyDocument::Side2d(d) = doc.typed() else {
        bail!(
            "`islands` works on side2d worlds; {} is a {} world",
            a.file.display(),
            doc.kind()
        );
    };
    let islands = d.world().islands();
    if a.json {
        let list: Vec<_> = islands
            .iter()
            .map(|i| {
                json!({
                    "area": i.area,
                    "centroid": i.centroid(),
                    "nodes": i.node_count,
                    "bounds": {"min": [i.bounds.x0, i.bounds.y0], "max": [i.bounds.x1, i.bounds.y1]},
                    "outline": i.outline.iter().map(|l| &l.points).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", json!({"islands": list}));
        return Ok(());
    }
    println!("{} floating island(s)", islands.len());
    for (k, i) in islands.iter().enumerate() {
        let c = i.centroid().unwrap_or([f32::NAN; 2]);
        println!(
            "island {}: area {:.2}, centroid {:.2},{:.2}, {} nodes, cells {}..{} x {}..{}",
            k + 1,
            i.area,
            c[0],
            c[1],
            i.node_count,
            i.bounds.x0,
            i.bounds.x1,
            i.bounds.y0,
            i.bounds.y1
        );
    }
    Ok(())
}

pub fn raycast(a: &RaycastArgs) -> anyhow::Result<()> {
    if !(a.max.is_finite() && a.max > 0.0 && a.max <= 4096.0) {
        bail!("--max must be in (0, 4096] world units, got {}", a.max);
    }
    let from = parse::numbers("from", &a.from)?;
    let dir = parse::numbers("dir", &a.dir)?;
    let mut doc = super::edit::open(&a.file)?;
    let kind = doc.kind();
    if !kind.has_ground_queries() {
        let kinds: Vec<&str> = WorldKind::ALL
            .iter()
            .filter(|k| k.has_ground_queries())
            .map(|k| k.name())
            .collect();
        let (last, rest) = kinds.split_last().unwrap_or((&"no", &[]));
        let list = if rest.is_empty() {
            last.to_string()
        } else {
            format!("{} and {last}", rest.join(", "))
        };
        bail!(
            "`raycast` works on {list} worlds; {} is a {kind} world \
             (see `isoterra los` and `isoterra path`)",
            a.file.display()
        );
    }
    let dims = kind.dims();
    for (name, v) in [("from", &from), ("dir", &dir)] {
        if v.len() != dims {
            bail!(
                "--{name} takes {} numbers for a {kind} world ({}), got {}",
                dims,
                if dims == 2 { "X,Y" } else { "X,Y,Z" },
                v.len()
            );
        }
    }
    let len = dir.iter().map(|v| v * v).sum::<f32>().sqrt();
    if !(len.is_finite() && len > 0.0) {
        bail!("--dir must not be zero");
    }
    let in3 = |v: &[f32]| [v[0], v[1], v.get(2).copied().unwrap_or(0.0)];
    // (point, normal, distance), in the world's own dimensions.
    let hit = doc.raycast(in3(&from), in3(&dir), a.max).map(|h| {
        (
            h.point[..dims].to_vec(),
            h.normal[..dims].to_vec(),
            h.distance,
        )
    });
    let fmt = |v: &[f32]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    match (a.json, hit) {
        (true, Some((p, n, t))) => {
            println!(
                "{}",
                json!({"hit": true, "point": p, "normal": n, "distance": t})
            )
        }
        (true, None) => println!("{}", json!({"hit": false})),
        (false, Some((p, n, t))) => {
            println!(
                "hit at {} (normal {}), {t:.3} world units away",
                fmt(&p),
                fmt(&n)
            )
        }
        (false, None) => println!("no ground within {} world units", a.max),
    }
    Ok(())
}
