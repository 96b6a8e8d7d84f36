//! Per-host counters for one run: the funnel from discovered to stored, and
//! what went wrong. Written into `last_run.json` and the end-of-run table.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::store::state::HostCounters;

/// One host's funnel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostStats {
    /// URLs queued for this host.
    pub discovered: u64,
    /// Requests answered (any status).
    pub fetched: u64,
    /// URLs robots.txt kept us from.
    pub disallowed: u64,
    /// Pages with an article signal and enough prose.
    pub articles: u64,
    /// Pages that passed the relevance rule.
    pub relevant: u64,
    /// Articles stored in this run's shard.
    pub stored: u64,
    /// Articles not stored because the publisher reserves AI training (`ai_use_policy: respect`).
    pub withheld_ai_use: u64,
    /// Conditional requests answered 304.
    pub not_modified: u64,
    /// Feeds or sitemaps that could not be parsed.
    pub bad_listings: u64,
    /// URLs not queued because they broke a trap rule (`crate::url::trap`).
    pub traps: u64,
    /// URLs not queued because they failed for good in an earlier run.
    pub known_failures: u64,
    /// Failures by class: 4xx, 5xx, 429, timeout, too_large, not_html, connect, ...
    pub errors: BTreeMap<String, u64>,
    /// Bytes received on the wire.
    pub bytes: u64,
    /// Time requests waited for the host's politeness gap.
    pub wait_ms: u64,
}

impl HostStats {
    /// The form `last_run.json` keeps.
    pub fn counters(&self) -> HostCounters {
        let mut c = HostCounters {
            discovered: self.discovered,
            fetched: self.fetched,
            articles: self.articles,
            relevant: self.relevant,
            errors: self.errors.clone(),
            bytes: self.bytes,
            politeness_wait_ms: self.wait_ms,
            extra: BTreeMap::new(),
        };
        for (k, v) in [
            ("disallowed", self.disallowed),
            ("stored", self.stored),
            ("withheld_ai_use", self.withheld_ai_use),
            ("not_modified", self.not_modified),
            ("bad_listings", self.bad_listings),
            ("traps", self.traps),
            ("known_failures", self.known_failures),
        ] {
            c.extra.insert(k.into(), serde_json::json!(v));
        }
        c
    }
}

/// The per-host table as Markdown (end of run, `$GITHUB_STEP_SUMMARY`).
pub fn markdown(hosts: &BTreeMap<String, HostStats>) -> String {
    let mut out = String::from(
        "| host | discovered | fetched | robots-denied | articles | relevant | stored | withheld: ai-use | 304 | errors | MB | wait s |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n",
    );
    for (host, h) in hosts {
        let errors = if h.errors.is_empty() {
            "-".to_string()
        } else {
            h.errors
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| {host} | {} | {} | {} | {} | {} | {} | {} | {} | {errors} | {:.2} | {:.1} |\n",
            h.discovered,
            h.fetched,
            h.disallowed,
            h.articles,
            h.relevant,
            h.stored,
            h.withheld_ai_use,
            h.not_modified,
            h.bytes as f64 / 1e6,
            h.wait_ms as f64 / 1000.0
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_table_lists_every_host_and_error_class() {
        let mut hosts = BTreeMap::new();
        let mut a = HostStats {
            fetched: 3,
            stored: 1,
            bytes: 2_000_000,
            ..Default::default()
        };
        a.errors.insert("timeout".into(), 2);
        hosts.insert("a.test".to_string(), a);
        hosts.insert("b.test".to_string(), HostStats::default());
        let md = markdown(&hosts);
        assert_eq!(md.lines().count(), 4);
        assert!(
            md.contains("| a.test | 0 | 3 | 0 | 0 | 0 | 1 | 0 | 0 | timeout: 2 | 2.00 | 0.0 |"),
            "{md}"
        );
        assert!(md.contains("| b.test |"));
    }
}
