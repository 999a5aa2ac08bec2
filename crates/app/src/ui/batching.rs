//! Batching and the two regimes (lesson 10, sections 4–5): B lanes of the prompt stepping
//! together in one pass of B rows; throughput against B measured live in the worker
//! (prefill flat, decode rising); the roofline with the machine's own peaks (measured in the
//! worker) and, beside it, Llama-2-7B on an H100 at real scale; and a seeded trace served
//! with continuous and static batching, drawn as a timeline with its latencies.

use super::export;
use super::panel::PanelShell;
use super::state::Sender;
use super::taxonomy::Tag;
use super::views::batch::BatchViews;
use decoding_engine::serving::batching::{Policy, SimResult};
use decoding_engine::serving::roofline::{self, Roof, H100_SXM};
use decoding_engine::units::human_bytes;
use decoding_page::export::{self as ex, Drawing};
use decoding_page::geometry::batching::{self as bg, flops_text, RoofPoint};
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
    let exports = move || {
        view! {
            {export::buttons("throughput", "throughput and the roofline", move || views.sweep.with_untracked(|v| v.as_ref().map(decoding_page::export::sweep)))}
            {export::buttons("serving", "the serving timelines", move || views.serve.with_untracked(|v| v.as_ref().map(decoding_page::export::serve)))}
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
    let batch = RwSignal::new(4u32);
    let tokens = RwSignal::new(16u32);
    let run = move |n: u32| {
        sender.send(&Request::Batch(BatchRequest::BatchLanes {
            batch: batch.get_untracked(),
            tokens: n,
        }))
    };
    view! {
        <h3>"B sequences, one pass " <Tag of="batch-results" /></h3>
        <p class="note">"Each lane is the prompt with its own seed (lane 0 has the page's seed, so it is the transcript's own text) and its own KV cache; every step is one forward pass over B rows — one token of each lane — reading each weight matrix once for all of them."</p>
        <div class="knob-row">
            <label data-tagged>"Batch size B " <Tag of="batch-size" />
                <select data-testid="batch-size" prop:value=move || batch.get().to_string()
                    on:change=move |ev| { if let Ok(b) = event_target_value(&ev).parse() { batch.set(b) } }>
                    {[1u32, 2, 4, 8, 16].into_iter().map(|b| view! { <option value=b.to_string()>{b.to_string()}</option> }).collect_view()}
                </select>
            </label>
            <label data-tagged>"Tokens a lane " <Tag of="batch-tokens" />
                <input type="number" min="1" max="256" class="num" data-testid="batch-tokens" prop:value=move || tokens.get().to_string()
                    on:change=move |ev| {
                        if let Ok(t) = event_target_value(&ev).trim().parse::<u32>() {
                            if (1..=256).contains(&t) { tokens.set(t); }
                        }
                    } />
            </label>
            <button data-testid="batch-run" on:click=move |_| run(tokens.get_untracked())>"Run lanes"</button>
            <button data-testid="batch-step" on:click=move |_| {
                let have = views.lanes.with_untracked(|l| l.as_ref().map_or(0, |l| l.lanes.iter().map(|x| x.tokens.len()).max().unwrap_or(0)));
                run((have as u32 + 1).min(256));
            }>"Step all lanes"</button>
        </div>
        {move || views.lanes.get().map(|v| lanes_view(&v))}
    }
}

fn lanes_view(v: &LanesView) -> impl IntoView {
    let rows = v
        .lanes
        .iter()
        .enumerate()
        .map(|(k, l)| {
            view! {
                <div class="lane" data-testid="lane">
                    <span class="lane-seed">{format!("lane {k} · seed {}", l.seed)}</span>
                    <span class="lane-prompt">{v.prompt_text.clone()}</span>
                    <span class="lane-text" data-testid="lane-text">{l.text.clone()}</span>
                    {l.stopped.then(|| view! { <span class="badge">"stopped"</span> })}
                </div>
            }
        })
        .collect_view();
    let summary = format!(
        "{} lanes: prefill of {} × {} prompt rows in one pass ({:.2} ms), then {} passes of ≤ {} rows, {:.2} ms a pass — {:.0} tokens/s for all lanes together.",
        v.batch,
        v.batch,
        v.prompt.len(),
        v.prefill_ms,
        v.passes,
        v.batch,
        v.decode_ms_per_pass,
        v.tokens_per_s
    );
    view! {
        <div class="lanes" data-testid="lanes">{rows}</div>
        <p data-testid="lanes-summary">{summary}</p>
    }
}

#[component]
fn ThroughputPart(views: BatchViews, sender: Sender) -> impl IntoView {
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
        <h3>"Throughput against batch size, and the roofline " <Tag of="batch-results" /></h3>
        <p class="note">{move || {
            // The sizes of the sweep on show (a lesson step measures its own).
            let (pp, tg) = views.sweep.with(|v| {
                v.as_ref()
                    .and_then(|v| v.rows.first())
                    .map_or((SWEEP_PROMPT as usize, SWEEP_GEN as usize), |r| (r.prompt_tokens, r.gen_tokens))
            });
            format!("Measured here, now, on the running backend: B prompts of {pp} tokens prefilled as one pass, then {tg} decode passes of B rows, each batch size repeated (the median, and the middle half of the runs). The worker also measures this machine's ceilings with the engine's own kernels: decode's product streaming a matrix the size of the weights, and a batched product inside the cache.")
        }}</p>
        <button data-testid="batch-measure" on:click=measure>"Measure B = 1, 2, 4, 8, 16"</button>
        {move || (views.sweep.with(Option::is_none) && views.pending("sweep")).then(|| view! {
            <p class="waiting" data-testid="sweep-waiting">"Measuring on this backend…"</p>
        })}
        {move || views.sweep.get().map(|v| view! { <ThroughputChart v=v.clone() /> <MachineRoofline v=v.clone() /> })}
        </div>
        <GpuSplitPart views sender />
        <RealScale />
    }
}

#[component]
fn GpuSplitPart(views: BatchViews, sender: Sender) -> impl IntoView {
    let measure = move |_| {
        views.gpu_split.set(None);
        sender.send(&Request::Batch(BatchRequest::GpuSplit))
    };
    view! {
        <div data-testid="gpu-split">
        <h4>"Where a decoded token's time goes on this GPU"</h4>
        <p class="note">"A GPU runs a decode step as a queue of kernels. Each launch costs time of its own, whatever the kernel does; the lesson's \"decode is bandwidth-bound\" holds only once those launches are cheap beside the kernels' weight reads. With GPU timestamps around each kernel, the worker splits 16 decode steps' wall time into the kernels' GPU time and the rest."</p>
        <button data-testid="gpu-split-measure" on:click=measure>"Time the GPU's kernels"</button>
        {move || (views.gpu_split.with(Option::is_none) && views.pending("gpu-split")).then(|| view! {
            <p class="waiting" data-testid="gpu-split-waiting">"Timing 16 decode steps…"</p>
        })}
        {move || views.gpu_split.get().map(|v| view! { <GpuSplit v=v /> })}
        </div>
    }
}

#[component]
fn ThroughputChart(v: SweepView) -> impl IntoView {
    let first = v.rows.first().map_or(1.0, |r| r.decode_tokens_per_s);
    let last = v.rows.last();
    // The same judgement as the lesson track's caption (`verdict`): a gain counts with a
    // 1.3× ratio and every run of the largest B above every run of B = 1.
    let (gain, clear) = decoding_page::verdict::batching_gain(&v).unwrap_or((1.0, false));
    let in_cache = v.weight_bytes < CACHE_BYTES;
    let why = match (clear, in_cache) {
        (false, true) => format!(
            "Little gain here ({gain:.1}×, within the runs' spread or under 1.3×): the weights ({}) sit in the CPU's caches, so a pass does not wait on memory and there is no read for B rows to share. Batching pays where one weight read from memory serves many rows — a model whose weights do not fit in the caches, or a GPU.",
            human_bytes(v.weight_bytes)
        ),
        (false, false) => format!(
            "Little gain here ({gain:.1}×, within the runs' spread or under 1.3×) on the {} backend.",
            v.backend
        ),
        (true, true) => format!(
            "The weights ({}) sit in the CPU's caches, so no pass waits on memory for them: the decode gain here comes from each weight row read once for all B rows and from spreading each pass's fixed costs (the layers' loops, the norms, the hand-offs between cores) over B rows.",
            human_bytes(v.weight_bytes)
        ),
        (true, false) => format!(
            "The weights ({}) do not fit in the caches: every pass reads them from memory, and B rows share each read — the decode gain comes from sharing weight reads.",
            human_bytes(v.weight_bytes)
        ),
    };
    let on = match v.model {
        SweepModel::Loaded => String::new(),
        m => format!(
            "Measured on {} ({}). ",
            m.words(),
            human_bytes(v.weight_bytes)
        ),
    };
    let summary = format!(
        "{on}Decode {:.0} → {:.0} tokens/s from B = 1 to B = {} ({gain:.1}×) on the {} backend; prefill {:.0} → {:.0} (its one pass already had many rows).",
        first,
        last.map_or(0.0, |r| r.decode_tokens_per_s),
        last.map_or(1, |r| r.batch),
        v.backend,
        v.rows.first().map_or(0.0, |r| r.prefill_tokens_per_s),
        last.map_or(0.0, |r| r.prefill_tokens_per_s),
    );
    view! {
        {export::figure(&decoding_page::export::throughput(&v).on_page("tp-chart"))}
        <table class="calc" data-testid="tp-table">
            <thead><tr><th>"B"</th><th>"runs"</th><th>"prefill tokens/s (middle half)"</th><th>"decode tokens/s (middle half)"</th></tr></thead>
            <tbody>{v.rows.iter().zip(&v.spread).map(|(r, sp)| view! {
                <tr>
                    <td>{r.batch}</td>
                    <td>{sp.reps}</td>
                    <td>{format!("{:.0} ({:.0}–{:.0})", r.prefill_tokens_per_s, sp.prefill.0, sp.prefill.1)}</td>
                    <td>{format!("{:.0} ({:.0}–{:.0})", r.decode_tokens_per_s, sp.decode.0, sp.decode.1)}</td>
                </tr>
            }).collect_view()}</tbody>
        </table>
        <p data-testid="tp-summary">{summary}</p>
        <p class="note" data-testid="tp-why">{why}</p>
    }
}

/// A roofline figure and, where a measured point lies above its measured roof, why the roof
/// is not drawn.
fn roofline_figure(d: Drawing, roof: Roof, points: &[RoofPoint]) -> impl IntoView {
    let name = d.root.testid.clone();
    let holds = points
        .iter()
        .all(|p| roofline::under(&roof, p.intensity, p.flops));
    view! {
        {export::figure(&d)}
        {(!holds).then(|| view! {
            <p class="warning" data-testid=format!("{name}-under-measured")>"A measured point lies above the measured roof: the roof was under-measured (the machine was busy while it was probed), so it is not drawn. Measure again."</p>
        })}
    }
}

#[component]
fn MachineRoofline(v: SweepView) -> impl IntoView {
    let roof = v.peaks.roof;
    let points = bg::machine_points(&v.rows);
    let d1 = v.rows.first().map_or(0.0, |r| r.decode.intensity());
    let peaks = format!(
        "This machine, measured by the worker ({} thread) with the engine's own kernels: decode's product streams {:.1} GB/s over {} (the size of this model's weights), the batched product computes {}; ridge {:.1} FLOP/byte. Decode at B = 1 does {:.2} FLOP per byte moved — {} the ridge; prefill's one pass of many rows does {:.0}.",
        v.peaks.threads,
        roof.bytes_per_s / 1e9,
        human_bytes(v.peaks.buffer_bytes),
        flops_text(roof.flops),
        roof.ridge(),
        d1,
        if d1 < roof.ridge() { "below" } else { "above" },
        v.rows.first().map_or(0.0, |r| r.prefill.intensity()),
    );
    view! {
        <h4>"This model on this machine"</h4>
        {roofline_figure(ex::machine_roofline(&v).on_page("roofline"), roof, &points)}
        <p data-testid="roof-peaks">{peaks}</p>
    }
}

/// Where a decoded token's time goes on the GPU: the kernels' GPU time (timestamps) and
/// the rest of the step (launches, barriers, the read-back), with the regime it puts this
/// machine in.
#[component]
fn GpuSplit(v: GpuSplitView) -> impl IntoView {
    let Some(s) = v.split else {
        let why = v.note.unwrap_or_default();
        return view! {
            <p class="note" data-testid="gpu-split-none">{format!("Not measured here: {why}. Without GPU timestamps the step's wall time cannot be split into the kernels' time and the launches'.")}</p>
        }
        .into_any();
    };
    let ms = |x: f64| format!("{:.3} ms", x * 1e3);
    let pct = |x: f64| 100.0 * x / s.wall_s.max(f64::MIN_POSITIVE);
    let per_token = v.tokens.max(1) as f64;
    let dispatches: u64 = v.kernels.iter().map(|k| k.dispatches).sum();
    let summary = format!(
        "A decode step (one row, {} timed) took {} on the wall: the GPU was busy in its {:.0} kernels for {} ({:.0} %), and {} ({:.0} %) went to launching them, the barriers between them and reading the logits back.",
        v.tokens,
        ms(s.wall_s),
        dispatches as f64 / per_token,
        ms(s.gpu_busy_s),
        pct(s.gpu_busy_s),
        ms(s.overhead_s),
        pct(s.overhead_s),
    );
    let verdict = match regime(&s) {
        Regime::LaunchBound => "Launch-bound: decode here waits on launches, not on memory. The lesson's \"decode is bandwidth-bound\" holds only once launches are cheap beside the kernels (fewer, fused dispatches; larger models).",
        Regime::KernelBound => "The kernels' own time dominates: launches are cheap beside them here, so decode's speed is the kernels' (on a software adapter the \"GPU\" is this CPU, and its kernels are CPU code).",
        Regime::Even => "Launches and kernels take about equal shares (neither by 1.3×): cheaper launches and faster kernels would both show.",
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
            <thead><tr><th>"kernel"</th><th>"dispatches a token"</th><th>"GPU µs a token"</th><th>"share of GPU time"</th></tr></thead>
            <tbody>{v.kernels.iter().map(|k| {
                let share = 100.0 * k.gpu_ns / busy;
                view! {
                    <tr>
                        <td>{k.name.clone()}</td>
                        <td>{format!("{:.0}", k.dispatches as f64 / per_token)}</td>
                        <td>{format!("{:.1}", k.gpu_ns / 1e3 / per_token)}</td>
                        <td class="share"><svg class="cmp-bar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true"><rect width=format!("{:.1}", 100.0 * k.gpu_ns / most) height="6"></rect></svg>{format!("{share:.1} %")}</td>
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
    let tokens_per_s = roof.bytes_per_s / d1.bytes as f64;
    let text = format!(
        "At real scale: Llama-2-7B in fp16 reads {} of weights, and its cache at 512 positions ({} in all), for every decode step. On an H100 (989 TFLOP/s, 3.35 TB/s: ridge {:.0} FLOP/byte) one sequence does {:.2} FLOP per byte, so the memory holds it to about {:.0} tokens/s at {} — {:.1} % of the arithmetic. Only about {:.0} rows sharing each weight read reach the ridge; a 512-token prefill is far past it.",
        human_bytes(2 * roofline::llama2_7b().n_params()),
        human_bytes(d1.bytes),
        roof.ridge(),
        d1.intensity(),
        tokens_per_s,
        flops_text(roof.attainable(d1.intensity())),
        100.0 * roof.attainable(d1.intensity()) / roof.flops,
        roof.ridge() / d1.intensity(),
    );
    view! {
        <h4>"The lesson's point at real scale (computed, not measured)"</h4>
        // Redrawn when the colour scheme changes (the figure reads it).
        {move || roofline_figure(ex::roofline("Llama-2-7B (fp16) on an H100", roof, &points, "roofline-h100").on_page("roofline-h100"), roof, &points)}
        <p data-testid="roof-h100">{text}</p>
    }
}

#[component]
fn ServePart(views: BatchViews, sender: Sender) -> impl IntoView {
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
        <h3>"Continuous against static batching " <Tag of="batch-results" /></h3>
        <p class="note">"A seeded trace of requests (different prompt and output lengths, arriving over time) through B slots on the real engine. Static: a new batch only when the whole last one has finished. Continuous (Orca's iteration-level scheduling, as vLLM does it): at every step finished requests leave and waiting ones take the free slots, their prefill joining the step."</p>
        <div class="knob-row">
            <label data-tagged>"Slots " <Tag of="serve-slots" /> <input type="number" min="1" max="16" class="num" data-testid="serve-slots" prop:value=move || slots.get().to_string() on:change=number(slots, 1, 16) /></label>
            <label data-tagged>"Requests " <Tag of="serve-requests" /> <input type="number" min="1" max="64" class="num" data-testid="serve-requests" prop:value=move || requests.get().to_string() on:change=number(requests, 1, 64) /></label>
            <label data-tagged>"Trace seed " <Tag of="serve-seed" /> <input type="number" min="0" class="num" data-testid="serve-seed" prop:value=move || seed.get().to_string()
                on:change=move |ev| { if let Ok(v) = event_target_value(&ev).trim().parse::<u64>() { seed.set(v) } } /></label>
            <button data-testid="serve-run" on:click=move |_| sender.send(&Request::Batch(BatchRequest::ServeSim {
                slots: slots.get_untracked(),
                requests: requests.get_untracked(),
                seed: seed.get_untracked(),
            }))>"Simulate serving"</button>
        </div>
        {move || views.serve.get().map(|v| serve_view(&v))}
    }
}

fn serve_view(v: &ServeView) -> impl IntoView {
    let rate = |r: &SimResult| r.tokens as f64 / (r.wall_ms / 1000.0).max(1e-9);
    let (c, s) = (&v.continuous, &v.static_);
    let verdict = format!(
        "The same {} tokens (each request's own, as alone): continuous batching needed {} passes where static needed {} ({:.0} % fewer), keeping the slots {:.0} % full against {:.0} %. {}",
        c.tokens,
        c.passes,
        s.passes,
        100.0 * (1.0 - c.passes as f64 / s.passes.max(1) as f64),
        100.0 * c.occupancy,
        100.0 * s.occupancy,
        if rate(c) < 1.1 * rate(s) {
            "In wall time it is not faster here: on this backend a pass costs in proportion to its rows (one thread computes every row, and a small model's weights sit in cache), so fewer, fuller passes do the same work. Its wall-clock gain comes where a pass costs about the same whatever its rows — a model whose weight reads dominate, or the GPU."
        } else {
            "Fuller passes share each pass's fixed costs and weight reads, so it is faster in wall time too."
        }
    );
    view! {
        <p data-testid="serve-verdict">{verdict}</p>
        {timeline(v, Policy::Continuous)}
        {timeline(v, Policy::Static)}
        <p class="note small">"Each column is one step; a step with no request is not a pass."</p>
    }
}

fn stats(r: &SimResult) -> String {
    let n = r.served.len().max(1) as f64;
    let ttft = r.served.iter().map(|s| s.first_token_ms).sum::<f64>() / n;
    let per_token = r
        .served
        .iter()
        .filter(|s| s.tokens.len() > 1)
        .map(|s| (s.total_ms - s.first_token_ms) / (s.tokens.len() - 1) as f64)
        .collect::<Vec<_>>();
    let per_token = per_token.iter().sum::<f64>() / per_token.len().max(1) as f64;
    format!(
        "{} tokens in {} passes ({:.1} tokens a pass), slots {:.0} % occupied, {:.0} tokens/s; time to first token {:.2} ms, {:.2} ms a token after it (means over requests)",
        r.tokens,
        r.passes,
        r.tokens as f64 / r.passes.max(1) as f64,
        100.0 * r.occupancy,
        r.tokens as f64 / (r.wall_ms / 1000.0).max(1e-9),
        ttft,
        per_token
    )
}

fn timeline(v: &ServeView, policy: Policy) -> impl IntoView {
    let r = match policy {
        Policy::Continuous => &v.continuous,
        Policy::Static => &v.static_,
    };
    let tid = format!("serve-{policy}");
    view! {
        {export::figure(&ex::timeline(v, policy).on_page(&tid))}
        <p data-testid=format!("{tid}-stats")>{stats(r)}</p>
    }
}
