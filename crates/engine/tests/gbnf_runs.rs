//! GBNF's translation reads a repeated character or class as one lexeme where the lexer's
//! greed cannot change the language (`decode/constraint/gbnf_lark.rs`). Checked here against
//! an engine that shares nothing with it: Rust's `regex`. Random regular grammars, written
//! both as GBNF (some of their parts as rules of their own) and as a regex, must accept the
//! same texts: every text over `a b c 1` up to six characters, the matcher's texts found by
//! walking its masks (a text is accepted where the end token is allowed). Hand-written
//! grammars where a merged run would lose a parse check the cases the rule is for.

use decoding_engine::decode::constraint::gbnf::to_lark;
use decoding_engine::decode::constraint::{
    native_clock, Constraint, ConstraintSpec, ConstraintVocab,
};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

const ALPHABET: [char; 4] = ['a', 'b', 'c', '1'];
const LONGEST: usize = 6;
const EOS: u32 = 256;

/// The 256 single bytes and an end token.
fn vocab() -> ConstraintVocab {
    let mut bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    bytes.push(Vec::new());
    let mut pieces: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
    pieces.push("</s>".to_string());
    ConstraintVocab::from_parts(bytes, pieces, EOS, 257, &[EOS], native_clock).unwrap()
}

/// The texts up to [`LONGEST`] characters the matcher accepts.
fn matcher_texts(c: &mut Constraint, prefix: &mut String, out: &mut BTreeSet<String>) {
    let allowed = c.allowed().unwrap();
    if allowed.end {
        out.insert(prefix.clone());
    }
    if prefix.len() == LONGEST {
        return;
    }
    for ch in ALPHABET {
        if allowed.allows(ch as usize) {
            let mut next = c.clone();
            next.advance(ch as u32).unwrap();
            prefix.push(ch);
            matcher_texts(&mut next, prefix, out);
            prefix.pop();
        }
    }
}

/// The texts up to [`LONGEST`] characters the regex matches whole.
fn regex_texts(re: &regex::Regex) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut layer = vec![String::new()];
    for _ in 0..=LONGEST {
        out.extend(layer.iter().filter(|t| re.is_match(t)).cloned());
        layer = layer
            .iter()
            .flat_map(|t| ALPHABET.map(|c| format!("{t}{c}")))
            .collect();
    }
    out
}

fn grammar_texts(gbnf: &str, v: &ConstraintVocab) -> BTreeSet<String> {
    let spec = ConstraintSpec::parse(&format!("grammar:{gbnf}"))
        .unwrap()
        .unwrap();
    let mut c = spec.compile(v).unwrap_or_else(|e| panic!("{gbnf}: {e}"));
    let mut out = BTreeSet::new();
    matcher_texts(&mut c, &mut String::new(), &mut out);
    out
}

/// Whether the translation wrote a run as one lexeme (`/[...]+/`, `/\x{61}{2,3}/`).
fn merged_runs(gbnf: &str) -> usize {
    let lark = to_lark(gbnf).unwrap();
    lark.matches("+/").count() + lark.matches("}/").count()
}

fn check(gbnf: &str, regex: &str, v: &ConstraintVocab) {
    let re = regex::Regex::new(&format!("^(?:{regex})$")).unwrap();
    let (got, want) = (grammar_texts(gbnf, v), regex_texts(&re));
    let lark = to_lark(gbnf).unwrap();
    let extra: Vec<_> = got.difference(&want).take(8).collect();
    let missing: Vec<_> = want.difference(&got).take(8).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "GBNF {gbnf:?}\nLark {lark:?}\nregex {regex:?}\naccepted, not matched: {extra:?}\n\
         matched, not accepted: {missing:?}"
    );
}

/// A random regular expression over [`ALPHABET`] as (GBNF, regex), with the GBNF's rules.
struct Gen {
    rng: ChaCha8Rng,
    rules: Vec<String>,
}

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    fn class(&mut self) -> (String, String) {
        let members: String = ALPHABET.iter().filter(|_| self.below(2) == 0).collect();
        let members = if members.is_empty() {
            "b".to_string()
        } else {
            members
        };
        let not = if self.below(4) == 0 { "^" } else { "" };
        (format!("[{not}{members}]"), format!("[{not}{members}]"))
    }

    fn expr(&mut self, depth: u32) -> (String, String) {
        let pick = if depth == 0 {
            self.below(2)
        } else {
            self.below(6)
        };
        let (g, r) = match pick {
            0 => {
                let c = ALPHABET[self.below(4) as usize];
                (format!("\"{c}\""), c.to_string())
            }
            1 => self.class(),
            2 | 3 => {
                let parts: Vec<_> = (0..2 + self.below(2))
                    .map(|_| self.expr(depth - 1))
                    .collect();
                let g: Vec<_> = parts.iter().map(|p| p.0.clone()).collect();
                let r: Vec<_> = parts.iter().map(|p| p.1.clone()).collect();
                (format!("({})", g.join(" ")), format!("(?:{})", r.concat()))
            }
            4 => {
                let parts: Vec<_> = (0..2).map(|_| self.expr(depth - 1)).collect();
                let g = format!("({} | {})", parts[0].0, parts[1].0);
                (g, format!("(?:{}|{})", parts[0].1, parts[1].1))
            }
            _ => {
                let (g, r) = self.expr(depth - 1);
                let name = format!("r{}", self.rules.len());
                self.rules.push(format!("{name} ::= {g}"));
                (name, format!("(?:{r})"))
            }
        };
        let q = ["", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"][self.below(9) as usize];
        (format!("{g}{q}"), format!("(?:{r}){q}"))
    }
}

#[test]
fn random_regular_grammars_accept_what_the_regex_matches() {
    let v = vocab();
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(47),
        rules: Vec::new(),
    };
    let (mut grammars, mut with_runs) = (0, 0);
    while grammars < 60 {
        g.rules.clear();
        let (root, regex) = g.expr(3);
        let gbnf = format!("root ::= {root}\n{}", g.rules.join("\n"));
        check(&gbnf, &regex, &v);
        grammars += 1;
        with_runs += usize::from(merged_runs(&gbnf) > 0);
    }
    // The check means something only if runs were merged in a fair share of the grammars.
    assert!(
        with_runs >= 15,
        "{with_runs} of {grammars} grammars merged a run"
    );
}

#[test]
fn a_run_is_merged_only_where_no_parse_is_lost() {
    let v = vocab();
    // (GBNF, the same language as a regex, runs expected merged)
    let cases = [
        // What follows the run starts with one of its characters.
        ("root ::= [a-c]+ \"a\"", "[a-c]+a", 0),
        ("root ::= [a-c]* [a-c]", "[a-c]*[a-c]", 0),
        // A lexeme alive beside the run ends and wants a character of its class next.
        (
            "root ::= \"a\" x | [a-c] y\nx ::= [b-c]+ \"1\"\ny ::= \"b\" \"c\"",
            "a[b-c]+1|[a-c]bc",
            0,
        ),
        // ... which may start where the run does (after a "1").
        (
            "root ::= \"1\" x | \"1\" \"ab\"\nx ::= [a-b]+ \"c\"",
            "1[a-b]+c|1ab",
            0,
        ),
        // A class repeated per character beside the run.
        (
            "root ::= [a-c]+ \"1\" | [a-b]* [a-b] \"a1\"",
            "[a-c]+1|[a-b]*[a-b]a1",
            0,
        ),
        // Safe: what follows the runs is never one of their characters.
        ("root ::= ([a-b]+ \"1\")+ \"c\"*", "(?:[a-b]+1)+c*", 2),
        (
            "root ::= [a-c]+ \"1\" | [a-b]+ \"11\"",
            "[a-c]+1|[a-b]+11",
            2,
        ),
        (
            "root ::= x \"1\" x\nx ::= [^1]{1,2}",
            "[^1]{1,2}1[^1]{1,2}",
            1,
        ),
        // The string's letters go on with letters, but none of them may start where the run
        // does (after a "c"): only after "1" or their own letter.
        (
            "root ::= x \"1ab1\" x\nx ::= \"c\" [a-b]+",
            "c[a-b]+1ab1c[a-b]+",
            1,
        ),
    ];
    for (gbnf, regex, runs) in cases {
        check(gbnf, regex, &v);
        assert_eq!(
            merged_runs(gbnf),
            runs,
            "{gbnf}: {}",
            to_lark(gbnf).unwrap()
        );
    }
}

/// Whether the matcher takes `tokens` (ids of the byte vocabulary) and may end there.
fn accepts(gbnf: &str, tokens: &[u32], v: &ConstraintVocab) -> bool {
    let spec = ConstraintSpec::parse(&format!("grammar:{gbnf}"))
        .unwrap()
        .unwrap();
    let mut c = spec.compile(v).unwrap();
    tokens.iter().all(|&t| c.advance(t).is_ok()) && c.allowed().unwrap().end
}

fn bytes(text: &str) -> Vec<u32> {
    text.bytes().map(u32::from).collect()
}

#[test]
fn a_run_is_not_merged_where_the_lexer_would_die_inside_a_character_or_after_a_token() {
    let v = vocab();
    // The lexer reads bytes: `[^”]+` would take the first byte of `”` (U+201D shares E2 80
    // with U+2018-201C) and die in it; `[а-я]+` the first byte of `ё` (D1 with `я`).
    for (gbnf, text) in [
        (
            r#"root ::= "\u201C" [^\u201D]* "\u201D""#,
            "\u{201C}a\u{201D}",
        ),
        (r#"root ::= [\u0430-\u044F]+ "\u0451""#, "\u{44F}\u{451}"),
        (
            r#"root ::= "\u00E9" "\u00F0" | [\u00E0-\u00EF]+ "!""#,
            "\u{E9}\u{F0}",
        ),
    ] {
        assert!(
            accepts(gbnf, &bytes(text), &v),
            "{gbnf}: {}",
            to_lark(gbnf).unwrap()
        );
        assert_eq!(merged_runs(gbnf), 0, "{}", to_lark(gbnf).unwrap());
    }
    // Where no first byte is shared, the run is merged: `“…”` with ASCII inside.
    let ascii = r#"root ::= "\u201C" [a-z]* "\u201D""#;
    assert_eq!(merged_runs(ascii), 1);
    assert!(accepts(ascii, &bytes("\u{201C}ab\u{201D}"), &v));
    // After a token the lexer starts afresh: "yes" and the run may both start there.
    let token = "root ::= <[12]> (\"yes\" | [a-z]+ \"!\")";
    assert!(
        accepts(token, &[12, 121, 101, 115], &v),
        "{}",
        to_lark(token).unwrap()
    );
    assert_eq!(merged_runs(token), 0);
}
