//! The editor's error type.

/// What can go wrong starting or running the editor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditorError {
    /// The world file could not be opened, created or written.
    #[error(transparent)]
    Store(#[from] isoterra::store::StoreError),
    /// A world could not be built from the parameters given.
    #[error(transparent)]
    World(#[from] isoterra::world::WorldError),
    /// A world could not be opened or created through the kind layer.
    #[error(transparent)]
    Kind(#[from] isoterra::kind::KindError),
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
