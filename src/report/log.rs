//! Reading `crawl.log` incrementally for the dashboard: a chunk of complete
//! lines from a byte offset, and a generation id that changes when a new run
//! recreates the file (so a reader's offset into the old file is not reused).

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::str::FromStr;

/// Bytes of the first line hashed for the generation id.
const HEAD: usize = 4096;

/// Which log file a reader's offset belongs to (a new run recreates the
/// file). Travels to the dashboard's script and back as `none`, `empty` or
/// 16 hex digits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Generation {
    /// There is no log file (`none`).
    #[default]
    Missing,
    /// The file's first line is not complete yet (`empty`).
    Empty,
    /// xxh3 of the first line (or of its first 4 KiB).
    Head(u64),
    /// A token this server never issues (empty, or mangled): it matches no
    /// file. Kept as received.
    Unknown(String),
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Generation::Missing => f.write_str("none"),
            Generation::Empty => f.write_str("empty"),
            Generation::Head(h) => write!(f, "{h:016x}"),
            Generation::Unknown(s) => f.write_str(s),
        }
    }
}

impl FromStr for Generation {
    type Err = std::convert::Infallible;

    /// Never fails: what is not a generation this server writes is `Unknown`.
    fn from_str(s: &str) -> Result<Generation, Self::Err> {
        Ok(match s {
            "none" => Generation::Missing,
            "empty" => Generation::Empty,
            _ => match u64::from_str_radix(s, 16) {
                Ok(h) if s.len() == 16 => Generation::Head(h),
                _ => Generation::Unknown(s.to_string()),
            },
        })
    }
}

impl serde::Serialize for Generation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Complete lines read from `from`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Generation of the file the lines came from.
    pub generation: Generation,
    /// The offset actually read from: `0` after a reset.
    pub from: u64,
    /// The offset just past the last complete line returned.
    pub next: u64,
    /// The file is not the one the caller's offset referred to.
    pub reset: bool,
    /// More complete lines are waiting past `next`.
    pub more: bool,
    /// The lines, each ending in `\n`.
    pub bytes: Vec<u8>,
}

/// The generation of an open log file: a hash of its first line, or
/// [`Generation::Empty`] before its first line is complete.
pub fn generation(file: &mut File) -> io::Result<Generation> {
    file.seek(SeekFrom::Start(0))?;
    let mut head = Vec::with_capacity(HEAD);
    file.take(HEAD as u64).read_to_end(&mut head)?;
    Ok(match memchr::memchr(b'\n', &head) {
        Some(end) => Generation::Head(xxhash_rust::xxh3::xxh3_64(&head[..end])),
        None if head.len() == HEAD => Generation::Head(xxhash_rust::xxh3::xxh3_64(&head)),
        None => Generation::Empty,
    })
}

/// Read up to `max` bytes of complete lines starting at `from`. When
/// `generation` is given and differs from the file's, or `from` is past the
/// end, reading starts again at 0 with `reset` set. A line longer than `max`
/// is returned whole rather than never.
pub(crate) fn read_chunk(
    path: &Path,
    generation_seen: Option<&Generation>,
    from: u64,
    max: usize,
) -> io::Result<Chunk> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Chunk {
                generation: Generation::Missing,
                reset: from != 0 || generation_seen.is_some_and(|g| *g != Generation::Missing),
                ..Chunk::default()
            });
        }
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let generation = generation(&mut file)?;
    let mut chunk = Chunk {
        from,
        next: from,
        ..Chunk::default()
    };
    if generation_seen.is_some_and(|g| *g != generation) || from > len {
        chunk.reset = true;
        chunk.from = 0;
        chunk.next = 0;
    }
    chunk.generation = generation;
    let start = chunk.from;
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity(max.min((len - start) as usize));
    (&mut file).take(max as u64).read_to_end(&mut buf)?;
    let full = buf.len() == max;
    match memchr::memrchr(b'\n', &buf) {
        Some(end) => buf.truncate(end + 1),
        None if buf.len() == max => {
            // One line longer than `max`: extend to its end, if it has one.
            let mut rest = Vec::new();
            file.read_to_end(&mut rest)?;
            match memchr::memchr(b'\n', &rest) {
                Some(end) => buf.extend_from_slice(&rest[..=end]),
                None => buf.clear(),
            }
        }
        None => buf.clear(),
    }
    chunk.next = start + buf.len() as u64;
    chunk.more = full && len > chunk.next;
    chunk.bytes = buf;
    Ok(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn chunks_stop_at_line_ends_and_reset_on_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.log");
        let c = read_chunk(&path, None, 0, 100).unwrap();
        assert_eq!((&c.generation, c.reset), (&Generation::Missing, false));
        let c = read_chunk(&path, Some(&"".parse().unwrap()), 0, 100).unwrap();
        assert!(c.reset, "an empty token matches no file");

        std::fs::write(&path, "{\"a\":1}").unwrap();
        let c = read_chunk(&path, Some(&Generation::Missing), 0, 100).unwrap();
        assert_eq!((&c.generation, c.bytes.len()), (&Generation::Empty, 0));
        std::fs::write(&path, "{\"a\":1}\n{\"b\":2}\n{\"c\"").unwrap();
        let c = read_chunk(&path, Some(&Generation::Missing), 0, 100).unwrap();
        assert_eq!(c.bytes, b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(c.next, 16);
        let g = c.generation.clone();
        // The token the script sends back reads as the same generation.
        assert_eq!(g.to_string().parse::<Generation>().unwrap(), g);
        assert_eq!(g.to_string().len(), 16);

        let c = read_chunk(&path, Some(&g), 0, 10).unwrap();
        assert_eq!((c.bytes.as_slice(), c.more), (&b"{\"a\":1}\n"[..], true));
        let c = read_chunk(&path, Some(&g), 16, 100).unwrap();
        assert!(c.bytes.is_empty() && !c.reset);

        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b":3}\n").unwrap();
        let c = read_chunk(&path, Some(&g), 16, 100).unwrap();
        assert_eq!(c.bytes, b"{\"c\":3}\n");

        // A longer-than-max line still comes through whole.
        let c = read_chunk(&path, Some(&g), 0, 3).unwrap();
        assert_eq!(c.bytes, b"{\"a\":1}\n");

        // A new run recreates the file: a different first line, a new generation.
        std::fs::write(&path, "{\"z\":0}\n{\"y\":1}\n{\"x\":2}\n{\"w\":3}\n").unwrap();
        let c = read_chunk(&path, Some(&g), 16, 100).unwrap();
        assert!(c.reset);
        assert_eq!((c.from, c.next), (0, 32));
        assert_ne!(c.generation, g);
        // Truncated below the offset with no generation given: also a reset.
        let c = read_chunk(&path, None, 1000, 100).unwrap();
        assert!(c.reset);
    }
}
