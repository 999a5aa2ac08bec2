//! A generation under a constraint (`decode::constraint`): the matcher follows the generated
//! tokens (rewinds and resets replay them), its mask reaches the chain as
//! `History::allowed`, and it says when the text is complete or cannot go on.

#[cfg(feature = "constraint")]
use super::constraint::ConstraintVocab;
use super::constraint::{Allowed, Constraint, ConstraintError};
use super::generation::{Generation, GenerationError, StopReason};
#[cfg(feature = "constraint")]
use super::sampling::stages::constraint::spec;
use super::sampling::stages::constraint::text;
use super::sampling::Settings;

impl Generation {
    /// Follows `settings`' constraint from here: compiled for `vocab` when the settings'
    /// constraint differs from the one held (and the generated tokens replayed, refused when
    /// the text so far is outside it), dropped when the knob is off.
    #[cfg(feature = "constraint")]
    pub fn sync_constraint(
        &mut self,
        settings: &Settings,
        vocab: &ConstraintVocab,
    ) -> Result<(), GenerationError> {
        let wanted = spec(settings);
        if wanted.as_ref() == self.constraint.as_ref().map(Constraint::spec) {
            return Ok(());
        }
        // A constraint that fails to compile leaves none (never the old one's mask).
        self.constraint = None;
        self.constraint = match wanted {
            None => None,
            Some(s) => {
                let mut c = s.compile(vocab)?;
                c.replay(&self.generated_ids())?;
                Some(c)
            }
        };
        Ok(())
    }

    /// The constraint held, if any.
    pub fn constraint(&self) -> Option<&Constraint> {
        self.constraint.as_ref()
    }

    /// The constraint's mask at the current position, when `settings` set one (it must have
    /// been compiled: [`Generation::sync_constraint`]).
    pub fn constraint_allowed(
        &mut self,
        settings: &Settings,
    ) -> Result<Option<Allowed>, GenerationError> {
        // The knob's text against the held spec (no parse: a schema may be 64 KB).
        match (&mut self.constraint, text(settings)) {
            (Some(c), Some(t)) if c.spec().is_text(t) => Ok(Some(c.allowed()?)),
            // Never the old constraint's mask for the new one.
            (Some(_), Some(_)) => Err(ConstraintError::Stale.into()),
            _ => Ok(None),
        }
    }

    /// The constraint's reason to stop at the current position, from its last mask.
    pub(super) fn constraint_stop(&self, settings: &Settings) -> Option<StopReason> {
        let wanted = text(settings)?;
        let c = self
            .constraint
            .as_ref()
            .filter(|c| c.spec().is_text(wanted))?;
        let a = c.peek()?;
        let ended = self
            .generated_ids()
            .last()
            .is_some_and(|t| self.end_tokens.contains(t));
        if ended || a.only_end(&self.end_tokens) {
            Some(StopReason::ConstraintComplete)
        } else if a.count == 0 {
            Some(StopReason::ConstraintUnsatisfiable)
        } else {
            None
        }
    }

    /// The constraint as it will be after a rewind: the generated tokens but the last
    /// replayed (before the rewind changes anything).
    pub(super) fn constraint_before_rewind(&mut self) -> Result<(), GenerationError> {
        let mut ids = self.generated_ids();
        ids.pop();
        if let Some(c) = &mut self.constraint {
            c.replay(&ids)?;
        }
        Ok(())
    }

    /// Replays the generated tokens into the constraint (after a reset).
    pub(super) fn replay_constraint(&mut self) -> Result<(), GenerationError> {
        let ids = self.generated_ids();
        if let Some(c) = &mut self.constraint {
            c.replay(&ids)?;
        }
        Ok(())
    }
}
