//! The captions of the two steps that time the 15M shape's random weights, a model that
//! leaves the cache (issue 48): prefill against decode with the roofline's prediction, and
//! quantization's decode steps by precision.

use super::*;

pub(in crate::lesson) fn prefill_decode(step: &Step, live: &Live) -> Out {
    let v = live.sweep.ok_or("the measurement")?;
    let crate::lesson::Action::Sweep {
        prompt_tokens,
        gen_tokens,
        model,
        ..
    } = step.action
    else {
        return Err("a measurement");
    };
    // The sweep the step asked for (not another one still arriving from an earlier view).
    if v.model != model
        || v.rows.first().map(|r| (r.prompt_tokens, r.gen_tokens))
            != Some((prompt_tokens as usize, gen_tokens as usize))
    {
        return Err("the measurement");
    }
    let m = verdict::rates(v, 1).ok_or("the measurement at B = 1")?;
    let roof = verdict::roofline_split(v, 1).ok_or("the machine's peaks")?;
    let ratio = m.prefill.median / m.decode.median.max(1e-9);
    let c = Caption::new()
        .t("On random weights of the 15M shape (")
        .n("weight_bytes", v.weight_bytes as f64, human_bytes(v.weight_bytes))
        .t(" of f32 weights, made by the worker for this measurement: a 1 MB model like stories260K stays in the cache beside the core, where decode never waits on memory), a ")
        .int("prompt_tokens", prompt_tokens as u64)
        .t("-token prompt, then ")
        .int("gen_tokens", gen_tokens as u64)
        .t(" tokens, each timed ")
        .int("reps", m.reps as u64)
        .t(" times (median, and the middle half of the runs): prefill ran the prompt as one pass of many rows at ")
        .spread("prefill_rate", m.prefill)
        .t("; decode ran one pass a token against the cache at ")
        .spread("decode_rate", m.decode)
        .t(": ")
        .n("ratio", ratio, format!("{ratio:.1}×"))
        .t(". The roofline of this machine's measured peaks (ridge ")
        .n("ridge", roof.ridge, format!("{:.1}", roof.ridge))
        .t(" FLOP a byte) puts decode at ")
        .n("decode_intensity", roof.decode_intensity, format!("{:.2}", roof.decode_intensity))
        .t(" and prefill at ")
        .n("prefill_intensity", roof.prefill_intensity, format!("{:.1}", roof.prefill_intensity))
        .t(" FLOP a byte and predicts ")
        .n("predicted", roof.predicted_ratio, format!("{:.1}×", roof.predicted_ratio))
        .t(". ");
    // The regime is said where the measurement carries it: prefill clearly faster, the
    // roof putting the two phases on either side of its ridge, and the measured ratio at
    // least a third of the one the roof predicts (a 1.4× measured against a predicted 10×
    // is not the roofline's story).
    let as_predicted = 3.0 * ratio >= roof.predicted_ratio;
    Ok(if m.prefill.clearly_above(&m.decode) && roof.parts() && as_predicted {
        c.t("Prefill is compute-bound (each layer's weights, read once, serve all the prompt's rows), decode bandwidth-bound (each weight read serves one row).")
    } else if !m.prefill.clearly_above(&m.decode) {
        c.t("On this load the two are within their spread: no regime is claimed.")
    } else if !roof.parts() {
        c.t("Prefill is clearly faster, but on this machine's measured roof both phases sit on the same side of the ridge: no regime is claimed.")
    } else {
        c.t("Prefill is clearly faster, but by far less than the roof predicts: no regime is claimed.")
    }
    .done())
}

pub(in crate::lesson) fn quantization(_: &Step, live: &Live) -> Out {
    let q = live.quant.ok_or("the four precisions")?;
    let get = |p: decoding_engine::Precision| q.precisions.iter().find(|v| v.precision == p);
    let (f, q8, q4) = (
        get(decoding_engine::Precision::F32).ok_or("f32")?,
        get(decoding_engine::Precision::Q8).ok_or("q8")?,
        get(decoding_engine::Precision::Q4).ok_or("q4")?,
    );
    let shape = q.shape.as_ref().ok_or("the 15M shape's decode steps")?;
    let bytes = |key, v: &PrecisionView| (key, v.weight_bytes as f64, human_bytes(v.weight_bytes));
    let (k, v, s) = bytes("f32_bytes", f);
    let c = Caption::new()
        .t("The same θ stored in ")
        .n(k, v, s)
        .t(" (f32), ");
    let (k, v, s) = bytes("q8_bytes", q8);
    let c = c.n(k, v, s).t(" (8-bit) and ");
    let (k, v, s) = bytes("q4_bytes", q4);
    let c = c
        .n(k, v, s)
        .t(" (4-bit); here KL(p_f32 ‖ p_q8) = ")
        .n("kl_q8", q8.kl, small(q8.kl))
        .t(" and KL(p_f32 ‖ p_q4) = ")
        .n("kl_q4", q4.kl, small(q4.kl))
        .t(" nats. The representation of θ changes, not its learned values. ");
    // The control: on the loaded model (its weights in the cache), q8 clearly faster than
    // f32 would mean the int8 arithmetic, not the bytes, made the difference.
    let quicker = |a: &PrecisionView, b: &PrecisionView| {
        a.decode_ms * CLEAR_RATIO <= b.decode_ms && a.decode_range.1 < b.decode_range.0
    };
    Ok(shape_decode(c, shape, quicker(q8, f)).done())
}

/// The 15M shape's decode steps by precision, and what they show: the bytes saved are a
/// shorter step only where the step waits on memory (a decode step times the weights'
/// read).
fn shape_decode(c: Caption, shape: &ShapeDecode, fast_in_cache: bool) -> Caption {
    let [f32, f16, q8, q4] = shape.decode_ms;
    let ms = |key, t: (f64, f64, f64)| (key, t.0, format!("{:.2} ms", t.0));
    let (k, v, s) = ms("shape_f32_ms", f32);
    let c = c
        .t("A decode step on the 15M shape's random weights (")
        .n(
            "shape_f32_bytes",
            shape.weight_bytes[0] as f64,
            human_bytes(shape.weight_bytes[0]),
        )
        .t(" at f32: a model that leaves the cache) took ")
        .n(k, v, s);
    let (k, v, s) = ms("shape_q8_ms", q8);
    let c = c.t(" at f32, ").n(k, v, s);
    let (k, v, s) = ms("shape_q4_ms", q4);
    let c = c.t(" at q8, ").n(k, v, s);
    let (k, v, s) = ms("shape_f16_ms", f16);
    let c = c.t(" at q4 and ").n(k, v, s).t(" at f16. ");
    // Clearly faster: by CLEAR_RATIO, and the ranges apart.
    let faster = |a: (f64, f64, f64), b: (f64, f64, f64)| a.0 * CLEAR_RATIO <= b.0 && a.2 < b.1;
    let saved = shape.weight_bytes[0] as f64 / shape.weight_bytes[2].max(1) as f64;
    let speed = f32.0 / q8.0.max(1e-9);
    let c = c
        .t("q8 reads ")
        .n("bytes_ratio", saved, format!("{saved:.1}×"))
        .t(" fewer bytes than f32 and ran ")
        .n("speed_ratio", speed, format!("{speed:.1}×"))
        .t(" as fast: ");
    let c = if faster(q8, f32) && faster(q4, f32) && !fast_in_cache {
        c.t("where a decode step waits on memory, fewer bytes are a shorter wait (on the loaded model, whose weights stay in the cache, q8 is not faster).")
    } else if fast_in_cache {
        c.t("q8 is clearly faster on the loaded model too, whose weights stay in the cache, so the saving in bytes is not told apart from the int8 arithmetic: no saving is claimed.")
    } else {
        c.t("on this load the steps are not clearly apart, so no saving is claimed.")
    };
    if faster(f32, f16) {
        c.t(" f16 halves the bytes but ran slower: the page's WebAssembly has no half-precision arithmetic, so each weight is widened to f32 as it is read.")
    } else {
        c
    }
}
