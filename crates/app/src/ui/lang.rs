//! The page's language: the link's (`lang=`), else the browser's first that the page has
//! (`navigator.languages`, `i18n::Lang::negotiate`). Its words come from `decoding_page::i18n`
//! (Fluent), read through [`Ui::t`] and [`Ui::tf`]; the page is drawn again when the
//! language changes; `<html lang>` follows it (screen readers, fonts, hyphenation).

use super::state::Ui;
use decoding_page::i18n::{self, tr, Lang};
use leptos::prelude::*;

/// The browser's languages, negotiated against the page's.
pub fn browser_lang() -> Lang {
    let langs: Vec<String> = window()
        .navigator()
        .languages()
        .iter()
        .filter_map(|l| l.as_string())
        .collect();
    Lang::negotiate(&langs)
}

impl Ui {
    /// The language in force, untracked: the whole page is drawn again when it changes
    /// (`ui/mod.rs`), so no view subscribes to it (a subscription of each short-lived view to
    /// a memo that never changes was memory never returned).
    pub fn lang(&self) -> Lang {
        self.shell.lang.get_untracked()
    }

    /// The message `id` in the language in force.
    pub fn t(&self, id: &str) -> String {
        tr(self.lang()).get(id)
    }

    /// The message `id` with its arguments.
    pub fn tf(&self, id: &str, args: i18n::Args) -> String {
        tr(self.lang()).fmt(id, args)
    }

    /// A number with `decimals` places, in the language's separators and grouping.
    pub fn num(&self, v: f64, decimals: usize) -> String {
        i18n::number(self.lang(), v, decimals)
    }

    /// A whole number in the language's grouping.
    pub fn int(&self, n: u64) -> String {
        i18n::integer(self.lang(), n)
    }

    /// An engine's message (a knob's broken rule, a constraint's error: English, as the CLI
    /// prints it) in the language in force; a phrase the page does not know stays English.
    pub fn engine(&self, english: &str) -> String {
        i18n::engine::engine_message(self.lang(), english)
    }
}

/// Keeps `<html lang>` the language in force.
pub fn install(ui: Ui) {
    Effect::new(move |_| {
        let lang = ui.shell.lang.get();
        if let Some(html) = document().document_element() {
            let _ = html.set_attribute("lang", lang.name());
        }
    });
}

/// The header's language menu, kept in the link.
#[component]
pub fn LangMenu() -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        // How the page is shown, not a quantity of inference: outside the lesson's taxonomy.
        <label class="inline" data-presentation>
            {move || ui.t("language-label")} " "
            <select data-testid="lang-select" prop:value=move || ui.lang().name()
                on:change=move |ev| {
                    if let Ok(l) = Lang::parse(&event_target_value(&ev)) {
                        ui.shell.page.update(|p| p.lang = Some(l));
                        // The page is drawn again: the focus back on the menu.
                        request_animation_frame(|| super::help::focus("lang-select"));
                    }
                }>
                {Lang::ALL.map(|l| view! { <option value=l.name() lang=l.name()>{l.native()}</option> }).collect_view()}
            </select>
        </label>
    }
}
