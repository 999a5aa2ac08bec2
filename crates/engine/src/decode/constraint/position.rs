//! Where the text is in its constraint, in a few words for the page: for a JSON Schema, the
//! field being filled (a path read from the text so far, `$.pet`); for a GBNF grammar, the
//! rule (`rules.rs`); for any constraint, the
//! characters that may come next (the first bytes of the allowed tokens, as a class).

use super::{ConstraintKind, ConstraintVocab};

/// Where the text is: the constraint's kind, the text so far, and for a GBNF grammar the
/// rule being filled (`rules.rs`).
pub(super) struct Here<'a> {
    pub kind: ConstraintKind,
    pub text: &'a [u8],
    pub rule: Option<&'a str>,
}

/// The position's words.
pub(super) fn describe(here: &Here, words: &[u32], vocab: &ConstraintVocab, end: bool) -> String {
    let next = next_chars(words, vocab, end);
    match (here.kind, here.rule) {
        (ConstraintKind::JsonSchema, _) => format!("{} · next {next}", json_path(here.text)),
        (_, Some(rule)) => format!("{rule} · next {next}"),
        _ => format!("next {next}"),
    }
}

/// The first bytes the allowed tokens start with, as a character class (`[0-9]`, `"-"`), and
/// "end" where the text may end.
fn next_chars(words: &[u32], vocab: &ConstraintVocab, end: bool) -> String {
    let mut first = [false; 256];
    for (w, &bits) in words.iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            let id = w * 32 + b.trailing_zeros() as usize;
            b &= b - 1;
            if let Some(c) = vocab.first_byte(id) {
                first[c as usize] = true;
            }
        }
    }
    let mut parts: Vec<String> = Vec::new();
    let mut c = 0;
    while c < 256 {
        if !first[c] {
            c += 1;
            continue;
        }
        let start = c;
        while c + 1 < 256 && first[c + 1] {
            c += 1;
        }
        parts.push(if c - start >= 2 {
            format!("{}-{}", show(start as u8), show(c as u8))
        } else {
            (start..=c).map(|x| show(x as u8)).collect()
        });
        c += 1;
    }
    let class = match parts.concat() {
        s if s.is_empty() => String::new(),
        s if s == "\"" => "'\"'".to_string(),
        s if s.chars().count() == 1 => format!("\"{s}\""),
        s if s.chars().count() > 40 => format!("[{}…]", s.chars().take(40).collect::<String>()),
        s => format!("[{s}]"),
    };
    match (class.is_empty(), end) {
        (true, true) => "end".into(),
        (true, false) => "nothing".into(),
        (false, true) => format!("{class} or end"),
        (false, false) => class,
    }
}

fn show(b: u8) -> String {
    match b {
        // As the page shows a piece's space (`page/pieces.rs`).
        b' ' => "␣".into(),
        b'\n' => "\\n".into(),
        0x21..=0x7e => (b as char).to_string(),
        _ => format!("\\x{b:02X}"),
    }
}

/// The JSON path of the value being written at the end of `text` (a prefix of a JSON
/// document): `$` at the top, `$.name` inside an object's field (its key read, or being
/// read), `$.pets[1]` in an array.
pub(super) fn json_path(text: &[u8]) -> String {
    enum Frame {
        Object {
            key: Option<String>,
            after_colon: bool,
        },
        Array {
            index: usize,
        },
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut current = Vec::new();
    for &c in text {
        if in_string {
            if escaped {
                escaped = false;
                current.push(c);
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
                if let Some(Frame::Object {
                    key,
                    after_colon: false,
                }) = stack.last_mut()
                {
                    *key = Some(String::from_utf8_lossy(&current).into_owned());
                }
            } else {
                current.push(c);
            }
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                current.clear();
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                after_colon: false,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { after_colon, .. }) = stack.last_mut() {
                    *after_colon = true;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key, after_colon }) => {
                    *key = None;
                    *after_colon = false;
                }
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
    }
    let mut path = String::from("$");
    for f in &stack {
        match f {
            Frame::Object { key: Some(k), .. } => path.push_str(&format!(".{k}")),
            Frame::Object { key: None, .. } if in_string => {
                path.push_str(&format!(".{}", String::from_utf8_lossy(&current)))
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}
