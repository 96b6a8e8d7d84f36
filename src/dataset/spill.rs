//! What grows with the dataset, kept on disk instead of in memory.
//!
//! - [`SigStore`]: every MinHash signature (224 bytes a record, the largest
//!   table of the build) in one unlinked temporary file under the output
//!   folder. The near-duplicate pass reads it sequentially once per band and
//!   fetches the few signatures of candidate pairs by offset; the page cache,
//!   not the process, holds what is hot.
//! - [`MetaSpill`]: each shard's [`Meta`]s, written as soon as the shard is
//!   read and read back in shard order ([`MetaSpill::each`]) into the first
//!   sort of [`super::dedup`]; the table is never in memory as a whole.
//!
//! Temporary files live in `<out>/.build-tmp/` (not `/tmp`, which may be
//! memory) and are unlinked as soon as they are open, so a crash leaves
//! nothing behind.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;

use super::meta::Meta;
use super::minhash::{HASHES, Signature};
use super::runs::{PositionedReader, temp_file};

/// Bytes of one stored signature.
pub const SIG_BYTES: usize = HASHES * 2;

/// Signatures by index: in memory (tests, small sets) or spilled to disk.
pub trait Sigs: Sync {
    /// How many there are.
    fn count(&self) -> u32;
    /// Signature `i`.
    fn get(&self, i: u32) -> std::io::Result<Signature>;
    /// Every signature in index order.
    fn each(&self, f: &mut dyn FnMut(u32, &Signature)) -> std::io::Result<()>;
}

impl Sigs for [Signature] {
    fn count(&self) -> u32 {
        self.len() as u32
    }
    fn get(&self, i: u32) -> std::io::Result<Signature> {
        self.get(i as usize)
            .copied()
            .ok_or_else(|| std::io::Error::other("no such signature"))
    }
    fn each(&self, f: &mut dyn FnMut(u32, &Signature)) -> std::io::Result<()> {
        for (i, s) in self.iter().enumerate() {
            f(i as u32, s);
        }
        Ok(())
    }
}

/// The signatures of a build, appended a shard at a time.
pub struct SigStore {
    file: File,
    /// Signatures written so far.
    len: Mutex<u32>,
}

fn sig_to_bytes(sig: &Signature, out: &mut Vec<u8>) {
    for v in sig {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

pub fn sig_from_bytes(b: &[u8]) -> Signature {
    let mut sig = [0u16; HASHES];
    for (k, v) in sig.iter_mut().enumerate() {
        *v = u16::from_le_bytes([b[2 * k], b[2 * k + 1]]);
    }
    sig
}

impl SigStore {
    pub fn new(dir: &Path) -> std::io::Result<SigStore> {
        Ok(SigStore {
            file: temp_file(dir)?,
            len: Mutex::new(0),
        })
    }

    /// Append `sigs`; returns the index of the first.
    pub fn append(&self, sigs: &[Signature]) -> std::io::Result<u32> {
        let mut bytes = Vec::with_capacity(sigs.len() * SIG_BYTES);
        for s in sigs {
            sig_to_bytes(s, &mut bytes);
        }
        let mut len = self
            .len
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        let base = *len;
        (&self.file).write_all(&bytes)?;
        *len += sigs.len() as u32;
        Ok(base)
    }
}

/// Signatures per block a [`SigCursor`] reads (about 57 KB).
const CURSOR_BLOCK: u32 = 256;

/// Reads signatures of a [`SigStore`] a block at a time, for callers that
/// ask for them mostly in index order (rows in id order: each shard's
/// signatures were appended as one run): one `pread` a block instead of one
/// a signature (5M of them at 5M rows).
pub struct SigCursor<'a> {
    store: &'a SigStore,
    /// Index of the block in `buf`, if any.
    block: Option<u32>,
    buf: Vec<u8>,
}

impl SigCursor<'_> {
    /// Signature `i`.
    pub fn get(&mut self, i: u32) -> std::io::Result<Signature> {
        let block = i / CURSOR_BLOCK;
        if self.block != Some(block) {
            let first = block * CURSOR_BLOCK;
            let n = (self.store.count().saturating_sub(first)).min(CURSOR_BLOCK) as usize;
            self.buf.resize(n * SIG_BYTES, 0);
            self.block = None;
            self.store
                .file
                .read_exact_at(&mut self.buf, u64::from(first) * SIG_BYTES as u64)?;
            self.block = Some(block);
        }
        let at = (i % CURSOR_BLOCK) as usize * SIG_BYTES;
        let b = self.buf.get(at..at + SIG_BYTES).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no such signature")
        })?;
        Ok(sig_from_bytes(b))
    }
}

impl SigStore {
    /// A cursor of its own (see [`SigCursor`]).
    pub fn cursor(&self) -> SigCursor<'_> {
        SigCursor {
            store: self,
            block: None,
            buf: Vec::new(),
        }
    }
}

impl Sigs for SigStore {
    fn count(&self) -> u32 {
        self.len.lock().map_or(0, |l| *l)
    }
    fn get(&self, i: u32) -> std::io::Result<Signature> {
        let mut b = [0u8; SIG_BYTES];
        self.file
            .read_exact_at(&mut b, u64::from(i) * SIG_BYTES as u64)?;
        Ok(sig_from_bytes(&b))
    }
    fn each(&self, f: &mut dyn FnMut(u32, &Signature)) -> std::io::Result<()> {
        let n = self.count();
        let mut r = BufReader::with_capacity(1 << 20, PositionedReader::new(&self.file));
        let mut b = [0u8; SIG_BYTES];
        for i in 0..n {
            r.read_exact(&mut b)?;
            f(i, &sig_from_bytes(&b));
        }
        Ok(())
    }
}

/// Bytes of one spilled [`Meta`].
const META_BYTES: usize = 8 + 4 + 4 + 8 + 1 + 8 + 16 + 1 + 2 + 4 + 1 + 2 + 1;

fn meta_to_bytes(m: &Meta, out: &mut Vec<u8>) {
    out.extend_from_slice(&m.id.to_le_bytes());
    out.extend_from_slice(&m.frame.to_le_bytes());
    out.extend_from_slice(&m.line.to_le_bytes());
    out.extend_from_slice(&m.url_key.to_le_bytes());
    out.push(u8::from(m.canonical_key.is_some()));
    out.extend_from_slice(&m.canonical_key.map_or(0, |c| c.get()).to_le_bytes());
    out.extend_from_slice(&m.text_key.to_le_bytes());
    out.push(u8::from(m.relevant));
    out.extend_from_slice(&m.score.to_le_bytes());
    out.extend_from_slice(&m.sig.to_le_bytes());
    out.push(u8::from(m.updated));
    out.extend_from_slice(&m.version.to_le_bytes());
    out.push(m.withdrawn);
}

fn meta_from_bytes(b: &[u8]) -> Meta {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
    let u16_at = |i: usize| u16::from_le_bytes(b[i..i + 2].try_into().unwrap_or([0; 2]));
    Meta {
        id: u64_at(0) as i64,
        frame: u32_at(8),
        line: u32_at(12),
        url_key: u64_at(16),
        canonical_key: (b[24] == 1)
            .then(|| std::num::NonZeroU64::new(u64_at(25)))
            .flatten(),
        text_key: u128::from_le_bytes(b[33..49].try_into().unwrap_or([0; 16])),
        relevant: b[49] == 1,
        score: u16_at(50),
        sig: u32_at(52),
        updated: b[56] == 1,
        version: u16_at(57),
        withdrawn: b[59],
    }
}

impl super::runs::Fixed for Meta {
    const BYTES: usize = META_BYTES;
    fn put(&self, out: &mut Vec<u8>) {
        meta_to_bytes(self, out);
    }
    fn read(b: &[u8]) -> Self {
        meta_from_bytes(b)
    }
}

/// The [`Meta`]s of each shard, spilled as shards finish, read back in shard order.
pub struct MetaSpill {
    file: File,
    /// Per shard: (byte offset, count), once written.
    runs: Mutex<Vec<Option<(u64, usize)>>>,
    end: Mutex<u64>,
}

impl MetaSpill {
    pub fn new(dir: &Path, shards: usize) -> std::io::Result<MetaSpill> {
        Ok(MetaSpill {
            file: temp_file(dir)?,
            runs: Mutex::new(vec![None; shards]),
            end: Mutex::new(0),
        })
    }

    /// Write shard `shard`'s metas.
    pub fn put(&self, shard: usize, metas: &[Meta]) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(metas.len() * META_BYTES);
        for m in metas {
            meta_to_bytes(m, &mut bytes);
        }
        let poisoned = || std::io::Error::other("poisoned");
        let offset = {
            let mut end = self.end.lock().map_err(|_| poisoned())?;
            let at = *end;
            *end += bytes.len() as u64;
            at
        };
        self.file.write_all_at(&bytes, offset)?;
        self.runs.lock().map_err(|_| poisoned())?[shard] = Some((offset, metas.len()));
        Ok(())
    }

    /// How many metas were written.
    pub fn total(&self) -> usize {
        self.runs
            .lock()
            .map_or(0, |r| r.iter().flatten().map(|&(_, n)| n).sum())
    }

    /// Every shard's metas in shard order (shard `i`'s frames moved up by
    /// `bases[i]`, its first frame's index in the global frame table), to `f`.
    pub fn each(
        &self,
        bases: &[u32],
        f: &mut dyn FnMut(Meta) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut buf = Vec::new();
        for (shard, &base) in bases.iter().enumerate() {
            buf.clear();
            self.take(shard, &mut buf, |mut m| {
                m.frame += base;
                m
            })?;
            buf.iter().try_for_each(|&m| f(m))?;
        }
        Ok(())
    }

    /// Read shard `shard`'s metas back, each passed through `fix`, onto `out`.
    pub fn take(
        &self,
        shard: usize,
        out: &mut Vec<Meta>,
        fix: impl Fn(Meta) -> Meta,
    ) -> std::io::Result<()> {
        let run = self
            .runs
            .lock()
            .map_or(None, |r| r.get(shard).copied().flatten());
        let Some((offset, n)) = run else {
            return Ok(());
        };
        let mut buf = vec![0u8; n * META_BYTES];
        self.file.read_exact_at(&mut buf, offset)?;
        out.extend(buf.chunks_exact(META_BYTES).map(meta_from_bytes).map(fix));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_what_get_reads_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = SigStore::new(dir.path()).unwrap();
        let sig = |k: u32| {
            let mut s = [0u16; HASHES];
            for (j, v) in s.iter_mut().enumerate() {
                *v = (k as usize * 7 + j) as u16;
            }
            s
        };
        let n = CURSOR_BLOCK * 2 + 5;
        let all: Vec<Signature> = (0..n).map(sig).collect();
        store.append(&all[..300]).unwrap();
        store.append(&all[300..]).unwrap();
        let mut cur = store.cursor();
        for i in (0..n).chain([3, n - 1, CURSOR_BLOCK, 0, n - 2]) {
            assert_eq!(cur.get(i).unwrap(), sig(i), "{i}");
            assert_eq!(store.get(i).unwrap(), sig(i), "{i}");
        }
        assert!(cur.get(n).is_err());
    }

    #[test]
    fn metas_and_signatures_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let m = Meta {
            id: -42,
            frame: 7,
            line: 9,
            url_key: u64::MAX - 1,
            canonical_key: std::num::NonZeroU64::new(5),
            text_key: u128::MAX - 3,
            relevant: true,
            score: 999,
            sig: 12,
            updated: true,
            version: 300,
            withdrawn: 2,
        };
        let spill = MetaSpill::new(dir.path(), 2).unwrap();
        spill
            .put(
                1,
                &[
                    m,
                    Meta {
                        canonical_key: None,
                        ..m
                    },
                ],
            )
            .unwrap();
        spill.put(0, &[Meta { id: 1, ..m }]).unwrap();
        assert_eq!(spill.total(), 3);
        let mut out = Vec::new();
        spill.take(0, &mut out, |m| m).unwrap();
        spill
            .take(1, &mut out, |m| Meta {
                frame: m.frame + 1,
                ..m
            })
            .unwrap();
        assert_eq!(
            format!("{:?}", out[1]),
            format!("{:?}", Meta { frame: 8, ..m })
        );
        assert_eq!(out[0].id, 1);
        assert_eq!(out[2].canonical_key, None);
        let store = SigStore::new(dir.path()).unwrap();
        let a: Signature = std::array::from_fn(|i| i as u16);
        let b: Signature = std::array::from_fn(|i| 1000 - i as u16);
        assert_eq!(store.append(&[a]).unwrap(), 0);
        assert_eq!(store.append(&[b, a]).unwrap(), 1);
        assert_eq!(store.get(1).unwrap(), b);
        let mut seen = vec![];
        store.each(&mut |i, s| seen.push((i, s[3]))).unwrap();
        assert_eq!(seen, vec![(0, 3), (1, 997), (2, 3)]);
    }
}
