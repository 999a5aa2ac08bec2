//! The panels' figures in the language in force. English keeps them exactly as the page
//! has always written them (no grouping where a figure had none: the e2e tests read them);
//! Chinese and Spanish get their own separators and grouping (`i18n::number`).

use super::super::state::Ui;
use decoding_engine::units::human_bytes;
use decoding_page::geometry::batching::flops_text;
use decoding_page::i18n::Lang;

/// `v` with `decimals` places: English as `format!` writes it, else the language's.
pub fn num(ui: Ui, v: f64, decimals: usize) -> String {
    if ui.lang() == Lang::En {
        format!("{v:.decimals$}")
    } else {
        ui.num(v, decimals)
    }
}

/// A whole number: English ungrouped, as `format!` writes it, else the language's.
pub fn int(ui: Ui, n: u64) -> String {
    if ui.lang() == Lang::En {
        n.to_string()
    } else {
        ui.int(n)
    }
}

/// A figure Rust wrote (`{:.2e}`, `{:+.5}`, a unit's): its decimal point the language's.
pub fn point(ui: Ui, text: String) -> String {
    decoding_page::i18n::point(ui.lang(), text)
}

/// Bytes in the largest binary unit (`human_bytes`), in the language.
pub fn bytes(ui: Ui, n: u64) -> String {
    if ui.lang() == Lang::En {
        human_bytes(n)
    } else if n < 1024 {
        ui.tf("panel-bytes", &[("n", int(ui, n))])
    } else {
        point(ui, human_bytes(n))
    }
}

/// FLOP/s as `flops_text` writes them, in the language.
pub fn flops(ui: Ui, f: f64) -> String {
    point(ui, flops_text(f))
}
