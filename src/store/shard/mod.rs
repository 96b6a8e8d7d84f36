//! Article shards: `data/articles/<run-id>.jsonl.zst`, JSON Lines in a series
//! of independent zstd frames (checksums on). Each flush closes a frame and
//! syncs it, so a killed process leaves a file that `zstdcat` and
//! [`read_lines`] decode up to the last complete frame.

pub mod frames;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::record::Article;

/// Frames are closed at this many uncompressed bytes even before the flush interval.
const FRAME_BYTES: usize = 1 << 20;
const LEVEL: i32 = 9;

/// A shard could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("cannot create shard {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    #[error(
        "cannot write shard {path}: {source} (is the disk full?); records up to the last flush are safe"
    )]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read shard {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
}

/// Appends records to one run's shard, one zstd frame per flush. The file
/// is created with the first frame, so a run that stores nothing (or is killed
/// before its first flush) leaves no empty shard behind.
pub struct ShardWriter {
    path: PathBuf,
    /// Opened (`create_new`) by the first flush that has records.
    file: Option<File>,
    /// Length of the file up to the last complete frame.
    len: u64,
    buf: Vec<u8>,
    pending: usize,
    compressor: zstd::bulk::Compressor<'static>,
    last_flush: Instant,
    flush_every: Duration,
}

impl ShardWriter {
    /// A writer for a new shard at `path`; refuses a path that exists. The
    /// file itself is created by the first flush with records.
    pub fn create(path: &Path, flush_every: Duration) -> Result<ShardWriter, ShardError> {
        let err = |source| ShardError::Create {
            path: path.to_path_buf(),
            source,
        };
        if path.exists() {
            return Err(err(io::Error::from(io::ErrorKind::AlreadyExists)));
        }
        let mut compressor = zstd::bulk::Compressor::new(LEVEL).map_err(err)?;
        compressor
            .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
            .map_err(err)?;
        Ok(ShardWriter {
            path: path.to_path_buf(),
            file: None,
            len: 0,
            buf: Vec::with_capacity(FRAME_BYTES),
            pending: 0,
            compressor,
            last_flush: Instant::now(),
            flush_every,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Buffer one record; closes a frame when the buffer is large or old.
    /// Returns how many records were made durable by this call (0 when only buffered).
    pub fn append(&mut self, article: &Article) -> Result<usize, ShardError> {
        serde_json::to_writer(&mut self.buf, article).expect("an Article always serialises");
        self.buf.push(b'\n');
        self.pending += 1;
        if self.buf.len() >= FRAME_BYTES || self.last_flush.elapsed() >= self.flush_every {
            return self.flush();
        }
        Ok(0)
    }

    /// Buffer one record without closing a frame; [`ShardWriter::full`] says
    /// when the caller should flush (after saving what must precede the frame).
    pub(crate) fn buffer(&mut self, article: &Article) {
        self.buffer_value(article);
    }

    /// [`ShardWriter::buffer`] for any record that serialises to one JSON line.
    pub(crate) fn buffer_value<T: serde::Serialize>(&mut self, record: &T) {
        serde_json::to_writer(&mut self.buf, record).expect("records serialise to JSON");
        self.buf.push(b'\n');
        self.pending += 1;
    }

    /// Is the buffer large enough, or old enough, to close a frame?
    pub fn full(&self) -> bool {
        self.pending > 0
            && (self.buf.len() >= FRAME_BYTES || self.last_flush.elapsed() >= self.flush_every)
    }

    /// Records buffered but not yet in a closed frame.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Is a flush due by the interval?
    pub fn due(&self) -> bool {
        self.pending > 0 && self.last_flush.elapsed() >= self.flush_every
    }

    /// Close a frame with everything buffered and sync it. Returns the records made durable.
    /// On a write error the file is cut back to its last complete frame.
    pub fn flush(&mut self) -> Result<usize, ShardError> {
        self.last_flush = Instant::now();
        if self.buf.is_empty() {
            return Ok(0);
        }
        let werr = |path: &Path, source| ShardError::Write {
            path: path.to_path_buf(),
            source,
        };
        let frame = self
            .compressor
            .compress(&self.buf)
            .map_err(|e| werr(&self.path, e))?;
        let file = match self.file.as_mut() {
            Some(f) => f,
            None => {
                let f = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&self.path)
                    .map_err(|source| ShardError::Create {
                        path: self.path.clone(),
                        source,
                    })?;
                self.file.insert(f)
            }
        };
        let result = file.write_all(&frame).and_then(|_| file.sync_data());
        if let Err(e) = result {
            let _ = file.set_len(self.len);
            return Err(werr(&self.path, e));
        }
        self.len += frame.len() as u64;
        self.buf.clear();
        Ok(std::mem::take(&mut self.pending))
    }

    /// Flush and close. Returns the shard's path, or `None` when nothing was
    /// stored (no file was created).
    pub fn finish(mut self) -> Result<Option<PathBuf>, ShardError> {
        self.flush()?;
        Ok((self.len > 0).then_some(self.path))
    }
}

/// What reading one shard found besides its lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardScan {
    pub frames: u64,
    pub lines: u64,
    /// Bytes at the end that do not form a complete frame (a crashed run).
    pub truncated_bytes: u64,
    /// Complete-looking frames that failed to decode (bad checksum).
    pub bad_frames: u64,
}

/// Call `on_line` with every complete line of a shard, in order, frame by frame,
/// holding one frame in memory at a time. A torn tail or a corrupt frame is
/// counted in the returned [`ShardScan`], not an error.
pub fn read_lines(path: &Path, mut on_line: impl FnMut(&[u8])) -> Result<ShardScan, ShardError> {
    let data = std::fs::read(path).map_err(|source| ShardError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut scan = ShardScan::default();
    let mut rest: &[u8] = &data;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let size = match zstd::zstd_safe::find_frame_compressed_size(rest) {
            Ok(n) if n <= rest.len() => n,
            _ => {
                scan.truncated_bytes = rest.len() as u64;
                break;
            }
        };
        let (frame, tail) = rest.split_at(size);
        rest = tail;
        out.clear();
        match zstd::stream::copy_decode(frame, &mut out) {
            Ok(()) => {
                scan.frames += 1;
                for line in out.split(|&b| b == b'\n') {
                    if !line.is_empty() {
                        scan.lines += 1;
                        on_line(line);
                    }
                }
            }
            Err(_) => scan.bad_frames += 1,
        }
    }
    Ok(scan)
}

/// All `*.jsonl.zst` shards under `articles_dir`, sorted by name (run ids sort by time).
pub fn list(articles_dir: &Path) -> Result<Vec<PathBuf>, ShardError> {
    super::list_files(articles_dir, ".jsonl.zst").map_err(|source| ShardError::Read {
        path: articles_dir.to_path_buf(),
        source,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn article(id: i64) -> Article {
        Article {
            id,
            url: format!("https://ex.com/{id}"),
            domain: "ex.com".into(),
            title: format!("Title {id}"),
            date: "2024-03-04".parse().ok(),
            date_source: Some("jsonld".into()),
            year: Some(2024),
            text: "First paragraph.\nSecond paragraph.".into(),
            keywords: vec!["ai".into()],
            fetched_at: "2026-10-09T18:12:33Z".parse().unwrap(),
            lang: Some("en".into()),
            ..Article::default()
        }
    }

    fn collect(path: &Path) -> (Vec<Article>, ShardScan) {
        let mut v = Vec::new();
        let scan = read_lines(path, |l| v.push(serde_json::from_slice(l).unwrap())).unwrap();
        (v, scan)
    }

    #[test]
    fn frames_round_trip_and_torn_tail_is_tolerated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl.zst");
        let mut w = ShardWriter::create(&path, Duration::from_secs(3600)).unwrap();
        for i in 0..3 {
            w.append(&article(i)).unwrap();
        }
        assert_eq!(w.flush().unwrap(), 3);
        w.append(&article(3)).unwrap();
        assert_eq!(w.flush().unwrap(), 1);
        w.finish().unwrap();
        let (got, scan) = collect(&path);
        assert_eq!(
            got.iter().map(|a| a.id).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        assert_eq!(scan.frames, 2);

        // A crash mid-frame: append half a frame of garbage-looking zstd.
        let full = std::fs::read(&path).unwrap();
        let first = zstd::zstd_safe::find_frame_compressed_size(&full).unwrap();
        std::fs::write(&path, &full[..full.len() - 3]).unwrap();
        let (got, scan) = collect(&path);
        assert_eq!(got.len(), 3);
        assert_eq!(scan.truncated_bytes as usize, full.len() - 3 - first);
    }

    /// A disk that fills up mid-run (`/dev/full` answers every write with
    /// ENOSPC): a clear error naming the shard, the file cut back to its last
    /// complete frame, and the buffered records written by the next flush
    /// that succeeds, once each.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_names_the_shard_and_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl.zst");
        let mut w = ShardWriter::create(&path, Duration::from_secs(3600)).unwrap();
        w.append(&article(0)).unwrap();
        assert_eq!(w.flush().unwrap(), 1);
        let real = w
            .file
            .replace(OpenOptions::new().write(true).open("/dev/full").unwrap());
        w.append(&article(1)).unwrap();
        let err = w.flush().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&*path.to_string_lossy()), "{msg}");
        assert!(msg.contains("disk full"), "{msg}");
        assert_eq!(w.pending(), 1, "the record stays buffered");
        let (got, scan) = collect(&path);
        assert_eq!(
            (got.len(), scan.truncated_bytes, scan.bad_frames),
            (1, 0, 0)
        );
        // Space again: the buffered record goes out with the next flush.
        w.file = real;
        w.append(&article(2)).unwrap();
        assert_eq!(w.flush().unwrap(), 2);
        w.finish().unwrap();
        let (got, scan) = collect(&path);
        assert_eq!(got.iter().map(|a| a.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(scan.bad_frames, 0);
    }

    #[test]
    fn refuses_to_overwrite_and_creates_nothing_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl.zst");
        let mut w = ShardWriter::create(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(w.flush().unwrap(), 0);
        assert!(!path.exists(), "no file before the first record");
        assert_eq!(w.finish().unwrap(), None);
        assert!(!path.exists());
        let mut w = ShardWriter::create(&path, Duration::from_secs(1)).unwrap();
        w.append(&article(0)).unwrap();
        w.flush().unwrap();
        assert!(path.exists());
        assert!(ShardWriter::create(&path, Duration::from_secs(1)).is_err());
        assert_eq!(w.finish().unwrap(), Some(path));
    }
}
