//! The lesson's taxonomy (lesson 10, section 6: "parameters are learned, configuration is
//! chosen, state is transient") as one table: the lesson's rows, every knob (by its
//! [`KnobSpec::category`]) and every other quantity, control and panel the page shows, by
//! the id it carries in the page (`data-testid`). The page's badges, its legend and the
//! lesson's table in the taxonomy panel are all drawn from here, so they cannot disagree;
//! the tests check that every knob and item has its row and that the rows agree with the
//! knobs' own categories.

use crate::page::panel::Panel;
pub use decoding_engine::decode::sampling::knobs::Category;
use decoding_engine::decode::sampling::knobs::{Knob, KnobSpec, KNOBS};

/// A row of the lesson's table (and one this page adds for section 5's knobs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Parameters,
    Shaping,
    Strategy,
    Limits,
    /// Not a row of the lesson's table: the serving knobs of section 5 (precision, the
    /// draft and γ, the batch) and the backend, configuration as much as the others.
    Serving,
    State,
}

/// One row as the page's table shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowSpec {
    pub row: Row,
    /// The lesson's "At inference" cell.
    pub at_inference: &'static str,
    /// The lesson's "Category" cell.
    pub cell: &'static str,
    pub category: Category,
    /// Whether the row is the lesson's (false: this page's addition).
    pub in_lesson: bool,
}

/// The lesson's table, row by row, then the page's one addition.
pub const ROWS: [RowSpec; 6] = [
    RowSpec {
        row: Row::Parameters,
        at_inference: "Parameters θ",
        cell: "[LEARNED], frozen — never change",
        category: Category::Learned,
        in_lesson: true,
    },
    RowSpec {
        row: Row::Shaping,
        at_inference: "Temperature, top-k, top-p, penalties",
        cell: "[CONFIG] (shape sampling)",
        category: Category::Config,
        in_lesson: true,
    },
    RowSpec {
        row: Row::Strategy,
        at_inference: "Strategy (greedy/beam/sampling), beam width k",
        cell: "[CONFIG]",
        category: Category::Config,
        in_lesson: true,
    },
    RowSpec {
        row: Row::Limits,
        at_inference: "Max tokens, stop sequences",
        cell: "[CONFIG]",
        category: Category::Config,
        in_lesson: true,
    },
    RowSpec {
        row: Row::State,
        at_inference: "Logits, probabilities, KV cache",
        cell: "[STATE]",
        category: Category::State,
        in_lesson: true,
    },
    RowSpec {
        row: Row::Serving,
        at_inference: "Precision, draft and γ, batch size, backend (section 5)",
        cell: "[CONFIG]",
        category: Category::Config,
        in_lesson: false,
    },
];

impl Row {
    pub fn spec(self) -> &'static RowSpec {
        ROWS.iter()
            .find(|r| r.row == self)
            .expect("every row is in ROWS")
    }

    pub fn category(self) -> Category {
        self.spec().category
    }

    /// Its name in its messages' ids.
    pub fn key(self) -> &'static str {
        match self {
            Row::Parameters => "parameters",
            Row::Shaping => "shaping",
            Row::Strategy => "strategy",
            Row::Limits => "limits",
            Row::Serving => "serving",
            Row::State => "state",
        }
    }
}

// The table's words in the page's languages (`locales/*/class.ftl`): each English text here
// is its message's English (the tests hold them equal), looked up by these ids.

/// The message of a row's "At inference" cell.
pub fn at_inference_id(row: Row) -> String {
    format!("taxonomy-row-{}", row.key())
}

/// The message of a row's "Category" cell.
pub fn cell_id(row: Row) -> String {
    format!("taxonomy-cell-{}", row.key())
}

/// The message of a category's line in the legend.
pub fn meaning_id(c: Category) -> &'static str {
    match c {
        Category::Learned => "taxonomy-meaning-learned",
        Category::Config => "taxonomy-meaning-config",
        Category::State => "taxonomy-meaning-state",
    }
}

/// What the page has in a row, as [`members`], each with its message's id.
pub fn members_said(row: Row) -> Vec<(String, &'static str)> {
    KNOBS
        .iter()
        .filter(|s| knob_row(s) == row)
        .map(|s| {
            (
                format!("taxonomy-knob-{}", s.name.replace('_', "-")),
                s.label,
            )
        })
        .chain(
            ITEMS
                .iter()
                .filter(|i| i.row == row)
                .map(|i| (format!("taxonomy-item-{}", i.id), i.label)),
        )
        .collect()
}

/// The lesson's row of a knob.
pub fn knob_row(spec: &KnobSpec) -> Row {
    match spec.knob {
        Knob::Strategy
        | Knob::Beams
        | Knob::LengthPenalty
        | Knob::EarlyStopping
        | Knob::NumReturn => Row::Strategy,
        Knob::MaxTokens | Knob::Stop => Row::Limits,
        // T, the truncations, the penalties, logit bias, the seed that draws the coin, the
        // profile whose rules the stages follow and their order all shape sampling.
        _ => Row::Shaping,
    }
}

/// A quantity, control or panel of the page other than the knob table's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Item {
    /// The element's `data-testid` in the page.
    pub id: &'static str,
    pub label: &'static str,
    pub row: Row,
}

const fn item(id: &'static str, label: &'static str, row: Row) -> Item {
    Item { id, label, row }
}

/// Everything the page shows besides the knobs, with its row.
pub const ITEMS: &[Item] = &[
    // θ and what it is made of.
    item(
        "model-summary",
        "the model card: parameters, shapes",
        Row::Parameters,
    ),
    item("model-file", "the checkpoint file (θ)", Row::Parameters),
    item(
        "model-link",
        "a model by link: the list, a URL or a hub repository (θ)",
        Row::Parameters,
    ),
    item(
        "tokenizer-file",
        "the tokenizer (fixed BPE)",
        Row::Parameters,
    ),
    item(
        "config-file",
        "config.json: the architecture θ was trained in (shapes, RoPE base, ε)",
        Row::Parameters,
    ),
    item(
        "quant-weights",
        "a weight row before and after",
        Row::Parameters,
    ),
    item(
        "calc-model",
        "a model's shapes (calculator)",
        Row::Parameters,
    ),
    // Section 5's knobs.
    item("backend-select", "backend", Row::Serving),
    item("precision-select", "weights' precision", Row::Serving),
    item("threads-select", "the engine's threads", Row::Serving),
    item("spec-draft", "draft", Row::Serving),
    item("spec-gamma", "γ (tokens drafted)", Row::Serving),
    item("spec-rule", "acceptance rule", Row::Serving),
    item("batch-size", "batch size B", Row::Serving),
    item("calc-batch", "batch size (calculator)", Row::Serving),
    item("calc-bytes", "bytes per element (calculator)", Row::Serving),
    item("serve-slots", "serving slots", Row::Serving),
    item("serve-requests", "requests in the trace", Row::Serving),
    item("serve-seed", "the trace's seed", Row::Serving),
    item("cmp-columns", "the compared configurations", Row::Serving),
    item("batch-tokens", "tokens per lane", Row::Limits),
    // Transient values.
    item("prompt", "the prompt (the context so far)", Row::State),
    item("transcript", "the transcript", Row::State),
    item("dist-chart", "the next-token distribution", Row::State),
    item("timings", "timings", Row::State),
    item("memory", "memory", Row::State),
    item("chain-charts", "each stage's distribution", Row::State),
    item(
        "stage-states",
        "the stages' state over the steps",
        Row::State,
    ),
    item(
        "constraint-mask",
        "the constraint's mask: Z_t, allowed tokens, its time",
        Row::State,
    ),
    item("beam-tree", "the beam tree", Row::State),
    item("kv-grid", "the KV cache", Row::State),
    item(
        "att-grid",
        "the new token's attention over the cache",
        Row::State,
    ),
    item("lens-grid", "the logit lens, layer by layer", Row::State),
    item(
        "calc-positions",
        "cached positions n (calculator)",
        Row::State,
    ),
    item(
        "cache-compare",
        "the cache comparison's timings",
        Row::State,
    ),
    item("toy-logits", "toy logits", Row::State),
    item("toy-history", "toy history", Row::State),
    item(
        "quant-table",
        "the four precisions' distributions",
        Row::State,
    ),
    item("spec-run", "the speculative run", Row::State),
    item("batch-results", "lanes, throughput, timelines", Row::State),
    item(
        "cmp-view",
        "the compared columns' text and distributions",
        Row::State,
    ),
    item(
        "lesson-caption",
        "the lesson step's live numbers",
        Row::State,
    ),
];

/// The category of a page element by its id: a knob's control (`knob-<name>`, with or
/// without `-value`) or an item. None for an id the table does not know (the page then
/// draws a "[?]" badge, which the end-to-end test fails on).
pub fn category(id: &str) -> Option<Category> {
    row_of(id).map(Row::category)
}

/// The row of a page element by its id (see [`category`]).
pub fn row_of(id: &str) -> Option<Row> {
    if let Some(name) = id.strip_prefix("knob-") {
        let name = name.strip_suffix("-value").unwrap_or(name);
        return KNOBS.iter().find(|s| s.name == name).map(knob_row);
    }
    if let Some(panel) = Panel::from_tag_id(id) {
        return Some(panel_row(panel));
    }
    ITEMS.iter().find(|i| i.id == id).map(|i| i.row)
}

/// A panel's row, by its main content.
pub fn panel_row(panel: Panel) -> Row {
    match panel {
        Panel::Prompt | Panel::Dist | Panel::Kv | Panel::Inside | Panel::Toy | Panel::Lesson => {
            Row::State
        }
        Panel::LessonKnobs | Panel::Knobs | Panel::Chain => Row::Shaping,
        Panel::Beam => Row::Strategy,
        Panel::Quant | Panel::Spec | Panel::Batch | Panel::Compare => Row::Serving,
        Panel::Taxonomy => Row::Parameters,
    }
}

/// What the page has in a row: the knobs' labels, then the items' (not the panels: they
/// are containers, not quantities).
pub fn members(row: Row) -> Vec<&'static str> {
    members_said(row).into_iter().map(|m| m.1).collect()
}

/// One line of the legend for each category.
pub fn meaning(c: Category) -> &'static str {
    match c {
        Category::Learned => "learned by training, frozen at inference: θ never changes",
        Category::Config => "chosen by whoever runs the model: how θ is run",
        Category::State => "produced while running, thrown away after: transient",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_sits_in_a_row_of_its_own_category() {
        for s in KNOBS.iter() {
            assert_eq!(
                knob_row(s).category(),
                s.category,
                "{} is {:?} in the knob table",
                s.name,
                s.category
            );
            assert_eq!(category(&format!("knob-{}", s.name)), Some(s.category));
            assert_eq!(
                category(&format!("knob-{}-value", s.name)),
                Some(s.category)
            );
        }
    }

    #[test]
    fn the_lesson_table_is_the_lessons_five_rows_in_order_and_each_has_members() {
        let lesson: Vec<_> = ROWS.iter().filter(|r| r.in_lesson).collect();
        // Lesson 10, section 6, as written there.
        assert_eq!(lesson.len(), 5);
        assert_eq!(lesson[0].at_inference, "Parameters θ");
        assert_eq!(lesson[0].category, Category::Learned);
        assert_eq!(lesson[4].at_inference, "Logits, probabilities, KV cache");
        assert_eq!(lesson[4].category, Category::State);
        for r in &ROWS {
            assert!(
                r.cell.starts_with(r.category.tag()),
                "{}: {} is not {}",
                r.at_inference,
                r.cell,
                r.category.tag()
            );
            assert!(!members(r.row).is_empty(), "{:?} has nothing", r.row);
        }
        // The lesson's own words land in their rows.
        assert!(members(Row::Shaping).contains(&Knob::Temperature.spec().label));
        assert!(members(Row::Strategy).contains(&Knob::Beams.spec().label));
        assert!(members(Row::Limits).contains(&Knob::Stop.spec().label));
        assert!(members(Row::State).contains(&"the KV cache"));
    }

    #[test]
    fn ids_are_unique_and_unknown_ones_have_no_category() {
        for (i, a) in ITEMS.iter().enumerate() {
            assert!(
                ITEMS[i + 1..].iter().all(|b| b.id != a.id),
                "{} twice",
                a.id
            );
            assert!(
                !a.id.starts_with("knob-"),
                "{}: knob ids come from KNOBS",
                a.id
            );
            assert!(
                !a.id.starts_with("panel-"),
                "{}: panel ids come from Panel",
                a.id
            );
        }
        assert_eq!(category("panel-kv"), Some(Category::State));
        assert_eq!(category("panel-lesson-knobs"), Some(Category::Config));
        assert_eq!(category("panel-nonsense"), None);
        assert_eq!(category("knob-nonsense"), None);
        assert_eq!(category("no-such-thing"), None);
        assert_eq!(category("backend-select"), Some(Category::Config));
        assert_eq!(category("kv-grid"), Some(Category::State));
        assert_eq!(category("model-summary"), Some(Category::Learned));
    }
}
