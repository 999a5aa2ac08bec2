//! The CLI's memory allocator: the system's, with large buffers (a model's weights, its KV
//! cache) asked for on 2 MiB pages where Linux's transparent huge pages are in `madvise`
//! mode (Debian's default), before anything touches them. A decode streams every weight
//! once a token, and on 4 KiB pages each page of the stream is a TLB miss: on an Intel Xeon
//! (Sapphire Rapids flags) one core read the 110M shape's 438 MB through run.c's matmul loop
//! at 12.3 GB/s from 4 KiB pages and 16.8 GB/s from 2 MiB ones, as fast as from run.c's
//! mmap of the file in the page cache (16.7; BENCHMARKS.md). Values and bits are the same;
//! `DECODING_EXPLORER_HUGE_PAGES=0` turns it off (benchmarks of both), and `bench` prints
//! how much of the process's memory the kernel gave on huge pages.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// The system allocator, large buffers advised onto huge pages.
pub struct HugePages;

/// Buffers from this size on are advised (smaller ones hold few whole 2 MiB pages).
const ADVISE_FROM: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

static ON: AtomicBool = AtomicBool::new(false);

/// Turns the advice on unless `DECODING_EXPLORER_HUGE_PAGES=0` (read once, at start-up:
/// the allocator itself must not allocate).
pub fn init() {
    let off = std::env::var("DECODING_EXPLORER_HUGE_PAGES").is_ok_and(|v| v == "0");
    ON.store(!off, Ordering::Relaxed);
}

/// Whether the advice is on.
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The process's anonymous memory on huge pages, bytes (`AnonHugePages` of
/// /proc/self/smaps_rollup), where Linux says.
pub fn granted_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = s.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Asks for the whole 2 MiB pages inside [p, p + size) on huge pages (a hint: the kernel
/// may decline, and nothing is touched).
fn advise(p: *mut u8, size: usize) {
    if p.is_null() || size < ADVISE_FROM || !on() {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + size) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: the range lies inside the allocation just made; madvise changes no
        // contents and its failure (EINVAL where THP is off) is harmless.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

// SAFETY: every call is the system allocator's; `advise` only adds a hint on the memory
// it returned.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        advise(p, new_size);
        p
    }
}
