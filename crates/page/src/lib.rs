//! The Decoding Explorer page's plain logic, shared by its UI thread (crate `decoding-app`)
//! and its engine worker (crate `decoding-worker`), tested natively: the typed messages
//! between them ([`protocol`]), the page's state ([`page`]), the lesson track ([`lesson`]),
//! the page's behaviour on top of them (reactions and controls: [`behaviour`]), the
//! taxonomy, and every figure's geometry and export. No GPU and no browser types: the UI
//! links it without the engine's backends.

pub mod behaviour;
pub mod export;
pub mod finite;
pub mod geometry;
pub mod heap;
pub mod i18n;
pub mod lesson;
pub mod packed;
pub mod page;
pub mod protocol;
pub mod remote;
pub mod taxonomy;
pub mod theme;
pub mod verdict;
