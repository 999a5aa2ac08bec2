//! Draft and rule names.
use super::*;

#[test]
fn a_draft_reads_back_its_name_and_checks_layers_only_with_a_model() {
    for d in [
        Draft::Quant(Precision::Q8),
        Draft::Quant(Precision::Q4),
        Draft::Exit(2),
        Draft::Ngram(3),
    ] {
        assert_eq!(Draft::from_name(&d.to_string()), Ok(d));
        assert_eq!(Draft::parse(&d.name(), 5), Ok(d));
    }
    // The name alone says nothing of the model: exit:9 is a draft, not one for 5 layers.
    assert_eq!(Draft::from_name("exit:9"), Ok(Draft::Exit(9)));
    assert_eq!(
        Draft::Exit(9).fits(5),
        Err(SpecError::ExitLayer {
            given: "9".into(),
            layers: 5
        })
    );
    assert!(Draft::Exit(0).fits(5).is_err());
    assert_eq!(Draft::Exit(4).fits(5), Ok(Draft::Exit(4)));
    for bad in [
        "exit:x",
        "quant:f32",
        "quant:q5",
        "ngram:65",
        "ngram:0",
        "beam:2",
        "q8",
    ] {
        assert_eq!(
            Draft::from_name(bad),
            Err(SpecError::BadDraft(bad.into())),
            "{bad}"
        );
    }
    // With a model, a K that is not a number is still named as the layer count's error.
    assert!(matches!(
        Draft::parse("exit:x", 5),
        Err(SpecError::ExitLayer { .. })
    ));
    assert_eq!(Rule::parse("match").map(Rule::name), Ok("match"));
    // serde carries the name.
    let json = serde_json::to_string(&Draft::Exit(2)).unwrap();
    assert_eq!(json, "\"exit:2\"");
    assert_eq!(
        serde_json::from_str::<Draft>(&json).unwrap(),
        Draft::Exit(2)
    );
    let e = serde_json::from_str::<Draft>("\"nonsense\"").unwrap_err();
    assert!(e.to_string().contains("give quant:q8"), "{e}");
}
