//! Quantized weights: llama2.c version-2 files, written by us and built by hand from the format's
//! description, load and give the distribution of their dequantized weights; malformed ones give
//! their typed errors; stories260K's straddling `w2` groups are exact.

mod common;

use decoding_engine::decode::sampling::stages::softmax;
use decoding_engine::formats::llama2c::CheckpointError;
use decoding_engine::kernels::dot_portable;
use decoding_engine::quant::Activations;
use decoding_engine::quant::{Precision, Tensor};
use decoding_engine::weights::Checkpoint;
use decoding_engine::{KvCache, Transformer};

/// Next-token distributions after every prefix of `tokens`.
fn distributions(t: &Transformer, tokens: &[u32]) -> Vec<Vec<f32>> {
    let mut cache = KvCache::new(&t.config);
    let logits = t.prefill(&mut cache, tokens, true).unwrap();
    logits
        .chunks(t.config.vocab_size)
        .map(|l| {
            let z: Vec<f64> = l.iter().map(|&v| v as f64).collect();
            softmax(&z).into_iter().map(|p| p as f32).collect()
        })
        .collect()
}

fn max_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The float32 model whose weights are the dequantized ones of `t`.
fn dequantized(t: &Transformer) -> Transformer {
    let w = t.weights.at(&t.config, Precision::F32);
    Transformer::new(Checkpoint {
        config: t.config,
        weights: w,
    })
}

const PROMPT: &str = "Once upon a time, there was a little girl named Lily.";

#[test]
fn quantize_writes_a_v2_file_that_loads_and_gives_its_dequantized_distribution() {
    let model = common::stories260k();
    let tokens = model.encode_prompt(PROMPT).unwrap();
    let q8 = model.transformer.at(Precision::Q8);
    let mut file = Vec::new();
    Checkpoint {
        config: q8.config,
        weights: q8.weights.clone(),
    }
    .write_v2(&mut file)
    .unwrap();
    // 256 header + 11·64·4 norms + each matrix's bytes and 4 per group of 64, worked out
    // by hand for (64, 172, 5, 8, 4, 512, 512): emb 32,768 + 2,048; wq, wo 5·(4,096 + 256);
    // wk, wv 5·(2,048 + 128); w1, w2, w3 5·(11,008 + 688).
    assert_eq!(file.len(), 278_608);
    assert_eq!(&file[..4], b"24ka", "the u32 0x616b3432, little-endian");
    let loaded = Checkpoint::from_bytes(&file).unwrap();
    assert_eq!(loaded.weights.precision(), Precision::Q8);
    assert_eq!(loaded.weights.w2, q8.weights.w2);
    assert_eq!(loaded.weights.token_embedding, q8.weights.token_embedding);
    let loaded = Transformer::new(loaded);
    let d = max_diff(
        &distributions(&loaded.with_activations(Activations::F32), &tokens),
        &distributions(&dequantized(&loaded), &tokens),
    );
    assert!(d <= 1e-4, "q8 file vs its dequantized weights: {d}");
    int8_moves_it_a_little(&loaded, &tokens, "q8");
    // And the file is not the float32 model: quantization moved the distribution.
    let f = max_diff(
        &distributions(&loaded, &tokens),
        &distributions(&model.transformer, &tokens),
    );
    assert!(f > 1e-6, "{f}");
}

#[test]
fn q4_in_memory_gives_its_dequantized_distribution() {
    let model = common::stories260k();
    let tokens = model.encode_prompt(PROMPT).unwrap();
    let q4 = model.transformer.at(Precision::Q4);
    assert_eq!(q4.weights.precision(), Precision::Q4);
    let d = max_diff(
        &distributions(&q4.with_activations(Activations::F32), &tokens),
        &distributions(&dequantized(&q4), &tokens),
    );
    assert!(d <= 1e-4, "q4 vs its dequantized weights: {d}");
    int8_moves_it_a_little(&q4, &tokens, "q4");
}

/// With int8 activations (the CPU's default) the distribution moves from the float32
/// activations' by x's own rounding: more than float order would, and on stories260K (64
/// wide, where one rounding step of x is a larger share of a row) by up to ≈ 0.01 (q8) and
/// 0.022 (q4) of probability.
fn int8_moves_it_a_little(t: &Transformer, tokens: &[u32], name: &str) {
    let d = max_diff(
        &distributions(t, tokens),
        &distributions(&t.with_activations(Activations::F32), tokens),
    );
    assert!(
        d > 1e-6 && d < 5e-2,
        "{name}: int8 activations moved a probability by {d}"
    );
}

/// stories260K's w2 is 64 × 172 per layer: with groups of 64 (q8) and 32 (q4) every row but
/// the first starts inside a group. Every row of every layer against the float32 product
/// of the dequantized row (llama2.c's runq.c would use only 128 of the 172 inputs).
#[test]
fn stories260k_w2_every_row_is_the_product_of_its_dequantized_weights() {
    let model = common::stories260k();
    let c = model.transformer.config;
    let x: Vec<f32> = (0..c.hidden_dim)
        .map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0)
        .collect();
    for p in [Precision::Q8, Precision::Q4] {
        let t = model.transformer.weights.w2.at(p, c.n_layers, 64);
        let Tensor::Quant(q) = &t else { panic!() };
        assert!(
            !c.hidden_dim.is_multiple_of(q.group),
            "the trap: rows straddle groups"
        );
        let deq = q.dequantize();
        for l in 0..c.n_layers {
            let block = q.block(l);
            for r in 0..c.dim {
                let row = &deq[(l * c.dim + r) * c.hidden_dim..][..c.hidden_dim];
                let want = dot_portable(row, &x);
                let got = block.dot(r * c.hidden_dim, &x);
                assert!(
                    (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "{p} layer {l} row {r}: {got} vs {want}"
                );
                // The last 44 inputs count: dropping them (runq.c) changes the product.
                let head = dot_portable(&row[..128], &x[..128]);
                assert!((head - want).abs() > 1e-6, "{p} layer {l} row {r}");
            }
        }
    }
}

/// A version-2 file built byte by byte from the format's description (no code under test):
/// dim 8, hidden 12, 2 layers, 2 heads, 1 KV head, vocab 6, seq 8, shared classifier, groups
/// of 16 (so w2's 12-wide rows straddle groups). Its twin: a legacy float32 file of the
/// values q·d, built the same way.
struct HandMade {
    v2: Vec<u8>,
    v0: Vec<u8>,
}

fn hand_made() -> HandMade {
    let (dim, hidden, layers, heads, kv_heads, vocab, seq) = (8usize, 12, 2, 2, 1, 6, 8);
    let kv_dim = dim * kv_heads / heads;
    let group = 16usize;
    let ints = [dim, hidden, layers, heads, kv_heads, vocab, seq].map(|v| v as i32);
    let mut v2 = Vec::new();
    v2.extend_from_slice(&0x616b_3432u32.to_le_bytes());
    v2.extend_from_slice(&2i32.to_le_bytes());
    for v in ints {
        v2.extend_from_slice(&v.to_le_bytes());
    }
    v2.push(1);
    v2.extend_from_slice(&(group as i32).to_le_bytes());
    v2.resize(256, 0);
    let mut v0 = Vec::new();
    for v in ints {
        v0.extend_from_slice(&v.to_le_bytes());
    }
    let f32s = |out: &mut Vec<u8>, v: &[f32]| {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    };
    let norm = |n: usize, k: usize| -> Vec<f32> {
        (0..n).map(|i| 1.0 + 0.01 * ((i + k) % 7) as f32).collect()
    };
    let (rms_att, rms_ffn, rms_final) =
        (norm(layers * dim, 1), norm(layers * dim, 2), norm(dim, 3));
    // Matrices: ints in −127..=127 from a formula, one scale per 16, dequantized by hand.
    let mut deq: Vec<Vec<f32>> = Vec::new();
    for f32s_v2 in [&rms_att, &rms_ffn, &rms_final] {
        f32s(&mut v2, f32s_v2);
    }
    let shapes = [
        (1, vocab * dim),
        (layers, dim * dim),
        (layers, kv_dim * dim),
        (layers, kv_dim * dim),
        (layers, dim * dim),
        (layers, hidden * dim),
        (layers, dim * hidden),
        (layers, hidden * dim),
    ];
    for (m, &(blocks, len)) in shapes.iter().enumerate() {
        let mut all = Vec::new();
        for b in 0..blocks {
            let q: Vec<i8> = (0..len)
                .map(|i| (((i * 29 + b * 11 + m * 5) % 255) as i32 - 127) as i8)
                .collect();
            let s: Vec<f32> = (0..len / group)
                .map(|g| 0.001 * (1 + (g + b + m) % 4) as f32)
                .collect();
            v2.extend(q.iter().map(|&v| v as u8));
            f32s(&mut v2, &s);
            all.extend(q.iter().enumerate().map(|(i, &v)| v as f32 * s[i / group]));
        }
        deq.push(all);
    }
    // Legacy order: emb, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, RoPE.
    f32s(&mut v0, &deq[0]);
    f32s(&mut v0, &rms_att);
    for m in &deq[1..5] {
        f32s(&mut v0, m);
    }
    f32s(&mut v0, &rms_ffn);
    for m in &deq[5..8] {
        f32s(&mut v0, m);
    }
    f32s(&mut v0, &rms_final);
    f32s(&mut v0, &vec![0.0; seq * (dim / heads)]);
    HandMade { v2, v0 }
}

#[test]
fn a_hand_made_v2_file_gives_the_distribution_of_its_dequantized_twin() {
    let h = hand_made();
    let q = Transformer::new(Checkpoint::from_bytes(&h.v2).unwrap());
    let f = Transformer::new(Checkpoint::from_bytes(&h.v0).unwrap());
    assert_eq!(q.weights.precision(), Precision::Q8);
    assert_eq!(q.config, f.config);
    let tokens = [1, 5, 2, 0, 3, 4, 4, 1];
    let d = max_diff(&distributions(&q, &tokens), &distributions(&f, &tokens));
    assert!(d <= 1e-4, "{d}");
    // Writing it back gives the same bytes.
    let mut again = Vec::new();
    Checkpoint::from_bytes(&h.v2)
        .unwrap()
        .write_v2(&mut again)
        .unwrap();
    assert_eq!(again, h.v2);
}

#[test]
fn malformed_v2_files_give_their_typed_errors() {
    let good = hand_made().v2;
    let with = |at: usize, bytes: &[u8]| {
        let mut f = good.clone();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        Checkpoint::from_bytes(&f).unwrap_err()
    };
    assert_eq!(
        with(0, &0x616b_3433u32.to_le_bytes()),
        CheckpointError::UnknownMagic { magic: 0x616b_3433 }
    );
    assert_eq!(
        with(4, &3i32.to_le_bytes()),
        CheckpointError::UnsupportedVersion { version: 3 }
    );
    assert_eq!(
        with(37, &0i32.to_le_bytes()),
        CheckpointError::GroupSize { group: 0 }
    );
    assert_eq!(
        with(37, &7i32.to_le_bytes()),
        CheckpointError::GroupDoesNotDivide {
            tensor: "token_embedding",
            len: 48,
            group: 7
        }
    );
    assert_eq!(with(36, &[2]), CheckpointError::BadSharedFlag { value: 2 });
    let e = Checkpoint::from_bytes(&good[..good.len() - 1]).unwrap_err();
    assert!(matches!(e, CheckpointError::WrongSize { .. }), "{e}");
    let e = Checkpoint::from_bytes(&good[..100]).unwrap_err();
    assert!(matches!(e, CheckpointError::WrongSize { .. }), "{e}");
    // The first scale of the token embedding: after the header, the norms (2·2·8 + 8
    // floats) and its 48 int8 values.
    let at = 256 + 40 * 4 + 48;
    match with(at, &f32::NAN.to_le_bytes()) {
        CheckpointError::NonFinite { tensor, index, .. } => {
            assert_eq!((tensor, index), ("token_embedding", 0))
        }
        e => panic!("{e}"),
    }
    // A NaN norm too.
    match with(256, &f32::INFINITY.to_le_bytes()) {
        CheckpointError::NonFinite { tensor, .. } => assert_eq!(tensor, "rms_att"),
        e => panic!("{e}"),
    }
}
