//! The captions of the two steps that time the 15M shape's random weights, a model that
//! leaves the cache (issue 48): prefill against decode with the roofline's prediction, and
//! quantization's decode steps by precision.

use super::*;

pub(in crate::lesson) fn prefill_decode(step: &Step, live: &Live) -> Out {
    let v = live.sweep.ok_or("caption-wait-measurement")?;
    let crate::lesson::Action::Sweep {
        prompt_tokens,
        gen_tokens,
        model,
        ..
    } = step.action
    else {
        return Err("caption-wait-a-measurement");
    };
    // The sweep the step asked for (not another one still arriving from an earlier view).
    if v.model != model
        || v.rows.first().map(|r| (r.prompt_tokens, r.gen_tokens))
            != Some((prompt_tokens as usize, gen_tokens as usize))
    {
        return Err("caption-wait-measurement");
    }
    let m = verdict::rates(v, 1).ok_or("caption-wait-b1")?;
    let roof = verdict::roofline_split(v, 1).ok_or("caption-wait-peaks")?;
    let ratio = m.prefill.median / m.decode.median.max(1e-9);
    let f = Fmt(live.lang);
    let [prefill, prefill_low, prefill_high] =
        f.spread("prefill_rate", ["prefill_low", "prefill_high"], m.prefill);
    let [decode, decode_low, decode_high] =
        f.spread("decode_rate", ["decode_low", "decode_high"], m.decode);
    let c = Caption::new(live.lang)
        .msg(
            "caption-prefill-decode-measured",
            &[
                f.human_bytes("weight_bytes", v.weight_bytes),
                f.int("prompt_tokens", prompt_tokens as u64),
                f.int("gen_tokens", gen_tokens as u64),
                f.int("reps", m.reps as u64),
                prefill,
                prefill_low,
                prefill_high,
                decode,
                decode_low,
                decode_high,
                f.times("ratio", ratio),
            ],
        )
        .gap()
        .msg(
            "caption-prefill-decode-roofline",
            &[
                f.f("ridge", roof.ridge, 1),
                f.f("decode_intensity", roof.decode_intensity, 2),
                f.f("prefill_intensity", roof.prefill_intensity, 1),
                f.times("predicted", roof.predicted_ratio),
            ],
        );
    // The regime is said where the measurement carries it: prefill clearly faster, the
    // roof putting the two phases on either side of its ridge, and the measured ratio at
    // least a third of the one the roof predicts (a 1.4× measured against a predicted 10×
    // is not the roofline's story).
    let as_predicted = 3.0 * ratio >= roof.predicted_ratio;
    let id = if m.prefill.clearly_above(&m.decode) && roof.parts() && as_predicted {
        "caption-prefill-decode-regime"
    } else if !m.prefill.clearly_above(&m.decode) {
        "caption-prefill-decode-within-spread"
    } else if !roof.parts() {
        "caption-prefill-decode-same-side"
    } else {
        "caption-prefill-decode-short-of-roof"
    };
    Ok(c.gap().msg(id, &[]).done())
}

pub(in crate::lesson) fn quantization(_: &Step, live: &Live) -> Out {
    let q = live.quant.ok_or("caption-wait-precisions")?;
    let get = |p: decoding_engine::Precision| q.precisions.iter().find(|v| v.precision == p);
    let (f32, q8, q4) = (
        get(decoding_engine::Precision::F32).ok_or("caption-wait-precisions")?,
        get(decoding_engine::Precision::Q8).ok_or("caption-wait-precisions")?,
        get(decoding_engine::Precision::Q4).ok_or("caption-wait-precisions")?,
    );
    let shape = q.shape.as_ref().ok_or("caption-wait-shape")?;
    let f = Fmt(live.lang);
    let c = Caption::new(live.lang).msg(
        "caption-quantization",
        &[
            f.human_bytes("f32_bytes", f32.weight_bytes),
            f.human_bytes("q8_bytes", q8.weight_bytes),
            f.human_bytes("q4_bytes", q4.weight_bytes),
            f.small("kl_q8", q8.kl),
            f.small("kl_q4", q4.kl),
        ],
    );
    // The control: on the loaded model (its weights in the cache), q8 clearly faster than
    // f32 would mean the int8 arithmetic, not the bytes, made the difference.
    let quicker = |a: &PrecisionView, b: &PrecisionView| {
        a.decode_ms * CLEAR_RATIO <= b.decode_ms && a.decode_range.1 < b.decode_range.0
    };
    Ok(shape_decode(c.gap(), f, shape, quicker(q8, f32)).done())
}

/// The 15M shape's decode steps by precision, and what they show: the bytes saved are a
/// shorter step only where the step waits on memory (a decode step times the weights'
/// read).
fn shape_decode(c: Caption, f: Fmt, shape: &ShapeDecode, fast_in_cache: bool) -> Caption {
    let [f32, f16, q8, q4] = shape.decode_ms;
    let c = c.msg(
        "caption-quantization-shape",
        &[
            f.human_bytes("shape_f32_bytes", shape.weight_bytes[0]),
            f.ms("shape_f32_ms", f32.0, 2),
            f.ms("shape_q8_ms", q8.0, 2),
            f.ms("shape_q4_ms", q4.0, 2),
            f.ms("shape_f16_ms", f16.0, 2),
        ],
    );
    // Clearly faster: by CLEAR_RATIO, and the ranges apart.
    let faster = |a: (f64, f64, f64), b: (f64, f64, f64)| a.0 * CLEAR_RATIO <= b.0 && a.2 < b.1;
    let saved = shape.weight_bytes[0] as f64 / shape.weight_bytes[2].max(1) as f64;
    let speed = f32.0 / q8.0.max(1e-9);
    let c = c.gap().msg(
        "caption-quantization-ratio",
        &[f.times("bytes_ratio", saved), f.times("speed_ratio", speed)],
    );
    let id = if faster(q8, f32) && faster(q4, f32) && !fast_in_cache {
        "caption-quantization-shorter-wait"
    } else if fast_in_cache {
        "caption-quantization-fast-in-cache"
    } else {
        "caption-quantization-not-apart"
    };
    let c = c.gap().msg(id, &[]);
    if faster(f32, f16) {
        c.gap().msg("caption-quantization-f16", &[])
    } else {
        c
    }
}
