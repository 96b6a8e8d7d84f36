//! What one build covers, for pinning: the build date (the Hub tag that
//! `scripts/publish.sh` puts on the upload) and the crawl runs whose shards it
//! read. Written as `dist/build.json` beside the card, which repeats it.

use serde::Serialize;

use super::scan::ShardReport;

/// The file name under the output folder.
pub const FILE: &str = "build.json";

/// One crawl run the build read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Run {
    /// The run id (the shard's name without `.jsonl.zst`).
    pub run_id: String,
    /// Good records its shard held (before deduplication).
    pub records: u64,
}

/// What `build.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct Revision {
    /// The build's UTC date, `yyyy-mm-dd`: the tag `scripts/publish.sh` gives
    /// the Hub revision (`yyyy-mm-dd.2`, ... when that day is already tagged).
    pub revision: String,
    /// The build's UTC time, RFC 3339.
    pub built_at: String,
    /// Rows in the Parquet files.
    pub rows: u64,
    /// The crawl runs read, in name (hence time) order.
    pub runs: Vec<Run>,
    /// What changed since the previous release (`null` on a first build):
    /// rows added, updated, withdrawn, otherwise removed.
    pub changes: Option<super::index::Changes>,
    /// New rows removed as near duplicates of a row an earlier release published.
    pub near_earlier_release: u64,
}

impl Revision {
    pub fn new(
        built_at: chrono::DateTime<chrono::Utc>,
        rows: u64,
        reports: &[ShardReport],
    ) -> Self {
        let mut runs: Vec<Run> = reports
            .iter()
            .map(|r| Run {
                run_id: run_id(&r.name).to_string(),
                records: r.good,
            })
            .collect();
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        Revision {
            revision: built_at.format("%Y-%m-%d").to_string(),
            built_at: built_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            rows,
            runs,
            changes: None,
            near_earlier_release: 0,
        }
    }

    /// Pretty JSON, one key per line (so a shell script can read `revision` with sed).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// A shard's run id: its file name without the `.jsonl.zst` (or `.jsonl`) suffix.
pub fn run_id(shard_name: &str) -> &str {
    shard_name
        .strip_suffix(".jsonl.zst")
        .or_else(|| shard_name.strip_suffix(".jsonl"))
        .unwrap_or(shard_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_runs_in_order_with_the_build_date() {
        let report = |name: &str, good| ShardReport {
            name: name.into(),
            good,
            ..ShardReport::default()
        };
        let at = chrono::DateTime::parse_from_rfc3339("2026-12-01T23:59:30Z")
            .unwrap()
            .to_utc();
        let r = Revision::new(
            at,
            5,
            &[
                report("20261201T063000Z-beef.jsonl.zst", 3),
                report("20261130T063000Z-abcd.jsonl.zst", 4),
            ],
        );
        assert_eq!(r.revision, "2026-12-01");
        let ids: Vec<&str> = r.runs.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(ids, ["20261130T063000Z-abcd", "20261201T063000Z-beef"]);
        let json = r.to_json();
        assert!(
            json.contains("\n  \"revision\": \"2026-12-01\",\n"),
            "{json}"
        );
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["runs"][1]["records"], 3);
    }
}
