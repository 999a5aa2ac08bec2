//! Logit bias (OpenAI `logit_bias`, HF `SequenceBiasLogitsProcessor` for single tokens,
//! llama.cpp's `llama_sampler_init_logit_bias`): z[id] += value. First in every peer's chain.

use crate::decode::sampling::knobs::{Control, Kind, Knob, KnobSpec};
use crate::decode::sampling::profile::Profile;
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

const STAGE: Stage = Stage::new("logit_bias");

#[allow(non_upper_case_globals)]
impl Knob {
    pub const LogitBias: Knob = Knob::new("logit_bias");
}

pub static LOGIT_BIAS: StageDef = StageDef {
    stage: STAGE,
    knobs: &[KnobSpec::of_stage(
        STAGE,
        "logit_bias",
        "Logit bias",
        "ID:VALUE added to a token's logit, comma-separated or repeated (2:-100 bans EOS)",
        "2:-100",
        Control::List { sep: ',' },
        Kind::Bias,
        &[],
    )
    // The OpenAI API reference: `logit_bias` values in [−100, 100].
    .bounds(&[(Profile::OpenAi, 100.0)])],
    // transformers `_get_logits_processor`: SequenceBias first; llama.cpp's
    // `common_sampler_init` adds the logit-bias sampler before the chain; vLLM applies it
    // first among the non-argmax-invariant processors.
    places: Places::all(10),
    replaces_chain: None,
    rule: &LogitBias,
    aliases: &[],
};

struct LogitBias;

impl Rule for LogitBias {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        logit_bias(z, cx.settings.bias(Knob::LogitBias));
        Cut::default()
    }
}

/// z[id] += value for each entry.
pub fn logit_bias(z: &mut [f64], bias: &[(u32, f64)]) {
    for &(id, b) in bias {
        if let Some(v) = z.get_mut(id as usize) {
            *v += b;
        }
    }
}
