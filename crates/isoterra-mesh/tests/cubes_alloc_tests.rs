//! A warmed-up marching cubes mesher allocates nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use isoterra_field::Field3;
use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn bump() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> usize {
    ALLOCS.with(|c| c.get())
}

#[test]
fn steady_chunk_loop_allocates_nothing() {
    let f = Field3::from_fn(33, 33, 33, |x, y, z| {
        let (x, y, z) = (x as f32 * 0.31, y as f32 * 0.27, z as f32 * 0.23);
        x.sin() * y.cos() + y.sin() * z.cos() + z.sin() * x.cos()
    })
    .unwrap();
    let ids: Vec<u8> = (0..f.values().len()).map(|i| (i % 7) as u8).collect();
    let chunks: Vec<CellBox> = (0..8)
        .map(|c| {
            let [x, y, z] = [c & 1, (c >> 1) & 1, c >> 2].map(|b| b * 16);
            CellBox::new(x, y, z, x + 16, y + 16, z + 16)
        })
        .collect();
    let mut mesher = MarchingCubes::new();
    let mut outs = vec![CubesOutput::default(); chunks.len()];
    let opts = CubesOptions::DEFAULT;
    let frame = |mesher: &mut MarchingCubes, outs: &mut [CubesOutput]| {
        for (b, out) in chunks.iter().zip(outs.iter_mut()) {
            mesher.mesh(&f, *b, &opts, out).unwrap();
            mesher
                .mesh_with_materials(&f, &ids, *b, &opts, out)
                .unwrap();
            mesher
                .mesh_slice(f.values(), f.dims(), *b, &opts.with_normals(false), out)
                .unwrap();
            mesher
                .mesh_with_materials(&f, &ids, *b, &opts, out)
                .unwrap();
        }
    };
    frame(&mut mesher, &mut outs);
    let before = allocs();
    for _ in 0..3 {
        frame(&mut mesher, &mut outs);
    }
    assert_eq!(allocs() - before, 0, "a warmed-up chunk loop allocated");
    assert!(outs.iter().all(|o| o.triangle_count() > 100));
    assert!(outs.iter().all(|o| o.materials.len() == o.positions.len()));
}
