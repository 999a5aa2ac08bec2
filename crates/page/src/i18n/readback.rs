//! Messages that other crates write in English (a model file's refusals from
//! `decoding-engine`, a download's from `remote::http`, the worker's loading, the reason
//! "auto" gives), read back against `locales/en/files.ftl` and written again in the page's
//! language. Each English message there is a template, exactly the text the code writes
//! (the tests build every error and hold the two equal): its literal parts are matched and
//! its `{ $arg }`s read out of the text, then the language's message of the same id is
//! formatted with them (of several that read it, the one whose plain arguments hold
//! least). An argument named `why` or `reason` is itself a message and read
//! back in turn; one named `list` is a list, read back item by item; a count the engine
//! grouped with commas is grouped for the language. A message no template matches stays
//! English, never lost.

use super::{engine::regroup, tr, Lang};
use fluent_syntax::ast::{Entry, Expression, InlineExpression, PatternElement};
use std::rc::Rc;

/// A template's parts: literal text, or an argument.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Arg(String),
}

/// One message of `files.ftl`, as a template.
#[derive(Debug)]
struct Template {
    id: String,
    parts: Vec<Part>,
}

thread_local! {
    /// The templates, most literal text first (the most specific wins).
    static TEMPLATES: Rc<Vec<Template>> = Rc::new(templates(include_str!("../../locales/en/files.ftl")));
}

/// The longest message read back.
const MAX_MESSAGE: usize = 4096;

/// How deep messages nest inside each other (`GGUF: tensor "x": …`); deeper stays English.
const MAX_DEPTH: usize = 6;

fn templates(source: &str) -> Vec<Template> {
    let resource = fluent_syntax::parser::parse(source).unwrap_or_else(|(r, _)| r);
    let mut out: Vec<Template> = resource
        .body
        .iter()
        .filter_map(|e| match e {
            Entry::Message(m) => {
                let parts = m.value.as_ref()?.elements.iter().map(|p| match p {
                    PatternElement::TextElement { value } => Some(Part::Text(value.to_string())),
                    PatternElement::Placeable { expression } => match expression {
                        Expression::Inline(InlineExpression::VariableReference { id }) => {
                            Some(Part::Arg(id.name.to_string()))
                        }
                        Expression::Inline(InlineExpression::StringLiteral { value }) => {
                            Some(Part::Text(value.to_string()))
                        }
                        _ => None,
                    },
                });
                Some(Template {
                    id: m.id.name.to_string(),
                    parts: merge(parts.collect::<Option<Vec<_>>>()?),
                })
            }
            _ => None,
        })
        .collect();
    out.sort_by_key(|t| std::cmp::Reverse(t.literal_len()));
    out
}

/// Adjacent literal parts as one.
fn merge(parts: Vec<Part>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for p in parts {
        match (out.last_mut(), p) {
            (Some(Part::Text(a)), Part::Text(b)) => a.push_str(&b),
            (_, p) => out.push(p),
        }
    }
    out
}

impl Template {
    fn literal_len(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.len(),
                Part::Arg(_) => 0,
            })
            .sum()
    }

    /// The arguments read out of `text`, if it is this message.
    fn read<'a>(&'a self, text: &'a str) -> Option<Vec<(&'a str, &'a str)>> {
        let mut got = Vec::new();
        read(&self.parts, text, &mut got).then_some(got)
    }
}

/// Matches `parts` against all of `text`, each argument the shortest that lets the rest
/// match (a name before `: ` ends at the first one).
fn read<'a>(parts: &'a [Part], text: &'a str, got: &mut Vec<(&'a str, &'a str)>) -> bool {
    match parts.split_first() {
        None => text.is_empty(),
        Some((Part::Text(t), rest)) => text
            .strip_prefix(t.as_str())
            .is_some_and(|r| read(rest, r, got)),
        Some((Part::Arg(name), rest)) => match rest.first() {
            None => {
                got.push((name, text));
                !text.is_empty()
            }
            Some(Part::Text(next)) => {
                for (i, _) in text.match_indices(next.as_str()).filter(|(i, _)| *i > 0) {
                    got.push((name, &text[..i]));
                    if read(rest, &text[i..], got) {
                        return true;
                    }
                    got.pop();
                }
                false
            }
            // Two arguments side by side cannot be told apart (the tests hold none).
            Some(Part::Arg(_)) => false,
        },
    }
}

/// `english` in `lang`, if a template of `files.ftl` reads it; English itself comes back
/// as it is.
pub fn read_back(lang: Lang, english: &str) -> Option<String> {
    // The matching backtracks over each argument's possible ends: a message far longer
    // than any the code writes (a pasted link is at most 2,000 characters) stays English.
    if english.len() > MAX_MESSAGE {
        return None;
    }
    TEMPLATES.with(|t| read_back_in(t, lang, english, 0))
}

/// The id of the template that reads `english` (the tests: which message each error is).
#[cfg(test)]
pub(crate) fn id_of(english: &str) -> Option<String> {
    TEMPLATES.with(|t| {
        t.iter()
            .filter_map(|t| t.read(english).map(|g| (t, g)))
            .min_by_key(|(_, g)| plain_len(g))
            .map(|(t, _)| t.id.clone())
    })
}

fn read_back_in(t: &[Template], lang: Lang, english: &str, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    // Of the templates that read it, the one that leaves least in its plain arguments: a
    // message inside another (`tensor "x": tensor wq has a non-finite value …`) is the
    // outer one's `why`, not part of the inner one's name.
    let (template, got) = t
        .iter()
        .filter_map(|t| t.read(english).map(|g| (t, g)))
        .min_by_key(|(_, g)| plain_len(g))?;
    let args: Vec<(&str, String)> = got
        .into_iter()
        .map(|(name, v)| {
            let v = match name {
                "why" | "reason" => read_back_in(t, lang, v, depth + 1).unwrap_or_else(|| v.into()),
                "list" => list(t, lang, v, depth),
                _ => regroup(lang, v),
            };
            (name, v)
        })
        .collect();
    Some(tr(lang).fmt(&template.id, &args))
}

/// How much of a message its plain arguments hold (a `why`'s or a list's is read on).
fn plain_len(got: &[(&str, &str)]) -> usize {
    got.iter()
        .filter(|(name, _)| !matches!(*name, "why" | "reason" | "list"))
        .map(|(_, v)| v.len())
        .sum()
}

/// A list's items, each read back, joined as the language joins them.
fn list(t: &[Template], lang: Lang, v: &str, depth: usize) -> String {
    let sep = if lang == Lang::ZhCn { "，" } else { ", " };
    v.split(", ")
        .map(|item| read_back_in(t, lang, item, depth + 1).unwrap_or_else(|| item.into()))
        .collect::<Vec<_>>()
        .join(sep)
}

#[cfg(test)]
#[path = "tests_files.rs"]
mod tests;
