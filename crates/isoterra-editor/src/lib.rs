//! The isoterra web editor: a small local server that owns one world file,
//! applies brush strokes sent by a browser, persists them, and streams chunk
//! meshes back.
//!
//! The protocol (HTTP routes, JSON commands over one WebSocket, binary mesh
//! frames) is described in `docs/protocol.md`. The front end is embedded in
//! the library at build time, so a single binary serves everything.
//!
//! ```no_run
//! use isoterra_editor::{EditorOptions, serve};
//!
//! # async fn demo() -> Result<(), isoterra_editor::EditorError> {
//! let options = EditorOptions::new("world.isoterra").with_port(0);
//! let server = serve(options).await?;
//! println!("listening on {}", server.addr());
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! One thread owns the world: every command from every connection goes to
//! it through a channel, and it remeshes dirty chunks within a time budget
//! between commands. Connections only parse messages and forward frames, so
//! nothing heavy runs on the async reactor.

mod assets;
mod color;
mod error;
mod frame;
mod http;
mod kinds;
mod motion;
mod outbox;
mod protocol;
mod state;
mod stream;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

pub use error::EditorError;
pub use frame::{
    FLAG_SURFACE, FRAME_HEADER_BYTES, FRAME_MAGIC, FrameHeader, encode_frame, encode_surface_frame,
    parse_frame_header,
};

/// Reads a client's text message as the server does before applying it
/// (JSON, the message type, every field's type and form): `Ok` with the
/// message type, or `Err` with the `error` code and message the server
/// would reply. Values are checked against the open world only when the
/// server applies them. For tools and fuzzing; never panics.
pub fn parse_client_message(text: &str) -> Result<&'static str, (&'static str, String)> {
    match protocol::parse(text).1 {
        Ok(m) => Ok(m.type_name()),
        Err(r) => Err((r.code, r.message)),
    }
}

/// The largest text message a client may send, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The most dabs one stroke may hold.
pub const MAX_DABS_PER_STROKE: usize = isoterra::kind::schema::MAX_DABS_PER_STROKE;
/// The protocol version this server speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// How to run the editor server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EditorOptions {
    /// The world file; created with the default world (a map) when missing.
    /// Default value: `world.isoterra`.
    pub file: PathBuf,
    /// The address to listen on. Default value: `127.0.0.1`.
    pub host: IpAddr,
    /// The port; 0 picks a free one. Default value: `7878`.
    pub port: u16,
    /// Time spent remeshing per tick of the world thread before the rest
    /// waits for the next tick. Default value: 8 ms.
    pub mesh_budget: Duration,
    /// Try to open a browser on the editor's page ([`run`] only).
    /// Default value: `false`.
    pub open_browser: bool,
    /// The most bytes of messages queued for one connection. Mesh frames of
    /// a chunk replace that chunk's frame still queued; a client that stops
    /// reading and passes this all the same is closed with 1008 (the page
    /// reconnects and gets the current world). Default value: 64 MiB.
    pub max_queued_bytes: usize,
}

impl EditorOptions {
    /// The defaults (see each field) for the world file `file`. There is no
    /// `const` default: a path cannot be built in a constant.
    pub fn new(file: impl Into<PathBuf>) -> Self {
        EditorOptions {
            file: file.into(),
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 7878,
            mesh_budget: Duration::from_millis(8),
            open_browser: false,
            max_queued_bytes: 64 << 20,
        }
    }

    /// Sets [`file`](Self::file).
    pub fn with_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = file.into();
        self
    }

    /// Sets [`host`](Self::host).
    pub fn with_host(mut self, host: IpAddr) -> Self {
        self.host = host;
        self
    }

    /// Sets [`port`](Self::port).
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Sets [`mesh_budget`](Self::mesh_budget).
    pub fn with_mesh_budget(mut self, budget: Duration) -> Self {
        self.mesh_budget = budget;
        self
    }

    /// Sets [`max_queued_bytes`](Self::max_queued_bytes).
    pub fn with_max_queued_bytes(mut self, bytes: usize) -> Self {
        self.max_queued_bytes = bytes;
        self
    }

    /// Sets [`open_browser`](Self::open_browser).
    pub fn with_open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }
}

impl Default for EditorOptions {
    /// The defaults with the file `world.isoterra`.
    fn default() -> Self {
        Self::new("world.isoterra")
    }
}

/// A running editor server.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    world: Option<std::thread::JoinHandle<()>>,
    commands: std::sync::mpsc::Sender<state::Command>,
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The editor page's URL, `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops accepting connections, closes the open ones, and waits for the
    /// world thread to finish (every acknowledged stroke is already on disk).
    pub async fn shutdown(mut self) {
        self.stop().await;
    }

    async fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = self.commands.send(state::Command::Shutdown);
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
        if let Some(world) = self.world.take() {
            let _ = tokio::task::spawn_blocking(move || world.join()).await;
        }
    }

    /// Waits until the server stops (after [`shutdown`](Self::shutdown) from
    /// elsewhere, or a fatal error).
    async fn wait(&mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = self.commands.send(state::Command::Shutdown);
    }
}

/// Opens (or creates) the world file and starts serving on the options'
/// address. Returns once the socket is bound.
///
/// # Errors
///
/// [`EditorError::Store`] when the world file cannot be opened or created,
/// [`EditorError::Io`] when the address cannot be bound.
pub async fn serve(options: EditorOptions) -> Result<ServerHandle, EditorError> {
    let file = options.file.clone();
    let budget = options.mesh_budget;
    // Bound first: a port in use creates no world file.
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(options.host, options.port))
        .await
        .map_err(EditorError::Io)?;
    let doc = tokio::task::spawn_blocking(move || kinds::open_or_create(&file))
        .await
        .map_err(|e| EditorError::Io(std::io::Error::other(e.to_string())))??;
    let addr = listener.local_addr().map_err(EditorError::Io)?;
    let (commands, world) = state::spawn(doc, options.file.clone(), budget)?;
    let app = http::router(http::AppState::new(
        addr,
        options.host,
        commands.clone(),
        options.max_queued_bytes,
    ));
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let _ = rx.await;
        })
        .await;
    });
    Ok(ServerHandle {
        addr,
        shutdown: Some(tx),
        task: Some(task),
        world: Some(world),
        commands,
    })
}

/// What `run` says on standard error about a host that is not a loopback
/// address. The server answers only requests addressed to the host it
/// listens on (its Host check keeps other sites' pages out), so on an
/// unspecified address (`0.0.0.0`, `::`) a browser on another machine,
/// which names this machine's real address, is refused: the warning says
/// so, and what to give instead.
fn host_warning(host: std::net::IpAddr, file: &std::path::Path) -> Option<String> {
    if host.is_loopback() {
        return None;
    }
    let file = file.display();
    Some(if host.is_unspecified() {
        format!(
            "warning: the editor listens on {host} but answers only requests addressed to \
             127.0.0.1 or localhost: a browser on another machine gets 403 Forbidden. To edit \
             from another machine, give this machine's network address (--host 192.168.1.20, \
             say) and open that address there; anyone who can reach it can edit {file}"
        )
    } else {
        format!(
            "warning: the editor listens on {host}, which is not a loopback address: anyone \
             who can reach it can edit {file}"
        )
    })
}

/// Runs the editor until interrupted: serves, prints
/// `isoterra editor on http://HOST:PORT/` to stdout, and with
/// [`open_browser`](EditorOptions::open_browser) tries to open a browser.
/// A non-loopback host gets a warning on stderr.
///
/// # Errors
///
/// As [`serve`].
pub fn run(options: EditorOptions) -> Result<(), EditorError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(EditorError::Io)?;
    runtime.block_on(async move {
        if let Some(warning) = host_warning(options.host, &options.file) {
            eprintln!("{warning}");
        }
        let open = options.open_browser;
        let mut handle = serve(options).await?;
        let url = handle.url();
        {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "isoterra editor on {url}");
            let _ = out.flush();
        }
        if open {
            open_browser(&url);
        }
        // Ctrl+C closes the connections and the file cleanly; acknowledged
        // strokes are on disk either way.
        tokio::select! {
            _ = handle.wait() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        handle.stop().await;
        Ok(())
    })
}

/// Tries to open `url` in a browser; failures are ignored.
fn open_browser(url: &str) {
    let candidates: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(target_os = "windows") {
        &["explorer"]
    } else {
        &["xdg-open", "sensible-browser"]
    };
    for program in candidates {
        let spawned = std::process::Command::new(program)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if spawned.is_ok() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_other_machines_cannot_use_is_called_so() {
        let file = std::path::Path::new("w.isoterra");
        assert_eq!(host_warning("127.0.0.1".parse().unwrap(), file), None);
        assert_eq!(host_warning("::1".parse().unwrap(), file), None);
        let any = host_warning("0.0.0.0".parse().unwrap(), file).unwrap();
        assert!(
            any.contains("403 Forbidden") && any.contains("--host"),
            "{any}"
        );
        let lan = host_warning("192.168.1.20".parse().unwrap(), file).unwrap();
        assert!(lan.contains("anyone") && !lan.contains("403"), "{lan}");
    }

    #[test]
    fn options_default_to_loopback_on_7878() {
        let o = EditorOptions::new("a.isoterra");
        assert_eq!(o.host, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(o.port, 7878);
        assert_eq!(o.file, PathBuf::from("a.isoterra"));
        let o = o.with_port(0).with_open_browser(true);
        assert_eq!((o.port, o.open_browser), (0, true));
        assert_eq!(
            EditorOptions::default().file,
            PathBuf::from("world.isoterra")
        );
    }
}
