//! The messages: coalescing, validation on arrival, encoding.

use super::*;

#[test]
fn knob_requests_coalesce_only_after_the_last_step() {
    let set = |t: &str| Request::SetSettings {
        settings: Settings {
            temperature: t.parse().unwrap(),
            ..Settings::default()
        },
    };
    let toy = Request::Toy {
        logits: vec![1.0],
        history: vec![],
    };
    let mut q: std::collections::VecDeque<Request> = [
        set("0.1"),
        Request::Step { count: 1 },
        set("0.2"),
        toy.clone(),
        set("0.3"),
    ]
    .into();
    let new = set("0.4");
    coalesce(&mut q, knob_kind(&new), knob_kind);
    q.push_back(new);
    // The step keeps the settings it was asked under; after it, only the latest remain.
    assert_eq!(q, [set("0.1"), Request::Step { count: 1 }, toy, set("0.4")]);
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
    let Request::SetSettings { settings } =
        decode::<Request>(&msg("{\"temperature\":[\"0.5\"],\"stop\":[\".\",\"!\"]}")).unwrap()
    else {
        panic!("not settings")
    };
    assert_eq!(settings.temperature, 0.5);
    assert_eq!(settings.stop, [".", "!"]);
}

#[test]
fn messages_round_trip_as_json() {
    let reqs = [
        Request::Step { count: 3 },
        Request::SetSettings {
            settings: Settings::default(),
        },
        Request::Toy {
            logits: vec![2.0, 1.0, 0.1],
            history: vec![],
        },
        Request::Cancel,
    ];
    for r in reqs {
        assert_eq!(decode::<Request>(&encode(&r).unwrap()).unwrap(), r);
    }
    let e = Event::Progress {
        file: "m.bin".into(),
        loaded: 5,
        total: Some(10),
    };
    assert_eq!(decode::<Event>(&encode(&e).unwrap()).unwrap(), e);
    assert!(decode::<Request>("{\"type\":\"bogus\"}").is_err());
}
