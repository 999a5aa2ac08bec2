//! The colour scheme: the link's choice (`theme=`) or, without one, the system's
//! `prefers-color-scheme`, followed live. The scheme in force is the `<html>` element's
//! `data-theme` (the page's CSS variables, `www/style.css`; `start.js` sets it before the
//! wasm runs, so the page never flashes light) and the colours of every figure and export
//! (`Drawing::themed`).

use super::state::Ui;
use decoding_page::theme::Scheme;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;

const QUERY: &str = "(prefers-color-scheme: dark)";

impl Ui {
    /// The scheme in force.
    pub fn scheme(&self) -> Scheme {
        self.shell.scheme.get()
    }
}

/// Whether the system asks for dark now.
pub fn system_dark() -> bool {
    window()
        .match_media(QUERY)
        .ok()
        .flatten()
        .is_some_and(|m| m.matches())
}

/// Follows the system's preference and puts the scheme in force on `<html>`.
pub fn install(ui: Ui) {
    if let Ok(Some(m)) = window().match_media(QUERY) {
        let on_change = Closure::<dyn Fn(web_sys::MediaQueryListEvent)>::new(
            move |e: web_sys::MediaQueryListEvent| ui.shell.system_dark.set(e.matches()),
        );
        let _ = m.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
        on_change.forget();
    }
    Effect::new(move |_| {
        let scheme = ui.scheme();
        if let Some(html) = document().document_element() {
            let _ = html.set_attribute("data-theme", scheme.name());
        }
    });
}

/// The header's toggle: the other scheme, kept in the link.
#[component]
pub fn ThemeToggle() -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        <button class="ghost" data-testid="theme-toggle"
            aria-pressed=move || (ui.scheme() == Scheme::Dark).to_string()
            title=move || ui.t("dark-theme-title")
            on:click=move |_| {
                let next = ui.scheme().toggled();
                ui.shell.page.update(|p| p.theme = Some(next));
            }>
            {move || ui.t("dark-theme")}
        </button>
    }
}
