//! One host's queue, stored compactly.
//!
//! URLs live back to back in a byte arena per host (the `scheme://host` prefix is
//! left out when it matches the host), and the queue holds 8-byte handles into it,
//! grouped in buckets by [`Class`] (tier, value band, depth; the frontier
//! computes it from the entry and its policy). A set of 64-bit hashes keeps
//! the queue free of duplicates. The arena is compacted once more than half of it
//! is dead space, so memory stays proportional to what is queued.

use crate::url::IdentityHasher;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::hash::BuildHasherDefault;

use super::{Entry, Kind, Origin};

/// Rank within a host: lower is served first. `(tier, band, depth)`: the first tiers
/// hold seeds (never shed), `band` is the entry's value counted down from
/// 1 in steps of 1/[`BAND_STEPS`], then shallower first.
pub(crate) type Class = (u8, u8, u32);

/// Steps of value between 0 and 1 (so 0.3 is kept exactly).
const BAND_STEPS: u8 = 200;

/// The value a band stands for.
pub(crate) fn band_value(band: u8) -> f32 {
    f32::from(BAND_STEPS - band.min(BAND_STEPS)) / f32::from(BAND_STEPS)
}

/// The band of a value in `[0, 1]`.
pub(crate) fn value_band(value: f32) -> u8 {
    let steps = f32::from(BAND_STEPS);
    BAND_STEPS - (value.clamp(0.0, 1.0) * steps).round() as u8
}

/// Longest URL (after the stripped prefix) the queue holds.
pub(crate) const MAX_URL_BYTES: usize = u16::MAX as usize;
/// Longest `lastmod` kept; a longer one cannot be a timestamp and is dropped
/// (the top bit of [`Item::lastmod_len`] is [`Entry::explore`]).
const MAX_LASTMOD_BYTES: usize = 127;
/// [`Item::lastmod_len`] bit of [`Entry::explore`].
const LEN_EXPLORE: u8 = 1 << 7;
/// Arenas smaller than this are never compacted (not worth the copy).
const COMPACT_MIN_BYTES: usize = 64 * 1024;

/// [`Item::flags`] bits of [`Entry::backlog`] and [`Entry::update`].
const FLAG_BACKLOG: u8 = 1 << 6;
const FLAG_UPDATE: u8 = 1 << 7;

/// How the stored text relates to the full URL.
const PREFIX_NONE: u8 = 0;
const PREFIX_HTTPS: u8 = 1;
const PREFIX_HTTP: u8 = 2;

/// A handle into the arena: 8 bytes per queued URL.
#[derive(Debug, Clone, Copy)]
struct Item {
    off: u32,
    url_len: u16,
    /// Bits 0-6: the length of `lastmod`; bit 7: [`Entry::explore`].
    lastmod_len: u8,
    /// Bits 0-1: prefix; bits 2-3: kind; bits 4-5: origin; bit 6:
    /// [`Entry::backlog`]; bit 7: [`Entry::update`].
    flags: u8,
}

impl Item {
    fn bytes(&self) -> usize {
        self.url_len as usize + self.lastmod_bytes()
    }
    fn lastmod_bytes(&self) -> usize {
        (self.lastmod_len & !LEN_EXPLORE) as usize
    }
    fn prefix(&self) -> u8 {
        self.flags & 0b11
    }
    fn kind(&self) -> Kind {
        match (self.flags >> 2) & 0b11 {
            1 => Kind::Feed,
            2 => Kind::Sitemap,
            _ => Kind::Page,
        }
    }
    fn origin(&self) -> Origin {
        match (self.flags >> 4) & 0b11 {
            0 => Origin::Seed,
            1 => Origin::Listed,
            2 => Origin::Relevant,
            _ => Origin::Other,
        }
    }
}

fn origin_bits(origin: Origin) -> u8 {
    match origin {
        Origin::Seed => 0,
        Origin::Listed => 1,
        Origin::Relevant => 2,
        Origin::Other => 3,
    }
}

fn kind_bits(kind: Kind) -> u8 {
    match kind {
        Kind::Page => 0,
        Kind::Feed => 1,
        Kind::Sitemap => 2,
    }
}

type HashSet64 = HashSet<u64, BuildHasherDefault<IdentityHasher>>;

/// Why [`HostQueue::push`] refused an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    Duplicate,
    TooLong,
}

/// One host's queued URLs, best class first, first in first out within a class.
#[derive(Debug, Default)]
pub(crate) struct HostQueue {
    arena: Vec<u8>,
    live_bytes: usize,
    buckets: BTreeMap<Class, VecDeque<Item>>,
    hashes: HashSet64,
    len: usize,
}

impl HostQueue {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The best class queued.
    pub(crate) fn best_class(&self) -> Option<Class> {
        self.buckets.keys().next().copied()
    }

    /// How many entries of `class` are queued.
    pub(crate) fn class_len(&self, class: Class) -> usize {
        self.buckets.get(&class).map_or(0, VecDeque::len)
    }

    /// Queue an entry in `class`. On success, says whether its class bucket was empty before.
    pub(crate) fn push(
        &mut self,
        host: &str,
        entry: &Entry,
        class: Class,
    ) -> Result<bool, Refused> {
        self.insert(host, entry, class, false)
    }

    /// Queue an entry ahead of its class (one handed out that must wait its turn again).
    pub(crate) fn push_front(
        &mut self,
        host: &str,
        entry: &Entry,
        class: Class,
    ) -> Result<bool, Refused> {
        self.insert(host, entry, class, true)
    }

    /// The classes queued, best first, with their lengths.
    pub(crate) fn class_lens(&self) -> impl Iterator<Item = (Class, usize)> + '_ {
        self.buckets.iter().map(|(c, b)| (*c, b.len()))
    }

    fn insert(
        &mut self,
        host: &str,
        entry: &Entry,
        class: Class,
        front: bool,
    ) -> Result<bool, Refused> {
        let (prefix, text) = split_prefix(host, &entry.url);
        if text.len() > MAX_URL_BYTES {
            return Err(Refused::TooLong);
        }
        let hash = hash(prefix, text);
        if self.hashes.contains(&hash) {
            return Err(Refused::Duplicate);
        }
        let lastmod = entry
            .lastmod
            .as_deref()
            .filter(|l| l.len() <= MAX_LASTMOD_BYTES)
            .unwrap_or("");
        let Ok(off) = u32::try_from(self.arena.len()) else {
            return Err(Refused::TooLong);
        };
        if off
            .checked_add((text.len() + lastmod.len()) as u32)
            .is_none()
        {
            return Err(Refused::TooLong);
        }
        self.hashes.insert(hash);
        let needed = text.len() + lastmod.len();
        if self.arena.capacity() - self.arena.len() < needed {
            // Grow by a quarter rather than double: less slack per queued URL.
            self.arena
                .reserve_exact(needed.max(self.arena.len() / 4).max(256));
        }
        self.arena.extend_from_slice(text.as_bytes());
        self.arena.extend_from_slice(lastmod.as_bytes());
        let item = Item {
            off,
            url_len: text.len() as u16,
            lastmod_len: lastmod.len() as u8 | if entry.explore { LEN_EXPLORE } else { 0 },
            flags: prefix
                | (kind_bits(entry.kind) << 2)
                | (origin_bits(entry.origin) << 4)
                | if entry.backlog { FLAG_BACKLOG } else { 0 }
                | if entry.update { FLAG_UPDATE } else { 0 },
        };
        self.live_bytes += item.bytes();
        self.len += 1;
        let bucket = self.buckets.entry(class).or_default();
        if front {
            bucket.push_front(item);
        } else {
            bucket.push_back(item);
        }
        Ok(bucket.len() == 1)
    }

    /// Remove `url` if it is queued in a class worse than `than` (a seed pushed
    /// again after it was queued as a link). Scans the host's queue: keep it for
    /// rare events. Returns the class it had and whether that bucket emptied.
    pub(crate) fn remove_worse(
        &mut self,
        host: &str,
        url: &str,
        than: Class,
    ) -> Option<(Class, bool)> {
        let (prefix, text) = split_prefix(host, url);
        let (class, pos) = self
            .buckets
            .range((std::ops::Bound::Excluded(than), std::ops::Bound::Unbounded))
            .find_map(|(class, bucket)| {
                let pos = bucket
                    .iter()
                    .position(|item| item.prefix() == prefix && self.url_text(*item) == text)?;
                Some((*class, pos))
            })?;
        let bucket = self.buckets.get_mut(&class)?;
        let item = bucket.remove(pos)?;
        let emptied = bucket.is_empty();
        if emptied {
            self.buckets.remove(&class);
        }
        self.forget(item);
        Some((class, emptied))
    }

    /// Take the best entry. Also says whether its class bucket became empty.
    pub(crate) fn pop_best(&mut self, host: &str) -> Option<(Entry, bool)> {
        let class = self.best_class()?;
        self.take(host, class)
    }

    /// Drop the newest entry of `class` (to shed load); says whether the class
    /// bucket became empty.
    pub(crate) fn discard_newest(&mut self, class: Class) -> Option<bool> {
        let bucket = self.buckets.get_mut(&class)?;
        let item = bucket.pop_back()?;
        let emptied = bucket.is_empty();
        if emptied {
            self.buckets.remove(&class);
        }
        self.forget(item);
        Some(emptied)
    }

    fn take(&mut self, host: &str, class: Class) -> Option<(Entry, bool)> {
        let bucket = self.buckets.get_mut(&class)?;
        let item = bucket.pop_front()?;
        let emptied = bucket.is_empty();
        if emptied {
            self.buckets.remove(&class);
        }
        let entry = self.entry(host, class, item);
        self.forget(item);
        Some((entry, emptied))
    }

    fn forget(&mut self, item: Item) {
        let text = self.url_text(item);
        self.hashes.remove(&hash(item.prefix(), text));
        self.live_bytes -= item.bytes();
        self.len -= 1;
        if self.len == 0 {
            self.arena = Vec::new();
            self.hashes = HashSet64::default();
        } else if self.arena.len() > COMPACT_MIN_BYTES && self.live_bytes * 2 < self.arena.len() {
            self.compact();
        }
    }

    /// Forget everything queued; returns how many entries and which classes they had.
    pub(crate) fn clear(&mut self) -> (usize, Vec<Class>) {
        let gone = (self.len, self.buckets.keys().copied().collect());
        *self = HostQueue::default();
        gone
    }

    /// The classes that have entries.
    pub(crate) fn classes(&self) -> Vec<Class> {
        self.buckets.keys().copied().collect()
    }

    /// Remove everything, best class first; the queue is left empty.
    pub(crate) fn drain_into(&mut self, host: &str, out: &mut Vec<Entry>) {
        let buckets = std::mem::take(&mut self.buckets);
        for (class, bucket) in buckets {
            for item in bucket {
                out.push(self.entry(host, class, item));
            }
        }
        *self = HostQueue::default();
    }

    /// Bytes held on the heap (arena, handles, hash set), for measurements.
    pub(crate) fn heap_bytes(&self) -> usize {
        let handles: usize = self
            .buckets
            .values()
            .map(|b| b.capacity() * std::mem::size_of::<Item>() + 64)
            .sum();
        // hashbrown: one control byte plus the key per bucket.
        let set = self.hashes.capacity() * 9;
        self.arena.capacity() + handles + set
    }

    fn url_text(&self, item: Item) -> &str {
        let start = item.off as usize;
        text(&self.arena[start..start + item.url_len as usize])
    }

    fn entry(&self, host: &str, class: Class, item: Item) -> Entry {
        let text = self.url_text(item);
        let url = match item.prefix() {
            PREFIX_HTTPS => format!("https://{host}{text}"),
            PREFIX_HTTP => format!("http://{host}{text}"),
            _ => text.to_string(),
        };
        let lastmod = (item.lastmod_bytes() > 0).then(|| {
            let start = item.off as usize + item.url_len as usize;
            text_of(&self.arena[start..start + item.lastmod_bytes()])
        });
        Entry {
            url,
            kind: item.kind(),
            origin: item.origin(),
            depth: class.2,
            lastmod,
            value: band_value(class.1),
            backlog: item.flags & FLAG_BACKLOG != 0,
            update: item.flags & FLAG_UPDATE != 0,
            explore: item.lastmod_len & LEN_EXPLORE != 0,
        }
    }

    /// Copy the live entries into a fresh arena and repoint the handles.
    fn compact(&mut self) {
        let mut arena = Vec::with_capacity(self.live_bytes + self.live_bytes / 4);
        for bucket in self.buckets.values_mut() {
            for item in bucket.iter_mut() {
                let start = item.off as usize;
                // The new arena is never larger than the old one, whose offsets fit in u32.
                item.off = arena.len() as u32;
                arena.extend_from_slice(&self.arena[start..start + item.bytes()]);
            }
        }
        self.arena = arena;
    }
}

/// Only whole strings are written to the arena, so every handle's slice is valid UTF-8.
fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

fn text_of(bytes: &[u8]) -> String {
    text(bytes).to_string()
}

fn hash(prefix: u8, text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(text.as_bytes(), u64::from(prefix))
}

/// Leave out `https://host` or `http://host` when the URL starts with it.
fn split_prefix<'a>(host: &str, url: &'a str) -> (u8, &'a str) {
    for (scheme, flag) in [("https://", PREFIX_HTTPS), ("http://", PREFIX_HTTP)] {
        if let Some(rest) = url.strip_prefix(scheme).and_then(|r| r.strip_prefix(host))
            && (rest.is_empty() || rest.starts_with(['/', '?']))
        {
            return (flag, rest);
        }
    }
    (PREFIX_NONE, url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(url: &str, origin: Origin, depth: u32) -> Entry {
        Entry {
            url: url.into(),
            kind: Kind::Page,
            origin,
            depth,
            lastmod: None,
            value: 0.3,
            backlog: false,
            update: false,
            explore: false,
        }
    }

    /// Class as the round-robin policy ranks: origin, then depth.
    fn c(entry: &Entry) -> Class {
        (
            origin_bits(entry.origin),
            value_band(entry.value),
            entry.depth,
        )
    }

    #[test]
    fn round_trips_and_orders() {
        let mut q = HostQueue::default();
        let entries = [
            e("https://a.com/x", Origin::Other, 1),
            e("http://a.com/y?q=1", Origin::Relevant, 2),
            e("https://other.com/z", Origin::Relevant, 1),
            Entry {
                url: "https://a.com".into(),
                kind: Kind::Feed,
                origin: Origin::Seed,
                depth: 0,
                lastmod: Some("2025-01-02T03:04:05Z".into()),
                value: 0.3,
                backlog: true,
                update: true,
                explore: true,
            },
            e("https://a.com.evil/x", Origin::Listed, 0),
        ];
        for entry in &entries {
            assert!(q.push("a.com", entry, c(entry)).is_ok());
        }
        assert_eq!(
            q.push("a.com", &entries[0], c(&entries[0])),
            Err(Refused::Duplicate)
        );
        let mut got = vec![];
        while let Some((entry, _)) = q.pop_best("a.com") {
            got.push(entry);
        }
        let want = [
            &entries[3],
            &entries[4],
            &entries[2],
            &entries[1],
            &entries[0],
        ];
        assert_eq!(got.iter().collect::<Vec<_>>(), want);
        assert!(q.is_empty());
        assert!(
            q.push("a.com", &entries[0], c(&entries[0])).is_ok(),
            "popped URLs may return"
        );
    }

    #[test]
    fn compaction_keeps_entries() {
        let mut q = HostQueue::default();
        let n = 20_000;
        for i in 0..n {
            let url = format!("https://h.org/article/{i:08}/some-long-slug-text");
            let entry = e(&url, Origin::Other, i % 3);
            assert!(q.push("h.org", &entry, c(&entry)).is_ok());
        }
        for _ in 0..n - 10 {
            q.pop_best("h.org");
        }
        assert!(q.arena.len() < 2 * COMPACT_MIN_BYTES, "{}", q.arena.len());
        let rest: Vec<_> = std::iter::from_fn(|| q.pop_best("h.org")).collect();
        assert_eq!(rest.len(), 10);
        assert!(
            rest.iter()
                .all(|(e, _)| e.url.starts_with("https://h.org/article/"))
        );
    }
}
