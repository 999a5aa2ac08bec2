//! Batching and the two regimes (lesson 10, sections 4–5): B lanes of the prompt stepping
//! together in one pass of B rows; throughput against B measured live in the worker
//! (prefill flat, decode rising); the roofline with the machine's own peaks (measured in the
//! worker) and, beside it, Llama-2-7B on an H100 at real scale; and a seeded trace served
//! with continuous and static batching, drawn as a timeline with its latencies.

use super::export;
use super::panel::PanelShell;
use super::state::{Sender, Ui};
use super::taxonomy::Tag;
use super::views::batch::BatchViews;
use super::views::numbers::{bytes, flops, int, num};
use decoding_engine::serving::batching::{Policy, SimResult};
use decoding_engine::serving::roofline::{self, Roof, H100_SXM};
use decoding_page::export::{self as ex, Drawing};
use decoding_page::geometry::batching::{self as bg, RoofPoint};
use decoding_page::page::Panel;
use decoding_page::protocol::*;
use decoding_page::verdict::{regime, Regime};
use leptos::prelude::*;

/// The batch sizes the throughput chart measures.
const SWEEP: [u32; 5] = [1, 2, 4, 8, 16];
/// Each sweep run's prompt and decode passes.
const SWEEP_PROMPT: u32 = 32;
const SWEEP_GEN: u32 = 16;
/// Below this the weights sit in the CPU's caches (the machines we run on have 32 MiB of
/// L3 shared by two cores; `docs/REFERENCES.md`: stories260K's 1 MB "sit in cache").
pub(super) const CACHE_BYTES: u64 = 16 << 20;

#[component]
pub fn BatchPanel(views: BatchViews, sender: Sender) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let exports = move || {
        view! {
            {export::buttons("throughput", "throughput and the roofline", move || views.sweep.with_untracked(|v| v.as_ref().map(|v| ex::sweep(v, ui.lang()))))}
            {export::buttons("serving", "the serving timelines", move || views.serve.with_untracked(|v| v.as_ref().map(|v| ex::serve(v, ui.lang()))))}
        }
    };
    view! {
        <PanelShell panel=Panel::Batch export=exports>
            <LanesPart views sender /> <ThroughputPart views sender /> <ServePart views sender />
        </PanelShell>
    }
}

#[component]
fn LanesPart(views: BatchViews, sender: Sender) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let batch = RwSignal::new(4u32);
    let tokens = RwSignal::new(16u32);
    let run = move |n: u32| {
        sender.send(&Request::Batch(BatchRequest::BatchLanes {
            batch: batch.get_untracked(),
            tokens: n,
        }))
    };
    view! {
        <h3>{move || ui.t("batch-lanes-heading")} " " <Tag of="batch-results" /></h3>
        <p class="note">{move || ui.t("batch-lanes-note")}</p>
        <div class="knob-row">
            <label data-tagged>{move || ui.t("batch-size")} " " <Tag of="batch-size" />
                <select data-testid="batch-size" prop:value=move || batch.get().to_string()
                    on:change=move |ev| { if let Ok(b) = event_target_value(&ev).parse() { batch.set(b) } }>
                    {[1u32, 2, 4, 8, 16].into_iter().map(|b| view! { <option value=b.to_string()>{b.to_string()}</option> }).collect_view()}
                </select>
            </label>
            <label data-tagged>{move || ui.t("batch-tokens")} " " <Tag of="batch-tokens" />
                <input type="number" min="1" max="256" class="num" data-testid="batch-tokens" prop:value=move || tokens.get().to_string()
                    on:change=move |ev| {
                        if let Ok(t) = event_target_value(&ev).trim().parse::<u32>() {
                            if (1..=256).contains(&t) { tokens.set(t); }
                        }
                    } />
            </label>
            <button data-testid="batch-run" on:click=move |_| run(tokens.get_untracked())>{move || ui.t("batch-run")}</button>
            <button data-testid="batch-step" on:click=move |_| {
                let have = views.lanes.with_untracked(|l| l.as_ref().map_or(0, |l| l.lanes.iter().map(|x| x.tokens.len()).max().unwrap_or(0)));
                run((have as u32 + 1).min(256));
            }>{move || ui.t("batch-step")}</button>
        </div>
        {move || views.lanes.get().map(|v| lanes_view(ui, &v))}
    }
}

fn lanes_view(ui: Ui, v: &LanesView) -> impl IntoView {
    let rows = v
        .lanes
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let seed = ui.tf(
                "batch-lane-seed",
                &[("lane", int(ui, k as u64)), ("seed", l.seed.to_string())],
            );
            view! {
                <div class="lane" data-testid="lane">
                    <span class="lane-seed">{seed}</span>
                    <span class="lane-prompt">{v.prompt_text.clone()}</span>
                    <span class="lane-text" data-testid="lane-text">{l.text.clone()}</span>
                    {l.stopped.then(|| view! { <span class="badge">{ui.t("batch-stopped")}</span> })}
                </div>
            }
        })
        .collect_view();
    let summary = ui.tf(
        "batch-lanes-summary",
        &[
            ("batch", int(ui, v.batch as u64)),
            ("prompt", int(ui, v.prompt.len() as u64)),
            ("prefill", num(ui, v.prefill_ms, 2)),
            ("passes", int(ui, v.passes as u64)),
            ("pass", num(ui, v.decode_ms_per_pass, 2)),
            ("rate", num(ui, v.tokens_per_s, 0)),
        ],
    );
    view! {
        <div class="lanes" data-testid="lanes">{rows}</div>
        <p data-testid="lanes-summary">{summary}</p>
    }
}

#[component]
fn ThroughputPart(views: BatchViews, sender: Sender) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let measure = move |_| {
        views.sweep.set(None);
        sender.send(&Request::Batch(BatchRequest::BatchSweep {
            batches: SWEEP.to_vec(),
            prompt_tokens: SWEEP_PROMPT,
            gen_tokens: SWEEP_GEN,
            model: SweepModel::Loaded,
        }))
    };
    view! {
        <div data-testid="tp-section">
        <h3>{move || ui.t("batch-tp-heading")} " " <Tag of="batch-results" /></h3>
        <p class="note">{move || {
            // The sizes of the sweep on show (a lesson step measures its own).
            let (pp, tg) = views.sweep.with(|v| {
                v.as_ref()
                    .and_then(|v| v.rows.first())
                    .map_or((SWEEP_PROMPT as usize, SWEEP_GEN as usize), |r| (r.prompt_tokens, r.gen_tokens))
            });
            ui.tf("batch-tp-note", &[("prompt", int(ui, pp as u64)), ("gen", int(ui, tg as u64))])
        }}</p>
        <button data-testid="batch-measure" on:click=measure>{move || ui.t("batch-measure")}</button>
        {move || (views.sweep.with(Option::is_none) && views.pending("sweep")).then(|| view! {
            <p class="waiting" data-testid="sweep-waiting">{ui.t("batch-measuring")}</p>
        })}
        {move || views.sweep.get().map(|v| view! { {throughput_chart(ui, &v)} {machine_roofline(ui, &v)} })}
        </div>
        <GpuSplitPart views sender />
        <RealScale />
    }
}

#[component]
fn GpuSplitPart(views: BatchViews, sender: Sender) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let measure = move |_| {
        views.gpu_split.set(None);
        sender.send(&Request::Batch(BatchRequest::GpuSplit))
    };
    view! {
        <div data-testid="gpu-split">
        <h4>{move || ui.t("batch-split-heading")}</h4>
        <p class="note">{move || ui.t("batch-split-note")}</p>
        <button data-testid="gpu-split-measure" on:click=measure>{move || ui.t("batch-split-measure")}</button>
        {move || (views.gpu_split.with(Option::is_none) && views.pending("gpu-split")).then(|| view! {
            <p class="waiting" data-testid="gpu-split-waiting">{ui.t("batch-split-waiting")}</p>
        })}
        {move || views.gpu_split.get().map(|v| gpu_split(ui, v))}
        </div>
    }
}

/// Why the sweep shows the gain it does: the weights in the CPU's caches or not, a clear
/// gain or not.
fn sweep_why(ui: Ui, v: &SweepView, gain: f64, clear: bool) -> String {
    let in_cache = v.weight_bytes < CACHE_BYTES;
    let args = [
        ("gain", num(ui, gain, 1)),
        ("bytes", bytes(ui, v.weight_bytes)),
        ("backend", v.backend.clone()),
    ];
    match (clear, in_cache) {
        (false, true) => ui.tf("batch-why-little-cached", &args),
        (false, false) => ui.tf("batch-why-little", &args),
        (true, true) => ui.tf("batch-why-gain-cached", &args),
        (true, false) => ui.tf("batch-why-gain", &args),
    }
}

fn throughput_chart(ui: Ui, v: &SweepView) -> impl IntoView {
    let first = v.rows.first().map_or(1.0, |r| r.decode_tokens_per_s);
    let last = v.rows.last();
    // The same judgement as the lesson track's caption (`verdict`): a gain counts with a
    // 1.3× ratio and every run of the largest B above every run of B = 1.
    let (gain, clear) = decoding_page::verdict::batching_gain(v).unwrap_or((1.0, false));
    let why = sweep_why(ui, v, gain, clear);
    let on = match v.model {
        SweepModel::Loaded => String::new(),
        SweepModel::Random15M => format!(
            "{} ",
            ui.tf(
                "batch-measured-on",
                &[
                    ("model", ui.t("batch-model-15m")),
                    ("bytes", bytes(ui, v.weight_bytes))
                ]
            )
        ),
    };
    let summary = ui.tf(
        "batch-tp-summary",
        &[
            ("first", num(ui, first, 0)),
            (
                "last",
                num(ui, last.map_or(0.0, |r| r.decode_tokens_per_s), 0),
            ),
            ("batch", int(ui, last.map_or(1, |r| r.batch) as u64)),
            ("gain", num(ui, gain, 1)),
            ("backend", v.backend.clone()),
            (
                "prefill_first",
                num(
                    ui,
                    v.rows.first().map_or(0.0, |r| r.prefill_tokens_per_s),
                    0,
                ),
            ),
            (
                "prefill_last",
                num(ui, last.map_or(0.0, |r| r.prefill_tokens_per_s), 0),
            ),
        ],
    );
    let range = move |m: f64, (lo, hi): (f64, f64)| {
        format!("{} ({}–{})", num(ui, m, 0), num(ui, lo, 0), num(ui, hi, 0))
    };
    view! {
        {export::figure(&ex::throughput(v, ui.lang()).on_page("tp-chart"))}
        <table class="calc" data-testid="tp-table">
            <thead><tr><th>"B"</th><th>{ui.t("batch-col-runs")}</th><th>{ui.t("batch-col-prefill")}</th><th>{ui.t("batch-col-decode")}</th></tr></thead>
            <tbody>{v.rows.iter().zip(&v.spread).map(|(r, sp)| view! {
                <tr>
                    <td>{int(ui, r.batch as u64)}</td>
                    <td>{int(ui, sp.reps as u64)}</td>
                    <td>{range(r.prefill_tokens_per_s, sp.prefill)}</td>
                    <td>{range(r.decode_tokens_per_s, sp.decode)}</td>
                </tr>
            }).collect_view()}</tbody>
        </table>
        <p data-testid="tp-summary">{format!("{on}{summary}")}</p>
        <p class="note" data-testid="tp-why">{why}</p>
    }
}

/// A roofline figure and, where a measured point lies above its measured roof, why the roof
/// is not drawn.
fn roofline_figure(ui: Ui, d: Drawing, roof: Roof, points: &[RoofPoint]) -> impl IntoView {
    let name = d.root.testid.clone();
    let holds = points
        .iter()
        .all(|p| roofline::under(&roof, p.intensity, p.flops));
    view! {
        {export::figure(&d)}
        {(!holds).then(|| view! {
            <p class="warning" data-testid=format!("{name}-under-measured")>{ui.t("batch-under-measured")}</p>
        })}
    }
}

fn machine_roofline(ui: Ui, v: &SweepView) -> impl IntoView {
    let roof = v.peaks.roof;
    let points = bg::machine_points(&v.rows);
    let d1 = v.rows.first().map_or(0.0, |r| r.decode.intensity());
    let side = if d1 < roof.ridge() {
        ui.t("batch-below")
    } else {
        ui.t("batch-above")
    };
    let peaks = ui.tf(
        "batch-peaks",
        &[
            ("threads", int(ui, v.peaks.threads as u64)),
            ("bandwidth", num(ui, roof.bytes_per_s / 1e9, 1)),
            ("buffer", bytes(ui, v.peaks.buffer_bytes)),
            ("flops", flops(ui, roof.flops)),
            ("ridge", num(ui, roof.ridge(), 1)),
            ("intensity", num(ui, d1, 2)),
            ("side", side),
            (
                "prefill",
                num(ui, v.rows.first().map_or(0.0, |r| r.prefill.intensity()), 0),
            ),
        ],
    );
    view! {
        <h4>{ui.t("batch-machine-heading")}</h4>
        {roofline_figure(ui, ex::machine_roofline(v, ui.lang()).on_page("roofline"), roof, &points)}
        <p data-testid="roof-peaks">{peaks}</p>
    }
}

/// Where a decoded token's time goes on the GPU: the kernels' GPU time (timestamps) and
/// the rest of the step (launches, barriers, the read-back), with the regime it puts this
/// machine in.
fn gpu_split(ui: Ui, v: GpuSplitView) -> impl IntoView {
    let Some(s) = v.split else {
        let why = ui.engine(&v.note.unwrap_or_default());
        return view! {
            <p class="note" data-testid="gpu-split-none">{ui.tf("batch-split-none", &[("why", why)])}</p>
        }
        .into_any();
    };
    let ms = |x: f64| format!("{} ms", num(ui, x * 1e3, 3));
    let pct = |x: f64| num(ui, 100.0 * x / s.wall_s.max(f64::MIN_POSITIVE), 0);
    let per_token = v.tokens.max(1) as f64;
    let dispatches: u64 = v.kernels.iter().map(|k| k.dispatches).sum();
    let summary = ui.tf(
        "batch-split-summary",
        &[
            ("tokens", int(ui, v.tokens)),
            ("wall", ms(s.wall_s)),
            ("kernels", num(ui, dispatches as f64 / per_token, 0)),
            ("busy", ms(s.gpu_busy_s)),
            ("busy_share", pct(s.gpu_busy_s)),
            ("overhead", ms(s.overhead_s)),
            ("overhead_share", pct(s.overhead_s)),
        ],
    );
    let verdict = match regime(&s) {
        Regime::LaunchBound => ui.t("batch-launch-bound"),
        Regime::KernelBound => ui.t("batch-kernel-bound"),
        Regime::Even => ui.t("batch-launch-even"),
    };
    let busy = v
        .kernels
        .iter()
        .map(|k| k.gpu_ns)
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    // The bars are scaled to the largest share (it fills its track).
    let most = v
        .kernels
        .iter()
        .map(|k| k.gpu_ns)
        .fold(f64::MIN_POSITIVE, f64::max);
    view! {
        <p data-testid="gpu-split-summary">{summary}</p>
        <table class="calc" data-testid="gpu-split-table">
            <thead><tr><th>{ui.t("batch-col-kernel")}</th><th>{ui.t("batch-col-dispatches")}</th><th>{ui.t("batch-col-gpu-time")}</th><th>{ui.t("batch-col-share")}</th></tr></thead>
            <tbody>{v.kernels.iter().map(|k| {
                let share = 100.0 * k.gpu_ns / busy;
                view! {
                    <tr>
                        <td>{k.name.clone()}</td>
                        <td>{num(ui, k.dispatches as f64 / per_token, 0)}</td>
                        <td>{num(ui, k.gpu_ns / 1e3 / per_token, 1)}</td>
                        <td class="share"><svg class="cmp-bar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true"><rect width=format!("{:.1}", 100.0 * k.gpu_ns / most) height="6"></rect></svg>{format!("{} %", num(ui, share, 1))}</td>
                    </tr>
                }
            }).collect_view()}</tbody>
        </table>
        <p class="note" data-testid="gpu-split-verdict">{verdict}</p>
    }
    .into_any()
}

/// The lesson's point at real scale: Llama-2-7B in fp16 on an H100 (989 TFLOP/s, 3.35 TB/s).
#[component]
fn RealScale() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let roof = H100_SXM;
    let mut points = Vec::new();
    for b in [1u64, 8, 64] {
        let c = roofline::llama2_7b_pass(b, 511, false);
        points.push(RoofPoint {
            label: format!("D{b}"),
            intensity: c.intensity(),
            flops: roof.attainable(c.intensity()),
            prefill: false,
        });
    }
    let p = roofline::llama2_7b_pass(512, 0, true);
    points.push(RoofPoint {
        label: "P512".into(),
        intensity: p.intensity(),
        flops: roof.attainable(p.intensity()),
        prefill: true,
    });
    let d1 = roofline::llama2_7b_pass(1, 511, false);
    let text = move || {
        ui.tf(
            "batch-real-scale",
            &[
                ("weights", bytes(ui, 2 * roofline::llama2_7b().n_params())),
                ("all", bytes(ui, d1.bytes)),
                ("ridge", num(ui, roof.ridge(), 0)),
                ("intensity", num(ui, d1.intensity(), 2)),
                ("rate", num(ui, roof.bytes_per_s / d1.bytes as f64, 0)),
                ("flops", flops(ui, roof.attainable(d1.intensity()))),
                (
                    "share",
                    num(ui, 100.0 * roof.attainable(d1.intensity()) / roof.flops, 1),
                ),
                ("rows", num(ui, roof.ridge() / d1.intensity(), 0)),
            ],
        )
    };
    view! {
        <h4>{move || ui.t("batch-real-heading")}</h4>
        // Redrawn when the colour scheme or the language changes (the figure reads them).
        {move || roofline_figure(ui, ex::roofline(&ui.t("batch-h100-title"), roof, &points, "roofline-h100", ui.lang()).on_page("roofline-h100"), roof, &points)}
        <p data-testid="roof-h100">{text}</p>
    }
}

#[component]
fn ServePart(views: BatchViews, sender: Sender) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let slots = RwSignal::new(4u32);
    let requests = RwSignal::new(12u32);
    let seed = RwSignal::new(1u64);
    let number = |s: RwSignal<u32>, lo: u32, hi: u32| {
        move |ev: leptos::ev::Event| {
            if let Ok(v) = event_target_value(&ev).trim().parse::<u32>() {
                if (lo..=hi).contains(&v) {
                    s.set(v);
                }
            }
        }
    };
    view! {
        <h3>{move || ui.t("batch-serve-heading")} " " <Tag of="batch-results" /></h3>
        <p class="note">{move || ui.t("batch-serve-note")}</p>
        <div class="knob-row">
            <label data-tagged>{move || ui.t("batch-slots")} " " <Tag of="serve-slots" /> <input type="number" min="1" max="16" class="num" data-testid="serve-slots" prop:value=move || slots.get().to_string() on:change=number(slots, 1, 16) /></label>
            <label data-tagged>{move || ui.t("batch-requests")} " " <Tag of="serve-requests" /> <input type="number" min="1" max="64" class="num" data-testid="serve-requests" prop:value=move || requests.get().to_string() on:change=number(requests, 1, 64) /></label>
            <label data-tagged>{move || ui.t("batch-trace-seed")} " " <Tag of="serve-seed" /> <input type="number" min="0" class="num" data-testid="serve-seed" prop:value=move || seed.get().to_string()
                on:change=move |ev| { if let Ok(v) = event_target_value(&ev).trim().parse::<u64>() { seed.set(v) } } /></label>
            <button data-testid="serve-run" on:click=move |_| sender.send(&Request::Batch(BatchRequest::ServeSim {
                slots: slots.get_untracked(),
                requests: requests.get_untracked(),
                seed: seed.get_untracked(),
            }))>{move || ui.t("batch-simulate")}</button>
        </div>
        {move || views.serve.get().map(|v| serve_view(ui, &v))}
    }
}

fn serve_view(ui: Ui, v: &ServeView) -> impl IntoView {
    let rate = |r: &SimResult| r.tokens as f64 / (r.wall_ms / 1000.0).max(1e-9);
    let (c, s) = (&v.continuous, &v.static_);
    let wall = if rate(c) < 1.1 * rate(s) {
        ui.t("batch-serve-not-faster")
    } else {
        ui.t("batch-serve-faster")
    };
    let verdict = ui.tf(
        "batch-serve-verdict",
        &[
            ("tokens", int(ui, c.tokens as u64)),
            ("continuous", int(ui, c.passes as u64)),
            ("static", int(ui, s.passes as u64)),
            (
                "fewer",
                num(
                    ui,
                    100.0 * (1.0 - c.passes as f64 / s.passes.max(1) as f64),
                    0,
                ),
            ),
            ("full", num(ui, 100.0 * c.occupancy, 0)),
            ("static_full", num(ui, 100.0 * s.occupancy, 0)),
            ("wall", wall),
        ],
    );
    view! {
        <p data-testid="serve-verdict">{verdict}</p>
        {timeline(ui, v, Policy::Continuous)}
        {timeline(ui, v, Policy::Static)}
        <p class="note small">{ui.t("batch-serve-columns")}</p>
    }
}

fn stats(ui: Ui, r: &SimResult) -> String {
    let n = r.served.len().max(1) as f64;
    let ttft = r.served.iter().map(|s| s.first_token_ms).sum::<f64>() / n;
    let per_token = r
        .served
        .iter()
        .filter(|s| s.tokens.len() > 1)
        .map(|s| (s.total_ms - s.first_token_ms) / (s.tokens.len() - 1) as f64)
        .collect::<Vec<_>>();
    let per_token = per_token.iter().sum::<f64>() / per_token.len().max(1) as f64;
    ui.tf(
        "batch-serve-stats",
        &[
            ("tokens", int(ui, r.tokens as u64)),
            ("passes", int(ui, r.passes as u64)),
            (
                "per_pass",
                num(ui, r.tokens as f64 / r.passes.max(1) as f64, 1),
            ),
            ("occupied", num(ui, 100.0 * r.occupancy, 0)),
            (
                "rate",
                num(ui, r.tokens as f64 / (r.wall_ms / 1000.0).max(1e-9), 0),
            ),
            ("ttft", num(ui, ttft, 2)),
            ("per_token", num(ui, per_token, 2)),
        ],
    )
}

fn timeline(ui: Ui, v: &ServeView, policy: Policy) -> impl IntoView {
    let r = match policy {
        Policy::Continuous => &v.continuous,
        Policy::Static => &v.static_,
    };
    let tid = format!("serve-{policy}");
    view! {
        {export::figure(&ex::timeline(v, policy, ui.lang()).on_page(&tid))}
        <p data-testid=format!("{tid}-stats")>{stats(ui, r)}</p>
    }
}
