//! The class round (issue 48, PRODUCT.md 14): predict, then reveal. While the round is open
//! the next token is hidden (the page shows no distribution); the presenter types the
//! guesses called out in the room, Reveal draws the class's distribution against the
//! model's on one token axis with the cross-entropy, the entropies and the KL, and Draw
//! steps the model one token, which scores the round. The round's logic is
//! `decoding_page::page::class_mode`, tested natively.

use super::classroom;
use super::state::{chip_label, Ui};
use decoding_page::page::class_mode::{Phase, Revealed};
use decoding_page::page::class_round::parse_tally;
use decoding_page::protocol::{ClassRequest, Request};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// A bar's width for a probability, at most 4rem (a square-root scale, as the constraint
/// panel's, so that a 2 % share still shows).
fn width(p: f64) -> String {
    format!("{:.2}rem", 4.0 * p.clamp(0.0, 1.0).sqrt())
}

/// A probability as the chart writes it: three decimals, or two significant digits below
/// 0.001 (where the class's guesses often are).
fn prob(p: f64) -> String {
    if p >= 0.001 || p == 0.0 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
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
                .map_or(String::new(), |q| prob(f64::from(*q))),
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
            let rank = row.map_or_else(String::new, |x| format!("#{}", x.rank));
            let drawn = r.drawn == Some(token);
            let typed: Vec<&str> = r.typed.iter().filter(|t| t.0 == token).map(|t| t.1.as_str()).collect();
            let typed = (!typed.is_empty()).then(|| format!(" ← {}", typed.join(", ")));
            view! {
                <tr class:drawn=drawn>
                    <th scope="row"><code>{chip_label(&ui, token)}</code><span class="small">{typed}</span></th>
                    <td class="bar-cell"><span class="bar c" style:width=width(class)></span>{format!(" {:.0}% ({count})", 100.0 * class)}</td>
                    <td class="bar-cell"><span class="bar m" style:width=width(model)></span>{format!(" {}", prob(model))}</td>
                    <td>{rank}</td>
                    <td data-testid="class-q">{under_knobs(&ui, token)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="pq class-chart" data-testid="class-chart">
            <caption class="small">"The class's guesses against the model's distribution (T = 1), on the same tokens: every guessed token and the model's five most likely (bars on a square-root scale); q is what the next step draws from under the knobs, ✕ where a stage removed the token"</caption>
            <thead><tr><th scope="col">"token"</th><th scope="col">"class c"</th><th scope="col">"model p"</th><th scope="col">"rank"</th><th scope="col">"q under the knobs"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// The reveal's numbers, in nats as the page's entropy.
fn measures(r: &Revealed) -> impl IntoView {
    let v = &r.reveal;
    let dropped = (!r.dropped.is_empty()).then(|| {
        format!(
            "No token for: {} (not counted).",
            r.dropped
                .iter()
                .map(|d| format!("{d:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    view! {
        <dl class="class-measures" data-testid="class-measures">
            <dt>"guesses"</dt><dd data-testid="class-total">{v.total}</dd>
            <dt>"cross-entropy H(c, p)"</dt><dd data-testid="class-ce">{format!("{:.3} nats", v.cross_entropy)}</dd>
            <dt>"the model's entropy H(p)"</dt><dd data-testid="class-hp">{format!("{:.3} nats", v.model_entropy)}</dd>
            <dt>"KL(c ‖ p) = H(c, p) − H(c)"</dt><dd data-testid="class-kl">{format!("{:.3} nats", v.kl)}</dd>
        </dl>
        <p class="small" data-testid="class-reading">{format!(
            "Encoding the class's guesses costs the model {:.2} nats a token against {:.2} for its own samples; {:.2} of them is the KL, the price of the class not guessing in the model's proportions (the class's own spread, H(c), is {:.2}).",
            v.cross_entropy, v.model_entropy, v.kl, v.class_entropy
        )}</p>
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
    let tally_error = move || {
        c.tally
            .with(|t| parse_tally(t).err().map(|e| e.to_string()))
    };
    let last = move || {
        c.mode.with(|m| {
            m.last.as_ref().and_then(|r| {
                let drawn = r.drawn?;
                let p = r.axis.iter().find(|a| a.0 == drawn).map(|a| prob(a.2));
                let top = r.reveal.rows.first().map(|x| chip_label(&ui, x.token))?;
                Some(format!(
                    "Last round: the model drew {}{}; the class's top guess was {top}.",
                    chip_label(&ui, drawn),
                    p.map_or(String::new(), |p| format!(" (p {p})"))
                ))
            })
        })
    };
    view! {
        <section class="panel class-round" aria-labelledby="class-h" data-testid="class-panel">
            <h2 id="class-h">"Class round: guess the next token"</h2>
            <p class="small" data-testid="class-score">{move || c.mode.with(|m| {
                if m.score.rounds == 0 { "No round scored yet: the class guesses, Reveal shows the model's distribution, Draw takes the model's token.".to_string() }
                else { format!("Score: {}.", m.score) }
            })}</p>
            <p class="small" data-testid="class-last">{last}</p>
            {move || c.error.get().map(|e| view! { <p class="error" role="alert" data-testid="class-error">{e}</p> })}
            {move || c.mode.with(|m| match &m.phase {
                Phase::Guessing | Phase::Tokenizing { .. } if served() => view! {
                    <RoomBox />
                    <button data-testid="class-reveal" on:click=move |_| classroom::reveal(ui)
                        disabled=move || c.room.with(|r| r.as_ref().is_none_or(|r| !r.open)) || classroom::position(&ui).is_none()>"Reveal"</button>
                }.into_any(),
                Phase::Guessing | Phase::Tokenizing { .. } => view! {
                    <label class="class-tally">"The class's guesses for the next token (a tally: cat ×5, dog ×3)"
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
                    {move || tally_error().map(|e| view! { <p class="error" data-testid="class-tally-error">{e}</p> })}
                    <button data-testid="class-reveal" on:click=move |_| reveal()
                        disabled=move || tally_error().is_some() || c.tally.with(|t| t.trim().is_empty()) || classroom::position(&ui).is_none()>"Reveal"</button>
                }.into_any(),
                Phase::Revealed(r) | Phase::Drawing(r) => view! {
                    {chart(ui, r)}
                    {measures(r)}
                    <button data-testid="class-draw" on:click=move |_| {
                        if c.mode.try_update(|m| m.draw()).unwrap_or(false) {
                            c.tally.set(String::new());
                            follow.set_value(true);
                            ui.step();
                        }
                    }>"Draw the model's token"</button>
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
            view! {
                <div class="room-box" data-testid="room-box">
                    <div class="qr" data-testid="room-qr" role="img" aria-label=format!("QR code of {}", r.join) inner_html=r.qr_svg.clone()></div>
                    <div class="room-text">
                        <p>"Students open " <strong data-testid="room-join">{r.join.clone()}</strong></p>
                        <p>"or type the code " <strong class="room-code" data-testid="room-code">{r.code.clone()}</strong></p>
                        <p data-testid="room-count">{format!("Round {}: {} in, {} guessed", r.round, plural(r.students, "student"), r.guessed)}</p>
                    </div>
                </div>
            }
        })
    }
}
