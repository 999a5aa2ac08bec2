//! The lesson's taxonomy on the page (lesson 10, section 6): the lesson's table with what
//! this page has in each row, drawn from `decoding_page::taxonomy`, the one table (the
//! badges and the legend are `badge.rs`).

use super::badge::slug;
pub use super::badge::{Legend, Tag};
use super::panel::PanelShell;
use decoding_page::page::Panel;
use decoding_page::taxonomy::{self, ROWS};
use leptos::prelude::*;

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
