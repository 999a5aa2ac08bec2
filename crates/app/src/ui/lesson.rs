//! The lesson track: Lesson 10 walked section by section, each step a prepared view of this
//! page (`decoding_page::lesson::STEPS`: a link state and its panel action) with a caption
//! whose numbers come from what the page shows (`Step::caption`), written in the page's
//! language. Next / previous with the buttons, PageDown / PageUp (a presenter's clicker) or
//! "." / ","; the step is in the link. A step is a place: opening it brings what it shows to
//! the top of the viewport, under the track (which stays on screen), and moves the keyboard
//! focus to its caption.

use super::state::Ui;
use super::taxonomy::Tag;
use decoding_page::lesson::{Live, Part, STEPS};
use decoding_page::page;
use leptos::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};
use wasm_bindgen::JsCast;

/// Frames to wait for a step's view to exist before giving up bringing it into view.
const FRAMES_TO_WAIT: u32 = 120;

impl Ui {
    /// Opens step `i` of the track: its view (`open_view`), with what the step shows
    /// brought into view and the focus on the caption.
    pub fn open_lesson(&self, i: usize) {
        let Some(step) = STEPS.get(i) else {
            return;
        };
        self.open_view(step.query, Some(i));
        // After the page has drawn the step (the track itself may only now appear).
        request_animation_frame(|| bring_into_view(step.shows, true, FRAMES_TO_WAIT));
    }

    /// Replaces the view by a link's (`query`), in place (`controls::open_view`: the
    /// backend, the precision and presenter mode stay; the worker is asked for the new view
    /// and a lesson step's action). Every view a caption reads is cleared first, so until
    /// the worker answers the caption waits instead of quoting the last step's numbers.
    /// What the link has wrong is reported as when a link is opened.
    pub fn open_view(&self, query: &str, lesson: Option<usize>) {
        let vocab = self.vocab_size();
        let (r, send) = self.reactions.with_value(|m| {
            self.shell
                .page
                .with_untracked(|p| m.open_view(p, query, lesson, vocab))
        });
        self.shell.url_problems.set(r.problems.clone());
        self.gen.running.set(false);
        self.gen.transcript.set(None);
        self.gen.next.set(None);
        self.views.clear();
        self.knobs.raw.set(r.raw.clone());
        self.knobs.field_errors.set(Vec::new());
        self.knobs.settings.set(r.settings.clone());
        self.shell.page.set(r.page);
        self.sender.send_all(&send);
    }

    /// The next (+1) or previous (−1) step; opens the track at its first step if closed.
    pub fn lesson_move(&self, by: isize) {
        let at = self.shell.page.with_untracked(|p| p.lesson);
        if let Some(next) = decoding_page::behaviour::controls::lesson_move(at, by) {
            self.open_lesson(next);
        }
    }
}

fn element(selector: &str) -> Option<web_sys::HtmlElement> {
    window()
        .document()?
        .query_selector(selector)
        .ok()??
        .dyn_into()
        .ok()
}

/// Which bringing-into-view is current: opening another step, or the user scrolling by
/// hand, ends the last one.
static CHASE: AtomicU32 = AtomicU32::new(0);
/// Frames a step's view is held under the track at most (the page above it settles).
const CHASE_FRAMES: u32 = 360;
/// Still frames, with the caption's numbers in, after which the view is left alone.
const STILL_FRAMES: u32 = 20;

/// Brings the element with `data-testid` = `shows` to the top of the viewport, under the
/// track, once it exists (trying for `frames` more animation frames); `focus` moves the
/// keyboard focus to the caption without scrolling. Then holds it there while the page
/// settles (`chase`).
pub fn bring_into_view(shows: &'static str, focus: bool, frames: u32) {
    let caption = element("[data-testid=lesson-caption]");
    let target = element(&format!("[data-testid={shows}]"));
    let (Some(_), true) = (target, !focus || caption.is_some()) else {
        if frames > 0 {
            request_animation_frame(move || bring_into_view(shows, focus, frames - 1));
        }
        return;
    };
    if let (true, Some(c)) = (focus, caption) {
        let o = web_sys::FocusOptions::new();
        o.set_prevent_scroll(true);
        let _ = c.focus_with_options(&o);
    }
    let reduced = window()
        .match_media("(prefers-reduced-motion: reduce)")
        .ok()
        .flatten()
        .is_some_and(|m| m.matches());
    let id = CHASE.fetch_add(1, Ordering::Relaxed) + 1;
    chase(shows, id, reduced, 0, 0);
}

/// Scrolling by hand (wheel, touch, the scrollbar, a scrolling key) ends the holding: the
/// view is the user's.
pub fn release_on_user_scroll() {
    let stop = || {
        CHASE.fetch_add(1, Ordering::Relaxed);
    };
    let handles = (
        window_event_listener(leptos::ev::wheel, move |_| stop()),
        window_event_listener(leptos::ev::touchstart, move |_| stop()),
        window_event_listener(leptos::ev::mousedown, move |_| stop()),
        window_event_listener(leptos::ev::keydown, move |ev| {
            if matches!(
                ev.key().as_str(),
                "ArrowUp" | "ArrowDown" | "Home" | "End" | " "
            ) {
                stop()
            }
        }),
    );
    std::mem::forget(handles);
}

/// One frame of holding what a step shows under the track. The place is measured every
/// frame, not once: the step's views arrive after it opens and the page above the panel
/// grows (a scroll aimed at where the panel was when the step opened ended 600 px off).
/// A quarter of the way each frame (at once under reduced motion); done after
/// `STILL_FRAMES` still frames once the caption has its numbers, or `CHASE_FRAMES`.
fn chase(shows: &'static str, id: u32, reduced: bool, frame: u32, still: u32) {
    if CHASE.load(Ordering::Relaxed) != id || frame >= CHASE_FRAMES {
        return;
    }
    if let Some(t) = element("[data-testid=lesson-track]") {
        set_track_height(Some(t.offset_height() as f64));
    }
    let still = match offset(shows) {
        Some(d) if d.abs() > 8.0 => {
            let w = window();
            let by = if reduced || d.abs() < 24.0 {
                d
            } else {
                d / 4.0
            };
            let opts = web_sys::ScrollToOptions::new();
            opts.set_top((w.scroll_y().unwrap_or(0.0) + by).max(0.0));
            opts.set_behavior(web_sys::ScrollBehavior::Instant);
            w.scroll_to_with_scroll_to_options(&opts);
            0
        }
        Some(_) => still + 1,
        None => 0,
    };
    let ready = element("[data-testid=lesson-waiting]").is_none();
    if ready && still >= STILL_FRAMES {
        return;
    }
    request_animation_frame(move || chase(shows, id, reduced, frame + 1, still));
}

/// The track's height as `--track-h` on the page (presenter mode's sticky knobs sit under
/// the sticky track); `None` when the track closes.
pub fn set_track_height(h: Option<f64>) {
    let Some(root) = window()
        .document()
        .and_then(|d| d.document_element())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return;
    };
    let style = root.style();
    let _ = match h {
        Some(h) => style.set_property("--track-h", &format!("{h}px")),
        None => style.remove_property("--track-h").map(|_| ()),
    };
}

/// Where the element with `data-testid` = `shows` is from where a step puts it (just
/// under the track), px; none if it is not on the page.
fn offset(shows: &str) -> Option<f64> {
    let target = element(&format!("[data-testid={shows}]"))?;
    let track_h = element("[data-testid=lesson-track]").map_or(0.0, |t| t.offset_height() as f64);
    Some(target.get_bounding_client_rect().top() - (track_h + 8.0))
}

/// The track's bar: where in the lesson, the caption, next and previous.
#[component]
pub fn LessonTrack() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let at = Memo::new(move |_| ui.shell.page.with(|p| p.lesson));
    move || {
        at.get().map(|i| {
            let step = STEPS[i];
            // The step's class check is open (its view is a class round).
            let checking = move || ui.shell.page.with(|p| p.class) && step.check.is_some();
            view! {
                <section class="panel lesson-track" aria-labelledby="lesson-h" data-testid="lesson-track" data-step=i.to_string() data-key=step.key data-shows=step.shows>
                    <div class="panel-head">
                        <h2 id="lesson-h">
                            {move || ui.tf("lesson-heading", &[("section", step.section.to_string()), ("title", ui.t(&format!("step-{}", step.key)))])}" "
                            <Tag of="panel-lesson" />
                        </h2>
                        <span class="small" data-testid="lesson-position">{move || ui.tf("lesson-position", &[("n", ui.int(i as u64 + 1)), ("total", ui.int(STEPS.len() as u64))])}</span>
                        <button data-testid="lesson-prev" disabled=i == 0 aria-keyshortcuts="PageUp"
                            on:click=move |_| ui.lesson_move(-1)>{move || ui.t("lesson-previous")}</button>
                        <button data-testid="lesson-next" disabled=i + 1 == STEPS.len() aria-keyshortcuts="PageDown"
                            on:click=move |_| ui.lesson_move(1)>{move || ui.t("lesson-next")}</button>
                        {step.check.map(|c| view! {
                            <button data-testid="lesson-check" aria-pressed=move || checking().to_string()
                                title=move || ui.t("lesson-check-title")
                                on:click=move |_| {
                                    if checking() {
                                        ui.open_lesson(i);
                                    } else {
                                        ui.open_view(c.query, Some(i));
                                        request_animation_frame(|| bring_into_view("class-panel", false, FRAMES_TO_WAIT));
                                    }
                                }>{move || ui.t("lesson-check")}</button>
                        })}
                        <button class="ghost" data-testid="lesson-close" aria-label=move || ui.t("lesson-close")
                            on:click=move |_| {
                                ui.shell.page.update(|p| p.lesson = None);
                                set_track_height(None);
                            }>"×"</button>
                    </div>
                    <p class="lesson-caption" data-testid="lesson-caption" aria-live="polite" tabindex="-1">
                        <Tag of="lesson-caption" />" "
                        {move || match step.check.filter(|_| checking()) {
                            // The question in the page's language (`lesson-question-<key>`:
                            // in English, `c.question`).
                            Some(_) => view! { <span data-testid="lesson-check-question">{move || ui.tf("lesson-check-question", &[("question", ui.t(&format!("lesson-question-{}", step.key)))])}</span> }.into_any(),
                            None => view! { <Caption i=i /> }.into_any(),
                        }}
                    </p>
                </section>
            }
        })
    }
}

/// The caption from the live views.
#[component]
fn Caption(i: usize) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let step = STEPS[i];
    move || {
        let page = ui.shell.page.get();
        let info = ui.model.info.get();
        let transcript = ui.gen.transcript.get();
        let trace = ui.gen.trace.get();
        let v = ui.views;
        let beam = v.beam.view.get();
        let toy = v.toy.trace.get();
        let cache_rows = v.kv.compare.get();
        let columns = v.compare.columns.get();
        let spec = v.spec.spec.get();
        let quant = v.quant.quant.get();
        let sweep = v.batch.sweep.get();
        let toy_logits = page.toy.as_deref().and_then(|t| page::parse_toy(t).ok());
        let live = Live {
            info: info.as_ref(),
            page: Some(&page),
            transcript: transcript.as_ref(),
            trace: trace.as_ref(),
            beam: beam.as_ref(),
            toy: toy.as_ref(),
            toy_logits: toy_logits.as_deref(),
            cache_rows: cache_rows.as_ref().map(|(rows, _)| rows.as_slice()),
            columns: columns.as_ref(),
            spec: spec.as_ref(),
            quant: quant.as_ref(),
            sweep: sweep.as_ref(),
            // Tracked: the caption redraws in a language chosen while it shows.
            lang: ui.lang(),
        };
        match step.caption(&live) {
            Ok(parts) => parts
                    .into_iter()
                    .map(|p| match p {
                        Part::Text(t) => view! { <span>{t}</span> }.into_any(),
                        Part::Num { key, value, shown } => view! {
                            <b class="num" data-key=key data-value=value.to_string()>{shown}</b>
                        }
                        .into_any(),
                    })
                    .collect_view()
                    .into_any(),
            Err(what) => view! {
                <span class="waiting" data-testid="lesson-waiting">{ui.tf("lesson-waiting", &[("what", ui.t(what))])}</span>
            }
            .into_any(),
        }
    }
}
