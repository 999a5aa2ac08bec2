//! The classroom's server: HTTP (the built page, the student page, room creation) and the
//! WebSockets of the presenter and the students, on axum. Every limit of issue 48 is kept
//! here or in `room.rs`: frames of at most [`STUDENT_FRAME`] bytes, text only, each
//! connection's own rate, a join within [`JOIN_WITHIN`], at most [`MAX_ROOMS`] rooms and
//! [`MAX_CONNECTIONS`] connections, idle rooms closed. A bad frame closes its own
//! connection with the reason, and nothing else.

use super::room::{check_guess, Refusal, Room};
use super::socket::{read_frames, reason, writer, Out, Slot, PRESENTER_RATE, STUDENT_RATE};
use crate::error::CliError;
use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use decoding_engine::tokenizer::Tokenizer;
use decoding_page::page::class_round::first_token_after;
use decoding_page::page::piece_text;
use decoding_page::page::room::*;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The most rooms at once (one per presenter), and connections of any kind.
pub const MAX_ROOMS: usize = 16;
pub const MAX_CONNECTIONS: usize = 2_000;
/// The largest frame a student may send (a guess of 64 characters is under 300 bytes).
pub const STUDENT_FRAME: usize = 1024;
/// The presenter's (the text so far, 8,000 characters at most, escaped).
pub const PRESENTER_FRAME: usize = 64 * 1024;
/// A connection that has not joined a room by then is closed.
pub const JOIN_WITHIN: Duration = Duration::from_secs(20);
/// Frames waiting to be written to a student's connection, and to the presenter's (a count
/// after each of 500 guesses in the same second).
const QUEUE: usize = 64;
const PRESENTER_QUEUE: usize = 4096;

pub struct Config {
    pub bind: SocketAddr,
    pub public: SocketAddr,
    pub dist: PathBuf,
    pub tokenizer: Tokenizer,
    pub idle: Duration,
}

struct Entry {
    key: String,
    room: Room,
    /// The text so far and its tokens, read once a round.
    before: Arc<(String, Vec<u32>)>,
    /// Connected students: their connection's number and writer.
    students: HashMap<String, (u64, mpsc::Sender<Out<ToStudent>>)>,
    presenter: Option<(u64, mpsc::Sender<Out<ToPresenter>>)>,
    score: decoding_page::page::class_round::Score,
    last: Instant,
}

pub(super) struct Shared {
    rooms: Mutex<HashMap<String, Entry>>,
    tokenizer: Tokenizer,
    public: SocketAddr,
    pub(super) connections: AtomicUsize,
    next_id: AtomicU64,
}

pub(super) type App = Arc<Shared>;

fn random_hex(bytes: usize) -> Result<String, String> {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b).map_err(|e| format!("no randomness: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A join code: 8 characters of an alphabet with no look-alikes, from the OS's randomness
/// (32⁸ ≈ 1.1 × 10¹²). A wrong code closes its connection, so each try costs a WebSocket
/// handshake; even at 1,000 tries a second a lesson's hour covers 3.6 × 10⁶ codes, about
/// one chance in 300,000 of finding one of the 16 rooms.
fn join_code() -> Result<String, String> {
    let alphabet = CODE_ALPHABET.as_bytes();
    let mut b = [0u8; CODE_LEN];
    getrandom::fill(&mut b).map_err(|e| format!("no randomness: {e}"))?;
    Ok(b.iter()
        .map(|x| alphabet[(x & 31) as usize] as char)
        .collect())
}

fn lock(app: &App) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
    // A panic while holding the lock would poison it; the rooms stay usable.
    app.rooms.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    fn join_address(&self, code: &str) -> String {
        format!("http://{}/join?code={code}", self.public)
    }

    fn piece(&self, t: u32) -> String {
        self.tokenizer
            .piece(t)
            .map(|p| piece_text(p, false, None))
            .unwrap_or_else(|_| format!("#{t}"))
    }
}

impl Entry {
    fn tell_presenter(&self, m: ToPresenter) {
        if let Some((_, tx)) = &self.presenter {
            let _ = tx.try_send(Out::Frame(m));
        }
    }

    fn count(&self) {
        let (students, guessed) = self.room.counts();
        self.tell_presenter(ToPresenter::Count { students, guessed });
    }

    fn tell_students(&self, mut m: impl FnMut(&str) -> Option<ToStudent>) {
        for (id, (_, tx)) in &self.students {
            if let Some(m) = m(id) {
                let _ = tx.try_send(Out::Frame(m));
            }
        }
    }

    fn close_all(&mut self, reason: &str) {
        for (_, tx) in self.students.values() {
            let _ = tx.try_send(Out::Close(1000, reason.into()));
        }
        if let Some((_, tx)) = &self.presenter {
            let _ = tx.try_send(Out::Close(1000, reason.into()));
        }
    }
}

pub async fn serve(c: Config) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind(c.bind)
        .await
        .map_err(|e| CliError::Usage(format!("cannot listen on {}: {e}", c.bind)))?;
    // The port may have been 0 (any free one): the addresses say the one bound.
    let port = listener.local_addr().map_err(CliError::Output)?.port();
    let public = SocketAddr::new(c.public.ip(), port);
    let app: App = Arc::new(Shared {
        rooms: Mutex::new(HashMap::new()),
        tokenizer: c.tokenizer,
        public,
        connections: AtomicUsize::new(0),
        next_id: AtomicU64::new(1),
    });
    // The page as built, marked as served by a classroom (the page looks for the mark
    // instead of asking a server that may not be this one).
    let index = std::fs::read_to_string(c.dist.join("index.html"))
        .map_err(|e| CliError::Usage(format!("{}: {e}", c.dist.join("index.html").display())))?
        .replacen(
            "<head>",
            "<head>\n    <meta name=\"decoding-classroom\" content=\"1\" />",
            1,
        );
    let index: &'static str = Box::leak(index.into_boxed_str());
    let page_html = move || async move { page(index, "text/html; charset=utf-8") };
    let router = Router::new()
        .route("/", get(page_html))
        .route("/index.html", get(page_html))
        .route("/api/rooms", post(create_room))
        .route("/api/room", get(check_room))
        .route("/ws/student", get(student_ws))
        .route("/ws/presenter", get(presenter_ws))
        .route(
            "/join",
            get(|| async { page(super::STUDENT_HTML, "text/html; charset=utf-8") }),
        )
        .route(
            "/student.js",
            get(|| async { page(super::STUDENT_JS, "text/javascript") }),
        )
        .route(
            "/student.css",
            get(|| async { page(super::STUDENT_CSS, "text/css") }),
        )
        .fallback_service(tower_http::services::ServeDir::new(&c.dist))
        .layer(axum::middleware::map_response(isolated))
        .with_state(app.clone());
    println!("Classroom: the presenter opens http://127.0.0.1:{port}/?class=1&presenter=1");
    println!(
        "Students open http://{public}/join (the presenter's page shows the code and a QR code)"
    );
    if c.bind.ip().is_unspecified() {
        println!("Listening on every interface (--lan): phones on this network can join");
    } else {
        println!("Listening on 127.0.0.1 only: add --lan for phones on the local network");
    }
    tokio::spawn(reap(app.clone(), c.idle));
    axum::serve(listener, router)
        .await
        .map_err(CliError::Output)
}

/// The student's page: this origin's files only.
const STUDENT_POLICY: &str =
    "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";
/// The built page: the same as its own `<meta>` policy (www/index.html), its wasm allowed.
const PAGE_POLICY: &str =
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'self'; form-action 'self'";

/// A page of ours, with its policy (a file of the built page is served as it is).
fn page(body: &'static str, kind: &'static str) -> Response {
    let policy = if kind.starts_with("text/html") && body.contains("decoding-classroom") {
        PAGE_POLICY
    } else {
        STUDENT_POLICY
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, policy),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// Every response cross-origin isolated (COOP/COEP), so the presenter's page shares memory
/// between its workers and its engine runs on threads (README, "Threads in the page").
async fn isolated(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        "cross-origin-opener-policy",
        header::HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-embedder-policy",
        header::HeaderValue::from_static("require-corp"),
    );
    r
}

/// Rooms without a frame for `idle` are closed, every minute.
async fn reap(app: App, idle: Duration) {
    let mut tick = tokio::time::interval(Duration::from_secs(60).min(idle));
    loop {
        tick.tick().await;
        close_idle(&mut lock(&app), Instant::now(), idle);
    }
}

/// Closes the rooms without a frame for `idle` before `now`, each connection told why.
fn close_idle(rooms: &mut HashMap<String, Entry>, now: Instant, idle: Duration) {
    rooms.retain(|_, e| {
        let keep = now.saturating_duration_since(e.last) < idle;
        if !keep {
            e.close_all("the room was idle and is closed");
        }
        keep
    });
}

impl Entry {
    fn new(key: String) -> Entry {
        Entry {
            key,
            room: Room::default(),
            before: Arc::new((String::new(), Vec::new())),
            students: HashMap::new(),
            presenter: None,
            score: Default::default(),
            last: Instant::now(),
        }
    }
}

async fn create_room(State(app): State<App>) -> Response {
    let mut rooms = lock(&app);
    if rooms.len() >= MAX_ROOMS {
        let m = format!("this server holds {MAX_ROOMS} rooms already: close one first");
        return (StatusCode::SERVICE_UNAVAILABLE, m).into_response();
    }
    let keys = match (join_code(), random_hex(16)) {
        (Ok(code), Ok(key)) if !rooms.contains_key(&code) => RoomKeys { code, key },
        (Err(e), _) | (_, Err(e)) => return (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
        _ => return (StatusCode::SERVICE_UNAVAILABLE, "try again").into_response(),
    };
    rooms.insert(keys.code.clone(), Entry::new(keys.key.clone()));
    Json(keys).into_response()
}

#[derive(serde::Deserialize)]
struct PresenterQuery {
    code: String,
    key: String,
}

/// Whether this browser's secret opens the room (200), the room is gone (404) or the secret
/// is not its presenter's (403): the page makes a new room only on the last two.
async fn check_room(State(app): State<App>, Query(q): Query<PresenterQuery>) -> Response {
    match lock(&app).get(&q.code).map(|e| e.key == q.key) {
        None => (StatusCode::NOT_FOUND, "no room with this code").into_response(),
        Some(false) => (StatusCode::FORBIDDEN, "not this room's presenter").into_response(),
        Some(true) => Json(serde_json::json!({ "room": q.code })).into_response(),
    }
}

async fn presenter_ws(
    ws: WebSocketUpgrade,
    State(app): State<App>,
    Query(q): Query<PresenterQuery>,
) -> Response {
    let known = lock(&app).get(&q.code).map(|e| e.key == q.key);
    match known {
        None => return (StatusCode::NOT_FOUND, "no room with this code").into_response(),
        Some(false) => return (StatusCode::FORBIDDEN, "not this room's presenter").into_response(),
        Some(true) => {}
    }
    let Some(slot) = Slot::take(&app) else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many connections").into_response();
    };
    ws.max_message_size(PRESENTER_FRAME)
        .max_frame_size(PRESENTER_FRAME)
        .on_upgrade(move |socket| presenter(socket, app, q.code, slot))
}

fn qr_svg(text: &str) -> String {
    qrcode::QrCode::new(text.as_bytes())
        .map(|q| {
            q.render::<qrcode::render::svg::Color>()
                .min_dimensions(220, 220)
                .quiet_zone(true)
                .build()
        })
        .unwrap_or_default()
}

async fn presenter(socket: WebSocket, app: App, code: String, _slot: Slot) {
    let (sink, stream) = socket.split();
    let (tx, rx) = mpsc::channel::<Out<ToPresenter>>(PRESENTER_QUEUE);
    let conn = app.next_id.fetch_add(1, Ordering::SeqCst);
    let join = app.join_address(&code);
    {
        let mut rooms = lock(&app);
        let Some(e) = rooms.get_mut(&code) else {
            return;
        };
        if let Some((_, old)) = e.presenter.replace((conn, tx.clone())) {
            let _ = old.try_send(Out::Close(
                1000,
                "the room was opened in another tab".into(),
            ));
        }
        let (students, guessed) = e.room.counts();
        let _ = tx.try_send(Out::Frame(ToPresenter::Room {
            code: code.clone(),
            qr_svg: qr_svg(&join),
            join,
            round: e.room.round,
            context: e.room.context.clone(),
            score: e.score,
            vocab: app.tokenizer.vocab_size(),
            open: e.room.open,
            students,
            guessed,
        }));
    }
    let writing = tokio::spawn(writer(sink, rx));
    let handle = |text: &str| presenter_frame(&app, &code, conn, &tx, text);
    read_frames(stream, &tx, handle, || true, PRESENTER_RATE).await;
    if let Some(e) = lock(&app).get_mut(&code) {
        if e.presenter.as_ref().is_some_and(|p| p.0 == conn) {
            e.presenter = None;
        }
    }
    drop(tx);
    let _ = writing.await;
}

fn presenter_frame(
    app: &App,
    code: &str,
    conn: u64,
    tx: &mpsc::Sender<Out<ToPresenter>>,
    text: &str,
) -> Result<(), String> {
    let m: FromPresenter =
        serde_json::from_str(text).map_err(|e| reason(format!("unreadable frame: {e}")))?;
    // The text's tokens are read before the lock is taken.
    let before = match &m {
        FromPresenter::Open { context, .. } => Some(
            app.tokenizer
                .encode(context, false)
                .map_err(|e| reason(format!("the text so far: {e}")))?,
        ),
        _ => None,
    };
    let mut rooms = lock(app);
    let e = rooms.get_mut(code).ok_or("the room is closed")?;
    // A tab the room was opened in since speaks for it, not this one.
    if e.presenter.as_ref().is_none_or(|p| p.0 != conn) {
        return Err("the room was opened in another tab".into());
    }
    e.last = Instant::now();
    let refuse = |r: Refusal| {
        let _ = tx.try_send(Out::Frame(ToPresenter::Refused {
            message: r.to_string(),
        }));
    };
    match m {
        FromPresenter::Open { context, choices } => {
            match e.room.open(context.clone(), choices) {
                Ok(()) => {
                    e.before = Arc::new((context, before.unwrap_or_default()));
                    // Who left is no longer in (their guesses went with the last round).
                    let connected = &e.students;
                    e.room.retain(|id| connected.contains_key(id));
                }
                Err(r) => {
                    refuse(r);
                    return Ok(());
                }
            }
            let room = &e.room;
            e.tell_students(|id| Some(ToStudent::Round(room.view(id))));
            e.count();
        }
        FromPresenter::Reveal => {
            let (counts, dropped) = e.room.reveal();
            e.tell_presenter(ToPresenter::Tally {
                round: e.room.round,
                counts,
                dropped,
            });
            let room = &e.room;
            e.tell_students(|id| Some(ToStudent::Round(room.view(id))));
        }
        FromPresenter::Results { tokens, model_top } => {
            let mut results: HashMap<String, StudentResult> = e
                .room
                .results(&tokens, &model_top, |t| app.piece(t))
                .into_iter()
                .collect();
            e.tell_students(|id| results.remove(id).map(ToStudent::Result));
        }
        FromPresenter::Drawn { piece, score } => {
            e.score = score;
            e.tell_students(|_| {
                Some(ToStudent::Drawn {
                    piece: piece.clone(),
                })
            })
        }
        FromPresenter::Close => {
            if let Some(mut e) = rooms.remove(code) {
                e.close_all("the presenter closed the room");
            }
        }
    }
    Ok(())
}

async fn student_ws(ws: WebSocketUpgrade, State(app): State<App>) -> Response {
    let Some(slot) = Slot::take(&app) else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many connections").into_response();
    };
    // tungstenite reads into 128 KiB by default: 64 MiB for 500 phones sending 100 bytes.
    ws.max_message_size(STUDENT_FRAME)
        .max_frame_size(STUDENT_FRAME)
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .max_write_buffer_size(64 * 1024)
        .on_upgrade(move |socket| student(socket, app, slot))
}

async fn student(socket: WebSocket, app: App, _slot: Slot) {
    let (sink, stream) = socket.split();
    let (tx, rx) = mpsc::channel::<Out<ToStudent>>(QUEUE);
    let conn = app.next_id.fetch_add(1, Ordering::SeqCst);
    let writing = tokio::spawn(writer(sink, rx));
    let joined = std::sync::OnceLock::<(String, String)>::new();
    let handle = |text: &str| student_frame(&app, conn, &tx, &joined, text);
    read_frames(stream, &tx, handle, || joined.get().is_some(), STUDENT_RATE).await;
    if let Some((code, id)) = joined.get() {
        if let Some(e) = lock(&app).get_mut(code) {
            if e.students.get(id).is_some_and(|s| s.0 == conn) {
                e.students.remove(id);
                // One who leaves without a guess is out; a guess stays for the reveal (and
                // for the phone that comes back).
                e.room.leave(id);
                e.count();
            }
        }
    }
    drop(tx);
    let _ = writing.await;
}

fn student_frame(
    app: &App,
    conn: u64,
    tx: &mpsc::Sender<Out<ToStudent>>,
    joined: &std::sync::OnceLock<(String, String)>,
    text: &str,
) -> Result<(), String> {
    let m: FromStudent =
        serde_json::from_str(text).map_err(|e| reason(format!("unreadable frame: {e}")))?;
    let send = |m: ToStudent| {
        let _ = tx.try_send(Out::Frame(m));
    };
    match m {
        FromStudent::Join { code, student } => {
            if joined.get().is_some() {
                return Err("this connection has joined already".into());
            }
            let code = check_code(&code)?;
            let mut rooms = lock(app);
            let e = rooms
                .get_mut(&code)
                .ok_or("no room with this code: check it with the presenter")?;
            let view = e.room.join(&student).map_err(|r| r.to_string())?;
            e.last = Instant::now();
            if let Some((old, otx)) = e.students.insert(student.clone(), (conn, tx.clone())) {
                if old != conn {
                    let _ = otx.try_send(Out::Close(
                        1000,
                        "joined again from another connection".into(),
                    ));
                }
            }
            send(ToStudent::Round(view));
            e.count();
            let _ = joined.set((code, student));
        }
        FromStudent::Guess { text } => {
            let (code, id) = joined.get().ok_or("join a room first")?;
            let (round, before) = {
                let rooms = lock(app);
                let e = rooms.get(code).ok_or("the room is closed")?;
                if let Err(r) = check_guess(&text).map(|_| ()).and(e.room.may_guess(id)) {
                    send(ToStudent::Refused {
                        message: r.to_string(),
                    });
                    return Ok(());
                }
                (e.room.round, e.before.clone())
            };
            // Read outside the lock: hundreds of guesses arrive at once.
            let token = first_token_after(&app.tokenizer, &before.0, &before.1, &text);
            let mut rooms = lock(app);
            let e = rooms.get_mut(code).ok_or("the room is closed")?;
            e.last = Instant::now();
            match e.room.guess(id, round, &text, token) {
                Ok(()) => {
                    send(ToStudent::Accepted {
                        guess: text.trim().to_string(),
                    });
                    e.count();
                }
                Err(r) => send(ToStudent::Refused {
                    message: r.to_string(),
                }),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A room idle for longer than the limit closes, each phone and the presenter told why;
    /// a room with a recent frame stays.
    #[test]
    fn idle_rooms_close_and_say_why() {
        // (Times after `start`, not before it: a monotonic clock may be under a minute old.)
        let start = Instant::now();
        let now = start + Duration::from_secs(61);
        let idle = Duration::from_secs(60);
        let mut rooms = HashMap::new();
        let mut old = Entry::new("k1".into());
        old.last = start;
        let (tx, mut rx) = mpsc::channel(4);
        old.students.insert("s1".into(), (1, tx));
        let (ptx, mut prx) = mpsc::channel(4);
        old.presenter = Some((2, ptx));
        rooms.insert("OLDROOM2".to_string(), old);
        let mut fresh = Entry::new("k2".into());
        fresh.last = start + Duration::from_secs(2);
        rooms.insert("NEWROOM2".to_string(), fresh);
        close_idle(&mut rooms, now, idle);
        assert_eq!(rooms.keys().collect::<Vec<_>>(), ["NEWROOM2"]);
        let why = "the room was idle and is closed";
        assert!(matches!(rx.try_recv(), Ok(Out::Close(1000, w)) if w == why));
        assert!(matches!(prx.try_recv(), Ok(Out::Close(1000, w)) if w == why));
    }
}
