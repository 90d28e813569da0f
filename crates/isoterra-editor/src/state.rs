//! The world thread: it owns the document, applies every client's commands
//! in arrival order, remeshes dirty chunks within a time budget and sends
//! frames and replies to the clients.
//!
//! Strokes go through the kind layer's document: their dabs are live
//! previews there (so every client sees them at once), and a stroke that
//! ends is recorded on its own, one durable transaction, while the other
//! open strokes stay shown. The file therefore always holds exactly the
//! finished strokes, in the order they finished.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use isoterra::kind::{AnyDocument, NewWorld, Recipe, StrokeId, StrokeSpec, WorldKind};
use isoterra::world::StreamViewer;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::oneshot;

use crate::kinds::{self, Doc, Download, reject};
use crate::motion::Motion;
use crate::outbox::Outbox;
use crate::protocol::{self, ClientMsg, Reject, error_json};
use crate::stream;
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
    /// The server notified a write of the world (by any writer, this
    /// server's own strokes included; see [`watch_server`]).
    Notified,
    Shutdown,
}

/// Starts the world thread.
pub(crate) fn spawn(
    doc: Doc,
    path: PathBuf,
    budget: Duration,
) -> Result<(Sender<Command>, std::thread::JoinHandle<()>), EditorError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let watching = kinds::is_url(&path);
    let stop = Arc::new(AtomicBool::new(false));
    if let Some(url) = path.to_str().filter(|_| watching) {
        let (url, tx, stop) = (url.to_string(), tx.clone(), stop.clone());
        std::thread::Builder::new()
            .name("isoterra-watch".into())
            .spawn(move || watch_server(&url, &tx, &stop))
            .map_err(EditorError::Io)?;
    }
    let handle = std::thread::Builder::new()
        .name("isoterra-world".into())
        .spawn(move || {
            let mut world = World::new(doc, path, budget, watching);
            world.run(rx);
            stop.store(true, Ordering::Relaxed);
        })
        .map_err(EditorError::Io)?;
    Ok((tx, handle))
}

/// Listens for the server's notifications of the world's writes
/// (`LISTEN`/`NOTIFY`, see [`isoterra::store::PgWatcher`]) and tells the
/// world thread, which reads the world again when another writer moved it.
/// A lost connection is opened again, and the world thread told, since
/// writes may have been missed meanwhile. Ends with the world thread.
fn watch_server(url: &str, tx: &Sender<Command>, stop: &AtomicBool) {
    let mut watcher: Option<isoterra::store::PgWatcher> = None;
    let mut warned = false;
    while !stop.load(Ordering::Relaxed) {
        let Some(w) = watcher.as_mut() else {
            match isoterra::store::PgWatcher::open(url) {
                Ok(w) => {
                    if warned {
                        eprintln!("note: listening to the server's changes again");
                        warned = false;
                        if tx.send(Command::Notified).is_err() {
                            return;
                        }
                    }
                    watcher = Some(w);
                }
                Err(e) => {
                    if !warned {
                        eprintln!(
                            "warning: cannot listen to the server's changes ({e}); \
                             the world is checked every {} ms until it can",
                            SERVER_CHECK_EVERY.as_millis()
                        );
                        warned = true;
                    }
                    std::thread::sleep(WATCH_RETRY);
                }
            }
            continue;
        };
        match w.wait(WATCH_WAIT) {
            Ok(Some(_)) => {
                if tx.send(Command::Notified).is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("warning: lost the server's change notifications ({e}); reconnecting");
                warned = true;
                watcher = None;
                std::thread::sleep(WATCH_RETRY);
            }
        }
    }
}

/// How long the watcher waits for a notification before it looks whether
/// the world thread has ended.
const WATCH_WAIT: Duration = Duration::from_millis(250);
/// Time between attempts to listen again after the connection was lost.
const WATCH_RETRY: Duration = Duration::from_secs(1);

/// A stroke being drawn: its id in the document, and the request id of
/// its `stroke_begin`.
struct OpenStroke {
    id: StrokeId,
    req: Option<String>,
}

/// A connected browser.
#[derive(Default)]
pub(crate) struct Client {
    tx: Option<Arc<Outbox>>,
    strokes: HashMap<String, OpenStroke>,
    /// Heightmap and voxel: the client's camera as a viewer of the world's
    /// shared stream, and whether it was sent the chunks shown so far.
    pub(crate) viewer: Option<StreamViewer>,
    /// The camera's motion, for prefetching along it.
    motion: Motion,
    pub(crate) watching: bool,
    /// Chunks it holds.
    pub(crate) chunks: usize,
}

impl Client {
    /// Bytes queued for the client and not yet written to its socket.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.tx.as_ref().map_or(0, |tx| tx.queued_bytes())
    }

    pub(crate) fn send(&self, out: Out) {
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
    /// How the open world is meshed and sent (its kind's, see
    /// [`kinds::Meshing`]).
    meshing: Box<dyn kinds::Meshing>,
    /// Whether the cameras changed since the stream last heard of them.
    viewers_changed: bool,
    remesh_ms: f64,
    last_status: Instant,
    /// When the store was last asked whether another program wrote.
    last_follow: Instant,
    /// How often to ask: [`FOLLOW_EVERY`] for a file, [`SERVER_CHECK_EVERY`]
    /// for a server world, whose writes are notified.
    follow_every: Duration,
    /// Times the world was read again after another writer, and how many
    /// of those a notification started (for `/api/info`).
    reloads: u64,
    notified_reloads: u64,
    /// A notification came since the last check.
    notified: bool,
    shutdown: bool,
    /// Exports running on threads of their own.
    exports: Arc<AtomicUsize>,
}

/// Exports that may run at once; a download asked for beyond them is
/// refused as busy (each holds a world handle and its meshes in memory).
const MAX_EXPORTS: usize = 2;

/// One of the [`MAX_EXPORTS`] running exports; dropping it frees the slot.
/// An export drops it before its last answer leaves (the reply of a file
/// made whole, the last block of a streamed one), so that a client that has
/// its download whole can start the next one at once, instead of being
/// told `busy` while the export's thread winds down.
pub(crate) struct ExportSlot(Arc<AtomicUsize>);

impl Drop for ExportSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How long the world thread sleeps between polls while streamed chunks
/// are being built and nothing else happens.
const STREAM_POLL: Duration = Duration::from_millis(2);
/// Strokes one connection may hold open at once.
const MAX_OPEN_STROKES: usize = 16;
/// Time between `status` messages.
const STATUS_EVERY: Duration = Duration::from_millis(500);
/// Time between checks for what another program (another editor server,
/// a command) wrote to a world file; the world is then read again.
const FOLLOW_EVERY: Duration = Duration::from_millis(100);
/// The same for a world on a server, whose stroke-log writes are notified
/// at once: the check finds only chunk puts (which do not notify) and
/// writes made while the notifications were lost.
const SERVER_CHECK_EVERY: Duration = Duration::from_secs(1);

impl World {
    fn new(mut doc: Doc, path: PathBuf, budget: Duration, notified: bool) -> Self {
        World {
            meshing: kinds::meshing(&mut doc),
            doc: Some(doc),
            path,
            budget,
            clients: BTreeMap::new(),
            viewers_changed: false,
            remesh_ms: 0.0,
            last_status: Instant::now(),
            last_follow: Instant::now(),
            follow_every: if notified {
                SERVER_CHECK_EVERY
            } else {
                FOLLOW_EVERY
            },
            reloads: 0,
            notified_reloads: 0,
            notified: false,
            shutdown: false,
            exports: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn run(&mut self, rx: Receiver<Command>) {
        while !self.shutdown {
            let wait = if self.has_work() {
                Duration::ZERO
            } else if self.meshing.busy() {
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
            kinds::close(d);
        }
    }

    /// Queues the whole of a bounded world for meshing; starts the stream
    /// of an endless one.
    fn start_meshing(&mut self) {
        self.viewers_changed = false;
        if let Some(doc) = self.doc.as_mut() {
            self.meshing = kinds::meshing(doc);
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
        self.meshing.has_work(self.doc_ref(), self.viewers_changed)
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
                let slot = ExportSlot(running);
                // A failed spawn drops the closure, and its slot with it.
                let _ = std::thread::Builder::new()
                    .name("isoterra-export".into())
                    .spawn(move || match kinds::open(&path) {
                        Ok(mut doc) => {
                            kinds::download(&mut doc, &format, region.as_deref(), slot, reply);
                        }
                        Err(e) => {
                            drop(slot);
                            let _ = reply.send(Err(kinds::reject(e)));
                        }
                    });
            }
            Command::Info { reply } => {
                let doc = self.doc_ref();
                let mut v = kinds::world_json(doc, &self.path);
                v["content_hash"] = json!(doc.content_hash());
                v["history"] = doc.history().json();
                v["recipe"] = doc.recipe().to_json_value();
                v["others"] = json!({
                    "reloads": self.reloads,
                    "notified": self.notified_reloads,
                    "check_ms": self.follow_every.as_millis() as u64,
                });
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
            // Read at the next tick, once for all the notifications that
            // came in one batch of commands.
            Command::Notified => self.notified = true,
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

    /// Sends a newly welcomed client what is meshed already.
    fn send_world_to(&mut self, id: u64) {
        if let (Some(doc), Some(client)) = (self.doc.as_ref(), self.clients.get_mut(&id)) {
            self.meshing.send_world(doc, client);
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
                    None => self.meshing.view_distance(self.doc_ref()),
                };
                // The velocity from this camera's previous messages.
                let velocity = match (self.meshing.stream_chunk(), self.clients.get_mut(&id)) {
                    (Some(n), Some(c)) => c.motion.observe(
                        p,
                        Instant::now(),
                        stream::MAX_SPEED_CHUNKS * n,
                        stream::TELEPORT_SPEED_CHUNKS * n,
                    ),
                    _ => [0.0; 3],
                };
                let viewer = self.meshing.viewer(id, p, forward, velocity, vd);
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
            kinds::close(d);
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
        if kinds::is_url(&self.path) {
            return Err(Reject::invalid(
                "New world works on world files; a world on a PostgreSQL server is made \
                 with `isoterra new URL` and opened with `isoterra edit URL`",
            ));
        }
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
            kinds::close(d);
        }
        let switched = switch_world(&self.path, staged.file());
        drop(staged);
        let result = match switched {
            Ok(()) => match kinds::open(&self.path) {
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

    /// Another program wrote to the world (another editor server on the
    /// same database, a command on the same file): the world is read again
    /// from the store and every client is welcomed to it, so that what the
    /// other wrote shows at once (a server notifies; a file is checked every
    /// [`FOLLOW_EVERY`]) and the next stroke is not
    /// refused. Open strokes are dropped; nothing acknowledged is lost.
    ///
    /// Reading again rather than following the log (`Document::follow`)
    /// is deliberate: with two servers writing one world under load, a
    /// server that followed drifted from the log in about 1 run in 8 of the
    /// load test, cause not found, and a drifted server's next strokes
    /// write rows the log does not give.
    fn follow_others(&mut self, notified: bool) {
        self.last_follow = Instant::now();
        let Some(doc) = self.doc.as_mut() else {
            return;
        };
        match doc.store().check_current() {
            Ok(()) => {}
            Err(isoterra::store::StoreError::Conflict { .. }) => {
                self.reloads += 1;
                self.notified_reloads += u64::from(notified);
                self.reload();
            }
            Err(e) => eprintln!("error: cannot check the world for other writers: {e}"),
        }
    }

    fn tick(&mut self) {
        if self.notified || self.last_follow.elapsed() >= self.follow_every {
            let notified = std::mem::take(&mut self.notified);
            self.follow_others(notified);
        }
        let start = Instant::now();
        let viewers = self.take_viewers();
        if let Some(doc) = self.doc.as_mut() {
            self.meshing
                .tick(doc, &mut self.clients, self.budget, viewers);
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
        self.meshing.wanted(self.doc.as_ref()?)
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
    let doc = isoterra::kind::Document::create(staged.file(), new).map_err(reject)?;
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

    /// An export gives its slot back before its last answer leaves: by the
    /// time a client has a file made whole, or the end of a streamed one,
    /// the slot is free for its next download.
    #[test]
    fn an_export_frees_its_slot_before_its_last_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.isoterra");
        let params = isoterra::world::MapParams::DEFAULT
            .with_size(64, 64)
            .with_chunk_cells(32)
            .with_seed(3);
        isoterra::store::MapDocument::create(&path, &params).unwrap();
        let mut doc = kinds::open(&path).unwrap();
        for (format, streamed) in [("colliders", false), ("glb", true), ("no-such", false)] {
            let running = Arc::new(AtomicUsize::new(1));
            let slot = ExportSlot(Arc::clone(&running));
            let (tx, rx) = oneshot::channel();
            std::thread::scope(|s| {
                let doc = &mut doc;
                s.spawn(move || kinds::download(doc, format, None, slot, tx));
                let answer = rx.blocking_recv().expect("an answer");
                match answer {
                    Ok(Download {
                        body: kinds::DownloadBody::Bytes(bytes),
                        ..
                    }) => {
                        assert!(!streamed && !bytes.is_empty(), "{format}");
                    }
                    Ok(Download {
                        body: kinds::DownloadBody::Stream(mut blocks),
                        ..
                    }) => {
                        assert!(streamed, "{format}");
                        let mut total = 0;
                        while let Some(block) = blocks.blocking_recv() {
                            total += block.expect("a block").len();
                        }
                        assert!(total > 0);
                    }
                    Err(_) => assert_eq!(format, "no-such"),
                }
                assert_eq!(running.load(Ordering::Acquire), 0, "{format}");
            });
        }
    }

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
