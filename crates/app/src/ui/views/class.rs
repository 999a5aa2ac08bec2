//! The class round's views (issue 48): the round as plain data (`page::class_mode`) and the
//! tally as the presenter types it.

use super::super::classroom::RoomState;
use decoding_page::page::class_mode::ClassMode;
use leptos::prelude::*;

#[derive(Clone, Copy)]
pub struct ClassViews {
    pub mode: RwSignal<ClassMode>,
    /// The guesses as typed ("cat ×5, dog ×3").
    pub tally: RwSignal<String>,
    /// Why the last reveal could not be drawn.
    pub error: RwSignal<Option<String>>,
    /// Whether the page is served by `classroom` (None: not asked yet).
    pub served: RwSignal<Option<bool>>,
    /// The classroom's room, once joined.
    pub room: RwSignal<Option<RoomState>>,
    pub socket: StoredValue<Option<web_sys::WebSocket>, LocalStorage>,
}

impl ClassViews {
    pub fn new() -> ClassViews {
        ClassViews {
            mode: RwSignal::new(ClassMode::default()),
            tally: RwSignal::new(String::new()),
            error: RwSignal::new(None),
            served: RwSignal::new(None),
            room: RwSignal::new(None),
            socket: StoredValue::new_local(None),
        }
    }

    /// Another view opened: the round open goes (the score stays: the class's).
    pub fn clear(&self) {
        self.mode.update(|m| m.phase = Default::default());
        self.error.set(None);
    }
}
