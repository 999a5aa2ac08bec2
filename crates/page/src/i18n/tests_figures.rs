//! The figures area checked: each figure built from the export tests' data draws its words
//! in Chinese (its SVG's texts, titles and tooltips hold CJK and none of the English), and
//! in English exactly the texts the export tests read.

use super::*;
use crate::export::charts::tests::step;
use crate::export::figures::tests::sweep_view;
use crate::export::panels::tests::column;
use crate::export::tests::{four_nodes, greedy_off_the_tree, grid_config};
use crate::export::{self, Drawing};
use crate::geometry::batching::tests::{row, sim};
use crate::protocol::*;
use decoding_engine::serving::batching::Policy;
use decoding_engine::serving::roofline::Roof;

/// What a reader of the SVG sees: its texts, its tooltips (`<title>`s) and its label.
fn words(d: &Drawing) -> String {
    let svg = d.svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let mut out: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text") || n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .collect();
    out.extend(doc.root_element().attribute("aria-label"));
    out.join("\n")
}

/// `d` in Chinese: some CJK, and none of `english` (any case) in what a reader sees.
fn chinese(name: &str, d: &Drawing, english: &[&str]) {
    let w = words(d);
    assert!(
        w.chars().any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c)),
        "{name}: no CJK in {w}"
    );
    let lower = w.to_lowercase();
    for e in english {
        assert!(
            !lower.contains(&e.to_lowercase()),
            "{name}: {e:?} still English in {w}"
        );
    }
}

/// `d` in English holds each of `texts` as the export tests read them.
fn english(name: &str, d: &Drawing, texts: &[&str]) {
    let w = words(d);
    for t in texts {
        assert!(w.contains(t), "{name}: no {t:?} in {w}");
    }
}

fn piece(id: u32) -> String {
    format!("t{id}")
}

fn serve_view() -> ServeView {
    ServeView {
        slots: 1,
        seed: 1,
        requests: vec![(4, 3), (5, 3)],
        continuous: sim(),
        static_: sim(),
    }
}

#[test]
fn the_distribution_and_the_chain_in_chinese() {
    let t = crate::geometry::distribution::tests::trace();
    for scale in [
        crate::page::Scale::Probability,
        crate::page::Scale::LogProbability,
    ] {
        let en = export::distribution(&t, &piece, 4, scale, Lang::En);
        english("distribution", &en, &["final p", "top-p's running sum"]);
        assert_eq!(
            en.title,
            "Next-token distribution at step 3: entropy 1.000 nats, 3 tokens kept"
        );
        let zh = export::distribution(&t, &piece, 4, scale, Lang::ZhCn);
        chinese(
            "distribution",
            &zh,
            &[
                "probability",
                "token",
                "final p",
                "chosen",
                "before removal",
                "running sum",
                "nats",
                "kept",
                "step",
            ],
        );
    }
    let mut toy = crate::geometry::distribution::tests::trace();
    toy.step = None;
    let en = export::distribution(&toy, &piece, 4, crate::page::Scale::Probability, Lang::En);
    assert_eq!(en.title, "Toy distribution: entropy 1.000 nats");
    let es = export::distribution(&toy, &piece, 4, crate::page::Scale::Probability, Lang::Es);
    assert_eq!(es.title, "Distribución de juguete: entropía 1,000 nats");

    let top_k = crate::geometry::chain::tests::stage;
    let mut neutral = top_k();
    neutral.stage = decoding_engine::decode::sampling::Stage::parse("min_p").unwrap();
    neutral.active = false;
    let mut t = crate::geometry::distribution::tests::trace();
    t.stages = vec![top_k(), neutral];
    let en = export::stages(&t, &piece, Lang::En);
    english(
        "stages",
        &en,
        &[
            "The sampling chain, stage by stage",
            "Neutral here (no change): min_p",
        ],
    );
    let zh = export::stages(&t, &piece, Lang::ZhCn);
    chinese(
        "stages",
        &zh,
        &[
            "sampling chain",
            "kept",
            "probability",
            "token",
            "before",
            "after",
            "neutral",
        ],
    );
}

#[test]
fn the_columns_and_the_stages_states_in_chinese() {
    let v = ColumnsView {
        prompt: vec![],
        prompt_text: String::new(),
        columns: vec![column(vec![(7, 0.5), (3, 0.25)]), column(vec![(4, 1.0)])],
        differ: vec![],
    };
    let en = export::columns(&v, &piece, Lang::En);
    english(
        "columns",
        &en,
        &[
            "Same θ, different config — differing knobs: none",
            "Column 1 (defaults)",
            "0 tokens; next: entropy 1.000 nats over 3 kept tokens",
            "0.500",
        ],
    );
    let zh = export::columns(&v, &piece, Lang::ZhCn);
    chinese(
        "columns",
        &zh,
        &[
            "config", "knobs", "none", "column", "defaults", "tokens", "nats",
        ],
    );

    use decoding_engine::decode::sampling::{Cut, Stage};
    let miro = Stage::parse("mirostat").unwrap();
    let mu = |mu| step(vec![(miro, Cut::default().with("mu", mu))]);
    let steps = [mu(6.0), mu(5.5)];
    let en = export::stage_states(&steps, Lang::En);
    english(
        "states",
        &en[0],
        &["mirostat over the steps", "step", "value"],
    );
    let zh = export::stage_states(&steps, Lang::ZhCn);
    chinese("states", &zh[0], &["over the steps", "step", "value"]);
}

#[test]
fn the_beam_tree_and_the_kv_cache_in_chinese() {
    let mut nodes = four_nodes(2);
    nodes[1].status = decoding_engine::decode::beam::NodeStatus::Pruned;
    nodes[3].status = decoding_engine::decode::beam::NodeStatus::Finished;
    let greedy = greedy_off_the_tree();
    let en = export::beam_tree(&nodes, Some(3), greedy, &piece, Lang::En);
    english(
        "beam",
        &en,
        &[
            "Beam tree: 4 nodes over 2 levels (Σ log p beside each)",
            "depth → (tokens generated)",
            "the prompt — log p",
            "(finished)",
            "(pruned)",
            "cumulative log p -2.250 (pruned from the beam)",
        ],
    );
    let zh = export::beam_tree(&nodes, Some(3), greedy, &piece, Lang::ZhCn);
    chinese(
        "beam",
        &zh,
        &[
            "beam tree",
            "nodes",
            "levels",
            "depth",
            "prompt",
            "cumulative",
            "finished",
            "pruned",
            "greedy",
        ],
    );
    // Its classes and data stay the page's (English) names.
    assert!(zh.svg().contains(r#"data-status="finished""#));

    let cfg = decoding_engine::Config {
        seq_len: 2048,
        ..grid_config()
    };
    let en = export::kv(&cfg, 1500, Lang::En);
    english(
        "kv",
        &en,
        &[
            "The KV cache: 1500 of 2048 positions, 2 layers",
            "n = 1500 holds 96,000 bytes",
            "positions cached n",
            "this sequence",
        ],
    );
    let zh = export::kv(&cfg, 1500, Lang::ZhCn);
    chinese(
        "kv",
        &zh,
        &[
            "the kv cache",
            "positions",
            " layers",
            "bytes",
            "holds",
            "sequence",
        ],
    );
    assert!(words(&zh).contains("1,500"), "{}", words(&zh));
    let es = export::kv_grid(&cfg, 1500, Lang::Es);
    assert_eq!(es.title, "La caché KV: 1500 de 2048 posiciones, 2 capas");
}

#[test]
fn the_quant_and_speculative_bars_in_chinese() {
    let q = QuantView {
        position: 7,
        shape: None,
        precisions: vec![],
        tokens: vec![QuantToken {
            id: 1,
            piece: "a".into(),
            p: [0.5, 0.45, 0.4, 0.25],
        }],
        row: WeightRowView {
            label: "w".into(),
            ..Default::default()
        },
        f32_is_dequantized: false,
        file: None,
    };
    let en = export::quant(&q, Lang::En);
    english(
        "quant",
        &en,
        &["The same θ at four precisions, position 7", "q4 25.0%"],
    );
    let zh = export::quant(&q, Lang::ZhCn);
    chinese("quant", &zh, &["same", "precisions", "position"]);
    let es = export::quant(&q, Lang::Es);
    assert!(words(&es).contains("q4 25,0%"), "{}", words(&es));

    let p = crate::export::charts::tests::spec_position_x();
    let en = export::spec_position(0, &p, Lang::En);
    english(
        "spec",
        &en,
        &[
            "Draft 1: \"x\", Σ min(p, q) = 0.500",
            "p 0.600 · q 0.300 · residual 0.300",
            "p 0.200 · q 0.500",
            "p (the model)",
            "q (the draft)",
        ],
    );
    let zh = export::spec_position(0, &p, Lang::ZhCn);
    chinese("spec", &zh, &["draft", "residual", "the model"]);
    assert!(words(&zh).contains("min(p, q)"));
}

#[test]
fn throughput_the_roofline_and_the_timelines_in_chinese() {
    // The export test's sweep, its B = 16 prefill at 2,000 tokens/s (grouped in Chinese).
    let mut v = sweep_view();
    v.rows[2] = row(16, 2000.0, 50.0);
    let en = export::sweep(&v, Lang::En);
    english(
        "sweep",
        &en,
        &[
            "Batching and the two regimes",
            "Tokens per second against batch size B (cpu)",
            "B = 16: prefill 2000 tokens/s",
            "B = 1: decode 10 tokens/s",
            "Roofline of this machine: ridge 10.0 FLOP/byte",
            "arithmetic intensity, FLOP per byte (log)",
            "(20 % of the roof there)",
            "prefill at B (P…)",
            "ridge 10.0",
        ],
    );
    let zh = export::sweep(&v, Lang::ZhCn);
    chinese(
        "sweep",
        &zh,
        &[
            "batching",
            "regimes",
            "tokens per second",
            "batch size",
            "prefill",
            "decode",
            "tokens/s",
            "roofline",
            "ridge",
            "arithmetic",
            "per byte",
            "FLOP/byte",
            "of the roof",
        ],
    );
    assert!(words(&zh).contains("2,000"), "{}", words(&zh));

    let s = serve_view();
    let en = export::serve(&s, Lang::En);
    english(
        "serve",
        &en,
        &[
            "Serving 2 requests through 1 slots",
            "static, 1 slots",
            "continuous, 1 slots",
            "request 1: 5-token prompt",
            "waiting",
            "prefill (joins a step)",
        ],
    );
    let zh = export::serve(&s, Lang::ZhCn);
    chinese(
        "serve",
        &zh,
        &[
            "serving",
            "requests",
            "slots",
            "static",
            "continuous",
            "passes",
            "occupancy",
            "request",
            "prompt",
            "arrived",
            "admitted",
            "finished",
            "waiting",
            "prefill",
            "decode",
            "step",
        ],
    );
    let es = export::timeline(&s, Policy::Static, Lang::Es);
    assert!(es.title.starts_with("estático, 1 ranuras"), "{}", es.title);
}

/// A roofline whose measured point lies above its measured roof says so, in Chinese too.
#[test]
fn a_roof_under_measured_says_so_in_chinese() {
    let roof = Roof {
        flops: 1e6,
        bytes_per_s: 1e6,
    };
    let points = [crate::geometry::batching::RoofPoint {
        label: "D1".into(),
        intensity: 1.0,
        flops: 1e9,
        prefill: false,
    }];
    let en = export::roofline("t", roof, &points, "r", Lang::En);
    english("roof", &en, &["the roof was under-measured"]);
    let zh = export::roofline("t", roof, &points, "r", Lang::ZhCn);
    chinese("roof", &zh, &["measured", "roof"]);
}
