//! Repetition loops (lesson 10, section 2: greedy "tends to degenerate loops").

/// A phrase of `period` tokens repeated `repeats` times in a row, from `start` (an index into
/// the ids given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    pub period: usize,
    pub repeats: usize,
    pub start: usize,
}

/// How far back a loop is looked for: a loop stays flagged while it is among the last
/// `LOOP_WINDOW` tokens, not only while the text still ends on it.
pub const LOOP_WINDOW: usize = 64;

/// The shortest phrase (≤ 16 tokens) repeated at least `min_repeats` times in a row anywhere
/// in the last `LOOP_WINDOW` tokens (a single token needs two repeats more); among those,
/// the longest run, then the most recent.
pub fn detect_loop(ids: &[u32], min_repeats: usize) -> Option<Loop> {
    let w0 = ids.len().saturating_sub(LOOP_WINDOW);
    let w = &ids[w0..];
    for p in 1..=16usize {
        let needed = if p == 1 { min_repeats + 2 } else { min_repeats };
        if w.len() < p * needed {
            break;
        }
        let mut best: Option<Loop> = None;
        for i in 0..=w.len() - p * needed {
            let phrase = &w[i..i + p];
            let mut repeats = 1;
            while i + (repeats + 1) * p <= w.len()
                && &w[i + repeats * p..i + (repeats + 1) * p] == phrase
            {
                repeats += 1;
            }
            if repeats >= needed && best.is_none_or(|b| repeats >= b.repeats) {
                best = Some(Loop {
                    period: p,
                    repeats,
                    start: w0 + i,
                });
            }
        }
        if best.is_some() {
            return best;
        }
    }
    None
}
