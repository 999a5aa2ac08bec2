//! Without the matcher (the feature `constraint` off: the page's UI thread, which applies the
//! masks the worker computed) no constraint can be compiled, so none exists: [`Constraint`]
//! is a type with no values, and the generation loop, beam search and speculative decoding,
//! which hold an `Option<Constraint>`, never have one.

use super::{Allowed, ConstraintError, ConstraintSpec};

/// A compiled constraint: none can exist in this build.
#[derive(Clone)]
pub enum Constraint {}

impl Constraint {
    pub fn spec(&self) -> &ConstraintSpec {
        match *self {}
    }

    pub fn peek(&self) -> Option<&Allowed> {
        match *self {}
    }

    pub fn allowed(&mut self) -> Result<Allowed, ConstraintError> {
        match *self {}
    }

    pub fn advance(&mut self, _token: u32) -> Result<(), ConstraintError> {
        match *self {}
    }

    pub fn replay(&mut self, _tokens: &[u32]) -> Result<(), ConstraintError> {
        match *self {}
    }
}
