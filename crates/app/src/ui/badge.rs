//! The badge every quantity, control and panel carries ([LEARNED], [CONFIG], [STATE]) and
//! the legend of the three, drawn from `decoding_page::taxonomy`, the one table. The badges
//! are the lesson's own labels, the same in every language; what each means is said in the
//! page's.

use super::state::Ui;
use decoding_page::taxonomy::{self, Category};
use leptos::prelude::*;

pub(super) fn slug(c: Category) -> &'static str {
    match c {
        Category::Learned => "learned",
        Category::Config => "config",
        Category::State => "state",
    }
}

/// The badge of the page element `of` (its `data-testid`, or a panel's `panel-<name>`),
/// by the taxonomy table; an id the table does not know shows "[?]" (the end-to-end test
/// fails on it).
#[component]
pub fn Tag(#[prop(into)] of: String) -> impl IntoView {
    let ui = expect_context::<Ui>();
    match taxonomy::category(&of) {
        Some(c) => view! {
            <span class=format!("tag tag-{}", slug(c)) data-category=slug(c) data-of=of
                title=move || ui.t(taxonomy::meaning_id(c))>{c.tag()}</span>
        }
        .into_any(),
        None => view! { <span class="tag tag-missing" data-of=of>"[?]"</span> }.into_any(),
    }
}

/// The three badges and what each means.
#[component]
pub fn Legend() -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        <p class="legend small" data-testid="legend">
            {[Category::Learned, Category::Config, Category::State].map(|c| view! {
                <span class="legend-item">
                    <span class=format!("tag tag-{}", slug(c))>{c.tag()}</span>
                    " " {move || ui.t(taxonomy::meaning_id(c))}
                </span>
            }).collect_view()}
        </p>
    }
}
