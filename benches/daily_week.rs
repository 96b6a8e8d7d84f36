//! The everyday run (issue 24): seven consecutive daily runs on an evolving
//! local web (`tests/it/support/daily_web.rs`): 10 hosts with monthly sitemap
//! archives back to 2024, an RSS feed of the newest 10, 3 new articles per
//! host per day; `crawl.min_lastmod` 2025-06-01 is the floor of
//! `--min-lastmod auto`; the first run's budget (500) cannot cover the
//! archives; each daily run has 400 fetches and 60 s. On day 4 some stored
//! stories change (half their text, half only their `<lastmod>`).
//!
//! The web (`Shape`): 2 of the 10 hosts publish no feed, every host's home
//! page is a seed and changes its bytes daily, articles link author, topic
//! and tag pages and older stories, one host links through two tracking
//! redirects, one links an archive calendar that runs into the past, two
//! hosts a day are quiet.
//!
//! Printed: the per-day table (requests, of them backlog work; listing
//! requests; 304s; new articles and found that day; requests per new
//! article in all and on the daily path, against the ideal of robots.txt +
//! one feed (or, without one, one listing) per host + each new article once;
//! child sitemaps asked though their index said unchanged; unconditional
//! full re-reads of unchanged listings; exploration requests; calendar
//! requests; the backlog of relevant archive stories since the floor stored
//! so far, and the queue left), the ratio on the days after the backlog was
//! done, then the updates' outcome and the build's rows. Zero gap and
//! robots violations are asserted as the server saw them.
//!
//! `cargo bench --bench daily_week` (release) or `cargo bench --profile dev
//! --bench daily_week`. `DAILY_HOSTS`, `DAILY_DAYS` change the size.

#[path = "../tests/it/support"]
#[allow(dead_code)]
mod support {
    pub mod daily_web;
    pub mod fixture;
    pub mod web;
}

use support::daily_web::{self, Plan, Shape, day};
use support::{fixture, web};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let plan = Plan {
        hosts: env("DAILY_HOSTS", 10),
        per_month: 4,
        archive_from: day(2024, 1, 1),
        floor: day(2025, 6, 1),
        start: day(2026, 11, 24) + chrono::Duration::minutes(390),
        first_budget: 500,
        days: env("DAILY_DAYS", 6),
        daily_budget: 400,
        daily_secs: 60,
        per_day: 3,
        change_day: 4,
        changes: 5,
        gap_ms: 50,
        shape: Shape {
            feedless: 2,
            quiet: 2,
            redirect_host: Some(2),
            calendar_host: Some(1),
        },
    };
    let t = std::time::Instant::now();
    let week = daily_web::run_week(&plan);
    println!("{}", daily_web::table(&week.rows));
    // The days after the backlog was done (the day before left nothing queued).
    let after: Vec<&daily_web::DayRow> = week
        .rows
        .windows(2)
        .filter(|w| w[0].day >= 2 && w[0].backlog_left == 0)
        .map(|w| &w[1])
        .collect();
    let total: usize = after.iter().map(|r| r.requests).sum();
    let new: usize = after.iter().map(|r| r.new).sum();
    let ideal = (2 * plan.hosts * after.len() + new) as f64 / new.max(1) as f64;
    println!(
        "after the backlog (days {:?}): {:.2} requests per new article, {:.2}x the ideal {:.2}",
        after.iter().map(|r| r.day).collect::<Vec<_>>(),
        total as f64 / new.max(1) as f64,
        total as f64 / new.max(1) as f64 / ideal,
        ideal,
    );
    let missed: usize = week.rows[1..].iter().map(|r| r.new - r.new_found).sum();
    let calendar: usize = week.rows.iter().map(|r| r.calendar).sum();
    let uncond: usize = week.rows.iter().map(|r| r.unconditional_same).sum();
    println!(
        "new articles missed on their day: {missed}; calendar requests over the week: {calendar}; unconditional full re-reads of unchanged listings: {uncond}; backlog done by the last day: {:.1}%",
        week.rows.last().map_or(0.0, |r| r.backlog_done * 100.0)
    );
    let records = week.ws.records();
    let count = |u: &String| records.iter().filter(|r| r["url"] == u.as_str()).count();
    println!(
        "updates: {} changed stories stored {:?} times each; {} touched stories stored {:?} times each",
        week.changed.len(),
        week.changed.iter().map(count).collect::<Vec<_>>(),
        week.touched.len(),
        week.touched.iter().map(count).collect::<Vec<_>>()
    );
    let out = week
        .ws
        .command(&["build", "--data", "data", "--out", "dist"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", fixture::stderr(&out));
    println!("{}", String::from_utf8_lossy(&out.stdout).trim());
    for r in &week.rows {
        assert_eq!(
            (r.gap_violations, r.robots_violations),
            (0, 0),
            "day {}",
            r.day
        );
    }
    let _ = web::Web::routes;
    println!("took {:.1} s", t.elapsed().as_secs_f64());
}
