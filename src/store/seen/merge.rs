//! Turning the records of all seen files into one list sorted by hash with
//! one record per hash, and the index that makes lookups in it cheap.
//!
//! Loading is dominated by this step, so it does only the work the files make
//! necessary: the compacted files come first and are already sorted, so only
//! the records after the longest sorted prefix (the per-run segments) are
//! sorted, then merged into the prefix in place from the back. A big unsorted
//! input (a legacy `seen.bin`) is sorted by a radix pass on the leading bits.

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

/// Sort by hash (a radix pass on the top 16 bits for big lists, then small
/// sorts) and fold equal hashes with [`super::Seen::merge`].
fn sort_fold(v: &mut Vec<Rec>) {
    const BITS: u32 = 16;
    if v.len() < 1 << 20 {
        v.sort_unstable_by_key(|r| r.hash);
    } else {
        let bucket = |h: u64| (h >> (64 - BITS)) as usize;
        let mut starts = vec![0usize; (1 << BITS) + 1];
        for r in v.iter() {
            starts[bucket(r.hash) + 1] += 1;
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        let mut out = vec![Rec::default(); v.len()];
        let mut next = starts.clone();
        for r in v.iter() {
            let slot = &mut next[bucket(r.hash)];
            out[*slot] = *r;
            *slot += 1;
        }
        for w in starts.windows(2) {
            out[w[0]..w[1]].sort_unstable_by_key(|r| r.hash);
        }
        *v = out;
    }
    fold_adjacent(v);
}

/// Merge two sorted, unique lists into `a`, in place from the back.
fn merge_into(a: &mut Vec<Rec>, b: &[Rec]) {
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

/// Records in any order, with duplicates, to a sorted list with one record per hash.
pub(crate) fn normalize(mut v: Vec<Rec>) -> Vec<Rec> {
    let prefix = v
        .windows(2)
        .position(|w| w[0].hash >= w[1].hash)
        .map_or(v.len(), |i| i + 1);
    if prefix == v.len() {
        return v;
    }
    if prefix < v.len() / 2 {
        sort_fold(&mut v);
    } else {
        let mut rest = v.split_off(prefix);
        sort_fold(&mut rest);
        merge_into(&mut v, &rest);
    }
    if v.capacity() - v.len() > v.len() / 16 {
        v.shrink_to_fit();
    }
    v
}

/// Merge record lists: their concatenation, normalised.
#[cfg(test)]
fn merge_runs(runs: Vec<Vec<Rec>>) -> Vec<Rec> {
    normalize(runs.concat())
}

/// Where each range of leading hash bits starts in a sorted list: about one
/// range per 8 records, so a lookup searches a handful of neighbours instead
/// of the whole list (two cache misses instead of twenty-odd).
#[derive(Debug, Default)]
pub(crate) struct Index {
    bits: u32,
    /// `starts[k]..starts[k + 1]` holds the hashes whose top `bits` are `k`.
    starts: Vec<u32>,
}

impl Index {
    pub(crate) fn build(sorted: &[Rec]) -> Index {
        let bits = (sorted.len() / 8).max(1).ilog2().min(28);
        let index = Index {
            bits,
            starts: Vec::new(),
        };
        let mut starts = vec![0u32; (1usize << bits) + 1];
        let mut i = 0usize;
        for (k, s) in starts.iter_mut().enumerate() {
            while i < sorted.len() && index.bucket(sorted[i].hash) < k {
                i += 1;
            }
            // Positions fit: a seen-set of 4 billion URLs would need 64 GB.
            *s = u32::try_from(i).unwrap_or(u32::MAX);
        }
        Index { starts, ..index }
    }

    fn bucket(&self, hash: u64) -> usize {
        hash.checked_shr(64 - self.bits).unwrap_or(0) as usize
    }

    /// The range of the sorted list that may hold `hash`.
    pub(crate) fn range(&self, hash: u64) -> (usize, usize) {
        let k = self.bucket(hash);
        match (self.starts.get(k), self.starts.get(k + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::super::Seen;
    use super::*;
    use std::collections::BTreeMap;

    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut rand = crate::xorshift::XorShift64::new(seed);
        move || rand.next_u64()
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

    #[test]
    fn radix_sort_matches_and_index_finds_every_record() {
        let mut next = xorshift(99);
        let runs = vec![random_run(&mut next, (1 << 20) + 5, u64::MAX)];
        let got = merge_runs(runs.clone());
        assert_eq!(got, fold(&runs));
        let index = Index::build(&got);
        for r in got.iter().step_by(97) {
            let (a, b) = index.range(r.hash);
            assert!(got[a..b].iter().any(|x| x.hash == r.hash));
        }
        let (a, b) = Index::default().range(5);
        assert_eq!((a, b), (0, 0));
        let one = vec![Rec::default()];
        assert_eq!(Index::build(&one).range(0), (0, 1));
    }
}
