//! Shard bytes to lines for `scraper build`: a streaming reader that yields one complete zstd
//! frame at a time with its byte offset (so pass 2 can come back to it), a
//! decoder that reuses one context, and the line splitting both passes share.
//!
//! Beside [`super::read_lines`], which reads a whole shard into
//! memory, this holds at most one frame (plus a read-ahead buffer), so a very
//! large legacy shard does not set the build's memory use. The torn-tail and
//! bad-frame rules are the same.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes read from disk at a time.
const READ_CHUNK: usize = 4 << 20;
/// A declared frame content size above this is not trusted for pre-allocation.
const MAX_PREALLOC: u64 = 1 << 30;

/// Yields the complete frames of one shard file, in order.
pub(crate) struct FrameReader {
    file: File,
    buf: Vec<u8>,
    /// Start of unread data in `buf`.
    start: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    eof: bool,
    /// Bytes at the end that do not form a complete frame (set once the reader is done).
    pub truncated_bytes: u64,
}

impl FrameReader {
    pub(crate) fn open(path: &Path) -> io::Result<FrameReader> {
        Ok(FrameReader {
            file: File::open(path)?,
            buf: Vec::new(),
            start: 0,
            offset: 0,
            eof: false,
            truncated_bytes: 0,
        })
    }

    /// The next complete frame and its file offset; `None` at the end (a torn
    /// tail is recorded in `truncated_bytes`).
    pub(crate) fn next_frame(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        loop {
            let avail = &self.buf[self.start..];
            if !avail.is_empty()
                && let Ok(n) = zstd::zstd_safe::find_frame_compressed_size(avail)
                && n > 0
                && n <= avail.len()
            {
                let at = self.offset;
                let begin = self.start;
                self.start += n;
                self.offset += n as u64;
                return Ok(Some((at, &self.buf[begin..begin + n])));
            }
            if self.eof {
                self.truncated_bytes = avail.len() as u64;
                self.start = self.buf.len();
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// Drop consumed bytes and read more (at least doubling what is buffered,
    /// so a frame larger than a chunk is found in logarithmic rounds).
    fn fill(&mut self) -> io::Result<()> {
        self.buf.drain(..self.start);
        self.start = 0;
        let want = READ_CHUNK.max(self.buf.len());
        let old = self.buf.len();
        self.buf.resize(old + want, 0);
        let mut got = 0;
        while got < want {
            match self.file.read(&mut self.buf[old + got..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.buf.truncate(old + got);
        Ok(())
    }
}

/// Read `len` bytes at `offset` of `path` (one frame, for pass 2).
pub fn read_at(path: &Path, offset: u64, len: usize, out: &mut Vec<u8>) -> io::Result<()> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    out.clear();
    out.resize(len, 0);
    file.read_exact(out)
}

/// Decodes frames with one reusable context; checksums are verified.
pub(crate) struct Decoder {
    dctx: zstd::bulk::Decompressor<'static>,
}

impl Decoder {
    pub(crate) fn new() -> io::Result<Decoder> {
        Ok(Decoder {
            dctx: zstd::bulk::Decompressor::new()?,
        })
    }

    /// Decode one complete frame into `out` (cleared first).
    pub(crate) fn decode(&mut self, frame: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        out.clear();
        match zstd::zstd_safe::get_frame_content_size(frame) {
            Ok(Some(size)) if size <= MAX_PREALLOC => {
                // usize holds it: size <= 1 GiB.
                out.reserve(size as usize);
                self.dctx.decompress_to_buffer(frame, out)?;
                if out.len() as u64 != size {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "frame content size mismatch",
                    ));
                }
                Ok(())
            }
            _ => {
                zstd::stream::copy_decode(frame, &mut *out)?;
                if out.len() > u32::MAX as usize {
                    // Line offsets are u32: such a frame is treated as corrupt.
                    out.clear();
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "frame over 4 GiB",
                    ));
                }
                Ok(())
            }
        }
    }
}

/// The non-empty lines of a decoded frame, as byte ranges; both passes number
/// lines this way.
pub(crate) fn line_ranges(data: &[u8], out: &mut Vec<(u32, u32)>) {
    out.clear();
    let mut start = 0usize;
    for end in memchr::memchr_iter(b'\n', data).chain(std::iter::once(data.len())) {
        if end > start {
            // `Decoder::decode` refuses frames over 4 GiB, so offsets fit in u32.
            out.push((start as u32, end as u32));
        }
        start = end + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn frame(text: &str) -> Vec<u8> {
        zstd::bulk::compress(text.as_bytes(), 3).unwrap()
    }

    #[test]
    fn yields_frames_with_offsets_and_finds_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl.zst");
        let a = frame("a\nb\n");
        let b = frame("c\n");
        let mut f = File::create(&path).unwrap();
        f.write_all(&a).unwrap();
        f.write_all(&b).unwrap();
        f.write_all(&b[..b.len() - 2]).unwrap();
        drop(f);
        let mut r = FrameReader::open(&path).unwrap();
        let mut dec = Decoder::new().unwrap();
        let mut seen = vec![];
        let mut out = vec![];
        while let Some((off, fr)) = r.next_frame().unwrap() {
            let fr = fr.to_vec();
            dec.decode(&fr, &mut out).unwrap();
            seen.push((off, String::from_utf8(out.clone()).unwrap()));
        }
        assert_eq!(
            seen,
            vec![(0, "a\nb\n".into()), (a.len() as u64, "c\n".into())]
        );
        assert_eq!(r.truncated_bytes as usize, b.len() - 2);
        let mut back = vec![];
        read_at(&path, a.len() as u64, b.len(), &mut back).unwrap();
        assert_eq!(back, b);
    }

    #[test]
    fn frames_larger_than_a_read_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl.zst");
        let mut x = 0x1234_5678_u64;
        let noise: Vec<u8> = (0..(READ_CHUNK * 2 + 123))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let big = zstd::bulk::compress(&noise, 1).unwrap();
        assert!(big.len() > READ_CHUNK * 2);
        let small = frame("tail\n");
        let mut f = File::create(&path).unwrap();
        f.write_all(&big).unwrap();
        f.write_all(&small).unwrap();
        drop(f);
        let mut r = FrameReader::open(&path).unwrap();
        let (off, fr) = r.next_frame().unwrap().unwrap();
        assert_eq!((off, fr.len()), (0, big.len()));
        let (off, fr) = r.next_frame().unwrap().unwrap();
        assert_eq!((off, fr), (big.len() as u64, &small[..]));
        assert!(r.next_frame().unwrap().is_none());
        assert_eq!(r.truncated_bytes, 0);
    }

    #[test]
    fn lines_skip_empties() {
        let mut v = vec![];
        line_ranges(b"ab\n\ncd", &mut v);
        assert_eq!(v, vec![(0, 2), (4, 6)]);
        line_ranges(b"", &mut v);
        assert!(v.is_empty());
    }
}
