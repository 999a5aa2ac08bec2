//! The prompt, the generation controls and the transcript: generated tokens as chips with
//! their probability and rank; hovering or focusing a chip shows the distribution it was
//! drawn from.

use super::state::Ui;
use super::taxonomy::Tag;
use decoding_engine::decode::generation::StopReason;
use decoding_engine::units::human_bytes;
use decoding_page::i18n::Lang;
use decoding_page::page::piece_text;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

#[component]
pub fn Transcript() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let hovered = RwSignal::new(None::<usize>);
    // Where the hovered chip is (viewport px): the popover floats below it.
    let anchor = RwSignal::new((0.0f64, 0.0f64));
    let prompt_text = RwSignal::new(ui.shell.page.get_untracked().prompt);
    // The box holds the view's prompt: a lesson step or a link that runs another prompt
    // puts it here (only when the prompt itself changes, so text being typed survives the
    // steps of a run).
    let page_prompt = Memo::new(move |_| ui.shell.page.with(|p| p.prompt.clone()));
    Effect::new(move |_| prompt_text.set(page_prompt.get()));
    let apply_prompt = move || {
        let p = prompt_text.get_untracked();
        let chat = ui.gen.chat.get_untracked();
        ui.control(|m, page, s| m.set_prompt(page, p, chat, s));
    };
    // Redrawn when the prompt changes, not at every step.
    let prompt_tokens = Memo::new(move |_| {
        ui.gen
            .transcript
            .with(|t| t.as_ref().map(|t| t.prompt.clone()))
    });
    let stop_text = move || {
        ui.gen.transcript.with(|t| {
            t.as_ref()
                .and_then(|t| t.stop.clone())
                .map(|r| stop_words_in(ui, &r))
        })
    };
    view! {
        <section class="panel" aria-labelledby="prompt-h" data-testid="prompt-panel">
            <h2 id="prompt-h">{move || ui.t("panel-title-prompt")} " " <Tag of="panel-prompt" /></h2>
            <div class="prompt-row" data-tagged>
                <Tag of="prompt" />
                <textarea data-testid="prompt" aria-label=move || ui.t("transcript-prompt") rows="2"
                    prop:value=move || prompt_text.get()
                    on:input=move |ev| prompt_text.set(event_target_value(&ev))
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Enter" && !ev.shift_key() {
                            ev.prevent_default();
                            apply_prompt();
                        }
                    }></textarea>
                <button data-testid="run-prompt" on:click=move |_| apply_prompt()>{move || ui.t("transcript-run-prompt")}</button>
                {move || ui.model.info.with(|i| i.as_ref().is_some_and(|i| i.chat_template)).then(|| view! {
                    <button class="ghost" data-testid="chat-toggle"
                        title=move || ui.t("transcript-chat-title")
                        aria-pressed=move || ui.gen.chat.get().to_string()
                        on:click=move |_| {
                            ui.gen.chat.update(|c| *c = !*c);
                            apply_prompt();
                        }>{move || ui.t("transcript-chat")}</button>
                })}
            </div>
            <div class="controls" id="controls" role="toolbar" aria-label=move || ui.t("transcript-controls")>
                <button data-testid="step" on:click=move |_| ui.step() title=move || ui.t("transcript-step-title")>{move || ui.t("transcript-step")}</button>
                <button data-testid="run" on:click=move |_| ui.toggle_run() title=move || ui.t("transcript-run-title")
                    aria-pressed=move || ui.gen.running.get().to_string()>
                    {move || if ui.gen.running.get() { ui.t("transcript-pause") } else { ui.t("transcript-run") }}
                </button>
                <button data-testid="rewind" on:click=move |_| ui.rewind() title=move || ui.t("transcript-rewind-title")>{move || ui.t("transcript-rewind")}</button>
                <button data-testid="reset" on:click=move |_| ui.reset() title=move || ui.t("transcript-reset-title")>{move || ui.t("transcript-reset")}</button>
                <span class="stop" data-testid="stop-reason" role="status">{stop_text}</span>
            </div>
            {move || ui.is_beam_tracked().then(|| view! {
                <p class="hint" data-testid="beam-mirror">{ui.t("transcript-beam-mirror")}</p>
            })}
            <p class="prompt-tokens" data-testid="prompt-tokens">
                {move || prompt_tokens.with(|t| t.as_ref().map(|prompt| {
                    let n = prompt.len();
                    let toks = prompt.iter().map(|p| {
                        // BOS and EOS read as <s> and </s> (llama2.c's pieces wrap them in
                        // newlines).
                        let trimmed = p.piece.trim();
                        let shown = if trimmed.starts_with('<') && trimmed.ends_with('>') {
                            trimmed.to_string()
                        } else {
                            piece_text(&p.piece, false, None)
                        };
                        view! { <span class="ptok" data-testid="prompt-token" title=ui.tf("transcript-token-id", &[("id", p.id.to_string())])>{shown}</span> }
                    }).collect_view();
                    let n = [("n", n.to_string())];
                    let how = match (ui.gen.chat.get(), ui.model.info.with(|i| i.as_ref().is_none_or(|i| i.add_bos))) {
                        (true, _) => ui.tf("transcript-prompt-reads-chat", &n),
                        (false, true) => ui.tf("transcript-prompt-reads-bos", &n),
                        (false, false) => ui.tf("transcript-prompt-reads-no-bos", &n),
                    };
                    view! { <span class="small">{format!("{how} ")}</span>{toks} }
                }))}
            </p>
            <div class="transcript" data-testid="transcript" aria-live="polite" tabindex="0" aria-label=move || ui.t("transcript-generated")>
                <span class="prompt-text" data-testid="prompt-text">
                    {move || ui.gen.transcript.with(|t| t.as_ref().map(|t| t.prompt_text.clone()))}
                </span>
                <Chips hovered=hovered anchor=anchor />
            </div>
            {move || ui.gen.transcript.with(|t| t.as_ref().and_then(|t| t.loop_warning.clone())).map(|w| view! {
                <p class="warning" role="status" data-testid="loop-warning">{ui.tf("transcript-loop-warning", &[
                    ("period", w.period.to_string()), ("phrase", format!("{:?}", w.phrase)),
                    ("repeats", w.repeats.to_string()), ("window", w.window.to_string())])}</p>
            })}
            <TranscriptFiles />
            <p class="text-out" data-testid="transcript-text" tabindex="0">
                {move || ui.gen.transcript.with(|t| t.as_ref().map(|t| format!("{}{}", t.prompt_text, t.generated_text)))}
            </p>
            <KeptStrip />
            <ChipPopover hovered=hovered anchor=anchor />
            <Timings />
        </section>
    }
}

/// The chip under an event's target: its position in the transcript, and where it is.
fn chip_at(ev: &web_sys::Event) -> Option<(usize, web_sys::DomRect)> {
    let el: web_sys::Element = ev.target()?.dyn_into().ok()?;
    let chip = el.closest(".chip").ok()??;
    let i = chip.get_attribute("data-i")?.parse().ok()?;
    Some((i, chip.get_bounding_client_rect()))
}

/// Text made safe inside HTML text and attribute values.
fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One chip's markup: the piece, its probability and rank.
fn chip_html(ui: Ui, i: usize, s: &decoding_engine::decode::generation::Step) -> String {
    // The model's probability first (the same under greedy and T = 0), then the one the
    // token was drawn from when the knobs changed it.
    let drawn = ((s.prob - s.model_prob).abs() >= 0.005).then_some(s.prob);
    let shown = piece_text(&s.piece, false, None);
    let p_text = format!(
        "{}{} #{}",
        fixed(ui, s.model_prob, 2),
        drawn.map_or(String::new(), |p| format!("→{}", fixed(ui, p, 2))),
        s.rank
    );
    // The accessible name starts with what the chip shows (WCAG 2.5.3, label in name), then
    // says it in words.
    let drawn = drawn.map_or(String::new(), |p| {
        ui.tf("transcript-chip-drawn", &[("p", fixed(ui, p, 3))])
    });
    let label = ui.tf(
        "transcript-chip-label",
        &[
            ("shown", format!("{shown}{p_text}")),
            ("n", (i + 1).to_string()),
            ("piece", format!("{:?}", s.piece)),
            ("p", fixed(ui, s.model_prob, 3)),
            ("drawn", drawn),
            ("rank", s.rank.to_string()),
        ],
    );
    format!(
        r#"<button class="chip{}" data-testid="chip" data-i="{i}" aria-label="{}"><span class="piece">{}</span><span class="p" title="{}">{}</span></button>"#,
        if s.rank > 1 { " unlikely" } else { "" },
        escape_html(&label),
        escape_html(&shown),
        escape_html(&ui.t("transcript-chip-p-title")),
        escape_html(&p_text),
    )
}

/// The generated tokens as chips with probability and rank; hovering or focusing one sets
/// `hovered`. A step appends one chip and leaves the others (and the focus) alone; a rewind
/// or a new transcript (or another language) redraws the list. The chips are plain markup served by one set of
/// listeners on the list: a reactive view per chip cost the page memory with every token,
/// never returned (tests/e2e/soak.test.mjs; BENCHMARKS.md, "Figures behind the code").
#[component]
fn Chips(hovered: RwSignal<Option<usize>>, anchor: RwSignal<(f64, f64)>) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let list = NodeRef::<leptos::html::Span>::new();
    // What the list shows: its language, and each chip's (token, rank, probability bits).
    let shown = StoredValue::new((Lang::En, Vec::<(u32, usize, u64)>::new()));
    Effect::new(move |_| {
        let Some(el) = list.get() else { return };
        let lang = ui.lang();
        ui.gen.transcript.with(|t| {
            let steps = t.as_ref().map_or(&[][..], |t| &t.steps[..]);
            let keys: Vec<(u32, usize, u64)> = steps
                .iter()
                .map(|s| (s.token, s.rank, s.prob.to_bits()))
                .collect();
            shown.update_value(|(old_lang, old)| {
                let extends =
                    *old_lang == lang && old.len() <= keys.len() && old[..] == keys[..old.len()];
                let from = if extends {
                    old.len()
                } else {
                    el.set_inner_html("");
                    0
                };
                let html: String = steps[from..]
                    .iter()
                    .enumerate()
                    .map(|(j, s)| chip_html(ui, from + j, s))
                    .collect();
                if !html.is_empty() {
                    let _ = el.insert_adjacent_html("beforeend", &html);
                    // The newest chip in view where the transcript scrolls (presenter mode),
                    // at the next frame: reading the height here forced a layout of the
                    // whole page in the middle of every step (a visible cost on a
                    // 32,000-token vocabulary: BENCHMARKS.md, "Figures behind the code"),
                    // and the frame lays the page out anyway.
                    if let Some(box_) = el.parent_element() {
                        request_animation_frame(move || box_.set_scroll_top(box_.scroll_height()));
                    }
                }
                *old = keys;
                *old_lang = lang;
            });
        });
    });
    let enter = move |ev: &web_sys::Event| {
        if let Some((i, rect)) = chip_at(ev) {
            let width = window()
                .inner_width()
                .ok()
                .and_then(|w| w.as_f64())
                .unwrap_or(1280.0);
            anchor.set((rect.left().min(width - 360.0).max(4.0), rect.bottom() + 6.0));
            hovered.set(Some(i));
        }
    };
    view! {
        <span class="chip-list" node_ref=list
            on:mouseover=move |ev: web_sys::MouseEvent| enter(&ev)
            on:focusin=move |ev: web_sys::FocusEvent| enter(&ev)
            on:mouseleave=move |_| hovered.set(None)
            on:focusout=move |_| hovered.set(None)></span>
    }
}

/// The distribution the hovered chip was drawn from.
#[component]
/// An overlay below the chip: it covers the page instead of pushing it down.
fn ChipPopover(hovered: RwSignal<Option<usize>>, anchor: RwSignal<(f64, f64)>) -> impl IntoView {
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
                            <span class="v">{fixed(ui, p, 3)}</span>
                        </li>
                    }
                }).collect_view();
                view! {
                    <div class="popover" data-testid="chip-popover" role="tooltip"
                        style:left=move || format!("{}px", anchor.get().0)
                        style:top=move || format!("{}px", anchor.get().1)>
                        <strong>{ui.tf("transcript-drawn-from", &[("n", (i + 1).to_string())])}</strong>
                        {s.coin.map(|c| view! { <span class="coin">{format!(" {}", ui.tf("dist-coin", &[("coin", fixed(ui, c, 4))]))}</span> })}
                        <ol>{rows}</ol>
                    </div>
                }
            })
        })}
    }
}

/// Steps the strip draws (the newest).
const STRIP_STEPS: usize = 200;

/// How many tokens each step was drawn from, one bar per step: top-k is flat at k, top-p
/// grows where the model hesitates and shrinks where it is sure (lesson 10, section 2).
#[component]
fn KeptStrip() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let sizes = Memo::new(move |_| {
        ui.gen.transcript.with(|t| {
            t.as_ref()
                .map(|t| t.steps.iter().map(|s| s.kept).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    });
    move || {
        sizes.with(|all| {
            let shown = &all[all.len().saturating_sub(STRIP_STEPS)..];
            let (&min, &max) = (shown.iter().min()?, shown.iter().max()?);
            // At least 40 slots, so a few steps read as bars, not as a wall.
            let w = 1000.0 / shown.len().max(40) as f64;
            let d: String = shown
                .iter()
                .enumerate()
                .map(|(i, &k)| {
                    let h = (k as f64 / max as f64 * 100.0).max(2.0);
                    format!("M{:.1} 100V{:.1}h{:.1}V100Z", i as f64 * w, 100.0 - h, w * 0.8)
                })
                .collect();
            let last = *shown.last()?;
            let csv = shown.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",");
            let text = ui.tf(
                "transcript-kept-strip",
                &[
                    ("last", last.to_string()),
                    ("min", min.to_string()),
                    ("max", max.to_string()),
                    ("steps", shown.len().to_string()),
                ],
            );
            Some(view! {
                <figure class="kept-fig">
                    <svg class="kept-strip" data-testid="kept-strip" data-sizes=csv
                        viewBox="0 0 1000 100" preserveAspectRatio="none" role="img" aria-label=text.clone()>
                        <path d=d></path>
                    </svg>
                    <figcaption class="small">{text}</figcaption>
                </figure>
            })
        })
    }
}

/// Prefill and decode times of the last steps.
#[component]
fn Timings() -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        <p class="timings" data-testid="timings"
            data-forward-ms=move || ui.gen.transcript.with(|t| t.as_ref().and_then(|t| {
                let f = &t.timings.forward_ms;
                (!f.is_empty()).then(|| (f.iter().sum::<f64>() / f.len() as f64).to_string())
            }))>
            <Tag of="timings" />" "
            {move || ui.gen.transcript.with(|t| t.as_ref().map(|t| {
                let tm = &t.timings;
                let prefill = tm.prefill_ms.map_or(String::new(), |ms| {
                    ui.tf("transcript-prefill", &[("tokens", tm.prefill_tokens.to_string()), ("ms", fixed(ui, ms, 1))])
                });
                // Means over the last steps (a worker's clock ticks in 0.1 ms, so single steps
                // of a small model read 0.0 or 0.1; their mean is the step's time). The forward
                // pass of each new token is what a step waits for; the chain chose it.
                let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
                let steps = tm.chain_ms.len().to_string();
                let decode = match (mean(&tm.forward_ms), mean(&tm.chain_ms)) {
                    (Some(f), Some(c)) if f + c > 0.0 => format!("; {}", ui.tf("transcript-decode", &[
                        ("total", fixed(ui, f + c, 2)), ("forward", fixed(ui, f, 2)), ("chain", fixed(ui, c, 2)),
                        ("steps", steps), ("rate", fixed(ui, 1000.0 / (f + c), 0))])),
                    (Some(_), Some(_)) => format!("; {}", ui.tf("transcript-decode-under-clock", &[("steps", steps)])),
                    _ => String::new(),
                };
                let run = tm.last_run.map_or(String::new(), |(n, ms)| {
                    format!("; {}", ui.tf("transcript-last-run", &[("n", n.to_string()), ("ms", fixed(ui, ms, 0)),
                        ("rate", fixed(ui, n as f64 * 1000.0 / ms.max(1e-6), 0))]))
                });
                format!("{prefill}{decode}{run}")
            }))}
        </p>
        <p class="timings" data-testid="memory">
            <Tag of="memory" />" "
            {move || ui.gen.transcript.with(|t| t.as_ref().and_then(|t| t.memory_bytes.map(|m| (m, t.heap_bytes.unwrap_or(0)))).map(|(engine, engine_live)| {
                let page = decoding_page::heap::wasm_memory_bytes().unwrap_or(0);
                let page_live = decoding_page::heap::live_bytes().unwrap_or(0);
                view! {
                    {ui.t("transcript-memory-engine")} " "
                    <span data-testid="memory-engine" data-bytes=engine.to_string() data-live=engine_live.to_string()>{shortest(ui, human_bytes(engine))}</span>
                    {ui.t("transcript-memory-page")} " "
                    <span data-testid="memory-page" data-bytes=page.to_string() data-live=page_live.to_string()>{shortest(ui, human_bytes(page))}</span>
                    {ui.tf("transcript-memory-in-use", &[("engine", shortest(ui, human_bytes(engine_live))), ("page", shortest(ui, human_bytes(page_live)))])}
                }
            }))}
        </p>
    }
}

impl Ui {
    /// `is_beam`, tracked (for reactive attributes).
    pub fn is_beam_tracked(&self) -> bool {
        self.knobs.settings.with(|s| {
            matches!(
                s.strategy,
                decoding_engine::decode::sampling::Strategy::Beam { .. }
            )
        })
    }
}

/// A stop reason in words, in the language in force (read from the context: call it while
/// a view is built).
pub fn stop_words(r: &StopReason) -> String {
    stop_words_in(expect_context::<Ui>(), r)
}

/// A stop reason in words.
pub fn stop_words_in(ui: Ui, r: &StopReason) -> String {
    match r {
        StopReason::EndOfSequence { token } => {
            ui.tf("transcript-stop-eos", &[("token", token.to_string())])
        }
        StopReason::MaxTokens { max } => ui.tf("transcript-stop-max", &[("max", max.to_string())]),
        StopReason::StopSequence { stop } => {
            ui.tf("transcript-stop-sequence", &[("stop", format!("{stop:?}"))])
        }
        StopReason::ContextFull { seq_len } => {
            ui.tf("transcript-stop-context", &[("n", seq_len.to_string())])
        }
        StopReason::ConstraintComplete => ui.t("transcript-stop-constraint-complete"),
        StopReason::ConstraintUnsatisfiable => ui.t("transcript-stop-constraint-unsatisfiable"),
    }
}

/// A number with `decimals` places: English as Rust's `{:.N}` writes it (the e2e tests read
/// "of 32000 tokens kept"), the other languages in their own separators (`views::numbers`).
pub(super) fn fixed(ui: Ui, v: f64, decimals: usize) -> String {
    super::views::numbers::num(ui, v, decimals)
}

/// A figure as Rust writes it (`0.9`, `1`, `1.25 KiB`), in the language's decimal separator.
pub(super) fn shortest(ui: Ui, v: impl std::fmt::Display) -> String {
    super::views::numbers::point(ui, v.to_string())
}

/// Between the items of a list of numbers: "; " where the decimal separator is a comma.
pub(super) fn list_sep(ui: Ui) -> &'static str {
    if ui.lang() == Lang::Es {
        "; "
    } else {
        ", "
    }
}

/// The transcript with its settings as a JSON file, and such a file loaded back: its view
/// replayed (same prompt, knobs and seed) and its tokens checked against the replay.
#[component]
fn TranscriptFiles() -> impl IntoView {
    use decoding_page::export::{TranscriptFile, MAX_TRANSCRIPT_BYTES, TRANSCRIPT_FORMAT};
    let ui = expect_context::<Ui>();
    let save = move |_| {
        let (Some(info), Some(t)) = (
            ui.model.info.get_untracked(),
            ui.gen.transcript.get_untracked(),
        ) else {
            return;
        };
        let page = ui.shell.page.get_untracked();
        let settings = ui.knobs.settings.get_untracked();
        let file = TranscriptFile {
            format: TRANSCRIPT_FORMAT.into(),
            version: 1,
            model: info.name.clone(),
            params: info.params,
            prompt: page.prompt.clone(),
            settings: settings
                .to_pairs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            tokens: t.steps.iter().map(|s| s.token).collect(),
            text: format!("{}{}", t.prompt_text, t.generated_text),
            link: decoding_page::page::to_query(&page, &settings),
        };
        if let Ok(json) = serde_json::to_string_pretty(&file) {
            super::export::save_text(&json, "application/json", "transcript.json");
        }
    };
    let load = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        input.set_value("");
        if file.size() > MAX_TRANSCRIPT_BYTES as f64 {
            ui.shell.error.set(Some(ui.tf(
                "transcript-file-too-big",
                &[
                    ("file", file.name()),
                    ("bytes", file.size().to_string()),
                    ("max", MAX_TRANSCRIPT_BYTES.to_string()),
                ],
            )));
            return;
        }
        wasm_bindgen_futures::spawn_local(async move {
            let text = wasm_bindgen_futures::JsFuture::from(file.text())
                .await
                .ok()
                .and_then(|t| t.as_string());
            let parsed = text
                .ok_or_else(|| ui.t("transcript-unreadable"))
                .and_then(|t| TranscriptFile::parse(&t));
            match parsed {
                Ok(f) => {
                    let here = ui
                        .model
                        .info
                        .with_untracked(|i| i.as_ref().map(|i| (i.name.clone(), i.params)));
                    if here.as_ref().is_some_and(|(_, p)| *p != f.params) {
                        ui.shell.error.set(Some(ui.tf(
                            "transcript-other-model",
                            &[
                                ("model", f.model.clone()),
                                ("params", f.params.to_string()),
                                ("loaded", here.map(|h| h.0).unwrap_or_default()),
                            ],
                        )));
                        return;
                    }
                    ui.reactions
                        .update_value(|m| m.expect_tokens = Some(f.tokens.clone()));
                    ui.open_view(&f.link, None);
                }
                Err(e) => ui.shell.error.set(Some(e)),
            }
        });
    };
    view! {
        <div class="knob-row transcript-files">
            <button class="ghost" data-testid="export-transcript" on:click=save>{move || ui.t("transcript-export")}</button>
            <label class="file-button" data-tagged>{move || ui.t("transcript-load")} " " <Tag of="transcript" />
                <input type="file" accept=".json,application/json" data-testid="load-transcript" on:change=load />
            </label>
        </div>
    }
}
