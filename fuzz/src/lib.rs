//! Fuzzing every reader of isoterra on the stable toolchain.
//!
//! Each [`Target`] is one reader (the `.npy` reader, the PNG16 heightmap
//! import, the Tiled import, the world-file opener, the stroke-record and
//! chunk decoders, the editor's message parser, …) with seed inputs made by
//! isoterra itself (a real world file, real stroke deltas, a real export).
//! [`fuzz`] feeds a target inputs mutated from its seeds (bit flips,
//! interesting integers, inserted, deleted and repeated runs, splices of two
//! seeds, truncation) and plain random bytes, with a deterministic
//! generator, and catches every panic: a reader must answer bad input with
//! an error, never a panic.
//!
//! `cargo run -p isoterra-fuzz --release -- all --seconds 60` runs every
//! target; see `fuzz/README.md`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use isoterra::export::{
    TiledEncoding, TiledExport, TiledImport, decode_png16_codes, decode_r16_codes, export_exr,
    export_npy_f32, export_png_layers, export_png16, export_r16, export_tiled, export_tiled_tmx,
    import_exr, import_png8, import_png16, import_r16, import_tiled, import_tiled_with,
    load_png_layers, parse_polylines_json, read_npy, read_npy_from, read_npy3, read_npy3_from,
    read_png_layers_sidecar,
};
use isoterra::field::Field2;
use isoterra::field::map::MapLayers;
use isoterra::kind::{
    Document, NewWorld, Recipe, RecipeParams, StrokeSpec, WorldKind, bake_chunks,
};
use isoterra::store::{
    ChunkLayer, ChunkStore, MemoryStore, decode_baked, decode_chunk, decode_delta, decode_delta3,
    decode_height_edit, decode_map_chunk, decode_map_edit, encode_baked,
};
use isoterra::world::Side2dStorage;

/// Bytes handed out a few at a time (1 to 61 per read, varying), with no
/// length known up front: what a reader sees from a pipe.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl<'a> Trickle<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Trickle { bytes, step: 1 }
    }
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step * 7 % 61 + 1;
        let n = buf.len().min(self.step).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// Panics unless a file read whole and the same file read as a stream
/// (see [`Trickle`]) give the same answer: the same value, or both an error.
fn agree<T: PartialEq + std::fmt::Debug, E: std::fmt::Debug>(
    whole: Result<T, E>,
    streamed: Result<T, E>,
) {
    match (whole, streamed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the streamed read differs"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("whole {a:?} but streamed {b:?}"),
    }
}

/// One reader under test.
pub struct Target {
    /// Its name on the command line.
    pub name: &'static str,
    /// What it reads.
    pub what: &'static str,
    /// Reads one input; errors are fine, panics are findings.
    pub run: fn(&[u8]),
    /// Valid inputs to mutate.
    pub seeds: fn() -> Vec<Vec<u8>>,
}

/// What a run found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Inputs read.
    pub execs: u64,
    /// Inputs that made the reader panic, with the panic's message.
    pub panics: Vec<(Vec<u8>, String)>,
    /// How long it ran.
    pub elapsed: Duration,
}

/// Every target.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "npy2",
            what: ".npy 2D arrays (contour input)",
            run: |b| agree(read_npy(b), read_npy_from(Trickle::new(b), None)),
            seeds: seeds_npy2,
        },
        Target {
            name: "npy3",
            what: ".npy 3D arrays (mesh3d input)",
            run: |b| agree(read_npy3(b), read_npy3_from(Trickle::new(b), None)),
            seeds: seeds_npy3,
        },
        Target {
            name: "png16",
            what: "16-bit PNG heightmaps (import)",
            run: |b| {
                let b = &png_with_crcs(b);
                let _ = decode_png16_codes(b);
                let _ = import_png16(b, None);
                let _ = import_png16(b, Some([0.0, 100.0]));
            },
            seeds: seeds_png16,
        },
        Target {
            name: "png8",
            what: "8-bit PNG heightmaps (import)",
            run: |b| {
                let _ = import_png8(&png_with_crcs(b), None);
            },
            seeds: seeds_png16,
        },
        Target {
            name: "r16",
            what: "R16 raw heightmaps (import)",
            run: |b| {
                let _ = decode_r16_codes(b, None);
                let _ = import_r16(b, Some([4, 4]), [0.0, 1.0]);
            },
            seeds: seeds_r16,
        },
        Target {
            name: "tiled-json",
            what: "Tiled JSON maps (map import)",
            run: |b| {
                let _ = import_tiled(b, &TiledImport::DEFAULT);
            },
            seeds: seeds_tiled,
        },
        Target {
            name: "tiled-tmx",
            what: "Tiled TMX maps and TSX tilesets (map import)",
            run: |b| {
                // The map names an external tileset; the resolver hands it
                // the same bytes, so the TSX reader sees them too.
                let _ = import_tiled(b, &TiledImport::DEFAULT);
                let mut files = |_: &str| Ok(b.to_vec());
                let _ = import_tiled_with(b, &TiledImport::DEFAULT, &mut files);
            },
            seeds: seeds_tmx,
        },
        Target {
            name: "exr",
            what: "EXR float heightmaps (import)",
            run: |b| {
                let _ = import_exr(b);
            },
            seeds: seeds_exr,
        },
        Target {
            name: "png-layers",
            what: "map layer PNG + JSON sidecar (import)",
            run: |b| {
                // The input is the sidecar; the PNG half is split off at a
                // zero byte when there is one.
                let (side, png) = match b.iter().position(|&x| x == 0) {
                    Some(k) => (&b[..k], &b[k + 1..]),
                    None => (b, &[][..]),
                };
                let _ = read_png_layers_sidecar(side);
                let _ = load_png_layers(&png_with_crcs(png), side);
            },
            seeds: seeds_png_layers,
        },
        Target {
            name: "polylines-json",
            what: "collider polyline JSON",
            run: |b| {
                let _ = parse_polylines_json(&String::from_utf8_lossy(b));
            },
            seeds: || vec![br#"[{"points":[[0,0],[1,2],[3,1]],"closed":true}]"#.to_vec()],
        },
        Target {
            name: "stroke-deltas",
            what: "stroke records of every kind (the undo log)",
            run: |b| {
                let _ = decode_delta(b);
                let _ = decode_delta3(b);
                let _ = decode_height_edit(b);
                let _ = decode_map_edit(b);
            },
            seeds: seeds_deltas,
        },
        Target {
            name: "chunks",
            what: "stored chunk payloads of every kind",
            run: |b| {
                let _ = decode_chunk(b);
                if let Ok(mut layers) = MapLayers::new(16, 16) {
                    let _ = decode_map_chunk(b, &mut layers, [0, 0, 16, 16]);
                }
            },
            seeds: seeds_chunks,
        },
        Target {
            name: "baked",
            what: "baked chunk payloads of every kind (meshes and colliders)",
            run: |b| {
                let _ = decode_baked(b);
            },
            seeds: seeds_baked,
        },
        Target {
            name: "world-file",
            what: "world files (SQLite pages, metadata, every row)",
            run: run_world_file,
            seeds: seeds_world_files,
        },
        Target {
            name: "editor-messages",
            what: "the editor's client messages (WebSocket text)",
            run: |b| {
                let _ = isoterra_editor::parse_client_message(&String::from_utf8_lossy(b));
            },
            seeds: seeds_messages,
        },
    ]
}

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    targets().into_iter().find(|t| t.name == name)
}

/// CRC-32 (ISO-HDLC, as PNG uses it).
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for part in parts {
        for &b in *part {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
    }
    !c
}

/// `b` with every PNG chunk's CRC recomputed, so that a mutated image gets
/// past the checksum into the decoder (chunks that do not fit are left as
/// they are).
pub fn png_with_crcs(b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    let mut at = 8;
    while at + 12 <= v.len() {
        let len = u32::from_be_bytes([v[at], v[at + 1], v[at + 2], v[at + 3]]) as usize;
        let Some(end) = (at + 8).checked_add(len).filter(|&e| e + 4 <= v.len()) else {
            break;
        };
        let crc = crc32(&[&v[at + 4..end]]);
        v[end..end + 4].copy_from_slice(&crc.to_be_bytes());
        at = end + 4;
    }
    v
}

/// A small deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Integers that readers get wrong: sizes, signs and limits.
const INTERESTING: [u32; 12] = [
    0,
    1,
    2,
    0x7F,
    0x80,
    0xFF,
    0xFFFF,
    0x1_0000,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFE,
    0xFFFF_FFFF,
];

/// One input for a target: a seed mutated one to eight times, a splice of
/// two seeds, or (one time in twenty) random bytes.
pub fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    if seeds.is_empty() || rng.below(20) == 0 {
        let n = rng.below(512);
        return (0..n).map(|_| rng.next_u64() as u8).collect();
    }
    let mut v = seeds[rng.below(seeds.len())].clone();
    let ops = 1 + rng.below(8);
    for _ in 0..ops {
        let len = v.len();
        match rng.below(10) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = rng.next_u64() as u8;
            }
            2 if len >= 4 => {
                let i = rng.below(len - 3);
                let x = INTERESTING[rng.below(INTERESTING.len())];
                let bytes = if rng.below(2) == 0 {
                    x.to_le_bytes()
                } else {
                    x.to_be_bytes()
                };
                v[i..i + 4].copy_from_slice(&bytes);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                v[i] = INTERESTING[rng.below(INTERESTING.len())] as u8;
            }
            4 => {
                let i = rng.below(len + 1);
                let n = 1 + rng.below(16);
                let ins: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                v.splice(i..i, ins);
            }
            5 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                v.drain(i..i + n);
            }
            6 if len > 0 => {
                // Repeat a run (grows counts and lists).
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(32));
                let run: Vec<u8> = v[i..i + n].to_vec();
                let at = rng.below(v.len() + 1);
                v.splice(at..at, run);
            }
            7 if len > 0 => v.truncate(rng.below(len)),
            8 => {
                let other = &seeds[rng.below(seeds.len())];
                let cut = rng.below(v.len() + 1);
                let from = rng.below(other.len() + 1);
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            _ if len > 0 => {
                // Copy a run within the input.
                let a = rng.below(len);
                let b = rng.below(len);
                let n = 1 + rng.below((len - a.max(b)).min(16));
                let run: Vec<u8> = v[a..a + n].to_vec();
                v[b..b + n].copy_from_slice(&run);
            }
            _ => v.push(rng.next_u64() as u8),
        }
    }
    v
}

/// Runs `target` on its seeds, then on mutated inputs until `budget` is
/// spent or `max_execs` inputs were read, catching panics. The panic hook
/// is silenced meanwhile (and restored).
pub fn fuzz(target: &Target, budget: Duration, max_execs: u64, seed: u64) -> Report {
    let seeds = (target.seeds)();
    let mut rng = Rng::new(seed ^ name_hash(target.name));
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let mut report = Report::default();
    let mut k = 0usize;
    while report.execs < max_execs && (report.execs == 0 || start.elapsed() < budget) {
        let input = if k < seeds.len() {
            seeds[k].clone()
        } else {
            mutate(&mut rng, &seeds)
        };
        k += 1;
        report.execs += 1;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| (target.run)(&input))) {
            let why = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            if report.panics.len() < 16 {
                report.panics.push((input, why));
            }
        }
    }
    report.elapsed = start.elapsed();
    std::panic::set_hook(hook);
    report
}

fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

// ----- seeds: made by isoterra itself -----

fn seeds_npy2() -> Vec<Vec<u8>> {
    let values: Vec<f32> = (0..48).map(|i| (i as f32 * 0.37).sin()).collect();
    let field = Field2::from_values(8, 6, values).expect("an 8x6 field");
    vec![export_npy_f32(&field)]
}

fn npy3(descr: &str, item: usize) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (3, 4, 5), }}");
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend((0..60 * item).map(|i| (i * 7) as u8));
    out
}

fn seeds_npy3() -> Vec<Vec<u8>> {
    vec![
        npy3("<f4", 4),
        npy3("<f8", 8),
        npy3("|u1", 1),
        npy3("<i2", 2),
    ]
}

fn heights() -> Vec<f32> {
    (0..16).map(|i| i as f32 / 15.0).collect()
}

fn seeds_png16() -> Vec<Vec<u8>> {
    vec![export_png16(&heights(), [4, 4], [0.0, 1.0]).expect("a 4x4 PNG16")]
}

fn seeds_r16() -> Vec<Vec<u8>> {
    vec![export_r16(&heights(), [4, 4], [0.0, 1.0]).expect("a 4x4 R16")]
}

fn small_map() -> MapLayers {
    let mut m = MapLayers::new(8, 8).expect("an 8x8 map");
    for (i, l) in m.level.iter_mut().enumerate() {
        *l = (i % 3) as f32;
    }
    m
}

fn seeds_tiled() -> Vec<Vec<u8>> {
    vec![export_tiled(&small_map(), None, &TiledExport::DEFAULT).expect("a Tiled map")]
}

fn seeds_tmx() -> Vec<Vec<u8>> {
    [TiledEncoding::Csv, TiledEncoding::Base64Zlib]
        .into_iter()
        .map(|e| {
            export_tiled_tmx(&small_map(), None, &TiledExport::DEFAULT.with_encoding(e))
                .expect("a TMX map")
        })
        .chain([br#"<?xml version="1.0"?><map version="1.10" orientation="orthogonal" width="2" height="2" tilewidth="32" tileheight="32"><tileset firstgid="1" source="t.tsx"/><layer id="1" name="l" width="2" height="2"><data encoding="csv">1,2,2,1</data></layer></map>"#.to_vec()])
        .collect()
}

fn seeds_exr() -> Vec<Vec<u8>> {
    vec![export_exr(&heights(), [4, 4]).expect("a 4x4 EXR")]
}

fn seeds_png_layers() -> Vec<Vec<u8>> {
    let p = export_png_layers(&small_map(), None).expect("map layers");
    let mut v = p.sidecar.clone();
    v.push(0);
    v.extend_from_slice(&p.png);
    vec![p.sidecar, v]
}

/// A world of each kind in memory with a few strokes.
fn stroked_docs() -> Vec<Document<MemoryStore>> {
    let strokes: [(WorldKind, &str, [f64; 3]); 4] = [
        (WorldKind::Side2d, "dig", [20.0, 16.0, 0.0]),
        (WorldKind::Heightmap, "raise", [0.0, 0.0, 0.0]),
        (WorldKind::Voxel, "dig", [0.0, 0.0, 0.0]),
        (WorldKind::Map, "cliff-up", [12.0, 0.0, 12.0]),
    ];
    strokes
        .iter()
        .filter_map(|&(kind, tool, at)| {
            let new = match kind {
                WorldKind::Side2d => NewWorld::new(kind).with_size([64, 32]),
                WorldKind::Map => NewWorld::new(kind).with_size([32, 32]),
                _ => NewWorld::new(kind),
            };
            let mut doc = Document::create_in(MemoryStore::new(), &new).ok()?;
            let spec = StrokeSpec::new(tool, 4.0);
            doc.stroke(&spec, &[at]).ok()?;
            let second = [at[0] + 3.0, at[1], at[2] + 1.0];
            doc.stroke(&StrokeSpec::new(tool, 2.0), &[at, second])
                .ok()?;
            Some(doc)
        })
        .collect()
}

/// Side-view worlds that store `u16` and `u8` codes, each with a stroke.
fn quantized_docs() -> Vec<Document<MemoryStore>> {
    [Side2dStorage::U16, Side2dStorage::U8]
        .into_iter()
        .filter_map(|storage| {
            let mut recipe = Recipe::preset(WorldKind::Side2d, "caves").ok()?;
            if let RecipeParams::Side2d(r) = &mut recipe.params {
                r.storage = storage;
            }
            let new = NewWorld::new(WorldKind::Side2d)
                .with_size([64, 32])
                .with_recipe(recipe);
            let mut doc = Document::create_in(MemoryStore::new(), &new).ok()?;
            doc.stroke(&StrokeSpec::new("dig", 4.0), &[[20.0, 16.0, 0.0]])
                .ok()?;
            Some(doc)
        })
        .collect()
}

fn seeds_deltas() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for doc in stroked_docs().into_iter().chain(quantized_docs()) {
        let store = doc.store();
        for id in store.done_stroke_ids().unwrap_or_default() {
            if let Ok(Some(rec)) = store.stroke(id) {
                out.push(rec.delta);
            }
        }
    }
    out
}

fn seeds_chunks() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for doc in stroked_docs() {
        let store = doc.store();
        for key in store.chunk_keys().unwrap_or_default() {
            if key.layer == ChunkLayer::FIELD
                && let Ok(Some(payload)) = store.chunk(&key)
            {
                out.push(payload);
            }
        }
    }
    out.truncate(24);
    // and one chunk of each quantized encoding
    for doc in quantized_docs() {
        let store = doc.store();
        let keys = store.chunk_keys().unwrap_or_default();
        let field = keys.iter().filter(|k| k.layer == ChunkLayer::FIELD);
        if let Some(payload) = field.filter_map(|k| store.chunk(k).ok().flatten()).next() {
            out.push(payload);
        }
    }
    out
}

/// Baked payloads of the stroked worlds: a few chunks of each kind around
/// the strokes, with their colliders (polylines, heightfields, trimeshes).
fn seeds_baked() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for mut doc in stroked_docs() {
        doc.rebuild();
        let (lo, hi): (&[f32], &[f32]) = match doc.kind() {
            WorldKind::Voxel => (&[-16.0; 3], &[16.0; 3]),
            WorldKind::Side2d => (&[0.0, 0.0], &[64.0, 32.0]),
            _ => (&[0.0, 0.0], &[32.0, 32.0]),
        };
        let source = doc.bake_source();
        let Ok(plan) = source.plan(lo, hi, 0) else {
            continue;
        };
        let keys: Vec<_> = plan.keys().take(6).collect();
        if let Ok(baked) = bake_chunks(&source, &keys) {
            for (_, chunk) in baked {
                if let Ok((bytes, _)) = encode_baked(&chunk) {
                    out.push(bytes);
                }
            }
        }
    }
    out
}

fn seeds_world_files() -> Vec<Vec<u8>> {
    let Ok(dir) = tempfile::tempdir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, kind) in [WorldKind::Side2d, WorldKind::Map].into_iter().enumerate() {
        let path = dir.path().join(format!("w{k}.isoterra"));
        let new = match kind {
            WorldKind::Side2d => NewWorld::new(kind).with_size([32, 16]),
            _ => NewWorld::new(kind).with_size([16, 16]),
        };
        let Ok(mut doc) = Document::create(&path, &new) else {
            continue;
        };
        let at = [8.0, 8.0, 8.0];
        let tool = if kind == WorldKind::Side2d {
            "dig"
        } else {
            "raise"
        };
        let _ = doc.stroke(&StrokeSpec::new(tool, 3.0), &[at]);
        let _ = doc.close();
        if let Ok(bytes) = std::fs::read(&path) {
            out.push(bytes);
        }
    }
    out
}

/// Writes the input as a world file and reads everything in it.
fn run_world_file(b: &[u8]) {
    thread_local! {
        static DIR: Option<tempfile::TempDir> = tempfile::tempdir().ok();
    }
    DIR.with(|dir| {
        let Some(dir) = dir else { return };
        let path = dir.path().join("fuzz.isoterra");
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
        if std::fs::write(&path, b).is_err() {
            return;
        }
        if let Ok(mut doc) = Document::open(&path) {
            let _ = doc.content_hash();
            let _ = doc.history();
            let _ = doc.info_json();
            let _ = doc.undo();
            let _ = doc.redo();
            let _ = doc.close();
        }
    });
}

fn seeds_messages() -> Vec<Vec<u8>> {
    [
        r#"{"type":"hello","client":"browser"}"#,
        r#"{"type":"camera","position":[1,2,3],"forward":[0,0,1],"view_distance":400}"#,
        r#"{"type":"stroke_begin","stroke":"c1","tool":"raise","radius":8,"strength":0.5,"shape":"circle","params":{"height":2.0,"pathing":["walk"]}}"#,
        r#"{"type":"dab","stroke":"c1","at":[1.5,2,3]}"#,
        r#"{"type":"stroke_end","stroke":"c1","req":"r1"}"#,
        r#"{"type":"undo"}"#,
        r#"{"type":"new_world","kind":"map","seed":7,"size":[256,256],"preset":"island"}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}
