//! The messages of a classroom's room (issue 48, `decoding-explorer classroom`): JSON text
//! frames over a WebSocket between the server and the presenter's page, and between the
//! server and each student's phone (`src/classroom/student.js` speaks the same shapes).
//! The server holds the room; the presenter's page holds the model and the text.

use super::class_round::Score;
use serde::{Deserialize, Serialize};

/// A join code's alphabet: no look-alikes (no I, O, 0 or 1).
pub const CODE_ALPHABET: &str = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
/// A join code's length: 32⁸ ≈ 10¹² codes.
pub const CODE_LEN: usize = 8;

/// A join code as typed (any case, dashes and spaces ignored), or why it is not one.
pub fn check_code(text: &str) -> Result<String, String> {
    let code: String = text
        .chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if code.chars().count() == CODE_LEN && code.chars().all(|c| CODE_ALPHABET.contains(c)) {
        Ok(code)
    } else {
        Err(format!("{text:?}{}", not_a_code()))
    }
}

/// What follows the text quoted in [`check_code`]'s error.
fn not_a_code() -> String {
    format!(" is not a room's code ({CODE_LEN} of {CODE_ALPHABET})")
}

/// The text, as quoted, that [`check_code`]'s error `message` refused (the page says the
/// error in its language: `room-err-code`); `None` for another message.
pub fn refused_code(message: &str) -> Option<&str> {
    message
        .strip_suffix(&not_a_code())
        .filter(|q| q.starts_with('"'))
}

/// A student's frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromStudent {
    /// Join (or rejoin) a room: `student` is the phone's own random id, kept across
    /// reconnects, so that a guess survives a dropped connection.
    Join { code: String, student: String },
    /// The guess of this round (one per student per round).
    Guess { text: String },
}

/// What a student sees of the round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundView {
    pub round: u32,
    /// The text so far.
    pub context: String,
    /// The model's most likely next tokens, in alphabetical order (a choice for those who
    /// would rather pick than type).
    pub choices: Vec<String>,
    /// Guesses are taken.
    pub open: bool,
    /// This student's guess this round, if any.
    pub guess: Option<String>,
}

/// One student's result at the reveal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudentResult {
    pub guess: String,
    /// The token the guess stands for, as the model's piece (`None`: it adds no token).
    pub piece: Option<String>,
    /// The model's probability of it, and its rank (1: the model's most likely).
    pub p: Option<f64>,
    pub rank: Option<usize>,
    /// The share of the class that guessed the same token.
    pub share: Option<f64>,
    /// The model's most likely token.
    pub model_top: String,
}

/// The server's frame to a student.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToStudent {
    Round(RoundView),
    Accepted {
        guess: String,
    },
    Result(StudentResult),
    /// The token the model drew.
    Drawn {
        piece: String,
    },
    Refused {
        message: String,
    },
    Closed {
        reason: String,
    },
}

/// One guessed token's numbers, as the presenter's page revealed them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenNumbers {
    pub token: u32,
    pub p: f64,
    pub rank: usize,
    pub share: f64,
}

/// The presenter's frame (the connection proved the presenter's secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromPresenter {
    /// A new round at the text so far (the guesses of the last one go).
    Open {
        context: String,
        choices: Vec<String>,
    },
    /// Close the guesses and send the tally.
    Reveal,
    /// Each guessed token's numbers, and the model's most likely token: each student gets
    /// their own result.
    Results {
        tokens: Vec<TokenNumbers>,
        model_top: String,
    },
    /// The model's token, and the score with its round (the room keeps it for a presenter
    /// who reloads).
    Drawn { piece: String, score: Score },
    /// Close the room.
    Close,
}

/// The server's frame to the presenter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPresenter {
    /// The room: its join code, the address students open, the address as a QR code (SVG),
    /// the round, and who is in.
    Room {
        code: String,
        join: String,
        qr_svg: String,
        round: u32,
        /// The round's text so far (a reloaded page opens no new round at the same text).
        context: String,
        /// The score of the rounds drawn.
        score: Score,
        /// The vocabulary the server reads guesses with (the page's model must have the
        /// same).
        vocab: usize,
        open: bool,
        students: usize,
        guessed: usize,
    },
    /// Live: who is in, and how many guessed this round.
    Count {
        students: usize,
        guessed: usize,
    },
    /// The round's guesses by token (each student's first token after the text), and the
    /// guesses that add no token.
    Tally {
        round: u32,
        counts: Vec<(u32, u32)>,
        dropped: Vec<String>,
    },
    Refused {
        message: String,
    },
}

/// What the presenter's page learns when it creates a room (`POST /api/rooms`): the code
/// and the secret that proves it is the presenter (kept in the browser, never in the link).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoomKeys {
    pub code: String,
    pub key: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_reads_as_typed_and_nonsense_is_refused() {
        assert_eq!(check_code("abcd-efgh").unwrap(), "ABCDEFGH");
        assert_eq!(check_code(" K7QM 2XYZ ").unwrap(), "K7QM2XYZ");
        for bad in [
            "",
            "ABCDEFG",
            "ABCDEFGHJ",
            "ABCDEFG0",
            "ABCDEFGI",
            "ÄBCDEFGH",
        ] {
            assert!(check_code(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn frames_read_as_the_student_page_writes_them() {
        let join: FromStudent =
            serde_json::from_str(r#"{"type":"join","code":"ABCDEFGH","student":"ab12"}"#).unwrap();
        assert_eq!(
            join,
            FromStudent::Join {
                code: "ABCDEFGH".into(),
                student: "ab12".into()
            }
        );
        // Unknown fields and types are refused, not ignored.
        for bad in [
            r#"{"type":"guess","text":"cat","extra":1}"#,
            r#"{"type":"reveal"}"#,
            r#"{"type":"guess","text":5}"#,
        ] {
            assert!(serde_json::from_str::<FromStudent>(bad).is_err(), "{bad}");
        }
        let r = serde_json::to_value(ToStudent::Accepted {
            guess: "cat".into(),
        })
        .unwrap();
        assert_eq!(r, serde_json::json!({"type": "accepted", "guess": "cat"}));
    }
}
