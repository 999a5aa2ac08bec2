//! A message may carry only finite numbers. `serde_json` writes NaN and ±∞ as `null`, which the
//! other side then cannot decode into a number (the chart and transcript froze on it), so the
//! encoder walks the message first with [`Finite`], a serializer that writes nothing and fails
//! on the first non-finite float, naming where it is (`serde_path_to_error`).

use serde::ser::{self, Serialize};
use std::fmt;

#[derive(Debug)]
pub struct NotFinite(String);

impl fmt::Display for NotFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotFinite {}

impl ser::Error for NotFinite {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        NotFinite(msg.to_string())
    }
}

/// Ok when every float in `msg` is finite; else where the first one is ("stages[2].probs[7]").
pub fn check<T: Serialize + ?Sized>(msg: &T) -> Result<(), String> {
    serde_path_to_error::serialize(msg, Finite).map_err(|e| {
        let path = e.path().to_string();
        format!("{} at {path}", e.into_inner())
    })
}

/// The walking serializer: every value is visited, nothing is written.
struct Finite;

type R = Result<(), NotFinite>;

fn float(v: f64) -> R {
    if v.is_finite() {
        Ok(())
    } else {
        Err(NotFinite(format!("the number {v} is not finite")))
    }
}

macro_rules! accept {
    ($($name:ident: $t:ty),*) => { $(fn $name(self, _: $t) -> R { Ok(()) })* };
}

macro_rules! compound {
    ($($tr:ident { $($m:ident($($k:ident)?)),* }),*) => {$(
        impl ser::$tr for Finite {
            type Ok = ();
            type Error = NotFinite;
            $(fn $m<T: Serialize + ?Sized>(&mut self, $($k: &'static str,)? v: &T) -> R {
                $(let _ = $k;)?
                v.serialize(Finite)
            })*
            fn end(self) -> R { Ok(()) }
        }
    )*};
}

compound!(
    SerializeSeq { serialize_element() },
    SerializeTuple { serialize_element() },
    SerializeTupleStruct { serialize_field() },
    SerializeTupleVariant { serialize_field() },
    SerializeStruct { serialize_field(key) },
    SerializeStructVariant { serialize_field(key) }
);

impl ser::SerializeMap for Finite {
    type Ok = ();
    type Error = NotFinite;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> R {
        k.serialize(Finite)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> R {
        v.serialize(Finite)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::Serializer for Finite {
    type Ok = ();
    type Error = NotFinite;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    accept!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_str: &str, serialize_bytes: &[u8]);

    /// Not human-readable: a packed array (`crate::packed`) hands over its bytes, which
    /// it checked, instead of encoding them as text for nothing.
    fn is_human_readable(&self) -> bool {
        false
    }

    fn serialize_f32(self, v: f32) -> R {
        float(v as f64)
    }
    fn serialize_f64(self, v: f64) -> R {
        float(v)
    }
    fn serialize_none(self) -> R {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> R {
        v.serialize(Finite)
    }
    fn serialize_unit(self) -> R {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> R {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> R {
        v.serialize(Finite)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> R {
        v.serialize(Finite)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, NotFinite> {
        Ok(Finite)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, NotFinite> {
        Ok(Finite)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, NotFinite> {
        Ok(Finite)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, NotFinite> {
        Ok(Finite)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, NotFinite> {
        Ok(Finite)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, NotFinite> {
        Ok(Finite)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, NotFinite> {
        Ok(Finite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Inner {
        probs: Vec<f32>,
        label: Option<String>,
    }

    #[derive(Serialize)]
    enum Msg {
        Trace { stages: Vec<Inner>, entropy: f64 },
    }

    #[test]
    fn names_the_first_non_finite_number_and_passes_finite_ones() {
        let ok = Msg::Trace {
            stages: vec![Inner {
                probs: vec![0.5, 0.5],
                label: None,
            }],
            entropy: 0.69,
        };
        assert_eq!(check(&ok), Ok(()));
        let bad = Msg::Trace {
            stages: vec![
                Inner {
                    probs: vec![1.0],
                    label: Some("a".into()),
                },
                Inner {
                    probs: vec![0.5, f32::NAN],
                    label: None,
                },
            ],
            entropy: 0.0,
        };
        let e = check(&bad).unwrap_err();
        assert!(
            e.contains("NaN is not finite") && e.contains("stages[1].probs[1]"),
            "{e}"
        );
        let inf = Msg::Trace {
            stages: vec![],
            entropy: f64::NEG_INFINITY,
        };
        assert!(check(&inf).unwrap_err().contains("entropy"));
    }
}
