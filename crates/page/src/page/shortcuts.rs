//! What a key does on the page (outside text fields; the help overlay lists it).

/// What a key does on the page (outside text fields; see the help overlay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    Step,
    RunPause,
    Rewind,
    Reset,
    FocusTemperature,
    FocusTopK,
    ToggleScale,
    Help,
    /// The lesson track's next / previous step (a presenter's clicker sends PageDown/Up).
    LessonNext,
    LessonPrev,
}

impl Shortcut {
    /// The shortcut of `key`; arrow keys belong to a focused slider.
    pub fn for_key(key: &str, on_slider: bool) -> Option<Shortcut> {
        Some(match key {
            "n" => Shortcut::Step,
            "ArrowRight" if !on_slider => Shortcut::Step,
            "p" => Shortcut::RunPause,
            "b" => Shortcut::Rewind,
            "ArrowLeft" if !on_slider => Shortcut::Rewind,
            "x" => Shortcut::Reset,
            "t" => Shortcut::FocusTemperature,
            "k" => Shortcut::FocusTopK,
            "l" => Shortcut::ToggleScale,
            "?" => Shortcut::Help,
            "PageDown" | "." => Shortcut::LessonNext,
            "PageUp" | "," => Shortcut::LessonPrev,
            _ => return None,
        })
    }
}

/// A row of the help overlay: the keys (alternatives, joined by the language's "or"), the
/// message's key (`shortcut-<key>`, its words in every language) and its English words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortcutHelp {
    pub keys: &'static [&'static str],
    pub key: &'static str,
    pub action: &'static str,
}

const fn row(
    keys: &'static [&'static str],
    key: &'static str,
    action: &'static str,
) -> ShortcutHelp {
    ShortcutHelp { keys, key, action }
}

/// The help overlay's rows, in its order.
pub const SHORTCUT_HELP: [ShortcutHelp; 11] = [
    row(
        &["n", "→"],
        "step",
        "step one token (one beam level in beam search)",
    ),
    row(&["p"], "run", "run / pause"),
    row(&["b", "←"], "rewind", "rewind one token"),
    row(&["x"], "reset", "reset to the prompt"),
    row(
        &["t"],
        "temperature",
        "focus the temperature slider (then ← → to move it)",
    ),
    row(&["k"], "top-k", "focus top-k"),
    row(&["l"], "scale", "switch probability / log-probability"),
    row(
        &["PageDown / PageUp", ". / ,"],
        "lesson",
        "the lesson track's next / previous step (opens it)",
    ),
    row(&["Tab / Shift+Tab"], "tab", "move between controls"),
    row(&["?"], "help", "show this help"),
    row(&["Esc"], "escape", "close this help; leave a text field"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::Scale;

    #[test]
    fn keys_map_to_shortcuts_and_arrows_stay_with_sliders() {
        assert_eq!(Shortcut::for_key("n", false), Some(Shortcut::Step));
        assert_eq!(Shortcut::for_key("ArrowRight", false), Some(Shortcut::Step));
        assert_eq!(Shortcut::for_key("ArrowRight", true), None);
        assert_eq!(Shortcut::for_key("ArrowLeft", true), None);
        assert_eq!(Shortcut::for_key("b", true), Some(Shortcut::Rewind));
        assert_eq!(Shortcut::for_key("q", false), None);
        assert_eq!(
            Shortcut::for_key("PageDown", false),
            Some(Shortcut::LessonNext)
        );
        assert_eq!(Shortcut::for_key(",", true), Some(Shortcut::LessonPrev));
        assert_eq!(Scale::Probability.toggled().toggled(), Scale::Probability);
        assert_eq!(Scale::Probability.toggled(), Scale::LogProbability);
    }
}
