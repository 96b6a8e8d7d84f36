//! Which records claim a key (a URL key, a canonical-URL key, a text key)
//! that a record earlier in output order already claimed: the exact-duplicate
//! test of [`super::dedup`], done by sorting instead of with hash sets, so
//! its memory is bounded whatever the number of records.
//!
//! Each claim is a `(key, position)` pair. Pairs are gathered in memory up to
//! a budget, sorted, and written out as a sorted run (an unlinked file under
//! the build's spill folder, [`super::runs::temp_file`]); the runs are then
//! merged. In the merged order the first position of each key is the
//! claimant, and every later position holding that key is marked. A set
//! that fits the budget is never written out. Memory: the budget, plus one
//! bit per record for the answer, plus a 64 KiB read buffer per run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::runs::temp_file;

/// One claim: a key and the position of the record making it.
type Claim = (u128, u32);
/// Bytes of a claim in memory (with padding), for the budget.
const CLAIM_MEM: usize = std::mem::size_of::<Claim>();
/// Bytes of a claim in a run file.
const CLAIM_BYTES: usize = 20;

/// Positions `0..n` as bits.
#[derive(Debug, Clone)]
pub struct Bits(Vec<u64>);

impl Bits {
    pub fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    pub fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
}

/// Claims gathered so far: the current (unsorted) batch and the sorted runs
/// already on disk.
pub struct Claims<'a> {
    dir: &'a Path,
    batch: Vec<Claim>,
    cap: usize,
    runs: Vec<(File, u64)>,
}

impl<'a> Claims<'a> {
    /// Claims kept in at most `budget` bytes of memory; runs spill under `dir`.
    pub fn new(dir: &'a Path, budget: usize) -> Claims<'a> {
        let cap = (budget / CLAIM_MEM).max(1024);
        Claims {
            dir,
            batch: Vec::new(),
            cap,
            runs: Vec::new(),
        }
    }

    /// The record at `pos` claims `key`.
    pub fn push(&mut self, key: u128, pos: u32) -> std::io::Result<()> {
        if self.batch.len() == self.cap {
            self.spill()?;
        }
        if self.batch.capacity() == 0 {
            self.batch.reserve_exact(self.cap.min(1 << 16));
        }
        self.batch.push((key, pos));
        Ok(())
    }

    /// Sort the batch and write it out as a run.
    fn spill(&mut self) -> std::io::Result<()> {
        self.batch.sort_unstable();
        let mut w = BufWriter::with_capacity(1 << 20, temp_file(self.dir)?);
        for (k, p) in &self.batch {
            w.write_all(&k.to_le_bytes())?;
            w.write_all(&p.to_le_bytes())?;
        }
        let mut file = w.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push((file, self.batch.len() as u64));
        self.batch.clear();
        Ok(())
    }

    /// The positions (below `n`) that claim a key some lower position claimed.
    pub fn later(mut self, n: usize) -> std::io::Result<Bits> {
        let mut out = Bits::new(n);
        let mut last: Option<u128> = None;
        let mut mark = |(key, pos): Claim| {
            if last == Some(key) {
                out.set(pos as usize);
            }
            last = Some(key);
        };
        if self.runs.is_empty() {
            self.batch.sort_unstable();
            self.batch.dedup();
            self.batch.iter().copied().for_each(&mut mark);
            return Ok(out);
        }
        if !self.batch.is_empty() {
            self.spill()?;
        }
        drop(std::mem::take(&mut self.batch));
        let mut readers: Vec<Run> = self.runs.into_iter().map(Run::new).collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (r, run) in readers.iter_mut().enumerate() {
            if let Some(c) = run.next()? {
                heap.push(Reverse((c, r)));
            }
        }
        let mut prev: Option<Claim> = None;
        while let Some(Reverse((c, r))) = heap.pop() {
            // The same claim twice (a URL key equal to its own canonical key) is one.
            if prev != Some(c) {
                mark(c);
            }
            prev = Some(c);
            if let Some(next) = readers[r].next()? {
                heap.push(Reverse((next, r)));
            }
        }
        Ok(out)
    }
}

/// A sorted run read back in order.
struct Run {
    r: BufReader<File>,
    left: u64,
}

impl Run {
    fn new((file, len): (File, u64)) -> Run {
        Run {
            r: BufReader::with_capacity(64 << 10, file),
            left: len,
        }
    }

    fn next(&mut self) -> std::io::Result<Option<Claim>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut b = [0u8; CLAIM_BYTES];
        self.r.read_exact(&mut b)?;
        let mut k = [0u8; 16];
        k.copy_from_slice(&b[..16]);
        let mut p = [0u8; 4];
        p.copy_from_slice(&b[16..]);
        Ok(Some((u128::from_le_bytes(k), u32::from_le_bytes(p))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same answer as a hash set taken in order, whether the claims fit
    /// in memory or spill to many runs.
    #[test]
    fn later_claims_match_a_set_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let n = 20_000usize;
        let key = |i: usize, j: usize| ((i * 7919 + j * 31) % 5003) as u128 * 0x1_0000_0001;
        let mut seen = std::collections::HashSet::new();
        let mut want = Vec::new();
        for i in 0..n {
            let mut dup = false;
            for j in 0..2 {
                dup |= !seen.insert(key(i, j));
            }
            want.push(dup);
        }
        for budget in [usize::MAX / 2, 4096 * CLAIM_MEM, 1] {
            let mut c = Claims::new(dir.path(), budget);
            // Pushed out of order: the answer depends on positions only.
            for i in (0..n).rev() {
                for j in 0..2 {
                    c.push(key(i, j), i as u32).unwrap();
                }
            }
            let got = c.later(n).unwrap();
            let got: Vec<bool> = (0..n).map(|i| got.get(i)).collect();
            assert_eq!(got, want, "budget {budget}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_key_claimed_twice_by_one_record_is_not_a_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        for budget in [usize::MAX / 2, 1] {
            let mut c = Claims::new(dir.path(), budget);
            for _ in 0..3000 {
                c.push(5, 0).unwrap();
            }
            c.push(5, 1).unwrap();
            let got = c.later(2).unwrap();
            assert!(!got.get(0) && got.get(1));
        }
    }
}
