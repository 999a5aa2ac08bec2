//! The tensor types of the GGUF files people download: ggml's blocks decoded as the `gguf` package
//! decodes them, block by block; files of BF16, Q4_1, Q5_0 and Q5_1 written by that package; and
//! Q4_K_M, Q5_K_M and Q6_K files written by llama.cpp's own quantizer
//! (`scripts/make-kquant-fixtures.py` rebuilds them at set-up with ggml's quantizer; the SHA-256 of
//! the files llama.cpp wrote and its logits on them are committed).

mod common;

use common::prefill_logits as logits;
use decoding_engine::budget::Budget;
use decoding_engine::quant::ggml::blocks::dequantize;
use decoding_engine::quant::ggml::Kind;
use decoding_engine::quant::{Activations, Tensor};
use decoding_engine::{Model, Precision, Transformer};
use sha2::{Digest, Sha256};

use common::fixture as read;

fn gguf_fixture(name: &str) -> Vec<u8> {
    read("../../assets/models/fixtures/gguf", name)
}

/// A k-quant fixture (a file the set-up wrote, or llama.cpp's committed logits), its SHA-256
/// checked against the committed `SHA256SUMS` of what llama.cpp wrote.
fn kquant_fixture(name: &str) -> Vec<u8> {
    let refs = "../../tests/fixtures/kquant";
    let dir = if name.ends_with(".gguf") {
        "../../assets/models/fixtures/kquant"
    } else {
        refs
    };
    let bytes = read(dir, name);
    let sums = String::from_utf8(read(refs, "SHA256SUMS")).unwrap();
    let want = sums
        .lines()
        .find_map(|l| l.strip_suffix(&format!("  {name}")))
        .unwrap_or_else(|| panic!("{name} is not in SHA256SUMS"));
    let got: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        got, want,
        "{name}: not the file llama.cpp wrote (run scripts/make-fixtures.sh)"
    );
    bytes
}

/// 64 random blocks of each type (finite f16 scales, one of them 0) decode to the bits of
/// `gguf.quants.dequantize`.
#[test]
fn every_block_type_decodes_as_the_gguf_package_does() {
    for (kind, name) in [
        (Kind::F16, "f16"),
        (Kind::BF16, "bf16"),
        (Kind::Q8_0, "q8_0"),
        (Kind::Q4_0, "q4_0"),
        (Kind::Q4_1, "q4_1"),
        (Kind::Q5_0, "q5_0"),
        (Kind::Q5_1, "q5_1"),
        (Kind::Q4_K, "q4_k"),
        (Kind::Q5_K, "q5_k"),
        (Kind::Q6_K, "q6_k"),
    ] {
        let raw = gguf_fixture(&format!("blocks-{name}.bin"));
        let want: Vec<u32> = gguf_fixture(&format!("blocks-{name}.f32"))
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let (per, size) = kind.block();
        assert_eq!(raw.len() as u64 / size * per, want.len() as u64, "{name}");
        let mut got = vec![0.0f32; want.len()];
        dequantize(kind, &raw, &mut got);
        let got: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        assert_eq!(first, None, "{name}: weight {first:?} differs");
    }
}

fn model(bytes: &[u8]) -> Model {
    Model::from_memory([("model.gguf", bytes)], Budget::default()).unwrap()
}

fn llama2c(name: &str) -> Transformer {
    Transformer::new(decoding_engine::Checkpoint::from_bytes(&gguf_fixture(name)).unwrap())
}

const TOKENS: [u32; 12] = [1, 403, 407, 261, 378, 432, 383, 409, 261, 498, 20, 7];

/// BF16 is read as float32 exactly: the same logits as the float32 model of gguf's own
/// dequantization. Q4_1, Q5_0 and Q5_1 are held in their own blocks: each weight is gguf's
/// value, bit for bit; with float32 activations the logits are that model's, and with the
/// activations quantized as llama.cpp quantizes them (Q8_0/Q8_1) the distributions close.
#[test]
fn bf16_and_the_legacy_types_load_against_the_gguf_packages_values() {
    let bf16 = model(&gguf_fixture("tiny-bf16.gguf"));
    assert_eq!(bf16.transformer.weights.precision(), Precision::F32);
    assert_eq!(
        logits(&bf16.transformer, &TOKENS),
        logits(&llama2c("tiny-bf16-deq.bin"), &TOKENS)
    );
    for name in ["q4_1", "q5_0", "q5_1"] {
        let m = model(&gguf_fixture(&format!("tiny-{name}.gguf")));
        assert_eq!(m.transformer.weights.precision(), Precision::Ggml, "{name}");
        let deq = llama2c(&format!("tiny-{name}-deq.bin"));
        let Tensor::Ggml(g) = &m.transformer.weights.w2 else {
            panic!("{name}: w2 is not in its file's blocks");
        };
        assert_eq!(g.dequantize(), *deq.weights.w2.to_f32(), "{name}: w2");
        let f32_acts = m.transformer.with_activations(Activations::F32);
        assert_eq!(
            logits(&f32_acts, &TOKENS),
            logits(&deq, &TOKENS),
            "{name}: float32 activations"
        );
        let worst = worst_probability_gap(&m.transformer, &deq);
        eprintln!("{name}, int8 activations: a probability moves by at most {worst:.2e}");
        assert!(worst > 0.0 && worst < 2e-2, "{name}: {worst}");
    }
}

fn worst_probability_gap(a: &Transformer, b: &Transformer) -> f64 {
    let v = a.config.vocab_size;
    let (p, q) = (
        common::softmax::softmax_rows(&logits(a, &TOKENS), v),
        common::softmax::softmax_rows(&logits(b, &TOKENS), v),
    );
    p.iter()
        .zip(&q)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// log-softmax of a row in f64.
fn log_probs(row: &[f32]) -> Vec<f64> {
    let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
    let lse = max
        + row
            .iter()
            .map(|&v| (v as f64 - max).exp())
            .sum::<f64>()
            .ln();
    row.iter().map(|&v| v as f64 - lse).collect()
}

/// log-softmax of a row, centred (its mean subtracted): logits compared without their
/// arbitrary offset.
fn centred_log_probs(row: &[f32]) -> Vec<f64> {
    let lp = log_probs(row);
    let mean = lp.iter().sum::<f64>() / lp.len() as f64;
    lp.iter().map(|v| v - mean).collect()
}

/// ‖c(ours) − c(llama.cpp)‖ / ‖c(llama.cpp)‖ at the worst position, c the centred log-probs.
fn relative_error(ours: &[f32], theirs: &[f32], vocab: usize) -> f64 {
    ours.chunks_exact(vocab)
        .zip(theirs.chunks_exact(vocab))
        .map(|(a, b)| {
            let (a, b) = (centred_log_probs(a), centred_log_probs(b));
            let num: f64 = a.iter().zip(&b).map(|(x, y)| (x - y).powi(2)).sum();
            let den: f64 = b.iter().map(|y| y * y).sum();
            (num / den).sqrt()
        })
        .fold(0.0, f64::max)
}

/// The mean over positions of KL(p_llama.cpp ‖ p_ours), nats.
fn mean_kl(ours: &[f32], theirs: &[f32], vocab: usize) -> f64 {
    let rows = ours.len() / vocab;
    let total: f64 = ours
        .chunks_exact(vocab)
        .zip(theirs.chunks_exact(vocab))
        .map(|(a, b)| {
            let (a, b) = (log_probs(a), log_probs(b));
            b.iter()
                .zip(&a)
                .map(|(lb, la)| lb.exp() * (lb - la))
                .sum::<f64>()
        })
        .sum();
    total / rows as f64
}

/// llama.cpp's Q4_K_M, Q5_K_M and Q6_K of a seeded random Llama (Q4_K_M mixes Q4_K and Q6_K
/// across layers) are held in their own blocks, and their next-token log-probabilities at
/// every position of the prompt are within 2 % (relative, centred) of llama.cpp's on the
/// same file (its float32 KV cache, flash attention off), the activations quantized as
/// llama.cpp's CPU quantizes them (Q8_K); most positions agree to 1e-4, a rounding that
/// falls the other way moving a few. Float32 activations stay within 5 %.
#[test]
fn llama_cpps_k_quant_files_match_its_logits() {
    for name in ["q4_k_m", "q5_k_m", "q6_k"] {
        let m = model(&kquant_fixture(&format!("kq-{name}.gguf")));
        assert_eq!(m.transformer.weights.precision(), Precision::Ggml, "{name}");
        let held = m.transformer.weights.bytes(&m.transformer.config);
        let file = kquant_fixture(&format!("kq-{name}.gguf")).len() as u64;
        assert!(
            held <= file,
            "{name}: {held} bytes held for a file of {file}"
        );
        let theirs: Vec<f32> = kquant_fixture(&format!("kq-{name}.logits"))
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let v = m.transformer.config.vocab_size;
        assert_eq!(theirs.len(), TOKENS.len() * v, "{name}: logits");
        let f32_acts = m.transformer.with_activations(Activations::F32);
        let (ours_f32, ours_int8) = (logits(&f32_acts, &TOKENS), logits(&m.transformer, &TOKENS));
        let e_f32 = relative_error(&ours_f32, &theirs, v);
        let e_int8 = relative_error(&ours_int8, &theirs, v);
        let (kl_f32, kl_int8) = (
            mean_kl(&ours_f32, &theirs, v),
            mean_kl(&ours_int8, &theirs, v),
        );
        eprintln!("{name}: centred log-probs against llama.cpp's, worst position: {e_f32:.4} (f32 activations), {e_int8:.4} (int8); mean KL(llama.cpp ‖ ours) {kl_f32:.2e}, {kl_int8:.2e} nats");
        // llama.cpp multiplies Q8_K activations: that is the 2 % line; float32 ones are
        // another computation, its distance from llama.cpp's that quantization's own
        assert!(e_int8 < 0.02 && e_f32 < 0.05, "{name}: {e_int8}, {e_f32}");
        assert!(
            kl_f32 > 0.0 && kl_f32 < 1e-3 && kl_int8 < 1e-3,
            "{name}: KL {kl_f32}, {kl_int8}"
        );
    }
}
