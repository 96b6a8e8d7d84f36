//! The end-of-run table of the per-host funnel ([`HostCounters`]).

use std::collections::BTreeMap;

use crate::record::HostCounters;

/// The per-host table as Markdown (end of run, `$GITHUB_STEP_SUMMARY`).
pub fn markdown(hosts: &BTreeMap<String, HostCounters>) -> String {
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
            h.politeness_wait_ms as f64 / 1000.0
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
        let mut a = HostCounters {
            fetched: 3,
            stored: 1,
            bytes: 2_000_000,
            ..Default::default()
        };
        a.errors.insert("timeout".into(), 2);
        hosts.insert("a.test".to_string(), a);
        hosts.insert("b.test".to_string(), HostCounters::default());
        let md = markdown(&hosts);
        assert_eq!(md.lines().count(), 4);
        assert!(
            md.contains("| a.test | 0 | 3 | 0 | 0 | 0 | 1 | 0 | 0 | timeout: 2 | 2.00 | 0.0 |"),
            "{md}"
        );
        assert!(md.contains("| b.test |"));
    }
}
