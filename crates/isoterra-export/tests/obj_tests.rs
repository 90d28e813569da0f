//! Wavefront OBJ export: parse the text back and compare.

use isoterra_export::{
    ExportError, GlbMaterial, GlbMesh, GlbPrimitive, export_obj, export_obj_mtl, write_obj,
};
use isoterra_mesh::{
    HeightChunkInput, HeightmapMesh, HeightmapMesher, HeightmapOptions, sample_chunk_heights,
};

/// A parsed OBJ: objects with their global position range, and all the data.
#[derive(Default)]
struct Obj {
    objects: Vec<String>,
    v: Vec<[f32; 3]>,
    vn: Vec<[f32; 3]>,
    vt: Vec<[f32; 2]>,
    faces: Vec<Vec<[Option<usize>; 3]>>,
}

fn parse(text: &str) -> Obj {
    let mut o = Obj::default();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let floats = |p: std::str::SplitWhitespace<'_>| -> Vec<f32> {
            p.map(|s| s.parse::<f32>().unwrap()).collect()
        };
        match parts.next() {
            Some("o") => o.objects.push(parts.next().unwrap().to_string()),
            Some("v") => {
                let f = floats(parts);
                o.v.push([f[0], f[1], f[2]]);
            }
            Some("vn") => {
                let f = floats(parts);
                o.vn.push([f[0], f[1], f[2]]);
            }
            Some("vt") => {
                let f = floats(parts);
                o.vt.push([f[0], f[1]]);
            }
            Some("f") => o.faces.push(
                parts
                    .map(|c| {
                        let mut it = c.split('/').map(|s| {
                            if s.is_empty() {
                                None
                            } else {
                                Some(s.parse::<usize>().unwrap())
                            }
                        });
                        [
                            it.next().flatten(),
                            it.next().flatten(),
                            it.next().flatten(),
                        ]
                    })
                    .collect(),
            ),
            Some("#") | None => {}
            Some(other) => panic!("unexpected OBJ statement {other}"),
        }
    }
    o
}

fn chunk(lod: u8, chunk: [i32; 2]) -> HeightmapMesh {
    let mut heights = Vec::new();
    sample_chunk_heights(8, lod, chunk, &mut heights, |[x, z]| {
        0.1 * x as f32 - 0.3 * z as f32
    })
    .unwrap();
    let input = HeightChunkInput::new(&heights)
        .with_cells(8)
        .with_lod(lod)
        .with_chunk(chunk)
        .with_cell_size(0.1);
    let mut mesh = HeightmapMesh::default();
    HeightmapMesher::new()
        .mesh(&input, &HeightmapOptions::DEFAULT, &mut mesh)
        .unwrap();
    mesh
}

#[test]
fn chunks_round_trip_through_obj() {
    let a = chunk(0, [0, 0]);
    let b = chunk(1, [1, 0]);
    let list = [
        GlbMesh::from_heightmap("chunk 0", &a),
        GlbMesh::from_heightmap("chunk_1", &b).with_translation(Some([0.0, 2.0, 0.0])),
    ];
    let obj = parse(&export_obj(&list).unwrap());
    assert_eq!(obj.objects, ["chunk_0", "chunk_1"]);
    assert_eq!(obj.v.len(), a.positions.len() + b.positions.len());
    assert_eq!(obj.vn.len(), obj.v.len());
    assert_eq!(obj.vt.len(), obj.v.len());
    assert_eq!(obj.faces.len(), a.triangle_count() + b.triangle_count());
    // Positions read back bit for bit (translation added to the second).
    for (k, p) in a.positions.iter().enumerate() {
        assert_eq!(obj.v[k], *p);
        assert_eq!(obj.vn[k], a.normals[k]);
        assert_eq!(obj.vt[k], a.uvs[k]);
    }
    for (k, p) in b.positions.iter().enumerate() {
        assert_eq!(obj.v[a.positions.len() + k], [p[0], p[1] + 2.0, p[2]]);
    }
    // Faces: 1-based, file-global, v/vt/vn with the same index.
    let mut flat = Vec::new();
    for f in &obj.faces {
        assert_eq!(f.len(), 3);
        for c in f {
            assert_eq!(c[0], c[1]);
            assert_eq!(c[0], c[2]);
            flat.push(c[0].unwrap() - 1);
        }
    }
    let expect: Vec<usize> = a
        .indices
        .iter()
        .map(|&i| i as usize)
        .chain(b.indices.iter().map(|&i| i as usize + a.positions.len()))
        .collect();
    assert_eq!(flat, expect);
}

#[test]
fn face_format_follows_the_attributes_present() {
    let p = [[0.0f32, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]];
    let n = [[0.0f32, 1.0, 0.0]; 3];
    let t = [[0.0f32, 0.0], [0.0, 1.0], [1.0, 0.0]];
    let face = |m: GlbMesh<'_>| {
        export_obj(&[m])
            .unwrap()
            .lines()
            .find(|l| l.starts_with("f "))
            .unwrap()
            .to_string()
    };
    assert_eq!(face(GlbMesh::new("", &p, &[0, 1, 2])), "f 1 2 3");
    assert_eq!(
        face(GlbMesh::new("", &p, &[0, 1, 2]).with_normals(&n)),
        "f 1//1 2//2 3//3"
    );
    assert_eq!(
        face(GlbMesh::new("", &p, &[0, 1, 2]).with_uvs(&t)),
        "f 1/1 2/2 3/3"
    );
    assert!(
        export_obj(&[GlbMesh::new("", &p, &[0, 1, 2])])
            .unwrap()
            .contains("o mesh_0\n")
    );
}

#[test]
fn bad_meshes_are_errors() {
    let p = [[0.0f32, 0.0, 0.0], [1.0, 0.0, f32::NAN]];
    assert!(matches!(
        export_obj(&[GlbMesh::new("x", &p, &[0, 1, 0])]),
        Err(ExportError::InvalidMesh {
            what: "positions",
            ..
        })
    ));
    assert!(matches!(
        export_obj(&[GlbMesh::new("x", &p[..1], &[0, 0, 1])]),
        Err(ExportError::InvalidMesh {
            what: "indices",
            ..
        })
    ));
}

#[test]
fn materials_become_usemtl_groups_and_a_material_library() {
    let p = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let i = [0, 1, 2, 0, 2, 3];
    let dirt = GlbMaterial::new("dark dirt", [0.5, 0.25, 0.125, 1.0]);
    let other_dirt = GlbMaterial::new("dark dirt", [0.0, 0.0, 1.0, 1.0]);
    let prims = [
        GlbPrimitive::new(0, 3, Some(dirt)),
        GlbPrimitive::new(3, 3, Some(other_dirt)),
    ];
    let meshes = [
        GlbMesh::new("a", &p, &i).with_primitives(&prims),
        GlbMesh::new("b", &p, &i),
    ];
    let files = export_obj_mtl(&meshes, "w.mtl").unwrap();
    let lines: Vec<&str> = files.obj.lines().filter(|l| !l.starts_with('v')).collect();
    assert_eq!(
        lines,
        [
            "# written by isoterra",
            "mtllib w.mtl",
            "o a",
            "usemtl dark_dirt",
            "f 1 2 3",
            "usemtl dark_dirt_2",
            "f 1 3 4",
            "o b",
            "usemtl default",
            "f 5 6 7",
            "f 5 7 8",
        ]
    );
    let mtl: Vec<&str> = files.mtl.lines().collect();
    assert!(mtl.contains(&"newmtl dark_dirt"), "{mtl:?}");
    assert!(mtl.contains(&"Kd 0.5 0.25 0.125"), "{mtl:?}");
    assert!(mtl.contains(&"newmtl dark_dirt_2"), "{mtl:?}");
    assert!(mtl.contains(&"Kd 0 0 1"), "{mtl:?}");
    assert!(mtl.contains(&"newmtl default"), "{mtl:?}");
    // The faces are the same as without the library.
    let plain = export_obj(&meshes).unwrap();
    let faces = |t: &str| t.lines().filter(|l| l.starts_with("f ")).count();
    assert_eq!(faces(&plain), faces(&files.obj));
    assert!(export_obj_mtl(&meshes, "").is_err());
    assert!(export_obj_mtl(&meshes, "a\nb.mtl").is_err());
}

/// `write_obj` writes the text `export_obj` returns, in blocks, and a
/// failing writer is an error; a bad mesh writes nothing.
#[test]
fn write_obj_streams_the_text_export_obj_returns() {
    let side = 200u32;
    let positions: Vec<[f32; 3]> = (0..side * side)
        .map(|k| {
            [
                (k % side) as f32 * 0.5,
                (k % 7) as f32 * 0.1,
                (k / side) as f32 * 0.5,
            ]
        })
        .collect();
    let normals = vec![[0.0f32, 1.0, 0.0]; positions.len()];
    let mut indices = Vec::new();
    for z in 0..side - 1 {
        for x in 0..side - 1 {
            let v = z * side + x;
            indices.extend_from_slice(&[v, v + side, v + 1]);
        }
    }
    let list = [GlbMesh::new("grid", &positions, &indices).with_normals(&normals)];
    let whole = export_obj(&list).unwrap();
    struct Sink(Vec<u8>, usize, usize);
    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0.len() + b.len() > self.2 {
                return Err(std::io::Error::other("disk full"));
            }
            self.0.extend_from_slice(b);
            self.1 = self.1.max(b.len());
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut sink = Sink(Vec::new(), 0, usize::MAX);
    write_obj(&list, &mut sink).unwrap();
    assert_eq!(sink.0, whole.as_bytes());
    assert!(whole.len() > 1 << 20);
    assert!(sink.1 <= 1 << 20, "a write of {} bytes", sink.1);
    let mut failing = Sink(Vec::new(), 0, whole.len() / 2);
    assert!(matches!(
        write_obj(&list, &mut failing),
        Err(ExportError::Write(_))
    ));
    let bad = [GlbMesh::new("bad", &positions[..3], &[0, 1, 9])];
    let mut sink = Sink(Vec::new(), 0, usize::MAX);
    assert!(write_obj(&bad, &mut sink).is_err());
    assert!(sink.0.is_empty());
}

/// The text a user would write by hand with `format!`, for values whose
/// shortest digits are not ties (halves, tenths of small integers).
fn reference_obj(name: &str, m: &GlbMesh<'_>, names: [&str; 2]) -> String {
    let mut s = format!("# written by isoterra\nmtllib m.mtl\no {name}\n");
    for p in m.positions {
        s += &format!("v {} {} {}\n", p[0], p[1], p[2]);
    }
    for n in m.normals {
        s += &format!("vn {} {} {}\n", n[0], n[1], n[2]);
    }
    for t in m.uvs {
        s += &format!("vt {} {}\n", t[0], t[1]);
    }
    for (k, prim) in m.primitives.iter().enumerate() {
        s += &format!("usemtl {}\n", names[k]);
        let (a, e) = (prim.start as usize, (prim.start + prim.count) as usize);
        for t in m.indices[a..e].chunks_exact(3) {
            let [a, b, c] = [t[0] + 1, t[1] + 1, t[2] + 1];
            s += &format!("f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}\n");
        }
    }
    s
}

/// A mesh large enough to be written in many pieces gives the same text on
/// one thread and on four, and it is the text written one record at a time.
#[test]
fn large_meshes_are_the_same_text_at_any_thread_count() {
    let side = 150u32;
    let positions: Vec<[f32; 3]> = (0..side * side)
        .map(|k| {
            [
                (k % side) as f32 * 0.5,
                (k % 7) as f32 * 0.1,
                (k / side) as f32 * 0.5,
            ]
        })
        .collect();
    let normals: Vec<[f32; 3]> = (0..side * side)
        .map(|k| {
            [
                0.0,
                if k % 3 == 0 { -1.0 } else { 1.0 },
                (k % 5) as f32 * 0.25,
            ]
        })
        .collect();
    let uvs: Vec<[f32; 2]> = (0..side * side)
        .map(|k| [(k % side) as f32 * 0.125, (k / side) as f32 * 0.125])
        .collect();
    let mut indices = Vec::new();
    for z in 0..side - 1 {
        for x in 0..side - 1 {
            let v = z * side + x;
            indices.extend_from_slice(&[v, v + side, v + 1, v + 1, v + side, v + side + 1]);
        }
    }
    let tris = indices.len() as u32 / 3;
    let (rock, grass) = (
        GlbMaterial::new("rock", [0.5, 0.5, 0.5, 1.0]),
        GlbMaterial::new("grass", [0.0, 1.0, 0.0, 1.0]),
    );
    let split = 3 * (tris / 3);
    let prims = [
        GlbPrimitive::new(0, split, Some(rock)),
        GlbPrimitive::new(split, indices.len() as u32 - split, Some(grass)),
    ];
    let mesh = GlbMesh::new("terrain", &positions, &indices)
        .with_normals(&normals)
        .with_uvs(&uvs)
        .with_primitives(&prims);
    let want = reference_obj("terrain", &mesh, ["rock", "grass"]);
    for threads in [1, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let files = pool.install(|| export_obj_mtl(&[mesh], "m.mtl")).unwrap();
        assert!(
            files.obj == want,
            "{threads} threads: not the reference text"
        );
        let mut written = Vec::new();
        pool.install(|| write_obj(&[mesh], &mut written)).unwrap();
        let plain = export_obj(&[mesh]).unwrap();
        assert_eq!(written, plain.as_bytes(), "{threads} threads");
    }
}
