//! The one place the engine decides to use more than one core: natively through rayon, in
//! wasm (a single thread) sequentially. Callers describe work in multiply-adds so that small
//! matrices (stories260K's 64×64) stay on one core, where a thread hand-off costs more than
//! the work.

/// Below this many multiply-adds per task, splitting does not pay for the hand-off.
const MIN_WORK_PER_TASK: usize = 1 << 15;

/// How many units go in one task, or `None` to run everything on the calling thread.
fn units_per_task(units: usize, work_per_unit: usize) -> Option<usize> {
    let threads = threads();
    let total = units.saturating_mul(work_per_unit.max(1));
    if threads < 2 || total < 2 * MIN_WORK_PER_TASK {
        return None;
    }
    // A few tasks per thread balance uneven progress; none smaller than the minimum.
    let by_balance = units.div_ceil(threads * 2);
    let by_minimum = MIN_WORK_PER_TASK.div_ceil(work_per_unit.max(1));
    Some(by_balance.max(by_minimum).max(1))
}

/// The engine's worker pool (natively), built on first use or by `set_threads`.
#[cfg(not(target_arch = "wasm32"))]
static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();

#[cfg(not(target_arch = "wasm32"))]
fn build_pool(n: Option<usize>) -> Result<rayon::ThreadPool, String> {
    let mut b = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("engine-{i}"));
    if let Some(n) = n {
        b = b.num_threads(n);
    }
    b.build().map_err(|e| e.to_string())
}

#[cfg(not(target_arch = "wasm32"))]
fn pool() -> &'static rayon::ThreadPool {
    POOL.get_or_init(|| {
        build_pool(None)
            .or_else(|_| build_pool(Some(1)))
            .unwrap_or_else(|e| panic!("cannot start even one worker thread: {e}"))
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn threads() -> usize {
    pool().current_num_threads()
}

/// Runs `f` on the engine's pool, so the parallel loops inside it share warm workers
/// instead of waking the pool from outside for every matrix (which costs more than a small
/// matrix-vector product). Call it around a whole forward pass.
#[cfg(not(target_arch = "wasm32"))]
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    pool().install(f)
}

#[cfg(target_arch = "wasm32")]
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    f()
}

#[cfg(target_arch = "wasm32")]
fn threads() -> usize {
    1
}

/// Calls `f(first_unit, chunk)` over `out` cut into chunks of whole units of `unit` elements;
/// each unit costs `work_per_unit` multiply-adds. The result does not depend on the split.
pub fn chunks<F>(out: &mut [f32], unit: usize, work_per_unit: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    let units = out.len() / unit.max(1);
    match units_per_task(units, work_per_unit) {
        None => f(0, out),
        Some(per_task) => split(out, unit * per_task, per_task, f),
    }
}

/// `chunks` with one-element units: matrix rows.
pub fn rows<F>(out: &mut [f32], work_per_row: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    chunks(out, 1, work_per_row, f)
}

/// Calls `f(i, a_i, b_i)` for the i-th unit of two buffers cut in step (e.g. each attention
/// head's output and its score scratch).
pub fn zip_units<F>(
    a: &mut [f32],
    unit_a: usize,
    b: &mut [f32],
    unit_b: usize,
    work_per_unit: usize,
    f: F,
) where
    F: Fn(usize, &mut [f32], &mut [f32]) + Sync + Send,
{
    let units = a.len() / unit_a.max(1);
    let run = |i: usize, x: &mut [f32], y: &mut [f32]| f(i, x, y);
    #[cfg(not(target_arch = "wasm32"))]
    if units_per_task(units, work_per_unit).is_some() {
        use rayon::prelude::*;
        a.par_chunks_mut(unit_a)
            .zip(b.par_chunks_mut(unit_b))
            .enumerate()
            .for_each(|(i, (x, y))| run(i, x, y));
        return;
    }
    let _ = work_per_unit;
    for (i, (x, y)) in a
        .chunks_mut(unit_a)
        .zip(b.chunks_mut(unit_b))
        .take(units)
        .enumerate()
    {
        run(i, x, y);
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn split<F>(out: &mut [f32], chunk_len: usize, per_task: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    use rayon::prelude::*;
    out.par_chunks_mut(chunk_len)
        .enumerate()
        .for_each(|(i, c)| f(i * per_task, c));
}

#[cfg(target_arch = "wasm32")]
fn split<F>(out: &mut [f32], _chunk_len: usize, _per_task: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    f(0, out)
}

/// Sets the number of worker threads natively (call once, before any work). `None` = all cores.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_threads(n: Option<usize>) -> Result<(), String> {
    let built = build_pool(n)?;
    POOL.set(built)
        .map_err(|_| "the thread count is already set".to_string())
}

/// Worker threads the engine uses (1 in wasm).
pub fn thread_count() -> usize {
    threads()
}
