//! The world thread: it owns the document, applies every client's commands
//! in arrival order, remeshes dirty chunks within a time budget and sends
//! frames and replies to the clients.
//!
//! Strokes go through the kind layer's document: their dabs are live
//! previews there (so every client sees them at once), and a stroke that
//! ends is recorded on its own, one durable transaction, while the other
//! open strokes stay shown. The file therefore always holds exactly the
//! finished strokes, in the order they finished.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use isoterra::kind::{AnyDocument, NewWorld, Recipe, StrokeId, StrokeSpec, WorldKind};
use isoterra::world::StreamViewer;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::oneshot;

use crate::kinds::{self, Doc, Download, reject};
use crate::motion::Motion;
use crate::outbox::Outbox;
use crate::protocol::{self, ClientMsg, Reject, error_json};
use crate::stream::{self, HeightStream, Polled, Stream, VoxelStream};
use crate::{EditorError, PROTOCOL_VERSION};

/// What a connection sends its writer.
#[derive(Debug, Clone)]
pub(crate) enum Out {
    Text(String),
    Binary(Bytes),
    Close(u16, String),
}

/// A command for the world thread.
pub(crate) enum Command {
    Connect {
        id: u64,
        tx: Arc<Outbox>,
    },
    Disconnect {
        id: u64,
    },
    Message {
        id: u64,
        text: String,
    },
    Export {
        format: String,
        region: Option<String>,
        reply: oneshot::Sender<Result<Download, Reject>>,
    },
    Info {
        reply: oneshot::Sender<Value>,
    },
    /// The map's pathing grid for the overlay (see `kinds::pathing_bytes`).
    Pathing {
        reply: oneshot::Sender<Result<Vec<u8>, Reject>>,
    },
    Shutdown,
}

/// Starts the world thread.
pub(crate) fn spawn(
    doc: Doc,
    path: PathBuf,
    budget: Duration,
) -> Result<(Sender<Command>, std::thread::JoinHandle<()>), EditorError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("isoterra-world".into())
        .spawn(move || {
            let mut world = World::new(doc, path, budget);
            world.run(rx);
        })
        .map_err(EditorError::Io)?;
    Ok((tx, handle))
}

/// A stroke being drawn: its id in the document, and the request id of
/// its `stroke_begin`.
struct OpenStroke {
    id: StrokeId,
    req: Option<String>,
}

#[derive(Default)]
struct Client {
    tx: Option<Arc<Outbox>>,
    strokes: HashMap<String, OpenStroke>,
    /// Heightmap and voxel: the client's camera as a viewer of the world's
    /// shared stream, and whether it was sent the chunks shown so far.
    viewer: Option<StreamViewer>,
    /// The camera's motion, for prefetching along it.
    motion: Motion,
    watching: bool,
    chunks: usize,
}

impl Client {
    fn send(&self, out: Out) {
        if let Some(tx) = &self.tx {
            tx.push(out);
        }
    }

    fn text(&self, v: &Value) {
        self.send(Out::Text(v.to_string()));
    }
}

struct World {
    doc: Option<Doc>,
    path: PathBuf,
    budget: Duration,
    clients: BTreeMap<u64, Client>,
    /// Side view: the chunk versions every client holds.
    side_sent: HashMap<[u32; 2], u64>,
    /// Voxel and heightmap: the stream every client's camera drives, and
    /// whether the cameras changed since it last heard of them.
    vx: Option<VoxelStream>,
    hm: Option<HeightStream>,
    viewers_changed: bool,
    /// Map: the chunk mesh versions every client holds.
    map_sent: HashMap<[u32; 2], u64>,
    remesh_ms: f64,
    last_status: Instant,
    shutdown: bool,
    /// Exports running on threads of their own.
    exports: Arc<AtomicUsize>,
}

/// Exports that may run at once; a download asked for beyond them is
/// refused as busy (each holds a world handle and its meshes in memory).
const MAX_EXPORTS: usize = 2;

/// Voxel: loaded chunks above which those far from every camera are dropped.
const VOXEL_KEEP_CHUNKS: usize = 4096;
/// How long the world thread sleeps between polls while streamed chunks
/// are being built and nothing else happens.
const STREAM_POLL: Duration = Duration::from_millis(2);
/// Strokes one connection may hold open at once.
const MAX_OPEN_STROKES: usize = 16;
/// Time between `status` messages.
const STATUS_EVERY: Duration = Duration::from_millis(500);

impl World {
    fn new(doc: Doc, path: PathBuf, budget: Duration) -> Self {
        World {
            doc: Some(doc),
            path,
            budget,
            clients: BTreeMap::new(),
            side_sent: HashMap::new(),
            vx: None,
            hm: None,
            viewers_changed: false,
            map_sent: HashMap::new(),
            remesh_ms: 0.0,
            last_status: Instant::now(),
            shutdown: false,
            exports: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn run(&mut self, rx: Receiver<Command>) {
        self.start_meshing();
        while !self.shutdown {
            let wait = if self.has_work() {
                Duration::ZERO
            } else if self.vx.as_ref().is_some_and(Stream::busy)
                || self.hm.as_ref().is_some_and(Stream::busy)
            {
                STREAM_POLL
            } else {
                Duration::from_millis(50)
            };
            match rx.recv_timeout(wait) {
                Ok(cmd) => {
                    self.handle(cmd);
                    // Take what else is waiting, up to a slice of the budget.
                    let start = Instant::now();
                    while start.elapsed() < self.budget {
                        match rx.try_recv() {
                            Ok(cmd) => self.handle(cmd),
                            Err(_) => break,
                        }
                        if self.shutdown {
                            break;
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if self.shutdown {
                break;
            }
            self.tick();
        }
        // Strokes still open are finished, so that nothing drawn is lost.
        let ids: Vec<u64> = self.clients.keys().copied().collect();
        for id in ids {
            if self.doc.is_some() {
                self.end_all_strokes(id);
            }
            if let Some(c) = self.clients.get(&id) {
                c.send(Out::Close(1001, "server shutting down".into()));
            }
        }
        self.clients.clear();
        if let Some(d) = self.doc.take() {
            let _ = d.close();
        }
    }

    /// Queues the whole of a bounded world for meshing; starts the stream
    /// of an endless voxel world.
    fn start_meshing(&mut self) {
        self.vx = None;
        self.hm = None;
        self.viewers_changed = false;
        match self.doc.as_mut().map(Doc::typed_mut) {
            Some(AnyDocument::Map(d)) => d.world_mut().mark_all_dirty(),
            Some(AnyDocument::Voxel(d)) => match VoxelStream::voxel(d.world()) {
                Ok(vx) => self.vx = Some(vx),
                Err(e) => eprintln!("error: cannot stream the voxel world: {e}"),
            },
            Some(AnyDocument::Heightmap(d)) => {
                // Everything the stream needs is in its own source.
                let _ = d.world_mut().take_dirty();
                match HeightStream::heightmap(d.world(), d.info().height_range) {
                    Ok(hm) => self.hm = Some(hm),
                    Err(e) => eprintln!("error: cannot stream the heightmap world: {e}"),
                }
            }
            _ => {}
        }
    }

    fn doc(&mut self) -> &mut Doc {
        self.doc
            .as_mut()
            .expect("the world thread always holds a document between commands")
    }

    fn doc_ref(&self) -> &Doc {
        self.doc
            .as_ref()
            .expect("the world thread always holds a document between commands")
    }

    fn has_work(&self) -> bool {
        match self.doc_ref().typed() {
            AnyDocument::Side2d(d) => d.world().dirty_count() > 0,
            AnyDocument::Heightmap(d) => {
                d.world().dirty_count() > 0
                    || self.viewers_changed
                    || self.hm.as_ref().is_some_and(Stream::has_events)
            }
            AnyDocument::Voxel(d) => {
                d.world().dirty_count() > 0
                    || self.viewers_changed
                    || self.vx.as_ref().is_some_and(Stream::has_events)
            }
            AnyDocument::Map(d) => d.world().stale_count() > 0,
        }
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Connect { id, tx } => self.connect(id, tx),
            Command::Disconnect { id } => {
                self.end_all_strokes(id);
                let removed = self.clients.remove(&id);
                if removed.is_some_and(|c| c.viewer.is_some()) {
                    self.viewers_changed = true;
                }
            }
            Command::Message { id, text } => self.message(id, &text),
            Command::Export {
                format,
                region,
                reply,
            } => {
                // Off the world thread: a large export would hold up every
                // stroke for as long as it meshes. It reads the world
                // through a handle of its own, which sees every stroke
                // acknowledged so far (each is committed before its ack).
                let running = Arc::clone(&self.exports);
                if running.fetch_add(1, Ordering::AcqRel) >= MAX_EXPORTS {
                    running.fetch_sub(1, Ordering::AcqRel);
                    let _ = reply.send(Err(Reject::new(
                        "busy",
                        format!("{MAX_EXPORTS} exports are running; try again when one is done"),
                    )));
                    return;
                }
                let path = self.path.clone();
                let spawned = std::thread::Builder::new()
                    .name("isoterra-export".into())
                    .spawn(move || {
                        match Doc::open(&path) {
                            Ok(mut doc) => {
                                kinds::download(&mut doc, &format, region.as_deref(), reply);
                            }
                            Err(e) => {
                                let _ = reply.send(Err(kinds::reject(e)));
                            }
                        }
                        running.fetch_sub(1, Ordering::AcqRel);
                    });
                if spawned.is_err() {
                    self.exports.fetch_sub(1, Ordering::AcqRel);
                }
            }
            Command::Info { reply } => {
                let doc = self.doc_ref();
                let mut v = kinds::world_json(doc, &self.path);
                v["content_hash"] = json!(doc.content_hash());
                v["history"] = doc.history().json();
                v["recipe"] = doc.recipe().to_json_value();
                let _ = reply.send(v);
            }
            Command::Pathing { reply } => {
                let result = match self.doc.as_ref().map(Doc::typed) {
                    Some(AnyDocument::Map(d)) => {
                        kinds::pathing_bytes(d).map_err(|e| Reject::invalid(e.to_string()))
                    }
                    _ => Err(Reject::invalid("only map worlds have a pathing grid")),
                };
                let _ = reply.send(result);
            }
            Command::Shutdown => self.shutdown = true,
        }
    }

    fn welcome(&self, id: u64) -> Value {
        let doc = self.doc_ref();
        json!({
            "type": "welcome",
            "protocol": PROTOCOL_VERSION,
            "client_id": id,
            "kind": doc.kind().name(),
            "world": kinds::world_json(doc, &self.path),
            "tools": kinds::tools_json(doc),
            "shapes": isoterra::kind::schema::shapes(doc.kind()),
            "detail": crate::assets::detail_json(),
            "limits": kinds::limits_json(doc),
            "exports": kinds::exports(doc),
            "history": doc.history().json(),
        })
    }

    fn connect(&mut self, id: u64, tx: Arc<Outbox>) {
        let client = Client {
            tx: Some(tx),
            ..Default::default()
        };
        client.text(&self.welcome(id));
        self.clients.insert(id, client);
        self.send_world_to(id);
    }

    /// Sends a newly welcomed client what the bounded kinds already meshed.
    fn send_world_to(&mut self, id: u64) {
        if let (Some(AnyDocument::Map(d)), Some(client)) =
            (self.doc.as_ref().map(Doc::typed), self.clients.get_mut(&id))
        {
            for m in d.world().chunk_meshes() {
                if self.map_sent.get(&m.coord) != Some(&m.version) {
                    continue;
                }
                for f in kinds::map_frames(m) {
                    client.send(Out::Binary(Bytes::from(f)));
                }
                client.chunks += 1;
            }
            return;
        }
        let Some(AnyDocument::Side2d(d)) = self.doc.as_ref().map(Doc::typed) else {
            return;
        };
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        for chunk in d.world().chunks() {
            if chunk.is_dirty() || chunk.version == 0 {
                continue;
            }
            for f in kinds::side2d_frames(d, chunk) {
                client.send(Out::Binary(Bytes::from(f)));
            }
            client.chunks += 1;
        }
    }

    fn reply_error(&self, id: u64, req: Option<&str>, stroke: Option<&str>, r: &Reject) {
        if let Some(c) = self.clients.get(&id) {
            c.send(Out::Text(error_json(req, stroke, r)));
        }
    }

    fn message(&mut self, id: u64, text: &str) {
        let (req, msg) = protocol::parse(text);
        let msg = match msg {
            Ok(m) => m,
            Err(r) => return self.reply_error(id, req.as_deref(), None, &r),
        };
        let stroke_of = match &msg {
            ClientMsg::StrokeBegin(b) => Some(b.stroke.clone()),
            ClientMsg::Dab { stroke, .. } | ClientMsg::StrokeEnd { stroke } => Some(stroke.clone()),
            _ => None,
        };
        if let Err(r) = self.apply(id, req.clone(), msg) {
            self.reply_error(id, req.as_deref(), stroke_of.as_deref(), &r);
        }
    }

    fn apply(&mut self, id: u64, req: Option<String>, msg: ClientMsg) -> Result<(), Reject> {
        match msg {
            ClientMsg::Hello => Ok(()),
            ClientMsg::Camera {
                position,
                forward,
                view_distance,
            } => {
                let p = protocol::point("position", position, kinds::COORD_LIMIT)?;
                let forward = match forward {
                    Some(f) => Some(protocol::point("forward", f, kinds::COORD_LIMIT)?),
                    None => None,
                };
                let vd = match view_distance {
                    Some(v) => protocol::ranged(
                        "view_distance",
                        v,
                        kinds::VIEW_DISTANCE[0],
                        kinds::VIEW_DISTANCE[1],
                    )?,
                    None => match self.doc_ref().typed() {
                        AnyDocument::Heightmap(d) => d.params().view_distance,
                        _ => 128.0,
                    },
                };
                // The velocity from this camera's previous messages.
                let chunk = match (&self.vx, &self.hm) {
                    (Some(vx), _) => Some(vx.chunk_size()),
                    (_, Some(hm)) => Some(hm.chunk_size()),
                    _ => None,
                };
                let velocity = match (chunk, self.clients.get_mut(&id)) {
                    (Some(n), Some(c)) => c.motion.observe(
                        p,
                        Instant::now(),
                        stream::MAX_SPEED_CHUNKS * n,
                        stream::TELEPORT_SPEED_CHUNKS * n,
                    ),
                    _ => [0.0; 3],
                };
                let viewer = match (&self.vx, &self.hm) {
                    (Some(vx), _) => Some(vx.viewer(id, p, forward, velocity, vd)),
                    (_, Some(hm)) => Some(hm.viewer(id, p, forward, velocity, vd)),
                    _ => None,
                };
                if let Some(c) = self.clients.get_mut(&id)
                    && viewer.is_some()
                {
                    c.viewer = viewer;
                    self.viewers_changed = true;
                }
                Ok(())
            }
            ClientMsg::StrokeBegin(b) => {
                let spec = StrokeSpec {
                    tool: b.tool.clone(),
                    radius: b.radius,
                    strength: b.strength,
                    shape: b.shape.clone(),
                    params: b.params.clone().unwrap_or_default(),
                };
                let template = self.doc_ref().template(&spec).map_err(reject)?;
                let client = self
                    .clients
                    .get(&id)
                    .ok_or_else(|| Reject::bad_message("not connected"))?;
                if client.strokes.contains_key(&b.stroke) {
                    return Err(Reject::invalid(format!(
                        "stroke `{}` is already open",
                        b.stroke
                    )));
                }
                if client.strokes.len() >= MAX_OPEN_STROKES {
                    return Err(Reject::new(
                        "busy",
                        format!(
                            "at most {MAX_OPEN_STROKES} strokes may be open at once: end one first"
                        ),
                    ));
                }
                let stroke_id = self.doc().begin_template(template);
                if let Some(client) = self.clients.get_mut(&id) {
                    client
                        .strokes
                        .insert(b.stroke, OpenStroke { id: stroke_id, req });
                }
                Ok(())
            }
            ClientMsg::Dab { stroke, at } => {
                let Some(open) = self.clients.get(&id).and_then(|c| c.strokes.get(&stroke)) else {
                    return Err(Reject::new(
                        "unknown_stroke",
                        format!("no open stroke `{stroke}`"),
                    ));
                };
                let stroke_id = open.id;
                self.doc().dab(stroke_id, at).map_err(reject)
            }
            ClientMsg::StrokeEnd { stroke } => {
                if !self
                    .clients
                    .get(&id)
                    .is_some_and(|c| c.strokes.contains_key(&stroke))
                {
                    return Err(Reject::new(
                        "unknown_stroke",
                        format!("no open stroke `{stroke}`"),
                    ));
                }
                self.end_stroke(id, &stroke, req);
                Ok(())
            }
            ClientMsg::Undo | ClientMsg::Redo => {
                let undo = matches!(msg, ClientMsg::Undo);
                let result = if undo {
                    self.doc().undo()
                } else {
                    self.doc().redo()
                };
                let stroke = match result {
                    Ok(s) => s,
                    Err(e) if is_conflict(&e) => {
                        self.reply_error(id, req.as_deref(), None, &reject(e));
                        self.reload();
                        return Ok(());
                    }
                    Err(e) => return Err(reject(e)),
                };
                let action = if undo { "undo" } else { "redo" };
                self.broadcast_history(id, action, stroke, req.as_deref());
                Ok(())
            }
            ClientMsg::NewWorld(nw) => self.new_world(&nw),
        }
    }

    fn end_stroke(&mut self, id: u64, stroke: &str, req: Option<String>) {
        let Some(open) = self
            .clients
            .get_mut(&id)
            .and_then(|c| c.strokes.remove(stroke))
        else {
            return;
        };
        let result = self.doc().end_stroke(open.id);
        let req = req.or(open.req);
        match result {
            Ok(done) => {
                let (stroke_id, changed) = (done.id, done.changed_nodes);
                let history = self.doc_ref().history();
                if let Some(c) = self.clients.get(&id) {
                    let mut ack = json!({
                        "type": "ack", "stroke": stroke, "id": stroke_id,
                        "changed_nodes": changed, "history": history.json(),
                    });
                    if let Some(r) = &req {
                        ack["req"] = json!(r);
                    }
                    c.text(&ack);
                }
                if stroke_id.is_some() {
                    let msg = self.history_json(id, "stroke", stroke_id, None);
                    for (cid, c) in &self.clients {
                        if *cid != id {
                            c.text(&msg);
                        }
                    }
                }
            }
            Err(e) => {
                let changed_elsewhere = is_conflict(&e);
                self.reply_error(id, req.as_deref(), Some(stroke), &reject(e));
                if changed_elsewhere {
                    self.reload();
                }
            }
        }
    }

    /// Another program wrote to the file: reads the world from it again and
    /// welcomes every client to it, so that editing goes on (open strokes
    /// are dropped; nothing acknowledged is lost, it is all in the file).
    fn reload(&mut self) {
        for c in self.clients.values_mut() {
            for (_, open) in c.strokes.drain() {
                if let Some(doc) = self.doc.as_mut() {
                    doc.cancel_stroke(open.id);
                }
            }
        }
        if let Some(d) = self.doc.take() {
            let _ = d.close();
        }
        match kinds::open_or_create(&self.path) {
            Ok(doc) => self.doc = Some(doc),
            Err(err) => {
                eprintln!("error: cannot reopen the world file: {err}");
                self.shutdown = true;
                return;
            }
        }
        self.restart_clients();
    }

    /// Every client starts over with the world now open: a new welcome
    /// and its meshes.
    fn restart_clients(&mut self) {
        self.side_sent.clear();
        self.map_sent.clear();
        self.start_meshing();
        let ids: Vec<u64> = self.clients.keys().copied().collect();
        for id in ids {
            if let Some(c) = self.clients.get_mut(&id) {
                let tx = c.tx.take();
                *c = Client {
                    tx,
                    ..Default::default()
                };
            }
            let w = self.welcome(id);
            if let Some(c) = self.clients.get(&id) {
                c.text(&w);
            }
            self.send_world_to(id);
        }
    }

    fn end_all_strokes(&mut self, id: u64) {
        let open: Vec<String> = self
            .clients
            .get(&id)
            .map(|c| c.strokes.keys().cloned().collect())
            .unwrap_or_default();
        for s in open {
            self.end_stroke(id, &s, None);
        }
    }

    fn history_json(&self, by: u64, action: &str, stroke: Option<i64>, req: Option<&str>) -> Value {
        let h = self.doc_ref().history();
        let mut v = json!({
            "type": "history", "can_undo": h.can_undo, "can_redo": h.can_redo,
            "strokes": h.strokes, "by": by, "action": action, "id": stroke,
        });
        if let Some(r) = req {
            v["req"] = json!(r);
        }
        v
    }

    fn broadcast_history(&self, by: u64, action: &str, stroke: Option<i64>, req: Option<&str>) {
        let mine = self.history_json(by, action, stroke, req);
        let theirs = self.history_json(by, action, stroke, None);
        for (cid, c) in &self.clients {
            c.text(if *cid == by { &mine } else { &theirs });
        }
    }

    fn new_world(&mut self, request: &protocol::NewWorld) -> Result<(), Reject> {
        // Check the request before touching the file.
        let new = check_new_world(request)?;
        // The new world is built whole in a fresh folder beside the old one,
        // so that a failure leaves the old world as it was.
        let staged = stage_new_world(&self.path, &new)?;
        // Open strokes are dropped with the world they were drawn on.
        for c in self.clients.values_mut() {
            for (_, open) in c.strokes.drain() {
                if let Some(doc) = self.doc.as_mut() {
                    doc.cancel_stroke(open.id);
                }
            }
        }
        if let Some(d) = self.doc.take() {
            let _ = d.close();
        }
        let switched = switch_world(&self.path, staged.file());
        drop(staged);
        let result = match switched {
            Ok(()) => match Doc::open(&self.path) {
                Ok(doc) => {
                    self.doc = Some(doc);
                    Ok(())
                }
                Err(e) => Err(reject(e)),
            },
            Err(r) => Err(r),
        };
        if self.doc.is_none() {
            // Refused: the old world is where it was, with its log; reopen it.
            match kinds::open_or_create(&self.path) {
                Ok(doc) => self.doc = Some(doc),
                Err(err) => {
                    eprintln!("error: cannot reopen the world file: {err}");
                    self.shutdown = true;
                    return Err(Reject::new("storage", err.to_string()));
                }
            }
        }
        // Everyone starts over with the (new or reopened) world.
        self.restart_clients();
        result
    }

    // ----- meshing and streaming -----

    fn tick(&mut self) {
        let start = Instant::now();
        match self.doc_ref().kind() {
            WorldKind::Side2d => self.tick_side2d(),
            WorldKind::Heightmap => self.tick_heightmap(),
            WorldKind::Voxel => self.tick_voxel(),
            WorldKind::Map => self.tick_map(),
        }
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if ms > 0.05 {
            self.remesh_ms = ms;
        }
        if self.last_status.elapsed() >= STATUS_EVERY && !self.clients.is_empty() {
            self.last_status = Instant::now();
            let saved = self.clients.values().all(|c| c.strokes.is_empty());
            let n = self.clients.len();
            let wanted = self.wanted_chunks();
            for c in self.clients.values() {
                c.text(&json!({
                    "type": "status", "chunks": c.chunks, "wanted": wanted,
                    "remesh_ms": self.remesh_ms, "saved": saved, "clients": n,
                }));
            }
        }
    }

    /// Chunks a client should hold once everything is sent: every chunk of
    /// a bounded world, the chunks the stream holds for an endless one
    /// (`None` before the stream has started).
    fn wanted_chunks(&self) -> Option<usize> {
        match self.doc.as_ref().map(Doc::typed)? {
            AnyDocument::Side2d(d) => Some(d.world().chunks().len()),
            AnyDocument::Map(d) => Some(d.world().chunk_meshes().count()),
            AnyDocument::Heightmap(_) => self.hm.as_ref().map(Stream::held),
            AnyDocument::Voxel(_) => self.vx.as_ref().map(Stream::held),
        }
    }

    fn tick_side2d(&mut self) {
        let budget = self.budget;
        let Some(AnyDocument::Side2d(d)) = self.doc.as_mut().map(Doc::typed_mut) else {
            return;
        };
        if d.world().dirty_count() > 0 {
            d.rebuild_within(budget);
        }
        let d = &**d;
        for chunk in d.world().chunks() {
            if chunk.is_dirty() || chunk.version == 0 {
                continue;
            }
            if self.side_sent.get(&chunk.coord) == Some(&chunk.version) {
                continue;
            }
            let is_new = !self.side_sent.contains_key(&chunk.coord);
            self.side_sent.insert(chunk.coord, chunk.version);
            let frames = kinds::side2d_frames(d, chunk).map(Bytes::from);
            for c in self.clients.values_mut() {
                for f in &frames {
                    c.send(Out::Binary(f.clone()));
                }
                if is_new {
                    c.chunks += 1;
                }
            }
        }
    }

    fn tick_map(&mut self) {
        let budget = self.budget;
        let Some(AnyDocument::Map(d)) = self.doc.as_mut().map(Doc::typed_mut) else {
            return;
        };
        // The world's rebuild queue, as for side views: only chunks whose
        // meshes changed get a new version, and those are sent.
        if d.world().stale_count() > 0
            && let Err(e) = d.world_mut().rebuild(Some(budget))
        {
            eprintln!("error: cannot mesh the map: {e}");
        }
        for m in d.world().chunk_meshes() {
            if self.map_sent.get(&m.coord) == Some(&m.version) {
                continue;
            }
            let is_new = self.map_sent.insert(m.coord, m.version).is_none();
            let frames = kinds::map_frames(m).map(Bytes::from);
            for c in self.clients.values_mut() {
                for f in &frames {
                    c.send(Out::Binary(f.clone()));
                }
                if is_new {
                    c.chunks += 1;
                }
            }
        }
    }

    /// The viewers of every client's camera, when they changed. A camera
    /// that stopped sending positions stops moving.
    fn take_viewers(&mut self) -> Option<Vec<StreamViewer>> {
        let now = Instant::now();
        for c in self.clients.values_mut() {
            if let Some(v) = c.viewer.as_mut()
                && v.velocity != [0.0; 3]
                && c.motion.velocity_at(now) == [0.0; 3]
            {
                v.velocity = [0.0; 3];
                self.viewers_changed = true;
            }
        }
        std::mem::take(&mut self.viewers_changed).then(|| {
            self.clients
                .values()
                .filter_map(|c| c.viewer.clone())
                .collect()
        })
    }

    fn tick_heightmap(&mut self) {
        let viewers = self.take_viewers();
        let Some(AnyDocument::Heightmap(d)) = self.doc.as_mut().map(Doc::typed_mut) else {
            return;
        };
        let Some(hm) = self.hm.as_mut() else {
            return;
        };
        // Edits: the changed edit chunks go to the stream's source and
        // every streamed chunk whose mesh reads a changed node is rebuilt
        // first, on the stream's threads.
        if d.world().dirty_count() > 0 {
            let dirty = d.world_mut().take_dirty();
            if let Err(e) = hm.edited(d.world(), &dirty) {
                eprintln!("error: cannot stream the edited chunks: {e}");
            }
        }
        if let Some(viewers) = viewers
            && let Err(e) = hm.set_viewers(&viewers)
        {
            eprintln!("error: bad heightmap viewers: {e}");
        }
        let polled = hm.poll();
        broadcast(&mut self.clients, hm, polled);
    }

    fn tick_voxel(&mut self) {
        let viewers = self.take_viewers();
        let Some(AnyDocument::Voxel(d)) = self.doc.as_mut().map(Doc::typed_mut) else {
            return;
        };
        let Some(vx) = self.vx.as_mut() else {
            return;
        };
        // Edits: the changed chunks go to the stream's source and every
        // streamed chunk that reads one is rebuilt first, on the stream's
        // threads. Nothing is meshed here: the world's dirty set is only
        // taken (exports mesh their region themselves).
        if d.world().dirty_count() > 0 {
            let dirty: HashSet<[i32; 3]> = d.world_mut().take_dirty().into_iter().collect();
            if let Err(e) = vx.edited(d.world(), &dirty) {
                eprintln!("error: cannot stream the edited chunks: {e}");
            }
        }
        if let Some(viewers) = viewers
            && let Err(e) = vx.set_viewers(&viewers)
        {
            eprintln!("error: bad voxel viewers: {e}");
        }
        let polled = vx.poll();
        broadcast(&mut self.clients, vx, polled);
        // Forget generated chunks far from every camera once many are
        // loaded (edited chunks keep their data).
        if d.world().loaded_chunks().count() > VOXEL_KEEP_CHUNKS {
            let n = d.params().chunk_cells as f32;
            let r = stream::MAX_VIEW_CHUNKS as i32 + 2;
            let mut lo = [i32::MAX; 3];
            let mut hi = [i32::MIN; 3];
            for v in self.clients.values().filter_map(|c| c.viewer.as_ref()) {
                for k in 0..3 {
                    let at = (v.position[k] / n).floor() as i32;
                    lo[k] = lo[k].min(at.saturating_sub(r));
                    hi[k] = hi[k].max(at.saturating_add(r));
                }
            }
            if lo[0] <= hi[0] {
                d.world_mut().retain_region(lo, hi);
            }
        }
    }
}

/// Sends what a stream poll gave to every client watching it; a client
/// with its first camera gets every chunk shown so far instead.
fn broadcast<S: isoterra::world::ChunkSource<Output = Bytes>>(
    clients: &mut BTreeMap<u64, Client>,
    stream: &Stream<S>,
    polled: Polled,
) {
    let unload = (!polled.unloads.is_empty())
        .then(|| json!({"type": "unload", "chunks": polled.unloads}).to_string());
    for c in clients.values_mut() {
        if c.viewer.is_none() {
            continue;
        }
        if c.watching {
            for f in &polled.frames {
                c.send(Out::Binary(f.clone()));
            }
            if let Some(u) = &unload {
                c.send(Out::Text(u.clone()));
            }
        } else {
            c.watching = true;
            for f in stream.frames() {
                c.send(Out::Binary(f.clone()));
            }
        }
        c.chunks = stream.shown();
    }
}

/// The file was changed by another program since the world was read.
fn is_conflict(e: &isoterra::kind::KindError) -> bool {
    matches!(
        e,
        isoterra::kind::KindError::Store(isoterra::store::StoreError::Conflict { .. })
    )
}

/// Checks a `new_world` request (or a preview's) without touching any
/// file.
pub(crate) fn check_new_world(request: &protocol::NewWorld) -> Result<NewWorld, Reject> {
    let kind: WorldKind = request.kind.parse().map_err(reject)?;
    let recipe = match &request.recipe {
        None | Some(Value::Null) => None,
        Some(v) => {
            let bytes = serde_json::to_vec(v).map_err(|e| Reject::invalid(e.to_string()))?;
            Some(Recipe::from_slice(&bytes).map_err(reject)?)
        }
    };
    let new = NewWorld {
        kind,
        seed: request.seed.unwrap_or(1),
        size: request.size,
        preset: request.preset.clone(),
        recipe,
        chunk: None,
        cell_size: None,
    };
    new.params().map_err(reject)?;
    Ok(new)
}

/// A new world created and closed in a fresh hidden folder beside `path`
/// (same file system, so that it can be renamed into place); the folder
/// and whatever is left in it go when this is dropped.
struct Staged {
    dir: tempfile::TempDir,
}

impl Staged {
    fn file(&self) -> PathBuf {
        self.dir.path().join("new.isoterra")
    }
}

fn stage_new_world(path: &Path, new: &NewWorld) -> Result<Staged, Reject> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = tempfile::Builder::new()
        .prefix(".isoterra-new-")
        .tempdir_in(parent)
        .map_err(|e| {
            Reject::new(
                "storage",
                format!("cannot create the new world beside {}: {e}", path.display()),
            )
        })?;
    let staged = Staged { dir };
    let doc = Doc::create(staged.file(), new).map_err(reject)?;
    // Closing the only connection folds the log into the file: the new
    // world is one complete file, with no log of its own.
    doc.close().map_err(reject)?;
    Ok(staged)
}

/// `FILE-wal` or `FILE-shm` exists: some connection still has the world
/// open (the last one to close removes both), or died with commits in the
/// log that the next open recovers. Either way the log belongs to the file
/// and must stay with it under its name.
fn log_in_use(path: &Path) -> Option<PathBuf> {
    ["-wal", "-shm"].into_iter().find_map(|side| {
        let mut name = path.as_os_str().to_os_string();
        name.push(side);
        let p = PathBuf::from(name);
        std::fs::symlink_metadata(&p).is_ok().then_some(p)
    })
}

fn in_use(path: &Path, log: &Path) -> Reject {
    Reject::new(
        "busy",
        format!(
            "{} is open in another program (its log {} is in use: another editor, a bake, \
             `isoterra info` or an SQLite shell); close it and try again. Nothing was changed.",
            path.display(),
            log.display()
        ),
    )
}

/// Moves the closed world at `path` to `FILE.bak-N` and the complete new
/// world `staged` to `path`. Never moves or deletes a write-ahead log:
/// while one exists (another process has the world open) this refuses and
/// leaves the old world in place.
fn switch_world(path: &Path, staged: PathBuf) -> Result<(), Reject> {
    if let Some(log) = log_in_use(path) {
        return Err(in_use(path, &log));
    }
    let backup = free_backup(path);
    let moved = match std::fs::rename(path, &backup) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(Reject::new(
                "storage",
                format!("cannot move the world file aside: {e}"),
            ));
        }
    };
    // Someone opened the old world between the check and the move: its log
    // is named after `path`, so put the old world back under that name.
    if let Some(log) = log_in_use(path) {
        if moved {
            let _ = std::fs::rename(&backup, path);
        }
        return Err(in_use(path, &log));
    }
    if let Err(e) = std::fs::rename(&staged, path) {
        if moved {
            let _ = std::fs::rename(&backup, path);
        }
        return Err(Reject::new(
            "storage",
            format!("cannot move the new world into place: {e}"),
        ));
    }
    Ok(())
}

/// `FILE.bak-N` with the first free `N`.
fn free_backup(path: &Path) -> PathBuf {
    let mut n = 1u32;
    loop {
        let mut name = path.as_os_str().to_os_string();
        name.push(format!(".bak-{n}"));
        let candidate = PathBuf::from(name);
        if !candidate.exists() || n == u32::MAX {
            return candidate;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backups_take_the_first_free_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.isoterra");
        let first = free_backup(&path);
        assert!(first.to_string_lossy().ends_with("w.isoterra.bak-1"));
        std::fs::write(&first, b"x").unwrap();
        assert!(
            free_backup(&path)
                .to_string_lossy()
                .ends_with("w.isoterra.bak-2")
        );
    }

    fn request(
        kind: &str,
        size: Option<[u32; 2]>,
        preset: Option<&str>,
        recipe: Option<Value>,
    ) -> protocol::NewWorld {
        protocol::NewWorld {
            kind: kind.into(),
            seed: Some(1),
            size,
            preset: preset.map(str::to_string),
            recipe,
        }
    }

    #[test]
    fn new_world_requests_are_checked_without_touching_files() {
        assert!(check_new_world(&request("side2d", Some([64, 32]), Some("caves"), None)).is_ok());
        assert!(check_new_world(&request("map", Some([32, 32]), Some("plateaus"), None)).is_ok());
        let mut fill = isoterra::kind::Recipe::preset(WorldKind::Side2d, "caves")
            .unwrap()
            .to_json_value();
        fill["params"]["fill"] = json!(0.3);
        let new = check_new_world(&request("side2d", None, None, Some(fill.clone()))).unwrap();
        assert_eq!(new.recipe.unwrap().to_json_value(), fill);
        let mut bad_fill = fill.clone();
        bad_fill["params"]["fill"] = json!(3.0);
        for (kind, size, preset, recipe) in [
            ("side2d", Some([8, 32]), None, None),
            ("side2d", None, Some("volcano"), None),
            ("map", Some([32, 100_000]), None, None),
            ("heightmap", None, Some("plains"), None),
            ("teapot", None, None, None),
            ("side2d", None, None, Some(bad_fill)),
            ("side2d", None, None, Some(json!("fill"))),
            ("heightmap", None, None, Some(fill.clone())),
            ("side2d", None, Some("caves"), Some(fill.clone())),
        ] {
            let r = check_new_world(&request(kind, size, preset, recipe.clone()));
            assert_eq!(
                r.map_err(|e| e.code),
                Err("invalid_parameter"),
                "{kind} {size:?} {preset:?} {recipe:?}"
            );
        }
    }
}
