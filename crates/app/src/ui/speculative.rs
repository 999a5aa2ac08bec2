//! Speculative decoding (lesson 10, section 5): a draft proposes γ tokens, the model verifies
//! them in one pass of γ + 1 rows and keeps the longest accepted prefix. The text drawn with
//! every token's origin (accepted draft, resampled after a rejection with the rejected draft
//! struck through, the model's own token, the bonus), the last cycle's p and q at each drafted
//! position (min(p, q) shaded, the residual max(0, p − q) drawn), and the running statistics
//! against (1 − α^(γ+1)) / (1 − α) and the wall clock of plain decoding.

use super::export;
use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use super::views::numbers::{int, num};
use super::views::spec::SpecViews;
use decoding_engine::decode::speculative::{Draft, Rule};
use decoding_engine::Precision;
use decoding_page::page::{piece_text, Panel};
use decoding_page::protocol::{SpecCycleView, SpecTokenKind, SpecView};
use leptos::prelude::*;

fn kind_class(k: SpecTokenKind) -> &'static str {
    match k {
        SpecTokenKind::Accepted => "spec-accepted",
        SpecTokenKind::Resampled => "spec-resampled",
        SpecTokenKind::Target => "spec-target",
        SpecTokenKind::Bonus => "spec-bonus",
    }
}

fn kind_name(ui: Ui, k: SpecTokenKind) -> String {
    match k {
        SpecTokenKind::Accepted => ui.t("spec-kind-accepted"),
        SpecTokenKind::Resampled => ui.t("spec-kind-resampled"),
        SpecTokenKind::Target => ui.t("spec-kind-target"),
        SpecTokenKind::Bonus => ui.t("spec-kind-bonus"),
    }
}

#[component]
pub fn SpecPanel(views: SpecViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        <PanelShell panel=Panel::Spec
            export=move || export::buttons("spec", "the last cycle's p and q", move || views.spec.with_untracked(|s| s.as_ref().and_then(|s| decoding_page::export::spec(s, ui.lang()))))>
            <Controls /> <Body views />
        </PanelShell>
    }
}

#[component]
fn Controls() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let link = ui.shell.page.with_untracked(|p| p.spec.clone());
    let draft = RwSignal::new(
        link.as_ref()
            .map_or(Draft::Quant(Precision::Q8), |l| l.draft),
    );
    let gamma = RwSignal::new(link.as_ref().map_or(4, |l| l.gamma));
    let rule = RwSignal::new(link.as_ref().map_or(Rule::Rejection, |l| l.rule));
    let layers = move || {
        ui.model
            .info
            .with(|i| i.as_ref().map_or(5, |i| i.config.n_layers))
    };
    let chosen = move || {
        (
            draft.get_untracked(),
            gamma.get_untracked(),
            rule.get_untracked(),
        )
    };
    let start = move || {
        let (d, g, r) = chosen();
        ui.control(|m, page, _| m.spec_start(page, d, g, r));
    };
    let cycle = move |n: u32| ui.control(|m, page, _| m.spec_cycle(page, n, chosen()));
    view! {
        <div class="spec-controls">
            <label data-tagged>{move || ui.t("spec-draft")} " " <Tag of="spec-draft" />
                <select data-testid="spec-draft" prop:value=move || draft.get().name()
                    on:change=move |ev| if let Ok(d) = Draft::from_name(&event_target_value(&ev)) { draft.set(d) }>
                    <option value="quant:q8">{move || ui.t("spec-draft-q8")}</option>
                    <option value="quant:q4">{move || ui.t("spec-draft-q4")}</option>
                    {move || (1..layers()).map(|k| view! {
                        <option value=format!("exit:{k}")>{ui.tf("spec-draft-exit", &[("k", k.to_string()), ("layers", layers().to_string())])}</option>
                    }).collect_view()}
                    <option value="ngram:1">{move || ui.t("spec-draft-ngram-1")}</option>
                    <option value="ngram:2">{move || ui.tf("spec-draft-ngram", &[("n", "2".into())])}</option>
                    <option value="ngram:3">{move || ui.tf("spec-draft-ngram", &[("n", "3".into())])}</option>
                </select>
            </label>
            <label data-tagged>{move || ui.t("spec-gamma")} " " <Tag of="spec-gamma" />
                <input type="number" min="1" max="16" data-testid="spec-gamma" prop:value=move || gamma.get().to_string()
                    on:change=move |ev| {
                        if let Ok(g) = event_target_value(&ev).trim().parse::<u32>() {
                            if (1..=16).contains(&g) { gamma.set(g); }
                        }
                    } />
            </label>
            <label data-tagged>{move || ui.t("spec-rule")} " " <Tag of="spec-rule" />
                <select data-testid="spec-rule" prop:value=move || rule.get().name()
                    on:change=move |ev| if let Ok(r) = Rule::parse(&event_target_value(&ev)) { rule.set(r) }>
                    <option value="rejection">{move || ui.t("spec-rule-rejection")}</option>
                    <option value="match">{move || ui.t("spec-rule-match")}</option>
                </select>
            </label>
            <button data-testid="spec-start" on:click=move |_| start()>{move || ui.t("spec-start")}</button>
            <button data-testid="spec-one" on:click=move |_| cycle(1)>{move || ui.t("spec-one")}</button>
            <button data-testid="spec-run" on:click=move |_| cycle(10)>{move || ui.t("spec-ten")}</button>
        </div>
    }
}

/// The run; redrawn whole when the language changes (both branches read it), so the parts
/// under it write their words once.
#[component]
fn Body(views: SpecViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    move || {
        let Some(v) = views.spec.get() else {
            return view! { <p class="note">{ui.t("spec-empty")}</p> }.into_any();
        };
        view! {
            <p class="note">{draft_note(ui, &v)}</p>
            <Text view=v.clone() />
            {v.last.clone().map(|c| view! { <LastCycle cycle=c rule=v.rule greedy=v.greedy /> })}
            <Stats view=v />
        }
        .into_any()
    }
}

fn draft_note(ui: Ui, v: &SpecView) -> String {
    let d = &v.draft;
    let what = match d {
        Draft::Exit(_) => ui.t("spec-what-exit"),
        Draft::Quant(_) => ui.t("spec-what-quant"),
        Draft::Ngram(_) => ui.t("spec-what-ngram"),
    };
    let args = [
        ("draft", d.to_string()),
        ("gamma", int(ui, v.gamma as u64)),
        ("rule", v.rule.to_string()),
        ("what", what),
    ];
    if v.greedy {
        ui.tf("spec-note-greedy", &args)
    } else {
        ui.tf("spec-note", &args)
    }
}

#[component]
fn Text(view: SpecView) -> impl IntoView {
    let ui = expect_context::<Ui>();
    // The prompt as text (BOS, id 1, is not text).
    let prompt: String = view
        .prompt
        .iter()
        .filter(|t| t.id != 1)
        .map(|t| t.piece.clone())
        .collect();
    let chips = view
        .tokens
        .iter()
        .map(|t| {
            let title = ui.tf(
                "spec-chip-title",
                &[
                    ("cycle", int(ui, t.cycle as u64 + 1)),
                    ("kind", kind_name(ui, t.kind)),
                ],
            );
            view! {
                {t.rejected.clone().map(|r| view! { <s class="spec-rejected" title=ui.t("spec-rejected-title")>{piece_text(&r, false, Some(12))}</s> })}
                <span class=format!("spec-chip {}", kind_class(t.kind)) data-testid="spec-token"
                    data-kind=kind_class(t.kind) data-id=t.id.to_string() title=title>{piece_text(&t.piece, false, Some(12))}</span>
            }
        })
        .collect_view();
    view! {
        <div class="spec-text" data-testid="spec-text">
            <Tag of="spec-run" />" "
            <span class="spec-prompt">{prompt}</span>{chips}
        </div>
        <p class="legend small">
            <span class="spec-chip spec-accepted">{ui.t("spec-accepted")}</span>" "
            <s class="spec-rejected">{ui.t("spec-rejected")}</s>" "
            <span class="spec-chip spec-resampled">{ui.t("spec-resampled")}</span>" "
            <span class="spec-chip spec-target">{ui.t("spec-target")}</span>" "
            <span class="spec-chip spec-bonus">{ui.t("spec-bonus")}</span>
        </p>
    }
}

#[component]
fn LastCycle(cycle: SpecCycleView, rule: Rule, greedy: bool) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let positions = cycle
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let verdict = if p.accepted { ui.t("spec-accepted") } else { ui.t("spec-rejected") };
            let how = if p.forbidden {
                ui.t("spec-forbidden")
            } else if greedy || rule == Rule::Match {
                if p.accepted {
                    ui.tf("spec-same", &[("verdict", verdict)])
                } else {
                    ui.tf("spec-another", &[("verdict", verdict)])
                }
            } else {
                ui.tf("spec-accept", &[
                    ("verdict", verdict),
                    ("p", num(ui, p.p, 3)),
                    ("q", num(ui, p.q, 3)),
                    ("chance", num(ui, p.accept_probability, 3)),
                ])
            };
            view! {
                <div class="spec-position" data-testid="spec-position">
                    <p class="small">{how}" · "<span data-testid="spec-overlap">{format!("Σ min(p, q) = {}", num(ui, p.overlap, 3))}</span>
                        " "{ui.t("spec-overlap-note")}</p>
                    {export::figure(&decoding_page::export::spec_position(i, p, ui.lang()).on_page("spec-bars"))}
                </div>
            }
        })
        .collect_view();
    let drafted = cycle
        .drafted
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let cls = if i < cycle.accepted { "spec-chip spec-accepted" } else if i == cycle.accepted { "spec-chip spec-struck" } else { "spec-chip spec-unchecked" };
            view! { <span class=cls data-testid="spec-drafted">{piece_text(&t.piece, false, Some(12))}</span> }
        })
        .collect_view();
    view! {
        <div class="spec-cycle" data-testid="spec-cycle">
            <h3>{ui.tf("spec-cycle", &[
                ("n", int(ui, cycle.index as u64 + 1)),
                ("drafted", int(ui, cycle.drafted.len() as u64)),
                ("accepted", int(ui, cycle.accepted as u64)),
                ("next", kind_name(ui, cycle.next_kind)),
            ])}</h3>
            <p>{ui.t("spec-drafted")}" "{drafted}" → "<span class=format!("spec-chip {}", kind_class(cycle.next_kind)) data-testid="spec-next">{piece_text(&cycle.next.piece, false, Some(12))}</span></p>
            <p class="small">{ui.t("spec-bars")}</p>
            <div class="spec-positions">{positions}</div>
        </div>
    }
}

#[component]
fn Stats(view: SpecView) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let v = view;
    let emitted = v.tokens.len();
    let saved = emitted.saturating_sub(v.cycles);
    let speed = v.plain_ms_per_token / v.spec_ms_per_token.max(1e-9);
    let verdict = if speed >= 1.0 {
        ui.tf("spec-speed", &[("speed", num(ui, speed, 2))])
    } else {
        ui.tf("spec-speed-slower", &[("speed", num(ui, speed, 2))])
    };
    let acceptance = ui.tf(
        "spec-acceptance",
        &[
            ("accepted", int(ui, v.accepted as u64)),
            ("drafted", int(ui, v.drafted as u64)),
            (
                "share",
                num(ui, 100.0 * v.accepted as f64 / v.drafted.max(1) as f64, 1),
            ),
        ],
    );
    let per_call = ui.tf(
        "spec-per-call",
        &[
            ("measured", num(ui, v.tokens_per_call, 2)),
            ("formula", num(ui, v.formula, 2)),
        ],
    );
    let saved = ui.tf(
        "spec-saved-tokens",
        &[
            ("saved", int(ui, saved as u64)),
            ("emitted", int(ui, emitted as u64)),
        ],
    );
    let wall = ui.tf(
        "spec-wall-times",
        &[
            ("spec", num(ui, v.spec_ms_per_token, 3)),
            ("plain", num(ui, v.plain_ms_per_token, 3)),
            ("verdict", verdict),
        ],
    );
    view! {
        <table class="compare" data-testid="spec-stats">
            <caption>{ui.t("spec-stats")}</caption>
            <tbody>
                <tr><th scope="row">{ui.t("spec-cycles")}</th><td>{int(ui, v.cycles as u64)}</td></tr>
                <tr><th scope="row">{ui.t("spec-drafts-accepted")}</th><td data-testid="spec-acceptance">{acceptance}</td></tr>
                <tr><th scope="row">{ui.t("spec-alpha")}</th><td>{num(ui, v.alpha, 3)}</td></tr>
                <tr><th scope="row">{ui.t("spec-per-pass")}</th><td data-testid="spec-per-call">{per_call}</td></tr>
                <tr><th scope="row">{ui.t("spec-saved")}</th><td>{saved}</td></tr>
                <tr><th scope="row">{ui.t("spec-wall")}</th><td data-testid="spec-speed">{wall}</td></tr>
            </tbody>
        </table>
    }
}
