//! Voxel chunk storage and cached meshes.

/// The densities of one chunk's owned nodes (`N^3`, x fastest).
#[derive(Debug, Clone, PartialEq)]
pub enum VoxelChunkData {
    /// Every node has this value (all air or all solid, typically).
    Uniform(f32),
    /// One value per node.
    Dense(Vec<f32>),
}

impl VoxelChunkData {
    /// The value of node `i` (local storage index).
    #[inline]
    pub fn get(&self, i: usize) -> f32 {
        match self {
            VoxelChunkData::Uniform(v) => *v,
            VoxelChunkData::Dense(v) => v[i],
        }
    }

    /// A dense copy of `len` values.
    pub fn to_dense(&self, len: usize) -> Vec<f32> {
        match self {
            VoxelChunkData::Uniform(v) => vec![*v; len],
            VoxelChunkData::Dense(v) => v.clone(),
        }
    }

    /// Collapses values that are all bitwise equal into
    /// [`Uniform`](VoxelChunkData::Uniform).
    pub(crate) fn from_values(values: Vec<f32>) -> Self {
        match values.first() {
            Some(&first) if values.iter().all(|v| v.to_bits() == first.to_bits()) => {
                VoxelChunkData::Uniform(first)
            }
            _ => VoxelChunkData::Dense(values),
        }
    }

    fn make_dense(&mut self, len: usize) -> &mut Vec<f32> {
        if let VoxelChunkData::Uniform(v) = *self {
            *self = VoxelChunkData::Dense(vec![v; len]);
        }
        match self {
            VoxelChunkData::Dense(v) => v,
            VoxelChunkData::Uniform(_) => unreachable!("made dense above"),
        }
    }
}

/// The material ids of one chunk's owned nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum VoxelChunkMaterials {
    /// Every node has this id.
    Uniform(u8),
    /// One id per node.
    Dense(Vec<u8>),
}

impl VoxelChunkMaterials {
    /// The id of node `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u8 {
        match self {
            VoxelChunkMaterials::Uniform(v) => *v,
            VoxelChunkMaterials::Dense(v) => v[i],
        }
    }

    /// A dense copy of `len` ids.
    pub fn to_dense(&self, len: usize) -> Vec<u8> {
        match self {
            VoxelChunkMaterials::Uniform(v) => vec![*v; len],
            VoxelChunkMaterials::Dense(v) => v.clone(),
        }
    }

    fn make_dense(&mut self, len: usize) -> &mut Vec<u8> {
        if let VoxelChunkMaterials::Uniform(v) = *self {
            *self = VoxelChunkMaterials::Dense(vec![v; len]);
        }
        match self {
            VoxelChunkMaterials::Dense(v) => v,
            VoxelChunkMaterials::Uniform(_) => unreachable!("made dense above"),
        }
    }
}

/// One chunk's owned nodes: `N^3` densities and material ids.
#[derive(Debug, Clone, PartialEq)]
pub struct VoxelChunk {
    /// Densities.
    pub density: VoxelChunkData,
    /// Material ids.
    pub materials: VoxelChunkMaterials,
}

impl VoxelChunk {
    /// Writes node `i`; turns uniform storage dense only when the value
    /// actually differs.
    pub(crate) fn set(&mut self, i: usize, len: usize, value: f32, material: u8) {
        if self.density.get(i).to_bits() != value.to_bits() {
            self.density.make_dense(len)[i] = value;
        }
        if self.materials.get(i) != material {
            self.materials.make_dense(len)[i] = material;
        }
    }
}

/// The cached surface of one chunk: a welded triangle mesh, also its
/// collider (the same positions and indices, produced in the same pass).
///
/// Positions are in world units; normals are unit vectors out of the solid;
/// `materials` has one id per vertex; `indices` are counter-clockwise seen
/// from outside. Vertices on a face shared with a neighbour chunk appear in
/// both chunks with bit-identical positions and normals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VoxelChunkMesh {
    /// Vertex positions, world units.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals, out of the solid.
    pub normals: Vec<[f32; 3]>,
    /// Per-vertex material ids.
    pub materials: Vec<u8>,
    /// Triangle list.
    pub indices: Vec<u32>,
}

impl VoxelChunkMesh {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// True when the chunk has no surface.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// The collider view: the same positions and triangle indices, borrowed.
    pub fn trimesh(&self) -> (&[[f32; 3]], &[u32]) {
        (&self.positions, &self.indices)
    }

    /// The collider as owned plain data: positions and index triples, as a
    /// physics engine's trimesh constructor takes them.
    pub fn to_trimesh(&self) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
        (
            self.positions.clone(),
            self.indices
                .chunks_exact(3)
                .map(|t| [t[0], t[1], t[2]])
                .collect(),
        )
    }
}
