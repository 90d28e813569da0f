//! A stroke's memory is bounded by the ground it covers, not by its dabs:
//! dabs on ground the stroke already touched add nothing to hold.
//!
//! Alone in its test binary because it measures the heap with its own
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use isoterra_kind::{Document, NewWorld, StrokeSpec, WorldKind};
use isoterra_store::MemoryStore;

struct Peak;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Peak = Peak;

const MB: usize = 1 << 20;

#[test]
fn many_big_voxel_dabs_on_one_spot_hold_one_dab_of_nodes() {
    let mut doc =
        Document::create_in(MemoryStore::new(), &NewWorld::new(WorldKind::Voxel)).unwrap();
    let spec = StrokeSpec::new("dig", 40.0).with_strength(0.02);
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let s = doc.begin_stroke(&spec).unwrap();
    // One dab of radius 40 touches about 270,000 nodes (9 MB as an edit);
    // sixty of them used to be held one by one, and again while the
    // stroke was recorded.
    for k in 0..60 {
        doc.dab(s, [0.0, 0.0, f64::from(k % 2)]).unwrap();
    }
    let open = PEAK.load(Ordering::Relaxed) - base;
    let done = doc.end_stroke(s).unwrap();
    assert!(done.id.is_some(), "the stroke changed the world");
    let peak = PEAK.load(Ordering::Relaxed) - base;
    eprintln!("held {} MB drawing, {} MB at most", open / MB, peak / MB);
    assert!(open < 100 * MB, "drawing held {} MB at most", open / MB);
    assert!(
        peak < 150 * MB,
        "drawing and recording held {} MB at most",
        peak / MB
    );
}
