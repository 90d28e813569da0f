//! Global integer keys for points on the grid (nodes and crossed edges).

/// A global key for a point on the grid: a node, or a crossed horizontal or
/// vertical edge. Keys do not depend on chunking, so welding and contour
/// joining across chunks compare integers, never floats.
///
/// Bit layout (`x`, `y` are global node coordinates, `kind` a [`KeyKind`]):
///
/// ```text
///  63            34 33             2 1  0
/// +----------------+----------------+----+
/// |   y (30 bits)  |   x (32 bits)  |kind|     key = ((y << 32) | x) << 2 | kind
/// +----------------+----------------+----+
///
/// kind 0: node (x, y)
/// kind 1: horizontal edge (x, y)-(x+1, y)
/// kind 2: vertical edge   (x, y)-(x, y+1)
/// ```
///
/// `y` must be at most [`EdgeKey::MAX_Y`]; the meshers check this (including
/// any [`key_offset`](crate::SquaresOptions::key_offset)) before producing keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EdgeKey(pub u64);

/// What an [`EdgeKey`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum KeyKind {
    /// A grid node `(x, y)`.
    Node = 0,
    /// The horizontal edge from node `(x, y)` to node `(x + 1, y)`.
    Horizontal = 1,
    /// The vertical edge from node `(x, y)` to node `(x, y + 1)`.
    Vertical = 2,
}

impl EdgeKey {
    /// The largest `y` a key can hold (`2^30 - 1`).
    pub const MAX_Y: u32 = (1 << 30) - 1;

    /// The key of `kind` at global node coordinates `(x, y)`.
    ///
    /// `y` is truncated to 30 bits; keep it at most [`EdgeKey::MAX_Y`].
    #[inline]
    pub const fn new(x: u32, y: u32, kind: KeyKind) -> Self {
        let y = (y & Self::MAX_Y) as u64;
        EdgeKey((((y << 32) | x as u64) << 2) | kind as u64)
    }

    /// The key of node `(x, y)`.
    #[inline]
    pub const fn node(x: u32, y: u32) -> Self {
        Self::new(x, y, KeyKind::Node)
    }

    /// The key of the horizontal edge `(x, y)-(x + 1, y)`.
    #[inline]
    pub const fn horizontal(x: u32, y: u32) -> Self {
        Self::new(x, y, KeyKind::Horizontal)
    }

    /// The key of the vertical edge `(x, y)-(x, y + 1)`.
    #[inline]
    pub const fn vertical(x: u32, y: u32) -> Self {
        Self::new(x, y, KeyKind::Vertical)
    }

    /// The global x of the node (or of the lower-index node of the edge).
    #[inline]
    pub const fn x(self) -> u32 {
        (self.0 >> 2) as u32
    }

    /// The global y of the node (or of the lower-index node of the edge).
    #[inline]
    pub const fn y(self) -> u32 {
        (self.0 >> 34) as u32
    }

    /// What the key names, or `None` for the unused kind value 3.
    #[inline]
    pub const fn kind(self) -> Option<KeyKind> {
        match self.0 & 3 {
            0 => Some(KeyKind::Node),
            1 => Some(KeyKind::Horizontal),
            2 => Some(KeyKind::Vertical),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_round_trips() {
        let k = EdgeKey::vertical(7, 9);
        assert_eq!(k.0, ((9u64 << 32 | 7) << 2) | 2);
        assert_eq!((k.x(), k.y(), k.kind()), (7, 9, Some(KeyKind::Vertical)));
        let k = EdgeKey::horizontal(u32::MAX, EdgeKey::MAX_Y);
        assert_eq!(k.x(), u32::MAX);
        assert_eq!(k.y(), EdgeKey::MAX_Y);
        assert_eq!(k.kind(), Some(KeyKind::Horizontal));
        assert_eq!(EdgeKey::node(0, 0).0, 0);
        assert_eq!(EdgeKey(3).kind(), None);
    }

    #[test]
    fn kinds_never_collide() {
        let a = EdgeKey::node(3, 4);
        let b = EdgeKey::horizontal(3, 4);
        let c = EdgeKey::vertical(3, 4);
        assert!(a != b && b != c && a != c);
        assert!(EdgeKey::node(4, 3) != a);
    }
}
