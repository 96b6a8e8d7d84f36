//! The seen-set on disk: the segment format, appending, listing and compaction.

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{Rec, Seen, merge_runs};
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

/// Records of one file, and how many trailing bytes were torn. A file that
/// starts with the magic has a header; one that does not is the legacy
/// headerless `seen.bin`.
pub(crate) fn decode(bytes: &[u8]) -> (Vec<Rec>, u64) {
    let body = if bytes.starts_with(MAGIC) {
        bytes.get(RECORD..).unwrap_or(&[])
    } else if bytes.len() < RECORD && MAGIC.starts_with(bytes) {
        // A header torn by a crash right after the file was created.
        &[]
    } else {
        bytes
    };
    let chunks = body.chunks_exact(RECORD);
    let torn = chunks.remainder().len() as u64;
    let recs = chunks
        .map(|c| {
            let word = |a: usize, b: usize| {
                let mut w = [0u8; 4];
                w.copy_from_slice(&c[a..b]);
                u32::from_le_bytes(w)
            };
            let mut h = [0u8; 8];
            h.copy_from_slice(&c[..8]);
            Rec {
                hash: u64::from_le_bytes(h),
                seen: Seen {
                    day: word(8, 12),
                    flags: word(12, 16),
                },
            }
        })
        .collect();
    (recs, torn)
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
    /// The compacted file, `None` when there was nothing to compact.
    pub path: Option<PathBuf>,
}

/// Merge every seen file into one sorted `state/seen/compact-<stamp>.bin`
/// (written atomically), then delete the files merged. The caller holds the
/// run lock. Loading gives the same set before and after. A crash part-way
/// leaves both the new file and some old ones: harmless, since merging is
/// idempotent. Pass a run id (see [`crate::store::state::new_run_id`]) as
/// `stamp` so two machines never pick the same name.
pub fn compact(state_dir: &Path, stamp: &str) -> Result<CompactReport, StoreError> {
    let files = segment_files(state_dir)?;
    let mut report = CompactReport {
        files: files.len(),
        ..CompactReport::default()
    };
    if files.is_empty() {
        return Ok(report);
    }
    let mut runs = Vec::with_capacity(files.len());
    for path in &files {
        let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, e))?;
        report.bytes_in += bytes.len() as u64;
        let (recs, _) = decode(&bytes);
        report.records_in += recs.len();
        runs.push(recs);
    }
    let merged = merge_runs(runs);
    let mut buf = Vec::with_capacity(RECORD * (merged.len() + 1));
    buf.extend_from_slice(&header());
    for r in &merged {
        encode(r, &mut buf);
    }
    let out = state_dir
        .join(SEEN_DIR)
        .join(format!("{COMPACT_PREFIX}{stamp}.bin"));
    std::fs::create_dir_all(state_dir.join(SEEN_DIR))
        .map_err(|e| StoreError::io(&state_dir.join(SEEN_DIR), e))?;
    write_atomic(&out, &buf)?;
    for path in files.iter().filter(|p| **p != out) {
        std::fs::remove_file(path).map_err(|e| StoreError::io(path, e))?;
    }
    sync_dir(&state_dir.join(SEEN_DIR)).map_err(|e| StoreError::io(state_dir, e))?;
    report.records_out = merged.len();
    report.bytes_out = buf.len() as u64;
    report.path = Some(out);
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
    }
}
