//! The allocator's settings for a crawl's memory bound (glibc only).
//!
//! glibc's malloc gives threads arenas of their own (up to eight per core)
//! and, after a large block is freed, raises its mmap threshold to that
//! block's size, so the next page-sized buffers come from the arenas and
//! stay resident after they are freed: on a hostile web the resident set
//! grew to about 1.7 times the live heap (`benches/memory.rs`). A fixed
//! threshold of 256 KiB (large buffers are mapped and given back when freed)
//! and at most two arenas keep it near the heap. Other platforms: nothing.

/// Set the allocator up for a crawl; call first thing in `main`.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called before
    // any thread is started, and a refused setting (return 0) changes nothing.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Set the allocator up for `scraper build`; call first thing in `main`.
///
/// The crawl's 256 KiB threshold mapped and unmapped each worker's row-group
/// buffers (MBs) for every row group; glibc's own sliding threshold keeps
/// them, but then tables that grow with the data (doubling `Vec`s and hash
/// maps of a few MB to tens of MB) are reallocated inside the arenas and
/// leave their old blocks behind. A fixed 32 MiB threshold keeps the first
/// and maps the second. Measured (release, 1M generated records, texts at
/// 40%): peak RSS 226 MiB with the crawl's settings, 383 MiB with glibc's,
/// 293 MiB with this; system time 7.5 s, 3.5 s, 5.3 s. Per record the peak
/// grows as with the crawl's settings (~130 bytes from 200k to 1M), not as
/// with glibc's (~220).
pub fn tune_build() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: as in `tune`.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}
