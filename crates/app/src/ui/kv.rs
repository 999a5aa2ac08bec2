//! The KV cache (lesson 10, section 4): a layer × position view of K and V filling as tokens
//! are processed, which query heads share each K/V head (GQA), bytes used and allocated next
//! to bytes = 2 × n × N_layers × d_kv × bytes/elem with the numbers substituted, and a
//! calculator with real models' shapes showing MHA / GQA / MQA side by side.

use super::export;
use super::panel::PanelShell;
use super::state::Ui;
use super::taxonomy::Tag;
use super::views::inside::InsideViews;
use super::views::kv::KvViews;
use super::views::numbers::{bytes as size, int, num};
use decoding_engine::forward::kv_cache::cache_bytes_formula as kv_bytes;
use decoding_page::page::{mha_gqa_mqa, weights_and_kv, Panel, Preset, PRESETS};
use decoding_page::protocol::*;
use leptos::prelude::*;

#[component]
pub fn KvPanel(views: KvViews, inside: InsideViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    view! {
        <PanelShell panel=Panel::Kv
            export=move || export::buttons("kv", "the KV cache", move || {
                let n = ui.gen.transcript.with_untracked(|t| t.as_ref().map(|t| t.cache_len));
                ui.model.info.with_untracked(|i| i.as_ref().zip(n).map(|(i, n)| decoding_page::export::kv(&i.config, n, ui.lang())))
            })>
            <Cache /> <super::inside::Inside views=inside /> <Compare views /> <Calculator />
        </PanelShell>
    }
}

#[component]
fn Cache() -> impl IntoView {
    let ui = expect_context::<Ui>();
    move || {
        // Read in place: cloning the model info (every token's piece) and the transcript on
        // each step was a visible cost of a step on a 32,000-token vocabulary (BENCHMARKS.md,
        // "Figures behind the code").
        let c = ui.model.info.with(|i| i.as_ref().map(|i| i.config));
        let t = ui.gen.transcript.with(|t| {
            t.as_ref()
                .map(|t| (t.cache_len, t.prompt.len(), t.steps.len(), t.cache))
        });
        let (Some(c), Some((cache_len, prompt_len, steps_len, cache))) = (c, t) else {
            return view! { <p>{ui.t("kv-waiting-model")}</p> }.into_any();
        };
        let (layers, seq, kv_dim) = (c.n_layers as u64, c.seq_len as u64, c.kv_dim() as u64);
        let n = cache_len as u64;
        let per_token = kv_bytes(1, layers, kv_dim, 4);
        let used = kv_bytes(n, layers, kv_dim, 4);
        let allocated = kv_bytes(seq, layers, kv_dim, 4);
        let mha = kv_bytes(seq, layers, c.dim as u64, 4);
        let kv_mul = c.kv_mul();
        let sharing: Vec<String> = (0..c.n_kv_heads)
            .map(|h| {
                let q: Vec<String> = (h * kv_mul..(h + 1) * kv_mul)
                    .map(|q| int(ui, q as u64))
                    .collect();
                ui.tf(
                    "kv-sharing",
                    &[("kv", int(ui, h as u64)), ("queries", q.join(", "))],
                )
            })
            .collect();
        view! {
            <p class="small"><Tag of="kv-grid" />" "{ui.t("kv-grid-caption")}</p>
            {export::figure(&decoding_page::export::kv_grid(&c, cache_len, ui.lang()).on_page("kv-grid"))}
            <p data-testid="kv-positions">{
                let (p, g) = (prompt_len, steps_len);
                let waiting = (p + g) as u64 - n;
                let args = [
                    ("n", int(ui, n)),
                    ("seq", int(ui, seq)),
                    ("prompt", int(ui, p as u64)),
                    ("cached", int(ui, g as u64 - waiting)),
                    ("generated", int(ui, g as u64)),
                ];
                if waiting > 0 {
                    ui.tf("kv-positions-waiting", &args)
                } else {
                    ui.tf("kv-positions", &args)
                }
            }</p>
            <p>{ui.tf("kv-gqa", &[
                ("heads", int(ui, c.n_heads as u64)),
                ("kv", int(ui, c.n_kv_heads as u64)),
                ("ratio", int(ui, kv_mul as u64)),
            ])}" "<span class="small">{sharing.join("; ")}</span></p>
            <table class="formula">
                <caption>{ui.t("kv-formula-caption")}</caption>
                <tbody>
                    <tr><th>{ui.t("kv-per-token")}</th><td>{format!("2 × 1 × {} × {} × 4 = ", int(ui, layers), int(ui, kv_dim))}
                        <strong data-testid="kv-per-token">{byte_count(ui, per_token)}</strong></td></tr>
                    <tr><th>{ui.t("kv-used")}</th><td>{format!("2 × {} × {} × {} × 4 = ", int(ui, n), int(ui, layers), int(ui, kv_dim))}
                        <strong data-testid="kv-used">{byte_count(ui, used)}</strong>
                        {format!(" {}", ui.tf("kv-engine", &[("bytes", ui.int(cache.used))]))}</td></tr>
                    <tr><th>{ui.t("kv-allocated")}</th><td>{format!("2 × {} × {} × {} × 4 = ", int(ui, seq), int(ui, layers), int(ui, kv_dim))}
                        <strong data-testid="kv-allocated">{byte_count(ui, allocated)}</strong>
                        {format!(" {}", ui.tf("kv-engine", &[("bytes", ui.int(cache.allocated))]))}</td></tr>
                    <tr><th>{ui.t("kv-without-gqa")}</th><td>{format!("2 × {} × {} × {} × 4 = {}", int(ui, seq), int(ui, layers), int(ui, c.dim as u64), byte_count(ui, mha))}</td></tr>
                    {ui.model.precision.get().map(|(p, w)| view! {
                        <tr><th>{ui.tf("kv-weights-row", &[("precision", p.to_string())])}</th><td data-testid="kv-weights">
                            {ui.tf("kv-weights", &[("weights", ui.int(w)), ("total", ui.int(w + allocated))])}" "
                            <span class="small">{if p == decoding_engine::Precision::F32 {
                                ui.t("kv-cache-f32")
                            } else {
                                ui.t("kv-cache-quantized")
                            }}</span>
                        </td></tr>
                    })}
                </tbody>
            </table>
        }
        .into_any()
    }
}

/// A count of bytes in full ("1,280 bytes").
fn byte_count(ui: Ui, n: u64) -> String {
    ui.tf("panel-bytes", &[("n", ui.int(n))])
}

/// Decoding with the cache against re-running the prefix, measured on this backend.
#[component]
fn Compare(views: KvViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let run = move |_| {
        views.compare.set(None);
        ui.send(
            &KvRequest::CacheCompare {
                positions: vec![16, 32, 64, 128, 256, 512],
            }
            .into(),
        );
    };
    view! {
        <div data-testid="cache-compare-section">
        <h3>{move || ui.t("kv-compare-heading")} " " <Tag of="cache-compare" /></h3>
        <p class="hint">{move || ui.t("kv-compare-hint")}</p>
        <button data-testid="cache-compare" on:click=run>{move || ui.t("kv-measure")}</button>
        {move || views.compare.get().map(|(rows, bandwidth)| {
            let modelled = bandwidth.is_some();
            let body = rows.iter().map(|r| view! {
                <tr>
                    <td>{int(ui, r.n as u64)}</td>
                    <td>{num(ui, r.cached_ms, 3)}</td>
                    <td>{num(ui, r.naive_ms, 3)}</td>
                    <td>{format!("{}×", num(ui, r.naive_ms / r.cached_ms.max(1e-3), 1))}</td>
                    <td>{ui.int(r.cached_macs)}</td>
                    <td>{ui.int(r.naive_macs)}</td>
                    {r.model.map(|(read, ms)| view! {
                        <td data-testid="kv-model-read">{ui.int(read)}</td>
                        <td data-testid="kv-model-ms">{num(ui, ms, 3)}</td>
                        <td data-testid="kv-over-model">{format!("{}×", num(ui, r.cached_ms / ms.max(1e-9), 2))}</td>
                    })}
                </tr>
            }).collect_view();
            view! {
                <div class="scroll-x" tabindex="0" role="region" aria-label=ui.t("kv-compare-region")>
                <table class="calc" data-testid="cache-compare-table">
                    <thead><tr>
                        <th>"n"</th><th>{ui.t("kv-col-cached-ms")}</th><th>{ui.t("kv-col-naive-ms")}</th><th>{ui.t("kv-col-ratio")}</th>
                        <th>{ui.t("kv-col-cached-macs")}</th><th>{ui.t("kv-col-naive-macs")}</th>
                        {modelled.then(|| view! {
                            <th>{ui.t("kv-col-read")}</th><th>{ui.t("kv-col-model-ms")}</th><th>{ui.t("kv-col-over-model")}</th>
                        })}
                    </tr></thead>
                    <tbody>{body}</tbody>
                </table>
                </div>
                <p class="small" data-testid="kv-bandwidth">{match bandwidth {
                    Some(b) => ui.tf("kv-bandwidth", &[("gbs", num(ui, b / 1e9, 1))]),
                    None => ui.t("kv-bandwidth-gpu"),
                }}</p>
            }
        })}
        {move || (views.compare.with(Option::is_none) && views.pending()).then(|| view! {
            <p class="waiting" data-testid="compare-waiting">{ui.t("kv-measuring")}</p>
        })}
        </div>
    }
}

/// The calculator's context length and batch size from their text, or what is wrong with it.
fn calc_inputs(ui: Ui, positions: &str, batch: &str) -> Result<(u64, u64), String> {
    let b = match batch.trim().parse::<u64>() {
        Ok(b) if (1..=4096).contains(&b) => b,
        _ => {
            return Err(ui.tf(
                "kv-calc-bad-batch",
                &[("text", format!("{batch:?}")), ("most", ui.int(4096))],
            ))
        }
    };
    match positions.trim().parse::<u64>() {
        Ok(n) if (1..=10_000_000).contains(&n) => Ok((n, b)),
        _ => Err(ui.tf(
            "kv-calc-bad-positions",
            &[
                ("text", format!("{positions:?}")),
                ("most", ui.int(10_000_000)),
            ],
        )),
    }
}

/// Sets the calculator's element size (the link's `kv_bytes`).
fn set_kv_bytes(ui: Ui, b: u64) {
    ui.shell.page.update(|p| p.kv_bytes = b as u8);
}

/// A change of the page's precision sets the element size: an 8-bit model's cache in 8
/// bits (as llama.cpp's --cache-type-k/v q8_0 stores it), float32's in 4. The precision
/// the model loads with leaves the link's choice alone.
fn follow_precision(ui: Ui) {
    let seen = StoredValue::new(None::<decoding_engine::Precision>);
    Effect::new(move |_| {
        if let Some((p, _)) = ui.model.precision.get() {
            let before = seen.get_value();
            seen.set_value(Some(p));
            if before.is_some_and(|b| b != p) {
                set_kv_bytes(
                    ui,
                    match p {
                        decoding_engine::Precision::F32 => 4,
                        _ => 1,
                    },
                );
            }
        }
    });
}

#[component]
fn Calculator() -> impl IntoView {
    let ui = expect_context::<Ui>();
    // Llama-2-7B. Index PRESETS.len(): the model this page has loaded (a dropped SmolLM2,
    // say), its shape from its config.
    let preset = RwSignal::new(2usize);
    let loaded = move || {
        ui.model.info.with(|i| {
            i.as_ref()
                .map(|i| (i.name.clone(), Preset::of_config(&i.config, i.params)))
        })
    };
    let chosen = move || match PRESETS.get(preset.get()) {
        Some(p) => (p.name.to_string(), *p),
        None => loaded().unwrap_or((PRESETS[2].name.to_string(), PRESETS[2])),
    };
    let positions = RwSignal::new("4096".to_string());
    // The element size is part of the view (the link's `kv_bytes`, fp16 by default, as
    // real models are served): a lesson caption quoting the calculator reads the same.
    let bytes = Signal::derive(move || ui.shell.page.with(|p| p.kv_bytes) as u64);
    let batch = RwSignal::new("1".to_string());
    follow_precision(ui);
    view! {
        <div data-testid="calculator">
        <h3>{move || ui.t("kv-calc-heading")}</h3>
        <div class="knob-row">
            <label data-tagged>{move || ui.t("kv-calc-model")} " " <Tag of="calc-model" />
                <select data-testid="calc-model" on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse::<usize>() { preset.set(i.min(PRESETS.len())); }
                } prop:value=move || preset.get().to_string()>
                    {PRESETS.iter().enumerate().map(|(i, p)| view! {
                        <option value=i.to_string()>{format!("{} ({})", p.name, p.kind)}</option>
                    }).collect_view()}
                    {move || loaded().map(|(name, p)| view! {
                        <option value=PRESETS.len().to_string() data-testid="calc-loaded">{ui.tf("kv-calc-loaded", &[("name", name), ("kind", p.kind.to_string())])}</option>
                    })}
                </select>
            </label>
            <label data-tagged>{move || ui.t("kv-calc-positions")} " " <Tag of="calc-positions" />
                <input type="text" class="num" data-testid="calc-positions" prop:value=move || positions.get()
                    on:input=move |ev| positions.set(event_target_value(&ev)) />
            </label>
            <label data-tagged>{move || ui.t("kv-calc-batch")} " " <Tag of="calc-batch" />
                <input type="text" class="num" data-testid="calc-batch" prop:value=move || batch.get()
                    on:input=move |ev| batch.set(event_target_value(&ev)) />
            </label>
            <label data-tagged>{move || ui.t("kv-calc-precision")} " " <Tag of="calc-bytes" />
                <select data-testid="calc-bytes" prop:value=move || bytes.get().to_string()
                    on:change=move |ev| set_kv_bytes(ui, event_target_value(&ev).parse().unwrap_or(2))>
                    <option value="4">{move || ui.t("kv-calc-f32")}</option>
                    <option value="2">{move || ui.t("kv-calc-f16")}</option>
                    <option value="1">{move || ui.t("kv-calc-int8")}</option>
                </select>
            </label>
        </div>
        {move || {
            let (name, p) = chosen();
            match calc_inputs(ui, &positions.get(), &batch.get()) {
                Err(e) => view! { <p class="field-error" role="alert" data-testid="calc-error">{e}</p> }.into_any(),
                Ok((n, b)) => calc_result(ui, &name, p, (n, b), bytes.get()).into_any(),
            }
        }}
        </div>
    }
}

/// The calculator's figures for model `p` at context length `n`, batch `b`, `bytes` an
/// element: its cache against MHA's and MQA's, and against its weights.
fn calc_result(ui: Ui, name: &str, p: Preset, (n, b): (u64, u64), bytes: u64) -> impl IntoView {
    let (mha, gqa, mqa) = mha_gqa_mqa(&p, n, bytes);
    let d_kv = p.n_kv_heads * p.head_dim;
    let (weights, kv, cross) = weights_and_kv(&p, n, bytes, b);
    let share = 100.0 * kv as f64 / (kv + weights) as f64;
    let bar = |v: u64| format!("{:.1}%", 100.0 * v as f64 / kv.max(weights) as f64);
    let formula = ui.tf(
        "kv-calc-formula",
        &[
            ("name", name.to_string()),
            ("n", ui.int(n)),
            ("layers", int(ui, p.layers)),
            ("d_kv", int(ui, d_kv)),
            ("kv_heads", int(ui, p.n_kv_heads)),
            ("head_dim", int(ui, p.head_dim)),
            ("bytes", int(ui, bytes)),
            ("total", ui.int(gqa)),
        ],
    );
    let crossover = ui.tf(
        "kv-calc-crossover",
        &[
            ("share", num(ui, share, 0)),
            ("batch", int(ui, b)),
            ("n", ui.int(cross)),
            ("params", ui.int(p.params)),
        ],
    );
    let mha_text = if p.n_kv_heads == p.n_heads {
        ui.t("kv-calc-mha-this")
    } else {
        ui.t("kv-calc-mha")
    };
    let mqa_text = if p.n_kv_heads == 1 {
        ui.t("kv-calc-mqa-this")
    } else {
        ui.t("kv-calc-mqa")
    };
    view! {
        <p data-testid="calc-formula">{format!("{formula} ")}<strong data-testid="calc-gqa">{size(ui, gqa)}</strong></p>
        <table class="calc">
            <thead><tr><th>{ui.t("kv-calc-sharing")}</th><th>{ui.t("kv-calc-kv-heads")}</th><th>{ui.t("kv-calc-cache")}</th></tr></thead>
            <tbody>
                // An MHA or MQA model is itself one of the reference rows: it is
                // marked there instead of being listed twice.
                <tr class:this=p.n_kv_heads == p.n_heads><td>{mha_text}</td><td>{int(ui, p.n_heads)}</td><td data-testid="calc-mha">{size(ui, mha)}</td></tr>
                {(p.n_kv_heads != p.n_heads && p.n_kv_heads != 1).then(|| view! {
                    <tr class="this"><td>{ui.tf("kv-calc-this-model", &[("kind", p.kind.to_string())])}</td><td>{int(ui, p.n_kv_heads)}</td><td>{size(ui, gqa)}</td></tr>
                })}
                <tr class:this=p.n_kv_heads == 1><td>{mqa_text}</td><td>"1"</td><td data-testid="calc-mqa">{size(ui, mqa)}</td></tr>
            </tbody>
        </table>
        <h4>{ui.t("kv-calc-weights-heading")}</h4>
        <div class="wkv">
            <div class="wkv-row"><span>{ui.tf("kv-calc-weights", &[("params", ui.int(p.params)), ("bytes", int(ui, bytes))])}</span>
                <span class="wkv-bar"><span class="wkv-w" style:width=bar(weights)></span></span>
                <strong data-testid="calc-weights">{size(ui, weights)}</strong></div>
            <div class="wkv-row"><span>{ui.tf("kv-calc-cache-batch", &[("batch", int(ui, b))])}</span>
                <span class="wkv-bar"><span class="wkv-kv" style:width=bar(kv)></span></span>
                <strong data-testid="calc-kv-batch">{size(ui, kv)}</strong></div>
        </div>
        <p data-testid="calc-crossover">{crossover}</p>
    }
}
