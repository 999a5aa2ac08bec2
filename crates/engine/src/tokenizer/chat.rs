//! A model's chat template: the Jinja text a GGUF file carries as `tokenizer.chat_template`
//! (an instruct model's `tokenizer_config.json` `chat_template`), which turns a conversation
//! into the text the model was trained on, special tokens and all ("<|im_start|>user\n…").
//!
//! Rendered with minijinja the way transformers' `apply_chat_template` renders it (its
//! Jinja environment has `trim_blocks` and `lstrip_blocks`, so a template written over
//! several lines renders no newline or indent of its own): `messages` (here one user message), `add_generation_prompt = true` (the assistant's turn
//! opened, so the next token is the answer's first), `bos_token` and `eos_token` as text,
//! and `raise_exception(msg)`; Python's string methods (`.strip()`, `.startswith()` …) through
//! minijinja-contrib's pycompat, as templates written for Jinja2 call them. A hostile
//! template cannot hang the page: rendering has a fuel budget and a size limit, and every
//! failure is an error that says which.

use minijinja::{context, Environment, Error, ErrorKind};
use thiserror::Error;

/// The most a chat template may be (Llama 3.2's is 3.8 KB, Qwen2.5's 2.5 KB).
pub const MAX_TEMPLATE_BYTES: usize = 64 << 10;
/// Instructions a render may run (a real template renders one message in a few thousand).
const FUEL: u64 = 1_000_000;
/// The most text a render may give.
const MAX_RENDERED_BYTES: usize = 1 << 20;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ChatError {
    #[error("this model's file carries no chat template (GGUF's tokenizer.chat_template)")]
    NoTemplate,
    #[error("this model's file has a chat template, but it could not be read: {0}")]
    Unreadable(String),
    #[error("the chat template is {0} bytes; the limit is {MAX_TEMPLATE_BYTES}")]
    TooLarge(usize),
    #[error("the chat template could not be rendered: {0}")]
    Render(String),
    #[error(
        "the chat template renders {0} bytes for one message; the limit is {MAX_RENDERED_BYTES}"
    )]
    RenderedTooLarge(usize),
}

/// A chat template's source, checked for size (it is compiled when rendered).
#[derive(Debug, Clone, PartialEq)]
pub struct ChatTemplate {
    source: String,
}

impl ChatTemplate {
    pub fn new(source: String) -> Result<ChatTemplate, ChatError> {
        if source.len() > MAX_TEMPLATE_BYTES {
            return Err(ChatError::TooLarge(source.len()));
        }
        Ok(ChatTemplate { source })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// One user message as the model was trained to see it, the assistant's turn opened.
    pub fn render(&self, user: &str, bos: &str, eos: &str) -> Result<String, ChatError> {
        let mut env = Environment::new();
        let render = |e: Error| ChatError::Render(e.to_string());
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(render)?;
        env.set_syntax(syntax);
        env.set_fuel(Some(FUEL));
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |msg: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_template("chat_template", &self.source)
            .map_err(render)?;
        let out = env
            .get_template("chat_template")
            .map_err(render)?
            .render(context! {
                messages => vec![context! { role => "user", content => user }],
                add_generation_prompt => true,
                bos_token => bos,
                eos_token => eos,
            })
            .map_err(render)?;
        if out.len() > MAX_RENDERED_BYTES {
            return Err(ChatError::RenderedTooLarge(out.len()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SmolLM2-Instruct's and Qwen2.5-Instruct's ChatML, the shape most small instruct models
    /// use; a template that calls Python's `.strip()`; Llama 3's, which starts with the BOS
    /// text and trims the content.
    #[test]
    fn templates_render_as_transformers_renders_them() {
        let chatml = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
        let t = ChatTemplate::new(chatml.into()).unwrap();
        assert_eq!(
            t.render("Hi there!", "<s>", "</s>").unwrap(),
            "<|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\n"
        );
        let py = "{{ messages[0]['content'].strip().upper() }}";
        let t = ChatTemplate::new(py.into()).unwrap();
        assert_eq!(t.render("  hi ", "", "").unwrap(), "HI");
        let llama3 = "{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}";
        let t = ChatTemplate::new(llama3.into()).unwrap();
        assert_eq!(
            t.render(" Hi ", "<|begin_of_text|>", "<|eot_id|>").unwrap(),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
    }

    /// Zephyr's template, written over several lines: rendered as Jinja2 renders it with
    /// transformers' `trim_blocks` and `lstrip_blocks` (the expected text is Jinja2 3.1.6's,
    /// `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`).
    #[test]
    fn a_template_over_several_lines_renders_no_whitespace_of_its_own() {
        let zephyr = "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\\n' + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}\n";
        let t = ChatTemplate::new(zephyr.into()).unwrap();
        assert_eq!(
            t.render("Hi there!", "<s>", "</s>").unwrap(),
            "<|user|>\nHi there!</s>\n<|assistant|>\n"
        );
    }

    /// A broken template, one that raises, one that runs away and one that is too large:
    /// each an error that says which, nothing hangs.
    #[test]
    fn bad_templates_are_errors() {
        let err = |src: &str| {
            ChatTemplate::new(src.into())
                .unwrap()
                .render("x", "", "")
                .unwrap_err()
        };
        assert!(matches!(err("{% for %}"), ChatError::Render(_)));
        let raised = err("{{ raise_exception('Only user and assistant roles are supported!') }}");
        assert!(
            raised.to_string().contains("Only user and assistant"),
            "{raised}"
        );
        let runaway = err("{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}");
        assert!(matches!(runaway, ChatError::Render(_)), "{runaway}");
        assert_eq!(
            ChatTemplate::new("x".repeat(MAX_TEMPLATE_BYTES + 1)),
            Err(ChatError::TooLarge(MAX_TEMPLATE_BYTES + 1))
        );
    }
}
