//! Collider JSON and SVG output of contour polylines.

use isoterra_export::{
    ExportError, SvgOptions, export_polylines_json, export_polylines_svg, parse_polylines_json,
    write_polylines_json,
};
use isoterra_mesh::Polyline;
use proptest::prelude::*;

fn square() -> Polyline {
    Polyline::new(vec![[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]], true)
}

#[test]
fn json_has_exactly_the_documented_shape() {
    let lines = vec![
        square(),
        Polyline::new(vec![[0.5, 1.25], [-3.0, 4.0]], false),
    ];
    let json = export_polylines_json(&lines);
    assert_eq!(
        json,
        r#"{"polylines":[{"points":[[0.0,0.0],[2.0,0.0],[2.0,2.0],[0.0,2.0]],"closed":true},{"points":[[0.5,1.25],[-3.0,4.0]],"closed":false}]}"#
    );
    // It is plain JSON that any reader understands.
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["polylines"][1]["points"][0][1], 1.25);
    assert_eq!(value["polylines"][0]["closed"], true);
    assert_eq!(parse_polylines_json(&json).unwrap(), lines);
    assert_eq!(export_polylines_json(&[]), r#"{"polylines":[]}"#);
}

#[test]
fn json_parser_accepts_whitespace_and_integers() {
    let text = r#"
        { "polylines" : [
            { "closed": false, "points": [ [1, 2], [3.5, -4e1] ] }
        ] }"#;
    let lines = parse_polylines_json(text).unwrap();
    assert_eq!(
        lines,
        vec![Polyline::new(vec![[1.0, 2.0], [3.5, -40.0]], false)]
    );
}

#[test]
fn json_parser_rejects_malformed_input() {
    for bad in [
        "",
        "[]",
        "{}",
        r#"{"polylines": {}}"#,
        r#"{"polylines": [{"points": [[1, 2]]}]}"#,
        r#"{"polylines": [{"closed": true}]}"#,
        r#"{"polylines": [{"points": [[1]], "closed": true}]}"#,
        r#"{"polylines": [{"points": [[1, 2, 3]], "closed": true}]}"#,
        r#"{"polylines": [{"points": [["a", 2]], "closed": true}]}"#,
        r#"{"polylines": [{"points": [[null, 2]], "closed": true}]}"#,
        r#"{"polylines": [{"points": [[1e39, 2]], "closed": true}]}"#,
        r#"{"polylines": [{"points": [[1, 2]], "closed": "yes"}]}"#,
        r#"{"polylines": [{"points": [[1, 2]], "closed": true, "extra": 1}]}"#,
        r#"{"polylines": [], "other": 1}"#,
        r#"{"polylines": [] "#,
    ] {
        match parse_polylines_json(bad) {
            Err(ExportError::Json(msg)) => assert!(!msg.is_empty(), "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    // Non-finite points are written as null, and null is refused on the way back.
    let json = export_polylines_json(&[Polyline::new(vec![[f32::NAN, 1.0]], false)]);
    assert!(json.contains("null"));
    assert!(parse_polylines_json(&json).is_err());
}

#[test]
fn svg_flips_y_and_closes_loops() {
    let lines = vec![square(), Polyline::new(vec![[0.0, 1.0], [4.0, 3.0]], false)];
    let svg = export_polylines_svg(&lines, [0.0, 0.0, 4.0, 4.0], &SvgOptions::DEFAULT);
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("viewBox=\"0 0 4 4\""), "{svg}");
    assert!(svg.contains("width=\"1024\" height=\"1024\""), "{svg}");
    // World (0, 0) is the bottom-left corner: SVG (0, 4).
    assert!(svg.contains("M0 4 L2 4 L2 2 L0 2 Z"), "{svg}");
    assert!(svg.contains("fill-rule=\"evenodd\""));
    // The open chain is a separate, unfilled path without Z.
    assert!(svg.contains("<path d=\"M0 3 L4 1\" fill=\"none\""), "{svg}");
    assert_eq!(svg.matches("<path").count(), 2);
    // Stroke width: 1.5 px of a 1024 px drawing of a 4-unit view.
    assert!(
        svg.contains(&format!("stroke-width=\"{}\"", 1.5f32 * 4.0 / 1024.0)),
        "{svg}"
    );
}

#[test]
fn svg_options_change_the_output() {
    let opts = SvgOptions::DEFAULT
        .with_evenodd(false)
        .with_fill([0, 0, 0, 0])
        .with_stroke([255, 0, 16, 128])
        .with_stroke_width_px(3.0)
        .with_width_px(200.0)
        .with_background([10, 20, 30, 255]);
    let svg = export_polylines_svg(&[square()], [-1.0, -1.0, 4.0, 2.0], &opts);
    assert!(svg.contains("width=\"200\" height=\"100\""), "{svg}");
    assert!(svg.contains("fill=\"none\""));
    assert!(!svg.contains("evenodd"));
    assert!(svg.contains("stroke=\"#ff0010\""));
    assert!(svg.contains("stroke-opacity=\"0.502\""));
    assert!(svg.contains("<rect") && svg.contains("fill=\"#0a141e\""));
    // With a fill and nonzero rule (holes wind clockwise).
    let svg = export_polylines_svg(
        &[square()],
        [0.0, 0.0, 2.0, 2.0],
        &SvgOptions::DEFAULT.with_evenodd(false),
    );
    assert!(svg.contains("fill-rule=\"nonzero\""));
}

#[test]
fn svg_survives_bad_views_and_points() {
    let lines = vec![
        square(),
        Polyline::new(
            vec![[f32::NAN, 0.0], [1.0, 1.0], [f32::INFINITY, 2.0]],
            false,
        ),
    ];
    for view in [
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0, 1.0],
        [f32::NAN, 0.0, 1.0, 1.0],
        [0.0, 0.0, f32::INFINITY, 1.0],
    ] {
        let svg = export_polylines_svg(&lines, view, &SvgOptions::DEFAULT);
        // Falls back to the bounding box of the finite points.
        assert!(svg.contains("viewBox=\"0 0 2 2\""), "{view:?}: {svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
    let empty = export_polylines_svg(
        &[],
        [0.0, 0.0, 0.0, 0.0],
        &SvgOptions::DEFAULT.with_width_px(f32::NAN),
    );
    assert!(
        empty.contains("viewBox=\"0 0 1 1\"") && !empty.contains("<path"),
        "{empty}"
    );
}

fn polyline() -> impl Strategy<Value = Polyline> {
    (
        prop::collection::vec(prop::array::uniform2(-1.0e6f32..1.0e6), 0..20),
        any::<bool>(),
    )
        .prop_map(|(points, closed)| Polyline::new(points, closed))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn json_round_trips_bit_for_bit(lines in prop::collection::vec(polyline(), 0..6)) {
        let text = export_polylines_json(&lines);
        let mut streamed = Vec::new();
        write_polylines_json(&lines, &mut streamed).unwrap();
        prop_assert_eq!(&streamed, text.as_bytes());
        let back = parse_polylines_json(&text).unwrap();
        prop_assert_eq!(back.len(), lines.len());
        for (a, b) in back.iter().zip(&lines) {
            prop_assert_eq!(a.closed, b.closed);
            let bits = |p: &Polyline| p.points.iter().flat_map(|q| [q[0].to_bits(), q[1].to_bits()]).collect::<Vec<_>>();
            prop_assert_eq!(bits(a), bits(b));
        }
    }

    #[test]
    fn any_text_parses_or_errors(text in ".{0,200}") {
        let _ = parse_polylines_json(&text);
    }

    #[test]
    fn svg_coordinates_read_back_to_the_drawn_values(lines in prop::collection::vec(polyline(), 0..6)) {
        let (min_x, min_y, size) = (-1.0e6f32, -1.0e6f32, 2.0e6f32);
        let svg = export_polylines_svg(&lines, [min_x, min_y, size, size], &SvgOptions::DEFAULT);
        let mut drawn: Vec<u32> = svg
            .split("d=\"")
            .skip(1)
            .flat_map(|rest| rest.split('"').next().unwrap().split_whitespace())
            .filter(|t| *t != "Z")
            .map(|t| t.trim_start_matches(['M', 'L']).parse::<f32>().unwrap().to_bits())
            .collect();
        let top = min_y + size;
        let mut want: Vec<u32> = lines
            .iter()
            .flat_map(|l| &l.points)
            .flat_map(|p| [(p[0] - min_x).to_bits(), (top - p[1]).to_bits()])
            .collect();
        drawn.sort_unstable();
        want.sort_unstable();
        prop_assert_eq!(drawn, want);
    }

    #[test]
    fn svg_has_one_move_per_polyline(lines in prop::collection::vec(polyline(), 0..6)) {
        let svg = export_polylines_svg(&lines, [-1.0e6, -1.0e6, 2.0e6, 2.0e6], &SvgOptions::DEFAULT);
        let moves = svg.matches('M').count();
        prop_assert_eq!(moves, lines.iter().filter(|l| !l.points.is_empty()).count());
        let closes = svg.matches(" Z").count() + svg.matches("\"Z").count();
        prop_assert_eq!(closes, lines.iter().filter(|l| l.closed && !l.points.is_empty()).count());
    }
}

#[test]
fn json_written_to_a_failing_writer_is_an_error() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = vec![square(); 3];
    match write_polylines_json(&lines, Full) {
        Err(ExportError::Write(e)) => assert!(e.to_string().contains("disk full"), "{e}"),
        other => panic!("expected a write error, got {other:?}"),
    }
}
