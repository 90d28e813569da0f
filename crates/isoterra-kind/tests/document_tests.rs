//! The kind-generic document: every tool of every kind strokes, undoes and
//! redoes exactly; live strokes (dab by dab, several open at once) give
//! what one-shot strokes give; reopening a file gives the same world and
//! history; bad input changes nothing; every kind exports every format it
//! offers and refuses the others; new worlds take their defaults and limits.
//!
//! Worlds are small (side2d 64x32, map 48x48, heightmap and voxel strokes
//! of radius <= 8 near the origin) so the whole file runs in seconds.

use std::path::Path;

use isoterra_field::DensitySampler;
use isoterra_kind::schema::{ParamKind, ToolSpec};
use isoterra_kind::{
    AnyDocument, Committed, Document, ExportFormat, ExportRequest, FileRole, History, KindError,
    MAP_SIZE, NewWorld, SIDE2D_SIZE, StrokeSpec, WorldKind, WorldParams,
};
use isoterra_store::{ChunkStore, MemoryStore};
use isoterra_world::{MapBrush, MapStroke, MapTool};
use proptest::prelude::*;
use serde_json::{Value, json};

// ----- worlds -----

/// The small world of `kind` every test uses.
fn new_world(kind: WorldKind) -> NewWorld {
    match kind {
        WorldKind::Side2d => NewWorld::new(kind).with_size([64, 32]),
        WorldKind::Map => NewWorld::new(kind).with_size([48, 48]),
        _ => NewWorld::new(kind),
    }
}

fn memory_doc(kind: WorldKind) -> Document<MemoryStore> {
    Document::create_in(MemoryStore::new(), &new_world(kind)).unwrap()
}

fn file_doc(dir: &Path, kind: WorldKind) -> (Document, std::path::PathBuf) {
    let path = dir.join(format!("{kind}.isoterra"));
    let doc = Document::create(&path, &new_world(kind)).unwrap();
    (doc, path)
}

/// The highest solid node on the column x = z = 0 of the default voxel
/// world (its ground surface there).
fn voxel_surface_y() -> f64 {
    let WorldParams::Voxel(p) = new_world(WorldKind::Voxel).params().unwrap() else {
        panic!("voxel parameters expected");
    };
    let sampler = DensitySampler::new(&p.generator).unwrap();
    (-48..=48)
        .rev()
        .find(|&y| sampler.density([0.0, y as f32, 0.0]) >= p.iso)
        .map(f64::from)
        .expect("the voxel column at x = z = 0 has ground within y = -48..=48")
}

/// A point on (or near) the surface of `kind`'s small world: mid-height of
/// the side view, the map's centre, the heightmap's origin, the voxel
/// ground above the origin.
fn surface_point(kind: WorldKind) -> [f64; 3] {
    match kind {
        WorldKind::Side2d => [32.0, 16.0, 0.0],
        WorldKind::Heightmap => [0.0, 0.0, 0.0],
        WorldKind::Voxel => [0.0, voxel_surface_y(), 0.0],
        WorldKind::Map => [24.0, 0.0, 24.0],
    }
}

/// Points to try a tool at, the surface point first.
fn candidate_points(kind: WorldKind) -> Vec<[f64; 3]> {
    let [x, y, z] = surface_point(kind);
    let offsets: &[[f64; 3]] = match kind {
        WorldKind::Side2d => &[
            [0.0, 0.0, 0.0],
            [0.0, 4.0, 0.0],
            [-12.0, 2.0, 0.0],
            [12.0, 2.0, 0.0],
            [0.0, -4.0, 0.0],
        ],
        WorldKind::Heightmap => &[[0.0, 0.0, 0.0], [5.0, 0.0, 3.0], [-6.0, 0.0, -4.0]],
        WorldKind::Voxel => &[
            [0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 3.0, 0.0],
            [0.0, -3.0, 0.0],
        ],
        WorldKind::Map => &[
            [0.0, 0.0, 0.0],
            [6.0, 0.0, 0.0],
            [0.0, 0.0, 6.0],
            [-10.0, 0.0, -10.0],
            [10.0, 0.0, 10.0],
        ],
    };
    offsets
        .iter()
        .map(|o| [x + o[0], y + o[1], z + o[2]])
        .collect()
}

/// The radius test 1 strokes with.
fn radius_of(kind: WorldKind) -> f64 {
    match kind {
        WorldKind::Voxel => 4.0,
        _ => 6.0,
    }
}

/// Strokes that give a tool something to change where the plain world
/// offers nothing (a cliff to ramp or lower, water to lower, a texture to
/// paint over).
fn preparation(kind: WorldKind) -> Vec<(StrokeSpec, [f64; 3])> {
    let c = surface_point(kind);
    match kind {
        WorldKind::Map => vec![
            (StrokeSpec::new("cliff-up", 6.0), c),
            (StrokeSpec::new("water-raise", 8.0), c),
            (StrokeSpec::new("paint", 8.0).with_param("texture", 5), c),
        ],
        WorldKind::Voxel => vec![(StrokeSpec::new("add", 3.0).with_param("material", 3), c)],
        // Slopes steep enough for the thermal brush to slump.
        WorldKind::Heightmap => vec![(StrokeSpec::new("raise", 8.0).with_strength(1.0), c); 5],
        _ => vec![],
    }
}

fn state<S: ChunkStore>(doc: &Document<S>) -> (String, History) {
    (doc.content_hash(), doc.history())
}

/// What the world in memory shows, open strokes' previews included.
///
/// `Document::content_hash` promises to count previews, and does for
/// side2d, heightmap and map worlds. A voxel world's hash covers only the
/// chunks its store holds, so a preview on chunks no finished stroke has
/// touched (any preview on a new world) leaves it unchanged. Until that is
/// fixed, voxel previews are seen here through the nodes around the
/// surface point, where every stroke of these tests lands.
fn shown<S: ChunkStore>(doc: &Document<S>) -> String {
    let AnyDocument::Voxel(d) = doc.typed() else {
        return doc.content_hash();
    };
    let [x, y, z] = surface_point(WorldKind::Voxel).map(|v| v as i64);
    let world = d.world();
    let n = i64::from(world.chunk_cells());
    let len = world.chunk_len();
    // Chunks not loaded hold what the generator gives.
    let mut chunks: std::collections::BTreeMap<[i32; 3], (Vec<f32>, Vec<u8>)> = Default::default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    const R: i64 = 16;
    for gz in z - R..=z + R {
        for gy in y - R..=y + R {
            for gx in x - R..=x + R {
                let g = [gx, gy, gz];
                let c = world.chunk_of_node(g);
                let (values, ids) = chunks.entry(c).or_insert_with(|| {
                    let chunk = world
                        .chunk(c)
                        .cloned()
                        .unwrap_or_else(|| world.generated_chunk(c));
                    (chunk.density.to_dense(len), chunk.materials.to_dense(len))
                });
                let l = g.map(|v| v.rem_euclid(n));
                let i = ((l[2] * n + l[1]) * n + l[0]) as usize;
                for b in values[i]
                    .to_bits()
                    .to_le_bytes()
                    .into_iter()
                    .chain([ids[i]])
                {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
            }
        }
    }
    format!("{h:016x}")
}

/// Tries `spec` at each point in turn; the first stroke that records a
/// change. Strokes that change nothing (or are refused) must leave the
/// world and its history as they were.
fn first_change<S: ChunkStore>(
    doc: &mut Document<S>,
    spec: &StrokeSpec,
    points: &[[f64; 3]],
) -> Option<([f64; 3], Committed)> {
    for p in points {
        let before = state(doc);
        match doc.stroke(spec, &[*p]) {
            Ok(c) if c.id.is_some() => return Some((*p, c)),
            Ok(c) => {
                assert_eq!(c.changed_nodes, 0, "{} at {p:?}", spec.tool);
                assert_eq!(
                    state(doc),
                    before,
                    "{} at {p:?} recorded nothing",
                    spec.tool
                );
            }
            Err(_) => assert_eq!(state(doc), before, "{} at {p:?} was refused", spec.tool),
        }
    }
    None
}

fn tool_names<S: ChunkStore>(doc: &Document<S>) -> Vec<&'static str> {
    doc.tools().iter().map(|t| t.name).collect()
}

// ----- 1. every tool strokes, undoes and redoes exactly -----

#[test]
fn every_tool_of_every_kind_strokes_undoes_and_redoes_exactly() {
    for kind in WorldKind::ALL {
        let tools = memory_doc(kind).tools();
        assert!(!tools.is_empty(), "{kind} has tools");
        for tool in &tools {
            let mut doc = memory_doc(kind);
            let spec = StrokeSpec::new(tool.name, radius_of(kind));
            let points = candidate_points(kind);
            let found = match first_change(&mut doc, &spec, &points) {
                Some(f) => Some(f),
                None => {
                    for (prep, at) in preparation(kind) {
                        let c = doc.stroke(&prep, &[at]).unwrap();
                        assert!(c.id.is_some(), "{kind} preparation {} changes", prep.tool);
                    }
                    first_change(&mut doc, &spec, &points)
                }
            };
            // Undo the found stroke and check it from scratch, so that the
            // checks below see one stroke on top of a known history.
            let Some((at, _)) = found else {
                panic!("{kind} tool {} changed nothing at {points:?}", tool.name);
            };
            doc.undo().unwrap();

            let (hash0, hist0) = state(&doc);
            let c = doc.stroke(&spec, &[at]).unwrap();
            let id = c.id.expect("the stroke changes something");
            assert!(c.changed_nodes > 0, "{kind} {}", tool.name);
            let (hash1, hist1) = state(&doc);
            assert_ne!(hash1, hash0, "{kind} {} changes the content", tool.name);
            assert_eq!(hist1.strokes, hist0.strokes + 1, "{kind} {}", tool.name);
            assert!(hist1.can_undo && !hist1.can_redo, "{kind} {}", tool.name);

            assert_eq!(doc.undo().unwrap(), Some(id), "{kind} {}", tool.name);
            assert_eq!(doc.content_hash(), hash0, "{kind} {} undo", tool.name);
            let h = doc.history();
            assert_eq!(h.strokes, hist0.strokes, "{kind} {}", tool.name);
            assert!(h.can_redo, "{kind} {}", tool.name);

            assert_eq!(doc.redo().unwrap(), Some(id), "{kind} {}", tool.name);
            assert_eq!(doc.content_hash(), hash1, "{kind} {} redo", tool.name);
            assert_eq!(doc.history(), hist1, "{kind} {}", tool.name);
            assert_eq!(
                doc.redo().unwrap(),
                None,
                "{kind} {}: nothing more to redo",
                tool.name
            );
        }
    }
}

#[test]
fn a_stroke_that_changes_nothing_is_not_recorded() {
    // Digging high in the side view's sky removes nothing.
    let mut doc = memory_doc(WorldKind::Side2d);
    let before = state(&doc);
    let c = doc
        .stroke(&StrokeSpec::new("dig", 2.0), &[[32.0, 31.0, 0.0]])
        .unwrap();
    assert_eq!(
        c,
        Committed {
            id: None,
            changed_nodes: 0
        }
    );
    assert_eq!(state(&doc), before);
    assert_eq!(doc.undo().unwrap(), None);
    // A live stroke without a dab records nothing either.
    let s = doc.begin_stroke(&StrokeSpec::new("dig", 4.0)).unwrap();
    assert_eq!(doc.open_strokes(), 1);
    assert_eq!(doc.end_stroke(s).unwrap().id, None);
    assert_eq!(doc.open_strokes(), 0);
    assert_eq!(state(&doc), before);
}

#[test]
fn water_is_an_alias_of_water_raise_on_maps() {
    let mut a = memory_doc(WorldKind::Map);
    let mut b = memory_doc(WorldKind::Map);
    let at = [surface_point(WorldKind::Map)];
    let ca = a.stroke(&StrokeSpec::new("water", 6.0), &at).unwrap();
    let cb = b.stroke(&StrokeSpec::new("water-raise", 6.0), &at).unwrap();
    assert!(ca.id.is_some());
    assert_eq!(ca.changed_nodes, cb.changed_nodes);
    assert_eq!(a.content_hash(), b.content_hash());
}

// ----- strategies -----

#[derive(Debug, Clone)]
struct Drawn {
    spec: StrokeSpec,
    dabs: Vec<[f64; 3]>,
}

/// Tools whose strokes the random tests draw. Map tools whose defaults
/// are read from the world under the first dab get explicit values where
/// another open stroke could change what lies there (plateau height), and
/// cliff-down (refused on level 0 ground) is left to the tests that
/// prepare for it. Cliff-up keeps its default level: its first dab fixes
/// it (see `map_cliff_drags_with_the_default_level`).
fn random_tools(kind: WorldKind) -> Vec<StrokeSpec> {
    let tools = memory_doc(kind).tools();
    tools
        .iter()
        .filter(|t| !(kind == WorldKind::Map && t.name == "cliff-down"))
        .map(|t| {
            let s = StrokeSpec::new(t.name, 1.0);
            match (kind, t.name) {
                (WorldKind::Map, "plateau") => s.with_param("height", 1.5),
                (WorldKind::Map, "paint") => s.with_param("texture", 3),
                (WorldKind::Side2d, "fill") => s.with_param("material", 1),
                _ => s,
            }
        })
        .collect()
}

fn kind_strategy() -> impl Strategy<Value = WorldKind> {
    prop::sample::select(WorldKind::ALL.to_vec())
}

/// A random stroke of `kind` with 1..6 dabs within 6 units of its surface
/// point.
fn drawn_strategy(kind: WorldKind, base: [f64; 3]) -> impl Strategy<Value = Drawn> {
    let specs = random_tools(kind);
    let flat = matches!(kind, WorldKind::Heightmap | WorldKind::Map);
    let side = kind == WorldKind::Side2d;
    (
        prop::sample::select(specs),
        1.0f64..8.0,
        0.1f64..=1.0,
        prop::collection::vec((-6.0f64..6.0, -6.0f64..6.0, -6.0f64..6.0), 1..6),
    )
        .prop_map(move |(spec, radius, strength, offsets)| {
            let dabs = offsets
                .into_iter()
                .map(|(dx, dy, dz)| {
                    let dy = if flat { 0.0 } else { dy };
                    let dz = if side { 0.0 } else { dz };
                    [base[0] + dx, base[1] + dy, base[2] + dz]
                })
                .collect();
            Drawn {
                spec: StrokeSpec {
                    radius,
                    strength,
                    ..spec
                },
                dabs,
            }
        })
}

fn kind_and_stroke() -> impl Strategy<Value = (WorldKind, Drawn)> {
    kind_strategy().prop_flat_map(|kind| (Just(kind), drawn_strategy(kind, surface_point(kind))))
}

fn kind_and_two_strokes() -> impl Strategy<Value = (WorldKind, Drawn, Drawn, Vec<bool>)> {
    kind_strategy().prop_flat_map(|kind| {
        let base = surface_point(kind);
        (
            Just(kind),
            drawn_strategy(kind, base),
            drawn_strategy(kind, base),
            prop::collection::vec(any::<bool>(), 12),
        )
    })
}

/// The dabs a live stroke places for what `stroke(spec, points)` draws: a
/// path of two points or more is dragged with dabs at most a quarter of
/// the radius apart (at least a quarter cell; every world here has cells
/// of one unit), both ends included; a map places them as
/// `MapStroke::along` does.
fn live_dabs(kind: WorldKind, spec: &StrokeSpec, points: &[[f64; 3]]) -> Vec<[f64; 3]> {
    if points.len() < 2 {
        return points.to_vec();
    }
    let radius = spec.radius as f32;
    if kind == WorldKind::Map {
        let tool: MapTool = spec.tool.parse().unwrap();
        let brush = MapBrush::new(tool, radius);
        let cells: Vec<[f32; 2]> = points.iter().map(|p| [p[0] as f32, p[2] as f32]).collect();
        return MapStroke::along(brush, &cells, (radius / 4.0).max(0.25))
            .unwrap()
            .dabs
            .iter()
            .map(|c| [f64::from(c[0]), 0.0, f64::from(c[1])])
            .collect();
    }
    let spacing = f64::from((radius / 4.0).max(0.25));
    let mut dabs = vec![points[0]];
    for w in points.windows(2) {
        let d = [w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let steps = (len / spacing).ceil().max(1.0);
        for k in 1..=steps as usize {
            let f = k as f64 / steps;
            dabs.push([w[0][0] + d[0] * f, w[0][1] + d[1] * f, w[0][2] + d[2] * f]);
        }
    }
    dabs
}

/// Draws `d` live, dab by dab; the commit (with what the world showed just
/// before the stroke ended), or the first error.
fn draw_live<S: ChunkStore>(
    doc: &mut Document<S>,
    kind: WorldKind,
    d: &Drawn,
) -> Result<(Committed, String), KindError> {
    let s = doc.begin_stroke(&d.spec)?;
    for p in live_dabs(kind, &d.spec, &d.dabs) {
        if let Err(e) = doc.dab(s, p) {
            doc.cancel_stroke(s);
            return Err(e);
        }
    }
    let previewed = shown(doc);
    Ok((doc.end_stroke(s)?, previewed))
}

/// Checks that drawing `d` live and in one call give the same world and
/// the same commit, and that the live preview showed what was committed.
fn check_live_equals_one_shot<S: ChunkStore>(
    kind: WorldKind,
    live: &mut Document<S>,
    once: &mut Document<S>,
    d: &Drawn,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(live.content_hash(), once.content_hash());
    let before = state(live);
    let a = draw_live(live, kind, d);
    let b = once.stroke(&d.spec, &d.dabs);
    match (a, b) {
        (Ok((a, previewed)), Ok(b)) => {
            prop_assert_eq!(a.changed_nodes, b.changed_nodes);
            prop_assert_eq!(a.id.is_some(), b.id.is_some());
            prop_assert_eq!(live.content_hash(), once.content_hash());
            prop_assert_eq!(live.history(), once.history());
            prop_assert_eq!(live.open_strokes(), 0);
            prop_assert_eq!(
                shown(live),
                previewed,
                "ending the stroke changed what is shown"
            );
        }
        (Err(_), Err(_)) => {
            prop_assert_eq!(state(live), before.clone());
            prop_assert_eq!(state(once), before);
        }
        (a, b) => prop_assert!(false, "live gave {a:?}, one-shot gave {b:?}"),
    }
    Ok(())
}

// ----- 2. live strokes equal one-shot strokes -----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn live_strokes_equal_one_shot_strokes((kind, d) in kind_and_stroke()) {
        let mut live = memory_doc(kind);
        let mut once = memory_doc(kind);
        check_live_equals_one_shot(kind, &mut live, &mut once, &d)?;
    }

    #[test]
    fn live_strokes_equal_one_shot_strokes_after_other_strokes(
        (kind, first, d, _) in kind_and_two_strokes()
    ) {
        // The second stroke lands on ground the first one changed.
        let mut live = memory_doc(kind);
        let mut once = memory_doc(kind);
        let a = live.stroke(&first.spec, &first.dabs);
        let b = once.stroke(&first.spec, &first.dabs);
        prop_assert_eq!(a.is_ok(), b.is_ok());
        check_live_equals_one_shot(kind, &mut live, &mut once, &d)?;
    }
}

#[test]
fn live_strokes_equal_one_shot_strokes_on_world_files() {
    let dir = tempfile::tempdir().unwrap();
    for kind in WorldKind::ALL {
        let live_dir = dir.path().join("live");
        let once_dir = dir.path().join("once");
        std::fs::create_dir_all(&live_dir).unwrap();
        std::fs::create_dir_all(&once_dir).unwrap();
        let (mut live, _) = file_doc(&live_dir, kind);
        let (mut once, _) = file_doc(&once_dir, kind);
        let [x, y, z] = surface_point(kind);
        let specs = random_tools(kind);
        for (i, spec) in specs.iter().enumerate() {
            let f = i as f64;
            let d = Drawn {
                spec: StrokeSpec {
                    radius: 3.0,
                    ..spec.clone()
                },
                dabs: vec![
                    [x, y, z],
                    [x + 2.0, y + 0.5 * f.min(2.0), z],
                    [x + 3.0, y, z + 1.0],
                ],
            };
            let d = if kind == WorldKind::Side2d {
                Drawn {
                    dabs: d.dabs.iter().map(|p| [p[0], p[1], 0.0]).collect(),
                    ..d
                }
            } else {
                d
            };
            check_live_equals_one_shot(kind, &mut live, &mut once, &d).unwrap();
        }
        assert!(
            live.history().strokes > 0,
            "{kind}: some stroke was recorded"
        );
    }
}

/// A live cliff drag fixes its target level at the first dab: the preview
/// stays one level up (or down) however many dabs follow, and the commit
/// equals the one-call stroke. (Regression: each dab used to read the
/// level again with the stroke's own earlier dabs shown, so the preview
/// climbed a level per dab and a cliff-down drag from level 1 was refused
/// at its second dab.)
#[test]
fn map_cliff_drags_with_the_default_level() {
    let level = |doc: &Document<MemoryStore>, x: u32, z: u32| {
        let AnyDocument::Map(d) = doc.typed() else {
            panic!("a map");
        };
        let l = d.world().layers();
        l.level_of(l.index(x, z).unwrap())
    };
    let spec = StrokeSpec::new("cliff-up", 2.0);
    let points = [[10.0, 0.0, 10.0], [10.5, 0.0, 10.0], [11.0, 0.0, 10.0]];
    let mut live = memory_doc(WorldKind::Map);
    let mut once = memory_doc(WorldKind::Map);
    let base = level(&live, 10, 10);
    let s = live.begin_stroke(&spec).unwrap();
    for p in live_dabs(WorldKind::Map, &spec, &points) {
        live.dab(s, p).unwrap();
        assert_eq!(level(&live, 10, 10), base + 1, "the preview stays one up");
    }
    let a = live.end_stroke(s).unwrap();
    let b = once.stroke(&spec, &points).unwrap();
    assert_eq!(a, b);
    assert_eq!(level(&live, 10, 10), base + 1);
    assert_eq!(level(&once, 10, 10), base + 1);
    assert_eq!(live.content_hash(), once.content_hash());

    // Down again from there, live: every dab is taken, back to the base.
    let down = StrokeSpec::new("cliff-down", 2.0);
    let s = live.begin_stroke(&down).unwrap();
    for p in live_dabs(WorldKind::Map, &down, &points) {
        live.dab(s, p).unwrap();
        assert_eq!(level(&live, 10, 10), base, "the preview stays one down");
    }
    live.end_stroke(s).unwrap();
    once.stroke(&down, &points).unwrap();
    assert_eq!(level(&live, 10, 10), base);
    assert_eq!(live.content_hash(), once.content_hash());
}

// ----- 3. two strokes open at once -----

/// The dabs of `a` and `b` in the order `draw_interleaved` places them
/// (true: a dab of `a`): `order` repeated, and once one stroke has no dabs
/// left, the rest of the other.
fn interleaving(kind: WorldKind, a: &Drawn, b: &Drawn, order: &[bool]) -> Vec<(bool, [f64; 3])> {
    let mut da = live_dabs(kind, &a.spec, &a.dabs).into_iter().peekable();
    let mut db = live_dabs(kind, &b.spec, &b.dabs).into_iter().peekable();
    let mut turn = order.iter().cycle();
    let mut out = Vec::new();
    while da.peek().is_some() || db.peek().is_some() {
        let pick_a = *turn.next().unwrap();
        out.push(match (pick_a, da.peek().is_some(), db.peek().is_some()) {
            (true, true, _) | (false, true, false) => (true, da.next().unwrap()),
            _ => (false, db.next().unwrap()),
        });
    }
    out
}

/// Draws `a` and `b` with both open, dabs interleaved as `order` says
/// (true: the next dab of `a`), then ends `a` and then `b`.
fn draw_interleaved<S: ChunkStore>(
    doc: &mut Document<S>,
    kind: WorldKind,
    a: &Drawn,
    b: &Drawn,
    order: &[bool],
) -> Result<(Committed, Committed), KindError> {
    let sa = doc.begin_stroke(&a.spec)?;
    let sb = doc.begin_stroke(&b.spec)?;
    assert_eq!(doc.open_strokes(), 2);
    for (of_a, p) in interleaving(kind, a, b, order) {
        doc.dab(if of_a { sa } else { sb }, p)?;
    }
    let ca = doc.end_stroke(sa)?;
    assert!(doc.is_open(sb) && !doc.is_open(sa));
    let cb = doc.end_stroke(sb)?;
    Ok((ca, cb))
}

/// Whether `spec` takes a target from the world under its first dab: map
/// cliff tools without a level.
fn takes_level(kind: WorldKind, spec: &StrokeSpec) -> bool {
    kind == WorldKind::Map
        && matches!(spec.tool.as_str(), "cliff-up" | "cliff-down")
        && !spec.params.contains_key("level")
}

/// The level a map cliff stroke of `spec` takes when its first dab lands
/// at `first` on the world `doc` shows.
fn level_under<S: ChunkStore>(doc: &Document<S>, spec: &StrokeSpec, first: [f64; 3]) -> i64 {
    let AnyDocument::Map(map) = doc.typed() else {
        panic!("a map document expected");
    };
    let cell_size = f64::from(map.params().mesh.cell_size);
    let cell = [(first[0] / cell_size) as f32, (first[2] / cell_size) as f32];
    let brush = MapBrush::new(spec.tool.parse().unwrap(), spec.radius as f32);
    let level = map
        .world()
        .resolve_brush(&brush, cell)
        .unwrap()
        .level
        .unwrap();
    i64::from(level)
}

/// `a` and `b` with the targets their first dabs fix in
/// `draw_interleaved` made explicit: a map cliff takes its level from the
/// world as shown at its first dab, which may hold the other stroke's
/// earlier dabs. Drawn one after the other with these, the two strokes
/// make what the interleaved ones make.
fn fixed_in_interleaving(
    kind: WorldKind,
    a: &Drawn,
    b: &Drawn,
    order: &[bool],
) -> (StrokeSpec, StrokeSpec) {
    let mut fixed = [a.spec.clone(), b.spec.clone()];
    if !takes_level(kind, &a.spec) && !takes_level(kind, &b.spec) {
        return (a.spec.clone(), b.spec.clone());
    }
    let mut doc = memory_doc(kind);
    let ids = [
        doc.begin_stroke(&a.spec).unwrap(),
        doc.begin_stroke(&b.spec).unwrap(),
    ];
    let mut started = [false; 2];
    for (of_a, p) in interleaving(kind, a, b, order) {
        let i = usize::from(!of_a);
        if !started[i] {
            started[i] = true;
            if takes_level(kind, &fixed[i]) {
                let level = level_under(&doc, &fixed[i], p);
                fixed[i] = fixed[i].clone().with_param("level", level);
            }
        }
        doc.dab(ids[i], p).unwrap();
    }
    let [fa, fb] = fixed;
    (fa, fb)
}

/// B's spec with the targets its first dab fixes made explicit, as
/// `undo_while_a_stroke_is_open_keeps_its_preview` draws A and B: B's
/// first dab comes at the first `false` of `order` (after all of A when
/// there is none), on the world showing A's dabs placed before it.
fn fixed_at_first_dab(kind: WorldKind, a: &Drawn, b: &Drawn, order: &[bool]) -> StrokeSpec {
    if !takes_level(kind, &b.spec) {
        return b.spec.clone();
    }
    let a_dabs = live_dabs(kind, &a.spec, &a.dabs);
    let before = order
        .iter()
        .position(|&pick_a| !pick_a)
        .unwrap_or(order.len() + a_dabs.len())
        .min(a_dabs.len());
    let mut doc = memory_doc(kind);
    let sa = doc.begin_stroke(&a.spec).unwrap();
    for &p in &a_dabs[..before] {
        doc.dab(sa, p).unwrap();
    }
    let first = live_dabs(kind, &b.spec, &b.dabs)[0];
    let level = level_under(&doc, &b.spec, first);
    b.spec.clone().with_param("level", level)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn two_open_strokes_equal_the_same_strokes_one_after_the_other(
        (kind, a, b, order) in kind_and_two_strokes()
    ) {
        let mut live = memory_doc(kind);
        let mut once = memory_doc(kind);
        let r = draw_interleaved(&mut live, kind, &a, &b, &order);
        let (ca, cb) = r.map_err(|e| TestCaseError::fail(format!("interleaved: {e}")))?;
        // One after the other, each with the level its first dab took
        // among the other's dabs.
        let (fa, fb) = fixed_in_interleaving(kind, &a, &b, &order);
        let oa = once.stroke(&fa, &a.dabs).unwrap();
        let ob = once.stroke(&fb, &b.dabs).unwrap();
        prop_assert_eq!(live.content_hash(), once.content_hash());
        prop_assert_eq!(live.history(), once.history());
        prop_assert_eq!(ca.changed_nodes, oa.changed_nodes);
        prop_assert_eq!(cb.changed_nodes, ob.changed_nodes);
        // The log holds A then B: undoing both gives the new world back.
        let strokes = live.history().strokes;
        for _ in 0..strokes {
            prop_assert!(live.undo().unwrap().is_some());
        }
        prop_assert_eq!(live.content_hash(), memory_doc(kind).content_hash());
    }

    #[test]
    fn undo_while_a_stroke_is_open_keeps_its_preview(
        (kind, a, b, order) in kind_and_two_strokes()
    ) {
        let mut doc = memory_doc(kind);
        let pre = state(&doc);
        let pre_shown = shown(&doc);
        // What B alone does to the new world, with the targets B's first
        // dab fixed (a map cliff's level is taken on the world as shown
        // then, which may hold A's first dabs).
        let mut alone = memory_doc(kind);
        let b_fixed = fixed_at_first_dab(kind, &a, &b, &order);
        let b_alone = alone.stroke(&b_fixed, &b.dabs).unwrap();

        let sa = doc.begin_stroke(&a.spec).unwrap();
        let sb = doc.begin_stroke(&b.spec).unwrap();
        let mut da = live_dabs(kind, &a.spec, &a.dabs).into_iter();
        let mut db = live_dabs(kind, &b.spec, &b.dabs).into_iter();
        for &pick_a in &order {
            let next = if pick_a {
                da.next().map(|p| (sa, p))
            } else {
                db.next().map(|p| (sb, p))
            };
            if let Some((s, p)) = next {
                doc.dab(s, p).unwrap();
            }
        }
        for p in da {
            doc.dab(sa, p).unwrap();
        }
        for p in db {
            doc.dab(sb, p).unwrap();
        }
        let ca = doc.end_stroke(sa).unwrap();
        prop_assert!(doc.is_open(sb));
        if ca.id.is_some() {
            prop_assert_eq!(doc.history().strokes, pre.1.strokes + 1);
            prop_assert_eq!(doc.undo().unwrap(), ca.id);
        } else {
            prop_assert_eq!(doc.undo().unwrap(), None);
        }
        prop_assert_eq!(doc.history().strokes, pre.1.strokes);
        prop_assert!(doc.is_open(sb));
        // B's preview is still shown, on the world without A: it is what B
        // alone makes.
        prop_assert_eq!(shown(&doc) != pre_shown, b_alone.id.is_some());
        prop_assert_eq!(shown(&doc), shown(&alone));
        doc.cancel_stroke(sb);
        prop_assert_eq!(doc.open_strokes(), 0);
        prop_assert_eq!(state(&doc).0, pre.0);
        prop_assert_eq!(shown(&doc), pre_shown);
        prop_assert_eq!(doc.history().strokes, pre.1.strokes);
    }
}

#[test]
fn undo_with_an_open_stroke_undoes_the_finished_one_and_keeps_the_open_preview() {
    // A fixed case of the property above for every kind: A and B both
    // change the world.
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let (pre_content, pre_hist) = state(&doc);
        let pre_hash = shown(&doc);
        let c = surface_point(kind);
        let (ta, tb) = match kind {
            WorldKind::Side2d => ("dig", "fill"),
            WorldKind::Heightmap => ("raise", "lower"),
            WorldKind::Voxel => ("dig", "add"),
            WorldKind::Map => ("raise", "lower"),
        };
        let far = match kind {
            WorldKind::Side2d => [c[0] + 10.0, c[1], 0.0],
            WorldKind::Voxel => [c[0] + 10.0, c[1], c[2]],
            _ => [c[0] + 10.0, c[1], c[2] + 4.0],
        };
        let sa = doc.begin_stroke(&StrokeSpec::new(ta, 4.0)).unwrap();
        let sb = doc.begin_stroke(&StrokeSpec::new(tb, 4.0)).unwrap();
        doc.dab(sa, c).unwrap();
        let with_a = shown(&doc);
        assert_ne!(with_a, pre_hash, "{kind}: A's preview shows");
        doc.dab(sb, far).unwrap();
        let with_both = shown(&doc);
        assert_ne!(with_both, with_a, "{kind}: B's preview shows");
        let ca = doc.end_stroke(sa).unwrap();
        assert!(ca.id.is_some(), "{kind}");
        assert_eq!(shown(&doc), with_both, "{kind}: ending A keeps both shown");
        assert_eq!(doc.history().strokes, pre_hist.strokes + 1);

        assert_eq!(doc.undo().unwrap(), ca.id, "{kind}");
        let b_only = shown(&doc);
        assert_ne!(b_only, pre_hash, "{kind}: B's preview survives the undo");
        assert_ne!(b_only, with_both, "{kind}: A is gone");
        assert_eq!(doc.history().strokes, pre_hist.strokes);

        // Redo brings A back under B's preview; undo again, then cancel B.
        assert_eq!(doc.redo().unwrap(), ca.id, "{kind}");
        assert_eq!(shown(&doc), with_both, "{kind}");
        assert_eq!(doc.undo().unwrap(), ca.id, "{kind}");
        doc.cancel_stroke(sb);
        assert_eq!(
            shown(&doc),
            pre_hash,
            "{kind}: cancelling B gives the old world"
        );
        assert_eq!(doc.history().strokes, pre_hist.strokes);
        assert!(doc.history().can_redo, "{kind}: A can still be redone");
        // Cancelling again, or cancelling a stroke that ended, does nothing.
        doc.cancel_stroke(sb);
        doc.cancel_stroke(sa);
        assert_eq!(shown(&doc), pre_hash);
        assert_eq!(doc.content_hash(), pre_content, "{kind}");
    }
}

#[test]
fn a_cliff_begun_on_an_open_cliff_keeps_its_level_when_that_one_is_undone() {
    // B's first dab lands on A's new plateau, so B takes the level above
    // it. Undoing A does not change what B aims at: B still shows, and then
    // records, a cliff to that level, which is what it showed while drawn.
    let kind = WorldKind::Map;
    let c = surface_point(kind);
    let level_at = |doc: &Document<MemoryStore>| {
        let AnyDocument::Map(m) = doc.typed() else {
            panic!("a map document expected");
        };
        let brush = MapBrush::new(MapTool::CliffUp, 1.0);
        let up = m.world().resolve_brush(&brush, [c[0] as f32, c[2] as f32]);
        up.unwrap().level.unwrap() - 1
    };
    let mut doc = memory_doc(kind);
    let base = level_at(&doc);
    let sa = doc.begin_stroke(&StrokeSpec::new("cliff-up", 6.0)).unwrap();
    let sb = doc.begin_stroke(&StrokeSpec::new("cliff-up", 2.0)).unwrap();
    doc.dab(sa, c).unwrap();
    assert_eq!(level_at(&doc), base + 1);
    doc.dab(sb, c).unwrap();
    assert_eq!(level_at(&doc), base + 2);
    let ca = doc.end_stroke(sa).unwrap();
    assert_eq!(doc.undo().unwrap(), ca.id);
    assert_eq!(level_at(&doc), base + 2, "B keeps the level it took");
    let shown_b = shown(&doc);
    let cb = doc.end_stroke(sb).unwrap();
    assert!(cb.id.is_some());
    assert_eq!(shown(&doc), shown_b, "B records what it showed");
    let mut alone = memory_doc(kind);
    let spec = StrokeSpec::new("cliff-up", 2.0).with_param("level", base + 2);
    alone.stroke(&spec, &[c]).unwrap();
    assert_eq!(doc.content_hash(), alone.content_hash());
}

#[test]
fn two_open_cliffs_keep_the_levels_their_first_dabs_took() {
    // B is begun second but dabs first, so B takes the level above the
    // ground and A, dabbing on B's preview, the one above that. Ended A
    // then B, the log holds A (two up) then B (one up): drawn one after the
    // other with those levels, the strokes make the same world.
    let kind = WorldKind::Map;
    let c = surface_point(kind);
    let cliff = Drawn {
        spec: StrokeSpec::new("cliff-up", 1.0),
        dabs: vec![c],
    };
    let order = [false; 12];
    let mut live = memory_doc(kind);
    let base = level_under(&live, &cliff.spec, c) - 1;
    draw_interleaved(&mut live, kind, &cliff, &cliff, &order).unwrap();
    let (fa, fb) = fixed_in_interleaving(kind, &cliff, &cliff, &order);
    assert_eq!(fa.params["level"], base + 2);
    assert_eq!(fb.params["level"], base + 1);
    let mut once = memory_doc(kind);
    once.stroke(&fa, &cliff.dabs).unwrap();
    once.stroke(&fb, &cliff.dabs).unwrap();
    assert_eq!(live.content_hash(), once.content_hash());
    assert_eq!(live.history(), once.history());
    // Without the levels, one after the other climbs A one up and B one
    // more: another world, which the interleaved strokes did not make.
    let mut plain = memory_doc(kind);
    plain.stroke(&cliff.spec, &cliff.dabs).unwrap();
    plain.stroke(&cliff.spec, &cliff.dabs).unwrap();
    assert_ne!(live.content_hash(), plain.content_hash());
}

// ----- 4. reopening a world file -----

#[test]
fn reopening_a_world_file_gives_the_same_world_and_history() {
    let dir = tempfile::tempdir().unwrap();
    for kind in WorldKind::ALL {
        let (mut doc, path) = file_doc(dir.path(), kind);
        let new_hash = doc.content_hash();
        let c = surface_point(kind);
        let (t1, t2) = match kind {
            WorldKind::Side2d => ("dig", "fill"),
            WorldKind::Heightmap => ("raise", "smooth"),
            WorldKind::Voxel => ("dig", "add"),
            WorldKind::Map => ("raise", "paint"),
        };
        let p2 = [c[0] + 3.0, c[1], c[2]];
        let first = doc.stroke(&StrokeSpec::new(t1, 4.0), &[c, p2]).unwrap();
        assert!(first.id.is_some(), "{kind}");
        let after_first = doc.content_hash();
        let spec2 = StrokeSpec::new(t2, 3.0).with_strength(0.5);
        let spec2 = if kind == WorldKind::Map {
            spec2.with_param("texture", 4)
        } else {
            spec2
        };
        let second = doc.stroke(&spec2, &[p2]).unwrap();
        assert!(second.id.is_some(), "{kind}");
        let after_second = doc.content_hash();
        // A third stroke, undone: the reopened file can redo it.
        let third = doc
            .stroke(&StrokeSpec::new(t1, 2.0), &[[c[0] - 3.0, c[1], c[2]]])
            .unwrap();
        assert!(third.id.is_some(), "{kind}");
        let after_third = doc.content_hash();
        assert_eq!(doc.undo().unwrap(), third.id);
        assert_eq!(doc.content_hash(), after_second);
        let hist = doc.history();
        assert_eq!(
            hist,
            History {
                can_undo: true,
                can_redo: true,
                strokes: 2
            },
            "{kind}"
        );
        drop(doc);

        let mut doc = Document::open(&path).unwrap();
        assert_eq!(doc.kind(), kind);
        assert_eq!(doc.content_hash(), after_second, "{kind}: reopened content");
        assert_eq!(doc.history(), hist, "{kind}: reopened history");
        assert_eq!(doc.info_json()["kind"], json!(kind.name()));
        assert_eq!(doc.redo().unwrap(), third.id, "{kind}");
        assert_eq!(doc.content_hash(), after_third, "{kind}");
        assert_eq!(doc.undo().unwrap(), third.id);
        assert_eq!(doc.undo().unwrap(), second.id);
        assert_eq!(doc.content_hash(), after_first, "{kind}");
        // close() reports errors; the file opens again where we left it.
        doc.close().unwrap();
        let mut doc = Document::open(&path).unwrap();
        assert_eq!(doc.content_hash(), after_first, "{kind}");
        assert_eq!(doc.undo().unwrap(), first.id);
        assert_eq!(doc.content_hash(), new_hash, "{kind}: every stroke undone");
        assert!(!doc.history().can_undo);
    }
}

#[test]
fn closing_a_world_file_ends_its_open_strokes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut doc, path) = file_doc(dir.path(), WorldKind::Side2d);
    let s = doc.begin_stroke(&StrokeSpec::new("dig", 4.0)).unwrap();
    doc.dab(s, surface_point(WorldKind::Side2d)).unwrap();
    let shown = doc.content_hash();
    doc.close().unwrap();
    let doc = Document::open(&path).unwrap();
    assert_eq!(doc.content_hash(), shown);
    assert_eq!(doc.history().strokes, 1);
}

#[test]
fn a_memory_store_reopens_like_a_file() {
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let c = surface_point(kind);
        let t = if kind == WorldKind::Heightmap {
            "raise"
        } else {
            "dig"
        };
        let t = if kind == WorldKind::Map { "lower" } else { t };
        assert!(
            doc.stroke(&StrokeSpec::new(t, 4.0), &[c])
                .unwrap()
                .id
                .is_some()
        );
        let before = state(&doc);
        let store = doc.store().clone();
        let again = Document::open_in(store).unwrap();
        assert_eq!(again.kind(), kind);
        assert_eq!(state(&again), before, "{kind}");
    }
}

#[test]
fn opening_what_is_not_a_world_fails() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Document::open(dir.path().join("missing.isoterra")).is_err());
    let junk = dir.path().join("junk.isoterra");
    std::fs::write(&junk, b"this is not a database").unwrap();
    assert!(Document::open(&junk).is_err());
    assert!(Document::open_in(MemoryStore::new()).is_err());
    // Creating over an existing world fails and leaves it alone.
    let (mut doc, path) = file_doc(dir.path(), WorldKind::Map);
    doc.stroke(
        &StrokeSpec::new("raise", 4.0),
        &[surface_point(WorldKind::Map)],
    )
    .unwrap();
    let before = state(&doc);
    drop(doc);
    assert!(Document::create(&path, &new_world(WorldKind::Side2d)).is_err());
    assert_eq!(state(&Document::open(&path).unwrap()), before);
}

// ----- 5. bad input changes nothing -----

/// Every kind's refused strokes: the spec and a word the error must name.
fn bad_specs(kind: WorldKind, tools: &[ToolSpec]) -> Vec<(StrokeSpec, &'static str)> {
    let good = tools[0].name;
    let mut v = vec![
        (StrokeSpec::new(good, f64::NAN), "radius"),
        (StrokeSpec::new(good, f64::INFINITY), "radius"),
        (StrokeSpec::new(good, f64::NEG_INFINITY), "radius"),
        (StrokeSpec::new(good, 1.0e9), "radius"),
        (StrokeSpec::new(good, 0.0), "radius"),
        (StrokeSpec::new(good, -3.0), "radius"),
        (StrokeSpec::new(good, 4.0).with_strength(2.0), "strength"),
        (StrokeSpec::new(good, 4.0).with_strength(-0.1), "strength"),
        (
            StrokeSpec::new(good, 4.0).with_strength(f64::NAN),
            "strength",
        ),
        (StrokeSpec::new(good, 4.0).with_shape("hexagon"), "shape"),
    ];
    if kind != WorldKind::Map {
        v.push((StrokeSpec::new(good, 4.0).with_shape("diamond"), "shape"));
    }
    // Round brushes are never silently drawn from a square, nor a voxel
    // solid from a 2D shape; the solids are voxel-only.
    match kind {
        WorldKind::Heightmap => {
            v.push((
                StrokeSpec::new(good, 4.0).with_shape("square"),
                "brushes are round",
            ));
            v.push((StrokeSpec::new(good, 4.0).with_shape("box"), "round"));
        }
        WorldKind::Voxel => v.push((StrokeSpec::new(good, 4.0).with_shape("square"), "2D shape")),
        _ => v.push((StrokeSpec::new(good, 4.0).with_shape("capsule"), "shape")),
    }
    if kind == WorldKind::Voxel {
        v.push((StrokeSpec::new(good, 4.0).with_param("blend", 9), "blend"));
        v.push((StrokeSpec::new(good, 4.0).with_param("blend", -1), "blend"));
    }
    match kind {
        WorldKind::Side2d => {
            let fill = tools.iter().find(|t| t.name == "fill").unwrap();
            let Some(ParamKind::Number { max, .. }) = fill.param("material").map(|p| &p.kind)
            else {
                panic!("fill has a material number");
            };
            v.push((
                StrokeSpec::new("fill", 4.0).with_param("material", max + 1.0),
                "material",
            ));
            v.push((
                StrokeSpec::new("fill", 4.0).with_param("material", 255),
                "material",
            ));
            v.push((
                StrokeSpec::new("fill", 4.0).with_param("material", 0.5),
                "material",
            ));
            v.push((
                StrokeSpec::new("fill", 4.0).with_param("material", -1),
                "material",
            ));
            v.push((
                StrokeSpec::new("fill", 4.0).with_param("material", "rock"),
                "material",
            ));
        }
        WorldKind::Heightmap => {
            v.push((
                StrokeSpec::new("flatten", 4.0).with_param("height", 1.0e7),
                "height",
            ));
            v.push((StrokeSpec::new("noise", 4.0).with_param("seed", -1), "seed"));
            v.push((
                StrokeSpec::new("noise", 4.0).with_param("seed", 1.5),
                "seed",
            ));
        }
        WorldKind::Voxel => {
            let max = f64::from(isoterra_world::VoxelBrush::MAX_RADIUS);
            v.push((StrokeSpec::new("dig", max + 1.0), "radius"));
            v.push((
                StrokeSpec::new("flatten", 4.0).with_param("normal", json!([0, 0, 0])),
                "normal",
            ));
            v.push((
                StrokeSpec::new("flatten", 4.0).with_param("normal", json!([0, 2, 0])),
                "normal",
            ));
            v.push((
                StrokeSpec::new("flatten", 4.0).with_param("normal", json!([0, 1])),
                "normal",
            ));
            v.push((
                StrokeSpec::new("add", 4.0).with_param("material", 256),
                "material",
            ));
            v.push((
                StrokeSpec::new("paint", 4.0).with_param("material", -1),
                "material",
            ));
        }
        WorldKind::Map => {
            v.push((
                StrokeSpec::new("paint", 4.0).with_param("texture", 16),
                "texture",
            ));
            v.push((
                StrokeSpec::new("cliff-up", 4.0).with_param("level", 16),
                "level",
            ));
            v.push((
                StrokeSpec::new("cliff-down", 4.0).with_param("level", 16),
                "level",
            ));
            v.push((
                StrokeSpec::new("plateau", 4.0).with_param("height", 1.0e5),
                "height",
            ));
            v.push((
                StrokeSpec::new("ramp", 4.0).with_param("length", 1.5),
                "length",
            ));
            v.push((
                StrokeSpec::new("cliff-up", 4.0).with_param("slope", 40),
                "slope",
            ));
            v.push((
                StrokeSpec::new("ramp", 4.0).with_param("length", "long"),
                "length",
            ));
            v.push((
                StrokeSpec::new("pathing", 4.0).with_param("pathing", json!(["swim"])),
                "pathing",
            ));
            v.push((
                StrokeSpec::new("pathing", 4.0).with_param("pathing", json!([])),
                "pathing",
            ));
            v.push((
                StrokeSpec::new("pathing", 4.0).with_param("pathing", "walk"),
                "pathing",
            ));
            v.push((
                StrokeSpec::new("pathing", 4.0).with_param("clear", 1),
                "clear",
            ));
        }
    }
    v
}

#[test]
fn bad_strokes_are_refused_and_change_nothing() {
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let c = surface_point(kind);
        let tools = doc.tools();
        // Some history first, so that "unchanged" covers it too.
        let t = tools[0].name;
        assert!(
            doc.stroke(&StrokeSpec::new(t, 4.0), &[c])
                .unwrap()
                .id
                .is_some(),
            "{kind}"
        );
        let before = state(&doc);

        for (spec, names) in bad_specs(kind, &tools) {
            let e = doc.stroke(&spec, &[c]).unwrap_err();
            assert!(matches!(e, KindError::Invalid(_)), "{kind} {spec:?}: {e:?}");
            assert!(
                e.to_string().contains(names),
                "{kind} {spec:?}: `{e}` names {names}"
            );
            assert_eq!(state(&doc), before, "{kind} {spec:?}");
            assert!(doc.begin_stroke(&spec).is_err(), "{kind} {spec:?}");
            assert!(doc.template(&spec).is_err(), "{kind} {spec:?}");
            assert_eq!(doc.open_strokes(), 0);
            assert_eq!(state(&doc), before, "{kind} {spec:?}");
        }

        let e = doc
            .stroke(&StrokeSpec::new("teapot", 4.0), &[c])
            .unwrap_err();
        match &e {
            KindError::UnknownTool {
                tool,
                kind: k,
                tools,
            } => {
                assert_eq!(tool, "teapot");
                assert_eq!(*k, kind.name());
                assert!(tools.contains(t), "{tools}");
            }
            other => panic!("{kind}: unknown tool gave {other:?}"),
        }
        assert!(matches!(
            doc.begin_stroke(&StrokeSpec::new("", 4.0)),
            Err(KindError::UnknownTool { .. })
        ));
        // A tool of another kind is unknown here.
        let foreign = if kind == WorldKind::Side2d {
            "raise"
        } else {
            "fill"
        };
        assert!(matches!(
            doc.stroke(&StrokeSpec::new(foreign, 4.0), &[c]),
            Err(KindError::UnknownTool { .. })
        ));
        assert_eq!(state(&doc), before, "{kind}");
    }
}

#[test]
fn bad_dabs_are_refused_and_change_nothing() {
    let bad_points = [
        [f64::NAN, 0.0, 0.0],
        [0.0, f64::NAN, 0.0],
        [0.0, 0.0, f64::NAN],
        [f64::INFINITY, 0.0, 0.0],
        [0.0, f64::NEG_INFINITY, 0.0],
        [1.0e30, 0.0, 0.0],
        [0.0, 0.0, -1.0e30],
        [2.0e7, 0.0, 0.0],
    ];
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let c = surface_point(kind);
        let spec = StrokeSpec::new(tool_names(&doc)[0], 4.0);
        assert!(doc.stroke(&spec, &[c]).unwrap().id.is_some());
        let before = state(&doc);

        for p in bad_points {
            // In one call: with a good dab before and after the bad one.
            for dabs in [vec![p], vec![c, p], vec![c, p, c]] {
                let e = doc.stroke(&spec, &dabs).unwrap_err();
                assert!(matches!(e, KindError::Invalid(_)), "{kind} {dabs:?}: {e:?}");
                assert_eq!(state(&doc), before, "{kind} {dabs:?}");
            }
            // Live: the bad dab is refused, the good ones before it stay.
            let s = doc.begin_stroke(&spec).unwrap();
            let e = doc.dab(s, p).unwrap_err();
            assert!(matches!(e, KindError::Invalid(_)), "{kind} {p:?}: {e:?}");
            assert_eq!(state(&doc), before, "{kind} {p:?}");
            doc.dab(s, c).unwrap();
            let with_good = shown(&doc);
            assert!(doc.dab(s, p).is_err());
            assert_eq!(shown(&doc), with_good, "{kind} {p:?}");
            doc.cancel_stroke(s);
            assert_eq!(state(&doc), before, "{kind} {p:?}");
        }
    }
}

#[test]
fn ended_and_unknown_strokes_are_refused() {
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let c = surface_point(kind);
        let spec = StrokeSpec::new(tool_names(&doc)[0], 4.0);
        let s = doc.begin_stroke(&spec).unwrap();
        assert!(doc.is_open(s));
        doc.dab(s, c).unwrap();
        let ended = doc.end_stroke(s).unwrap();
        assert!(ended.id.is_some(), "{kind}");
        assert!(!doc.is_open(s));
        let before = state(&doc);
        assert!(
            matches!(doc.dab(s, c), Err(KindError::UnknownStroke)),
            "{kind}"
        );
        assert!(
            matches!(doc.end_stroke(s), Err(KindError::UnknownStroke)),
            "{kind}"
        );
        doc.cancel_stroke(s);
        assert_eq!(state(&doc), before, "{kind}");
        // A cancelled stroke is gone too.
        let t = doc.begin_stroke(&spec).unwrap();
        assert_ne!(t, s, "stroke ids are not reused");
        doc.dab(t, c).unwrap();
        doc.cancel_stroke(t);
        assert_eq!(state(&doc), before, "{kind}");
        assert!(matches!(doc.dab(t, c), Err(KindError::UnknownStroke)));
        assert!(matches!(doc.end_stroke(t), Err(KindError::UnknownStroke)));
        assert!(doc.end_all_strokes().is_empty());
    }
}

#[test]
fn cliff_down_on_the_lowest_level_is_refused_and_changes_nothing() {
    let mut doc = memory_doc(WorldKind::Map);
    let before = state(&doc);
    let levels: Vec<([f64; 3], u8)> = {
        let AnyDocument::Map(d) = doc.typed() else {
            panic!("a map");
        };
        let layers = d.world().layers();
        let [w, h] = layers.nodes();
        (0..h)
            .flat_map(|z| (0..w).map(move |x| (x, z)))
            .map(|(x, z)| {
                let i = layers.index(x, z).unwrap();
                ([f64::from(x), 0.0, f64::from(z)], layers.level_of(i))
            })
            .collect()
    };
    let (low, _) = *levels
        .iter()
        .find(|(_, l)| *l == 0)
        .expect("the new map has ground on level 0");
    // One below level 0 does not exist.
    let spec = StrokeSpec::new("cliff-down", 4.0);
    let e = doc.stroke(&spec, &[low]).unwrap_err();
    assert!(matches!(e, KindError::Invalid(_)), "{e:?}");
    assert!(e.to_string().contains("level"), "{e}");
    assert_eq!(state(&doc), before);
    let s = doc.begin_stroke(&spec).unwrap();
    assert!(doc.dab(s, low).is_err());
    assert_eq!(doc.end_stroke(s).unwrap().id, None);
    assert_eq!(state(&doc), before);
    // Raised one level first, it goes back down: to the same world.
    let up = doc
        .stroke(&StrokeSpec::new("cliff-up", 4.0), &[low])
        .unwrap();
    assert!(up.id.is_some());
    let down = doc.stroke(&spec, &[low]).unwrap();
    assert!(down.id.is_some());
    assert_eq!(up.changed_nodes, down.changed_nodes);
    assert_eq!(doc.history().strokes, 2);
}

// ----- 6. exports -----

fn export_request(kind: WorldKind, format: ExportFormat) -> ExportRequest {
    let region = match kind {
        WorldKind::Heightmap => Some("0,0,32,32".to_string()),
        WorldKind::Voxel => Some(format!(
            "0,{y0},0,16,{y1},16",
            y0 = voxel_surface_y() - 8.0,
            y1 = voxel_surface_y() + 8.0
        )),
        _ => None,
    };
    ExportRequest::new(format).with_region(region)
}

/// Checks a main export file's contents by its format.
fn check_main_file(kind: WorldKind, format: ExportFormat, bytes: &[u8]) {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
    assert!(!bytes.is_empty(), "{kind} {format}");
    let text = || std::str::from_utf8(bytes).unwrap_or_else(|_| panic!("{kind} {format} is text"));
    match format {
        ExportFormat::Png
        | ExportFormat::Png16
        | ExportFormat::PngLayers
        | ExportFormat::Pathing => {
            assert!(bytes.starts_with(PNG), "{kind} {format} is a PNG")
        }
        ExportFormat::Glb => assert!(bytes.starts_with(b"glTF"), "{kind} {format} is a glb"),
        ExportFormat::Svg => assert!(text().contains("<svg"), "{kind} svg"),
        ExportFormat::Colliders | ExportFormat::Tiled => {
            serde_json::from_slice::<Value>(bytes)
                .unwrap_or_else(|e| panic!("{kind} {format} is JSON: {e}"));
        }
        ExportFormat::Obj => {
            assert!(
                text().lines().any(|l| l.starts_with("v ")),
                "{kind} obj has vertices"
            );
            assert!(
                text().lines().any(|l| l.starts_with("f ")),
                "{kind} obj has faces"
            );
        }
        // 0..=32 on both axes: 33 x 33 nodes of two bytes.
        ExportFormat::R16 => assert_eq!(bytes.len(), 33 * 33 * 2, "{kind} r16"),
        ExportFormat::Exr => {
            let img = isoterra_export::import_exr(bytes).expect("an EXR that reads back");
            assert_eq!(img.dims, [33, 33], "{kind} exr");
        }
    }
}

#[test]
fn every_kind_exports_every_format_it_offers() {
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let c = surface_point(kind);
        let t = tool_names(&doc)[0];
        doc.stroke(&StrokeSpec::new(t, 4.0), &[c]).unwrap();
        let before = state(&doc);
        assert!(!doc.exports().is_empty());
        assert_eq!(doc.exports(), ExportFormat::of(kind));
        for &format in doc.exports() {
            let out = doc
                .export(&export_request(kind, format))
                .unwrap_or_else(|e| panic!("{kind} {format}: {e}"));
            assert_eq!(out.main().role, FileRole::Main, "{kind} {format}");
            assert_eq!(out.files[0].role, FileRole::Main);
            check_main_file(kind, format, &out.main().bytes);
            assert!(!out.main().file_name.is_empty());
            if format == ExportFormat::PngLayers {
                assert_eq!(out.files.len(), 2, "map png-layers has a sidecar");
                assert_eq!(format.companions(kind), [FileRole::Sidecar]);
                let side = &out.files[1];
                assert_eq!(side.role, FileRole::Sidecar);
                assert_eq!(side.content_type, "application/json");
                serde_json::from_slice::<Value>(&side.bytes).expect("the sidecar is JSON");
            } else {
                // Beside the main file: an OBJ's material library (every
                // kind) and a side2d mesh's colliders.
                let listed: Vec<FileRole> = out.files[1..].iter().map(|f| f.role).collect();
                assert_eq!(listed, format.companions(kind), "{kind} {format}");
                let mut roles = listed.clone();
                roles.sort_by_key(|r| r.extension());
                let mut expect = Vec::new();
                let side2d_mesh = kind == WorldKind::Side2d
                    && matches!(format, ExportFormat::Glb | ExportFormat::Obj);
                if side2d_mesh {
                    expect.push(FileRole::Colliders);
                }
                // Every kind's OBJ names its materials (heightmaps: `ground`).
                if format == ExportFormat::Obj {
                    expect.push(FileRole::Materials);
                }
                if format == ExportFormat::Tiled {
                    expect.push(FileRole::Tileset);
                }
                assert_eq!(roles, expect, "{kind} {format}");
                for f in &out.files[1..] {
                    if f.role == FileRole::Tileset {
                        assert!(f.bytes.starts_with(b"\x89PNG"), "{kind} {format}");
                        let main = std::str::from_utf8(&out.main().bytes).unwrap();
                        assert!(main.contains(f.file_name), "the map names {}", f.file_name);
                        continue;
                    }
                    let text = std::str::from_utf8(&f.bytes).unwrap();
                    match f.role {
                        FileRole::Materials => assert!(text.contains("newmtl "), "{text}"),
                        _ => {
                            serde_json::from_str::<Value>(text).expect("colliders are JSON");
                        }
                    }
                }
            }
            // The same world exports the same bytes again, and exporting
            // changes nothing.
            let again = doc.export(&export_request(kind, format)).unwrap();
            assert_eq!(again, out, "{kind} {format}");
            assert_eq!(state(&doc), before, "{kind} {format}");
            // Written to a writer (a map's glb straight from its mesh), the
            // main file has the same bytes, and the others come back.
            let mut main = Vec::new();
            let streamed = doc
                .export_to(&export_request(kind, format), &mut main)
                .unwrap();
            assert_eq!(main, out.main().bytes, "{kind} {format}: streamed");
            assert_eq!(streamed.main_bytes, main.len() as u64);
            assert_eq!(streamed.file_name, out.main().file_name);
            assert_eq!(streamed.content_type, out.main().content_type);
            assert_eq!(streamed.others, out.files[1..], "{kind} {format}");
            assert_eq!(streamed.counts, out.counts, "{kind} {format}");
            // A mesh file's name and type are known before it is made.
            match format.mesh_file(kind) {
                Some(named) => assert_eq!(
                    named,
                    (out.main().content_type, out.main().file_name),
                    "{kind} {format}"
                ),
                None => assert!(
                    !matches!(format, ExportFormat::Glb | ExportFormat::Obj),
                    "{kind} {format}"
                ),
            }
        }
        for format in ExportFormat::ALL {
            if doc.exports().contains(&format) {
                continue;
            }
            let e = doc.export(&export_request(kind, format)).unwrap_err();
            assert!(matches!(e, KindError::Invalid(_)), "{kind} {format}: {e:?}");
            assert!(
                e.to_string().contains(format.name()),
                "{kind} {format}: {e}"
            );
        }
        assert_eq!(state(&doc), before);
    }
}

#[test]
fn export_format_names_round_trip() {
    for f in ExportFormat::ALL {
        assert_eq!(f.name().parse::<ExportFormat>().unwrap(), f);
        assert_eq!(f.to_string(), f.name());
    }
    assert!(matches!(
        "gif".parse::<ExportFormat>(),
        Err(KindError::Invalid(_))
    ));
    // Every format belongs to some kind.
    for f in ExportFormat::ALL {
        assert!(
            WorldKind::ALL
                .iter()
                .any(|k| ExportFormat::of(*k).contains(&f)),
            "{f}"
        );
    }
}

#[test]
fn tiled_exports_json_or_tmx() {
    let mut doc = memory_doc(WorldKind::Map);
    let json_out = doc
        .export(&ExportRequest::new(ExportFormat::Tiled))
        .unwrap();
    let mut req = ExportRequest::new(ExportFormat::Tiled);
    req.tmx = true;
    let tmx = doc.export(&req).unwrap();
    serde_json::from_slice::<Value>(&json_out.main().bytes).unwrap();
    let text = std::str::from_utf8(&tmx.main().bytes).unwrap();
    assert!(
        text.contains("<map"),
        "TMX is XML: {}",
        &text[..text.len().min(80)]
    );
    assert_ne!(json_out.main().file_name, tmx.main().file_name);
}

#[test]
fn exports_leave_open_strokes_out() {
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let format = doc.exports()[0];
        let req = export_request(kind, format);
        let plain = doc.export(&req).unwrap();
        let plain_content = doc.content_hash();
        let c = surface_point(kind);
        let s = doc
            .begin_stroke(&StrokeSpec::new(tool_names(&doc)[0], 6.0))
            .unwrap();
        doc.dab(s, c).unwrap();
        let with_preview = shown(&doc);
        assert_eq!(doc.export(&req).unwrap(), plain, "{kind}: preview left out");
        assert_eq!(
            shown(&doc),
            with_preview,
            "{kind}: the preview is back after the export"
        );
        assert!(doc.end_stroke(s).unwrap().id.is_some(), "{kind}");
        assert_eq!(
            shown(&doc),
            with_preview,
            "{kind}: the ended stroke shows as its preview did"
        );
        assert_ne!(doc.content_hash(), plain_content, "{kind}");
        assert_ne!(
            doc.export(&req).unwrap(),
            plain,
            "{kind}: the ended stroke is exported"
        );
    }
}

#[test]
fn bad_export_regions_are_refused() {
    let mut hm = memory_doc(WorldKind::Heightmap);
    let mut vx = memory_doc(WorldKind::Voxel);
    let hm_before = state(&hm);
    let vx_before = state(&vx);
    let req =
        |f: ExportFormat, r: Option<&str>| ExportRequest::new(f).with_region(r.map(String::from));

    // Too large: refused, not attempted.
    for f in ExportFormat::of(WorldKind::Heightmap) {
        let e = hm.export(&req(*f, Some("-1e7,-1e7,1e7,1e7"))).unwrap_err();
        assert!(
            matches!(e, KindError::TooLarge(_) | KindError::Invalid(_)),
            "heightmap {f}: {e:?}"
        );
    }
    for f in ExportFormat::of(WorldKind::Voxel) {
        let e = vx
            .export(&req(*f, Some("-1e7,-1e7,-1e7,1e7,1e7,1e7")))
            .unwrap_err();
        assert!(
            matches!(e, KindError::TooLarge(_) | KindError::Invalid(_)),
            "voxel {f}: {e:?}"
        );
    }
    // Malformed, out of range, inverted or missing: invalid.
    let hm_bad = [
        None,
        Some("0,0,1e30,32"),
        Some("1e30,0,32,32"),
        Some("0,0,NaN,32"),
        Some("0,0,inf,32"),
        Some("0,0,32"),
        Some("0,0,32,32,1"),
        Some("a,b,c,d"),
        Some("32,0,0,32"),
        Some(""),
    ];
    for f in ExportFormat::of(WorldKind::Heightmap) {
        for r in hm_bad {
            let e = hm.export(&req(*f, r)).unwrap_err();
            assert!(
                matches!(e, KindError::Invalid(_)),
                "heightmap {f} {r:?}: {e:?}"
            );
        }
    }
    let vx_bad = [
        None,
        Some("0,0,0,16,16,1e30"),
        Some("-1e30,0,0,16,16,16"),
        Some("0,0,0,NaN,16,16"),
        Some("0,0,0,16,16"),
        Some("0,0,0,16,16,16,16"),
        Some("0,16,0,16,0,16"),
    ];
    for f in ExportFormat::of(WorldKind::Voxel) {
        for r in vx_bad {
            let e = vx.export(&req(*f, r)).unwrap_err();
            assert!(matches!(e, KindError::Invalid(_)), "voxel {f} {r:?}: {e:?}");
        }
    }
    // A level of detail beyond the coarsest one, or on an image export.
    let mut coarse = req(ExportFormat::Glb, Some("0,0,32,32"));
    coarse.lod = 200;
    assert!(matches!(hm.export(&coarse), Err(KindError::Invalid(_))));
    let mut image = req(ExportFormat::Png16, Some("0,0,32,32"));
    image.lod = 1;
    assert!(matches!(hm.export(&image), Err(KindError::Invalid(_))));
    assert_eq!(state(&hm), hm_before);
    assert_eq!(state(&vx), vx_before);

    // Bounded worlds export whole: a region does not apply.
    for kind in [WorldKind::Side2d, WorldKind::Map] {
        let mut doc = memory_doc(kind);
        for &f in doc.exports() {
            let e = doc.export(&req(f, Some("0,0,8,8"))).unwrap_err();
            assert!(matches!(e, KindError::Invalid(_)), "{kind} {f}: {e:?}");
        }
    }
}

// ----- 7. new worlds -----

#[test]
fn defaults_make_valid_worlds() {
    for kind in WorldKind::ALL {
        let d = NewWorld::defaults(kind);
        assert!(d.presets.contains(&d.preset), "{kind}");
        assert!(d.chunk > 0);
        assert_eq!(d.size.is_some(), kind.is_bounded(), "{kind}");
        assert_eq!(d.size_range.is_some(), kind.is_bounded(), "{kind}");
        if let (Some([w, h]), Some([lo, hi])) = (d.size, d.size_range) {
            assert!((lo..=hi).contains(&w) && (lo..=hi).contains(&h), "{kind}");
        }
        // The default world, at the default size.
        let doc = Document::create_in(MemoryStore::new(), &NewWorld::new(kind)).unwrap();
        assert_eq!(doc.kind(), kind);
        let info = doc.info_json();
        assert_eq!(info["kind"], json!(kind.name()), "{kind}");
        assert_eq!(info["seed"], json!(1), "{kind}");
        assert_eq!(info["chunk_cells"], json!(d.chunk), "{kind}");
        if let Some([w, h]) = d.size {
            assert_eq!(info["width_cells"], json!(w), "{kind}");
            let depth = if kind == WorldKind::Map {
                "depth_cells"
            } else {
                "height_cells"
            };
            assert_eq!(
                info["height_cells"].as_u64().or(info[depth].as_u64()),
                Some(u64::from(h))
            );
        }
        if kind != WorldKind::Heightmap {
            assert_eq!(info["preset"], json!(d.preset), "{kind}");
        }
        assert_eq!(
            doc.history(),
            History {
                can_undo: false,
                can_redo: false,
                strokes: 0
            }
        );
        // Every preset, small, makes a world that takes a stroke.
        for preset in d.presets {
            let new = new_world(kind).with_preset(*preset).with_seed(7);
            let mut doc = Document::create_in(MemoryStore::new(), &new)
                .unwrap_or_else(|e| panic!("{kind} {preset}: {e}"));
            if kind != WorldKind::Heightmap {
                assert_eq!(doc.info_json()["preset"], json!(preset), "{kind}");
            }
            assert_eq!(doc.info_json()["seed"], json!(7));
            let tools = tool_names(&doc);
            let points = candidate_points(kind);
            let changed = tools
                .iter()
                .any(|t| first_change(&mut doc, &StrokeSpec::new(*t, 6.0), &points).is_some());
            assert!(changed, "{kind} {preset}: some tool changes the new world");
        }
        // Seeds make different worlds; the same seed the same one.
        let a = Document::create_in(MemoryStore::new(), &new_world(kind).with_seed(3)).unwrap();
        let b = Document::create_in(MemoryStore::new(), &new_world(kind).with_seed(3)).unwrap();
        assert_eq!(a.content_hash(), b.content_hash(), "{kind}");
    }
}

#[test]
fn seeds_make_different_bounded_worlds() {
    for kind in [WorldKind::Side2d, WorldKind::Map] {
        let a = Document::create_in(MemoryStore::new(), &new_world(kind).with_seed(3)).unwrap();
        let b = Document::create_in(MemoryStore::new(), &new_world(kind).with_seed(4)).unwrap();
        assert_ne!(a.content_hash(), b.content_hash(), "{kind}");
    }
}

#[test]
fn sizes_outside_the_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, [lo, hi]) in [(WorldKind::Side2d, SIDE2D_SIZE), (WorldKind::Map, MAP_SIZE)] {
        assert_eq!(NewWorld::defaults(kind).size_range, Some([lo, hi]));
        // The smallest size makes a world; the largest passes the check.
        Document::create_in(MemoryStore::new(), &NewWorld::new(kind).with_size([lo, lo])).unwrap();
        NewWorld::new(kind).with_size([hi, hi]).params().unwrap();
        NewWorld::new(kind).with_size([lo, hi]).params().unwrap();
        for size in [
            [lo - 1, lo],
            [lo, lo - 1],
            [hi + 1, lo],
            [lo, hi + 1],
            [0, 0],
            [u32::MAX, 32],
        ] {
            let new = NewWorld::new(kind).with_size(size);
            assert!(
                matches!(new.params(), Err(KindError::Invalid(_))),
                "{kind} {size:?}"
            );
            let e = Document::create_in(MemoryStore::new(), &new).unwrap_err();
            assert!(matches!(e, KindError::Invalid(_)), "{kind} {size:?}: {e:?}");
            let path = dir
                .path()
                .join(format!("{kind}-{}x{}.isoterra", size[0], size[1]));
            assert!(Document::create(&path, &new).is_err(), "{kind} {size:?}");
            assert!(!path.exists(), "{kind} {size:?}: nothing is created");
        }
    }
    // Endless worlds take no size; bad presets, seeds and cell sizes are
    // named.
    for kind in [WorldKind::Heightmap, WorldKind::Voxel] {
        let e = Document::create_in(MemoryStore::new(), &NewWorld::new(kind).with_size([64, 64]));
        assert!(matches!(e, Err(KindError::Invalid(_))), "{kind}");
    }
    for kind in WorldKind::ALL {
        let e = NewWorld::new(kind)
            .with_preset("volcano")
            .params()
            .unwrap_err();
        assert!(e.to_string().contains("volcano"), "{kind}: {e}");
        let e = NewWorld::new(kind)
            .with_seed(isoterra_kind::MAX_SEED + 1)
            .params();
        assert!(matches!(e, Err(KindError::Invalid(_))), "{kind}");
        NewWorld::new(kind)
            .with_seed(isoterra_kind::MAX_SEED)
            .params()
            .unwrap();
        for cell in [0.0, -1.0, f32::NAN, f32::INFINITY, 1.0e5] {
            let mut new = new_world(kind);
            new.cell_size = Some(cell);
            assert!(
                matches!(new.params(), Err(KindError::Invalid(_))),
                "{kind} {cell}"
            );
        }
    }
}

#[test]
fn the_tool_schema_matches_what_strokes_take() {
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        let tools = doc.tools();
        let c = surface_point(kind);
        let limits = doc.limits();
        assert!(limits.radius[0] > 0.0 && limits.radius[0] < limits.radius[1]);
        // The limits' ends are taken, just past them refused.
        for r in [limits.radius[0], limits.radius[1].min(8.0)] {
            assert!(
                doc.template(&StrokeSpec::new(tools[0].name, r)).is_ok(),
                "{kind} {r}"
            );
        }
        let past = StrokeSpec::new(tools[0].name, limits.radius[1] + 0.5);
        assert!(doc.template(&past).is_err(), "{kind}");
        // The schema's strength range starts at 0, but side2d and voxel
        // brushes refuse 0 (they take (0, 1]); either way nothing changes.
        let before = state(&doc);
        let zero = StrokeSpec::new(tools[0].name, 4.0).with_strength(0.0);
        match doc.stroke(&zero, &[c]) {
            Err(e) => {
                assert!(matches!(e, KindError::Invalid(_)), "{kind}: {e:?}");
                assert!(e.to_string().contains("strength"), "{kind}: {e}");
                assert_eq!(state(&doc), before, "{kind}");
            }
            Ok(done) => {
                if done.id.is_some() {
                    assert_eq!(doc.undo().unwrap(), done.id);
                }
                assert_eq!(doc.content_hash(), before.0, "{kind}");
            }
        }
        let faint = StrokeSpec::new(tools[0].name, 4.0).with_strength(0.01);
        assert!(doc.template(&faint).is_ok(), "{kind}");
        for t in &tools {
            let template = doc.template(&StrokeSpec::new(t.name, 4.0)).unwrap();
            assert_eq!(template.tool(), t.name, "{kind}");
            // Every number parameter takes its range's ends.
            for p in &t.params {
                if let ParamKind::Number { min, max, .. } = p.kind {
                    for v in [min, max] {
                        let spec = StrokeSpec::new(t.name, 4.0).with_param(p.name, v);
                        assert!(
                            doc.template(&spec).is_ok(),
                            "{kind} {} {} = {v}",
                            t.name,
                            p.name
                        );
                    }
                }
            }
        }
        // Parameters a tool does not have are ignored; null means default.
        let t = tools[0].name;
        let with_extra = StrokeSpec::new(t, 4.0).with_param("nonsense", 99);
        let with_null = StrokeSpec::new(t, 4.0).with_param("material", Value::Null);
        let plain = doc.stroke(&StrokeSpec::new(t, 4.0), &[c]).unwrap();
        doc.undo().unwrap();
        assert_eq!(
            doc.stroke(&with_extra, &[c]).unwrap().changed_nodes,
            plain.changed_nodes
        );
        doc.undo().unwrap();
        assert_eq!(
            doc.stroke(&with_null, &[c]).unwrap().changed_nodes,
            plain.changed_nodes
        );
    }
}

// ----- islands -----

#[test]
fn floating_islands_are_detached_as_one_undoable_stroke() {
    let mut doc = memory_doc(WorldKind::Side2d);
    let hash = doc.content_hash();
    // Nothing floats in a fresh world.
    let (none, done) = doc.detach_islands(None).unwrap();
    assert!(none.is_empty());
    assert_eq!(done.id, None);
    // A blob of ground filled into the sky floats.
    let fill = StrokeSpec::new("fill", 2.5);
    let filled = doc.stroke(&fill, &[[32.0, 29.0, 0.0]]).unwrap();
    assert!(filled.id.is_some());
    let with_blob = doc.content_hash();
    // Not near the box asked for: it stays.
    let (far, done) = doc
        .detach_islands(Some([[0.0, 0.0], [10.0, 10.0]]))
        .unwrap();
    assert!(far.is_empty() && done.id.is_none());
    let (islands, done) = doc
        .detach_islands(Some([[30.0, 27.0], [34.0, 31.0]]))
        .unwrap();
    assert_eq!(islands.len(), 1);
    assert!(islands[0].area > 4.0);
    assert!(done.id.is_some() && done.changed_nodes > 0);
    // The blob's solid nodes are gone (the fill's soft rim below iso stays,
    // so the bytes are not those of the fresh world), and nothing floats.
    let detached = doc.content_hash();
    assert_ne!(detached, with_blob);
    assert_ne!(detached, hash);
    let (left, again) = doc.detach_islands(None).unwrap();
    assert!(
        left.is_empty() && again.id.is_none(),
        "nothing floats any more"
    );
    assert_eq!(doc.history().strokes, 2);
    // Undo puts it back, redo takes it again.
    doc.undo().unwrap();
    assert_eq!(doc.content_hash(), with_blob);
    doc.redo().unwrap();
    assert_eq!(doc.content_hash(), detached);
    // Other kinds have none.
    for kind in [WorldKind::Heightmap, WorldKind::Voxel, WorldKind::Map] {
        let (i, c) = memory_doc(kind).detach_islands(None).unwrap();
        assert!(i.is_empty() && c.id.is_none());
    }
}

#[test]
fn a_huge_export_region_on_a_fine_heightmap_is_refused_not_overflowed() {
    // Two cells per chunk of 1e-4 units: ±1e7 units is 1e11 chunks a side,
    // whose product does not fit an i64.
    let params = isoterra_world::HeightmapParams::DEFAULT
        .with_chunk_cells(2)
        .with_lod_count(1)
        .with_cell_size(1.0e-4)
        .with_view_distance(0.02)
        .with_unload_hysteresis(0.01);
    let hm = isoterra_store::HeightmapDocument::create_in(MemoryStore::new(), &params).unwrap();
    let mut doc = Document::wrap(AnyDocument::Heightmap(Box::new(hm)));
    for format in [ExportFormat::Glb, ExportFormat::Obj, ExportFormat::Png16] {
        for region in ["-1e7,-1e7,1e7,1e7", "-1e7,0,1e7,0.001", "0,-1e7,1e-3,1e7"] {
            let req = ExportRequest::new(format).with_region(Some(region.to_string()));
            let err = doc.export(&req).unwrap_err();
            assert!(
                matches!(err, KindError::TooLarge(_)),
                "{format:?} {region}: {err}"
            );
        }
    }
}

/// A writer that takes `room` bytes, then fails.
struct Full {
    room: usize,
}

impl std::io::Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::other("disk full"));
        }
        let k = buf.len().min(self.room);
        self.room -= k;
        Ok(k)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_writer_fails_the_streamed_export_and_changes_nothing() {
    for (kind, format) in [
        (WorldKind::Map, ExportFormat::Glb),
        (WorldKind::Map, ExportFormat::Obj),
        (WorldKind::Side2d, ExportFormat::Glb),
        (WorldKind::Side2d, ExportFormat::Obj),
        (WorldKind::Heightmap, ExportFormat::Glb),
        (WorldKind::Heightmap, ExportFormat::Obj),
        (WorldKind::Voxel, ExportFormat::Glb),
        (WorldKind::Voxel, ExportFormat::Obj),
    ] {
        let mut doc = memory_doc(kind);
        let before = state(&doc);
        let err = doc
            .export_to(&export_request(kind, format), &mut Full { room: 100 })
            .unwrap_err();
        assert!(
            matches!(err, KindError::Export(_)),
            "{kind} {format}: {err}"
        );
        assert!(
            err.to_string().contains("disk full"),
            "{kind} {format}: {err}"
        );
        assert_eq!(state(&doc), before);
    }
}

// ----- ground queries -----

/// A ray straight down (across, in a side view) from above the ground
/// enters it where the field says: just before the hit is outside, just
/// past it inside, and the density agrees with `is_solid`. Maps have no
/// ground queries; non-finite input hits nothing.
#[test]
fn rays_and_points_query_the_ground_of_every_kind_that_has_one() {
    for kind in WorldKind::ALL {
        let mut doc = memory_doc(kind);
        // Down in the world's up axis, from well above the small worlds'
        // ground (a side view's y grows up, like the others').
        let (from, dir) = match kind.dims() {
            2 => ([20.0, 31.0, 0.0], [0.0, -1.0, 0.0]),
            _ => ([0.5, 200.0, 0.5], [0.0, -1.0, 0.0]),
        };
        let hit = doc.raycast(from, dir, 400.0);
        if !kind.has_ground_queries() {
            assert_eq!(hit, None, "{kind}");
            assert!(!doc.is_solid([1.0, 0.0, 1.0]), "{kind}");
            assert_eq!(doc.density_at([1.0, 0.0, 1.0]), None, "{kind}");
            continue;
        }
        let hit = hit.unwrap_or_else(|| panic!("{kind}: the ray down hits the ground"));
        assert!(
            (hit.distance - (from[1] - hit.point[1])).abs() < 1e-3,
            "{kind}: {hit:?}"
        );
        let above = [hit.point[0], hit.point[1] + 0.25, hit.point[2]];
        let below = [hit.point[0], hit.point[1] - 0.25, hit.point[2]];
        assert!(!doc.is_solid(above), "{kind}: {above:?} is open");
        assert!(doc.is_solid(below), "{kind}: {below:?} is ground");
        assert!(doc.density_at(below).is_some(), "{kind}");
        // Bad rays and points answer nothing.
        assert_eq!(doc.raycast([f32::NAN, 0.0, 0.0], dir, 10.0), None);
        assert_eq!(doc.raycast(from, [0.0; 3], 10.0), None);
        assert_eq!(doc.raycast(from, dir, 0.0), None);
        assert!(!doc.is_solid([f32::INFINITY, 0.0, 0.0]));
        assert_eq!(doc.density_at([0.0, f32::NAN, 0.0]), None);
    }
}
