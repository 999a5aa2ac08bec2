//! The page's reactions (`behaviour::PageModel`) to the worker's real events: what the page asks
//! for when the worker is ready and when the first backend opens, the link's steps, the beam
//! tree patched from its changes, a loaded transcript checked against its replay.

use super::*;
use decoding_page::behaviour::{self, PageModel};
use decoding_page::page;

fn view(query: &str) -> (page::PageState, Settings) {
    let r = decoding_page::lesson::from_link(query, 512);
    (r.page, r.settings)
}

#[test]
fn ready_loads_the_links_view_and_the_first_backend_opens_its_panels() {
    let (page, st) = view("prompt=The+dog&steps=4&panels=kv,inside,quant&lesson=9");
    let mut m = PageModel::default();
    let r = m.apply(&page, &st, &mut Event::Model(ModelEvent::Ready));
    assert!(
        matches!(&r.send[..], [Request::Model(ModelRequest::LoadUrl { urls, .. })] if urls.len() == 2),
        "{:?}",
        r.send
    );
    // Once the model has loaded, the link's view opens on it (once: a model loaded later
    // from files keeps the transcript's prompt, the worker's own doing).
    let (mut s, host) = loaded();
    let mut loaded_ev = Event::Model(ModelEvent::Loaded {
        info: match &drop_files(
            &mut s,
            &host,
            &[
                ("stories260K.bin", asset("stories260K.bin")),
                ("tok512.bin", asset("tok512.bin")),
            ],
        )[0]
        {
            Event::Model(ModelEvent::Loaded { info }) => info.clone(),
            e => panic!("{e:?}"),
        },
    });
    let r = m.apply(&page, &st, &mut loaded_ev);
    match &r.send[..] {
        [Request::Transcript(TranscriptRequest::Restore { prompt, steps, .. })] => {
            assert_eq!((prompt.as_str(), *steps), ("The dog", 4))
        }
        other => panic!("{other:?}"),
    }
    assert!(m.apply(&page, &st, &mut loaded_ev).send.is_empty());
    // The backend the worker opened, as it announces it.
    let (mut s, host) = loaded();
    let ev = ask(
        &mut s,
        &host,
        Request::Model(ModelRequest::SetBackend {
            backend: decoding_engine::backend::choose::BackendChoice::Cpu,
        }),
    );
    let mut backend = ev
        .into_iter()
        .find(|e| matches!(e, Event::Model(ModelEvent::Backend { .. })))
        .unwrap();
    let r = m.apply(&page, &st, &mut backend);
    assert_eq!(r.lesson_in_view, Some(8));
    assert!(
        matches!(
            &r.send[..],
            [
                Request::Quant(QuantRequest::Quantization { open: true }),
                Request::Inside(ProbeRequest::Probe { open: true }),
                Request::Batch(BatchRequest::BatchSweep { .. })
            ]
        ),
        "{:?}",
        r.send
    );
    // A later backend (a switch) asks for none of that again.
    let r = m.apply(&page, &st, &mut backend);
    assert!(r.send.is_empty(), "{r:?}");
}

#[test]
fn a_transcript_sets_the_links_steps_and_a_loaded_file_is_checked_against_its_replay() {
    let (page, st) = view("");
    let (mut s, host) = prompted(&[("seed", "2")]);
    let mut ev = step(&mut s, &host, 3);
    let t = ev
        .iter_mut()
        .find(|e| matches!(e, Event::Transcript(TranscriptEvent::Transcript { .. })))
        .unwrap();
    let mut m = PageModel::default();
    let got: Vec<u32> = match &*t {
        Event::Transcript(TranscriptEvent::Transcript { view }) => {
            view.steps.iter().map(|s| s.token).collect()
        }
        _ => unreachable!(),
    };
    // The file's tokens are the replay's: no error; another file's: said so.
    m.expect_tokens = Some(got.clone());
    let r = m.apply(&page, &st, t);
    assert_eq!(
        (r.steps, r.error.as_deref(), r.ran),
        (Some(3), None, Some(false))
    );
    assert_eq!(m.expect_tokens, None);
    m.expect_tokens = Some(got.iter().map(|t| t + 1).collect());
    let r = m.apply(&page, &st, t);
    assert!(r.error.unwrap().contains("differ from this model's replay"));
    // A file with more tokens than the replay has yet waits for them.
    m.expect_tokens = Some(vec![1; 9]);
    assert_eq!(m.apply(&page, &st, t).error, None);
    assert!(m.expect_tokens.is_some());
}

#[test]
fn the_beam_tree_is_patched_from_its_changes_and_an_out_of_order_view_is_an_error() {
    let (page, st) = view("strategy=beam&beams=3");
    let (mut s, host) = prompted(&[("strategy", "beam"), ("beams", "3")]);
    let (mut m, mut nodes) = (PageModel::default(), Vec::new());
    for req in [
        Request::Beam(BeamRequest::BeamStart),
        Request::Beam(BeamRequest::BeamStep),
        Request::Beam(BeamRequest::BeamStep),
        Request::Beam(BeamRequest::BeamStep),
    ] {
        let mut ev = ask(&mut s, &host, req);
        let b = ev
            .iter_mut()
            .find(|e| matches!(e, Event::Beam(BeamEvent::Beam { .. })))
            .unwrap();
        let Event::Beam(BeamEvent::Beam { view }) = b else {
            unreachable!()
        };
        behaviour::patch_beam(&mut nodes, view).unwrap();
        assert!(
            view.changed.is_empty(),
            "the changes were taken into the page's tree"
        );
        assert_eq!(m.apply(&page, &st, b).ran, Some(false));
    }
    assert_eq!(nodes, s.core.beam.as_ref().unwrap().search.nodes());
    // A view whose changes do not continue the tree held here.
    nodes.truncate(2);
    let mut ev = ask(&mut s, &host, Request::Beam(BeamRequest::BeamStep));
    let Some(Event::Beam(BeamEvent::Beam { view })) = ev
        .iter_mut()
        .find(|e| matches!(e, Event::Beam(BeamEvent::Beam { .. })))
    else {
        panic!()
    };
    assert!(behaviour::patch_beam(&mut nodes, view)
        .unwrap_err()
        .contains("out of order"));
}
