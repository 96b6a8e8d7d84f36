//! Tables of fixed-size records on disk, and sorting them in sorted runs:
//! how the build keeps what grows with the dataset (the per-record table, the
//! near-duplicate band keys and candidate pairs) out of memory.
//!
//! - [`Table`]: records written one after another to an unlinked temporary
//!   file ([`temp_file`]), read back in order ([`Table::reader`])
//!   or a range at a time ([`Table::load`], one `pread`).
//! - [`Sorter`]: records gathered in memory up to a budget, sorted by a key
//!   and written out as a [`Table`] (a run); [`Sorter::finish`] merges the
//!   runs (a heap over one 64 KiB reader per run). A set that fits the budget
//!   is never written out. Keys must be unique (or equal keys equal records),
//!   so the order does not depend on where the runs were cut.
//!
//! Memory: the budget, plus 64 KiB per run while merging. The page cache, not
//! the process, holds what was written.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A record of a fixed number of bytes on disk.
pub trait Fixed: Copy + Send + Sync {
    const BYTES: usize;
    /// Append the record's bytes to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// The record in `b` (`BYTES` long).
    fn read(b: &[u8]) -> Self;
}

/// Records on disk, in the order they were written.
pub struct Table<T> {
    file: File,
    len: u64,
    _t: PhantomData<T>,
}

/// Writes a [`Table`].
pub struct TableWriter<T> {
    w: BufWriter<File>,
    buf: Vec<u8>,
    len: u64,
    _t: PhantomData<T>,
}

impl<T: Fixed> TableWriter<T> {
    /// A new table in an unlinked file under `dir`.
    pub fn new(dir: &Path) -> std::io::Result<TableWriter<T>> {
        Ok(TableWriter {
            w: BufWriter::with_capacity(1 << 20, temp_file(dir)?),
            buf: Vec::with_capacity(T::BYTES),
            len: 0,
            _t: PhantomData,
        })
    }

    pub fn push(&mut self, t: &T) -> std::io::Result<()> {
        self.buf.clear();
        t.put(&mut self.buf);
        self.w.write_all(&self.buf)?;
        self.len += 1;
        Ok(())
    }

    pub fn finish(self) -> std::io::Result<Table<T>> {
        let file = self.w.into_inner().map_err(|e| e.into_error())?;
        Ok(Table {
            file,
            len: self.len,
            _t: PhantomData,
        })
    }
}

impl<T: Fixed> Table<T> {
    /// How many records it holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The records from the first, in order.
    pub fn reader(&self) -> TableReader<'_, T> {
        TableReader {
            r: BufReader::with_capacity(256 << 10, PositionedReader::new(&self.file)),
            left: self.len,
            buf: vec![0; T::BYTES],
            _t: PhantomData,
        }
    }

    /// Records `range` into `out` (cleared first).
    pub fn load(&self, range: Range<u64>, out: &mut Vec<T>) -> std::io::Result<()> {
        out.clear();
        if range.end > self.len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "past the end of a spilled table",
            ));
        }
        let n = usize::try_from(range.end.saturating_sub(range.start)).unwrap_or(0);
        let mut bytes = vec![0u8; n * T::BYTES];
        self.file
            .read_exact_at(&mut bytes, range.start * T::BYTES as u64)?;
        out.extend(bytes.chunks_exact(T::BYTES).map(T::read));
        Ok(())
    }

    /// The table read once, in order, owning its file (for a merge).
    fn into_run(mut self) -> std::io::Result<Run<T>> {
        self.file.seek(SeekFrom::Start(0))?;
        Ok(Run {
            r: BufReader::with_capacity(64 << 10, self.file),
            left: self.len,
            buf: vec![0; T::BYTES],
            _t: PhantomData,
        })
    }
}

/// A [`Table`]'s records in order.
pub struct TableReader<'a, T> {
    r: BufReader<PositionedReader<'a>>,
    left: u64,
    buf: Vec<u8>,
    _t: PhantomData<T>,
}

impl<T: Fixed> Iterator for TableReader<'_, T> {
    type Item = std::io::Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(
            self.r
                .read_exact(&mut self.buf)
                .map(|()| T::read(&self.buf)),
        )
    }
}

/// A sorted run read back once.
pub struct Run<T> {
    r: BufReader<File>,
    left: u64,
    buf: Vec<u8>,
    _t: PhantomData<T>,
}

impl<T: Fixed> Run<T> {
    fn next(&mut self) -> std::io::Result<Option<T>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        self.r.read_exact(&mut self.buf)?;
        Ok(Some(T::read(&self.buf)))
    }
}

/// Sorts records by `key` within a memory budget (see the module docs).
pub struct Sorter<'a, T, K> {
    dir: &'a Path,
    key: fn(&T) -> K,
    batch: Vec<T>,
    cap: usize,
    runs: Vec<Table<T>>,
}

impl<'a, T: Fixed, K: Ord + Copy> Sorter<'a, T, K> {
    /// A sorter holding at most `budget` bytes of records; runs go under `dir`.
    pub fn new(dir: &'a Path, budget: usize, key: fn(&T) -> K) -> Sorter<'a, T, K> {
        Sorter {
            dir,
            key,
            batch: Vec::new(),
            // Rounded up: a full batch is at least `budget` bytes (a block the
            // allocator maps, and unmaps when it is freed, above 32 MiB).
            cap: budget.div_ceil(std::mem::size_of::<T>().max(1)).max(1024),
            runs: Vec::new(),
        }
    }

    pub fn push(&mut self, t: T) -> std::io::Result<()> {
        if self.batch.len() == self.cap {
            self.spill()?;
        }
        if self.batch.capacity() == 0 {
            self.batch.reserve_exact(self.cap.min(1 << 16));
        }
        self.batch.push(t);
        Ok(())
    }

    fn spill(&mut self) -> std::io::Result<()> {
        let key = self.key;
        self.batch.sort_unstable_by_key(key);
        let mut w = TableWriter::new(self.dir)?;
        for t in &self.batch {
            w.push(t)?;
        }
        self.runs.push(w.finish()?);
        self.batch.clear();
        Ok(())
    }

    /// The records in key order.
    pub fn finish(mut self) -> std::io::Result<Sorted<T, K>> {
        let key = self.key;
        if self.runs.is_empty() {
            self.batch.sort_unstable_by_key(key);
            return Ok(Sorted::Memory(std::mem::take(&mut self.batch).into_iter()));
        }
        if !self.batch.is_empty() {
            self.spill()?;
        }
        drop(std::mem::take(&mut self.batch));
        let mut runs = Vec::with_capacity(self.runs.len());
        let mut heads = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::with_capacity(self.runs.len());
        for (i, table) in std::mem::take(&mut self.runs).into_iter().enumerate() {
            let mut run = table.into_run()?;
            let head = run.next()?;
            if let Some(t) = &head {
                heap.push(Reverse((key(t), i)));
            }
            runs.push(run);
            heads.push(head);
        }
        Ok(Sorted::Merge {
            runs,
            heads,
            heap,
            key,
        })
    }
}

/// What a [`Sorter`] sorted, in order.
pub enum Sorted<T, K> {
    Memory(std::vec::IntoIter<T>),
    Merge {
        runs: Vec<Run<T>>,
        heads: Vec<Option<T>>,
        heap: BinaryHeap<Reverse<(K, usize)>>,
        key: fn(&T) -> K,
    },
}

impl<T: Fixed, K: Ord + Copy> Sorted<T, K> {
    /// The rest of the records, in order, as a table under `dir`.
    pub fn into_table(mut self, dir: &Path) -> std::io::Result<Table<T>> {
        let mut w = TableWriter::new(dir)?;
        while let Some(t) = self.next()? {
            w.push(&t)?;
        }
        w.finish()
    }

    /// The next record, if any.
    pub fn next(&mut self) -> std::io::Result<Option<T>> {
        match self {
            Sorted::Memory(it) => Ok(it.next()),
            Sorted::Merge {
                runs,
                heads,
                heap,
                key,
            } => {
                let Some(Reverse((_, i))) = heap.pop() else {
                    return Ok(None);
                };
                let out = heads[i].take();
                heads[i] = runs[i].next()?;
                if let Some(t) = &heads[i] {
                    heap.push(Reverse((key(t), i)));
                }
                Ok(out)
            }
        }
    }
}

impl Fixed for (u32, u32) {
    const BYTES: usize = 8;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
        out.extend_from_slice(&self.1.to_le_bytes());
    }
    fn read(b: &[u8]) -> Self {
        (u32_at(b, 0), u32_at(b, 4))
    }
}

/// The little-endian `u32` at `i` of `b`.
pub fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]))
}

/// The little-endian `u64` at `i` of `b`.
pub fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]))
}

/// A temporary file under `dir`, unlinked at once (read and write).
pub fn temp_file(dir: &Path) -> std::io::Result<File> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    std::fs::create_dir_all(dir)?;
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("spill-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Reads a shared file from the start through `pread`, so several readers
/// (and the appender) never move each other's position.
pub struct PositionedReader<'a> {
    file: &'a File,
    at: u64,
}

impl<'a> PositionedReader<'a> {
    pub fn new(file: &'a File) -> Self {
        PositionedReader { file, at: 0 }
    }
}

impl Read for PositionedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_the_same_in_memory_and_in_runs() {
        let dir = tempfile::tempdir().unwrap();
        let items: Vec<(u32, u32)> = (0..10_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) % 977, i))
            .collect();
        let mut want = items.clone();
        want.sort_unstable();
        for budget in [usize::MAX / 2, 1] {
            let mut s = Sorter::new(dir.path(), budget, |t: &(u32, u32)| *t);
            for &t in &items {
                s.push(t).unwrap();
            }
            let mut sorted = s.finish().unwrap();
            let mut got = Vec::new();
            while let Some(t) = sorted.next().unwrap() {
                got.push(t);
            }
            assert_eq!(got, want, "budget {budget}");
        }
        let mut w = TableWriter::new(dir.path()).unwrap();
        for t in &items {
            w.push(t).unwrap();
        }
        let table = w.finish().unwrap();
        assert_eq!(table.len(), items.len() as u64);
        let back: Vec<(u32, u32)> = table.reader().map(Result::unwrap).collect();
        assert_eq!(back, items);
        let mut part = Vec::new();
        table.load(5..9, &mut part).unwrap();
        assert_eq!(part, items[5..9]);
        assert!(table.load(9_999..10_001, &mut part).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
