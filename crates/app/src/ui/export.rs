//! Saving a chart: the view's [`Drawing`] (built from its data in `decoding_page::export`)
//! written as SVG, or painted shape by shape onto a canvas at twice its size and saved as
//! PNG; and the transcript with its settings as JSON.

use decoding_page::export::{Anchor, Drawing, Label, Shape, Stroke, RING};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Offers `blob` as a download named `name`.
fn download(blob: &web_sys::Blob, name: &str) {
    let (Some(doc), Ok(url)) = (
        window().document(),
        web_sys::Url::create_object_url_with_blob(blob),
    ) else {
        return;
    };
    if let Some(a) = doc
        .create_element("a")
        .ok()
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    // Revoked after the click has been handled (revoking at once can cancel the download).
    set_timeout(
        move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        },
        std::time::Duration::from_secs(5),
    );
}

/// Saves text as a file of type `mime`.
pub fn save_text(text: &str, mime: &str, name: &str) {
    let parts = js_sys::Array::of1(&text.into());
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    if let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) {
        download(&blob, name);
    }
}

/// A drawing on the page: the very SVG the export saves (one writer, so the file is what
/// the page shows), in a box that fits it to the panel's width.
///
/// Drawn in the scheme in force, read here: the view that draws the figure redraws it when
/// the scheme changes (no reactive node of its own: a figure redrawn at every token once
/// left one behind each time, which the soak test saw).
pub fn figure(d: &Drawing) -> impl IntoView {
    let ui = expect_context::<super::state::Ui>();
    let svg = d.clone().themed(ui.scheme()).svg();
    view! { <div class="figure" inner_html=svg></div> }
}

/// Paints the drawing's shapes onto a 2D canvas context, `scale` pixels per unit.
fn paint(d: &Drawing, ctx: &web_sys::CanvasRenderingContext2d, scale: f64) {
    let _ = ctx.scale(scale, scale);
    for s in d.leaves() {
        match s {
            Shape::Rect { x, y, w, h, fill } => {
                ctx.set_fill_style_str(fill);
                ctx.fill_rect(*x, *y, *w, *h);
            }
            Shape::Line { .. } | Shape::Path { .. } => {
                if let Some(st) = s.stroke() {
                    stroke(ctx, &st);
                }
            }
            Shape::Circle {
                x,
                y,
                r,
                fill,
                ring,
            } => {
                ctx.set_fill_style_str(fill);
                ctx.begin_path();
                let _ = ctx.arc(*x, *y, *r, 0.0, std::f64::consts::TAU);
                ctx.fill();
                if let Some(c) = ring {
                    ctx.set_stroke_style_str(c);
                    ctx.set_line_width(RING);
                    let _ = ctx.set_line_dash(&js_sys::Array::new());
                    ctx.stroke();
                }
            }
            Shape::Text { .. } => {
                if let Some(l) = s.label() {
                    label(ctx, &l);
                }
            }
            // Opened by `leaves`.
            Shape::Group { .. } => {}
        }
    }
}

/// Writes a label: its font, anchor and turn.
fn label(ctx: &web_sys::CanvasRenderingContext2d, l: &Label) {
    ctx.set_fill_style_str(l.fill);
    ctx.set_font(&format!("{}px sans-serif", l.size));
    ctx.set_text_align(match l.anchor {
        Anchor::Start => "start",
        Anchor::Middle => "center",
        Anchor::End => "end",
    });
    ctx.save();
    let _ = ctx.translate(l.x, l.y);
    if l.vertical {
        let _ = ctx.rotate(-std::f64::consts::FRAC_PI_2);
    }
    let _ = ctx.fill_text(&l.text, 0.0, 0.0);
    ctx.restore();
}

/// Strokes a line or path: its points joined, in its colour, width and dash.
fn stroke(ctx: &web_sys::CanvasRenderingContext2d, st: &Stroke) {
    let dash = js_sys::Array::new();
    for v in st.dash.iter().flatten() {
        dash.push(&(*v).into());
    }
    let _ = ctx.set_line_dash(&dash);
    ctx.set_stroke_style_str(st.colour);
    ctx.set_line_width(st.width);
    ctx.begin_path();
    for (i, &(x, y)) in st.points.iter().enumerate() {
        if i == 0 {
            ctx.move_to(x, y);
        } else {
            ctx.line_to(x, y);
        }
    }
    ctx.stroke();
}

/// Saves the drawing as a PNG at twice its size.
pub fn save_png(d: &Drawing, name: &str) {
    let Some(doc) = window().document() else {
        return;
    };
    let Some(canvas) = doc
        .create_element("canvas")
        .ok()
        .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
    else {
        return;
    };
    let scale = 2.0;
    canvas.set_width((d.width * scale).ceil() as u32);
    canvas.set_height((d.height * scale).ceil() as u32);
    let Some(ctx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    paint(d, &ctx, scale);
    let name = name.to_string();
    let done = Closure::once_into_js(move |blob: Option<web_sys::Blob>| {
        if let Some(b) = blob {
            download(&b, &name);
        }
    });
    let _ = canvas.to_blob_with_type(done.unchecked_ref(), "image/png");
}

/// What a chart is, in the language in force: the message `export-what-<name>`, else the
/// caller's English `what` (the tests hold every caller's `what` to its message).
fn what_of(ui: super::state::Ui, name: &str, what: &str) -> String {
    let id = format!("export-what-{name}");
    let words = ui.t(&id);
    if words == id {
        what.to_string()
    } else {
        words
    }
}

/// "SVG" and "PNG" buttons for a chart; `make` builds its drawing from the view's data
/// (None while there is nothing to draw: a click then saves nothing). `what` names the chart
/// in English (`export-what-<name>` in the other languages).
pub fn buttons(
    name: &'static str,
    what: &'static str,
    make: impl Fn() -> Option<Drawing> + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let ui = expect_context::<super::state::Ui>();
    let make = move || make().map(|d| d.themed(ui.scheme()));
    let what = move || what_of(ui, name, what);
    view! {
        <span class="export" role="group" aria-label=move || ui.tf("export-group", &[("what", what())])>
            <button class="ghost" data-testid=format!("export-{name}-svg")
                aria-label=move || ui.tf("export-svg-label", &[("what", what())])
                on:click=move |_| if let Some(d) = make() { save_text(&d.svg(), "image/svg+xml", &format!("{name}.svg")) }>{move || ui.t("export-svg")}</button>
            <button class="ghost" data-testid=format!("export-{name}-png")
                aria-label=move || ui.tf("export-png-label", &[("what", what())])
                on:click=move |_| if let Some(d) = make() { save_png(&d, &format!("{name}.png")) }>"PNG"</button>
        </span>
    }
}
