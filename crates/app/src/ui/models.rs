//! Models by link (issue 49): the page's list of real small models, a field for any file's
//! URL or a Hugging Face repository, the models the browser keeps (their sizes, delete), and
//! the download's cancel. The worker does the fetching and keeping (`decoding-worker`'s
//! `download.rs`, `store.rs`); the loaded model's link goes into the page's (`model=`).

use super::state::{LoadState, Ui};
use super::views::numbers::bytes;
use decoding_page::protocol::*;
use decoding_page::remote::{catalogue, BundleEntry, ModelLink};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// A model's name as the page shows it: a listed model's label in the page's language
/// (`listed-<key>`: what it is), else the name the worker gave.
pub fn shown_name(ui: Ui, name: &str, link: Option<&str>) -> String {
    match link.and_then(catalogue::label_id) {
        Some(id) => ui.t(&id),
        None => name.to_string(),
    }
}

/// The hub the page resolves names against: its `<meta name="decoding-hub">` (a local
/// imitation in the tests), else `remote::HUB`.
pub fn hub_of_page() -> String {
    document()
        .query_selector("meta[name=decoding-hub]")
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"))
        .unwrap_or_default()
}

impl Ui {
    /// Loads the model `link` names (checked first: nonsense is said at once).
    pub fn load_link(&self, link: &str) -> Result<(), String> {
        ModelLink::parse(link)?;
        let hub = self.reactions.with_value(|m| m.hub().to_string());
        self.gen.running.set(false);
        self.model.downloading.set(Some(String::new()));
        self.model.load.set(LoadState::Loading {
            loaded: 0,
            total: None,
        });
        self.sender.send(&Request::Model(ModelRequest::LoadRemote {
            link: link.trim().to_string(),
            hub,
            backend: self.shell.page.with_untracked(|p| p.backend),
            fallback: Vec::new(),
        }));
        Ok(())
    }
}

/// The models of a bundle's folder (`decoding-explorer bundle` writes `bundle.json` and
/// names it in `<meta name="decoding-bundle">`); nothing on a page that is not a bundle.
async fn bundle_models() -> Option<Result<Vec<BundleEntry>, String>> {
    let url = document()
        .query_selector("meta[name=decoding-bundle]")
        .ok()??
        .get_attribute("content")?;
    let got = async {
        let resp: web_sys::Response = JsFuture::from(window().fetch_with_str(&url))
            .await
            .map_err(|e| format!("{e:?}"))?
            .dyn_into()
            .map_err(|e| format!("{e:?}"))?;
        if !resp.ok() {
            return Err(format!("HTTP {}", resp.status()));
        }
        let text = JsFuture::from(resp.text().map_err(|e| format!("{e:?}"))?)
            .await
            .map_err(|e| format!("{e:?}"))?
            .as_string()
            .unwrap_or_default();
        serde_json::from_str(&text).map_err(|e| e.to_string())
    };
    Some(got.await.map_err(|e| format!("{url}: {e}")))
}

/// The download's line in the header: what arrives, and Cancel.
#[component]
pub fn DownloadCancel() -> impl IntoView {
    let ui = expect_context::<Ui>();
    move || {
        ui.model.downloading.get().map(|file| {
            view! {
                <span class="small" data-testid="download-file">{if file.is_empty() { ui.t("fetching") } else { ui.tf("fetching-file", &[("file", file)]) }}</span>
                <button class="ghost" data-testid="download-cancel"
                    on:click=move |_| ui.sender.send(&Request::Model(ModelRequest::CancelDownload))>{ui.t("cancel")}</button>
            }
        })
    }
}

/// The list, the field and the kept models, in the model picker.
#[component]
pub fn ByLink() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let chosen = RwSignal::new(catalogue::ENTRIES[0].key.to_string());
    let typed = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let load = move |link: String| problem.set(ui.load_link(&link).err());
    ui.sender.send(&Request::Model(ModelRequest::ListStored));
    let folder = LocalResource::new(bundle_models);
    view! {
        <div class="by-link" data-testid="by-link">
            {move || folder.get().flatten().map(|got| match got {
                Ok(entries) => view! {
                    <div class="bundle" data-testid="bundle-models">
                        <span class="small">{ui.t("in-this-folder")}" "</span>
                        {entries.into_iter().map(|e| {
                            let link = e.link();
                            let total: u64 = e.files.iter().map(|f| f.size).sum();
                            view! {
                                <button class="ghost" data-testid="bundle-load"
                                    on:click=move |_| problem.set(ui.load_link(&link).err())>
                                    {format!("{} ({})", e.name, bytes(ui, total))}
                                </button>
                            }
                        }).collect_view()}
                    </div>
                }.into_any(),
                Err(e) => view! { <p class="field-error" role="alert">{ui.tf("folder-unreadable", &[("why", e)])}</p> }.into_any(),
            })}
            <label data-tagged>{move || ui.t("by-link-list")}" " <super::taxonomy::Tag of="model-link" />" "
                <select data-testid="model-list" prop:value=move || chosen.get()
                    on:change=move |ev| chosen.set(event_target_value(&ev))>
                    {catalogue::ENTRIES.iter().map(|e| view! {
                        <option value=e.key>{move || format!("{} — {}, {}", ui.t(&e.label_id()), bytes(ui, e.size()), e.licence)}</option>
                    }).collect_view()}
                </select>
            </label>
            <button data-testid="model-list-load" on:click=move |_| load(chosen.get_untracked())>{move || ui.t("by-link-download")}</button>
            <label data-tagged>{move || ui.t("by-link-url")}" " <super::taxonomy::Tag of="model-link" />" "
                <input type="text" data-testid="model-url" size="40" spellcheck="false"
                    placeholder="https://huggingface.co/…/resolve/main/model.gguf"
                    prop:value=move || typed.get()
                    on:input=move |ev| typed.set(event_target_value(&ev))
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Enter" { load(typed.get_untracked()) } />
            </label>
            <button data-testid="model-url-load" on:click=move |_| load(typed.get_untracked())>{move || ui.t("by-link-load")}</button>
            {move || problem.get().map(|p| view! { <p class="field-error" role="alert" data-testid="model-url-error">{ui.engine(&p)}</p> })}
            <Kept />
        </div>
    }
}

/// The models the browser keeps: loaded with no network, deleted.
#[component]
fn Kept() -> impl IntoView {
    let ui = expect_context::<Ui>();
    move || {
        let (models, usage, quota) = ui.model.stored.get()?;
        let space = match (usage, quota) {
            (Some(u), Some(q)) => ui.tf(
                "kept-space",
                &[("used", bytes(ui, u)), ("quota", bytes(ui, q))],
            ),
            _ => String::new(),
        };
        Some(view! {
            <div class="kept" data-testid="stored-models">
                <p class="small">{ui.t(if models.is_empty() { "kept-none" } else { "kept-some" })}" "{space}</p>
                <ul>
                    {models.into_iter().map(|m| {
                        let link = m.link.clone();
                        let key = m.key.clone();
                        view! {
                            <li data-testid="stored-model" data-key=m.key.clone()>
                                {format!("{} — {}", shown_name(ui, &m.name, Some(&m.link)), bytes(ui, m.bytes))}
                                {(!m.complete).then(|| format!(" {}", ui.t("kept-partial")))}
                                " "
                                <button class="ghost" data-testid="stored-load" on:click=move |_| { let _ = ui.load_link(&link); }>{ui.t("kept-load")}</button>
                                <button class="ghost" data-testid="stored-delete"
                                    on:click=move |_| ui.sender.send(&Request::Model(ModelRequest::DeleteStored { key: key.clone() }))>{ui.t("kept-delete")}</button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </div>
        })
    }
}
