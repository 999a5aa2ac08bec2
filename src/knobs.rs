//! The decoding knobs as command-line options, derived from the engine's one knob table
//! (`decoding_engine::decode::sampling::KNOBS`): each knob's flag is its name with '-' for '_', its
//! help the table's. Values stay text here: `RawSettings::validate` parses them, so the CLI,
//! the page and URLs share one set of rules and messages.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use decoding_engine::decode::sampling::knobs::{CliGroup, Control, KnobSpec};
use decoding_engine::decode::sampling::{Knob, RawSettings, KNOBS};

/// The knobs of `generate`, `next` and `sample`: everything but the beam knobs.
#[derive(Debug, Default, Clone)]
pub struct KnobArgs {
    pub raw: RawSettings,
}

/// The knobs of `beam`: width, length penalty, early stopping, sequences, max tokens.
#[derive(Debug, Default, Clone)]
pub struct BeamKnobArgs {
    pub raw: RawSettings,
}

fn sampling(s: &KnobSpec) -> bool {
    matches!(s.cli, CliGroup::Sampling | CliGroup::Both)
}

fn beam(s: &KnobSpec) -> bool {
    matches!(s.cli, CliGroup::Beam | CliGroup::Both)
}

/// The option of one knob: `--top-k`, help from the table, repeatable for list knobs.
fn arg(s: &'static KnobSpec) -> Arg {
    let flag: &'static str = s.name.replace('_', "-").leak();
    let repeat = matches!(s.control, Control::List { .. });
    // A peer's spelling of the flag (llama.cpp's `--adaptive-target`) is an alias of ours.
    let aliases = s
        .aliases
        .iter()
        .map(|a| -> &'static str { a.replace('_', "-").leak() });
    let a = Arg::new(s.name)
        .long(flag)
        .visible_aliases(aliases)
        .help(s.help)
        .help_heading("Decoding knobs")
        .value_name(if repeat { "VALUE" } else { "V" })
        .allow_hyphen_values(true)
        .action(if repeat {
            ArgAction::Append
        } else {
            ArgAction::Set
        });
    // The strategy is a knob of generate, next, sample and speculate only, which do not
    // search beams (the beam command does): they offer the table's other choices.
    match s.control {
        Control::Choice(all) if s.knob == Knob::Strategy => a
            .value_parser(clap::builder::PossibleValuesParser::new(
                all.iter().filter(|v| **v != "beam"),
            ))
            .help("sample or greedy (beam search: the beam command)"),
        _ => a,
    }
}

fn augment(cmd: Command, keep: fn(&KnobSpec) -> bool) -> Command {
    KNOBS
        .iter()
        .filter(|s| keep(s))
        .fold(cmd, |c, s| c.arg(arg(s)))
}

fn read(m: &ArgMatches, keep: fn(&KnobSpec) -> bool) -> RawSettings {
    let mut raw = RawSettings::default();
    for s in KNOBS.iter().filter(|s| keep(s)) {
        for v in m.get_many::<String>(s.name).into_iter().flatten() {
            raw.put(s.knob, v.clone());
        }
    }
    // Every command's one seed rule: the engine's default seed (0) unless `--seed S`;
    // `--seed random` draws one from the clock and says it on stderr.
    if raw.get(Knob::Seed).is_some_and(|s| s == "random") {
        let s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 >> 11)
            .unwrap_or(0);
        eprintln!("seed: {s}");
        raw.put(Knob::Seed, s.to_string());
    }
    raw
}

/// clap's two traits for a group of knob flags chosen by `$keep`.
macro_rules! knob_group {
    ($t:ident, $keep:expr) => {
        impl FromArgMatches for $t {
            fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
                Ok($t {
                    raw: read(m, $keep),
                })
            }
            fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
                self.raw = read(m, $keep);
                Ok(())
            }
        }
        impl Args for $t {
            fn augment_args(cmd: Command) -> Command {
                augment(cmd, $keep)
            }
            fn augment_args_for_update(cmd: Command) -> Command {
                augment(cmd, $keep)
            }
        }
    };
}

knob_group!(KnobArgs, sampling);
knob_group!(BeamKnobArgs, beam);

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: Args + FromArgMatches>(args: &[&str]) -> Result<T, clap::Error> {
        let cmd = T::augment_args(Command::new("t"));
        let m = cmd.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))?;
        T::from_arg_matches(&m)
    }

    /// Walks the table: every knob is a flag of exactly the subcommands its group says, and
    /// its value arrives as the same raw setting a URL key gives.
    #[test]
    fn every_knob_is_a_flag_that_gives_the_url_value() {
        for s in KNOBS.iter() {
            let flag = format!("--{}", s.name.replace('_', "-"));
            let mut want = RawSettings::default();
            want.set(s.name, s.example);
            let sampled = parse::<KnobArgs>(&[&flag, s.example]);
            let beamed = parse::<BeamKnobArgs>(&[&flag, s.example]);
            assert_eq!(
                sampled.is_ok(),
                sampling(s),
                "{flag} in generate/next/sample"
            );
            assert_eq!(beamed.is_ok(), beam(s), "{flag} in beam");
            if let Ok(a) = sampled {
                assert_eq!(a.raw, want, "{flag}");
            }
            if let Ok(a) = beamed {
                assert_eq!(a.raw, want, "{flag}");
            }
        }
    }

    /// generate, next and sample do not offer beam search (the beam command does).
    #[test]
    fn the_sampling_commands_strategy_has_no_beam() {
        let e = parse::<KnobArgs>(&["--strategy", "beam"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
        assert!(
            e.to_string().contains("[possible values: sample, greedy]"),
            "{e}"
        );
        for v in ["sample", "greedy"] {
            assert!(parse::<KnobArgs>(&["--strategy", v]).is_ok(), "{v}");
        }
    }

    /// A peer's spelling of a flag sets the same knob as ours.
    #[test]
    fn peers_spellings_are_aliases() {
        let mut aliased = 0;
        for s in KNOBS.iter() {
            for a in s.aliases {
                let flag = format!("--{}", a.replace('_', "-"));
                let got = parse::<KnobArgs>(&[&flag, s.example]).unwrap();
                let mut want = RawSettings::default();
                want.set(s.name, s.example);
                assert_eq!(got.raw, want, "{flag}");
                aliased += 1;
            }
        }
        assert!(aliased >= 9);
    }

    #[test]
    fn list_knobs_repeat_and_numbers_may_be_negative() {
        let a: KnobArgs =
            parse(&["--stop", ".", "--stop", "!", "--presence-penalty", "-1"]).unwrap();
        assert_eq!(
            a.raw.entries(decoding_engine::decode::sampling::Knob::Stop),
            [".".to_string(), "!".to_string()]
        );
        assert_eq!(
            a.raw
                .get(decoding_engine::decode::sampling::Knob::PresencePenalty),
            Some("-1")
        );
    }
}
