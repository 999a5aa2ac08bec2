//! The bytes this wasm module's heap holds now (both the page and the worker link this
//! crate): the default allocator wrapped in a count of what is allocated and not yet freed.
//! The wasm memory size the page also shows is a high-water mark (linear memory never
//! shrinks), so it cannot tell a leak from a busier moment; the live count can (the soak
//! test checks it).

#[cfg(target_arch = "wasm32")]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    pub static LIVE: AtomicUsize = AtomicUsize::new(0);

    /// `System` (dlmalloc on wasm32), counting the bytes of every live allocation.
    pub struct Counting;

    // SAFETY: every call is passed to `System` unchanged; only a counter is updated.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                LIVE.fetch_add(layout.size(), Relaxed);
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                LIVE.fetch_add(layout.size(), Relaxed);
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) };
            LIVE.fetch_sub(layout.size(), Relaxed);
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                LIVE.fetch_add(new_size, Relaxed);
                LIVE.fetch_sub(layout.size(), Relaxed);
            }
            p
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;
}

/// Bytes allocated on this wasm module's heap and not yet freed (None natively).
pub fn live_bytes() -> Option<u64> {
    #[cfg(target_arch = "wasm32")]
    {
        Some(counting::LIVE.load(std::sync::atomic::Ordering::Relaxed) as u64)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// This wasm module's linear memory in bytes (None natively). It only ever grows, so it is
/// also the peak: the page shows the worker's and its own.
pub fn wasm_memory_bytes() -> Option<u64> {
    #[cfg(target_arch = "wasm32")]
    {
        Some(core::arch::wasm32::memory_size(0) as u64 * 65536)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}
