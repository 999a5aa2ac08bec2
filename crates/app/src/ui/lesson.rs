//! The lesson track: Lesson 10 walked section by section, each step a prepared view of this
//! page (`decoding_web::lesson::STEPS`: a link state and its panel action) with a caption
//! whose numbers come from what the page shows (`lesson::caption`). Next / previous with the
//! buttons, PageDown / PageUp (a presenter's clicker) or "." / ","; the step is in the link.

use super::taxonomy::Tag;
use super::Ui;
use decoding_web::lesson::{self, Live, Part, STEPS};
use decoding_web::state;
use leptos::prelude::*;

impl Ui {
    /// Opens step `i` of the track: its link state replaces the view (the backend, the
    /// precision and presenter mode stay), the views of the last step are cleared so no
    /// caption reads them, and the worker is asked for the step's views.
    pub fn open_lesson(&self, i: usize) {
        let Some(step) = STEPS.get(i) else {
            return;
        };
        self.open_view(step.query, Some(i));
        if let Some(req) = step.action_request() {
            self.send(&req);
        }
    }

    /// Replaces the view by a link's (`query`), in place: the backend, the precision and
    /// presenter mode stay; the last view's panels are cleared so nothing shows stale
    /// data; the worker is asked for the new view (`state::view_requests`). What the link
    /// has wrong is reported as when a link is opened.
    pub fn open_view(&self, query: &str, lesson: Option<usize>) {
        let r = state::from_query(query, self.vocab_size());
        self.shell.url_problems.set(r.problems.clone());
        let mut page = r.page.clone();
        self.shell.page.with_untracked(|p| {
            page.backend = p.backend;
            page.precision = p.precision;
            page.presenter = p.presenter;
        });
        page.lesson = lesson;
        self.gen.running.set(false);
        self.views.beam.set(None);
        self.views.columns.set(None);
        self.views.compare.set(None);
        self.views.spec.set(None);
        self.views.quant.set(None);
        self.views.lanes.set(None);
        self.views.toy_trace.set(None);
        self.views.toy_history.set(String::new());
        self.knobs.raw.set(r.raw.clone());
        self.knobs.field_errors.set(Vec::new());
        self.knobs.settings.set(r.settings.clone());
        self.shell.page.set(page.clone());
        self.send(&decoding_web::protocol::Request::Cancel);
        for req in state::view_requests(&page, &r.settings) {
            self.send(&req);
        }
    }

    /// The next (+1) or previous (−1) step; opens the track at its first step if closed.
    pub fn lesson_move(&self, by: isize) {
        let at = self.shell.page.with_untracked(|p| p.lesson);
        let next = match at {
            None => 0,
            Some(i) => (i as isize + by).clamp(0, STEPS.len() as isize - 1) as usize,
        };
        if at != Some(next) {
            self.open_lesson(next);
        }
    }
}

/// The track's bar: where in the lesson, the caption, next and previous.
#[component]
pub fn LessonTrack() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let at = Memo::new(move |_| ui.shell.page.with(|p| p.lesson));
    move || {
        at.get().map(|i| {
            let step = STEPS[i];
            view! {
                <section class="panel lesson-track" aria-labelledby="lesson-h" data-testid="lesson-track" data-step=i.to_string()>
                    <div class="panel-head">
                        <h2 id="lesson-h">
                            {format!("Lesson 10, §{} — {} ", step.section, step.title)}
                            <Tag of="panel-lesson" />
                        </h2>
                        <span class="small" data-testid="lesson-position">{format!("step {} of {}", i + 1, STEPS.len())}</span>
                        <button data-testid="lesson-prev" disabled=i == 0 aria-keyshortcuts="PageUp"
                            on:click=move |_| ui.lesson_move(-1)>"← Previous"</button>
                        <button data-testid="lesson-next" disabled=i + 1 == STEPS.len() aria-keyshortcuts="PageDown"
                            on:click=move |_| ui.lesson_move(1)>"Next →"</button>
                        <button class="ghost" data-testid="lesson-close" aria-label="Close the lesson track"
                            on:click=move |_| ui.shell.page.update(|p| p.lesson = None)>"×"</button>
                    </div>
                    <p class="lesson-caption" data-testid="lesson-caption" aria-live="polite">
                        <Tag of="lesson-caption" />" "
                        <Caption i=i />
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
    move || {
        let info = ui.model.info.get();
        let transcript = ui.gen.transcript.get();
        let trace = ui.gen.trace.get();
        let beam = ui.views.beam.get();
        let toy = ui.views.toy_trace.get();
        let cache_rows = ui.views.compare.get();
        let columns = ui.views.columns.get();
        let spec = ui.views.spec.get();
        let quant = ui.views.quant.get();
        let lanes = ui.views.lanes.get();
        let toy_logits = ui
            .shell
            .page
            .with(|p| p.toy.as_deref().and_then(|t| state::parse_toy(t).ok()));
        let live = Live {
            info: info.as_ref(),
            transcript: transcript.as_ref(),
            trace: trace.as_ref(),
            beam: beam.as_ref(),
            toy: toy.as_ref(),
            toy_logits: toy_logits.as_deref(),
            cache_rows: cache_rows.as_deref(),
            columns: columns.as_ref(),
            spec: spec.as_ref(),
            quant: quant.as_ref(),
            lanes: lanes.as_ref(),
        };
        match lesson::caption(i, &live) {
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
                <span class="waiting" data-testid="lesson-waiting">{format!("Waiting for {what}…")}</span>
            }
            .into_any(),
        }
    }
}
