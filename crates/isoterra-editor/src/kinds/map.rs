//! Map worlds in the browser: the world description and the frames of a
//! chunk, from the meshes the world keeps.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use axum::body::Bytes;
use isoterra::export::linear_to_srgb8;
use isoterra::field::map::MapLayers;
use isoterra::kind::AnyDocument;
use isoterra::mesh::{CellRect, MapMeshOptions, MapMeshOutput, MapMesher};
use isoterra::store::MapDocument;
use isoterra::world::{MapChunkMesh, StreamViewer};
use serde_json::{Value, json};

use super::{Doc, Meshing, send_frames};
use crate::state::{Client, Out};

use crate::color;
use crate::frame::{
    KIND_MAP, LAYER_TERRAIN, LAYER_WATER, SURFACE_ROCK, encode_surface_frame, surface_weights,
};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &MapDocument<super::Store>) -> Value {
    let info = d.info();
    let p = d.params();
    let cs = p.mesh.cell_size;
    let lh = p.mesh.level_height;
    json!({
        "seed": info.seed, "preset": info.preset,
        "size": [p.width_cells, p.depth_cells],
        "bounds": {
            "min": [0.0, -p.mesh.chasm_depth - 64.0, 0.0],
            "max": [p.width_cells as f32 * cs, f32::from(isoterra::field::map::MAX_LEVEL + 1) * lh + 64.0, p.depth_cells as f32 * cs],
        },
        "chunk_cells": p.chunk_cells, "cell_size": cs, "level_height": lh,
        "textures": isoterra::export::MAP_PALETTE.iter().map(|c| linear_to_srgb8(*c, 1.0)).collect::<Vec<_>>(),
        "texture_names": isoterra::export::MAP_TEXTURE_NAMES,
    })
}

/// The frames of a map chunk: terrain coloured by splat (cliff walls darker)
/// and water coloured and faded by depth. A chunk without water gets an
/// empty water frame, which removes what a client held.
///
/// The terrain is drawn with the tops apart from the walls at the rims
/// ([`MapMeshBuffers::tops_apart`](isoterra::mesh::MapMeshBuffers::tops_apart)),
/// so rims read as clean lines, not as a saw-tooth of wall-coloured wedges.
fn map_frames(chunk: &MapChunkMesh) -> [Vec<u8>; 2] {
    mesh_frames(chunk.coord, &chunk.mesh, 0)
}

/// [`map_frames`] of the mesh `out` of chunk `chunk`, at `lod` (0 the
/// chunk's own mesh, 1 its overview tile).
fn mesh_frames(chunk: [u32; 2], out: &MapMeshOutput, lod: u8) -> [Vec<u8>; 2] {
    let coord = [chunk[0] as i32, 0, chunk[1] as i32];
    let t = out.terrain.tops_apart();
    // Each vertex's colour (splat colours, walls darker so that cliffs read
    // from above) and detail classes (the splat's textures, rock on walls).
    let (colors, surface): (Vec<[u8; 4]>, Vec<[u8; 4]>) = (0..t.positions.len())
        .map(|i| {
            let (splat, blend) = (t.splat[i], t.blend[i]);
            let c = isoterra::export::splat_color(splat, blend);
            let wall = blend.clamp(0.0, 1.0);
            let dark = 1.0 - 0.3 * wall;
            let color = linear_to_srgb8([c[0] * dark, c[1] * dark, c[2] * dark], 1.0);
            let mut w = [0.0f32; 4];
            for (id, weight) in splat.ids.iter().zip(splat.weights) {
                w[color::map_texture_class(*id)] += f32::from(weight) / 255.0 * (1.0 - wall);
            }
            w[SURFACE_ROCK] += wall;
            (color, surface_weights(w))
        })
        .unzip();
    let terrain = encode_surface_frame(
        KIND_MAP,
        LAYER_TERRAIN,
        lod,
        coord,
        &t.positions,
        &t.normals,
        &colors,
        &surface,
        &t.indices,
    );
    let w = &out.water;
    let shallow = [0.16f32, 0.55, 0.62];
    let deep = isoterra::export::WATER_COLOR;
    let water_colors: Vec<[u8; 4]> = (0..w.positions.len())
        .map(|i| {
            let depth = w.depth.get(i).copied().unwrap_or(0.0);
            let k = if depth.is_finite() {
                (depth / 3.0).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let c = [
                shallow[0] + (deep[0] - shallow[0]) * k,
                shallow[1] + (deep[1] - shallow[1]) * k,
                shallow[2] + (deep[2] - shallow[2]) * k,
            ];
            linear_to_srgb8(c, 0.35 + 0.5 * k)
        })
        .collect();
    // The depth for the shoreline foam, in 1/64 units; byte 1 marks it as
    // given, so that a depth of 0 (the shoreline) does not read as "no
    // depth" (deep water) on the page.
    let water_depth: Vec<[u8; 4]> = (0..w.positions.len())
        .map(|i| {
            let depth = w.depth.get(i).copied().unwrap_or(0.0);
            let d = if depth.is_finite() {
                (depth * 64.0).round().clamp(0.0, 255.0) as u8
            } else {
                255
            };
            [d, 255, 0, 0]
        })
        .collect();
    let water = encode_surface_frame(
        KIND_MAP,
        LAYER_WATER,
        lod,
        coord,
        &w.positions,
        &w.normals,
        &water_colors,
        &water_depth,
        &w.indices,
    );
    [terrain, water]
}

/// The map's pathing grid as the editor's overlay reads it: width and depth
/// in cells (u32, little endian), then one byte of
/// [`PathingGrid`](isoterra::world::PathingGrid) bits per cell, row by row.
/// The rules are the ones the map's exports use.
pub(crate) fn pathing_bytes(
    d: &MapDocument<super::Store>,
) -> Result<Vec<u8>, isoterra::world::WorldError> {
    let p = d.params();
    let rules = isoterra::world::PathingRules::DEFAULT.with_level_height(p.mesh.level_height);
    let grid = isoterra::world::pathing_grid(d.world().layers(), &rules)?;
    let mut out = Vec::with_capacity(8 + grid.cells().len());
    out.extend_from_slice(&grid.width_cells().to_le_bytes());
    out.extend_from_slice(&grid.depth_cells().to_le_bytes());
    out.extend_from_slice(grid.cells());
    Ok(out)
}

/// A map's meshing. A map of at most [`STREAM_MIN_CHUNKS`] chunks goes
/// through the world's rebuild queue within the frame budget (only chunks
/// whose meshes changed get a new version), and those are sent to every
/// client. A larger map is streamed per camera ([`MapStream`]).
pub(crate) struct MapMeshing {
    /// The chunk mesh versions every client holds.
    sent: HashMap<[u32; 2], u64>,
    stream: Option<MapStream>,
}

/// Maps of more chunks than this are streamed per camera: each client gets
/// the chunks near its camera in full and every other chunk as a coarse
/// overview tile, so a 4096² map costs a client megabytes, not the
/// gigabyte its full meshes take.
pub(crate) const STREAM_MIN_CHUNKS: usize = 256;

/// The radius of full detail around a map camera, in chunks, at most.
const DETAIL_CHUNKS: f32 = 6.0;

/// A streamed map's frames wait while a client has this many bytes queued:
/// what comes next is chosen when the client can take it, so a camera that
/// moves meanwhile gets its chunks first, not after a backlog.
const QUEUED_BYTES: usize = 1 << 20;

impl MapMeshing {
    /// Queues every chunk of a small map; starts the stream of a large one.
    pub(crate) fn start(doc: &mut Doc) -> Self {
        let mut stream = None;
        if let AnyDocument::Map(d) = doc.typed_mut() {
            let [cw, cd] = d.world().chunk_count();
            if cw as usize * cd as usize > STREAM_MIN_CHUNKS {
                stream = MapStream::new(d);
            }
            if stream.is_none() {
                d.world_mut().mark_all_dirty();
            }
        }
        MapMeshing {
            sent: HashMap::new(),
            stream,
        }
    }
}

impl Meshing for MapMeshing {
    fn has_work(&self, doc: &Doc, viewers_changed: bool) -> bool {
        let AnyDocument::Map(d) = doc.typed() else {
            return false;
        };
        match &self.stream {
            Some(s) => viewers_changed || s.pending || d.world().dirty_count() > 0,
            None => d.world().stale_count() > 0,
        }
    }

    /// A streamed map waits for a client to take what it was sent.
    fn busy(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.waiting)
    }

    fn tick(
        &mut self,
        doc: &mut Doc,
        clients: &mut BTreeMap<u64, Client>,
        budget: Duration,
        _viewers: Option<Vec<StreamViewer>>,
    ) {
        let AnyDocument::Map(d) = doc.typed_mut() else {
            return;
        };
        if let Some(s) = &mut self.stream {
            s.tick(d, clients, budget);
            return;
        }
        if d.world().stale_count() > 0
            && let Err(e) = d.world_mut().rebuild(Some(budget))
        {
            eprintln!("error: cannot mesh the map: {e}");
        }
        for m in d.world().chunk_meshes() {
            if self.sent.get(&m.coord) == Some(&m.version) {
                continue;
            }
            let is_new = self.sent.insert(m.coord, m.version).is_none();
            let frames = map_frames(m).map(Bytes::from);
            send_frames(clients, &frames, is_new);
        }
    }

    /// The chunks every client was sent (a chunk meshed since is on its way
    /// to everyone with the next tick). A streamed map sends a client its
    /// chunks from the next tick on.
    fn send_world(&self, doc: &Doc, client: &mut Client) {
        let AnyDocument::Map(d) = doc.typed() else {
            return;
        };
        if self.stream.is_some() {
            return;
        }
        for m in d.world().chunk_meshes() {
            if self.sent.get(&m.coord) != Some(&m.version) {
                continue;
            }
            for f in map_frames(m) {
                client.send(Out::Binary(Bytes::from(f)));
            }
            client.chunks += 1;
        }
    }

    fn wanted(&self, doc: &Doc) -> Option<usize> {
        match doc.typed() {
            AnyDocument::Map(d) if self.stream.is_some() => {
                let [cw, cd] = d.world().chunk_count();
                Some(cw as usize * cd as usize)
            }
            AnyDocument::Map(d) => Some(d.world().chunk_meshes().count()),
            _ => None,
        }
    }

    /// A map camera: its target point and its distance, which sets the
    /// radius of full detail (capped at [`DETAIL_CHUNKS`]).
    fn viewer(
        &self,
        id: u64,
        position: [f32; 3],
        _forward: Option<[f32; 3]>,
        _velocity: [f32; 3],
        distance: f32,
    ) -> Option<StreamViewer> {
        self.stream.as_ref()?;
        Some(StreamViewer::new(position, distance.max(1.0)).with_id(id))
    }
}

/// A large map streamed per camera. Every chunk is sent to every client,
/// either in full (within the detail radius of the client's camera) or as
/// its tile of a coarse overview: the map's layers sampled every `step`
/// nodes and meshed by the same mesher, with skirts hanging from the
/// tile's sides so that no gap shows between a tile and a full chunk. A
/// chunk that leaves the radius is sent again as its tile (which replaces
/// the full mesh in the client), one that enters it in full. Edits bump the
/// versions of the chunks they touch; the changed chunks are sent again,
/// at whatever detail each client holds them.
struct MapStream {
    chunk_cells: u32,
    cells: [u32; 2],
    chunks: [u32; 2],
    /// The overview's node spacing in map cells (2, 4 or 8).
    step: u32,
    coarse: MapLayers,
    coarse_options: MapMeshOptions,
    /// Edit count per chunk (absent: 0).
    versions: HashMap<[u32; 2], u64>,
    /// Frames of full chunks wanted by some client, with their version.
    detail: HashMap<[u32; 2], (u64, [Bytes; 2])>,
    /// Frames of overview tiles, with their version.
    tiles: HashMap<[u32; 2], (u64, [Bytes; 2])>,
    /// Per client, what it holds of each chunk: (LOD, version).
    held: HashMap<u64, HashMap<[u32; 2], (u8, u64)>>,
    /// A client still lacks something and the budget ran out (tick again
    /// at once).
    pending: bool,
    /// A client still lacks something and has its queue full (tick again
    /// soon).
    waiting: bool,
    mesher: MapMesher,
}

/// The node spacing of the overview of chunks of `chunk_cells` cells: the
/// largest of 8, 4, 2 that divides them into at least two cells (1 when
/// none does: such a map is sent whole).
fn overview_step(chunk_cells: u32) -> u32 {
    [8, 4, 2]
        .into_iter()
        .find(|s| chunk_cells.is_multiple_of(*s) && chunk_cells / s >= 2)
        .unwrap_or(1)
}

impl MapStream {
    /// The stream of map `d` (`None` if its chunks have no overview or it
    /// cannot be made: the map is then sent whole).
    fn new(d: &mut MapDocument<super::Store>) -> Option<Self> {
        let p = *d.params();
        let step = overview_step(p.chunk_cells);
        if step == 1 {
            // Chunks too small to coarsen (fewer than 4 cells a side, or a
            // prime number of them): sent whole, as a small map is.
            return None;
        }
        let cells = [p.width_cells, p.depth_cells];
        let coarse_cells = cells.map(|c| c.div_ceil(step).max(1));
        // At least one cell, and no more than the map's.
        let coarse = MapLayers::new(coarse_cells[0], coarse_cells[1]).ok()?;
        let mut s = MapStream {
            chunk_cells: p.chunk_cells,
            cells,
            chunks: d.world().chunk_count(),
            step,
            coarse,
            coarse_options: p.mesh.with_cell_size(p.mesh.cell_size * step as f32),
            versions: HashMap::new(),
            detail: HashMap::new(),
            tiles: HashMap::new(),
            held: HashMap::new(),
            pending: true,
            waiting: false,
            mesher: MapMesher::new(),
        };
        s.sample(d.world().layers(), [0, 0], coarse_cells.map(|c| c + 1));
        // Changes before now are in the samples.
        let _ = d.world_mut().take_dirty();
        Some(s)
    }

    /// Copies the map's nodes onto the overview's nodes `from..to` (node
    /// `i` of the overview is node `min(i * step, cells)` of the map).
    fn sample(&mut self, layers: &MapLayers, from: [u32; 2], to: [u32; 2]) {
        let cn = self.coarse.nodes();
        let fine_row = self.cells[0] as usize + 1;
        for z in from[1]..to[1].min(cn[1]) {
            for x in from[0]..to[0].min(cn[0]) {
                let c = z as usize * cn[0] as usize + x as usize;
                let fx = (x * self.step).min(self.cells[0]) as usize;
                let fz = (z * self.step).min(self.cells[1]) as usize;
                let f = fz * fine_row + fx;
                self.coarse.ground[c] = layers.ground[f];
                self.coarse.level[c] = layers.level[f];
                self.coarse.softness[c] = layers.softness[f];
                self.coarse.height[c] = layers.height[f];
                self.coarse.water[c] = layers.water[f];
                self.coarse.splat[c] = layers.splat[f];
                self.coarse.pathing[c] = layers.pathing[f];
            }
        }
    }

    /// The cells of chunk `c` on the map, `[x0, z0, x1, z1)`.
    fn chunk_rect(&self, c: [u32; 2]) -> [u32; 4] {
        let n = self.chunk_cells;
        [
            c[0] * n,
            c[1] * n,
            (c[0] * n + n).min(self.cells[0]),
            (c[1] * n + n).min(self.cells[1]),
        ]
    }

    /// The frames of chunk `c`'s overview tile.
    fn tile_frames(&mut self, c: [u32; 2], level_height: f32) -> Result<[Bytes; 2], String> {
        let [x0, z0, x1, z1] = self.chunk_rect(c);
        let s = self.step;
        let rect = CellRect::new(x0 / s, z0 / s, x1.div_ceil(s), z1.div_ceil(s));
        let mut out = MapMeshOutput::default();
        self.mesher
            .mesh(&self.coarse, rect, &self.coarse_options, &mut out)
            .map_err(|e| e.to_string())?;
        let cs = self.coarse_options.cell_size;
        let bounds = [
            rect.x0 as f32 * cs,
            rect.y0 as f32 * cs,
            rect.x1 as f32 * cs,
            rect.y1 as f32 * cs,
        ];
        add_skirts(&mut out.terrain, bounds, level_height.max(cs));
        Ok(mesh_frames(c, &out, 1).map(Bytes::from))
    }

    fn tick(
        &mut self,
        d: &mut MapDocument<super::Store>,
        clients: &mut BTreeMap<u64, Client>,
        budget: Duration,
    ) {
        let start = std::time::Instant::now();
        // Edits: new versions, and the overview sampled again there.
        for (c, _) in d.world_mut().take_dirty() {
            *self.versions.entry(c).or_insert(0) += 1;
            let [x0, z0, x1, z1] = self.chunk_rect(c);
            let s = self.step;
            self.sample(
                d.world().layers(),
                [x0 / s, z0 / s],
                [x1.div_ceil(s) + 1, z1.div_ceil(s) + 1],
            );
        }
        self.held.retain(|id, _| clients.contains_key(id));
        let level_height = d.params().mesh.level_height;
        let chunk_world = self.chunk_cells as f32 * d.params().mesh.cell_size;
        let mut wanted_detail: std::collections::HashSet<[u32; 2]> = Default::default();
        let mut pending = false;
        let mut waiting = false;
        for (id, client) in clients.iter_mut() {
            let mut held = self.held.remove(id).unwrap_or_default();
            // The detail radius around the camera's target (none before the
            // client's first camera message: tiles from the middle out).
            let (centre, radius) = match &client.viewer {
                Some(v) => (
                    [v.position[0], v.position[2]],
                    v.view_distance.min(DETAIL_CHUNKS * chunk_world),
                ),
                None => (
                    [
                        self.chunks[0] as f32 * chunk_world / 2.0,
                        self.chunks[1] as f32 * chunk_world / 2.0,
                    ],
                    -1.0,
                ),
            };
            let mut order: Vec<(bool, f32, [u32; 2])> =
                Vec::with_capacity((self.chunks[0] * self.chunks[1]) as usize);
            for cz in 0..self.chunks[1] {
                for cx in 0..self.chunks[0] {
                    let dx =
                        ((cx as f32 + 0.5) * chunk_world - centre[0]).abs() - chunk_world / 2.0;
                    let dz =
                        ((cz as f32 + 0.5) * chunk_world - centre[1]).abs() - chunk_world / 2.0;
                    let dist = (dx.max(0.0).powi(2) + dz.max(0.0).powi(2)).sqrt();
                    let full = dist <= radius;
                    if full {
                        wanted_detail.insert([cx, cz]);
                    }
                    let version = self.versions.get(&[cx, cz]).copied().unwrap_or(0);
                    let want = (u8::from(!full), version);
                    if held.get(&[cx, cz]) != Some(&want) {
                        order.push((!full, dist, [cx, cz]));
                    }
                }
            }
            // Full chunks first, nearest first; then the tiles, nearest first.
            order.sort_by(|a, b| {
                (a.0, a.1)
                    .partial_cmp(&(b.0, b.1))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            for (tile, _, c) in order {
                if client.queued_bytes() >= QUEUED_BYTES {
                    waiting = true;
                    break;
                }
                if start.elapsed() >= budget {
                    pending = true;
                    break;
                }
                let version = self.versions.get(&c).copied().unwrap_or(0);
                let frames = if tile {
                    match self.tiles.get(&c) {
                        Some((v, f)) if *v == version => f.clone(),
                        _ => match self.tile_frames(c, level_height) {
                            Ok(f) => {
                                self.tiles.insert(c, (version, f.clone()));
                                f
                            }
                            Err(e) => {
                                eprintln!("error: cannot mesh the map's overview: {e}");
                                continue;
                            }
                        },
                    }
                } else {
                    match self.detail.get(&c) {
                        Some((v, f)) if *v == version => f.clone(),
                        _ => {
                            let mut out = MapMeshOutput::default();
                            if let Err(e) = d.world().mesh_chunk(c, &mut self.mesher, &mut out) {
                                eprintln!("error: cannot mesh the map: {e}");
                                continue;
                            }
                            let f = mesh_frames(c, &out, 0).map(Bytes::from);
                            self.detail.insert(c, (version, f.clone()));
                            f
                        }
                    }
                };
                for f in frames {
                    client.send(Out::Binary(f));
                }
                if held.insert(c, (u8::from(tile), version)).is_none() {
                    client.chunks += 1;
                }
            }
            self.held.insert(*id, held);
        }
        // Full meshes no camera wants any more are let go.
        self.detail.retain(|c, _| wanted_detail.contains(c));
        self.pending = pending;
        self.waiting = waiting;
    }
}

/// Hangs a skirt from the sides of a tile's terrain: each triangle edge on
/// the tile's bounds (`[x0, z0, x1, z1]` in world units) gets a quad down
/// to `drop` below it, so that the tile shows no gap beside a chunk meshed
/// in full.
fn add_skirts(t: &mut isoterra::mesh::MapMeshBuffers, bounds: [f32; 4], drop: f32) {
    let on_side = |a: [f32; 3], b: [f32; 3]| {
        (a[0] == bounds[0] && b[0] == bounds[0])
            || (a[0] == bounds[2] && b[0] == bounds[2])
            || (a[2] == bounds[1] && b[2] == bounds[1])
            || (a[2] == bounds[3] && b[2] == bounds[3])
    };
    let triangles = t.indices.len() / 3;
    for k in 0..triangles {
        for e in 0..3 {
            let (i, j) = (t.indices[3 * k + e], t.indices[3 * k + (e + 1) % 3]);
            let (a, b) = (t.positions[i as usize], t.positions[j as usize]);
            if !on_side(a, b) {
                continue;
            }
            let base = t.positions.len() as u32;
            for &v in &[i, j] {
                let v = v as usize;
                let mut p = t.positions[v];
                p[1] -= drop;
                t.positions.push(p);
                t.normals.push(t.normals[v]);
                t.splat.push(t.splat[v]);
                t.blend.push(t.blend[v]);
                t.splat_node.push(t.splat_node[v]);
            }
            t.indices
                .extend_from_slice(&[j, i, base, j, base, base + 1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::overview_step;

    #[test]
    fn overview_steps_divide_chunks_into_at_least_two_cells() {
        for (cells, step) in [
            (64, 8),
            (16, 8),
            (12, 4),
            (8, 4),
            (6, 2),
            (4, 2),
            (5, 1),
            (7, 1),
        ] {
            assert_eq!(overview_step(cells), step, "{cells} cells a chunk");
        }
        for cells in 4..=512 {
            let s = overview_step(cells);
            assert!(s == 1 || (cells % s == 0 && cells / s >= 2), "{cells}: {s}");
        }
    }
}
