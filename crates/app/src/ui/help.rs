//! Keyboard control for every action, and the help overlay (`?`) that lists it.

use super::state::Ui;
use decoding_page::page::shortcuts::SHORTCUT_HELP;
use decoding_page::page::Shortcut;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Focuses the element with this `data-testid`, if there is one.
pub fn focus(testid: &str) {
    if let Some(el) = window()
        .document()
        .and_then(|d| {
            d.query_selector(&format!("[data-testid={testid}]"))
                .ok()
                .flatten()
        })
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// Global shortcuts, ignored while typing in a text field.
pub fn install_shortcuts(ui: Ui) {
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        let typing = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .map(|el| {
                let tag = el.tag_name().to_ascii_lowercase();
                let kind = el.get_attribute("type").unwrap_or_default();
                tag == "textarea"
                    || tag == "select"
                    || (tag == "input" && kind != "range" && kind != "checkbox")
            })
            .unwrap_or(false);
        let key = ev.key();
        if key == "Escape" {
            if ui.shell.help.get_untracked() {
                ui.shell.help.set(false);
            } else if typing {
                // Esc leaves a text field, so the keys reach the page again (a presenter's
                // clicker after a click in the prompt box).
                if let Some(el) = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
                {
                    let _ = el.blur();
                }
            }
            return;
        }
        // PageDown / PageUp are the lesson track's keys wherever the focus is (they open it
        // when it is closed): a clicker sends them, and a presenter who clicked into the
        // prompt box must not find it dead.
        if !ui.shell.help.get_untracked() && (key == "PageDown" || key == "PageUp") {
            ui.lesson_move(if key == "PageDown" { 1 } else { -1 });
            ev.prevent_default();
            return;
        }
        // The help is a modal dialog: it holds the focus (its one control is Close), and no
        // shortcut reaches the page behind it.
        if ui.shell.help.get_untracked() {
            if key == "Tab" {
                focus("help-close");
            }
            if key != "Enter" && key != " " {
                ev.prevent_default();
            }
            return;
        }
        if typing {
            return;
        }
        // Arrow keys belong to a focused slider, or to a focused view that moves its own
        // cursor with them (`data-arrows`: the attention grid).
        let on_slider = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| {
                el.get_attribute("type").as_deref() == Some("range")
                    || el.has_attribute("data-arrows")
            });
        let Some(shortcut) = Shortcut::for_key(&key, on_slider) else {
            return;
        };
        match shortcut {
            Shortcut::Step => ui.step(),
            Shortcut::RunPause => ui.toggle_run(),
            Shortcut::Rewind => ui.rewind(),
            Shortcut::Reset => ui.reset(),
            Shortcut::FocusTemperature => focus("knob-temperature"),
            Shortcut::FocusTopK => focus("knob-top_k"),
            Shortcut::ToggleScale => ui.shell.page.update(|p| p.scale = p.scale.toggled()),
            Shortcut::Help => ui.shell.help.set(true),
            Shortcut::LessonNext => ui.lesson_move(1),
            Shortcut::LessonPrev => ui.lesson_move(-1),
        }
        ev.prevent_default();
    });
    // The listener lives as long as the page.
    std::mem::forget(handle);
}

#[component]
pub fn HelpOverlay() -> impl IntoView {
    let ui = expect_context::<Ui>();
    // Opening moves the focus into the dialog; closing gives it back where it was.
    let before = StoredValue::new_local(None::<web_sys::HtmlElement>);
    Effect::new(move |_| {
        if ui.shell.help.get() {
            before.set_value(
                window()
                    .document()
                    .and_then(|d| d.active_element())
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()),
            );
            request_animation_frame(|| focus("help-close"));
        } else if let Some(el) = before.try_update_value(|b| b.take()).flatten() {
            let _ = el.focus();
        }
    });
    move || {
        ui.shell.help.get().then(|| {
            // The keys' alternatives joined by the language's "or" ("n  or  →").
            let or = format!("  {}  ", ui.t("shortcut-or"));
            let rows = SHORTCUT_HELP
                .iter()
                .map(|r| {
                    let action = ui.t(&format!("shortcut-{}", r.key));
                    view! { <tr><th scope="row"><kbd>{r.keys.join(&or)}</kbd></th><td>{action}</td></tr> }
                })
                .collect_view();
            view! {
                <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="help-h" data-testid="help"
                    on:click=move |_| ui.shell.help.set(false)>
                    <div class="dialog" on:click=|ev| ev.stop_propagation()>
                        <h2 id="help-h">{ui.t("shortcuts")}</h2>
                        <table>{rows}</table>
                        <button data-testid="help-close" autofocus on:click=move |_| ui.shell.help.set(false)>{ui.t("help-close")}</button>
                    </div>
                </div>
            }
        })
    }
}
