//! The page's two colour schemes. The page's own colours are CSS variables (`www/style.css`,
//! `:root` and `:root[data-theme="dark"]`); the figures the export writes carry their colours
//! in the file, so each light colour of a drawing has its dark counterpart here
//! ([`Scheme::ink`], used by `export::Drawing::themed`). A link chooses one (`theme=dark`);
//! without it the page follows the system's `prefers-color-scheme`.
//!
//! The dark colours are checked against their backgrounds with WCAG 2's contrast ratio (text
//! 4.5:1, marks 3:1) in this module's tests, and the page in both schemes by axe in the e2e
//! tests.

/// A colour scheme; its name is a link's (`theme=dark`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::EnumString, strum::IntoStaticStr)]
pub enum Scheme {
    #[default]
    #[strum(serialize = "light")]
    Light,
    #[strum(serialize = "dark")]
    Dark,
}

/// Each colour a drawing uses in the light scheme, and its dark counterpart. Backgrounds
/// become dark, inks light; hues are kept, lightened where a mark sits on the dark ground.
const PAIRS: [(&str, &str); 21] = [
    // Grounds: the drawing's background, tracks and empty slots.
    ("#ffffff", "#1e2029"),
    ("#f1f2f6", "#2a2d39"),
    ("#f0f1f6", "#2a2d39"),
    // Inks: text, axes, grid lines.
    ("#1b1c22", "#e6e7ee"),
    ("#585b6b", "#a9adbd"),
    ("#d5d7e0", "#444857"),
    // Marks: the accent, the chosen token, removed tokens, the error line.
    ("#2f5bd3", "#7d9cf0"),
    ("#e0662f", "#f08a57"),
    ("#c8cad6", "#5b5f70"),
    ("#b3261e", "#ff8a80"),
    // Series and the KV grid's values, greedy's path.
    ("#2e8b57", "#5cc98c"),
    ("#8a4fbf", "#b48ae6"),
    ("#7b4fc9", "#b89af0"),
    ("#3f9b6b", "#6fd09c"),
    ("#d08a1f", "#e8aa4a"),
    ("#b8336a", "#ec6f9f"),
    // The speculative chart's fills.
    ("#e0a1bd", "#a8587c"),
    ("#f0c88a", "#a77d35"),
    ("#5a6480", "#9aa4c4"),
    // The page's `--ok` (greedy's ring) and the presenter's black.
    ("#1f7a3d", "#6fd08f"),
    ("#000000", "#ffffff"),
];

impl Scheme {
    /// The scheme a link names (`light`, `dark`).
    pub fn parse(v: &str) -> Result<Scheme, String> {
        v.parse().map_err(|_| format!("{v:?} is not light or dark"))
    }

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The other scheme (the header's toggle).
    pub fn toggled(self) -> Scheme {
        match self {
            Scheme::Light => Scheme::Dark,
            Scheme::Dark => Scheme::Light,
        }
    }

    /// A drawing's light colour in this scheme. A colour the table does not know stays as
    /// it is (the tests hold every colour the export writes to the table).
    pub fn ink(self, light: &'static str) -> &'static str {
        match self {
            Scheme::Light => light,
            Scheme::Dark => PAIRS
                .iter()
                .find(|(l, _)| l.eq_ignore_ascii_case(light))
                .map_or(light, |&(_, d)| d),
        }
    }

    /// The ground a drawing is painted on in this scheme.
    pub fn ground(self) -> &'static str {
        self.ink("#ffffff")
    }
}

/// The light colours the table knows (for the tests of the export's colours).
pub fn known_light() -> impl Iterator<Item = &'static str> {
    PAIRS.iter().map(|&(l, _)| l)
}

/// WCAG 2's contrast ratio of two `#rrggbb` colours (1 to 21); None for another syntax.
/// <https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio>
pub fn contrast(a: &str, b: &str) -> Option<f64> {
    let (la, lb) = (luminance(a)?, luminance(b)?);
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    Some((hi + 0.05) / (lo + 0.05))
}

/// WCAG 2's relative luminance of `#rrggbb`.
fn luminance(hex: &str) -> Option<f64> {
    let h = hex.strip_prefix('#').filter(|h| h.len() == 6)?;
    let channel = |i: usize| -> Option<f64> {
        let c = u8::from_str_radix(h.get(i..i + 2)?, 16).ok()? as f64 / 255.0;
        Some(if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        })
    };
    Some(0.2126 * channel(0)? + 0.7152 * channel(2)? + 0.0722 * channel(4)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contrast_matches_wcag_worked_values() {
        // Black on white is 21:1, a colour on itself 1:1 (WCAG 2.1's definition).
        assert!((contrast("#000000", "#ffffff").unwrap() - 21.0).abs() < 1e-9);
        assert!((contrast("#777777", "#777777").unwrap() - 1.0).abs() < 1e-12);
        // #767676 on white is the well-known 4.54:1, the lightest grey that passes AA.
        let g = contrast("#767676", "#ffffff").unwrap();
        assert!((g - 4.54).abs() < 0.01, "{g}");
        assert_eq!(contrast("white", "#000000"), None);
        assert_eq!(contrast("#12345", "#000000"), None);
    }

    #[test]
    fn dark_inks_read_on_the_dark_ground() {
        let d = Scheme::Dark;
        for (ink, min) in [("#1b1c22", 4.5), ("#585b6b", 4.5), ("#b3261e", 4.5)] {
            let c = contrast(d.ink(ink), d.ground()).unwrap();
            assert!(c >= min, "{ink} → {}: {c:.2}", d.ink(ink));
            // The light scheme's own pair passes too (nothing was lost in the table).
            let l = contrast(ink, Scheme::Light.ground()).unwrap();
            assert!(l >= min, "light {ink}: {l:.2}");
        }
        // Every mark stands out from the dark ground (WCAG 1.4.11: 3:1 for graphics).
        for (light, dark) in PAIRS.iter().skip(3) {
            let c = contrast(dark, d.ground()).unwrap();
            // The grid lines and removed tokens are meant to recede; every other mark reads.
            let min = if ["#d5d7e0", "#c8cad6"].contains(light) {
                1.5
            } else {
                3.0
            };
            assert!(c >= min, "{light} → {dark}: {c:.2}");
        }
    }

    #[test]
    fn the_table_maps_each_colour_once_and_light_is_the_identity() {
        let mut seen: Vec<String> = known_light().map(str::to_ascii_lowercase).collect();
        seen.sort();
        let n = seen.len();
        seen.dedup();
        assert_eq!(seen.len(), n, "a light colour listed twice");
        assert_eq!(Scheme::Light.ink("#2f5bd3"), "#2f5bd3");
        assert_eq!(Scheme::Dark.ink("#2F5BD3"), "#7d9cf0");
        assert_eq!(Scheme::Dark.ink("#123456"), "#123456");
        assert_eq!(Scheme::parse("dark"), Ok(Scheme::Dark));
        assert!(Scheme::parse("sepia")
            .unwrap_err()
            .contains("light or dark"));
        assert_eq!(Scheme::Dark.toggled(), Scheme::Light);
    }
}
