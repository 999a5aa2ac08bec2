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

/// The page's thread count (`set_threads`): 1 until the page has started a team.
#[cfg(target_arch = "wasm32")]
static THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

#[cfg(target_arch = "wasm32")]
fn threads() -> usize {
    THREADS.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(team)]
#[path = "par_team.rs"]
mod team;

#[cfg(all(team, target_arch = "wasm32"))]
pub use team::{member_trapped, set_spawner, Spawner};

/// Why the engine's team of the current size could not start, if it could not (the
/// spawner's error: the page's web workers).
pub fn threads_failure() -> Option<String> {
    #[cfg(team)]
    return team::failure();
    #[cfg(not(team))]
    None
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
    let units = (a.len() / unit_a.max(1)).min(b.len().div_ceil(unit_b.max(1)));
    if units_per_task(units, work_per_unit, min_work_per_task()).is_none() {
        for (i, (x, y)) in a
            .chunks_mut(unit_a.max(1))
            .zip(b.chunks_mut(unit_b.max(1)))
            .take(units)
            .enumerate()
        {
            f(i, x, y);
        }
        return;
    }
    let (a_len, b_len) = (a.len(), b.len());
    let (pa, pb) = (Parts(a.as_mut_ptr()), Parts(b.as_mut_ptr()));
    each_task(units, &|i| {
        // SAFETY: unit i of each buffer (within it: i < units), run once (`each_task`).
        let x = unsafe { pa.part(i * unit_a, ((i + 1) * unit_a).min(a_len)) };
        let y = unsafe { pb.part(i * unit_b, ((i + 1) * unit_b).min(b_len)) };
        f(i, x, y);
    });
}

/// A raw pointer shared by the threads of one loop, each writing its own disjoint part.
struct Parts(*mut f32);
// SAFETY: each task writes its own disjoint chunk of the buffer (see `split`, `zip_units`).
unsafe impl Sync for Parts {}

impl Parts {
    /// Elements [start, end) of the buffer.
    ///
    /// SAFETY: within the buffer, and no other task holds any of them.
    unsafe fn part<'a>(&self, start: usize, end: usize) -> &'a mut [f32] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), end - start) }
    }
}

/// Chunks a team member's share is cut into: a member descheduled by another program (a
/// classroom laptop always runs something else) holds back one small chunk, not a
/// thread's whole share, while the others take the rest.
const CHUNKS_PER_MEMBER: usize = 4;

/// Calls `f(first_unit, chunk)` for each chunk of `chunk_len` elements of `out`, over the
/// engine's threads.
fn split<F>(out: &mut [f32], chunk_len: usize, per_task: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    let len = out.len();
    let chunk_len = chunk_len.max(1);
    let base = Parts(out.as_mut_ptr());
    each_task(len.div_ceil(chunk_len), &|c| {
        let start = c * chunk_len;
        // SAFETY: chunk c is [start, end) of `out`, borrowed mutably for this call; each c
        // is run once (`each_task`).
        let chunk = unsafe { base.part(start, (start + chunk_len).min(len)) };
        f(c * per_task, chunk);
    });
}

/// Runs `task(t)` once for every t in 0..n, over the team (the tasks handed out as members
/// ask for them: a member slowed by another program holds back one task, not a share),
/// else natively over rayon's pool (the team is busy: tests on several threads), else in
/// order on the calling thread (a loop nested in a team's job, or no team).
fn each_task(n: usize, task: &(dyn Fn(usize) + Sync)) {
    #[cfg(team)]
    if n > 1 && !team::inside() {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let job = |_member: usize| loop {
            let t = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if t >= n {
                break;
            }
            task(t);
        };
        if team::run(threads(), &job) {
            return;
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            use rayon::prelude::*;
            (0..n).into_par_iter().for_each(task);
            return;
        }
    }
    (0..n).for_each(task);
}

/// Runs one decode step (`f`) on the team or on the calling thread alone, whichever this
/// machine runs faster now: on a machine busy with other programs two threads can decode
/// slower than one (`scripts/bench-contention.sh`). Each way's step time is kept as a moving
/// average over about eight steps; the other way is tried for six steps (the first two,
/// while the scheduler places the threads anew, not counted) every few (8, doubling to 256
/// while the choice holds; one thread only once the team has been held up by a member
/// another program descheduled, or after 256), and at once when the current way's slow
/// average doubles or halves (the machine got busier or idler: the other way's figure is
/// dropped and trials come often again); a way 10 % faster on average switches. A single
/// slow step (a preemption) moves nothing by itself. The tokens never depend on the way
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

/// How many of the team's jobs waited for a member longer than the caller's own share
/// took (one descheduled inside its chunk by another program): the governor's sign of a
/// busy machine.
#[cfg(not(target_arch = "wasm32"))]
fn team_held_up() -> usize {
    #[cfg(team)]
    return team::held_up();
    #[cfg(not(team))]
    0
}

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

/// The most threads the page starts (a browser reports its logical processors, and a
/// web worker each costs a stack and an instance of the engine).
pub const MOST_THREADS: usize = 64;

/// Sets the page's thread count, between two forward passes (`None`: one). More than one
/// needs the build with `+atomics` and the host's spawner; the team of that size starts at
/// the next parallel loop (one that cannot start leaves the loops on one thread).
#[cfg(target_arch = "wasm32")]
pub fn set_threads(n: Option<usize>) -> Result<(), String> {
    let n = n.unwrap_or(1);
    if n == 0 || n > MOST_THREADS {
        return Err(format!("{n} threads: between 1 and {MOST_THREADS}"));
    }
    if n > 1 && !cfg!(team) {
        return Err("this build of the engine runs on one thread (no shared memory)".into());
    }
    THREADS.store(n, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// Threads of the engine's team running now, the calling one included; starts the team if
/// it is not yet. In the page a member is a web worker that joins some time after it is
/// asked for: the page waits for `thread_count()` before it times anything.
pub fn threads_joined() -> usize {
    #[cfg(team)]
    if threads() >= 2 {
        return team::joined(threads());
    }
    1
}

/// Worker threads the engine uses (1 in wasm until the page sets more).
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

    /// `zip_units` hands each unit of both buffers to one task, at its index, whether it
    /// splits (over the team) or not; a second buffer shorter than the first ends the units.
    #[test]
    fn zip_units_gives_each_pair_of_units_once() {
        for (units, work) in [(48, MIN_WORK_PER_TASK), (48, 1)] {
            let (mut a, mut b) = (vec![0.0f32; units * 3], vec![0.0f32; units * 5]);
            zip_units(&mut a, 3, &mut b, 5, work, |i, x, y| {
                assert_eq!((x.len(), y.len()), (3, 5));
                x.iter_mut().for_each(|v| *v += i as f32);
                y.iter_mut().for_each(|v| *v += 1.0 + i as f32);
            });
            assert!(a.iter().enumerate().all(|(k, &v)| v == (k / 3) as f32));
            assert!(b
                .iter()
                .enumerate()
                .all(|(k, &v)| v == 1.0 + (k / 5) as f32));
        }
        let (mut a, mut b) = (vec![0.0f32; 12], vec![0.0f32; 7]);
        let seen = std::sync::Mutex::new(Vec::new());
        zip_units(&mut a, 3, &mut b, 4, MIN_WORK_PER_TASK, |i, _, y| {
            seen.lock().unwrap().push((i, y.len()))
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, vec![(0, 4), (1, 3)]);
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
