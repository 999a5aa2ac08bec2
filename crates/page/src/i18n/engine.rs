//! The engine's messages (a knob's broken rule, `SettingError::message`, a constraint's
//! error), English as the CLI prints them, in the page's language: each is read back
//! against the engine's phrases (the rule broken, its range or bound, the value got, the
//! note after it, the entry or stage it names) and written again from
//! `locales/<lang>/engine.ftl` (ids `engine-…`, a bundle of its own beside the page's
//! areas). Values, ranges and names keep the engine's text (a count grouped with commas is
//! grouped again for the language); a phrase not known comes back in English, never lost.
//! The tests feed every knob's bad values through the engine's validator and hold each
//! message read back: English again word for word, and Chinese and Spanish translated.

use super::{integer, Lang};
use fluent_bundle::{FluentArgs, FluentBundle, FluentResource};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A language's engine messages.
fn source(lang: Lang) -> &'static str {
    match lang {
        Lang::En => include_str!("../../locales/en/engine.ftl"),
        Lang::ZhCn => include_str!("../../locales/zh-CN/engine.ftl"),
        Lang::Es => include_str!("../../locales/es/engine.ftl"),
    }
}

type Bundle = FluentBundle<FluentResource>;

thread_local! {
    /// Each language's bundle, made once.
    static BUNDLES: RefCell<HashMap<Lang, Rc<Bundle>>> = Default::default();
}

fn bundle(lang: Lang) -> Rc<Bundle> {
    BUNDLES.with(|b| {
        b.borrow_mut()
            .entry(lang)
            .or_insert_with(|| {
                let id: unic_langid::LanguageIdentifier = lang.name().parse().unwrap_or_default();
                let mut b = FluentBundle::new(vec![id]);
                b.set_use_isolating(false);
                let res =
                    FluentResource::try_new(source(lang).to_string()).unwrap_or_else(|(r, _)| r);
                let _ = b.add_resource(res);
                Rc::new(b)
            })
            .clone()
    })
}

/// An engine message in `lang`: English unchanged; else each of its phrases translated,
/// and any the page does not know left in English.
pub fn engine_message(lang: Lang, english: &str) -> String {
    if lang == Lang::En {
        return english.to_string();
    }
    let w = Words::new(lang);
    if let Some(t) = w.message(english) {
        return t;
    }
    // A model file's, a download's or the loading's (`files.ftl`).
    if let Some(t) = super::readback::read_back(lang, english) {
        return t;
    }
    // Several rules in one message (logit bias's entries): each part that is known.
    let parts: Vec<Option<String>> = english.split("; ").map(|p| w.whole(p)).collect();
    if parts.iter().all(Option::is_none) {
        return english.to_string();
    }
    let parts: Vec<String> = parts
        .into_iter()
        .zip(english.split("; "))
        .map(|(t, p)| t.unwrap_or_else(|| p.to_string()))
        .collect();
    parts.join(w.separator())
}

/// The message written again in `lang` when every phrase of it is known (the tests: in
/// English it is the message itself), else None.
pub fn translate(lang: Lang, english: &str) -> Option<String> {
    Words::new(lang).message(english)
}

/// A phrase's reader: the message in the language, or None when it is not this phrase.
type Phrase = fn(&Words, &str) -> Option<String>;

/// The engine's phrases, tried in turn (a rule's own, then the others).
const PHRASES: [Phrase; 12] = [
    Words::rule,
    Words::value_is_not,
    Words::bias,
    Words::not_a_stage,
    Words::missing,
    Words::profile,
    Words::beams,
    Words::fixed,
    Words::breaker,
    Words::not_one_of,
    Words::constraint,
    Words::constraint_syntax,
];

struct Words {
    lang: Lang,
    bundle: Rc<Bundle>,
}

impl Words {
    fn new(lang: Lang) -> Words {
        Words {
            lang,
            bundle: bundle(lang),
        }
    }

    /// The message `id` with its arguments; None if the language lacks it (the tests hold
    /// every language complete).
    fn say(&self, id: &str, args: &[(&str, &str)]) -> Option<String> {
        let pattern = self.bundle.get_message(id)?.value()?;
        let mut fa = FluentArgs::new();
        for (k, v) in args {
            fa.set(*k, *v);
        }
        let mut errors = Vec::new();
        let out = self.bundle.format_pattern(pattern, Some(&fa), &mut errors);
        errors.is_empty().then(|| out.into_owned())
    }

    fn separator(&self) -> &'static str {
        match self.lang {
            Lang::ZhCn => "；",
            _ => "; ",
        }
    }

    /// The whole message, or its parts joined by "; " when each is known.
    fn message(&self, m: &str) -> Option<String> {
        if let Some(t) = self.whole(m) {
            return Some(t);
        }
        let parts: Option<Vec<String>> = m.split("; ").map(|p| self.whole(p)).collect();
        parts
            .filter(|p| p.len() > 1)
            .map(|p| p.join(self.separator()))
    }

    /// One phrase, after the field it is about if named (`top_k: …`, as the compare
    /// columns' errors are written).
    fn whole(&self, m: &str) -> Option<String> {
        self.got(m).or_else(|| {
            let (field, rest) = m.split_once(": ")?;
            let named = !field.is_empty()
                && field
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            let t = named.then(|| self.got(rest)).flatten()?;
            Some(format!("{field}: {t}"))
        })
    }

    /// One phrase, with the value got after it (`… (got 1.5)`).
    fn got(&self, m: &str) -> Option<String> {
        let got = m
            .strip_suffix(')')
            .and_then(|r| r.rsplit_once(" (got "))
            .and_then(|(rule, got)| {
                let rule = self.phrase(rule)?;
                self.say("engine-got", &[("rule", &rule), ("value", got)])
            });
        got.or_else(|| self.phrase(m))
    }

    fn phrase(&self, m: &str) -> Option<String> {
        PHRASES.iter().find_map(|p| p(self, m))
    }

    /// A rule (`must be in [0, 1]`), with its note (`(0 = off)`) if it has one.
    fn rule(&self, m: &str) -> Option<String> {
        let noted = m
            .strip_suffix(')')
            .and_then(|r| r.rsplit_once(" ("))
            .and_then(|(core, note)| {
                let (core, note) = (self.bound(core)?, self.note(note)?);
                self.say("engine-note", &[("rule", &core), ("note", &note)])
            });
        noted.or_else(|| self.bound(m))
    }

    /// A rule's bound or range.
    fn bound(&self, m: &str) -> Option<String> {
        if let Some((core, v)) = m
            .strip_suffix(") for off")
            .and_then(|r| r.rsplit_once(", or negative (≥ "))
        {
            let core = self.bound(core)?;
            return self.say("engine-or-negative-off", &[("rule", &core), ("value", v)]);
        }
        let rest = m.strip_prefix("must be ")?;
        if rest == "0 (off), 1 or 2" {
            return self.say("engine-zero-off-one-two", &[]);
        }
        if let Some(r) = rest.strip_prefix("0 (greedy) or in ") {
            return is_range(r)
                .then(|| self.say("engine-zero-greedy-or-in", &[("range", r)]))
                .flatten();
        }
        if let Some(r) = rest.strip_prefix("in ") {
            return is_range(r)
                .then(|| self.say("engine-in", &[("range", r)]))
                .flatten();
        }
        let (id, v) = [
            ("≥ ", "engine-ge"),
            ("> ", "engine-gt"),
            ("at least ", "engine-at-least"),
            ("at most ", "engine-at-most"),
        ]
        .into_iter()
        .find_map(|(p, id)| rest.strip_prefix(p).map(|v| (id, v)))?;
        let v = self.count(v);
        is_value(&v)
            .then(|| self.say(id, &[("value", &v)]))
            .flatten()
    }

    /// A rule's note, in the parentheses after it.
    fn note(&self, n: &str) -> Option<String> {
        if let Some(v) = n.strip_suffix(" = off") {
            return self.say("engine-note-off", &[("value", v)]);
        }
        if let Some(v) = n.strip_suffix(" = greedy") {
            return self.say("engine-note-greedy", &[("value", v)]);
        }
        let id = match n {
            "llama.cpp's range" => "engine-note-llama-range",
            "the target surprise, bits" => "engine-note-surprise",
            "the learning rate" => "engine-note-learning-rate",
            "each beam is a KV cache and a row of every step; wider trees are unreadable" => {
                "engine-note-beams"
            }
            _ => return None,
        };
        self.say(id, &[])
    }

    /// A count grouped with commas (`1,048,576`), grouped for the language; any other
    /// value as it is.
    fn count(&self, v: &str) -> String {
        count(self.lang, v)
    }

    /// `X is not a number` and the other rules that name only the value given.
    fn value_is_not(&self, m: &str) -> Option<String> {
        const ENDS: [(&str, &str); 6] = [
            (" is not a number", "engine-not-number"),
            (" is not a finite number", "engine-not-finite"),
            (" is not a whole number", "engine-not-whole"),
            (" is not id:value", "engine-bias-pair"),
            (" appears twice", "engine-twice"),
            (
                " takes the draw's place and runs last (as llama.cpp places it): move it to \
                 the end of the order",
                "engine-runs-last",
            ),
        ];
        let (v, id) = ENDS
            .iter()
            .find_map(|(end, id)| m.strip_suffix(end).map(|v| (v, *id)))?;
        if id == "engine-not-finite" {
            if let Some((v, e)) = split_in(v) {
                return self.say("engine-bias-finite", &[("value", v), ("entry", e)]);
            }
        }
        is_value(v).then(|| self.say(id, &[("value", v)])).flatten()
    }

    /// Logit bias's entries: an id outside the vocabulary, not an id, a value out of range.
    fn bias(&self, m: &str) -> Option<String> {
        if let Some((id, vocab)) = m
            .strip_prefix("token id ")
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|r| r.split_once(" is outside the vocabulary (0.."))
        {
            return self.say("engine-bias-outside", &[("id", id), ("vocab", vocab)]);
        }
        if let Some((id, e)) = m.strip_suffix(" is not a token id").and_then(split_in) {
            return self.say("engine-bias-id", &[("id", id), ("entry", e)]);
        }
        let (v, range) = m.rsplit_once(" must be in ")?;
        let (v, e) = split_in(v)?;
        is_range(range)
            .then(|| {
                self.say(
                    "engine-bias-in",
                    &[("value", v), ("entry", e), ("range", range)],
                )
            })
            .flatten()
    }

    fn not_a_stage(&self, m: &str) -> Option<String> {
        let (v, stages) = m.strip_suffix(')')?.rsplit_once(" is not a stage (")?;
        is_value(v).then_some(())?;
        self.say("engine-not-stage", &[("value", v), ("stages", stages)])
    }

    fn missing(&self, m: &str) -> Option<String> {
        let rest = m.strip_suffix(") but missing from the order")?;
        let (stage, v) = rest.split_once(" is set (")?;
        is_value(stage).then_some(())?;
        self.say("engine-missing", &[("stage", stage), ("value", v)])
    }

    /// Not a profile, or a value wider than a profile takes.
    fn profile(&self, m: &str) -> Option<String> {
        if let Some((v, names)) = m
            .strip_suffix(')')
            .and_then(|r| r.rsplit_once(" is not a profile ("))
        {
            let names = is_value(v).then(|| self.or_list(names)).flatten()?;
            return self.say("engine-not-profile", &[("value", v), ("names", &names)]);
        }
        let (p, range) = m.strip_prefix("the ")?.split_once(" profile takes ")?;
        is_range(range)
            .then(|| self.say("engine-profile-range", &[("profile", p), ("range", range)]))
            .flatten()
    }

    fn beams(&self, m: &str) -> Option<String> {
        let rest = m.strip_prefix("cannot return ")?.strip_suffix(" beams")?;
        let (n, w) = rest.split_once(" sequences from ")?;
        self.say("engine-cannot-return", &[("count", n), ("width", w)])
    }

    /// The messages with nothing in them but words.
    fn fixed(&self, m: &str) -> Option<String> {
        let id = match m {
            "a stop sequence cannot be empty" => "engine-stop-empty",
            "a sequence breaker cannot be empty" => "engine-breaker-empty",
            "is not a knob" => "engine-not-knob",
            "a column runs greedy or sampling (beam search has its own panel)" => {
                "engine-column-beam"
            }
            "the constraint changed since it was compiled: compile the new one first" => {
                "engine-constraint-stale"
            }
            _ => return None,
        };
        self.say(id, &[])
    }

    fn breaker(&self, m: &str) -> Option<String> {
        let rest = m.strip_prefix("a sequence breaker is at most ")?;
        let (max, rest) = rest.split_once(" bytes (llama.cpp's limit); ")?;
        let (v, bytes) = rest.rsplit_once(" has ")?;
        self.say(
            "engine-breaker-long",
            &[("max", max), ("value", v), ("bytes", bytes)],
        )
    }

    /// `X is not A, B or C` (the strategy, early stopping, the page's choices).
    fn not_one_of(&self, m: &str) -> Option<String> {
        let (v, names) = m.rsplit_once(" is not ")?;
        let names = is_value(v).then(|| self.or_list(names)).flatten()?;
        self.say("engine-not-one-of", &[("value", v), ("names", &names)])
    }

    /// `a, b or c`, names only, in the language.
    fn or_list(&self, list: &str) -> Option<String> {
        let (init, last) = list.rsplit_once(" or ")?;
        let init: Vec<&str> = init.split(", ").collect();
        let name = |n: &&str| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        };
        if !init.iter().all(name) || !name(&last) {
            return None;
        }
        let sep = if self.lang == Lang::ZhCn { "、" } else { ", " };
        // Spanish "o" is "u" before an o sound.
        let u = self.lang == Lang::Es && (last.starts_with('o') || last.starts_with("ho"));
        let id = if u {
            "engine-list-or-u"
        } else {
            "engine-list-or"
        };
        self.say(id, &[("init", &init.join(sep)), ("last", last)])
    }

    /// A constraint's kind in words (`ConstraintSpec::what`).
    fn kind(&self, k: &str) -> Option<String> {
        let id = match k {
            "regex" => "engine-kind-regex",
            "JSON Schema" => "engine-kind-json-schema",
            "GBNF grammar" => "engine-kind-gbnf",
            "Lark grammar" => "engine-kind-lark",
            _ => return None,
        };
        self.say(id, &[])
    }

    /// A constraint's errors (`ConstraintError`), its compiler's own words kept.
    fn constraint(&self, m: &str) -> Option<String> {
        if let Some(v) = m.strip_prefix("constraint ").and_then(|r| {
            r.strip_suffix(": start it with regex:, json_schema:, grammar: (GBNF) or lark:")
        }) {
            return self.say("engine-constraint-kind", &[("value", v)]);
        }
        if let Some(msg) = m.strip_prefix("the constraint failed: ") {
            return self.say("engine-constraint-failed", &[("message", msg)]);
        }
        if let Some((token, piece)) = m
            .strip_prefix("token ")
            .and_then(|r| r.strip_suffix(") is not allowed by the constraint here"))
            .and_then(|r| r.split_once(" ("))
        {
            return self.say(
                "engine-constraint-rejected",
                &[("token", token), ("piece", piece)],
            );
        }
        let rest = m.strip_prefix("the ")?;
        if let Some(k) = rest.strip_suffix(" is empty") {
            let kind = self.kind(k)?;
            return self.say("engine-constraint-empty", &[("kind", &kind)]);
        }
        if let Some((k, msg)) = rest.split_once(" could not be compiled: ") {
            let kind = self.kind(k)?;
            return self.say(
                "engine-constraint-compile",
                &[("kind", &kind), ("message", msg)],
            );
        }
        let (k, rest) = rest.strip_suffix(" are accepted")?.split_once(" is ")?;
        let (bytes, max) = rest.split_once(" bytes; at most ")?;
        let kind = self.kind(k)?;
        self.say(
            "engine-constraint-large",
            &[("kind", &kind), ("bytes", bytes), ("max", max)],
        )
    }

    /// `K syntax error at line L, column C (rule R): message`.
    fn constraint_syntax(&self, m: &str) -> Option<String> {
        let (k, rest) = m.split_once(" syntax error at line ")?;
        let kind = self.kind(k)?;
        let (line, rest) = rest.split_once(", column ")?;
        let (column, msg) = rest.split_once(": ")?;
        let args = [("kind", kind.as_str()), ("line", line), ("message", msg)];
        match column
            .strip_suffix(')')
            .and_then(|c| c.split_once(" (rule "))
        {
            Some((column, rule)) => {
                let mut a = args.to_vec();
                a.extend([("column", column), ("rule", rule)]);
                self.say("engine-constraint-syntax-rule", &a)
            }
            None => {
                let mut a = args.to_vec();
                a.push(("column", column));
                self.say("engine-constraint-syntax", &a)
            }
        }
    }
}

/// A count grouped with commas (`1,048,576`), grouped for the language; any other value as
/// it is.
fn count(lang: Lang, v: &str) -> String {
    let groups: Vec<&str> = v.split(',').collect();
    let grouped = groups.len() > 1
        && groups.iter().enumerate().all(|(i, g)| {
            g.chars().all(|c| c.is_ascii_digit())
                && if i == 0 {
                    (1..=3).contains(&g.len())
                } else {
                    g.len() == 3
                }
        });
    match v.replace(',', "").parse::<u64>() {
        Ok(n) if grouped => integer(lang, n),
        _ => v.to_string(),
    }
}

/// A value of a message read back (`readback`), its number in the language: a count
/// grouped with commas, or a decimal (`0.20`, `1.5 GiB`: the number before a unit),
/// written with the language's separators; any other value as it is.
pub(super) fn regroup(lang: Lang, v: &str) -> String {
    if lang == Lang::En {
        return v.to_string();
    }
    let (num, unit) = v.split_once(' ').unwrap_or((v, ""));
    if !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return v.to_string();
    }
    let decimals = num
        .split_once('.')
        .filter(|(i, f)| !i.is_empty() && !f.is_empty())
        .filter(|(i, f)| i.bytes().chain(f.bytes()).all(|c| c.is_ascii_digit()))
        .map(|(_, f)| f.len());
    let n = match (decimals, num.parse::<f64>()) {
        (Some(d), Ok(x)) => super::number(lang, x, d),
        _ => count(lang, num),
    };
    if unit.is_empty() {
        n
    } else {
        format!("{n} {unit}")
    }
}

/// `"x" in "1:x"` (a value in a logit-bias entry, each as Rust quotes it).
fn split_in(s: &str) -> Option<(&str, &str)> {
    let i = s.find("\" in \"")?;
    let (v, e) = (&s[..i + 1], &s[i + 5..]);
    (v.starts_with('"') && e.starts_with('"') && e.ends_with('"')).then_some((v, e))
}

/// An interval (`[0, 1)`, `(0, 100]`) or a range (`1..=16`).
fn is_range(r: &str) -> bool {
    let interval = r.starts_with(['[', '('])
        && r.ends_with([']', ')'])
        && r.matches(", ").count() == 1
        && !r[1..r.len() - 1].contains(['(', ')', '[', ']']);
    interval || (r.contains("..=") && !r.contains(' '))
}

/// A single value: a word or number, or text as Rust quotes it (`"a b"`).
fn is_value(v: &str) -> bool {
    let quoted = v.len() >= 2 && v.starts_with('"') && v.ends_with('"');
    quoted || (!v.is_empty() && !v.contains(' '))
}

#[cfg(test)]
#[path = "tests_engine.rs"]
mod tests;
