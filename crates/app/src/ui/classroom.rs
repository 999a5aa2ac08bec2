//! The presenter's side of a classroom room (`decoding-explorer classroom`, issue 48). When
//! the page is served by `classroom` (its copy of the page carries a `<meta>` mark), the class round's panel
//! runs a room instead of a typed tally: the page creates the room (or joins again the one
//! its link names, with the secret it kept in this browser), shows the join address, the
//! code and the QR code, opens a round at each new text, asks the server for the tally at
//! Reveal, draws it against the model as a typed tally is drawn, and sends each student's
//! numbers back. The frames are `decoding_page::page::room`'s.

use super::class::whole;
use super::state::Ui;
use decoding_page::i18n::{tr, Lang};
use decoding_page::page::class_mode::{Phase, RoundError};
use decoding_page::page::piece_text;
use decoding_page::page::room::*;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The room as the presenter's page knows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoomState {
    pub code: String,
    pub join: String,
    pub qr_svg: String,
    pub round: u32,
    pub context: String,
    pub open: bool,
    pub students: usize,
    pub guessed: usize,
    /// The step whose drawn token the students were told.
    pub announced: Option<usize>,
    /// The vocabulary the server reads guesses with.
    pub vocab: usize,
    /// A text the server refused to open a round at (too long): no round there.
    pub refused: Option<String>,
}

/// A text or a whole number in a [`Note`].
#[derive(Debug, Clone)]
enum Arg {
    Text(String),
    Whole(u64),
}

/// What the room tells the presenter: a message of the page (`class.ftl`) and its arguments.
/// The class's error signal holds its English (what the rest of the page reads); the note is
/// kept beside it so that the panel says it in the language in force ([`error_text`]).
#[derive(Debug, Clone)]
struct Note {
    id: &'static str,
    args: Vec<(&'static str, Arg)>,
}

thread_local! {
    /// The last note told, with its English.
    static TOLD: std::cell::RefCell<Option<(String, Note)>> = const { std::cell::RefCell::new(None) };
}

impl Note {
    fn new(id: &'static str) -> Note {
        Note {
            id,
            args: Vec::new(),
        }
    }

    fn text(mut self, name: &'static str, v: impl Into<String>) -> Note {
        self.args.push((name, Arg::Text(v.into())));
        self
    }

    fn whole(mut self, name: &'static str, n: u64) -> Note {
        self.args.push((name, Arg::Whole(n)));
        self
    }

    /// Its arguments, whole numbers written by `whole`.
    fn args(&self, whole: impl Fn(u64) -> String) -> Vec<(&'static str, String)> {
        let arg = |a: &Arg| match a {
            Arg::Text(t) => t.clone(),
            Arg::Whole(n) => whole(*n),
        };
        self.args.iter().map(|(k, a)| (*k, arg(a))).collect()
    }

    /// Its English (whole numbers ungrouped, as the page always wrote them), kept with it:
    /// the text for the error signal.
    fn told(self) -> String {
        let english = tr(Lang::En).fmt(self.id, &self.args(|n| n.to_string()));
        TOLD.with(|t| *t.borrow_mut() = Some((english.clone(), self)));
        english
    }
}

/// The class panel's error in the language in force: a note of the room's, a round's error,
/// else as it came (the classroom server's own words).
pub fn error_text(ui: &Ui, error: &str) -> String {
    if let Some(e) = RoundError::from_english(error) {
        return ui.t(e.id());
    }
    let note = TOLD.with(|t| {
        t.borrow()
            .as_ref()
            .filter(|(english, _)| english == error)
            .map(|(_, note)| note.clone())
    });
    match note {
        Some(n) => ui.tf(n.id, &n.args(|v| whole(ui, v))),
        None => error.to_string(),
    }
}

/// Why the room cannot serve this page's model (its vocabulary is not the server's).
fn vocab_mismatch(ui: &Ui, room: &RoomState) -> Option<Note> {
    let mine = ui
        .model
        .info
        .with(|i| i.as_ref().map(|i| i.config.vocab_size))?;
    (mine != room.vocab).then(|| {
        Note::new("room-err-vocab")
            .whole("vocab", room.vocab as u64)
            .whole("mine", mine as u64)
    })
}

fn storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

fn key_name(code: &str) -> String {
    format!("decoding-explorer-room-key:{code}")
}

async fn fetch_json(url: &str, post: bool) -> Result<serde_json::Value, String> {
    let init = web_sys::RequestInit::new();
    init.set_method(if post { "POST" } else { "GET" });
    let resp = JsFuture::from(window().fetch_with_str_and_init(url, &init))
        .await
        .map_err(|e| format!("{e:?}"))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "not a response")?;
    if !resp.ok() {
        let text = JsFuture::from(resp.text().map_err(|e| format!("{e:?}"))?)
            .await
            .ok()
            .and_then(|t| t.as_string())
            .unwrap_or_default();
        return Err(format!("{} {text}", resp.status()));
    }
    let text = JsFuture::from(resp.text().map_err(|e| format!("{e:?}"))?)
        .await
        .map_err(|e| format!("{e:?}"))?;
    serde_json::from_str(&text.as_string().unwrap_or_default()).map_err(|e| e.to_string())
}

/// Whether the page is served by `classroom` (its copy of the page carries
/// `<meta name="decoding-classroom">`; a plain server's does not, and no request is made to
/// find out); if so, the room starts.
pub fn probe(ui: Ui) {
    let served = window()
        .document()
        .and_then(|d| {
            d.query_selector("meta[name=decoding-classroom]")
                .ok()
                .flatten()
        })
        .is_some();
    ui.views.class.served.set(Some(served));
    if served {
        start(ui);
    }
}

/// The HTTP status of a GET (an error: no answer at all).
async fn status_of(url: &str) -> Result<u16, String> {
    let resp = JsFuture::from(window().fetch_with_str(url))
        .await
        .map_err(|e| format!("{e:?}"))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "not a response")?;
    Ok(resp.status())
}

/// Joins the link's room with the secret kept here; creates one only where the server says
/// the room is gone or the secret is not its presenter's (an unanswered check retries: a
/// Wi-Fi blip must not make rooms).
fn start(ui: Ui) {
    let code = ui.shell.page.with_untracked(|p| p.room.clone());
    let key = code
        .as_ref()
        .and_then(|c| storage().and_then(|s| s.get_item(&key_name(c)).ok().flatten()));
    let (Some(code), Some(key)) = (code, key) else {
        return create(ui);
    };
    leptos::task::spawn_local(async move {
        match status_of(&format!("/api/room?code={code}&key={key}")).await {
            Ok(200) => connect(ui, code, key),
            Ok(403 | 404) => create(ui),
            _ => set_timeout(move || start(ui), std::time::Duration::from_secs(2)),
        }
    });
}

fn create(ui: Ui) {
    leptos::task::spawn_local(async move {
        let keys = fetch_json("/api/rooms", true)
            .await
            .and_then(|v| serde_json::from_value::<RoomKeys>(v).map_err(|e| e.to_string()));
        match keys {
            Ok(k) => {
                if let Some(s) = storage() {
                    let _ = s.set_item(&key_name(&k.code), &k.key);
                }
                ui.shell.page.update(|p| p.room = Some(k.code.clone()));
                connect(ui, k.code, k.key);
            }
            Err(e) => ui
                .views
                .class
                .error
                .set(Some(Note::new("room-err-create").text("why", e).told())),
        }
    });
}

/// Sends a frame to the room.
pub fn send(ui: Ui, m: &FromPresenter) {
    let text = serde_json::to_string(m).unwrap_or_default();
    ui.views.class.socket.with_value(|s| {
        if let Some(s) = s {
            let _ = s.send_with_str(&text);
        }
    });
}

fn connect(ui: Ui, code: String, key: String) {
    let loc = window().location();
    let scheme = if loc.protocol().ok().as_deref() == Some("https:") {
        "wss"
    } else {
        "ws"
    };
    let host = loc.host().unwrap_or_default();
    let url = format!("{scheme}://{host}/ws/presenter?code={code}&key={key}");
    let Ok(ws) = web_sys::WebSocket::new(&url) else {
        return;
    };
    let opened = StoredValue::new(false);
    let on_open = Closure::<dyn FnMut()>::new(move || opened.set_value(true));
    ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            if let Some(m) = e
                .data()
                .as_string()
                .and_then(|t| serde_json::from_str::<ToPresenter>(&t).ok())
            {
                on_frame(ui, m);
            }
        });
    ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let on_close = Closure::<dyn FnMut(web_sys::CloseEvent)>::new(move |e: web_sys::CloseEvent| {
        let class = ui.views.class;
        class.socket.set_value(None);
        let retry = |f: Box<dyn FnOnce()>| set_timeout(f, std::time::Duration::from_secs(2));
        if !opened.get_value() {
            // Refused or unreachable: the check says which (and makes a room only when
            // this one is gone).
            retry(Box::new(move || start(ui)));
        } else if e.reason().contains("another tab") {
            class.room.set(None);
            class
                .error
                .set(Some(Note::new("room-err-other-tab").told()));
        } else if e.code() == 1000 {
            class.room.set(None);
            let closed = Note::new("room-err-closed").text("reason", e.reason());
            class.error.set(Some(closed.told()));
        } else {
            class.room.update(|r| {
                if let Some(r) = r {
                    r.open = false
                }
            });
            let (code, key) = (code.clone(), key.clone());
            retry(Box::new(move || connect(ui, code, key)));
        }
    });
    ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    on_close.forget();
    ui.views.class.socket.set_value(Some(ws));
}

fn on_frame(ui: Ui, m: ToPresenter) {
    let class = ui.views.class;
    match m {
        ToPresenter::Room {
            code,
            join,
            qr_svg,
            round,
            context,
            score,
            vocab,
            open,
            students,
            guessed,
        } => {
            // A reloaded page takes the room's score back; a reveal asked for before the
            // connection dropped is asked again (`open_rounds`).
            class.mode.update(|m| {
                if m.score.rounds < score.rounds {
                    m.score = score;
                }
                if matches!(m.phase, Phase::Tokenizing { .. }) {
                    m.phase = Phase::Guessing;
                }
            });
            let announced = class
                .room
                .with_untracked(|r| r.as_ref().and_then(|r| r.announced));
            class.room.set(Some(RoomState {
                code,
                join,
                qr_svg,
                round,
                context,
                open,
                students,
                guessed,
                announced,
                vocab,
                refused: None,
            }));
        }
        ToPresenter::Count { students, guessed } => class.room.update(|r| {
            if let Some(r) = r {
                r.students = students;
                r.guessed = guessed;
            }
        }),
        ToPresenter::Tally {
            round,
            counts,
            dropped,
        } => on_tally(ui, round, counts, dropped),
        ToPresenter::Refused { message } => {
            // A round the server would not open: none at this text (Reveal would draw the
            // last round's guesses here).
            class.room.update(|r| {
                if let Some(r) = r {
                    r.open = false;
                    r.refused = Some(r.context.clone());
                }
            });
            class.error.set(Some(message));
        }
    }
}

/// The room's tally: drawn against the logits of the text it was asked at (a tally for
/// another text, or an empty one, opens the round again).
fn on_tally(ui: Ui, round: u32, counts: Vec<(u32, u32)>, dropped: Vec<String>) {
    let class = ui.views.class;
    // The round the page opened (a refused Open leaves the server at the one before).
    let ours = class.room.with_untracked(|r| {
        r.as_ref()
            .is_some_and(|r| r.round == round && vocab_mismatch(&ui, r).is_none())
    });
    class.room.update(|r| {
        if let Some(r) = r {
            r.open = false
        }
    });
    // Only the tally asked for, at the text it was asked at.
    let asked = class.mode.with_untracked(|m| match m.phase {
        Phase::Tokenizing { step, .. } => Some(step),
        _ => None,
    });
    let done = ui.gen.next.with_untracked(|n| {
        let n = n
            .as_ref()
            .filter(|n| ours && Some(n.generated.len()) == asked)
            .ok_or_else(|| Note::new("room-err-moved").told())?;
        let step = n.generated.len();
        class
            .mode
            .try_update(|m| m.on_counts(&counts, dropped.clone(), &n.logits, step))
            .unwrap_or(Ok(()))
            .map_err(|e| match (counts.is_empty(), dropped.is_empty()) {
                (true, true) => Note::new("room-err-no-guess").told(),
                (true, false) => Note::new("room-err-no-token")
                    .text("guesses", dropped.join(", "))
                    .told(),
                _ => e,
            })
    });
    if done.is_err() {
        // A new round at this text (`open_rounds` opens it).
        class.mode.update(|m| m.phase = Phase::Guessing);
        class.room.update(|r| {
            if let Some(r) = r {
                r.context.clear()
            }
        });
    }
    class.error.set(done.err());
    results(ui);
}

/// Each guessed token's numbers to the room, for the students' own results.
fn results(ui: Ui) {
    let frame = ui.views.class.mode.with_untracked(|m| match &m.phase {
        Phase::Revealed(r) => Some(FromPresenter::Results {
            tokens: r
                .reveal
                .rows
                .iter()
                .map(|x| TokenNumbers {
                    token: x.token,
                    p: x.model,
                    rank: x.rank,
                    share: x.class,
                })
                .collect(),
            model_top: piece_text(&ui.piece(r.model_top), false, None),
        }),
        _ => None,
    });
    if let Some(f) = frame {
        send(ui, &f);
    }
}

/// The text so far and the step, when the transcript, the logits and the link agree on it
/// (while a link's tokens are replayed, the text passes through shorter ones: no round
/// opens there).
pub fn position(ui: &Ui) -> Option<(String, usize)> {
    let step = ui
        .gen
        .next
        .with(|n| n.as_ref().map(|n| n.generated.len()))?;
    if ui.shell.page.with(|p| p.steps as usize) != step {
        return None;
    }
    ui.gen.transcript.with(|t| {
        t.as_ref()
            .filter(|t| t.steps.len() == step)
            .map(|t| (format!("{}{}", t.prompt_text, t.generated_text), step))
    })
}

/// The model's most likely tokens as words a student may pick (blank and byte pieces
/// left out), in the order the room sorts them (alphabetical: no hint of the ranking).
fn choices(ui: &Ui) -> Vec<String> {
    let ids = ui.gen.next.with_untracked(|n| {
        n.as_ref().map_or_else(Vec::new, |n| {
            let mut ids: Vec<u32> = (0..n.logits.len() as u32).collect();
            ids.sort_by(|a, b| n.logits[*b as usize].total_cmp(&n.logits[*a as usize]));
            ids.truncate(12);
            ids
        })
    });
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let p = ui.piece(id).replace('▁', " ");
        let w = p.trim();
        if !w.is_empty()
            && !w.starts_with("<")
            && !w.chars().any(char::is_control)
            && !out.iter().any(|o| o == w)
        {
            out.push(w.to_string());
        }
        if out.len() == 4 {
            break;
        }
    }
    out
}

/// While the panel shows a room: a new round opens at each new text (the students told
/// the token drawn first); a reloaded page at the same text keeps the round and its
/// guesses.
pub fn open_rounds(ui: Ui) {
    let class = ui.views.class;
    Effect::new(move |_| {
        let guessing = class.mode.with(|m| matches!(m.phase, Phase::Guessing));
        // No rounds while the model runs on its own (a round a token would flood the room).
        if ui.gen.running.get() {
            return;
        }
        let Some((context, step)) = position(&ui) else {
            return;
        };
        let Some(room) = class.room.get() else { return };
        match vocab_mismatch(&ui, &room) {
            Some(why) => return class.error.set(Some(why.told())),
            None if class.error.with(|e| {
                e.as_deref()
                    .is_some_and(|e| e.starts_with("The classroom server reads"))
            }) =>
            {
                class.error.set(None)
            }
            None => {}
        }
        if !guessing
            || (room.open && room.context == context)
            || room.refused.as_ref() == Some(&context)
        {
            return;
        }
        // Revealed at this text before the page reloaded: reveal it again (the guesses are
        // kept) rather than open a new round over them.
        if !room.open && room.round > 0 && room.context == context {
            reveal(ui);
            return;
        }
        let drawn = class.mode.with_untracked(|m| {
            m.last
                .as_ref()
                .filter(|r| r.step + 1 == step)
                .and_then(|r| r.drawn)
        });
        if let Some(d) = drawn.filter(|_| room.announced != Some(step)) {
            let score = class.mode.with_untracked(|m| m.score);
            send(
                ui,
                &FromPresenter::Drawn {
                    piece: piece_text(&ui.piece(d), false, None),
                    score,
                },
            );
        }
        send(
            ui,
            &FromPresenter::Open {
                context: context.clone(),
                choices: choices(&ui),
            },
        );
        class.room.update(|r| {
            if let Some(r) = r {
                r.open = true;
                r.context = context;
                r.guessed = 0;
                r.round += 1;
                r.announced = Some(step);
            }
        });
    });
}

/// Reveal in a room: the server closes the round and sends its tally.
pub fn reveal(ui: Ui) {
    let Some(step) = ui
        .gen
        .next
        .with_untracked(|n| n.as_ref().map(|n| n.generated.len()))
    else {
        return;
    };
    if ui
        .views
        .class
        .mode
        .try_update(|m| m.ask_room(step))
        .unwrap_or(false)
    {
        ui.views.class.error.set(None);
        send(ui, &FromPresenter::Reveal);
    }
}
