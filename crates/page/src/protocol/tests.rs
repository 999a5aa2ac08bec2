//! The messages: coalescing, validation on arrival, encoding, the parts' names.

use super::*;
use decoding_engine::decode::sampling::Settings;

fn set(t: &str) -> Request {
    TranscriptRequest::SetSettings {
        settings: Settings::default().with(
            decoding_engine::decode::sampling::Knob::Temperature,
            t.parse().unwrap(),
        ),
    }
    .into()
}

#[test]
fn knob_requests_coalesce_only_after_the_last_step() {
    let step: Request = TranscriptRequest::Step { count: 1 }.into();
    let quant: Request = QuantRequest::Quantization { open: true }.into();
    let mut q: std::collections::VecDeque<Request> =
        [set("0.1"), step.clone(), set("0.2"), set("0.3")].into();
    let new = set("0.4");
    coalesce(&mut q, knob_kind(&new), knob_kind);
    q.push_back(new);
    // The step keeps the settings it was asked under; after it, only the latest remain.
    assert_eq!(q, [set("0.1"), step.clone(), set("0.4")]);
    // Another request in between keeps the knobs before it.
    q.push_back(quant.clone());
    let new = set("0.5");
    coalesce(&mut q, knob_kind(&new), knob_kind);
    assert_eq!(q, [set("0.1"), step, set("0.4"), quant]);
}

#[test]
fn settings_arrive_only_validated() {
    let msg = |json: &str| format!("{{\"type\":\"set_settings\",\"settings\":{json}}}");
    let e = decode::<Request>(&msg("{\"temperature\":[\"-1\"]}")).unwrap_err();
    assert!(e.contains("temperature: must be ≥ 0"), "{e}");
    let e = decode::<Request>(&msg("{\"strategy\":[\"beam\"],\"beams\":[\"0\"]}")).unwrap_err();
    assert!(e.contains("beams: must be in 1..=16"), "{e}");
    let e = decode::<Request>(&msg("{\"top_k\":[\"4294967299x\"]}")).unwrap_err();
    assert!(e.contains("top_k"), "{e}");
    let Request::Transcript(TranscriptRequest::SetSettings { settings }) =
        decode::<Request>(&msg("{\"temperature\":[\"0.5\"],\"stop\":[\".\",\"!\"]}")).unwrap()
    else {
        panic!("not settings")
    };
    assert_eq!(
        settings.num(decoding_engine::decode::sampling::Knob::Temperature),
        0.5
    );
    assert_eq!(settings.stop, [".", "!"]);
}

/// Every part's message travels as the part wrote it: its own `type`, its own fields, with
/// no wrapper (what the fuzz corpus and older pages hold).
#[test]
fn messages_round_trip_as_their_parts_json() {
    let reqs: [Request; 6] = [
        TranscriptRequest::Step { count: 3 }.into(),
        TranscriptRequest::SetSettings {
            settings: Settings::default(),
        }
        .into(),
        BeamRequest::BeamTo { depth: 4 }.into(),
        BatchRequest::GpuSplit.into(),
        ColumnsRequest::ColumnsStep { count: 2 }.into(),
        TranscriptRequest::Cancel.into(),
    ];
    for r in reqs {
        let text = encode(&r).unwrap();
        assert!(text.starts_with("{\"type\":\""), "{text}");
        assert_eq!(decode::<Request>(&text).unwrap(), r);
    }
    assert_eq!(
        encode(&Request::from(TranscriptRequest::Step { count: 3 })).unwrap(),
        "{\"type\":\"step\",\"count\":3}"
    );
    let e: Event = ModelEvent::Progress {
        file: "m.bin".into(),
        loaded: 5,
        total: Some(10),
    }
    .into();
    assert_eq!(decode::<Event>(&encode(&e).unwrap()).unwrap(), e);
    let e = decode::<Request>("{\"type\":\"bogus\"}").unwrap_err();
    assert!(e.contains("no message has the type \"bogus\""), "{e}");
    assert!(decode::<Request>("{\"count\":1}").is_err());
    // A part's own error comes back whole.
    let e = decode::<Request>("{\"type\":\"step\",\"count\":-1}").unwrap_err();
    assert!(e.contains("invalid value: integer `-1`"), "{e}");
    // Files never travel as JSON.
    let files: Request = ModelRequest::LoadFiles {
        files: Files::default(),
    }
    .into();
    assert!(encode(&files).is_err());
}

#[test]
fn no_two_parts_name_the_same_message() {
    registry::names_are_unique(&Request::parts()).unwrap();
    registry::names_are_unique(&Event::parts()).unwrap();
    assert!(registry::names_are_unique(&[&["a", "b"], &["b"]]).is_err());
}
