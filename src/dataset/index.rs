//! What the dataset keeps across releases, beside the data in `<out>/index/`
//! (published with it, and fetched back before a build by
//! `scripts/publish.sh fetch`):
//!
//! - `near-<first id>.bin`: the MinHash signatures of published rows, one
//!   append-only segment per build holding the rows it published with ids
//!   above every earlier segment's (`SCRNEAR1`, then per row its id, i64 LE,
//!   and its 112 16-bit values, LE). A new build compares its new rows (ids
//!   above the index's last) with every indexed row without reading an old
//!   shard: the new rows' bands go in a small table, the segments are read
//!   once in order, and a candidate that agrees on at least
//!   [`minhash::THRESHOLD`] of its values removes the new row
//!   (`near_earlier_release` in the card). Memory follows the new rows, not
//!   the index. A daily publish uploads one new segment.
//! - `ids.bin`: the ids of the published rows in order (`SCRIDS01`, then i64
//!   LE each), from which the next build tells the day's changes: rows added,
//!   rows updated, withdrawn and otherwise removed ([`Changes`]).
//!
//! The index keeps what was ever published: a row removed later (withdrawn)
//! stays in it, and a near copy of it in a later crawl is still removed.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::minhash::{self, BANDS, Signature};
use super::spill::{SIG_BYTES, sig_from_bytes};

/// The folder under the output folder.
pub const DIR: &str = "index";
const NEAR_MAGIC: &[u8; 8] = b"SCRNEAR1";
const IDS_MAGIC: &[u8; 8] = b"SCRIDS01";
const ROW_BYTES: usize = 8 + SIG_BYTES;

/// The index an earlier build left.
pub struct Index {
    dir: PathBuf,
    /// `near-*.bin`, in name (hence id) order.
    segments: Vec<PathBuf>,
    /// The highest indexed id.
    pub last_id: Option<i64>,
}

/// What changed since the release the index describes (`build.json`, the card).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Rows in the previous release.
    pub previous_rows: u64,
    /// New rows that are new stories.
    pub added: u64,
    /// New rows that are new versions of a story (`updated`), replacing an older one.
    pub updated: u64,
    /// Previously published rows withdrawn by `scraper reextract`.
    pub withdrawn: u64,
    /// Previously published rows gone for another reason (the older
    /// version of an update, or a rule that now removes them).
    pub removed: u64,
}

fn bad(path: &Path, what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("{}: {what}", path.display()),
    )
}

/// A segment's name: its first id, sign bit flipped, so names sort by id.
fn segment_name(first: i64) -> String {
    format!("near-{:016x}.bin", (first as u64) ^ (1 << 63))
}

impl Index {
    /// The index under `out` (empty when there is none).
    pub fn open(out: &Path) -> std::io::Result<Index> {
        let dir = out.join(DIR);
        let mut segments = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd {
                let path = e?.path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.starts_with("near-") && name.ends_with(".bin") {
                    segments.push(path);
                }
            }
        }
        segments.sort();
        let mut last_id = None;
        if let Some(last) = segments.last() {
            let len = std::fs::metadata(last)?.len();
            if len < 8 || (len - 8) % ROW_BYTES as u64 != 0 {
                return Err(bad(last, "not a near-duplicate index segment"));
            }
            if len > 8 {
                let mut b = [0u8; 8];
                std::os::unix::fs::FileExt::read_exact_at(
                    &File::open(last)?,
                    &mut b,
                    len - ROW_BYTES as u64,
                )?;
                last_id = Some(i64::from_le_bytes(b));
            }
        }
        Ok(Index {
            dir,
            segments,
            last_id,
        })
    }

    /// Which of `new` (a position and a signature each) are near duplicates
    /// of an indexed row: their positions, in order.
    pub fn matches(&self, new: &[(u32, Signature)]) -> std::io::Result<Vec<u32>> {
        if new.is_empty() || self.segments.is_empty() {
            return Ok(Vec::new());
        }
        // Band key (the band is part of the hash) -> new rows with it.
        let mut bands: HashMap<u64, Vec<u32>> = HashMap::new();
        for (i, (_, sig)) in new.iter().enumerate() {
            for band in 0..BANDS {
                bands
                    .entry(minhash::band_key(sig, band))
                    .or_default()
                    .push(i as u32);
            }
        }
        let mut matched = vec![false; new.len()];
        for path in &self.segments {
            each_row(path, &mut |_, sig| {
                for band in 0..BANDS {
                    let Some(hits) = bands.get(&minhash::band_key(sig, band)) else {
                        continue;
                    };
                    for &i in hits {
                        let i = i as usize;
                        if !matched[i] && minhash::similarity(sig, &new[i].1) >= minhash::THRESHOLD
                        {
                            matched[i] = true;
                        }
                    }
                }
            })?;
        }
        Ok(new
            .iter()
            .zip(matched)
            .filter(|(_, m)| *m)
            .map(|((k, _), _)| *k)
            .collect())
    }

    /// Add a segment of `rows` (id order, ids above [`Index::last_id`]),
    /// streamed to disk.
    pub fn append(
        &self,
        rows: impl Iterator<Item = std::io::Result<(i64, Signature)>>,
    ) -> std::io::Result<()> {
        let mut rows = rows.peekable();
        let first = match rows.peek() {
            None => return Ok(()),
            Some(Ok((id, _))) => *id,
            Some(Err(_)) => i64::MIN,
        };
        std::fs::create_dir_all(&self.dir)?;
        let path = self.dir.join(segment_name(first));
        let tmp = path.with_extension("bin.tmp");
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        w.write_all(NEAR_MAGIC)?;
        for row in rows {
            let (id, sig) = row?;
            w.write_all(&id.to_le_bytes())?;
            for v in sig {
                w.write_all(&v.to_le_bytes())?;
            }
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, &path)
    }

    /// Compare `ids` (this build's rows, in order) with the ids of the
    /// previous release, then record them as the published ones. `updated`
    /// tells which rows are new versions; `withdrawn` (sorted) which ids
    /// `scraper reextract` withdrew. `None` when there was no previous release.
    pub fn record_ids(
        &self,
        ids: &Ids<'_, '_>,
        withdrawn: &[i64],
    ) -> std::io::Result<Option<Changes>> {
        let path = self.dir.join("ids.bin");
        let changes = match File::open(&path) {
            Ok(f) => Some(diff(&path, f, ids, withdrawn)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        std::fs::create_dir_all(&self.dir)?;
        let tmp = self.dir.join("ids.bin.tmp");
        let mut w = BufWriter::new(File::create(&tmp)?);
        w.write_all(IDS_MAGIC)?;
        for row in (ids.rows)() {
            w.write_all(&row?.0.to_le_bytes())?;
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        Ok(changes)
    }
}

/// A build's rows, in id order: each row's id and `updated`, read from the
/// first row each time `rows` is called (they may be streamed from disk).
pub struct Ids<'a, 'r> {
    pub rows: &'a dyn Fn() -> RowIter<'r>,
}

/// The rows [`Ids::rows`] gives.
pub type RowIter<'a> = Box<dyn Iterator<Item = std::io::Result<(i64, bool)>> + 'a>;

/// Walk a segment's rows.
fn each_row(path: &Path, f: &mut dyn FnMut(i64, &Signature)) -> std::io::Result<()> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)?;
    if &magic != NEAR_MAGIC {
        return Err(bad(path, "not a near-duplicate index segment"));
    }
    let mut row = [0u8; ROW_BYTES];
    loop {
        match r.read_exact(&mut row) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let id = i64::from_le_bytes(row[..8].try_into().unwrap_or([0; 8]));
        f(id, &sig_from_bytes(&row[8..]));
    }
}

/// Merge the previous ids (sorted, from `f`) with this build's.
fn diff(path: &Path, f: File, ids: &Ids<'_, '_>, withdrawn: &[i64]) -> std::io::Result<Changes> {
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)?;
    if &magic != IDS_MAGIC {
        return Err(bad(path, "not a published id list"));
    }
    let mut next_old = || -> std::io::Result<Option<i64>> {
        let mut b = [0u8; 8];
        match r.read_exact(&mut b) {
            Ok(()) => Ok(Some(i64::from_le_bytes(b))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    };
    let mut c = Changes::default();
    let gone = |id: i64, c: &mut Changes| {
        if withdrawn.binary_search(&id).is_ok() {
            c.withdrawn += 1;
        } else {
            c.removed += 1;
        }
    };
    let mut old = next_old()?;
    let mut rows = (ids.rows)();
    let mut now = rows.next().transpose()?;
    loop {
        match (old, now) {
            (Some(o), Some((n, _))) if o == n => {
                c.previous_rows += 1;
                old = next_old()?;
                now = rows.next().transpose()?;
            }
            (Some(o), n) if n.is_none_or(|(n, _)| o < n) => {
                c.previous_rows += 1;
                gone(o, &mut c);
                old = next_old()?;
            }
            (_, Some((_, updated))) => {
                if updated {
                    c.updated += 1;
                } else {
                    c.added += 1;
                }
                now = rows.next().transpose()?;
            }
            // (Some, None) is the `o < n` arm's.
            (_, None) => break,
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_diff_into_changes() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        assert_eq!(index.last_id, None);
        let rows = |v: &'static [(i64, bool)]| {
            move || -> RowIter<'static> { Box::new(v.iter().map(|&r| Ok(r))) }
        };
        let first = rows(&[(1, false), (2, false), (3, false), (5, false), (8, false)]);
        let first = Ids { rows: &first };
        assert_eq!(index.record_ids(&first, &[]).unwrap(), None);
        // 2 withdrawn, 3 replaced by its update 9, 10 new.
        let now = rows(&[(1, false), (5, false), (8, false), (9, true), (10, false)]);
        let now = Ids { rows: &now };
        let c = index.record_ids(&now, &[2]).unwrap();
        assert_eq!(
            c,
            Some(Changes {
                previous_rows: 5,
                added: 1,
                updated: 1,
                withdrawn: 1,
                removed: 1
            })
        );
    }

    #[test]
    fn segments_remember_and_match() {
        let dir = tempfile::tempdir().unwrap();
        let a: Signature = std::array::from_fn(|i| i as u16);
        let b: Signature = std::array::from_fn(|i| 5000 + i as u16);
        let mut near_a = a;
        near_a[0] = 9999; // 111 of 112 values agree
        let rows = [(4, a), (7, b)];
        Index::open(dir.path())
            .unwrap()
            .append(rows.into_iter().map(Ok))
            .unwrap();
        let index = Index::open(dir.path()).unwrap();
        assert_eq!(index.last_id, Some(7));
        let other: Signature = std::array::from_fn(|i| 20_000 + i as u16);
        assert_eq!(index.matches(&[(0, other), (3, near_a)]).unwrap(), vec![3]);
    }
}
