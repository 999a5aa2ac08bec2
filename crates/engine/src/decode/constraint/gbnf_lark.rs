//! The Lark that `gbnf.rs`'s parse becomes: every character its own lexeme, except a repeated
//! character or class (`[a-z]+`, `[0-9]{4}`) whose run can be one lexeme without changing
//! the grammar's language. A run read as one lexeme keeps llguidance's token mask in its
//! lexer instead of a parser step at every byte of every token (`bench --mask`: the list
//! grammar's mask several times cheaper on a 32,000-token vocabulary).
//!
//! Why a run can change the language: llguidance's lexer is greedy. At each character it
//! extends every lexeme alive (those the parser allowed where the current lexeme began) that
//! can take it, and only when none can does it end the lexemes that have matched, all of
//! them (`MatchingLexemes`, llguidance `earley/regexvec.rs`). A run `[C]+` read as one lexeme
//! L keeps reading characters of C, so a parse that wanted to end a lexeme K at that point
//! and go on with a character of C is lost. K may be L itself (`[a-z]+ "x"`: what follows the
//! run starts with a character of C) or any lexeme alive beside L: one that matched the same
//! characters from where L began (`"a" x | [a-z] y` with `x ::= [b-z]+ "1"`, `y ::= "b" "c"`).
//!
//! So over the grammar's character lexemes K (S_K the characters K matches; FOLLOW_K those
//! that may come next, PRECEDE_K those that may come just before, the text's start counted
//! as one: FIRST/LAST/FOLLOW fixpoints over the rules, groups and repetitions), a run L of
//! class C is one lexeme only if FOLLOW_L ∩ C = ∅ and every other K with S_K ∩ C ≠ ∅ and
//! FOLLOW_K ∩ C ≠ ∅ cannot start where L starts: PRECEDE_K ∩ PRECEDE_L = ∅ (both would
//! start after the same character of the same text; a token counts as a character of its
//! own, after which the lexer starts afresh). The lexer reads bytes: a run goes on with the
//! first byte of a character outside its class that shares it with one inside, and dies in
//! that character (`[^”]+` then `”`), so the two FOLLOW tests compare first bytes of UTF-8
//! encodings, not characters. A merged run's FOLLOW and PRECEDE are
//! those of the whole run; a character repeated per character counts its own. The runs kept
//! are the greatest set that meets it (runs that fail are dropped, the rest checked again).
//! The sets over-approximate, so the rule is stricter than needed, never looser; a grammar
//! whose analysis outgrows [`BUDGET`] or [`MAX_PASSES`] merges nothing, which is always right.

use super::{Atom, Item, ANY_CHAR, LARK_MAX_PARENS, NO_CHAR, SURROGATES};
use std::collections::HashSet;

/// Steps of the analysis (items visited, lexeme pairs compared) before it gives up.
const BUDGET: usize = 4_000_000;
/// Passes over the rules a fixpoint may take before the analysis gives up (a grammar's sets
/// settle in a few; a chain of rules each naming the next, in the wrong order, takes one a
/// rule).
const MAX_PASSES: usize = 12;
const MAX_CHAR: u32 = 0x10FFFF;

/// Characters as sorted, disjoint, inclusive code point ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CharSet(Vec<(u32, u32)>);

impl CharSet {
    /// A token (`<[12]>`) as a marker: what precedes and follows it.
    fn token() -> Self {
        CharSet(vec![(TOKEN, TOKEN)])
    }

    pub(super) fn any() -> Self {
        CharSet(vec![(0, MAX_CHAR)])
    }

    pub(crate) fn one(c: char) -> Self {
        CharSet(vec![(u32::from(c), u32::from(c))])
    }

    fn from_ranges(mut ranges: Vec<(u32, u32)>) -> Self {
        ranges.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        CharSet(out)
    }

    fn complement(&self) -> Self {
        let (mut out, mut next) = (Vec::new(), 0u32);
        for &(lo, hi) in &self.0 {
            if lo > next {
                out.push((next, lo - 1));
            }
            next = hi + 1;
        }
        if next <= MAX_CHAR {
            out.push((next, MAX_CHAR));
        }
        CharSet(out)
    }

    /// Adds `other`; whether that added anything.
    fn add(&mut self, other: &CharSet) -> bool {
        let joined = Self::from_ranges([&self.0[..], &other.0[..]].concat());
        let grew = joined != *self;
        *self = joined;
        grew
    }

    /// Whether `c` is in it.
    #[cfg_attr(not(feature = "constraint"), allow(dead_code))]
    pub(crate) fn contains(&self, c: char) -> bool {
        let c = u32::from(c);
        let i = self.0.partition_point(|r| r.1 < c);
        self.0.get(i).is_some_and(|r| r.0 <= c)
    }

    /// The first bytes of its characters' UTF-8 encodings (the markers past U+10FFFF have
    /// none): what the lexer reads first of a character, and may go on with while a
    /// character of the run shares it (`[^”]+` takes the first byte of `”`).
    fn leads(&self) -> Leads {
        let lead = |c: u32| match c {
            0..=0x7F => c,
            0x80..=0x7FF => 0xC0 | (c >> 6),
            0x800..=0xFFFF => 0xE0 | (c >> 12),
            _ => 0xF0 | (c >> 18),
        };
        let mut bits = [0u128; 2];
        for &(lo, hi) in self.0.iter().filter(|r| r.0 <= MAX_CHAR) {
            for b in lead(lo)..=lead(hi.min(MAX_CHAR)) {
                bits[(b / 128) as usize] |= 1 << (b % 128);
            }
        }
        Leads(bits)
    }

    /// Whether a character is in both.
    fn meets(&self, other: &CharSet) -> bool {
        let (mut a, mut b) = (self.0.iter().peekable(), other.0.iter().peekable());
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            if x.1 < y.0 {
                a.next();
            } else if y.1 < x.0 {
                b.next();
            } else {
                return true;
            }
        }
        false
    }
}

/// A set of first bytes of UTF-8 encodings.
#[derive(Clone, Copy)]
struct Leads([u128; 2]);

impl Leads {
    fn meets(self, other: Leads) -> bool {
        self.0[0] & other.0[0] != 0 || self.0[1] & other.0[1] != 0
    }
}

/// A class as a regex's body and its characters. Ranges reversed, or outside Unicode's scalar
/// values, match nothing (llama.cpp compares code points), so they are clipped or left out.
pub(super) fn class_atom(negated: bool, ranges: &[(u32, u32)]) -> Atom {
    let (mut body, mut kept) = (String::new(), Vec::new());
    for &(lo, hi) in ranges {
        let lo = if SURROGATES.contains(&lo) { 0xE000 } else { lo };
        let hi = if SURROGATES.contains(&hi) { 0xD7FF } else { hi };
        let hi = hi.min(MAX_CHAR);
        if lo < hi {
            body.push_str(&format!("\\x{{{lo:X}}}-\\x{{{hi:X}}}"));
        } else if lo == hi {
            body.push_str(&format!("\\x{{{lo:X}}}"));
        }
        if lo <= hi {
            kept.push((lo, hi));
        }
    }
    let set = CharSet::from_ranges(kept);
    match (negated, body.is_empty()) {
        (true, true) => Atom::Class(ANY_CHAR.to_string(), CharSet::any()),
        (false, true) => Atom::Class(NO_CHAR.to_string(), set),
        (true, false) => Atom::Class(format!("[^{body}]"), set.complement()),
        (false, false) => Atom::Class(format!("[{body}]"), set),
    }
}

/// One character as a Lark (JSON) string; Lark's lexer wants DEL escaped.
fn char_lexeme(c: char) -> String {
    match serde_json::to_string(&c.to_string()) {
        Ok(s) => s.replace('\u{7f}', "\\u007f"),
        Err(_) => format!("/[\\x{{{:X}}}]/", u32::from(c)),
    }
}

/// An item's address: its name in the analysis, which reads the rules the emitter writes.
fn addr(item: &Item) -> usize {
    std::ptr::from_ref(item) as usize
}

/// Whether an item may match its atom more than once.
fn repeats(item: &Item) -> bool {
    item.1.is_some_and(|(_, max)| max.is_none_or(|n| n > 1))
}

pub(super) struct Emitter {
    /// Lark names, by name id (then helper rules').
    pub(super) names: Vec<String>,
    /// Helper rules for groups nested too deep, to follow the current rule.
    pub(super) helpers: Vec<String>,
    /// The repeated items written as one lexeme, by address.
    runs: HashSet<usize>,
}

impl Emitter {
    pub(super) fn new(names: Vec<String>, rules: &[(usize, Vec<Vec<Item>>)]) -> Self {
        let runs = Analysis::runs(rules, &names).unwrap_or_default();
        Emitter {
            names,
            helpers: Vec::new(),
            runs,
        }
    }

    /// Alternatives joined by `|`, an empty one as `""`.
    pub(super) fn alts(&mut self, alts: &[Vec<Item>], depth: usize) -> String {
        let mut seqs = Vec::new();
        for seq in alts {
            let items: Vec<String> = seq.iter().map(|i| self.item(i, depth)).collect();
            seqs.push(items.join(" "));
        }
        for s in seqs.iter_mut().filter(|s| s.is_empty()) {
            s.push_str("\"\"");
        }
        seqs.join(" | ")
    }

    fn item(&mut self, item: &Item, depth: usize) -> String {
        if let Some(run) = self.run(item) {
            return run;
        }
        let mut s = match &item.0 {
            Atom::Chars(chars) => {
                let lexemes: Vec<String> = chars.iter().map(|&c| char_lexeme(c)).collect();
                lexemes.join(" ")
            }
            Atom::Class(body, _) => format!("/{body}/"),
            Atom::Raw(r) => r.clone(),
            Atom::Ref(id) => self.names[*id].clone(),
            Atom::Group(alts) if depth < LARK_MAX_PARENS => {
                format!("({})", self.alts(alts, depth + 1))
            }
            Atom::Group(alts) => {
                let name = format!("g_{}", self.names.len());
                self.names.push(name.clone());
                let body = self.alts(alts, 0);
                self.helpers.push(format!("{name}: {body}\n"));
                name
            }
        };
        match item.1 {
            None => {}
            Some((0, None)) => s.push('*'),
            Some((1, None)) => s.push('+'),
            Some((0, Some(1))) => s.push('?'),
            Some((m, None)) => s.push_str(&format!("{{{m},}}")),
            Some((m, Some(n))) if m == n => s.push_str(&format!("{{{m}}}")),
            Some((m, Some(n))) => s.push_str(&format!("{{{m},{n}}}")),
        }
        s
    }

    /// A run the analysis kept, as one regex lexeme (`[C]*` as `(/[C]+/)?`: a lexeme is never
    /// empty).
    fn run(&self, item: &Item) -> Option<String> {
        if !self.runs.contains(&addr(item)) {
            return None;
        }
        let body = match &item.0 {
            Atom::Class(body, _) => body.clone(),
            Atom::Chars(c) => format!("\\x{{{:X}}}", u32::from(*c.first()?)),
            _ => return None,
        };
        Some(match item.1? {
            (0, None) => format!("(/{body}+/)?"),
            (0, Some(n)) => format!("(/{body}{{1,{n}}}/)?"),
            (1, None) => format!("/{body}+/"),
            (m, None) => format!("/{body}{{{m},}}/"),
            (m, Some(n)) if m == n => format!("/{body}{{{m}}}/"),
            (m, Some(n)) => format!("/{body}{{{m},{n}}}/"),
        })
    }
}

/// One character lexeme of the grammar as written: what it matches (and those characters'
/// first bytes); what may follow one of its characters and what follows the whole item, as
/// first bytes (the lexer reads bytes: a run goes on with the first byte of a character
/// outside its class that shares it with one inside, then dies inside that character); what
/// may precede one of its characters and what precedes the item ([`START`] for the text's
/// start); for a repeated character or class, its address (a run that may be merged).
struct Lexeme {
    chars: CharSet,
    leads: Leads,
    follow: Leads,
    after: Leads,
    precede: CharSet,
    before: CharSet,
    run: Option<usize>,
}

impl Lexeme {
    fn merged(&self, merged: &HashSet<usize>) -> bool {
        self.run.is_some_and(|r| merged.contains(&r))
    }

    /// What may follow and precede it as written: a merged run's characters follow and
    /// precede one another inside its one lexeme.
    fn context(&self, merged: &HashSet<usize>) -> (Leads, &CharSet) {
        match self.merged(merged) {
            true => (self.after, &self.before),
            false => (self.follow, &self.precede),
        }
    }
}

/// What the walk knows of an item's neighbours: what follows it and what precedes it.
struct Around {
    after: CharSet,
    before: CharSet,
}

struct Analysis {
    /// FIRST, LAST, nullability, FOLLOW and what precedes each rule, by name id.
    first: Vec<CharSet>,
    last: Vec<CharSet>,
    nullable: Vec<bool>,
    follow: Vec<CharSet>,
    precede: Vec<CharSet>,
    lexemes: Vec<Lexeme>,
    grew: bool,
    budget: usize,
}

/// The text's start, as a character that precedes what may begin the text.
const START: u32 = MAX_CHAR + 1;
/// A token, as a character (`CharSet::token`).
const TOKEN: u32 = MAX_CHAR + 2;

impl Analysis {
    /// The runs to write as one lexeme, by address; `None` past the budget. `names` are the
    /// Lark names by name id (the root is `start`).
    fn runs(rules: &[(usize, Vec<Vec<Item>>)], names: &[String]) -> Option<HashSet<usize>> {
        let n = names.len();
        let mut a = Analysis {
            first: vec![CharSet::default(); n],
            last: vec![CharSet::default(); n],
            nullable: vec![false; n],
            follow: vec![CharSet::default(); n],
            precede: vec![CharSet::default(); n],
            lexemes: Vec::new(),
            grew: true,
            budget: BUDGET,
        };
        if let Some(root) = names.iter().position(|n| n == "start") {
            a.precede[root] = CharSet(vec![(START, START)]);
        }
        for pass in 0.. {
            if !a.grew {
                break;
            }
            (pass < MAX_PASSES).then_some(())?;
            a.grew = false;
            for (id, alts) in rules {
                let (first, last, nullable) = a.alts_ends(alts)?;
                a.grew |= a.first[*id].add(&first) | a.last[*id].add(&last);
                a.grew |= nullable && !a.nullable[*id];
                a.nullable[*id] |= nullable;
            }
        }
        a.grew = true;
        for pass in 0.. {
            if !a.grew {
                break;
            }
            (pass < MAX_PASSES).then_some(())?;
            a.grew = false;
            a.lexemes.clear();
            for (id, alts) in rules {
                let around = Around {
                    after: a.follow[*id].clone(),
                    before: a.precede[*id].clone(),
                };
                a.walk(alts, &around)?;
            }
        }
        a.greatest_runs()
    }

    fn spend(&mut self, steps: usize) -> Option<()> {
        self.budget = self.budget.checked_sub(steps)?;
        Some(())
    }

    /// FIRST, LAST and nullability of an item.
    fn item_ends(&mut self, item: &Item) -> Option<(CharSet, CharSet, bool)> {
        self.spend(1)?;
        let (first, last, nullable) = match &item.0 {
            Atom::Chars(c) => (CharSet::one(*c.first()?), CharSet::one(*c.last()?), false),
            Atom::Class(_, set) => (set.clone(), set.clone(), false),
            // After a token the lexer starts afresh, as at the text's start.
            Atom::Raw(_) => (CharSet::token(), CharSet::token(), false),
            Atom::Ref(id) => (
                self.first[*id].clone(),
                self.last[*id].clone(),
                self.nullable[*id],
            ),
            Atom::Group(alts) => self.alts_ends(alts)?,
        };
        Some((
            first,
            last,
            nullable || item.1.is_some_and(|(min, _)| min == 0),
        ))
    }

    fn alts_ends(&mut self, alts: &[Vec<Item>]) -> Option<(CharSet, CharSet, bool)> {
        let (mut first, mut last, mut nullable) = (CharSet::default(), CharSet::default(), false);
        for seq in alts {
            let ends = self.seq_ends(seq)?;
            let (mut seq_first, mut seq_last) = (CharSet::default(), CharSet::default());
            for (f, _, n) in &ends {
                seq_first.add(f);
                if !n {
                    break;
                }
            }
            for (_, l, n) in ends.iter().rev() {
                seq_last.add(l);
                if !n {
                    break;
                }
            }
            first.add(&seq_first);
            last.add(&seq_last);
            nullable |= ends.iter().all(|e| e.2);
        }
        Some((first, last, nullable))
    }

    fn seq_ends(&mut self, seq: &[Item]) -> Option<Vec<(CharSet, CharSet, bool)>> {
        seq.iter().map(|item| self.item_ends(item)).collect()
    }

    /// Records the lexemes of `alts`, with what follows and precedes them, and what follows
    /// and precedes each rule they name.
    fn walk(&mut self, alts: &[Vec<Item>], around: &Around) -> Option<()> {
        for seq in alts {
            let ends = self.seq_ends(seq)?;
            let mut afters = vec![around.after.clone(); seq.len()];
            for i in (0..seq.len().saturating_sub(1)).rev() {
                let (first, _, nullable) = &ends[i + 1];
                afters[i] = if *nullable {
                    afters[i + 1].clone()
                } else {
                    CharSet::default()
                };
                afters[i].add(first);
            }
            let mut before = around.before.clone();
            for ((item, (first, last, nullable)), after) in seq.iter().zip(&ends).zip(afters) {
                let repeats = repeats(item);
                let (mut inner_after, mut inner_before) = (after.clone(), before.clone());
                if repeats {
                    inner_after.add(first);
                    inner_before.add(last);
                }
                let outer = Around {
                    after,
                    before: before.clone(),
                };
                let inner = Around {
                    after: inner_after,
                    before: inner_before,
                };
                self.atom(item, &outer, &inner)?;
                if !nullable {
                    before = CharSet::default();
                }
                before.add(last);
            }
        }
        Some(())
    }

    /// `outer`: around the item; `inner`: around one match of its atom.
    fn atom(&mut self, item: &Item, outer: &Around, inner: &Around) -> Option<()> {
        let run = repeats(item).then(|| addr(item));
        let lexeme = |chars: CharSet, inner: &Around, outer: &Around, run| Lexeme {
            leads: chars.leads(),
            chars,
            follow: inner.after.leads(),
            after: outer.after.leads(),
            precede: inner.before.clone(),
            before: outer.before.clone(),
            run,
        };
        match &item.0 {
            Atom::Chars(c) if c.len() == 1 => {
                self.lexemes
                    .push(lexeme(CharSet::one(c[0]), inner, outer, run));
            }
            Atom::Chars(c) => {
                // A string is never repeated as such (`apply_rep` groups it).
                for (i, &ch) in c.iter().enumerate() {
                    let before = c.get(i.wrapping_sub(1)).map(|&p| CharSet::one(p));
                    let after = c.get(i + 1).map(|&n| CharSet::one(n));
                    let around = Around {
                        after: after.unwrap_or_else(|| inner.after.clone()),
                        before: before.unwrap_or_else(|| inner.before.clone()),
                    };
                    self.lexemes
                        .push(lexeme(CharSet::one(ch), &around, &around, None));
                }
            }
            Atom::Class(_, set) => self.lexemes.push(lexeme(set.clone(), inner, outer, run)),
            Atom::Raw(_) => {}
            Atom::Ref(id) => {
                self.grew |= self.follow[*id].add(&inner.after);
                self.grew |= self.precede[*id].add(&inner.before);
            }
            Atom::Group(alts) => self.walk(alts, inner)?,
        }
        Some(())
    }

    /// Drops runs that fail the rule (module docs) until none does.
    fn greatest_runs(mut self) -> Option<HashSet<usize>> {
        let lexemes = std::mem::take(&mut self.lexemes);
        let mut merged: HashSet<usize> = lexemes
            .iter()
            .filter(|l| !l.chars.0.is_empty())
            .filter_map(|l| l.run)
            .collect();
        loop {
            self.spend(merged.len().saturating_mul(lexemes.len()))?;
            let fails = |l: &Lexeme| {
                let (l_after, l_before) = l.context(&merged);
                l_after.meets(l.leads)
                    || lexemes.iter().any(|k| {
                        let (after, before) = k.context(&merged);
                        k.chars.meets(&l.chars) && after.meets(l.leads) && before.meets(l_before)
                    })
            };
            let failed: Vec<usize> = lexemes
                .iter()
                .filter(|l| l.merged(&merged) && fails(l))
                .filter_map(|l| l.run)
                .collect();
            if failed.is_empty() {
                return Some(merged);
            }
            for r in failed {
                merged.remove(&r);
            }
        }
    }
}
