//! Quantization (lesson 10, section 5): the same learned weights stored as f32, f16, q8 and q4,
//! side by side at the current position: each precision's next-token distribution (bars
//! aligned by token), KL from f32 and whether the top token agrees, the weight bytes and a
//! measured decode step, and one weight row before and after quantization with its error.

use super::batching::CACHE_BYTES;
use super::export;
use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use super::views::numbers::{bytes, int, num, point};
use super::views::quant::QuantViews;
use decoding_engine::Precision;
use decoding_page::page::Panel;
use decoding_page::protocol::QuantView;
use leptos::prelude::*;

#[component]
pub fn QuantPanel(
    views: QuantViews,
    precision: RwSignal<Option<(Precision, u64)>>,
) -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        <PanelShell panel=Panel::Quant
            export=move || export::buttons("quant", "the four precisions", move || views.quant.with_untracked(|q| q.as_ref().map(|q| decoding_page::export::quant(q, ui.lang()))))>
            <Body views precision />
        </PanelShell>
    }
}

/// The four precisions; redrawn whole when the language changes (both branches read it),
/// so the parts under it write their words once.
#[component]
fn Body(views: QuantViews, precision: RwSignal<Option<(Precision, u64)>>) -> impl IntoView {
    let ui = expect_context::<Ui>();
    move || {
        let Some(v) = views.quant.get() else {
            return view! { <p>{ui.t("quant-running")}</p> }.into_any();
        };
        let running = precision.get().map(|(p, _)| p);
        view! {
            <p class="note">
                {ui.tf("quant-note", &[("position", int(ui, v.position as u64))])}
                {match &v.file {
                    Some(f) => Some(format!(" {}", ui.tf("quant-dequantized-file", &[("types", f.types.clone())]))),
                    None => v.f32_is_dequantized.then(|| format!(" {}", ui.t("quant-dequantized"))),
                }}
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
    let ui = expect_context::<Ui>();
    let f32_bytes = view.precisions.first().map_or(1, |p| p.weight_bytes.max(1));
    let shape = view.shape.clone();
    let rows = view
        .precisions
        .iter()
        .enumerate()
        .map(|(i, p)| (p, p.precision.name().to_string(), shape.as_ref().map(|s| s.decode_ms[i])))
        .chain(view.file.iter().map(|f| (&f.run, ui.tf("quant-file", &[("types", f.types.clone())]), None)))
        .map(|(p, name, shape_ms)| {
            let current = running == Some(p.precision);
            let smaller = f32_bytes as f64 / p.weight_bytes.max(1) as f64;
            let file = p.precision == Precision::Ggml;
            view! {
                <tr class:current=current data-testid=file.then_some("quant-file-row")>
                    <th scope="row">{name}{current.then(|| format!(" {}", ui.t("quant-current")))}</th>
                    <td data-testid="quant-bytes">{ui.int(p.weight_bytes)}</td>
                    <td class="nowrap">{bytes(ui, p.weight_bytes)}</td>
                    <td>{format!("{}×", num(ui, smaller, 1))}</td>
                    <td data-testid="quant-decode" title=ui.tf("quant-decode-title", &[("low", num(ui, p.decode_range.0, 3)), ("high", num(ui, p.decode_range.1, 3))])>
                        {format!("{} ms", num(ui, p.decode_ms, 3))}<br/><small>{ui.tf("quant-rate", &[
                            ("rate", num(ui, 1000.0 / p.decode_ms.max(1e-6), 0)),
                            ("low", num(ui, p.decode_range.0, 3)),
                            ("high", num(ui, p.decode_range.1, 3)),
                        ])}</small></td>
                    <td data-testid="quant-shape-decode">{shape_ms.map(|t| view! { {format!("{} ms", num(ui, t.0, 2))}<br/><small>{format!("{}–{}", num(ui, t.1, 2), num(ui, t.2, 2))}</small> })}</td>
                    <td><span data-testid="quant-kl">{kl_text(ui, p.kl)}</span>{p.kl_f32_activations.map(|k| view! {
                        <br/><small title=ui.t("quant-f32-acts-title")>{ui.t("quant-f32-acts")}" "<span data-testid="quant-kl-f32-acts">{kl_text(ui, k)}</span></small>
                    })}</td>
                    <td data-testid="quant-top">{if p.same_top { ui.t("quant-same") } else { ui.tf("quant-differs", &[("id", p.top.to_string())]) }}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="scroll-x" tabindex="0" role="region" aria-label=ui.t("quant-table-region")><Tag of="quant-table" /><table class="compare quant-table" data-testid="quant-table">
            <caption>{ui.t("quant-caption")}</caption>
            <thead><tr>
                <th scope="col">{ui.t("quant-col-precision")}</th><th scope="col">{ui.t("quant-col-bytes")}</th><th scope="col">""</th>
                <th scope="col">{ui.t("quant-col-smaller")}</th><th scope="col">{ui.t("quant-col-decode")}</th>
                <th scope="col" title=ui.t("quant-col-shape-title")>{ui.t("quant-col-shape")}</th>
                <th scope="col">{ui.t("quant-col-kl")}</th><th scope="col">{ui.t("quant-col-top")}</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table></div>
        {shape.map(|s| view! {
            <p class="small" data-testid="quant-shape-note">
                {ui.tf("quant-shape-note", &[("bytes", bytes(ui, s.weight_bytes[0])), ("position", int(ui, s.position as u64))])}
                {(f32_bytes < CACHE_BYTES).then(|| format!(" {}", ui.t("quant-shape-cached")))}
            </p>
        })}
    }
}

#[component]
fn Bars(view: QuantView) -> impl IntoView {
    let ui = expect_context::<Ui>();
    export::figure(&decoding_page::export::quant(&view, ui.lang()).on_page("quant-chart"))
}

#[component]
fn Row(view: QuantView) -> impl IntoView {
    let ui = expect_context::<Ui>();
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
                    <td>{point(ui, format!("{v:+.5}"))}{(i > 0).then(|| view! { <small class="err">{point(ui, format!(" ({e:+.1e})"))}</small> })}</td>
                }
            })
            .collect_view();
        view! { <tr><th scope="row">{Precision::ALL[i].name()}</th>{cells}</tr> }
    };
    view! {
        <div class="quant-row" data-testid="quant-row" tabindex="0" role="region" aria-label=ui.t("quant-row-region")>
            <table class="compare">
                <caption>{ui.tf("quant-row-caption", &[("row", ui.engine(&r.label))])}" " <Tag of="quant-weights" /></caption>
                <thead><tr><th scope="col">""</th>{head}</tr></thead>
                <tbody>{(0..Precision::ALL.len()).map(line).collect_view()}</tbody>
            </table>
            <p class="note">
                {
                    let args = [
                        ("f16", point(ui, format!("{:.2e}", r.max_error[0]))),
                        ("q8", point(ui, format!("{:.2e}", r.max_error[1]))),
                        ("q4", point(ui, format!("{:.2e}", r.max_error[2]))),
                        ("q8_groups", int(ui, r.groups[0] as u64)),
                        ("q4_groups", int(ui, r.groups[1] as u64)),
                    ];
                    if r.straddles {
                        ui.tf("quant-row-error-straddles", &args)
                    } else {
                        ui.tf("quant-row-error", &args)
                    }
                }
            </p>
        </div>
    }
}

/// A KL in nats: five decimals, or three significant digits below 10⁻³ (f16's is about
/// 10⁻⁶, which five decimals would show as 0).
fn kl_text(ui: Ui, kl: f64) -> String {
    if kl != 0.0 && kl.abs() < 1e-3 {
        point(ui, format!("{kl:.2e}"))
    } else {
        num(ui, kl, 5)
    }
}
