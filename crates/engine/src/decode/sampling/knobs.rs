//! Every decoding knob, defined once: its name (the URL key, the form field, and with '-' the
//! CLI flag), label, help text, the control the page draws for it, the stage that reads it,
//! the command-line group it belongs to, and its category in the lesson's table (lesson 10,
//! section 6: parameters are [LEARNED], configuration [CONFIG], transient values [STATE]).
//!
//! The CLI's flags (`src/knobs.rs`), the URL query (`decoding_page::page::link`), the page's
//! controls (`crates/app/src/ui/knobs.rs`) and validation (`RawSettings`) all walk [`KNOBS`];
//! adding a knob is one entry here plus its rule in `RawSettings::validate`.

use super::stage::Stage;
use serde::{Deserialize, Serialize};

/// The lesson's three kinds of quantity (lesson 10, section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Category {
    /// Learned by training, frozen at inference: the weights θ.
    Learned,
    /// Chosen by whoever runs the model: every knob.
    Config,
    /// Produced while running: logits, the cache, the transcript.
    State,
}

impl Category {
    /// The badge text.
    pub fn tag(self) -> &'static str {
        match self {
            Category::Learned => "[LEARNED]",
            Category::Config => "[CONFIG]",
            Category::State => "[STATE]",
        }
    }
}

/// A knob, by identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Knob {
    Temperature,
    TopK,
    TopP,
    MinP,
    TypicalP,
    RepetitionPenalty,
    FrequencyPenalty,
    PresencePenalty,
    PenaltyWindow,
    LogitBias,
    NoRepeatNgram,
    MaxTokens,
    Stop,
    Seed,
    Profile,
    Order,
    Strategy,
    Beams,
    LengthPenalty,
    EarlyStopping,
    NumReturn,
}

/// How the page lets the user set a knob.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Control {
    /// A slider over [min, max] in steps, beside a text box that takes any text.
    Slider { min: f64, max: f64, step: f64 },
    /// One line of text.
    Text,
    /// Several values, one per entry, split at `sep` in the form.
    List { sep: char },
    /// One of a few words.
    Choice(&'static [&'static str]),
    /// A check box (true / false).
    Check,
}

/// Which command-line subcommands take the knob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliGroup {
    /// `generate`, `next` and `sample`.
    Sampling,
    /// `beam` only.
    Beam,
    /// Both (max tokens).
    Both,
}

/// One knob's definition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KnobSpec {
    pub knob: Knob,
    /// URL key and form field (snake_case); the CLI flag is this with '-' for '_'.
    pub name: &'static str,
    pub label: &'static str,
    pub help: &'static str,
    /// A valid value other than the default (the text box's placeholder; the round-trip
    /// tests use it).
    pub example: &'static str,
    pub control: Control,
    /// The sampling stage the knob sets, if it sets one.
    pub stage: Option<Stage>,
    pub cli: CliGroup,
    /// Cleared with the strategy (the beam knobs only mean something for beam search).
    pub with_strategy: bool,
    pub category: Category,
}

const fn knob(
    knob: Knob,
    name: &'static str,
    label: &'static str,
    help: &'static str,
    example: &'static str,
    control: Control,
    stage: Option<Stage>,
) -> KnobSpec {
    KnobSpec {
        knob,
        name,
        label,
        help,
        example,
        control,
        stage,
        cli: CliGroup::Sampling,
        with_strategy: false,
        category: Category::Config,
    }
}

const fn beam_knob(k: KnobSpec) -> KnobSpec {
    KnobSpec {
        cli: CliGroup::Beam,
        with_strategy: true,
        ..k
    }
}

const fn slider(min: f64, max: f64, step: f64) -> Control {
    Control::Slider { min, max, step }
}

use Knob as K;
use Stage as S;

/// Every knob, in the order the page and `--help` list them.
#[rustfmt::skip]
pub const KNOBS: [KnobSpec; 21] = [
    knob(K::Temperature, "temperature", "Temperature T",
        "softmax(z / T), ≥ 0; 0 = greedy, 1 = the model's distribution", "0.7",
        slider(0.0, 2.0, 0.01), Some(S::Temperature)),
    knob(K::TopK, "top_k", "Top-k", "keep the k most likely tokens; 0 = off", "40",
        slider(0.0, 100.0, 1.0), Some(S::TopK)),
    knob(K::TopP, "top_p", "Top-p (nucleus)",
        "keep the smallest set with mass ≥ p, in (0, 1]; 1 = off", "0.9",
        slider(0.01, 1.0, 0.01), Some(S::TopP)),
    knob(K::MinP, "min_p", "Min-p", "drop tokens below p × the top probability, in [0, 1]", "0.05",
        slider(0.0, 1.0, 0.01), Some(S::MinP)),
    knob(K::TypicalP, "typical_p", "Typical-p", "locally typical mass, in (0, 1]; 1 = off", "0.95",
        slider(0.01, 1.0, 0.01), Some(S::TypicalP)),
    knob(K::RepetitionPenalty, "repetition_penalty", "Repetition penalty",
        "CTRL, > 0: seen tokens' positive logits ÷, negative ×; 1 = off", "1.3",
        slider(0.5, 2.0, 0.01), Some(S::RepetitionPenalty)),
    knob(K::FrequencyPenalty, "frequency_penalty", "Frequency penalty",
        "subtract count × α from seen tokens' logits", "0.5", slider(-2.0, 2.0, 0.05),
        Some(S::FrequencyPenalty)),
    knob(K::PresencePenalty, "presence_penalty", "Presence penalty",
        "subtract α from seen tokens' logits", "-0.5", slider(-2.0, 2.0, 0.05),
        Some(S::PresencePenalty)),
    knob(K::PenaltyWindow, "penalty_window", "Penalty window",
        "how many recent tokens the penalties see; 0 = all", "64", slider(0.0, 512.0, 1.0), None),
    knob(K::LogitBias, "logit_bias", "Logit bias",
        "ID:VALUE added to a token's logit, comma-separated or repeated (2:-100 bans EOS)",
        "2:-100",
        Control::List { sep: ',' }, Some(S::LogitBias)),
    knob(K::NoRepeatNgram, "no_repeat_ngram", "No-repeat n-gram",
        "ban tokens that would repeat an n-gram; 0 = off", "3", slider(0.0, 6.0, 1.0),
        Some(S::NoRepeatNgram)),
    KnobSpec {
        cli: CliGroup::Both,
        ..knob(K::MaxTokens, "max_tokens", "Max tokens", "stop after this many new tokens", "40",
            Control::Text, None)
    },
    knob(K::Stop, "stop", "Stop sequences",
        "stop when the generated text contains this; one per line or repeated", ".",
        Control::List { sep: '\n' }, None),
    knob(K::Seed, "seed", "Seed", "the coin's seed: same seed, same tokens", "42", Control::Text,
        None),
    knob(K::Profile, "profile", "Profile",
        "lesson, hf, llama.cpp or openai: whose stage order, boundary rules and defaults to follow",
        "llama.cpp", Control::Choice(&["lesson", "hf", "llama.cpp", "openai"]), None),
    knob(K::Order, "order", "Chain order", "the chain's stages in order, comma-separated",
        "logit_bias,repetition_penalty,frequency_penalty,presence_penalty,no_repeat_ngram,\
         top_k,top_p,min_p,typical_p,temperature",
        Control::Text, None),
    KnobSpec {
        with_strategy: true,
        ..knob(K::Strategy, "strategy", "Strategy", "sample, greedy or beam", "greedy",
            Control::Choice(&["sample", "greedy", "beam"]), None)
    },
    beam_knob(knob(K::Beams, "beams", "Beam width k", "hypotheses kept at each step, 1..=16", "3",
        slider(1.0, 8.0, 1.0), None)),
    beam_knob(knob(K::LengthPenalty, "length_penalty", "Length penalty",
        "Hugging Face's: score = sum_logprobs / length^length_penalty", "0.5",
        slider(-1.0, 3.0, 0.1), None)),
    beam_knob(knob(K::EarlyStopping, "early_stopping", "Early stopping",
        "stop as soon as k hypotheses have finished (true) or when no beam can beat them", "false",
        Control::Check, None)),
    beam_knob(knob(K::NumReturn, "num_return", "Sequences returned",
        "how many finished sequences to return (≤ beam width)", "2", Control::Text, None)),
];

impl Knob {
    pub fn spec(self) -> &'static KnobSpec {
        // The table lists the knobs in declaration order (checked by a test).
        &KNOBS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The knob that sets a stage.
    pub fn of_stage(stage: Stage) -> Knob {
        KNOBS
            .iter()
            .find(|s| s.stage == Some(stage))
            .map(|s| s.knob)
            .expect("every stage has a knob (checked by a test)")
    }

    /// By URL/form name; '-' is accepted for '_' (CLI spelling).
    pub fn parse(name: &str) -> Option<Knob> {
        let name = name.trim().replace('-', "_");
        KNOBS.iter().find(|s| s.name == name).map(|s| s.knob)
    }

    /// Whether the knob takes several values (each entry kept).
    pub fn is_list(self) -> bool {
        matches!(self.spec().control, Control::List { .. })
    }

    /// The knobs that are cleared together with this one when a link's value is dropped:
    /// the strategy and the beam knobs go together, every other knob alone.
    pub fn cleared_with(self) -> Vec<Knob> {
        if self.spec().with_strategy {
            KNOBS
                .iter()
                .filter(|s| s.with_strategy)
                .map(|s| s.knob)
                .collect()
        } else {
            vec![self]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_declaration_order_with_unique_names() {
        for (i, s) in KNOBS.iter().enumerate() {
            assert_eq!(s.knob as usize, i, "{} is out of place", s.name);
            assert_eq!(Knob::parse(s.name), Some(s.knob));
            assert_eq!(Knob::parse(&s.name.replace('_', "-")), Some(s.knob));
            // serde spells the knob as its table name.
            assert_eq!(
                serde_json::to_string(&s.knob).unwrap(),
                format!("\"{}\"", s.name)
            );
        }
        assert_eq!(Knob::parse("banana"), None);
    }

    #[test]
    fn every_stage_has_exactly_one_knob() {
        for st in Stage::ALL {
            let n = KNOBS.iter().filter(|s| s.stage == Some(st)).count();
            assert_eq!(n, 1, "{st}");
            assert_eq!(Knob::of_stage(st).spec().stage, Some(st));
            assert_eq!(
                KNOBS.iter().find(|s| s.stage == Some(st)).unwrap().name,
                st.name()
            );
        }
    }

    /// Walks the table: each knob's example value is valid, shows as itself in the settings'
    /// text, and survives settings → pairs (URL, CLI) → raw values → settings.
    #[test]
    fn every_knob_round_trips_through_pairs_and_validation() {
        use crate::decode::sampling::{RawSettings, Settings};
        for spec in &KNOBS {
            let mut raw = RawSettings::default();
            if spec.with_strategy && spec.knob != Knob::Strategy {
                raw.put(Knob::Strategy, "beam");
            }
            assert!(raw.set(spec.name, spec.example));
            let s = raw
                .validate(512)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            assert_ne!(s, Settings::default(), "{}", spec.name);
            assert_eq!(s.knob_text(spec.knob), vec![spec.example.to_string()]);
            let pairs = s.to_pairs();
            let again = RawSettings::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
            assert_eq!(again.validate(512).unwrap(), s, "{}", spec.name);
        }
    }

    #[test]
    fn strategy_and_beam_knobs_clear_together() {
        let group = Knob::Beams.cleared_with();
        assert!(group.contains(&Knob::Strategy) && group.contains(&Knob::NumReturn));
        assert_eq!(Knob::TopK.cleared_with(), vec![Knob::TopK]);
    }
}
