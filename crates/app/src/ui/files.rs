//! Another model from the user's files, picked or dropped: handed to the worker as they are
//! (the engine tells which file is which and checks them before reading them).

use super::state::{LoadState, Ui};
use super::taxonomy::Tag;
use leptos::prelude::*;

/// Hands the chosen files to the worker as they are (`{files: [File, …]}`, references to
/// the files, not their bytes): the engine tells which is which from their content, checks
/// their headers against the memory budget before reading the rest, reads them a slice at
/// a time (its progress drives the bar) and keeps the current model on any failure.
fn load_files(ui: Ui, files: Vec<web_sys::File>) {
    if files.is_empty() {
        return ui.shell.error.set(Some(ui.t("choose-file-first")));
    }
    let list = js_sys::Array::new();
    for f in &files {
        list.push(f);
    }
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"files".into(), &list);
    ui.gen.running.set(false);
    ui.model.load.set(LoadState::Loading {
        loaded: 0,
        total: None,
    });
    ui.sender.post(&msg);
}

/// The files of an `<input type=file>`.
fn picked(ev: &leptos::ev::Event) -> Option<web_sys::File> {
    let input: web_sys::HtmlInputElement = event_target(ev);
    input.files().and_then(|f| f.get(0))
}

/// Another model from files: a llama2.c checkpoint and its tokenizer (stories15M/42M/110M
/// work the same way), a GGUF file, or a Hugging Face checkpoint's three files; picked, or
/// dropped on the page.
#[component]
pub(super) fn ModelPicker() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let open = RwSignal::new(false);
    let model = StoredValue::new_local(None::<web_sys::File>);
    let tok = StoredValue::new_local(None::<web_sys::File>);
    let config = StoredValue::new_local(None::<web_sys::File>);
    let go = move || {
        let all: Vec<web_sys::File> = [model.get_value(), tok.get_value(), config.get_value()]
            .into_iter()
            .flatten()
            .collect();
        if !all.is_empty() {
            open.set(false);
        }
        load_files(ui, all);
    };
    let on_drop = window_event_listener(leptos::ev::drop, move |ev: leptos::ev::DragEvent| {
        let Some(files) = ev.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        if files.length() == 0 {
            return;
        }
        ev.prevent_default();
        load_files(
            ui,
            (0..files.length()).filter_map(|i| files.get(i)).collect(),
        );
    });
    let over = window_event_listener(leptos::ev::dragover, |ev: leptos::ev::DragEvent| {
        if ev
            .data_transfer()
            .is_some_and(|d| d.types().includes(&"Files".into(), 0))
        {
            ev.prevent_default();
        }
    });
    // Removed with the picker: the page is drawn again, whole, when the language changes
    // (and once as it starts), and the listeners an earlier drawing left loaded every
    // dropped file twice: the second load's model reset the Chat toggle just switched on.
    on_cleanup(move || {
        on_drop.remove();
        over.remove();
    });
    view! {
        <button class="ghost" data-testid="load-model" aria-expanded=move || open.get().to_string()
            on:click=move |_| open.update(|o| *o = !*o)>{move || ui.t("load-model")}</button>
        {move || open.get().then(|| view! {
            <div class="picker" data-testid="model-picker">
                <label data-tagged>{ui.t("picker-model-file")}" " <Tag of="model-file" />
                    <input type="file" data-testid="model-file" accept=".gguf,.bin,.safetensors"
                        on:change=move |ev| model.set_value(picked(&ev)) /></label>
                <label data-tagged>{ui.t("picker-tokenizer-file")}" " <Tag of="tokenizer-file" />
                    <input type="file" data-testid="tokenizer-file" accept=".bin,.json"
                        on:change=move |ev| tok.set_value(picked(&ev)) /></label>
                <label data-tagged>{ui.t("picker-config-file")}" " <Tag of="config-file" />
                    <input type="file" data-testid="config-file" accept=".json"
                        on:change=move |ev| config.set_value(picked(&ev)) /></label>
                <button data-testid="load-files" on:click=move |_| go()>{ui.t("picker-load")}</button>
                <span class="small">" "{ui.t("picker-or-drop")}</span>
                <super::models::ByLink />
            </div>
        })}
    }
}
