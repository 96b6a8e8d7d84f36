//! Open-scope admission: which links an open crawl follows, and which new hosts
//! it gives up on.
//!
//! Pure bookkeeping; the engine asks [`OpenScope::admit`] before queueing a link
//! and tells [`OpenScope::record`] every verdict on a fetched page. Hosts are
//! named as [`crate::url::host_key`] names them, the same key the frontier uses.
//!
//! The rules (PRODUCT.md, "Scope"): the configured sources are always in scope
//! (their host and path prefix); another host is followed only from a page that
//! scored relevant, never when deny-listed (the host or any subdomain of it),
//! at most `host_page_cap` pages per run, and not after failing probation (fewer
//! than `host_min_hit_ratio` hits over its first `host_probation_pages` fetches).

use std::collections::HashMap;

use super::Outcome;
use crate::source::{self, Sources};
use crate::url::{Url, host_key};

/// Open-scope knobs (from `config.crawl`).
#[derive(Debug, Clone)]
pub struct ScopeParams {
    pub deny_hosts: Vec<String>,
    pub host_page_cap: u64,
    pub host_probation_pages: u64,
    pub host_min_hit_ratio: f64,
}

/// The answer to "may this link be queued?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Covered by a configured source (or a `--seed` host).
    Source,
    /// Another host, admitted by the open-scope rules.
    Open,
    /// The host of a source, outside its path prefix.
    OffPath,
    /// The host, or a domain above it, is deny-listed.
    Denied,
    /// Another host, linked from a page that did not score relevant.
    NotFromRelevant,
    /// The host has had its `host_page_cap` pages this run.
    Capped,
    /// The host failed probation this run.
    FailedProbation,
}

impl Admit {
    pub fn is_yes(self) -> bool {
        matches!(self, Admit::Source | Admit::Open)
    }
}

/// What to do with a host after a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Keep,
    /// Reached `host_page_cap`: drop its queue (`Frontier::drop_host`).
    Capped,
    /// Failed probation: drop its queue (`Frontier::drop_host`).
    FailedProbation,
}

#[derive(Debug, Clone, Copy, Default)]
struct Record {
    fetched: u64,
    hits: u64,
    failed: bool,
}

/// Admission and probation for hosts outside the configured sources.
#[derive(Debug, Clone)]
pub struct OpenScope {
    params: ScopeParams,
    hosts: HashMap<String, Record>,
}

impl OpenScope {
    pub fn new(params: ScopeParams) -> OpenScope {
        OpenScope {
            params,
            hosts: HashMap::new(),
        }
    }

    /// May `url`, linked from a page (relevant or not), be queued?
    pub fn admit(&self, sources: &Sources, url: &Url, from_relevant: bool) -> Admit {
        if sources.contains(url) {
            return Admit::Source;
        }
        let host = host_key(url);
        if sources.has_host(&host) {
            return Admit::OffPath;
        }
        if self.is_denied(&host) {
            return Admit::Denied;
        }
        if !from_relevant {
            return Admit::NotFromRelevant;
        }
        match self.hosts.get(&host) {
            Some(r) if r.failed => Admit::FailedProbation,
            Some(r) if r.fetched >= self.params.host_page_cap => Admit::Capped,
            _ => Admit::Open,
        }
    }

    /// Is `host` (or a domain above it) on the deny-list?
    pub(crate) fn is_denied(&self, host: &str) -> bool {
        source::denied(&self.params.deny_hosts, host)
    }

    /// Count a fetch from `host`; sources are never capped nor put on probation.
    pub fn record(&mut self, sources: &Sources, host: &str, outcome: Outcome) -> Verdict {
        if sources.has_host(host) {
            return Verdict::Keep;
        }
        let p = &self.params;
        let r = self.hosts.entry(host.to_string()).or_default();
        if r.failed {
            return Verdict::FailedProbation;
        }
        r.fetched += 1;
        r.hits += u64::from(outcome == Outcome::Hit);
        if r.fetched == p.host_probation_pages
            && (r.hits as f64) < p.host_min_hit_ratio * r.fetched as f64
        {
            r.failed = true;
            return Verdict::FailedProbation;
        }
        if r.fetched >= p.host_page_cap {
            return Verdict::Capped;
        }
        Verdict::Keep
    }

    /// Pages fetched from `host` this run (outside sources).
    pub fn fetched(&self, host: &str) -> u64 {
        self.hosts.get(host).map_or(0, |r| r.fetched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url::parse;

    fn setup() -> (OpenScope, Sources) {
        let scope = OpenScope::new(ScopeParams {
            deny_hosts: vec!["twitter.com".into(), "google.com".into()],
            host_page_cap: 5,
            host_probation_pages: 3,
            host_min_hit_ratio: 0.3,
        });
        let mut sources = Sources::default();
        sources.add("news.org", Some("/tech"));
        (scope, sources)
    }

    #[test]
    fn admission_table() {
        let (scope, sources) = setup();
        let table = [
            ("https://www.news.org/tech/a", false, Admit::Source),
            ("https://news.org/sport/a", true, Admit::OffPath),
            ("https://mobile.twitter.com/x", true, Admit::Denied),
            ("https://google.com/search?q=ai", true, Admit::Denied),
            ("https://notgoogle.com/a", true, Admit::Open),
            ("https://blog.example/a", false, Admit::NotFromRelevant),
            ("https://blog.example/a", true, Admit::Open),
        ];
        for (url, relevant, want) in table {
            let url = parse(url).unwrap();
            assert_eq!(scope.admit(&sources, &url, relevant), want, "{url}");
        }
    }

    #[test]
    fn probation_and_cap() {
        let (mut scope, sources) = setup();
        let weak = parse("https://weak.example/a").unwrap();
        let good = parse("https://good.example/a").unwrap();
        use Outcome::*;
        let table = [
            ("weak.example", Miss, Verdict::Keep),
            ("weak.example", Error, Verdict::Keep),
            ("weak.example", Miss, Verdict::FailedProbation),
            ("weak.example", Hit, Verdict::FailedProbation),
            ("good.example", Miss, Verdict::Keep),
            ("good.example", Hit, Verdict::Keep),
            ("good.example", Miss, Verdict::Keep), // 1 in 3 >= 0.3
            ("good.example", Miss, Verdict::Keep),
            ("good.example", Miss, Verdict::Capped),
            ("news.org", Miss, Verdict::Keep), // a source: never judged
        ];
        for (i, (host, outcome, want)) in table.into_iter().enumerate() {
            assert_eq!(scope.record(&sources, host, outcome), want, "row {i}");
        }
        assert_eq!(scope.admit(&sources, &weak, true), Admit::FailedProbation);
        assert_eq!(scope.admit(&sources, &good, true), Admit::Capped);
        assert_eq!(scope.fetched("good.example"), 5);
        assert_eq!(scope.fetched("news.org"), 0);
    }
}
