//! The llama2.c reader's tests: files round-trip, every malformed header and tensor is a
//! named error, shared bytes are read as a file is.

use super::*;
use crate::config::ConfigError;
use crate::quant::Precision;

fn tiny_config(shared: bool) -> Config {
    Config {
        dim: 8,
        hidden_dim: 12,
        n_layers: 2,
        n_heads: 2,
        n_kv_heads: 1,
        vocab_size: 10,
        seq_len: 16,
        shared_classifier: shared,
        rope_theta: Config::LLAMA2C_ROPE_THETA,
        rms_eps: Config::LLAMA2C_RMS_EPS,
    }
}

#[test]
fn stories260k_shape_implies_its_file_size() {
    let c = Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
    assert_eq!(c.expected_file_bytes(), Some(1_056_540));
    assert_eq!(c.n_params() + (512 * 4 * 2) as u64, (1_056_540 - 28) / 4);
    assert_eq!((c.head_size(), c.kv_dim(), c.kv_mul()), (8, 32, 2));
}

#[test]
fn round_trip_shared_and_unshared() {
    for shared in [true, false] {
        let ck = Checkpoint::random(tiny_config(shared), 3).unwrap();
        let bytes = ck.to_bytes();
        assert_eq!(bytes.len() as u64, ck.config.expected_file_bytes().unwrap());
        let back = Checkpoint::from_bytes(&bytes).unwrap();
        assert_eq!(back.config, ck.config);
        assert_eq!(back.weights.wcls, ck.weights.wcls);
        assert_eq!(back.weights.token_embedding, ck.weights.token_embedding);
        assert_eq!(back.weights.w2, ck.weights.w2);
        assert_eq!(back.weights.wcls.is_some(), !shared);
    }
}

#[test]
fn empty_and_short_files_are_named() {
    assert_eq!(
        Checkpoint::from_bytes(&[]).unwrap_err(),
        CheckpointError::Empty
    );
    assert_eq!(
        Checkpoint::from_bytes(&[0; 10]).unwrap_err(),
        CheckpointError::TooShortForHeader { len: 10 }
    );
}

#[test]
fn wrong_size_message_names_both_sizes() {
    let mut bytes = Checkpoint::random(tiny_config(true), 1).unwrap().to_bytes();
    let full = bytes.len();
    bytes.truncate(1000);
    let err = Checkpoint::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "file is 1,000 bytes, header implies {}",
            thousands(full as u64)
        )
    );
}

#[test]
fn absurd_header_is_rejected_before_allocation() {
    let mut bytes = Vec::new();
    for h in [1i32 << 30, 172, 5, 8, 4, 512, 512] {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    match Checkpoint::from_bytes(&bytes).unwrap_err() {
        CheckpointError::Config(ConfigError::OutOfRange { field, .. }) => assert_eq!(field, "dim"),
        e => panic!("unexpected {e}"),
    }
    // In range individually but the product is huge: caught by the budget, with the
    // figure, before the file's size is even looked at.
    let mut bytes = Vec::new();
    for h in [32768i32, 131072, 1024, 8, 8, 1 << 20, 1 << 20] {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    let e = Checkpoint::from_bytes(&bytes).unwrap_err();
    assert!(matches!(e, CheckpointError::Budget(_)), "{e}");
    // Within the budget but not the size the header implies: the size check.
    let mut bytes = Vec::new();
    for h in [64i32, 172, 5, 8, 4, 512, 512] {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    let e = Checkpoint::check_header(&bytes, 28, Budget::default()).unwrap_err();
    assert!(matches!(e, CheckpointError::WrongSize { .. }), "{e}");
}

#[test]
fn inconsistent_heads_are_rejected() {
    assert_eq!(
        Config::from_header([64, 172, 5, 7, 7, 512, 512]).unwrap_err(),
        ConfigError::DimNotDivisibleByHeads {
            dim: 64,
            n_heads: 7
        }
    );
    assert_eq!(
        Config::from_header([64, 172, 5, 8, 3, 512, 512]).unwrap_err(),
        ConfigError::HeadsNotDivisibleByKvHeads {
            n_heads: 8,
            n_kv_heads: 3
        }
    );
    assert_eq!(
        Config::from_header([24, 172, 5, 8, 8, 512, 512]).unwrap_err(),
        ConfigError::OddHeadSize { head_size: 3 }
    );
    assert!(matches!(
        Config::from_header([64, 172, 5, 8, 16, 512, 512]).unwrap_err(),
        ConfigError::OutOfRange {
            field: "n_kv_heads",
            ..
        }
    ));
    assert!(matches!(
        Config::from_header([64, 172, 5, 8, 4, i32::MIN, 512]).unwrap_err(),
        ConfigError::OutOfRange { .. }
    ));
}

/// The blockwise scan names the first non-finite value wherever it falls: in the first
/// or a later block of 4,096, at a block's edges, in a short last block.
#[test]
fn the_first_non_finite_value_is_found_in_any_block() {
    let v: Vec<f32> = (0..10_001).map(|i| i as f32 * 0.5 - 700.0).collect();
    assert!(check_finite("w", &v).is_ok());
    for (at, bad) in [
        (0, f32::NAN),
        (4095, f32::NEG_INFINITY),
        (4096, f32::INFINITY),
        (5000, f32::NAN),
        (10_000, f32::INFINITY),
    ] {
        let mut w = v.clone();
        w[at] = bad;
        w[(at + 7).min(10_000)] = f32::NAN; // a later one is not reported
        match check_finite("w", &w) {
            Err(CheckpointError::NonFinite { tensor, index, .. }) => {
                assert_eq!((tensor, index), ("w", at))
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(check_finite("w", &[]).is_ok());
}

#[test]
fn nan_weight_is_reported_with_its_tensor() {
    let ck = Checkpoint::random(tiny_config(true), 1).unwrap();
    let mut bytes = ck.to_bytes();
    // First element of wq: after the header, the embedding (10*8) and rms_att (2*8).
    let off = HEADER_BYTES + (10 * 8 + 2 * 8) * 4;
    bytes[off..off + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    match Checkpoint::from_bytes(&bytes).unwrap_err() {
        CheckpointError::NonFinite { tensor, index, .. } => {
            assert_eq!((tensor, index), ("wq", 0))
        }
        e => panic!("unexpected {e}"),
    }
}

fn shared(bytes: Vec<u8>) -> SharedBytes {
    std::sync::Arc::new(bytes)
}

fn matrices_shared(w: &TransformerWeights, c: &Config) -> Vec<bool> {
    w.matrices(c)
        .iter()
        .map(|(_, t, _)| matches!(t, Tensor::F32(f) if f.is_shared()))
        .collect()
}

/// The file's bytes used in place give the checkpoint its bytes give when read: every
/// matrix a view into those bytes (no copy), the same values and the same file written
/// back; at an address that is not 4-byte aligned the floats are copied, still equal.
#[test]
fn a_checkpoint_in_shared_bytes_is_the_same_and_its_matrices_are_views() {
    for untied in [false, true] {
        let ck = Checkpoint::random(tiny_config(!untied), 5).unwrap();
        let bytes = ck.to_bytes();
        let read = Checkpoint::from_bytes(&bytes).unwrap();
        let s = Checkpoint::from_shared(shared(bytes.clone()), Budget::default()).unwrap();
        assert_eq!(s.config, read.config);
        assert_eq!(
            s.weights.matrices(&s.config),
            read.weights.matrices(&read.config)
        );
        assert_eq!(s.weights.norms(), read.weights.norms());
        assert_eq!(s.to_bytes(), bytes);
        assert!(matrices_shared(&s.weights, &s.config).iter().all(|&v| v));
        assert!(matrices_shared(&read.weights, &read.config)
            .iter()
            .all(|&v| !v));
        assert_eq!(s.weights.matrices(&s.config).len(), 8 + usize::from(untied));

        // The same file one byte into a buffer: wherever the allocation falls, one of
        // the two starts is misaligned for f32, and that one copies.
        let mut off = vec![0u8];
        off.extend_from_slice(&bytes);
        let both: Vec<SharedBytes> = vec![shared(bytes.clone()), {
            struct Tail(Vec<u8>);
            impl AsRef<[u8]> for Tail {
                fn as_ref(&self) -> &[u8] {
                    &self.0[1..]
                }
            }
            std::sync::Arc::new(Tail(off))
        }];
        let mut kinds = Vec::new();
        for b in both {
            let c = Checkpoint::from_shared(b, Budget::default()).unwrap();
            assert_eq!(c.to_bytes(), bytes);
            kinds.push(matrices_shared(&c.weights, &c.config)[0]);
        }
        assert_ne!(kinds[0], kinds[1], "one start is aligned, the other not");
    }
}

/// In shared bytes, a file's faults are found as when it is read: a NaN weight named
/// with its tensor, a short file by both sizes, an empty one, a version-2 file read.
#[test]
fn shared_bytes_are_checked_as_a_read_file_is() {
    let ck = Checkpoint::random(tiny_config(true), 1).unwrap();
    let mut bytes = ck.to_bytes();
    let off = HEADER_BYTES + (10 * 8 + 2 * 8) * 4 + 4 * 3;
    bytes[off..off + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    let b = Budget::default();
    for e in [
        Checkpoint::from_shared(shared(bytes.clone()), b).unwrap_err(),
        Checkpoint::from_bytes(&bytes).unwrap_err(),
    ] {
        match e {
            CheckpointError::NonFinite { tensor, index, .. } => {
                assert_eq!((tensor, index), ("wq", 3))
            }
            e => panic!("unexpected {e}"),
        }
    }
    let good = ck.to_bytes();
    let cut = good[..good.len() - 8].to_vec();
    assert_eq!(
        Checkpoint::from_shared(shared(cut.clone()), b).unwrap_err(),
        Checkpoint::from_bytes(&cut).unwrap_err()
    );
    assert_eq!(
        Checkpoint::from_shared(shared(Vec::new()), b).unwrap_err(),
        CheckpointError::Empty
    );
    assert_eq!(
        Checkpoint::from_shared(shared(vec![0; 10]), b).unwrap_err(),
        CheckpointError::TooShortForHeader { len: 10 }
    );
    // A version-2 (Q8_0) file is read as `from_bytes` reads it (quantized, not viewed).
    let mut v2 = Vec::new();
    ck.write_v2(&mut v2).unwrap();
    let (s, r) = (
        Checkpoint::from_shared(shared(v2.clone()), b).unwrap(),
        Checkpoint::from_bytes(&v2).unwrap(),
    );
    assert_eq!(s.weights.precision(), Precision::Q8);
    assert_eq!(s.weights.matrices(&s.config), r.weights.matrices(&r.config));
}

/// A file read as a stream gives the same checkpoint as its bytes; a stream that ends
/// before the length it was said to have (a file cut while being read) is an error
/// naming the byte, not a short model.
#[test]
fn a_checkpoint_read_from_a_stream_is_the_same_and_a_cut_stream_is_an_error() {
    let ck = Checkpoint::random(tiny_config(false), 3).unwrap();
    let bytes = ck.to_bytes();
    let len = bytes.len() as u64;
    let read = Checkpoint::read_within(&mut &bytes[..], len, Budget::default()).unwrap();
    assert_eq!(read.weights.wcls, ck.weights.wcls);
    assert_eq!(read.weights.w2, ck.weights.w2);
    assert_eq!(read.to_bytes(), bytes);
    let cut = &bytes[..bytes.len() - 10];
    match Checkpoint::read_within(&mut &cut[..], len, Budget::default()) {
        Err(CheckpointError::Read { offset, .. }) => assert!(offset > HEADER_BYTES as u64),
        other => panic!("{other:?}"),
    }
}
