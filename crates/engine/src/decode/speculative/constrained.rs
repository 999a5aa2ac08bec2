//! Speculative decoding under a constraint: the draft proposes unconstrained; the target's
//! distribution at each verified position is masked by the constraint as it stands after
//! the drafts before it, so a draft the constraint forbids has p = 0 and is refused
//! (`Checked::forbidden` says why), and the token drawn in its place is an allowed one.

// Without the matcher (`decode::constraint::off`) a constraint has no values: the code past
// one is unreachable there.
#![cfg_attr(
    not(feature = "constraint"),
    allow(unreachable_code, unused_mut, unused_variables)
)]

use super::{Cycle, SpecError, Speculator};
use crate::decode::constraint::{Allowed, Constraint};
use crate::decode::sampling::stages::constraint::spec;
use crate::decode::sampling::Settings;

impl Speculator {
    /// Speculates under `constraint` (from the prompt's end; None: none).
    pub fn constrain(&mut self, constraint: Option<Constraint>) {
        self.constraint = constraint;
    }
}

/// The settings without the constraint: the draft's chain.
pub(super) use crate::decode::sampling::stages::constraint::without as unconstrained;

/// The constraint's mask at each verified position: after the emitted tokens, then after
/// each draft in turn, up to and including the first position whose draft it forbids (or
/// the bonus position). None without a constraint.
pub(super) fn masks(
    settings: &Settings,
    constraint: Option<&Constraint>,
    drafted: &[u32],
) -> Result<Option<Vec<Allowed>>, SpecError> {
    let Some(c) = constraint.filter(|_| spec(settings).is_some()) else {
        return Ok(None);
    };
    let mut c = c.clone();
    let mut out = Vec::with_capacity(drafted.len() + 1);
    for i in 0..=drafted.len() {
        let a = c.allowed()?;
        let go_on = drafted.get(i).is_some_and(|&t| a.allows(t as usize));
        out.push(a);
        if !go_on {
            break;
        }
        c.advance(drafted[i])?;
    }
    Ok(Some(out))
}

/// Marks the drafts the constraint forbade and moves the constraint past the tokens the
/// cycle emits.
pub(super) fn follow(
    constraint: Option<&mut Constraint>,
    masks: Option<&[Allowed]>,
    cycle: &mut Cycle,
) -> Result<(), SpecError> {
    let (Some(c), Some(masks)) = (constraint, masks) else {
        return Ok(());
    };
    for (ch, m) in cycle.checked.iter_mut().zip(masks) {
        ch.forbidden = !m.allows(ch.token as usize);
    }
    for t in cycle.emitted() {
        c.advance(t)?;
    }
    Ok(())
}
