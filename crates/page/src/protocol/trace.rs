//! The sampling chain's trace shaped for drawing.

use decoding_engine::decode::sampling::{Cut, Profile, Stage};
use serde::{Deserialize, Serialize};

/// One stage's effect, summarised for its small before/after chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageView {
    pub stage: Stage,
    pub active: bool,
    pub setting: String,
    /// The peer whose default the setting is (the user left the knob unset).
    pub default_of: Option<Profile>,
    /// Tokens in play after the stage, and how many it removed.
    pub kept: usize,
    pub removed: usize,
    /// The probability mass those removed tokens had entering the stage (top-p's tail).
    pub mass_removed: f64,
    /// Probabilities of `TraceView::chart_ids` entering and leaving the stage.
    pub before: Vec<f32>,
    pub after: Vec<f32>,
    /// Where the stage cut and what it held (its threshold, state, coin), as the engine
    /// recorded it.
    #[serde(default)]
    pub cut: Cut,
    /// The stage that replaced the chain (`StageDef::replaces_chain`) when this one did not run for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<Stage>,
}

/// The sampling chain's trace, shaped for drawing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceView {
    /// Token ids, most likely first by the final distribution (removed ones after, by the
    /// probability they had before removal).
    #[serde(with = "crate::packed")]
    pub order: Vec<u32>,
    /// Final probability of each token, by id.
    #[serde(with = "crate::packed")]
    pub probs: Vec<f32>,
    /// For a removed token: its probability entering the stage that removed it (else 0).
    #[serde(with = "crate::packed")]
    pub ghost: Vec<f32>,
    /// For a removed token: the index in `stages` of the stage that removed it (else
    /// [`TraceView::KEPT`]; one byte a token on the wire: read it with
    /// [`TraceView::removed_by`]).
    #[serde(with = "crate::packed")]
    pub removed_by: Vec<i8>,
    pub stages: Vec<StageView>,
    /// The ids the stage charts show (the most likely entering the chain).
    #[serde(with = "crate::packed")]
    pub chart_ids: Vec<u32>,
    pub kept: usize,
    pub entropy: f64,
    pub effective_tokens: f64,
    pub coin: Option<f64>,
    /// The token the next step would take with this coin.
    pub token: u32,
    pub rank: usize,
    pub prob: f64,
    /// Which generation step this distribution is for (None in toy mode).
    pub step: Option<usize>,
    /// Where an active top-p stage cut, drawn on the chart and listed by the rows.
    pub cut: Option<CutView>,
}

impl TraceView {
    /// `removed_by`'s value for a token no stage removed.
    pub const KEPT: i8 = -1;

    /// The index in `stages` of the stage that removed token `id` (None: kept, or no such
    /// token).
    pub fn removed_by(&self, id: usize) -> Option<usize> {
        self.removed_by
            .get(id)
            .and_then(|&s| usize::try_from(s).ok())
    }
}

/// The top-p stage's view of its input: tokens most likely first with the running sum of
/// their probability (the first `CUT_ROWS`), and the threshold p.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CutView {
    /// The stage's index in `TraceView::stages`.
    pub stage: usize,
    pub p: f64,
    #[serde(with = "crate::packed")]
    pub ids: Vec<u32>,
    #[serde(with = "crate::packed")]
    pub cumulative: Vec<f32>,
}
