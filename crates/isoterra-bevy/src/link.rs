//! The live link to a running `isoterra edit`: the game and the editor
//! share one world file, and the editor's document is the one that writes
//! it. The game's edits go to the editor as protocol strokes; whenever the
//! editor says its history moved (a stroke of any client, an undo, a
//! redo), the game's document catches up from the file's stroke log
//! ([`Document::follow`]) and the chunks that changed are rebuilt.

use std::collections::HashMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bevy::prelude::Component;
use isoterra::kind::{Document, WorldKind};
use serde_json::{Value, json};
use tungstenite::Message;
use tungstenite::client::IntoClientRequest;

use crate::io::{Cmd, Remote, Shared};
use crate::terrain::EditOp;

/// How long the link waits between tries to reach the editor.
const RETRY: Duration = Duration::from_millis(500);

/// Put on a [`Terrain`](crate::Terrain) entity: connects to a running
/// `isoterra edit` serving the same world file (its WebSocket URL, such as
/// `ws://127.0.0.1:7878/ws`) and keeps the two in step. Strokes, undos and
/// redos made in the browser show up in the game as soon as the editor
/// has committed them (a [`TerrainEdited`](crate::TerrainEdited) with
/// [`EditOp::Linked`]); the game's [`TerrainEdit`](crate::TerrainEdit),
/// [`TerrainUndo`](crate::TerrainUndo) and [`TerrainRedo`](crate::TerrainRedo)
/// are sent to the editor, which commits them for every client, so both
/// show the one history of the file.
///
/// While linked the game writes nothing itself: its edits fail (with a
/// [`TerrainEdited`](crate::TerrainEdited) error) until the editor is
/// reached, and side2d islands are not detached by the game. The link
/// reconnects by itself when the editor restarts.
#[derive(Component, Debug, Clone)]
pub struct EditorLink {
    url: String,
    handle: Arc<LinkHandle>,
}

impl EditorLink {
    /// A link to the editor's WebSocket at `url` (`ws://HOST:PORT/ws`).
    pub fn new(url: impl Into<String>) -> Self {
        EditorLink {
            url: url.into(),
            handle: Arc::new(LinkHandle {
                shared: Arc::new(LinkShared::default()),
            }),
        }
    }

    /// A link to `isoterra edit --port PORT` on this machine.
    pub fn local(port: u16) -> Self {
        EditorLink::new(format!("ws://127.0.0.1:{port}/ws"))
    }

    /// The editor's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// True while the editor is connected and serves this world.
    pub fn is_connected(&self) -> bool {
        self.handle.shared.connected.load(Ordering::Acquire)
    }

    /// Why the link is not connected (the last failure), if it failed.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.handle.shared.error).clone()
    }

    pub(crate) fn shared(&self) -> &Arc<LinkShared> {
        &self.handle.shared
    }
}

/// Stops the link's thread when the last copy of the component goes.
#[derive(Debug)]
struct LinkHandle {
    shared: Arc<LinkShared>,
}

impl Drop for LinkHandle {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
    }
}

/// What the game's side and the link's thread share.
#[derive(Debug, Default)]
pub(crate) struct LinkShared {
    connected: AtomicBool,
    stop: AtomicBool,
    started: AtomicBool,
    error: Mutex<Option<String>>,
    /// Messages for the editor, sent by the thread in order.
    outbox: Mutex<Option<Sender<String>>>,
    /// Own requests waiting for their reply, by `req`.
    pending: Mutex<HashMap<String, EditOp>>,
    next: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl LinkShared {
    fn fail(&self, why: String) {
        self.connected.store(false, Ordering::Release);
        let mut e = lock(&self.error);
        if e.as_deref() != Some(why.as_str()) {
            bevy::log::warn!("isoterra: editor link: {why}");
        }
        *e = Some(why);
    }

    fn req(&self, op: EditOp) -> String {
        let req = format!("game-{}", self.next.fetch_add(1, Ordering::Relaxed));
        lock(&self.pending).insert(req.clone(), op);
        req
    }
}

/// Starts the link's thread for a terrain (once).
pub(crate) fn start(link: &EditorLink, terrain: Arc<Shared>, kind: WorldKind, file: PathBuf) {
    let shared = Arc::clone(link.shared());
    if shared.started.swap(true, Ordering::AcqRel) {
        return;
    }
    terrain.set_link(Arc::clone(&shared));
    let url = link.url.clone();
    let spawned = std::thread::Builder::new()
        .name("isoterra-editor-link".into())
        .spawn(move || run(&url, &shared, &terrain, kind, &file));
    if let Err(e) = spawned {
        link.shared()
            .fail(format!("cannot start the link thread: {e}"));
    }
}

/// Checks an own edit against the game's document and sends it to the
/// editor; `Err` with the reason when it is refused here.
pub(crate) fn send(
    link: &LinkShared,
    doc: &Document,
    remote: Remote,
) -> Result<(), (EditOp, String)> {
    let op = remote.op();
    if !link.connected.load(Ordering::Acquire) {
        let why = lock(&link.error)
            .clone()
            .unwrap_or_else(|| "not connected yet".into());
        return Err((op, format!("the editor link is not connected: {why}")));
    }
    let outbox = lock(&link.outbox).clone();
    let Some(outbox) = outbox else {
        return Err((op, "the editor link is not connected".into()));
    };
    let req = link.req(op);
    let mut messages = Vec::new();
    match remote {
        Remote::Stroke(spec, points) => {
            let dabs = doc
                .stroke_dabs(&spec, &points)
                .map_err(|e| (op, e.to_string()))?;
            let mut begin = json!({
                "type": "stroke_begin", "stroke": req, "tool": spec.tool,
                "radius": spec.radius, "strength": spec.strength,
                "params": Value::Object(spec.params.clone()),
            });
            if let Some(shape) = &spec.shape {
                begin["shape"] = json!(shape);
            }
            messages.push(begin.to_string());
            for at in dabs {
                messages.push(json!({"type": "dab", "stroke": req, "at": at}).to_string());
            }
            messages.push(json!({"type": "stroke_end", "stroke": req, "req": req}).to_string());
        }
        Remote::Undo => messages.push(json!({"type": "undo", "req": req}).to_string()),
        Remote::Redo => messages.push(json!({"type": "redo", "req": req}).to_string()),
    }
    for m in messages {
        if outbox.send(m).is_err() {
            lock(&link.pending).remove(&req);
            return Err((op, "the editor link closed".into()));
        }
    }
    Ok(())
}

/// The thread: connects, follows, reconnects, until the component goes.
fn run(url: &str, link: &LinkShared, terrain: &Arc<Shared>, kind: WorldKind, file: &Path) {
    while !link.stop.load(Ordering::Acquire) {
        if let Err(why) = session(url, link, terrain, kind, file) {
            link.fail(why);
        }
        *lock(&link.outbox) = None;
        link.connected.store(false, Ordering::Release);
        // Own requests without a reply fail: the editor may or may not
        // have committed them, and catching up shows which.
        let orphans: Vec<EditOp> = lock(&link.pending).drain().map(|(_, op)| op).collect();
        for op in orphans {
            terrain.push(Cmd::Refused(
                op,
                "the editor link dropped before the editor replied".into(),
            ));
        }
        let until = Instant::now() + RETRY;
        while Instant::now() < until && !link.stop.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// One connection to the editor.
fn session(
    url: &str,
    link: &LinkShared,
    terrain: &Arc<Shared>,
    kind: WorldKind,
    file: &Path,
) -> Result<(), String> {
    let mut request = url
        .into_client_request()
        .map_err(|e| format!("{url} is not a WebSocket URL: {e}"))?;
    let uri = request.uri().clone();
    let host = uri
        .host()
        .ok_or_else(|| format!("{url} names no host"))?
        .to_string();
    let port = uri.port_u16().unwrap_or(80);
    // The editor accepts upgrades from its own origin only.
    let origin = format!(
        "http://{}",
        uri.authority().map_or(host.as_str(), |a| a.as_str())
    );
    request.headers_mut().insert(
        "Origin",
        origin
            .parse()
            .map_err(|e| format!("{url}: bad origin: {e}"))?,
    );
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| format!("{url}: {e}"))?
        .next()
        .ok_or_else(|| format!("{url}: no address"))?;
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .map_err(|e| format!("cannot reach the editor at {url}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (mut ws, _) =
        tungstenite::client(request, stream).map_err(|e| format!("{url}: handshake: {e}"))?;
    ws.get_ref()
        .set_read_timeout(Some(Duration::from_millis(10)))
        .map_err(|e| e.to_string())?;
    ws.send(Message::text(
        json!({"type": "hello", "client": "isoterra-bevy"}).to_string(),
    ))
    .map_err(|e| format!("{url}: {e}"))?;
    let (tx, rx): (Sender<String>, Receiver<String>) = channel();
    let mut welcomed = false;
    loop {
        if link.stop.load(Ordering::Acquire) {
            let _ = ws.close(None);
            return Ok(());
        }
        for m in rx.try_iter() {
            ws.send(Message::text(m))
                .map_err(|e| format!("{url}: {e}"))?;
        }
        let msg = match ws.read() {
            Ok(m) => m,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) => return Err(format!("the editor closed the link: {e}")),
        };
        let Message::Text(text) = msg else {
            // Mesh frames are for the browser: the game builds its own.
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(text.as_str()) else {
            continue;
        };
        let req = v.get("req").and_then(Value::as_str).map(str::to_string);
        let mine = req.and_then(|r| lock(&link.pending).remove(&r));
        match v.get("type").and_then(Value::as_str) {
            Some("welcome") => {
                if welcomed {
                    // A new world or a reload: the file under the game's
                    // document is not the editor's any more.
                    return Err(
                        "the editor replaced its world; restart the game to follow it".into(),
                    );
                }
                let theirs = v.get("kind").and_then(Value::as_str).unwrap_or("");
                if theirs != kind.name() {
                    return Err(format!(
                        "the editor has a {theirs} world open, the game a {} world",
                        kind.name()
                    ));
                }
                let name = |p: &Path| p.file_name().map(|n| n.to_os_string());
                let their_file = v
                    .pointer("/world/file")
                    .and_then(Value::as_str)
                    .map(PathBuf::from);
                if let Some(f) = their_file
                    && name(&f) != name(file)
                {
                    return Err(format!(
                        "the editor serves {}, the game has {} open",
                        f.display(),
                        file.display()
                    ));
                }
                welcomed = true;
                *lock(&link.outbox) = Some(tx.clone());
                *lock(&link.error) = None;
                link.connected.store(true, Ordering::Release);
                // Whatever the editor committed before now.
                terrain.push(Cmd::Follow(None));
            }
            Some("ack") => {
                let id = v.get("id").and_then(Value::as_i64);
                let op = mine.unwrap_or(EditOp::Stroke);
                terrain.push(Cmd::Follow(Some((op, Ok(id)))));
            }
            Some("history") => {
                let id = v.get("id").and_then(Value::as_i64);
                terrain.push(Cmd::Follow(mine.map(|op| (op, Ok(id)))));
            }
            Some("error") => {
                let why = v
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the editor refused the edit")
                    .to_string();
                if let Some(op) = mine {
                    terrain.push(Cmd::Refused(op, format!("the editor: {why}")));
                } else {
                    bevy::log::warn!("isoterra: editor link: {why}");
                }
            }
            _ => {}
        }
    }
}
