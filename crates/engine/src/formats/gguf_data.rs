//! Where a parsed GGUF file's tensor bytes come from: the whole file in memory (a test's
//! bytes), nowhere (the page's check of a file's first bytes, `Gguf::parse_head`), or the
//! file itself, read tensor by tensor as each is converted ([`Gguf::read_from`]). The last
//! is how a model is loaded: only the tensor being converted is held beside the converted
//! weights, never the whole file (a Q8_0 file read whole, then converted, peaked at twice
//! its size; issue 51).

use super::gguf::{check_in_data, Gguf, GgufError, TensorInfo};
use super::source::{read_full, ByteSource};
use std::borrow::Cow;
use std::cell::RefCell;

/// Where the tensors' bytes are.
pub enum Data<'a> {
    /// The data section in memory.
    Memory(&'a [u8]),
    /// Not read (a file's head, checked before the rest arrives).
    None,
    /// In the file, from its byte `start` on.
    Source {
        file: RefCell<&'a mut dyn ByteSource>,
        start: u64,
    },
}

impl<'a> Gguf<'a> {
    /// Parses the file's header, metadata and tensor table from its first `head` bytes
    /// (more, ×4 each time, while the table runs past them: a large vocabulary's metadata),
    /// checks every tensor against the file's length, and leaves the tensors in the file to
    /// be read one at a time.
    pub fn read_from(file: &'a mut dyn ByteSource, head: u64) -> Result<Gguf<'a>, GgufError> {
        let len = file.len();
        let mut want = head.clamp(1, len.max(1));
        let (version, metadata, tensors, start) = loop {
            let mut buf = vec![0; usize::try_from(want).unwrap_or(usize::MAX)];
            let got =
                read_full(&mut *file, 0, &mut buf).map_err(|e| GgufError::Read(e.to_string()))?;
            buf.truncate(got);
            match Gguf::parse_table(&buf) {
                Ok((g, start)) => break (g.version, g.metadata, g.tensors, start),
                Err(GgufError::Truncated { .. } | GgufError::Count { .. }) if want < len => {
                    want = want.saturating_mul(4).min(len);
                }
                Err(e) => return Err(e),
            }
        };
        check_in_data(&tensors, len.saturating_sub(start))?;
        Ok(Gguf {
            version,
            metadata,
            tensors,
            data: Data::Source {
                file: RefCell::new(file),
                start,
            },
        })
    }

    /// A tensor's bytes: a slice of the file in memory, or read from the file (its length
    /// was checked against the file's); an error for a file parsed without its data.
    pub(crate) fn bytes_of(&self, t: &TensorInfo) -> Result<Cow<'_, [u8]>, GgufError> {
        let unread = |why: String| GgufError::Tensor {
            name: t.name.clone(),
            why,
        };
        let range = usize::try_from(t.offset).ok().zip(
            t.offset
                .checked_add(t.bytes)
                .and_then(|e| usize::try_from(e).ok()),
        );
        match &self.data {
            Data::Memory(d) => range
                .and_then(|(a, b)| d.get(a..b))
                .map(Cow::Borrowed)
                .ok_or_else(|| unread("its data was not read".into())),
            Data::None => Err(unread("its data was not read".into())),
            Data::Source { file, start } => {
                let (a, b) = range.ok_or_else(|| unread("it is too large".into()))?;
                let mut buf = vec![0; b - a];
                let at = start + t.offset;
                let got = read_full(&mut **file.borrow_mut(), at, &mut buf)
                    .map_err(|e| unread(format!("reading its bytes: {e}")))?;
                if got < buf.len() {
                    return Err(unread(format!("the file ends {} bytes into it", got)));
                }
                Ok(Cow::Owned(buf))
            }
        }
    }
}
