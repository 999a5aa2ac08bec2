//! Inside the step (lesson 10, section 4), in the KV panel: the token just processed, its
//! query's attention over every cached position (a layer × head grid, heads that share a
//! K/V head side by side as the cache stores them, a readout on hover and focus), what that
//! costs, and the raw logit lens (each layer's residual through the final norm and the
//! classifier) as a layer × position heatmap, with each layer's distribution at the newest
//! position and its KL to the final one. The worker probes the step's own forward pass
//! while this is open (`session/probe.rs`).

use super::state::Ui;
use super::taxonomy::Tag;
use super::views::inside::InsideViews;
use super::views::numbers::{int, num};
use decoding_page::page::{piece_text, Panel};
use decoding_page::protocol::ProbeView;
use leptos::prelude::*;

/// Most positions the attention grid draws (the newest).
const GRID_POSITIONS: usize = 64;

#[component]
pub fn Inside(views: InsideViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let open = ui.panel_open(Panel::Inside);
    view! {
        <h3>{move || ui.t("inside-heading")} " " <Tag of="att-grid" /></h3>
        <p class="hint">{move || ui.t("inside-hint")}</p>
        <button data-testid="toggle-inside" aria-pressed=move || open.get().to_string()
            on:click=move |_| ui.toggle_panel(Panel::Inside)>
            {move || if open.get() { ui.t("inside-stop") } else { ui.t("inside-show") }}
        </button>
        {move || open.get().then(|| view! { <Body views /> })}
    }
}

/// The probe's view; redrawn whole when the language changes (every branch reads it), so
/// the grid and the lens under it write their words once.
#[component]
fn Body(views: InsideViews) -> impl IntoView {
    let ui = expect_context::<Ui>();
    move || {
        let Some(v) = views.probe.get() else {
            return view! { <p>{ui.t("inside-probing")}</p> }.into_any();
        };
        let n = v.pos + 1;
        let (l, h, d) = (v.n_layers as u64, v.n_heads as u64, v.head_size as u64);
        let macs = l * h * n as u64 * d;
        let ms = num(ui, v.probe_ms, 1);
        view! {
            <p data-testid="inside-cost">
                {ui.tf("inside-cost", &[
                    ("pos", int(ui, v.pos as u64)),
                    ("token", piece_text(&v.pieces[v.pos], true, Some(16))),
                    ("n", int(ui, n as u64)),
                ])}" "
                <strong>{ui.tf("inside-cost-dots", &[("n", int(ui, n as u64)), ("size", int(ui, d))])}</strong>
                {ui.tf("inside-cost-total", &[("heads", int(ui, h)), ("layers", int(ui, l)), ("macs", ui.int(macs))])}" "
                <span class="small">{if v.from_step {
                    ui.tf("inside-recorded-step", &[("ms", ms)])
                } else {
                    ui.tf("inside-recorded-probe", &[("ms", ms)])
                }}</span>
            </p>
            <AttentionGrid v=v.clone() />
            <Lens v=v />
        }
        .into_any()
    }
}

/// A scrolled box that starts at its right end, where the newest position is.
fn newest_in_view() -> NodeRef<leptos::html::Div> {
    let node = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if let Some(el) = node.get() {
            el.set_scroll_left(el.scroll_width());
        }
    });
    node
}

/// Label column width, row height and the band for the position labels: labels at 11 px or
/// more (~7 px read at a projector's distance is nothing).
const LABEL_W: f32 = 112.0;
const CELL_H: f32 = 14.0;
const TOP: f32 = 84.0;

/// The attention grid's geometry: the last `cols` positions from `first`, one row per
/// layer and head, heads that share a K/V head together.
#[derive(Clone, Copy)]
struct Grid {
    /// Cached positions (the newest token's position + 1).
    n: usize,
    first: usize,
    cols: usize,
    layers: usize,
    heads: usize,
    n_kv: usize,
    /// Query heads a K/V head serves.
    kv_mul: usize,
    cell_w: f32,
}

impl Grid {
    fn new(v: &ProbeView) -> Grid {
        let n = v.pos + 1;
        let first = n.saturating_sub(GRID_POSITIONS);
        let cols = n - first;
        Grid {
            n,
            first,
            cols,
            layers: v.n_layers,
            heads: v.n_heads,
            n_kv: v.n_kv_heads,
            kv_mul: (v.n_heads / v.n_kv_heads.max(1)).max(1),
            cell_w: (560.0 / cols as f32).clamp(8.0, 32.0),
        }
    }

    /// A row's top: layer by layer, heads in order; a gap between K/V groups and a wider
    /// one between layers.
    fn row_y(self, layer: usize, head: usize) -> f32 {
        TOP + (layer * self.heads + head) as f32 * CELL_H
            + (layer * self.n_kv + head / self.kv_mul) as f32 * 3.0
            + layer as f32 * 6.0
    }

    /// The left of column `c`.
    fn x(self, c: usize) -> f32 {
        LABEL_W + c as f32 * self.cell_w
    }

    fn width(self) -> f32 {
        self.x(self.cols) + 4.0
    }

    fn height(self) -> f32 {
        self.row_y(self.layers, 0) + 4.0
    }

    /// The weight head `head` of layer `layer` gives position `p`.
    fn weight(self, v: &ProbeView, layer: usize, head: usize, p: usize) -> f32 {
        v.attention[(layer * self.heads + head) * self.n + p]
    }

    /// The cursor `(layer, head, column)` after a key, or `None` for a key that does not
    /// move it.
    fn moved(self, key: &str, (mut layer, mut head, mut c): Cursor) -> Option<Cursor> {
        match key {
            "ArrowLeft" => c = c.saturating_sub(1),
            "ArrowRight" => c = (c + 1).min(self.cols - 1),
            "ArrowUp" if head > 0 => head -= 1,
            "ArrowUp" if layer > 0 => (layer, head) = (layer - 1, self.heads - 1),
            "ArrowDown" if head + 1 < self.heads => head += 1,
            "ArrowDown" if layer + 1 < self.layers => (layer, head) = (layer + 1, 0),
            "Home" => c = 0,
            "End" => c = self.cols - 1,
            _ => return None,
        }
        Some((layer, head, c))
    }

    /// The cell under a point of the drawing, if it is on one.
    fn at(self, x: f32, y: f32) -> Option<Cursor> {
        if x < LABEL_W || y < TOP {
            return None;
        }
        let c = (((x - LABEL_W) / self.cell_w) as usize).min(self.cols - 1);
        // The row under y: the last whose top is above it.
        let mut at = None;
        for layer in 0..self.layers {
            for head in 0..self.heads {
                if self.row_y(layer, head) <= y {
                    at = Some((layer, head, c));
                }
            }
        }
        at
    }
}

/// The readout's cell: layer, head, column.
type Cursor = (usize, usize, usize);

/// One row per layer and head, a cell per position shaded by √weight.
fn grid_rows(v: &ProbeView, g: Grid) -> impl IntoView {
    (0..g.layers)
        .flat_map(|layer| (0..g.heads).map(move |head| (layer, head)))
        .map(|(layer, head)| {
            let y = g.row_y(layer, head);
            let cells = (0..g.cols)
                .map(|c| {
                    let w = g.weight(v, layer, head, g.first + c);
                    view! {
                        <rect class="att" x=g.x(c) y=y width=g.cell_w - 1.0 height=CELL_H - 1.0
                            fill-opacity=format!("{:.3}", w.sqrt())></rect>
                    }
                })
                .collect_view();
            let label = format!("L{layer} h{head} kv{}", head / g.kv_mul);
            let kv_head = head / g.kv_mul;
            view! {
                <g class="att-row" data-layer=layer data-head=head data-kv-head=kv_head>
                    <text class="lbl" x="0" y=y + CELL_H - 3.0>{label}</text>
                    {cells}
                </g>
            }
        })
        .collect_view()
}

/// The positions' tokens above the columns.
fn position_labels(v: &ProbeView, g: Grid) -> impl IntoView {
    (0..g.cols)
        .map(|c| {
            let x = g.x(c) + g.cell_w / 2.0;
            let text = piece_text(&v.pieces[g.first + c], false, Some(8));
            view! {
                <text class="lbl att-pos" x=x y=TOP - 4.0 transform=format!("rotate(-60 {x} {})", TOP - 4.0)>{text}</text>
            }
        })
        .collect_view()
}

/// Moves the cursor to the cell under the mouse.
fn on_move(g: Grid, cursor: RwSignal<Cursor>) -> impl Fn(web_sys::MouseEvent) + 'static {
    move |ev: web_sys::MouseEvent| {
        let Some(svg) = event_target::<web_sys::Element>(&ev)
            .closest("svg")
            .ok()
            .flatten()
        else {
            return;
        };
        let r = svg.get_bounding_client_rect();
        let scale = g.width() as f64 / r.width().max(1.0);
        let x = ((ev.client_x() as f64 - r.left()) * scale) as f32;
        let y = ((ev.client_y() as f64 - r.top()) * scale) as f32;
        if let Some(at) = g.at(x, y) {
            cursor.set(at);
        }
    }
}

/// Layer × head rows over the cached positions.
#[component]
fn AttentionGrid(v: ProbeView) -> impl IntoView {
    let g = Grid::new(&v);
    let (n, first, cols, kv_mul) = (g.n, g.first, g.cols, g.kv_mul);
    let (height, width) = (g.height(), g.width());
    let cursor = RwSignal::new((v.n_layers - 1, 0usize, cols - 1));
    let rows = grid_rows(&v, g);
    let labels = position_labels(&v, g);
    let ui = expect_context::<Ui>();
    let readout = {
        let v = v.clone();
        move || {
            let (layer, head, c) = cursor.get();
            let p = first + c;
            ui.tf(
                "inside-readout",
                &[
                    ("layer", int(ui, layer as u64)),
                    ("head", int(ui, head as u64)),
                    ("kv", int(ui, (head / kv_mul) as u64)),
                    ("weight", num(ui, g.weight(&v, layer, head, p) as f64, 3)),
                    ("token", piece_text(&v.pieces[p], true, Some(20))),
                    ("pos", int(ui, p as u64)),
                ],
            )
        }
    };
    let highlight = move || {
        let (layer, head, c) = cursor.get();
        view! {
            <rect class="att-cursor" x=g.x(c) - 0.5 y=g.row_y(layer, head) - 0.5
                width=g.cell_w height=CELL_H></rect>
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if let Some(moved) = g.moved(&ev.key(), cursor.get_untracked()) {
            ev.prevent_default();
            cursor.set(moved);
        }
    };
    let (layers, heads, n_kv) = (g.layers, g.heads, g.n_kv);
    let pos = v.pos as u64;
    let summary = move || {
        let args = [
            ("pos", int(ui, pos)),
            ("n", int(ui, n as u64)),
            ("cols", int(ui, cols as u64)),
            ("layers", int(ui, layers as u64)),
            ("heads", int(ui, heads as u64)),
            ("kv", int(ui, n_kv as u64)),
        ];
        if first > 0 {
            ui.tf("inside-grid-summary-last", &args)
        } else {
            ui.tf("inside-grid-summary", &args)
        }
    };
    view! {
        <p class="small">{move || ui.tf("inside-grid-note", &[("per", int(ui, kv_mul as u64))])}
            {move || (first > 0).then(|| format!(" {}", ui.tf("inside-grid-last", &[("cols", int(ui, cols as u64)), ("n", int(ui, n as u64))])))}</p>
        <div class="scroll-x" tabindex="-1" node_ref=newest_in_view()>
            <svg class="att-grid" data-testid="att-grid" data-positions=cols data-rows=layers * heads
                viewBox=format!("0 0 {width} {height}") width=width role="img" tabindex="0" data-arrows=""
                aria-label=summary aria-describedby="att-readout"
                on:keydown=on_key on:mousemove=on_move(g, cursor)>
                <title>{summary}</title>
                {labels}
                {rows}
                {highlight}
            </svg>
        </div>
        <p id="att-readout" data-testid="att-readout" aria-live="polite">{readout}</p>
    }
}

/// The lens: layers × the last positions, then the newest position's layers.
#[component]
fn Lens(v: ProbeView) -> impl IntoView {
    let ui = expect_context::<Ui>();
    let cols = v.lens_positions.len();
    let head = v
        .lens_positions
        .iter()
        .map(|&p| view! { <th scope="col" title=ui.tf("inside-position", &[("pos", int(ui, p as u64))])>{piece_text(&v.pieces[p], true, Some(10))}</th> })
        .collect_view();
    let body = (0..v.n_layers)
        .rev()
        .map(|l| {
            let cells = (0..cols)
                .map(|i| {
                    let t = &v.lens[l * cols + i];
                    let bucket = ((t.p * 10.0) as usize).min(9);
                    let title = ui.tf(
                        "inside-lens-cell",
                        &[
                            ("layer", int(ui, l as u64)),
                            ("pos", int(ui, v.lens_positions[i] as u64)),
                            ("token", piece_text(&t.piece, true, None)),
                            ("p", num(ui, t.p, 3)),
                        ],
                    );
                    view! {
                        <td class=format!("lens-cell lens-b{bucket}") data-id=t.id title=title>
                            <span class="lens-piece">{piece_text(&t.piece, true, Some(8))}</span>
                            <span class="lens-p">{num(ui, t.p, 2)}</span>
                        </td>
                    }
                })
                .collect_view();
            let name = if l + 1 == v.n_layers {
                ui.tf("inside-final", &[("layer", l.to_string())])
            } else {
                format!("L{l}")
            };
            view! { <tr class="lens-row" data-layer=l><th scope="row">{name}</th>{cells}</tr> }
        })
        .collect_view();
    let last = v
        .last
        .iter()
        .enumerate()
        .rev()
        .map(|(l, layer)| {
            let top = layer
                .top
                .iter()
                .map(|t| format!("{} {}", piece_text(&t.piece, true, Some(12)), num(ui, t.p, 3)))
                .collect::<Vec<_>>()
                .join(", ");
            view! {
                <tr data-layer=l><th scope="row">{format!("L{l}")}</th>
                    <td class="num" data-testid="lens-kl">{num(ui, layer.kl, 4)}</td><td>{top}</td></tr>
            }
        })
        .collect_view();
    view! {
        <h4>{ui.t("inside-lens-heading")} " " <Tag of="lens-grid" /></h4>
        <p class="hint" data-testid="lens-note">{ui.t("inside-lens-note")}" "{ui.t("inside-lens-cells")}</p>
        <div class="scroll-x" tabindex="0" role="region" aria-label=ui.t("inside-lens-region") node_ref=newest_in_view()>
            <table class="lens" data-testid="lens-grid">
                <thead><tr><th scope="col">{ui.t("inside-after")}</th>{head}</tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
        <table class="lens-last" data-testid="lens-last">
            <caption>{ui.tf("inside-lens-last", &[("token", piece_text(&v.pieces[v.pos], true, Some(16))), ("pos", int(ui, v.pos as u64))])}</caption>
            <thead><tr><th>{ui.t("inside-col-layer")}</th><th>{ui.t("inside-col-kl")}</th><th>{ui.t("inside-col-top")}</th></tr></thead>
            <tbody>{last}</tbody>
        </table>
    }
}
