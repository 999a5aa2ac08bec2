//! `par::decode_step`'s choice between the team and one thread (natively): each way's
//! step time, the trials of the other way, and the switch (the rule is `decode_step`'s).

use std::sync::Mutex;
use std::time::Instant;

const FIRST_TRIAL: u32 = 8;
const MOST_BETWEEN: u32 = 256;
/// Steps a trial of the other way runs: on a busy machine one step in a few is preempted
/// (several times a step's time), so one step says little about a way.
const TRIAL_STEPS: u32 = 6;
/// The first steps of a trial, not counted: the other way's threads wake or go to sleep,
/// and the scheduler places them among the machine's other programs' (on a busy machine
/// one thread's first steps after the team's ran at about two thirds of its later speed).
const SETTLE_STEPS: u32 = 2;
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
    /// The team's count of jobs held up by a descheduled member (`par_team::held_up`)
    /// when a trial was last due.
    held_up_seen: usize,
}

const START: State = State {
    alone: false,
    ns: [0.0; 2],
    until_trial: FIRST_TRIAL,
    trial_left: 0,
    between: FIRST_TRIAL,
    slow: 0.0,
    reference: 0.0,
    held_up_seen: 0,
};

static STATE: Mutex<State> = Mutex::new(START);

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

impl State {
    /// The way the next step runs, and whether it is a trial of the other way, `held_up`
    /// the team's jobs held up by a descheduled member so far. A trial of one thread is due
    /// only if such a job came since the last was due, or after `MOST_BETWEEN` steps: on
    /// an idle machine the team is not held up, and the trials (one thread 1.5× slower
    /// there) cost a short decode a tenth of its speed.
    fn next(&mut self, held_up: usize) -> (bool, bool) {
        if self.trial_left == 0 && self.until_trial == 0 {
            let was_held_up = held_up != self.held_up_seen;
            self.held_up_seen = held_up;
            if self.alone || was_held_up || self.between >= MOST_BETWEEN {
                self.trial_left = TRIAL_STEPS;
            } else {
                self.between = (self.between * 2).min(MOST_BETWEEN);
                self.until_trial = self.between;
            }
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
            self.ns[k] = match done.checked_sub(SETTLE_STEPS) {
                None => 0.0,
                Some(counted) => (before * counted as f64 + ns) / (counted + 1) as f64,
            };
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
    // a step: kernels/tune.rs) steps differ by variant, not by way: not compared. They run
    // on one thread, as they do at `--threads 1`: on the team a step's time is also how
    // long it waited for a member (another program's, on a busy machine), and that, not
    // the variant, chose (BENCHMARKS.md, "The float32 trial on one thread").
    if crate::kernels::tune::f32_steps_timed() {
        return super::alone(f);
    }
    let (alone, trial) = state().next(super::team_held_up());
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
                // the team held up at every step (any trial is due)
                let (a, trial) = s.next(s.held_up_seen + 1);
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
            [8, 30, 68],
            "trials of 6 steps after 8 steps, then 16, 32 … between them"
        );
        assert!(
            ways.iter().filter(|&&a| a).count() <= 6 * TRIAL_STEPS as usize,
            "{starts:?}"
        );
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
            let (a, trial) = s.next(i);
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
            let ways: [(bool, bool); 3] = std::array::from_fn(|k| s.next(k));
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
        assert!(
            ways.iter().filter(|&&a| a).count() <= 5 * TRIAL_STEPS as usize,
            "{ways:?}"
        );
    }

    /// A team never held up by a descheduled member (an idle machine) is not tried against
    /// one thread until `MOST_BETWEEN` steps have passed; once it is held up, the trials
    /// come as they did (and one thread, faster there, wins).
    #[test]
    fn an_unhindered_team_is_not_tried_against_one_thread() {
        let mut s = START;
        let mut first = None;
        for i in 0..600 {
            let (a, trial) = s.next(0);
            if a && first.is_none() {
                first = Some(i);
            }
            s.record(a, trial, if a { 2e6 } else { 1e6 });
        }
        assert!(!s.alone);
        let first = first.expect("a trial by 600 steps");
        assert!(first >= MOST_BETWEEN as usize, "first trial at {first}");
        // the machine gets busy: the team waits for its members, one thread is faster
        let mut ways = Vec::new();
        for i in 0..300 {
            let (a, trial) = s.next(1 + i);
            s.record(a, trial, if a { 1e6 } else { 3e6 });
            ways.push(a);
        }
        assert!(s.alone, "{ways:?}");
    }

    /// A trial's first steps (the other way's threads waking or going to sleep, placed
    /// anew by the scheduler) do not count: one thread whose first two trial steps are
    /// four times its later ones still wins against a team it is 20 % faster than, and a
    /// team trial whose later steps are slow loses however fast its first two were.
    #[test]
    fn a_trials_settling_steps_do_not_count() {
        let mut s = START;
        let mut since_switch = 0;
        let mut last = false;
        for i in 0..200 {
            let (a, trial) = s.next(i);
            since_switch = if a == last { since_switch + 1 } else { 0 };
            last = a;
            // (the machine's settling: two steps, what SETTLE_STEPS leaves out)
            let settling = since_switch < 2;
            let ns = match (a, settling) {
                (true, true) => 4e6,
                (true, false) => 0.8e6,
                (false, true) => 0.1e6,
                (false, false) => 1e6,
            };
            s.record(a, trial, ns);
        }
        assert!(
            s.alone,
            "one thread won its trial once its settling steps were left out"
        );
    }
}
