//! A caption being written: each sentence one Fluent message (`locales/<lang>/captions.ftl`)
//! with named arguments, its numbers drawn as the caption's figures ([`Part::Num`]) in the
//! place the translation puts them (a language orders a sentence its own way).
//!
//! A number argument goes into the message as a sentinel of private-use characters (its
//! index among the caption's numbers); the formatted text is split back into text and
//! numbers at the sentinels when the caption is done.

use super::Part;
use crate::i18n::{integer, number, Lang};

/// Around a number's index in a formatted message (Unicode's private use: no message, piece
/// or name of the page holds them).
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

pub(crate) use crate::i18n::tr;

/// A message's argument: a number of the caption (drawn as a figure, its key what the tests
/// read), a text (a token's piece, a model's name), or a piece of the caption written
/// already (fragments of it, [`Caption::fragment`], with their numbers).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Arg {
    /// The `{ $name }` it fills.
    name: &'static str,
    value: ArgValue,
}

#[derive(Debug, Clone, PartialEq)]
enum ArgValue {
    Num {
        key: &'static str,
        value: f64,
        shown: String,
    },
    Text(String),
    Written(String),
}

impl Arg {
    /// The same argument for another `{ $name }` (a message said for each of several
    /// numbers, each its own key).
    pub(crate) fn named(self, name: &'static str) -> Arg {
        Arg { name, ..self }
    }
    /// Fragments of this caption ([`Caption::fragment`]) put together, with their numbers.
    pub(crate) fn written(name: &'static str, fragments: String) -> Arg {
        Arg {
            name,
            value: ArgValue::Written(fragments),
        }
    }
}

/// A number as a language writes it, for an argument: `Fmt(lang).p("key", v)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fmt(pub Lang);

impl Fmt {
    /// A number shown as `shown`.
    pub(crate) fn n(self, key: &'static str, value: f64, shown: String) -> Arg {
        Arg {
            name: key,
            value: ArgValue::Num { key, value, shown },
        }
    }
    /// A number the tests read that the text does not show (no message places it).
    pub(crate) fn hidden(self, key: &'static str, value: f64) -> Arg {
        self.n(key, value, String::new())
    }
    /// A probability (or any 0–1 number) to 3 places.
    pub(crate) fn p(self, key: &'static str, v: f64) -> Arg {
        self.f(key, v, 3)
    }
    pub(crate) fn int(self, key: &'static str, v: u64) -> Arg {
        self.n(key, v as f64, integer(self.0, v))
    }
    /// A number with `places` decimals.
    pub(crate) fn f(self, key: &'static str, v: f64, places: usize) -> Arg {
        self.n(key, v, number(self.0, v, places))
    }
    /// Milliseconds with `places` decimals.
    pub(crate) fn ms(self, key: &'static str, v: f64, places: usize) -> Arg {
        self.n(key, v, format!("{} ms", number(self.0, v, places)))
    }
    /// A ratio, "3.2×".
    pub(crate) fn times(self, key: &'static str, v: f64) -> Arg {
        self.n(key, v, format!("{}×", number(self.0, v, 1)))
    }
    /// A rate in tokens a second, rounded.
    pub(crate) fn rate(self, key: &'static str, v: f64) -> Arg {
        self.n(key, v, self.tokens_per_s(v))
    }
    fn tokens_per_s(self, v: f64) -> String {
        let rate = integer(self.0, v.max(0.0).round() as u64);
        tr(self.0).fmt("caption-unit-rate", &[("rate", rate)])
    }
    /// A whole number of rounded tokens a second, bare (a range's ends).
    pub(crate) fn bare_rate(self, name: &'static str, v: f64) -> Arg {
        self.text(name, integer(self.0, v.max(0.0).round() as u64))
    }
    /// Bytes, every one: "55,040 bytes".
    pub(crate) fn bytes(self, key: &'static str, n: u64) -> Arg {
        let bytes = tr(self.0).fmt("caption-unit-bytes", &[("bytes", integer(self.0, n))]);
        self.n(key, n as f64, bytes)
    }
    /// Bytes in the largest binary unit that keeps the number ≥ 1 ("2 GiB", "1015.62 KiB"),
    /// as `units::human_bytes` writes them, in the language's decimal separator.
    pub(crate) fn human_bytes(self, key: &'static str, n: u64) -> Arg {
        const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
        let (mut v, mut u) = (n as f64, 0);
        while v >= 1024.0 && u < UNITS.len() - 1 {
            v /= 1024.0;
            u += 1;
        }
        let shown = if u == 0 {
            tr(self.0).fmt("caption-unit-bytes", &[("bytes", n.to_string())])
        } else if (v - v.round()).abs() < 0.005 {
            format!("{} {}", v.round() as u64, UNITS[u])
        } else {
            format!("{} {}", self.point(format!("{v:.2}")), UNITS[u])
        };
        self.n(key, n as f64, shown)
    }
    /// A small positive number readably: 5 decimals, or two significant digits below 10⁻³.
    pub(crate) fn small(self, key: &'static str, v: f64) -> Arg {
        let shown = if v != 0.0 && v.abs() < 1e-3 {
            format!("{v:.1e}")
        } else {
            format!("{v:.5}")
        };
        self.n(key, v, self.point(shown))
    }
    /// A number Rust wrote ("1.5"), in the language's decimal separator.
    fn point(self, s: String) -> String {
        let sep = number(self.0, 0.5, 1).chars().nth(1).unwrap_or('.');
        s.replace('.', &sep.to_string())
    }
    /// A text argument (a token's piece, a model's name); never read as a number.
    pub(crate) fn text(self, name: &'static str, t: impl Into<String>) -> Arg {
        let t: String = t.into();
        Arg {
            name,
            value: ArgValue::Text(t.replace([OPEN, CLOSE], "\u{FFFD}")),
        }
    }
}

/// A caption being written: the text so far with its numbers' sentinels, and the numbers.
pub(crate) struct Caption {
    lang: Lang,
    text: String,
    nums: Vec<(&'static str, f64, String)>,
}

impl Caption {
    pub(crate) fn new(lang: Lang) -> Caption {
        Caption {
            lang,
            text: String::new(),
            nums: Vec::new(),
        }
    }

    /// The message `id` with its arguments, appended.
    pub(crate) fn msg(mut self, id: &str, args: &[Arg]) -> Caption {
        let written = self.write(id, args);
        self.text.push_str(&written);
        self
    }

    /// The message `id` with its arguments, written for another message's argument (an item
    /// of a list); its numbers are the caption's.
    pub(crate) fn fragment(&mut self, id: &str, args: &[Arg]) -> String {
        self.write(id, args)
    }

    /// What goes between two sentences: a space, none in Chinese.
    pub(crate) fn gap(mut self) -> Caption {
        if self.lang != Lang::ZhCn {
            self.text.push(' ');
        }
        self
    }

    /// Between the items of a list: ", ", "，" in Chinese.
    pub(crate) fn comma(&self) -> &'static str {
        match self.lang {
            Lang::ZhCn => "，",
            _ => ", ",
        }
    }

    /// The message formatted with each number as its sentinel; a number the message does
    /// not place follows it, shown as nothing (the tests still read it).
    fn write(&mut self, id: &str, args: &[Arg]) -> String {
        let mut fluent: Vec<(&str, String)> = Vec::new();
        let mut mine = Vec::new();
        for a in args {
            let v = match &a.value {
                ArgValue::Num { key, value, shown } => {
                    let i = self.nums.len();
                    self.nums.push((key, *value, shown.clone()));
                    mine.push(i);
                    sentinel(i)
                }
                ArgValue::Text(t) | ArgValue::Written(t) => t.clone(),
            };
            fluent.push((a.name, v));
        }
        let mut out = tr(self.lang).fmt(id, &fluent);
        for i in mine {
            if !out.contains(&sentinel(i)) {
                self.nums[i].2.clear();
                out.push_str(&sentinel(i));
            }
        }
        out
    }

    pub(crate) fn done(self) -> Vec<Part> {
        let mut parts = split(&self.text, &self.nums);
        // A number whose message left it out (a fragment a translation dropped) is still a
        // number of the caption (the tests read it), shown as nothing.
        for (i, &(key, value, _)) in self.nums.iter().enumerate() {
            if !self.text.contains(&sentinel(i)) {
                parts.push(Part::Num {
                    key,
                    value,
                    shown: String::new(),
                });
            }
        }
        parts
    }
}

pub(crate) fn sentinel(i: usize) -> String {
    format!("{OPEN}{i}{CLOSE}")
}

/// A formatted text split at its sentinels into text and the numbers they stand for; a
/// sentinel that names no number is dropped, never shown.
pub(crate) fn split(text: &str, nums: &[(&'static str, f64, String)]) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut words = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        words.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len_utf8()..];
        let num = after.find(CLOSE).and_then(|end| {
            let n = after[..end]
                .parse::<usize>()
                .ok()
                .and_then(|i| nums.get(i))?;
            Some((n, end))
        });
        let Some((&(key, value, ref shown), end)) = num else {
            rest = after;
            continue;
        };
        words.retain(|c| c != OPEN && c != CLOSE);
        if !words.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut words)));
        }
        parts.push(Part::Num {
            key,
            value,
            shown: shown.clone(),
        });
        rest = &after[end + CLOSE.len_utf8()..];
    }
    words.push_str(rest);
    words.retain(|c| c != OPEN && c != CLOSE);
    if !words.is_empty() {
        parts.push(Part::Text(words));
    }
    parts
}
