//! The GBNF rule being filled, for the position the page shows (`item · next [a-z]`).
//! llguidance keeps its parse to itself, so the text so far is parsed again here: an Earley
//! recognizer (Earley 1970, with Aycock and Horspool's 2002 step over nullable rules) on the
//! grammar's productions (`gbnf_bnf.rs`), fed a character at a time as tokens are followed.
//! The rule being filled is the one whose item started latest among those that have read
//! some of the text and wait for more: the innermost. Past [`MAX_ITEMS`] or [`MAX_STEPS`]
//! (an ambiguous grammar on a long text) the tracker stops, and the position says only what
//! may come next.

use super::gbnf::{Bnf, Sym};
use std::collections::HashSet;
use std::sync::Arc;

/// Earley items kept, and steps taken (predictions, completions' look-ups), over the whole
/// text before the tracker gives up.
const MAX_ITEMS: usize = 200_000;
const MAX_STEPS: usize = 4_000_000;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct EItem {
    prod: u32,
    dot: u32,
    origin: u32,
}

/// The grammar, with each nonterminal's productions and whether it can match nothing.
struct Grammar {
    bnf: Bnf,
    by_lhs: Vec<Vec<u32>>,
    nullable: Vec<bool>,
}

#[derive(Clone)]
pub(super) struct RuleTracker {
    g: Arc<Grammar>,
    /// Earley sets, one per character read, and one before the first (shared by the copies
    /// a beam search makes: a set never changes once closed).
    sets: Vec<Arc<[EItem]>>,
    /// Bytes of a character not yet whole.
    pending: Vec<u8>,
    items: usize,
    steps: usize,
    /// Whether it still follows the text (not past its limit, nor off the grammar).
    alive: bool,
}

impl RuleTracker {
    pub(super) fn new(bnf: Bnf) -> RuleTracker {
        let n = bnf.owner.len();
        let mut by_lhs = vec![Vec::new(); n];
        for (i, (lhs, _)) in bnf.prods.iter().enumerate() {
            by_lhs[*lhs].push(i as u32);
        }
        let mut nullable = vec![false; n];
        let mut grew = true;
        while grew {
            grew = false;
            for (lhs, body) in &bnf.prods {
                let all = body
                    .iter()
                    .all(|s| matches!(s, Sym::Rule(r) if nullable[*r]));
                if all && !nullable[*lhs] {
                    nullable[*lhs] = true;
                    grew = true;
                }
            }
        }
        let g = Arc::new(Grammar {
            bnf,
            by_lhs,
            nullable,
        });
        let mut t = RuleTracker {
            g,
            sets: Vec::new(),
            pending: Vec::new(),
            items: 0,
            steps: 0,
            alive: true,
        };
        t.reset();
        t
    }

    pub(super) fn reset(&mut self) {
        let start = self.g.bnf.start;
        let first = self.g.by_lhs[start]
            .iter()
            .map(|&prod| EItem {
                prod,
                dot: 0,
                origin: 0,
            })
            .collect();
        self.sets = Vec::new();
        self.pending.clear();
        self.items = 0;
        self.steps = 0;
        self.alive = true;
        self.close(first);
    }

    /// Reads `bytes` (UTF-8, maybe ending inside a character).
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        // Stopped: nothing kept (a long text would only grow `pending`).
        if !self.alive {
            return;
        }
        self.pending.extend_from_slice(bytes);
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => {
                self.alive = false;
                return;
            }
        };
        // (Whole characters: the conversion loses nothing.)
        let text = String::from_utf8_lossy(&self.pending[..whole]).into_owned();
        self.pending.drain(..whole);
        for c in text.chars() {
            if !self.alive {
                return;
            }
            let g = Arc::clone(&self.g);
            let scanned: Vec<EItem> = self.sets[self.sets.len() - 1]
                .iter()
                .filter(|it| matches!(g.next(it), Some(Sym::Chars(cs)) if cs.contains(c)))
                .map(|it| EItem {
                    dot: it.dot + 1,
                    ..*it
                })
                .collect();
            self.close(scanned);
        }
    }

    /// Completes a new set from the items `seed` (predictions, completions).
    fn close(&mut self, seed: Vec<EItem>) {
        let k = self.sets.len() as u32;
        let g = Arc::clone(&self.g);
        let mut seen: HashSet<EItem> = seed.iter().copied().collect();
        let (mut set, mut work, mut steps) = (Vec::new(), seed, 0);
        while let Some(it) = work.pop() {
            if steps > MAX_STEPS {
                break;
            }
            set.push(it);
            let mut add = |new: EItem, work: &mut Vec<EItem>| {
                if seen.insert(new) {
                    work.push(new);
                }
            };
            match g.next(&it) {
                Some(Sym::Rule(r)) => {
                    steps += g.by_lhs[*r].len();
                    for &prod in &g.by_lhs[*r] {
                        let origin = k;
                        add(
                            EItem {
                                prod,
                                dot: 0,
                                origin,
                            },
                            &mut work,
                        );
                    }
                    if g.nullable[*r] {
                        add(
                            EItem {
                                dot: it.dot + 1,
                                ..it
                            },
                            &mut work,
                        );
                    }
                }
                Some(Sym::Chars(_)) => {}
                // (An item complete where it began matched nothing: stepped over when
                // predicted.)
                None if it.origin == k => {}
                None => {
                    let lhs = g.bnf.prods[it.prod as usize].0;
                    let waiting = &self.sets[it.origin as usize];
                    steps += waiting.len();
                    for w in waiting.iter() {
                        if matches!(g.next(w), Some(Sym::Rule(r)) if *r == lhs) {
                            add(
                                EItem {
                                    dot: w.dot + 1,
                                    ..*w
                                },
                                &mut work,
                            );
                        }
                    }
                }
            }
        }
        self.items += set.len();
        self.steps += steps;
        self.alive &= !set.is_empty() && self.items <= MAX_ITEMS && self.steps <= MAX_STEPS;
        self.sets.push(set.into());
    }

    /// The rule being filled: the innermost that has read some of the text (`None` when
    /// the tracker has stopped); the start rule before any.
    pub(super) fn rule(&self) -> Option<String> {
        if !self.alive {
            return None;
        }
        let (k, set) = (self.sets.len() - 1, self.sets.last()?);
        let owner = |it: &EItem| self.g.bnf.owner[self.g.bnf.prods[it.prod as usize].0].clone();
        // Items that have read some text and still wait for more.
        let started = set
            .iter()
            .filter(|it| (it.origin as usize) < k && it.dot > 0 && self.g.next(it).is_some());
        let Some(latest) = started.clone().map(|it| it.origin).max() else {
            return Some(self.g.bnf.owner[self.g.bnf.start].clone());
        };
        let mut names: Vec<String> = started
            .filter(|it| it.origin == latest)
            .map(owner)
            .collect();
        names.sort();
        names.dedup();
        Some(names.join(" or "))
    }
}

impl Grammar {
    fn next(&self, it: &EItem) -> Option<&Sym> {
        self.bnf.prods[it.prod as usize].1.get(it.dot as usize)
    }
}
