//! The editor's error type.

/// What can go wrong starting or running the editor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditorError {
    /// The world file could not be opened, created or written.
    #[error(transparent)]
    Store(#[from] isoterra_store::StoreError),
    /// A world could not be built from the parameters given.
    #[error(transparent)]
    World(#[from] isoterra_world::WorldError),
    /// A socket or thread could not be set up.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A world file holds a kind this build cannot edit.
    #[error("{path} holds a `{kind}` world, which the editor cannot open")]
    UnsupportedKind {
        /// The file.
        path: String,
        /// The kind it holds.
        kind: String,
    },
}
