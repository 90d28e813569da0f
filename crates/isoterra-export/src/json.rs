//! Collider / contour polylines as JSON.
//!
//! The format is exactly
//!
//! ```json
//! {"polylines": [{"points": [[x, y], ...], "closed": bool}, ...]}
//! ```
//!
//! with coordinates in world units. Closed loops do not repeat their first
//! point; outer boundaries run counter-clockwise and holes clockwise (solid
//! on the left), as the mesher produces them.

use isoterra_mesh::Polyline;
use serde::{Deserialize, Serialize};

use crate::ExportError;

#[derive(Serialize)]
struct DocOut<'a> {
    polylines: Vec<LineOut<'a>>,
}

#[derive(Serialize)]
struct LineOut<'a> {
    points: &'a [[f32; 2]],
    closed: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocIn {
    polylines: Vec<LineIn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineIn {
    points: Vec<[f32; 2]>,
    closed: bool,
}

/// Serialises polylines as `{"polylines": [{"points": [[x, y], ...], "closed": bool}, ...]}`.
///
/// Numbers are written in their shortest form that reads back to the same
/// `f32`, so [`parse_polylines_json`] restores the points bit for bit. JSON has
/// no NaN or infinity: such coordinates are written as `null`, which the parser
/// rejects.
pub fn export_polylines_json(polylines: &[Polyline]) -> String {
    // Serialising plain numbers, bools and arrays into a String cannot fail.
    serde_json::to_string(&doc_out(polylines)).unwrap_or_default()
}

/// Writes what [`export_polylines_json`] returns to `w` as it is made, so
/// that a large drawing (tens of millions of points at 8192²) is never
/// held whole in memory as text. Wrap a file in a [`std::io::BufWriter`].
///
/// # Errors
///
/// [`ExportError::Write`] when `w` fails.
pub fn write_polylines_json<W: std::io::Write>(
    polylines: &[Polyline],
    w: W,
) -> Result<(), ExportError> {
    serde_json::to_writer(w, &doc_out(polylines)).map_err(|e| {
        ExportError::Write(e.io_error_kind().map_or_else(
            || std::io::Error::other(e.to_string()),
            |kind| std::io::Error::new(kind, e.to_string()),
        ))
    })
}

fn doc_out(polylines: &[Polyline]) -> DocOut<'_> {
    DocOut {
        polylines: polylines
            .iter()
            .map(|p| LineOut {
                points: &p.points,
                closed: p.closed,
            })
            .collect(),
    }
}

/// Parses the format written by [`export_polylines_json`].
///
/// Errors: malformed JSON, missing or unknown keys, a point that is not a
/// pair of numbers, or a coordinate that does not fit in a finite `f32`.
pub fn parse_polylines_json(text: &str) -> Result<Vec<Polyline>, ExportError> {
    let doc: DocIn = serde_json::from_str(text).map_err(|e| ExportError::Json(e.to_string()))?;
    let mut out = Vec::with_capacity(doc.polylines.len());
    for (i, line) in doc.polylines.into_iter().enumerate() {
        if let Some(j) = line
            .points
            .iter()
            .position(|p| !(p[0].is_finite() && p[1].is_finite()))
        {
            return Err(ExportError::Json(format!(
                "point {j} of polyline {i} is not finite (coordinates must fit in f32)"
            )));
        }
        out.push(Polyline {
            points: line.points,
            closed: line.closed,
        });
    }
    Ok(out)
}
