//! The lesson's taxonomy on the page (lesson 10, section 6): the lesson's table with what
//! this page has in each row, drawn from `decoding_page::taxonomy`, the one table (the
//! badges and the legend are `badge.rs`).

use super::badge::slug;
pub use super::badge::{Legend, Tag};
use super::panel::PanelShell;
use super::state::Ui;
use decoding_page::page::Panel;
use decoding_page::taxonomy::{self, ROWS};
use leptos::prelude::*;

/// The lesson's table, and what this page has in each row.
#[component]
pub fn TaxonomyPanel() -> impl IntoView {
    let ui = expect_context::<Ui>();
    // The row's members, in the language in force.
    let members = move |row| {
        let said: Vec<String> = taxonomy::members_said(row)
            .iter()
            .map(|(id, _)| ui.t(id))
            .collect();
        said.join(&ui.t("taxonomy-separator"))
    };
    view! {
        <PanelShell panel=Panel::Taxonomy ghost=true
            always=|| view! { <Legend /> }>
            <table class="taxonomy" data-testid="taxonomy-table">
                <caption class="small">{move || ui.t("taxonomy-caption")}</caption>
                <thead><tr>
                    <th scope="col">{move || ui.t("taxonomy-col-at-inference")}</th>
                    <th scope="col">{move || ui.t("taxonomy-col-category")}</th>
                    <th scope="col">{move || ui.t("taxonomy-col-on-page")}</th>
                </tr></thead>
                <tbody>
                    {ROWS.iter().map(|&r| view! {
                        <tr class:addition=!r.in_lesson data-category=slug(r.category)>
                            <th scope="row">
                                {move || ui.t(&taxonomy::at_inference_id(r.row))}
                                {(!r.in_lesson).then_some(move || format!(" {}", ui.t("taxonomy-addition")))}
                            </th>
                            <td><span class=format!("tag tag-{}", slug(r.category))>{move || ui.t(&taxonomy::cell_id(r.row))}</span></td>
                            <td class="small">{move || members(r.row)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </PanelShell>
    }
}
