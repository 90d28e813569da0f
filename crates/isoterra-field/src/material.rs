//! Materials: a `u8` id per node and a table describing each id.

use crate::{Field2, FieldError, NodeRect};

/// One material of a [`MaterialTable`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Material {
    /// Human-readable name, e.g. `"dirt"`.
    pub name: String,
    /// Display colour, RGBA.
    pub color: [u8; 4],
    /// Brushes skip nodes of an indestructible material.
    pub indestructible: bool,
}

impl Material {
    /// A destructible material.
    pub fn new(name: impl Into<String>, color: [u8; 4]) -> Self {
        Material {
            name: name.into(),
            color,
            indestructible: false,
        }
    }

    /// Marks the material indestructible.
    pub fn indestructible(mut self) -> Self {
        self.indestructible = true;
        self
    }
}

/// The materials a world uses, indexed by material id (`u8`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MaterialTable {
    materials: Vec<Material>,
}

impl MaterialTable {
    /// The most materials a table can hold (ids are `u8`).
    pub const MAX: usize = 256;

    /// A table from a list; at least one, at most 256 materials.
    pub fn new(materials: Vec<Material>) -> Result<Self, FieldError> {
        if materials.is_empty() || materials.len() > Self::MAX {
            return Err(FieldError::param(
                "materials",
                materials.len(),
                "a material table holds 1 to 256 materials",
            ));
        }
        Ok(MaterialTable { materials })
    }

    /// The default side-view table: 0 dirt, 1 rock, 2 sand, 3 bedrock
    /// (indestructible), 4 grass.
    pub fn side2d_default() -> Self {
        MaterialTable {
            materials: vec![
                Material::new("dirt", [134, 96, 67, 255]),
                Material::new("rock", [120, 120, 128, 255]),
                Material::new("sand", [214, 190, 128, 255]),
                Material::new("bedrock", [52, 48, 56, 255]).indestructible(),
                Material::new("grass", [86, 150, 62, 255]),
            ],
        }
    }

    /// The default voxel table: 0 earth, 1 stone, 2 grass, 3 sand, 4 basalt,
    /// 5 clay, 6 snow, 7 crystal. Voxel worlds take any `u8` id; an id past
    /// the table is drawn and exported with the colour of `id % 8`.
    pub fn voxel_default() -> Self {
        MaterialTable {
            materials: vec![
                Material::new("earth", [132, 112, 92, 255]),
                Material::new("stone", [124, 124, 132, 255]),
                Material::new("grass", [86, 150, 62, 255]),
                Material::new("sand", [214, 190, 128, 255]),
                Material::new("basalt", [64, 60, 70, 255]),
                Material::new("clay", [176, 92, 60, 255]),
                Material::new("snow", [220, 220, 228, 255]),
                Material::new("crystal", [150, 120, 180, 255]),
            ],
        }
    }

    /// Material with the given id, if present.
    pub fn get(&self, id: u8) -> Option<&Material> {
        self.materials.get(id as usize)
    }

    /// True when `id` is in the table and indestructible.
    pub fn is_indestructible(&self, id: u8) -> bool {
        self.get(id).is_some_and(|m| m.indestructible)
    }

    /// Number of materials.
    pub fn len(&self) -> usize {
        self.materials.len()
    }

    /// Always false: a table holds at least one material.
    pub fn is_empty(&self) -> bool {
        self.materials.is_empty()
    }

    /// All materials in id order.
    pub fn iter(&self) -> impl Iterator<Item = &Material> {
        self.materials.iter()
    }
}

impl Default for MaterialTable {
    fn default() -> Self {
        Self::side2d_default()
    }
}

/// A material id per node, laid out like a [`Field2`] of the same size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaterialGrid {
    width: u32,
    height: u32,
    ids: Vec<u8>,
}

impl MaterialGrid {
    /// A grid of `width x height` nodes, all `id`.
    pub fn new(width: u32, height: u32, id: u8) -> Result<Self, FieldError> {
        let n = Field2::check_size(width as u64, height as u64)?;
        Ok(MaterialGrid {
            width,
            height,
            ids: vec![id; n],
        })
    }

    /// A grid from row-major ids.
    pub fn from_ids(width: u32, height: u32, ids: Vec<u8>) -> Result<Self, FieldError> {
        let n = Field2::check_size(width as u64, height as u64)?;
        if ids.len() != n {
            return Err(FieldError::LengthMismatch {
                expected: n,
                got: ids.len(),
            });
        }
        Ok(MaterialGrid { width, height, ids })
    }

    /// A grid sized like `field`, all `id`.
    pub fn like(field: &Field2, id: u8) -> Self {
        MaterialGrid {
            width: field.width(),
            height: field.height(),
            ids: vec![id; field.values().len()],
        }
    }

    /// Nodes along x.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Nodes along y.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// All ids, row-major.
    pub fn ids(&self) -> &[u8] {
        &self.ids
    }

    /// All ids, mutable.
    pub fn ids_mut(&mut self) -> &mut [u8] {
        &mut self.ids
    }

    /// Id at node `(x, y)`. Panics out of bounds (a programmer error).
    #[inline]
    pub fn get(&self, x: u32, y: u32) -> u8 {
        assert!(
            x < self.width && y < self.height,
            "node ({x}, {y}) out of bounds"
        );
        self.ids[y as usize * self.width as usize + x as usize]
    }

    /// Sets the id at node `(x, y)`; out of bounds is an error.
    pub fn set(&mut self, x: u32, y: u32, id: u8) -> Result<(), FieldError> {
        if x >= self.width || y >= self.height {
            return Err(FieldError::param(
                "node",
                format!("({x}, {y})"),
                "outside the material grid",
            ));
        }
        self.ids[y as usize * self.width as usize + x as usize] = id;
        Ok(())
    }

    /// The whole grid as a rectangle.
    pub fn rect(&self) -> NodeRect {
        NodeRect::new(0, 0, self.width, self.height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_table_has_indestructible_bedrock() {
        let t = MaterialTable::side2d_default();
        assert!(t.is_indestructible(3));
        assert!(!t.is_indestructible(0));
        assert!(!t.is_indestructible(200));
        assert!(MaterialTable::new(vec![]).is_err());
    }

    #[test]
    fn grid_checks_bounds_and_length() {
        let mut g = MaterialGrid::new(3, 2, 0).unwrap();
        assert!(g.set(3, 0, 1).is_err());
        g.set(2, 1, 7).unwrap();
        assert_eq!(g.get(2, 1), 7);
        assert!(MaterialGrid::from_ids(3, 2, vec![0; 5]).is_err());
    }
}
