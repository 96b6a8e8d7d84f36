//! Which hosts one runner crawls when a crawl is split across `N` runners
//! (`--partition i/N`, `crawl.partition` in `config.yml`).
//!
//! A host belongs to partition `xxh3_64(host key) mod N`, where the host key
//! is the seen-set's host: lower case, without a leading `www.`, with the port
//! when the URL names one. So `www.example.com` and `example.com` always share
//! a partition, and the answer is the same on every machine and in every run
//! (xxh3 values are fixed by its specification). Every host therefore has
//! exactly one owner, and per-host politeness (robots.txt, the gap) holds
//! across runners without any coordination. Pure: no I/O.
//!
//! How a run uses it: `crawl::handover` sends every URL of another
//! partition's host away (seeds left to their owner, links and listing entries
//! dropped in `domains` scope or written to the owner's outbox in `open` scope,
//! redirects to such a host not followed; counts under `handover` in the run
//! summary). `--min-lastmod auto` starts from the latest run that covered this
//! partition's hosts, one of the same partition or of the whole crawl
//! (`store::state::RunHistory::latest_for`); after a change of `N` a partition
//! without such a run reads its listings in full once. `daily-crawl.yml` plans
//! a matrix over its `partitions` input, each leg pushing on its own, then asks
//! for one dataset build; `scraper stats` shows the latest run of each
//! partition. Tested end to end in `tests/it/automation/partition_daily.rs`
//! (four clones, one bare remote, every host fetched by its owner only). What
//! grows first with N and with sources: `benches/README.md`, "Scale".

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::url::{Url, domain};

/// Most partitions a crawl may be split into (the id layout keeps 7 bits
/// for the partition index, see `store::ids`).
pub(crate) const MAX_PARTITIONS: u32 = 128;

/// Partition `index` of `count` (0-based: `0/4`, `1/4`, `2/4`, `3/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Partition {
    index: u32,
    count: u32,
}

impl Default for Partition {
    /// `0/1`: one runner owns every host.
    fn default() -> Self {
        Partition::WHOLE
    }
}

impl Partition {
    /// The unsplit crawl.
    pub const WHOLE: Partition = Partition { index: 0, count: 1 };

    /// Partition `index` of `count`; `None` unless `index < count <= MAX_PARTITIONS`.
    pub fn new(index: u32, count: u32) -> Option<Partition> {
        ((1..=MAX_PARTITIONS).contains(&count) && index < count)
            .then_some(Partition { index, count })
    }

    pub fn index(self) -> u32 {
        self.index
    }

    pub fn count(self) -> u32 {
        self.count
    }

    /// One runner crawls everything.
    pub(crate) fn is_whole(self) -> bool {
        self.count == 1
    }

    /// The partition of `count` that owns `url`'s host.
    pub fn owner_of(self, url: &Url) -> Partition {
        Partition {
            index: (xxhash_rust::xxh3::xxh3_64(host_key(url).as_bytes()) % u64::from(self.count))
                as u32,
            count: self.count,
        }
    }

    /// Does this partition crawl `url`'s host?
    pub(crate) fn owns(self, url: &Url) -> bool {
        self.is_whole() || self.owner_of(url) == self
    }

    /// A name safe in file and folder names: `2-of-4`.
    pub fn file_name(self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }
}

/// The key a host is partitioned by: the seen-set's host (no `www.`, lower
/// case) plus `:port` when the URL names a port.
pub fn host_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or("").to_ascii_lowercase();
    let host = domain(&host);
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    }
}

/// Why `i/N` did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected a partition as `i/N` with 0 <= i < N <= {MAX_PARTITIONS} (0-based, e.g. `0/4`), got `{0}`"
)]
pub struct ParsePartitionError(String);

impl FromStr for Partition {
    type Err = ParsePartitionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParsePartitionError(s.to_string());
        let (i, n) = s.trim().split_once('/').ok_or_else(err)?;
        let i: u32 = i.trim().parse().map_err(|_| err())?;
        let n: u32 = n.trim().parse().map_err(|_| err())?;
        Partition::new(i, n).ok_or_else(err)
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Serialize for Partition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Partition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn parses_and_prints() {
        for (text, want) in [
            ("0/1", Some((0, 1))),
            ("3/4", Some((3, 4))),
            (" 1 / 2 ", Some((1, 2))),
            ("127/128", Some((127, 128))),
            ("4/4", None),
            ("0/0", None),
            ("1/129", None),
            ("-1/4", None),
            ("1", None),
            ("a/b", None),
            ("", None),
        ] {
            let got = text
                .parse::<Partition>()
                .ok()
                .map(|p| (p.index(), p.count()));
            assert_eq!(got, want, "{text:?}");
        }
        assert_eq!("2/8".parse::<Partition>().unwrap().to_string(), "2/8");
        assert_eq!("2/8".parse::<Partition>().unwrap().file_name(), "2-of-8");
        let e = "5/4".parse::<Partition>().unwrap_err().to_string();
        assert!(e.contains("`5/4`") && e.contains("i/N"), "{e}");
    }

    #[test]
    fn www_and_bare_share_an_owner_and_ports_count() {
        assert_eq!(host_key(&u("https://WWW.Example.com/a")), "example.com");
        assert_eq!(host_key(&u("http://example.com:8080/")), "example.com:8080");
        assert_eq!(host_key(&u("https://example.com:443/")), "example.com");
        for n in 1..=16 {
            let p = Partition::new(0, n).unwrap();
            assert_eq!(
                p.owner_of(&u("https://www.news.example/x")),
                p.owner_of(&u("http://news.example/y?q=1"))
            );
        }
    }

    #[test]
    fn every_host_has_exactly_one_owner_and_owners_are_spread() {
        let n = 4;
        let parts: Vec<Partition> = (0..n).map(|i| Partition::new(i, n).unwrap()).collect();
        let mut per = vec![0usize; n as usize];
        for h in 0..400 {
            let url = u(&format!("https://host{h}.example/"));
            let owners: Vec<_> = parts.iter().filter(|p| p.owns(&url)).collect();
            assert_eq!(owners.len(), 1, "host{h}");
            per[owners[0].index() as usize] += 1;
        }
        // 400 hosts over 4 partitions: each gets a fair share (binomial, sd 8.7).
        assert!(per.iter().all(|&c| (60..=140).contains(&c)), "{per:?}");
        assert!(Partition::WHOLE.owns(&u("https://anything.example/")));
    }

    #[test]
    fn the_owner_is_fixed_by_xxh3() {
        // The value is xxh3_64 of the key, whatever the machine or run:
        // pinned here so a change of hash or key is a failing test, not a
        // silent reshuffle of every host between runners.
        let url = u("https://www.example.com/");
        let h = xxhash_rust::xxh3::xxh3_64(b"example.com");
        for n in [2u32, 3, 4, 7, 128] {
            let p = Partition::new(0, n).unwrap();
            assert_eq!(u64::from(p.owner_of(&url).index()), h % u64::from(n));
        }
    }
}
