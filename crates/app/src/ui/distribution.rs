//! The live next-token distribution: every token of the vocabulary sorted by probability
//! (probability or log-probability), the chosen token highlighted, tokens a stage removed
//! greyed (with the probability they had before), entropy and exp(entropy). Redrawn from the
//! engine's trace whenever a knob moves; nothing is recomputed here.

use super::export;
use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use super::transcript::{fixed, list_sep, shortest};
use super::views::toy::ToyViews;
use decoding_page::geometry::distribution::{self as dg, BarKind, CHART_ALL, CHART_BARS};
use decoding_page::page::piece_text;
use decoding_page::page::{self, Panel, Scale};
use decoding_page::protocol::TraceView;
use leptos::prelude::*;

/// Rows listed under the chart before "show all".
const ROWS: usize = 40;

/// With "show all", only the rows in view (and a margin) exist in the page: a 32,000-token
/// vocabulary is 32,000 rows, rebuilt on every trace. Each row is `ROW_PX` high
/// (`.rows.virtual .row` in style.css), so the rows in view follow from the scroll offset.
const ROW_PX: f64 = 26.0;
const VIRTUAL_ROWS: usize = 60;

/// The slice of `0..len` drawn at a scroll offset, with the spacers' heights above and below.
fn virtual_window(len: usize, scroll_top: f64) -> (usize, usize, f64, f64) {
    let first = ((scroll_top / ROW_PX) as usize)
        .saturating_sub(VIRTUAL_ROWS / 4)
        .min(len);
    let end = (first + VIRTUAL_ROWS).min(len);
    (
        first,
        end,
        first as f64 * ROW_PX,
        (len - end) as f64 * ROW_PX,
    )
}

/// One SVG path per class (kept, removed, chosen), three nodes for any vocabulary size,
/// from the chart's geometry (the export draws the same bars).
fn bars_svg(g: &dg::Geometry) -> (String, String, String) {
    let (mut kept, mut ghost, mut chosen) = (String::new(), String::new(), String::new());
    for b in g.bars.iter().filter(|b| b.height() > 0.0) {
        let target = match b.kind {
            BarKind::Kept => &mut kept,
            BarKind::Removed => &mut ghost,
            BarKind::Chosen => &mut chosen,
        };
        target.push_str(&format!(
            "M{:.2} {:.2}V{:.2}h{:.2}V{:.2}Z",
            b.x, b.base, b.y, b.w, b.base
        ));
    }
    (kept, ghost, chosen)
}

/// Top-p's running sum over what it saw (most likely first), as a line over the bars, and
/// its threshold p's y: the bars left of the crossing are the kept set.
fn cut_svg(cut: &dg::Cut) -> (String, f64) {
    let mut d = String::new();
    for (i, (x, y)) in cut.points.iter().enumerate() {
        d.push_str(&format!("{}{x:.2} {y:.2}", if i == 0 { "M" } else { "L" }));
    }
    (d, cut.threshold)
}

/// Points of the cumulative distribution in id order (the order the sampler walks it,
/// `sample_from`), at most 1,000 across the vocabulary, on a 1000 × 100 box.
fn cdf_path(probs: &[f32]) -> String {
    let n = probs.len().max(1);
    let buckets = n.min(1000);
    let mut d = String::from("M0 100");
    let mut sum = 0.0f64;
    let mut next = 0;
    for b in 0..buckets {
        let end = (b + 1) * n / buckets;
        sum += probs[next..end].iter().map(|&p| p as f64).sum::<f64>();
        next = end;
        d.push_str(&format!(
            "L{:.1} {:.2}",
            (b + 1) as f64 * 1000.0 / buckets as f64,
            100.0 - sum.min(1.0) * 100.0
        ));
    }
    d
}

/// The rows' labels: the model's token pieces, or the toy logits' ("z₁ = 2").
#[derive(Clone, Copy)]
struct Labels {
    ui: Ui,
    toy: Option<Signal<Vec<String>>>,
}

impl Labels {
    fn of(self, id: u32) -> String {
        match self.toy {
            Some(l) => l.with_untracked(|l| l.get(id as usize).cloned().unwrap_or_default()),
            None => piece_text(&self.ui.piece(id), true, None),
        }
    }
}

/// The chart's description: kept, the most likely, the chosen.
fn summary(t: &TraceView, labels: Labels) -> String {
    let ui = labels.ui;
    let top: Vec<String> = t
        .order
        .iter()
        .take(5)
        .filter(|&&id| t.probs[id as usize] > 0.0)
        .map(|&id| {
            let pct = fixed(ui, (t.probs[id as usize] * 100.0) as f64, 1);
            format!("{} {pct}%", labels.of(id))
        })
        .collect();
    ui.tf(
        "dist-summary",
        &[
            ("kept", t.kept.to_string()),
            ("total", t.order.len().to_string()),
            ("top", top.join(list_sep(ui))),
            ("chosen", labels.of(t.token)),
            ("rank", t.rank.to_string()),
        ],
    )
}

/// The chart and the rows for one trace (the model's or the toy logits').
#[component]
fn DistributionView(
    trace: Signal<Option<TraceView>>,
    #[prop(into)] testid: String,
    /// Row labels by id (the toy logits' "z₁ = 2"), instead of the model's token pieces.
    #[prop(optional)]
    labels: Option<Signal<Vec<String>>>,
) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let labels = Labels { ui, toy: labels };
    let show_all = RwSignal::new(false);
    let scroll_top = RwSignal::new(0.0f64);
    let scale = Memo::new(move |_| ui.shell.page.with(|p| p.scale));
    view! {
        <div class="dist">
            {move || trace.with(|t| t.as_ref().map(|t| view! {
                <p class="entropy" data-testid="entropy">
                    {ui.tf("dist-entropy", &[
                        ("h", fixed(ui, t.entropy, 3)), ("effective", fixed(ui, t.effective_tokens, 2)),
                        ("kept", t.kept.to_string()), ("total", t.order.len().to_string())])}
                    {t.coin.map(|c| format!("; {}", ui.tf("dist-coin", &[("coin", fixed(ui, c, 4))])))}
                    {t.cut.as_ref().map(|c| {
                        let st = &t.stages[c.stage];
                        format!("; {}", ui.tf("dist-cut", &[("p", shortest(ui, c.p)), ("kept", st.kept.to_string()),
                            ("mass", fixed(ui, st.mass_removed, 4))]))
                    })}
                </p>
            }))}
            <p class="small">{move || trace.with(|t| t.as_ref().map(|t| {
                let n = if show_all.get() { CHART_ALL } else { CHART_BARS }.min(t.order.len());
                let note = ui.tf("dist-chart-note", &[("n", n.to_string()), ("total", t.order.len().to_string())]);
                match t.cut {
                    Some(_) => format!("{note} {}", ui.t("dist-cut-note")),
                    None => note,
                }
            }))}</p>
            {chart(trace, show_all, scale, labels, format!("{testid}-chart"))}
            {rows(trace, (show_all, scroll_top), scale, labels, format!("{testid}-rows"))}
            {move || trace.with(|t| t.as_ref().and_then(|t| t.coin.map(|coin| coin_cdf(t, coin, labels))))}
            <button class="ghost" data-testid=format!("{testid}-show-all") on:click=move |_| show_all.update(|s| *s = !*s)>
                {move || if show_all.get() { ui.tf("dist-show-top", &[("n", ROWS.to_string())]) } else { ui.t("dist-show-all") }}
            </button>
        </div>
    }
}

/// The bars, most likely first (grey: removed by a stage), and top-p's running sum.
fn chart(
    trace: Signal<Option<TraceView>>,
    show_all: RwSignal<bool>,
    scale: Memo<Scale>,
    labels: Labels,
    testid: String,
) -> impl IntoView {
    let summary = move || {
        trace
            .with(|t| t.as_ref().map(|t| summary(t, labels)))
            .unwrap_or_default()
    };
    view! {
        <svg class="bars" data-testid=testid viewBox="0 0 1000 100" preserveAspectRatio="none"
            role="img" aria-label=summary>
            <title>{summary}</title>
            {move || trace.with(|t| t.as_ref().map(|t| {
                let limit = if show_all.get() { CHART_ALL } else { CHART_BARS }.min(t.order.len());
                let g = dg::distribution(t, scale.get(), limit, dg::SCREEN);
                let (kept, ghost, chosen) = bars_svg(&g);
                let cut = g.cut.as_ref().map(cut_svg).map(|(d, y)| view! {
                    <path class="cumulative" data-testid="cut-curve" d=d></path>
                    <line class="threshold" data-testid="cut-line" x1="0" x2="1000" y1=y y2=y></line>
                });
                view! {
                    <path class="ghost" d=ghost></path>
                    <path class="kept" d=kept></path>
                    <path class="chosen" d=chosen></path>
                    {cut}
                }
            }))}
        </svg>
    }
}

/// Every token by probability: the first `ROWS`, or with "show all" the ones in view
/// between two spacers. `(show_all, scroll_top)`: the list's state.
fn rows(
    trace: Signal<Option<TraceView>>,
    (show_all, scroll_top): (RwSignal<bool>, RwSignal<f64>),
    scale: Memo<Scale>,
    labels: Labels,
    testid: String,
) -> impl IntoView {
    let ui = labels.ui;
    view! {
        // Scrollable, so reachable by the keyboard (Tab, then the arrow keys scroll it).
        <ol class="rows" class:virtual=move || show_all.get() data-testid=testid
            tabindex="0" aria-label=move || ui.t("dist-rows")
            on:scroll=move |ev| {
                if show_all.get_untracked() {
                    let el: web_sys::Element = event_target(&ev);
                    scroll_top.set(el.scroll_top() as f64);
                }
            }>
            {move || trace.with(|t| t.as_ref().map(|t| {
                let (first, end, above, below) = if show_all.get() {
                    virtual_window(t.order.len(), scroll_top.get())
                } else {
                    (0, ROWS.min(t.order.len()), 0.0, 0.0)
                };
                let spacer = |h: f64| (h > 0.0).then(|| view! { <li class="spacer" aria-hidden="true" style:height=format!("{h}px")></li> });
                view! { {spacer(above)} {row_items(t, first..end, scale.get(), labels)} {spacer(below)} }
            }))}
        </ol>
    }
}

/// The rows of the tokens ranked `ranks`.
fn row_items(
    t: &TraceView,
    ranks: std::ops::Range<usize>,
    sc: Scale,
    labels: Labels,
) -> impl IntoView {
    let names: Vec<String> = t
        .stages
        .iter()
        .map(|s| s.stage.name().to_string())
        .collect();
    // Top-p's running sum by token, for the rows' Σp column.
    let cum: std::collections::HashMap<u32, f32> = t
        .cut
        .as_ref()
        .map(|c| {
            c.ids
                .iter()
                .copied()
                .zip(c.cumulative.iter().copied())
                .collect()
        })
        .unwrap_or_default();
    let p_cut = t.cut.as_ref().map(|c| c.p);
    let first = ranks.start;
    let ui = labels.ui;
    let cum_title = ui.t("dist-cum-title");
    t.order[ranks].iter().enumerate().map(|(offset, &id)| {
        let rank = first + offset;
        let i = id as usize;
        let p = t.probs[i];
        let removed = p <= 0.0;
        let shown = if removed { t.ghost[i] } else { p };
        let value = match sc {
            Scale::Probability => fixed(ui, shown as f64, 4),
            Scale::LogProbability => if shown > 0.0 { fixed(ui, shown.ln() as f64, 3) } else { "−∞".into() },
        };
        let by = t
            .removed_by(i)
            .filter(|_| removed)
            .and_then(|s| names.get(s))
            .map(|name| ui.tf("dist-removed-by", &[("stage", name.clone())]));
        let sum = p_cut.and_then(|_| cum.get(&id)).map(|&c| format!("Σ {}", fixed(ui, c as f64, 3)));
        view! {
            <li class="row" class:removed=removed class:chosen=id == t.token
                data-testid="dist-row" data-id=id.to_string()>
                <span class="rank">{rank + 1}</span>
                <span class="piece">{labels.of(id)}</span>
                <span class="barcell"><span class="bar" style:width=format!("{:.1}%", dg::bar_fraction(shown as f64, sc) * 100.0)></span></span>
                <span class="v" data-testid="dist-value">{value}</span>
                <span class="cum" data-testid="dist-cum" title=cum_title.clone()>{sum}</span>
                <span class="by">{by}</span>
            </li>
        }
    }).collect_view()
}

/// The coin on the cumulative distribution, and the token where the sum passes it.
fn coin_cdf(t: &TraceView, coin: f64, labels: Labels) -> impl IntoView {
    let v = t.probs.len().max(1);
    let x = (t.token as f64 + 1.0) * 1000.0 / v as f64;
    let y = 100.0 - coin * 100.0;
    let label = labels.ui.tf(
        "dist-coin-cdf",
        &[
            ("coin", fixed(labels.ui, coin, 4)),
            ("token", labels.of(t.token)),
            ("id", t.token.to_string()),
        ],
    );
    view! {
        <figure class="coin-cdf">
            <div class="cdf-box">
            <svg class="cdf" data-testid="coin-cdf" viewBox="0 0 1000 100" preserveAspectRatio="none" role="img" aria-label=label.clone()>
                <path class="cdf-line" d=cdf_path(&t.probs)></path>
                <line class="coin-line" x1="0" x2="1000" y1=y y2=y></line>
            </svg>
            // The point where the coin's level meets the sum: a round dot over the
            // stretched chart.
            <span class="coin-point" data-testid="coin-point" data-token=t.token.to_string()
                style:left=format!("{:.2}%", x / 10.0) style:top=format!("{:.2}%", y)></span>
            </div>
            <figcaption class="small">{label}</figcaption>
        </figure>
    }
}

#[component]
pub fn Distribution() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let trace = Signal::derive(move || ui.gen.trace.get());
    let set_scale = move |s: Scale| {
        ui.shell.page.update(|p| p.scale = s);
    };
    view! {
        <section class="panel" aria-labelledby="dist-h" data-testid="dist-panel">
            <div class="panel-head">
                <h2 id="dist-h">{move || ui.t("panel-title-dist")} " " <Tag of="panel-dist" /></h2>
                <div class="seg" role="group" aria-label=move || ui.t("dist-scale")>
                    <button data-testid="scale-prob" aria-pressed=move || (ui.shell.page.with(|p| p.scale) == Scale::Probability).to_string()
                        on:click=move |_| set_scale(Scale::Probability)>{move || ui.t("dist-probability")}</button>
                    <button data-testid="scale-logprob" aria-pressed=move || (ui.shell.page.with(|p| p.scale) == Scale::LogProbability).to_string()
                        on:click=move |_| set_scale(Scale::LogProbability)>{move || ui.t("dist-log-probability")}</button>
                </div>
                {export::buttons("distribution", "the next-token distribution", move || ui.gen.trace.with_untracked(|t| t.as_ref().map(|t| decoding_page::export::distribution(t, &|id| super::state::chip_label(&ui, id), CHART_BARS, ui.shell.page.with_untracked(|p| p.scale), ui.lang()))))}
            </div>
            <DistributionView trace=trace testid="dist" />
        </section>
    }
}

/// The toy-logits mode: the teacher types logits and every knob acts on them.
#[component]
pub fn ToyPanel(views: ToyViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let trace = Signal::derive(move || views.trace.get());
    let labels = Signal::derive(move || {
        ui.shell.page.with(|p| {
            let text = p.toy.as_deref().unwrap_or(page::DEFAULT_TOY);
            page::parse_toy(text)
                .map(|z| page::toy_labels(&z))
                .unwrap_or_default()
        })
    });
    let text = move || {
        ui.shell.page.with(|p| {
            p.toy
                .clone()
                .unwrap_or_else(|| page::DEFAULT_TOY.to_string())
        })
    };
    view! {
        <PanelShell panel=Panel::Toy
            export=move || export::buttons("toy", "the toy distribution", move || views.trace.with_untracked(|t| t.as_ref().map(|t| {
                let labels = ui.shell.page.with_untracked(|p| p.toy.as_deref().and_then(|t| page::parse_toy(t).ok())).map(|z| page::toy_labels(&z)).unwrap_or_default();
                let scale = ui.shell.page.with_untracked(|p| p.scale);
                decoding_page::export::distribution(t, &|id| labels.get(id as usize).cloned().unwrap_or_else(|| format!("z{}", id + 1)), CHART_BARS, scale, ui.lang())
            })))>
            <p class="hint">{move || ui.t("dist-toy-hint")}</p>
            <div class="knob-row">
                <label data-tagged>{move || ui.t("dist-toy-logits")} " " <Tag of="toy-logits" />
                    <input data-testid="toy-logits" type="text" prop:value=text
                        aria-invalid=move || views.error().is_some().to_string()
                        on:input=move |ev| {
                            let v = event_target_value(&ev);
                            ui.shell.page.update(|p| p.toy = Some(v));
                        } />
                </label>
                <label data-tagged>{move || ui.t("dist-toy-history")} " " <Tag of="toy-history" />
                    <input data-testid="toy-history" type="text" class="num" placeholder=move || ui.t("dist-toy-history-example")
                        prop:value=move || views.history.get()
                        on:input=move |ev| views.history.set(event_target_value(&ev)) />
                </label>
            </div>
            {move || views.error().map(|e| view! {
                <p class="field-error" role="alert" data-testid="toy-error">{ui.engine(&e)}</p>
            })}
            {move || views.trace.with(|t| t.as_ref().map(|t| {
                let probs: Vec<String> = t.probs.iter().map(|&p| fixed(ui, p as f64, 3)).collect();
                view! { <p class="toy-probs" data-testid="toy-probs">{format!("softmax → [{}]", probs.join(list_sep(ui)))}</p> }
            }))}
            {move || views.error().is_none().then(|| page::parse_toy(&text()).ok()).flatten().map(|z| {
                let lesson = z == [2.0, 1.0, 0.1];
                let rows = page::toy_temperature_table(&z).into_iter().map(|(t, p)| {
                    let cells = p.iter().map(|&x| view! { <td>{fixed(ui, x, 3)}</td> }).collect_view();
                    view! { <tr><th>{format!("T = {}", shortest(ui, t))}</th>{cells}</tr> }
                }).collect_view();
                let heads = page::toy_labels(&z).into_iter().map(|l| view! { <th>{l}</th> }).collect_view();
                view! {
                    <table class="calc" data-testid="toy-table">
                        <caption>{ui.t("dist-toy-caption")}</caption>
                        <thead><tr><th></th>{heads}</tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                    {lesson.then(|| view! { <p class="small" data-testid="toy-note">{ui.t("dist-toy-note")}</p> })}
                }
            })}
            <DistributionView trace=trace testid="toy" labels=labels />
        </PanelShell>
    }
}
