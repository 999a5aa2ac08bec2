//! The lesson's toy logits: every knob applied to numbers the user types.

use super::{err, Session};
use decoding_engine::decode::sampling::chain::process_f64;
use decoding_engine::decode::sampling::History;
use decoding_page::protocol::trace_view::trace_view;
use decoding_page::protocol::*;

impl Session {
    /// The chain on hand-typed logits (the lesson's toy example).
    pub fn toy(&self, logits: &[f64], history: &[u32]) -> Vec<Event> {
        let mut settings = self.settings.clone();
        if let Err(e) = check_toy(logits, history) {
            return vec![err(e)];
        }
        settings
            .logit_bias
            .retain(|(id, _)| (*id as usize) < logits.len());
        let h = History {
            prompt: &[],
            generated: history,
        };
        let coin = decoding_engine::decode::sampling::step_coin(settings.seed, 0);
        match process_f64(&settings, logits, h, coin, true) {
            Ok(t) => vec![Event::Trace {
                view: trace_view(&t, None, settings.top_p),
                toy: true,
            }],
            Err(e) => vec![err(e)],
        }
    }
}

fn check_toy(logits: &[f64], history: &[u32]) -> Result<(), String> {
    if logits.is_empty() || logits.len() > 64 {
        return Err(format!(
            "type between 1 and 64 logits (got {})",
            logits.len()
        ));
    }
    if let Some(v) = logits.iter().find(|v| !v.is_finite()) {
        return Err(format!("logit {v} is not a finite number"));
    }
    if let Some(t) = history.iter().find(|&&t| t as usize >= logits.len()) {
        return Err(format!(
            "history token {t} is not one of the {} logits",
            logits.len()
        ));
    }
    Ok(())
}
