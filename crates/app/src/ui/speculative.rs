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

fn kind_name(k: SpecTokenKind) -> &'static str {
    match k {
        SpecTokenKind::Accepted => "accepted draft",
        SpecTokenKind::Resampled => "resampled from max(0, p − q)",
        SpecTokenKind::Target => "the model's own token",
        SpecTokenKind::Bonus => "bonus token from p",
    }
}

#[component]
pub fn SpecPanel(views: SpecViews) -> impl IntoView {
    view! {
        <PanelShell panel=Panel::Spec
            export=move || export::buttons("spec", "the last cycle's p and q", move || views.spec.with_untracked(|s| s.as_ref().and_then(decoding_page::export::spec)))>
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
            <label data-tagged>"Draft " <Tag of="spec-draft" />
                <select data-testid="spec-draft" prop:value=move || draft.get().name()
                    on:change=move |ev| if let Ok(d) = Draft::from_name(&event_target_value(&ev)) { draft.set(d) }>
                    <option value="quant:q8">"quant:q8 — the same weights in 8 bits"</option>
                    <option value="quant:q4">"quant:q4 — the same weights in 4 bits"</option>
                    {move || (1..layers()).map(|k| view! {
                        <option value=format!("exit:{k}")>{format!("exit:{k} — the first {k} of {} layers", layers())}</option>
                    }).collect_view()}
                    <option value="ngram:1">"ngram:1 — prompt lookup, last token"</option>
                    <option value="ngram:2">"ngram:2 — prompt lookup, last 2 tokens"</option>
                    <option value="ngram:3">"ngram:3 — prompt lookup, last 3 tokens"</option>
                </select>
            </label>
            <label data-tagged>"γ (drafted a cycle) " <Tag of="spec-gamma" />
                <input type="number" min="1" max="16" data-testid="spec-gamma" prop:value=move || gamma.get().to_string()
                    on:change=move |ev| {
                        if let Ok(g) = event_target_value(&ev).trim().parse::<u32>() {
                            if (1..=16).contains(&g) { gamma.set(g); }
                        }
                    } />
            </label>
            <label data-tagged>"Rule " <Tag of="spec-rule" />
                <select data-testid="spec-rule" prop:value=move || rule.get().name()
                    on:change=move |ev| if let Ok(r) = Rule::parse(&event_target_value(&ev)) { rule.set(r) }>
                    <option value="rejection">"rejection: accept with min(1, p/q)"</option>
                    <option value="match">"match: keep drafts equal to the model's own token"</option>
                </select>
            </label>
            <button data-testid="spec-start" on:click=move |_| start()>"Start from the prompt"</button>
            <button data-testid="spec-one" on:click=move |_| cycle(1)>"One cycle"</button>
            <button data-testid="spec-run" on:click=move |_| cycle(10)>"10 cycles"</button>
        </div>
    }
}

#[component]
fn Body(views: SpecViews) -> impl IntoView {
    move || {
        let Some(v) = views.spec.get() else {
            return view! { <p class="note">"Start a run: the draft proposes γ tokens, the model checks them all in one forward pass of γ + 1 rows."</p> }.into_any();
        };
        view! {
            <p class="note">{draft_note(&v)}</p>
            <Text view=v.clone() />
            {v.last.clone().map(|c| view! { <LastCycle cycle=c rule=v.rule greedy=v.greedy /> })}
            <Stats view=v />
        }
        .into_any()
    }
}

fn draft_note(v: &SpecView) -> String {
    let d = &v.draft;
    let what = match d {
        Draft::Exit(_) => "Its first layers are the model's own, so it writes into the model's KV cache: no second cache, no prefill of its own (the verify pass then runs those positions through every layer).",
        Draft::Quant(_) => "The same learned weights, quantized: its own KV cache on the CPU, kept in step with the accepted text.",
        Draft::Ngram(_) => "Prompt lookup proposes the tokens that followed the last occurrence of the context's last tokens; it has no distribution, so q is one-hot on its token.",
    };
    format!(
        "{d}, γ = {}, rule {}{}. {what} The knobs as they were at Start apply to p and q.",
        v.gamma,
        v.rule,
        if v.greedy {
            " (greedy: a draft is kept while it is the model's argmax)"
        } else {
            ""
        }
    )
}

#[component]
fn Text(view: SpecView) -> impl IntoView {
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
            let title = format!("cycle {}: {}", t.cycle + 1, kind_name(t.kind));
            view! {
                {t.rejected.clone().map(|r| view! { <s class="spec-rejected" title="the rejected draft">{piece_text(&r, false, Some(12))}</s> })}
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
            <span class="spec-chip spec-accepted">"accepted"</span>" "
            <s class="spec-rejected">"rejected"</s>" "
            <span class="spec-chip spec-resampled">"resampled"</span>" "
            <span class="spec-chip spec-target">"model's token"</span>" "
            <span class="spec-chip spec-bonus">"bonus"</span>
        </p>
    }
}

#[component]
fn LastCycle(cycle: SpecCycleView, rule: Rule, greedy: bool) -> impl IntoView {
    let positions = cycle
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let verdict = if p.accepted { "accepted" } else { "rejected" };
            let how = if p.forbidden {
                "rejected: the constraint forbids this draft (p = 0 under its mask)".to_string()
            } else if greedy || rule == Rule::Match {
                format!("{verdict}: the model's token is {}", if p.accepted { "the same" } else { "another" })
            } else {
                format!("{verdict}: P(accept) = min(1, p/q) = min(1, {:.3}/{:.3}) = {:.3}", p.p, p.q, p.accept_probability)
            };
            view! {
                <div class="spec-position" data-testid="spec-position">
                    <p class="small">{how}" · "<span data-testid="spec-overlap">{format!("Σ min(p, q) = {:.3}", p.overlap)}</span>
                        " (the chance a draft from q is accepted here)"</p>
                    {export::figure(&decoding_page::export::spec_position(i, p).on_page("spec-bars"))}
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
            <h3>{format!("Cycle {}: {} drafted, {} accepted, then {}", cycle.index + 1, cycle.drafted.len(), cycle.accepted, kind_name(cycle.next_kind))}</h3>
            <p>"Drafted: "{drafted}" → "<span class=format!("spec-chip {}", kind_class(cycle.next_kind)) data-testid="spec-next">{piece_text(&cycle.next.piece, false, Some(12))}</span></p>
            <p class="small">"Bars: p (the model) above, q (the draft) below; the dark part is min(p, q); where p is longer, the rest is the residual max(0, p − q) a rejection resamples from. ▸: the drafted token."</p>
            <div class="spec-positions">{positions}</div>
        </div>
    }
}

#[component]
fn Stats(view: SpecView) -> impl IntoView {
    let v = view;
    let emitted = v.tokens.len();
    let saved = emitted.saturating_sub(v.cycles);
    let speed = v.plain_ms_per_token / v.spec_ms_per_token.max(1e-9);
    let verdict = if speed >= 1.0 {
        format!("{speed:.2}× plain decoding's speed")
    } else {
        format!("{speed:.2}× plain decoding's speed: slower here (the draft and the wider verify pass cost more than the passes saved on a model this small)")
    };
    view! {
        <table class="compare" data-testid="spec-stats">
            <caption>"Running statistics"</caption>
            <tbody>
                <tr><th scope="row">"cycles (verify passes)"</th><td>{v.cycles}</td></tr>
                <tr><th scope="row">"drafts accepted"</th><td data-testid="spec-acceptance">{format!("{} of {} ({:.1} %)", v.accepted, v.drafted, 100.0 * v.accepted as f64 / v.drafted.max(1) as f64)}</td></tr>
                <tr><th scope="row">"α = mean Σ min(p, q)"</th><td>{format!("{:.3}", v.alpha)}</td></tr>
                <tr><th scope="row">"tokens per verify pass"</th><td data-testid="spec-per-call">{format!("{:.2} measured; (1 − α^(γ+1)) / (1 − α) = {:.2} (positions taken as independent)", v.tokens_per_call, v.formula)}</td></tr>
                <tr><th scope="row">"model passes saved"</th><td>{format!("{saved} of {emitted} tokens needed no pass of their own")}</td></tr>
                <tr><th scope="row">"wall clock on this backend"</th><td data-testid="spec-speed">{format!("{:.3} ms a token speculative, {:.3} ms plain: {verdict}", v.spec_ms_per_token, v.plain_ms_per_token)}</td></tr>
            </tbody>
        </table>
    }
}
