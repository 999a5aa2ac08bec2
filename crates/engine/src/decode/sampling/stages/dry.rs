//! DRY, "don't repeat yourself" (p-e-w, text-generation-webui #5677), as llama.cpp's
//! `llama_sampler_init_dry` / `llama_sampler_dry_apply` implement it: a token that would
//! extend a sequence already seen in the window is penalised by
//! `multiplier · base^(n − allowed_length)`, n being the length of the longest such repeat
//! (counted without the new token), once n ≥ `allowed_length`.
//!
//! llama.cpp's details, kept:
//! - The window is the last `dry_penalty_last_n` tokens of prompt and output (0: off; the
//!   llama.cpp that llama-cpp-python 0.3.36 vendors, 0c1e57098, clamps −1 to 0 where older
//!   ones read it as the whole context, and its CLI refuses negatives: so does this); with
//!   `window ≤ allowed_length` nothing happens.
//! - Sequence breakers (default `\n`, `:`, `"`, `*`) end a repeat: scanning back from the
//!   newest token, the first breaker found caps every repeat length at the distance to it
//!   (`rep_limit`); below `allowed_length`, nothing happens. A breaker is found as a token
//!   whose text contains it (a single-token breaker), or one whose text ends with a prefix
//!   of it followed by the tokens of the rest (`get_overlapping_token_sequences`, the rest
//!   cut to 20 tokens). A single-token breaker is never penalised itself.
//! - Each breaker is at most 40 bytes (llama.cpp truncates longer ones with a warning; here
//!   they are refused), and `none` clears the list (`--dry-sequence-breaker none`).
//! - The repeat lengths are llama.cpp's reverse Z-algorithm; here the plain Z-function of the
//!   reversed window, which gives the same lengths.
//! - The exponent is capped so that base^exponent stays within f32 (88.72 / ln base).

use crate::decode::sampling::chain::TokenText;
use crate::decode::sampling::knobs::{slider, Control, Kind, Knob, KnobSpec};
use crate::decode::sampling::settings::{Settings, MAX_MAGNITUDE};
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};
use std::collections::HashMap;
use std::rc::Rc;

#[allow(non_upper_case_globals)]
impl Knob {
    pub const DryMultiplier: Knob = Knob::new("dry_multiplier");
    pub const DryBase: Knob = Knob::new("dry_base");
    pub const DryAllowedLength: Knob = Knob::new("dry_allowed_length");
    pub const DryPenaltyLastN: Knob = Knob::new("dry_penalty_last_n");
    pub const DrySequenceBreaker: Knob = Knob::new("dry_sequence_breaker");
}

const STAGE: Stage = Stage::new("dry_multiplier");

/// llama.cpp's `MAX_CHAR_LEN` of a breaker, in bytes.
pub const MAX_BREAKER_BYTES: usize = 40;
/// llama.cpp's `MAX_SEQ_LEN`: a breaker's tail is cut to this many tokens.
const MAX_TAIL_TOKENS: usize = 20;

pub static DRY: StageDef = StageDef {
    stage: STAGE,
    knobs: &[
        KnobSpec::of_stage(
            STAGE,
            "dry_multiplier",
            "DRY multiplier",
            "penalise tokens that extend a repeat: multiplier × base^(length − allowed), ≥ 0; \
             0 = off (llama.cpp's)",
            "0.8",
            slider(0.0, 3.0, 0.05),
            Kind::Float(|x| {
                (0.0..=MAX_MAGNITUDE)
                    .contains(&x)
                    .then_some(())
                    .ok_or("must be in [0, 10000] (0 = off)")
            }),
            // llama.cpp `common_params_sampling`: `dry_multiplier = 0.0f` (off).
            &["0"],
        ),
        KnobSpec::of_stage(
            STAGE,
            "dry_base",
            "DRY base",
            "how fast the penalty grows with the repeat's length, ≥ 1 (llama.cpp's 1.75)",
            "2",
            slider(1.0, 4.0, 0.05),
            Kind::Float(|x| {
                (1.0..=100.0)
                    .contains(&x)
                    .then_some(())
                    .ok_or("must be in [1, 100]")
            }),
            &["1.75"],
        ),
        KnobSpec::of_stage(
            STAGE,
            "dry_allowed_length",
            "DRY allowed length",
            "repeats up to this long go unpenalised (llama.cpp's 2)",
            "3",
            slider(0.0, 10.0, 1.0),
            Kind::Int(|n| (n >= 0).then_some(()).ok_or("must be ≥ 0")),
            &["2"],
        ),
        KnobSpec::of_stage(
            STAGE,
            "dry_penalty_last_n",
            "DRY window",
            "how many recent tokens DRY scans; 0 = off (llama.cpp's 64)",
            "128",
            slider(0.0, 512.0, 1.0),
            Kind::Int(|n| (n >= 0).then_some(()).ok_or("must be ≥ 0 (0 = off)")),
            // llama.cpp `common_params_sampling`: `dry_penalty_last_n = 64`.
            &["64"],
        ),
        KnobSpec::of_stage(
            STAGE,
            "dry_sequence_breaker",
            "DRY sequence breakers",
            "text that ends a repeat, ≤ 40 bytes each, \\n for a newline; repeated; none = no \
             breakers",
            "none",
            Control::List { sep: ',' },
            Kind::Texts(check_breaker),
            // llama.cpp: `dry_sequence_breakers = {"\n", ":", "\"", "*"}`.
            &["\\n", ":", "\"", "*"],
        ),
    ],
    // llama.cpp's order (`common_params_sampling::samplers`): right after the penalties. Not
    // a setting of the others; there it sits with the penalties too.
    places: Places {
        lesson: 55,
        hf: 55,
        llama_cpp: 55,
        openai: 55,
    },
    replaces_chain: None,
    rule: &Dry,
    aliases: &["dry"],
};

/// The breakers in force: those after the last `none` (llama.cpp's CLI clears the list at
/// `none` and goes on adding).
fn after_none(breakers: &[String]) -> &[String] {
    match breakers.iter().rposition(|b| b == "none") {
        Some(i) => &breakers[i + 1..],
        None => breakers,
    }
}

/// A breaker as typed: `\n`, `\t`, `\\` and `\"` are escapes.
pub fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn check_breaker(s: &str) -> Result<(), String> {
    let b = unescape(s);
    if b.is_empty() {
        Err("a sequence breaker cannot be empty".into())
    } else if b.len() > MAX_BREAKER_BYTES {
        Err(format!(
            "a sequence breaker is at most {MAX_BREAKER_BYTES} bytes (llama.cpp's limit); \
             {s:?} has {}",
            b.len()
        ))
    } else {
        Ok(())
    }
}

struct Dry;

impl Rule for Dry {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let s = cx.settings;
        let p = Params {
            multiplier: s.num(Knob::DryMultiplier),
            base: s.num(Knob::DryBase),
            allowed: s.count(Knob::DryAllowedLength),
            last_n: s.count(Knob::DryPenaltyLastN),
        };
        let breakers = match cx.history.vocab {
            Some(v) => processed(v, s.texts(Knob::DrySequenceBreaker)),
            None => Rc::new(Breakers::default()),
        };
        let all = cx.history.all();
        // A step where nothing repeats long enough still reports its zeros, so the state
        // chart's lines run through every step.
        match dry(z, &all, &p, &breakers) {
            Some(h) => Cut {
                token: Some(h.token),
                ..Cut::default()
                    .with("longest repeat", h.longest as f64)
                    .with("penalty", h.penalty)
                    .with("tokens penalised", h.count as f64)
            },
            None => Cut::default()
                .with("longest repeat", 0.0)
                .with("penalty", 0.0)
                .with("tokens penalised", 0.0),
        }
    }

    /// Its sequence breakers are text: found in the tokens' text.
    fn reads_text(&self, s: &Settings) -> bool {
        !after_none(s.texts(Knob::DrySequenceBreaker)).is_empty()
    }

    fn is_neutral(&self, _: &StageDef, s: &Settings) -> bool {
        s.num(Knob::DryMultiplier) == 0.0 || s.num(Knob::DryPenaltyLastN) == 0.0
    }

    fn describe(&self, def: &StageDef, s: &Settings) -> String {
        let mut parts = vec![s.text(def.main_knob())];
        for k in &def.knobs[1..] {
            if !s.is_default(k.knob) {
                parts.push(format!(
                    "{}={}",
                    k.name,
                    s.value(k.knob).entries().join("|")
                ));
            }
        }
        parts.join(" ")
    }
}

/// DRY's numbers.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub multiplier: f64,
    pub base: f64,
    pub allowed: usize,
    /// The window; 0: off.
    pub last_n: usize,
}

/// The processed breakers: head token → the tails that must follow it (an empty tail: the
/// token is a breaker by itself).
#[derive(Debug, Default)]
pub struct Breakers(HashMap<u32, Vec<Vec<u32>>>);

impl Breakers {
    /// llama.cpp's `get_overlapping_token_sequences` for each breaker over the vocabulary.
    pub fn new(vocab: &dyn TokenText, breakers: &[String]) -> Breakers {
        let mut map: HashMap<u32, Vec<Vec<u32>>> = HashMap::new();
        let strs: Vec<String> = after_none(breakers).iter().map(|b| unescape(b)).collect();
        for id in 0..vocab.vocab_size() as u32 {
            let word = vocab.text(id);
            for s in strs.iter().filter(|s| !s.is_empty()) {
                let s = s.as_bytes();
                if find(&word, s).is_some() {
                    let e = map.entry(id).or_default();
                    if !e.contains(&Vec::new()) {
                        e.push(Vec::new());
                    }
                    continue;
                }
                for pos in (0..word.len()).filter(|&p| word[p] == s[0]) {
                    let mut i = 1;
                    let mut matched = true;
                    while i < s.len() && i + pos < word.len() {
                        if word[pos + i] != s[i] {
                            matched = false;
                            break;
                        }
                        i += 1;
                    }
                    if !matched {
                        continue;
                    }
                    let tail = String::from_utf8_lossy(&s[i..]);
                    let mut t = vocab.tokenize(&tail);
                    t.truncate(MAX_TAIL_TOKENS);
                    let e = map.entry(id).or_default();
                    if !e.contains(&t) {
                        e.push(t);
                    }
                }
            }
        }
        Breakers(map)
    }

    fn single(&self, id: u32) -> bool {
        self.0.get(&id).is_some_and(|t| t.iter().any(Vec::is_empty))
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Breakers processed for a vocabulary (by fingerprint) and a list.
type Processed = Option<(u64, Vec<String>, Rc<Breakers>)>;

thread_local! {
    /// The last breakers processed, by vocabulary and list: a walk over the vocabulary is
    /// made once per model and breaker list, not at every step.
    static PROCESSED: std::cell::RefCell<Processed> = const { std::cell::RefCell::new(None) };
}

fn processed(vocab: &dyn TokenText, breakers: &[String]) -> Rc<Breakers> {
    let key = vocab.fingerprint();
    PROCESSED.with(|p| {
        if let Some((k, b, done)) = &*p.borrow() {
            if *k == key && b == breakers {
                return done.clone();
            }
        }
        let done = Rc::new(Breakers::new(vocab, breakers));
        *p.borrow_mut() = Some((key, breakers.to_vec(), done.clone()));
        done
    })
}

/// What DRY did at a step: the longest repeat it penalised, the token that would have
/// extended it and its penalty, and how many tokens it penalised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub longest: usize,
    pub token: u32,
    pub penalty: f64,
    pub count: usize,
}

/// The rule over `history` (prompt then output).
pub fn dry(z: &mut [f64], history: &[u32], p: &Params, breakers: &Breakers) -> Option<Hit> {
    if p.multiplier == 0.0 || p.base < 1.0 || p.last_n == 0 {
        return None;
    }
    let n = history.len().min(p.last_n);
    if n <= p.allowed {
        return None;
    }
    // r[0] is the newest token (llama.cpp's `last_tokens.rat(0)`).
    let r: Vec<u32> = history[history.len() - n..].iter().rev().copied().collect();
    let mut rep_limit = n;
    for i in 0..n {
        let Some(tails) = breakers.0.get(&r[i]) else {
            continue;
        };
        let longest = tails
            .iter()
            .filter(|t| t.len() <= i && (0..t.len()).all(|o| t[o] == r[i - o - 1]))
            .map(Vec::len)
            .max();
        if let Some(m) = longest {
            rep_limit = i - m;
            break;
        }
    }
    if rep_limit < p.allowed {
        return None;
    }
    let zf = z_function(&r);
    let mut max_repeat: HashMap<u32, usize> = HashMap::new();
    for k in 1..n {
        let len = zf[k].min(rep_limit);
        if len >= p.allowed {
            let next = r[k - 1];
            let e = max_repeat.entry(next).or_insert(0);
            *e = (*e).max(len);
        }
    }
    let max_exp = if p.base > 1.000_001 {
        (88.722_839_1 / p.base.ln()) as usize
    } else {
        0
    };
    let mut hit: Option<Hit> = None;
    let mut ids: Vec<(&u32, &usize)> = max_repeat.iter().collect();
    ids.sort();
    for (&id, &len) in ids {
        if breakers.single(id) || !z.get(id as usize).is_some_and(|v| v.is_finite()) {
            continue;
        }
        let mut e = len - p.allowed;
        if max_exp > 0 && e > max_exp {
            e = max_exp;
        }
        let penalty = p.multiplier * p.base.powi(e as i32);
        z[id as usize] -= penalty;
        let count = hit.map_or(0, |h| h.count) + 1;
        hit = match hit {
            Some(h) if h.longest >= len => Some(Hit { count, ..h }),
            _ => Some(Hit {
                longest: len,
                token: id,
                penalty,
                count,
            }),
        };
    }
    hit
}

/// z[k] = the length of the longest common prefix of `s` and `s[k..]` (z[0] = len).
fn z_function(s: &[u32]) -> Vec<usize> {
    let n = s.len();
    let mut z = vec![0; n];
    if n == 0 {
        return z;
    }
    z[0] = n;
    let (mut l, mut r) = (0, 0);
    for i in 1..n {
        if i < r {
            z[i] = (r - i).min(z[i - l]);
        }
        while i + z[i] < n && s[z[i]] == s[i + z[i]] {
            z[i] += 1;
        }
        if i + z[i] > r {
            l = i;
            r = i + z[i];
        }
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Z-function against the plain definition on every short sequence over {0, 1}.
    #[test]
    fn z_function_is_the_longest_common_prefix() {
        for len in 1..10u32 {
            for bits in 0..(1u32 << len) {
                let s: Vec<u32> = (0..len).map(|i| (bits >> i) & 1).collect();
                let z = z_function(&s);
                for k in 1..s.len() {
                    let plain = (0..s.len() - k).take_while(|&j| s[j] == s[j + k]).count();
                    assert_eq!(z[k], plain, "{s:?} at {k}");
                }
            }
        }
    }

    /// History 1 2 3 4 1 2 3: the repeat "1 2 3" (length 3) would continue with 4. With
    /// allowed length 2 the penalty is 0.8 × 1.75^(3 − 2) = 1.4, on token 4 only.
    #[test]
    fn penalises_the_token_that_extends_a_repeat() {
        let mut z = vec![0.0; 6];
        let p = Params {
            multiplier: 0.8,
            base: 1.75,
            allowed: 2,
            last_n: 64,
        };
        let hit = dry(&mut z, &[1, 2, 3, 4, 1, 2, 3], &p, &Breakers::default()).unwrap();
        assert_eq!((hit.longest, hit.token, hit.count), (3, 4, 1));
        assert!((z[4] + 1.4).abs() < 1e-12);
        assert!(z.iter().enumerate().all(|(i, &v)| i == 4 || v == 0.0));
        // A breaker (token 2 by itself) one token back caps repeats at 1 < 2: nothing.
        let mut z = vec![0.0; 6];
        let b = Breakers(HashMap::from([(2, vec![vec![]])]));
        assert!(dry(&mut z, &[1, 2, 3, 4, 1, 2, 3], &p, &b).is_none());
        // A window of 4 sees only 4 1 2 3: no repeat.
        let p4 = Params { last_n: 4, ..p };
        assert!(dry(&mut z, &[1, 2, 3, 4, 1, 2, 3], &p4, &Breakers::default()).is_none());
    }

    #[test]
    fn none_clears_the_breakers_before_it() {
        let v = |e: &[&str]| e.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(after_none(&v(&["\\n", "none", ":"])), v(&[":"]));
        assert!(after_none(&v(&[":", "none"])).is_empty());
        assert_eq!(after_none(&v(&[":"])), v(&[":"]));
    }

    #[test]
    fn breakers_are_checked_and_unescaped() {
        assert_eq!(unescape("\\n"), "\n");
        assert!(check_breaker("\\n").is_ok());
        assert!(check_breaker("").is_err());
        let long = "x".repeat(41);
        assert!(check_breaker(&long)
            .unwrap_err()
            .contains("at most 40 bytes"));
    }
}
