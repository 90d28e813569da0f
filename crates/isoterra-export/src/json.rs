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

/// Writes what [`export_polylines_json`] returns to `w` a piece of about
/// 300 KB at a time, so that a large drawing (seven million points at
/// 8192²) is never held whole in memory as text. When the current rayon
/// pool has several threads, they make the next pieces while this thread
/// writes; the bytes are the same at any thread count. Wrap a file in a
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

/// Points per piece of the text made at once (about 300 KB of JSON).
const PIECE_POINTS: usize = 16 * 1024;

/// The JSON text of `polylines`, handed to `sink` a piece at a time (about
/// [`PIECE_POINTS`] points each, made on the rayon pool's threads when it
/// has more than one): compact, keys in the documented order, numbers as
/// serde_json writes an `f32` (zmij's shortest digits; `null` for a value
/// that is not finite).
fn json_text(
    polylines: &[Polyline],
    sink: &mut dyn FnMut(&str) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    json_text_in_pieces(polylines, PIECE_POINTS, sink)
}

fn json_text_in_pieces(
    polylines: &[Polyline],
    piece_points: usize,
    sink: &mut dyn FnMut(&str) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    let cuts = piece_cuts(polylines, piece_points);
    let last = cuts.len() - 2;
    crate::text::ordered_pieces(
        cuts.len() - 1,
        &|i, s: &mut String| {
            s.clear();
            if i == 0 {
                s.push_str("{\"polylines\":[");
            }
            json_between(polylines, cuts[i], cuts[i + 1], s);
            if i == last {
                s.push_str("]}");
            }
        },
        &mut |s: &String| sink(s),
    )
}

/// Where the text is cut into pieces: positions `(line, point)` before
/// point `point` of line `line`, from `(0, 0)` to `(polylines.len(), 0)`,
/// about `piece_points` points apart (a line counts one more, so that many
/// short lines are cut too). A long line is cut inside; a position inside
/// a line is always before one of its points.
fn piece_cuts(polylines: &[Polyline], piece_points: usize) -> Vec<(usize, usize)> {
    let piece = piece_points.max(1);
    let mut cuts = vec![(0, 0)];
    let mut acc = 0;
    for (l, line) in polylines.iter().enumerate() {
        if acc >= piece {
            cuts.push((l, 0));
            acc = 0;
        }
        let (n, mut p) = (line.points.len(), 0);
        // `acc < piece` here and after each cut.
        while n - p > piece - acc {
            p += piece - acc;
            cuts.push((l, p));
            acc = 0;
        }
        acc += n - p + 1;
    }
    cuts.push((polylines.len(), 0));
    cuts
}

/// Appends the text of the lines and points from position `from` up to
/// position `to` (see [`piece_cuts`]): a line's opening goes with its first
/// point, its closing with its last.
fn json_between(polylines: &[Polyline], from: (usize, usize), to: (usize, usize), s: &mut String) {
    let mut num = Numbers::default();
    let (mut l, mut p) = from;
    while (l, p) < to {
        let line = &polylines[l];
        if p == 0 {
            if l > 0 {
                s.push(',');
            }
            s.push_str("{\"points\":[");
        }
        let end = if l == to.0 { to.1 } else { line.points.len() };
        for (j, pt) in line.points[p..end].iter().enumerate() {
            if p + j > 0 {
                s.push(',');
            }
            s.push('[');
            num.push_json_f32(s, pt[0]);
            s.push(',');
            num.push_json_f32(s, pt[1]);
            s.push(']');
        }
        if end < line.points.len() {
            break;
        }
        s.push_str(if line.closed {
            "],\"closed\":true}"
        } else {
            "],\"closed\":false}"
        });
        (l, p) = (l + 1, 0);
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
            prop_assert_eq!(&streamed, want.as_bytes());
            // Cut anywhere (pieces of one point and up), on one thread and on
            // three: the same bytes.
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                for piece in [1, 2, 3, 7] {
                    let mut text = String::new();
                    pool.install(|| {
                        json_text_in_pieces(&lines, piece, &mut |t| {
                            text.push_str(t);
                            Ok(())
                        })
                    })
                    .unwrap();
                    prop_assert_eq!(&text, &want, "{} threads, pieces of {}", threads, piece);
                }
            }
        }

        #[test]
        fn cuts_cover_every_point_once_in_order(
            lens in prop::collection::vec(0usize..50, 0..12),
            piece in 1usize..20,
        ) {
            let lines: Vec<Polyline> =
                lens.iter().map(|&n| Polyline::new(vec![[0.0, 0.0]; n], false)).collect();
            let cuts = piece_cuts(&lines, piece);
            prop_assert_eq!(cuts[0], (0, 0));
            prop_assert_eq!(*cuts.last().unwrap(), (lines.len(), 0));
            // One empty piece for no lines; otherwise none is empty.
            for w in cuts.windows(2) {
                prop_assert!(w[0] < w[1] || lines.is_empty(), "{:?}", cuts);
            }
            for &(l, p) in &cuts[1..cuts.len() - 1] {
                // Inside a line, always before one of its points.
                prop_assert!(p == 0 || p < lines[l].points.len(), "{:?}", cuts);
            }
            // No piece holds much more than asked: its points, plus one per
            // line it begins.
            for w in cuts.windows(2) {
                let (mut units, (mut l, mut p)) = (0, w[0]);
                while (l, p) < w[1] {
                    let end = if l == w[1].0 { w[1].1 } else { lines[l].points.len() };
                    units += end - p + usize::from(p == 0);
                    (l, p) = (l + 1, 0);
                }
                prop_assert!(units <= 2 * piece + 1, "{} units in {:?}", units, w);
            }
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
        // 60,001 points in pieces of 16,384: four, each well under 1 MB.
        assert!(
            sizes.len() == 4 && sizes.iter().all(|&n| n < PIECE_POINTS * 40),
            "{sizes:?}"
        );
    }
}
