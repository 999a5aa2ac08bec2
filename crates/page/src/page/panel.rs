//! A panel of the page as one value: its name in a link (`?panels=kv`) is the one spelling
//! every other id is made from: the section's test id (`kv-panel`), its heading's id
//! (`kv-h`), its Show/Hide button's test id (`toggle-kv`) and its badge in the taxonomy
//! (`panel-kv`). Its title sits beside it, so the page's shell, the link, the taxonomy
//! (which gives each panel its row) and the tests read the same table.

use strum::{Display, EnumString, IntoStaticStr, VariantArray};

/// The page's panels, in the page's order.
#[derive(EnumString, IntoStaticStr, Display, VariantArray)]
#[strum(serialize_all = "kebab-case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
        match self {
            Panel::Prompt => "Prompt",
            Panel::Dist => "Next-token distribution",
            Panel::LessonKnobs => "Decoding knobs",
            Panel::Knobs => "More knobs",
            Panel::Chain => "Sampling chain",
            Panel::Beam => "Beam search",
            Panel::Kv => "KV cache",
            Panel::Inside => "Inside the step",
            Panel::Toy => "Toy logits",
            Panel::Quant => "Quantization",
            Panel::Spec => "Speculative decoding",
            Panel::Batch => "Batching and the two regimes",
            Panel::Compare => "Same θ, different config",
            Panel::Taxonomy => "The complete inference taxonomy",
            Panel::Lesson => "Lesson track",
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
