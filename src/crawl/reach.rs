//! Outages and per-source watermarks: which hosts this run could read, whether
//! the run as a whole was an outage, and the `--min-lastmod auto` cut-off of
//! each host. No I/O: the engine reports answers and failures here and
//! `finish` asks for the verdicts.
//!
//! # Rules
//! * A host is **reached** when it gave a usable HTTP answer: robots.txt with
//!   a status below 500 (not 429), or any answer below 500 to a page, feed or
//!   sitemap.
//! * A host is **troubled** when today's reading of it as a source failed: its
//!   robots.txt was unreachable (network failure, 5xx, 429), it was rested
//!   (repeated failures, a Retry-After too long), or a seed, feed or sitemap
//!   failed for a transient reason (network, 5xx, 429).
//! * The run is an **outage** when no host was reached and at least one
//!   request failed for a network reason or an unreachable robots.txt: the
//!   network, DNS, a proxy or every site is down. Such a run saves no state
//!   (see `crawl::finish`) and the binary exits with 69 (`EX_UNAVAILABLE`).
//! * Watermarks are per host (`host_watermarks` in `last_run.json`): a host
//!   moves to this run's start only when it was reached, was not troubled and
//!   has no seed, feed or sitemap left unread in the queue. Every other host
//!   keeps the value it had, so `auto` means "since this host was last read
//!   successfully". A host with no entry falls back to the run-wide
//!   `last_success_started_at` (files written before per-host watermarks).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Utc};

use crate::record::{Answer, FailureClass};
use crate::url::Url;

/// Why today's reading of a host as a source failed (written, as its
/// `Display`, into the `source_down` event and the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The host was rested (repeated failures, a Retry-After too long).
    Rested,
    /// A seed, feed or sitemap failed under this class (a network
    /// failure, a bot challenge): `timeout on <url>`.
    Failed { class: FailureClass, url: Url },
    /// A seed, feed or sitemap answered a transient status (429, 5xx): `503 on <url>`.
    Status { code: u16, url: Url },
    /// robots.txt could not be read (why, as `RobotsOutcome::DisallowAll` says).
    Robots(String),
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Rested => f.write_str("rested"),
            Cause::Failed { class, url } => write!(f, "{class} on {url}"),
            Cause::Status { code, url } => write!(f, "{code} on {url}"),
            Cause::Robots(why) => write!(f, "robots.txt: {why}"),
        }
    }
}

/// Which hosts this run reached, and which it could not read as sources.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reach {
    reached: BTreeSet<String>,
    /// Host -> the first cause.
    troubled: BTreeMap<String, Cause>,
    /// Requests that failed for a network reason (or an unreachable
    /// robots.txt), by the name of their class (`dns`, `robots 503`).
    failures: BTreeMap<String, u64>,
    /// Hosts with a seed, feed or sitemap fetched or tried.
    sources: BTreeSet<String>,
}

impl Reach {
    /// A seed, feed or sitemap of `host` was fetched or tried: the host's
    /// watermark is decided by this run.
    pub(crate) fn source(&mut self, host: &str) {
        self.sources.insert(host.to_string());
    }

    /// Hosts read (or tried) as sources in this run.
    pub(crate) fn sources(&self) -> impl Iterator<Item = &str> {
        self.sources.iter().map(String::as_str)
    }

    /// A usable robots.txt answer, or any HTTP answer to a request.
    pub(crate) fn answered(&mut self, host: &str, status: u16) {
        if status < 500 && status != 429 {
            self.reached.insert(host.to_string());
        }
    }

    /// A finished request of `host`: `status`, the HTTP status when one
    /// came back; `answer`, how it went (a network failure counts towards
    /// an outage).
    pub(crate) fn record(&mut self, host: &str, status: Option<u16>, answer: Answer) {
        if let Some(status) = status {
            self.answered(host, status);
        }
        if let Answer::Failed(class) = answer
            && class.is_network()
        {
            self.failed(class.as_str());
        }
    }

    /// `host`'s robots.txt could not be read (`why`; `error`: the request's
    /// failure, if it failed): a failure, and the host is troubled.
    pub(crate) fn robots_down(&mut self, host: &str, why: &str, error: Option<FailureClass>) {
        match error {
            Some(class) => self.failed(class.as_str()),
            None => self.failed(&format!("robots {why}")),
        }
        self.trouble(host, Cause::Robots(why.to_string()));
    }

    fn failed(&mut self, name: &str) {
        *self.failures.entry(name.to_string()).or_default() += 1;
    }

    /// Today's reading of `host` as a source failed (`cause` says how).
    pub(crate) fn trouble(&mut self, host: &str, cause: Cause) {
        self.troubled.entry(host.to_string()).or_insert(cause);
    }

    pub(crate) fn is_reached(&self, host: &str) -> bool {
        self.reached.contains(host)
    }

    pub(crate) fn is_troubled(&self, host: &str) -> bool {
        self.troubled.contains_key(host)
    }

    /// The troubled hosts and why.
    pub(crate) fn troubled(&self) -> &BTreeMap<String, Cause> {
        &self.troubled
    }

    /// `Some(one-line cause)` when no host was reached and something failed
    /// for a network reason: the run is an outage.
    pub(crate) fn outage(&self) -> Option<String> {
        if !self.reached.is_empty() || self.failures.is_empty() {
            return None;
        }
        let classes: Vec<String> = self
            .failures
            .iter()
            .map(|(class, n)| format!("{class} {n}"))
            .collect();
        let hosts = self.troubled.len();
        Some(format!(
            "no host could be reached ({hosts} host{} tried; failures: {})",
            if hosts == 1 { "" } else { "s" },
            classes.join(", ")
        ))
    }
}

/// The `--min-lastmod` cut-off, per host and per listing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cutoff {
    /// The cut-off of a host without its own watermark (a fixed date, the
    /// run-wide watermark minus the overlap, or none).
    pub default: Option<DateTime<Utc>>,
    /// `auto`: each host's own cut-off (its watermark minus the overlap;
    /// `None`: never read successfully, the floor then).
    pub hosts: BTreeMap<String, Option<DateTime<Utc>>>,
    /// `auto`: no cut-off ever falls below this (`crawl.min_lastmod` in the
    /// file); it is also the cut-off of a listing never read in full.
    pub floor: Option<DateTime<Utc>>,
    /// `auto`: the overlap subtracted from a listing's last full read to
    /// give its cut-off. `None`: a fixed cut-off for everything.
    pub overlap: Option<chrono::Duration>,
}

impl Cutoff {
    /// One cut-off for every host (a date given on the command line, or none).
    pub fn fixed(at: Option<DateTime<Utc>>) -> Cutoff {
        Cutoff {
            default: at,
            hosts: BTreeMap::new(),
            floor: at,
            overlap: None,
        }
    }

    /// `auto`: per-host watermarks, falling back to the run-wide one, each
    /// moved back by `overlap`, none below `floor`.
    pub fn auto(
        global: Option<DateTime<Utc>>,
        hosts: &BTreeMap<String, Option<DateTime<Utc>>>,
        overlap: chrono::Duration,
        floor: Option<DateTime<Utc>>,
    ) -> Cutoff {
        Cutoff {
            default: global.map(|t| t - overlap),
            hosts: hosts
                .iter()
                .map(|(h, t)| (h.clone(), t.map(|t| t - overlap)))
                .collect(),
            floor,
            overlap: Some(overlap),
        }
    }

    /// The cut-off for URLs linked from `host`'s pages: its own watermark,
    /// or the run-wide one, never below the floor.
    pub(crate) fn for_host(&self, host: &str) -> Option<DateTime<Utc>> {
        self.watermark(host).max(self.floor)
    }

    /// The host's own watermark minus the overlap, or the run-wide one
    /// (`None`: never read successfully), the floor aside.
    pub fn watermark(&self, host: &str) -> Option<DateTime<Utc>> {
        match self.hosts.get(host) {
            Some(own) => *own,
            None => self.default,
        }
    }

    /// The cut-off for the entries of a listing last read in full at
    /// `read` (`None`: never): under `auto` that read minus the overlap, or
    /// the floor for a listing never read in full (an archive the first run
    /// could not finish is read from the configured date); otherwise the
    /// fixed cut-off.
    pub(crate) fn for_listing(&self, read: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        match self.overlap {
            None => self.default,
            Some(overlap) => read.map(|r| r - overlap).max(self.floor),
        }
    }

    /// The latest cut-off of any host, for the `run_start` event and logs.
    pub fn latest(&self) -> Option<DateTime<Utc>> {
        self.hosts
            .values()
            .flatten()
            .copied()
            .chain(self.default)
            .max()
    }
}

/// The per-host watermarks after this run. `previous` is the last run's
/// map, `previous_global` its run-wide watermark; `touched` the hosts this
/// run had anything to do with; `succeeded(host)` whether the host was read
/// in full (reached, not troubled, nothing unread). Hosts this run did not
/// touch keep their entries; a touched host that did not succeed keeps the
/// cut-off it had (its own entry, or the run-wide one it fell back to).
pub(crate) fn next_watermarks<'a>(
    previous: &BTreeMap<String, Option<DateTime<Utc>>>,
    previous_global: Option<DateTime<Utc>>,
    touched: impl IntoIterator<Item = &'a str>,
    started_at: DateTime<Utc>,
    succeeded: impl Fn(&str) -> bool,
) -> BTreeMap<String, Option<DateTime<Utc>>> {
    let mut out = previous.clone();
    for host in touched {
        let value = if succeeded(host) {
            Some(started_at)
        } else {
            previous.get(host).copied().unwrap_or(previous_global)
        };
        out.insert(host.to_string(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn outage_only_when_nothing_answered_and_something_failed() {
        let dns = Some(FailureClass::Dns);
        let mut r = Reach::default();
        assert_eq!(r.outage(), None, "a run that tried nothing");
        r.robots_down("a.test", "dns", dns);
        r.robots_down("b.test", "dns", dns);
        r.answered("c.test", 503);
        r.robots_down("c.test", "503", None);
        // A challenge is no network failure; a timeout is.
        r.record("d.test", None, Answer::Failed(FailureClass::Challenge));
        let why = r.outage().expect("an outage");
        assert_eq!(
            why,
            "no host could be reached (3 hosts tried; failures: dns 2, robots 503 1)"
        );
        r.record("d.test", None, Answer::Failed(FailureClass::Timeout));
        assert!(r.outage().unwrap().ends_with("robots 503 1, timeout 1)"));
        r.record("c.test", Some(404), Answer::Status(404));
        assert_eq!(r.outage(), None, "a 404 is an answer");
        assert!(r.is_reached("c.test") && !r.is_reached("a.test"));
        assert!(r.is_troubled("a.test"));
        // The first cause is kept, and written as before.
        r.trouble("a.test", Cause::Rested);
        assert_eq!(r.troubled()["a.test"].to_string(), "robots.txt: dns");
        let u = crate::url::parse("https://e.test/feed").unwrap();
        for (cause, text) in [
            (Cause::Rested, "rested"),
            (
                Cause::Failed {
                    class: FailureClass::Timeout,
                    url: u.clone(),
                },
                "timeout on https://e.test/feed",
            ),
            (
                Cause::Status { code: 503, url: u },
                "503 on https://e.test/feed",
            ),
        ] {
            assert_eq!(cause.to_string(), text);
        }
    }

    #[test]
    fn cutoff_per_host_with_fallback() {
        let overlap = chrono::Duration::hours(1);
        let mut hosts = BTreeMap::new();
        hosts.insert("old.test".to_string(), Some(at("2026-11-01T06:00:00Z")));
        hosts.insert("never.test".to_string(), None);
        let c = Cutoff::auto(Some(at("2026-11-30T06:00:00Z")), &hosts, overlap, None);
        assert_eq!(c.for_host("old.test"), Some(at("2026-11-01T05:00:00Z")));
        assert_eq!(c.for_host("never.test"), None);
        // With a configured floor, a host never read in full gets the floor, never none.
        let floor = Some(at("2023-01-01T00:00:00Z"));
        let c2 = Cutoff::auto(Some(at("2026-11-30T06:00:00Z")), &hosts, overlap, floor);
        assert_eq!(c2.for_host("never.test"), floor);
        assert_eq!(c2.for_host("old.test"), Some(at("2026-11-01T05:00:00Z")));
        assert_eq!(
            c2.for_listing(None),
            floor,
            "a listing never read: the floor"
        );
        assert_eq!(
            c2.for_listing(Some(at("2026-11-29T06:30:00Z"))),
            Some(at("2026-11-29T05:30:00Z"))
        );
        assert_eq!(c2.for_listing(Some(at("2022-06-01T00:00:00Z"))), floor);
        assert_eq!(
            Cutoff::fixed(floor).for_listing(Some(at("2026-11-29T06:30:00Z"))),
            floor
        );
        assert_eq!(c.for_host("new.test"), Some(at("2026-11-30T05:00:00Z")));
        assert_eq!(c.latest(), Some(at("2026-11-30T05:00:00Z")));
        let f = Cutoff::fixed(Some(at("2024-01-01T00:00:00Z")));
        assert_eq!(f.for_host("any.test"), Some(at("2024-01-01T00:00:00Z")));
        assert_eq!(Cutoff::fixed(None).for_host("x"), None);
    }

    #[test]
    fn watermarks_move_only_for_hosts_read_in_full() {
        let day1 = at("2026-11-29T06:30:00Z");
        let day2 = at("2026-11-30T06:30:00Z");
        let mut prev = BTreeMap::new();
        prev.insert("down.test".to_string(), Some(at("2026-11-20T06:30:00Z")));
        prev.insert("idle.test".to_string(), Some(day1));
        let next = next_watermarks(
            &prev,
            Some(day1),
            ["up.test", "down.test", "new-down.test"],
            day2,
            |h| h == "up.test",
        );
        assert_eq!(next["up.test"], Some(day2));
        assert_eq!(next["down.test"], Some(at("2026-11-20T06:30:00Z")));
        // No entry before: it keeps the run-wide cut-off it fell back to.
        assert_eq!(next["new-down.test"], Some(day1));
        // Not touched: unchanged.
        assert_eq!(next["idle.test"], Some(day1));
        // Never read before and down on the first run: no cut-off next time.
        let first = next_watermarks(&BTreeMap::new(), None, ["x.test"], day2, |_| false);
        assert_eq!(first["x.test"], None);
    }
}
