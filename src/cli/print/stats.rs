//! What `scraper stats` prints: the report as text for people (or its JSON)
//! on stdout, and the small human formats (counts with separators, bytes,
//! durations) that the progress line shares.

use std::fmt::Write;
use std::io::Write as _;
use std::time::Duration;

use anyhow::Context;

use scraper::partition::Partition;
use scraper::report::run::RunSummary;
use scraper::report::stats::Stats;

/// Print the report, or its JSON with `json`.
pub fn show(stats: &Stats, json: bool) -> anyhow::Result<()> {
    let out = if json {
        let mut s = serde_json::to_string_pretty(stats)?;
        s.push('\n');
        s
    } else {
        render(stats)
    };
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        // `scraper stats | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

/// Domains listed in the text report; `--json` has them all.
const TOP_DOMAINS: usize = 25;
/// Shards listed in the text report (the newest); `--json` has them all.
const LAST_SHARDS: usize = 12;
/// Width of the longest bar.
const BAR: usize = 30;

/// `1234567` -> `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1536` -> `1.5 KiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Whole seconds as `45s`, `12m05s`, `3h02m`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

fn bar(n: u64, max: u64) -> String {
    let len = if max == 0 {
        0
    } else {
        ((n as f64 / max as f64) * BAR as f64).ceil() as usize
    };
    "#".repeat(len.min(BAR))
}

/// The whole `scraper stats` report.
pub fn render(s: &Stats) -> String {
    let mut o = String::new();
    let compressed: u64 = s.shards.iter().map(|x| x.bytes).sum();
    let _ = writeln!(
        o,
        "{} articles in {} shards ({}) under {}",
        count(s.total),
        s.shards.len(),
        bytes(compressed),
        s.data.display()
    );
    let b = &s.broken;
    if b.bad_lines + b.bad_frames + b.truncated_bytes + b.unreadable_shards > 0 {
        let _ = writeln!(
            o,
            "damaged: {} bad lines, {} bad frames, {} torn bytes, {} unreadable shards",
            count(b.bad_lines),
            count(b.bad_frames),
            count(b.truncated_bytes),
            count(b.unreadable_shards)
        );
    }

    let _ = writeln!(o, "\nBy year");
    let max = s.by_year.values().copied().max().unwrap_or(0);
    for (year, n) in &s.by_year {
        let _ = writeln!(o, "  {year:<8} {:>10}  {}", count(*n), bar(*n, max));
    }

    by_domain(&mut o, s);

    shards(&mut o, s);

    runs(&mut o, s);

    let _ = writeln!(
        o,
        "\nOn disk: articles/ {}, state/ {}",
        bytes(s.disk.articles_bytes),
        bytes(s.disk.state_bytes)
    );
    for (f, n) in &s.disk.state_files {
        let _ = writeln!(o, "  state/{f:<28} {:>10}", bytes(*n));
    }
    o
}

/// The `By domain` section: the largest domains, and what the rest hold.
fn by_domain(o: &mut String, s: &Stats) {
    let mut domains: Vec<_> = s.by_domain.iter().collect();
    domains.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let _ = writeln!(o, "\nBy domain ({} domains)", count(domains.len() as u64));
    let max = domains.first().map_or(0, |d| *d.1);
    let width = domains
        .iter()
        .take(TOP_DOMAINS)
        .map(|d| d.0.len())
        .max()
        .unwrap_or(0);
    for (d, n) in domains.iter().take(TOP_DOMAINS) {
        let _ = writeln!(o, "  {d:<width$} {:>10}  {}", count(**n), bar(**n, max));
    }
    if domains.len() > TOP_DOMAINS {
        let rest: u64 = domains.iter().skip(TOP_DOMAINS).map(|d| *d.1).sum();
        let _ = writeln!(
            o,
            "  ... {} more domains with {} articles (see --json)",
            count((domains.len() - TOP_DOMAINS) as u64),
            count(rest)
        );
    }
}

/// The `Shards` section: the newest shards, and any damage found in them.
fn shards(o: &mut String, s: &Stats) {
    let _ = writeln!(o, "\nShards (newest last)");
    let skip = s.shards.len().saturating_sub(LAST_SHARDS);
    if skip > 0 {
        let _ = writeln!(o, "  ... {skip} older shards (see --json)");
    }
    for sh in &s.shards[skip..] {
        let mut note = String::new();
        if let Some(e) = &sh.error {
            note = format!("  UNREADABLE: {e}");
        } else if sh.bad_lines + sh.bad_frames + sh.truncated_bytes > 0 {
            note = format!(
                "  ({} bad lines, {} bad frames, {} torn bytes)",
                sh.bad_lines, sh.bad_frames, sh.truncated_bytes
            );
        }
        let _ = writeln!(
            o,
            "  {:<32} {:>10} articles {:>10}{note}",
            sh.file,
            count(sh.records),
            bytes(sh.bytes)
        );
    }
}

/// The last run, the latest run of each partition, the recent runs.
fn runs(o: &mut String, s: &Stats) {
    let _ = writeln!(o, "\nLast run");
    match (&s.last_run, &s.last_run_error) {
        (Some(r), _) => render_run(o, r),
        (None, Some(e)) => {
            let _ = writeln!(o, "  not shown: {e}");
        }
        (None, None) => {
            let _ = writeln!(o, "  none yet (no state/last_run.json)");
        }
    }
    if !s.partitions.is_empty() {
        let _ = writeln!(o, "\nLatest run of each partition");
        for r in &s.partitions {
            let _ = writeln!(o, "  partition {}", r.partition.unwrap_or(Partition::WHOLE));
            render_run(o, r);
        }
    }

    if s.recent_runs.len() > 1 {
        let _ = writeln!(
            o,
            "\nRecent runs (requests: listings / pages; listings skipped; 304s; stored; updated; backlog left)"
        );
        for r in &s.recent_runs {
            let _ = writeln!(
                o,
                "  {:<22} {:>6}: {:>5} / {:<6} skipped {:>5}  304 {:>5}  stored {:>5}  updated {:>4}  backlog {:>6}",
                r.run_id,
                r.requests,
                r.listing_requests,
                r.page_requests,
                r.listings_skipped,
                r.not_modified,
                r.stored,
                r.updated,
                r.backlog
            );
        }
    }
}

fn render_run(o: &mut String, r: &RunSummary) {
    let stopped_by = r
        .stopped_by
        .as_ref()
        .map(ToString::to_string)
        .filter(|s| !s.is_empty());
    let _ = writeln!(
        o,
        "  {}  started {}  took {}  stopped by {}{}",
        r.run_id,
        r.started(),
        r.duration_s
            .filter(|d| *d >= 0.0)
            .map_or_else(|| "?".to_string(), |d| duration(Duration::from_secs_f64(d))),
        stopped_by.as_deref().unwrap_or("?"),
        if r.interrupted { " (interrupted)" } else { "" }
    );
    let _ = writeln!(
        o,
        "  pages fetched {}, articles stored {}, queue left {}, {} hosts",
        count(r.pages_fetched),
        count(r.articles_stored),
        count(r.queue_left),
        r.hosts
    );
    if r.top_hosts.is_empty() {
        return;
    }
    let width = r.top_hosts.iter().map(|h| h.host.len()).max().unwrap_or(4);
    let _ = writeln!(
        o,
        "  {:<width$} {:>8} {:>8} {:>8} {:>7} {:>10} {:>8}",
        "host", "fetched", "articles", "stored", "errors", "bytes", "waited"
    );
    for h in &r.top_hosts {
        let _ = writeln!(
            o,
            "  {:<width$} {:>8} {:>8} {:>8} {:>7} {:>10} {:>8}",
            h.host,
            h.fetched,
            h.articles,
            h.stored,
            h.errors,
            bytes(h.bytes),
            duration(Duration::from_millis(h.wait_ms))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_formats() {
        let counts = [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1234567, "1,234,567"),
        ];
        for (n, want) in counts {
            assert_eq!(count(n), want);
        }
        let sizes = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1536, "1.5 KiB"),
            (5 << 30, "5.0 GiB"),
        ];
        for (n, want) in sizes {
            assert_eq!(bytes(n), want);
        }
        let spans = [
            (0, "0s"),
            (59, "59s"),
            (65, "1m05s"),
            (3600, "1h00m"),
            (5430, "1h30m"),
        ];
        for (s, want) in spans {
            assert_eq!(duration(Duration::from_secs(s)), want);
        }
        assert_eq!(bar(0, 0), "");
        assert_eq!(bar(10, 10).len(), BAR);
        assert_eq!(bar(1, 1000).len(), 1);
    }

    /// A file that is not a run summary is not shown, and the report says why;
    /// an empty data folder says no run yet.
    #[test]
    fn unreadable_and_missing_summaries() {
        let dir = tempfile::tempdir().unwrap();
        let none = scraper::report::stats::collect(&dir.path().join("nothing")).unwrap();
        assert!(render(&none).contains("none yet"), "{}", render(&none));
        let st = dir.path().join("state");
        std::fs::create_dir_all(&st).unwrap();
        for bad in ["[1, 2]", "{", r#"{"run_id":"r","started_at":"yesterday"}"#] {
            std::fs::write(st.join("last_run.json"), bad).unwrap();
            let s = scraper::report::stats::collect(dir.path()).unwrap();
            let err = s.last_run_error.clone().expect("the summary is unreadable");
            assert!(err.contains("last_run.json"), "{bad}: {err}");
            let text = render(&s);
            assert!(text.contains(&format!("  not shown: {err}\n")), "{text}");
        }
    }
}

#[cfg(test)]
mod pinned {
    use chrono::{DateTime, Utc};

    use super::render;
    use scraper::record::StopReason;
    use scraper::report::stats;
    use scraper::store::state;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// A summary as this version's crawl writes it.
    fn written(
        id: &str,
        start: &str,
        end: &str,
        partition: &str,
        stored: u64,
    ) -> state::RunSummary {
        let mut s = state::RunSummary::new(id, at(start));
        s.run.finished_at = Some(at(end));
        s.run.stopped_by = Some(StopReason::MaxDuration.into());
        s.pages_fetched = 1234;
        s.articles_stored = stored;
        s.queue_left = 17;
        s.partition = Some(partition.parse().unwrap());
        s.shard = Some(format!("{id}.jsonl.zst"));
        for (i, host) in ["a.test", "b.test", "c.test"].iter().enumerate() {
            let h = s.host(host);
            h.discovered = 10 * i as u64 + 3;
            h.fetched = 5 * i as u64 + 2;
            h.articles = i as u64;
            h.stored = stored.min(i as u64);
            h.bytes = 4096 * i as u64;
            h.politeness_wait_ms = 1500 * i as u64;
            h.errors.insert("timeout".into(), i as u64);
            h.errors.insert("4xx".into(), 1);
        }
        s
    }

    /// `scraper stats` shows the run files of this version as it always has:
    /// the text section and the `--json` fields, byte for byte.
    #[test]
    fn stats_output_on_current_files_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path().join("state");
        written(
            "20261128T063000Z-aaaa",
            "2026-11-28T06:30:00Z",
            "2026-11-28T07:00:00.250Z",
            "0/2",
            2,
        )
        .save(&st)
        .unwrap();
        written(
            "20261128T063001Z-bbbb",
            "2026-11-28T06:30:01Z",
            "2026-11-28T07:05:00Z",
            "1/2",
            1,
        )
        .save(&st)
        .unwrap();
        let s = stats::collect(dir.path()).unwrap();
        let json = serde_json::to_string_pretty(&s.last_run).unwrap();
        // Partition 1/2 is the last run; 0/2 differs from it only where its
        // run did.
        assert_eq!(s.partitions.len(), 2);
        assert_eq!(Some(&s.partitions[1]), s.last_run.as_ref());
        let mut p0: serde_json::Value = serde_json::from_str(JSON).unwrap();
        for (k, v) in [
            ("run_id", serde_json::json!("20261128T063000Z-aaaa")),
            ("partition", "0/2".into()),
            ("started_at", "2026-11-28T06:30:00Z".into()),
            ("finished_at", "2026-11-28T07:00:00.250Z".into()),
            ("duration_s", 1800.25.into()),
            ("articles_stored", 2.into()),
            ("shard", "20261128T063000Z-aaaa.jsonl.zst".into()),
        ] {
            p0[k] = v;
        }
        p0["top_hosts"][0]["stored"] = 2.into();
        assert_eq!(serde_json::to_value(&s.partitions[0]).unwrap(), p0);
        let out = render(&s);
        let from = out.find("\nLast run").unwrap();
        let to = out.find("\nRecent runs").unwrap();
        let section = &out[from..to];
        // The runs' cost and backlog, oldest first.
        let recent = &out[to..out.find("\nOn disk").unwrap()];
        assert_eq!(recent.lines().count(), 4, "{recent}");
        assert!(
            recent.contains("20261128T063000Z-aaaa") && recent.contains("backlog     17"),
            "{recent}"
        );
        assert_eq!(s.recent_runs.len(), 2);
        assert_eq!(json, JSON);
        // Partition 1/2's block is the last run's, shown again.
        let last = TEXT
            .split_once("Last run\n")
            .and_then(|(_, rest)| rest.split_once("\n\n"))
            .map(|(block, _)| block)
            .unwrap();
        assert_eq!(section, format!("{TEXT}{last}\n"));
    }

    const JSON: &str = r#"{
  "run_id": "20261128T063001Z-bbbb",
  "partition": "1/2",
  "started_at": "2026-11-28T06:30:01Z",
  "finished_at": "2026-11-28T07:05:00Z",
  "duration_s": 2099.0,
  "stopped_by": "max_duration",
  "interrupted": false,
  "pages_fetched": 1234,
  "articles_stored": 1,
  "queue_left": 17,
  "shard": "20261128T063001Z-bbbb.jsonl.zst",
  "hosts": 3,
  "top_hosts": [
    {
      "host": "c.test",
      "discovered": 23,
      "fetched": 12,
      "articles": 2,
      "stored": 1,
      "errors": 3,
      "bytes": 8192,
      "wait_ms": 3000
    },
    {
      "host": "b.test",
      "discovered": 13,
      "fetched": 7,
      "articles": 1,
      "stored": 1,
      "errors": 2,
      "bytes": 4096,
      "wait_ms": 1500
    },
    {
      "host": "a.test",
      "discovered": 3,
      "fetched": 2,
      "articles": 0,
      "stored": 0,
      "errors": 1,
      "bytes": 0,
      "wait_ms": 0
    }
  ]
}"#;
    const TEXT: &str = r#"
Last run
  20261128T063001Z-bbbb  started 2026-11-28T06:30:01Z  took 34m59s  stopped by max_duration
  pages fetched 1,234, articles stored 1, queue left 17, 3 hosts
  host    fetched articles   stored  errors      bytes   waited
  c.test       12        2        1       3    8.0 KiB       3s
  b.test        7        1        1       2    4.0 KiB       1s
  a.test        2        0        0       1        0 B       0s

Latest run of each partition
  partition 0/2
  20261128T063000Z-aaaa  started 2026-11-28T06:30:00Z  took 30m00s  stopped by max_duration
  pages fetched 1,234, articles stored 2, queue left 17, 3 hosts
  host    fetched articles   stored  errors      bytes   waited
  c.test       12        2        2       3    8.0 KiB       3s
  b.test        7        1        1       2    4.0 KiB       1s
  a.test        2        0        0       1        0 B       0s
  partition 1/2
"#;
}
