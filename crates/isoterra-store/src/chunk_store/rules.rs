//! The rules every [`ChunkStore`](super::ChunkStore) applies the same way,
//! so that backends accept and refuse the same input: metadata keys and
//! kinds, stroke parameters, reading [`WorldMeta`] back from raw entries,
//! format migrations, and which stroke an undo or a redo may move.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::types::{NewStroke, WorldMeta};
use crate::StoreError;

/// The metadata keys every world carries, which extra entries may not use
/// (public as [`WorldFile::RESERVED_META_KEYS`](crate::WorldFile::RESERVED_META_KEYS)).
pub(crate) const RESERVED_META_KEYS: [&str; 6] = [
    "kind",
    "format_version",
    "seed",
    "params",
    "created_ms",
    "created_by",
];

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Checks a stroke to log (a tool name is required) and gives its
/// parameters as the JSON text every store keeps.
pub(crate) fn stroke_params_json(stroke: &NewStroke) -> Result<String, StoreError> {
    if stroke.tool.is_empty() {
        return Err(StoreError::input("stroke tool", "must not be empty"));
    }
    serde_json::to_string(&stroke.params).map_err(|source| StoreError::Json {
        what: "stroke parameters",
        source,
    })
}

/// The world parameters of `meta` as the JSON text every store keeps.
pub(crate) fn meta_params_json(meta: &WorldMeta) -> Result<String, StoreError> {
    serde_json::to_string(&meta.params).map_err(|source| StoreError::Json {
        what: "world parameters",
        source,
    })
}

/// The metadata entries every new world gets, `params` being
/// [`meta_params_json`] of `meta`.
pub(crate) fn initial_meta_entries(meta: &WorldMeta, params: &str) -> [(&'static str, String); 6] {
    [
        ("kind", meta.kind.clone()),
        ("format_version", meta.format_version.to_string()),
        ("seed", meta.seed.to_string()),
        ("params", params.to_string()),
        ("created_ms", now_ms().to_string()),
        (
            "created_by",
            concat!("isoterra-store ", env!("CARGO_PKG_VERSION")).to_string(),
        ),
    ]
}

/// Reads [`WorldMeta`] through `get` (one raw entry by key); a missing or
/// malformed entry is [`StoreError::Corrupt`] at `location`.
pub(crate) fn parse_meta(
    location: &Path,
    get: impl Fn(&str) -> Result<Option<String>, StoreError>,
) -> Result<WorldMeta, StoreError> {
    let get = |key: &str| -> Result<String, StoreError> {
        get(key)?
            .ok_or_else(|| StoreError::corrupt(location, format!("metadata `{key}` is missing")))
    };
    let kind = get("kind")?;
    let format_version = get("format_version")?
        .parse::<u32>()
        .map_err(|e| StoreError::corrupt(location, format!("metadata `format_version`: {e}")))?;
    let seed = get("seed")?
        .parse::<u64>()
        .map_err(|e| StoreError::corrupt(location, format!("metadata `seed`: {e}")))?;
    let params = serde_json::from_str(&get("params")?)
        .map_err(|e| StoreError::corrupt(location, format!("metadata `params`: {e}")))?;
    Ok(WorldMeta {
        kind,
        format_version,
        seed,
        params,
    })
}

/// Checks a kind's format migration: the version must not go back and no
/// entry may use a reserved key.
pub(crate) fn check_migration(
    current: u32,
    format_version: u32,
    entries: &[(&str, &str)],
) -> Result<(), StoreError> {
    if format_version < current {
        return Err(StoreError::input(
            "format version",
            format!("{format_version} is older than the file's {current}"),
        ));
    }
    if let Some((key, _)) = entries.iter().find(|(k, _)| RESERVED_META_KEYS.contains(k)) {
        return Err(StoreError::input(
            "metadata key",
            format!("`{key}` is reserved"),
        ));
    }
    Ok(())
}

/// Checks that stroke `id` may be undone: it must be the last done one
/// (`last_done`, 0 for none). `path` names the store in the error.
pub(crate) fn check_undo(path: &Path, id: i64, last_done: i64) -> Result<(), StoreError> {
    if last_done != id || id == 0 {
        let last = if last_done == 0 {
            "none".to_string()
        } else {
            last_done.to_string()
        };
        return Err(StoreError::History {
            path: path.to_path_buf(),
            reason: format!("cannot undo stroke {id}: the last done stroke is {last}"),
        });
    }
    Ok(())
}

/// Checks that stroke `id` may be redone: it must be the first undone one.
pub(crate) fn check_redo(
    path: &Path,
    id: i64,
    first_undone: Option<i64>,
) -> Result<(), StoreError> {
    if first_undone != Some(id) {
        let first = first_undone.map_or("none".to_string(), |f| f.to_string());
        return Err(StoreError::History {
            path: path.to_path_buf(),
            reason: format!("cannot redo stroke {id}: the first undone stroke is {first}"),
        });
    }
    Ok(())
}

/// True for 1 to 64 ASCII letters, digits, `_` or `-`.
fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

pub(crate) fn validate_entries(entries: &[(&str, &str)]) -> Result<(), StoreError> {
    for (i, &(key, _)) in entries.iter().enumerate() {
        let reason = if !is_plain_name(key) {
            "use 1 to 64 ASCII letters, digits, `_` or `-`"
        } else if RESERVED_META_KEYS.contains(&key) {
            "every world file writes this entry itself; pick another key"
        } else if entries[..i].iter().any(|&(k, _)| k == key) {
            "given twice"
        } else {
            continue;
        };
        return Err(StoreError::input(
            "metadata key",
            format!("{key:?}: {reason}"),
        ));
    }
    Ok(())
}

pub(crate) fn validate_meta(meta: &WorldMeta) -> Result<(), StoreError> {
    if !is_plain_name(&meta.kind) {
        return Err(StoreError::input(
            "world kind",
            format!(
                "{:?}: use 1 to 64 ASCII letters, digits, `_` or `-`",
                meta.kind
            ),
        ));
    }
    Ok(())
}
