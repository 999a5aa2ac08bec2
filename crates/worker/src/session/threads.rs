//! The engine's threads in the page (`SetThreads`): the count the user picks, or the fewest
//! near the fastest of 1, 2, 4, … as timed here (`serving::threads`; the worker asks this
//! itself at start-up). Where the page cannot have threads (not cross-origin isolated, no
//! shared memory, one processor) it runs one and the report says why.

use super::base::{Core, Host};
use decoding_engine::par;
use decoding_engine::serving::threads::{candidates, choose, Probe};
use decoding_page::protocol::*;

/// How long the page waits for a team's web workers to join before it gives up on them.
const JOIN_MS: f64 = 10_000.0;
/// Rounds of the probe at each count on each pass (each at least a few ms:
/// `roofline::best_per_call`).
const PROBE_ROUNDS: usize = 2;
/// Passes over the counts, a pause between them, each count's best kept. Timed while the
/// browser still works for the page (its code compiled and cached, its first model drawn:
/// on the same cores), two threads read no faster than one, 0.17 against 0.18 ms, where a
/// second later they read 0.09: spread over half a second, the best of each count is its
/// figure on a settled machine.
const PROBE_PASSES: usize = 5;
const PROBE_PAUSE_MS: u32 = 100;

/// The browser's processors as the page may use them.
#[derive(Debug, Clone, PartialEq)]
pub struct Cores {
    /// `navigator.hardwareConcurrency`.
    pub logical: u32,
    /// Why the engine runs on one thread whatever the count, if it must.
    pub one_thread: Option<ThreadWhy>,
}

impl Core {
    pub(super) async fn set_threads(&mut self, want: Option<u32>, host: &dyn Host) -> Vec<Event> {
        let cores = host.cores();
        let one = |why| report(1, 1, why);
        if let Some(why) = cores.one_thread {
            return match want {
                Some(n) if n > 1 => vec![Event::error(format!(
                    "{n} threads: the engine runs on one thread here"
                ))],
                _ => one(why),
            };
        }
        let most = (cores.logical as usize).clamp(1, par::MOST_THREADS) as u32;
        if most < 2 {
            return one(ThreadWhy::OneCore);
        }
        match want {
            Some(n) if n == 0 || n > most => vec![Event::error(format!(
                "{n} threads: this browser offers 1 to {most}"
            ))],
            Some(n) => match start(n, host).await {
                Ok(()) => report(n, most, ThreadWhy::Chosen),
                Err(message) => failed(message, most, host).await,
            },
            None => {
                let counts = candidates(most as usize);
                let mut timed: Vec<(u32, f64)> =
                    counts.iter().map(|&n| (n as u32, f64::INFINITY)).collect();
                let mut probe = Probe::new();
                for pass in 0..PROBE_PASSES {
                    if pass > 0 {
                        host.sleep(PROBE_PAUSE_MS).await;
                    }
                    // One thread is timed alone beside each team (no team to stop and start).
                    for i in 1..timed.len() {
                        if let Err(message) = start(timed[i].0, host).await {
                            return failed(message, most, host).await;
                        }
                        let now = || host.now();
                        let one = par::alone(|| probe.ms(PROBE_ROUNDS, &now));
                        timed[0].1 = timed[0].1.min(one);
                        timed[i].1 = timed[i].1.min(probe.ms(PROBE_ROUNDS, &now));
                    }
                }
                drop(probe);
                let pairs: Vec<(usize, f64)> =
                    timed.iter().map(|&(n, t)| (n as usize, t)).collect();
                let best = choose(&pairs) as u32;
                match start(best, host).await {
                    Ok(()) => report(best, most, ThreadWhy::Measured { timed }),
                    Err(message) => failed(message, most, host).await,
                }
            }
        }
    }
}

fn report(threads: u32, most: u32, why: ThreadWhy) -> Vec<Event> {
    vec![Event::Model(ModelEvent::Threads {
        report: ThreadReport { threads, most, why },
    })]
}

/// Back to one thread, saying why the others could not start.
async fn failed(message: String, most: u32, host: &dyn Host) -> Vec<Event> {
    let _ = start(1, host).await;
    report(1, most, ThreadWhy::Failed { message })
}

/// Sets `n` threads and waits (yielding to the event loop, where the workers start) until
/// every one has joined.
async fn start(n: u32, host: &dyn Host) -> Result<(), String> {
    par::set_threads(Some(n as usize))?;
    let t0 = host.now();
    loop {
        let joined = par::threads_joined();
        if joined >= n as usize {
            return Ok(());
        }
        if let Some(why) = par::threads_failure() {
            return Err(why);
        }
        if host.now() - t0 > JOIN_MS {
            return Err(format!(
                "{joined} of {n} threads started in {} s",
                JOIN_MS / 1e3
            ));
        }
        host.yield_now().await;
    }
}
