//! A round of the class guessing the next token: each guess's first token after the
//! transcript's text (`page/class_round.rs` says how), for the page to count and reveal.

use super::base::{err, Core};
use decoding_page::page::class_round::first_token;
use decoding_page::protocol::*;

impl Core {
    pub(super) fn class_request(&self, r: ClassRequest) -> Vec<Event> {
        match r {
            ClassRequest::ClassTokens { guesses } => self.class_tokens(&guesses),
        }
    }

    fn class_tokens(&self, guesses: &[String]) -> Vec<Event> {
        let Some(m) = self.model.as_ref() else {
            return vec![err("no model is loaded")];
        };
        // The text so far: the prompt as typed, then what was generated.
        let generated = match &self.gen {
            Some(g) => match m.tokenizer.decode(&g.generated_ids()) {
                Ok(t) => t,
                Err(e) => return vec![err(e)],
            },
            None => String::new(),
        };
        let context = format!("{}{generated}", self.prompt);
        let tokens = guesses
            .iter()
            .map(|g| first_token(&m.tokenizer, &context, g))
            .collect();
        vec![Event::Class(ClassEvent::ClassTokens { tokens })]
    }
}
