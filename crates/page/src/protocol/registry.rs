//! How the panels' messages make one message: `messages!` builds `Request` (or `Event`)
//! from each part's own enum, one line a part. On the wire a message is its part's JSON as
//! it is (`{"type":"spec_start",…}`): serialising writes the part's message, reading finds
//! the part whose enum names the `type` and reads the message with that enum, so its own
//! error comes back. Every part's enum is internally tagged by `type` in snake_case and
//! lists its names (`strum::VariantNames`, the same spelling); no two parts share a name
//! (`names_are_unique`, tested).

/// `messages! { Name { Part(PartEnum), … } }`: the enum of every part's messages.
macro_rules! messages {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $part:ident($ty:ty)),* $(,)? }) => {
        $(#[$meta])*
        // A message is built once and moved once: boxing its larger parts would buy nothing.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $($(#[$vmeta])* $part($ty)),*
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $($name::$part(m) => m.serialize(s)),*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                use serde::de::Error;
                let v = serde_json::Value::deserialize(d)?;
                let kind = v
                    .get("type")
                    .and_then(|t| t.as_str())
                    .ok_or_else(|| D::Error::missing_field("type"))?
                    .to_string();
                $(
                    if <$ty as strum::VariantNames>::VARIANTS.contains(&kind.as_str()) {
                        return <$ty>::deserialize(v).map($name::$part).map_err(D::Error::custom);
                    }
                )*
                Err(D::Error::custom(format!("no message has the type {kind:?}")))
            }
        }

        $(impl From<$ty> for $name {
            fn from(m: $ty) -> $name {
                $name::$part(m)
            }
        })*

        impl $name {
            /// Each part's names (`type` values), for the uniqueness check.
            pub fn parts() -> Vec<&'static [&'static str]> {
                vec![$(<$ty as strum::VariantNames>::VARIANTS),*]
            }
        }
    };
}

pub(crate) use messages;

/// Whether no `type` is named by two parts.
#[cfg(test)]
pub fn names_are_unique(parts: &[&[&str]]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for name in parts.iter().flat_map(|p| p.iter()) {
        if !seen.insert(*name) {
            return Err(format!("{name:?} is named by two parts"));
        }
    }
    Ok(())
}
