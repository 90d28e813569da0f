//! Property tests for brushes and edits: exact undo/redo, locality, dirty
//! tracking, chunked contours, and refusal of bad input.

mod common;

use common::*;
use isoterra_field::{NodeRect, Side2dPreset};
use isoterra_world::{
    EditDirection, Side2dBrush, Side2dBrushShape, Side2dTool, Side2dWorld, WorldError,
};
use proptest::prelude::*;

fn preset() -> impl Strategy<Value = Side2dPreset> {
    prop_oneof![
        Just(Side2dPreset::Caves),
        Just(Side2dPreset::Hills),
        Just(Side2dPreset::Cellular)
    ]
}

/// A small generated world: preset, seed, size 16..64 x 16..48 cells, chunks 3..20.
fn world() -> impl Strategy<Value = Side2dWorld> {
    (preset(), any::<u64>(), 16u32..64, 16u32..48, 3u32..20)
        .prop_map(|(p, seed, w, h, chunk)| generated(p, seed, w, h, chunk))
}

/// A brush somewhere around a 64 x 48 world (sometimes partly or fully outside).
fn brush() -> impl Strategy<Value = Side2dBrush> {
    (
        prop_oneof![Just(Side2dTool::Dig), Just(Side2dTool::Fill)],
        prop_oneof![
            Just(Side2dBrushShape::Circle),
            Just(Side2dBrushShape::Square)
        ],
        -10.0f32..74.0,
        -10.0f32..58.0,
        0.05f32..12.0,
        prop_oneof![Just(1.0f32), 0.01f32..1.0],
        0u8..5,
    )
        .prop_map(|(tool, shape, x, y, r, s, m)| {
            Side2dBrush::new(tool, [x, y], r)
                .with_shape(shape)
                .with_strength(s)
                .with_material(m)
        })
}

/// The node rectangle a brush may touch: nodes within radius + one cell.
fn reach(world: &Side2dWorld, b: &Side2dBrush) -> NodeRect {
    let cs = world.field().cell_size();
    let r = b.radius + cs;
    let lo = |c: f32| ((c - r) / cs).ceil().max(0.0) as u32;
    let hi = |c: f32, n: u32| (((c + r) / cs).floor().max(-1.0) + 1.0).min(n as f32) as u32;
    NodeRect::new(
        lo(b.center[0]),
        lo(b.center[1]),
        hi(b.center[0], world.field().width()),
        hi(b.center[1], world.field().height()),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn stroke_undo_redo_are_exact(mut w in world(), b in brush()) {
        let before = snapshot(&w);
        let edit = w.apply_brush(&b).unwrap();
        check_edit_shape(&w, &edit);
        let after = snapshot(&w);
        prop_assert_eq!(edit.is_empty(), before == after);
        w.apply_edit(&edit, EditDirection::Backward).unwrap();
        prop_assert_eq!(snapshot(&w), before.clone());
        w.apply_edit(&edit, EditDirection::Forward).unwrap();
        prop_assert_eq!(snapshot(&w), after);
        // Only listed nodes differ.
        let width = w.field().width();
        for (i, (a, b)) in before.0.iter().zip(&snapshot(&w).0).enumerate() {
            if a != b {
                prop_assert!(edit.nodes.binary_search(&(i as u32)).is_ok(),
                    "node ({}, {}) changed but is not in the edit", i as u32 % width, i as u32 / width);
            }
        }
    }

    #[test]
    fn brush_stays_in_its_reach_and_spares_border_and_bedrock(w in world(), b in brush()) {
        let mut w = w;
        let before = snapshot(&w);
        let edit = w.apply_brush(&b).unwrap();
        let r = reach(&w, &b);
        let width = w.field().width();
        for &i in &edit.nodes {
            let (x, y) = (i % width, i / width);
            prop_assert!(r.contains(x, y), "({x}, {y}) outside {r:?}");
            prop_assert!(!w.field().is_border(x, y));
            prop_assert!(!w.table().is_indestructible(before.1[i as usize]));
        }
        // Dig never adds solid, fill never removes it.
        let iso = w.params().iso;
        for k in 0..edit.nodes.len() {
            match b.tool {
                Side2dTool::Dig => prop_assert!(edit.after[k] <= edit.before[k]),
                Side2dTool::Fill => prop_assert!(edit.after[k] >= edit.before[k]),
            }
            if b.tool == Side2dTool::Dig || edit.before[k] >= iso || edit.after[k] < iso {
                prop_assert_eq!(edit.mat_after[k], edit.mat_before[k]);
            } else {
                prop_assert_eq!(edit.mat_after[k], b.material);
            }
        }
    }

    #[test]
    fn dirty_chunks_match_changed_nodes(w in world(), b in brush(), budget_rounds in 0usize..3) {
        let mut w = w;
        w.rebuild_all();
        let edit = w.apply_brush(&b).unwrap();
        prop_assert_eq!(dirty_set(&w), chunks_touching(&w, &edit.nodes));
        // Partial rebuilds shrink the set; the rest stay dirty.
        for _ in 0..budget_rounds {
            let before = w.dirty_count();
            let r = w.rebuild(Some(std::time::Duration::ZERO));
            prop_assert_eq!(r.remaining, w.dirty_count());
            prop_assert!(before == 0 || r.rebuilt >= 1);
        }
        w.rebuild_all();
        w.apply_edit(&edit, EditDirection::Backward).unwrap();
        prop_assert_eq!(dirty_set(&w), chunks_touching(&w, &edit.nodes));
    }

    #[test]
    fn many_strokes_undone_in_reverse_restore_the_start(
        w in world(),
        brushes in proptest::collection::vec(brush(), 1..6),
    ) {
        let mut w = w;
        let start = snapshot(&w);
        let edits: Vec<_> = brushes.iter().map(|b| w.apply_brush(b).unwrap()).collect();
        let end = snapshot(&w);
        for e in edits.iter().rev() {
            w.apply_edit(e, EditDirection::Backward).unwrap();
        }
        prop_assert_eq!(snapshot(&w), start);
        for e in &edits {
            w.apply_edit(e, EditDirection::Forward).unwrap();
        }
        prop_assert_eq!(snapshot(&w), end);
    }

    #[test]
    fn chunked_contours_match_whole_field_after_strokes(
        w in world(),
        brushes in proptest::collection::vec(brush(), 0..4),
        partial in any::<bool>(),
    ) {
        let mut w = w;
        w.rebuild_all();
        for b in &brushes {
            w.apply_brush(b).unwrap();
        }
        if partial {
            w.rebuild(Some(std::time::Duration::ZERO));
        } else {
            w.rebuild_all();
        }
        let whole = summary(&whole_field_contours(&w));
        let chunked = summary(&w.contours());
        prop_assert_eq!(chunked.0, whole.0);
        prop_assert_eq!(chunked.1, 0);
        prop_assert!((chunked.2 - whole.2).abs() <= 1e-6 * whole.2.abs().max(1.0),
            "area {} vs {}", chunked.2, whole.2);
        // Chunk polylines hold every segment exactly once.
        if !partial {
            for c in w.chunks() {
                let pts: usize = c.polylines.iter()
                    .map(|l| if l.closed { l.points.len() } else { l.points.len() - 1 })
                    .sum();
                prop_assert!(pts <= c.segments.segments.len());
            }
        }
    }

    #[test]
    fn raycast_hits_are_solid_and_misses_are_clear(
        w in world(),
        x0 in -5.0f32..70.0, y0 in -5.0f32..55.0, x1 in -5.0f32..70.0, y1 in -5.0f32..55.0,
    ) {
        let (from, to) = ([x0, y0], [x1, y1]);
        let at = |t: f32| [x0 + (x1 - x0) * t, y0 + (y1 - y0) * t];
        let hit = w.raycast(from, to);
        if let Some(hit) = hit {
            prop_assert!(w.is_solid(hit.point));
            prop_assert_eq!(hit.point, at(hit.t));
            prop_assert!((0.0..=1.0).contains(&hit.t));
            let n = (hit.normal[0].powi(2) + hit.normal[1].powi(2)).sqrt();
            prop_assert!((n - 1.0).abs() < 1e-3);
        }
        // Nothing solid before the hit (or anywhere, for a miss): the walk
        // solves each cell exactly, so no thin feature is skipped.
        let end = hit.map_or(1.0, |h| h.t);
        for k in 0..=512 {
            let t = end * k as f32 / 512.0;
            if hit.is_some() && end - t < 1e-4 {
                continue;
            }
            prop_assert!(!w.is_solid(at(t)), "solid at t = {} before the hit at {:?}", t, hit);
        }
    }

    #[test]
    fn bad_brushes_are_refused_and_change_nothing(
        w in world(),
        b in brush(),
        which in 0usize..8,
        junk in prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY), -100.0f32..0.0],
    ) {
        let mut w = w;
        w.rebuild_all();
        let before = snapshot(&w);
        let bad = match which {
            0 => b.with_radius(junk),
            1 => b.with_radius(0.0),
            2 => b.with_strength(junk),
            3 => b.with_strength(1.0 + junk.abs().max(0.01)),
            4 => b.with_center([junk, b.center[1]]).with_radius(if junk.is_finite() { f32::NAN } else { b.radius }),
            5 => b.with_center([b.center[0], junk]).with_strength(if junk.is_finite() { 0.0 } else { b.strength }),
            6 => b.with_material(5 + (junk.abs() as u8 % 200)),
            _ => b.with_radius(1e12),
        };
        let err = w.apply_brush(&bad);
        prop_assert!(matches!(err, Err(WorldError::InvalidParameter { .. })), "{:?} -> {:?}", bad, err);
        prop_assert_eq!(snapshot(&w), before);
        prop_assert_eq!(w.dirty_count(), 0);
    }
}
