//! Which records survive. The rule, in this order:
//!
//! 0. A record stored as a new version of an article (`updated`: its
//!    publisher changed it) replaces the earlier records of its URL: of a
//!    URL with such versions, only the latest version takes part.
//! 0. One record per id and URL: the newest extraction ([`newest_extraction`]).
//!    `scraper reextract` writes a record again under its id and URL; the one
//!    of the highest extractor code version wins, then the one written last
//!    (shard order, then position). The others are `superseded`. (Two records
//!    of one id with different URLs are an id collision, left to rule 2.) A winner that
//!    reextract withdrew (no longer an article, or no longer relevant) is
//!    removed and counted, and the older versions of it go with it.
//! 1. Records the relevance rule rejects are removed (unless the filter is off);
//!    they take no part in what follows.
//! 2. The rest are taken in id order (ties: shard name, then position in the
//!    shard). A record is a duplicate when its URL key or canonical-URL key
//!    was claimed by an earlier record, or its normalised text was seen
//!    before; otherwise, a record whose id was already taken is removed.
//! 3. Every record taken, kept or not, claims its keys (so an AMP copy that
//!    lost to the original still catches a third variant of it).
//! 4. Among the records left, still in id order, a record whose text is a
//!    near duplicate of a lower id's that was kept is removed (MinHash over
//!    word 5-grams, see [`super::near`] and [`super::minhash`]): syndicated
//!    copies with edits, AMP or print variants without a canonical link,
//!    updated re-posts.
//!
//! Hence the lowest id wins, and because new shards only add higher ids, a
//! later build never drops a record an earlier build published for a record
//! added since (unless the relevance rule now rejects it). Ids are the
//! crawler's own, never renumbered.

use std::cmp::Reverse;
use std::hash::BuildHasherDefault;
use std::path::Path;

use super::claims::{Bits, Claims};
use super::near::{self, Space};
use super::runs::{Sorter, Table, TableWriter};
use super::scan::{Meta, Withdrawn};
use super::spill::Sigs;
use crate::url::IdentityHasher;

/// How many records each rule removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    /// Older versions of an article replaced by a newer one (step 0).
    pub updated: u64,
    pub relevance: u64,
    pub same_url: u64,
    pub same_text: u64,
    pub same_id: u64,
    /// Near-duplicate texts (estimated Jaccard similarity of word 5-grams at
    /// or above [`super::minhash::THRESHOLD`]).
    pub near_text: u64,
    /// Older extractions of an id that `scraper reextract` wrote again.
    pub superseded: u64,
    /// Ids whose newest extraction is no longer an article...
    pub withdrawn_not_article: u64,
    /// ... or no longer relevant (by the rule `scraper reextract` applied)...
    pub withdrawn_not_relevant: u64,
    /// ... or not free to read, under `crawl.paywalled_text: skip`.
    pub withdrawn_paywalled: u64,
    /// New rows that are near duplicates of a row an earlier release
    /// published (the index kept beside the dataset, [`super::index`]).
    pub near_earlier_release: u64,
    /// The ids withdrawn (all three reasons), sorted: for the day's changes.
    pub withdrawn_ids: Vec<i64>,
}

/// Latest version (id, frame, line) per URL key with a record marked `updated`.
type Latest = std::collections::HashMap<u64, (i64, u32, u32), BuildHasherDefault<IdentityHasher>>;

/// The order that puts an id's newest extraction of each URL first: id, URL
/// key, then code version, shard order and position, descending.
fn newest_first(m: &Meta) -> (i64, u64, Reverse<(u16, u32, u32)>) {
    (m.id, m.url_key, Reverse((m.version, m.frame, m.line)))
}

/// Pick the survivors among the records `feed` passes on (in any order) and
/// return them in output order, on disk. `sigs` holds the signatures
/// `Meta::sig` points at. Every table and sort goes under `space.dir`, each
/// sort holding at most `space.budget` bytes ([`super::runs`]).
pub fn survivors<S: Sigs + ?Sized>(
    feed: impl FnOnce(&mut dyn FnMut(Meta) -> std::io::Result<()>) -> std::io::Result<()>,
    sigs: &S,
    relevance_filter: bool,
    space: Space<'_>,
) -> std::io::Result<(Table<Meta>, Removed)> {
    let mut removed = Removed::default();
    let (newest, latest) = newest_extraction(feed, space, &mut removed)?;
    let ordered = in_output_order(&newest, &latest, relevance_filter, space.dir, &mut removed)?;
    drop((newest, latest));
    let (url_seen, text_seen) = claimed_before(&ordered, space)?;
    let exact = exact_survivors(&ordered, &url_seen, &text_seen, space.dir, &mut removed)?;
    drop(ordered);
    let order = exact.reader().map(|m| m.map(|m| m.sig));
    let near = near::near_duplicates(order, exact.len() as usize, sigs, space)?;
    let mut out = TableWriter::new(space.dir)?;
    for (k, m) in exact.reader().enumerate() {
        let m = m?;
        if near.get(k) {
            removed.near_text += 1;
        } else {
            out.push(&m)?;
        }
    }
    Ok((out.finish()?, removed))
}

/// Step 0: keep per id and URL only its newest extraction (highest extractor code
/// version, then last written), and drop ids whose newest extraction was
/// withdrawn. Runs before everything else, so an old version never stands in
/// for a newer one that another rule removes. Returns what is left in
/// [`newest_first`] order, and the latest version of each URL with `updated` records.
fn newest_extraction(
    feed: impl FnOnce(&mut dyn FnMut(Meta) -> std::io::Result<()>) -> std::io::Result<()>,
    space: Space<'_>,
    removed: &mut Removed,
) -> std::io::Result<(Table<Meta>, Latest)> {
    let mut sorter = Sorter::new(space.dir, space.budget, newest_first);
    feed(&mut |m| sorter.push(m))?;
    let mut sorted = sorter.finish()?;
    let mut out = TableWriter::new(space.dir)?;
    let mut latest = Latest::default();
    let mut last = None;
    while let Some(m) = sorted.next()? {
        if last == Some((m.id, m.url_key)) {
            removed.superseded += 1;
            continue;
        }
        last = Some((m.id, m.url_key));
        if m.withdrawn != 0 {
            removed.withdrawn_ids.push(m.id);
        }
        match m.withdrawn {
            0 => {}
            Withdrawn::NOT_RELEVANT => removed.withdrawn_not_relevant += 1,
            Withdrawn::PAYWALLED => removed.withdrawn_paywalled += 1,
            _ => removed.withdrawn_not_article += 1,
        }
        if m.withdrawn != 0 {
            continue;
        }
        if m.updated {
            let at = (m.id, m.frame, m.line);
            let slot = latest.entry(m.url_key).or_insert(at);
            *slot = (*slot).max(at);
        }
        out.push(&m)?;
    }
    Ok((out.finish()?, latest))
}

/// Step 0 (a URL's records older than its latest version go), step 1
/// (relevance), and output order: id, then shard order and position. The
/// records of an id are together in `newest`, so only they are reordered.
fn in_output_order(
    newest: &Table<Meta>,
    latest: &Latest,
    relevance_filter: bool,
    dir: &Path,
    removed: &mut Removed,
) -> std::io::Result<Table<Meta>> {
    let mut out = TableWriter::new(dir)?;
    let mut group: Vec<Meta> = Vec::new();
    let flush = |group: &mut Vec<Meta>, out: &mut TableWriter<Meta>| {
        // Frame indices follow shard order then file order.
        group.sort_unstable_by_key(|m| (m.frame, m.line));
        group.drain(..).try_for_each(|m| out.push(&m))
    };
    for m in newest.reader() {
        let m = m?;
        let at = (m.id, m.frame, m.line);
        if latest.get(&m.url_key).is_some_and(|&l| at < l) {
            removed.updated += 1;
            continue;
        }
        if relevance_filter && !m.relevant {
            removed.relevance += 1;
            continue;
        }
        if group.first().is_some_and(|g| g.id != m.id) {
            flush(&mut group, &mut out)?;
        }
        group.push(m);
    }
    flush(&mut group, &mut out)?;
    out.finish()
}

/// Rules 2 and 3 for `metas` in output order: the positions whose URL or
/// canonical-URL key, and those whose text key, a lower position claimed
/// (every record claims its keys, kept or not).
fn claimed_before(metas: &Table<Meta>, space: Space<'_>) -> std::io::Result<(Bits, Bits)> {
    let n = metas.len() as usize;
    let mut urls = Claims::new(space.dir, space.budget);
    for (k, m) in metas.reader().enumerate() {
        let m = m?;
        urls.push(u128::from(m.url_key), k as u32)?;
        if let Some(c) = m.canonical_key {
            urls.push(u128::from(c.get()), k as u32)?;
        }
    }
    let url_seen = urls.later(n)?;
    let mut texts = Claims::new(space.dir, space.budget);
    for (k, m) in metas.reader().enumerate() {
        let m = m?;
        if m.text_key != 0 {
            texts.push(m.text_key, k as u32)?;
        }
    }
    Ok((url_seen, texts.later(n)?))
}

/// Rule 2: the records of `metas` (output order) that claimed no earlier
/// key, one per id.
fn exact_survivors(
    metas: &Table<Meta>,
    url_seen: &Bits,
    text_seen: &Bits,
    dir: &Path,
    removed: &mut Removed,
) -> std::io::Result<Table<Meta>> {
    let mut out = TableWriter::new(dir)?;
    let mut last_id = None;
    for (k, m) in metas.reader().enumerate() {
        let m = m?;
        if url_seen.get(k) {
            removed.same_url += 1;
        } else if text_seen.get(k) {
            removed.same_text += 1;
        } else if last_id == Some(m.id) {
            removed.same_id += 1;
        } else {
            last_id = Some(m.id);
            out.push(&m)?;
        }
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::minhash::Signature;

    const NO_SIGS: &[Signature] = &[];

    /// `survivors` of `metas` with sorts that never spill, and with sorts
    /// that spill every 1024 records: the same answer.
    fn survivors(
        metas: Vec<Meta>,
        sigs: &[Signature],
        relevance_filter: bool,
    ) -> std::io::Result<(Vec<Meta>, Removed)> {
        let dir = tempfile::tempdir()?;
        let mut answers = Vec::new();
        for budget in [usize::MAX / 2, 1] {
            let space = Space {
                dir: dir.path(),
                budget,
                jobs: 2,
            };
            let feed = |f: &mut dyn FnMut(Meta) -> std::io::Result<()>| {
                metas.iter().try_for_each(|&m| f(m))
            };
            let (table, removed) = super::survivors(feed, sigs, relevance_filter, space)?;
            let rows: Vec<Meta> = table.reader().collect::<std::io::Result<_>>()?;
            answers.push((rows, removed));
        }
        let spilled = answers.pop().unwrap();
        let kept = answers.pop().unwrap();
        assert_eq!(format!("{kept:?}"), format!("{spilled:?}"));
        Ok(kept)
    }

    fn meta(id: i64, frame: u32, url: u64, canon: Option<u64>, text: u128) -> Meta {
        Meta {
            id,
            frame,
            line: 0,
            url_key: url,
            canonical_key: canon.and_then(std::num::NonZeroU64::new),
            text_key: text,
            relevant: id % 2 == 0,
            score: crate::dataset::scan::NO_SCORE,
            sig: near::NONE,
            updated: false,
            version: 0,
            withdrawn: 0,
        }
    }

    #[test]
    fn the_latest_version_of_an_updated_article_wins() {
        let mut v2 = meta(30, 2, 1, None, 300);
        v2.updated = true;
        let mut v3 = meta(50, 3, 1, None, 500);
        v3.updated = true;
        let metas = vec![
            meta(10, 0, 1, None, 100), // first stored
            v2,
            meta(20, 1, 2, None, 200), // another article
            v3,                        // the latest version of 10
            meta(60, 4, 1, None, 600), // a later plain copy of the URL
        ];
        let (kept, removed) = survivors(metas, NO_SIGS, false).unwrap();
        let ids: Vec<i64> = kept.iter().map(|m| m.id).collect();
        assert_eq!(ids, vec![20, 50]);
        assert_eq!((removed.updated, removed.same_url), (2, 1));
    }

    #[test]
    fn the_newest_extraction_of_an_id_stands_for_it() {
        let v = |id, frame, version, withdrawn, text| Meta {
            version,
            withdrawn,
            ..meta(id, frame, id as u64, None, text)
        };
        let metas = vec![
            v(10, 0, 1, 0, 100), // crawled
            v(10, 5, 2, 0, 101), // re-extracted by a newer extractor: wins
            v(10, 3, 2, 0, 102), // an earlier re-extraction by the same one
            v(20, 0, 2, 0, 200),
            v(20, 4, 1, 0, 201), // an older extractor run later: loses
            v(30, 0, 1, 0, 300),
            v(30, 6, 1, Withdrawn::NOT_ARTICLE, 301),
            v(40, 0, 1, 0, 400),
            v(40, 6, 1, Withdrawn::NOT_RELEVANT, 401),
            v(50, 0, 1, 0, 500),
            v(50, 6, 1, Withdrawn::PAYWALLED, 501),
        ];
        let (kept, removed) = survivors(metas, NO_SIGS, false).unwrap();
        let got: Vec<(i64, u128)> = kept.iter().map(|m| (m.id, m.text_key)).collect();
        assert_eq!(got, vec![(10, 101), (20, 200)]);
        assert_eq!(
            (
                removed.superseded,
                removed.withdrawn_not_article,
                removed.withdrawn_not_relevant,
                removed.withdrawn_paywalled,
                removed.same_id
            ),
            (6, 1, 1, 1, 0)
        );
    }

    #[test]
    fn lowest_id_wins_and_keys_chain() {
        let metas = vec![
            meta(40, 0, 1, None, 100),    // later copy of 10's URL
            meta(10, 1, 1, None, 101),    // the original
            meta(20, 1, 2, Some(1), 102), // AMP variant pointing at 10
            meta(30, 2, 2, None, 103),    // same URL as the AMP variant
            meta(50, 2, 5, None, 101),    // syndicated copy of 10's text
            meta(60, 3, 6, None, 106),
            meta(60, 4, 7, None, 107), // a second record claiming id 60
        ];
        let (kept, removed) = survivors(metas, NO_SIGS, false).unwrap();
        let ids: Vec<(i64, u32)> = kept.iter().map(|m| (m.id, m.frame)).collect();
        assert_eq!(ids, vec![(10, 1), (60, 3)]);
        assert_eq!(
            removed,
            Removed {
                updated: 0,
                relevance: 0,
                same_url: 3,
                same_text: 1,
                same_id: 1,
                near_text: 0,
                ..Removed::default()
            }
        );
    }

    #[test]
    fn relevance_runs_first() {
        // 11 is rejected by relevance, so its later copy 12 survives.
        let metas = vec![meta(11, 0, 1, None, 1), meta(12, 0, 1, None, 1)];
        let (kept, removed) = survivors(metas.clone(), NO_SIGS, true).unwrap();
        assert_eq!(kept.iter().map(|m| m.id).collect::<Vec<_>>(), vec![12]);
        assert_eq!(removed.relevance, 1);
        let (kept, _) = survivors(metas, NO_SIGS, false).unwrap();
        assert_eq!(kept.iter().map(|m| m.id).collect::<Vec<_>>(), vec![11]);
    }
}
