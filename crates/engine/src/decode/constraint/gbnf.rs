//! GBNF, llama.cpp's grammar syntax (`root ::= "yes" | "no"`), translated into llguidance's
//! Lark-like syntax (`start: "y" "e" "s" | "n" "o"`).
//!
//! The parser follows llama.cpp's, `src/llama-grammar.cpp` at commit
//! `04332939dd7adc7edbff9dbb4e25efdfae1c7668` (`parse_space`, `parse_name`, `parse_char`,
//! `parse_sequence`, `parse_alternates`, `parse_rule`, `parse`) and `grammars/README.md`:
//! names `[a-zA-Z0-9-]+`; `#` comments; strings `"..."` and classes `[a-z]`, `[^...]` with
//! the escapes `\n \r \t \\ \" \[ \] \- \xHH \uHHHH \UHHHHHHHH`; `.`; groups; postfix
//! `* + ? {m} {m,} {m,n}` on what precedes (chained ones nest); tokens `<[id]>`, `!<[id]>`,
//! `<text>`. Newlines are whitespace inside parentheses and after `::=` or `|`; elsewhere one
//! ends the rule. As in llama.cpp, `{m,..}` with `m > 2000` is refused and `{m,n}` with
//! `n > 2000` reads as `{m,}`; a repetition whose rules, times those of what it repeats,
//! reach 2000 is refused; `[]`, `[^]` add nothing.
//!
//! Unlike llama.cpp: a rule defined twice is refused (llama.cpp keeps the last definition);
//! `{,n}` reads as `{0,n}` (llama.cpp wants the minimum); `{m,n}` with `n < m` is refused
//! (llama.cpp runs out of memory); `!<text>` is refused (llguidance negates token ids only);
//! a NUL character is refused (llama.cpp stops reading there); a code point that is not a
//! Unicode scalar value (`\uD800`) is refused in a string and left out of a class, as no
//! UTF-8 text holds it; nesting is limited to [`MAX_NESTING`].
//!
//! GBNF is character-level, while Lark's strings and regexes are lexemes matched greedily, so
//! `"a" | "ab"` could change meaning: every character is therefore its own lexeme, a string
//! one JSON string per character, a class one regex (`/[\x{61}-\x{7A}]/`), `.` `/(?s:.)/`,
//! except a repeated character or class where the lexer's greed cannot change the language
//! (`gbnf_lark.rs`): that run is one lexeme, which costs a token mask several times less.
//! `root` becomes Lark's `start`; other names are kept where Lark takes them
//! (`[a-z][a-z0-9-]*`, not `start`), else renamed `r_<n>` (with a comment). One Lark rule per
//! GBNF rule, except that groups nested deeper than llguidance's parser takes move into
//! helper rules `g_<n>`. An empty alternative becomes `""`.

use std::collections::HashMap;
use std::fmt;

#[path = "gbnf_lark.rs"]
mod emit;
pub(crate) use emit::CharSet;
use emit::{class_atom, Emitter};
#[cfg(feature = "constraint")]
#[path = "gbnf_bnf.rs"]
mod bnf;
#[cfg(feature = "constraint")]
pub(crate) use bnf::{to_bnf, Bnf, Sym};

/// The deepest recursion of llguidance's Lark compiler accepted, in calls as [`compile_depth`]
/// estimates them: it follows a rule's references and a group's parentheses recursively,
/// and 400 rules each naming the next (about 2,000 calls) overflowed a 1 MB stack (a wasm
/// worker's) in the tests, while 200 did not.
pub const MAX_COMPILE_DEPTH: usize = 1000;

/// llguidance's calls to compile a rule entered from a reference (`do_rule` to `do_atom`,
/// five) whose parentheses nest `height` deep (three each, and a helper rule every
/// [`LARK_MAX_PARENS`] of them).
pub fn compile_depth(rules: usize, height: usize) -> usize {
    5 * rules + 3 * height + 5 * (height / LARK_MAX_PARENS)
}
/// The deepest nesting of parentheses (and of chained repetitions) accepted.
pub const MAX_NESTING: usize = 200;
const TOO_DEEP: &str = "nesting deeper than 200";
/// llama.cpp's `MAX_REPETITION_THRESHOLD`.
const MAX_REPETITION: u64 = 2000;
/// Parentheses in one Lark rule before a group moves to a helper rule (llguidance's Lark
/// parser refuses 29 levels).
const LARK_MAX_PARENS: usize = 16;
const DEFINED_TWICE: &str = "rule defined twice (llama.cpp would keep the last definition)";
const NO_PRECEDING_ITEM: &str = "expecting preceding item to */+/?/{";
const TOO_MANY_REPETITIONS: &str = "number of repetitions exceeds sane defaults (2000)";
const TOO_MANY_RULES: &str = "number of rules that are going to be repeated multiplied by the \
    new repetition exceeds sane defaults (2000)";
const SURROGATES: std::ops::RangeInclusive<u32> = 0xD800..=0xDFFF;
/// A class that no character matches (a regex's body, without its slashes).
const NO_CHAR: &str = r"[^\x{0}-\x{10FFFF}]";
/// Any character (`.`, and `[^...]` once nothing is left to exclude).
const ANY_CHAR: &str = "(?s:.)";

/// A GBNF syntax error, placed at its 1-based line and column (in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GbnfError {
    pub line: usize,
    pub column: usize,
    /// The rule being parsed, if any.
    pub rule: Option<String>,
    pub message: String,
}

impl fmt::Display for GbnfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, column, message) = (self.line, self.column, &self.message);
        match &self.rule {
            Some(r) => write!(f, "line {line}, column {column} (rule {r}): {message}"),
            None => write!(f, "line {line}, column {column}: {message}"),
        }
    }
}

impl std::error::Error for GbnfError {}

/// Translates a GBNF grammar into llguidance's Lark syntax, refusing what llama.cpp refuses.
pub fn to_lark(src: &str) -> Result<String, GbnfError> {
    let p = parse(src)?;
    let names = (0..p.names.len()).map(|i| lark_name(&p.names, i)).collect();
    let mut e = Emitter::new(names, &p.rules);
    let mut out = String::new();
    for (id, alts) in &p.rules {
        let (gbnf, lark) = (&p.names[*id], e.names[*id].clone());
        if *gbnf != lark && gbnf != "root" {
            out += &format!("// GBNF rule {gbnf}\n");
        }
        out += &format!("{lark}: {}\n", e.alts(alts, 0));
        out.extend(e.helpers.drain(..));
    }
    Ok(out)
}

/// A grammar parsed and checked as llama.cpp would, and within this translation's limits.
fn parse(src: &str) -> Result<Parser, GbnfError> {
    let mut p = Parser::default();
    p.parse_grammar(src)?;
    p.check_references()?;
    if !p.name_ids.contains_key("root") {
        let message = "grammar does not contain a 'root' rule".to_string();
        return Err(p.error_at(0, None, message));
    }
    p.check_depth()?;
    Ok(p)
}

/// GBNF `root` is Lark's `start`; Lark rule names are `[a-z][_a-z0-9-]*`, and GBNF names
/// never hold `_`, so `r_<n>` and `g_<n>` cannot meet a kept name.
fn lark_name(names: &[String], i: usize) -> String {
    let name = names[i].as_str();
    let mut chars = name.chars();
    let fits = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    match name {
        "root" => "start".to_string(),
        _ if fits && name != "start" => name.to_string(),
        _ => format!("r_{i}"),
    }
}

/// `{min,max}`; `max` `None` is unbounded.
type Rep = (u64, Option<u64>);

enum Atom {
    /// A string's characters (at least one).
    Chars(Vec<char>),
    /// A class or `.`: its regex's body (`[\x{61}-\x{7A}]`) and the characters it matches.
    Class(String, CharSet),
    /// Lark text as is: a token (`<[12]>`).
    Raw(String),
    /// A rule reference, by name id.
    Ref(usize),
    Group(Vec<Vec<Item>>),
}

/// An atom, its repetition, and its height (groups nested in and including it).
struct Item(Atom, Option<Rep>, usize);

#[derive(Default)]
struct Parser {
    src: Vec<char>,
    pos: usize,
    names: Vec<String>,
    name_ids: HashMap<String, usize>,
    /// Defined rules in source order: name id, alternatives.
    rules: Vec<(usize, Vec<Vec<Item>>)>,
    defined: Vec<bool>,
    /// References: name id, position, the rule holding it.
    refs: Vec<(usize, usize, usize)>,
    /// Symbols llama.cpp would synthesize (groups, repetitions), and its `n_prev_rules`
    /// for the current sequence, for its limits.
    generated: u64,
    n_prev: u64,
    rule: Option<usize>,
    depth: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

impl Parser {
    /// The character `k` ahead; NUL past the end (C's terminator, as llama.cpp reads).
    fn peek(&self, k: usize) -> char {
        self.src.get(self.pos + k).copied().unwrap_or('\0')
    }

    fn error_at(&self, at: usize, rule: Option<usize>, message: String) -> GbnfError {
        let before = &self.src[..at.min(self.src.len())];
        let line_start = before.iter().rposition(|&c| c == '\n').map_or(0, |i| i + 1);
        GbnfError {
            line: before.iter().filter(|&&c| c == '\n').count() + 1,
            column: before.len() - line_start + 1,
            rule: rule.and_then(|r| self.names.get(r).cloned()),
            message,
        }
    }

    fn err<T>(&self, at: usize, message: impl Into<String>) -> Result<T, GbnfError> {
        Err(self.error_at(at, self.rule, message.into()))
    }

    /// An error at `at` unless `ok`.
    fn check(&self, ok: bool, at: usize, message: &str) -> Result<(), GbnfError> {
        ok.then_some(())
            .ok_or_else(|| self.error_at(at, self.rule, message.to_string()))
    }

    /// Steps over `c` if it is next.
    fn skip(&mut self, c: char) -> bool {
        let next = self.peek(0) == c;
        self.pos += usize::from(next);
        next
    }

    /// Steps over `c`, or fails with "expecting 'c'".
    fn expect(&mut self, c: char) -> Result<(), GbnfError> {
        let found = self.skip(c);
        self.check(found, self.pos, &format!("expecting '{c}'"))
    }

    fn intern(&mut self, name: String) -> usize {
        if let Some(&id) = self.name_ids.get(&name) {
            return id;
        }
        self.name_ids.insert(name.clone(), self.names.len());
        self.names.push(name);
        self.defined.push(false);
        self.names.len() - 1
    }

    fn parse_space(&mut self, newline_ok: bool) {
        loop {
            match self.peek(0) {
                ' ' | '\t' => self.pos += 1,
                '\r' | '\n' if newline_ok => self.pos += 1,
                '#' => {
                    while !matches!(self.peek(0), '\0' | '\r' | '\n') {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn parse_name(&mut self) -> Result<String, GbnfError> {
        let start = self.pos;
        while is_word_char(self.peek(0)) {
            self.pos += 1;
        }
        self.check(self.pos > start, start, "expecting name")?;
        Ok(self.src[start..self.pos].iter().collect())
    }

    /// Decimal digits, which llama.cpp reads with `stoull` (too large: an error).
    fn parse_int(&mut self) -> Result<u64, GbnfError> {
        let start = self.pos;
        while self.peek(0).is_ascii_digit() {
            self.pos += 1;
        }
        self.check(self.pos > start, start, "expecting integer")?;
        let digits: String = self.src[start..self.pos].iter().collect();
        digits
            .parse()
            .or_else(|_| self.err(start, "integer out of range"))
    }

    fn parse_hex(&mut self, size: usize, at: usize) -> Result<u32, GbnfError> {
        let digits: String = self.src.iter().skip(self.pos).take(size).collect();
        let ok = digits.len() == size && digits.chars().all(|c| c.is_ascii_hexdigit());
        self.check(ok, at, &format!("expecting {size} hex chars"))?;
        self.pos += size;
        Ok(u32::from_str_radix(&digits, 16).unwrap_or(0))
    }

    /// One character of a string or class: a code point, maybe not a Unicode scalar value.
    fn parse_char(&mut self) -> Result<u32, GbnfError> {
        let (at, c) = (self.pos, self.peek(0));
        if c == '\\' {
            let e = self.peek(1);
            self.pos += 2;
            return match e {
                'x' => self.parse_hex(2, at),
                'u' => self.parse_hex(4, at),
                'U' => self.parse_hex(8, at),
                't' => Ok(9),
                'r' => Ok(13),
                'n' => Ok(10),
                '\\' | '"' | '[' | ']' | '-' => Ok(u32::from(e)),
                _ => self.err(at, "unknown escape"),
            };
        }
        self.check(c != '\0', at, "unexpected end of input")?;
        self.pos += 1;
        Ok(u32::from(c))
    }

    fn parse_grammar(&mut self, src: &str) -> Result<(), GbnfError> {
        self.src = src.chars().collect();
        self.parse_space(true);
        while self.peek(0) != '\0' {
            self.parse_rule()?;
        }
        self.rule = None;
        let end = self.pos >= self.src.len();
        self.check(end, self.pos, "unexpected NUL character")
    }

    fn parse_rule(&mut self) -> Result<(), GbnfError> {
        self.rule = None;
        let start = self.pos;
        let name = self.parse_name()?;
        let id = self.intern(name);
        self.rule = Some(id);
        self.parse_space(false);
        let ok = self.peek(0) == ':' && self.peek(1) == ':' && self.peek(2) == '=';
        self.check(ok, self.pos, "expecting ::=")?;
        self.check(!self.defined[id], start, DEFINED_TWICE)?;
        self.defined[id] = true;
        self.pos += 3;
        self.parse_space(true);
        let alts = self.parse_alternates(false)?;
        self.rules.push((id, alts));
        let c = self.peek(0);
        let ok = matches!(c, '\r' | '\n' | '\0');
        self.check(ok, self.pos, "expecting newline or end")?;
        self.pos += usize::from(c != '\0') + usize::from(c == '\r' && self.peek(1) == '\n');
        self.parse_space(true);
        Ok(())
    }

    fn parse_alternates(&mut self, nested: bool) -> Result<Vec<Vec<Item>>, GbnfError> {
        let mut alts = vec![self.parse_sequence(nested)?];
        while self.skip('|') {
            self.parse_space(true);
            alts.push(self.parse_sequence(nested)?);
        }
        Ok(alts)
    }

    fn parse_sequence(&mut self, nested: bool) -> Result<Vec<Item>, GbnfError> {
        let mut items = Vec::new();
        // Whether the last element left something to repeat (`last_sym_start < rule.size()`).
        let mut last_ok = false;
        self.n_prev = 1;
        loop {
            let at = self.pos;
            let atom = match self.peek(0) {
                '"' => self.parse_string()?,
                '[' => self.parse_class()?,
                '<' | '!' => Some(self.parse_token()?),
                '(' => Some(self.parse_group()?),
                '.' => {
                    self.pos += 1;
                    Some(Atom::Class(ANY_CHAR.to_string(), CharSet::any()))
                }
                '*' | '+' | '?' | '{' => {
                    let rep = self.parse_rep(nested)?;
                    self.check(last_ok, at, NO_PRECEDING_ITEM)?;
                    last_ok = self.apply_rep(&mut items, rep, at)?;
                    continue;
                }
                c if is_word_char(c) => {
                    let name = self.parse_name()?;
                    let id = self.intern(name);
                    self.refs.push((id, at, self.rule.unwrap_or(id)));
                    Some(Atom::Ref(id))
                }
                _ => return Ok(items),
            };
            self.parse_space(nested);
            if !matches!(atom, Some(Atom::Group(_))) {
                self.n_prev = 1;
            }
            last_ok = atom.is_some();
            if let Some(atom) = atom {
                let height = match &atom {
                    Atom::Group(alts) => 1 + alts.iter().flatten().map(|i| i.2).max().unwrap_or(0),
                    _ => 0,
                };
                self.check(height <= MAX_NESTING, at, TOO_DEEP)?;
                items.push(Item(atom, None, height));
            }
        }
    }

    /// A string; `None` when empty (it adds nothing, as in llama.cpp).
    fn parse_string(&mut self) -> Result<Option<Atom>, GbnfError> {
        self.pos += 1;
        let mut chars = Vec::new();
        while self.peek(0) != '"' {
            let at = self.pos;
            let c = self.parse_char()?;
            match char::from_u32(c) {
                Some(c) => chars.push(c),
                None => return self.err(at, format!("U+{c:X} is not a Unicode scalar value")),
            }
        }
        self.pos += 1;
        Ok((!chars.is_empty()).then_some(Atom::Chars(chars)))
    }

    /// A class; `None` when empty (`[]`, `[^]` add nothing, as in llama.cpp).
    fn parse_class(&mut self) -> Result<Option<Atom>, GbnfError> {
        self.pos += 1;
        let negated = self.skip('^');
        let mut ranges = Vec::new();
        while self.peek(0) != ']' {
            let lo = self.parse_char()?;
            let mut hi = lo;
            if self.peek(0) == '-' && self.peek(1) != ']' {
                let end = self.pos + 1;
                self.check(self.peek(1) != '\0', end, "unexpected end of input")?;
                self.pos += 1;
                hi = self.parse_char()?;
            }
            ranges.push((lo, hi));
        }
        self.pos += 1;
        Ok((!ranges.is_empty()).then(|| class_atom(negated, &ranges)))
    }

    /// `<[id]>`, `!<[id]>` or `<text>` (llama.cpp's `parse_token`).
    fn parse_token(&mut self) -> Result<Atom, GbnfError> {
        let start = self.pos;
        let negated = self.skip('!');
        self.expect('<')?;
        if self.skip('[') {
            let at = self.pos;
            let id = self.parse_int()?;
            self.check(id <= u64::from(u32::MAX), at, "token id out of range")?;
            self.expect(']')?;
            self.expect('>')?;
            let not = if negated { "^" } else { "" };
            return Ok(Atom::Raw(format!("<[{not}{id}]>")));
        }
        let text_start = self.pos - 1;
        while !matches!(self.peek(0), '\0' | '>') {
            self.pos += 1;
        }
        self.expect('>')?;
        let text: String = self.src[text_start..self.pos].iter().collect();
        self.check(!negated, start, "negated token text is not supported")?;
        let inner = &text[1..text.len() - 1];
        let ok = !inner.is_empty() && !inner.contains(|c: char| c == '<' || c.is_whitespace());
        self.check(ok, start, "bad token text (empty, '<' or space)")?;
        Ok(Atom::Raw(text))
    }

    fn parse_group(&mut self) -> Result<Atom, GbnfError> {
        self.check(self.depth < MAX_NESTING, self.pos, TOO_DEEP)?;
        self.depth += 1;
        self.pos += 1;
        self.parse_space(true);
        let before = self.names.len() as u64 + self.generated;
        self.generated += 1;
        let alts = self.parse_alternates(true)?;
        self.n_prev = self.names.len() as u64 + self.generated - before;
        self.expect(')')?;
        self.depth -= 1;
        Ok(Atom::Group(alts))
    }

    /// `*`, `+`, `?` or `{m}`, `{m,}`, `{m,n}`, `{,n}`, with llama.cpp's limits.
    fn parse_rep(&mut self, nested: bool) -> Result<Rep, GbnfError> {
        let c = self.peek(0);
        self.pos += 1;
        self.parse_space(nested);
        match c {
            '*' => return Ok((0, None)),
            '+' => return Ok((1, None)),
            '?' => return Ok((0, Some(1))),
            _ => {}
        }
        let ok = self.peek(0).is_ascii_digit() || self.peek(0) == ',';
        self.check(ok, self.pos, "expecting an int")?;
        let min = if self.peek(0) == ',' {
            0
        } else {
            self.parse_int()?
        };
        self.parse_space(nested);
        let max = if self.skip(',') {
            self.parse_space(nested);
            let max = match self.peek(0).is_ascii_digit() {
                true => Some(self.parse_int()?),
                false => None,
            };
            self.parse_space(nested);
            self.check(self.peek(0) == '}', self.pos, "expecting '}'")?;
            max
        } else {
            self.check(self.peek(0) == '}', self.pos, "expecting ','")?;
            Some(min)
        };
        self.pos += 1;
        self.parse_space(nested);
        self.check(min <= MAX_REPETITION, self.pos, TOO_MANY_REPETITIONS)?;
        Ok((min, max.filter(|&m| m <= MAX_REPETITION)))
    }

    /// llama.cpp's `handle_repetitions`: applies `rep` to the last item. Returns whether
    /// something is left to repeat (not after `{0}`).
    fn apply_rep(&mut self, items: &mut Vec<Item>, rep: Rep, at: usize) -> Result<bool, GbnfError> {
        let (min, max) = rep;
        let Some(prev) = items.pop() else {
            return self.err(at, NO_PRECEDING_ITEM);
        };
        let ok = max.is_none_or(|m| m >= min);
        self.check(ok, at, "repetition maximum is smaller than its minimum")?;
        let total = max.filter(|&m| m > 0).unwrap_or(min.max(1));
        let ok = self.n_prev.saturating_mul(total) < MAX_REPETITION;
        self.check(ok, at, TOO_MANY_RULES)?;
        self.generated += max.map_or(1, |m| m - min);
        self.n_prev *= total;
        if max == Some(0) {
            return Ok(false);
        }
        let wrap = prev.1.is_some() || matches!(&prev.0, Atom::Chars(c) if c.len() > 1);
        let mut item = prev;
        if wrap {
            let height = item.2 + 1;
            self.check(height <= MAX_NESTING, at, TOO_DEEP)?;
            item = Item(Atom::Group(vec![vec![item]]), None, height);
        }
        item.1 = Some((min, max));
        items.push(item);
        Ok(true)
    }

    /// Refuses a grammar whose compile would recurse deeper than [`MAX_COMPILE_DEPTH`]:
    /// depth first from `root`, each rule at its first reference (as llguidance compiles),
    /// each rule costing its own parentheses' height.
    fn check_depth(&self) -> Result<(), GbnfError> {
        let mut named: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.names.len()];
        for &(id, at, rule) in &self.refs {
            named[rule].push((id, at));
        }
        let mut height = vec![0; self.names.len()];
        for (id, alts) in &self.rules {
            height[*id] = alts.iter().flatten().map(|i| i.2).max().unwrap_or(0);
        }
        let cost = |id: usize| compile_depth(1, height[id]);
        let root = self.name_ids["root"];
        let mut seen = vec![false; self.names.len()];
        seen[root] = true;
        // (rule, index of its next reference, the calls down to it)
        let mut stack = vec![(root, 0, cost(root))];
        while let Some((rule, next, depth)) = stack.pop() {
            let Some(&(id, at)) = named[rule].get(next) else {
                continue;
            };
            stack.push((rule, next + 1, depth));
            if !seen[id] {
                seen[id] = true;
                let deep = depth + cost(id) > MAX_COMPILE_DEPTH;
                let msg = "rules nest too deep for the compiler (each naming the next, in groups)";
                self.check(!deep, at, msg).map_err(|e| GbnfError {
                    rule: Some(self.names[rule].clone()),
                    ..e
                })?;
                stack.push((id, 0, depth + cost(id)));
            }
        }
        Ok(())
    }

    /// Every reference names a defined rule ("Undefined rule identifier" in llama.cpp).
    fn check_references(&self) -> Result<(), GbnfError> {
        if let Some(&(id, at, rule)) = self.refs.iter().find(|r| !self.defined[r.0]) {
            let msg = format!("Undefined rule identifier '{}'", self.names[id]);
            return Err(self.error_at(at, Some(rule), msg));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "gbnf_tests.rs"]
mod tests;
