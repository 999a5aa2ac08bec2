//! The captions area's translations checked: every step's caption drawn in Chinese (and
//! Spanish) from the same views as in English has English's numbers, each where the
//! translation puts it; what a caption waits for and the class checks' questions are
//! messages; every caption message is one the code writes.

use super::*;
use crate::lesson::builder::{sentinel, split};
use crate::lesson::{caption_text, Part, STEPS};

#[path = "tests_captions_fixture.rs"]
mod fixture;

/// A caption's numbers: key, value's bits, and whether it is shown, in the order drawn.
fn numbers(parts: &[Part]) -> Vec<(&'static str, u64, bool)> {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Num { key, value, shown } => Some((*key, value.to_bits(), !shown.is_empty())),
            Part::Text(_) => None,
        })
        .collect()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

fn is_cjk(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c)
}

#[test]
fn every_caption_in_chinese_has_the_english_numbers() {
    for bold in [true, false] {
        let f = fixture::Fixture::new(bold);
        for step in STEPS {
            let draw = |lang| {
                step.caption(&f.live(&step, lang))
                    .unwrap_or_else(|w| panic!("{} waits for {w}", step.key))
            };
            let en = draw(Lang::En);
            for lang in [Lang::ZhCn, Lang::Es] {
                let theirs = draw(lang);
                let text = caption_text(&theirs);
                let at = format!("{} ({bold}) in {}: {text}", step.key, lang.name());
                assert_eq!(sorted(numbers(&theirs)), sorted(numbers(&en)), "{at}");
                assert!(!text.contains(['\u{E000}', '\u{E001}']), "{at}");
                assert!(!text.contains("{$"), "a missing argument: {at}");
                assert_ne!(text, caption_text(&en), "{at}");
                if lang == Lang::ZhCn {
                    assert!(text.chars().any(is_cjk), "{at}");
                    assert!(!text.contains("  "), "{at}");
                }
            }
        }
    }
}

/// The figures' units are the language's: Chinese writes tokens a second and bytes in its
/// own words, Spanish its decimal comma.
#[test]
fn a_captions_units_and_separators_are_its_languages() {
    let f = fixture::Fixture::new(true);
    let text = |key, lang| {
        let (_, step) = crate::lesson::by_key(key).unwrap();
        caption_text(&step.caption(&f.live(step, lang)).unwrap())
    };
    assert!(text("batching", Lang::En).contains("B = 4 4,800 tokens/s (4,560–5,040)"));
    assert!(
        text("batching", Lang::ZhCn).contains("B = 4 时为 4,800 词元/秒（4,560–5,040），B = 16")
    );
    assert!(text("batching", Lang::Es).contains("B = 4: 4800 tokens/s (4560–5040), B = 16"));
    assert!(text("kv-memory", Lang::ZhCn).contains("= 55,040 字节。"));
    assert!(text("quantization", Lang::Es).contains("1015,62 KiB (f32)"));
    assert!(text("quantization", Lang::Es).contains("KL(p_f32 ‖ p_q8) = 4,2e-4"));
    assert!(text("speculative", Lang::Es).contains("α medida = 0,812: 3,50 tokens"));
}

/// A translation orders a sentence its own way: the numbers follow it.
#[test]
fn numbers_stand_where_the_translation_puts_them() {
    let nums = [("a", 1.0, "one".to_string()), ("b", 2.0, "two".to_string())];
    // The translation names b before a.
    let text = format!("b {} before a {}.", sentinel(1), sentinel(0));
    let num = |i: usize| Part::Num {
        key: nums[i].0,
        value: nums[i].1,
        shown: nums[i].2.clone(),
    };
    assert_eq!(
        split(&text, &nums),
        [
            Part::Text("b ".into()),
            num(1),
            Part::Text(" before a ".into()),
            num(0),
            Part::Text(".".into()),
        ]
    );
    assert_eq!(split(&sentinel(0), &nums), [num(0)]);
    // Chinese says the beam's depth before its Σ log p; English after.
    let f = fixture::Fixture::new(true);
    let (_, step) = crate::lesson::by_key("greedy-vs-beam").unwrap();
    let keys = |lang| -> Vec<&str> {
        numbers(&step.caption(&f.live(step, lang)).unwrap())
            .into_iter()
            .map(|n| n.0)
            .collect()
    };
    assert_eq!(
        keys(Lang::En),
        ["greedy_logprob", "width", "beam_logprob", "depth"]
    );
    assert_eq!(
        keys(Lang::ZhCn),
        ["greedy_logprob", "width", "depth", "beam_logprob"]
    );
    let zh = caption_text(&step.caption(&f.live(step, Lang::ZhCn)).unwrap());
    assert!(
        zh.contains("在同样的 12 个词元上找到了 Σ log p = -8.250："),
        "{zh}"
    );
}

/// The lesson's caption code: `(file, source)`.
fn caption_sources() -> Vec<(&'static str, &'static str)> {
    vec![
        ("captions.rs", include_str!("../lesson/captions.rs")),
        (
            "captions_speed.rs",
            include_str!("../lesson/captions_speed.rs"),
        ),
        ("builder.rs", include_str!("../lesson/builder.rs")),
    ]
}

/// Every string literal of the caption code that starts `caption-` or `lesson-`.
fn ids_in_code() -> Vec<String> {
    let mut ids = Vec::new();
    for (_, src) in caption_sources() {
        for prefix in ["\"caption-", "\"lesson-"] {
            for (i, _) in src.match_indices(prefix) {
                let id = src[i + 1..].split('"').next().unwrap();
                ids.push(id.to_string());
            }
        }
    }
    ids
}

#[test]
fn what_a_caption_waits_for_is_a_message_of_every_language() {
    for (file, src) in caption_sources() {
        for call in ["ok_or(\"", "Err(\""] {
            for (i, _) in src.match_indices(call) {
                let id = src[i + call.len()..].split('"').next().unwrap();
                assert!(id.starts_with("caption-wait-"), "{file}: waits for {id:?}");
            }
        }
    }
    let waits: Vec<String> = ids_in_code()
        .into_iter()
        .filter(|id| id.starts_with("caption-wait-"))
        .collect();
    assert!(waits.len() >= 20, "{waits:?}");
    for lang in Lang::ALL {
        let tr = Tr::new(lang);
        for id in waits.iter().map(String::as_str).chain(["lesson-waiting"]) {
            assert!(tr.has(id), "{} lacks {id}", lang.name());
        }
    }
    // Nothing drawn yet: the first step waits for the transcript, in Chinese too.
    let (_, step) = crate::lesson::by_key("loop").unwrap();
    let live = crate::lesson::Live {
        lang: Lang::ZhCn,
        ..Default::default()
    };
    let wait = step.caption(&live).unwrap_err();
    let zh = Tr::new(Lang::ZhCn);
    assert_eq!(
        zh.fmt("lesson-waiting", &[("what", zh.get(wait))]),
        "正在等待生成记录…"
    );
}

/// Every caption message is one the code writes (none left over from a sentence rewritten).
#[test]
fn every_caption_message_is_one_the_code_writes() {
    let asked = ids_in_code();
    let en = Lang::En.source();
    let ids: Vec<&str> = en
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|(id, _)| id.trim()))
        .filter(|id| id.starts_with("caption-"))
        .collect();
    assert!(ids.len() >= 70, "{} caption messages", ids.len());
    for id in ids {
        assert!(
            asked.iter().any(|a| a == id),
            "en has {id}, which no caption writes"
        );
    }
}

/// The track shows a class check's question as its step's `lesson-question-<key>`, which
/// in English is the step's own words.
#[test]
fn every_class_checks_question_is_a_message() {
    let en = Tr::new(Lang::En);
    let mut n = 0;
    for step in STEPS {
        let Some(check) = step.check else { continue };
        let id = format!("lesson-question-{}", step.key);
        assert_eq!(en.get(&id), check.question, "{id}");
        for lang in [Lang::ZhCn, Lang::Es] {
            assert!(Tr::new(lang).has(&id), "{} lacks {id}", lang.name());
        }
        n += 1;
    }
    assert!(n >= 4);
}

/// A sentinel that names no number (a translation that broke one) is dropped, the text
/// around it kept and the numbers after it still placed: never private-use characters shown.
#[test]
fn a_broken_sentinel_is_dropped_and_the_numbers_after_it_kept() {
    let nums = [("x", 1.5, "1.5".to_string())];
    let text = format!("a\u{E000}9\u{E001}b\u{E000}c{}d\u{E000}", sentinel(0));
    assert_eq!(
        split(&text, &nums),
        vec![
            Part::Text("a9bc".into()),
            Part::Num {
                key: "x",
                value: 1.5,
                shown: "1.5".into()
            },
            Part::Text("d".into()),
        ]
    );
}
