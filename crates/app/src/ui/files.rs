//! Another model from the user's files: which file is which, their sizes and headers
//! checked against the memory budget before anything large is read, their bytes moved to
//! the worker.

use super::taxonomy::Tag;
use super::{LoadState, Ui};
use leptos::prelude::*;

/// The files a model is loaded from: a llama2.c checkpoint and its tokenizer, a GGUF file
/// alone, or a Hugging Face set (`model.safetensors`, `config.json`, `tokenizer.json`).
struct Chosen {
    model: web_sys::File,
    tokenizer: Option<web_sys::File>,
    config: Option<web_sys::File>,
}

impl Chosen {
    /// Sorts picked or dropped files by name: `.safetensors` is a Hugging Face checkpoint
    /// (the `.json` named like "config" its config, the other its tokenizer), a lone
    /// `.gguf` a GGUF file, otherwise the one named like a tokenizer is the tokenizer.
    fn sort(all: Vec<web_sys::File>) -> Result<Chosen, String> {
        let name = |f: &web_sys::File| f.name().to_ascii_lowercase();
        let ends = |f: &web_sys::File, ext: &str| name(f).ends_with(ext);
        if let Some(st) = all.iter().find(|f| ends(f, ".safetensors")) {
            let config = all
                .iter()
                .find(|f| ends(f, ".json") && name(f).contains("config"));
            // its tokenizer: tokenizer.json, or a llama2.c tokenizer.bin (told by content)
            let is_config = |f: &web_sys::File| ends(f, ".json") && name(f).contains("config");
            let tokenizer = all
                .iter()
                .find(|f| !ends(f, ".safetensors") && !is_config(f));
            return match (config, tokenizer, all.len()) {
                (Some(c), Some(t), 3) => Ok(Chosen {
                    model: st.clone(),
                    tokenizer: Some(t.clone()),
                    config: Some(c.clone()),
                }),
                _ => Err(format!(
                    "{} is a Hugging Face checkpoint: give it with its config.json and its tokenizer (tokenizer.json, or a llama2.c tokenizer.bin), the three together",
                    st.name()
                )),
            };
        }
        if all.len() == 1 && ends(&all[0], ".gguf") {
            return Ok(Chosen {
                model: all[0].clone(),
                tokenizer: None,
                config: None,
            });
        }
        let is_tok = |f: &web_sys::File| name(f).contains("tok") || ends(f, ".json");
        match (
            all.iter().find(|f| !is_tok(f)),
            all.iter().find(|f| is_tok(f)),
            all.len(),
        ) {
            (Some(m), Some(t), 2) => Ok(Chosen {
                model: m.clone(),
                tokenizer: Some(t.clone()),
                config: None,
            }),
            (Some(m), None, 1) if !ends(m, ".gguf") => Err(format!(
                "{} is a llama2.c checkpoint: give its tokenizer too",
                m.name()
            )),
            _ => Err("give a GGUF file alone, a llama2.c checkpoint (.bin) with its tokenizer, or a Hugging Face model.safetensors with its config.json and tokenizer.json".into()),
        }
    }
}

/// A picked file's bytes, read in slices of 8 MiB into one buffer, the progress bar
/// following (a multi-hundred-MB file takes seconds).
async fn read_file(
    ui: Ui,
    file: &web_sys::File,
    progress: bool,
) -> Result<js_sys::ArrayBuffer, String> {
    const SLICE: f64 = (8 << 20) as f64;
    let len = file.size();
    let out = js_sys::Uint8Array::new_with_length(len as u32);
    let mut at = 0.0;
    while at < len {
        let end = (at + SLICE).min(len);
        let part = file
            .slice_with_f64_and_f64(at, end)
            .map_err(|_| format!("{} could not be read", file.name()))?;
        let buf = wasm_bindgen_futures::JsFuture::from(part.array_buffer())
            .await
            .map_err(|_| format!("{} could not be read", file.name()))?;
        out.set(&js_sys::Uint8Array::new(&buf), at as u32);
        at = end;
        if progress {
            ui.model.load.set(LoadState::Loading {
                loaded: at as u64,
                total: Some(len as u64),
            });
        }
    }
    Ok(out.buffer())
}

/// Checks the chosen files from their sizes and what is small in them (a checkpoint's
/// header, a `config.json`) against the memory budget — nothing large is read before —
/// then reads them and hands their bytes to the worker, which validates them before they
/// replace the current model.
fn load_files(ui: Ui, chosen: Chosen) {
    wasm_bindgen_futures::spawn_local(async move {
        let checked = check(ui, &chosen).await;
        let read = match checked {
            Ok(named) => read_all(ui, chosen, named).await,
            Err(e) => Err(e),
        };
        if let Err(m) = read {
            ui.model.load.set(LoadState::Ready);
            ui.shell.error.set(Some(m));
        }
    });
}

/// How much of a GGUF file is read to check it before the rest: its metadata and tensor
/// table (Gemma 3's 262,144-token vocabulary takes about 8 MB of them).
const GGUF_HEAD_BYTES: u64 = 32 << 20;

/// The model's name and its `config.json`'s bytes (a Hugging Face set), once the files'
/// sizes and headers fit the budget.
async fn check(ui: Ui, chosen: &Chosen) -> Result<(String, Option<Vec<u8>>), String> {
    use decoding_engine::{budget::Budget, Model};
    let Chosen {
        model,
        tokenizer,
        config,
    } = chosen;
    // The legacy header is 28 bytes; a version-2 (Q8_0) file's is 256.
    let head_len = decoding_engine::formats::HEAD_BYTES as f64;
    let head = match model.slice_with_f64_and_f64(0.0, head_len) {
        Ok(blob) => wasm_bindgen_futures::JsFuture::from(blob.array_buffer()).await,
        Err(e) => Err(e),
    };
    let Ok(head) = head else {
        return Err(format!("{} could not be read", model.name()));
    };
    let head = js_sys::Uint8Array::new(&head).to_vec();
    let m_len = model.size() as u64;
    let t_len = tokenizer.as_ref().map_or(0, |t| t.size() as u64);
    let budget = Budget::default();
    let name = model
        .name()
        .trim_end_matches(".bin")
        .trim_end_matches(".gguf")
        .trim_end_matches(".safetensors")
        .to_string();
    let gguf = decoding_engine::formats::gguf::Gguf::is_gguf(&head);
    let checked = match (config, tokenizer, gguf) {
        (Some(c), Some(_), _) => {
            return check_hf(ui, c, m_len, t_len).await.map(|(n, c)| (n.unwrap_or(name), Some(c)))
        }
        (None, None, true) => {
            // Its first megabytes hold the shape, the tensor table and the vocabulary: the
            // memory it will take is checked before the rest is read.
            let n = m_len.min(GGUF_HEAD_BYTES) as f64;
            let head = match model.slice_with_f64_and_f64(0.0, n) {
                Ok(blob) => wasm_bindgen_futures::JsFuture::from(blob.array_buffer()).await,
                Err(e) => Err(e),
            };
            let Ok(head) = head else {
                return Err(format!("{} could not be read", model.name()));
            };
            Model::check_gguf_head(&js_sys::Uint8Array::new(&head).to_vec(), m_len, budget)
        }
        (None, Some(_), true) => Err(decoding_engine::formats::gguf::GgufError::TokenizerGiven.into()),
        (None, Some(_), false) => Model::check_files(&head, m_len, t_len, budget).map(|_| ()),
        // Named like a GGUF file but without its magic: say what it is not.
        (None, None, false) if model.name().to_ascii_lowercase().ends_with(".gguf") => {
            return Err(format!(
                "{} is not a GGUF file: it does not start with GGUF's magic bytes \"GGUF\" (it starts with {:?})",
                model.name(),
                String::from_utf8_lossy(&head[..head.len().min(4)])
            ))
        }
        _ => {
            return Err(format!(
                "{} is a llama2.c checkpoint: choose its tokenizer too",
                model.name()
            ))
        }
    };
    checked.map(|_| (name, None)).map_err(|e| e.to_string())
}

/// A Hugging Face set's `config.json` (small: read and checked, its shape against the
/// budget, before the weights are): the model's name if it gives one, and its bytes.
async fn check_hf(
    ui: Ui,
    config: &web_sys::File,
    m_len: u64,
    t_len: u64,
) -> Result<(Option<String>, Vec<u8>), String> {
    use decoding_engine::{budget::Budget, formats::hf, Model};
    if config.size() as u64 > hf::MAX_CONFIG_BYTES as u64 {
        return Err(hf::HfError::ConfigTooLarge {
            bytes: config.size() as u64,
            limit: hf::MAX_CONFIG_BYTES,
        }
        .to_string());
    }
    let buf = read_file(ui, config, false).await?;
    let bytes = js_sys::Uint8Array::new(&buf).to_vec();
    let hf = hf::HfConfig::parse(&bytes)
        .map_err(decoding_engine::ModelError::from)
        .and_then(|hf| {
            Model::check_files_hf(&hf.config, m_len, t_len, Budget::default()).map(|_| hf)
        })
        .map_err(|e| e.to_string())?;
    Ok((hf.name, bytes))
}

/// Reads the checked files and moves their bytes to the worker (transferred, not copied:
/// the page keeps no second copy of the file).
async fn read_all(
    ui: Ui,
    chosen: Chosen,
    (name, config): (String, Option<Vec<u8>>),
) -> Result<(), String> {
    let tokenizer = match &chosen.tokenizer {
        Some(t) => read_file(ui, t, false).await?,
        None => js_sys::ArrayBuffer::new(0),
    };
    let model = read_file(ui, &chosen.model, true).await?;
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"name".into(), &name.into());
    let _ = js_sys::Reflect::set(&msg, &"model".into(), &model);
    let _ = js_sys::Reflect::set(&msg, &"tokenizer".into(), &tokenizer);
    let moved = js_sys::Array::of2(&model, &tokenizer);
    if let Some(c) = config {
        let c = js_sys::Uint8Array::from(&c[..]).buffer();
        let _ = js_sys::Reflect::set(&msg, &"config".into(), &c);
        moved.push(&c);
    }
    ui.gen.running.set(false);
    ui.link.with_value(|w| {
        if let Err(e) = w.post_message_with_transfer(&msg, &moved) {
            web_sys::console::error_2(&"postMessage failed".into(), &e);
        }
    });
    Ok(())
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
        if all.is_empty() {
            return ui.shell.error.set(Some("choose a model file first".into()));
        }
        match Chosen::sort(all) {
            Ok(c) => {
                load_files(ui, c);
                open.set(false);
            }
            Err(e) => ui.shell.error.set(Some(e)),
        }
    };
    let drop = window_event_listener(leptos::ev::drop, move |ev: leptos::ev::DragEvent| {
        let Some(files) = ev.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        if files.length() == 0 {
            return;
        }
        ev.prevent_default();
        let all: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
        match Chosen::sort(all) {
            Ok(c) => load_files(ui, c),
            Err(e) => ui.shell.error.set(Some(e)),
        }
    });
    let over = window_event_listener(leptos::ev::dragover, |ev: leptos::ev::DragEvent| {
        if ev
            .data_transfer()
            .is_some_and(|d| d.types().includes(&"Files".into(), 0))
        {
            ev.prevent_default();
        }
    });
    std::mem::forget((drop, over));
    view! {
        <button class="ghost" data-testid="load-model" aria-expanded=move || open.get().to_string()
            on:click=move |_| open.update(|o| *o = !*o)>"Load a model…"</button>
        {move || open.get().then(|| view! {
            <div class="picker" data-testid="model-picker">
                <label data-tagged>"Model (GGUF, llama2.c .bin, or model.safetensors) " <Tag of="model-file" />
                    <input type="file" data-testid="model-file" accept=".gguf,.bin,.safetensors"
                        on:change=move |ev| model.set_value(picked(&ev)) /></label>
                <label data-tagged>"Tokenizer (tokenizer.json or llama2.c's tokenizer.bin, for either) " <Tag of="tokenizer-file" />
                    <input type="file" data-testid="tokenizer-file" accept=".bin,.json"
                        on:change=move |ev| tok.set_value(picked(&ev)) /></label>
                <label data-tagged>"Config (for safetensors: config.json) " <Tag of="config-file" />
                    <input type="file" data-testid="config-file" accept=".json"
                        on:change=move |ev| config.set_value(picked(&ev)) /></label>
                <button data-testid="load-files" on:click=move |_| go()>"Load"</button>
                <span class="small">" or drop the file(s) on the page"</span>
            </div>
        })}
    }
}
