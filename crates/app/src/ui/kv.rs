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
use decoding_engine::forward::kv_cache::cache_bytes_formula as kv_bytes;
use decoding_engine::units::{human_bytes, thousands};
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
                ui.model.info.with_untracked(|i| i.as_ref().zip(n).map(|(i, n)| decoding_page::export::kv(&i.config, n)))
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
            return view! { <p>"Waiting for the model…"</p> }.into_any();
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
                    .map(|q| q.to_string())
                    .collect();
                format!("K/V head {h} ← query heads {}", q.join(", "))
            })
            .collect();
        view! {
            <p class="small"><Tag of="kv-grid" />" the cache: one row per layer, one cell per cached position"</p>
            {export::figure(&decoding_page::export::kv_grid(&c, cache_len).on_page("kv-grid"))}
            <p data-testid="kv-positions">{
                let (p, g) = (prompt_len, steps_len);
                let waiting = (p + g) as u64 - n;
                format!(
                    "{n} of {seq} positions: the prompt's {p} tokens and {} of the {g} generated{}",
                    g as u64 - waiting,
                    if waiting > 0 {
                        " (the newest token enters the cache when the next one is computed: its K and V come from the step that reads it)"
                    } else {
                        ""
                    }
                )
            }</p>
            <p>{format!(
                "Grouped-query attention: {} query heads share {} K/V heads ({}× fewer keys and values than one per head). ",
                c.n_heads, c.n_kv_heads, kv_mul
            )}<span class="small">{sharing.join("; ")}</span></p>
            <table class="formula">
                <caption>"bytes = 2 × n × N_layers × d_kv × bytes/elem (the 2 is K and V; float32 = 4 bytes)"</caption>
                <tbody>
                    <tr><th>"per token"</th><td>{format!("2 × 1 × {layers} × {kv_dim} × 4 = ")}
                        <strong data-testid="kv-per-token">{format!("{} bytes", thousands(per_token))}</strong></td></tr>
                    <tr><th>"used"</th><td>{format!("2 × {n} × {layers} × {kv_dim} × 4 = ")}
                        <strong data-testid="kv-used">{format!("{} bytes", thousands(used))}</strong>
                        {format!(" (engine: {} bytes)", thousands(cache.used))}</td></tr>
                    <tr><th>"allocated"</th><td>{format!("2 × {seq} × {layers} × {kv_dim} × 4 = ")}
                        <strong data-testid="kv-allocated">{format!("{} bytes", thousands(allocated))}</strong>
                        {format!(" (engine: {} bytes)", thousands(cache.allocated))}</td></tr>
                    <tr><th>"without GQA"</th><td>{format!("2 × {seq} × {layers} × {} × 4 = {} bytes", c.dim, thousands(mha))}</td></tr>
                    {ui.model.precision.get().map(|(p, w)| view! {
                        <tr><th>{format!("weights ({p})")}</th><td data-testid="kv-weights">
                            {format!("{} bytes; with the allocated cache {} bytes. ", thousands(w), thousands(w + allocated))}
                            <span class="small">{if p == decoding_engine::Precision::F32 {
                                "The cache is float32 like the weights."
                            } else {
                                "Quantization here changes the weights only: K and V stay float32, so at long contexts the cache, not the weights, dominates (llama.cpp can also store it in 8 bits: --cache-type-k q8_0)."
                            }}</span>
                        </td></tr>
                    })}
                </tbody>
            </table>
        }
        .into_any()
    }
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
        <h3>"With the cache, and without " <Tag of="cache-compare" /></h3>
        <p class="hint">"Each step with the cache computes Q, K, V for the new token only and attends to n cached keys: O(n·d). Without it, the whole prefix runs again: O(n²·d). Here \"without\" re-runs the n-token prefix as one batch on a fresh sequence, its keys and values thrown away after the step."</p>
        <button data-testid="cache-compare" on:click=run>"Measure on this backend"</button>
        {move || views.compare.get().map(|rows| {
            let body = rows.iter().map(|r| view! {
                <tr>
                    <td>{r.n}</td>
                    <td>{format!("{:.3}", r.cached_ms)}</td>
                    <td>{format!("{:.3}", r.naive_ms)}</td>
                    <td>{format!("{:.1}×", r.naive_ms / r.cached_ms.max(1e-3))}</td>
                    <td>{thousands(r.cached_macs)}</td>
                    <td>{thousands(r.naive_macs)}</td>
                </tr>
            }).collect_view();
            view! {
                <table class="calc" data-testid="cache-compare-table">
                    <thead><tr>
                        <th>"n"</th><th>"ms/token, cached"</th><th>"ms/token, no cache"</th><th>"ratio"</th>
                        <th>"multiply-adds, cached"</th><th>"multiply-adds, no cache"</th>
                    </tr></thead>
                    <tbody>{body}</tbody>
                </table>
            }
        })}
        {move || (views.compare.with(Option::is_none) && views.pending()).then(|| view! {
            <p class="waiting" data-testid="compare-waiting">"Measuring on this backend…"</p>
        })}
        </div>
    }
}

/// The calculator's context length and batch size from their text, or what is wrong with it.
fn calc_inputs(positions: &str, batch: &str) -> Result<(u64, u64), String> {
    let b = match batch.trim().parse::<u64>() {
        Ok(b) if (1..=4096).contains(&b) => b,
        _ => return Err(format!("{batch:?} is not a batch size (1 to 4,096)")),
    };
    match positions.trim().parse::<u64>() {
        Ok(n) if (1..=10_000_000).contains(&n) => Ok((n, b)),
        _ => Err(format!(
            "{positions:?} is not a context length (1 to 10,000,000)"
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
        <h3>"Calculator"</h3>
        <div class="knob-row">
            <label data-tagged>"Model " <Tag of="calc-model" />
                <select data-testid="calc-model" on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse::<usize>() { preset.set(i.min(PRESETS.len())); }
                } prop:value=move || preset.get().to_string()>
                    {PRESETS.iter().enumerate().map(|(i, p)| view! {
                        <option value=i.to_string()>{format!("{} ({})", p.name, p.kind)}</option>
                    }).collect_view()}
                    {move || loaded().map(|(name, p)| view! {
                        <option value=PRESETS.len().to_string() data-testid="calc-loaded">{format!("{name} ({}; loaded on this page)", p.kind)}</option>
                    })}
                </select>
            </label>
            <label data-tagged>"Context length n " <Tag of="calc-positions" />
                <input type="text" class="num" data-testid="calc-positions" prop:value=move || positions.get()
                    on:input=move |ev| positions.set(event_target_value(&ev)) />
            </label>
            <label data-tagged>"Batch size B " <Tag of="calc-batch" />
                <input type="text" class="num" data-testid="calc-batch" prop:value=move || batch.get()
                    on:input=move |ev| batch.set(event_target_value(&ev)) />
            </label>
            <label data-tagged>"Precision " <Tag of="calc-bytes" />
                <select data-testid="calc-bytes" prop:value=move || bytes.get().to_string()
                    on:change=move |ev| set_kv_bytes(ui, event_target_value(&ev).parse().unwrap_or(2))>
                    <option value="4">"float32 (4 bytes)"</option>
                    <option value="2">"float16 / bfloat16 (2 bytes)"</option>
                    <option value="1">"int8 (1 byte)"</option>
                </select>
            </label>
        </div>
        {move || {
            let (name, p) = chosen();
            match calc_inputs(&positions.get(), &batch.get()) {
                Err(e) => view! { <p class="field-error" role="alert" data-testid="calc-error">{e}</p> }.into_any(),
                Ok((n, b)) => calc_result(&name, p, n, b, bytes.get()).into_any(),
            }
        }}
        </div>
    }
}

/// The calculator's figures for model `p` at context length `n`, batch `b`, `bytes` an
/// element: its cache against MHA's and MQA's, and against its weights.
fn calc_result(name: &str, p: Preset, n: u64, b: u64, bytes: u64) -> impl IntoView {
    let (mha, gqa, mqa) = mha_gqa_mqa(&p, n, bytes);
    let d_kv = p.n_kv_heads * p.head_dim;
    let (weights, kv, cross) = weights_and_kv(&p, n, bytes, b);
    let share = 100.0 * kv as f64 / (kv + weights) as f64;
    let bar = |v: u64| format!("{:.1}%", 100.0 * v as f64 / kv.max(weights) as f64);
    view! {
        <p data-testid="calc-formula">{format!(
            "{}: 2 × {} × {} layers × {} (d_kv = {} K/V heads × {}) × {} = {} bytes = ",
            name, thousands(n), p.layers, d_kv, p.n_kv_heads, p.head_dim, bytes,
            thousands(gqa)
        )}<strong data-testid="calc-gqa">{human_bytes(gqa)}</strong></p>
        <table class="calc">
            <thead><tr><th>"sharing"</th><th>"K/V heads"</th><th>"cache"</th></tr></thead>
            <tbody>
                // An MHA or MQA model is itself one of the reference rows: it is
                // marked there instead of being listed twice.
                <tr class:this=p.n_kv_heads == p.n_heads><td>{if p.n_kv_heads == p.n_heads { "MHA (one K/V per query head; this model)" } else { "MHA (one K/V per query head)" }}</td><td>{p.n_heads}</td><td data-testid="calc-mha">{human_bytes(mha)}</td></tr>
                {(p.n_kv_heads != p.n_heads && p.n_kv_heads != 1).then(|| view! {
                    <tr class="this"><td>{format!("{} (this model)", p.kind)}</td><td>{p.n_kv_heads}</td><td>{human_bytes(gqa)}</td></tr>
                })}
                <tr class:this=p.n_kv_heads == 1><td>{if p.n_kv_heads == 1 { "MQA (one K/V for all; this model)" } else { "MQA (one K/V for all)" }}</td><td>"1"</td><td data-testid="calc-mqa">{human_bytes(mqa)}</td></tr>
            </tbody>
        </table>
        <h4>"Weights against the cache of a batch"</h4>
        <div class="wkv">
            <div class="wkv-row"><span>{format!("weights ({} parameters × {})", thousands(p.params), bytes)}</span>
                <span class="wkv-bar"><span class="wkv-w" style:width=bar(weights)></span></span>
                <strong data-testid="calc-weights">{human_bytes(weights)}</strong></div>
            <div class="wkv-row"><span>{format!("KV cache × B = {b}")}</span>
                <span class="wkv-bar"><span class="wkv-kv" style:width=bar(kv)></span></span>
                <strong data-testid="calc-kv-batch">{human_bytes(kv)}</strong></div>
        </div>
        <p data-testid="calc-crossover">{format!(
            "The cache is {share:.0} % of weights + cache here. With B = {b} the caches outweigh the weights from n = {} on (B × 2 × n × N_layers × d_kv elements > {} parameters): at long n, and more so with many sequences, the cache dominates inference memory.",
            thousands(cross), thousands(p.params)
        )}</p>
    }
}
