//! Each panel's chart from its view: the KV cache's bytes, the four precisions, the
//! speculative cycle (the charts whose geometry the page shares are in `figures`, `grids`
//! and `panels`).

use super::plot::*;
use super::*;
use crate::protocol::*;
use decoding_engine::Precision;
use std::fmt::Write as _;

/// The KV cache: its grid as the page draws it, and its bytes against the positions held.
pub fn kv(cfg: &decoding_engine::Config, n: usize, lang: Lang) -> Drawing {
    Drawing::stack(
        &tr(lang).fmt("fig-kv-title", &[]),
        vec![kv_grid(cfg, n, lang), kv_bytes(cfg, n, lang)],
    )
}

/// The KV cache's bytes against the positions held: the formula's line over the context and
/// this sequence's point.
fn kv_bytes(cfg: &decoding_engine::Config, n: usize, lang: Lang) -> Drawing {
    let tr = tr(lang);
    let kv_dim = cfg.kv_dim();
    let bytes = |n: usize| {
        decoding_engine::forward::kv_cache::cache_bytes_formula(
            n as u64,
            cfg.n_layers as u64,
            kv_dim as u64,
            4,
        ) as f64
    };
    let line: Vec<(f64, f64)> = (0..=8)
        .map(|i| {
            let n = cfg.seq_len * i / 8;
            (n as f64, bytes(n))
        })
        .collect();
    let held = match lang {
        Lang::En => decoding_engine::units::thousands(bytes(n) as u64),
        _ => crate::i18n::integer(lang, bytes(n) as u64),
    };
    let title = tr.fmt(
        "fig-kv-bytes-title",
        &[
            ("layers", int(lang, cfg.n_layers)),
            ("dim", int(lang, kv_dim)),
            ("n", int(lang, n)),
            ("bytes", held),
        ],
    );
    let this = tr.fmt("fig-this-sequence", &[]);
    xy(
        &title,
        &tr.fmt("fig-kv-x", &[]),
        &tr.fmt("fig-bytes", &[]),
        &[
            XySeries {
                name: "2·n·N_layers·d·4",
                points: line,
                line: true,
                labels: vec![],
            },
            XySeries {
                name: &this,
                points: vec![(n as f64, bytes(n))],
                line: false,
                labels: vec![format!("n = {}", int(lang, n))],
            },
        ],
        false,
        false,
        lang,
    )
}

/// The width of the bar-row figures (the quant panel's tokens, the speculative panel's
/// positions): narrow, so their 13-unit texts stay near 11 px on a phone.
const ROWS_W: f64 = 400.0;
/// Where the bars start (a token's piece left of them), end, and their values begin.
const BARS_X: f64 = 108.0;
const BARS_END: f64 = 300.0;
/// A bar's empty track.
const TRACK: &str = "#f1f2f6";
/// f32, f16, q8 and q4 (the page's `.q-…`).
const PRECISION_FILLS: [&str; crate::protocol::PRECISIONS] =
    [ACCENT, "#3f9b6b", "#d08a1f", "#b8336a"];
/// p, q and their overlap min(p, q) (the page's `.sbar-…`).
const P_FILL: &str = "#e0a1bd";
const Q_FILL: &str = "#f0c88a";
const MIN_FILL: &str = "#5a6480";

/// A bar of `fraction` of the bars' width at `y`, `h` high, on its track; more fills
/// (fraction, colour) drawn over it from the same start.
fn bar(y: f64, h: f64, fills: &[(f64, &'static str)]) -> Vec<Shape> {
    let w = BARS_END - BARS_X;
    let mut out = vec![Shape::Rect {
        x: BARS_X,
        y,
        w,
        h,
        fill: TRACK,
    }];
    for &(f, fill) in fills {
        out.push(Shape::Rect {
            x: BARS_X,
            y,
            w: w * f.clamp(0.0, 1.0),
            h,
            fill,
        });
    }
    out
}

/// f32, f16, q8 and q4: each token's probability under the four precisions, a row of four
/// bars per token (longest: the largest probability), each with its value.
pub fn quant(q: &QuantView, lang: Lang) -> Drawing {
    const BAR: f64 = 15.0;
    const ROW: f64 = crate::protocol::PRECISIONS as f64 * (BAR + 2.0) + 8.0;
    let max = q.tokens.iter().flat_map(|t| t.p).fold(1e-9, f64::max);
    let mut d = Drawing::new(
        ROWS_W,
        40.0 + q.tokens.len() as f64 * ROW,
        tr(lang).fmt("fig-quant-title", &[("position", int(lang, q.position))]),
    );
    for (k, t) in q.tokens.iter().enumerate() {
        let y = 40.0 + k as f64 * ROW;
        let piece = crate::page::piece_text(&t.piece, true, Some(12));
        let mut shapes = vec![text(4.0, y + 30.0, piece.clone(), 13.0, Anchor::Start)];
        let mut tip = piece;
        for (i, (&p, &fill)) in t.p.iter().zip(&PRECISION_FILLS).enumerate() {
            let name = Precision::ALL[i].name();
            let by = y + i as f64 * (BAR + 2.0);
            let mut marks = bar(by, BAR, &[(p / max, fill)]);
            let value = format!("{name} {}%", num(lang, 100.0 * p, 1));
            marks.push(text(
                BARS_END + 6.0,
                by + 12.0,
                value.clone(),
                13.0,
                Anchor::Start,
            ));
            let _ = write!(tip, "{}{value}", if i == 0 { ": " } else { ", " });
            shapes.push(
                Mark {
                    class: format!("qbar q-{name}"),
                    ..Mark::default()
                }
                .around(marks),
            );
        }
        d.shapes
            .push(Mark::id("quant-token").title(tip).around(shapes));
    }
    d
}

/// The last speculative cycle: a figure per drafted position (see [`spec_position`]), one
/// under the other.
pub fn spec(s: &SpecView, lang: Lang) -> Option<Drawing> {
    let c = s.last.as_ref()?;
    let parts = c
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| spec_position(i, p, lang))
        .collect();
    let title = tr(lang).fmt(
        "fig-spec-title",
        &[
            ("cycle", int(lang, c.index + 1)),
            ("accepted", int(lang, c.accepted)),
            ("drafted", int(lang, c.drafted.len())),
            ("alpha", num(lang, s.alpha, 3)),
        ],
    );
    Some(Drawing::stack(&title, parts))
}

/// Drafted position `i`: its likeliest tokens, each with p (the model) above q (the draft),
/// their overlap min(p, q) dark over both, and its figures; the drafted token's row
/// marked ▸. A draft that is one token (greedy, the match rule) has no q: 1 on its token.
pub fn spec_position(i: usize, p: &SpecPosition, lang: Lang) -> Drawing {
    let tr = tr(lang);
    const BAR: f64 = 10.0;
    const ROW: f64 = 2.0 * (BAR + 1.0) + 22.0;
    let q_of = |b: &SpecBar| b.q.unwrap_or(if b.id == p.token { 1.0 } else { 0.0 });
    let max = p
        .bars
        .iter()
        .map(|b| b.p.max(q_of(b)))
        .fold(1e-12, f64::max);
    let title = tr.fmt(
        "fig-draft-title",
        &[
            ("draft", int(lang, i + 1)),
            ("piece", crate::page::piece_text(&p.piece, true, Some(16))),
            ("overlap", num(lang, p.overlap, 3)),
        ],
    );
    let mut d = Drawing::new(ROWS_W, 40.0 + p.bars.len() as f64 * ROW + 22.0, title);
    for (k, b) in p.bars.iter().enumerate() {
        let y = 40.0 + k as f64 * ROW;
        let q = q_of(b);
        let common = b.p.min(q);
        let drafted = b.id == p.token;
        let piece = crate::page::piece_text(&b.piece, true, Some(12));
        let label = if drafted {
            format!("▸ {piece}")
        } else {
            piece
        };
        let mut shapes = vec![text(4.0, y + 16.0, label, 13.0, Anchor::Start)];
        shapes.extend(bar(
            y,
            BAR,
            &[(b.p / max, P_FILL), (common / max, MIN_FILL)],
        ));
        shapes.extend(bar(
            y + BAR + 1.0,
            BAR,
            &[(q / max, Q_FILL), (common / max, MIN_FILL)],
        ));
        let residual = if b.p > q {
            let r = ("residual", num(lang, b.p - q, 3));
            format!(" · {}", tr.fmt("fig-residual", &[r]))
        } else {
            String::new()
        };
        let (bp, bq) = (num(lang, b.p, 3), num(lang, q, 3));
        let figures = format!("p {bp} · q {bq}{residual}");
        shapes.push(text(
            BARS_X,
            y + 2.0 * BAR + 15.0,
            figures,
            12.0,
            Anchor::Start,
        ));
        let class = if drafted {
            "spec-bar-row drafted"
        } else {
            "spec-bar-row"
        };
        d.shapes.push(
            Mark {
                class: class.into(),
                testid: "spec-bar".into(),
                ..Mark::default()
            }
            .around(shapes),
        );
    }
    let keys = [
        (tr.fmt("fig-p-model", &[]), P_FILL),
        (tr.fmt("fig-q-draft", &[]), Q_FILL),
        ("min(p, q)".to_string(), MIN_FILL),
    ];
    let y = d.height - 10.0;
    legend_with(&mut d, &keys, y);
    d
}

/// The stages' state over the steps: for each stage that recorded named values (a state
/// against its target, a coin, the longest repeat a penalty saw: `Cut::values`), one line
/// per value against the step.
/// Its words in `lang` (the values' names are the stages' own).
pub fn stage_states(
    steps: &[decoding_engine::decode::generation::Step],
    lang: Lang,
) -> Vec<Drawing> {
    let tr = tr(lang);
    let (step, value) = (tr.fmt("fig-step", &[]), tr.fmt("fig-value", &[]));
    let mut stages: Vec<decoding_engine::decode::sampling::Stage> = Vec::new();
    for (st, _) in steps.iter().flat_map(|s| &s.cuts) {
        if !stages.contains(st) {
            stages.push(*st);
        }
    }
    stages
        .into_iter()
        .map(|st| {
            let mut names: Vec<&str> = Vec::new();
            for (_, c) in steps.iter().flat_map(|s| &s.cuts).filter(|(s, _)| *s == st) {
                for n in &c.values {
                    if !names.contains(&n.name.as_str()) {
                        names.push(&n.name);
                    }
                }
            }
            let series: Vec<XySeries> = names
                .iter()
                .map(|name| XySeries {
                    name,
                    points: steps
                        .iter()
                        .enumerate()
                        .filter_map(|(i, s)| {
                            let c = s.cuts.iter().find(|(s, _)| *s == st)?;
                            Some(((i + 1) as f64, c.1.value(name)?))
                        })
                        .collect(),
                    line: true,
                    labels: Vec::new(),
                })
                .collect();
            xy(
                &tr.fmt("fig-states-title", &[("stage", st.to_string())]),
                &step,
                &value,
                &series,
                false,
                false,
                lang,
            )
            .on_page(&format!("state-{st}"))
        })
        .collect()
}

#[cfg(test)]
#[path = "charts_tests.rs"]
pub(crate) mod tests;
