//! The binary's allocator: mimalloc, and glibc's settings for what C code
//! still allocates through glibc.
//!
//! mimalloc serves the extractor's many small, short-lived allocations
//! (html5ever's nodes, attributes and text) faster than glibc's malloc: batch
//! extraction takes about 7% less CPU (benches/README.md, "Extraction
//! speed"). A crawl's peak RSS on the hostile web of `benches/memory.rs` was
//! about the same with either (232 and 239 MiB, one run each, debug build);
//! `scraper extract`'s own peak doubles (74 against 37 MiB on 841 pages).
//!
//! glibc's malloc gives threads arenas of their own (up to eight per core)
//! and, after a large block is freed, raises its mmap threshold to that
//! block's size, so the next page-sized buffers come from the arenas and
//! stay resident after they are freed: on a hostile web the resident set
//! grew to about 1.7 times the live heap (`benches/memory.rs`). A fixed
//! threshold of 256 KiB (large buffers are mapped and given back when freed)
//! and at most two arenas keep it near the heap for what still goes through
//! glibc (C libraries). Other platforms: nothing.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
