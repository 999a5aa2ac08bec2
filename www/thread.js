// A thread of the page's engine (crates/worker/src/threads.rs): the engine's worker starts
// one of these for each member of its thread team, and posts it the engine's compiled
// module, its shared memory and a pointer to the member's work. The module is instantiated
// on that same memory (wasm-bindgen gives this instance its own stack and thread-locals; the
// engine's `main` runs on the first instance only), the member runs until its team is
// retired (another thread count), and the worker closes.
importScripts('./worker_mt.js' + location.search);
self.onmessage = async (event) => {
  const [module, memory, ptr] = event.data;
  const wasm = await wasm_bindgen({ module_or_path: module, memory });
  try {
    wasm_bindgen.thread_entry(ptr);
  } catch (e) {
    // A panic aborts (a trap): the engine's thread is told, so that it stops waiting.
    wasm_bindgen.thread_trapped();
    throw e;
  }
  // This instance's stack and thread-locals back to the shared memory.
  wasm.__wbindgen_thread_destroy();
  close();
};
