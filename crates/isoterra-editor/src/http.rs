//! HTTP routes, the Host/Origin guard, and the WebSocket connection loop.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::sync::oneshot;

use isoterra::kind::{NewWorld, PreviewOptions, Recipe, WorldKind, preview, recipe_fields};
use serde_json::json;

use crate::MAX_MESSAGE_BYTES;
use crate::assets;
use crate::kinds::{DownloadBody, reject};
use crate::outbox::Outbox;
use crate::protocol::{Reject, error_json};
use crate::state::check_new_world;
use crate::state::{Command, Out};

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    /// `Host` values this server answers to.
    hosts: Vec<String>,
    commands: Sender<Command>,
    next_id: AtomicU64,
    /// Bytes queued for one connection at most.
    queue_limit: usize,
}

impl AppState {
    pub fn new(
        addr: SocketAddr,
        host: IpAddr,
        commands: Sender<Command>,
        queue_limit: usize,
    ) -> Self {
        let port = addr.port();
        let mut hosts = vec![format_host(host, port), format_host(addr.ip(), port)];
        if host.is_loopback() || host.is_unspecified() {
            hosts.push(format!("127.0.0.1:{port}"));
            hosts.push(format!("localhost:{port}"));
            hosts.push(format!("[::1]:{port}"));
        }
        hosts.sort();
        hosts.dedup();
        AppState {
            inner: Arc::new(Inner {
                hosts,
                commands,
                next_id: AtomicU64::new(1),
                queue_limit,
            }),
        }
    }

    fn send(&self, cmd: Command) -> bool {
        self.inner.commands.send(cmd).is_ok()
    }

    fn host_allowed(&self, host: &str) -> bool {
        self.inner
            .hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host))
    }
}

fn format_host(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    }
}

/// The routes.
pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .route("/ws", get(ws_handler))
        .route("/export", get(export_handler))
        .route("/api/info", get(info_handler))
        .route("/api/pathing", get(pathing_handler))
        .route("/api/recipe", get(recipe_handler))
        .route("/api/preview", post(preview_handler))
        .fallback(get(static_handler))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

fn forbidden(why: &str) -> Response {
    (StatusCode::FORBIDDEN, format!("forbidden: {why}\n")).into_response()
}

/// Refuses requests whose `Host` is not this server, or whose `Origin` is
/// another site; the WebSocket upgrade must carry an `Origin`.
async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    if headers.get_all(header::HOST).iter().count() > 1
        || headers.get_all(header::ORIGIN).iter().count() > 1
    {
        return (
            StatusCode::BAD_REQUEST,
            "bad request: more than one Host or Origin header\n",
        )
            .into_response();
    }
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return forbidden("missing Host header");
    };
    if !state.host_allowed(host) {
        return forbidden("Host is not this server");
    }
    let host = host.to_string();
    // What acts on the world (an export, the info) must come from the
    // editor's own page or be typed in: a page elsewhere can make a browser
    // send a plain GET without an Origin, but not hide where it came from.
    let path = req.uri().path();
    if path == "/export" || path.starts_with("/api/") {
        let site = headers
            .get(header::HeaderName::from_static("sec-fetch-site"))
            .map(|v| v.to_str().unwrap_or(""));
        if site.is_some_and(|s| s != "same-origin" && s != "none") {
            return forbidden("the request came from another site");
        }
    }
    let origin = headers
        .get(header::ORIGIN)
        .map(|o| o.to_str().unwrap_or(""));
    match origin {
        Some(o) => {
            let ok = o
                .strip_prefix("http://")
                .is_some_and(|rest| state.host_allowed(rest));
            if !ok {
                return forbidden("Origin is another site");
            }
        }
        None => {
            let upgrade = headers
                .get(header::UPGRADE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
            if upgrade || req.uri().path() == "/ws" {
                return forbidden("a WebSocket upgrade must carry an Origin");
            }
        }
    }
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::HeaderName::from_static("x-frame-options"),
        HeaderValue::from_static("DENY"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // The page loads only its own scripts and styles and talks only to
    // this server.
    let csp = format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
         connect-src 'self' ws://{host}; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    response
}

async fn static_handler(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    match assets::lookup(path) {
        Some((bytes, ty)) => {
            ([(header::CONTENT_TYPE, ty)], Bytes::from_static(bytes)).into_response()
        }
        None => (StatusCode::NOT_FOUND, "not found\n").into_response(),
    }
}

async fn info_handler(State(state): State<AppState>) -> Response {
    let (tx, rx) = oneshot::channel();
    if !state.send(Command::Info { reply: tx }) {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    match rx.await {
        Ok(v) => ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response(),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response(),
    }
}

/// The map's pathing grid, for the editor's overlay: `u32` width and depth
/// (little endian) and a byte of pathing bits per cell.
async fn pathing_handler(State(state): State<AppState>) -> Response {
    let (tx, rx) = oneshot::channel();
    if !state.send(Command::Pathing { reply: tx }) {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    match rx.await {
        Ok(Ok(bytes)) => (
            [(header::CONTENT_TYPE, "application/octet-stream")],
            Body::from(bytes),
        )
            .into_response(),
        Ok(Err(r)) => bad_request(&r),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response(),
    }
}

/// `400` with the rejection as a JSON `error` object.
fn bad_request(r: &Reject) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        error_json(None, None, r),
    )
        .into_response()
}

#[derive(Debug, Deserialize)]
struct RecipeQuery {
    kind: Option<String>,
    preset: Option<String>,
}

/// A preset's recipe with the controls that edit it: `recipe` (the recipe
/// document), `fields` (every parameter: path, group, label, help, hard
/// range, slider range, choices) and the kind's `presets`, `preset`,
/// `size` and `size_range`.
async fn recipe_handler(
    query: Result<Query<RecipeQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return bad_request(&Reject::bad_message("bad query string"));
    };
    let Some(kind) = q.kind.filter(|k| k.len() <= 32) else {
        return bad_request(&Reject::bad_message("missing `kind`"));
    };
    let kind: WorldKind = match kind.parse() {
        Ok(k) => k,
        Err(e) => return bad_request(&reject(e)),
    };
    let d = NewWorld::defaults(kind);
    let preset = q.preset.unwrap_or_else(|| d.preset.to_string());
    let recipe = match Recipe::preset(kind, &preset) {
        Ok(r) => r,
        Err(e) => return bad_request(&reject(e)),
    };
    let body = json!({
        "kind": kind.name(),
        "recipe": recipe.to_json_value(),
        "fields": recipe_fields(kind),
        "preset": preset,
        "presets": d.presets,
        "size": d.size,
        "size_range": d.size_range,
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Previews drawn at once; more wait their turn.
static PREVIEWS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

#[derive(Debug, Deserialize)]
struct PreviewRequest {
    #[serde(flatten)]
    world: crate::protocol::NewWorld,
    #[serde(default)]
    pixels: Option<u32>,
    #[serde(default)]
    area: Option<f32>,
}

/// A picture of the world a `new_world` request would make (the same
/// fields, plus `pixels` and `area`), as a PNG; its size and area in the
/// `x-preview-*` headers. Nothing is written.
async fn preview_handler(body: Bytes) -> Response {
    if body.len() > MAX_MESSAGE_BYTES {
        return bad_request(&Reject::new(
            "too_large",
            format!("a preview request is at most {MAX_MESSAGE_BYTES} bytes"),
        ));
    }
    let req: PreviewRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return bad_request(&Reject::bad_message(format!("preview: {e}"))),
    };
    let Ok(_turn) = PREVIEWS.acquire().await else {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    };
    let drawn = tokio::task::spawn_blocking(move || {
        let new = check_new_world(&req.world)?;
        let options = PreviewOptions::DEFAULT
            .with_pixels(req.pixels.unwrap_or(PreviewOptions::DEFAULT.pixels))
            .with_area(req.area);
        preview(&new, &options).map_err(reject)
    })
    .await;
    match drawn {
        Ok(Ok(p)) => {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
            for (name, value) in [
                ("x-preview-width", p.width.to_string()),
                ("x-preview-height", p.height.to_string()),
                ("x-preview-area", p.area.to_string()),
            ] {
                if let Ok(v) = HeaderValue::from_str(&value) {
                    headers.insert(header::HeaderName::from_static(name), v);
                }
            }
            (headers, Body::from(p.png)).into_response()
        }
        Ok(Err(r)) => bad_request(&r),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response(),
    }
}

#[derive(Debug, Deserialize)]
struct ExportQuery {
    format: Option<String>,
    region: Option<String>,
}

async fn export_handler(
    State(state): State<AppState>,
    query: Result<Query<ExportQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return bad_request(&Reject::bad_message("bad query string"));
    };
    let Some(format) = q.format.filter(|f| f.len() <= 32) else {
        return bad_request(&Reject::bad_message("missing `format`"));
    };
    if q.region.as_ref().is_some_and(|r| r.len() > 256) {
        return bad_request(&Reject::invalid("region is too long"));
    }
    let (tx, rx) = oneshot::channel();
    if !state.send(Command::Export {
        format,
        region: q.region,
        reply: tx,
    }) {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    match rx.await {
        Ok(Ok(d)) => {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(d.content_type),
            );
            if let Ok(v) =
                HeaderValue::from_str(&format!("attachment; filename=\"{}\"", d.file_name))
            {
                headers.insert(header::CONTENT_DISPOSITION, v);
            }
            let body = match d.body {
                DownloadBody::Bytes(bytes) => Body::from(bytes),
                DownloadBody::Stream(rx) => {
                    Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
                        rx.recv().await.map(|block| (block, rx))
                    }))
                }
            };
            (headers, body).into_response()
        }
        Ok(Err(r)) => bad_request(&r),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response(),
    }
}

/// Frames above this are cut off by the WebSocket layer itself (the
/// connection drops); between [`MAX_MESSAGE_BYTES`] and this, the server
/// answers `too_large` and closes with 1009.
const HARD_LIMIT: usize = 1 << 20;

async fn ws_handler(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(HARD_LIMIT)
        .max_frame_size(HARD_LIMIT)
        .on_upgrade(move |socket| connection(socket, state))
}

/// How long a close frame may wait on a client that does not read.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

async fn connection(socket: WebSocket, state: AppState) {
    let id = state.inner.next_id.fetch_add(1, Ordering::Relaxed);
    let tx = Arc::new(Outbox::new(state.inner.queue_limit));
    if !state.send(Command::Connect { id, tx: tx.clone() }) {
        return;
    }
    let (mut sink, mut stream) = socket.split();
    let outbox = tx.clone();
    let mut writer = tokio::spawn(async move {
        while let Some(out) = outbox.next().await {
            let msg = match out {
                Out::Text(s) => Message::Text(s.into()),
                Out::Binary(b) => Message::Binary(b),
                Out::Close(code, reason) => {
                    let close = Message::Close(Some(CloseFrame {
                        code,
                        reason: reason.into(),
                    }));
                    let _ = tokio::time::timeout(CLOSE_WAIT, sink.send(close)).await;
                    break;
                }
            };
            // A write that waits on a client that stopped reading ends when
            // that client is given up on.
            let sent = tokio::select! {
                sent = sink.send(msg) => sent.is_ok(),
                () = outbox.fell_behind() => true,
            };
            if !sent {
                break;
            }
        }
        let _ = tokio::time::timeout(CLOSE_WAIT, sink.close()).await;
    });
    let mut writer_done = false;
    loop {
        let msg = tokio::select! {
            msg = stream.next() => msg,
            _ = &mut writer => {
                writer_done = true;
                break;
            }
        };
        let Some(msg) = msg else { break };
        match msg {
            Ok(Message::Text(text)) => {
                if text.len() > MAX_MESSAGE_BYTES {
                    let r = Reject::new(
                        "too_large",
                        format!(
                            "a message holds at most {MAX_MESSAGE_BYTES} bytes, got {}",
                            text.len()
                        ),
                    );
                    tx.push(Out::Text(error_json(None, None, &r)));
                    tx.push(Out::Close(1009, "message too large".into()));
                    break;
                }
                if !state.send(Command::Message {
                    id,
                    text: text.to_string(),
                }) {
                    break;
                }
            }
            Ok(Message::Binary(b)) => {
                if b.len() > MAX_MESSAGE_BYTES {
                    tx.push(Out::Close(1009, "message too large".into()));
                    break;
                }
                let r = Reject::bad_message("the server takes JSON text messages only");
                tx.push(Out::Text(error_json(None, None, &r)));
            }
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
    state.send(Command::Disconnect { id });
    tx.close();
    if !writer_done && tokio::time::timeout(CLOSE_WAIT, &mut writer).await.is_err() {
        writer.abort();
    }
}
