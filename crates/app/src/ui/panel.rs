//! The one shell of the collapsible panels: the section labelled by its heading, the heading
//! with the panel's badge, the Show/Hide button, and, while the panel is open, its export
//! row and its body. Every id and the heading come from [`Panel`], the table the link, the
//! taxonomy and the tests read.

use super::badge::Tag;
use super::state::Ui;
use decoding_page::page::Panel;
use leptos::prelude::*;

/// A collapsible panel. The body (`children`) and the export row are built each time the
/// panel opens and dropped when it closes: a closed panel costs nothing while tokens run.
#[component]
pub fn PanelShell(
    panel: Panel,
    /// The export row's buttons (`export::buttons`); none: no export row.
    #[prop(optional, into)]
    export: Option<ViewFn>,
    /// Shown under the heading whether the panel is open or not (the taxonomy's legend).
    #[prop(optional, into)]
    always: Option<ViewFn>,
    /// A quiet (`ghost`) Show/Hide button.
    #[prop(optional)]
    ghost: bool,
    children: ChildrenFn,
) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let open = ui.panel_open(panel);
    // The heading in the language in force (`panel-title-<name>`; `Panel::title` is its
    // English, which the tests hold the message to).
    let title_id = format!("panel-title-{}", panel.name());
    let title = move || format!("{} ", ui.t(&title_id));
    view! {
        <section class="panel" aria-labelledby=panel.heading_id() data-testid=panel.test_id()>
            <div class="panel-head">
                <h2 id=panel.heading_id()>{title} <Tag of=panel.tag_id() /></h2>
                <button class=ghost.then_some("ghost") data-testid=panel.toggle_id() aria-expanded=move || open.get().to_string()
                    on:click=move |_| ui.toggle_panel(panel)>{move || if open.get() { ui.t("panel-hide") } else { ui.t("panel-show") }}</button>
            </div>
            {always.map(|a| a.run())}
            {move || open.get().then(|| view! {
                {export.as_ref().map(|e| view! { <div class="export-row">{e.run()}</div> })}
                {children()}
            })}
        </section>
    }
}
