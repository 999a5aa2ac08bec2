//! The sampling chain run in the page, where the sliders are: on the logits of the
//! transcript's next position that the worker sent with the step ([`NextView`]), and on the
//! toy logits typed in the toy panel. A knob's move re-runs it in the same frame, with no
//! round trip to the worker (which keeps the forward pass); the worker's next step draws
//! with the same code on the same logits, so the token the chart marks is the one it takes.

use crate::protocol::trace_view::trace_view;
use crate::protocol::{NextView, TraceView};
use decoding_engine::decode::sampling::chain::process_f64;
use decoding_engine::decode::sampling::{
    process, step_coin, History, Knob, Settings, TokenText, Value,
};
use decoding_engine::tokenizer::PieceText;

impl NextView {
    /// The chain's trace on these logits under `settings`, with the step's coin and the
    /// stages' state after the last step: what the distribution, the chain's stages and the
    /// captions draw. `vocab` is the model's token text (for a stage that reads it).
    pub fn trace(
        &self,
        settings: &Settings,
        vocab: Option<&dyn TokenText>,
    ) -> Result<TraceView, String> {
        use decoding_engine::decode::sampling::stages::constraint;
        // A constraint the worker could not compile (its error is shown beside it) leaves
        // the chain as if it were off.
        // So does a mask for another constraint than the settings' (the worker compiles a
        // new one and sends its mask: until then, none is applied).
        let fresh = match (&self.allowed, &self.allowed_for, constraint::spec(settings)) {
            (Some(_), Some(f), Some(s)) => s.is_text(f),
            _ => false,
        };
        let unconstrained;
        let settings = match constraint::text(settings) {
            Some(_) if !fresh => {
                unconstrained = constraint::without(settings);
                &unconstrained
            }
            _ => settings,
        };
        let history = History {
            prompt: &self.prompt,
            generated: &self.generated,
            state: Some(&self.state),
            vocab,
            allowed: self.allowed.as_ref().filter(|_| fresh),
        };
        let coin = step_coin(settings.seed, self.step as u64);
        let t = process(settings, &self.logits, history, coin, true).map_err(|e| e.to_string())?;
        Ok(trace_view(&t, Some(self.step)))
    }
}

/// The chain on hand-typed logits (the lesson's toy example), `history` the rows "already
/// generated" that the penalties see; logit-bias ids beyond the toy's rows are left out.
pub fn toy_trace(
    logits: &[f64],
    history: &[u32],
    settings: &Settings,
) -> Result<TraceView, String> {
    if logits.is_empty() || logits.len() > super::toy::MAX_TOY_LOGITS {
        return Err(format!(
            "type between 1 and {} logits (got {})",
            super::toy::MAX_TOY_LOGITS,
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
    let mut settings = settings.clone();
    let bias: Vec<(u32, f64)> = settings.bias(Knob::LogitBias).to_vec();
    let inside = bias
        .into_iter()
        .filter(|(id, _)| (*id as usize) < logits.len())
        .collect();
    settings.set(Knob::LogitBias, Value::Bias(inside));
    // The toy's rows have no text: a stage that looks for text finds none.
    let no_text = PieceText::new(&vec![String::new(); logits.len()], false);
    let h = History {
        prompt: &[],
        generated: history,
        state: None,
        vocab: Some(&no_text),
        allowed: None,
    };
    let coin = step_coin(settings.seed, 0);
    let t = process_f64(&settings, logits, h, coin, true).map_err(|e| e.to_string())?;
    Ok(trace_view(&t, None))
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;
