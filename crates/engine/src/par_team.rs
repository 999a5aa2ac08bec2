//! A team of worker threads that wait for work by spinning, as OpenMP's do, so the dozens of
//! parallel loops of one forward pass (every matrix product, the attention heads) cost a
//! store and a few cache-line transfers each instead of a sleep and a wake-up: with
//! rayon's pool the 15M shape's two-core decode spent a measurable share in the scheduler
//! (`__schedule`, `sched_yield`; perf; BENCHMARKS.md, "A spinning thread team instead of
//! rayon's sleeping pool"). A member that finds no work for `SPIN_FOR` (natively; `SPIN`
//! rounds in wasm) goes to sleep on a condition variable and is woken by the next loop.
//!
//! Natively the members are `std::thread`s, started once. In the page (wasm built with
//! `+atomics`) each member is a web worker sharing the engine's memory, started through the
//! host's spawner (`set_spawner`); a new thread count there retires the old team (its members
//! leave at their next wake-up) and starts another.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// How long an idle member spins before sleeping natively: longer than the gap between two
/// loops of a forward pass or two decode steps, shorter than a pause. A time, not rounds of
/// `spin_loop`: a round is a `pause`, whose length differs between CPUs (26 ns on this Zen
/// 5, where 2^15 rounds spun 0.85 ms of a core a busy machine's other programs wanted).
#[cfg(not(target_arch = "wasm32"))]
const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(200);

/// Rounds of `spin_loop` an idle member waits before sleeping in wasm (no clock there).
#[cfg(target_arch = "wasm32")]
const SPIN: u32 = 1 << 15;

/// How long the caller spins for the members still inside a job before sleeping until
/// the last leaves: a member still in a chunk after it was likely descheduled by another
/// program, and a sleeping caller leaves its core to the machine instead of spinning its
/// share away (its fair share, which a scheduler charges for spinning as for work).
#[cfg(not(target_arch = "wasm32"))]
const WAIT_FOR: std::time::Duration = std::time::Duration::from_micros(50);

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
    /// Set when the team is retired (another thread count): members leave at their next
    /// wake-up.
    quit: AtomicBool,
    /// Members running (a web worker starts some time after it is asked for).
    joined: AtomicUsize,
    panicked: AtomicBool,
    sleeping: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    /// The caller sleeps on `done` for the last member to leave the job …
    caller_waiting: AtomicBool,
    done: Condvar,
    /// Jobs whose caller waited for a member longer than its own share took (natively; in
    /// wasm it spins): a member descheduled inside its chunk, not a share cut unevenly.
    #[cfg(not(target_arch = "wasm32"))]
    held_up: AtomicUsize,
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
    /// A member's team while it runs a job (counted in its `active`).
    static IN_JOB: Cell<Option<&'static Shared>> = const { Cell::new(None) };
}

/// The team now (null: none started yet). Teams are leaked: one natively, one per thread
/// count chosen in the page.
static CURRENT: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());
/// Held while a team is started or retired.
static STARTING: Mutex<()> = Mutex::new(());
/// A team size whose start failed: not tried again on every loop; and why.
static FAILED: AtomicUsize = AtomicUsize::new(0);
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// Why the last team could not start, if it could not.
pub fn failure() -> Option<String> {
    FAILURE.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// A member's thread stopped inside a job without returning (in the page, where a panic
/// aborts: its web worker trapped; `thread.js` calls this on that thread): the job counts it
/// as done and panicked, so the caller panics instead of waiting for it forever.
#[cfg(target_arch = "wasm32")]
pub fn member_trapped() {
    if let Some(s) = IN_JOB.with(|j| j.take()) {
        s.panicked.store(true, Ordering::SeqCst);
        leave(s);
    }
}

/// A member leaves the job it entered; the last wakes the caller if it sleeps.
fn leave(s: &Shared) {
    if s.active.fetch_sub(1, Ordering::SeqCst) == 1 && s.caller_waiting.load(Ordering::SeqCst) {
        let _g = s.lock.lock().unwrap_or_else(|p| p.into_inner());
        s.done.notify_one();
    }
}

/// How the page starts a thread running `f` (a web worker on the engine's memory).
#[cfg(target_arch = "wasm32")]
pub type Spawner = fn(Box<dyn FnOnce() + Send>) -> Result<(), String>;

#[cfg(target_arch = "wasm32")]
static SPAWNER: std::sync::OnceLock<Spawner> = std::sync::OnceLock::new();

/// How the page starts a member (a web worker on the engine's memory); set once.
#[cfg(target_arch = "wasm32")]
pub fn set_spawner(spawn: Spawner) {
    let _ = SPAWNER.set(spawn);
}

fn spawn(idx: usize, f: Box<dyn FnOnce() + Send>) -> Result<(), String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::Builder::new()
            .name(format!("engine-team-{idx}"))
            .spawn(f)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = idx;
        let spawn = SPAWNER
            .get()
            .ok_or("the page gave the engine no way to start a thread")?;
        spawn(f)
    }
}

fn team(size: usize) -> Option<&'static Shared> {
    let now = CURRENT.load(Ordering::Acquire);
    // SAFETY: teams are leaked, never freed.
    if let Some(s) = unsafe { now.as_ref() } {
        if s.members + 1 == size {
            return Some(s);
        }
    }
    if size < 2 || FAILED.load(Ordering::Relaxed) == size {
        return None;
    }
    let _starting = STARTING.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: as above.
    if let Some(old) = unsafe { CURRENT.load(Ordering::Acquire).as_ref() } {
        if old.members + 1 == size {
            return Some(old);
        }
        retire(old);
    }
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        members: size - 1,
        epoch: AtomicU64::new(0),
        job: UnsafeCell::new(None),
        active: AtomicUsize::new(0),
        closed: AtomicBool::new(true),
        quit: AtomicBool::new(false),
        joined: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
        sleeping: AtomicUsize::new(0),
        lock: Mutex::new(()),
        wake: Condvar::new(),
        caller_waiting: AtomicBool::new(false),
        done: Condvar::new(),
        #[cfg(not(target_arch = "wasm32"))]
        held_up: AtomicUsize::new(0),
        busy: Mutex::new(()),
    }));
    for idx in 1..size {
        if let Err(e) = spawn(idx, Box::new(move || member(shared, idx))) {
            // The members started leave; loops run alone at this size.
            retire(shared);
            FAILED.store(size, Ordering::Relaxed);
            *FAILURE.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            CURRENT.store(std::ptr::null_mut(), Ordering::Release);
            return None;
        }
    }
    FAILED.store(0, Ordering::Relaxed);
    *FAILURE.lock().unwrap_or_else(|p| p.into_inner()) = None;
    CURRENT.store(shared as *const Shared as *mut Shared, Ordering::Release);
    Some(shared)
}

/// Tells a team's members to leave (after the job under way, if any).
fn retire(s: &'static Shared) {
    let _busy = s.busy.lock().unwrap_or_else(|p| p.into_inner());
    s.quit.store(true, Ordering::SeqCst);
    s.epoch.fetch_add(1, Ordering::SeqCst);
    let _g = s.lock.lock().unwrap_or_else(|p| p.into_inner());
    s.wake.notify_all();
}

fn member(s: &'static Shared, idx: usize) {
    INSIDE.with(|i| i.set(true));
    s.joined.fetch_add(1, Ordering::SeqCst);
    let mut seen = 0u64;
    loop {
        let mut spin = Spin::default();
        seen = loop {
            let e = s.epoch.load(Ordering::Acquire);
            if e != seen {
                break e;
            }
            if spin.again() {
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
            spin = Spin::default();
        };
        if s.quit.load(Ordering::SeqCst) {
            s.joined.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        // Entered before the job is read; the caller waits for every entered member
        // once it has closed the job, and a member that sees it closed leaves it alone.
        s.active.fetch_add(1, Ordering::SeqCst);
        if !s.closed.load(Ordering::SeqCst) {
            // SAFETY: see `Shared`: the job lives until the caller has closed it and
            // seen `active` at 0, and this member is counted in `active`.
            let job = unsafe { *s.job.get() };
            if let Some(job) = job {
                IN_JOB.with(|j| j.set(Some(s)));
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
                    (*job)(idx)
                }));
                IN_JOB.with(|j| j.set(None));
                if ran.is_err() {
                    s.panicked.store(true, Ordering::SeqCst);
                }
            }
        }
        leave(s);
    }
}

/// An idle member's spinning: whether to go on (`SPIN_FOR` natively, `SPIN` rounds in wasm).
#[derive(Default)]
struct Spin {
    rounds: u32,
    #[cfg(not(target_arch = "wasm32"))]
    since: Option<std::time::Instant>,
}

impl Spin {
    /// An idle member's: `SPIN_FOR`.
    fn again(&mut self) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        return self.again_for(SPIN_FOR);
        #[cfg(target_arch = "wasm32")]
        {
            self.rounds = self.rounds.wrapping_add(1);
            self.rounds <= SPIN
        }
    }

    /// The caller's wait for the members inside a job: `WAIT_FOR`; in wasm for as long as
    /// it takes, as before natively (the page's threads were measured so: an idle browser
    /// tab, no other program holding a member).
    fn again_waiting(&mut self) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        return self.again_for(WAIT_FOR);
        #[cfg(target_arch = "wasm32")]
        true
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn again_for(&mut self, limit: std::time::Duration) -> bool {
        self.rounds = self.rounds.wrapping_add(1);
        // the clock read every 64 rounds (a read costs about a round)
        if self.rounds % 64 != 1 {
            return true;
        }
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        since.elapsed() < limit
    }
}

/// Jobs of the current team whose caller waited for a member longer than its own share
/// took: how often a member was descheduled inside its chunk (a busy machine).
#[cfg(not(target_arch = "wasm32"))]
pub fn held_up() -> usize {
    // SAFETY: teams are leaked, never freed.
    unsafe { CURRENT.load(Ordering::Acquire).as_ref() }
        .map_or(0, |s| s.held_up.load(Ordering::Relaxed))
}

/// Threads of a team of `size` running now, the caller's included (the team is started if
/// it is not yet): `size` once every member has joined.
pub fn joined(size: usize) -> usize {
    team(size).map_or(1, |s| 1 + s.joined.load(Ordering::SeqCst))
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
    let Ok(_busy) = s.busy.try_lock() else {
        return false;
    };
    if s.quit.load(Ordering::SeqCst) {
        return false;
    }
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
    #[cfg(not(target_arch = "wasm32"))]
    let began = std::time::Instant::now();
    let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(0)));
    INSIDE.with(|i| i.set(false));
    #[cfg(not(target_arch = "wasm32"))]
    let (own, closed) = (began.elapsed(), std::time::Instant::now());
    // Every chunk is taken (the caller's own loop ran out): close the job, then wait
    // only for the members inside it, each finishing one chunk at most: spinning a
    // while, then asleep until the last leaves (it was descheduled on a busy machine).
    s.closed.store(true, Ordering::SeqCst);
    let mut spin = Spin::default();
    while s.active.load(Ordering::Acquire) != 0 {
        if spin.again_waiting() {
            std::hint::spin_loop();
            continue;
        }
        let guard = s.lock.lock().unwrap_or_else(|p| p.into_inner());
        s.caller_waiting.store(true, Ordering::SeqCst);
        let guard = s
            .done
            .wait_while(guard, |_| s.active.load(Ordering::SeqCst) != 0)
            .unwrap_or_else(|p| p.into_inner());
        s.caller_waiting.store(false, Ordering::SeqCst);
        drop(guard);
        // (a share cut unevenly keeps the caller waiting at most a chunk, less than its
        // own share of several)
        #[cfg(not(target_arch = "wasm32"))]
        if closed.elapsed() > own {
            s.held_up.fetch_add(1, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A member still in its chunk long after the caller's share ran out (descheduled by
    /// another program, here asleep): the caller sleeps until the member leaves, the loop
    /// returns with the member's work done, and the job counts as held up.
    #[test]
    fn the_caller_sleeps_until_a_slow_member_leaves() {
        let size = super::super::thread_count().max(2);
        let Some(s) = team(size) else {
            panic!("no team of {size} threads: {:?}", failure())
        };
        let (started, done) = (AtomicBool::new(false), AtomicBool::new(false));
        let job = |idx: usize| {
            if idx == 0 {
                // the caller's share: over once the member is inside its own
                let t = Instant::now();
                while !started.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(5) {
                    std::thread::yield_now();
                }
            } else {
                started.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                done.store(true, Ordering::SeqCst);
            }
        };
        let t = Instant::now();
        loop {
            let held_up = s.held_up.load(Ordering::SeqCst);
            // (another test's loop may hold the team: try again)
            if run(size, &job) && started.load(Ordering::SeqCst) {
                assert!(
                    done.load(Ordering::SeqCst),
                    "returned before the member left"
                );
                assert!(
                    s.held_up.load(Ordering::SeqCst) > held_up,
                    "a wait of 20 ms for a member not counted as held up"
                );
                return;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the member never ran its part"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
