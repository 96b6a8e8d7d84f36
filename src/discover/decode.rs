//! From a response body to readable text: gunzip when the body starts with the
//! gzip magic bytes (whatever the headers claimed), stop at the decoded-size cap,
//! and transcode to UTF-8 with replacement so one bad byte cannot sink a document.

use std::borrow::Cow;
use std::io::{self, BufReader, Read};

use encoding_rs::{Encoding, UTF_8};
use flate2::read::MultiGzDecoder;

use super::DiscoverError;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Does the body start like gzip data?
pub(super) fn is_gzip(body: &[u8]) -> bool {
    body.starts_with(&GZIP_MAGIC)
}

/// The marker inside the `io::Error` a [`Capped`] reader returns at its cap.
#[derive(Debug)]
struct CapReached;

impl std::fmt::Display for CapReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("decoded size cap reached")
    }
}

impl std::error::Error for CapReached {}

/// A reader that fails with [`CapReached`] once more than `cap` bytes would be read.
pub(super) struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the cap: the document is fine if it ends exactly here.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(CapReached)),
            };
        }
        let room = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// The decoded bytes of `body` as a reader: gunzipped when gzip, capped at `cap`.
pub(super) fn open(body: &[u8], cap: u64) -> Capped<Box<dyn Read + '_>> {
    let inner: Box<dyn Read + '_> = if is_gzip(body) {
        Box::new(MultiGzDecoder::new(body))
    } else {
        Box::new(body)
    };
    Capped { inner, left: cap }
}

/// The whole decoded document in memory (borrowed when it is not gzip).
pub(super) fn bytes(body: &[u8], cap: u64) -> Result<Cow<'_, [u8]>, DiscoverError> {
    if !is_gzip(body) {
        if body.len() as u64 > cap {
            return Err(DiscoverError::TooLarge { limit: cap });
        }
        return Ok(Cow::Borrowed(body));
    }
    let mut out = Vec::new();
    open(body, cap)
        .read_to_end(&mut out)
        .map_err(|e| io_error(&e, true, cap))?;
    Ok(Cow::Owned(out))
}

/// The first `len` decoded bytes, for sniffing. A short or truncated gzip stream
/// still yields what it decoded; a body that is not gzip at all is returned as is.
pub(super) fn head(body: &[u8], len: usize) -> Result<Cow<'_, [u8]>, DiscoverError> {
    if !is_gzip(body) {
        return Ok(Cow::Borrowed(&body[..body.len().min(len)]));
    }
    let mut out = Vec::with_capacity(len);
    let mut reader = MultiGzDecoder::new(body).take(len as u64);
    if let Err(e) = reader.read_to_end(&mut out)
        && out.is_empty()
    {
        return Err(DiscoverError::Gzip(e.to_string()));
    }
    Ok(Cow::Owned(out))
}

/// Turn a read failure into a [`DiscoverError`].
pub(super) fn io_error(e: &io::Error, gzip: bool, cap: u64) -> DiscoverError {
    if e.get_ref().is_some_and(|inner| inner.is::<CapReached>()) {
        DiscoverError::TooLarge { limit: cap }
    } else if gzip {
        DiscoverError::Gzip(e.to_string())
    } else {
        DiscoverError::Malformed {
            what: "document",
            reason: e.to_string(),
        }
    }
}

/// The encoding a document declares: a byte-order mark, else `encoding="..."` in
/// the XML declaration, else UTF-8. Returns the encoding and the BOM's length.
pub(super) fn detect_encoding(head: &[u8]) -> (&'static Encoding, usize) {
    if let Some((encoding, bom)) = Encoding::for_bom(head) {
        return (encoding, bom);
    }
    if let Some(decl) = head.strip_prefix(b"<?xml") {
        let end = memchr::memmem::find(decl, b"?>").unwrap_or(decl.len().min(200));
        let decl = &decl[..end];
        if let Some(at) = memchr::memmem::find(decl, b"encoding") {
            let rest = &decl[at + b"encoding".len()..];
            let rest = rest.trim_ascii_start().strip_prefix(b"=").unwrap_or(rest);
            let rest = rest.trim_ascii_start();
            if let Some((&quote, value)) = rest.split_first()
                && (quote == b'"' || quote == b'\'')
            {
                let value = &value[..memchr::memchr(quote, value).unwrap_or(value.len())];
                if let Some(encoding) = Encoding::for_label(value) {
                    // A declaration can only be read in an ASCII-compatible encoding.
                    if encoding.is_ascii_compatible() {
                        return (encoding, 0);
                    }
                }
            }
        }
    }
    (UTF_8, 0)
}

/// Transcodes a byte stream to UTF-8, replacing malformed sequences.
pub(super) struct Utf8Lossy<R> {
    inner: R,
    decoder: encoding_rs::Decoder,
    input: Vec<u8>,
    output: Vec<u8>,
    pos: usize,
    eof: bool,
    finished: bool,
}

impl<R: Read> Utf8Lossy<R> {
    /// Reads the first kilobyte to find the encoding.
    pub(super) fn new(mut inner: R) -> io::Result<Utf8Lossy<R>> {
        let mut input = Vec::with_capacity(8192);
        (&mut inner).take(1024).read_to_end(&mut input)?;
        let (encoding, bom) = detect_encoding(&input);
        input.drain(..bom);
        Ok(Utf8Lossy {
            inner,
            decoder: encoding.new_decoder_without_bom_handling(),
            input,
            output: Vec::new(),
            pos: 0,
            eof: false,
            finished: false,
        })
    }

    /// A buffered reader over the UTF-8 text, ready for `quick-xml`.
    pub(super) fn buffered(inner: R) -> io::Result<BufReader<Utf8Lossy<R>>> {
        Ok(BufReader::with_capacity(16 * 1024, Utf8Lossy::new(inner)?))
    }
}

impl<R: Read> Read for Utf8Lossy<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pos < self.output.len() {
                let n = buf.len().min(self.output.len() - self.pos);
                buf[..n].copy_from_slice(&self.output[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.finished {
                return Ok(0);
            }
            if self.input.is_empty() && !self.eof {
                let mut chunk = [0u8; 8192];
                let n = self.inner.read(&mut chunk)?;
                if n == 0 {
                    self.eof = true;
                } else {
                    self.input.extend_from_slice(&chunk[..n]);
                }
            }
            let room = self
                .decoder
                .max_utf8_buffer_length(self.input.len())
                .unwrap_or(3 * self.input.len() + 16);
            self.output.clear();
            self.output.resize(room.max(16), 0);
            self.pos = 0;
            let last = self.eof;
            let (_, read, written, _) =
                self.decoder
                    .decode_to_utf8(&self.input, &mut self.output, last);
            self.input.drain(..read);
            self.output.truncate(written);
            // After the call with `last = true` the decoder must not be used again;
            // the output was sized for all the input, so nothing is left behind.
            if last {
                self.finished = true;
            }
        }
    }
}

/// Decode a sniffing head to text (BOM or declared encoding, lossy).
pub(super) fn head_text(head: &[u8]) -> Cow<'_, str> {
    let (encoding, bom) = detect_encoding(head);
    encoding.decode_without_bom_handling(&head[bom..]).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn cap_is_exact() {
        let data = vec![b'a'; 100];
        let gz = gzip(&data);
        assert_eq!(bytes(&gz, 100).unwrap().len(), 100);
        assert_eq!(
            bytes(&gz, 99).unwrap_err(),
            DiscoverError::TooLarge { limit: 99 }
        );
        assert_eq!(bytes(&data, 100).unwrap().len(), 100);
        assert!(bytes(&data, 99).is_err());
    }

    #[test]
    fn encodings_are_transcoded() {
        let table: [(&[u8], &str); 4] = [
            (
                b"<?xml version='1.0' encoding='ISO-8859-1'?><a>caf\xe9</a>",
                "café",
            ),
            (b"\xef\xbb\xbf<a>caf\xc3\xa9</a>", "café"),
            (b"<a>bad \xff byte</a>", "bad \u{fffd} byte"),
            (b"\xff\xfe<\0a\0>\0\xe9\0<\0/\0a\0>\0", "<a>é</a>"),
        ];
        for (input, want) in table {
            let mut text = String::new();
            Utf8Lossy::new(input)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            assert!(text.contains(want), "{text:?} lacks {want:?}");
        }
    }

    #[test]
    fn broken_gzip_is_an_error() {
        let mut gz = gzip(b"<urlset></urlset>");
        gz.truncate(12);
        assert!(matches!(bytes(&gz, 1000), Err(DiscoverError::Gzip(_))));
        assert!(matches!(
            head(&[0x1f, 0x8b, 0, 0], 100),
            Err(DiscoverError::Gzip(_))
        ));
    }
}
