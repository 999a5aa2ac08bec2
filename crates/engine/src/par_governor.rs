//! `par::decode_step`'s choice between the team and one thread (natively): each way's
//! step time, the trials of the other way, and the switch (the rule is `decode_step`'s).

use std::sync::Mutex;
use std::time::Instant;

const FIRST_TRIAL: u32 = 8;
const MOST_BETWEEN: u32 = 256;
/// Steps a trial of the other way runs: on a busy machine one step in a few is preempted
/// (several times a step's time), so one step says little about a way.
const TRIAL_STEPS: u32 = 4;
/// Weight of a step in its way's moving average (about the last eight steps).
const WEIGHT: f64 = 0.125;
/// Weight of a step in the slow average that tells a changed machine (about the last 32
/// steps: a burst of preempted steps on a busy machine moves it little).
const SLOW_WEIGHT: f64 = 1.0 / 32.0;
/// How far the slow average moves, either way, before the machine counts as changed.
const DRIFT: f64 = 2.0;

struct State {
    alone: bool,
    /// Moving average of a step's nanoseconds, [team, alone] (0: not measured yet).
    ns: [f64; 2],
    /// Steps of the current way before the next trial.
    until_trial: u32,
    /// Steps of the trial under way (0: none).
    trial_left: u32,
    between: u32,
    /// The current way's slow average (`SLOW_WEIGHT`) …
    slow: f64,
    /// … and its figure when the way was last chosen or kept: a move of `DRIFT` times
    /// either way means the machine changed (another program started or ended).
    reference: f64,
}

const START: State = State {
    alone: false,
    ns: [0.0; 2],
    until_trial: FIRST_TRIAL,
    trial_left: 0,
    between: FIRST_TRIAL,
    slow: 0.0,
    reference: 0.0,
};

static STATE: Mutex<State> = Mutex::new(START);

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

impl State {
    /// The way the next step runs, and whether it is a trial of the other way.
    fn next(&mut self) -> (bool, bool) {
        if self.trial_left == 0 && self.until_trial == 0 {
            self.trial_left = TRIAL_STEPS;
        }
        if self.trial_left > 0 {
            return (!self.alone, true);
        }
        self.until_trial -= 1;
        (self.alone, false)
    }

    /// A step of `ns` nanoseconds, run `alone` or not, `trial` or not.
    fn record(&mut self, alone: bool, trial: bool, ns: f64) {
        let k = alone as usize;
        let before = self.ns[k];
        self.ns[k] = if before == 0.0 {
            ns
        } else {
            (1.0 - WEIGHT) * before + WEIGHT * ns
        };
        // Steps of several callers (tests, sequences decoded side by side) interleave: a
        // trial step that ends after its trial did, or a step of the way just left, only
        // adds to its way's average.
        if trial && (self.trial_left == 0 || alone == self.alone) || !trial && alone != self.alone {
            return;
        }
        if trial {
            // A trial's figure is its own steps' mean (the way's average from before may
            // be stale): the first step sets it, the others average in.
            let done = TRIAL_STEPS - self.trial_left;
            self.ns[k] = (before * done as f64 + ns) / (done + 1) as f64;
            self.trial_left -= 1;
            if self.trial_left == 0 {
                self.decide(alone);
            }
            return;
        }
        self.slow = if self.slow == 0.0 {
            ns
        } else {
            (1.0 - SLOW_WEIGHT) * self.slow + SLOW_WEIGHT * ns
        };
        if self.reference == 0.0 {
            self.reference = self.slow;
        }
        let r = self.slow / self.reference;
        if !(1.0 / DRIFT..=DRIFT).contains(&r) {
            // The machine changed: the other way's figure is stale; try it at once and
            // often again for a while.
            self.ns[1 - k] = 0.0;
            self.reference = self.slow;
            self.until_trial = 0;
            self.between = FIRST_TRIAL;
        }
    }

    /// The end of a trial of the way `trial_alone`: it is taken if its steps' mean is 10 %
    /// faster than the current way's average.
    fn decide(&mut self, trial_alone: bool) {
        let (current, other) = (self.ns[self.alone as usize], self.ns[trial_alone as usize]);
        if current == 0.0 || other < 0.9 * current {
            self.alone = trial_alone;
            self.between = FIRST_TRIAL;
        } else {
            self.between = (self.between * 2).min(MOST_BETWEEN);
        }
        self.reference = self.ns[self.alone as usize];
        self.slow = self.reference;
        self.until_trial = self.between;
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
        let starts: Vec<usize> = (0..ways.len())
            .filter(|&i| ways[i] && (i == 0 || !ways[i - 1]))
            .collect();
        assert_eq!(
            starts[..3],
            [8, 28, 64],
            "trials of 4 steps after 8 steps, then 16, 32 … between them"
        );
        assert!(ways.iter().filter(|&&a| a).count() <= 24, "{starts:?}");
        // The machine gets busy: team steps take three times as long. Its slow average
        // doubles within a few dozen steps, trials run, one thread wins and stays.
        let ways = run(&mut s, 80, 3e6, 2e6);
        let first = ways.iter().position(|&a| a);
        assert!(first.is_some_and(|i| i < 30), "{ways:?}");
        let switched = (0..ways.len() - 8).find(|&i| ways[i..i + 8].iter().all(|&a| a));
        assert!(switched.is_some_and(|i| i < 50), "{ways:?}");
        assert!(s.alone, "{ways:?}");
        // Idle again: the trials find the team faster and go back to it.
        run(&mut s, 300, 1e6, 2e6);
        assert!(!s.alone);
    }

    /// A busy machine: every few steps one is preempted, several times as long. The way
    /// that is faster on average is kept, not the one whose last step was lucky (one step
    /// a trial, and any step half again its average taken for a changed machine, had the
    /// choice flip every few steps: the default threads fell to 0.70 of one thread).
    #[test]
    fn preempted_steps_now_and_then_do_not_flip_the_choice() {
        let mut s = START;
        let (mut i, mut ways) = (0usize, Vec::new());
        for _ in 0..600 {
            let (a, trial) = s.next();
            // team: 1.2 ms, every third step 9 ms (3.8 on average); one thread: 1.3 ms,
            // every fourth 5 ms (2.2 on average)
            let ns = match a {
                false if i % 3 == 2 => 9e6,
                false => 1.2e6,
                true if i % 4 == 3 => 5e6,
                true => 1.3e6,
            };
            s.record(a, trial, ns);
            ways.push(a);
            i += 1;
        }
        let alone = ways[100..].iter().filter(|&&a| a).count();
        assert!(alone >= 450, "{alone} of 500 steps alone: {ways:?}");
    }

    /// Three callers whose steps interleave (each asks its way, then all record) never
    /// leave the state inconsistent (a trial step counted past its trial's end panicked
    /// in debug builds), and the faster way is still found.
    #[test]
    fn interleaved_callers_keep_the_state_whole() {
        let mut s = START;
        for _ in 0..400 {
            let ways: [(bool, bool); 3] = std::array::from_fn(|_| s.next());
            for (a, trial) in ways {
                s.record(a, trial, if a { 1e6 } else { 2e6 });
            }
            assert!(s.trial_left <= TRIAL_STEPS);
        }
        assert!(s.alone);
    }

    #[test]
    fn a_way_within_ten_percent_does_not_flip_the_choice() {
        let mut s = START;
        let ways = run(&mut s, 400, 1e6, 0.95e6);
        assert!(!s.alone);
        assert!(ways.iter().filter(|&&a| a).count() <= 20, "{ways:?}");
    }
}
