//! The event log's schema: one [`Event`] per line of `data/state/crawl.log`,
//! written by the crawl (`crawl::events::EventLog`) and read back by the
//! dashboard (`report::live`). Serialised with the kind under `"event"` and
//! the fields beside it; the log adds `"v"` (schema version) and `"t"` (time).
//! The dashboard's script reads the same names, so renaming a field or a kind
//! here is a schema change.

use serde::{Deserialize, Serialize};

use super::RobotsOutcome;
use super::outcome::{Rejection, StopReason};
use super::{Kind, Scope};
use crate::partition::Partition;
use crate::url::trap::Trap;

/// One thing that happened in a run. Every payload defaults its missing
/// fields when read, so a reader is not stopped by an older line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The first line of a run.
    RunStart(RunStart),
    /// A configured or `--seed` URL queued.
    Seed(Seed),
    /// Every ten seconds: the counters so far.
    Progress(Progress),
    /// A response arrived (any status).
    Fetch(Fetch),
    /// A request failed; `class` is the failure's class.
    Error(Failure),
    /// A feed or sitemap that could be read only in part, or not at all.
    Warning(Warning),
    /// A feed or sitemap read: what it listed and queued.
    Discovery(Discovery),
    /// A host's robots.txt read.
    Robots(RobotsRead),
    /// A host taken out of this run (robots.txt unavailable, open-scope
    /// probation, too many failures).
    HostRested(HostRested),
    /// A URL not queued because it broke a trap rule.
    Trap(TrapMet),
    /// A parsing limit cut a page or a listing (memory stays bounded).
    Capped(Capped),
    /// A page not stored, and why.
    Rejected(Rejected),
    /// An article appended to the shard.
    Stored(Stored),
    /// A source that could not be read today (at the end of the run): its
    /// `min_lastmod` cut-off stays where it was.
    SourceDown(SourceDown),
    /// The last line of a finished run.
    Done(Done),
}

/// The kind of an event alone (the `event` field), for readers that fold
/// lines whatever their other fields hold; kinds this build does not know
/// read as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EventKind {
    RunStart,
    Seed,
    Progress,
    Fetch,
    Error,
    Warning,
    Discovery,
    Robots,
    HostRested,
    Trap,
    Capped,
    Rejected,
    Stored,
    SourceDown,
    Done,
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunStart {
    pub run_id: String,
    pub sources: usize,
    pub seeds: usize,
    pub scope: Scope,
    pub max_pages: u64,
    pub max_hits: u64,
    pub max_duration_s: u64,
    /// RFC 3339 (the latest cut-off of any host), or `null` without one.
    pub min_lastmod: Option<String>,
    /// Hosts with a cut-off of their own.
    pub(crate) min_lastmod_hosts: usize,
    pub concurrency: usize,
    pub(crate) min_host_gap_ms: u64,
    /// URLs in the seen-set at the start.
    pub seen: usize,
    /// The partition this run crawls (`i/N`; `0/1` is the whole crawl).
    pub partition: Partition,
    pub resume: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Seed {
    pub url: String,
    pub kind: Kind,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Progress {
    /// URLs waiting in the frontier.
    pub queue: usize,
    /// Requests sent (the fetch budget's unit).
    pub requests: u64,
    pub fetched: u64,
    pub stored: u64,
    pub errors: u64,
    pub(crate) elapsed_s: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fetch {
    pub url: String,
    /// After redirects.
    pub(crate) final_url: String,
    pub status: u16,
    pub ms: u64,
    /// Bytes on the wire.
    pub bytes: u64,
    pub redirects: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Failure {
    pub url: String,
    /// `FetchError::class` (`timeout`, `dns`, `robots`, ...), or `panic` for
    /// a worker or parser that panicked.
    pub class: String,
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    pub url: String,
    #[serde(flatten)]
    pub what: ListingWarning,
}

/// What was wrong with a feed or sitemap (the `warning` field).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "warning")]
pub enum ListingWarning {
    /// Not a feed or sitemap we could read (or its parser failed).
    #[serde(rename = "malformed listing")]
    Malformed { reason: String },
    /// Entries past the caps were cut, or the document broke off.
    #[serde(rename = "listing read in part")]
    ReadInPart { cut: usize, reason: Option<String> },
    /// A sitemap index nested too deep: its children were not read.
    #[serde(rename = "sitemap nesting too deep")]
    NestingTooDeep { children: usize },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Discovery {
    pub url: String,
    /// Pages and child sitemaps listed.
    pub entries: usize,
    pub queued: usize,
    /// Skipped for a `lastmod` before the cut-off.
    pub too_old: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RobotsRead {
    #[serde(default)]
    pub host: String,
    /// How the file was obtained: `Parsed(200)`, `AllowAll(404)`,
    /// `DisallowAll("timeout")`.
    pub outcome: RobotsOutcome,
    #[serde(default)]
    pub crawl_delay_ms: Option<u64>,
    /// `Sitemap:` lines.
    #[serde(default)]
    pub sitemaps: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostRested {
    pub host: String,
    /// Absent when the network layer rested the host after repeated failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<RestReason>,
    /// Queued URLs taken out with it.
    pub dropped: usize,
    /// Those URLs are kept for the next run (the host was unreachable, not
    /// refused); absent when they were dropped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
}

/// Why a host was taken out of the run (`host_rested`'s `reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestReason {
    /// robots.txt unreachable (the status or failure class): `robots: 503`.
    Robots(String),
    /// Open scope: the host reached `host_page_cap`: `Capped`.
    Capped,
    /// Open scope: the host failed its probation: `FailedProbation`.
    FailedProbation,
}

impl std::fmt::Display for RestReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RestReason::Robots(why) => write!(f, "robots: {why}"),
            RestReason::Capped => f.write_str("Capped"),
            RestReason::FailedProbation => f.write_str("FailedProbation"),
        }
    }
}

impl Serialize for RestReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RestReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RestReason, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "Capped" => Ok(RestReason::Capped),
            "FailedProbation" => Ok(RestReason::FailedProbation),
            _ => match s.strip_prefix("robots: ") {
                Some(why) => Ok(RestReason::Robots(why.to_string())),
                None => Err(serde::de::Error::custom(format!(
                    "unknown rest reason `{s}`"
                ))),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capped {
    #[serde(default)]
    pub url: String,
    /// The limit that cut.
    pub cause: super::ParseCap,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrapMet {
    #[serde(default)]
    pub host: String,
    /// The URL, cut to 300 characters.
    #[serde(default)]
    pub url: String,
    /// The rule it broke.
    pub kind: Trap,
    /// The URL's full length.
    #[serde(default)]
    pub(crate) url_bytes: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourceDown {
    pub host: String,
    /// What kept it from being read.
    pub cause: String,
    /// Its cut-off (RFC 3339), unchanged for the next run.
    pub cutoff: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejected {
    pub url: String,
    pub reason: Rejection,
    /// The AI-use signals, for [`Rejection::WithheldAiUse`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stored {
    pub id: i64,
    pub url: String,
    pub domain: String,
    pub title: String,
    pub date: Option<String>,
    pub year: Option<i32>,
    pub date_source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Done {
    #[serde(default)]
    pub run_id: String,
    pub stopped_by: StopReason,
    /// Requests sent.
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub fetched: u64,
    #[serde(default)]
    pub stored: u64,
    #[serde(default)]
    pub errors: u64,
    /// URLs left in the queue; absent after an outage (nothing was saved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_left: Option<usize>,
    #[serde(default)]
    pub(crate) elapsed_s: f64,
    /// The shard's file name; `null` when nothing was stored.
    #[serde(default)]
    pub shard: Option<String>,
    /// With `stopped_by: outage`: the one-line cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The JSON names the dashboard's script reads.
    #[test]
    fn kinds_and_fields_keep_their_names() {
        let ev = Event::Warning(Warning {
            url: "u".into(),
            what: ListingWarning::ReadInPart {
                cut: 3,
                reason: None,
            },
        });
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(
            v,
            json!({"event": "warning", "url": "u", "warning": "listing read in part", "cut": 3, "reason": null})
        );
        assert_eq!(serde_json::from_value::<Event>(v).unwrap(), ev);
        let ev = Event::Rejected(Rejected {
            url: "u".into(),
            reason: Rejection::WithheldAiUse,
            signals: Some(vec!["noai".into()]),
        });
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(
            v,
            json!({"event": "rejected", "url": "u", "reason": "withheld: ai-use", "signals": ["noai"]})
        );
        let ev = Event::HostRested(HostRested {
            host: "h".into(),
            reason: None,
            dropped: 2,
            kept: false,
        });
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(
            v,
            json!({"event": "host_rested", "host": "h", "dropped": 2})
        );
        for (reason, name) in [
            (RestReason::Robots("503".into()), "robots: 503"),
            (RestReason::Capped, "Capped"),
            (RestReason::FailedProbation, "FailedProbation"),
        ] {
            let ev = Event::HostRested(HostRested {
                host: "h".into(),
                reason: Some(reason),
                dropped: 1,
                kept: true,
            });
            let v = serde_json::to_value(&ev).unwrap();
            assert_eq!(
                v,
                json!({"event": "host_rested", "host": "h", "reason": name, "dropped": 1, "kept": true})
            );
            assert_eq!(serde_json::from_value::<Event>(v).unwrap(), ev);
        }
        let ev = Event::Robots(RobotsRead {
            host: "h".into(),
            outcome: RobotsOutcome::DisallowAll("timeout".into()),
            crawl_delay_ms: None,
            sitemaps: 0,
        });
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(
            v,
            json!({"event": "robots", "host": "h", "outcome": "DisallowAll(\"timeout\")", "crawl_delay_ms": null, "sitemaps": 0})
        );
        assert_eq!(serde_json::from_value::<Event>(v).unwrap(), ev);
        let v = json!({"event": "done", "run_id": "r", "stopped_by": "max_pages"});
        let Event::Done(d) = serde_json::from_value(v).unwrap() else {
            panic!("not done")
        };
        assert_eq!(d.stopped_by, StopReason::MaxPages);
        assert!(serde_json::from_value::<Event>(json!({"event": "mystery"})).is_err());
        assert_eq!(
            serde_json::from_value::<EventKind>(json!("mystery")).unwrap(),
            EventKind::Other
        );
    }

    /// Every event's tag reads back as its own kind, not `Other`.
    #[test]
    fn every_kind_is_known() {
        let events = [
            Event::RunStart(RunStart::default()),
            Event::Seed(Seed::default()),
            Event::Progress(Progress::default()),
            Event::Fetch(Fetch::default()),
            Event::Error(Failure::default()),
            Event::Warning(Warning {
                url: String::new(),
                what: ListingWarning::NestingTooDeep { children: 0 },
            }),
            Event::Discovery(Discovery::default()),
            Event::Robots(RobotsRead {
                host: String::new(),
                outcome: RobotsOutcome::Parsed(200),
                crawl_delay_ms: None,
                sitemaps: 0,
            }),
            Event::HostRested(HostRested::default()),
            Event::Trap(TrapMet {
                host: String::new(),
                url: String::new(),
                kind: Trap::TooLong,
                url_bytes: 0,
            }),
            Event::Rejected(Rejected {
                url: String::new(),
                reason: Rejection::NoTitle,
                signals: None,
            }),
            Event::Stored(Stored::default()),
            Event::SourceDown(SourceDown::default()),
            Event::Done(Done {
                run_id: String::new(),
                stopped_by: StopReason::Exhausted,
                requests: 0,
                fetched: 0,
                stored: 0,
                errors: 0,
                queue_left: None,
                elapsed_s: 0.0,
                shard: None,
                outage: None,
            }),
        ];
        for e in events {
            let v = serde_json::to_value(&e).unwrap();
            let kind: EventKind = serde_json::from_value(v["event"].clone()).unwrap();
            assert_ne!(kind, EventKind::Other, "{v}");
            assert_eq!(serde_json::from_value::<Event>(v).unwrap(), e);
        }
    }
}
