//! Quantization (lesson 10, section 5): the same learned weights stored as f32, f16, q8 and q4,
//! side by side at the current position: each precision's next-token distribution (bars
//! aligned by token), KL from f32 and whether the top token agrees, the weight bytes and a
//! measured decode step, and one weight row before and after quantization with its error.

use super::batching::CACHE_BYTES;
use super::export;
use super::panel::PanelShell;
use super::taxonomy::Tag;
use super::views::quant::QuantViews;
use decoding_engine::units::{human_bytes, thousands};
use decoding_engine::Precision;
use decoding_page::page::Panel;
use decoding_page::protocol::QuantView;
use leptos::prelude::*;

#[component]
pub fn QuantPanel(
    views: QuantViews,
    precision: RwSignal<Option<(Precision, u64)>>,
) -> impl IntoView {
    view! {
        <PanelShell panel=Panel::Quant
            export=move || export::buttons("quant", "the four precisions", move || views.quant.with_untracked(|q| q.as_ref().map(decoding_page::export::quant)))>
            <Body views precision />
        </PanelShell>
    }
}

#[component]
fn Body(views: QuantViews, precision: RwSignal<Option<(Precision, u64)>>) -> impl IntoView {
    move || {
        let Some(v) = views.quant.get() else {
            return view! { <p>"Running the four precisions…"</p> }.into_any();
        };
        let running = precision.get().map(|(p, _)| p);
        view! {
            <p class="note">
                "The same weights θ stored four ways: the representation changes, not the learned values. "
                {format!("After the transcript's {} tokens, each precision's next-token distribution ", v.position)}
                "(softmax of its logits, before the sampling chain), on the CPU in this page's worker, "
                "each with its own KV cache. q8 and q4 round the activations to int8 too, per group, once "
                "a matrix (as llama.cpp does, in groups of 32 or more; a matrix whose rows start inside a "
                "group, like stories260K's w2, rounds each row with one scale), "
                "and multiply int8 × int8; norms stay f32. Under q8's and q4's KL: the same weights with f32 activations."
                {v.f32_is_dequantized.then_some(" This file is itself q8: its \"f32\" is the dequantized weights.")}
            </p>
            <Summary view=v.clone() running=running />
            <Bars view=v.clone() />
            <Row view=v />
        }
        .into_any()
    }
}

#[component]
fn Summary(view: QuantView, running: Option<Precision>) -> impl IntoView {
    let f32_bytes = view.precisions.first().map_or(1, |p| p.weight_bytes.max(1));
    let shape = view.shape.clone();
    let rows = view
        .precisions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let shape_ms = shape.as_ref().map(|s| s.decode_ms[i]);
            let current = running == Some(p.precision);
            let smaller = f32_bytes as f64 / p.weight_bytes.max(1) as f64;
            view! {
                <tr class:current=current>
                    <th scope="row">{p.precision.name()}{current.then_some(" (the transcript's)")}</th>
                    <td data-testid="quant-bytes">{thousands(p.weight_bytes)}</td>
                    <td class="nowrap">{human_bytes(p.weight_bytes)}</td>
                    <td>{format!("{smaller:.1}×")}</td>
                    <td data-testid="quant-decode" title=format!("median of 5 rounds after warm-up steps; the middle three {:.3}–{:.3} ms", p.decode_range.0, p.decode_range.1)>{format!("{:.3} ms", p.decode_ms)}<br/><small>{format!("{:.0} tokens/s · {:.3}–{:.3}", 1000.0 / p.decode_ms.max(1e-6), p.decode_range.0, p.decode_range.1)}</small></td>
                    <td data-testid="quant-shape-decode">{shape_ms.map(|t| view! { {format!("{:.2} ms", t.0)}<br/><small>{format!("{:.2}–{:.2}", t.1, t.2)}</small> })}</td>
                    <td><span data-testid="quant-kl">{kl_text(p.kl)}</span>{p.kl_f32_activations.map(|k| view! {
                        <br/><small title="the same weights with f32 activations">"f32 acts: "<span data-testid="quant-kl-f32-acts">{kl_text(k)}</span></small>
                    })}</td>
                    <td data-testid="quant-top">{if p.same_top { "same".to_string() } else { format!("differs (id {})", p.top) }}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="scroll-x" tabindex="0" role="region" aria-label="the four precisions, scrollable"><Tag of="quant-table" /><table class="compare quant-table" data-testid="quant-table">
            <caption>"Weight bytes, one measured decode step, and the distribution against f32's"</caption>
            <thead><tr>
                <th scope="col">"precision"</th><th scope="col">"weight bytes"</th><th scope="col">""</th>
                <th scope="col">"smaller"</th><th scope="col">"decode step (CPU)"</th>
                <th scope="col" title="random weights of llama2.c's 15M shape, made by the worker: a model that leaves the cache">"decode step, 15M shape"</th>
                <th scope="col">"KL(p_f32 ‖ p), nats"</th><th scope="col">"top token vs f32"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table></div>
        {shape.map(|s| view! {
            <p class="small" data-testid="quant-shape-note">{format!(
                "The 15M shape's column: random weights of llama2.c's 15M shape ({} at f32), made by the worker for this measurement, a decode step at position {} (median of 5 rounds; the middle three).{}",
                human_bytes(s.weight_bytes[0]), s.position,
                if f32_bytes < CACHE_BYTES {
                    " This model's weights fit in the CPU's caches, where a step never waits on memory; the 15M shape's do not, so its column shows what fewer bytes buy."
                } else {
                    ""
                }
            )}</p>
        })}
    }
}

#[component]
fn Bars(view: QuantView) -> impl IntoView {
    export::figure(&decoding_page::export::quant(&view).on_page("quant-chart"))
}

#[component]
fn Row(view: QuantView) -> impl IntoView {
    let r = view.row;
    let head = (0..r.values[0].len())
        .map(|i| view! { <th scope="col">{format!("w[{}]", r.from + i)}</th> })
        .collect_view();
    let line = |i: usize| {
        let cells = r.values[i]
            .iter()
            .zip(&r.values[0])
            .map(|(v, f)| {
                let e = v - f;
                view! {
                    <td>{format!("{v:+.5}")}{(i > 0).then(|| view! { <small class="err">{format!(" ({e:+.1e})")}</small> })}</td>
                }
            })
            .collect_view();
        view! { <tr><th scope="row">{Precision::ALL[i].name()}</th>{cells}</tr> }
    };
    view! {
        <div class="quant-row" data-testid="quant-row" tabindex="0" role="region" aria-label="a weight row before and after, scrollable">
            <table class="compare">
                <caption>{format!("{}: its first weights, before and after ", r.label)} <Tag of="quant-weights" /></caption>
                <thead><tr><th scope="col">""</th>{head}</tr></thead>
                <tbody>{(0..Precision::ALL.len()).map(line).collect_view()}</tbody>
            </table>
            <p class="note">
                {format!(
                    "Largest error over the whole row: f16 {:.2e}, q8 {:.2e}, q4 {:.2e}. The row touches {} q8 groups and {} q4 groups{}",
                    r.max_error[0], r.max_error[1], r.max_error[2], r.groups[0], r.groups[1],
                    if r.straddles {
                        ": it starts inside a group (groups run over the flattened matrix, as llama2.c's export writes them), and every one of its weights counts with its own group's scale."
                    } else { "." }
                )}
            </p>
        </div>
    }
}

/// A KL in nats: five decimals, or three significant digits below 10⁻³ (f16's is about
/// 10⁻⁶, which five decimals would show as 0).
fn kl_text(kl: f64) -> String {
    if kl != 0.0 && kl.abs() < 1e-3 {
        format!("{kl:.2e}")
    } else {
        format!("{kl:.5}")
    }
}
