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
use serde::Deserialize;

use crate::ExportError;
use crate::text::Numbers;

/// The format as serde_json writes it: the tests' reference.
#[cfg(test)]
#[derive(serde::Serialize)]
struct DocOut<'a> {
    polylines: Vec<LineOut<'a>>,
}

#[cfg(test)]
#[derive(serde::Serialize)]
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
    let mut out = String::new();
    // Appending to a String cannot fail.
    let _ = json_text(polylines, &mut |text| {
        out.push_str(text);
        Ok(())
    });
    out
}

/// Writes what [`export_polylines_json`] returns to `w` a block of about
/// 64 KiB at a time, so that a large drawing (seven million points at
/// 8192²) is never held whole in memory as text. Wrap a file in a
/// [`std::io::BufWriter`] or not.
///
/// # Errors
///
/// [`ExportError::Write`] when `w` fails.
pub fn write_polylines_json<W: std::io::Write>(
    polylines: &[Polyline],
    mut w: W,
) -> Result<(), ExportError> {
    json_text(polylines, &mut |text| {
        w.write_all(text.as_bytes()).map_err(ExportError::Write)
    })
}

/// The JSON text of `polylines`, handed to `sink` in blocks of about 64 KiB:
/// compact, keys in the documented order, numbers as serde_json writes an
/// `f32` (zmij's shortest digits; `null` for a value that is not finite).
fn json_text(
    polylines: &[Polyline],
    sink: &mut dyn FnMut(&str) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    const BLOCK: usize = 64 * 1024;
    let mut s = String::with_capacity(BLOCK + 256);
    let mut num = Numbers::default();
    s.push_str("{\"polylines\":[");
    for (i, line) in polylines.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str("{\"points\":[");
        for (j, p) in line.points.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            s.push('[');
            num.push_json_f32(&mut s, p[0]);
            s.push(',');
            num.push_json_f32(&mut s, p[1]);
            s.push(']');
            if s.len() >= BLOCK {
                sink(&s)?;
                s.clear();
            }
        }
        s.push_str(if line.closed {
            "],\"closed\":true}"
        } else {
            "],\"closed\":false}"
        });
    }
    s.push_str("]}");
    sink(&s)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(polylines: &[Polyline]) -> String {
        let doc = DocOut {
            polylines: polylines
                .iter()
                .map(|p| LineOut {
                    points: &p.points,
                    closed: p.closed,
                })
                .collect(),
        };
        serde_json::to_string(&doc).unwrap()
    }

    fn coordinate() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            -3000.0f32..3000.0,
            (0u32..3000).prop_map(|i| i as f32),
        ]
    }

    proptest! {
        #[test]
        fn text_is_serde_json_s_byte_for_byte(
            lines in prop::collection::vec(
                (prop::collection::vec([coordinate(), coordinate()], 0..40), any::<bool>()),
                0..8,
            ),
        ) {
            let lines: Vec<Polyline> =
                lines.into_iter().map(|(p, c)| Polyline::new(p, c)).collect();
            let want = reference(&lines);
            prop_assert_eq!(&export_polylines_json(&lines), &want);
            let mut streamed = Vec::new();
            write_polylines_json(&lines, &mut streamed).unwrap();
            prop_assert_eq!(streamed, want.into_bytes());
        }
    }

    #[test]
    fn a_large_drawing_is_written_in_blocks() {
        let line = Polyline::new(
            (0..30_000)
                .map(|i| [i as f32 * 0.37, -(i as f32)])
                .collect(),
            true,
        );
        let lines = vec![line.clone(), Polyline::new(vec![], false), line];
        let mut sizes = Vec::new();
        let mut text = String::new();
        json_text(&lines, &mut |t| {
            sizes.push(t.len());
            text.push_str(t);
            Ok(())
        })
        .unwrap();
        assert_eq!(text, reference(&lines));
        assert!(
            sizes.len() > 10 && sizes.iter().all(|&n| n < (64 << 10) + 256),
            "{sizes:?}"
        );
    }
}
