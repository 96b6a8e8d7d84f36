//! Near-duplicate selection over MinHash signatures ([`super::minhash`]).
//!
//! Records come in output order (id order). For each band, the records are
//! sorted by the band's hash; records with equal hashes are candidate pairs
//! (each record is paired with at most [`MAX_EARLIER`] earlier records of its
//! group, which bounds the work on a large group of look-alikes). Then, in
//! order, a record is removed when one of its earlier candidates was kept and
//! their signatures agree on at least [`minhash::THRESHOLD`] of their values.
//!
//! Comparing only against kept records makes the rule greedy in id order: a
//! record's fate depends on lower ids alone, so records added by later crawls
//! never remove one an earlier build kept (as for exact duplicates), and a
//! chain A ~ B ~ C with A and C far apart keeps C.
//!
//! Memory: everything that grows with the records goes through sorted runs
//! ([`super::runs::Sorter`], each within the `budget` given): the records'
//! (signature, position) pairs, sorted by signature so the signatures are
//! read once in order (on disk in a build, [`super::spill::SigStore`]); one
//! `(band, key, position, signature)` per record and band, sorted so each
//! band group comes together; and the candidate pairs, sorted so they are
//! decided in order. What stays is one bit per record (removed or not) and
//! a window of [`MAX_EARLIER`] records of the current group. A candidate
//! pair fetches its two signatures.

use std::collections::VecDeque;
use std::path::Path;

use super::claims::Bits;
use super::minhash::{self, BANDS};
use super::runs::{Fixed, Sorter, u32_at, u64_at};
use super::spill::Sigs;

/// A record is compared with at most this many earlier records of one band group.
pub const MAX_EARLIER: usize = 32;

/// No signature (a text without words): never a near duplicate.
pub const NONE: u32 = u32::MAX;

/// Where the sorted runs go, how much memory each sort may hold, and how
/// many threads share the bands (each with its share of the budget).
#[derive(Debug, Clone, Copy)]
pub struct Space<'a> {
    pub dir: &'a Path,
    pub budget: usize,
    pub jobs: usize,
}

/// One record's key in one band.
#[derive(Debug, Clone, Copy)]
struct BandKey {
    band: u8,
    key: u64,
    pos: u32,
    sig: u32,
}

impl Fixed for BandKey {
    const BYTES: usize = 17;
    fn put(&self, out: &mut Vec<u8>) {
        out.push(self.band);
        out.extend_from_slice(&self.key.to_le_bytes());
        out.extend_from_slice(&self.pos.to_le_bytes());
        out.extend_from_slice(&self.sig.to_le_bytes());
    }
    fn read(b: &[u8]) -> Self {
        BandKey {
            band: b[0],
            key: u64_at(b, 1),
            pos: u32_at(b, 9),
            sig: u32_at(b, 13),
        }
    }
}

/// A candidate pair: positions, then signatures, of the later and the earlier record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pair {
    later: u32,
    earlier: u32,
    later_sig: u32,
    earlier_sig: u32,
}

impl Fixed for Pair {
    const BYTES: usize = 16;
    fn put(&self, out: &mut Vec<u8>) {
        for v in [self.later, self.earlier, self.later_sig, self.earlier_sig] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    fn read(b: &[u8]) -> Self {
        Pair {
            later: u32_at(b, 0),
            earlier: u32_at(b, 4),
            later_sig: u32_at(b, 8),
            earlier_sig: u32_at(b, 12),
        }
    }
}

/// For each of the `n` records in output order (`order` gives each one's
/// index into `sigs`, or [`NONE`]), whether it is a near duplicate of an
/// earlier kept record.
pub fn near_duplicates<S: Sigs + ?Sized>(
    order: impl IntoIterator<Item = std::io::Result<u32>>,
    n: usize,
    sigs: &S,
    space: Space<'_>,
) -> std::io::Result<Bits> {
    let mut by_sig = Sorter::new(space.dir, space.budget, |t: &(u32, u32)| *t);
    for (pos, sig) in order.into_iter().enumerate() {
        let sig = sig?;
        if sig != NONE {
            by_sig.push((sig, pos as u32))?;
        }
    }
    let by_sig = by_sig.finish()?.into_table(space.dir)?;
    // Bands w, w + workers, ... on worker w; its pairs come back sorted.
    let workers = space.jobs.clamp(1, BANDS);
    let share = Space {
        budget: space.budget / workers,
        ..space
    };
    let found: Vec<std::io::Result<Pairs>> = std::thread::scope(|s| {
        let by_sig = &by_sig;
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                s.spawn(move || {
                    let bands: Vec<usize> = (w..BANDS).step_by(workers).collect();
                    candidates(band_keys(by_sig, sigs, share, &bands)?, share)
                })
            })
            .collect();
        handles
            .into_iter()
            // A panicking worker re-raises its panic here.
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let pairs = found.into_iter().collect::<std::io::Result<Vec<Pairs>>>()?;
    decide(pairs, n, sigs)
}

/// Candidate pairs in (later, earlier) order.
type Pairs = super::runs::Sorted<Pair, (u32, u32)>;

/// Every record's key in each of `bands`, sorted by (band, key, position).
fn band_keys<S: Sigs + ?Sized>(
    by_sig: &super::runs::Table<(u32, u32)>,
    sigs: &S,
    space: Space<'_>,
    bands: &[usize],
) -> std::io::Result<super::runs::Sorted<BandKey, (u8, u64, u32)>> {
    let mut keys = Sorter::new(space.dir, space.budget, |b: &BandKey| {
        (b.band, b.key, b.pos)
    });
    let mut by_sig = by_sig.reader();
    let mut next = by_sig.next().transpose()?;
    let mut failed = None;
    sigs.each(&mut |i, sig| {
        while failed.is_none()
            && let Some((s, pos)) = next
            && s == i
        {
            for &band in bands {
                let key = minhash::band_key(sig, band);
                let b = BandKey {
                    band: band as u8,
                    key,
                    pos,
                    sig: i,
                };
                if let Err(e) = keys.push(b) {
                    failed = Some(e);
                }
            }
            match by_sig.next().transpose() {
                Ok(n) => next = n,
                Err(e) => failed = Some(e),
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    keys.finish()
}

/// Candidate pairs: each record with up to [`MAX_EARLIER`] earlier records
/// of each of its band groups, sorted by (later, earlier).
fn candidates(
    mut bands: super::runs::Sorted<BandKey, (u8, u64, u32)>,
    space: Space<'_>,
) -> std::io::Result<Pairs> {
    let mut pairs = Sorter::new(space.dir, space.budget, |p: &Pair| (p.later, p.earlier));
    let mut group: Option<(u8, u64)> = None;
    let mut window: VecDeque<(u32, u32)> = VecDeque::with_capacity(MAX_EARLIER + 1);
    while let Some(b) = bands.next()? {
        if group != Some((b.band, b.key)) {
            group = Some((b.band, b.key));
            window.clear();
        }
        for &(earlier, earlier_sig) in &window {
            pairs.push(Pair {
                later: b.pos,
                earlier,
                later_sig: b.sig,
                earlier_sig,
            })?;
        }
        window.push_back((b.pos, b.sig));
        if window.len() > MAX_EARLIER {
            window.pop_front();
        }
    }
    pairs.finish()
}

/// Greedy in id order: a later record goes when a kept earlier one is near
/// it. `pairs`: each worker's, merged here.
fn decide<S: Sigs + ?Sized>(mut pairs: Vec<Pairs>, n: usize, sigs: &S) -> std::io::Result<Bits> {
    let mut heads = Vec::with_capacity(pairs.len());
    for p in &mut pairs {
        heads.push(p.next()?);
    }
    let mut removed = Bits::new(n);
    let mut last = None;
    loop {
        let first = heads
            .iter()
            .enumerate()
            .filter_map(|(w, h)| h.map(|p| ((p.later, p.earlier), w)))
            .min();
        let Some((_, w)) = first else { break };
        let Some(p) = heads[w] else { break };
        heads[w] = pairs[w].next()?;
        if last == Some((p.later, p.earlier)) {
            continue;
        }
        last = Some((p.later, p.earlier));
        let (l, e) = (p.later as usize, p.earlier as usize);
        if removed.get(l) || removed.get(e) {
            continue;
        }
        let (a, b) = (sigs.get(p.earlier_sig)?, sigs.get(p.later_sig)?);
        if minhash::similarity(&a, &b) >= minhash::THRESHOLD {
            removed.set(l);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::minhash::{Signature, signature};

    fn run(order: &[u32], sigs: &[Signature], budget: usize) -> Vec<bool> {
        let dir = tempfile::tempdir().unwrap();
        let space = Space {
            dir: dir.path(),
            budget,
            jobs: 3,
        };
        let got = near_duplicates(order.iter().map(|&s| Ok(s)), order.len(), sigs, space);
        let got = got.unwrap();
        (0..order.len()).map(|k| got.get(k)).collect()
    }

    fn story(seed: usize, n: usize) -> String {
        (0..n)
            .map(|i| format!("s{seed}w{}", (i * 7 + seed) % 997))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn keeps_the_first_of_each_near_duplicate_group() {
        let a = story(1, 400);
        let a_edit = format!("Breaking update from the wire. {a} Copyright the wire.");
        let b = story(2, 400);
        let texts = [
            a.clone(),
            b.clone(),
            a_edit,
            String::new(),
            b.clone(),
            story(3, 400),
        ];
        let sigs: Vec<Signature> = texts.iter().filter_map(|t| signature(t)).collect();
        // Record 3 has no words.
        let order = [0, 1, 2, NONE, 3, 4];
        for budget in [usize::MAX / 2, 1] {
            let removed = run(&order, &sigs, budget);
            assert_eq!(removed, vec![false, false, true, false, true, false]);
        }
    }

    #[test]
    fn a_removed_record_does_not_remove_others() {
        // B is near A, C is near B but not A: B goes, C stays (it was compared with a removed record).
        let base: Vec<String> = (0..300).map(|i| format!("t{i}")).collect();
        let a = base.join(" ");
        let shifted = |k: usize| {
            let tail: Vec<String> = (0..k).map(|i| format!("u{i}")).collect();
            format!("{} {}", base[k..].join(" "), tail.join(" "))
        };
        let (b, c) = (shifted(25), shifted(55));
        let sigs: Vec<Signature> = [a, b, c].iter().filter_map(|t| signature(t)).collect();
        let sim = |i: usize, j: usize| minhash::similarity(&sigs[i], &sigs[j]);
        assert!(sim(0, 1) >= minhash::THRESHOLD && sim(0, 2) < minhash::THRESHOLD);
        let removed = run(&[0, 1, 2], &sigs, usize::MAX / 2);
        // C is compared only with kept records: A, not the removed B.
        assert_eq!(removed, vec![false, true, false]);
    }
}
