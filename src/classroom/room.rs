//! A room of the classroom as plain data: who is in, the round, each student's guess, and
//! every limit a room keeps (issue 48: at most [`MAX_STUDENTS`], one guess per student per
//! round, a guess at most 64 characters without control characters). The connections and
//! the tokenizer are the server's (`server.rs`); here nothing waits and nothing is sent.

use decoding_page::page::class_round::MAX_GUESS_CHARS;
use decoding_page::page::room::{RoundView, StudentResult, TokenNumbers};
use std::collections::HashMap;

/// The most students a room takes.
pub const MAX_STUDENTS: usize = 500;
/// The longest text so far a round may hold (characters), and the most choices.
pub const MAX_CONTEXT_CHARS: usize = 8_000;
pub const MAX_CHOICES: usize = 8;
/// A student id: what the phone made (16 random bytes as hex), bounded.
const MAX_ID_CHARS: usize = 64;

/// Why a frame was refused: a guess's refusal is said and the connection stays open; a
/// join's closes the connection with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the room is full ({MAX_STUDENTS} students)")]
    Full,
    #[error("a student id is 1 to {MAX_ID_CHARS} letters, digits or dashes")]
    BadId,
    #[error("a guess is 1 to {MAX_GUESS_CHARS} characters, without control characters")]
    BadGuess,
    #[error("no round is open: wait for the presenter")]
    Closed,
    #[error("you already guessed this round ({0:?})")]
    AlreadyGuessed(String),
    #[error(
        "the text so far is over {MAX_CONTEXT_CHARS} characters, or over {MAX_CHOICES} choices"
    )]
    TooLong,
}

/// One student: their guess this round (the text, and its token once read).
#[derive(Debug, Clone, Default, PartialEq)]
struct Student {
    guess: Option<(String, Option<u32>)>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Room {
    pub round: u32,
    pub open: bool,
    pub context: String,
    pub choices: Vec<String>,
    students: HashMap<String, Student>,
}

/// A guess as a student may send it.
pub fn check_guess(text: &str) -> Result<&str, Refusal> {
    let t = text.trim();
    let n = t.chars().count();
    if n == 0 || n > MAX_GUESS_CHARS || t.chars().any(char::is_control) {
        return Err(Refusal::BadGuess);
    }
    Ok(t)
}

impl Room {
    /// A student joins, or rejoins with their guess kept.
    pub fn join(&mut self, id: &str) -> Result<RoundView, Refusal> {
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '-';
        if id.is_empty() || id.len() > MAX_ID_CHARS || !id.chars().all(ok) {
            return Err(Refusal::BadId);
        }
        if !self.students.contains_key(id) {
            if self.students.len() >= MAX_STUDENTS {
                return Err(Refusal::Full);
            }
            self.students.insert(id.to_string(), Student::default());
        }
        Ok(self.view(id))
    }

    /// The round as `id` sees it.
    pub fn view(&self, id: &str) -> RoundView {
        RoundView {
            round: self.round,
            context: self.context.clone(),
            choices: self.choices.clone(),
            open: self.open,
            guess: self
                .students
                .get(id)
                .and_then(|s| s.guess.as_ref().map(|g| g.0.clone())),
        }
    }

    /// Whether `id` may guess now (checked before the guess is tokenized, outside the lock).
    pub fn may_guess(&self, id: &str) -> Result<(), Refusal> {
        let s = self.students.get(id).ok_or(Refusal::BadId)?;
        if !self.open {
            return Err(Refusal::Closed);
        }
        match &s.guess {
            Some(g) => Err(Refusal::AlreadyGuessed(g.0.clone())),
            None => Ok(()),
        }
    }

    /// Records `id`'s guess of round `round` and its token.
    pub fn guess(
        &mut self,
        id: &str,
        round: u32,
        text: &str,
        token: Option<u32>,
    ) -> Result<(), Refusal> {
        let text = check_guess(text)?;
        if round != self.round {
            return Err(Refusal::Closed);
        }
        self.may_guess(id)?;
        if let Some(s) = self.students.get_mut(id) {
            s.guess = Some((text.to_string(), token));
        }
        Ok(())
    }

    /// A new round at `context`: every guess goes.
    pub fn open(&mut self, context: String, mut choices: Vec<String>) -> Result<(), Refusal> {
        if context.chars().count() > MAX_CONTEXT_CHARS
            || choices.len() > MAX_CHOICES
            || choices.iter().any(|c| check_guess(c).is_err())
        {
            return Err(Refusal::TooLong);
        }
        choices.sort();
        self.round += 1;
        self.open = true;
        self.context = context;
        self.choices = choices;
        for s in self.students.values_mut() {
            s.guess = None;
        }
        Ok(())
    }

    /// A student left: without a guess they are out of the room.
    pub fn leave(&mut self, id: &str) {
        if self.students.get(id).is_some_and(|s| s.guess.is_none()) {
            self.students.remove(id);
        }
    }

    /// Keeps only the students `keep` says are still here.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.students.retain(|id, _| keep(id));
    }

    /// Students in, and how many guessed this round.
    pub fn counts(&self) -> (usize, usize) {
        let guessed = self.students.values().filter(|s| s.guess.is_some()).count();
        (self.students.len(), guessed)
    }

    /// Guessing closes; the guesses by token (by count, then token), and the guesses that
    /// add no token (sorted).
    pub fn reveal(&mut self) -> (Vec<(u32, u32)>, Vec<String>) {
        self.open = false;
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let mut dropped = Vec::new();
        for s in self.students.values() {
            match &s.guess {
                Some((_, Some(t))) => *counts.entry(*t).or_default() += 1,
                Some((text, None)) => dropped.push(text.clone()),
                None => {}
            }
        }
        let mut counts: Vec<(u32, u32)> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        dropped.sort();
        (counts, dropped)
    }

    /// Each student who guessed, with their own result.
    pub fn results(
        &self,
        tokens: &[TokenNumbers],
        model_top: &str,
        piece: impl Fn(u32) -> String,
    ) -> Vec<(String, StudentResult)> {
        self.students
            .iter()
            .filter_map(|(id, s)| {
                let (guess, token) = s.guess.clone()?;
                let n = token.and_then(|t| tokens.iter().find(|n| n.token == t));
                Some((
                    id.clone(),
                    StudentResult {
                        guess,
                        piece: token.map(&piece),
                        p: n.map(|n| n.p),
                        rank: n.map(|n| n.rank),
                        share: n.map(|n| n.share),
                        model_top: model_top.to_string(),
                    },
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_student_guesses_once_a_round_and_keeps_it_across_a_rejoin() {
        let mut r = Room::default();
        assert_eq!(r.join("a1").unwrap().round, 0);
        assert_eq!(r.may_guess("a1"), Err(Refusal::Closed));
        r.open("Once upon a".into(), vec!["time".into(), "day".into()])
            .unwrap();
        let v = r.join("a1").unwrap();
        assert_eq!(
            (v.round, v.open, v.choices.clone()),
            (1, true, vec!["day".into(), "time".into()])
        );
        r.guess("a1", 1, "  time ", Some(7)).unwrap();
        assert_eq!(
            r.guess("a1", 1, "day", Some(8)),
            Err(Refusal::AlreadyGuessed("time".into()))
        );
        // Rejoining (a new connection) keeps the guess.
        assert_eq!(r.join("a1").unwrap().guess.as_deref(), Some("time"));
        r.join("b2").unwrap();
        r.guess("b2", 1, "time", Some(7)).unwrap();
        r.join("c3").unwrap();
        r.guess("c3", 1, "!!", None).unwrap();
        r.join("d4").unwrap();
        assert_eq!(r.counts(), (4, 3));
        // A guess of a round past is refused.
        assert_eq!(r.guess("d4", 0, "x", Some(1)), Err(Refusal::Closed));
        let (counts, dropped) = r.reveal();
        assert_eq!(counts, [(7, 2)]);
        assert_eq!(dropped, ["!!"]);
        assert_eq!(r.may_guess("d4"), Err(Refusal::Closed));
        let numbers = [TokenNumbers {
            token: 7,
            p: 0.5,
            rank: 1,
            share: 1.0,
        }];
        let mut res = r.results(&numbers, "time", |t| format!("#{t}"));
        res.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(res.len(), 3);
        assert_eq!(
            (res[0].1.p, res[0].1.rank, res[0].1.piece.clone()),
            (Some(0.5), Some(1), Some("#7".into()))
        );
        assert_eq!((res[2].1.p, res[2].1.piece.clone()), (None, None));
        // The next round clears every guess.
        r.open("Once upon a time".into(), vec![]).unwrap();
        assert_eq!(r.counts(), (4, 0));
        assert!(r.may_guess("a1").is_ok());
        // One who leaves without a guess is out; with a guess, they stay for the reveal.
        r.guess("a1", 2, "dog", Some(3)).unwrap();
        r.leave("a1");
        r.leave("b2");
        assert_eq!(r.counts(), (3, 1));
        r.retain(|id| id != "a1");
        assert_eq!(r.counts(), (2, 0));
    }

    #[test]
    fn every_limit_is_kept_with_a_reason() {
        let mut r = Room::default();
        for i in 0..MAX_STUDENTS {
            r.join(&format!("s{i}")).unwrap();
        }
        assert_eq!(r.join("one-more"), Err(Refusal::Full));
        // Someone already in may rejoin.
        assert!(r.join("s7").is_ok());
        for bad in ["", "a b", "é", &"a".repeat(65)] {
            assert_eq!(Room::default().join(bad), Err(Refusal::BadId), "{bad:?}");
        }
        r.open("x".into(), vec![]).unwrap();
        for bad in ["", "   ", "a\u{0}b", "tab\there", &"é".repeat(65)] {
            assert_eq!(
                r.guess("s1", 1, bad, None),
                Err(Refusal::BadGuess),
                "{bad:?}"
            );
        }
        assert!(r.guess("s1", 1, &"é".repeat(64), None).is_ok());
        assert_eq!(
            r.open("y".repeat(MAX_CONTEXT_CHARS + 1), vec![]),
            Err(Refusal::TooLong)
        );
        assert_eq!(
            r.open("y".into(), vec!["a".into(); 9]),
            Err(Refusal::TooLong)
        );
        assert_eq!(r.open("y".into(), vec!["\n".into()]), Err(Refusal::TooLong));
        assert_eq!(r.round, 1);
    }
}
