//! The page's words in English, Simplified Chinese and Spanish, through Mozilla's Fluent
//! (`fluent-bundle`): a folder a language (`crates/page/locales/<lang>/`) with a file an area
//! of the page ([`AREAS`]: the header and loading, the transcript and its knobs, the other
//! panels, the class, the lesson's captions, the figures' words, the engine's and the
//! model files' messages), a message by id,
//! its numbers passed in already formatted for the language ([`number`], [`integer`]: CLDR's
//! separators and grouping, checked against the browser's `Intl.NumberFormat` in the e2e
//! tests). The language is the link's (`lang=`), else the browser's first that the page has
//! ([`Lang::negotiate`]), else English. A message missing from a language falls back to
//! English; the tests hold Chinese and Spanish complete.

use fluent_bundle::{FluentArgs, FluentBundle, FluentResource};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The page's areas, a Fluent file each in every language's folder.
pub const AREAS: [&str; 8] = [
    "page",
    "transcript",
    "panels",
    "class",
    "captions",
    "figures",
    "engine",
    "files",
];

/// A language of the page; its name is a link's (`lang=zh-CN`) and `<html lang>`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, strum::IntoStaticStr)]
pub enum Lang {
    #[default]
    #[strum(serialize = "en")]
    En,
    #[strum(serialize = "zh-CN")]
    ZhCn,
    #[strum(serialize = "es")]
    Es,
}

impl Lang {
    pub const ALL: [Lang; 3] = [Lang::En, Lang::ZhCn, Lang::Es];

    /// The language a link names (`en`, `zh-CN`, `es`, in any case).
    pub fn parse(v: &str) -> Result<Lang, String> {
        Lang::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(v.trim()))
            .ok_or_else(|| format!("{v:?} is not a language of the page (en, zh-CN, es)"))
    }

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Its name in itself, for the menu.
    pub fn native(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::ZhCn => "简体中文",
            Lang::Es => "Español",
        }
    }

    /// The first of the browser's languages (`navigator.languages`, most wanted first) that
    /// the page has, by its primary subtag (`zh-Hans-CN`, `zh-TW` and `zh` read Simplified
    /// Chinese, the only Chinese the page has); English when none.
    pub fn negotiate(wanted: &[String]) -> Lang {
        wanted
            .iter()
            .find_map(|w| {
                let primary = w.split(['-', '_']).next()?.to_ascii_lowercase();
                match primary.as_str() {
                    "en" => Some(Lang::En),
                    "zh" => Some(Lang::ZhCn),
                    "es" => Some(Lang::Es),
                    _ => None,
                }
            })
            .unwrap_or_default()
    }

    /// The language's files, one an area of the page (`AREAS`), in that order.
    fn files(self) -> [&'static str; AREAS.len()] {
        macro_rules! area_files {
            ($lang:literal) => {
                [
                    include_str!(concat!("../../locales/", $lang, "/page.ftl")),
                    include_str!(concat!("../../locales/", $lang, "/transcript.ftl")),
                    include_str!(concat!("../../locales/", $lang, "/panels.ftl")),
                    include_str!(concat!("../../locales/", $lang, "/class.ftl")),
                    include_str!(concat!("../../locales/", $lang, "/captions.ftl")),
                    include_str!(concat!("../../locales/", $lang, "/figures.ftl")),
                    include_str!(concat!("../../locales/", $lang, "/engine.ftl")),
                    include_str!(concat!("../../locales/", $lang, "/files.ftl")),
                ]
            };
        }
        match self {
            Lang::En => area_files!("en"),
            Lang::ZhCn => area_files!("zh-CN"),
            Lang::Es => area_files!("es"),
        }
    }

    /// The language's messages, every area's file in one text (an id twice is an error the
    /// tests catch).
    fn source(self) -> String {
        self.files().join("\n")
    }

    /// Decimal separator and grouping separator (CLDR's `latn` symbols).
    fn separators(self) -> (char, char) {
        match self {
            Lang::En | Lang::ZhCn => ('.', ','),
            Lang::Es => (',', '.'),
        }
    }

    /// Fewest digits before the decimal point that are grouped (CLDR's
    /// `minimumGroupingDigits`: 2 for Spanish, so 1234 but 12.345).
    fn min_grouping(self) -> usize {
        match self {
            Lang::Es => 5,
            _ => 4,
        }
    }
}

/// A number with `decimals` places, in the language's separators.
pub fn number(lang: Lang, v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let (dec, group) = lang.separators();
    let mut out = String::new();
    if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.push('-');
    }
    if int.len() >= lang.min_grouping() {
        for (i, c) in int.chars().enumerate() {
            if i > 0 && (int.len() - i) % 3 == 0 {
                out.push(group);
            }
            out.push(c);
        }
    } else {
        out.push_str(int);
    }
    if !frac.is_empty() {
        out.push(dec);
        out.push_str(frac);
    }
    out
}

/// A number written with a decimal point (`1.5 GiB`, `2.3 TFLOP/s`: the engine's units), the
/// point the language's.
pub fn point(lang: Lang, text: String) -> String {
    match lang.separators().0 {
        '.' => text,
        d => text.replace('.', &d.to_string()),
    }
}

/// A whole number in the language's grouping.
pub fn integer(lang: Lang, n: u64) -> String {
    number(lang, n as f64, 0)
}

/// A message's argument: text, or a number already formatted for the language.
pub type Args<'a> = &'a [(&'a str, String)];

/// The page's words in one language, English behind it for any message it lacks.
pub struct Tr {
    pub lang: Lang,
    bundle: FluentBundle<FluentResource>,
    english: Option<Rc<Tr>>,
}

thread_local! {
    /// Each language's words, parsed once a thread (a language's file is ~70 KB of text).
    static CACHE: RefCell<HashMap<Lang, Rc<Tr>>> = Default::default();
}

/// The language's words, parsed once and shared (English behind each of the others is the
/// same one).
pub fn tr(lang: Lang) -> Rc<Tr> {
    if let Some(t) = CACHE.with(|c| c.borrow().get(&lang).cloned()) {
        return t;
    }
    let t = Rc::new(Tr::new(lang));
    CACHE.with(|c| c.borrow_mut().insert(lang, t.clone()));
    t
}

fn bundle(lang: Lang) -> FluentBundle<FluentResource> {
    bundle_of(lang, lang.source())
}

fn bundle_of(lang: Lang, source: String) -> FluentBundle<FluentResource> {
    let id: unic_langid::LanguageIdentifier = lang.name().parse().unwrap_or_default();
    let mut b = FluentBundle::new(vec![id]);
    // Plain text: no Unicode isolation marks around the arguments.
    b.set_use_isolating(false);
    // A resource with errors still holds its good messages (the tests hold it clean).
    let res = FluentResource::try_new(source).unwrap_or_else(|(r, _)| r);
    let _ = b.add_resource(res);
    b
}

impl Tr {
    pub fn new(lang: Lang) -> Tr {
        Tr {
            lang,
            bundle: bundle(lang),
            english: (lang != Lang::En).then(|| tr(Lang::En)),
        }
    }

    /// A language's words from `source` alone, English behind them (the fallback's test).
    #[cfg(test)]
    fn of_source(lang: Lang, source: &str) -> Tr {
        Tr {
            lang,
            bundle: bundle_of(lang, source.to_string()),
            english: Some(tr(Lang::En)),
        }
    }

    /// The message `id`, its `{ $name }`s replaced by `args`; the id itself if no language
    /// has it (the tests hold every id the code asks for in English).
    pub fn fmt(&self, id: &str, args: Args) -> String {
        let mut fa = FluentArgs::new();
        for (k, v) in args {
            fa.set(*k, v.as_str());
        }
        for b in std::iter::once(&self.bundle).chain(self.english.as_ref().map(|e| &e.bundle)) {
            if let Some(pattern) = b.get_message(id).and_then(|m| m.value()) {
                let mut errors = Vec::new();
                return b
                    .format_pattern(pattern, Some(&fa), &mut errors)
                    .into_owned();
            }
        }
        id.to_string()
    }

    /// The message `id`, with no arguments.
    pub fn get(&self, id: &str) -> String {
        self.fmt(id, &[])
    }

    /// Whether this language has `id` itself (not by falling back).
    pub fn has(&self, id: &str) -> bool {
        self.bundle.has_message(id)
    }
}

pub mod engine;
pub mod readback;
#[cfg(test)]
mod tests;
// Each area's own checks (its tables' keys have their messages), one file an area.
#[cfg(test)]
mod tests_captions;
#[cfg(test)]
mod tests_class;
#[cfg(test)]
mod tests_figures;
#[cfg(test)]
mod tests_panels;
#[cfg(test)]
mod tests_transcript;
