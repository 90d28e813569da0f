//! Meshing one voxel chunk: gather its nodes and apron from the chunk store
//! into a reusable grid, then run marching cubes on it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};

use super::chunk::{VoxelChunk, VoxelChunkData, VoxelChunkMaterials, VoxelChunkMesh};

/// Density given to nodes of chunks that are not loaded (air).
const MISSING_DENSITY: f32 = -1.0;
/// Material id given to nodes of chunks that are not loaded.
const MISSING_MATERIAL: u8 = 0;

/// Reusable state for meshing voxel chunks: the gathered `(N + 3)^3` grid
/// of one chunk and its apron, its material ids, and the marching cubes
/// scratch buffers.
///
/// Keep one per thread and pass it to
/// [`VoxelWorld::mesh_chunk`](crate::VoxelWorld::mesh_chunk): once it has
/// meshed a chunk of a given size, meshing another chunk into a
/// [`VoxelChunkMesh`] that already has enough capacity allocates nothing.
#[derive(Default, Clone)]
pub struct VoxelMesher {
    cubes: MarchingCubes,
    /// Holds no memory between calls: the target mesh's buffers are swapped
    /// in for the duration of one call.
    out: CubesOutput,
    values: Vec<f32>,
    mats: Vec<u8>,
}

impl std::fmt::Debug for VoxelMesher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoxelMesher")
            .field("grid_nodes", &self.values.len())
            .finish_non_exhaustive()
    }
}

impl VoxelMesher {
    /// A mesher with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Per axis, the three pieces of a gathered grid of `N + 3` nodes:
/// (neighbour chunk offset, first gathered node, first local node, length).
fn segments(n: usize) -> [(i32, usize, usize, usize); 3] {
    [(-1, 0, n - 1, 1), (0, 1, 0, n), (1, n + 1, 0, 2)]
}

/// A chunk channel that can fill a gathered row: uniform or dense storage.
trait Channel {
    type Value: Copy;
    const MISSING: Self::Value;
    /// `Ok(value)` when uniform, else the dense values.
    fn parts(&self) -> Result<Self::Value, &[Self::Value]>;
}

impl Channel for VoxelChunkData {
    type Value = f32;
    const MISSING: f32 = MISSING_DENSITY;
    #[inline]
    fn parts(&self) -> Result<f32, &[f32]> {
        match self {
            VoxelChunkData::Uniform(v) => Ok(*v),
            VoxelChunkData::Dense(v) => Err(v),
        }
    }
}

impl Channel for VoxelChunkMaterials {
    type Value = u8;
    const MISSING: u8 = MISSING_MATERIAL;
    #[inline]
    fn parts(&self) -> Result<u8, &[u8]> {
        match self {
            VoxelChunkMaterials::Uniform(v) => Ok(*v),
            VoxelChunkMaterials::Dense(v) => Err(v),
        }
    }
}

/// Fills one gathered row of `N + 3` nodes from the row starting at local
/// index `src` of the -x neighbour, the chunk and the +x neighbour.
#[inline]
fn gather_row<C: Channel>(
    row: &mut [C::Value],
    n: usize,
    src: usize,
    chunks: [Option<&VoxelChunk>; 3],
    channel: impl Fn(&VoxelChunk) -> &C,
) {
    let [left, mid, right] = chunks.map(|c| c.map(|c| channel(c).parts()));
    let (first, rest) = row.split_at_mut(1);
    let (body, last) = rest.split_at_mut(n);
    first[0] = match left {
        None => C::MISSING,
        Some(Ok(v)) => v,
        Some(Err(d)) => d[src + n - 1],
    };
    match mid {
        None => body.fill(C::MISSING),
        Some(Ok(v)) => body.fill(v),
        Some(Err(d)) => body.copy_from_slice(&d[src..src + n]),
    }
    match right {
        None => last.fill(C::MISSING),
        Some(Ok(v)) => last.fill(v),
        Some(Err(d)) => last.copy_from_slice(&d[src..src + 2]),
    }
}

/// Where the material ids of the 27 chunks read by one chunk come from.
enum Materials {
    /// Every node read has this id.
    Uniform(u8),
    /// At least two ids or a dense chunk: gather them.
    Mixed,
}

/// True when the cells of chunk `c` (nodes `[cN, cN + N]` on each axis,
/// which live in `c` and its seven + neighbours) cannot hold a surface:
/// every one of those chunks is uniform (or missing) on the same side of iso.
fn surely_empty(nb: &[Option<&VoxelChunk>; 27], iso: f32) -> bool {
    let mut side = None;
    for z in 1..3 {
        for y in 1..3 {
            for x in 1..3 {
                let v = match nb[(z * 3 + y) * 3 + x] {
                    None => MISSING_DENSITY,
                    Some(ch) => match ch.density {
                        VoxelChunkData::Uniform(v) => v,
                        VoxelChunkData::Dense(_) => return false,
                    },
                };
                let solid = v >= iso;
                if *side.get_or_insert(solid) != solid {
                    return false;
                }
            }
        }
    }
    true
}

/// Meshes chunk `c` (of `n` cells per axis) of `chunks` into `mesh` (reset
/// first), reading one node before and two after on each axis from its
/// neighbours; chunks that are not loaded read as air.
pub(crate) fn mesh_chunk_into(
    chunks: &BTreeMap<[i32; 3], VoxelChunk>,
    c: [i32; 3],
    n: i64,
    iso: f32,
    m: &mut VoxelMesher,
    mesh: &mut VoxelChunkMesh,
) {
    mesh.positions.clear();
    mesh.normals.clear();
    mesh.materials.clear();
    mesh.indices.clear();

    let mut nb: [Option<&VoxelChunk>; 27] = [None; 27];
    for (k, slot) in nb.iter_mut().enumerate() {
        let d = [
            (k % 3) as i32 - 1,
            ((k / 3) % 3) as i32 - 1,
            (k / 9) as i32 - 1,
        ];
        *slot = chunks.get(&[c[0] + d[0], c[1] + d[1], c[2] + d[2]]);
    }
    if surely_empty(&nb, iso) {
        return;
    }
    let mut materials = None;
    for ch in &nb {
        let id = match ch {
            None => MISSING_MATERIAL,
            Some(ch) => match ch.materials {
                VoxelChunkMaterials::Uniform(id) => id,
                VoxelChunkMaterials::Dense(_) => {
                    materials = Some(Materials::Mixed);
                    break;
                }
            },
        };
        match materials {
            None => materials = Some(Materials::Uniform(id)),
            Some(Materials::Uniform(prev)) if prev != id => {
                materials = Some(Materials::Mixed);
                break;
            }
            _ => {}
        }
    }
    let materials = materials.unwrap_or(Materials::Uniform(MISSING_MATERIAL));

    let nu = n as usize;
    let w = nu + 3;
    let total = w * w * w;
    // Every node is written below, so the buffers only change length when
    // the chunk size does.
    m.values.resize(total, MISSING_DENSITY);
    let gather_mats = matches!(materials, Materials::Mixed);
    if gather_mats {
        m.mats.resize(total, MISSING_MATERIAL);
    }
    // One destination row at a time: node 0 from the -x neighbour, nodes
    // 1..=N from the chunk of that row, nodes N+1 and N+2 from the +x
    // neighbour.
    let seg = segments(nu);
    for &(oz, gz, lz, len_z) in &seg {
        for &(oy, gy, ly, len_y) in &seg {
            let base = (((oz + 1) * 3 + (oy + 1)) * 3) as usize;
            let [left, mid, right] = [nb[base], nb[base + 1], nb[base + 2]];
            for k in 0..len_z {
                for j in 0..len_y {
                    let dst = ((gz + k) * w + gy + j) * w;
                    let src = ((lz + k) * nu + ly + j) * nu;
                    let row = &mut m.values[dst..dst + w];
                    gather_row(row, nu, src, [left, mid, right], |ch| &ch.density);
                    if gather_mats {
                        let row = &mut m.mats[dst..dst + w];
                        gather_row(row, nu, src, [left, mid, right], |ch| &ch.materials);
                    }
                }
            }
        }
    }

    // Mesh straight into the target's buffers.
    std::mem::swap(&mut m.out.positions, &mut mesh.positions);
    std::mem::swap(&mut m.out.normals, &mut mesh.normals);
    std::mem::swap(&mut m.out.materials, &mut mesh.materials);
    std::mem::swap(&mut m.out.indices, &mut mesh.indices);
    let wu = w as u32;
    let dims = [wu; 3];
    let cells = CellBox::new(1, 1, 1, wu - 2, wu - 2, wu - 2);
    let options = CubesOptions::DEFAULT.with_iso(iso);
    let done = match materials {
        Materials::Mixed => m
            .cubes
            .mesh_slice_with_materials(&m.values, &m.mats, dims, cells, &options, &mut m.out),
        Materials::Uniform(_) => m
            .cubes
            .mesh_slice(&m.values, dims, cells, &options, &mut m.out),
    };
    if done.is_err() {
        // Unreachable with the sizes above; leave an empty mesh.
        m.out.reset();
    }
    if let Materials::Uniform(id) = materials {
        m.out.materials.resize(m.out.positions.len(), id);
    }
    std::mem::swap(&mut m.out.positions, &mut mesh.positions);
    std::mem::swap(&mut m.out.normals, &mut mesh.normals);
    std::mem::swap(&mut m.out.materials, &mut mesh.materials);
    std::mem::swap(&mut m.out.indices, &mut mesh.indices);

    // Node-index units to world units: node `i` of the grid is global node
    // `c*N - 1 + i`. `origin + (i + t)` rounds exactly like the field-space
    // `origin + (i + t) * 1`, so shared faces stay bit-identical.
    let origin = c.map(|v| (v as i64 * n - 1) as f32);
    for p in &mut mesh.positions {
        p[0] += origin[0];
        p[1] += origin[1];
        p[2] += origin[2];
    }
}

/// A pool of meshers shared by the workers of a rebuild; each worker takes
/// one for the duration of its jobs and puts it back, so that the gather
/// buffers survive from one rebuild to the next.
#[derive(Default)]
pub(crate) struct MesherPool(Mutex<Vec<VoxelMesher>>);

impl std::fmt::Debug for MesherPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let idle = self.0.lock().map_or(0, |v| v.len());
        f.debug_struct("MesherPool").field("idle", &idle).finish()
    }
}

impl Clone for MesherPool {
    /// A clone starts with an empty pool (scratch memory is not shared).
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// A mesher borrowed from a [`MesherPool`], returned on drop.
pub(crate) struct Pooled<'a> {
    pool: &'a MesherPool,
    mesher: Option<VoxelMesher>,
}

impl MesherPool {
    pub(crate) fn take(&self) -> Pooled<'_> {
        let mesher = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        Pooled {
            pool: self,
            mesher: Some(mesher),
        }
    }
}

impl Pooled<'_> {
    pub(crate) fn get(&mut self) -> &mut VoxelMesher {
        self.mesher.get_or_insert_with(VoxelMesher::default)
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.mesher.take() {
            self.pool
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(m);
        }
    }
}
