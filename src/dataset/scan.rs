//! Pass 1: read every shard once, in parallel over shards, and keep only a
//! small [`Meta`] per good line (id, where the line is, dedup keys, the
//! relevance verdict), never the text. Broken lines
//! and frames are counted per shard in a [`ShardReport`]. Each shard's
//! signatures go to the [`SigStore`] on disk and its metas to a
//! [`MetaSpill`] as soon as it is read (see [`super::spill`]); they stay
//! there, read back in order by [`super::dedup`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::minhash::{self, Signature};
use super::near;
use super::row::{Broken, Keys, canonical_key, text_key, url_key};
use super::spill::{MetaSpill, SigStore};
use crate::relevance::Rule;
use crate::store::shard::frames::{Decoder, FrameReader, line_ranges};

/// Where a frame is: its shard (index into the shard list), byte offset and compressed length.
#[derive(Debug, Clone, Copy)]
pub struct FrameRef {
    pub shard: u32,
    pub offset: u64,
    pub len: u32,
}

pub use super::meta::{Meta, NO_SCORE, Withdrawn};

/// What reading one shard found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardReport {
    pub name: String,
    pub frames: u64,
    pub lines: u64,
    pub good: u64,
    pub invalid_utf8: u64,
    pub malformed_json: u64,
    pub missing_field: u64,
    pub invalid_field: u64,
    /// A torn tail: bytes after the last complete frame (a crashed run).
    pub truncated_bytes: u64,
    /// Complete-looking frames that failed to decode (bad checksum, corrupt data).
    pub bad_frames: u64,
    /// Good records whose `date` could not be read (kept, date stored as null).
    pub bad_dates: u64,
    /// The shard could not be read at all.
    pub unreadable: Option<String>,
    /// The first broken line, for the build notes: (line number, kind).
    pub first_broken: Option<(u64, Broken)>,
}

impl ShardReport {
    /// Broken lines and frames (a torn tail counts as one).
    pub fn broken(&self) -> u64 {
        self.invalid_utf8
            + self.malformed_json
            + self.missing_field
            + self.invalid_field
            + self.bad_frames
            + u64::from(self.truncated_bytes > 0)
            + u64::from(self.unreadable.is_some())
    }

    fn count(&mut self, kind: Broken) {
        if self.first_broken.is_none() {
            self.first_broken = Some((self.lines, kind));
        }
        match kind {
            Broken::InvalidUtf8 => self.invalid_utf8 += 1,
            Broken::MalformedJson => self.malformed_json += 1,
            Broken::MissingField => self.missing_field += 1,
            Broken::InvalidField => self.invalid_field += 1,
        }
    }
}

/// The result of pass 1 over all shards.
pub struct Scan {
    pub frames: Vec<FrameRef>,
    /// Every good record's [`Meta`], on disk (read them with
    /// `metas.each(&bases, ..)`, shard order).
    pub metas: MetaSpill,
    /// Per shard, the index of its first frame in `frames`.
    pub bases: Vec<u32>,
    /// Good records read.
    pub read: u64,
    /// MinHash signatures of the texts, indexed by [`Meta::sig`], on disk.
    pub sigs: SigStore,
    pub reports: Vec<ShardReport>,
}

/// One shard's frames (local indices) and metas.
struct ShardScan {
    frames: Vec<(u64, u32)>,
    metas: Vec<Meta>,
    sigs: Vec<Signature>,
    report: ShardReport,
}

/// What a shard left in memory once its metas and signatures are spilled.
struct ShardDone {
    frames: Vec<(u64, u32)>,
    report: ShardReport,
}

/// Scan `shards` with up to `jobs` threads, spilling to temporary files
/// under `tmp`. `rule` is evaluated on every good line.
pub fn scan(
    shards: &[PathBuf],
    rule: Option<&Rule>,
    jobs: usize,
    tmp: &Path,
) -> std::io::Result<Scan> {
    let sigs = SigStore::new(tmp)?;
    let spill = MetaSpill::new(tmp, shards.len())?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<std::io::Result<ShardDone>>>> =
        Mutex::new((0..shards.len()).map(|_| None).collect());
    let workers = jobs.clamp(1, shards.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = shards.get(i) else { break };
                    let one = scan_shard(path, rule);
                    let done = spill_shard(one, i, &sigs, &spill);
                    // A poisoned lock means another worker panicked; the scope re-raises that panic.
                    if let Ok(mut r) = results.lock() {
                        r[i] = Some(done);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut out = Scan {
        frames: Vec::new(),
        read: spill.total() as u64,
        metas: spill,
        bases: Vec::with_capacity(shards.len()),
        sigs,
        reports: Vec::new(),
    };
    for (i, one) in results.into_iter().enumerate() {
        out.bases.push(out.frames.len() as u32);
        let Some(one) = one else { continue };
        let one = one?;
        out.frames
            .extend(one.frames.iter().map(|&(offset, len)| FrameRef {
                shard: i as u32,
                offset,
                len,
            }));
        out.reports.push(one.report);
    }
    Ok(out)
}

/// Write a scanned shard's signatures and metas to disk (signature indices
/// made global), keeping its frames and report.
fn spill_shard(
    mut one: ShardScan,
    shard: usize,
    sigs: &SigStore,
    spill: &MetaSpill,
) -> std::io::Result<ShardDone> {
    let base = sigs.append(&one.sigs)?;
    for m in &mut one.metas {
        if m.sig != near::NONE {
            m.sig += base;
        }
    }
    spill.put(shard, &one.metas)?;
    Ok(ShardDone {
        frames: one.frames,
        report: one.report,
    })
}

fn scan_shard(path: &Path, rule: Option<&Rule>) -> ShardScan {
    let mut out = ShardScan {
        frames: Vec::new(),
        metas: Vec::new(),
        sigs: Vec::new(),
        report: ShardReport {
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            ..ShardReport::default()
        },
    };
    if let Err(e) = scan_frames(path, rule, &mut out) {
        out.report.unreadable = Some(e.to_string());
    }
    out
}

fn scan_frames(path: &Path, rule: Option<&Rule>, out: &mut ShardScan) -> std::io::Result<()> {
    let mut reader = FrameReader::open(path)?;
    let mut decoder = Decoder::new()?;
    let mut data = Vec::new();
    let mut lines = Vec::new();
    let report = &mut out.report;
    while let Some((offset, frame)) = reader.next_frame()? {
        if decoder.decode(frame, &mut data).is_err() {
            report.bad_frames += 1;
            continue;
        }
        let frame_index = out.frames.len() as u32;
        out.frames.push((offset, frame.len() as u32));
        report.frames += 1;
        line_ranges(&data, &mut lines);
        for (n, &(a, b)) in lines.iter().enumerate() {
            report.lines += 1;
            let line = &data[a as usize..b as usize];
            let (row, bad_date) = match Keys::parse(line) {
                Ok(p) => p,
                Err(kind) => {
                    report.count(kind);
                    continue;
                }
            };
            report.good += 1;
            report.bad_dates += u64::from(bad_date);
            let url = url_key(&row.url);
            let (relevant, score) = match rule {
                Some(r) => {
                    let judge = r.judge(row.lang.as_deref());
                    let (relevant, score) = judge.verdict(&row.title, &row.text);
                    (relevant, (score * 1000.0).round() as u16)
                }
                None => (true, NO_SCORE),
            };
            // Records the rule rejects take no part in deduplication: no signature.
            let sig = match relevant.then(|| minhash::signature(&row.text)).flatten() {
                Some(s) => {
                    out.sigs.push(s);
                    out.sigs.len() as u32 - 1
                }
                None => near::NONE,
            };
            out.metas.push(Meta {
                id: row.id,
                frame: frame_index,
                line: n as u32,
                url_key: url,
                canonical_key: canonical_key(row.canonical_url.as_deref())
                    .filter(|&k| k != url)
                    .and_then(std::num::NonZeroU64::new),
                text_key: text_key(&row.text).unwrap_or(0),
                relevant,
                score,
                sig,
                updated: row.updated,
                version: crate::extract::version::code_of(row.extractor_version.as_deref())
                    .min(u32::from(u16::MAX)) as u16,
                withdrawn: Withdrawn::of(row.withdrawn),
            });
        }
    }
    report.truncated_bytes = reader.truncated_bytes;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Pass 1 keeps one `Meta` per good record: its size sets the build's memory floor.
    #[test]
    fn meta_stays_small() {
        assert!(std::mem::size_of::<super::Meta>() <= 64);
    }
}
