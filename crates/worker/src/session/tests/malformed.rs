//! Requests the rules refuse, in one table: each answers one error that names what is wrong,
//! and the session goes on as before.

// One request a line, as the page sends it (rustfmt would spread the table over a page).

use super::*;

#[rustfmt::skip]
#[test]
fn malformed_requests_are_one_error_each_and_change_nothing() {
    let (mut s, host) = loaded();
    // Before any prompt: nothing to step, rewind or extend.
    for (req, says) in [
        (Request::Transcript(TranscriptRequest::Step { count: 1 }), "no prompt has been run yet"),
        (Request::Transcript(TranscriptRequest::Rewind), "no prompt has been run yet"),
        (
            Request::Batch(BatchRequest::BatchLanes {
                batch: 2,
                tokens: 4,
            }),
            "no prompt has been run yet",
        ),
    ] {
        let ev = ask(&mut s, &host, req.clone());
        match &ev[..] {
            [Event::Model(ModelEvent::Error { message })] => assert!(message.contains(says), "{req:?}: {message}"),
            _ => panic!("{req:?} gave {ev:?}"),
        }
    }
    set_prompt(&mut s, &host, "Once upon a time");
    let before = last!(step(&mut s, &host, 3), Transcript).clone();
    // As the page sends them: JSON text, read as the worker reads it (a request it cannot
    // read is answered with one error too).
    let table = [
        (r#"{"type":"batch_lanes","batch":0,"tokens":4}"#, "a batch of 0 lanes"),
        (r#"{"type":"batch_lanes","batch":17,"tokens":4}"#, "a batch of 17 lanes"),
        (r#"{"type":"batch_lanes","batch":2,"tokens":100000}"#, "100000 tokens a lane"),
        (r#"{"type":"batch_sweep","batches":[64],"prompt_tokens":8,"gen_tokens":4}"#, "a batch of 64"),
        (r#"{"type":"batch_sweep","batches":[1],"prompt_tokens":500,"gen_tokens":100}"#, "500 prompt and 100 generated tokens"),
        (r#"{"type":"serve_sim","slots":0,"requests":4,"seed":1}"#, "0 slots and 4 requests"),
        (r#"{"type":"serve_sim","slots":4,"requests":1000,"seed":1}"#, "4 slots and 1000 requests"),
        // The toy logits run in the page: the worker knows no such message.
        (r#"{"type":"toy","logits":[],"history":[]}"#, "no message has the type \"toy\""),
        (r#"{"type":"columns_start","columns":[{}]}"#, "column"),
        (r#"{"type":"spec_start","draft":"nonsense","gamma":4,"rule":"rejection"}"#, "draft \"nonsense\": give quant:q8, quant:q4, exit:K or ngram:N"),
        (r#"{"type":"spec_start","draft":"exit:9","gamma":4,"rule":"rejection"}"#, "exit:9: K must be a whole number of layers from 1 to 4"),
        (r#"{"type":"spec_start","draft":"quant:q8","gamma":4,"rule":"maybe"}"#, "unknown variant `maybe`, expected `rejection` or `match`"),
        (r#"{"type":"spec_start","draft":"quant:q8","gamma":0,"rule":"rejection"}"#, "gamma 0: draft 1 to 16 tokens a cycle"),
    ];
    for (json, says) in table {
        let ev = match decoding_page::protocol::read_request(json) {
            Ok(req) => ask(&mut s, &host, req),
            Err(message) => vec![Event::Model(ModelEvent::Error { message })],
        };
        match &ev[..] {
            [Event::Model(ModelEvent::Error { message })] => assert!(message.contains(says), "{json}: {message}"),
            _ => panic!("{json} gave {ev:?}"),
        }
    }
    // The transcript is as it was, and goes on.
    assert_eq!(last_transcript(&[s.core.transcript()]), &before);
    let after = last!(step(&mut s, &host, 1), Transcript).clone();
    assert_eq!(after.steps.len(), before.steps.len() + 1);
}
