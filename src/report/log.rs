//! Reading `crawl.log` incrementally for the dashboard: a chunk of complete
//! lines from a byte offset, and a generation id that changes when a new run
//! recreates the file (so a reader's offset into the old file is not reused).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes of the first line hashed for the generation id.
const HEAD: usize = 4096;

/// Complete lines read from `from`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chunk {
    /// Generation of the file the lines came from.
    pub generation: String,
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

/// The generation id of the log at `path`: a hash of its first line, `"none"`
/// when there is no file and `"empty"` before its first line is complete.
pub fn generation(file: &mut File) -> io::Result<String> {
    file.seek(SeekFrom::Start(0))?;
    let mut head = Vec::with_capacity(HEAD);
    file.take(HEAD as u64).read_to_end(&mut head)?;
    Ok(match memchr::memchr(b'\n', &head) {
        Some(end) => format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&head[..end])),
        None if head.len() == HEAD => format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&head)),
        None => "empty".to_string(),
    })
}

/// Read up to `max` bytes of complete lines starting at `from`. When
/// `generation` is given and differs from the file's, or `from` is past the
/// end, reading starts again at 0 with `reset` set. A line longer than `max`
/// is returned whole rather than never.
pub fn read_chunk(
    path: &Path,
    generation_seen: Option<&str>,
    from: u64,
    max: usize,
) -> io::Result<Chunk> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Chunk {
                generation: "none".into(),
                reset: from != 0 || generation_seen.is_some_and(|g| g != "none"),
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
    if generation_seen.is_some_and(|g| g != generation) || from > len {
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
        assert_eq!((c.generation.as_str(), c.reset), ("none", false));

        std::fs::write(&path, "{\"a\":1}\n{\"b\":2}\n{\"c\"").unwrap();
        let c = read_chunk(&path, Some("none"), 0, 100).unwrap();
        assert_eq!(c.bytes, b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(c.next, 16);
        let g = c.generation.clone();

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
