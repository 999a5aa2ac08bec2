//! `decoding-explorer classroom`: the built page and a room for the class on the local
//! network (issue 48). The presenter opens the page with `class=1`; it creates a room here,
//! shows the join address, a short code and a QR code of the address; students open the
//! address on their phones (a small page of its own, `student.html`), guess the next token,
//! and see their result at the reveal. Guesses arrive over a WebSocket and are read as the
//! loaded model's first token after the text so far (`class_round::first_token_after`).
//!
//! axum (on tokio) serves HTTP and the WebSockets, `qrcode` draws the QR code; the rooms
//! live in this process's memory and nothing is written to disk.

mod room;
mod server;
mod socket;

use crate::error::CliError;
use crate::files::ModelFiles;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ClassroomArgs {
    /// The port to listen on
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Listen on every interface, so that phones on the local network can join (default:
    /// this machine only, 127.0.0.1)
    #[arg(long)]
    lan: bool,
    /// The built page to serve (`trunk build` writes it to dist/)
    #[arg(long, value_name = "DIR", default_value = "dist")]
    dist: PathBuf,
    /// Close a room after this many minutes without a frame from anyone (1 to 1440)
    #[arg(long, value_name = "MINUTES", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=1440))]
    idle_minutes: u64,
}

/// The address students open: this machine's address on the network its default route
/// leaves by (no packet is sent: a UDP socket is only connected), or loopback.
fn public_ip(lan: bool) -> IpAddr {
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    if !lan {
        return loopback;
    }
    UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("192.0.2.1:9").map(|_| s))
        .and_then(|s| s.local_addr())
        .map(|a| a.ip())
        .unwrap_or(loopback)
}

pub fn classroom(files: &ModelFiles, a: ClassroomArgs) -> Result<(), CliError> {
    if !a.dist.join("index.html").is_file() {
        return Err(CliError::Usage(format!(
            "{}: no built page there (index.html): build it with `trunk build`, or name it with --dist",
            a.dist.display()
        )));
    }
    let model = files.load()?;
    let bind = SocketAddr::new(
        if a.lan {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        },
        a.port,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start the server: {e}")))?;
    runtime.block_on(server::serve(server::Config {
        bind,
        public: SocketAddr::new(public_ip(a.lan), a.port),
        dist: a.dist,
        tokenizer: model.tokenizer,
        idle: std::time::Duration::from_secs(a.idle_minutes * 60),
    }))
}

/// The student's view: a page of its own (a few KB: a phone on the classroom's Wi-Fi loads
/// no engine and no model), speaking `decoding_page::page::room`'s frames.
const STUDENT_HTML: &str = include_str!("student.html");
const STUDENT_JS: &str = include_str!("student.js");
const STUDENT_CSS: &str = include_str!("student.css");
