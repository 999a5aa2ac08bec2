//! The one place the engine decides to use more than one core: natively through rayon, in
//! wasm (a single thread) sequentially. Callers describe work in multiply-adds so that small
//! matrices (stories260K's 64×64) stay on one core, where a thread hand-off costs more than
//! the work.

/// Below this many multiply-adds per task, splitting does not pay for the hand-off: the
/// default, until `kernels::tune` has measured what a hand-off costs on this machine.
pub const MIN_WORK_PER_TASK: usize = 1 << 15;
static MIN_WORK: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(MIN_WORK_PER_TASK);

/// Sets the smallest task worth handing to another thread (multiply-adds); results never
/// depend on it.
pub fn set_min_work_per_task(work: usize) {
    MIN_WORK.store(work.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// The smallest task worth handing to another thread now.
pub fn min_work_per_task() -> usize {
    MIN_WORK.load(std::sync::atomic::Ordering::Relaxed)
}

thread_local! {
    /// Set inside `alone`: this thread's parallel loops run on it alone.
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every parallel loop it calls on the calling thread alone (other threads
/// are untouched): how a small model's decode runs its products, each under the task floor.
/// `roofline::measure` times the engine's kernels both ways, since a ceiling is the best
/// of the ways the engine runs.
pub fn alone<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            ALONE.with(|a| a.set(self.0));
        }
    }
    let _reset = Reset(ALONE.with(|a| a.replace(true)));
    f()
}

/// How many units go in one task, or `None` to run everything on the calling thread, with
/// tasks of at least `floor` multiply-adds.
fn units_per_task(units: usize, work_per_unit: usize, floor: usize) -> Option<usize> {
    let threads = threads();
    let total = units.saturating_mul(work_per_unit.max(1));
    if threads < 2 || total < floor.saturating_mul(2) || ALONE.with(|a| a.get()) {
        return None;
    }
    // A few chunks per thread, taken as each member asks (`split`): a member slowed by
    // another program holds back one chunk, not a thread's share; none smaller than the
    // minimum.
    let by_balance = units.div_ceil(threads * CHUNKS_PER_MEMBER);
    let by_minimum = floor.div_ceil(work_per_unit.max(1));
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
    chunks_with_floor(out, unit, work_per_unit, min_work_per_task(), f)
}

/// `chunks` with tasks of at least `floor` multiply-adds (`usize::MAX`: on the calling
/// thread alone), whatever the engine's floor is now: what `kernels::tune` times.
pub fn chunks_with_floor<F>(out: &mut [f32], unit: usize, work_per_unit: usize, floor: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    let units = out.len() / unit.max(1);
    match units_per_task(units, work_per_unit, floor) {
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
    if units_per_task(units, work_per_unit, min_work_per_task()).is_some() {
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

/// A raw pointer shared by the team's members, each writing its own disjoint part.
#[cfg(not(target_arch = "wasm32"))]
struct Parts(*mut f32);
// SAFETY: members write disjoint chunks of the buffer (see `split`).
#[cfg(not(target_arch = "wasm32"))]
unsafe impl Sync for Parts {}

/// Chunks a team member's share is cut into: a member descheduled by another program (a
/// classroom laptop always runs something else) holds back one small chunk, not a
/// thread's whole share, while the others take the rest.
const CHUNKS_PER_MEMBER: usize = 4;

#[cfg(not(target_arch = "wasm32"))]
fn split<F>(out: &mut [f32], chunk_len: usize, per_task: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    let size = threads();
    let len = out.len();
    // The chunks are handed out as members ask for them (`units_per_task` cut them
    // `CHUNKS_PER_MEMBER` a member, none under the task floor).
    let chunk_len = chunk_len.max(1);
    let n_chunks = len.div_ceil(chunk_len);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let base = Parts(out.as_mut_ptr());
    let job = |_member: usize| {
        let base = &base;
        loop {
            let c = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if c >= n_chunks {
                break;
            }
            let start = c * chunk_len;
            let end = (start + chunk_len).min(len);
            // SAFETY: chunk c is [start, end) of `out`, borrowed mutably for this call; each
            // c is taken by one member only (the counter hands it out once).
            let chunk = unsafe { std::slice::from_raw_parts_mut(base.0.add(start), end - start) };
            f(c * per_task, chunk);
        }
    };
    if team::inside() {
        // A loop nested in a team job runs on its caller alone (the team is at work).
        for (i, c) in out.chunks_mut(chunk_len).enumerate() {
            f(i * per_task, c);
        }
    } else if !team::run(size, &job) {
        // No team (or it is busy: tests on several threads): rayon's pool.
        use rayon::prelude::*;
        out.par_chunks_mut(chunk_len)
            .enumerate()
            .for_each(|(i, c)| f(i * per_task, c));
    }
}

/// A team of worker threads that wait for work by spinning, as OpenMP's do, so the dozens of
/// parallel loops of one forward pass (every matrix product, the attention heads) cost a
/// store and a few cache-line transfers each instead of a sleep and a wake-up: with
/// rayon's pool the 15M shape's two-core decode spent a measurable share in the scheduler
/// (`__schedule`, `sched_yield`; perf; BENCHMARKS.md, "A spinning thread team instead of
/// rayon's sleeping pool"). A member that finds no work for `SPIN` rounds goes
/// to sleep on a condition variable and is woken by the next loop.
#[cfg(not(target_arch = "wasm32"))]
mod team {
    use std::cell::{Cell, UnsafeCell};
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex, OnceLock};

    /// Rounds of `spin_loop` an idle member waits before sleeping (tens of microseconds:
    /// longer than the gap between two loops of a forward pass, shorter than a pause).
    const SPIN: u32 = 1 << 15;

    /// Rounds the caller spins for the members still inside a job before yielding its
    /// core (a member that holds a chunk was likely descheduled).
    const WAIT_SPIN: u32 = 1 << 12;

    type Job = dyn Fn(usize) + Sync;

    struct Shared {
        /// Members besides the caller.
        members: usize,
        /// Bumped for each job; a member runs the job once per new value.
        epoch: AtomicU64,
        /// The current job, written by the caller before the epoch moves and read by the
        /// members after they see it move; valid until the caller has closed it and seen
        /// `active` at 0.
        job: UnsafeCell<Option<*const Job>>,
        /// Members inside the current job (each entered before reading it).
        active: AtomicUsize,
        /// Set by the caller once every chunk is taken: a member that arrives later (it was
        /// descheduled, or asleep) leaves without touching the job, so the step waits only
        /// for members still running a chunk.
        closed: AtomicBool,
        panicked: AtomicBool,
        sleeping: AtomicUsize,
        lock: Mutex<()>,
        wake: Condvar,
        /// One caller at a time; others (tests on several threads) run alone.
        busy: Mutex<()>,
    }

    // SAFETY: `job` is written only by the caller holding `busy`, before the bump of `epoch`,
    // and read by members counted in `active` that saw `closed` false after the bump; the
    // caller closes the job and waits for `active` at 0 before the job's borrow ends (all
    // SeqCst: a member that enters after the caller saw 0 sees `closed`).
    unsafe impl Sync for Shared {}
    unsafe impl Send for Shared {}

    thread_local! {
        /// Set on team members and on a caller inside a job: a loop nested in a job runs
        /// on its thread alone instead of waiting for the team it is part of.
        static INSIDE: Cell<bool> = const { Cell::new(false) };
    }

    static TEAM: OnceLock<Option<&'static Shared>> = OnceLock::new();

    fn team(size: usize) -> Option<&'static Shared> {
        *TEAM.get_or_init(|| {
            let members = size.saturating_sub(1);
            if members == 0 {
                return None;
            }
            let shared: &'static Shared = Box::leak(Box::new(Shared {
                members,
                epoch: AtomicU64::new(0),
                job: UnsafeCell::new(None),
                active: AtomicUsize::new(0),
                closed: AtomicBool::new(true),
                panicked: AtomicBool::new(false),
                sleeping: AtomicUsize::new(0),
                lock: Mutex::new(()),
                wake: Condvar::new(),
                busy: Mutex::new(()),
            }));
            for idx in 1..=members {
                let spawned = std::thread::Builder::new()
                    .name(format!("engine-team-{idx}"))
                    .spawn(move || member(shared, idx));
                if spawned.is_err() {
                    return None;
                }
            }
            Some(shared)
        })
    }

    fn member(s: &'static Shared, idx: usize) {
        INSIDE.with(|i| i.set(true));
        let mut seen = 0u64;
        loop {
            let mut spins = 0;
            seen = loop {
                let e = s.epoch.load(Ordering::Acquire);
                if e != seen {
                    break e;
                }
                if spins < SPIN {
                    spins += 1;
                    std::hint::spin_loop();
                    continue;
                }
                let guard = s.lock.lock().unwrap_or_else(|p| p.into_inner());
                s.sleeping.fetch_add(1, Ordering::SeqCst);
                let guard = s
                    .wake
                    .wait_while(guard, |_| s.epoch.load(Ordering::SeqCst) == seen)
                    .unwrap_or_else(|p| p.into_inner());
                s.sleeping.fetch_sub(1, Ordering::SeqCst);
                drop(guard);
                spins = 0;
            };
            // Entered before the job is read; the caller waits for every entered member
            // once it has closed the job, and a member that sees it closed leaves it alone.
            s.active.fetch_add(1, Ordering::SeqCst);
            if !s.closed.load(Ordering::SeqCst) {
                // SAFETY: see `Shared`: the job lives until the caller has closed it and
                // seen `active` at 0, and this member is counted in `active`.
                let job = unsafe { *s.job.get() };
                if let Some(job) = job {
                    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
                        (*job)(idx)
                    }));
                    if ran.is_err() {
                        s.panicked.store(true, Ordering::SeqCst);
                    }
                }
            }
            s.active.fetch_sub(1, Ordering::Release);
        }
    }

    /// Whether this thread is running a team job (a member, or a caller inside `run`).
    pub fn inside() -> bool {
        INSIDE.with(Cell::get)
    }

    /// Runs `job(i)` for every i in 0..size, the caller taking 0, and returns once all are
    /// done; `false` (nothing run) when there is no team, it is busy, or the caller is
    /// already inside a job.
    pub fn run(size: usize, job: &(dyn Fn(usize) + Sync + '_)) -> bool {
        if INSIDE.with(Cell::get) {
            return false;
        }
        let Some(s) = team(size) else { return false };
        if s.members + 1 != size {
            return false;
        }
        let Ok(_busy) = s.busy.try_lock() else {
            return false;
        };
        // SAFETY: the borrow of `job` outlives its use: we wait below for every member.
        let erased: *const Job =
            unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const Job>(job) };
        // No member is inside a job here: the last caller saw `active` at 0 after closing.
        unsafe { *s.job.get() = Some(erased) };
        s.closed.store(false, Ordering::SeqCst);
        s.epoch.fetch_add(1, Ordering::SeqCst);
        if s.sleeping.load(Ordering::SeqCst) > 0 {
            let _g = s.lock.lock().unwrap_or_else(|p| p.into_inner());
            s.wake.notify_all();
        }
        INSIDE.with(|i| i.set(true));
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(0)));
        INSIDE.with(|i| i.set(false));
        // Every chunk is taken (the caller's own loop ran out): close the job, then wait
        // only for the members inside it, each finishing one chunk at most. A member
        // descheduled on a busy machine gets the core back sooner if the caller yields.
        s.closed.store(true, Ordering::SeqCst);
        let mut spins = 0u32;
        while s.active.load(Ordering::Acquire) != 0 {
            spins += 1;
            if spins < WAIT_SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        unsafe { *s.job.get() = None };
        if let Err(p) = mine {
            std::panic::resume_unwind(p);
        }
        if s.panicked.swap(false, Ordering::SeqCst) {
            panic!("a member of the engine's thread team panicked");
        }
        true
    }
}

#[cfg(target_arch = "wasm32")]
fn split<F>(out: &mut [f32], _chunk_len: usize, _per_task: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    f(0, out)
}

/// Runs one decode step (`f`) on the team or on the calling thread alone, whichever this
/// machine runs faster now: on a machine busy with other programs two threads can decode
/// slower than one (`scripts/bench-contention.sh`). Each way's step time is kept as a moving
/// average over about eight steps; the other way is tried for four steps every few (8,
/// doubling to 256 while the choice holds), and at once when the current way's average
/// moves by half again (the machine got busier or idler: the other way's figure is dropped
/// and trials come often again); a way 10 % faster on average switches. A single slow
/// step (a preemption) moves nothing by itself. The tokens never depend on the way
/// (`par_governor.rs`).
pub fn decode_step<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(not(target_arch = "wasm32"))]
    if threads() >= 2 && !ALONE.with(|a| a.get()) {
        return governor::step(f);
    }
    f()
}

#[cfg(not(target_arch = "wasm32"))]
#[path = "par_governor.rs"]
mod governor;

/// Whether decode steps run on the calling thread alone now (`decode_step`'s choice; false
/// on one thread, where there is no team to choose).
pub fn decode_alone_now() -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    if threads() >= 2 {
        return governor::alone_now();
    }
    false
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every unit is handed out exactly once, at its index, whichever way the work is run:
    /// by the spinning team, by rayon when the team is busy (three threads calling at once),
    /// or alone when a loop is nested in another's job.
    #[test]
    fn each_unit_is_run_once_from_any_thread_and_nested() {
        let fill = |out: &mut [f32]| {
            // 4,096 units of 4 elements, each costing enough to be split.
            chunks(out, 4, MIN_WORK_PER_TASK, |first, chunk| {
                for (k, unit) in chunk.chunks_mut(4).enumerate() {
                    for v in unit.iter_mut() {
                        *v += (first + k) as f32;
                    }
                }
            });
        };
        let check = |out: &[f32]| {
            for (i, v) in out.iter().enumerate() {
                assert_eq!(*v, (i / 4) as f32, "element {i}");
            }
        };
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..200 {
                        let mut out = vec![0.0f32; 4 * 4096];
                        fill(&mut out);
                        check(&out);
                    }
                });
            }
        });
        // A loop inside a loop's job runs on its caller alone.
        let mut outer = vec![0.0f32; 2 * 4096];
        chunks(&mut outer, 4096, MIN_WORK_PER_TASK * 4096, |_, part| {
            let mut inner = vec![0.0f32; 4 * 4096];
            fill(&mut inner);
            check(&inner);
            part.fill(1.0);
        });
        assert!(outer.iter().all(|&v| v == 1.0));
    }

    /// Inside `alone` a loop that would split runs as one chunk on the calling thread; the
    /// scope ends with `alone` (a panic inside included) and touches no other thread.
    #[test]
    fn alone_keeps_a_splittable_loop_on_its_caller() {
        let calls = |out: &mut [f32]| {
            let seen = std::sync::Mutex::new(Vec::new());
            chunks(out, 1, MIN_WORK_PER_TASK, |first, chunk| {
                let me = std::thread::current().id();
                seen.lock().unwrap().push((first, chunk.len(), me));
            });
            seen.into_inner().unwrap()
        };
        let mut out = vec![0.0f32; 4096];
        let me = std::thread::current().id();
        assert_eq!(alone(|| calls(&mut out)), vec![(0, 4096, me)]);
        if thread_count() >= 2 {
            assert!(calls(&mut out).len() >= 2, "split outside the scope");
            // Another thread inside its scope while this one splits.
            let (entered, leave) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
            std::thread::scope(|s| {
                s.spawn(|| {
                    alone(|| {
                        entered.wait();
                        leave.wait();
                    })
                });
                entered.wait();
                let split = calls(&mut out).len();
                leave.wait();
                assert!(split >= 2, "another thread's scope is its own");
            });
            let unwound = std::panic::catch_unwind(|| alone(|| panic!("inside")));
            assert!(unwound.is_err());
            assert!(calls(&mut out).len() >= 2, "a panic ends the scope");
        }
    }
}
