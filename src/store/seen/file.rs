//! The seen-set on disk: the segment format, appending, listing and compaction.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::merge::normalize;
use super::{LoadStats, Rec, Seen};
use crate::store::StoreError;
use crate::store::state::{sync_dir, write_atomic};

/// Folder of the segments, inside `state/`.
pub(crate) const SEEN_DIR: &str = "seen";
/// The legacy single seen file, inside `state/`.
pub(crate) const LEGACY_FILE: &str = "seen.bin";
/// File name prefix of compacted segments.
pub(crate) const COMPACT_PREFIX: &str = "compact-";

const MAGIC: &[u8; 8] = b"SCRSEEN\0";
const VERSION: u32 = 1;
/// Bytes of one record, and of the header.
pub(crate) const RECORD: usize = 16;

fn header() -> [u8; RECORD] {
    let mut h = [0u8; RECORD];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(RECORD as u32).to_le_bytes());
    h
}

fn encode(r: &Rec, out: &mut Vec<u8>) {
    out.extend_from_slice(&r.hash.to_le_bytes());
    out.extend_from_slice(&r.seen.day.to_le_bytes());
    out.extend_from_slice(&r.seen.flags.to_le_bytes());
}

/// One record from exactly 16 bytes.
fn rec_from(c: &[u8]) -> Rec {
    let word = |i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
    Rec {
        hash: u64::from(word(0)) | (u64::from(word(4)) << 32),
        seen: Seen {
            day: word(8),
            flags: word(12),
        },
    }
}

/// Decodes a seen file fed in pieces of any size. A file that starts with the
/// magic has a header; one that does not is the legacy headerless `seen.bin`.
struct Decoder {
    recs: Vec<Rec>,
    carry: [u8; RECORD],
    carry_len: usize,
    /// The first 16 bytes (header or first legacy record) are not complete yet.
    at_start: bool,
}

impl Decoder {
    fn new(capacity: usize) -> Decoder {
        Decoder {
            recs: Vec::with_capacity(capacity),
            carry: [0; RECORD],
            carry_len: 0,
            at_start: true,
        }
    }

    fn push(&mut self, mut data: &[u8]) {
        if self.carry_len > 0 || self.at_start {
            let take = (RECORD - self.carry_len).min(data.len());
            self.carry[self.carry_len..self.carry_len + take].copy_from_slice(&data[..take]);
            self.carry_len += take;
            data = &data[take..];
            if self.carry_len < RECORD {
                return;
            }
            let is_header = self.at_start && self.carry.starts_with(MAGIC);
            self.at_start = false;
            self.carry_len = 0;
            if !is_header {
                self.recs.push(rec_from(&self.carry));
            }
        }
        let chunks = data.chunks_exact(RECORD);
        let rest = chunks.remainder();
        self.recs.extend(chunks.map(rec_from));
        self.carry[..rest.len()].copy_from_slice(rest);
        self.carry_len = rest.len();
    }

    /// The records and how many trailing bytes were torn.
    fn finish(self) -> (Vec<Rec>, u64) {
        let tail = &self.carry[..self.carry_len];
        if self.at_start && (MAGIC.starts_with(tail) || tail.starts_with(MAGIC)) {
            // A header torn by a crash right after the file was created.
            return (self.recs, 0);
        }
        (self.recs, self.carry_len as u64)
    }
}

/// Records of one file in memory, and how many trailing bytes were torn.
#[cfg(test)]
fn decode(bytes: &[u8]) -> (Vec<Rec>, u64) {
    let mut d = Decoder::new(bytes.len() / RECORD);
    d.push(bytes);
    d.finish()
}

/// Append the records of one file to `out`, reading in pieces so the file is
/// never held whole next to its records; returns how many trailing bytes
/// were torn.
fn read_into(path: &Path, out: &mut Vec<Rec>) -> std::io::Result<u64> {
    let mut f = std::fs::File::open(path)?;
    let mut d = Decoder {
        recs: std::mem::take(out),
        ..Decoder::new(0)
    };
    let mut buf = vec![0u8; 1 << 20];
    let result = loop {
        match f.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => d.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    let (recs, torn) = d.finish();
    *out = recs;
    result.map(|()| torn)
}

/// Every record of every seen file under `state_dir`, merged: sorted by hash,
/// one per URL. Compacted files are read first, so their records (already
/// sorted, in consecutive hash ranges) form a sorted prefix that needs no sort.
pub(crate) fn load_all(
    state_dir: &Path,
) -> Result<(Vec<Rec>, LoadStats, Vec<PathBuf>), StoreError> {
    let mut files = segment_files(state_dir)?;
    let is_compact = |p: &PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(COMPACT_PREFIX))
    };
    files.sort_by_key(|p| !is_compact(p));
    let mut stats = LoadStats::default();
    let mut bytes = 0u64;
    for path in &files {
        bytes += std::fs::metadata(path).map_or(0, |m| m.len());
    }
    stats.bytes = bytes;
    let mut all = Vec::with_capacity(usize::try_from(bytes).unwrap_or(0) / RECORD);
    for path in &files {
        let before = all.len();
        stats.torn_bytes += read_into(path, &mut all).map_err(|e| StoreError::io(path, e))?;
        stats.files += 1;
        stats.records += all.len() - before;
    }
    Ok((normalize(all), stats, files))
}

/// Append records to a segment (created with its header if new), after
/// cutting off a torn tail left by a crash; then sync.
pub(crate) fn append(path: &Path, recs: &[Rec]) -> Result<(), StoreError> {
    let err = |e| StoreError::io(path, e);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    }
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(err)?;
    let len = f.metadata().map_err(err)?.len();
    let mut buf = Vec::with_capacity(RECORD * (recs.len() + 1));
    let start = if len < RECORD as u64 {
        buf.extend_from_slice(&header());
        0
    } else {
        len - (len - RECORD as u64) % RECORD as u64
    };
    if start != len {
        f.set_len(start).map_err(err)?;
    }
    for r in recs {
        encode(r, &mut buf);
    }
    let written = f
        .seek(SeekFrom::Start(start))
        .and_then(|_| f.write_all(&buf))
        .and_then(|_| f.sync_data());
    if let Err(e) = written {
        let _ = f.set_len(start);
        return Err(err(e));
    }
    if start == 0 {
        // A new file: make its directory entry durable too.
        if let Some(dir) = path.parent() {
            sync_dir(dir).map_err(|e| StoreError::io(dir, e))?;
        }
    }
    Ok(())
}

/// Every seen file under `state_dir`: the legacy `seen.bin` if present, then
/// `seen/*.bin` sorted by name.
pub fn segment_files(state_dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let mut out = Vec::new();
    let legacy = state_dir.join(LEGACY_FILE);
    if legacy.is_file() {
        out.push(legacy);
    }
    let dir = state_dir.join(SEEN_DIR);
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(StoreError::io(&dir, e)),
    };
    let mut segs = Vec::new();
    for entry in rd {
        let path = entry.map_err(|e| StoreError::io(&dir, e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".bin") && !name.starts_with('.') && path.is_file() {
            segs.push(path);
        }
    }
    segs.sort();
    out.extend(segs);
    Ok(out)
}

/// Records per compacted file: 32 MiB, well under the 100 MB a single file
/// may have on GitHub.
pub(crate) const COMPACT_CHUNK: usize = 1 << 21;

/// What [`compact`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactReport {
    /// Files merged (and removed, except the output).
    pub files: usize,
    pub records_in: usize,
    /// Distinct URLs written.
    pub records_out: usize,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// The compacted files; empty when there was nothing to compact.
    pub paths: Vec<PathBuf>,
}

/// Merge every seen file into `state/seen/compact-<stamp>-<k>.bin` files
/// (sorted by hash, one record per URL, at most `COMPACT_CHUNK` records
/// each, covering consecutive hash ranges, each written atomically), then
/// delete the files merged. The caller holds the run lock. Loading gives the
/// same set before and after. A crash part-way leaves new and old files side
/// by side: harmless, since merging is idempotent. Pass a fresh run id (see
/// [`crate::store::state::new_run_id`]) as `stamp` so two machines never
/// pick the same names.
pub fn compact(state_dir: &Path, stamp: &str) -> Result<CompactReport, StoreError> {
    compact_chunked(state_dir, stamp, COMPACT_CHUNK)
}

fn compact_chunked(
    state_dir: &Path,
    stamp: &str,
    chunk: usize,
) -> Result<CompactReport, StoreError> {
    let (merged, stats, files) = load_all(state_dir)?;
    let mut report = CompactReport {
        files: files.len(),
        records_in: stats.records,
        bytes_in: stats.bytes,
        ..CompactReport::default()
    };
    if files.is_empty() {
        return Ok(report);
    }
    let dir = state_dir.join(SEEN_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let mut buf = Vec::with_capacity(RECORD * (merged.len().min(chunk) + 1));
    for (k, chunk) in merged.chunks(chunk.max(1)).enumerate() {
        buf.clear();
        buf.extend_from_slice(&header());
        for r in chunk {
            encode(r, &mut buf);
        }
        let out = dir.join(format!("{COMPACT_PREFIX}{stamp}-{k:03}.bin"));
        write_atomic(&out, &buf)?;
        report.bytes_out += buf.len() as u64;
        report.paths.push(out);
    }
    for path in files.iter().filter(|p| !report.paths.contains(p)) {
        std::fs::remove_file(path).map_err(|e| StoreError::io(path, e))?;
    }
    sync_dir(&dir).map_err(|e| StoreError::io(&dir, e))?;
    if files.iter().any(|p| p.parent() == Some(state_dir)) {
        sync_dir(state_dir).map_err(|e| StoreError::io(state_dir, e))?;
    }
    report.records_out = merged.len();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_handles_header_legacy_and_torn_tails() {
        let recs = [
            Rec {
                hash: 1,
                seen: Seen::new(2, 3),
            },
            Rec {
                hash: u64::MAX,
                seen: Seen::new(u32::MAX, 8),
            },
        ];
        let mut body = Vec::new();
        for r in &recs {
            encode(r, &mut body);
        }
        let mut with_header = header().to_vec();
        with_header.extend_from_slice(&body);
        assert_eq!(decode(&with_header), (recs.to_vec(), 0));
        assert_eq!(decode(&body), (recs.to_vec(), 0));
        assert_eq!(decode(&with_header[..40]), (recs[..1].to_vec(), 8));
        assert_eq!(decode(&with_header[..5]), (vec![], 0));
        assert_eq!(decode(&[]), (vec![], 0));
        // Fed in pieces of every size, the result is the same.
        for size in [1, 3, 15, 16, 17, 40] {
            for bytes in [&with_header[..], &body[..], &with_header[..40]] {
                let mut d = Decoder::new(0);
                for piece in bytes.chunks(size) {
                    d.push(piece);
                }
                assert_eq!(d.finish(), decode(bytes), "pieces of {size}");
            }
        }
    }

    #[test]
    fn compaction_in_chunks_loads_the_same() {
        use crate::store::seen::{SeenSet, flag};
        let tmp = tempfile::tempdir().unwrap();
        let st = tmp.path();
        let mut x = 7u64;
        for run in 0..4u32 {
            let mut set = SeenSet::default();
            for _ in 0..300 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                set.record(x >> 52, Seen::new(run, 1 << ((x >> 30) % 4)));
            }
            set.record(u64::from(run) << 40, Seen::new(run, flag::HIT));
            set.flush(st, &format!("r{run}")).unwrap();
        }
        let before: Vec<_> = SeenSet::load(st).unwrap().iter().collect();
        let report = compact_chunked(st, "s", 100).unwrap();
        assert_eq!(report.records_out, before.len());
        assert_eq!(report.paths.len(), before.len().div_ceil(100));
        assert_eq!(segment_files(st).unwrap(), report.paths);
        let after: Vec<_> = SeenSet::load(st).unwrap().iter().collect();
        assert_eq!(after, before);
        // Compacting compacted chunks changes nothing either.
        compact_chunked(st, "t", 64).unwrap();
        let again: Vec<_> = SeenSet::load(st).unwrap().iter().collect();
        assert_eq!(again, before);
    }
}
