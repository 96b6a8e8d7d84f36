//! `state/consent/<run-id>.jsonl`: what a run learnt about publishers' consent.
//! Append-only JSON Lines, one file per run (so runs from several machines
//! merge by pull and push), each line written whole and unbuffered, so a
//! killed run keeps every line it wrote:
//!
//! * `{"kind":"robots", "host", "t", "outcome", "hash", "bytes",
//!   "content_signal", "body"}`: once per host per run, the robots.txt
//!   snapshot the run's pages from that host were fetched under. `hash` is the
//!   16-digit hex xxh3 of the body as received, as in the records'
//!   `robots_hash`; `body` is that body as text (invalid UTF-8 replaced).
//! * `{"kind":"withheld", "url", "domain", "t", "signals"}`: a page the crawl
//!   would have stored but did not, because its publisher reserves AI
//!   training (`ai_use_policy: respect`).
//!
//! [`withheld_by_domain`] reads every run's lines back for the dataset card.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::Utc;

use crate::record::RobotsOutcome;
use crate::record::consent::{ConsentEntry, RobotsSnapshotLine, WithheldLine};

/// Folder under `state/`.
pub(crate) const CONSENT_DIR: &str = "consent";

/// The short hex form of a robots.txt hash, as records and snapshots carry it.
pub(crate) fn hash_hex(hash: u64) -> String {
    format!("{hash:016x}")
}

/// [`hash_hex`] of a robots.txt hash as the fetch layer keeps it, where 0
/// means no robots.txt body was read: `None` then.
pub fn robots_hash_hex(hash: u64) -> Option<String> {
    (hash != 0).then(|| hash_hex(hash))
}

/// This run's consent file, created on first write.
#[derive(Debug)]
pub struct ConsentLog {
    path: PathBuf,
    file: Option<File>,
    /// A write failed once: warned, then the file is left alone.
    broken: bool,
}

/// One robots.txt snapshot.
#[derive(Debug, Clone, Copy)]
pub struct RobotsSnapshot<'a> {
    pub host: &'a str,
    pub outcome: &'a RobotsOutcome,
    pub hash: u64,
    pub content_signal: &'a [String],
    pub body: &'a [u8],
}

impl ConsentLog {
    pub fn new(state: &Path, run_id: &str) -> ConsentLog {
        ConsentLog {
            path: state.join(CONSENT_DIR).join(format!("{run_id}.jsonl")),
            file: None,
            broken: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove this run's file (a run that saved nothing: an outage).
    pub(crate) fn discard(&mut self) {
        self.file = None;
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot remove the consent log")
            }
        }
    }

    pub fn robots(&mut self, r: RobotsSnapshot<'_>) {
        self.write(ConsentEntry::Robots(RobotsSnapshotLine {
            host: r.host.to_string(),
            t: crate::date::format_utc(Utc::now()),
            outcome: r.outcome.clone(),
            hash: robots_hash_hex(r.hash),
            bytes: r.body.len(),
            content_signal: r.content_signal.to_vec(),
            body: String::from_utf8_lossy(r.body).into_owned(),
        }));
    }

    pub fn withheld(&mut self, url: &str, domain: &str, signals: &[String]) {
        self.write(ConsentEntry::Withheld(WithheldLine {
            url: url.to_string(),
            domain: domain.to_string(),
            t: crate::date::format_utc(Utc::now()),
            signals: signals.to_vec(),
        }));
    }

    fn write(&mut self, entry: ConsentEntry) {
        if self.broken {
            return;
        }
        // Through a `Value`, so keys keep the sorted order earlier files have.
        // Invariant: strings, numbers and lists always serialise.
        let mut line = serde_json::to_value(&entry)
            .expect("a consent line serialises")
            .to_string();
        line.push('\n');
        let result = (|| {
            if self.file.is_none() {
                if let Some(dir) = self.path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                self.file = Some(
                    OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&self.path)?,
                );
            }
            match self.file.as_mut() {
                Some(f) => f.write_all(line.as_bytes()),
                None => Ok(()),
            }
        })();
        if let Err(e) = result {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot write the consent log; provenance snapshots of this run are incomplete");
            self.broken = true;
        }
    }
}

/// Every page withheld for AI use by any run, as distinct URLs per domain.
/// Unreadable files and lines are skipped.
pub(crate) fn withheld_by_domain(state: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(state.join(CONSENT_DIR)) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for line in text.lines() {
            if let Ok(ConsentEntry::Withheld(w)) = serde_json::from_str::<ConsentEntry>(line)
                && !w.url.is_empty()
                && !w.domain.is_empty()
            {
                out.entry(w.domain).or_default().insert(w.url);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_withheld_urls_are_distinct() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = ConsentLog::new(dir.path(), "20260101T000000Z-aaaa");
        a.robots(RobotsSnapshot {
            host: "a.test",
            outcome: &RobotsOutcome::Parsed(200),
            hash: 0xabc,
            content_signal: &["robots.txt:ai-train=no".to_string()],
            body: b"User-agent: *\nContent-Signal: ai-train=no\n",
        });
        a.withheld(
            "https://a.test/1",
            "a.test",
            &["robots.txt:ai-train=no".into()],
        );
        a.withheld("https://a.test/2", "a.test", &[]);
        let mut b = ConsentLog::new(dir.path(), "20260102T000000Z-bbbb");
        b.withheld("https://a.test/1", "a.test", &[]);
        b.withheld("https://b.test/1", "b.test", &[]);
        let text = std::fs::read_to_string(a.path()).unwrap();
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["hash"], "0000000000000abc");
        assert_eq!(first["outcome"], "Parsed(200)");
        assert!(first["body"].as_str().unwrap().contains("ai-train=no"));
        std::fs::write(dir.path().join("consent/broken.jsonl"), "{not json\n").unwrap();
        let w = withheld_by_domain(dir.path());
        assert_eq!(w["a.test"].len(), 2);
        assert_eq!(w["b.test"].len(), 1);
        assert!(withheld_by_domain(&dir.path().join("nowhere")).is_empty());
    }
}
