//! The prompt, the generation controls and the transcript: generated tokens as chips with
//! their probability and rank; hovering or focusing a chip shows the distribution it was
//! drawn from.

use super::Ui;
use decoding_engine::generation::StopReason;
use decoding_engine::units::human_bytes;
use decoding_web::protocol::Request;
use decoding_web::state::piece_text;
use leptos::prelude::*;

#[component]
pub fn Transcript() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let hovered = RwSignal::new(None::<usize>);
    let prompt_text = RwSignal::new(ui.shell.page.get_untracked().prompt);
    let apply_prompt = move || {
        let p = prompt_text.get_untracked();
        ui.gen.running.set(false);
        ui.shell.page.update(|s| {
            s.prompt = p.clone();
            s.steps = 0;
        });
        ui.send(&Request::SetPrompt { prompt: p });
        if ui.is_beam() {
            ui.send(&Request::BeamStart);
        }
    };
    let stop_text = move || {
        ui.gen.transcript.with(|t| {
            t.as_ref().and_then(|t| t.stop.clone()).map(|r| match r {
                StopReason::EndOfSequence { token } => {
                    format!("Stopped: the model ended the story (token {token}).")
                }
                StopReason::MaxTokens { max } => format!("Stopped: max tokens ({max})."),
                StopReason::StopSequence { stop } => {
                    format!("Stopped: stop sequence {stop:?} appeared.")
                }
                StopReason::ContextFull { seq_len } => {
                    format!("Stopped: the context is full ({seq_len} tokens).")
                }
            })
        })
    };
    view! {
        <section class="panel" aria-labelledby="prompt-h">
            <h2 id="prompt-h">"Prompt"</h2>
            <div class="prompt-row">
                <textarea data-testid="prompt" aria-label="Prompt" rows="2"
                    prop:value=move || prompt_text.get()
                    on:input=move |ev| prompt_text.set(event_target_value(&ev))
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Enter" && !ev.shift_key() {
                            ev.prevent_default();
                            apply_prompt();
                        }
                    }></textarea>
                <button data-testid="run-prompt" on:click=move |_| apply_prompt()>"Run prompt"</button>
            </div>
            <div class="controls" id="controls" role="toolbar" aria-label="Generation controls">
                <button data-testid="step" on:click=move |_| ui.step() title="Step one token (n)">"Step"</button>
                <button data-testid="run" on:click=move |_| ui.toggle_run() title="Run / pause (p)"
                    aria-pressed=move || ui.gen.running.get().to_string()>
                    {move || if ui.gen.running.get() { "Pause" } else { "Run" }}
                </button>
                <button data-testid="rewind" on:click=move |_| ui.rewind() title="Rewind one token (b)"
                    disabled=move || ui.is_beam_tracked()>"Rewind"</button>
                <button data-testid="reset" on:click=move |_| ui.reset() title="Reset to the prompt (x)">"Reset"</button>
                <span class="stop" data-testid="stop-reason" role="status">{stop_text}</span>
            </div>
            <div class="transcript" data-testid="transcript" aria-live="polite">
                <span class="prompt-text" data-testid="prompt-text">
                    {move || ui.gen.transcript.with(|t| t.as_ref().map(|t| t.prompt_text.clone()))}
                </span>
                <Chips hovered=hovered />
            </div>
            {move || ui.gen.transcript.with(|t| t.as_ref().and_then(|t| t.loop_warning.clone())).map(|w| view! {
                <p class="warning" role="status" data-testid="loop-warning">{w}</p>
            })}
            <p class="text-out" data-testid="transcript-text">
                {move || ui.gen.transcript.with(|t| t.as_ref().map(|t| format!("{}{}", t.prompt_text, t.generated_text)))}
            </p>
            <ChipPopover hovered=hovered />
            <Timings />
        </section>
    }
}

/// The generated tokens as chips with probability and rank; hovering or focusing one sets
/// `hovered`.
#[component]
fn Chips(hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
                {move || {
            let steps = ui.gen.transcript.with(|t| t.as_ref().map(|t| t.steps.clone()).unwrap_or_default());
            steps
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    let label = format!(
                        "token {} {:?}: probability {:.3}, rank {}",
                        i + 1, s.piece, s.prob, s.rank
                    );
                    view! {
                        <button class="chip" class:unlikely={s.rank > 1} data-testid="chip"
                            aria-label=label
                            on:mouseenter=move |_| hovered.set(Some(i))
                            on:mouseleave=move |_| hovered.set(None)
                            on:focus=move |_| hovered.set(Some(i))
                            on:blur=move |_| hovered.set(None)>
                            <span class="piece">{piece_text(&s.piece, false, None)}</span>
                            <span class="p">{format!("{:.2} #{}", s.prob, s.rank)}</span>
                        </button>
                    }
                })
                .collect_view()
        }}
    }
}

/// The distribution the hovered chip was drawn from.
#[component]
fn ChipPopover(hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
            {move || hovered.get().and_then(|i| {
            ui.gen.transcript.with(|t| t.as_ref().and_then(|t| t.steps.get(i).cloned())).map(|s| {
                let rows = s.top.iter().map(|&(id, p)| {
                    let chosen = id == s.token;
                    view! {
                        <li class:chosen=chosen>
                            <span class="piece">{piece_text(&ui.piece(id), false, None)}</span>
                            <span class="bar" style:width=format!("{:.1}%", p * 100.0)></span>
                            <span class="v">{format!("{p:.3}")}</span>
                        </li>
                    }
                }).collect_view();
                view! {
                    <div class="popover" data-testid="chip-popover" role="tooltip">
                        <strong>{format!("Token {} was drawn from:", i + 1)}</strong>
                        {s.coin.map(|c| view! { <span class="coin">{format!(" coin {c:.4}")}</span> })}
                        <ol>{rows}</ol>
                    </div>
                }
            })
        })}
    }
}

/// Prefill and decode times of the last steps.
#[component]
fn Timings() -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        <p class="timings" data-testid="timings">
            {move || ui.gen.transcript.with(|t| t.as_ref().map(|t| {
                let tm = &t.timings;
                let prefill = tm.prefill_ms.map_or(String::new(), |ms| {
                    format!("prefill {} tokens in {:.1} ms", tm.prefill_tokens, ms)
                });
                let decode = if tm.decode_ms.is_empty() {
                    String::new()
                } else {
                    let last: Vec<String> = tm.decode_ms.iter().rev().take(5).map(|ms| format!("{ms:.1}")).collect();
                    let mean = tm.decode_ms.iter().sum::<f64>() / tm.decode_ms.len() as f64;
                    format!("; decode (last steps, ms): {} — {:.0} tokens/s", last.join(", "), 1000.0 / mean.max(1e-6))
                };
                let run = tm.last_run.map_or(String::new(), |(n, ms)| {
                    format!("; last run: {n} tokens in {ms:.0} ms = {:.0} tokens/s", n as f64 * 1000.0 / ms.max(1e-6))
                });
                format!("{prefill}{decode}{run}")
            }))}
        </p>
        <p class="timings" data-testid="memory">
            {move || ui.gen.transcript.with(|t| t.as_ref().and_then(|t| t.memory_bytes).map(|engine| {
                let page = decoding_web::state::wasm_memory_bytes().unwrap_or(0);
                view! {
                    "Memory (wasm, peak): engine "
                    <span data-testid="memory-engine" data-bytes=engine.to_string()>{human_bytes(engine)}</span>
                    ", page "
                    <span data-testid="memory-page" data-bytes=page.to_string()>{human_bytes(page)}</span>
                }
            }))}
        </p>
    }
}

impl Ui {
    /// `is_beam`, tracked (for reactive attributes).
    pub fn is_beam_tracked(&self) -> bool {
        self.knobs
            .settings
            .with(|s| matches!(s.strategy, decoding_engine::sampling::Strategy::Beam { .. }))
    }
}
