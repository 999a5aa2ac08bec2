//! The verifying half of a cycle, pure (no model runs here): each drafted token against the
//! target's distribution under the rule (`rejection` or `match`), the residual at the first
//! rejection; prompt lookup's n-gram draft; the statistics and the formula they are held to.

use super::*;

/// Verifies `drafted` (with their draft distributions `q`, None for a draft without one)
/// against the target's γ + 1 positions; `coins(i)` are the four draws of the i-th position's
/// step. Pure: no model runs here.
pub fn verify(
    rule: Rule,
    greedy: bool,
    drafted: &[u32],
    q: &[Option<Vec<f64>>],
    targets: &[Target],
    coins: impl Fn(usize) -> [f64; 4],
) -> Cycle {
    verify_with(rule, greedy, Residual::Correct, drafted, q, targets, coins)
}

/// [`verify`] with the residual drawn from at the first rejection (`Residual::FromP`: the
/// mistake the statistical test catches).
#[doc(hidden)]
pub fn verify_with(
    rule: Rule,
    greedy: bool,
    residual: Residual,
    drafted: &[u32],
    q: &[Option<Vec<f64>>],
    targets: &[Target],
    coins: impl Fn(usize) -> [f64; 4],
) -> Cycle {
    let mut checked = Vec::new();
    for (i, &x) in drafted.iter().enumerate() {
        let t = &targets[i];
        let px = t.p.get(x as usize).copied().unwrap_or(0.0);
        let (qx, overlap) = match q.get(i).and_then(Option::as_ref) {
            Some(q) => (
                q.get(x as usize).copied().unwrap_or(0.0),
                t.p.iter().zip(q).map(|(a, b)| a.min(*b)).sum(),
            ),
            None => (1.0, px),
        };
        let by_match = greedy || rule == Rule::Match;
        let (a, accepted) = if by_match {
            let ok = x == t.token;
            (ok as u8 as f64, ok)
        } else {
            let a = if qx > 0.0 { (px / qx).min(1.0) } else { 0.0 };
            (a, coins(i)[2] < a)
        };
        checked.push(Checked {
            token: x,
            p: px,
            q: qx,
            accept_probability: a,
            overlap,
            accepted,
            forbidden: false,
        });
        if !accepted {
            let (next, next_kind) = if by_match {
                (t.token, NextKind::Target)
            } else {
                let r = match residual {
                    Residual::FromP => t.p.clone(),
                    Residual::Correct => residual_of(&t.p, q.get(i).and_then(Option::as_ref), x),
                };
                (
                    crate::decode::sampling::sample_from(&r, coins(i)[3]),
                    NextKind::Resampled,
                )
            };
            return Cycle {
                checked,
                drafted: drafted.to_vec(),
                accepted: i,
                next,
                next_kind,
            };
        }
    }
    let g = drafted.len();
    Cycle {
        checked,
        drafted: drafted.to_vec(),
        accepted: g,
        next: targets[g].token,
        next_kind: NextKind::Bonus,
    }
}

/// norm(max(0, p − q)); q one-hot on `x` when the draft has no distribution. When the sum is
/// 0 (p ≤ q everywhere, i.e. p = q, where a rejection cannot happen) p itself.
fn residual_of(p: &[f64], q: Option<&Vec<f64>>, x: u32) -> Vec<f64> {
    let mut r: Vec<f64> = match q {
        Some(q) => p.iter().zip(q).map(|(a, b)| (a - b).max(0.0)).collect(),
        None => p
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                if i == x as usize {
                    (a - 1.0).max(0.0)
                } else {
                    a
                }
            })
            .collect(),
    };
    let sum: f64 = r.iter().sum();
    if sum <= 0.0 {
        return p.to_vec();
    }
    r.iter_mut().for_each(|v| *v /= sum);
    r
}

/// Prompt lookup: the most recent earlier occurrence of the context's last `n` tokens, and up
/// to `gamma` tokens that followed it (Hugging Face's `PromptLookupCandidateGenerator`
/// tries n-gram sizes from the largest down; this uses the one size asked for).
pub fn ngram_lookup(context: &[u32], n: usize, gamma: usize) -> Vec<u32> {
    if context.len() <= n {
        return Vec::new();
    }
    let tail = &context[context.len() - n..];
    for start in (0..context.len() - n).rev() {
        if &context[start..start + n] == tail {
            let from = start + n;
            return context[from..(from + gamma).min(context.len())].to_vec();
        }
    }
    Vec::new()
}

/// Totals of a speculative run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SpecStats {
    pub cycles: usize,
    /// target forward passes (one per cycle, plus the prompt's prefill)
    pub target_calls: usize,
    pub drafted: usize,
    pub accepted: usize,
    pub emitted: usize,
}

impl SpecStats {
    /// accepted / drafted
    pub fn acceptance_rate(&self) -> f64 {
        if self.drafted == 0 {
            0.0
        } else {
            self.accepted as f64 / self.drafted as f64
        }
    }

    /// tokens emitted per verification pass
    pub fn tokens_per_cycle(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.emitted as f64 / self.cycles as f64
        }
    }
}

/// (1 − α^(γ+1)) / (1 − α): the expected tokens a cycle when each draft is accepted with
/// probability α independently (Leviathan et al. 2023, eq. 1).
pub fn expected_tokens_per_cycle(alpha: f64, gamma: usize) -> f64 {
    if (1.0 - alpha).abs() < 1e-12 {
        return (gamma + 1) as f64;
    }
    (1.0 - alpha.powi(gamma as i32 + 1)) / (1.0 - alpha)
}
