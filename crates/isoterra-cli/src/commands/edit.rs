//! `isoterra stroke`, `undo` and `redo`.

use std::path::Path;

use anyhow::Context;
use isoterra::store::Side2dDocument;
use isoterra::world::{Brush, BrushShape, BrushTool};

use crate::args::{Shape, StrokeArgs, Tool};
use crate::commands::parse;

pub fn stroke(a: &StrokeArgs) -> anyhow::Result<()> {
    let center = parse::point(&a.at)?;
    let tool = match a.tool {
        Tool::Dig => BrushTool::Dig,
        Tool::Fill => BrushTool::Fill,
    };
    let shape = match a.shape {
        Shape::Circle => BrushShape::Circle,
        Shape::Square => BrushShape::Square,
    };
    let brush = Brush::new(tool, center, a.radius)
        .with_shape(shape)
        .with_strength(a.strength)
        .with_material(a.material);
    let mut doc = Side2dDocument::open(&a.file)
        .with_context(|| format!("cannot open {}", a.file.display()))?;
    let outcome = doc.stroke(&brush).context("stroke refused")?;
    match outcome.id {
        Some(id) => println!("stroke {id}: {} nodes changed", outcome.changed_nodes),
        None => println!("stroke changed nothing; nothing recorded"),
    }
    Ok(())
}

pub fn undo(file: &Path) -> anyhow::Result<()> {
    let mut doc =
        Side2dDocument::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    match doc.undo()? {
        Some(id) => println!("undid stroke {id}"),
        None => println!("nothing to undo"),
    }
    Ok(())
}

pub fn redo(file: &Path) -> anyhow::Result<()> {
    let mut doc =
        Side2dDocument::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    match doc.redo()? {
        Some(id) => println!("redid stroke {id}"),
        None => println!("nothing to redo"),
    }
    Ok(())
}
