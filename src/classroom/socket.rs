//! A classroom connection's plumbing: its slot among [`MAX_CONNECTIONS`], its rate, the
//! task that writes its frames, and the loop that reads them (a bad frame closes the
//! connection with its reason, and nothing else).

use super::server::{App, JOIN_WITHIN, MAX_CONNECTIONS};
use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::{SinkExt, StreamExt};
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::mpsc;

/// A student connection's rate: a burst of 10 frames, then 4 a second.
pub(super) const STUDENT_RATE: (f64, f64) = (10.0, 4.0);
/// The presenter's (a round opens at each new text, a run steps several a second).
pub(super) const PRESENTER_RATE: (f64, f64) = (100.0, 50.0);

/// What a connection's writer sends: a frame, or the close with its reason.
pub(super) enum Out<T> {
    Frame(T),
    Close(u16, String),
}

/// A connection counted against [`MAX_CONNECTIONS`] while it lives.
pub(super) struct Slot(App);

impl Slot {
    pub(super) fn take(app: &App) -> Option<Slot> {
        let n = app.connections.fetch_add(1, Ordering::SeqCst);
        if n >= MAX_CONNECTIONS {
            app.connections.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Slot(app.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection's rate: a token bucket of (burst, frames a second).
struct Rate {
    tokens: f64,
    at: Instant,
    limit: (f64, f64),
}

impl Rate {
    fn new(limit: (f64, f64)) -> Rate {
        Rate {
            tokens: limit.0,
            at: Instant::now(),
            limit,
        }
    }

    fn take(&mut self) -> bool {
        let now = Instant::now();
        let dt = now.duration_since(self.at).as_secs_f64();
        self.at = now;
        self.tokens = (self.tokens + dt * self.limit.1).min(self.limit.0);
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }
}

/// Writes a connection's frames until its queue closes or it is told to close.
pub(super) async fn writer<T: serde::Serialize>(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Out<T>>,
) {
    while let Some(out) = rx.recv().await {
        let msg = match out {
            Out::Frame(m) => match serde_json::to_string(&m) {
                Ok(t) => Message::Text(t.into()),
                Err(_) => continue,
            },
            Out::Close(code, reason) => {
                let _ = sink
                    .send(Message::Close(Some(CloseFrame {
                        code,
                        reason: reason.into(),
                    })))
                    .await;
                break;
            }
        };
        if sink.send(msg).await.is_err() {
            break;
        }
    }
}

/// Reads a connection's text frames: each one to `handle` (its error closes the
/// connection with the reason, code 1008), binary frames, floods and unreadable frames
/// close it too. Returns when the connection ends.
pub(super) async fn read_frames<T: serde::Serialize>(
    mut stream: futures_util::stream::SplitStream<WebSocket>,
    tx: &mpsc::Sender<Out<T>>,
    mut handle: impl FnMut(&str) -> Result<(), String>,
    joined: impl Fn() -> bool,
    limit: (f64, f64),
) {
    let mut rate = Rate::new(limit);
    let deadline = tokio::time::Instant::now() + JOIN_WITHIN;
    loop {
        let next = if joined() {
            stream.next().await
        } else {
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Ok(n) => n,
                Err(_) => {
                    let _ = tx.try_send(Out::Close(1008, "no join within 20 s".into()));
                    return;
                }
            }
        };
        let why = match next {
            None | Some(Ok(Message::Close(_))) => return,
            // Oversized, invalid UTF-8, a broken frame: the protocol layer ends it.
            Some(Err(e)) => Some((1009, format!("bad frame: {e}"))),
            Some(Ok(Message::Binary(_))) => Some((1003, "binary frames are not accepted".into())),
            Some(Ok(Message::Text(t))) => {
                if !rate.take() {
                    Some((1008, "too many frames: slow down".into()))
                } else {
                    handle(t.as_str()).err().map(|e| (1008, e))
                }
            }
            // Pings and pongs count against the rate too.
            Some(Ok(_)) if !rate.take() => Some((1008, "too many frames: slow down".into())),
            Some(Ok(_)) => None,
        };
        if let Some((code, why)) = why {
            let _ = tx.try_send(Out::Close(code, reason(why)));
            // The closing handshake: read on, dropping what comes, until the peer's own
            // close (or 2 s). A socket closed with the peer's frames unread is reset, and a
            // reset can lose the frames and the close still on their way to the peer (a
            // flooding client saw 1006, not its 1008 and its reason).
            let end = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
            while let Ok(Some(Ok(m))) = tokio::time::timeout_at(end, stream.next()).await {
                if matches!(m, Message::Close(_)) {
                    break;
                }
            }
            return;
        }
    }
}

/// A close frame's reason holds at most 123 bytes (RFC 6455, 5.5): cut at a character.
pub(super) fn reason(mut r: String) -> String {
    if r.len() > 120 {
        let mut at = 120;
        while !r.is_char_boundary(at) {
            at -= 1;
        }
        r.truncate(at);
    }
    r
}
