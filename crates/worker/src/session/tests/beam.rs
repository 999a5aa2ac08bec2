//! Beam search beside greedy: the tree as its changes, a link's tree, the transcript
//! mirroring the best beam.

use super::*;

#[test]
fn beam_tree_grows_by_2k_nodes_a_step_and_travels_as_its_changes() {
    let (mut s, host) = loaded();
    let beam = settings(&[("strategy", "beam"), ("beams", "3")]);
    ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::SetSettings { settings: beam }),
    );
    set_prompt(&mut s, &host, "Once upon a time");
    // The page's copy of the tree, built from the changes alone.
    let mut tree: Vec<decoding_engine::decode::beam::BeamNode> = Vec::new();
    let mut view = None;
    let mut sent = 0;
    for _ in 0..5 {
        let ev = ask(&mut s, &host, Request::Beam(BeamRequest::BeamStep));
        let views: Vec<BeamView> = ev
            .into_iter()
            .filter_map(|e| match e {
                Event::Beam(BeamEvent::Beam { view }) => Some(view),
                _ => None,
            })
            .collect();
        // The first step starts the search: its root comes first.
        assert_eq!(views.len(), if tree.is_empty() { 2 } else { 1 });
        for v in views {
            assert_eq!(v.reset, tree.is_empty());
            assert_eq!(v.base, tree.len());
            // After the root, a step sends its 2k new nodes and the k beams it closed, never
            // the whole tree.
            assert!(v.changed.len() <= 2 * 3 + 3, "{}", v.changed.len());
            sent += v.changed.len();
            for n in &v.changed {
                match tree.get_mut(n.id) {
                    Some(old) => *old = n.clone(),
                    None => {
                        assert_eq!(n.id, tree.len());
                        tree.push(n.clone());
                    }
                }
            }
            assert_eq!(tree.len(), v.node_count);
            view = Some(v);
        }
    }
    let v = view.unwrap();
    assert_eq!(v.depth, 5);
    assert_eq!(tree.len(), 1 + 2 * 3 * 5);
    assert_eq!(tree, search(&s).nodes());
    assert!(
        sent < 2 * tree.len(),
        "{sent} nodes sent for a tree of {}",
        tree.len()
    );
    assert_eq!(v.greedy_tokens.len(), 5);
    assert!(v.best_logprob >= v.greedy_logprob - 1e-6);
    // The running greedy total equals greedy's path scored again from scratch.
    let prompt = s.core.gen.as_ref().unwrap().prompt().to_vec();
    let engine = s.core.engine.as_mut().unwrap();
    let (_, again) = pollster::block_on(decoding_engine::decode::beam::score_continuation(
        engine,
        &prompt,
        &v.greedy_tokens,
    ))
    .unwrap();
    assert!(
        (again - v.greedy_logprob).abs() < 1e-9,
        "{again} vs {}",
        v.greedy_logprob
    );
}

/// The beam search of the session (a test with a tree).
fn search(s: &Session) -> &decoding_engine::decode::beam::BeamSearch {
    &s.core.beam.as_ref().unwrap().search
}

/// Beam search is first-class. A link's steps are the tree's levels, the
/// transcript mirrors the best beam, rewind takes the tree one level back, and new beam
/// parameters keep the depth.
#[test]
fn a_beam_link_restores_its_tree_and_the_transcript_mirrors_the_best_beam() {
    let (mut s, host) = loaded();
    let beam = settings(&[("strategy", "beam")]);
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "The dog".into(),
            settings: beam.clone(),
            steps: 10,
        }),
    );
    let v = last!(&ev, Beam).clone();
    assert!(v.reset, "a restored tree is sent whole");
    assert_eq!(v.depth, 10);
    assert_eq!(v.changed.len(), v.node_count);
    // The figures first measured on this prompt.
    assert!((v.best_logprob - -4.35).abs() < 0.005, "{}", v.best_logprob);
    assert!(
        (v.greedy_logprob - -10.10).abs() < 0.005,
        "{}",
        v.greedy_logprob
    );
    // The transcript is the best beam: its tokens, and their model log-probabilities add
    // up to the beam's.
    let best = v.best_node.expect("a best node");
    let path = search(&s).path(best);
    let t = last!(&ev, Transcript);
    let ids: Vec<u32> = t.steps.iter().map(|s| s.token).collect();
    assert_eq!(ids, path);
    let sum: f64 = t.steps.iter().map(|s| s.model_prob.ln()).sum();
    assert!((sum - v.best_logprob).abs() < 1e-6, "{sum}");

    // The same tree as stepping ten times from the start.
    let (mut fresh, _) = loaded();
    ask(
        &mut fresh,
        &host,
        Request::Transcript(TranscriptRequest::SetSettings { settings: beam }),
    );
    set_prompt(&mut fresh, &host, "The dog");
    for _ in 0..10 {
        ask(&mut fresh, &host, Request::Beam(BeamRequest::BeamStep));
    }
    let nodes = |s: &Session| search(s).nodes().to_vec();
    assert_eq!(nodes(&s), nodes(&fresh));

    // Rewind: the tree of nine steps, and the transcript its best beam.
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Rewind),
    );
    let v9 = last!(&ev, Beam);
    assert_eq!((v9.depth, v9.reset), (9, true));
    let (mut nine, _) = loaded();
    ask(
        &mut nine,
        &host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "The dog".into(),
            settings: settings(&[("strategy", "beam")]),
            steps: 9,
        }),
    );
    assert_eq!(nodes(&s), nodes(&nine));
    let path9 = search(&s).path(v9.best_node.unwrap());
    let ids: Vec<u32> = last!(&ev, Transcript)
        .steps
        .iter()
        .map(|s| s.token)
        .collect();
    assert_eq!(ids, path9);

    // A wider beam: the search again, at the same depth.
    let wider = settings(&[("strategy", "beam"), ("beams", "5")]);
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::SetSettings { settings: wider }),
    );
    let v = last!(&ev, Beam);
    assert_eq!((v.depth, v.width, v.reset), (9, 5, true));
    // Each step expands 2k candidates (Hugging Face's rule).
    assert_eq!(v.node_count, 1 + 2 * 5 * 9);
}
