//! The engine's threads in the header: how many run and why (measured at start-up, the
//! user's count, or one because the page cannot have more: its badge says which), and a
//! select of 1 to the browser's logical processors, or "auto" (timed again).

use super::badge::Tag;
use super::state::Ui;
use decoding_page::protocol::{ModelRequest, Request, ThreadReport, ThreadWhy};
use leptos::prelude::*;

/// Why this many, in a few words (the badge) and in full (its title).
fn why(ui: Ui, r: &ThreadReport) -> (String, String) {
    let one = |key: &str| {
        (
            ui.t(&format!("threads-short-{key}")),
            ui.t(&format!("threads-why-{key}")),
        )
    };
    match &r.why {
        ThreadWhy::Measured { timed } => {
            let list = timed
                .iter()
                .map(|(n, ms)| {
                    ui.tf(
                        "threads-timed",
                        &[("n", ui.int(*n as u64)), ("ms", ui.num(*ms, 2))],
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            (
                ui.t("threads-short-measured"),
                ui.tf("threads-why-measured", &[("timed", list)]),
            )
        }
        ThreadWhy::Chosen => one("chosen"),
        ThreadWhy::NotIsolated => one("not-isolated"),
        ThreadWhy::NoSharedMemory => one("no-shared-memory"),
        ThreadWhy::OneCore => one("one-core"),
        ThreadWhy::Failed { message } => (
            ui.t("threads-short-failed"),
            ui.tf("threads-why-failed", &[("message", message.clone())]),
        ),
    }
}

#[component]
pub(super) fn Threads() -> impl IntoView {
    let ui = expect_context::<Ui>();
    let on_change = move |ev| {
        let v = event_target_value(&ev);
        let threads = if v == "auto" {
            None
        } else {
            v.parse::<u32>().ok()
        };
        if v == "auto" || threads.is_some() {
            ui.send(&Request::Model(ModelRequest::SetThreads { threads }));
        }
    };
    move || {
        ui.model.threads.get().map(|r| {
            let (short, long) = why(ui, &r);
            let auto = matches!(r.why, ThreadWhy::Measured { .. });
            let value = if auto { "auto".to_string() } else { r.threads.to_string() };
            view! {
                <span class="badge threads" data-testid="threads-badge" title=long.clone()>
                    {ui.tf("threads-badge", &[("n", ui.int(r.threads as u64)), ("why", short)])}
                </span>
                {(r.most > 1).then(|| view! {
                    <label class="inline threads" title=long data-tagged>
                        {ui.t("threads-label")} " " <Tag of="threads-select" />
                        <select data-testid="threads-select" on:change=on_change prop:value=value>
                            <option value="auto">{ui.t("threads-auto")}</option>
                            {(1..=r.most).map(|n| view! { <option value=n.to_string()>{n.to_string()}</option> }).collect_view()}
                        </select>
                    </label>
                })}
            }
        })
    }
}
