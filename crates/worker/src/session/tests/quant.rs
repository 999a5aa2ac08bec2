//! The quantization panel.

use super::*;

/// Opens the quantization panel: its one view.
fn open_panel(s: &mut Session, host: &TestHost) -> QuantView {
    let ev = ask(
        s,
        host,
        Request::Quant(QuantRequest::Quantization { open: true }),
    );
    match &ev[..] {
        [Event::Quant(QuantEvent::Quant { view })] => view.clone(),
        _ => panic!("{ev:?}"),
    }
}

/// The quantization panel: four precisions with their bytes, KL from f32 (0 for f32, the
/// KL of the two distributions computed here for f16 and q8), the same top token, the
/// tokens' four probabilities, stories260K's straddling w2 row; and a new view after each
/// step.
#[test]
fn the_quantization_panel_compares_four_precisions_and_follows_the_transcript() {
    use decoding_engine::Precision;
    let (mut s, host) = prompted(&[("temperature", "0")]);
    let view = open_panel(&mut s, &host);
    assert_eq!(view.position, 5);
    let bytes: Vec<u64> = view.precisions.iter().map(|p| p.weight_bytes).collect();
    // f16: the 259,328 matrix weights at 2 bytes, the 704 norm weights at 4.
    assert_eq!(bytes, [1_040_128, 521_472, 278_352, 164_896]);
    let order: Vec<Precision> = view.precisions.iter().map(|p| p.precision).collect();
    assert_eq!(
        order,
        [Precision::F32, Precision::F16, Precision::Q8, Precision::Q4]
    );
    assert_eq!(view.precisions[0].kl, 0.0);
    assert_eq!(view.file, None, "an f32 file runs at one of the four");
    let original = s.core.model.as_ref().unwrap().transformer.clone();
    let context = [1, 403, 407, 261, 378];
    let pf = model_probs(&original, &context);
    let kl_of = |p: Precision| -> (f64, Vec<f64>) {
        let pq = model_probs(&original.at(p), &context);
        (pf.iter().zip(&pq).map(|(a, b)| a * (a / b).ln()).sum(), pq)
    };
    let (kl16, p16) = kl_of(Precision::F16);
    let (kl8, pq) = kl_of(Precision::Q8);
    for (i, kl) in [(1, kl16), (2, kl8)] {
        let got = view.precisions[i].kl;
        assert!((got - kl).abs() < 1e-9, "{i}: {got} vs {kl}");
    }
    assert!(kl16 > 0.0 && kl16 < kl8, "f16 {kl16} against q8 {kl8}");
    assert!(view.precisions[3].kl > view.precisions[2].kl);
    assert!(view.precisions.iter().all(|p| p.decode_ms > 0.0));
    assert_eq!(view.precisions[2].top, 432);
    assert!(view.precisions[1].same_top && view.precisions[2].same_top);
    let t = &view.tokens[0];
    assert_eq!(t.id, 432);
    assert!((t.p[0] - pf[432]).abs() < 1e-12 && (t.p[2] - pq[432]).abs() < 1e-12);
    assert!((t.p[1] - p16[432]).abs() < 1e-12);
    // w2 row 1 spans weights 172..344: q8 groups 2–5, q4 groups 5–10.
    assert!(view.row.straddles);
    assert_eq!(view.row.groups, [4, 6]);
    let e = view.row.max_error;
    assert!(e[0] > 0.0 && e[1] > e[0] && e[2] > e[1], "{e:?}");
    // A step: the transcript and then the panel's view at the new position.
    let ev = step(&mut s, &host, 1);
    match ev.last() {
        Some(Event::Quant(QuantEvent::Quant { view })) => assert_eq!(view.position, 6),
        e => panic!("{e:?}"),
    }
    // Closed: no more views.
    ask(
        &mut s,
        &host,
        Request::Quant(QuantRequest::Quantization { open: false }),
    );
    let ev = step(&mut s, &host, 1);
    assert!(!ev
        .iter()
        .any(|e| matches!(e, Event::Quant(QuantEvent::Quant { .. }))));
}

/// A GGUF file held in its own blocks (a Q4_K_M by llama.cpp's quantizer: Q4_K and Q6_K
/// matrices, F32 norms) gets its own row after the four precisions made from it: its types,
/// its bytes (fewer than q8's), a measured step, and its KL from the f32 made from the same
/// file, computed here from the two models.
#[test]
fn a_file_in_its_own_blocks_has_its_own_row() {
    use decoding_engine::Precision;
    let (mut s, host) = prompted(&[("temperature", "0")]);
    let file = super::files::fixture("kquant/kq-q4_k_m.gguf");
    drop_files(&mut s, &host, &[("kq-q4_k_m.gguf", file)]);
    set_prompt(&mut s, &host, "Once upon a time");
    let view = open_panel(&mut s, &host);
    let row = view.file.as_ref().expect("the file's own row");
    assert!(
        row.types.contains("Q4_K") && row.types.contains("Q6_K") && row.types.contains("F32"),
        "{}",
        row.types
    );
    let original = s.core.model.as_ref().unwrap().transformer.clone();
    assert_eq!(original.weights.precision(), Precision::Ggml);
    assert_eq!(row.run.precision, Precision::Ggml);
    assert_eq!(
        row.run.weight_bytes,
        original.weights.bytes(&original.config)
    );
    assert!(row.run.weight_bytes < view.precisions[2].weight_bytes);
    assert!(row.run.decode_ms > 0.0 && row.run.decode_range.0 <= row.run.decode_range.1);
    let context = s.core.gen.as_ref().unwrap().context();
    assert_eq!(view.position, context.len());
    let pf = model_probs(&original.at(Precision::F32), &context);
    let pg = model_probs(&original, &context);
    let kl: f64 = pf.iter().zip(&pg).map(|(a, b)| a * (a / b).ln()).sum();
    assert!((row.run.kl - kl).abs() < 1e-9, "{} vs {kl}", row.run.kl);
    assert!(
        kl > 0.0,
        "the int8 activations change the distribution a little"
    );
    let top = pg
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0;
    assert_eq!(row.run.top as usize, top);
}
