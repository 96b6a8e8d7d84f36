//! The lines of `state/consent/<run-id>.jsonl` (written by
//! `store::consent::ConsentLog`, read back for the dataset card): robots.txt
//! snapshots and pages withheld for an AI-use reservation, told apart by
//! `kind`.

use serde::{Deserialize, Serialize};

use super::RobotsOutcome;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ConsentEntry {
    /// Once per host per run: the robots.txt the host's pages were fetched under.
    Robots(RobotsSnapshotLine),
    /// A page the crawl would have stored but did not: its publisher reserves
    /// AI training (`ai_use_policy: respect`).
    Withheld(WithheldLine),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RobotsSnapshotLine {
    #[serde(default)]
    pub host: String,
    /// `2026-10-09T18:12:33Z`.
    #[serde(default)]
    pub t: String,
    /// How the file was obtained: `Parsed(200)`, `AllowAll(404)`,
    /// `DisallowAll("timeout")`.
    pub outcome: RobotsOutcome,
    /// 16-digit hex xxh3 of the body as received (the records'
    /// `robots_hash`); `null` without a body.
    #[serde(default)]
    pub hash: Option<String>,
    #[serde(default)]
    pub bytes: usize,
    #[serde(default)]
    pub content_signal: Vec<String>,
    /// The body as text (invalid UTF-8 replaced).
    #[serde(default)]
    pub body: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct WithheldLine {
    pub url: String,
    pub domain: String,
    pub t: String,
    pub signals: Vec<String>,
}
