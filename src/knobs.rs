//! The sampling knobs as command-line options. Values stay text here: the engine's
//! `RawSettings::validate` parses them, so the CLI, the page and URLs share one set of rules
//! and messages.

use decoding_engine::sampling::RawSettings;

#[derive(clap::Args, Debug, Default)]
pub struct KnobArgs {
    /// ≥ 0; 0 = greedy, 1 = the model's distribution
    #[arg(long, allow_hyphen_values = true)]
    pub temperature: Option<String>,
    /// Keep the k most likely tokens (0 = off)
    #[arg(long, allow_hyphen_values = true)]
    pub top_k: Option<String>,
    /// Keep the smallest set with mass ≥ p, in (0, 1]
    #[arg(long, allow_hyphen_values = true)]
    pub top_p: Option<String>,
    /// Drop tokens below p × the top probability, in [0, 1]
    #[arg(long, allow_hyphen_values = true)]
    pub min_p: Option<String>,
    /// Locally typical sampling mass, in (0, 1]
    #[arg(long, allow_hyphen_values = true)]
    pub typical_p: Option<String>,
    /// CTRL penalty > 0: positive logits of seen tokens divided, negative multiplied
    #[arg(long, allow_hyphen_values = true)]
    pub repetition_penalty: Option<String>,
    /// Subtract count × α from seen tokens' logits
    #[arg(long, allow_hyphen_values = true)]
    pub frequency_penalty: Option<String>,
    /// Subtract α from seen tokens' logits
    #[arg(long, allow_hyphen_values = true)]
    pub presence_penalty: Option<String>,
    /// How many recent tokens the penalties see (0 = all)
    #[arg(long, allow_hyphen_values = true)]
    pub penalty_window: Option<String>,
    /// ID:VALUE added to a token's logit (repeatable, or comma-separated)
    #[arg(long, value_name = "ID:VAL", allow_hyphen_values = true)]
    pub logit_bias: Vec<String>,
    /// Ban tokens that would repeat an n-gram (0 = off)
    #[arg(long, allow_hyphen_values = true)]
    pub no_repeat_ngram: Option<String>,
    /// Stop when the generated text contains this (repeatable)
    #[arg(long, allow_hyphen_values = true)]
    pub stop: Vec<String>,
    /// hf, llama.cpp or openai: default stage order and boundary rules
    #[arg(long)]
    pub profile: Option<String>,
    /// The chain's order, stage names comma-separated
    #[arg(long)]
    pub order: Option<String>,
    /// sample or greedy
    #[arg(long)]
    pub strategy: Option<String>,
    /// Seed of the sampler
    #[arg(long, allow_hyphen_values = true)]
    pub seed: Option<String>,
}

impl KnobArgs {
    pub fn raw(&self) -> RawSettings {
        RawSettings {
            temperature: self.temperature.clone(),
            top_k: self.top_k.clone(),
            top_p: self.top_p.clone(),
            min_p: self.min_p.clone(),
            typical_p: self.typical_p.clone(),
            repetition_penalty: self.repetition_penalty.clone(),
            frequency_penalty: self.frequency_penalty.clone(),
            presence_penalty: self.presence_penalty.clone(),
            penalty_window: self.penalty_window.clone(),
            logit_bias: self.logit_bias.clone(),
            no_repeat_ngram: self.no_repeat_ngram.clone(),
            stop: self.stop.clone(),
            profile: self.profile.clone(),
            order: self.order.clone(),
            strategy: self.strategy.clone(),
            seed: self.seed.clone(),
            ..RawSettings::default()
        }
    }
}
