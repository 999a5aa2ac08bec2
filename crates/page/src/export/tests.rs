//! The drawing and its writers: SVG text, the texts it carries, the transcript file.

use super::plot::PLOT_H;
use super::*;

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
