//! The page's controls: what each one changes and asks the worker for.

use super::*;

fn knobs(query: &str) -> (PageState, Knobs) {
    let r = from_query(query, 512);
    (
        r.page,
        Knobs {
            raw: r.raw,
            settings: r.settings,
        },
    )
}

#[test]
fn a_valid_knob_goes_to_the_worker_and_a_bad_one_stays_as_typed() {
    let m = PageModel::default();
    let (mut page, mut k) = knobs("");
    let c = m.set_knob(&mut page, &mut k, Knob::Temperature, "0.7", 512);
    assert!(c.errors.is_none());
    assert_eq!(
        k.settings
            .num(decoding_engine::decode::sampling::Knob::Temperature),
        0.7
    );
    assert_eq!(
        c.send,
        [Request::from(TranscriptRequest::SetSettings {
            settings: k.settings.clone()
        })]
    );
    // A rule broken: nothing goes, the settings in force stay, the text is kept.
    let c = m.set_knob(&mut page, &mut k, Knob::Temperature, "-1", 512);
    assert!(c.errors.is_some() && c.send.is_empty());
    let errors = c.errors.unwrap().0;
    assert_eq!(errors[0].field, "temperature");
    assert_eq!(
        k.settings
            .num(decoding_engine::decode::sampling::Knob::Temperature),
        0.7
    );
    assert_eq!(k.raw.get(Knob::Temperature), Some("-1"));
    // A logit bias naming a token past the vocabulary breaks its rule too.
    let c = m.set_knob(&mut page, &mut k, Knob::Temperature, "1", 512);
    assert!(c.errors.is_none());
    let c = m.set_knob(&mut page, &mut k, Knob::LogitBias, "600:1", 512);
    assert!(c.errors.is_some());
    // Lists split on their separator, blanks dropped; stop sequences keep their spaces.
    let c = m.set_knob(&mut page, &mut k, Knob::LogitBias, " 2:-100 , ,3:1 ", 512);
    assert!(c.errors.is_none());
    assert_eq!(
        k.settings
            .bias(decoding_engine::decode::sampling::Knob::LogitBias),
        [(2, -100.0), (3, 1.0)]
    );
    m.set_knob(&mut page, &mut k, Knob::Stop, " the end\n\n.", 512);
    assert_eq!(k.settings.stop, [" the end", "."]);
}

#[test]
fn choosing_beam_search_opens_its_panel_and_starts_a_search_once() {
    let m = PageModel::default();
    let (mut page, mut k) = knobs("");
    assert!(!page.panels.contains(&Panel::Beam));
    let c = m.set_knob(&mut page, &mut k, Knob::Strategy, "beam", 512);
    assert!(page.panels.contains(&Panel::Beam));
    assert!(matches!(
        &c.send[..],
        [
            Request::Transcript(TranscriptRequest::SetSettings { .. }),
            Request::Beam(BeamRequest::BeamStart)
        ]
    ));
    // Another beam knob: the settings only (the worker grows the search again itself).
    let c = m.set_knob(&mut page, &mut k, Knob::Beams, "3", 512);
    assert_eq!(c.send.len(), 1);
    // Step and reset follow the strategy.
    assert_eq!(m.step(&k.settings), Request::from(BeamRequest::BeamStep));
    assert_eq!(m.reset(&k.settings), Request::from(BeamRequest::BeamStart));
    let (_, plain) = knobs("");
    assert_eq!(
        m.step(&plain.settings),
        Request::from(TranscriptRequest::Step { count: 1 })
    );
    assert_eq!(
        m.reset(&plain.settings),
        Request::from(TranscriptRequest::Reset)
    );
}

#[test]
fn panels_that_cost_the_worker_tell_it_when_they_open_and_close() {
    let m = PageModel::default();
    let mut page = PageState::default();
    assert_eq!(
        m.toggle_panel(&mut page, Panel::Quant),
        [Request::from(QuantRequest::Quantization { open: true })]
    );
    assert_eq!(
        m.toggle_panel(&mut page, Panel::Quant),
        [Request::from(QuantRequest::Quantization { open: false })]
    );
    // The view inside the step lives in the KV panel (open by default): the probe runs
    // while both are open.
    assert_eq!(
        m.toggle_panel(&mut page, Panel::Inside),
        [Request::from(ProbeRequest::Probe { open: true })]
    );
    assert_eq!(
        m.toggle_panel(&mut page, Panel::Kv),
        [Request::from(ProbeRequest::Probe { open: false })]
    );
    // The toy panel opens on the lesson's logits and needs no worker.
    assert!(m.toggle_panel(&mut page, Panel::Toy).is_empty());
    assert_eq!(page.toy.as_deref(), Some(DEFAULT_TOY));
    assert!(m.toggle_panel(&mut page, Panel::Taxonomy).is_empty());
    assert!(page.panels.contains(&Panel::Taxonomy));
}

#[test]
fn a_prompt_a_backend_or_weights_regrow_a_beam_search() {
    let m = PageModel::default();
    let (mut page, beam) = knobs("strategy=beam&beams=2&steps=5");
    let send = m.set_backend(&mut page, BackendChoice::Cpu, &beam.settings);
    assert_eq!(
        send,
        [
            Request::from(ModelRequest::SetBackend {
                backend: BackendChoice::Cpu
            }),
            Request::from(BeamRequest::BeamTo { depth: 5 })
        ]
    );
    let send = m.set_precision(&mut page, Precision::Q8, &beam.settings);
    assert_eq!(
        send,
        [
            Request::from(ModelRequest::SetPrecision {
                precision: Precision::Q8
            }),
            Request::from(BeamRequest::BeamTo { depth: 5 })
        ]
    );
    assert_eq!(page.precision, Some(Precision::Q8));
    let send = m.set_prompt(&mut page, "The dog".into(), false, &beam.settings);
    assert_eq!((page.prompt.as_str(), page.steps), ("The dog", 0));
    assert_eq!(send[1], Request::from(BeamRequest::BeamStart));
    let (mut page, plain) = knobs("steps=5");
    assert_eq!(
        m.set_backend(&mut page, BackendChoice::Auto, &plain.settings)
            .len(),
        1
    );
    assert_eq!(
        m.set_prompt(&mut page, "x".into(), true, &plain.settings)
            .len(),
        1
    );
}

#[test]
fn a_view_opens_in_place_keeping_the_backend_precision_and_presenter_mode() {
    let m = PageModel::default();
    let (mut here, _) = knobs("backend=cpu&precision=q8&presenter=1&theme=dark&prompt=Old");
    here.steps = 7;
    let (r, send) = m.open_view(
        &here,
        "prompt=New&steps=3&panels=quant&backend=gpu",
        None,
        512,
    );
    assert_eq!((r.page.prompt.as_str(), r.page.steps), ("New", 3));
    assert_eq!(r.page.backend, BackendChoice::Cpu);
    assert_eq!(r.page.precision, Some(Precision::Q8));
    assert!(r.page.presenter);
    assert_eq!(r.page.theme, Some(crate::theme::Scheme::Dark));
    assert_eq!(send[0], Request::from(TranscriptRequest::Cancel));
    assert!(matches!(
        send[1],
        Request::Transcript(TranscriptRequest::Restore { steps: 3, .. })
    ));
    assert!(send.contains(&Request::from(QuantRequest::Quantization { open: true })));
    // A lesson step's view runs its action too (the cache step measures the cache).
    let (i, step) = crate::lesson::by_key("kv-cache").unwrap();
    let (r, send) = m.open_view(&here, step.query, Some(i), 512);
    assert_eq!(r.page.lesson, Some(i));
    assert!(
        send.iter().any(|q| measures(q) == Some("compare")),
        "{send:?}"
    );
}

#[test]
fn the_track_moves_one_step_at_a_time_within_its_ends() {
    let n = crate::lesson::STEPS.len();
    assert_eq!(lesson_move(None, 1), Some(0));
    assert_eq!(lesson_move(None, -1), Some(0));
    assert_eq!(lesson_move(Some(0), 1), Some(1));
    assert_eq!(lesson_move(Some(0), -1), None);
    assert_eq!(lesson_move(Some(n - 1), 1), None);
    assert_eq!(lesson_move(Some(n - 1), -1), Some(n - 2));
}

#[test]
fn the_toy_panel_runs_the_chain_in_the_page_and_says_what_is_wrong() {
    let (mut page, k) = knobs("temperature=0.5");
    // The lesson's example by default: z = [2, 1, 0.1] at T = 0.5, top mass 0.864.
    let t = toy_view(&page, "", &k.settings).unwrap();
    assert!((t.probs[0] - 0.8638).abs() < 1e-4, "{:?}", t.probs);
    page.toy = Some("1, x".into());
    assert!(toy_view(&page, "", &k.settings)
        .unwrap_err()
        .contains("\"x\""));
    page.toy = Some("1, 2".into());
    assert_eq!(
        toy_view(&page, "5", &k.settings).unwrap_err(),
        "history: row 5 is not one of the 2 logits (0..2)"
    );
}

#[test]
fn measurements_are_pending_until_their_answer() {
    assert_eq!(
        measures(
            &KvRequest::CacheCompare {
                positions: vec![16]
            }
            .into()
        ),
        Some("compare")
    );
    assert_eq!(measures(&BatchRequest::GpuSplit.into()), Some("gpu-split"));
    assert_eq!(measures(&TranscriptRequest::Rewind.into()), None);
    assert_eq!(
        answers(
            &KvEvent::CacheCompare {
                rows: vec![],
                bandwidth: None,
            }
            .into()
        ),
        Some("compare")
    );
    assert_eq!(answers(&Event::error("x")), None);
}

#[test]
fn a_speculative_run_starts_once_and_counts_its_cycles_up_to_what_a_link_holds() {
    let m = PageModel::default();
    let mut page = PageState::default();
    let d = (Draft::Quant(Precision::Q8), 4, Rule::Rejection);
    let send = m.spec_cycle(&mut page, 10, d);
    assert_eq!(
        send,
        [
            Request::from(SpecRequest::SpecStart {
                draft: d.0,
                gamma: 4,
                rule: Rule::Rejection
            }),
            Request::from(SpecRequest::SpecCycle { count: 10 })
        ]
    );
    assert_eq!(page.spec.as_ref().unwrap().cycles, 10);
    assert_eq!(m.spec_cycle(&mut page, 1, d).len(), 1);
    page.spec.as_mut().unwrap().cycles = MAX_SPEC_CYCLES - 3;
    assert_eq!(
        m.spec_cycle(&mut page, 10, d),
        [Request::from(SpecRequest::SpecCycle { count: 3 })]
    );
    assert!(m.spec_cycle(&mut page, 10, d).is_empty());
    // What the page writes, a link reopens.
    let q = crate::page::to_query(&page, &Settings::default());
    assert_eq!(from_query(&q, 512).page.spec, page.spec);
    let send = m.spec_start(&mut page, Draft::Ngram(2), 3, Rule::Match);
    assert_eq!(page.spec.as_ref().unwrap().cycles, 0);
    assert_eq!(send.len(), 1);
}

#[test]
fn a_comparison_starts_only_when_every_column_reads() {
    let m = PageModel::default();
    let mut page = PageState::default();
    let texts = ["temperature=0".to_string(), "temperature=nope".to_string()];
    let (errors, send) = m.compare_start(&mut page, &texts, 512);
    assert!(send.is_empty() && page.compare.is_none());
    assert!(errors[0].is_none());
    assert!(
        errors[1].as_deref().unwrap().contains("temperature"),
        "{errors:?}"
    );
    let texts = ["temperature=0".to_string(), "top_k=5".to_string()];
    let (errors, send) = m.compare_start(&mut page, &texts, 512);
    assert_eq!(errors, [None, None]);
    assert!(
        matches!(&send[..], [Request::Compare(ColumnsRequest::ColumnsStart { columns })] if columns.len() == 2)
    );
    assert_eq!(
        page.compare.as_ref().unwrap().columns[1]
            .count(decoding_engine::decode::sampling::Knob::TopK),
        5
    );
}

/// The samplers of 2026 through the page's controls: a bad value is refused with its rule
/// and nothing goes to the worker; DRY's breakers split at commas; a good value goes.
#[test]
fn the_2026_knobs_refuse_bad_values_with_their_rule() {
    let m = PageModel::default();
    let (mut page, mut k) = knobs("");
    for (knob, value, rule) in [
        (Knob::DryMultiplier, "-1", "must be in [0, 10000]"),
        (Knob::XtcThreshold, "1.5", "must be in [0, 1]"),
        (Knob::MirostatTau, "0", "must be in (0, 100]"),
        (Knob::AdaptivePDecay, "1", "must be in [0, 0.99]"),
        (
            Knob::DrySequenceBreaker,
            "\\n, 0123456789012345678901234567890123456789x",
            "at most 40 bytes",
        ),
    ] {
        let c = m.set_knob(&mut page, &mut k, knob, value, 512);
        assert!(c.send.is_empty(), "{knob:?}");
        let e = c.errors.unwrap().0;
        assert!(e[0].message.contains(rule), "{knob:?}: {}", e[0].message);
        // Back to a valid value (its default), so that the next knob's error is alone.
        let good = knob.spec().default.join(",");
        assert!(m
            .set_knob(&mut page, &mut k, knob, &good, 512)
            .errors
            .is_none());
    }
    let c = m.set_knob(&mut page, &mut k, Knob::DrySequenceBreaker, "\\n, :", 512);
    assert!(c.errors.is_none(), "{:?}", c.errors);
    assert_eq!(k.settings.texts(Knob::DrySequenceBreaker), ["\\n", ":"]);
    let c = m.set_knob(&mut page, &mut k, Knob::Mirostat, "2", 512);
    assert!(c.errors.is_none() && !c.send.is_empty());
}
