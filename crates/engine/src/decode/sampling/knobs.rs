//! Every decoding knob, defined once: its name (the URL key, the form field, and with '-' the
//! CLI flag), label, help text, the control the page draws for it, the stage that reads it,
//! the command-line group it belongs to, and its category in the lesson's table (lesson 10,
//! section 6: parameters are [LEARNED], configuration [CONFIG], transient values [STATE]).
//!
//! The CLI's flags (`src/knobs.rs`), the URL query (`decoding_page::page::link`), the page's
//! controls (`crates/app/src/ui/knobs.rs`) and validation (`RawSettings`) all walk [`KNOBS`]:
//! the stages' knobs (each defined, with its rule, in its stage's file) and the general
//! ones below.

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

/// A knob, by identity: its name. The general knobs' are below; each stage's file names
/// its own (`impl Knob { pub const TopP: Knob = … }`), so that adding a stage adds its knobs
/// without touching this file.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Knob(&'static str);

#[allow(non_upper_case_globals)]
impl Knob {
    pub const MaxTokens: Knob = Knob::new("max_tokens");
    pub const Stop: Knob = Knob::new("stop");
    pub const Seed: Knob = Knob::new("seed");
    pub const Profile: Knob = Knob::new("profile");
    pub const Order: Knob = Knob::new("order");
    pub const Strategy: Knob = Knob::new("strategy");
    pub const Beams: Knob = Knob::new("beams");
    pub const LengthPenalty: Knob = Knob::new("length_penalty");
    pub const EarlyStopping: Knob = Knob::new("early_stopping");
    pub const NumReturn: Knob = Knob::new("num_return");

    /// A knob's identity; its spec is the one in [`KNOBS`] of that name.
    pub const fn new(name: &'static str) -> Knob {
        Knob(name)
    }
}

impl std::fmt::Debug for Knob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Knob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Knob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Knob, D::Error> {
        let name = String::deserialize(d)?;
        KNOBS
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.knob)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown knob {name:?}")))
    }
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

/// What a knob's value is, and its rule (the message names the rule broken).
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A finite number.
    Float(fn(f64) -> Result<(), &'static str>),
    /// A whole number (negative only where the rule allows), at most `MAX_COUNT` in size.
    Int(fn(i64) -> Result<(), &'static str>),
    /// `id:value` entries: ids in the vocabulary, |value| ≤ 10,000, a later id replacing
    /// an earlier one.
    Bias,
    /// Text entries, each obeying the rule.
    Texts(fn(&str) -> Result<(), String>),
    /// Read by `RawSettings` itself: the strategy, the beam, limits, seed, profile, order.
    General,
}

/// A peer's own value for a knob the user left unset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerDefault {
    pub profile: super::profile::Profile,
    pub value: &'static str,
    /// Only when the strategy samples (HF adds its top-k 50 only with `do_sample=True`).
    pub sampling_only: bool,
}

/// One knob's definition.
#[derive(Debug, Clone, Copy)]
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
    /// The sampling stage the knob belongs to, if any.
    pub stage: Option<Stage>,
    pub cli: CliGroup,
    /// Cleared with the strategy (the beam knobs only mean something for beam search).
    pub with_strategy: bool,
    pub category: Category,
    pub kind: Kind,
    /// The value when not given (one entry; several for a list with defaults, none for an
    /// empty list). For a stage's first knob, the value at which the stage is off.
    pub default: &'static [&'static str],
    /// The peers' own defaults (`Profile::defaults`).
    pub peers: &'static [PeerDefault],
    /// A narrower |value| bound under a profile (the OpenAI API's ±2 penalties, ±100 bias).
    pub bounds: &'static [(super::profile::Profile, f64)],
    /// Other names the peers give it (llama.cpp's spellings): a
    /// link key or a CLI flag (with '-' for '_') by one of them sets this knob.
    pub aliases: &'static [&'static str],
}

impl KnobSpec {
    /// A stage's knob: sampling group, [CONFIG], no peer defaults or bounds.
    #[allow(clippy::too_many_arguments)]
    pub const fn of_stage(
        stage: Stage,
        name: &'static str,
        label: &'static str,
        help: &'static str,
        example: &'static str,
        control: Control,
        kind: Kind,
        default: &'static [&'static str],
    ) -> KnobSpec {
        KnobSpec {
            knob: Knob::new(name),
            name,
            label,
            help,
            example,
            control,
            stage: Some(stage),
            cli: CliGroup::Sampling,
            with_strategy: false,
            category: Category::Config,
            kind,
            default,
            peers: &[],
            bounds: &[],
            aliases: &[],
        }
    }

    pub const fn aliases(self, aliases: &'static [&'static str]) -> KnobSpec {
        KnobSpec { aliases, ..self }
    }

    pub const fn peers(self, peers: &'static [PeerDefault]) -> KnobSpec {
        KnobSpec { peers, ..self }
    }

    pub const fn bounds(self, bounds: &'static [(super::profile::Profile, f64)]) -> KnobSpec {
        KnobSpec { bounds, ..self }
    }
}

/// A slider's control.
pub const fn slider(min: f64, max: f64, step: f64) -> Control {
    Control::Slider { min, max, step }
}

const fn knob(
    knob: Knob,
    label: &'static str,
    help: &'static str,
    example: &'static str,
    control: Control,
) -> KnobSpec {
    KnobSpec {
        knob,
        name: knob.0,
        label,
        help,
        example,
        control,
        stage: None,
        cli: CliGroup::Sampling,
        with_strategy: false,
        category: Category::Config,
        kind: Kind::General,
        default: &[],
        peers: &[],
        bounds: &[],
        aliases: &[],
    }
}

const fn beam_knob(k: KnobSpec) -> KnobSpec {
    KnobSpec {
        cli: CliGroup::Beam,
        with_strategy: true,
        ..k
    }
}

use Knob as K;

/// The knobs that set no stage, in the order the page and `--help` list them (after the
/// stages' own).
#[rustfmt::skip]
const GENERAL: [KnobSpec; 10] = [
    KnobSpec {
        cli: CliGroup::Both,
        ..knob(K::MaxTokens, "Max tokens", "stop after this many new tokens", "40", Control::Text)
    },
    knob(K::Stop, "Stop sequences",
        "stop when the generated text contains this; one per line or repeated", ".",
        Control::List { sep: '\n' }),
    knob(K::Seed, "Seed", "the coin's seed: same seed, same tokens", "42", Control::Text),
    knob(K::Profile, "Profile",
        "lesson, hf, llama.cpp or openai: whose stage order, boundary rules and defaults to follow",
        "llama.cpp", Control::Choice(&["lesson", "hf", "llama.cpp", "openai"])),
    // (Its example, llama.cpp's order, is filled in by `KNOBS` from the registry.)
    knob(K::Order, "Chain order", "the chain's stages in order, comma-separated", "",
        Control::Text),
    KnobSpec {
        with_strategy: true,
        ..knob(K::Strategy, "Strategy", "sample, greedy or beam", "greedy",
            Control::Choice(&["sample", "greedy", "beam"]))
    },
    beam_knob(knob(K::Beams, "Beam width k", "hypotheses kept at each step, 1..=16", "3",
        slider(1.0, 8.0, 1.0))),
    beam_knob(knob(K::LengthPenalty, "Length penalty",
        "Hugging Face's: score = sum_logprobs / length^length_penalty", "0.5",
        slider(-1.0, 3.0, 0.1))),
    beam_knob(knob(K::EarlyStopping, "Early stopping",
        "stop as soon as k hypotheses have finished (true) or when no beam can beat them", "false",
        Control::Check)),
    beam_knob(knob(K::NumReturn, "Sequences returned",
        "how many finished sequences to return (≤ beam width)", "2", Control::Text)),
];

/// Every knob: the stages' (in the registry's order), then the general ones.
pub static KNOBS: std::sync::LazyLock<Vec<KnobSpec>> = std::sync::LazyLock::new(|| {
    super::stages::REGISTRY
        .iter()
        .flat_map(|d| d.knobs.iter().copied())
        .chain(GENERAL.map(|k| match k.knob {
            Knob::Order => {
                let order = super::profile::Profile::LlamaCpp.default_order();
                let names: Vec<&str> = order.iter().map(|s| s.name()).collect();
                KnobSpec {
                    example: names.join(",").leak(),
                    ..k
                }
            }
            _ => k,
        }))
        .collect()
});

impl Knob {
    pub fn spec(self) -> &'static KnobSpec {
        KNOBS
            .iter()
            .find(|s| s.knob == self)
            .expect("a Knob is made only beside its spec (checked by a test)")
    }

    pub fn name(self) -> &'static str {
        self.0
    }

    /// The knob a stage is named after.
    pub fn of_stage(stage: Stage) -> Knob {
        stage.def().main_knob()
    }

    /// By URL/form name or a peer's alias; '-' is accepted for '_' (CLI spelling).
    pub fn parse(name: &str) -> Option<Knob> {
        let name = name.trim().replace('-', "_");
        KNOBS
            .iter()
            .find(|s| s.name == name || s.aliases.contains(&name.as_str()))
            .map(|s| s.knob)
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
            assert_eq!(s.knob.name(), s.name);
            assert!(
                KNOBS[..i].iter().all(|o| o.name != s.name),
                "{} twice",
                s.name
            );
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
    fn every_stage_knob_belongs_to_its_stage() {
        for st in Stage::all() {
            assert_eq!(Knob::of_stage(st).spec().stage, Some(st));
            assert_eq!(Knob::of_stage(st).name(), st.name());
            for k in st.def().knobs {
                assert_eq!(k.stage, Some(st), "{}", k.name);
                assert!(!matches!(k.kind, Kind::General), "{}", k.name);
            }
        }
        for k in KNOBS.iter().filter(|k| k.stage.is_none()) {
            assert!(matches!(k.kind, Kind::General), "{}", k.name);
        }
    }

    /// Walks the table: each knob's example value is valid, shows as itself in the settings'
    /// text, and survives settings → pairs (URL, CLI) → raw values → settings.
    #[test]
    fn every_knob_round_trips_through_pairs_and_validation() {
        use crate::decode::sampling::{RawSettings, Settings};
        for spec in KNOBS.iter() {
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
