//! Predict, then reveal: a round of the class guessing the next token, against the model's
//! distribution (PRODUCT.md 14, issue 48). The presenter types the guesses called out in the
//! room, or a tally (`cat ×5, dog ×3`); each guess counts for its first token under the
//! loaded model's tokenizer; the reveal puts the class's distribution c beside the model's p
//! on the same tokens:
//!
//! - each guessed token's share of the class, its model probability and its rank (1 = the
//!   model's most likely; tokens as likely share the better rank);
//! - the class's cross-entropy under the model, H(c, p) = −Σ c_i ln p_i, against the model's
//!   own entropy H(p) = −Σ p_i ln p_i: what the model would pay, per token, to encode the
//!   class's guesses, against what it pays for its own;
//! - KL(c ‖ p) = H(c, p) − H(c) = Σ c_i ln(c_i / p_i) ≥ 0, zero only where the class guessed
//!   in the model's proportions (lesson 10's L6: cross-entropy = H + D_KL). All in nats, as
//!   the page's entropy.
//!
//! p is the model's softmax at T = 1 (the chain's `input` distribution), so that no guess has
//! p = 0 because a knob cut it.

use decoding_engine::tokenizer::Tokenizer;
use std::fmt;

/// The longest guess accepted, in characters.
pub const MAX_GUESS_CHARS: usize = 64;
/// The most a tally may count for one guess, and for a round.
pub const MAX_COUNT: u32 = 10_000;

/// One line of the tally: the guess as typed and how many called it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guess {
    pub text: String,
    pub count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TallyError {
    /// A guess longer than [`MAX_GUESS_CHARS`], or holding a control character.
    BadGuess(String),
    /// A count that is not a whole number from 1 to [`MAX_COUNT`].
    BadCount(String),
    /// More than [`MAX_COUNT`] guesses in all.
    TooMany(u64),
}

impl fmt::Display for TallyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TallyError::BadGuess(g) => write!(
                f,
                "\"{g}\": a guess is at most {MAX_GUESS_CHARS} characters, without control characters"
            ),
            TallyError::BadCount(c) => {
                write!(f, "\"{c}\": a count is a whole number from 1 to {MAX_COUNT}")
            }
            TallyError::TooMany(n) => write!(f, "{n} guesses: a round takes at most {MAX_COUNT}"),
        }
    }
}

/// Reads a tally: guesses separated by commas or new lines, each maybe followed by a count
/// (`cat ×5`, `cat x5`, `cat *5`); the same guess twice adds up. Empty entries are skipped.
pub fn parse_tally(text: &str) -> Result<Vec<Guess>, TallyError> {
    let mut out: Vec<Guess> = Vec::new();
    let mut total = 0u64;
    for entry in text.split([',', '\n']) {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let (guess, count) = split_count(entry)?;
        if guess.is_empty()
            || guess.chars().count() > MAX_GUESS_CHARS
            || guess.chars().any(char::is_control)
        {
            return Err(TallyError::BadGuess(guess.to_string()));
        }
        total += u64::from(count);
        if total > u64::from(MAX_COUNT) {
            return Err(TallyError::TooMany(total));
        }
        match out.iter_mut().find(|g| g.text == guess) {
            Some(g) => g.count += count,
            None => out.push(Guess {
                text: guess.to_string(),
                count,
            }),
        }
    }
    Ok(out)
}

/// `cat ×5` → ("cat", 5); `cat` → ("cat", 1). The marker is `×` or `*`, or `x` standing
/// apart from the guess (`fox x2`, while `box` and `ax5` are guesses).
fn split_count(entry: &str) -> Result<(&str, u32), TallyError> {
    let Some(at) = entry.rfind(['×', 'x', 'X', '*']) else {
        return Ok((entry, 1));
    };
    let marker = &entry[at..at + entry[at..].chars().next().map_or(1, char::len_utf8)];
    let (guess, digits) = (entry[..at].trim_end(), entry[at + marker.len()..].trim());
    let apart = matches!(marker, "×" | "*") || entry[..at].ends_with(char::is_whitespace);
    if guess.is_empty() || !apart || !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return Ok((entry, 1));
    }
    match digits.parse::<u32>() {
        Ok(n) if (1..=MAX_COUNT).contains(&n) => Ok((guess, n)),
        _ => Err(TallyError::BadCount(digits.to_string())),
    }
}

/// The token a guess stands for after `context` (the text so far): the first token of the
/// guess where the model's tokenizer splits the context followed by it, with a space between
/// when the guess starts a word and the context ends in none, so that `cat` after `the` is
/// ` cat`, as a model writes a next word (punctuation is taken as typed: `,`). `None` when
/// the guess adds no token.
pub fn first_token(tok: &Tokenizer, context: &str, guess: &str) -> Option<u32> {
    first_token_after(tok, context, &tok.encode(context, false).ok()?, guess)
}

/// [`first_token`] with the context's tokens already at hand (`before`, the context
/// encoded without BOS): a room reads hundreds of guesses after the same text.
pub fn first_token_after(
    tok: &Tokenizer,
    context: &str,
    before: &[u32],
    guess: &str,
) -> Option<u32> {
    let guess = guess.trim();
    let word = guess.starts_with(char::is_alphanumeric);
    let space = word && !context.is_empty() && !context.ends_with(char::is_whitespace);
    let after = tok
        .encode(
            &format!("{context}{}{guess}", if space { " " } else { "" }),
            false,
        )
        .ok()?;
    let common = before
        .iter()
        .zip(&after)
        .take_while(|(a, b)| a == b)
        .count();
    after.get(common).copied()
}

/// One guessed token at the reveal.
#[derive(Debug, Clone, PartialEq)]
pub struct RevealRow {
    pub token: u32,
    pub count: u32,
    /// The class's share, c.
    pub class: f64,
    /// The model's probability, p.
    pub model: f64,
    /// 1 for the model's most likely token.
    pub rank: usize,
}

/// The reveal's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Reveal {
    /// By count, then by the model's probability.
    pub rows: Vec<RevealRow>,
    pub total: u32,
    pub cross_entropy: f64,
    pub model_entropy: f64,
    pub class_entropy: f64,
    pub kl: f64,
}

/// The reveal of `counts` (token, how many guessed it) against the model's `p` (a
/// distribution over the vocabulary). `None` with no guesses, a token outside `p`, or a `p`
/// that is not a distribution.
pub fn reveal(counts: &[(u32, u32)], p: &[f64]) -> Option<Reveal> {
    let sum: f64 = p.iter().sum();
    let is_distribution = p.iter().all(|x| x.is_finite() && *x >= 0.0) && (sum - 1.0).abs() < 1e-6;
    let total: u32 = counts.iter().map(|c| c.1).sum();
    if total == 0 || !is_distribution {
        return None;
    }
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for &(token, count) in counts.iter().filter(|c| c.1 > 0) {
        p.get(token as usize)?;
        match merged.iter_mut().find(|m| m.0 == token) {
            Some(m) => m.1 += count,
            None => merged.push((token, count)),
        }
    }
    let mut rows: Vec<RevealRow> = merged
        .into_iter()
        .map(|(token, count)| {
            let model = p[token as usize];
            RevealRow {
                token,
                count,
                class: f64::from(count) / f64::from(total),
                model,
                rank: 1 + p.iter().filter(|&&q| q > model).count(),
            }
        })
        .collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(b.model.total_cmp(&a.model)));
    let plogp = |x: f64| if x > 0.0 { x * x.ln() } else { 0.0 };
    // (0 − Σ, not −Σ: one guess alone has H(c) = 0, not −0.)
    let cross_entropy = 0.0 - rows.iter().map(|r| r.class * r.model.ln()).sum::<f64>();
    let class_entropy = 0.0 - rows.iter().map(|r| plogp(r.class)).sum::<f64>();
    Some(Reveal {
        total,
        cross_entropy,
        model_entropy: 0.0 - p.iter().map(|&x| plogp(x)).sum::<f64>(),
        class_entropy,
        kl: cross_entropy - class_entropy,
        rows,
    })
}

/// The running score over the rounds revealed: how often the class's most-guessed token, and
/// the model's most likely one, was the token drawn, and how often the class was right where
/// the model's top-1 was not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Score {
    pub rounds: u32,
    pub class_right: u32,
    pub model_right: u32,
    pub class_beat_model: u32,
}

impl Score {
    /// Adds a round: its reveal, the model's most likely token, and the token drawn. The
    /// class's pick is its most-guessed token (ties: any of them counts as right).
    pub fn add(&mut self, reveal: &Reveal, model_top: u32, drawn: u32) {
        let most = reveal.rows.iter().map(|r| r.count).max().unwrap_or(0);
        let class = reveal
            .rows
            .iter()
            .any(|r| r.count == most && r.token == drawn);
        let model = model_top == drawn;
        self.rounds += 1;
        self.class_right += u32::from(class);
        self.model_right += u32::from(model);
        self.class_beat_model += u32::from(class && !model);
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, c, m, b) = (
            self.rounds,
            self.class_right,
            self.model_right,
            self.class_beat_model,
        );
        write!(
            f,
            "the class's top guess was the token on {c} of {n}, the model's top-1 on {m} of {n}; \
             the class beat the model's top-1 on {b} of {n}"
        )
    }
}

#[cfg(test)]
#[path = "class_round_tests.rs"]
mod tests;
