//! The transcript's constraint: compiled in the worker (the page's UI thread never links the
//! matcher), kept in step with the settings, its mask sent with each next distribution
//! (`NextView::allowed`) so the page's chain applies it at every knob move.

use super::base::Core;
use decoding_engine::decode::constraint::ConstraintVocab;
use decoding_engine::decode::sampling::stages::constraint::spec;

/// Milliseconds, for the mask's time: the worker's `performance.now()`.
#[cfg(target_arch = "wasm32")]
fn clock() -> f64 {
    use wasm_bindgen::JsCast;
    js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()
        .and_then(|g| g.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

#[cfg(not(target_arch = "wasm32"))]
use decoding_engine::decode::constraint::native_clock as clock;

impl Core {
    /// Brings the generation's constraint in line with the settings (compiled when it
    /// changed, its mask at the current position computed); what went wrong is kept in
    /// `constraint_error` for the next view and the steps.
    pub(super) fn sync_constraint(&mut self) {
        self.constraint_error = self.try_sync_constraint().err();
    }

    fn try_sync_constraint(&mut self) -> Result<(), String> {
        match &self.gen {
            Some(g) if spec(&self.settings).is_some() || g.constraint().is_some() => {}
            _ => return Ok(()),
        }
        let vocab = self.constraint_vocab()?;
        let Some(g) = &mut self.gen else {
            return Ok(());
        };
        g.sync_constraint(&self.settings, &vocab)
            .map_err(|e| e.to_string())?;
        g.constraint_allowed(&self.settings)
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The vocabulary as constraints read it (built once a model).
    pub(super) fn constraint_vocab(&mut self) -> Result<ConstraintVocab, String> {
        if let Some(v) = &self.constraint_vocab {
            return Ok(v.clone());
        }
        let Some(m) = &self.model else {
            return Err("no model is loaded yet".into());
        };
        let ends = [m.tokenizer.eos, m.tokenizer.bos];
        let v = ConstraintVocab::new(&m.tokenizer, m.config().vocab_size, &ends, clock)?;
        self.constraint_vocab = Some(v.clone());
        Ok(v)
    }

    /// The compiled constraint for a beam search from the prompt, if the settings set one.
    pub(super) fn beam_constraint(
        &mut self,
    ) -> Result<Option<decoding_engine::decode::constraint::Constraint>, String> {
        self.sync_constraint();
        if let Some(e) = &self.constraint_error {
            return Err(e.clone());
        }
        let Some(g) = &self.gen else { return Ok(None) };
        let Some(mut c) = g.constraint().cloned() else {
            return Ok(None);
        };
        c.replay(&[]).map_err(|e| e.to_string())?;
        Ok(Some(c))
    }
}
