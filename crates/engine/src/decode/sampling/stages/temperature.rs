//! Temperature, plain and dynamic: z / T, where llama.cpp's dynamic temperature
//! (`llama_sampler_init_temp_ext(temp, delta, exponent)`, its `--dynatemp-range` and
//! `--dynatemp-exponent`) picks T per step from the entropy of what reaches it.

use super::first_argmax;
use crate::decode::sampling::knobs::{slider, Kind, Knob, KnobSpec, PeerDefault};
use crate::decode::sampling::profile::Profile;
use crate::decode::sampling::settings::{Settings, MAX_MAGNITUDE};
use crate::decode::sampling::stage::{Cut, Cx, Places, Rule, Stage, StageDef};

#[allow(non_upper_case_globals)]
impl Knob {
    pub const Temperature: Knob = Knob::new("temperature");
    pub const DynatempRange: Knob = Knob::new("dynatemp_range");
    pub const DynatempExponent: Knob = Knob::new("dynatemp_exponent");
}

const STAGE: Stage = Stage::new("temperature");

pub static TEMPERATURE: StageDef = StageDef {
    stage: STAGE,
    knobs: &[
        KnobSpec::of_stage(
            STAGE,
            "temperature",
            "Temperature T",
            "softmax(z / T), ≥ 0; 0 = greedy, 1 = the model's distribution",
            "0.7",
            slider(0.0, 2.0, 0.01),
            Kind::Float(|x| {
                if x < 0.0 {
                    Err("must be ≥ 0 (0 = greedy)")
                } else if x != 0.0 && !(1.0 / MAX_MAGNITUDE..=MAX_MAGNITUDE).contains(&x) {
                    Err("must be 0 (greedy) or in [0.0001, 10000]")
                } else {
                    Ok(())
                }
            }),
            &["1"],
        )
        .aliases(&["temp"])
        // llama.cpp `common_params_sampling`: `temp = 0.80f`.
        .peers(&[PeerDefault {
            profile: Profile::LlamaCpp,
            value: "0.8",
            sampling_only: false,
        }]),
        KnobSpec::of_stage(
            STAGE,
            "dynatemp_range",
            "Dynamic temperature range",
            "llama.cpp's: T moves in [T − range, T + range] with the entropy; 0 = off",
            "0.5",
            slider(0.0, 2.0, 0.05),
            Kind::Float(|x| {
                (0.0..=MAX_MAGNITUDE)
                    .contains(&x)
                    .then_some(())
                    .ok_or("must be in [0, 10000] (0 = off)")
            }),
            &["0"],
        ),
        KnobSpec::of_stage(
            STAGE,
            "dynatemp_exponent",
            "Dynamic temperature exponent",
            "llama.cpp's: T = min + (max − min) × (H / ln n)^exponent",
            "2",
            slider(0.1, 4.0, 0.1),
            Kind::Float(|x| {
                (x > 0.0 && x <= 100.0)
                    .then_some(())
                    .ok_or("must be in (0, 100]")
            }),
            &["1"],
        )
        .aliases(&["dynatemp_exp"]),
    ],
    // Lesson, HF and vLLM: before the truncations; llama.cpp: last before the draw.
    places: Places {
        lesson: 60,
        hf: 60,
        llama_cpp: 100,
        openai: 60,
    },
    replaces_chain: None,
    rule: &Temperature,
    aliases: &["temp"],
};

struct Temperature;

impl Rule for Temperature {
    fn apply(&self, cx: &Cx<'_>, z: &mut [f64]) -> Cut {
        let s = cx.settings;
        let (t, range) = (s.num(Knob::Temperature), range(s));
        if range > 0.0 {
            let (used, h) = dynamic_temperature(z, t, range, s.num(Knob::DynatempExponent));
            let cut = Cut::threshold("temperature", used);
            return match h {
                Some(h) => cut.with("normalised entropy", h),
                None => cut,
            };
        }
        temperature(z, t);
        Cut::threshold("temperature", t)
    }

    fn is_neutral(&self, _: &StageDef, s: &Settings) -> bool {
        s.num(Knob::Temperature) == 1.0 && s.num(Knob::DynatempRange) == 0.0
    }

    fn is_greedy(&self, s: &Settings) -> bool {
        s.num(Knob::Temperature) == 0.0 && range(s) == 0.0
    }
}

/// The dynamic range in force: none where a stage replaces the chain (llama.cpp's
/// `common_sampler_init` puts the plain `llama_sampler_init_temp(temp)` before the stage,
/// whatever `dynatemp_range` says).
fn range(s: &Settings) -> f64 {
    match s.replacing_stage() {
        Some(_) => 0.0,
        None => s.num(Knob::DynatempRange),
    }
}

/// Temperature: z / T. T = 0 is greedy: only the (first) largest logit survives (llama.cpp's
/// `llama_sampler_temp_impl` for `temp <= 0`).
pub fn temperature(z: &mut [f64], t: f64) {
    if t == 0.0 {
        // The first maximum (logits here are finite or −∞), and all else removed in place:
        // a greedy step runs this on every token (no mask of the vocabulary).
        let best = first_argmax(z);
        for (i, v) in z.iter_mut().enumerate() {
            if Some(i) != best {
                *v = f64::NEG_INFINITY;
            }
        }
    } else {
        z.iter_mut().filter(|v| v.is_finite()).for_each(|v| *v /= t);
    }
}

/// llama.cpp's `llama_sampler_temp_ext_apply` with `delta > 0`: over the n tokens still in
/// play, H = entropy of their softmax, and
/// T = min_temp + (max_temp − min_temp) × (H / ln n)^exponent, with
/// min_temp = max(0, t − delta), max_temp = t + delta; then z / T (T = 0: greedy). With one
/// token or none it does nothing. Returns T used and H / ln n.
pub fn dynamic_temperature(z: &mut [f64], t: f64, delta: f64, exponent: f64) -> (f64, Option<f64>) {
    let n = z.iter().filter(|v| v.is_finite()).count();
    if n <= 1 {
        return (t, None);
    }
    let (min_t, max_t) = ((t - delta).max(0.0), t + delta);
    let max_entropy = (n as f64).ln();
    let p = super::softmax(z);
    let h: f64 = p.iter().filter(|&&q| q > 0.0).map(|&q| -q * q.ln()).sum();
    let norm = h / max_entropy;
    let mut dyn_t = min_t + (max_t - min_t) * norm.powf(exponent);
    if dyn_t < 1e-4 {
        // Below the smallest temperature the knob takes, z / T can overflow: what remains is
        // greedy (T → 0), as at T = 0.
        dyn_t = 0.0;
    }
    temperature(z, dyn_t);
    (dyn_t, Some(norm))
}

#[cfg(test)]
mod tests {
    use super::super::softmax;
    use super::*;

    #[test]
    fn temperature_zero_is_greedy() {
        let mut z = vec![1.0, 3.0, 3.0, 2.0];
        temperature(&mut z, 0.0);
        assert_eq!(softmax(&z), vec![0.0, 1.0, 0.0, 0.0]);
    }

    /// A uniform distribution has normalised entropy 1: T = t + delta. One certain token
    /// among removed ones: nothing happens.
    #[test]
    fn dynamic_temperature_follows_the_entropy() {
        let mut z = vec![0.0; 4];
        let (t, h) = dynamic_temperature(&mut z, 1.0, 0.5, 1.0);
        assert!((t - 1.5).abs() < 1e-12 && (h.unwrap() - 1.0).abs() < 1e-12);
        let mut z = vec![2.0, f64::NEG_INFINITY];
        assert_eq!(dynamic_temperature(&mut z, 1.0, 0.5, 1.0), (1.0, None));
        assert_eq!(z[0], 2.0);
    }
}
