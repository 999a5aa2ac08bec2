//! Vocabulary-sized arrays in a message as one base64 string of their little-endian bytes
//! (`#[serde(with = "crate::packed")]`), not a JSON number per element.
//!
//! A trace of a 32,000-token vocabulary carries four such arrays (order, probabilities,
//! ghosts, removing stage): as JSON numbers that was about a megabyte of text a step, written
//! float by float in the worker, then read by `serde_json` into serde's buffered `Content`
//! tree (the events are internally tagged) on the page's thread. Packed, it is 400 KB of
//! base64 that both sides copy through in a pass, and a float comes back with its exact bits.
//!
//! A non-finite float is refused when written, as [`crate::finite`] refuses one anywhere else
//! in a message (the path names the field, the text the element).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::{self, Deserializer};
use serde::ser::{self, Serializer};
use serde::Deserialize;

/// An element type that travels packed: its fixed-size little-endian bytes.
pub trait Packable: Copy + std::fmt::Display {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
    fn finite(self) -> bool;
}

macro_rules! packable {
    ($($t:ty: $finite:expr),*) => {$(
        impl Packable for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            /// `bytes` is SIZE long (`chunks_exact`).
            fn get(bytes: &[u8]) -> $t {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
            fn finite(self) -> bool {
                let finite: fn($t) -> bool = $finite;
                finite(self)
            }
        }
    )*};
}

packable!(f32: f32::is_finite, u32: |_| true, i8: |_| true);

/// Base64 text for JSON; the bytes themselves for a serializer that is not human-readable,
/// which is [`crate::finite`]'s walk before every message is written: it has nothing to
/// read in them (the floats were checked here), so a message is not base64-encoded twice.
pub fn serialize<T: Packable, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    let mut bytes = Vec::with_capacity(v.len() * T::SIZE);
    for (i, &x) in v.iter().enumerate() {
        if !x.finite() {
            return Err(ser::Error::custom(format!(
                "the number {x} is not finite (element {i})"
            )));
        }
        x.put(&mut bytes);
    }
    if s.is_human_readable() {
        s.serialize_str(&STANDARD.encode(bytes))
    } else {
        s.serialize_bytes(&bytes)
    }
}

pub fn deserialize<'de, T: Packable, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    // Borrowed when the text allows (no escapes: base64 has none), owned otherwise.
    let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
    let bytes = STANDARD
        .decode(text.as_bytes())
        .map_err(|e| de::Error::custom(format!("a packed array is not base64: {e}")))?;
    if bytes.len() % T::SIZE != 0 {
        return Err(de::Error::custom(format!(
            "a packed array of {}-byte elements has {} bytes",
            T::SIZE,
            bytes.len()
        )));
    }
    Ok(bytes.chunks_exact(T::SIZE).map(T::get).collect())
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Msg {
        #[serde(with = "crate::packed")]
        probs: Vec<f32>,
        #[serde(with = "crate::packed")]
        ids: Vec<u32>,
        #[serde(with = "crate::packed")]
        by: Vec<i8>,
        plain: Vec<f32>,
    }

    fn msg(probs: Vec<f32>) -> Msg {
        Msg {
            probs,
            ids: vec![0, 1, 31_999, u32::MAX],
            by: vec![-1, 0, 3, i8::MIN, i8::MAX],
            plain: vec![0.25],
        }
    }

    /// Every bit comes back (the smallest subnormal, −0, 1/3 in f32), and the text is the
    /// base64 of the little-endian bytes, worked out here by hand for the ids.
    #[test]
    fn arrays_come_back_bit_for_bit_as_base64_of_their_bytes() {
        let m = msg(vec![f32::from_bits(1), -0.0, 1.0 / 3.0, 0.0, 1.0]);
        let text = crate::protocol::encode(&m).unwrap();
        // 0u32, 1u32, 31999u32 = 0x7CFF, u32::MAX: 00000000 01000000 FF7C0000 FFFFFFFF.
        assert!(
            text.contains(r#""ids":"AAAAAAEAAAD/fAAA/////w==""#),
            "{text}"
        );
        // −1, 0, 3, −128, 127 = FF 00 03 80 7F.
        assert!(text.contains(r#""by":"/wADgH8=""#), "{text}");
        let back: Msg = crate::protocol::decode(&text).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.probs), bits(&m.probs));
        assert_eq!(back, m);
    }

    /// A non-finite float is refused with where it is, as anywhere else in a message.
    #[test]
    fn a_non_finite_float_is_refused_with_its_field_and_element() {
        let e = crate::protocol::encode(&msg(vec![0.5, 0.25, f32::NAN])).unwrap_err();
        assert!(
            e.contains("NaN is not finite (element 2)") && e.contains("probs"),
            "{e}"
        );
        let e = crate::protocol::encode(&msg(vec![f32::INFINITY])).unwrap_err();
        assert!(e.contains("inf is not finite (element 0)"), "{e}");
    }

    /// Damaged text is an error, not a panic or a short array.
    #[test]
    fn damaged_packed_text_is_an_error() {
        let good = crate::protocol::encode(&msg(vec![1.0, 2.0])).unwrap();
        let not_b64 = good.replace(r#""by":"/wADgH8=""#, r#""by":"!!""#);
        assert!(crate::protocol::decode::<Msg>(&not_b64)
            .unwrap_err()
            .contains("not base64"));
        // Three bytes for 4-byte ids.
        let short = good.replace(r#""ids":"AAAAAAEAAAD/fAAA/////w==""#, r#""ids":"AAAA""#);
        assert!(crate::protocol::decode::<Msg>(&short)
            .unwrap_err()
            .contains("4-byte elements has 3 bytes"));
        let number = good.replace(r#""by":"/wADgH8=""#, r#""by":[1,2]"#);
        assert!(crate::protocol::decode::<Msg>(&number).is_err());
    }
}
