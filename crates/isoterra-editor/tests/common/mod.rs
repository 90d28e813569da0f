//! Shared helpers: a server on a fresh world, a WebSocket client, raw HTTP.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use isoterra_editor::{EditorOptions, ServerHandle, parse_frame_header, serve};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long any single wait may take before a test fails.
pub const WAIT: Duration = Duration::from_secs(60);

/// A world kind the tests cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Side2d,
    Heightmap,
    Voxel,
    Map,
}

pub const KINDS: [Kind; 4] = [Kind::Map, Kind::Side2d, Kind::Heightmap, Kind::Voxel];

/// Creates a small world file of `kind` in `dir`.
pub fn create_world(dir: &Path, kind: Kind) -> PathBuf {
    let path = dir.join(format!("{kind:?}.isoterra").to_lowercase());
    match kind {
        Kind::Side2d => {
            use isoterra::field::{Side2dGen, Side2dPreset};
            let generator = Side2dGen::DEFAULT
                .with_preset(Side2dPreset::Hills)
                .with_seed(3)
                .with_width_cells(128)
                .with_height_cells(64);
            let params = isoterra::world::Side2dParams::DEFAULT
                .with_generator(generator)
                .with_chunk_cells(32);
            isoterra::store::Side2dDocument::create(&path, &params).expect("create side2d");
        }
        Kind::Heightmap => {
            let params = isoterra::world::HeightmapParams::DEFAULT
                .with_seed(3)
                .with_chunk_cells(32);
            isoterra::store::HeightmapDocument::create(&path, &params).expect("create heightmap");
        }
        Kind::Voxel => {
            let params = isoterra::world::VoxelParams::DEFAULT.with_chunk_cells(16);
            isoterra::store::VoxelDocument::create(&path, &params).expect("create voxel");
        }
        Kind::Map => {
            let params = isoterra::world::MapParams::DEFAULT
                .with_size(96, 96)
                .with_chunk_cells(32)
                .with_seed(3);
            isoterra::store::MapDocument::create(&path, &params).expect("create map");
        }
    }
    path
}

/// A server on 127.0.0.1 with any free port.
pub async fn start(path: &Path) -> ServerHandle {
    serve(EditorOptions::new(path).with_port(0))
        .await
        .expect("server starts")
}

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What a client received.
#[derive(Debug, Clone)]
pub enum Got {
    Json(Value),
    Frame(Vec<u8>),
    Closed(Option<u16>),
}

/// A WebSocket client with the server's own Origin.
pub async fn connect(addr: SocketAddr) -> Ws {
    connect_with(addr, Some(&format!("http://{addr}")), None)
        .await
        .expect("connects")
}

/// A WebSocket client with the given Origin and Host headers.
pub async fn connect_with(
    addr: SocketAddr,
    origin: Option<&str>,
    host: Option<&str>,
) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    let mut req = format!("ws://{addr}/ws").into_client_request()?;
    if let Some(o) = origin {
        req.headers_mut()
            .insert("Origin", o.parse().expect("header"));
    }
    if let Some(h) = host {
        req.headers_mut().insert("Host", h.parse().expect("header"));
    }
    let (ws, _) = tokio_tungstenite::connect_async(req).await?;
    Ok(ws)
}

pub async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::Text(v.to_string().into()))
        .await
        .expect("send");
}

pub async fn send_text(ws: &mut Ws, text: &str) {
    ws.send(Message::Text(text.to_string().into()))
        .await
        .expect("send");
}

/// The next message (JSON, frame or close), or `None` after `wait`.
pub async fn next_within(ws: &mut Ws, wait: Duration) -> Option<Got> {
    loop {
        let msg = match tokio::time::timeout(wait, ws.next()).await {
            Err(_) => return None,
            Ok(None) => return Some(Got::Closed(None)),
            Ok(Some(Err(_))) => return Some(Got::Closed(None)),
            Ok(Some(Ok(m))) => m,
        };
        match msg {
            Message::Text(t) => {
                return Some(Got::Json(
                    serde_json::from_str(&t).expect("server sends JSON"),
                ));
            }
            Message::Binary(b) => return Some(Got::Frame(b.to_vec())),
            Message::Close(c) => return Some(Got::Closed(c.map(|c| u16::from(c.code)))),
            _ => {}
        }
    }
}

/// Reads until a JSON message of `ty` arrives; returns it and every frame
/// seen on the way.
pub async fn until_json(ws: &mut Ws, ty: &str) -> (Value, Vec<Vec<u8>>) {
    let mut frames = Vec::new();
    loop {
        match next_within(ws, WAIT).await {
            Some(Got::Json(v)) if v["type"] == ty => return (v, frames),
            Some(Got::Json(_)) => {}
            Some(Got::Frame(f)) => frames.push(f),
            Some(Got::Closed(c)) => panic!("closed ({c:?}) while waiting for `{ty}`"),
            None => panic!("no `{ty}` within {WAIT:?}"),
        }
    }
}

/// Collects frames until none arrives for `quiet`.
pub async fn drain(ws: &mut Ws, quiet: Duration) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    while let Some(got) = next_within(ws, quiet).await {
        match got {
            Got::Frame(f) => frames.push(f),
            Got::Json(_) => {}
            Got::Closed(c) => panic!("closed ({c:?})"),
        }
    }
    frames
}

/// Frames keyed by (kind, layer, chunk): the latest of each.
pub fn latest(frames: &[Vec<u8>]) -> std::collections::BTreeMap<(u8, u8, [i32; 3]), Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    for f in frames {
        let h = parse_frame_header(f).expect("every frame parses");
        out.insert((h.kind, h.layer, h.chunk), f.clone());
    }
    out
}

/// The camera message that streams around `at` for the endless kinds.
pub fn camera(at: [f32; 3], view_distance: f32) -> Value {
    json!({"type": "camera", "position": at, "forward": [0, -1, 0], "view_distance": view_distance})
}

/// A point on the surface where a stroke of `kind` changes something,
/// and the tool to use.
pub fn stroke_spot(kind: Kind) -> ([f32; 3], &'static str, Value) {
    match kind {
        // The hills preset has ground in the lower half.
        Kind::Side2d => ([64.0, 16.0, 0.0], "dig", json!({})),
        Kind::Heightmap => ([8.0, 0.0, 8.0], "raise", json!({})),
        // The default caves world is solid around the origin in places; fill
        // adds matter where there is air, so "add" changes something anywhere
        // there is air and "dig" anywhere there is rock: use add and dig.
        Kind::Voxel => ([4.0, 4.0, 4.0], "add", json!({"material": 2})),
        Kind::Map => ([40.0, 0.0, 40.0], "raise", json!({})),
    }
}

/// Sends one stroke of `dabs` dabs around `at` and returns the ack.
pub async fn stroke(
    ws: &mut Ws,
    id: &str,
    tool: &str,
    params: Value,
    at: [f32; 3],
    dabs: usize,
    radius: f32,
) -> (Value, Vec<Vec<u8>>) {
    send(
        ws,
        json!({"type": "stroke_begin", "stroke": id, "tool": tool, "radius": radius,
               "strength": 1.0, "params": params}),
    )
    .await;
    for k in 0..dabs {
        let p = [at[0] + k as f32, at[1], at[2]];
        send(ws, json!({"type": "dab", "stroke": id, "at": p})).await;
    }
    send(ws, json!({"type": "stroke_end", "stroke": id})).await;
    until_json(ws, "ack").await
}

/// `GET path` with the given headers over a raw connection: the status code.
pub async fn http_status(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> u16 {
    let (status, _) = http_get(addr, path, headers).await;
    status
}

/// `GET path`: the status code and the body.
pub async fn http_get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, Vec<u8>) {
    http_request(addr, "GET", path, headers, &[]).await
}

/// `POST path` with a JSON `body`: the status code and the response body.
pub async fn http_post(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    http_request(addr, "POST", path, headers, body).await
}

async fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if method == "POST" {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).await.expect("write");
    stream.write_all(body).await.expect("write");
    let mut buf = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut buf))
        .await
        .expect("response in time")
        .expect("read");
    let text = String::from_utf8_lossy(&buf);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let body_at = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
        .unwrap_or(buf.len());
    let head = String::from_utf8_lossy(&buf[..body_at]).to_ascii_lowercase();
    let body = &buf[body_at..];
    if head.contains("transfer-encoding: chunked") {
        return (status, dechunk(body));
    }
    (status, body.to_vec())
}

/// The bytes of a chunked HTTP/1.1 body (a streamed download).
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = std::str::from_utf8(&raw[..line_end]).expect("chunk size");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
            .expect("hex chunk size");
        raw = &raw[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// `/api/info` as JSON, with the server's own Host.
pub async fn info(addr: SocketAddr) -> Value {
    let host = addr.to_string();
    let (status, body) = http_get(addr, "/api/info", &[("Host", &host)]).await;
    assert_eq!(status, 200);
    json_body(&body)
}

/// The JSON object in a response body (which may be chunked).
pub fn json_body(body: &[u8]) -> Value {
    let text = String::from_utf8_lossy(body);
    let start = text.find('{').expect("JSON body");
    let end = text.rfind('}').expect("JSON body");
    serde_json::from_str(&text[start..=end]).expect("JSON body")
}
