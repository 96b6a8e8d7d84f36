//! Merging record lists into one list sorted by hash with one record per hash.
//!
//! Loading is dominated by this step, so it avoids work the files make
//! unnecessary: compacted files are already sorted and cover disjoint hash
//! ranges, so they are chained end to end without sorting; only the small
//! per-run segments are sorted (together, once); sorted lists are merged in
//! place, smallest first, so the peak memory is the records and nothing more.

use super::Rec;

/// Fold runs of equal hashes (adjacent in a sorted list) into one record.
fn fold_adjacent(v: &mut Vec<Rec>) {
    v.dedup_by(|later, kept| {
        if later.hash == kept.hash {
            kept.seen = kept.seen.merge(later.seen);
            true
        } else {
            false
        }
    });
}

fn is_sorted_unique(v: &[Rec]) -> bool {
    v.windows(2).all(|w| w[0].hash < w[1].hash)
}

/// Sort by hash and fold equal hashes with [`super::Seen::merge`].
fn sort_merge(v: &mut Vec<Rec>) {
    if !is_sorted_unique(v) {
        v.sort_unstable_by_key(|r| r.hash);
        fold_adjacent(v);
    }
}

/// Merge two sorted, unique lists into `a`, in place from the back.
fn merge_into(a: &mut Vec<Rec>, b: Vec<Rec>) {
    let (n, m) = (a.len(), b.len());
    a.resize(n + m, Rec::default());
    let (mut i, mut j, mut k) = (n, m, n + m);
    while j > 0 {
        if i > 0 && a[i - 1].hash > b[j - 1].hash {
            a[k - 1] = a[i - 1];
            i -= 1;
        } else {
            a[k - 1] = b[j - 1];
            j -= 1;
        }
        k -= 1;
    }
    // Each list was unique, so equal hashes now sit in adjacent pairs.
    fold_adjacent(a);
}

/// Merge record lists (any order, any duplicates) into one sorted, unique list.
pub(crate) fn merge_runs(runs: Vec<Vec<Rec>>) -> Vec<Rec> {
    let total: usize = runs.iter().map(Vec::len).sum();
    // Big lists (compacted files, a legacy seen.bin) are sorted where they
    // lie; the many small per-run segments are gathered and sorted once.
    let mut big: Vec<Vec<Rec>> = Vec::new();
    let mut small: Vec<Rec> = Vec::new();
    for mut r in runs {
        if r.len() >= 4096 && r.len() >= total / 16 {
            sort_merge(&mut r);
            big.push(r);
        } else {
            small.extend_from_slice(&r);
        }
    }
    // Chain lists whose hash ranges follow each other (a compaction's chunks).
    // Invariant: every big list holds at least 4096 records, so `r[0]` exists.
    big.sort_by_key(|r| r[0].hash);
    let mut lists: Vec<Vec<Rec>> = Vec::with_capacity(big.len() + 1);
    for r in big {
        match lists.last_mut() {
            Some(last) if last.last().is_some_and(|l| l.hash < r[0].hash) => {
                last.extend_from_slice(&r)
            }
            _ => lists.push(r),
        }
    }
    if !small.is_empty() {
        sort_merge(&mut small);
        lists.push(small);
    }
    // Merge the two smallest until one is left.
    while lists.len() > 1 {
        lists.sort_by_key(|l| std::cmp::Reverse(l.len()));
        let (Some(b), Some(mut a)) = (lists.pop(), lists.pop()) else {
            break;
        };
        merge_into(&mut a, b);
        lists.push(a);
    }
    lists.pop().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::Seen;
    use super::*;
    use std::collections::BTreeMap;

    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn fold(runs: &[Vec<Rec>]) -> Vec<Rec> {
        let mut want: BTreeMap<u64, Seen> = BTreeMap::new();
        for r in runs.iter().flatten() {
            let e = want.entry(r.hash).or_insert(r.seen);
            *e = e.merge(r.seen);
        }
        want.into_iter()
            .map(|(hash, seen)| Rec { hash, seen })
            .collect()
    }

    fn random_run(next: &mut impl FnMut() -> u64, len: usize, range: u64) -> Vec<Rec> {
        (0..len)
            .map(|_| {
                let r = next();
                Rec {
                    hash: r % range,
                    seen: Seen::new((r >> 20) as u32 % 9, 1 << ((r >> 40) % 4)),
                }
            })
            .collect()
    }

    #[test]
    fn equals_a_plain_fold() {
        let mut next = xorshift(0x1234_5678);
        let small: Vec<Vec<Rec>> = (0..5)
            .map(|i| random_run(&mut next, 200 * (i + 1), 300))
            .collect();
        assert_eq!(merge_runs(small.clone()), fold(&small));

        // Big lists: a sorted one cut in hash-range chunks (a compaction),
        // an unsorted big one, and small ones overlapping everything.
        let compacted = fold(&[random_run(&mut next, 40_000, 1 << 20)]);
        let mut runs: Vec<Vec<Rec>> = compacted.chunks(9_000).map(<[Rec]>::to_vec).collect();
        runs.push(random_run(&mut next, 30_000, 1 << 20));
        runs.push(random_run(&mut next, 8_000, 1 << 20));
        runs.extend((0..4).map(|_| random_run(&mut next, 300, 1 << 20)));
        assert_eq!(merge_runs(runs.clone()), fold(&runs));
        runs.reverse();
        assert_eq!(merge_runs(runs.clone()), fold(&runs));
        assert!(merge_runs(vec![]).is_empty());
        assert!(merge_runs(vec![vec![], vec![]]).is_empty());
    }
}
