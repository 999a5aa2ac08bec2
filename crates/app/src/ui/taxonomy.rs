//! The lesson's taxonomy on the page (lesson 10, section 6): the badge every quantity,
//! control and panel carries, the legend, and the lesson's table with what this page has in
//! each row — all drawn from `decoding_web::taxonomy`, the one table.

use super::panel::PanelShell;
use decoding_web::page::Panel;
use decoding_web::taxonomy::{self, Category, ROWS};
use leptos::prelude::*;

fn slug(c: Category) -> &'static str {
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
    match taxonomy::category(&of) {
        Some(c) => view! {
            <span class=format!("tag tag-{}", slug(c)) data-category=slug(c) data-of=of
                title=taxonomy::meaning(c)>{c.tag()}</span>
        }
        .into_any(),
        None => view! { <span class="tag tag-missing" data-of=of>"[?]"</span> }.into_any(),
    }
}

/// The three badges and what each means.
#[component]
pub fn Legend() -> impl IntoView {
    view! {
        <p class="legend small" data-testid="legend">
            {[Category::Learned, Category::Config, Category::State].map(|c| view! {
                <span class="legend-item">
                    <span class=format!("tag tag-{}", slug(c))>{c.tag()}</span>
                    " " {taxonomy::meaning(c)}
                </span>
            }).collect_view()}
        </p>
    }
}

/// The lesson's table, and what this page has in each row.
#[component]
pub fn TaxonomyPanel() -> impl IntoView {
    view! {
        <PanelShell panel=Panel::Taxonomy ghost=true
            always=|| view! { <Legend /> }>
            <table class="taxonomy" data-testid="taxonomy-table">
                <caption class="small">"Lesson 10, section 6, with what this page shows in each row"</caption>
                <thead><tr><th scope="col">"At inference"</th><th scope="col">"Category"</th><th scope="col">"On this page"</th></tr></thead>
                <tbody>
                    {ROWS.iter().map(|r| view! {
                        <tr class:addition=!r.in_lesson data-category=slug(r.category)>
                            <th scope="row">{r.at_inference}{(!r.in_lesson).then_some(" — this page's addition")}</th>
                            <td><span class=format!("tag tag-{}", slug(r.category))>{r.cell}</span></td>
                            <td class="small">{taxonomy::members(r.row).join(", ")}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </PanelShell>
    }
}
