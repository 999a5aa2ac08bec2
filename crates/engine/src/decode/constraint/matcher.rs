//! The matcher (feature `constraint`): a [`ConstraintSpec`] compiled by llguidance for a
//! vocabulary into a [`Constraint`] that gives each step's mask and follows the tokens. The
//! page's UI thread builds without it (it applies the masks the worker sends): llguidance's
//! C interface (`#[no_mangle]` functions a wasm module exports whether called or not) would
//! add about 500 KB (gzip) to it.

use super::position;
use super::rules::RuleTracker;
use super::{gbnf, Allowed, ConstraintError, ConstraintKind, ConstraintSpec, ConstraintVocab};
use llguidance::api::{StopReason, TopLevelGrammar};
use llguidance::Matcher;

impl ConstraintSpec {
    /// The grammar llguidance compiles, with syntax errors placed (line, column, rule).
    fn grammar(&self) -> Result<TopLevelGrammar, ConstraintError> {
        self.check_size()?;
        let kind = self.what();
        let syntax = |line, column, message: String| ConstraintError::Syntax {
            kind,
            line,
            column,
            rule: None,
            message,
        };
        Ok(match self.kind {
            ConstraintKind::Regex => {
                if let Err(e) = regex_syntax::Parser::new().parse(&self.source) {
                    let (line, column) = match &e {
                        regex_syntax::Error::Parse(p) => {
                            (p.span().start.line, p.span().start.column)
                        }
                        regex_syntax::Error::Translate(t) => {
                            (t.span().start.line, t.span().start.column)
                        }
                        _ => (1, 1),
                    };
                    let message = match &e {
                        regex_syntax::Error::Parse(p) => p.kind().to_string(),
                        regex_syntax::Error::Translate(t) => t.kind().to_string(),
                        other => other.to_string(),
                    };
                    return Err(syntax(line, column, message));
                }
                TopLevelGrammar::from_regex(&self.source)
            }
            ConstraintKind::JsonSchema => {
                let v: serde_json::Value = serde_json::from_str(&self.source).map_err(|e| {
                    let msg = e.to_string();
                    let msg = msg.split(" at line").next().unwrap_or(&msg).to_string();
                    syntax(e.line(), e.column(), msg)
                })?;
                let mut v = match v {
                    serde_json::Value::Bool(true) => serde_json::json!({}),
                    serde_json::Value::Bool(false) => {
                        return Err(ConstraintError::Compile {
                            kind,
                            message: "the schema false admits no instance".into(),
                        })
                    }
                    serde_json::Value::Object(_) => v,
                    _ => {
                        return Err(syntax(
                            1,
                            1,
                            "a JSON Schema is an object (or true/false)".into(),
                        ))
                    }
                };
                // The layout of Python's `json.dumps` (`{"name": "Lily", "age": 5}`) unless
                // the schema's `x-guidance` says otherwise: llguidance's default lets
                // whitespace run free between tokens, and a small model fills it.
                if let Some(o) = v.as_object_mut() {
                    o.entry("x-guidance").or_insert_with(|| {
                        serde_json::json!({
                            "whitespace_flexible": false,
                            "item_separator": ", ",
                            "key_separator": ": ",
                        })
                    });
                }
                TopLevelGrammar::from_json_schema(v)
            }
            ConstraintKind::Grammar => {
                let lark = gbnf::to_lark(&self.source).map_err(|e| ConstraintError::Syntax {
                    kind,
                    line: e.line,
                    column: e.column,
                    rule: e.rule,
                    message: e.message,
                })?;
                TopLevelGrammar::from_lark(lark)
            }
            ConstraintKind::Lark => lark(kind, &self.source)?,
        })
    }

    /// Compiles the constraint for `vocab`. Bounded: the source's size, llguidance's limits
    /// on the grammar's size and on the lexer's work (its "fuel"), so a hostile grammar is
    /// refused rather than left to run.
    pub fn compile(&self, vocab: &ConstraintVocab) -> Result<Constraint, ConstraintError> {
        let grammar = self.grammar()?;
        let kind = self.what();
        let parser = vocab
            .factory()
            .create_parser(grammar)
            .map_err(|e| compile_error(kind, &e.to_string()))?;
        let matcher = Matcher::new(Ok(parser));
        if let Some(e) = matcher.get_error() {
            return Err(compile_error(kind, &e));
        }
        Ok(Constraint {
            spec: self.clone(),
            start: matcher.deep_clone(),
            matcher,
            vocab: vocab.clone(),
            text: Vec::new(),
            cached: None,
            rules: match self.kind {
                ConstraintKind::Grammar => gbnf::to_bnf(&self.source).ok().map(RuleTracker::new),
                _ => None,
            },
        })
    }
}

/// A Lark grammar for llguidance, which compiles a rule's references and a group's
/// parentheses recursively (a chain of rules can overflow the worker's stack): its rules and
/// parentheses bound that depth as [`gbnf::compile_depth`] counts it (every parenthesis as
/// nested, every rule as on the path: more than it can be, never less).
fn lark(kind: &'static str, source: &str) -> Result<TopLevelGrammar, ConstraintError> {
    let rules = source.lines().filter(|l| lark_defines(l)).count();
    let parens = source.matches('(').count();
    let depth = gbnf::compile_depth(rules, parens);
    let limit = gbnf::MAX_COMPILE_DEPTH;
    if depth > limit {
        let message = format!(
            "{rules} rules and {parens} parentheses: deeper than the compiler may go ({depth} of {limit})"
        );
        return Err(ConstraintError::Compile { kind, message });
    }
    Ok(TopLevelGrammar::from_lark(source.to_string()))
}

/// Whether a Lark line defines a rule or a token (`name: ...`, `?name:`, `NAME.2: ...`).
fn lark_defines(line: &str) -> bool {
    let l = line.trim_start().trim_start_matches(['?', '!']);
    let name_end = l
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(l.len());
    name_end > 0 && l[name_end..].trim_start().starts_with(':') && !l.starts_with("//")
}

/// llguidance's message, placed where it says where (`at 3(7): …` from its Lark parser).
fn compile_error(kind: &'static str, message: &str) -> ConstraintError {
    let first = message.lines().next().unwrap_or(message).trim();
    let placed = Some(first.strip_prefix("at ").unwrap_or(first)).and_then(|rest| {
        let (pos, msg) = rest.split_once("): ")?;
        let (line, column) = pos.split_once('(')?;
        Some((line.parse().ok()?, column.parse().ok()?, msg.to_string()))
    });
    match placed {
        Some((line, column, message)) => ConstraintError::Syntax {
            kind,
            line,
            column,
            rule: None,
            message,
        },
        None => ConstraintError::Compile {
            kind,
            message: first.to_string(),
        },
    }
}

/// A compiled constraint following one sequence of tokens.
pub struct Constraint {
    spec: ConstraintSpec,
    matcher: Matcher,
    /// The matcher as compiled (`reset` starts from a copy).
    start: Matcher,
    vocab: ConstraintVocab,
    /// The text's bytes so far (the position's JSON path reads them).
    text: Vec<u8>,
    /// The mask at the current position (computed once, until a token moves it).
    cached: Option<Allowed>,
    /// A GBNF grammar's rule being filled, for the position.
    rules: Option<RuleTracker>,
}

impl Clone for Constraint {
    /// An independent copy (a beam's fork): the matcher deep-cloned.
    fn clone(&self) -> Constraint {
        Constraint {
            spec: self.spec.clone(),
            matcher: self.matcher.deep_clone(),
            start: self.start.deep_clone(),
            vocab: self.vocab.clone(),
            text: self.text.clone(),
            cached: self.cached.clone(),
            rules: self.rules.clone(),
        }
    }
}

impl Constraint {
    pub fn spec(&self) -> &ConstraintSpec {
        &self.spec
    }

    /// The mask at the current position, if computed since the last token.
    pub fn peek(&self) -> Option<&Allowed> {
        self.cached.as_ref()
    }

    /// The tokens allowed next (computed once per position).
    pub fn allowed(&mut self) -> Result<Allowed, ConstraintError> {
        if let Some(a) = &self.cached {
            return Ok(a.clone());
        }
        let start = self.vocab.now();
        // A matcher that failed (not merely stopped) says why rather than allow nothing.
        if let Some(e) = self
            .matcher
            .get_error()
            .filter(|e| !e.starts_with("NoExtension"))
        {
            return Err(ConstraintError::Matcher(first_line(&e)));
        }
        // llguidance stops the matcher when no byte can follow: the text is complete
        // (accepting) or cannot be continued at all (an empty language from here).
        let mask = if self.matcher.is_stopped() {
            None
        } else {
            match self.matcher.compute_mask() {
                Ok(m) => Some(m),
                // (In its error state, whose message is the stop reason's name.)
                Err(e) if e.to_string().starts_with("NoExtension") => None,
                Err(e) => return Err(ConstraintError::Matcher(first_line(&e.to_string()))),
            }
        };
        let n = self.vocab.model_vocab();
        let mut words = vec![0u32; n.div_ceil(32)];
        let mut count = 0;
        let eos = self.vocab.eos() as usize;
        let end = match &mask {
            Some(m) => m.is_allowed(eos as u32),
            None => {
                self.matcher.stop_reason() == StopReason::EndOfSentence
                    || self.matcher.is_accepting().unwrap_or(false)
            }
        };
        if let Some(m) = &mask {
            // The matcher's words for the tokenizer's ids (its length), EOS taken out: the
            // end tokens are set below, together.
            let ids = n.min(m.len());
            for (w, &b) in words.iter_mut().zip(m.as_slice()).take(ids.div_ceil(32)) {
                *w = b;
            }
            if ids % 32 != 0 {
                words[ids / 32] &= (1u32 << (ids % 32)) - 1;
            }
            if eos < ids {
                words[eos / 32] &= !(1 << (eos % 32));
            }
            count = words.iter().map(|w| w.count_ones() as usize).sum();
        }
        if end {
            for &t in self.vocab.end_tokens() {
                let t = t as usize;
                if t < n && words[t / 32] >> (t % 32) & 1 == 0 {
                    words[t / 32] |= 1 << (t % 32);
                    count += 1;
                }
            }
        }
        let rule = self.rules.as_ref().and_then(RuleTracker::rule);
        let here = position::Here {
            kind: self.spec.kind,
            text: &self.text,
            rule: rule.as_deref(),
        };
        let position = position::describe(&here, &words, &self.vocab, end);
        let allowed = Allowed {
            words,
            count,
            end,
            ms: self.vocab.now() - start,
            position,
        };
        self.cached = Some(allowed.clone());
        Ok(allowed)
    }

    /// Follows `token`; a token the constraint does not allow is refused and leaves the
    /// constraint where it was.
    pub fn advance(&mut self, token: u32) -> Result<(), ConstraintError> {
        let vocab = self.vocab.clone();
        let rejected = || ConstraintError::Rejected {
            token,
            piece: vocab.piece_text(token),
        };
        if self.vocab.end_tokens().contains(&token) {
            if !self.allowed()?.end {
                return Err(rejected());
            }
            if !self.matcher.is_stopped() {
                let eos = self.vocab.eos();
                self.matcher
                    .consume_token(eos)
                    .map_err(|e| ConstraintError::Matcher(first_line(&e.to_string())))?;
            }
        } else {
            // (An id past the tokenizer's would put the matcher in its error state for good.)
            let ok = (token as usize) < self.vocab.tokenizer_vocab()
                && !self.matcher.is_stopped()
                && self.matcher.validate_tokens(&[token]).unwrap_or(0) == 1;
            if !ok {
                return Err(rejected());
            }
            self.matcher
                .consume_token(token)
                .map_err(|e| ConstraintError::Matcher(first_line(&e.to_string())))?;
            self.text.extend_from_slice(self.vocab.bytes(token));
            if let Some(r) = &mut self.rules {
                r.feed(self.vocab.bytes(token));
            }
        }
        self.cached = None;
        Ok(())
    }

    /// Whether the text so far is a complete instance (it may end here).
    pub fn is_complete(&mut self) -> bool {
        self.allowed().is_ok_and(|a| a.end)
    }

    /// Back to the start (the prompt's end): a copy of the matcher as compiled, so that one
    /// that stopped or failed (llguidance's error state is for good) starts afresh.
    pub fn reset(&mut self) -> Result<(), ConstraintError> {
        self.matcher = self.start.deep_clone();
        self.text.clear();
        self.cached = None;
        if let Some(r) = &mut self.rules {
            r.reset();
        }
        Ok(())
    }

    /// Follows `tokens` from the start.
    pub fn replay(&mut self, tokens: &[u32]) -> Result<(), ConstraintError> {
        self.reset()?;
        tokens.iter().try_for_each(|&t| self.advance(t))
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).to_string()
}
