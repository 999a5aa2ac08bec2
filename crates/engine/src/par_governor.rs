//! `par::decode_step`'s choice between the team and one thread (natively): each way's
//! step time, the trials of the other way, and the switch (the rule is `decode_step`'s).

use std::sync::Mutex;
use std::time::Instant;

const FIRST_TRIAL: u32 = 8;
const MOST_BETWEEN: u32 = 256;

struct State {
    alone: bool,
    /// Moving average of a step's nanoseconds, [team, alone] (0: not measured yet).
    ns: [f64; 2],
    until_trial: u32,
    between: u32,
}

const START: State = State {
    alone: false,
    ns: [0.0; 2],
    until_trial: FIRST_TRIAL,
    between: FIRST_TRIAL,
};

static STATE: Mutex<State> = Mutex::new(START);

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

impl State {
    /// The way the next step runs, and whether it is a trial of the other way.
    fn next(&mut self) -> (bool, bool) {
        match self.until_trial {
            0 => (!self.alone, true),
            _ => {
                self.until_trial -= 1;
                (self.alone, false)
            }
        }
    }

    /// A step of `ns` nanoseconds, run `alone` or not, `trial` or not.
    fn record(&mut self, alone: bool, trial: bool, ns: f64) {
        let k = alone as usize;
        let before = self.ns[k];
        // A step half again its way's average: the machine changed (another program
        // started or ended), and the averages are stale.
        let drift = !trial && before > 0.0 && ns > 1.5 * before;
        // A trial's step, or one after a change, is the way's figure now; else averaged.
        self.ns[k] = if before == 0.0 || trial || drift {
            ns
        } else {
            0.7 * before + 0.3 * ns
        };
        if trial {
            let (current, other) = (self.ns[self.alone as usize], self.ns[k]);
            if current == 0.0 || other < 0.9 * current {
                self.alone = alone;
                self.between = FIRST_TRIAL;
            } else {
                self.between = (self.between * 2).min(MOST_BETWEEN);
            }
            self.until_trial = self.between;
        } else if drift {
            // Try the other way at once, and often again for a while.
            self.until_trial = 0;
            self.between = FIRST_TRIAL;
        }
    }
}

pub fn step<R>(f: impl FnOnce() -> R) -> R {
    // While the float32 loops' variants are on trial (the first decode steps, one variant
    // a step: kernels/tune.rs) steps differ by variant, not by way: not compared.
    if crate::kernels::tune::f32_on_trial() {
        return f();
    }
    let (alone, trial) = state().next();
    let t0 = Instant::now();
    let r = if alone { super::alone(f) } else { f() };
    let ns = t0.elapsed().as_nanos() as f64;
    state().record(alone, trial, ns);
    r
}

/// Which way decode steps run now (`bench` says it).
pub fn alone_now() -> bool {
    state().alone
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `steps` steps where the team takes `team` ns and one thread `alone` ns;
    /// returns the ways they ran.
    fn run(s: &mut State, steps: usize, team: f64, alone: f64) -> Vec<bool> {
        (0..steps)
            .map(|_| {
                let (a, trial) = s.next();
                s.record(a, trial, if a { alone } else { team });
                a
            })
            .collect()
    }

    #[test]
    fn the_faster_way_is_taken_and_the_slower_tried_ever_less_often() {
        let mut s = START;
        // An idle machine: the team is twice as fast; it stays, trials thin out.
        let ways = run(&mut s, 600, 1e6, 2e6);
        assert!(!s.alone);
        let trials: Vec<usize> = (0..ways.len()).filter(|&i| ways[i]).collect();
        assert_eq!(
            trials[..3],
            [8, 25, 58],
            "8 steps, then 16, 32 … between trials"
        );
        assert!(trials.len() <= 7, "{trials:?}");
        // The machine gets busy: team steps take three times as long. The next step
        // is a trial (the drift), one thread wins it and stays.
        let ways = run(&mut s, 40, 3e6, 2e6);
        assert!(ways[1], "the drift's trial runs at once: {ways:?}");
        assert!(
            s.alone && ways[2..].iter().filter(|&&a| !a).count() <= 2,
            "{ways:?}"
        );
        // Idle again: the trials find the team faster and go back to it.
        run(&mut s, 300, 1e6, 2e6);
        assert!(!s.alone);
    }

    #[test]
    fn a_way_within_ten_percent_does_not_flip_the_choice() {
        let mut s = START;
        let ways = run(&mut s, 400, 1e6, 0.95e6);
        assert!(!s.alone);
        assert!(ways.iter().filter(|&&a| a).count() <= 6, "{ways:?}");
    }
}
