//! A panel of the page as one value: its name in a link (`?panels=kv`) is the one spelling
//! every other id is made from: the section's test id (`kv-panel`), its heading's id
//! (`kv-h`), its Show/Hide button's test id (`toggle-kv`) and its badge in the taxonomy
//! (`panel-kv`). Its title and its row of the lesson's table sit beside it, so the page's
//! shell, the link, the taxonomy and the tests read the same table.

use crate::taxonomy::Row;
use strum::{Display, EnumString, IntoStaticStr, VariantArray};

/// The page's panels, in the page's order.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    EnumString,
    IntoStaticStr,
    Display,
    VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Panel {
    Prompt,
    Dist,
    LessonKnobs,
    Knobs,
    Chain,
    Beam,
    Kv,
    /// Inside the step: attention and the logit lens (within the KV panel).
    Inside,
    Toy,
    Quant,
    Spec,
    Batch,
    Compare,
    Taxonomy,
    Lesson,
}

impl Panel {
    /// The name in a link and in every id made from it.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The panel a link names (`?panels=`), if a link can open it.
    pub fn from_link(name: &str) -> Option<Panel> {
        name.parse().ok().filter(|p: &Panel| p.in_links())
    }

    /// Whether a link opens and closes it (the others are always open, or opened by the
    /// lesson track).
    pub fn in_links(self) -> bool {
        !matches!(
            self,
            Panel::Prompt | Panel::Dist | Panel::LessonKnobs | Panel::Knobs | Panel::Lesson
        )
    }

    /// The section's `data-testid`.
    pub fn test_id(self) -> String {
        format!("{}-panel", self.name())
    }

    /// The heading's `id` (the section is `aria-labelledby` it).
    pub fn heading_id(self) -> String {
        format!("{}-h", self.name())
    }

    /// The Show/Hide button's `data-testid`.
    pub fn toggle_id(self) -> String {
        format!("toggle-{}", self.name())
    }

    /// The id of its badge in the taxonomy.
    pub fn tag_id(self) -> String {
        format!("panel-{}", self.name())
    }

    /// The panel a badge id names (`panel-kv`).
    pub fn from_tag_id(id: &str) -> Option<Panel> {
        id.strip_prefix("panel-")?.parse().ok()
    }

    /// Its heading.
    pub fn title(self) -> &'static str {
        self.spec().0
    }

    /// What it holds, as the taxonomy's table lists it.
    pub fn label(self) -> &'static str {
        self.spec().1
    }

    /// Its row of the lesson's table (by its main content).
    pub fn row(self) -> Row {
        self.spec().2
    }

    fn spec(self) -> (&'static str, &'static str, Row) {
        match self {
            Panel::Prompt => ("Prompt", "prompt and transcript", Row::State),
            Panel::Dist => (
                "Next-token distribution",
                "next-token distribution",
                Row::State,
            ),
            Panel::LessonKnobs => ("Decoding knobs", "decoding knobs", Row::Shaping),
            Panel::Knobs => ("More knobs", "more knobs", Row::Shaping),
            Panel::Chain => ("Sampling chain", "the sampling chain", Row::Shaping),
            Panel::Beam => ("Beam search", "beam search", Row::Strategy),
            Panel::Kv => ("KV cache", "the KV cache", Row::State),
            Panel::Inside => (
                "Inside the step",
                "the new token's attention and the logit lens",
                Row::State,
            ),
            Panel::Toy => ("Toy logits", "toy logits", Row::State),
            Panel::Quant => ("Quantization", "quantization", Row::Serving),
            Panel::Spec => ("Speculative decoding", "speculative decoding", Row::Serving),
            Panel::Batch => ("Batching and the two regimes", "batching", Row::Serving),
            Panel::Compare => (
                "Same θ, different config",
                "same θ, different config",
                Row::Serving,
            ),
            Panel::Taxonomy => (
                "The complete inference taxonomy",
                "the taxonomy",
                Row::Parameters,
            ),
            Panel::Lesson => ("Lesson track", "the lesson track", Row::State),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    #[test]
    fn every_id_comes_back_to_its_panel() {
        for &p in Panel::VARIANTS {
            assert_eq!(Panel::from_tag_id(&p.tag_id()), Some(p));
            assert_eq!(p.name().parse::<Panel>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!(Panel::LessonKnobs.tag_id(), "panel-lesson-knobs");
        assert_eq!(Panel::Kv.toggle_id(), "toggle-kv");
        assert_eq!(Panel::Dist.test_id(), "dist-panel");
    }

    #[test]
    fn a_link_opens_the_ten_panels_that_can_close() {
        let linkable: Vec<&str> = Panel::VARIANTS
            .iter()
            .filter(|p| p.in_links())
            .map(|p| p.name())
            .collect();
        assert_eq!(
            linkable,
            [
                "chain", "beam", "kv", "inside", "toy", "quant", "spec", "batch", "compare",
                "taxonomy"
            ]
        );
        assert_eq!(Panel::from_link("kv"), Some(Panel::Kv));
        assert_eq!(Panel::from_link("dist"), None);
        assert_eq!(Panel::from_link("KV"), None);
        assert_eq!(Panel::from_link("nonsense"), None);
    }
}
