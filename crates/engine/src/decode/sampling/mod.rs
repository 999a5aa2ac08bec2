//! Sampling: how a frozen next-token distribution becomes a token (lesson 10, sections 2–3).
//! Every knob is [CONFIG]; logits and probabilities are [STATE].
//!
//! - [`raw`] and [`settings`]: raw values from the CLI, a URL or a slider become validated
//!   [`Settings`] once, with one error per rule.
//! - [`stage`] and [`stages`]: a stage is one value (`StageDef`): its knobs, its rule over a
//!   logits vector and the history, its cut, its state, its place in each profile's order;
//!   one file per stage or family under `stages/`, registered in `stages::REGISTRY`.
//! - [`profile`]: the peers (Hugging Face `generate()`, llama.cpp's sampler chain, the
//!   OpenAI/vLLM parameters) and the lesson; each stage's file gives its place, defaults and
//!   boundary rules under each, citing the peer, and the profile gathers the orders and
//!   defaults from them.
//! - [`chain`]: runs the stages in order and returns a [`Trace`] of every stage's input and
//!   output, the final distribution, entropy, the coin and the token.
//! - [`coin`]: the one seeded source of randomness.

pub mod chain;
pub mod coin;
pub mod knobs;
pub mod profile;
pub mod raw;
pub mod settings;
pub mod stage;
pub mod stages;

pub use chain::{process, History, SamplingError, StageTrace, TokenText, Trace};
pub use coin::{sample_from, stage_draw, step_coin, step_coins};
pub use knobs::{Category, Knob, KnobSpec, KNOBS};
pub use profile::{Profile, Scope};
pub use raw::RawSettings;
pub use settings::{SettingError, Settings, SettingsErrors, Strategy, Value};
pub use stage::{ChainState, Cut, Stage};
