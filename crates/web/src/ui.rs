//! The page's UI (Leptos, client-side rendered). Thin components over plain state; the engine
//! runs in the web worker, reached only through [`protocol`](crate::protocol) messages.

use crate::protocol::{Event, Request, TokenRow};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::MessageEvent;

const MODEL_URL: &str = "models/stories260K/stories260K.bin";
const TOKENIZER_URL: &str = "models/stories260K/tok512.bin";
const DEFAULT_PROMPT: &str = "Once upon a time";

/// The page's connection to the engine worker.
#[derive(Clone)]
struct EngineLink {
    worker: StoredValue<web_sys::Worker, LocalStorage>,
}

impl EngineLink {
    fn send(&self, req: &Request) {
        self.worker
            .with_value(|w| match serde_wasm_bindgen::to_value(req) {
                Ok(v) => {
                    if let Err(e) = w.post_message(&v) {
                        web_sys::console::error_2(&"postMessage failed".into(), &e);
                    }
                }
                Err(e) => web_sys::console::error_1(&format!("cannot encode request: {e}").into()),
            });
    }
}

/// What the page knows about loading.
#[derive(Clone, Debug, PartialEq)]
enum LoadState {
    Loading {
        loaded: u64,
        total: Option<u64>,
    },
    Ready {
        backend: String,
        reason: String,
        summary: String,
    },
}

#[component]
fn App() -> impl IntoView {
    let (load, set_load) = signal(LoadState::Loading {
        loaded: 0,
        total: None,
    });
    let (rows, set_rows) = signal(Vec::<TokenRow>::new());
    let (error, set_error) = signal(None::<String>);
    let (prompt, set_prompt) = signal(DEFAULT_PROMPT.to_string());
    let (timing, set_timing) = signal(None::<f64>);

    let worker = match web_sys::Worker::new("./worker_loader.js") {
        Ok(w) => w,
        Err(e) => {
            let msg = format!("cannot start the engine worker: {e:?}");
            return view! { <p class="error" role="alert">{msg}</p> }.into_any();
        }
    };
    let link = EngineLink {
        worker: StoredValue::new_local(worker.clone()),
    };

    let on_event = {
        let link = link.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            match serde_wasm_bindgen::from_value::<Event>(e.data()) {
                Ok(Event::Ready) => link.send(&Request::Load {
                    model_url: MODEL_URL.into(),
                    tokenizer_url: TOKENIZER_URL.into(),
                }),
                Ok(Event::Progress { loaded, total, .. }) => {
                    set_load.set(LoadState::Loading { loaded, total })
                }
                Ok(Event::Loaded {
                    config,
                    params,
                    backend,
                    backend_reason,
                }) => {
                    set_load.set(LoadState::Ready {
                        backend: backend.to_string().to_uppercase(),
                        reason: backend_reason,
                        summary: format!(
                            "stories260K: {params} parameters, {} layers, dim {}, {} heads ({} K/V), vocab {}, context {}",
                            config.n_layers, config.dim, config.n_heads, config.n_kv_heads, config.vocab_size, config.seq_len
                        ),
                    });
                    link.send(&Request::Next {
                        prompt: prompt.get_untracked(),
                        top: 10,
                    });
                }
                Ok(Event::Next { rows, millis, .. }) => {
                    set_error.set(None);
                    set_rows.set(rows);
                    set_timing.set(Some(millis));
                }
                Ok(Event::Error { message }) => set_error.set(Some(message)),
                Err(err) => {
                    set_error.set(Some(format!("unreadable message from the engine: {err}")))
                }
            }
        })
    };
    worker.set_onmessage(Some(on_event.as_ref().unchecked_ref()));
    on_event.forget();

    let on_prompt = {
        let link = link.clone();
        move |ev| {
            let text = event_target_value(&ev);
            set_prompt.set(text.clone());
            if matches!(load.get_untracked(), LoadState::Ready { .. }) {
                link.send(&Request::Next {
                    prompt: text,
                    top: 10,
                });
            }
        }
    };

    view! {
        <main>
            <header>
                <h1>"Decoding Explorer"</h1>
                {move || match load.get() {
                    LoadState::Loading { loaded, total } => {
                        let max = total.unwrap_or(1_056_540 + 6_227) as f64;
                        view! {
                            <label class="loading">
                                "Loading the model… "
                                <progress data-testid="load-progress" max=max value=loaded as f64></progress>
                            </label>
                        }.into_any()
                    }
                    LoadState::Ready { backend, reason, summary } => view! {
                        <span class="badge" data-testid="backend-badge" title=reason.clone()>{backend}</span>
                        <span class="summary">{summary}</span>
                    }.into_any(),
                }}
            </header>
            <label class="prompt">
                "Prompt "
                <input data-testid="prompt" type="text" prop:value=prompt on:input=on_prompt />
            </label>
            {move || error.get().map(|e| view! { <p class="error" role="alert" data-testid="error">{e}</p> })}
            <table data-testid="next-tokens">
                <caption>
                    "Most likely next tokens"
                    {move || timing.get().map(|ms| format!(" (forward pass {ms:.1} ms)"))}
                </caption>
                <thead><tr><th>"#"</th><th>"id"</th><th>"token"</th><th>"probability"</th><th>"log-prob"</th></tr></thead>
                <tbody>
                    <For each=move || rows.get() key=|r| (r.id, r.rank, r.prob.to_bits()) let:r>
                        <tr data-testid="token-row">
                            <td>{r.rank}</td>
                            <td>{r.id}</td>
                            <td class="piece">{format!("{:?}", r.piece)}</td>
                            <td>{format!("{:.4}", r.prob)}</td>
                            <td>{format!("{:.3}", r.logprob)}</td>
                        </tr>
                    </For>
                </tbody>
            </table>
        </main>
    }
    .into_any()
}

pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
