//! The class round (issue 48, PRODUCT.md 14): predict, then reveal. While the round is open
//! the next token is hidden (the page shows no distribution); the presenter types the
//! guesses called out in the room, Reveal draws the class's distribution against the
//! model's on one token axis with the cross-entropy, the entropies and the KL, and Draw
//! steps the model one token, which scores the round. The round's logic is
//! `decoding_page::page::class_mode`, tested natively.

use super::classroom;
use super::state::{chip_label, Ui};
use decoding_page::i18n::Lang;
use decoding_page::page::class_mode::{Phase, Revealed};
use decoding_page::page::class_round::{
    parse_tally, Score, TallyError, MAX_COUNT, MAX_GUESS_CHARS,
};
use decoding_page::protocol::{ClassRequest, Request};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// A bar's width for a probability, at most 4rem (a square-root scale, as the constraint
/// panel's, so that a 2 % share still shows).
fn width(p: f64) -> String {
    format!("{:.2}rem", 4.0 * p.clamp(0.0, 1.0).sqrt())
}

/// A probability as the chart writes it: three decimals, or two significant digits below
/// 0.001 (where the class's guesses often are), in the language's decimal separator.
fn prob(ui: &Ui, p: f64) -> String {
    if p >= 0.001 || p == 0.0 {
        return ui.num(p, 3);
    }
    let text = format!("{p:.1e}");
    match text.split_once('e') {
        Some((m, e)) => match m.parse::<f64>() {
            Ok(m) => format!("{}e{e}", ui.num(m, 1)),
            Err(_) => text,
        },
        None => text,
    }
}

/// A whole number as the class's panel writes it: in English as it always has (no
/// grouping), in the language's grouping otherwise.
pub(super) fn whole(ui: &Ui, n: u64) -> String {
    if ui.lang() == Lang::En {
        n.to_string()
    } else {
        ui.int(n)
    }
}

/// Why the typed tally cannot be read, in the language in force (its `Display` is the
/// English).
fn tally_error_text(ui: &Ui, e: &TallyError) -> String {
    let max = whole(ui, MAX_COUNT.into());
    match e {
        TallyError::BadGuess(g) => ui.tf(
            "class-err-bad-guess",
            &[
                ("guess", g.clone()),
                ("max", whole(ui, MAX_GUESS_CHARS as u64)),
            ],
        ),
        TallyError::BadCount(c) => {
            ui.tf("class-err-bad-count", &[("count", c.clone()), ("max", max)])
        }
        TallyError::TooMany(n) => ui.tf(
            "class-err-too-many",
            &[("total", whole(ui, *n)), ("max", max)],
        ),
    }
}

/// The running score (its `Display` is the English), or how a round is played before one.
fn score_text(ui: &Ui, s: &Score) -> String {
    if s.rounds == 0 {
        return ui.t("class-no-score");
    }
    ui.tf(
        "class-score",
        &[
            ("class", whole(ui, s.class_right.into())),
            ("rounds", whole(ui, s.rounds.into())),
            ("model", whole(ui, s.model_right.into())),
            ("beat", whole(ui, s.class_beat_model.into())),
        ],
    )
}

/// The steps generated so far (the round's position).
fn generated(ui: &Ui) -> Option<usize> {
    ui.gen
        .next
        .with_untracked(|n| n.as_ref().map(|n| n.generated.len()))
}

/// Reveal: the tally parsed and sent to the worker for its tokens.
fn ask(ui: Ui) {
    let c = ui.views.class;
    let (Some(step), Ok(guesses)) = (generated(&ui), c.tally.with_untracked(|t| parse_tally(t)))
    else {
        return;
    };
    if let Some(guesses) = c.mode.try_update(|m| m.ask(guesses, step)).flatten() {
        c.error.set(None);
        ui.send(&Request::Class(ClassRequest::ClassTokens { guesses }));
    }
}

/// A token's probability after the chain under the knobs in force (what the next step
/// draws from), or the stage that removed it: the lesson's checks ask whether a guess
/// survives temperature, top-p or a penalty.
fn under_knobs(ui: &Ui, token: u32) -> String {
    ui.gen.trace.with_untracked(|t| {
        let Some(t) = t.as_ref() else {
            return String::new();
        };
        let i = token as usize;
        match t.removed_by(i) {
            Some(s) if t.probs.get(i).is_some_and(|p| *p <= 0.0) => {
                format!("✕ {}", t.stages.get(s).map_or("", |v| v.stage.name()))
            }
            _ => t
                .probs
                .get(i)
                .map_or(String::new(), |q| prob(ui, f64::from(*q))),
        }
    })
}

/// The chart: the class's share and the model's probability of each token on the axis.
fn chart(ui: Ui, r: &Revealed) -> impl IntoView {
    let rows = r
        .axis
        .iter()
        .map(|&(token, class, model)| {
            let row = r.reveal.rows.iter().find(|x| x.token == token);
            let count = row.map_or(0, |x| x.count);
            let rank = row.map_or_else(String::new, |x| format!("#{}", whole(&ui, x.rank as u64)));
            let drawn = r.drawn == Some(token);
            let typed: Vec<&str> = r.typed.iter().filter(|t| t.0 == token).map(|t| t.1.as_str()).collect();
            let typed = (!typed.is_empty()).then(|| format!(" ← {}", typed.join(", ")));
            view! {
                <tr class:drawn=drawn>
                    <th scope="row"><code>{chip_label(&ui, token)}</code><span class="small">{typed}</span></th>
                    <td class="bar-cell"><span class="bar c" style:width=width(class)></span>{format!(" {}", ui.tf("class-share", &[("percent", ui.num(100.0 * class, 0)), ("count", whole(&ui, count.into()))]))}</td>
                    <td class="bar-cell"><span class="bar m" style:width=width(model)></span>{format!(" {}", prob(&ui, model))}</td>
                    <td>{rank}</td>
                    <td data-testid="class-q">{under_knobs(&ui, token)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="pq class-chart" data-testid="class-chart">
            <caption class="small">{ui.t("class-chart-caption")}</caption>
            <thead><tr>
                <th scope="col">{ui.t("class-col-token")}</th><th scope="col">{ui.t("class-col-class")}</th>
                <th scope="col">{ui.t("class-col-model")}</th><th scope="col">{ui.t("class-col-rank")}</th>
                <th scope="col">{ui.t("class-col-q")}</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// The reveal's numbers, in nats as the page's entropy.
fn measures(ui: Ui, r: &Revealed) -> impl IntoView {
    let v = &r.reveal;
    let dropped = (!r.dropped.is_empty()).then(|| {
        let guesses = r
            .dropped
            .iter()
            .map(|d| format!("{d:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        ui.tf("class-dropped", &[("guesses", guesses)])
    });
    let nats = move |x: f64| ui.tf("class-nats", &[("value", ui.num(x, 3))]);
    let reading = ui.tf(
        "class-reading",
        &[
            ("ce", ui.num(v.cross_entropy, 2)),
            ("hp", ui.num(v.model_entropy, 2)),
            ("kl", ui.num(v.kl, 2)),
            ("hc", ui.num(v.class_entropy, 2)),
        ],
    );
    view! {
        <dl class="class-measures" data-testid="class-measures">
            <dt>{ui.t("class-guesses")}</dt><dd data-testid="class-total">{whole(&ui, v.total.into())}</dd>
            <dt>{ui.t("class-cross-entropy")}</dt><dd data-testid="class-ce">{nats(v.cross_entropy)}</dd>
            <dt>{ui.t("class-model-entropy")}</dt><dd data-testid="class-hp">{nats(v.model_entropy)}</dd>
            <dt>"KL(c ‖ p) = H(c, p) − H(c)"</dt><dd data-testid="class-kl">{nats(v.kl)}</dd>
        </dl>
        <p class="small" data-testid="class-reading">{reading}</p>
        {dropped.map(|d| view! { <p class="small" data-testid="class-dropped">{d}</p> })}
    }
}

#[component]
pub fn ClassPanel() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let c = ui.views.class;
    // The text moved (a step drew the token, or a rewind): the round is scored or dropped.
    Effect::new(move |_| {
        let generated = ui
            .gen
            .next
            .with(|n| n.as_ref().map(|n| n.generated.clone()));
        if let Some(g) = generated {
            c.mode.update(|m| m.on_generated(&g));
        }
    });
    if c.served.get_untracked().is_none() {
        classroom::probe(ui);
    }
    classroom::open_rounds(ui);
    let served = move || c.served.get() == Some(true);
    // The keyboard follows the round (a presenter types the tally, presses Enter, then
    // Enter again on Draw): the control of the phase now is focused when the last one was.
    let follow = StoredValue::new(false);
    Effect::new(move |_| {
        // The control of this phase, once the view has drawn it (the next frame).
        let target = c.mode.with(|m| match m.phase {
            Phase::Revealed(_) => Some("class-draw"),
            Phase::Guessing => Some("class-tally"),
            _ => None,
        });
        if let Some(id) = target.filter(|_| follow.get_value()) {
            request_animation_frame(move || {
                let el = document()
                    .query_selector(&format!("[data-testid={id}]"))
                    .ok()
                    .flatten()
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
                if let Some(el) = el {
                    follow.set_value(false);
                    let _ = el.focus();
                }
            });
        }
    });
    let reveal = move || {
        follow.set_value(true);
        ask(ui);
    };
    let tally_error = move || c.tally.with(|t| parse_tally(t).err());
    let last = move || {
        c.mode.with(|m| {
            m.last.as_ref().and_then(|r| {
                let drawn = r.drawn?;
                let p = r.axis.iter().find(|a| a.0 == drawn).map(|a| prob(&ui, a.2));
                let top = r.reveal.rows.first().map(|x| chip_label(&ui, x.token))?;
                let drawn = chip_label(&ui, drawn);
                Some(match p {
                    Some(p) => ui.tf("class-last-p", &[("drawn", drawn), ("p", p), ("top", top)]),
                    None => ui.tf("class-last", &[("drawn", drawn), ("top", top)]),
                })
            })
        })
    };
    view! {
        <section class="panel class-round" aria-labelledby="class-h" data-testid="class-panel">
            <h2 id="class-h">{move || ui.t("class-heading")}</h2>
            <p class="small" data-testid="class-score">{move || c.mode.with(|m| score_text(&ui, &m.score))}</p>
            <p class="small" data-testid="class-last">{last}</p>
            {move || c.error.get().map(|e| view! { <p class="error" role="alert" data-testid="class-error">{classroom::error_text(&ui, &e)}</p> })}
            {move || c.mode.with(|m| match &m.phase {
                Phase::Guessing | Phase::Tokenizing { .. } if served() => view! {
                    <RoomBox />
                    <button data-testid="class-reveal" on:click=move |_| classroom::reveal(ui)
                        disabled=move || c.room.with(|r| r.as_ref().is_none_or(|r| !r.open)) || classroom::position(&ui).is_none()>{move || ui.t("class-reveal")}</button>
                }.into_any(),
                Phase::Guessing | Phase::Tokenizing { .. } => view! {
                    <label class="class-tally">{move || ui.t("class-tally-label")}
                        <textarea data-testid="class-tally" rows="2"
                            aria-keyshortcuts="Enter"
                            prop:value=move || c.tally.get()
                            on:input=move |ev| c.tally.set(event_target_value(&ev))
                            on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                                // Enter reveals (Shift+Enter starts a new line).
                                if ev.key() == "Enter" && !ev.shift_key() {
                                    ev.prevent_default();
                                    reveal();
                                }
                            }></textarea>
                    </label>
                    {move || tally_error().map(|e| view! { <p class="error" data-testid="class-tally-error">{tally_error_text(&ui, &e)}</p> })}
                    <button data-testid="class-reveal" on:click=move |_| reveal()
                        disabled=move || tally_error().is_some() || c.tally.with(|t| t.trim().is_empty()) || classroom::position(&ui).is_none()>{move || ui.t("class-reveal")}</button>
                }.into_any(),
                Phase::Revealed(r) | Phase::Drawing(r) => view! {
                    {chart(ui, r)}
                    {measures(ui, r)}
                    <button data-testid="class-draw" on:click=move |_| {
                        if c.mode.try_update(|m| m.draw()).unwrap_or(false) {
                            c.tally.set(String::new());
                            follow.set_value(true);
                            ui.step();
                        }
                    }>{move || ui.t("class-draw")}</button>
                }.into_any(),
            })}
        </section>
    }
}

/// The room's join box: the address as text, the code, the QR code, who is in.
#[component]
fn RoomBox() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let room = ui.views.class.room;
    move || {
        room.get().map(|r| {
            let count = [
                ("round", whole(&ui, r.round.into())),
                ("students", whole(&ui, r.students as u64)),
                ("guessed", whole(&ui, r.guessed as u64)),
            ];
            let count = if r.students == 1 {
                ui.tf("room-count-one", &count)
            } else {
                ui.tf("room-count-other", &count)
            };
            view! {
                <div class="room-box" data-testid="room-box">
                    <div class="qr" data-testid="room-qr" role="img" aria-label=ui.tf("room-qr-label", &[("address", r.join.clone())]) inner_html=r.qr_svg.clone()></div>
                    <div class="room-text">
                        <p>{ui.t("room-students-open")}" " <strong data-testid="room-join">{r.join.clone()}</strong></p>
                        <p>{ui.t("room-type-code")}" " <strong class="room-code" data-testid="room-code">{r.code.clone()}</strong></p>
                        <p data-testid="room-count">{count}</p>
                    </div>
                </div>
            }
        })
    }
}
