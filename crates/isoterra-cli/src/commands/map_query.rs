//! `isoterra los` and `isoterra path`: the line of sight and the routes of
//! a map world.

use anyhow::bail;
use isoterra::field::map::MapLayers;
use isoterra::kind::AnyDocument;
use isoterra::world::{
    PathingGrid, PathingRules, cell_height, find_route, level_at, line_of_sight, pathing_grid,
    route_cost,
};
use serde_json::json;

use crate::args::{LosArgs, PathArgs};

/// A map's layers and its mesh frame: cell size and level height.
struct MapFrame {
    layers: MapLayers,
    cell: f32,
    level_height: f32,
}

fn open_map(file: &std::path::Path, what: &str) -> anyhow::Result<MapFrame> {
    let doc = super::edit::open(file)?;
    let AnyDocument::Map(d) = doc.typed() else {
        bail!(
            "`{what}` works on map worlds; {} is a {} world",
            file.display(),
            doc.kind()
        );
    };
    Ok(MapFrame {
        layers: d.world().layers().clone(),
        cell: d.params().mesh.cell_size,
        level_height: d.params().mesh.level_height,
    })
}

/// The map cell under a world-unit point, or an error naming the map's size.
fn cell_of(m: &MapFrame, name: &str, p: [f32; 2]) -> anyhow::Result<[u32; 2]> {
    let (w, d) = (m.layers.width_cells(), m.layers.depth_cells());
    let (x, z) = ((p[0] / m.cell).floor(), (p[1] / m.cell).floor());
    if x < 0.0 || z < 0.0 || x >= w as f32 || z >= d as f32 {
        bail!(
            "--{name} {},{} is outside the map (0..{} x 0..{} world units)",
            p[0],
            p[1],
            w as f32 * m.cell,
            d as f32 * m.cell
        );
    }
    Ok([x as u32, z as u32])
}

pub fn los(a: &LosArgs) -> anyhow::Result<()> {
    let from = super::parse::point(&a.from)?;
    let to = super::parse::point(&a.to)?;
    if a.levels_above > 15 {
        bail!("--levels-above must be in 0..=15, got {}", a.levels_above);
    }
    let m = open_map(&a.file, "los")?;
    cell_of(&m, "from", from)?;
    cell_of(&m, "to", to)?;
    let rules = PathingRules::DEFAULT
        .with_level_height(m.level_height)
        .with_sight_levels_above(a.levels_above);
    let c = |p: [f32; 2]| [p[0] / m.cell, p[1] / m.cell];
    let visible = line_of_sight(&m.layers, c(from), c(to), &rules);
    let from_level = level_at(&m.layers, c(from));
    let to_level = level_at(&m.layers, c(to));
    if a.json {
        println!(
            "{}",
            json!({"visible": visible, "from_level": from_level, "to_level": to_level})
        );
    } else {
        let level = |l: Option<u8>| l.map_or("?".to_string(), |l| l.to_string());
        println!(
            "{} (viewer on level {}, target on level {})",
            if visible { "visible" } else { "hidden" },
            level(from_level),
            level(to_level)
        );
    }
    Ok(())
}

pub fn path(a: &PathArgs) -> anyhow::Result<()> {
    let from = super::parse::point(&a.from)?;
    let to = super::parse::point(&a.to)?;
    let m = open_map(&a.file, "path")?;
    let start = cell_of(&m, "from", from)?;
    let goal = cell_of(&m, "to", to)?;
    let rules = PathingRules::DEFAULT.with_level_height(m.level_height);
    let grid = pathing_grid(&m.layers, &rules)?;
    let (bits, unit) = if a.air {
        (PathingGrid::FLY, "an air unit")
    } else {
        (PathingGrid::WALK, "a ground unit")
    };
    let passable = |c: [u32; 2]| grid.has(c[0], c[1], bits);
    let route = find_route(&grid, start, goal, bits);
    let centre = |c: [u32; 2]| {
        [
            (c[0] as f32 + 0.5) * m.cell,
            cell_height(&m.layers, m.level_height, c),
            (c[1] as f32 + 0.5) * m.cell,
        ]
    };
    let why_not = if !passable(start) {
        Some(format!("{unit} cannot stand on --from"))
    } else if !passable(goal) {
        Some(format!("{unit} cannot stand on --to"))
    } else {
        None
    };
    if a.json {
        let v = match &route {
            Some(r) => json!({
                "found": true,
                "cells": r.len(),
                "length": route_cost(r) * f64::from(m.cell),
                "points": r.iter().map(|&c| centre(c)).collect::<Vec<_>>(),
            }),
            None => json!({
                "found": false,
                "reason": why_not.clone().unwrap_or_else(|| "no route between them".into()),
            }),
        };
        println!("{v}");
        return Ok(());
    }
    match route {
        Some(r) => {
            println!(
                "route for {unit}: {} cells, {:.2} world units",
                r.len(),
                route_cost(&r) * f64::from(m.cell)
            );
            for c in r {
                let p = centre(c);
                println!("{:.2},{:.2},{:.2}", p[0], p[1], p[2]);
            }
        }
        None => println!(
            "no route for {unit}: {}",
            why_not.unwrap_or_else(|| "no route between them".into())
        ),
    }
    Ok(())
}
