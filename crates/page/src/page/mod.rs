//! The page's state that is plain data, kept out of the components and tested natively:
//! what a link holds (`PageState`), and beside it the link itself (`link`), the compared
//! columns (`compare`), toy logits (`toy`), the KV calculator's presets (`presets`), the
//! keyboard (`shortcuts`), the one token-piece renderer (`pieces`) and a round of the class
//! guessing the next token (`class_round`).

pub mod chain;
pub mod class_mode;
pub mod class_round;
pub mod compare;
pub mod constraints;
pub mod link;
pub mod panel;
pub mod pieces;
pub mod presets;
pub mod room;
pub mod shortcuts;
pub mod toy;

pub use compare::*;
pub use constraints::*;
pub use link::*;
pub use panel::Panel;
pub use pieces::piece_text;
pub use presets::*;
pub use shortcuts::Shortcut;
pub use toy::*;

use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::Precision;
use std::collections::BTreeSet;

pub const DEFAULT_PROMPT: &str = "Once upon a time";

/// How the distribution is drawn; its name is a link's (`scale=logprob`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
pub enum Scale {
    #[strum(serialize = "prob")]
    Probability,
    #[strum(serialize = "logprob")]
    LogProbability,
}

impl Scale {
    /// The other scale (the `l` key).
    pub fn toggled(self) -> Scale {
        match self {
            Scale::Probability => Scale::LogProbability,
            Scale::LogProbability => Scale::Probability,
        }
    }
}

/// Everything a link holds besides the sampling settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PageState {
    pub prompt: String,
    /// Tokens generated (replayed when the link is opened).
    pub steps: u32,
    /// The open panels.
    pub panels: BTreeSet<Panel>,
    pub scale: Scale,
    /// The toy-logits text when toy mode is on.
    pub toy: Option<String>,
    pub backend: BackendChoice,
    /// The weights' precision asked for (None: the file's own).
    pub precision: Option<Precision>,
    /// A speculative run: draft, γ, rule and the cycles run (replayed when the link opens).
    pub spec: Option<SpecLink>,
    /// "Same θ, different config": the columns' settings and the tokens they stepped.
    pub compare: Option<CompareLink>,
    /// The lesson track's step (0-based), when the track is open.
    pub lesson: Option<usize>,
    pub presenter: bool,
    /// A round of the class guessing the next token (`class=1`): the next token is hidden
    /// until the class's guesses are revealed against it (`class_mode`).
    pub class: bool,
    /// The classroom's room the presenter runs (`room=CODE`, with `decoding-explorer
    /// classroom`): a reload joins it again (the presenter's secret stays in the browser).
    pub room: Option<String>,
    /// The model by link (`model=`: a name of the page's list, file URLs or a Hugging Face
    /// repository; `remote::ModelLink`), loaded when the link opens; None for the page's
    /// own model (and for files picked or dropped, which a link cannot carry).
    pub model: Option<String>,
    /// The language the link chose (`lang=zh-CN`); None follows the browser's.
    pub lang: Option<crate::i18n::Lang>,
    /// The colour scheme the link chose (`theme=dark`); None follows the system's
    /// `prefers-color-scheme`.
    pub theme: Option<crate::theme::Scheme>,
    /// The KV calculator's element size in bytes (4 float32, 2 fp16, 1 int8): real models
    /// are served in fp16, the default.
    pub kv_bytes: u8,
}

impl Default for PageState {
    fn default() -> PageState {
        PageState {
            prompt: DEFAULT_PROMPT.to_string(),
            steps: 0,
            panels: [Panel::Chain, Panel::Kv].into_iter().collect(),
            scale: Scale::Probability,
            toy: None,
            backend: BackendChoice::Auto,
            precision: None,
            spec: None,
            compare: None,
            lesson: None,
            presenter: false,
            class: false,
            room: None,
            model: None,
            lang: None,
            theme: None,
            kv_bytes: 2,
        }
    }
}

/// Whether the worker probes the steps: the view inside the step is open in an open KV
/// panel.
pub fn probe_open(page: &PageState) -> bool {
    page.panels.contains(&Panel::Kv) && page.panels.contains(&Panel::Inside)
}
