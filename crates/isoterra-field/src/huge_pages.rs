//! Room for large new buffers (a one-shot mesher's output, a field read
//! from a file), backed by huge pages where the system allows.
//!
//! A buffer the process has never touched takes a page fault at the first
//! write to each 4 KiB page: 59,381 of them for the 243 MB a dense 256³
//! gyroid's mesh makes, about half of a one-shot call's time on the
//! machines measured (BENCHMARKS.md in the repository). Linux backs memory with 2 MiB
//! pages where a program asks for it (`madvise(MADV_HUGEPAGE)`, which the
//! transparent-huge-page setting `madvise` — the default of most
//! distributions — waits for): one fault then maps 512 pages. Only large,
//! new buffers are offered; the advice changes no byte and may be ignored.
//!
//! A `Vec`'s room begins just past the allocator's header, so its first
//! stretch, up to the next 2 MiB boundary, is always written in 4 KiB pages.
//! Scratch lists that never leave this project use [`Room`] instead, whose
//! large rooms begin on a huge-page boundary.

use std::alloc::Layout;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// Buffers below this many bytes are left alone: a huge page would be
/// mostly empty, and small buffers are usually reused memory anyway.
pub const MIN_BYTES: usize = 4 << 20;

/// The huge page size on x86-64 and most 64-bit Arm kernels.
const HUGE_PAGE: usize = 2 << 20;

/// `v.reserve_exact(additional)`, then, when that made new room of at least
/// [`MIN_BYTES`], the advice to back the room with huge pages.
pub fn reserve_exact<T>(v: &mut Vec<T>, additional: usize) {
    let before = v.capacity();
    v.reserve_exact(additional);
    advise_new_room(v, before);
}

/// An empty vector with room for exactly `n` items, advised as
/// [`reserve_exact`] advises: for a buffer about to be filled in full.
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    reserve_exact(&mut v, n);
    v
}

/// Like [`reserve_exact`], but returns `false` instead of aborting when the
/// memory cannot be had (the vector is then unchanged).
pub fn try_reserve_exact<T>(v: &mut Vec<T>, additional: usize) -> bool {
    let before = v.capacity();
    if v.try_reserve_exact(additional).is_err() {
        return false;
    }
    advise_new_room(v, before);
    true
}

/// Advises huge pages for `v`'s spare room when its capacity is no longer
/// `before` (the room is new).
fn advise_new_room<T>(v: &mut Vec<T>, before: usize) {
    if v.capacity() != before {
        let spare = v.spare_capacity_mut();
        advise_huge(spare.as_ptr().cast(), std::mem::size_of_val(spare));
    }
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *const u8, len: usize) {
    if len < MIN_BYTES {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize).saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: `[start, end)` lies inside the allocation `ptr..ptr+len`
        // that the caller's vector owns, and is page aligned. MADV_HUGEPAGE
        // is advice about how to back the range: it neither reads nor
        // changes its contents, and a kernel that refuses it (an error
        // return, ignored) leaves the memory as it was.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *const u8, _len: usize) {}

/// A growable list of plain values whose large room begins on a huge-page
/// boundary, for scratch lists that a one-shot call fills from empty.
///
/// A [`Vec`]'s room begins wherever the allocator puts it, just after the
/// allocator's header, so the stretch up to the first 2 MiB boundary is
/// always written in 4 KiB pages (see the module docs). On Linux, a `Room`
/// of at least [`MIN_BYTES`] is its own mapping that starts on a 2 MiB
/// boundary and is offered huge pages whole, so a list filled from empty
/// takes one fault per 2 MiB from its first byte; [`shrink_to_fit`] hands
/// back the untouched end of the mapping without moving the list. Smaller
/// rooms, and rooms on other systems, come from the global allocator.
///
/// [`shrink_to_fit`]: Room::shrink_to_fit
pub struct Room<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    cap: usize,
    /// Bytes of the room's own mapping, or 0 when the room is the global
    /// allocator's (or empty).
    mapped: usize,
}

// SAFETY: a `Room` owns its values like a `Vec` does; nothing is shared.
unsafe impl<T: Copy + Send> Send for Room<T> {}
// SAFETY: `&Room` only gives out `&[T]`.
unsafe impl<T: Copy + Sync> Sync for Room<T> {}

impl<T: Copy> Room<T> {
    const SIZE_CHECK: () = assert!(std::mem::size_of::<T>() > 0, "no zero-sized values");

    /// An empty list with no room.
    pub const fn new() -> Self {
        let () = Self::SIZE_CHECK;
        Self {
            ptr: NonNull::dangling(),
            len: 0,
            cap: 0,
            mapped: 0,
        }
    }

    /// How many values fit without new room.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Removes every value, keeping the room.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `value`, making room when full (doubling).
    #[inline(always)]
    pub fn push(&mut self, value: T) {
        if self.len == self.cap {
            self.grow(1);
        }
        // SAFETY: `len < cap` now, and the room holds `cap` values.
        unsafe { self.ptr.as_ptr().add(self.len).write(value) };
        self.len += 1;
    }

    /// Room for at least `additional` more values, growing by doubling.
    ///
    /// # Panics
    ///
    /// When the room's size overflows `isize`; aborts as a `Vec` does when
    /// the memory cannot be had.
    pub fn reserve(&mut self, additional: usize) {
        if self.cap - self.len < additional {
            self.grow(additional);
        }
    }

    /// Room for at least `additional` more values, of exactly that size when
    /// new room is needed; `false` (and the list unchanged) when the memory
    /// cannot be had.
    pub fn try_reserve_exact(&mut self, additional: usize) -> bool {
        if self.cap - self.len >= additional {
            return true;
        }
        match self.len.checked_add(additional) {
            Some(cap) => self.move_to(cap),
            None => false,
        }
    }

    /// The room past the values, to be written before [`set_len`](Self::set_len).
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<T>] {
        // SAFETY: the room holds `cap` values; those past `len` are ours to
        // write and may be uninitialized, which `MaybeUninit` allows.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ptr.as_ptr().add(self.len).cast::<MaybeUninit<T>>(),
                self.cap - self.len,
            )
        }
    }

    /// Sets the number of values.
    ///
    /// # Safety
    ///
    /// `len <= capacity()`, and the values up to `len` are initialized.
    pub unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.cap);
        self.len = len;
    }

    /// Hands back room past the values: a mapped room gives back its pages
    /// past the last 2 MiB the values reach, in place; a room from the
    /// global allocator is moved into one of exactly their size.
    pub fn shrink_to_fit(&mut self) {
        let size = std::mem::size_of::<T>();
        if self.len == self.cap {
            return;
        }
        if self.len == 0 {
            self.release();
            return;
        }
        if self.mapped == 0 {
            self.move_to(self.len);
            return;
        }
        let keep = (self.len * size).next_multiple_of(HUGE_PAGE);
        if keep < self.mapped {
            unmap(
                self.ptr.as_ptr().cast::<u8>().wrapping_add(keep),
                self.mapped - keep,
            );
            self.mapped = keep;
            self.cap = keep / size;
        }
    }

    /// New room for at least `additional` values past `len`: twice the
    /// room, or the values plus `additional` when that is more.
    #[cold]
    fn grow(&mut self, additional: usize) {
        let want = self
            .len
            .checked_add(additional)
            .expect("a room's size overflows usize");
        let cap = want.max(self.cap.saturating_mul(2)).max(8);
        if !self.move_to(cap) && !self.move_to(want) {
            std::alloc::handle_alloc_error(Layout::array::<T>(want).unwrap_or(Layout::new::<T>()));
        }
    }

    /// Moves the values into new room of `cap` values (at least `len`).
    /// `false`, with nothing changed, when the room cannot be had.
    fn move_to(&mut self, cap: usize) -> bool {
        debug_assert!(cap >= self.len);
        let Ok(layout) = Layout::array::<T>(cap) else {
            return false;
        };
        if layout.size() == 0 {
            self.release();
            return true;
        }
        let (ptr, cap, mapped) = match map_room(layout.size()) {
            Some((ptr, bytes)) => (ptr.cast::<T>(), bytes / std::mem::size_of::<T>(), bytes),
            None => {
                // SAFETY: the layout's size is not zero.
                let Some(ptr) = NonNull::new(unsafe { std::alloc::alloc(layout) }) else {
                    return false;
                };
                (ptr.cast::<T>(), cap, 0)
            }
        };
        // SAFETY: the old room holds `len` initialized values, the new one
        // has room for `cap >= len`, and the two do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), ptr.as_ptr(), self.len) };
        let len = self.len;
        self.release();
        (self.ptr, self.len, self.cap, self.mapped) = (ptr, len, cap, mapped);
        true
    }

    /// Frees the room, leaving an empty list.
    fn release(&mut self) {
        if self.mapped != 0 {
            unmap(self.ptr.as_ptr().cast(), self.mapped);
        } else if self.cap != 0 {
            // SAFETY: the room came from `alloc` with this layout (`cap`
            // values, which `move_to` checked is a valid layout).
            unsafe {
                std::alloc::dealloc(
                    self.ptr.as_ptr().cast(),
                    Layout::array::<T>(self.cap).expect("checked when allocated"),
                )
            };
        }
        self.ptr = NonNull::dangling();
        (self.len, self.cap, self.mapped) = (0, 0, 0);
    }
}

impl<T: Copy> Default for Room<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Drop for Room<T> {
    fn drop(&mut self) {
        self.release();
    }
}

impl<T: Copy> std::ops::Deref for Room<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` values are initialized; an empty room's
        // pointer is dangling but aligned, which an empty slice allows.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for Room<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Clone for Room<T> {
    fn clone(&self) -> Self {
        let mut copy = Self::new();
        copy.reserve(self.len);
        copy.spare_capacity_mut()[..self.len]
            .iter_mut()
            .zip(self.iter())
            .for_each(|(dst, &src)| {
                dst.write(src);
            });
        // SAFETY: the loop above wrote the first `len` values.
        unsafe { copy.set_len(self.len) };
        copy
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for Room<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A mapping of `bytes` (rounded up to whole huge pages) that starts on a
/// huge-page boundary, advised huge pages, for rooms of at least
/// [`MIN_BYTES`]; `None` for smaller ones or when the mapping is refused.
#[cfg(target_os = "linux")]
fn map_room(bytes: usize) -> Option<(NonNull<u8>, usize)> {
    if bytes < MIN_BYTES {
        return None;
    }
    let len = bytes.checked_next_multiple_of(HUGE_PAGE)?;
    let span = len.checked_add(HUGE_PAGE)?;
    // SAFETY: a new private anonymous mapping; it touches no existing memory.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    let start = (base as usize).next_multiple_of(HUGE_PAGE);
    let head = start - base as usize;
    // The mapping's page-aligned ends outside `[start, start + len)` go back.
    unmap(base.cast(), head);
    unmap((start + len) as *mut u8, span - head - len);
    // SAFETY: advice over the mapping just made; it changes no byte.
    unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    NonNull::new(start as *mut u8).map(|p| (p, len))
}

#[cfg(not(target_os = "linux"))]
fn map_room(_bytes: usize) -> Option<(NonNull<u8>, usize)> {
    None
}

/// Unmaps `[ptr, ptr + len)` of a mapping made by [`map_room`] (nothing
/// when `len` is 0).
fn unmap(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    if len > 0 {
        // SAFETY: callers pass page-aligned stretches of a `map_room`
        // mapping that no live value lies in.
        unsafe { libc::munmap(ptr.cast(), len) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

#[cfg(test)]
mod tests {
    #[test]
    fn reserving_keeps_the_contents_and_makes_the_room() {
        let mut small: Vec<u32> = vec![1, 2, 3];
        super::reserve_exact(&mut small, 10);
        assert_eq!(small, [1, 2, 3]);
        assert!(small.capacity() >= 13);
        // Large enough to be advised; filled and read back.
        let mut big: Vec<u64> = Vec::new();
        super::reserve_exact(&mut big, 3 << 20);
        assert!(big.capacity() >= 3 << 20);
        big.extend((0..3u64 << 20).map(|i| i * 7));
        assert!(big.iter().enumerate().all(|(i, &v)| v == i as u64 * 7));
        // Room already there: nothing to do, nothing changed.
        let cap = big.capacity();
        big.truncate(10);
        super::reserve_exact(&mut big, 100);
        assert_eq!(big.capacity(), cap);
        // Fallible: a request no machine can meet is refused, nothing changes.
        assert!(!super::try_reserve_exact(&mut big, usize::MAX / 16));
        assert_eq!((big.len(), big.capacity()), (10, cap));
        let mut v: Vec<[f32; 3]> = Vec::new();
        assert!(super::try_reserve_exact(&mut v, 2 << 20));
        assert!(v.capacity() >= 2 << 20);
        let fresh: Vec<f32> = super::with_capacity(5 << 20);
        assert!(fresh.is_empty() && fresh.capacity() >= 5 << 20);
    }

    #[test]
    fn a_large_room_starts_on_a_huge_page_and_shrinks_in_place() {
        let mut room: super::Room<u32> = super::Room::new();
        assert!(room.is_empty() && room.capacity() == 0);
        assert!(room.try_reserve_exact(3 << 20));
        assert!(room.capacity() >= 3 << 20);
        #[cfg(target_os = "linux")]
        assert_eq!(room.as_ptr() as usize % super::HUGE_PAGE, 0);
        for i in 0..700_000u32 {
            room.push(i.wrapping_mul(2_654_435_761));
        }
        let at = room.as_ptr();
        room.shrink_to_fit();
        assert_eq!(room.as_ptr(), at, "a mapped room shrinks where it is");
        assert!(room.capacity() >= 700_000 && room.capacity() < 3 << 20);
        assert!(
            room.iter()
                .enumerate()
                .all(|(i, &v)| v == (i as u32).wrapping_mul(2_654_435_761))
        );
        // Pushing past the kept room moves the values into a larger one.
        let cap = room.capacity();
        for i in 0..(cap as u32 + 5 - 700_000) {
            room.push(i);
        }
        assert_eq!(room.len(), cap + 5);
        assert_eq!(room[699_999], 699_999u32.wrapping_mul(2_654_435_761));
        assert_eq!(room[cap + 4], (cap + 4 - 700_000) as u32);
        // A request no machine can meet is refused and changes nothing.
        assert!(!room.try_reserve_exact(usize::MAX / 2));
        assert!(!room.try_reserve_exact(usize::MAX));
        assert_eq!(room.len(), cap + 5);
        room.clear();
        room.shrink_to_fit();
        assert_eq!((room.len(), room.capacity()), (0, 0));
    }

    /// One step of the model test below.
    #[derive(Debug, Clone)]
    enum Op {
        Push(u16),
        Extend(u32),
        Reserve(u32),
        ReserveExact(u32),
        Fill(u32),
        Shrink,
        Clear,
        Clone,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            4 => any::<u16>().prop_map(Op::Push),
            2 => (0u32..3_000).prop_map(Op::Extend),
            1 => (0u32..1_500_000).prop_map(Op::Reserve),
            1 => (0u32..1_500_000).prop_map(Op::ReserveExact),
            1 => (0u32..700_000).prop_map(Op::Fill),
            1 => Just(Op::Shrink),
            1 => Just(Op::Clear),
            1 => Just(Op::Clone),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// A room holds exactly what a `Vec` given the same steps holds,
        /// through growth, exact room (mapped above 4 MiB), writes into the
        /// spare room, shrinking and cloning.
        #[test]
        fn a_room_holds_what_a_vec_holds(ops in proptest::collection::vec(op(), 1..40)) {
            let mut room: super::Room<u64> = super::Room::new();
            let mut model: Vec<u64> = Vec::new();
            let mut next = 1u64;
            let mut value = || {
                next = next.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                next
            };
            for op in ops {
                match op {
                    Op::Push(k) => {
                        let v = value() ^ k as u64;
                        room.push(v);
                        model.push(v);
                    }
                    Op::Extend(n) => {
                        for _ in 0..n {
                            let v = value();
                            room.push(v);
                            model.push(v);
                        }
                    }
                    Op::Reserve(n) => {
                        room.reserve(n as usize);
                        proptest::prop_assert!(room.capacity() - room.len() >= n as usize);
                    }
                    Op::ReserveExact(n) => {
                        proptest::prop_assert!(room.try_reserve_exact(n as usize));
                        proptest::prop_assert!(room.capacity() - room.len() >= n as usize);
                    }
                    Op::Fill(n) => {
                        let n = n as usize;
                        room.reserve(n);
                        let len = room.len();
                        for slot in &mut room.spare_capacity_mut()[..n] {
                            let v = value();
                            slot.write(v);
                            model.push(v);
                        }
                        // SAFETY: the loop wrote the `n` values past `len`.
                        unsafe { room.set_len(len + n) };
                    }
                    Op::Shrink => {
                        room.shrink_to_fit();
                        proptest::prop_assert!(room.capacity() >= room.len());
                    }
                    Op::Clear => {
                        room.clear();
                        model.clear();
                    }
                    Op::Clone => room = room.clone(),
                }
                proptest::prop_assert_eq!(&room[..], &model[..]);
            }
        }
    }
}
