//! The exports of real views.

use super::*;
use decoding_engine::decode::speculative::{Draft, Rule};
use decoding_engine::Precision;
use decoding_page::i18n::Lang::En;

/// The exports of real views: the distribution after "Once upon a time" labels its first bar
/// with "," (p = 0.9688, the model card's answer), the beam tree draws one node per node of
/// the search with the best path in the accent colour, and every drawing parses back.
#[test]
fn exports_of_real_views_are_their_data() {
    use decoding_page::export::{self, Shape};
    let (mut s, host) = loaded();
    let ev = set_prompt(&mut s, &host, "Once upon a time");
    let t = trace_after(&ev, &Settings::default());
    let tok = s.core.model.as_ref().unwrap().tokenizer.clone();
    let c = *s.core.model.as_ref().unwrap().config();
    let piece =
        |id: u32| decoding_page::page::piece_text(tok.piece(id).unwrap_or("?"), true, Some(12));
    let d = export::distribution(&t, &piece, 10, decoding_page::page::Scale::Probability, En);
    let texts = d.texts();
    let first_label = texts
        .iter()
        .position(|x| x == "\",\"")
        .expect("the , bar is labelled");
    assert!(
        texts[first_label + 1].starts_with('"'),
        "the next bar's label follows"
    );
    assert!(roxmltree::Document::parse(&d.svg()).is_ok());
    assert!(d.shapes.len() > 20);
    let kv = export::kv(&c, 5, En);
    assert!(
        kv.texts()
            .iter()
            .any(|x| x.contains("n = 5 holds 6,400 bytes")),
        "{:?}",
        kv.texts()
    );
    // The beam tree of "The dog", 4 levels of width 3.
    set_settings(&mut s, &host, &[("strategy", "beam"), ("beams", "3")]);
    set_prompt(&mut s, &host, "The dog");
    let ev = ask(
        &mut s,
        &host,
        Request::Beam(BeamRequest::BeamTo { depth: 4_u32 }),
    );
    let v = ev
        .iter()
        .find_map(|e| match e {
            Event::Beam(BeamEvent::Beam { view }) => Some(view.clone()),
            _ => None,
        })
        .unwrap();
    assert!(v.reset);
    let greedy = export::Greedy {
        tokens: &v.greedy_tokens,
        cum: &v.greedy_cum,
    };
    let tree = export::beam_tree(&v.changed, v.best_node, greedy, &piece, En);
    let circles = tree
        .leaves()
        .into_iter()
        .filter(|s| matches!(s, Shape::Circle { .. }))
        .count();
    // A node each, and each of greedy's tokens past the last one the tree holds: found here
    // by walking greedy's tokens down the tree from the root.
    let mut in_tree = 0;
    let mut at = 0;
    for &t in &v.greedy_tokens {
        match v
            .changed
            .iter()
            .find(|n| n.parent == Some(at) && n.token == Some(t))
        {
            Some(n) => (at, in_tree) = (n.id, in_tree + 1),
            None => break,
        }
    }
    assert_eq!(circles, v.changed.len() + v.greedy_tokens.len() - in_tree);
    // The best path, in orange: the best node and its ancestors up to the root (depth + 1
    // nodes).
    let best = tree
        .leaves()
        .into_iter()
        .filter(|s| matches!(s, Shape::Circle { fill, .. } if *fill == "#e0662f"))
        .count();
    assert_eq!(best, v.changed[v.best_node.unwrap()].depth + 1);
    assert!(roxmltree::Document::parse(&tree.svg()).is_ok());
}

/// Every other chart's export from its real view: the stages, the compared columns, the three
/// precisions, the speculative cycle, throughput and the roofline, the serving timelines —
/// each parses back as SVG and carries its title and the labels of its data.
#[test]
fn every_panel_exports_its_chart_from_its_view() {
    use decoding_page::export;
    let (mut s, host) = loaded();
    let mut events = Vec::new();
    let cols = vec![
        settings(&[("strategy", "greedy")]),
        settings(&[("top_p", "0.9")]),
    ];
    for req in [
        Request::Transcript(TranscriptRequest::SetPrompt {
            prompt: "Once upon a time".into(),
            chat: false,
        }),
        Request::Quant(QuantRequest::Quantization { open: true }),
        Request::Spec(SpecRequest::SpecStart {
            draft: Draft::Quant(Precision::Q8),
            gamma: 3,
            rule: Rule::Rejection,
        }),
        Request::Spec(SpecRequest::SpecCycle { count: 2 }),
        Request::Compare(ColumnsRequest::ColumnsStart { columns: cols }),
        Request::Compare(ColumnsRequest::ColumnsStep { count: 3 }),
        Request::Batch(BatchRequest::BatchSweep {
            batches: vec![1, 2],
            prompt_tokens: 4,
            gen_tokens: 2,
            model: SweepModel::Loaded,
        }),
        Request::Batch(BatchRequest::ServeSim {
            slots: 2,
            requests: 4,
            seed: 1,
        }),
    ] {
        let ev = ask(&mut s, &host, req.clone());
        assert!(
            !ev.iter()
                .any(|e| matches!(e, Event::Model(ModelEvent::Error { .. }))),
            "{req:?}: {ev:?}"
        );
        events.extend(ev);
    }
    let tok = s.core.model.as_ref().unwrap().tokenizer.clone();
    let piece =
        |id: u32| decoding_page::page::piece_text(tok.piece(id).unwrap_or("?"), true, Some(12));
    let trace = &page_trace(&s);
    let stages = export::stages(trace, &piece, En);
    let mut drawings = vec![("stages", stages, "top_k".to_string())];
    for e in &events {
        match e {
            Event::Quant(QuantEvent::Quant { view }) => {
                drawings.push(("quant", export::quant(view, En), "q4".into()))
            }
            Event::Spec(SpecEvent::Spec { view }) if view.last.is_some() => {
                let d = export::spec(view, En).unwrap();
                drawings.push(("spec", d, "q (the draft)".into()))
            }
            Event::Compare(ColumnsEvent::Columns { view }) => drawings.push((
                "columns",
                export::columns(view, &piece, En),
                piece(view.columns[1].top[0].0),
            )),
            Event::Batch(BatchEvent::Sweep { view }) => {
                drawings.push(("sweep", export::sweep(view, En), "D2".into()))
            }
            Event::Batch(BatchEvent::Serve { view }) => {
                drawings.push(("serve", export::serve(view, En), "continuous".into()))
            }
            _ => {}
        }
    }
    let kinds: std::collections::BTreeSet<&str> = drawings.iter().map(|d| d.0).collect();
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    for (name, d, must) in &drawings {
        let svg = d.svg();
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        assert!(
            texts.iter().any(|t| t.contains(must.as_str())),
            "{name}: no {must:?} in {texts:?}"
        );
        assert!(texts.contains(&d.title.as_str()), "{name}: its title");
    }
}

/// The chain with three stages at work: two charts a row, the neutral ones in a line (all
/// eight stacked made a PNG 7,148 px tall).
#[test]
fn the_chain_export_draws_the_stages_at_work() {
    let (mut s, host) = prompted(&[]);
    let tok = s.core.model.as_ref().unwrap().tokenizer.clone();
    let piece =
        |id: u32| decoding_page::page::piece_text(tok.piece(id).unwrap_or("?"), true, Some(12));
    set_settings(
        &mut s,
        &host,
        &[("temperature", "0.7"), ("top_k", "20"), ("top_p", "0.9")],
    );
    let chain = decoding_page::export::stages(&page_trace(&s), &piece, En);
    assert!(
        chain.height < 1000.0 && chain.width < 1400.0,
        "{} × {}",
        chain.width,
        chain.height
    );
    assert!(chain.texts().iter().any(|t| t.starts_with("Neutral here")));
}
