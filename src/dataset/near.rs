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
//! Memory: one `(u64, u32)` per record for each band being sorted (one per
//! thread), one `u32` per signature, plus one `(u32, u32)` per candidate pair.
//! The signatures stay where the caller keeps them (on disk in a build,
//! [`super::spill::SigStore`]): each band reads them once in order, and a
//! candidate pair fetches its two.

use super::minhash::{self, BANDS};
use super::spill::Sigs;

/// A record is compared with at most this many earlier records of one band group.
pub const MAX_EARLIER: usize = 32;

/// No signature (a text without words): never a near duplicate.
pub const NONE: u32 = u32::MAX;

/// For each record (`order[k]` is its index into `sigs`, or [`NONE`]), whether
/// it is a near duplicate of an earlier kept record. Uses up to `jobs` threads
/// for the bands.
pub fn near_duplicates<S: Sigs + ?Sized>(
    order: &[u32],
    sigs: &S,
    jobs: usize,
) -> std::io::Result<Vec<bool>> {
    // Where each signature stands in `order` (NONE: not a record's).
    let mut pos = vec![NONE; sigs.count() as usize];
    for (k, &s) in order.iter().enumerate() {
        if let Some(p) = pos.get_mut(s as usize) {
            *p = k as u32;
        }
    }
    let mut pairs = candidates(&pos, sigs, jobs)?;
    drop(pos);
    pairs.sort_unstable();
    pairs.dedup();
    let mut removed = vec![false; order.len()];
    for &(later, earlier) in &pairs {
        let (l, e) = (later as usize, earlier as usize);
        if removed[l] || removed[e] {
            continue;
        }
        let (a, b) = (sigs.get(order[e])?, sigs.get(order[l])?);
        if minhash::similarity(&a, &b) >= minhash::THRESHOLD {
            removed[l] = true;
        }
    }
    Ok(removed)
}

/// Candidate pairs `(later, earlier)` (positions in `order`) over all bands.
fn candidates<S: Sigs + ?Sized>(
    pos: &[u32],
    sigs: &S,
    jobs: usize,
) -> std::io::Result<Vec<(u32, u32)>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = jobs.clamp(1, BANDS);
    let found: Vec<std::io::Result<Vec<(u32, u32)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut pairs = Vec::new();
                    let mut keys: Vec<(u64, u32)> = Vec::new();
                    loop {
                        let band = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if band >= BANDS {
                            break;
                        }
                        band_pairs(pos, sigs, band, &mut keys, &mut pairs)?;
                    }
                    Ok(pairs)
                })
            })
            .collect();
        handles
            .into_iter()
            // A panicking worker re-raises its panic here.
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut all = Vec::new();
    for f in found {
        all.extend(f?);
    }
    Ok(all)
}

fn band_pairs<S: Sigs + ?Sized>(
    pos: &[u32],
    sigs: &S,
    band: usize,
    keys: &mut Vec<(u64, u32)>,
    pairs: &mut Vec<(u32, u32)>,
) -> std::io::Result<()> {
    keys.clear();
    sigs.each(&mut |i, sig| {
        if let Some(&k) = pos.get(i as usize).filter(|&&k| k != NONE) {
            keys.push((minhash::band_key(sig, band), k));
        }
    })?;
    keys.sort_unstable();
    for group in keys.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        for (i, &(_, later)) in group.iter().enumerate().skip(1) {
            for &(_, earlier) in &group[i.saturating_sub(MAX_EARLIER)..i] {
                pairs.push((later, earlier));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::minhash::{Signature, signature};

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
        let removed = near_duplicates(&order, sigs.as_slice(), 2).unwrap();
        assert_eq!(removed, vec![false, false, true, false, true, false]);
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
        let removed = near_duplicates(&[0, 1, 2], sigs.as_slice(), 1).unwrap();
        // C is compared only with kept records: A, not the removed B.
        assert_eq!(removed, vec![false, true, false]);
    }
}
