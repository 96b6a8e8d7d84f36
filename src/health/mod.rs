//! Source health across runs: what one run saw of each `sources:` entry of
//! `config.yml` ([`RunHealth`], kept as `data/state/health/<run-id>.json` by
//! [`crate::store::health`]) and the rules that turn a short history of those
//! records into a status with a reason ([`rules`], pure).
//!
//! The crawl fills a [`RunHealth`] as it goes (`crawl::tally::Tally`);
//! `scraper health` reads the last runs and judges each source ([`assess`]).

pub mod rules;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::frontier::Kind;
use crate::record::{RobotsAccess, RunHeader};
use crate::source::Source;

pub use crate::record::Answer;
pub use rules::{Finding, Health, Problem, Status, Verdict, judge};

/// One run's health records: what it saw of every source it touched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHealth {
    #[serde(flatten)]
    pub run: RunHeader,
    /// Keyed by [`Source::key`].
    #[serde(default)]
    pub sources: BTreeMap<String, SourceRun>,
}

impl RunHealth {
    pub fn new(run_id: &str, started_at: DateTime<Utc>) -> RunHealth {
        RunHealth {
            run: RunHeader::new(run_id, started_at),
            sources: BTreeMap::new(),
        }
    }
}

/// What one run saw of one source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourceRun {
    /// Requests sent for the source's URLs (robots.txt not included).
    pub requests: u64,
    /// Outcomes by class: `2xx`, `304`, the exact status of any other
    /// answer (`403`, `404`, `503`, ...), or the failure class of a request
    /// that got no answer (`timeout`, `dns`, `connect`, `out_of_scope`,
    /// `too_large`, ...); `robots` counts URLs robots.txt refused (not sent).
    pub answers: BTreeMap<Answer, u64>,
    /// HTML pages a feed or sitemap listed, parsed (the pages meant to be
    /// articles: extraction is judged on them when a source has them).
    pub pages: u64,
    /// Of those, pages the extractor judged articles.
    pub articles: u64,
    /// Of those, articles that passed the relevance rule.
    pub relevant: u64,
    /// Median length in characters of the text extracted from those pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) text_median: Option<u64>,
    /// The same for pages reached through links (seeds excluded): judged
    /// for sources without feeds or sitemaps.
    pub(crate) linked_pages: u64,
    pub(crate) linked_articles: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) linked_text_median: Option<u64>,
    /// Articles stored.
    pub stored: u64,
    /// The price a `402 Payment Required` asked (`crawler-price`), the last seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    /// The error code a `402 Payment Required` gave (`crawler-error`), the last seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) payment_error: Option<String>,
    /// The terms link a `402 Payment Required` gave, the last seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) payment_terms: Option<String>,
    /// Relevant articles whose publisher reserves the crawl's use, by each
    /// signal that says so: what the source reserved in this run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ai_reserved: BTreeMap<String, u64>,
    /// RSL licences the source's relevant articles point to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub licenses: Vec<String>,
    /// The source host's robots.txt as this run saw it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub robots: Option<RobotsSeen>,
    /// The last answer of each seed (configured feeds, sitemaps and pages,
    /// and robots.txt `Sitemap:` lines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<SeedAnswer>,
}

impl SourceRun {
    /// Requests that got an answer or failed on the network (robots refusals
    /// are not requests).
    pub fn answered(&self) -> u64 {
        self.answers
            .iter()
            .filter(|(k, _)| **k != Answer::ROBOTS)
            .map(|(_, v)| v)
            .sum()
    }

    /// Of [`Self::answered`], those that failed (neither `2xx` nor `304`).
    pub fn failed(&self) -> u64 {
        self.answers
            .iter()
            .filter(|(k, _)| !k.is_fine() && **k != Answer::ROBOTS)
            .map(|(_, v)| v)
            .sum()
    }

    /// Did this run do anything for the source?
    pub fn touched(&self) -> bool {
        self.answers.values().any(|v| *v > 0) || self.robots.is_some()
    }

    /// Count one outcome.
    pub fn answer(&mut self, key: Answer) {
        *self.answers.entry(key).or_default() += 1;
    }
}

/// robots.txt of the source's host, as one run saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RobotsSeen {
    /// `parsed`, `allow_all` (4xx: everything allowed) or `unreachable` (5xx,
    /// network failure: nothing allowed).
    pub outcome: RobotsAccess,
    /// The HTTP status, or the failure class when unreachable.
    pub detail: String,
    /// xxh3 of the body (hex), when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// May the crawler fetch the source's path (its `path`, or `/`)?
    pub(crate) allows_path: bool,
}

/// The last answer of one seed in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedAnswer {
    pub url: String,
    /// `feed`, `sitemap` or `page`: what the URL turned out to be (or was expected to be).
    pub kind: Kind,
    /// How it answered (see [`SourceRun::answers`]).
    pub answer: Answer,
    /// Entries listed (feeds and sitemaps that parsed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<u64>,
    /// Where it redirects to: the final URL of a redirected request, or the
    /// target of a redirect that left the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
}

impl SeedAnswer {
    /// Did the seed answer usefully (a 2xx, or a 304)?
    pub fn ok(&self) -> bool {
        self.answer.is_fine()
    }
}

/// What `scraper health --json` prints and the dashboard's `/health` serves.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The runs judged, oldest first.
    pub runs: Vec<String>,
    /// Health files that could not be read (skipped).
    pub unreadable: Vec<String>,
    pub broken: Vec<String>,
    pub degraded: Vec<String>,
    /// Broken first, then degraded, then ok.
    pub sources: Vec<Verdict>,
}

impl Report {
    /// Judge every configured source over the loaded runs.
    pub fn new(
        sources: &[Source],
        thresholds: &Health,
        runs: &[RunHealth],
        unreadable: Vec<String>,
    ) -> Report {
        let sources = assess(sources, thresholds, runs);
        let names = |st: Status| {
            sources
                .iter()
                .filter(|v| v.status == st)
                .map(|v| v.source.clone())
                .collect()
        };
        Report {
            runs: runs.iter().map(|r| r.run.run_id.clone()).collect(),
            unreadable,
            broken: names(Status::Broken),
            degraded: names(Status::Degraded),
            sources,
        }
    }

    /// Only the sources that are not ok.
    pub fn problems_only(mut self) -> Report {
        self.sources.retain(|v| v.status != Status::Ok);
        self
    }
}

/// Health files read for a window of `window` runs per source: a partitioned
/// crawl writes one file per partition and run, and each source is in one
/// partition, so this covers up to this many partitions.
pub(crate) const FILES_PER_RUN: usize = 8;

/// Every configured source judged over its last `thresholds.window` runs
/// among `runs` (oldest first; runs that did not reach a source are not its
/// runs): broken sources first, then degraded, then ok; by name within each.
pub(crate) fn assess(sources: &[Source], thresholds: &Health, runs: &[RunHealth]) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = sources
        .iter()
        .map(|s| {
            let key = s.key();
            let mut refs: Vec<rules::RunRef<'_>> = runs
                .iter()
                .filter_map(|r| {
                    r.sources.get(&key).map(|src| rules::RunRef {
                        run_id: &r.run.run_id,
                        source: Some(src),
                    })
                })
                .collect();
            let skip = refs.len().saturating_sub(thresholds.window);
            refs.drain(..skip);
            let mut v = judge(&key, s.path.as_deref().unwrap_or("/"), &refs, thresholds);
            if refs.is_empty() {
                v.notes = vec![format!(
                    "no requests in the last {} health files: not judged",
                    runs.len()
                )];
            }
            v
        })
        .collect();
    out.sort_by(|a, b| b.status.cmp(&a.status).then(a.source.cmp(&b.source)));
    out.dedup_by(|a, b| a.source == b.source);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::src;

    #[test]
    fn each_source_is_judged_on_its_own_last_runs() {
        let mut config = crate::config::Config {
            sources: vec![
                src("a.test", None, &[]),
                src("b.test", None, &[]),
                src("c.test", None, &[]),
            ],
            ..Default::default()
        };
        config.health.window = 2;
        // Two partitions: a.test in the even files, b.test in the odd ones;
        // a.test failing in its last two runs, c.test in none.
        let runs: Vec<RunHealth> = (0..6)
            .map(|i| {
                let mut r = RunHealth::new(&format!("r{i}"), chrono::Utc::now());
                let key = if i % 2 == 0 { "a.test" } else { "b.test" };
                let answer = if key == "a.test" && i >= 2 {
                    Answer::Status(503)
                } else {
                    Answer::Success
                };
                r.sources.entry(key.into()).or_default().answer(answer);
                r
            })
            .collect();
        let v = assess(&config.sources, &config.health, &runs);
        assert_eq!(v[0].source, "a.test");
        assert_eq!(v[0].status, Status::Broken, "{:?}", v[0]);
        assert_eq!(
            v[0].reason(),
            Some("503 on every request for 2 runs (since run r2)")
        );
        assert_eq!(v[0].trend.len(), 2);
        let b = v.iter().find(|x| x.source == "b.test").unwrap();
        assert_eq!((b.status, b.trend.len()), (Status::Ok, 2));
        let c = v.iter().find(|x| x.source == "c.test").unwrap();
        assert_eq!(c.status, Status::Ok);
        assert!(
            c.notes[0].contains("no requests in the last 6 health files"),
            "{c:?}"
        );
    }

    #[test]
    fn answers_split_into_fine_and_failed() {
        let mut r = SourceRun::default();
        for k in ["2xx", "304", "403", "403", "timeout", "robots"] {
            r.answer(Answer::from_name(k).unwrap());
        }
        assert_eq!(r.answered(), 5);
        assert_eq!(r.failed(), 3);
        assert!(r.touched());
        assert!(!SourceRun::default().touched());
    }
}
