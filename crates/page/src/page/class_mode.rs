//! The class round as the page walks it (issue 48, one screen or a room): the class
//! guesses while the next token is hidden; Reveal turns the guesses into tokens (the
//! worker's tokenizer, or the room's server) and draws them against the model's
//! distribution at the position; Draw steps the model one token, which scores the round and
//! opens the next. Plain data, so that each step is tested natively; the panel
//! (`app/src/ui/class.rs`) only carries it out.

use super::class_round::{reveal, Guess, Reveal, Score};
use std::fmt;

/// How many of the model's most likely tokens the reveal's axis always shows, guessed or
/// not: where the class put nothing is part of the lesson.
pub const MODEL_TOP: usize = 5;

/// Why a reveal could not be drawn. Its `Display` is the English the panel shows (and the
/// error the round returns); the panel says it in the page's language by its [`id`](Self::id)
/// (`locales/*/class.ftl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundError {
    /// The text moved between the guesses' asking and their tokens' arriving.
    TextMoved,
    NotFinite,
    /// No guess adds a token.
    NoToken,
    OutsideVocab,
}

impl RoundError {
    pub const ALL: [RoundError; 4] = [
        RoundError::TextMoved,
        RoundError::NotFinite,
        RoundError::NoToken,
        RoundError::OutsideVocab,
    ];

    /// Its message's id in the page's messages.
    pub fn id(self) -> &'static str {
        match self {
            RoundError::TextMoved => "class-err-text-moved",
            RoundError::NotFinite => "class-err-not-finite",
            RoundError::NoToken => "class-err-no-token",
            RoundError::OutsideVocab => "class-err-outside-vocab",
        }
    }

    /// The error whose English is `text`, if one is.
    pub fn from_english(text: &str) -> Option<RoundError> {
        RoundError::ALL.into_iter().find(|e| e.english() == text)
    }

    pub fn english(self) -> &'static str {
        match self {
            RoundError::TextMoved => "the text moved on before the guesses were read: reveal again",
            RoundError::NotFinite => "the model's logits are not finite",
            RoundError::NoToken => "no guess stands for a token: nothing to reveal",
            RoundError::OutsideVocab => "a guess's token is outside the model's vocabulary",
        }
    }
}

impl fmt::Display for RoundError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.english())
    }
}

/// A round revealed: its numbers and the tokens the chart puts on its axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Revealed {
    /// The generation step it is the next token of (the tokens generated before it).
    pub step: usize,
    pub reveal: Reveal,
    /// The guesses that add no token (blank after trimming, or nothing the tokenizer
    /// keeps), shown apart.
    pub dropped: Vec<String>,
    /// The guesses as typed, with the token each stands for (a room sends only tokens).
    pub typed: Vec<(u32, String)>,
    /// The model's most likely token.
    pub model_top: u32,
    /// The chart's tokens: the guessed ones and the model's [`MODEL_TOP`], by the model's
    /// probability, each with (class share, model probability).
    pub axis: Vec<(u32, f64, f64)>,
    /// The token the model drew, once drawn.
    pub drawn: Option<u32>,
}

/// Where the round is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Phase {
    /// The class guesses; the next token is hidden.
    #[default]
    Guessing,
    /// The guesses went to be turned into tokens, at this step.
    Tokenizing { guesses: Vec<Guess>, step: usize },
    /// The reveal is drawn; the model's own token is not.
    Revealed(Revealed),
    /// The model's token was asked for (a step of one token).
    Drawing(Revealed),
}

/// A class's rounds: the one open, the score so far, the last one drawn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClassMode {
    pub phase: Phase,
    pub score: Score,
    /// The last round, with the token the model drew.
    pub last: Option<Revealed>,
}

/// The model's distribution at T = 1 from its logits (the softmax, in f64, from the
/// largest): the reveal measures the class against the model, not against a knob's cut.
pub fn softmax(logits: &[f32]) -> Option<Vec<f64>> {
    if logits.is_empty() || logits.iter().any(|l| !l.is_finite()) {
        return None;
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let e: Vec<f64> = logits.iter().map(|&l| (l as f64 - max).exp()).collect();
    let z: f64 = e.iter().sum();
    Some(e.into_iter().map(|x| x / z).collect())
}

impl ClassMode {
    /// The presenter asks for the reveal of `guesses` at `step`: they go to be tokenized
    /// (the texts returned, in order). `None` when there is nothing to reveal or a reveal
    /// is already under way.
    pub fn ask(&mut self, guesses: Vec<Guess>, step: usize) -> Option<Vec<String>> {
        if guesses.is_empty() || !matches!(self.phase, Phase::Guessing) {
            return None;
        }
        let texts = guesses.iter().map(|g| g.text.clone()).collect();
        self.phase = Phase::Tokenizing { guesses, step };
        Some(texts)
    }

    /// The presenter asks a room for its tally at `step` (the room's server reads the
    /// guesses' tokens): false when a reveal is already under way.
    pub fn ask_room(&mut self, step: usize) -> bool {
        if !matches!(self.phase, Phase::Guessing) {
            return false;
        }
        self.phase = Phase::Tokenizing {
            guesses: Vec::new(),
            step,
        };
        true
    }

    /// The tokens of the guesses asked for, in order, and the logits at `step`: the
    /// reveal. An error (the phase goes back to guessing) when they do not fit.
    pub fn on_tokens(
        &mut self,
        tokens: &[Option<u32>],
        logits: &[f32],
        step: usize,
    ) -> Result<(), String> {
        let Phase::Tokenizing { guesses, step: at } = std::mem::take(&mut self.phase) else {
            return Ok(());
        };
        if at != step || tokens.len() != guesses.len() {
            return Err(RoundError::TextMoved.to_string());
        }
        let mut counts = Vec::new();
        let mut dropped = Vec::new();
        let mut typed = Vec::new();
        for (g, t) in guesses.iter().zip(tokens) {
            match t {
                Some(t) => {
                    counts.push((*t, g.count));
                    typed.push((*t, g.text.clone()));
                }
                None => dropped.push(g.text.clone()),
            }
        }
        self.on_counts(&counts, dropped, logits, step)?;
        if let Phase::Revealed(r) = &mut self.phase {
            r.typed = typed;
        }
        Ok(())
    }

    /// Counts by token (a room's tally, or the tokens of the typed guesses) against the
    /// logits at `step`: the reveal.
    pub fn on_counts(
        &mut self,
        counts: &[(u32, u32)],
        dropped: Vec<String>,
        logits: &[f32],
        step: usize,
    ) -> Result<(), String> {
        self.phase = Phase::Guessing;
        let p = softmax(logits).ok_or_else(|| RoundError::NotFinite.to_string())?;
        let reveal = reveal(counts, &p).ok_or_else(|| {
            if counts.is_empty() {
                RoundError::NoToken
            } else {
                RoundError::OutsideVocab
            }
            .to_string()
        })?;
        let mut order: Vec<u32> = (0..p.len() as u32).collect();
        let top = MODEL_TOP.min(order.len());
        order.select_nth_unstable_by(top - 1, |a, b| {
            p[*b as usize].total_cmp(&p[*a as usize]).then(a.cmp(b))
        });
        let mut axis: Vec<u32> = order[..top].to_vec();
        axis.extend(reveal.rows.iter().map(|r| r.token));
        axis.sort_by(|a, b| p[*b as usize].total_cmp(&p[*a as usize]).then(a.cmp(b)));
        axis.dedup();
        let share = |t: u32| {
            reveal
                .rows
                .iter()
                .find(|r| r.token == t)
                .map_or(0.0, |r| r.class)
        };
        let axis = axis
            .into_iter()
            .map(|t| (t, share(t), p[t as usize]))
            .collect::<Vec<_>>();
        self.phase = Phase::Revealed(Revealed {
            step,
            model_top: axis[0].0,
            reveal,
            dropped,
            typed: Vec::new(),
            axis,
            drawn: None,
        });
        Ok(())
    }

    /// The presenter draws the model's token: true when a step of one token is to be sent.
    pub fn draw(&mut self) -> bool {
        match std::mem::take(&mut self.phase) {
            Phase::Revealed(r) => {
                self.phase = Phase::Drawing(r);
                true
            }
            other => {
                self.phase = other;
                false
            }
        }
    }

    /// The transcript's tokens after a change: one more token after a reveal is the token
    /// drawn (by Draw, or a step taken another way): it scores the round and the next opens;
    /// any other move of the text (a rewind, a new prompt) drops the round open, the score
    /// kept.
    pub fn on_generated(&mut self, generated: &[u32]) {
        let at = match &self.phase {
            Phase::Guessing => return,
            Phase::Tokenizing { step, .. } => *step,
            Phase::Revealed(r) | Phase::Drawing(r) => r.step,
        };
        match std::mem::take(&mut self.phase) {
            Phase::Drawing(mut r) | Phase::Revealed(mut r) if generated.len() == at + 1 => {
                let drawn = generated[at];
                self.score.add(&r.reveal, r.model_top, drawn);
                r.drawn = Some(drawn);
                self.last = Some(r);
            }
            // The step added no token (the text had stopped): the reveal stays, to draw again.
            Phase::Drawing(r) if generated.len() == at => self.phase = Phase::Revealed(r),
            // Still at the round's step (the same text sent again): nothing moved.
            phase if generated.len() == at => self.phase = phase,
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "class_mode_tests.rs"]
mod tests;
