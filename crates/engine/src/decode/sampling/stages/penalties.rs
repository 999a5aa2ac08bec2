//! The penalties on tokens already seen: repetition (CTRL), frequency and presence (OpenAI),
//! with the window they share, and Hugging Face's no-repeat-n-gram ban. Each peer puts them
//! first, after the logit bias: transformers `_get_logits_processor` (RepetitionPenalty,
//! NoRepeatNGram, …), llama.cpp's penalties sampler (repeat, then frequency and presence),
//! vLLM's `apply_penalties`. (No-repeat-n-gram is not a llama.cpp or OpenAI sampler; it sits
//! with the penalties.)
//!
//! The repetition penalty sees the prompt and the output in every peer (HF's
//! `RepetitionPenaltyLogitsProcessor` gathers over `input_ids`; llama.cpp's penalties sampler
//! is fed the prompt's tokens too; vLLM masks `prompt_mask | output_mask`); the frequency and
//! presence penalties see what the profile's `frequency_presence_scope` says.

use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec, PeerDefault};
use crate::decode::sampling::profile::{Profile, Scope};
use crate::decode::sampling::settings::{Settings, MAX_MAGNITUDE};
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};
use std::collections::HashMap;

#[allow(non_upper_case_globals)]
impl Knob {
    pub const RepetitionPenalty: Knob = Knob::new("repetition_penalty");
    pub const FrequencyPenalty: Knob = Knob::new("frequency_penalty");
    pub const PresencePenalty: Knob = Knob::new("presence_penalty");
    pub const PenaltyWindow: Knob = Knob::new("penalty_window");
    pub const NoRepeatNgram: Knob = Knob::new("no_repeat_ngram");
}

const REP: Stage = Stage::new("repetition_penalty");
const FREQ: Stage = Stage::new("frequency_penalty");
const PRES: Stage = Stage::new("presence_penalty");
const NGRAM: Stage = Stage::new("no_repeat_ngram");

fn non_negative(n: i64) -> Result<(), &'static str> {
    (n >= 0).then_some(()).ok_or("must be ≥ 0")
}

fn magnitude(x: f64) -> Result<(), &'static str> {
    (x.abs() <= MAX_MAGNITUDE)
        .then_some(())
        .ok_or("must be in [-10000, 10000]")
}

/// The OpenAI API reference: penalties in [−2.0, 2.0].
const OPENAI: &[(Profile, f64)] = &[(Profile::OpenAi, 2.0)];

pub static REPETITION: StageDef = StageDef {
    stage: REP,
    knobs: &[KnobSpec::of_stage(
        REP,
        "repetition_penalty",
        "Repetition penalty",
        "CTRL, > 0: seen tokens' positive logits ÷, negative ×; 1 = off",
        "1.3",
        slider(0.5, 2.0, 0.01),
        Kind::Float(|x| {
            if x <= 0.0 {
                Err("must be > 0 (1 = off)")
            } else if !(1.0 / MAX_MAGNITUDE..=MAX_MAGNITUDE).contains(&x) {
                Err("must be in [0.0001, 10000] (1 = off)")
            } else {
                Ok(())
            }
        }),
        &["1"],
    )
        .aliases(&["repeat_penalty"])],
    places: Places::all(20),
    replaces_chain: None,
    rule: &Penalty(Kind_::Repetition),
    aliases: &[],
};

pub static FREQUENCY: StageDef = StageDef {
    stage: FREQ,
    knobs: &[KnobSpec::of_stage(
        FREQ,
        "frequency_penalty",
        "Frequency penalty",
        "subtract count × α from seen tokens' logits",
        "0.5",
        slider(-2.0, 2.0, 0.05),
        Kind::Float(magnitude),
        &["0"],
    )
    .bounds(OPENAI)],
    places: Places::all(30),
    replaces_chain: None,
    rule: &Penalty(Kind_::Frequency),
    aliases: &[],
};

pub static PRESENCE: StageDef = StageDef {
    stage: PRES,
    knobs: &[
        KnobSpec::of_stage(
            PRES,
            "presence_penalty",
            "Presence penalty",
            "subtract α from seen tokens' logits",
            "-0.5",
            slider(-2.0, 2.0, 0.05),
            Kind::Float(magnitude),
            &["0"],
        )
        .bounds(OPENAI),
        // The three penalties' window (llama.cpp's `penalty_last_n`), listed with the last.
        KnobSpec::of_stage(
            PRES,
            "penalty_window",
            "Penalty window",
            "how many recent tokens the penalties see; 0 = all",
            "64",
            slider(0.0, 512.0, 1.0),
            Kind::Int(non_negative),
            &["0"],
        )
        .aliases(&["repeat_last_n"])
        // llama.cpp `common_params_sampling`: `penalty_last_n = 64`.
        .peers(&[PeerDefault {
            profile: Profile::LlamaCpp,
            value: "64",
            sampling_only: false,
        }]),
    ],
    places: Places::all(40),
    replaces_chain: None,
    rule: &Penalty(Kind_::Presence),
    aliases: &[],
};

pub static NO_REPEAT_NGRAM: StageDef = StageDef {
    stage: NGRAM,
    knobs: &[KnobSpec::of_stage(
        NGRAM,
        "no_repeat_ngram",
        "No-repeat n-gram",
        "ban tokens that would repeat an n-gram; 0 = off",
        "3",
        slider(0.0, 6.0, 1.0),
        Kind::Int(non_negative),
        &["0"],
    )],
    places: Places::all(50),
    replaces_chain: None,
    rule: &Ngram,
    aliases: &[],
};

#[derive(Clone, Copy)]
enum Kind_ {
    Repetition,
    Frequency,
    Presence,
}

struct Penalty(Kind_);

impl Rule for Penalty {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let s = cx.settings;
        let window = s.count(Knob::PenaltyWindow);
        let scope = counted_scope(s.profile);
        match self.0 {
            Kind_::Repetition => repetition_penalty(
                z,
                &cx.history.seen(Scope::PromptAndOutput, window),
                s.num(Knob::RepetitionPenalty),
            ),
            Kind_::Frequency => frequency_penalty(
                z,
                &cx.history.seen(scope, window),
                s.num(Knob::FrequencyPenalty),
            ),
            Kind_::Presence => presence_penalty(
                z,
                &cx.history.seen(scope, window),
                s.num(Knob::PresencePenalty),
            ),
        }
        Cut::default()
    }

    fn describe(&self, def: &StageDef, s: &Settings) -> String {
        s.text(def.main_knob())
    }
}

/// The tokens the frequency and presence penalties see, by peer. llama.cpp's penalties
/// sampler counts the last `penalty_last_n` accepted tokens, the prompt's too. vLLM
/// `apply_penalties`: frequency × output_bin_counts and presence × output_mask (output
/// only), as the OpenAI API documents. `generate()` has no frequency or presence
/// processor: the hf profile applies them as the lesson does (prompt + output).
fn counted_scope(p: Profile) -> Scope {
    match p {
        Profile::OpenAi => Scope::OutputOnly,
        Profile::Lesson | Profile::Hf | Profile::LlamaCpp => Scope::PromptAndOutput,
    }
}

struct Ngram;

impl Rule for Ngram {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        no_repeat_ngram(z, &cx.history.all(), cx.settings.count(Knob::NoRepeatNgram));
        Cut::default()
    }
}

/// Counts of each token in `seen`.
fn counts(seen: &[u32]) -> HashMap<u32, u32> {
    let mut c = HashMap::new();
    for &t in seen {
        *c.entry(t).or_insert(0) += 1;
    }
    c
}

/// Repetition penalty (CTRL, Keskar et al. 2019): every distinct token in `seen`, once, has a
/// positive logit divided by `penalty` and a negative one multiplied by it (so a penalty > 1
/// always makes it less likely). HF, llama.cpp and vLLM agree (a zero logit stays zero).
pub fn repetition_penalty(z: &mut [f64], seen: &[u32], penalty: f64) {
    for &t in counts(seen).keys() {
        if let Some(v) = z.get_mut(t as usize) {
            *v = if *v > 0.0 { *v / penalty } else { *v * penalty };
        }
    }
}

/// Frequency penalty (OpenAI): z[t] −= count(t) × α.
pub fn frequency_penalty(z: &mut [f64], seen: &[u32], alpha: f64) {
    for (&t, &n) in &counts(seen) {
        if let Some(v) = z.get_mut(t as usize) {
            *v -= n as f64 * alpha;
        }
    }
}

/// Presence penalty (OpenAI): z[t] −= α if t appeared at all.
pub fn presence_penalty(z: &mut [f64], seen: &[u32], alpha: f64) {
    for &t in counts(seen).keys() {
        if let Some(v) = z.get_mut(t as usize) {
            *v -= alpha;
        }
    }
}

/// No-repeat-n-gram (HF `NoRepeatNGramLogitsProcessor`): bans every token that would complete
/// an n-gram already present in `history`.
pub fn no_repeat_ngram(z: &mut [f64], history: &[u32], n: usize) {
    if n == 0 || history.len() + 1 < n {
        return;
    }
    let prefix = &history[history.len() + 1 - n..];
    for w in history.windows(n) {
        if &w[..n - 1] == prefix {
            if let Some(v) = z.get_mut(w[n - 1] as usize) {
                *v = f64::NEG_INFINITY;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_repeat_ngram_bans_completions() {
        // history 1 1 2 1: bigrams (1,1), (1,2), (2,1); last token 1 → ban 1 and 2.
        let mut z = vec![0.0; 3];
        no_repeat_ngram(&mut z, &[1, 1, 2, 1], 2);
        assert_eq!(z[0], 0.0);
        assert!(z[1].is_infinite() && z[2].is_infinite());
    }
}
