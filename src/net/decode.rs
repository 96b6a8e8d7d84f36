//! Content-Encoding decoding with a hard cap on decoded bytes.
//!
//! reqwest's own decompression is switched off so that we can count the bytes
//! on the wire (`max_raw_bytes`) and the decoded bytes (`max_body_bytes`)
//! separately. Raw chunks are pushed into a streaming decoder whose output
//! sink refuses to grow past the cap, so a gzip bomb stops at the cap instead
//! of filling memory.

use std::io::{self, Write};

/// Why decoding stopped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// More decoded bytes than the cap.
    TooLarge,
    /// The encoding is unknown or the stream is corrupt.
    Corrupt(String),
}

/// An output buffer that fails once it would exceed `cap` bytes.
#[derive(Debug)]
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    over: bool,
}

impl Capped {
    /// The capacity the buffer grows to when it must hold `needed` bytes
    /// (`needed <= cap`): doubling, but never past the cap, so the body
    /// budget can cover the growth before it happens and one body never
    /// holds more than its cap.
    fn grown(&self, needed: usize) -> usize {
        let capacity = self.buf.capacity();
        if needed <= capacity {
            return capacity;
        }
        needed.max(capacity.saturating_mul(2).min(self.cap))
    }

    fn extend(&mut self, data: &[u8]) {
        let target = self.grown(self.buf.len() + data.len());
        self.buf.reserve_exact(target - self.buf.len());
        self.buf.extend_from_slice(data);
    }
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > self.cap {
            // Keep what fits, so a caller that truncates (robots.txt) has it.
            let room = self.cap.saturating_sub(self.buf.len());
            self.extend(&data[..room]);
            self.over = true;
            return Err(io::Error::other("decoded body over the cap"));
        }
        self.extend(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Inner {
    Identity(Capped),
    Gzip(flate2::write::MultiGzDecoder<Capped>),
    /// `deflate` before its first bytes tell zlib-wrapped from raw.
    DeflatePending(Capped),
    Zlib(flate2::write::ZlibDecoder<Capped>),
    RawDeflate(flate2::write::DeflateDecoder<Capped>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Capped>>),
    Zstd(zstd::stream::write::Decoder<'static, Capped>),
}

/// A streaming decoder for one response body.
pub(crate) struct Decoder {
    inner: Inner,
}

impl Decoder {
    /// A decoder for a `Content-Encoding` value (`None` or `identity`: no decoding).
    pub(crate) fn new(encoding: Option<&str>, cap: u64) -> Result<Decoder, DecodeError> {
        let sink = Capped {
            buf: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            over: false,
        };
        let enc = encoding.map(|e| e.trim().to_ascii_lowercase());
        let inner = match enc.as_deref() {
            None | Some("") | Some("identity") => Inner::Identity(sink),
            Some("gzip") | Some("x-gzip") => Inner::Gzip(flate2::write::MultiGzDecoder::new(sink)),
            Some("deflate") => Inner::DeflatePending(sink),
            Some("br") => Inner::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(
                sink,
                16 * 1024,
            ))),
            Some("zstd") => Inner::Zstd(
                zstd::stream::write::Decoder::new(sink)
                    .map_err(|e| DecodeError::Corrupt(format!("zstd: {e}")))?,
            ),
            Some(other) => {
                return Err(DecodeError::Corrupt(format!(
                    "unsupported content-encoding `{other}`"
                )));
            }
        };
        Ok(Decoder { inner })
    }

    /// Feed raw bytes from the wire.
    pub(crate) fn push(&mut self, raw: &[u8]) -> Result<(), DecodeError> {
        if raw.is_empty() {
            return Ok(());
        }
        if let Inner::DeflatePending(_) = self.inner {
            let Inner::DeflatePending(sink) =
                std::mem::replace(&mut self.inner, Inner::Identity(empty()))
            else {
                unreachable!("matched just above");
            };
            self.inner = if looks_like_zlib(raw) {
                Inner::Zlib(flate2::write::ZlibDecoder::new(sink))
            } else {
                Inner::RawDeflate(flate2::write::DeflateDecoder::new(sink))
            };
        }
        let result = match &mut self.inner {
            Inner::Identity(s) => s.write_all(raw),
            Inner::Gzip(d) => d.write_all(raw),
            Inner::DeflatePending(_) => Ok(()),
            Inner::Zlib(d) => d.write_all(raw),
            Inner::RawDeflate(d) => d.write_all(raw),
            Inner::Brotli(d) => d.write_all(raw),
            Inner::Zstd(d) => d.write_all(raw),
        };
        self.check(result)
    }

    fn sink(&self) -> &Capped {
        match &self.inner {
            Inner::Identity(s) | Inner::DeflatePending(s) => s,
            Inner::Gzip(d) => d.get_ref(),
            Inner::Zlib(d) => d.get_ref(),
            Inner::RawDeflate(d) => d.get_ref(),
            Inner::Brotli(d) => d.get_ref(),
            Inner::Zstd(d) => d.get_ref(),
        }
    }

    fn check(&self, result: io::Result<()>) -> Result<(), DecodeError> {
        match result {
            Ok(()) => Ok(()),
            Err(_) if self.sink().over => Err(DecodeError::TooLarge),
            Err(e) => Err(DecodeError::Corrupt(e.to_string())),
        }
    }

    /// Bytes the decoded buffer holds (its capacity), for the body budget.
    pub(crate) fn held(&self) -> usize {
        self.sink().buf.capacity()
    }

    /// What [`Decoder::held`] will be once `extra` more decoded bytes are
    /// pushed (exact for identity, where raw bytes are decoded bytes).
    pub(crate) fn held_after(&self, extra: usize) -> usize {
        let s = self.sink();
        s.grown(s.buf.len().saturating_add(extra).min(s.cap))
    }

    /// No decoding (identity): one raw byte is one decoded byte.
    pub(crate) fn is_identity(&self) -> bool {
        matches!(self.inner, Inner::Identity(_))
    }

    /// The bytes decoded so far (up to the cap), after `push` said `TooLarge`.
    pub(crate) fn into_partial(mut self) -> Vec<u8> {
        std::mem::take(&mut self.sink_mut().buf)
    }

    fn sink_mut(&mut self) -> &mut Capped {
        match &mut self.inner {
            Inner::Identity(s) | Inner::DeflatePending(s) => s,
            Inner::Gzip(d) => d.get_mut(),
            Inner::Zlib(d) => d.get_mut(),
            Inner::RawDeflate(d) => d.get_mut(),
            Inner::Brotli(d) => d.get_mut(),
            Inner::Zstd(d) => d.get_mut(),
        }
    }

    /// End of the raw stream: flush the decoder and return the decoded body.
    /// A stream that ends early keeps what was decoded (as browsers do);
    /// only going over the cap is an error here.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>, DecodeError> {
        let result = match &mut self.inner {
            Inner::Identity(_) | Inner::DeflatePending(_) => Ok(()),
            Inner::Gzip(d) => d.try_finish(),
            Inner::Zlib(d) => d.try_finish(),
            Inner::RawDeflate(d) => d.try_finish(),
            Inner::Brotli(d) => d.flush(),
            Inner::Zstd(d) => d.flush(),
        };
        if let Err(DecodeError::TooLarge) = self.check(result) {
            return Err(DecodeError::TooLarge);
        }
        Ok(self.into_partial())
    }
}

fn empty() -> Capped {
    Capped {
        buf: Vec::new(),
        cap: 0,
        over: false,
    }
}

/// RFC 1950 header check: CM = 8 and the 16-bit header is a multiple of 31.
fn looks_like_zlib(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] & 0x0f == 8 && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn decode(enc: Option<&str>, raw: &[u8], cap: u64) -> Result<Vec<u8>, DecodeError> {
        let mut d = Decoder::new(enc, cap)?;
        for piece in raw.chunks(7) {
            d.push(piece)?;
        }
        d.finish()
    }

    #[test]
    fn encodings_round_trip() {
        let text = b"hello hello hello world".repeat(50);
        assert_eq!(decode(None, &text, 1 << 20).unwrap(), text);
        assert_eq!(decode(Some("gzip"), &gz(&text), 1 << 20).unwrap(), text);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&text).unwrap();
        assert_eq!(
            decode(Some("deflate"), &z.finish().unwrap(), 1 << 20).unwrap(),
            text
        );
        let mut r = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        r.write_all(&text).unwrap();
        assert_eq!(
            decode(Some("deflate"), &r.finish().unwrap(), 1 << 20).unwrap(),
            text
        );
        let mut br = Vec::new();
        brotli::BrotliCompress(&mut &text[..], &mut br, &Default::default()).unwrap();
        assert_eq!(decode(Some("br"), &br, 1 << 20).unwrap(), text);
        let zs = zstd::bulk::compress(&text, 3).unwrap();
        assert_eq!(decode(Some("zstd"), &zs, 1 << 20).unwrap(), text);
        // Two gzip members concatenated decode to both.
        let mut two = gz(b"ab");
        two.extend(gz(b"cd"));
        assert_eq!(decode(Some("gzip"), &two, 100).unwrap(), b"abcd");
    }

    #[test]
    fn cap_stops_a_bomb() {
        let bomb = gz(&vec![0u8; 8 << 20]);
        assert!(bomb.len() < 64 << 10);
        assert_eq!(
            decode(Some("gzip"), &bomb, 1 << 20),
            Err(DecodeError::TooLarge)
        );
        assert_eq!(decode(None, &[1u8; 11], 10), Err(DecodeError::TooLarge));
        assert_eq!(decode(None, &[1u8; 10], 10).unwrap().len(), 10);
    }

    #[test]
    fn unknown_encoding_is_an_error() {
        assert!(matches!(
            Decoder::new(Some("compress"), 10),
            Err(DecodeError::Corrupt(_))
        ));
    }
}
