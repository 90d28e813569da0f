//! glTF binary export: the GLB container, the JSON document, the buffer
//! contents read back, errors, and the Khronos validator.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use isoterra_export::{
    ExportError, GlbAttribute, GlbAttributeData, GlbMaterial, GlbMesh, GlbPrimitive, export_glb,
    write_glb,
};
use isoterra_mesh::{
    HeightChunkInput, HeightmapMesh, HeightmapMesher, HeightmapOptions, sample_chunk_heights,
};
use proptest::prelude::*;
use serde_json::Value;

/// A parsed GLB: the JSON document and the BIN chunk.
struct Glb {
    json: Value,
    bin: Vec<u8>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Parses the container strictly: header, chunk order, lengths, padding.
fn parse_glb(bytes: &[u8]) -> Glb {
    assert!(bytes.len() >= 20, "too short");
    assert_eq!(&bytes[0..4], b"glTF", "magic");
    assert_eq!(u32_at(bytes, 4), 2, "version");
    assert_eq!(u32_at(bytes, 8) as usize, bytes.len(), "total length");
    assert_eq!(bytes.len() % 4, 0);
    let json_len = u32_at(bytes, 12) as usize;
    assert_eq!(&bytes[16..20], b"JSON");
    assert_eq!(json_len % 4, 0, "JSON chunk is padded to 4 bytes");
    let json_bytes = &bytes[20..20 + json_len];
    let json: Value = serde_json::from_slice(json_bytes).expect("JSON chunk parses");
    let mut at = 20 + json_len;
    let mut bin = Vec::new();
    if at < bytes.len() {
        let bin_len = u32_at(bytes, at) as usize;
        assert_eq!(&bytes[at + 4..at + 8], b"BIN\0");
        assert_eq!(bin_len % 4, 0);
        bin = bytes[at + 8..at + 8 + bin_len].to_vec();
        at += 8 + bin_len;
    }
    assert_eq!(at, bytes.len(), "no bytes after the last chunk");
    Glb { json, bin }
}

impl Glb {
    fn accessor(&self, k: u64) -> &Value {
        &self.json["accessors"][k as usize]
    }

    /// The bytes of accessor `k` and its count.
    fn accessor_bytes(&self, k: u64) -> (&[u8], usize) {
        let a = self.accessor(k);
        let view = &self.json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let offset = view["byteOffset"].as_u64().unwrap() as usize;
        let len = view["byteLength"].as_u64().unwrap() as usize;
        assert_eq!(offset % 4, 0, "bufferView byteOffset is 4-byte aligned");
        (
            &self.bin[offset..offset + len],
            a["count"].as_u64().unwrap() as usize,
        )
    }

    fn floats(&self, k: u64) -> Vec<f32> {
        let (b, _) = self.accessor_bytes(k);
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn indices(&self, k: u64) -> Vec<u32> {
        let (b, count) = self.accessor_bytes(k);
        match self.accessor(k)["componentType"].as_u64().unwrap() {
            5123 => b
                .chunks_exact(2)
                .take(count)
                .map(|c| u32::from(u16::from_le_bytes(c.try_into().unwrap())))
                .collect(),
            5125 => b
                .chunks_exact(4)
                .take(count)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            other => panic!("index component type {other}"),
        }
    }
}

fn chunk_mesh(cells: u32, lod: u8, chunk: [i32; 2], skirt: f32) -> HeightmapMesh {
    let mut heights = Vec::new();
    sample_chunk_heights(cells, lod, chunk, &mut heights, |[x, z]| {
        (0.8 * (0.11 * x as f64).sin() + 0.5 * (0.07 * z as f64).cos()) as f32
    })
    .unwrap();
    let input = HeightChunkInput::new(&heights)
        .with_cells(cells)
        .with_lod(lod)
        .with_chunk(chunk)
        .with_cell_size(0.5)
        .with_neighbours([lod, lod + u8::from(lod < 2), lod, lod]);
    let mut mesh = HeightmapMesh::default();
    HeightmapMesher::new()
        .mesh(
            &input,
            &HeightmapOptions::DEFAULT
                .with_uv_scale(8.0)
                .with_skirt_depth(skirt),
            &mut mesh,
        )
        .unwrap();
    mesh
}

/// Positions, normals, UVs, indices and translation of a generated mesh.
type OwnedMesh = (
    Vec<[f32; 3]>,
    Vec<[f32; 3]>,
    Vec<[f32; 2]>,
    Vec<u32>,
    Option<[f32; 3]>,
);

fn check_round_trip(meshes: &[GlbMesh<'_>]) -> Glb {
    let glb = parse_glb(&export_glb(meshes).unwrap());
    let j = &glb.json;
    assert_eq!(j["asset"]["version"], "2.0");
    assert_eq!(j["asset"]["generator"], "isoterra");
    assert_eq!(j["scene"], 0);
    let nodes = j["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), meshes.len());
    assert_eq!(
        j["scenes"][0]["nodes"].as_array().unwrap().len(),
        meshes.len()
    );
    if let Some(buffers) = j["buffers"].as_array() {
        let declared = buffers[0]["byteLength"].as_u64().unwrap() as usize;
        assert!(declared <= glb.bin.len() && glb.bin.len() - declared < 4);
    }
    for (node, m) in nodes.iter().zip(meshes) {
        if !m.name.is_empty() {
            assert_eq!(node["name"], m.name);
        }
        match m.translation {
            Some(t) => {
                let got: Vec<f32> = node["translation"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap() as f32)
                    .collect();
                assert_eq!(got, t.to_vec());
            }
            None => assert!(node.get("translation").is_none()),
        }
        if m.indices.is_empty() {
            assert!(node.get("mesh").is_none());
            continue;
        }
        let prim = &j["meshes"][node["mesh"].as_u64().unwrap() as usize]["primitives"][0];
        assert_eq!(prim["mode"], 4);
        let attrs = &prim["attributes"];
        let pos = attrs["POSITION"].as_u64().unwrap();
        let a = glb.accessor(pos);
        assert_eq!(a["count"].as_u64().unwrap() as usize, m.positions.len());
        assert_eq!(a["type"], "VEC3");
        assert_eq!(a["componentType"], 5126);
        let floats = glb.floats(pos);
        let expect: Vec<f32> = m.positions.iter().flatten().copied().collect();
        assert_eq!(
            floats.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            expect.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
        );
        for k in 0..3 {
            let lo = m
                .positions
                .iter()
                .map(|p| p[k])
                .fold(f32::INFINITY, f32::min);
            let hi = m
                .positions
                .iter()
                .map(|p| p[k])
                .fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(a["min"][k].as_f64().unwrap() as f32, lo);
            assert_eq!(a["max"][k].as_f64().unwrap() as f32, hi);
        }
        if m.normals.is_empty() {
            assert!(attrs.get("NORMAL").is_none());
        } else {
            let nrm = attrs["NORMAL"].as_u64().unwrap();
            let expect: Vec<f32> = m.normals.iter().flatten().copied().collect();
            assert_eq!(glb.floats(nrm), expect);
        }
        if m.uvs.is_empty() {
            assert!(attrs.get("TEXCOORD_0").is_none());
        } else {
            let uv = attrs["TEXCOORD_0"].as_u64().unwrap();
            assert_eq!(glb.accessor(uv)["type"], "VEC2");
            let expect: Vec<f32> = m.uvs.iter().flatten().copied().collect();
            assert_eq!(glb.floats(uv), expect);
        }
        let idx = prim["indices"].as_u64().unwrap();
        assert_eq!(
            glb.accessor(idx)["componentType"].as_u64().unwrap(),
            if m.positions.len() <= 65_535 {
                5123
            } else {
                5125
            }
        );
        assert_eq!(glb.indices(idx), m.indices);
    }
    for view in j["bufferViews"].as_array().into_iter().flatten() {
        assert!(view["target"] == 34962 || view["target"] == 34963);
        assert_eq!(view["byteOffset"].as_u64().unwrap() % 4, 0);
    }
    glb
}

#[test]
fn chunk_meshes_round_trip_through_glb() {
    let meshes: Vec<HeightmapMesh> = (0..3)
        .map(|k| chunk_mesh(16, k as u8, [k, -1], if k == 1 { 2.0 } else { 0.0 }))
        .collect();
    let names = ["chunk_0_-1", "chunk_1_-1", "chunk_2_-1"];
    let list: Vec<GlbMesh<'_>> = meshes
        .iter()
        .zip(names)
        .map(|(m, n)| GlbMesh::from_heightmap(n, m))
        .collect();
    let glb = check_round_trip(&list);
    assert_eq!(glb.json["meshes"].as_array().unwrap().len(), 3);
    // Three attributes and indices per mesh.
    assert_eq!(glb.json["accessors"].as_array().unwrap().len(), 12);
}

/// A writer that keeps what it is given and the size of each write, and
/// fails once it holds more than `fail_after` bytes.
struct Recorder {
    bytes: Vec<u8>,
    writes: Vec<usize>,
    fail_after: usize,
}

impl Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.fail_after {
            return Err(std::io::Error::other("disk full"));
        }
        self.bytes.extend_from_slice(buf);
        self.writes.push(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A grid mesh of `side`² vertices (65 536 and more take u32 indices).
fn grid(side: u32) -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>) {
    let positions: Vec<[f32; 3]> = (0..side * side)
        .map(|k| {
            [
                (k % side) as f32,
                ((k * 7) % 5) as f32 * 0.25,
                (k / side) as f32,
            ]
        })
        .collect();
    let normals = vec![[0.0, 1.0, 0.0]; positions.len()];
    let mut indices = Vec::new();
    for z in 0..side - 1 {
        for x in 0..side - 1 {
            let v = z * side + x;
            indices.extend_from_slice(&[v, v + side, v + side + 1, v, v + side + 1, v + 1]);
        }
    }
    (positions, normals, indices)
}

/// `write_glb` writes what `export_glb` returns, in blocks (never the whole
/// buffer at once), and a failing writer is an error, not a panic.
#[test]
fn write_glb_streams_the_bytes_export_glb_returns() {
    let (p1, n1, i1) = grid(300);
    let (p2, n2, i2) = grid(40);
    // Three indices: a u16 view of 6 bytes, padded to 8 before the next.
    let small = [[0.0f32, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]];
    let list = [
        GlbMesh::new("big", &p1, &i1).with_normals(&n1),
        GlbMesh::new("small", &small, &[0, 1, 2]),
        GlbMesh::new("mid", &p2, &i2).with_normals(&n2),
    ];
    let whole = export_glb(&list).unwrap();
    let mut rec = Recorder {
        bytes: Vec::new(),
        writes: Vec::new(),
        fail_after: usize::MAX,
    };
    write_glb(&list, &mut rec).unwrap();
    assert_eq!(rec.bytes, whole);
    let glb = check_round_trip(&list);
    let json_len = u32_at(&whole, 12) as usize;
    assert!(
        glb.bin.len() > 4 << 20,
        "a buffer of several MiB: {}",
        glb.bin.len()
    );
    let largest = rec.writes.iter().copied().max().unwrap();
    assert!(
        largest <= (64 << 10) + 64 + 28 + json_len,
        "a write of {largest} bytes: the buffer was not streamed"
    );
    for fail_after in [0, 100, whole.len() / 2, whole.len() - 1] {
        let mut rec = Recorder {
            bytes: Vec::new(),
            writes: Vec::new(),
            fail_after,
        };
        let err = write_glb(&list, &mut rec).unwrap_err();
        assert!(matches!(err, ExportError::Write(_)), "{err}");
    }
    // A bad mesh is refused before anything is written.
    let bad = [GlbMesh::new("bad", &small, &[0, 1, 7])];
    let mut rec = Recorder {
        bytes: Vec::new(),
        writes: Vec::new(),
        fail_after: usize::MAX,
    };
    assert!(write_glb(&bad, &mut rec).is_err());
    assert!(rec.bytes.is_empty());
}

#[test]
fn large_meshes_use_u32_indices_and_translations_are_written() {
    // 65 536 vertices: one more than u16 indices allow.
    let side = 256u32;
    let positions: Vec<[f32; 3]> = (0..side * side)
        .map(|k| [(k % side) as f32, 0.0, (k / side) as f32])
        .collect();
    let mut indices = Vec::new();
    for z in 0..side - 1 {
        for x in 0..side - 1 {
            let v = z * side + x;
            indices.extend_from_slice(&[v, v + side, v + side + 1, v, v + side + 1, v + 1]);
        }
    }
    let small = [[0.0f32, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]];
    let list = [
        GlbMesh::new("big", &positions, &indices).with_translation(Some([1.0, 2.5, -3.0])),
        GlbMesh::new("small", &small, &[0, 1, 2]),
        GlbMesh::new("empty", &[], &[]),
    ];
    let glb = check_round_trip(&list);
    assert_eq!(glb.json["meshes"].as_array().unwrap().len(), 2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Random meshes (random attributes present or not) read back exactly.
    #[test]
    fn random_meshes_round_trip(
        meshes in proptest::collection::vec(
            (1usize..40, any::<bool>(), any::<bool>(), proptest::option::of(any::<[i16; 3]>()))
                .prop_flat_map(|(n, has_n, has_t, t)| {
                    (
                        proptest::collection::vec(any::<[i16; 3]>(), n),
                        proptest::collection::vec(0..n as u32, 0..20usize).prop_map(|mut v| {
                            v.truncate(v.len() / 3 * 3);
                            v
                        }),
                        Just(has_n),
                        Just(has_t),
                        Just(t),
                    )
                }),
            0..4,
        )
    ) {
        let owned: Vec<OwnedMesh> = meshes
            .iter()
            .map(|(p, idx, has_n, has_t, t)| {
                let pos: Vec<[f32; 3]> = p.iter().map(|q| q.map(|c| f32::from(c) / 8.0)).collect();
                let nrm = if *has_n { vec![[0.0, 1.0, 0.0]; pos.len()] } else { vec![] };
                let uv = if *has_t { pos.iter().map(|q| [q[0], q[2]]).collect() } else { vec![] };
                (pos, nrm, uv, idx.clone(), t.map(|t| t.map(f32::from)))
            })
            .collect();
        let list: Vec<GlbMesh<'_>> = owned
            .iter()
            .map(|(p, n, t, i, tr)| {
                GlbMesh::new("m", p, i)
                    .with_normals(n)
                    .with_uvs(t)
                    .with_translation(*tr)
            })
            .collect();
        check_round_trip(&list);
    }
}

#[test]
fn bad_meshes_are_errors() {
    let p = [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    let n = [[0.0f32, 1.0, 0.0]; 2];
    let nan = [[0.0f32, f32::NAN, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    let what = |m: GlbMesh<'_>| match export_glb(&[GlbMesh::new("ok", &p, &[0, 2, 1]), m]) {
        Err(ExportError::InvalidMesh { mesh: 1, what, .. }) => what,
        other => panic!("expected InvalidMesh, got {other:?}"),
    };
    assert_eq!(what(GlbMesh::new("a", &p, &[0, 1])), "indices");
    assert_eq!(what(GlbMesh::new("a", &p, &[0, 1, 3])), "indices");
    assert_eq!(
        what(GlbMesh::new("a", &p, &[0, 2, 1]).with_normals(&n)),
        "normals"
    );
    assert_eq!(
        what(GlbMesh::new("a", &p, &[0, 2, 1]).with_uvs(&[[0.0, 0.0]])),
        "uvs"
    );
    assert_eq!(what(GlbMesh::new("a", &nan, &[0, 2, 1])), "positions");
    assert_eq!(
        what(GlbMesh::new("a", &p, &[0, 2, 1]).with_translation(Some([0.0, f32::INFINITY, 0.0]))),
        "translation"
    );
    let msg = export_glb(&[GlbMesh::new("chunk_3", &p, &[0, 1, 7])])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("chunk_3") && msg.contains("index 7"), "{msg}");
}

#[test]
fn no_meshes_is_a_valid_empty_scene() {
    let glb = parse_glb(&export_glb(&[]).unwrap());
    assert_eq!(glb.json["scenes"][0]["nodes"].as_array().unwrap().len(), 0);
    assert!(glb.bin.is_empty());
}

// ---------------------------------------------------------------------------
// The Khronos glTF validator
// ---------------------------------------------------------------------------

fn validator_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/validator")
}

/// Runs `node validate.mjs FILE` and returns the parsed report, or `None` (with
/// a loud message) when node or the validator package is not installed.
fn validate(file: &Path) -> Option<Value> {
    let dir = validator_dir();
    let required = std::env::var("ISOTERRA_REQUIRE_VALIDATOR").is_ok_and(|v| v == "1");
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let installed = dir.join("node_modules/gltf-validator").is_dir();
    if !(node_ok && installed) {
        let msg = format!(
            "SKIPPED: gltf-validator not installed; run npm ci in {} (node found: {node_ok})",
            dir.display()
        );
        if required {
            panic!("{msg} (ISOTERRA_REQUIRE_VALIDATOR=1)");
        }
        // Written to the real stderr (not `eprintln!`, which the test harness
        // captures), so the skip shows up in every test run.
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!!\n{msg}\n!!!!!!!!\n");
        return None;
    }
    let out = Command::new("node")
        .arg(dir.join("validate.mjs"))
        .arg(file)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "validator output is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let errors = report["issues"]["numErrors"].as_u64().unwrap();
    assert!(
        out.status.success() && errors == 0,
        "gltf-validator found {errors} error(s):\n{stdout}"
    );
    Some(report)
}

#[test]
fn exported_chunks_pass_the_khronos_validator() {
    // A 2 x 2 region at mixed LODs with stitched seams, plus one skirted chunk
    // and one big mesh with u32 indices.
    let meshes = [
        chunk_mesh(64, 0, [0, 0], 0.0),
        chunk_mesh(64, 1, [1, 0], 0.0),
        chunk_mesh(64, 1, [0, 1], 4.0),
        chunk_mesh(64, 2, [1, 1], 0.0),
        chunk_mesh(256, 0, [2, 2], 0.0),
    ];
    let names = ["chunk_0_0", "chunk_1_0", "chunk_0_1", "chunk_1_1", "big"];
    let list: Vec<GlbMesh<'_>> = meshes
        .iter()
        .zip(names)
        .enumerate()
        .map(|(k, (m, n))| {
            GlbMesh::from_heightmap(n, m).with_translation((k == 4).then_some([0.0, -1.0, 0.0]))
        })
        .collect();
    let bytes = export_glb(&list).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chunks.glb");
    std::fs::write(&file, &bytes).unwrap();
    if let Some(report) = validate(&file) {
        let issues = &report["issues"];
        assert_eq!(issues["numErrors"], 0);
        eprintln!(
            "gltf-validator: {} errors, {} warnings, {} infos, {} hints",
            issues["numErrors"], issues["numWarnings"], issues["numInfos"], issues["numHints"]
        );
        for m in issues["messages"].as_array().into_iter().flatten() {
            eprintln!("  {} {}: {}", m["code"], m["pointer"], m["message"]);
        }
        assert_eq!(
            issues["numWarnings"], 0,
            "validator warnings: {:#}",
            issues["messages"]
        );
        assert_eq!(
            report["info"]["drawCallCount"].as_u64(),
            Some(meshes.len() as u64)
        );
    }
}

/// Two quads sharing an edge, each a material of its own, and a per-vertex
/// `_MATERIAL` id.
fn two_material_strip() -> (Vec<[f32; 3]>, Vec<u32>, Vec<f32>) {
    let positions = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [2.0, 0.0, 0.0],
        [2.0, 1.0, 0.0],
    ];
    let indices = vec![0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 2];
    let ids = vec![0.0, 1.0, 1.0, 0.0, 1.0, 1.0];
    (positions, indices, ids)
}

#[test]
fn primitives_split_the_triangles_and_share_materials_across_meshes() {
    let (p, i, ids) = two_material_strip();
    let dirt = GlbMaterial::new("dirt", [0.5, 0.25, 0.125, 1.0]);
    let rock = GlbMaterial::new("rock", [0.2, 0.2, 0.25, 1.0]);
    let prims = [
        GlbPrimitive::new(0, 6, Some(dirt)),
        GlbPrimitive::new(6, 6, Some(rock)),
        GlbPrimitive::new(12, 0, Some(rock)),
    ];
    let attrs = [GlbAttribute::new(
        "_MATERIAL",
        GlbAttributeData::Scalar(&ids),
    )];
    let meshes = [
        GlbMesh::new("a", &p, &i)
            .with_primitives(&prims)
            .with_attributes(&attrs),
        GlbMesh::new("b", &p, &i)
            .with_primitives(&prims[1..2])
            .with_translation(Some([0.0, 2.0, 0.0])),
    ];
    let glb = parse_glb(&export_glb(&meshes).unwrap());
    let mats = glb.json["materials"].as_array().unwrap();
    assert_eq!(mats.len(), 2, "equal materials are written once: {mats:?}");
    assert_eq!(mats[0]["name"], "dirt");
    assert_eq!(mats[1]["name"], "rock");
    assert_eq!(
        mats[0]["pbrMetallicRoughness"]["baseColorFactor"],
        serde_json::json!([0.5, 0.25, 0.125, 1.0])
    );
    let a = &glb.json["meshes"][0]["primitives"];
    assert_eq!(a.as_array().unwrap().len(), 2, "an empty range is left out");
    assert_eq!(a[0]["material"], 0);
    assert_eq!(a[1]["material"], 1);
    assert_eq!(glb.indices(a[0]["indices"].as_u64().unwrap()), i[..6]);
    assert_eq!(glb.indices(a[1]["indices"].as_u64().unwrap()), i[6..]);
    // Both primitives read the same vertices, and the id attribute.
    assert_eq!(a[0]["attributes"], a[1]["attributes"]);
    let k = a[0]["attributes"]["_MATERIAL"].as_u64().unwrap();
    assert_eq!(glb.accessor(k)["type"], "SCALAR");
    assert_eq!(glb.floats(k), ids);
    let b = &glb.json["meshes"][1]["primitives"];
    assert_eq!(b.as_array().unwrap().len(), 1);
    assert_eq!(b[0]["material"], 1, "mesh b reuses material rock");
}

#[test]
fn bad_primitives_and_attributes_are_errors() {
    let (p, i, ids) = two_material_strip();
    let bad_range = [GlbPrimitive::new(6, 9, None)];
    let odd = [GlbPrimitive::new(1, 3, None)];
    let short = [GlbAttribute::new(
        "_MATERIAL",
        GlbAttributeData::Scalar(&ids[..2]),
    )];
    let unnamed = [GlbAttribute::new(
        "MATERIAL",
        GlbAttributeData::Scalar(&ids),
    )];
    let twice = [
        GlbAttribute::new("_A", GlbAttributeData::Scalar(&ids)),
        GlbAttribute::new("_A", GlbAttributeData::Scalar(&ids)),
    ];
    let bright = [GlbPrimitive::new(
        0,
        6,
        Some(GlbMaterial::new("x", [2.0, 0.0, 0.0, 1.0])),
    )];
    let cases = [
        (
            GlbMesh::new("m", &p, &i).with_primitives(&bad_range),
            "primitives",
        ),
        (
            GlbMesh::new("m", &p, &i).with_primitives(&odd),
            "primitives",
        ),
        (
            GlbMesh::new("m", &p, &i).with_primitives(&bright),
            "material",
        ),
        (
            GlbMesh::new("m", &p, &i).with_attributes(&short),
            "attributes",
        ),
        (
            GlbMesh::new("m", &p, &i).with_attributes(&unnamed),
            "attributes",
        ),
        (
            GlbMesh::new("m", &p, &i).with_attributes(&twice),
            "attributes",
        ),
    ];
    for (mesh, field) in cases {
        match export_glb(&[mesh]) {
            Err(ExportError::InvalidMesh { what, .. }) => assert_eq!(what, field),
            other => panic!("expected an invalid {field}, got {other:?}"),
        }
    }
}

#[test]
fn primitives_and_custom_attributes_pass_the_khronos_validator() {
    let (p, i, ids) = two_material_strip();
    let splat: Vec<[f32; 4]> = ids.iter().map(|&m| [1.0 - m, m, 0.0, 0.0]).collect();
    let uvs: Vec<[f32; 2]> = p.iter().map(|q| [q[0], q[1]]).collect();
    let normals = vec![[0.0, 0.0, 1.0]; p.len()];
    let prims = [
        GlbPrimitive::new(0, 6, Some(GlbMaterial::new("dirt", [0.5, 0.25, 0.1, 1.0]))),
        GlbPrimitive::new(6, 6, Some(GlbMaterial::new("rock", [0.2, 0.2, 0.25, 1.0]))),
    ];
    let attrs = [
        GlbAttribute::new("_MATERIAL", GlbAttributeData::Scalar(&ids)),
        GlbAttribute::new("_SPLAT0", GlbAttributeData::Vec4(&splat)),
    ];
    let mesh = GlbMesh::new("strip", &p, &i)
        .with_normals(&normals)
        .with_uvs(&uvs)
        .with_primitives(&prims)
        .with_attributes(&attrs);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("strip.glb");
    std::fs::write(&file, export_glb(&[mesh]).unwrap()).unwrap();
    if let Some(report) = validate(&file) {
        assert_eq!(report["issues"]["numWarnings"], 0, "{:#}", report["issues"]);
        assert_eq!(report["info"]["drawCallCount"], 2);
        assert_eq!(report["info"]["materialCount"], 2);
    }
}
