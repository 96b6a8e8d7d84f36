//! How the binary shows `scraper health` and `scraper probe`: a readable
//! layout on stdout, or one JSON object with `--json`. (The library returns
//! values; only the binary prints.)

use scraper::crawl::probe::{FoundVia, Probe};
use scraper::health::rules::Point;
use scraper::health::{Report, Status, Verdict};

/// `scraper health`.
pub fn health(report: Report, json: bool, problems: bool) {
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

/// `scraper probe`.
pub fn probe(p: &Probe, json: bool) {
    if json {
        // Invariant: a Probe holds only strings, numbers and lists.
        println!("{}", serde_json::to_string(p).expect("a Probe serialises"));
        return;
    }
    println!("probe of {} ({} requests)", p.start_url, p.requests);
    for n in &p.notes {
        println!("note: {n}");
    }
    let r = &p.robots;
    println!(
        "\nrobots.txt: {} ({}){}{}",
        r.outcome,
        r.detail,
        r.crawl_delay_ms
            .map(|ms| format!(", Crawl-delay {}s", ms as f64 / 1000.0))
            .unwrap_or_default(),
        if r.allows_start {
            ""
        } else {
            ", DISALLOWS the start URL"
        }
    );
    let signals = if p.ai_signals.is_empty() {
        "no signals".to_string()
    } else {
        p.ai_signals.join(", ")
    };
    println!(
        "AI-use: {signals}{}",
        if p.ai_reserved {
            " (reserves AI training)"
        } else {
            ""
        }
    );
    if let Some(e) = &p.start_error {
        println!("start page: {e}");
    }
    println!(
        "\nfeeds and sitemaps ({} found):",
        p.listings.iter().filter(|l| l.entries.is_some()).count()
    );
    let mut missing = Vec::new();
    for l in &p.listings {
        let what = match (l.kind, l.entries) {
            (Some(k), Some(n)) => format!(
                "{}, {n} entries{}",
                k.as_str(),
                if l.children > 0 {
                    format!(", {} child sitemaps", l.children)
                } else {
                    String::new()
                }
            ),
            _ if l.found_via == FoundVia::CommonPath => {
                let path = l
                    .url
                    .split_once("://")
                    .and_then(|(_, r)| r.find('/').map(|i| &r[i..]));
                missing.push(format!("{} ({})", path.unwrap_or(&l.url), l.answer));
                continue;
            }
            _ => match &l.error {
                Some(e) => format!("{}: {e}", l.answer),
                None => l.answer.to_string(),
            },
        };
        let mark = if l.entries.is_some() { "ok" } else { "failed" };
        println!(
            "  {mark:<7} {} ({what}; found via {})",
            l.url,
            l.found_via.as_str()
        );
    }
    if !missing.is_empty() {
        println!("  tried without success: {}", missing.join(", "));
    }
    if !p.by_month.is_empty() || p.undated > 0 {
        println!("\nlisted URLs by month ({} in all):", p.listed);
        for (m, n) in &p.by_month {
            println!("  {m}  {n}");
        }
        if p.undated > 0 {
            println!("  undated  {}", p.undated);
        }
    }
    if !p.sample.is_empty() {
        println!("\nsample of listed pages:");
        for s in &p.sample {
            match &s.error {
                Some(e) => println!("  {}\n    {e}", s.url),
                None => println!(
                    "  {}\n    {} | {} | {} characters | {}{}",
                    s.url,
                    if s.is_article {
                        "article"
                    } else {
                        "not an article"
                    },
                    if s.relevant {
                        "relevant"
                    } else {
                        "not relevant"
                    },
                    s.text_chars,
                    s.title.as_deref().unwrap_or("(no title)"),
                    s.date
                        .as_deref()
                        .map(|d| format!(" | {d}"))
                        .unwrap_or_default()
                ),
            }
        }
    }
    println!("\nverdict: {}", p.verdict);
    if let Some(entry) = &p.suggested {
        println!("\nsuggested entry for config.yml (under `sources:`):\n{entry}");
    }
}
