//! The PostgreSQL server the tests run against (the store's here; the
//! command line's and the editor's include this file too): the URL in
//! `ISOTERRA_POSTGRES_URL` (a server and database, without `world=`; start a
//! throwaway one with `.ci/start-postgres`). Without it the tests skip with
//! a loud message, unless `ISOTERRA_REQUIRE_POSTGRES=1` (CI), which makes
//! them fail instead.

use std::sync::atomic::{AtomicU32, Ordering};

/// The server's URL, or `None` (after saying so on stderr) when there is
/// none and none is required.
pub fn server(test: &str) -> Option<String> {
    match std::env::var("ISOTERRA_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("ISOTERRA_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "{test}: ISOTERRA_REQUIRE_POSTGRES=1 but ISOTERRA_POSTGRES_URL is not set \
                 (start a server with .ci/start-postgres)"
            );
            eprintln!(
                "\n*** SKIPPED {test}: no PostgreSQL server (set ISOTERRA_POSTGRES_URL, \
                 e.g. from .ci/start-postgres) ***\n"
            );
            None
        }
    }
}

/// The URL of a world on `server` that no other test uses.
pub fn world_url(server: &str, tag: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("{tag}-{}-{nanos}-{n}", std::process::id());
    let sep = if server.contains('?') { '&' } else { '?' };
    format!("{server}{sep}world={}", &name[..name.len().min(64)])
}
