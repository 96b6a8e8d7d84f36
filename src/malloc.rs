//! The allocator's settings for a crawl's memory bound (glibc only).
//!
//! glibc's malloc gives threads arenas of their own (up to eight per core)
//! and, after a large block is freed, raises its mmap threshold to that
//! block's size, so the next page-sized buffers come from the arenas and
//! stay resident after they are freed: on a hostile web the resident set
//! grew to about 1.7 times the live heap (`benches/memory.rs`). A fixed
//! threshold of 256 KiB (large buffers are mapped and given back when freed)
//! and at most two arenas keep it near the heap. Other platforms: nothing.

/// Set the allocator up; call first thing in `main`.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called before
    // any thread is started, and a refused setting (return 0) changes nothing.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}
