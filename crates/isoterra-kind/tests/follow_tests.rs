//! Two programs on one world file: a document that follows the other's
//! strokes, undos and redos (`Document::follow`) shows what a fresh open
//! of the file shows, whatever the order of writes and catch-ups.

use std::path::Path;

use isoterra_kind::{Document, NewWorld, StrokeSpec, WorldKind};
use proptest::prelude::*;

fn new_world(kind: WorldKind) -> NewWorld {
    match kind {
        WorldKind::Side2d => NewWorld::new(kind).with_size([64, 32]),
        WorldKind::Map => NewWorld::new(kind).with_size([48, 48]),
        _ => NewWorld::new(kind),
    }
}

/// A tool that changes `kind`'s small world near `at`, and where.
fn stroke_of(kind: WorldKind, which: u8, dx: f64) -> (StrokeSpec, [f64; 3]) {
    match kind {
        WorldKind::Side2d => {
            let tool = if which.is_multiple_of(2) {
                "dig"
            } else {
                "fill"
            };
            (StrokeSpec::new(tool, 3.0), [20.0 + dx, 16.0, 0.0])
        }
        WorldKind::Heightmap => {
            let tool = ["raise", "lower", "smooth"][which as usize % 3];
            (StrokeSpec::new(tool, 4.0), [dx, 0.0, 3.0])
        }
        WorldKind::Voxel => {
            let tool = if which.is_multiple_of(2) {
                "dig"
            } else {
                "add"
            };
            // Digging and adding change nodes wherever they land.
            (StrokeSpec::new(tool, 3.0), [dx, 0.0, 0.0])
        }
        WorldKind::Map => {
            let tool = ["raise", "lower", "cliff-up"][which as usize % 3];
            (StrokeSpec::new(tool, 4.0), [16.0 + dx, 0.0, 20.0])
        }
    }
}

fn state(doc: &Document) -> (String, bool, bool, u64) {
    let h = doc.history();
    (doc.content_hash(), h.can_undo, h.can_redo, h.strokes)
}

fn fresh(path: &Path) -> (String, bool, bool, u64) {
    let doc = Document::open(path).unwrap();
    let s = state(&doc);
    doc.close().unwrap();
    s
}

#[derive(Debug, Clone)]
enum Op {
    /// A handle catches up, then strokes.
    Stroke {
        b: bool,
        which: u8,
        dx: f64,
    },
    Undo {
        b: bool,
    },
    Redo {
        b: bool,
    },
    /// A handle only catches up.
    Follow {
        b: bool,
    },
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<bool>(), 0u8..6, -8.0f64..8.0).prop_map(|(b, which, dx)| Op::Stroke { b, which, dx }),
        2 => any::<bool>().prop_map(|b| Op::Undo { b }),
        1 => any::<bool>().prop_map(|b| Op::Redo { b }),
        2 => any::<bool>().prop_map(|b| Op::Follow { b }),
    ]
}

fn kind_strategy() -> impl Strategy<Value = WorldKind> {
    prop_oneof![
        Just(WorldKind::Side2d),
        Just(WorldKind::Heightmap),
        Just(WorldKind::Voxel),
        Just(WorldKind::Map),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Any sequence of writes by two handles, each catching up before it
    /// writes and at random times: after a catch-up a handle shows exactly
    /// what a fresh open of the file shows, and its own writes are accepted.
    #[test]
    fn a_following_document_equals_a_fresh_open(
        kind in kind_strategy(),
        ops in prop::collection::vec(op_strategy(), 1..14),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.isoterra");
        let mut a = Document::create(&path, &new_world(kind)).unwrap();
        let mut b = Document::open(&path).unwrap();
        b.follow().unwrap();
        for op in ops {
            let doc = match op {
                Op::Stroke { b: true, .. }
                | Op::Undo { b: true }
                | Op::Redo { b: true }
                | Op::Follow { b: true } => &mut b,
                _ => &mut a,
            };
            doc.follow().unwrap();
            prop_assert_eq!(state(doc), fresh(&path));
            match op {
                Op::Stroke { which, dx, .. } => {
                    let (spec, at) = stroke_of(kind, which, dx);
                    doc.stroke(&spec, &[at]).unwrap();
                }
                Op::Undo { .. } => {
                    doc.undo().unwrap();
                }
                Op::Redo { .. } => {
                    doc.redo().unwrap();
                }
                Op::Follow { .. } => {}
            }
            prop_assert_eq!(state(doc), fresh(&path));
        }
        let end = fresh(&path);
        a.follow().unwrap();
        b.follow().unwrap();
        prop_assert_eq!(state(&a), end.clone());
        prop_assert_eq!(state(&b), end);
    }
}

#[test]
fn following_reports_what_it_did_and_marks_the_handle_current() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.isoterra");
    let mut editor = Document::create(&path, &new_world(WorldKind::Side2d)).unwrap();
    let mut game = Document::open(&path).unwrap();
    let (dig, at) = stroke_of(WorldKind::Side2d, 0, 0.0);
    editor.stroke(&dig, &[at]).unwrap();
    editor.stroke(&dig, &[[at[0] + 8.0, at[1], 0.0]]).unwrap();
    // Stale: the game's own write would be refused.
    assert!(game.stroke(&dig, &[at]).is_err());
    let f = game.follow().unwrap();
    assert_eq!((f.undone, f.applied), (0, 2));
    assert_eq!(game.content_hash(), editor.content_hash());
    editor.undo().unwrap();
    let f = game.follow().unwrap();
    assert_eq!((f.undone, f.applied), (1, 0));
    assert_eq!(game.history().strokes, 1);
    assert!(!game.follow().unwrap().changed(), "nothing new");
    // Current again: the game may write, and the editor follows it.
    game.stroke(&dig, &[[40.0, 16.0, 0.0]]).unwrap();
    let f = editor.follow().unwrap();
    assert_eq!((f.undone, f.applied), (0, 1));
    assert_eq!(game.content_hash(), editor.content_hash());
    assert_eq!(game.history(), editor.history());
}

#[test]
fn a_stroke_gone_from_the_log_that_was_never_seen_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.isoterra");
    let mut editor = Document::create(&path, &new_world(WorldKind::Side2d)).unwrap();
    let (dig, at) = stroke_of(WorldKind::Side2d, 0, 0.0);
    editor.stroke(&dig, &[at]).unwrap();
    // The game opens with the stroke in effect and does not follow.
    let mut game = Document::open(&path).unwrap();
    let before = game.content_hash();
    // The editor undoes it and draws another: the undone one leaves the log.
    editor.undo().unwrap();
    editor.stroke(&dig, &[[40.0, 16.0, 0.0]]).unwrap();
    let err = game.follow().unwrap_err();
    assert!(err.to_string().contains("reopen"), "{err}");
    assert_eq!(game.content_hash(), before);
    // A stroke it followed it keeps, and takes back after the editor
    // dropped it.
    let mut game = Document::open(&path).unwrap();
    editor.stroke(&dig, &[[10.0, 16.0, 0.0]]).unwrap();
    game.follow().unwrap();
    editor.undo().unwrap();
    editor.stroke(&dig, &[[52.0, 16.0, 0.0]]).unwrap();
    let f = game.follow().unwrap();
    assert_eq!((f.undone, f.applied), (1, 1));
    assert_eq!(game.content_hash(), editor.content_hash());
    assert_eq!(game.history(), editor.history());
}
