//! Sparse, per-layer edits of a map: what a stroke changed, for undo and redo.

use isoterra_field::{
    LayerMask, MAX_LEVEL, MAX_TEXTURES, MapLayer, MapLayers, PathingOverride, Splat,
};

use crate::{EditDirection, WorldError};

/// Magic of [`MapEdit::to_bytes`].
const MAGIC: &[u8; 4] = b"IME1";

/// The changed nodes of one layer with their values before and after.
///
/// Values are kept as raw bits so undo and redo restore exact bytes: `f32`
/// layers hold `to_bits()`, the splat layer [`Splat::to_bytes`] read as a
/// little-endian `u64`, the pathing layer the byte itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LayerChange {
    pub(crate) layer: MapLayer,
    pub(crate) nodes: Vec<u32>,
    pub(crate) before: Vec<u64>,
    pub(crate) after: Vec<u64>,
}

/// What one stroke changed in a map: for each layer it touched, the storage
/// indices of the changed nodes (ascending) with their values before and
/// after. Only nodes whose value actually changed are listed; a stroke that
/// changed nothing gives an empty edit.
///
/// Apply it with [`MapWorld::apply_edit`](crate::MapWorld::apply_edit):
/// [`Backward`](EditDirection::Backward) writes the values before (undo),
/// [`Forward`](EditDirection::Forward) the values after (redo); both restore
/// the exact bits. [`to_bytes`](Self::to_bytes) / [`from_bytes`](Self::from_bytes)
/// give a compact binary form for a stroke log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MapEdit {
    /// `[width_cells, depth_cells]` of the map it was made on (`[0, 0]` when empty).
    pub(crate) cells: [u32; 2],
    /// One entry per touched layer, in [`MapLayer`] order, none empty.
    pub(crate) changes: Vec<LayerChange>,
}

/// Bytes per value of `layer` in [`MapEdit::to_bytes`].
const fn value_bytes(layer: MapLayer) -> usize {
    match layer {
        MapLayer::Splat => 8,
        MapLayer::Pathing => 1,
        _ => 4,
    }
}

fn layer_from_id(id: u8) -> Option<MapLayer> {
    MapLayer::ALL.into_iter().find(|l| *l as u8 == id)
}

impl MapEdit {
    /// True when the edit changed nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The layers the edit changed.
    pub fn layers(&self) -> LayerMask {
        self.changes
            .iter()
            .fold(LayerMask::NONE, |m, c| m.with(c.layer))
    }

    /// Number of distinct nodes changed in any layer.
    pub fn changed_nodes(&self) -> usize {
        match self.changes.len() {
            0 => 0,
            1 => self.changes[0].nodes.len(),
            _ => {
                let mut all: Vec<u32> = self
                    .changes
                    .iter()
                    .flat_map(|c| c.nodes.iter().copied())
                    .collect();
                all.sort_unstable();
                all.dedup();
                all.len()
            }
        }
    }

    /// `[width_cells, depth_cells]` of the map the edit was made on
    /// (`[0, 0]` for an empty edit).
    pub fn cells(&self) -> [u32; 2] {
        self.cells
    }

    /// Storage indices of the nodes changed in `layer`, ascending (empty
    /// when the layer was not touched).
    pub fn nodes(&self, layer: MapLayer) -> &[u32] {
        self.change(layer).map_or(&[], |c| &c.nodes)
    }

    pub(crate) fn change(&self, layer: MapLayer) -> Option<&LayerChange> {
        self.changes.iter().find(|c| c.layer == layer)
    }

    /// This edit and `other`, made on the same map on other layers, as one
    /// edit (changes kept in layer order).
    pub(crate) fn merged(mut self, other: MapEdit) -> MapEdit {
        if self.is_empty() {
            return other;
        }
        if other.is_empty() {
            return self;
        }
        debug_assert_eq!(self.cells, other.cells, "edits of two map sizes");
        debug_assert!(
            other.changes.iter().all(|c| self.change(c.layer).is_none()),
            "edits of one layer"
        );
        self.changes.extend(other.changes);
        self.changes.sort_by_key(|c| c.layer as u8);
        self
    }

    /// The edit that undoes this one (before and after swapped).
    pub fn inverse(&self) -> MapEdit {
        MapEdit {
            cells: self.cells,
            changes: self
                .changes
                .iter()
                .map(|c| LayerChange {
                    layer: c.layer,
                    nodes: c.nodes.clone(),
                    before: c.after.clone(),
                    after: c.before.clone(),
                })
                .collect(),
        }
    }

    /// Checks that the edit is well formed on its own: layers in order and
    /// each at most once, parallel lists, strictly ascending nodes inside a
    /// map of [`cells`](Self::cells), and every value valid for its layer
    /// (finite, levels in `-0.5..=15.5`, softness in `0..=1`, texture ids
    /// below 16, known pathing bits).
    ///
    /// # Errors
    ///
    /// [`WorldError::MalformedEdit`] saying what is wrong.
    pub fn validate(&self) -> Result<(), WorldError> {
        if self.changes.is_empty() {
            return Ok(());
        }
        let [w, d] = self.cells;
        if w == 0
            || d == 0
            || w > isoterra_field::MAX_MAP_CELLS
            || d > isoterra_field::MAX_MAP_CELLS
        {
            return Err(WorldError::malformed(format!(
                "map size {w} x {d} cells is not a valid map"
            )));
        }
        let node_count = (u64::from(w) + 1) * (u64::from(d) + 1);
        let mut last: Option<MapLayer> = None;
        for c in &self.changes {
            if last.is_some_and(|l| l >= c.layer) {
                return Err(WorldError::malformed(format!(
                    "layer `{}` is out of order or repeated",
                    c.layer.name()
                )));
            }
            last = Some(c.layer);
            let n = c.nodes.len();
            if n == 0 || c.before.len() != n || c.after.len() != n {
                return Err(WorldError::malformed(format!(
                    "layer `{}`: {} nodes with {} / {} values (need the same non-zero count)",
                    c.layer.name(),
                    n,
                    c.before.len(),
                    c.after.len()
                )));
            }
            if let Some(wnd) = c.nodes.windows(2).find(|p| p[0] >= p[1]) {
                return Err(WorldError::malformed(format!(
                    "layer `{}`: nodes must be strictly ascending, found {} then {}",
                    c.layer.name(),
                    wnd[0],
                    wnd[1]
                )));
            }
            if let Some(&last_node) = c.nodes.last()
                && u64::from(last_node) >= node_count
            {
                return Err(WorldError::malformed(format!(
                    "layer `{}`: node {last_node} is outside the map ({node_count} nodes)",
                    c.layer.name()
                )));
            }
            for (side, values) in [("before", &c.before), ("after", &c.after)] {
                if let Some(k) = values.iter().position(|&v| !value_ok(c.layer, v)) {
                    return Err(WorldError::malformed(format!(
                        "layer `{}`: `{side}` value {} of node {} is not valid for the layer",
                        c.layer.name(),
                        describe(c.layer, values[k]),
                        c.nodes[k]
                    )));
                }
            }
        }
        Ok(())
    }

    /// The edit in a compact little-endian binary form: `"IME1"`, the map's
    /// `width_cells` and `depth_cells` (u32), the layer count (u8), then per
    /// layer its id (u8, [`MapLayer`] order), the node count `n` (u32), `n`
    /// node indices (u32), then `n` values before and `n` values after
    /// (4 bytes of `f32` bits, 8 splat bytes, or 1 pathing byte each).
    pub fn to_bytes(&self) -> Vec<u8> {
        let size: usize = 13
            + self
                .changes
                .iter()
                .map(|c| 5 + c.nodes.len() * (4 + 2 * value_bytes(c.layer)))
                .sum::<usize>();
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.cells[0].to_le_bytes());
        out.extend_from_slice(&self.cells[1].to_le_bytes());
        out.push(self.changes.len() as u8);
        for c in &self.changes {
            out.push(c.layer as u8);
            out.extend_from_slice(&(c.nodes.len() as u32).to_le_bytes());
            for n in &c.nodes {
                out.extend_from_slice(&n.to_le_bytes());
            }
            let vb = value_bytes(c.layer);
            for v in c.before.iter().chain(&c.after) {
                out.extend_from_slice(&v.to_le_bytes()[..vb]);
            }
        }
        out
    }

    /// Reads what [`to_bytes`](Self::to_bytes) wrote and checks it with
    /// [`validate`](Self::validate). Never panics on bad input.
    ///
    /// # Errors
    ///
    /// [`WorldError::MalformedEdit`] when the bytes are truncated, have
    /// trailing data or hold a malformed edit.
    pub fn from_bytes(bytes: &[u8]) -> Result<MapEdit, WorldError> {
        let mut r = Cursor {
            data: bytes,
            pos: 0,
        };
        if r.take(4) != Some(MAGIC.as_slice()) {
            return Err(WorldError::malformed("missing the IME1 header"));
        }
        let short = || WorldError::malformed("the edit bytes are truncated");
        let cells = [r.u32().ok_or_else(short)?, r.u32().ok_or_else(short)?];
        let count = r.u8().ok_or_else(short)?;
        let mut changes = Vec::with_capacity(usize::from(count).min(MapLayer::ALL.len()));
        for _ in 0..count {
            let id = r.u8().ok_or_else(short)?;
            let layer = layer_from_id(id)
                .ok_or_else(|| WorldError::malformed(format!("unknown layer id {id}")))?;
            let n = r.u32().ok_or_else(short)? as usize;
            let vb = value_bytes(layer);
            let need = n
                .checked_mul(4 + 2 * vb)
                .ok_or_else(|| WorldError::malformed("node count overflows"))?;
            if need > r.remaining() {
                return Err(short());
            }
            let nodes: Vec<u32> = (0..n).map(|_| r.u32().unwrap_or(0)).collect();
            let mut read_values = || -> Vec<u64> {
                (0..n)
                    .map(|_| {
                        let mut b = [0u8; 8];
                        if let Some(s) = r.take(vb) {
                            b[..vb].copy_from_slice(s);
                        }
                        u64::from_le_bytes(b)
                    })
                    .collect()
            };
            let before = read_values();
            let after = read_values();
            changes.push(LayerChange {
                layer,
                nodes,
                before,
                after,
            });
        }
        if r.remaining() != 0 {
            return Err(WorldError::malformed(format!(
                "{} trailing bytes after the edit",
                r.remaining()
            )));
        }
        let edit = MapEdit {
            cells: if changes.is_empty() { [0, 0] } else { cells },
            changes,
        };
        edit.validate()?;
        Ok(edit)
    }

    /// The values this edit writes in `dir`, and those it expects to find.
    pub(crate) fn sides(c: &LayerChange, dir: EditDirection) -> (&[u64], &[u64]) {
        match dir {
            EditDirection::Forward => (&c.after, &c.before),
            EditDirection::Backward => (&c.before, &c.after),
        }
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
}

/// Whether raw value `v` is valid in `layer`.
fn value_ok(layer: MapLayer, v: u64) -> bool {
    match layer {
        MapLayer::Splat => Splat::from_bytes(v.to_le_bytes())
            .ids
            .iter()
            .all(|&id| id < MAX_TEXTURES),
        MapLayer::Pathing => v <= u64::from(PathingOverride::ALL),
        _ => {
            if v > u64::from(u32::MAX) {
                return false;
            }
            let f = f32::from_bits(v as u32);
            match layer {
                MapLayer::Level => (-0.5..=MAX_LEVEL as f32 + 0.5).contains(&f),
                MapLayer::Softness => (0.0..=1.0).contains(&f),
                _ => f.is_finite(),
            }
        }
    }
}

fn describe(layer: MapLayer, v: u64) -> String {
    match layer {
        MapLayer::Splat => format!("{:?}", Splat::from_bytes(v.to_le_bytes())),
        MapLayer::Pathing => v.to_string(),
        _ if v <= u64::from(u32::MAX) => f32::from_bits(v as u32).to_string(),
        _ => format!("{v:#x}"),
    }
}

/// Reads node `i` of `layer` as raw bits (see [`LayerChange`]).
#[inline]
pub(crate) fn read_raw(layers: &MapLayers, layer: MapLayer, i: usize) -> u64 {
    match layer {
        MapLayer::Ground => u64::from(layers.ground[i].to_bits()),
        MapLayer::Level => u64::from(layers.level[i].to_bits()),
        MapLayer::Softness => u64::from(layers.softness[i].to_bits()),
        MapLayer::Height => u64::from(layers.height[i].to_bits()),
        MapLayer::Water => u64::from(layers.water[i].to_bits()),
        MapLayer::Splat => u64::from_le_bytes(layers.splat[i].to_bytes()),
        MapLayer::Pathing => u64::from(layers.pathing[i]),
    }
}

/// Writes raw bits `v` (valid for `layer`) to node `i` of `layer`.
#[inline]
pub(crate) fn write_raw(layers: &mut MapLayers, layer: MapLayer, i: usize, v: u64) {
    match layer {
        MapLayer::Ground => layers.ground[i] = f32::from_bits(v as u32),
        MapLayer::Level => layers.level[i] = f32::from_bits(v as u32),
        MapLayer::Softness => layers.softness[i] = f32::from_bits(v as u32),
        MapLayer::Height => layers.height[i] = f32::from_bits(v as u32),
        MapLayer::Water => layers.water[i] = f32::from_bits(v as u32),
        MapLayer::Splat => layers.splat[i] = Splat::from_bytes(v.to_le_bytes()),
        MapLayer::Pathing => layers.pathing[i] = v as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MapEdit {
        MapEdit {
            cells: [4, 4],
            changes: vec![
                LayerChange {
                    layer: MapLayer::Level,
                    nodes: vec![1, 7],
                    before: vec![0, 0],
                    after: vec![u64::from(1.0f32.to_bits()), u64::from(0.75f32.to_bits())],
                },
                LayerChange {
                    layer: MapLayer::Splat,
                    nodes: vec![3],
                    before: vec![u64::from_le_bytes(Splat::single(0).to_bytes())],
                    after: vec![u64::from_le_bytes(Splat::single(5).to_bytes())],
                },
                LayerChange {
                    layer: MapLayer::Pathing,
                    nodes: vec![24],
                    before: vec![0],
                    after: vec![7],
                },
            ],
        }
    }

    #[test]
    fn bytes_round_trip_and_describe_the_edit() {
        let e = sample();
        e.validate().unwrap();
        assert_eq!(MapEdit::from_bytes(&e.to_bytes()).unwrap(), e);
        assert_eq!(e.changed_nodes(), 4);
        assert!(e.layers().contains(MapLayer::Splat) && !e.layers().contains(MapLayer::Height));
        assert_eq!(e.inverse().inverse(), e);
        assert_eq!(e.nodes(MapLayer::Level), &[1, 7]);
        let empty = MapEdit::default();
        assert_eq!(MapEdit::from_bytes(&empty.to_bytes()).unwrap(), empty);
    }

    #[test]
    fn damaged_bytes_are_errors_not_panics() {
        let bytes = sample().to_bytes();
        for cut in 0..bytes.len() {
            assert!(MapEdit::from_bytes(&bytes[..cut]).is_err(), "cut {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(MapEdit::from_bytes(&extra).is_err());
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xa5;
            let _ = MapEdit::from_bytes(&b);
        }
    }

    #[test]
    fn validate_names_what_is_wrong() {
        let mut e = sample();
        e.changes[0].nodes = vec![7, 1];
        assert!(e.validate().unwrap_err().to_string().contains("ascending"));
        let mut e = sample();
        e.changes[2].nodes = vec![25];
        assert!(e.validate().unwrap_err().to_string().contains("outside"));
        let mut e = sample();
        e.changes[0].after[0] = u64::from(16.0f32.to_bits());
        assert!(e.validate().is_err());
        let mut e = sample();
        e.changes[2].after[0] = 8;
        assert!(e.validate().is_err());
        let mut e = sample();
        e.changes.swap(0, 1);
        assert!(e.validate().unwrap_err().to_string().contains("order"));
    }
}
