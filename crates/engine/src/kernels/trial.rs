//! A choice among N variants made on the decode itself (`tune`'s float32 rows): after
//! [`WARM_STEPS`] untimed decode steps (the first also fault the model's pages in), step k
//! of the trial runs variant k mod N and what it spends is recorded; after the trial's last
//! step the variant whose best step took least is kept for the process (the best, not the
//! mean: one step that met a page fault or a sleeping thread would decide a mean). Every
//! step reads the same weights, so the variants are timed on the same work.
//!
//! Steps count as timed ([`Trial::timing`], what the thread governor leaves alone) only once
//! the products the trial times have been seen (the warm steps show them): a model with no
//! such products (q8, ggml blocks) leaves the trial *dormant*, still listening, so a model
//! loaded later is timed, while the governor decides its steps (it had left every q8 decode
//! step on the team, however busy the machine). A round in which no variant recorded
//! anything makes the trial dormant again.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

/// Untimed decode steps before a trial.
pub const WARM_STEPS: usize = 2;

pub struct Trial<const N: usize> {
    /// decode steps begun
    steps: AtomicUsize,
    /// timed steps, a multiple of N
    length: usize,
    /// ns recorded in the current step
    current: AtomicU64,
    /// each variant's best step so far, ns
    best: [AtomicU64; N],
    /// the index kept, and each variant's best step, µs
    chosen: OnceLock<(usize, [f64; N])>,
    /// no product recorded since the trial began or since a whole round recorded nothing
    dormant: AtomicBool,
}

impl<const N: usize> Trial<N> {
    /// A trial of `length` timed steps (a multiple of N, at least N).
    pub const fn new(length: usize) -> Trial<N> {
        assert!(N > 0 && length >= N && length.is_multiple_of(N));
        Trial {
            steps: AtomicUsize::new(0),
            length,
            current: AtomicU64::new(0),
            best: [const { AtomicU64::new(u64::MAX) }; N],
            chosen: OnceLock::new(),
            dormant: AtomicBool::new(true),
        }
    }

    /// Decode steps from the first until the choice is made (the untimed, the trial's, and
    /// the one that chooses).
    pub const fn steps_to_choose(&self) -> usize {
        WARM_STEPS + self.length + 1
    }

    /// The variant step `count` (from 1) runs, if it is one of the trial's.
    fn turn(&self, count: usize) -> Option<usize> {
        (count > WARM_STEPS && count <= WARM_STEPS + self.length)
            .then(|| (count - WARM_STEPS - 1) % N)
    }

    /// The variant the current step runs: the kept one after the trial.
    pub fn index(&self) -> usize {
        match self.chosen.get() {
            Some((i, _)) => *i,
            None => self.turn(self.steps.load(Relaxed)).unwrap_or(0),
        }
    }

    /// The kept variant and each variant's best step (µs), once chosen.
    pub fn chosen(&self) -> Option<&(usize, [f64; N])> {
        self.chosen.get()
    }

    /// Whether the trial still listens for its products' times (no choice made yet).
    pub fn open(&self) -> bool {
        self.chosen.get().is_none()
    }

    /// Whether decode steps are being timed now: open, and its products seen (in a warm
    /// step or in the round under way) since the start or a whole round without them.
    pub fn timing(&self) -> bool {
        self.open() && !self.dormant.load(Relaxed)
    }

    /// A decode step begins: the step before it is scored, and after the trial's last the
    /// choice is made, or, if some variant recorded nothing (the steps did no such work),
    /// the trial starts over, dormant if no variant recorded anything.
    pub fn step(&self) {
        if !self.open() {
            return;
        }
        let before = self.steps.fetch_add(1, Relaxed);
        let spent = self.current.swap(0, Relaxed);
        if let Some(i) = self.turn(before).filter(|_| spent > 0) {
            self.best[i].fetch_min(spent, Relaxed);
        }
        if before == WARM_STEPS + self.length {
            let best: [u64; N] = std::array::from_fn(|i| self.best[i].load(Relaxed));
            if best.iter().all(|&t| t < u64::MAX) {
                let kept = (0..N).min_by_key(|&i| best[i]).unwrap_or(0);
                let _ = self.chosen.set((kept, best.map(|t| t as f64 / 1e3)));
            } else {
                self.dormant
                    .store(best.iter().all(|&t| t == u64::MAX), Relaxed);
                self.steps.store(WARM_STEPS + 1, Relaxed);
                self.best.iter().for_each(|t| t.store(u64::MAX, Relaxed));
            }
        }
    }

    /// `ns` spent in the current step (by its variant).
    pub fn record(&self, ns: u64) {
        if !self.open() {
            return;
        }
        self.dormant.store(false, Relaxed);
        if self.turn(self.steps.load(Relaxed)).is_some() {
            self.current.fetch_add(ns.max(1), Relaxed);
        }
    }
}
