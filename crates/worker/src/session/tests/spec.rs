//! The speculative panel.

use super::*;
use decoding_engine::decode::speculative::{Draft, Rule};
use decoding_engine::Precision;

/// The speculative panel: a greedy run gives the transcript's greedy tokens, each marked as
/// accepted, target or bonus; the last cycle carries p and q at its positions with Σ min(p, q);
/// the totals add up; a sampled run under `rejection` is reproducible from its seed.
#[test]
fn speculative_runs_give_the_greedy_text_and_their_cycles() {
    let (mut s, host) = prompted(&[("temperature", "0"), ("max_tokens", "30")]);
    let plain = last!(&step(&mut s, &host, 30), Transcript).clone();
    let start = Request::Spec(SpecRequest::SpecStart {
        draft: Draft::Quant(Precision::Q4),
        gamma: 4,
        rule: Rule::Rejection,
    });
    ask(&mut s, &host, start);
    // Two cycles: the last one's drafted positions with p, q and Σ min(p, q).
    let ev = ask(
        &mut s,
        &host,
        Request::Spec(SpecRequest::SpecCycle { count: 2 }),
    );
    let [Event::Spec(SpecEvent::Spec { view })] = &ev[..] else {
        panic!("{ev:?}")
    };
    let last = view.last.as_ref().unwrap();
    assert_eq!(last.index, 1);
    assert!(!last.positions.is_empty());
    for p in &last.positions {
        let overlap: f64 = p.bars.iter().map(|b| b.p.min(b.q.unwrap())).sum();
        assert!(overlap <= p.overlap + 1e-12 && p.overlap <= 1.0 + 1e-12);
        assert!(p.bars.iter().any(|b| b.id == p.token));
    }
    let ev = ask(
        &mut s,
        &host,
        Request::Spec(SpecRequest::SpecCycle { count: 50 }),
    );
    let [Event::Spec(SpecEvent::Spec { view })] = &ev[..] else {
        panic!("{ev:?}")
    };
    let ids: Vec<u32> = view.tokens.iter().map(|t| t.id).collect();
    let want: Vec<u32> = plain.steps.iter().map(|st| st.token).collect();
    assert_eq!(ids, want);
    assert!(
        view.cycles < 30 && view.target_calls == view.cycles + 1,
        "{view:?}"
    );
    assert_eq!(view.accepted + view.cycles, 30);
    assert!(
        view.tokens
            .iter()
            .all(|t| t.kind != SpecTokenKind::Resampled),
        "greedy"
    );
    assert!(view.plain_ms_per_token > 0.0 && view.spec_ms_per_token > 0.0);
    // Sampling, rejection: the same seed gives the same run, another seed another.
    set_settings(&mut s, &host, &[("seed", "9"), ("max_tokens", "30")]);
    let run = |s: &mut Session, draft: Draft| {
        let start = Request::Spec(SpecRequest::SpecStart {
            draft,
            gamma: 3,
            rule: Rule::Rejection,
        });
        ask(s, &host, start);
        match &ask(
            s,
            &host,
            Request::Spec(SpecRequest::SpecCycle { count: 50 }),
        )[..]
        {
            [Event::Spec(SpecEvent::Spec { view })] => view.tokens.clone(),
            e => panic!("{e:?}"),
        }
    };
    let a = run(&mut s, Draft::Exit(2));
    assert_eq!(a, run(&mut s, Draft::Exit(2)));
    assert!(
        a.iter().any(|t| t.kind == SpecTokenKind::Resampled),
        "{a:?}"
    );
    let e = ask(
        &mut s,
        &host,
        Request::Spec(SpecRequest::SpecStart {
            draft: Draft::Exit(9),
            gamma: 3,
            rule: Rule::Rejection,
        }),
    );
    assert!(
        matches!(&e[..], [Event::Model(ModelEvent::Error { message })] if message.contains("from 1 to 4")),
        "{e:?}"
    );
}
