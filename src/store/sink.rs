//! The durable end of a crawl run: the shard writer, the seen-set, the WARC
//! writer, the id blocks, and the records stored but not yet durable.
//!
//! One rule lives here and nowhere else: **a URL is marked as a hit only once
//! its record is durable.** A stored record waits in the shard writer's buffer
//! ([`Sink::stage`]) with the seen hashes it will make hits; a flush
//! ([`Sink::flush`]) then runs, in this order,
//!
//! 1. the WARC file is synced (a shard line never points at a WARC record
//!    that is not on disk; a failed sync leaves the frame waiting),
//! 2. the shard frame is closed and synced (a failed write keeps the records
//!    buffered and their hashes pending for the next flush),
//! 3. the pending hashes are marked HIT in the seen-set (with the text
//!    fingerprint of each record's final URL),
//! 4. the seen-set appends its changes to `state/seen/<run-id>.bin`.
//!
//! So a crash at any point leaves the seen-set saying "hit" only of records a
//! shard holds; at worst a record is in a shard and its URL unmarked (fetched
//! again, stored again, deduplicated by the build). Until then
//! [`Sink::is_stored`] answers from the run's own list, so a page reached
//! twice in one run (a redirect, a canonical URL) is never stored twice.
//!
//! Everything else the engine tells the seen-set (misses, failures for good,
//! a day moved on) goes straight in with [`Sink::mark`], dated today.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::StoreError;
use super::ids::IdBlocks;
use super::seen::{Seen, SeenSet, flag, text_print};
use super::shard::ShardWriter;
use super::warc::{Captured, WarcError, WarcWriter};
use crate::record::{Article, Provenance};
use crate::url::{self, Url};

/// What one run writes for good, and the order it is made durable in.
pub struct Sink {
    seen: SeenSet,
    shard: ShardWriter,
    ids: IdBlocks,
    /// This run's WARC file (`crawl.archive`; `None` when off).
    warc: Option<Box<dyn Archive>>,
    /// Where the seen-set's segment goes (`state/`), and its name.
    state_dir: PathBuf,
    run_id: String,
    /// Today's day stamp: the day of every seen record this run writes.
    day: u32,
    /// Stored records not yet in a closed frame: seen hashes that become HIT after the flush.
    pending_hits: Vec<u64>,
    /// Stored records not yet in a closed frame: final URL's seen hash and text fingerprint.
    pending_prints: Vec<(u64, u32)>,
    /// Seen hashes of everything stored in this run (request, final and
    /// canonical URLs), durable or not: no page is stored twice in a run.
    stored_this_run: HashSet<u64>,
    /// The WARC members of the job being handled (`crawl.archive`), until
    /// it is stored or its turn is over.
    captured: Option<Captured>,
}

/// What the sink needs of the run's WARC file ([`WarcWriter`]; a test
/// puts in one whose sync fails).
pub trait Archive: Send {
    /// The file's name (what a record's `warc_file` says).
    fn name(&self) -> &str;
    /// Append one group of members; returns the offset of its first member.
    fn append(&mut self, parts: &[&[u8]]) -> Result<u64, WarcError>;
    /// Make everything appended so far durable.
    fn sync(&mut self) -> Result<(), WarcError>;
}

impl Archive for WarcWriter {
    fn name(&self) -> &str {
        WarcWriter::name(self)
    }

    fn append(&mut self, parts: &[&[u8]]) -> Result<u64, WarcError> {
        WarcWriter::append(self, parts)
    }

    fn sync(&mut self) -> Result<(), WarcError> {
        WarcWriter::sync(self)
    }
}

/// The URLs a stored record answers for, as seen hashes, and its text's
/// fingerprint: what the seen-set learns once the record is durable.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hits {
    /// The URL asked for.
    pub request: u64,
    /// The URL the answer came from (after redirects): carries the fingerprint.
    pub(crate) fin: u64,
    /// The page's `rel=canonical` URL.
    pub canonical: Option<u64>,
    /// [`text_print`] of the record's text.
    pub print: u32,
}

impl Hits {
    pub(crate) fn new(request: &Url, fin: &Url, canonical: Option<&Url>, text: &str) -> Hits {
        Hits {
            request: url::seen_hash(request),
            fin: url::seen_hash(fin),
            canonical: canonical.map(url::seen_hash),
            print: text_print(text),
        }
    }

    fn all(&self) -> impl Iterator<Item = u64> {
        [Some(self.fin), Some(self.request), self.canonical]
            .into_iter()
            .flatten()
    }
}

impl Sink {
    /// The sink of run `run_id`, whose seen records are dated `day`.
    pub fn new(
        seen: SeenSet,
        shard: ShardWriter,
        ids: IdBlocks,
        warc: Option<Box<dyn Archive>>,
        state_dir: &Path,
        run_id: &str,
        day: u32,
    ) -> Sink {
        Sink {
            seen,
            shard,
            ids,
            warc,
            state_dir: state_dir.to_path_buf(),
            run_id: run_id.to_string(),
            day,
            pending_hits: Vec::new(),
            pending_prints: Vec::new(),
            stored_this_run: HashSet::new(),
            captured: None,
        }
    }

    /// What the seen-set knows of a URL (its seen hash).
    pub fn seen(&self, hash: u64) -> Option<Seen> {
        self.seen.get(hash)
    }

    /// URLs the seen-set holds.
    pub(crate) fn seen_len(&self) -> usize {
        self.seen.len()
    }

    /// Record a URL as seen today with `flags` (anything but a stored hit,
    /// which only [`Sink::flush`] marks).
    pub fn mark(&mut self, hash: u64, flags: u32) {
        let day = self.day;
        self.seen.record(hash, Seen { day, flags });
    }

    /// Stored before: in this run (durable or not), or a hit or alias of an
    /// earlier one.
    pub fn is_stored(&self, hash: u64) -> bool {
        self.stored_this_run.contains(&hash)
            || self
                .seen
                .get(hash)
                .is_some_and(|s| s.flags & (flag::HIT | flag::ALIAS) != 0)
    }

    /// Count a record's URLs as stored in this run without storing it (an
    /// article asked again whose text did not change).
    pub(crate) fn claim(&mut self, hits: &Hits) {
        self.stored_this_run.extend(hits.all());
    }

    /// The next article id (from this run's own blocks, `store::ids`).
    pub fn next_id(&mut self) -> i64 {
        self.ids.next_id()
    }

    /// The id blocks this run took.
    pub(crate) fn id_blocks(&self) -> &[[i64; 2]] {
        self.ids.blocks()
    }

    /// Hold the captured exchange of the job being handled (replacing any other).
    pub fn hold(&mut self, captured: Option<Captured>) {
        self.captured = captured;
    }

    /// Drop the held exchange unarchived (a page withheld for AI use).
    pub(crate) fn drop_held(&mut self) {
        self.captured = None;
    }

    /// The held exchange of a page that is not stored: archived without a
    /// metadata record when `keep` (`crawl.archive: all`), dropped otherwise.
    pub(crate) fn archive_unstored(&mut self, keep: bool) {
        if let Some(c) = self.captured.take()
            && keep
        {
            self.archive(&c, None);
        }
    }

    /// Archive the held exchange with the metadata record of the record
    /// about to be stored; `prov` learns where it went.
    pub(crate) fn archive_held(&mut self, prov: &mut Provenance) {
        if let Some(captured) = self.captured.take() {
            self.archive(&captured, Some(prov));
        }
    }

    /// Append a captured exchange to the run's WARC file, with the metadata
    /// record of a stored record (`prov`, which learns where it went). A
    /// failed write is logged and the record is stored without its archive.
    fn archive(&mut self, captured: &Captured, prov: Option<&mut Provenance>) {
        let Some(warc) = self.warc.as_mut() else {
            return;
        };
        let meta = prov.as_deref().map(|p| super::warc::metadata(captured, p));
        let parts: Vec<&[u8]> = std::iter::once(captured.members.as_slice())
            .chain(meta.as_deref())
            .collect();
        match warc.append(&parts) {
            Ok(offset) => {
                if let Some(p) = prov {
                    p.warc_file = Some(warc.name().to_string());
                    p.warc_offset = Some(offset);
                }
            }
            Err(e) => tracing::error!(error = %e, url = %captured.target, "WARC write failed"),
        }
    }

    /// Store a record: it waits in the shard writer's buffer, its URLs count
    /// as stored in this run at once and become hits in the seen-set only
    /// once its frame is durable ([`Sink::flush`]; [`Sink::full`] says when
    /// one is due by size or age).
    pub(crate) fn stage(&mut self, article: &Article, hits: &Hits) {
        self.claim(hits);
        self.pending_prints.push((hits.fin, hits.print));
        if hits.request != hits.fin {
            self.pending_hits.push(hits.request);
        }
        self.pending_hits.extend(hits.canonical);
        self.shard.buffer(article);
    }

    /// Is the buffer large or old enough to close a frame?
    pub fn full(&self) -> bool {
        self.shard.full()
    }

    /// Is a flush due by the interval?
    pub fn due(&self) -> bool {
        self.shard.due()
    }

    /// Make the stored records durable, in the order the module doc gives:
    /// WARC sync, shard frame, hits marked, seen-set appended. Failures are
    /// logged and retried by the next flush. Returns false when the WARC
    /// sync failed (nothing else was tried).
    pub fn flush(&mut self) -> bool {
        if let Some(Err(e)) = self.warc.as_mut().map(|w| w.sync()) {
            tracing::error!(error = %e, "WARC sync failed; the shard frame waits");
            return false;
        }
        match self.shard.flush() {
            Ok(_) => self.mark_hits(),
            Err(e) => tracing::error!(error = %e, "shard flush failed"),
        }
        if let Err(e) = self.seen.flush(&self.state_dir, &self.run_id) {
            tracing::error!(error = %e, "seen-set flush failed");
        }
        true
    }

    /// The records of the frame just closed: their URLs are hits now.
    fn mark_hits(&mut self) {
        for hash in std::mem::take(&mut self.pending_hits) {
            self.mark(hash, flag::HIT);
        }
        for (hash, print) in std::mem::take(&mut self.pending_prints) {
            self.mark(hash, flag::HIT | (print << flag::TEXT_SHIFT));
        }
    }

    /// The shard's path (whether or not it was created).
    pub(crate) fn shard_path(&self) -> &Path {
        self.shard.path()
    }

    /// The end of the run, after a last [`Sink::flush`]: the shard closed
    /// (a last frame, synced), then the seen-set's last changes appended.
    /// Returns the shard's path, or `None` when nothing was stored.
    pub fn close(mut self) -> Result<Option<PathBuf>, StoreError> {
        let shard = self.shard.finish()?;
        self.seen.flush(&self.state_dir, &self.run_id)?;
        Ok(shard)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;

    const RUN: &str = "20261201T060000Z-abcd";

    fn sink(dir: &Path) -> Sink {
        sink_with(dir, None)
    }

    fn sink_with(dir: &Path, warc: Option<Box<dyn Archive>>) -> Sink {
        let state = dir.join("state");
        std::fs::create_dir_all(&state).unwrap();
        let seen = SeenSet::load(&state).unwrap();
        let shard =
            ShardWriter::create(&dir.join("s.jsonl.zst"), Duration::from_secs(3600)).unwrap();
        let started = "2026-12-01T06:00:00Z".parse().unwrap();
        let ids = IdBlocks::new(started, RUN, crate::partition::Partition::default()).unwrap();
        Sink::new(seen, shard, ids, warc, &state, RUN, 20_000)
    }

    /// A WARC file in memory whose sync fails while `fail` is set, and
    /// which notes, at each sync, whether the shard file existed yet.
    struct FakeWarc {
        fail: Arc<AtomicBool>,
        shard: PathBuf,
        synced_with_shard: Arc<Mutex<Vec<bool>>>,
        len: u64,
    }

    impl Archive for FakeWarc {
        fn name(&self) -> &str {
            "fake.warc.gz"
        }

        fn append(&mut self, parts: &[&[u8]]) -> Result<u64, WarcError> {
            let at = self.len;
            self.len += parts.iter().map(|p| p.len() as u64).sum::<u64>();
            Ok(at)
        }

        fn sync(&mut self) -> Result<(), WarcError> {
            self.synced_with_shard
                .lock()
                .unwrap()
                .push(self.shard.exists());
            if self.fail.load(Ordering::SeqCst) {
                return Err(WarcError::Write {
                    path: "fake.warc.gz".into(),
                    source: std::io::Error::other("disk gone"),
                });
            }
            Ok(())
        }
    }

    fn article(id: i64, url: &str) -> Article {
        Article {
            id,
            url: url.to_string(),
            title: "A title".into(),
            text: "Some text".into(),
            ..Article::default()
        }
    }

    fn hits() -> Hits {
        let req = url::parse("https://a.test/x").unwrap();
        let fin = url::parse("https://a.test/y").unwrap();
        let can = url::parse("https://a.test/z").unwrap();
        Hits::new(&req, &fin, Some(&can), "Some text")
    }

    fn is_hit(s: &Sink, hash: u64) -> bool {
        s.seen(hash).is_some_and(|x| x.flags & flag::HIT != 0)
    }

    /// On disk: what a fresh load of the seen-set says of `hash`.
    fn hit_on_disk(dir: &Path, hash: u64) -> bool {
        let seen = SeenSet::load(&dir.join("state")).unwrap();
        seen.get(hash).is_some_and(|x| x.flags & flag::HIT != 0)
    }

    #[test]
    fn a_stored_record_is_a_hit_only_after_its_frame_is_durable() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        let h = hits();
        let id = s.next_id();
        s.stage(&article(id, "https://a.test/y"), &h);
        // Stored in this run at once, for all three URLs...
        assert!(h.all().all(|x| s.is_stored(x)));
        // ...but no hit in the seen-set before the frame.
        assert!(h.all().all(|x| !is_hit(&s, x)), "hit before the frame");
        // A frame that cannot be written (the file is in the way) marks nothing.
        std::fs::write(s.shard_path(), b"").unwrap();
        assert!(s.flush());
        assert!(h.all().all(|x| !is_hit(&s, x)), "hit after a failed frame");
        assert!(!hit_on_disk(dir.path(), h.fin));
        // Once the frame is written, all three are hits, on disk too (the
        // seen-set is appended after the marking), the final URL with the
        // text's fingerprint.
        std::fs::remove_file(s.shard_path()).unwrap();
        assert!(s.flush());
        assert!(h.all().all(|x| is_hit(&s, x)), "no hit after the frame");
        assert!(
            h.all().all(|x| hit_on_disk(dir.path(), x)),
            "hit not on disk"
        );
        let fin = s.seen(h.fin).unwrap();
        assert_eq!(fin.text_print(), h.print & 0xffff);
        assert_eq!(fin.day, 20_000);
        let path = s.close().unwrap().expect("a shard was written");
        let mut lines = 0;
        crate::store::shard::read_lines(&path, |_| lines += 1).unwrap();
        assert_eq!(lines, 1, "the record is in the shard once");
    }

    #[test]
    fn the_request_url_is_not_a_second_pending_hit_when_it_is_the_final_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        let u = url::parse("https://a.test/x").unwrap();
        let h = Hits::new(&u, &u, None, "text");
        let id = s.next_id();
        s.stage(&article(id, u.as_str()), &h);
        assert_eq!(s.pending_hits, Vec::<u64>::new());
        assert_eq!(s.pending_prints, vec![(h.fin, h.print)]);
        assert!(s.flush());
        assert!(is_hit(&s, h.fin));
        assert!(s.pending_prints.is_empty());
    }

    #[test]
    fn claimed_urls_count_as_stored_without_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        let h = hits();
        assert!(!s.is_stored(h.request));
        s.claim(&h);
        assert!(h.all().all(|x| s.is_stored(x)));
        assert!(s.flush());
        assert!(!is_hit(&s, h.fin), "a claim is no hit");
        assert_eq!(s.close().unwrap(), None, "nothing stored, no shard");
    }

    #[test]
    fn the_archive_is_synced_before_the_frame_and_a_failed_sync_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let fail = Arc::new(AtomicBool::new(true));
        let synced = Arc::new(Mutex::new(Vec::new()));
        let warc = FakeWarc {
            fail: fail.clone(),
            shard: dir.path().join("s.jsonl.zst"),
            synced_with_shard: synced.clone(),
            len: 0,
        };
        let mut s = sink_with(dir.path(), Some(Box::new(warc)));
        let captured = Captured {
            members: b"response and request".to_vec(),
            response_id: "<urn:uuid:1>".into(),
            target: "https://a.test/y".into(),
            date: "2026-12-01T06:00:00Z".into(),
            hold: None,
        };
        s.hold(Some(captured));
        let mut prov = Provenance {
            id: s.next_id(),
            ..Provenance::default()
        };
        s.archive_held(&mut prov);
        assert_eq!(prov.warc_file.as_deref(), Some("fake.warc.gz"));
        assert_eq!(prov.warc_offset, Some(0));
        let h = hits();
        s.stage(&article(prov.id, "https://a.test/y"), &h);
        // The archive cannot be synced: no frame, no hit.
        assert!(!s.flush(), "a failed sync is reported");
        assert!(
            !s.shard_path().exists(),
            "a frame was written before its archive"
        );
        assert!(h.all().all(|x| !is_hit(&s, x)));
        // Once it syncs, the frame follows, then the hits.
        fail.store(false, Ordering::SeqCst);
        assert!(s.flush());
        assert!(s.shard_path().exists());
        assert!(h.all().all(|x| is_hit(&s, x)));
        assert_eq!(
            *synced.lock().unwrap(),
            vec![false, false],
            "synced after the frame"
        );
    }
}
