//! "Same θ, different config": the columns step together, each its plain run.

use super::*;

/// "Same θ, different config": the lesson's preset stepped 20 times. The greedy column is
/// the model card's published greedy text; the sampled column is what the transcript's own
/// loop (one token a request, alone on its sequence) gives with the same knobs and seed; the
/// columns' newest tokens went through the model as one pass of two rows; the knobs that
/// differ are named; the transcript is untouched.
#[test]
fn compare_columns_step_together_and_each_is_its_plain_run() {
    let (mut s, host) = loaded();
    set_prompt(&mut s, &host, "Once upon a time");
    let preset = decoding_page::page::COMPARE_PRESETS[0];
    let cols: Vec<Settings> = preset
        .columns
        .iter()
        .map(|c| decoding_page::page::parse_column(c, 512).unwrap())
        .collect();
    let ev = ask(
        &mut s,
        &host,
        Request::Compare(ColumnsRequest::ColumnsStart {
            columns: cols.clone(),
        }),
    );
    let v = last!(&ev, Columns);
    assert_eq!(v.columns.len(), 2);
    assert!(v.columns.iter().all(|c| c.steps.is_empty() && c.kept > 0));
    assert_eq!(v.differ, ["top_p", "temperature", "strategy"]);
    let ev = ask(
        &mut s,
        &host,
        Request::Compare(ColumnsRequest::ColumnsStep { count: 20 }),
    );
    let v = last!(&ev, Columns).clone();
    assert!(v.columns.iter().all(|c| c.steps.len() == 20));
    // The model card's greedy continuation (assets/models/stories260K/README.md).
    let card = ", there was a little girl named Lily. She loved to play outside in the park.";
    assert!(
        v.columns[0].text.len() > 40 && card.starts_with(&v.columns[0].text),
        "{}",
        v.columns[0].text
    );
    // The greedy column's next token is its distribution's most likely.
    assert_eq!(v.columns[0].next.unwrap().0, v.columns[0].top[0].0);
    // The other column against the transcript's loop with its settings.
    let ev = ask(
        &mut s,
        &host,
        Request::Transcript(TranscriptRequest::Restore {
            prompt: "Once upon a time".into(),
            settings: cols[1].clone(),
            steps: 20,
        }),
    );
    let t = last!(&ev, Transcript);
    assert_eq!(t.steps, v.columns[1].steps);
    assert_ne!(v.columns[0].text, v.columns[1].text);
    assert!(v.columns[1].kept > 1 && v.columns[1].entropy > 0.0);
    // Σ log p of the greedy column from its steps' own probabilities.
    let lp: f64 = v.columns[0].steps.iter().map(|s| s.model_prob.ln()).sum();
    assert!((lp - v.columns[0].logprob).abs() < 1e-9);
    // Nonsense is refused and the columns stay as they were.
    for bad in [
        Request::Compare(ColumnsRequest::ColumnsStart {
            columns: vec![cols[0].clone()],
        }),
        Request::Compare(ColumnsRequest::ColumnsStart {
            columns: vec![cols[0].clone(); 5],
        }),
        Request::Compare(ColumnsRequest::ColumnsStart {
            columns: vec![cols[0].clone(), settings(&[("strategy", "beam")])],
        }),
        Request::Compare(ColumnsRequest::ColumnsStep { count: 100_000 }),
    ] {
        let ev = ask(&mut s, &host, bad.clone());
        assert!(
            matches!(ev[..], [Event::Model(ModelEvent::Error { .. })]),
            "{bad:?}: {ev:?}"
        );
    }
    let ev = ask(
        &mut s,
        &host,
        Request::Compare(ColumnsRequest::ColumnsStep { count: 1 }),
    );
    assert!(last!(&ev, Columns)
        .columns
        .iter()
        .all(|c| c.steps.len() == 21));
}

/// Two generations stepping together through `run_pending_together` give the bits each
/// gives alone: the same tokens and the same stored logits as the plain loop.
#[test]
fn pending_tokens_of_several_generations_run_as_one_pass() {
    use decoding_engine::backend::testing::LosesDevice;
    let (s, _) = loaded();
    let m = s.core.model.as_ref().unwrap();
    let prompt = m.encode_prompt("Once upon a time").unwrap();
    let ends = vec![m.tokenizer.eos, m.tokenizer.bos];
    let run = |together: bool| {
        let mut counting = LosesDevice::after(
            decoding_engine::CpuBackend::new(m.transformer.clone()),
            usize::MAX,
        );
        let gs = [
            settings(&[("strategy", "greedy")]),
            settings(&[("seed", "9")]),
        ];
        let mut a = pollster::block_on(Generation::start(
            &mut counting,
            prompt.clone(),
            ends.clone(),
        ))
        .unwrap();
        let mut b = pollster::block_on(Generation::start(
            &mut counting,
            prompt.clone(),
            ends.clone(),
        ))
        .unwrap();
        let before = counting.forwards;
        for _ in 0..12 {
            if together {
                let mut both = [&mut a, &mut b];
                pollster::block_on(Generation::run_pending_together(&mut both, &mut counting))
                    .unwrap();
            }
            for (g, st) in [(&mut a, &gs[0]), (&mut b, &gs[1])] {
                pollster::block_on(g.step(&mut counting, st, &m.tokenizer)).unwrap();
            }
        }
        let passes = counting.forwards - before;
        (
            a.steps().to_vec(),
            b.steps().to_vec(),
            a.current_logits().map(<[f32]>::to_vec),
            passes,
        )
    };
    let (a1, b1, l1, alone) = run(false);
    let (a2, b2, l2, together) = run(true);
    assert_eq!(a1, a2);
    assert_eq!(b1, b2);
    assert_eq!(l1, l2);
    // 11 pending pairs ran as 11 passes, not 22 (the first step's logits came from the prefill).
    assert_eq!(alone, 22);
    assert_eq!(together, 11);
}
