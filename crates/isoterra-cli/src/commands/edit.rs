//! `isoterra stroke`, `undo` and `redo`.

use std::path::Path;

use anyhow::{Context, bail};
use isoterra::world::{
    Brush, BrushShape, BrushTool, HeightBrush, HeightTool, VoxelBrush, VoxelTool,
};

use crate::args::{Shape, StrokeArgs};
use crate::commands::doc::Doc;
use crate::commands::parse;

pub fn stroke(a: &StrokeArgs) -> anyhow::Result<()> {
    let mut doc = Doc::open(&a.file)?;
    let (id, changed) = match &mut doc {
        Doc::Map(d) => return super::map::stroke(d, a),
        Doc::Side2d(d) => {
            let tool: BrushTool = a.tool.parse()?;
            let center = parse::point(&a.at)?;
            let shape = match a.shape {
                Shape::Circle => BrushShape::Circle,
                Shape::Square => BrushShape::Square,
                Shape::Diamond => bail!("side2d brushes are circle or square"),
            };
            let brush = Brush::new(tool, center, a.radius)
                .with_shape(shape)
                .with_strength(a.strength)
                .with_material(a.material);
            let outcome = d.stroke(&brush).context("stroke refused")?;
            (outcome.id, outcome.changed_nodes)
        }
        Doc::Voxel(d) => {
            let tool: VoxelTool = a.tool.parse()?;
            let center = parse::point3(&a.at)?;
            let mut brush = VoxelBrush::new(tool, center, a.radius)
                .with_strength(a.strength)
                .with_material(a.material);
            if tool == VoxelTool::Flatten {
                let n = parse::point3(&a.normal).context("--normal")?;
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                if len == 0.0 {
                    bail!("--normal must not be the zero vector");
                }
                let n = [n[0] / len, n[1] / len, n[2] / len];
                let offset = n[0] * center[0] + n[1] * center[1] + n[2] * center[2];
                brush = brush.with_plane(n, offset);
            }
            let outcome = d.stroke(&brush).context("stroke refused")?;
            (outcome.id, outcome.changed_nodes)
        }
        Doc::Heightmap(d) => {
            let tool: HeightTool = a.tool.parse()?;
            let center = parse::point(&a.at)?;
            let mut brush = HeightBrush::new(tool, center, a.radius).with_strength(a.strength);
            if let Some(h) = a.height {
                brush = brush.with_target_height(Some(h));
            }
            let outcome = d.stroke(&brush).context("stroke refused")?;
            (outcome.id, outcome.changed_nodes)
        }
    };
    match id {
        Some(id) => println!("stroke {id}: {changed} nodes changed"),
        None => println!("stroke changed nothing; nothing recorded"),
    }
    Ok(())
}

pub fn undo(file: &Path) -> anyhow::Result<()> {
    match Doc::open(file)?.undo()? {
        Some(id) => println!("undid stroke {id}"),
        None => println!("nothing to undo"),
    }
    Ok(())
}

pub fn redo(file: &Path) -> anyhow::Result<()> {
    match Doc::open(file)?.redo()? {
        Some(id) => println!("redid stroke {id}"),
        None => println!("nothing to redo"),
    }
    Ok(())
}
