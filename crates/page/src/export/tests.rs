//! The drawing and its writers: SVG text, the texts it carries, the transcript file.

use super::plot::PLOT_H;
use super::*;

/// The grids' fixtures, for the other modules' tests (`grids` is private to `export`).
pub(crate) use super::grids::tests::{config as grid_config, four_nodes, greedy_off_the_tree};

/// Every export is well-formed XML whose texts are its labels: parsed back with an XML
/// reader we did not write (roxmltree), its <text> elements are the drawing's texts.
fn check(d: &Drawing, must: &[&str]) {
    let svg = d.svg();
    let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let texts: Vec<String> = root
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().to_string())
        .collect();
    assert_eq!(texts, d.texts(), "the SVG's texts are the drawing's");
    for m in must {
        assert!(texts.iter().any(|t| t.contains(m)), "no {m:?} in {texts:?}");
    }
    assert!(d.width > 0.0 && d.height > 0.0);
}

#[test]
fn charts_carry_their_title_axes_ticks_and_legend() {
    let labels = vec![
        "\",\"".to_string(),
        "\"<a&b>\"".to_string(),
        "\u{1}".to_string(),
    ];
    let d = bars(
        "T",
        "token",
        "probability",
        &labels,
        &[("final p", vec![0.9, 0.05, 0.0])],
        Lang::En,
    );
    check(
        &d,
        &["T", "token", "probability", "final p", "0.9", "\"<a&b>\""],
    );
    // The tallest bar reaches the top of the plot; a zero bar has no height.
    let rects: Vec<(f64, f64)> = d
        .leaves()
        .into_iter()
        .filter_map(|s| match s {
            Shape::Rect { y, h, fill, .. } if *fill == ACCENT => Some((*y, *h)),
            _ => None,
        })
        .collect();
    assert_eq!(rects.len(), 3 + 1, "three bars and the legend's swatch");
    assert!((rects[0].1 - PLOT_H).abs() < 1e-9);
    assert_eq!(rects[2].1, 0.0);
    // The ticks' decimal point is the language's.
    let es = bars(
        "T",
        "t",
        "p",
        &labels,
        &[("p", vec![0.9, 0.05, 0.0])],
        Lang::Es,
    );
    assert!(es.texts().contains(&"0,9".to_string()) && !es.texts().contains(&"0.9".to_string()));
    let x = xy(
        "R",
        "intensity",
        "FLOP/s",
        &[XySeries {
            name: "roof",
            points: vec![(0.1, 1e9), (10.0, 1e11)],
            line: true,
            labels: vec!["P1".into(), "P2".into()],
        }],
        true,
        true,
        Lang::En,
    );
    check(&x, &["R", "intensity", "FLOP/s", "roof", "P1", "1.0e9"]);
    // Non-finite and non-positive points on log axes are left out, not drawn at NaN.
    let y = xy(
        "N",
        "x",
        "y",
        &[XySeries {
            name: "s",
            points: vec![(0.0, 1.0), (f64::NAN, 2.0), (1.0, 3.0)],
            line: true,
            labels: vec![],
        }],
        true,
        false,
        Lang::En,
    );
    assert!(!y.svg().contains("NaN"));
    let s = Drawing::stack("both", vec![d.clone(), x]);
    check(&s, &["both", "T", "R"]);
    assert!(s.height > d.height);
}

#[test]
fn transcript_files_are_checked() {
    let f = TranscriptFile {
        format: TRANSCRIPT_FORMAT.into(),
        version: 1,
        model: "stories260K".into(),
        params: 260_032,
        prompt: "Once upon a time".into(),
        settings: vec![("temperature".into(), "0.7".into())],
        tokens: vec![1, 2, 3],
        text: "x".into(),
        link: "temperature=0.7&steps=3".into(),
    };
    let text = serde_json::to_string(&f).unwrap();
    assert_eq!(TranscriptFile::parse(&text).unwrap(), f);
    for bad in [
        text.replace("decoding-explorer transcript", "something else"),
        text.replace("\"version\":1", "\"version\":7"),
        text[..text.len() / 2].to_string(),
        "x".repeat(MAX_TRANSCRIPT_BYTES + 1),
    ] {
        assert!(
            TranscriptFile::parse(&bad).is_err(),
            "{}",
            &bad[..bad.len().min(80)]
        );
    }
}

/// Every `#rrggbb` the export's sources write has a dark counterpart in the theme's table
/// (read from the sources themselves, so a new colour without one fails here).
#[test]
fn every_colour_the_export_writes_is_themed() {
    let sources = [
        include_str!("mod.rs"),
        include_str!("charts.rs"),
        include_str!("figures.rs"),
        include_str!("grids.rs"),
        include_str!("panels.rs"),
        include_str!("plot.rs"),
    ];
    let known: Vec<&str> = crate::theme::known_light().collect();
    let mut found = 0;
    for src in sources {
        for (i, _) in src.match_indices("\"#") {
            let lit = &src[i + 1..];
            let hex = &lit[..lit.find('"').unwrap_or(0)];
            if hex.len() == 7 && hex[1..].chars().all(|c| c.is_ascii_hexdigit()) {
                found += 1;
                assert!(
                    known.iter().any(|k| k.eq_ignore_ascii_case(hex)),
                    "{hex} has no dark colour"
                );
            }
        }
    }
    assert!(found >= 20, "only {found} colours read: the scan is broken");
}

/// A figure in the dark scheme: the same shapes and texts, on the dark ground, every text
/// readable on it (WCAG's 4.5:1, computed by `theme::contrast`).
#[test]
fn a_dark_figure_keeps_its_shapes_and_its_texts_read() {
    use crate::theme::{contrast, Scheme};
    let labels: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let light = bars(
        "T",
        "token",
        "p",
        &labels,
        &[("final p", vec![0.9, 0.05, 0.0])],
        Lang::En,
    );
    let dark = light.clone().themed(Scheme::Dark);
    assert_eq!(dark.texts(), light.texts());
    assert_eq!(dark.leaves().len(), light.leaves().len());
    assert_eq!(light.clone().themed(Scheme::Light), light);
    let ground = match dark.leaves()[0] {
        Shape::Rect { fill, .. } => *fill,
        _ => panic!("the drawing starts with its ground"),
    };
    assert_eq!(ground, Scheme::Dark.ground());
    assert!(
        contrast(ground, "#000000").unwrap() < 2.0,
        "the ground is dark: {ground}"
    );
    let mut texts = 0;
    for s in dark.leaves() {
        if let Shape::Text { fill, text, .. } = s {
            texts += 1;
            let c = contrast(fill, ground).unwrap();
            assert!(c >= 4.5, "{text:?} in {fill}: {c:.2}");
        }
    }
    assert!(texts >= 5);
    assert!(
        !dark.svg().contains("#ffffff"),
        "no light ground left in the dark SVG"
    );
}
