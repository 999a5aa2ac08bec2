//! A line on stderr for work that takes more than a second (loading a model, a long
//! prefill, `quality`, `bench --naive`), when stderr is a terminal: what runs and for how
//! long, rewritten in place four times a second and cleared when the work ends. Scripts
//! (stderr a file or a pipe) see nothing of it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long work runs before its line appears.
const AFTER: Duration = Duration::from_secs(1);
/// How often the line is rewritten.
const EVERY: Duration = Duration::from_millis(250);

/// The line of one piece of work, until it is dropped.
pub struct Progress {
    done: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts timing `what` ("loading model.gguf"); its line shows after a second.
    pub fn new(what: impl Into<String>) -> Progress {
        let done = Arc::new(AtomicBool::new(false));
        let ticker = std::io::stderr().is_terminal().then(|| {
            let (done, what) = (done.clone(), what.into());
            std::thread::spawn(move || tick(&done, &what))
        });
        Progress { done, ticker }
    }
}

/// Rewrites the line until `done`; clears it if it was shown.
fn tick(done: &AtomicBool, what: &str) {
    let start = Instant::now();
    let mut shown = false;
    while !done.load(Ordering::Acquire) {
        std::thread::park_timeout(EVERY);
        let t = start.elapsed();
        if t >= AFTER && !done.load(Ordering::Acquire) {
            let _ = write!(std::io::stderr(), "\r{}", line(what, t));
            shown = true;
        }
    }
    if shown {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

/// The line: what runs and for how long.
fn line(what: &str, t: Duration) -> String {
    format!("{what}… {:.1} s", t.as_secs_f64())
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(t) = self.ticker.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_runs_and_for_how_long() {
        assert_eq!(
            line("prefill of 981 tokens", Duration::from_millis(2345)),
            "prefill of 981 tokens… 2.3 s"
        );
    }

    /// Off a terminal (stderr a file or a pipe, as under `cargo test` and in scripts) no
    /// thread starts and nothing is written.
    #[test]
    fn off_a_terminal_it_starts_nothing() {
        let p = Progress::new("loading");
        assert_eq!(p.ticker.is_some(), std::io::stderr().is_terminal());
    }
}
