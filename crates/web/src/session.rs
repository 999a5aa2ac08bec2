//! The worker's state and logic in plain Rust (no browser types), so it is tested natively:
//! it owns the model and a backend and answers requests with events.

use crate::protocol::{Event, TokenRow};
use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::sampling::coin::softmax_t;
use decoding_engine::{BackendKind, Model};

#[derive(Default)]
pub struct Session {
    loaded: Option<Loaded>,
}

struct Loaded {
    model: Model,
    backend: CpuBackend,
}

impl Session {
    /// Loads a model from bytes; on failure the previous model (if any) is kept.
    pub fn load(&mut self, model: &[u8], tokenizer: &[u8]) -> Event {
        match Model::from_bytes(model, tokenizer) {
            Ok(model) => {
                let backend = CpuBackend::new(model.transformer.clone());
                let config = *model.config();
                self.loaded = Some(Loaded { model, backend });
                Event::Loaded {
                    config,
                    params: config.n_params(),
                    backend: BackendKind::Cpu,
                    backend_reason: "CPU backend (WebAssembly)".into(),
                }
            }
            Err(e) => Event::Error {
                message: e.to_string(),
            },
        }
    }

    /// The `top` most likely next tokens after `prompt`.
    pub async fn next(&mut self, prompt: &str, top: usize, now: impl Fn() -> f64) -> Event {
        let Some(l) = self.loaded.as_mut() else {
            return Event::Error {
                message: "no model is loaded yet".into(),
            };
        };
        let t0 = now();
        let result = async {
            let ids = l.model.encode_prompt(prompt).map_err(|e| e.to_string())?;
            let seq = l.backend.new_sequence().map_err(|e| e.to_string())?;
            let logits = l.backend.forward(seq, &ids, false).await;
            l.backend.release(seq);
            let logits = logits.map_err(|e| e.to_string())?;
            Ok::<_, String>((ids, logits))
        }
        .await;
        let (ids, logits) = match result {
            Ok(x) => x,
            Err(message) => return Event::Error { message },
        };
        let probs = softmax_t(&logits, 1.0);
        let mut order: Vec<usize> = (0..probs.len()).collect();
        order.sort_by(|&i, &j| probs[j].total_cmp(&probs[i]).then(i.cmp(&j)));
        let rows = order
            .iter()
            .take(top)
            .enumerate()
            .map(|(rank, &i)| TokenRow {
                rank: rank + 1,
                id: i as u32,
                piece: l.model.tokenizer.piece(i as u32).unwrap_or("?").to_string(),
                prob: probs[i],
                logprob: probs[i].ln(),
            })
            .collect();
        Event::Next {
            prompt: prompt.to_string(),
            prompt_tokens: ids,
            rows,
            millis: now() - t0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asset(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../assets/models/stories260K")
            .join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn loads_and_answers_next() {
        let mut s = Session::default();
        match s.load(&asset("stories260K.bin"), &asset("tok512.bin")) {
            Event::Loaded { config, .. } => assert_eq!(config.vocab_size, 512),
            e => panic!("{e:?}"),
        }
        match pollster::block_on(s.next("Once upon a time", 3, || 0.0)) {
            Event::Next {
                rows,
                prompt_tokens,
                ..
            } => {
                assert_eq!(prompt_tokens, vec![1, 403, 407, 261, 378]);
                assert_eq!(rows[0].piece, ",");
                assert!((rows[0].prob - 0.9688).abs() < 1e-4);
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn bad_model_is_an_error_event_and_keeps_the_old_one() {
        let mut s = Session::default();
        s.load(&asset("stories260K.bin"), &asset("tok512.bin"));
        match s.load(&[1, 2, 3], &asset("tok512.bin")) {
            Event::Error { message } => assert!(message.contains("shorter than"), "{message}"),
            e => panic!("{e:?}"),
        }
        assert!(matches!(
            pollster::block_on(s.next("Once", 1, || 0.0)),
            Event::Next { .. }
        ));
    }
}
