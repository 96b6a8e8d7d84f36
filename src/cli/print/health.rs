//! How the binary shows `scraper health`: a readable layout on stdout, or
//! one JSON object with `--json`. (The library returns values; only the
//! binary prints.)

use scraper::health::rules::Point;
use scraper::health::{Report, Status, Verdict};

/// `scraper health`.
pub fn show(report: Report, json: bool, problems: bool) {
    if json {
        let report = if problems {
            report.problems_only()
        } else {
            report
        };
        // Invariant: a Report holds only strings, numbers and lists.
        println!(
            "{}",
            serde_json::to_string(&report).expect("a Report serialises")
        );
        return;
    }
    for name in &report.unreadable {
        eprintln!("warning: unreadable health file skipped: {name}");
    }
    if report.runs.is_empty() {
        println!(
            "no health records yet: each `scraper crawl` writes one (state/health/<run-id>.json)"
        );
        return;
    }
    if problems {
        let bad: Vec<&Verdict> = report
            .sources
            .iter()
            .filter(|v| v.status != Status::Ok)
            .collect();
        if bad.is_empty() {
            println!(
                "all {} sources ok over the last {} runs",
                report.sources.len(),
                report.runs.len()
            );
        }
        for v in bad {
            let reasons: Vec<&str> = v.findings.iter().map(|f| f.reason.as_str()).collect();
            println!(
                "{:<9} {}: {}",
                v.status.as_str(),
                v.source,
                reasons.join("; ")
            );
        }
        return;
    }
    println!(
        "{} sources over the last {} runs ({} .. {}): {} broken, {} degraded",
        report.sources.len(),
        report.runs.len(),
        report.runs.first().map(String::as_str).unwrap_or(""),
        report.runs.last().map(String::as_str).unwrap_or(""),
        report.broken.len(),
        report.degraded.len()
    );
    for v in &report.sources {
        println!("\n{:<9} {}", v.status.as_str().to_uppercase(), v.source);
        for f in &v.findings {
            println!("  - {} [{}]", f.reason, f.status.as_str());
        }
        for n in &v.notes {
            println!("  note: {n}");
        }
        if !v.trend.is_empty() {
            println!("  {}", trend(&v.trend));
        }
    }
}

/// `stored 12 3 0 | requests 14 2 1 | failed 0 0 1 | 304 0 1 1 | articles/pages 12/12 3/3 -`
fn trend(points: &[Point]) -> String {
    let last = &points[points.len().saturating_sub(10)..];
    let col = |f: &dyn Fn(&Point) -> String| last.iter().map(f).collect::<Vec<_>>().join(" ");
    format!(
        "last {} runs: stored {} | requests {} | failed {} | 304 {} | articles/pages {}",
        last.len(),
        col(&|p| p.stored.to_string()),
        col(&|p| p.requests.to_string()),
        col(&|p| p.failed.to_string()),
        col(&|p| p.not_modified.to_string()),
        col(&|p| if p.pages == 0 {
            "-".to_string()
        } else {
            format!("{}/{}", p.articles, p.pages)
        }),
    )
}
