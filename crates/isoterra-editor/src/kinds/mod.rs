//! What the browser needs of the open world, per kind: its description,
//! tool palette, limits and export list for `welcome`, the chunk frames of
//! its meshes, and downloads. Everything else — strokes, history, exports,
//! validation — is the kind layer's ([`isoterra::kind::Document`]).

mod heightmap;
mod map;
mod side2d;
mod voxel;

use std::collections::BTreeMap;
use std::io::{Cursor, Write};
use std::path::Path;
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::{mpsc, oneshot};

use isoterra::kind::{
    AnyDocument, Document, ExportFile, ExportFormat, ExportRequest, FileRole, KindError, NewWorld,
    WorldKind,
};
use isoterra::store::{ChunkStore, PgStore, StoreError, WorldFile, is_postgres_url};
use serde_json::{Value, json};
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use crate::EditorError;
use crate::protocol::Reject;
use crate::state::{Client, ExportSlot};
use crate::stream::{HeightFrames, StreamMeshing, VoxelFrames};
use isoterra::world::StreamViewer;

pub(crate) use heightmap::heightmap_frame;
pub(crate) use map::pathing_bytes;
pub(crate) use voxel::voxel_frame;

/// Where the open world is kept: a world file, or a world on a PostgreSQL
/// server (`postgres://USER@HOST/DB?world=NAME`).
pub(crate) type Store = Box<dyn ChunkStore + Send>;

/// The open world.
pub(crate) type Doc = Document<Store>;

/// Whether `location` names a world on a PostgreSQL server.
pub(crate) fn is_url(location: &Path) -> bool {
    location.to_str().is_some_and(is_postgres_url)
}

/// Opens the world at `location` (a world file or a server URL), which
/// must exist.
///
/// The world is read as of one revision ([`Document::open_with`]).
pub(crate) fn open(location: &Path) -> Result<Doc, KindError> {
    if let Some(url) = location.to_str().filter(|l| is_postgres_url(l)) {
        return Document::open_with(|| Ok(Box::new(PgStore::open_existing(url)?) as Store));
    }
    // The file's kind first, as `Document::open` checks it, so a file that
    // is not a world is named as such.
    isoterra::store::detect_kind(location)?;
    Document::open_with(|| Ok(Box::new(WorldFile::open(location)?) as Store))
}

/// Closes the world (every open stroke ends first).
pub(crate) fn close(doc: Doc) {
    drop(doc.into_store());
}

/// Largest coordinate a dab or camera may name.
pub(crate) const COORD_LIMIT: f64 = isoterra::kind::schema::COORD_LIMIT;
/// Largest view distance.
pub(crate) const VIEW_DISTANCE: [f64; 2] = [1.0, 4000.0];

/// A download.
pub(crate) struct Download {
    pub body: DownloadBody,
    pub content_type: &'static str,
    pub file_name: String,
}

/// A download's bytes: made whole, or streamed as the export encodes them
/// (mesh files: a large world's glb is never held whole). An `Err` in the
/// stream means the export failed after the response began.
pub(crate) enum DownloadBody {
    Bytes(Vec<u8>),
    Stream(mpsc::Receiver<Result<Bytes, std::io::Error>>),
}

/// Bytes a streamed download sends at a time, and how many such blocks may
/// wait for a slow client before the export waits too.
const STREAM_BLOCK: usize = 256 << 10;
const STREAM_QUEUE: usize = 4;

/// The protocol's error of a kind-layer error.
pub(crate) fn reject(e: KindError) -> Reject {
    match e {
        KindError::UnknownTool { .. } => Reject::new("unknown_tool", e.to_string()),
        KindError::UnknownStroke => Reject::new("unknown_stroke", e.to_string()),
        KindError::TooLarge(m) => Reject::new("too_large", m),
        KindError::Store(StoreError::World(w)) => Reject::invalid(w.to_string()),
        KindError::Store(s) => Reject::new("storage", s.to_string()),
        KindError::Export(x) => Reject::new("storage", x.to_string()),
        other => Reject::invalid(other.to_string()),
    }
}

/// Opens `location` (a world file or a server URL), or creates the default
/// world there (a map of the default preset) when it is missing.
pub(crate) fn open_or_create(location: &Path) -> Result<Doc, EditorError> {
    let default = NewWorld::new(WorldKind::Map).with_seed(isoterra::world::MapParams::DEFAULT.seed);
    if let Some(url) = location.to_str().filter(|l| is_postgres_url(l)) {
        let store = PgStore::open(url)?;
        let store: Store = Box::new(store);
        if store.meta_entry("kind")?.is_none() {
            return Ok(Document::create_in(store, &default)?);
        }
        drop(store);
        return Ok(open(location)?);
    }
    if !location.exists() {
        Document::create(location, &default)?.close()?;
    }
    Ok(open(location)?)
}

/// How the world thread meshes one kind's world and sends its chunks to
/// the browsers, written in the kind's file: bounded kinds mesh through
/// the world's rebuild queue within the frame budget and send every chunk
/// whose mesh changed (a large map is sent per client around its camera,
/// with a coarse overview elsewhere); endless kinds drive the shared stream
/// with every client's camera.
pub(crate) trait Meshing: Send {
    /// Whether there is meshing or sending to do now; `viewers_changed`
    /// says a camera moved, came or went.
    fn has_work(&self, doc: &Doc, viewers_changed: bool) -> bool;

    /// Whether chunks are being built on other threads (poll again soon).
    fn busy(&self) -> bool {
        false
    }

    /// Meshes what is dirty within `budget` and sends what changed to the
    /// clients. `viewers` are the cameras, when they changed.
    fn tick(
        &mut self,
        doc: &mut Doc,
        clients: &mut BTreeMap<u64, Client>,
        budget: Duration,
        viewers: Option<Vec<StreamViewer>>,
    );

    /// Sends a newly welcomed client what is meshed already (bounded kinds;
    /// a stream sends a client its chunks with its first camera).
    fn send_world(&self, _doc: &Doc, _client: &mut Client) {}

    /// Chunks a client should hold once everything is sent (`None` before
    /// a stream has started).
    fn wanted(&self, doc: &Doc) -> Option<usize>;

    /// Endless kinds: the size of a stream chunk, which cameras' speeds are
    /// measured in; `None` when cameras drive nothing.
    fn stream_chunk(&self) -> Option<f32> {
        None
    }

    /// Endless kinds: the viewer of client `id`'s camera.
    fn viewer(
        &self,
        _id: u64,
        _position: [f32; 3],
        _forward: Option<[f32; 3]>,
        _velocity: [f32; 3],
        _distance: f32,
    ) -> Option<StreamViewer> {
        None
    }

    /// The view distance of a camera that names none.
    fn view_distance(&self, _doc: &Doc) -> f32 {
        128.0
    }
}

/// Starts meshing the world now open: a bounded world is queued whole, an
/// endless world's stream starts.
pub(crate) fn meshing(doc: &mut Doc) -> Box<dyn Meshing> {
    match doc.kind() {
        WorldKind::Side2d => Box::new(side2d::Side2dMeshing::start(doc)),
        WorldKind::Heightmap => Box::new(StreamMeshing::<HeightFrames>::start(doc)),
        WorldKind::Voxel => Box::new(StreamMeshing::<VoxelFrames>::start(doc)),
        WorldKind::Map => Box::new(map::MapMeshing::start(doc)),
    }
}

/// Sends `frames` to every client; a chunk `is_new` to them counts as one
/// more held.
pub(crate) fn send_frames(clients: &mut BTreeMap<u64, Client>, frames: &[Bytes], is_new: bool) {
    for c in clients.values_mut() {
        for f in frames {
            c.send(crate::state::Out::Binary(f.clone()));
        }
        if is_new {
            c.chunks += 1;
        }
    }
}

/// The `world` object of `welcome` and `/api/info`.
pub(crate) fn world_json(doc: &Doc, file: &Path) -> Value {
    let file = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut v = match doc.typed() {
        AnyDocument::Side2d(d) => side2d::world_json(d),
        AnyDocument::Heightmap(d) => heightmap::world_json(d),
        AnyDocument::Voxel(d) => voxel::world_json(d),
        AnyDocument::Map(d) => map::world_json(d),
    };
    v["kind"] = json!(doc.kind().name());
    v["file"] = json!(file);
    v
}

/// The `tools` list of `welcome`, from the kind layer's schema.
pub(crate) fn tools_json(doc: &Doc) -> Value {
    Value::Array(doc.tools().iter().map(|t| t.json()).collect())
}

/// The `limits` object of `welcome`.
pub(crate) fn limits_json(doc: &Doc) -> Value {
    let l = doc.limits();
    json!({
        "radius": l.radius, "strength": l.strength,
        "dabs_per_stroke": l.dabs_per_stroke, "stroke_nodes": l.stroke_nodes,
        "message_bytes": crate::MAX_MESSAGE_BYTES,
        "coordinate": l.coordinate, "view_distance": VIEW_DISTANCE,
    })
}

/// What a download holds: one file of an export, or all of them in a zip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The export's file of this role.
    File(FileRole),
    /// Every file of the export, named as the export names them, in one zip
    /// archive: a map and the files it refers to, together.
    Zip,
}

/// The downloads of this kind: each export format; then, for a format
/// whose export makes files beside its main one, each of those as a
/// download of its own, named `FORMAT-ROLE` (`png-layers-sidecar`,
/// `obj-mtl`; a side-view mesh's colliders are left out: they are the
/// `colliders` download), and all of them in one zip, `FORMAT-zip` (a Tiled
/// map with its tileset image, an OBJ with its `.mtl`).
fn downloads(doc: &Doc) -> Vec<(String, ExportFormat, Part)> {
    let mut out = Vec::new();
    for &f in doc.exports() {
        out.push((f.name().to_string(), f, Part::File(FileRole::Main)));
        let companions = f.companions(doc.kind());
        for &role in companions {
            if role != FileRole::Colliders {
                out.push((format!("{}-{}", f.name(), role.name()), f, Part::File(role)));
            }
        }
        if !companions.is_empty() {
            out.push((format!("{}-zip", f.name()), f, Part::Zip));
        }
    }
    out
}

/// The files of an export in one zip archive (deflated), under the names
/// the export gives them, main file first.
fn zip_files(files: &[ExportFile]) -> Result<Vec<u8>, Reject> {
    let fail = |e: zip::result::ZipError| Reject::new("storage", format!("zip: {e}"));
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for f in files {
        zip.start_file(f.file_name, options).map_err(fail)?;
        zip.write_all(&f.bytes).map_err(|e| fail(e.into()))?;
    }
    Ok(zip.finish().map_err(fail)?.into_inner())
}

/// The names of this kind's downloads (see [`downloads`]).
pub(crate) fn exports(doc: &Doc) -> Vec<String> {
    downloads(doc).into_iter().map(|(n, _, _)| n).collect()
}

/// The region an endless world's download covers when none is given.
fn default_region(kind: WorldKind) -> Option<&'static str> {
    match kind {
        WorldKind::Heightmap => Some("-128,-128,128,128"),
        WorldKind::Voxel => Some("-32,-32,-32,32,32,32"),
        _ => None,
    }
}

/// A download of the open world in `format`; `region` is the optional
/// `region` query value. The answer goes to `reply`: at once for a file made
/// whole, or, for a mesh file, as soon as its first bytes are encoded (an
/// export refused before that is answered with its error). `slot` is
/// dropped just before the last answer leaves.
pub(crate) fn download(
    doc: &mut Doc,
    format: &str,
    region: Option<&str>,
    slot: ExportSlot,
    reply: oneshot::Sender<Result<Download, Reject>>,
) {
    let (req, part) = match plan(doc, format, region) {
        Ok(p) => p,
        Err(r) => {
            drop(slot);
            let _ = reply.send(Err(r));
            return;
        }
    };
    let streamed = match part {
        Part::File(FileRole::Main) => req.format.mesh_file(doc.kind()),
        _ => None,
    };
    let Some((content_type, file_name)) = streamed else {
        let answer = export(doc, &req, part);
        drop(slot);
        let _ = reply.send(answer);
        return;
    };
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let mut w = StreamWriter {
        block: Vec::with_capacity(STREAM_BLOCK),
        tx,
        start: Some((
            reply,
            Download {
                body: DownloadBody::Stream(rx),
                content_type,
                file_name: file_name.to_string(),
            },
        )),
    };
    let done = doc.export_to(&req, &mut w);
    drop(slot);
    match done {
        Ok(_) => {
            let _ = w.send_block();
        }
        Err(e) => match w.start.take() {
            Some((reply, _)) => {
                let _ = reply.send(Err(reject(e)));
            }
            None => {
                let _ =
                    w.tx.blocking_send(Err(std::io::Error::other(e.to_string())));
            }
        },
    }
}

/// The request and the part of its files that the download `format` names.
fn plan(doc: &Doc, format: &str, region: Option<&str>) -> Result<(ExportRequest, Part), Reject> {
    let listed = downloads(doc);
    let Some(&(_, parsed, part)) = listed.iter().find(|(n, _, _)| n == format) else {
        let names: Vec<&str> = listed.iter().map(|(n, _, _)| n.as_str()).collect();
        return Err(Reject::invalid(format!(
            "format `{format}` does not apply to {} worlds (formats: {})",
            doc.kind(),
            names.join(", ")
        )));
    };
    // An imported heightmap exports its own extent when no region is given.
    let imported = matches!(doc.typed(), AnyDocument::Heightmap(d) if d.params().extent.is_some());
    let region = region
        .or_else(|| default_region(doc.kind()).filter(|_| !imported))
        .filter(|_| !doc.kind().is_bounded());
    Ok((
        ExportRequest::new(parsed).with_region(region.map(str::to_string)),
        part,
    ))
}

/// A download made whole.
fn export(doc: &mut Doc, req: &ExportRequest, part: Part) -> Result<Download, Reject> {
    let out = doc.export(req).map_err(reject)?;
    let role = match part {
        Part::File(role) => role,
        Part::Zip => {
            let stem = out.main().file_name.split('.').next().unwrap_or("world");
            return Ok(Download {
                body: DownloadBody::Bytes(zip_files(&out.files)?),
                content_type: "application/zip",
                file_name: format!("{stem}.zip"),
            });
        }
    };
    let file = out
        .files
        .into_iter()
        .find(|f| f.role == role)
        .ok_or_else(|| Reject::new("storage", "the export made no such file"))?;
    Ok(Download {
        body: DownloadBody::Bytes(file.bytes),
        content_type: file.content_type,
        file_name: file.file_name.to_string(),
    })
}

/// Hands an export's bytes to a streamed download in blocks, and the
/// download itself to the waiting request with the first block.
struct StreamWriter {
    block: Vec<u8>,
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
    start: Option<(oneshot::Sender<Result<Download, Reject>>, Download)>,
}

impl StreamWriter {
    /// Answers the request if that is still to do, then sends the block
    /// (waiting while the client is behind); fails when the client is gone.
    fn send_block(&mut self) -> std::io::Result<()> {
        if let Some((reply, download)) = self.start.take()
            && reply.send(Ok(download)).is_err()
        {
            return Err(std::io::Error::other("the request is gone"));
        }
        if !self.block.is_empty() {
            let full = std::mem::replace(&mut self.block, Vec::with_capacity(STREAM_BLOCK));
            self.tx
                .blocking_send(Ok(Bytes::from(full)))
                .map_err(|_| std::io::Error::other("the download was closed"))?;
        }
        Ok(())
    }
}

impl Write for StreamWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.block.extend_from_slice(buf);
        if self.block.len() >= STREAM_BLOCK {
            self.send_block()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
